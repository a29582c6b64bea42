//! Undoing a waiter's registrations when glibc unwinds its thread.
//!
//! A thread blocked in a wait leaves it without returning when it is
//! cancelled (at a cancellation point, or asynchronously) or when a signal
//! handler calls `pthread_exit`: glibc unwinds its stack (a forced unwind)
//! and runs the cleanup handlers on the way. [`on_forced_unwind`] registers
//! a routine of ours for the span of a call, with glibc's own
//! `_pthread_cleanup_push` / `_pthread_cleanup_pop`: glibc's unwinder runs
//! every handler so registered whose frame the unwind leaves, innermost
//! first, before it goes on to the caller's frames.
//!
//! This needs no landing pad (no `Drop` guard) in the interposer's frames,
//! which matters because an unwind that a signal handler starts may start
//! at any instruction, and Rust's personality routine aborts one that
//! starts between the call sites of a function that has landing pads. The
//! handler routines are `extern "C"` and never unwind.

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

/// glibc's `struct _pthread_cleanup_buffer` (`<pthread.h>`), on the
/// caller's stack for the span of [`on_forced_unwind`].
#[repr(C)]
struct CleanupBuffer {
    routine: unsafe extern "C" fn(*mut c_void),
    arg: *mut c_void,
    cancel_type: c_int,
    prev: *mut CleanupBuffer,
}

extern "C" {
    fn _pthread_cleanup_push(
        buffer: *mut CleanupBuffer,
        routine: unsafe extern "C" fn(*mut c_void),
        arg: *mut c_void,
    );
    fn _pthread_cleanup_pop(buffer: *mut CleanupBuffer, execute: c_int);
}

/// Runs `body`; if glibc unwinds the thread out of it (`pthread_exit`,
/// cancellation), `routine(ctx)` runs first, on the way out. On a normal
/// return it does not run.
///
/// # Safety
///
/// `routine` may be called with `ctx` at any point during `body`, on this
/// thread, while `ctx` is still borrowed here; it must not unwind.
#[inline(always)]
pub unsafe fn on_forced_unwind<C, R>(
    ctx: &C,
    routine: unsafe extern "C" fn(*mut c_void),
    body: impl FnOnce() -> R,
) -> R {
    let mut buffer = MaybeUninit::<CleanupBuffer>::uninit();
    // SAFETY: `buffer` stays on this frame, unmoved, until the pop below
    // (or until glibc's unwinder leaves this frame, when it unlinks it);
    // glibc fills it in. `ctx` outlives both.
    unsafe { _pthread_cleanup_push(buffer.as_mut_ptr(), routine, ctx as *const C as *mut c_void) };
    let r = body();
    // SAFETY: the buffer pushed above, the innermost one of this thread
    // (every push inside `body` was popped, or `body` did not return);
    // 0: do not run the routine.
    unsafe { _pthread_cleanup_pop(buffer.as_mut_ptr(), 0) };
    r
}
