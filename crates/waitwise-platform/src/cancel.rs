//! POSIX thread cancellation at the waits that are cancellation points.
//!
//! A deferred cancellation request (`pthread_cancel` of a thread whose
//! cancellation type is the default, deferred) is acted on only at a
//! cancellation point: then the thread runs its cleanup handlers and exits,
//! by a *forced unwind* that starts inside the C library and passes through
//! every frame between there and the thread's start routine. Among the
//! waits waitwise implements for C programs, the condition waits and the
//! semaphore waits are cancellation points (POSIX), the lock and barrier
//! waits are not.
//!
//! A cancellable wait
//! 1. acts on a request already pending before it blocks ([`point`]), and
//! 2. sleeps with [`Futex::wait_cancellable`](crate::futex::Futex::wait_cancellable),
//!    during which a request ends the sleep and the thread.
//!
//! What unwinds must find guards on its way: every frame that registered
//! the thread somewhere (a sleeper count, a waiter count, a barrier
//! arrival) undoes it in a `Drop` implementation, and a frame whose thread
//! may have been handed a wake-up just before the cancellation passes it
//! on. The same forced unwind comes from a signal handler that calls
//! `pthread_exit` (or a `longjmp`-free C++ exception) while the thread
//! blocks in any wait, cancellation point or not, so every blocking wait
//! needs those guards.

/// C functions a waiting thread may be unwound out of.
mod sys {
    use std::ffi::c_long;
    extern "C-unwind" {
        pub fn pthread_testcancel();
        pub fn syscall(num: c_long, ...) -> c_long;
    }
}

/// Acts on a pending deferred cancellation request of the calling thread
/// (`pthread_testcancel`): if there is one, and cancellation is enabled,
/// the thread exits here (a forced unwind through the caller). Otherwise
/// returns at once.
#[inline]
pub fn point() {
    // SAFETY: no preconditions; an unwind out of it is what a cancellation
    // point is for, and it is declared `C-unwind`.
    unsafe { sys::pthread_testcancel() };
}

/// glibc's `struct _pthread_cleanup_buffer` (`<pthread.h>`), on the
/// caller's stack for the span of [`on_forced_unwind`].
#[cfg(not(loom))]
#[repr(C)]
struct CleanupBuffer {
    routine: unsafe extern "C" fn(*mut std::ffi::c_void),
    arg: *mut std::ffi::c_void,
    cancel_type: std::ffi::c_int,
    prev: *mut CleanupBuffer,
}

#[cfg(not(loom))]
extern "C" {
    fn _pthread_cleanup_push(
        buffer: *mut CleanupBuffer,
        routine: unsafe extern "C" fn(*mut std::ffi::c_void),
        arg: *mut std::ffi::c_void,
    );
    fn _pthread_cleanup_pop(buffer: *mut CleanupBuffer, execute: std::ffi::c_int);
}

/// Runs `body`; if the C library unwinds the thread out of it
/// (`pthread_exit`, also from a signal handler, or a cancellation),
/// `routine(ctx)` runs first, on the way out. On a normal return it does
/// not run.
///
/// The routine is registered with the C library's own
/// `_pthread_cleanup_push` / `_pthread_cleanup_pop`, whose handlers the
/// forced unwind runs innermost first as it leaves their frames. This
/// needs no landing pad (no `Drop` guard) in the caller's frames, which
/// matters because an unwind that a signal handler starts may start at any
/// instruction, and Rust's personality routine aborts one that starts
/// between the call sites of a function that has landing pads.
///
/// # Safety
///
/// `routine` may be called with `ctx` at any point during `body`, on this
/// thread, while `ctx` is still borrowed here; it must not unwind. `body`
/// must not panic (the registration would outlive this frame).
#[cfg(not(loom))]
#[inline(always)]
pub unsafe fn on_forced_unwind<C, R>(
    ctx: &C,
    routine: unsafe extern "C" fn(*mut std::ffi::c_void),
    body: impl FnOnce() -> R,
) -> R {
    let mut buffer = std::mem::MaybeUninit::<CleanupBuffer>::uninit();
    // SAFETY: `buffer` stays on this frame, unmoved, until the pop below
    // (or until the unwinder leaves this frame, when it unlinks it); the C
    // library fills it in. `ctx` outlives both.
    unsafe {
        _pthread_cleanup_push(
            buffer.as_mut_ptr(),
            routine,
            ctx as *const C as *mut std::ffi::c_void,
        )
    };
    let r = body();
    // SAFETY: the buffer pushed above, the innermost one of this thread
    // (every push inside `body` was popped, or `body` did not return);
    // 0: do not run the routine.
    unsafe { _pthread_cleanup_pop(buffer.as_mut_ptr(), 0) };
    r
}

/// The unwinder's view of a frame, for [`complete_interrupted_mark`]
/// (libgcc's `unwind.h`, the Itanium C++ ABI's base level).
#[cfg(not(loom))]
mod unwinder {
    use std::ffi::{c_int, c_void};
    /// `_URC_NO_REASON`: go on to the next frame.
    pub const NEXT_FRAME: c_int = 0;
    /// `_URC_NORMAL_STOP`: stop the walk.
    pub const STOP: c_int = 4;
    pub type Trace = extern "C" fn(context: *mut c_void, arg: *mut c_void) -> c_int;
    extern "C" {
        pub fn _Unwind_Backtrace(trace: Trace, arg: *mut c_void) -> c_int;
        pub fn _Unwind_GetIPInfo(context: *mut c_void, ip_before_insn: *mut c_int) -> usize;
        pub fn _Unwind_GetGR(context: *mut c_void, register: c_int) -> usize;
    }
}

/// Finishes an [`add_then_mark`](crate::arch::add_then_mark) that a signal
/// interrupted between its add and its mark: if the frame the calling
/// thread's innermost signal interrupted stands at
/// [`add_then_mark_gap`](crate::arch::add_then_mark_gap), stores the mark
/// it was about to store (read from its saved registers). Call it first in
/// a routine that [`on_forced_unwind`] runs, before reading any mark: a
/// signal handler's `pthread_exit` (or an asynchronous cancellation) may
/// have ended the thread right after a count was changed and before the
/// mark that says so, and this makes the count and the mark agree.
///
/// It walks the stack with the unwinder (`_Unwind_Backtrace`) up to the
/// first frame a signal interrupted, which costs microseconds: for cleanup
/// routines only. Does nothing where no signal frame is on the stack (a
/// deferred cancellation) or on architectures without
/// [`add_then_mark`](crate::arch::add_then_mark)'s gap.
#[cfg(not(loom))]
pub fn complete_interrupted_mark() {
    use std::ffi::{c_int, c_void};
    extern "C" fn frame(context: *mut c_void, _arg: *mut c_void) -> c_int {
        let mut after_signal: c_int = 0;
        // SAFETY: `context` is the unwinder's, valid during this callback.
        let ip = unsafe { unwinder::_Unwind_GetIPInfo(context, &mut after_signal) };
        if after_signal == 0 {
            return unwinder::NEXT_FRAME;
        }
        // The innermost frame a signal interrupted; `ip` is the
        // instruction it was about to execute.
        if ip == crate::arch::add_then_mark_gap() {
            // SAFETY: at the gap the registers hold `add_then_mark`'s
            // `step` (a live `&AtomicU8` of this thread's frame, which the
            // unwind has not left yet) and `mark`.
            unsafe {
                let step =
                    unwinder::_Unwind_GetGR(context, crate::arch::ADD_THEN_MARK_STEP_REGISTER)
                        as *const std::sync::atomic::AtomicU8;
                let mark =
                    unwinder::_Unwind_GetGR(context, crate::arch::ADD_THEN_MARK_MARK_REGISTER)
                        as u8;
                // Relaxed: this thread's own mark.
                (*step).store(mark, std::sync::atomic::Ordering::Relaxed);
            }
        }
        unwinder::STOP
    }
    // SAFETY: `frame` never unwinds and keeps no pointer past the walk.
    unsafe { unwinder::_Unwind_Backtrace(frame, std::ptr::null_mut()) };
}

/// The bits of glibc's per-thread `cancelhandling` word that say a
/// cancellation signal is on its way (`nptl/descr.h`; unchanged since
/// NPTL's first release): `pthread_cancel` of a thread whose type is
/// asynchronous sets `CANCELING`, then sends `SIGCANCEL`, whose handler sets
/// `CANCELED`.
const CANCELING: u32 = 1 << 2;
/// See [`CANCELING`].
const CANCELED: u32 = 1 << 3;

/// `cancelhandling`'s offset in glibc's thread descriptor, [`UNKNOWN`]
/// until looked up, [`ABSENT`] where the C library does not describe it.
static CANCELHANDLING_OFFSET: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(UNKNOWN);
const UNKNOWN: usize = usize::MAX;
const ABSENT: usize = usize::MAX - 1;

/// Looks up where glibc keeps the calling thread's cancellation state.
///
/// glibc exports, for `libthread_db`, a descriptor of each field that a
/// debugger reads: `_thread_db_pthread_cancelhandling` is three `u32`s
/// (the field's size in bits, the element count, its offset in `struct
/// pthread`). A C library without it (not glibc) or with a field that is
/// not one 32-bit word gives [`ABSENT`].
fn lookup_cancelhandling_offset() -> usize {
    // SAFETY: dlsym with a NUL-terminated name and the RTLD_DEFAULT handle.
    let desc = unsafe {
        libc::dlsym(
            libc::RTLD_DEFAULT,
            c"_thread_db_pthread_cancelhandling".as_ptr(),
        )
    };
    if desc.is_null() {
        return ABSENT;
    }
    // SAFETY: glibc defines the symbol as `const uint32_t[3]`.
    let [bits, count, offset] = unsafe { *(desc as *const [u32; 3]) };
    if bits == 32 && count == 1 && offset % 4 == 0 {
        offset as usize
    } else {
        ABSENT
    }
}

/// The calling thread's `cancelhandling` word, where the C library is
/// glibc and describes it.
fn cancelhandling() -> Option<&'static std::sync::atomic::AtomicU32> {
    use std::sync::atomic::Ordering::Relaxed; // a plain cache of one idempotent lookup
    let mut offset = CANCELHANDLING_OFFSET.load(Relaxed);
    if offset == UNKNOWN {
        offset = lookup_cancelhandling_offset();
        CANCELHANDLING_OFFSET.store(offset, Relaxed);
    }
    if offset == ABSENT {
        return None;
    }
    // SAFETY: `pthread_self()` is glibc's `struct pthread` of the calling
    // thread, which lives as long as the thread; the offset is the one
    // glibc gives its debuggers for a 4-byte-aligned u32 field, which
    // glibc itself accesses atomically.
    Some(unsafe {
        &*((libc::pthread_self() as *const u8).add(offset) as *const std::sync::atomic::AtomicU32)
    })
}

/// Prepares [`finish_asynchronous_window`] (a `dlsym`, once per process),
/// so that the lookup does not run inside a wait.
pub fn prepare() {
    let _ = cancelhandling();
}

/// Called right after a thread has switched from asynchronous back to
/// deferred cancellation: waits until a cancellation signal that was sent
/// while the type was still asynchronous has been delivered.
///
/// `pthread_cancel` reads the target's type, marks the request as in
/// progress (`CANCELING`) and only then sends `SIGCANCEL`. If the target
/// switches back to deferred in between, the signal arrives later, at any
/// point in the thread's life: glibc's handler then writes
/// `PTHREAD_CANCELED` into the thread's result even though the thread went
/// on (it may already have returned its own result from its start
/// routine). glibc closes the window for its own cancellation points the
/// same way (`__pthread_disable_asynccancel`): a thread leaving the
/// window sleeps on `cancelhandling` while the request is in progress but
/// not yet delivered; the signal's delivery interrupts the sleep, its
/// handler sets `CANCELED`, and the request then stays pending (deferred)
/// for the next cancellation point. A C library that does not describe the
/// field makes this a no-op.
pub fn finish_asynchronous_window() {
    use std::sync::atomic::Ordering::Relaxed; // glibc reads and writes it relaxed too; the futex decides
    let Some(word) = cancelhandling() else { return };
    // A bound in case a C library ever leaves CANCELING set without a
    // signal: give up after about a second of waits (the signal is normally
    // delivered within microseconds; a sender preempted between its mark and
    // its `tgkill` delays it by a scheduler time slice).
    const ROUNDS: u32 = 1000;
    let tick = libc::timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000,
    };
    for _ in 0..ROUNDS {
        let v = word.load(Relaxed);
        if v & (CANCELING | CANCELED) != CANCELING {
            return;
        }
        // SAFETY: a private futex wait on a live, aligned u32 with a
        // relative timeout; a delivered signal or a changed value ends it.
        unsafe {
            sys::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                v,
                &tick as *const libc::timespec,
            )
        };
    }
}

#[cfg(all(test, not(loom), target_env = "gnu"))]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    const PTHREAD_CANCEL_ASYNCHRONOUS: std::ffi::c_int = 1;
    extern "C-unwind" {
        fn pthread_setcanceltype(
            kind: std::ffi::c_int,
            old: *mut std::ffi::c_int,
        ) -> std::ffi::c_int;
    }

    /// The word found through glibc's debugger descriptor is this thread's
    /// cancellation state: its type bit follows `pthread_setcanceltype`.
    #[test]
    fn glibc_cancelhandling_follows_the_cancellation_type() {
        std::thread::spawn(|| {
            let word = cancelhandling().expect("glibc describes cancelhandling");
            const TYPE_ASYNC: u32 = 1 << 1;
            assert_eq!(word.load(Relaxed) & TYPE_ASYNC, 0);
            let mut old = 0;
            // SAFETY: a type switch of the calling thread; nothing here is a
            // cancellation point and nobody cancels this thread.
            unsafe { pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &mut old) };
            let with_async = word.load(Relaxed);
            // SAFETY: as above, restoring the old type.
            unsafe { pthread_setcanceltype(old, std::ptr::null_mut()) };
            assert_ne!(with_async & TYPE_ASYNC, 0);
            assert_eq!(word.load(Relaxed) & TYPE_ASYNC, 0);
        })
        .join()
        .unwrap();
    }

    /// Without a cancellation in flight, leaving the window returns at once.
    #[test]
    fn finishing_a_window_without_a_cancel_returns() {
        finish_asynchronous_window();
    }

    /// A signal handler that interrupts `add_then_mark` anywhere finds, after
    /// `complete_interrupted_mark`, the mark agreeing with the count: a
    /// thread flips a count between 0 and 1 with its mark, and signals
    /// land on it (often right after the locked add, the gap) until 20,000
    /// handlers have checked.
    #[test]
    fn an_interrupted_mark_is_completed_to_agree_with_the_count() {
        use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, AtomicUsize};
        static COUNT: AtomicU32 = AtomicU32::new(0);
        static STEP: AtomicU8 = AtomicU8::new(0);
        static HANDLED: AtomicUsize = AtomicUsize::new(0);
        static DISAGREED: AtomicUsize = AtomicUsize::new(0);
        static IN_GAP: AtomicUsize = AtomicUsize::new(0);
        static STOP: AtomicBool = AtomicBool::new(false);
        extern "C" fn on_signal(_: std::ffi::c_int) {
            let before = STEP.load(Relaxed);
            complete_interrupted_mark();
            let step = STEP.load(Relaxed);
            if step != before {
                IN_GAP.fetch_add(1, Relaxed);
            }
            if u32::from(step) != COUNT.load(Relaxed) {
                DISAGREED.fetch_add(1, Relaxed);
            }
            HANDLED.fetch_add(1, Relaxed);
        }
        let signal = libc::SIGRTMIN() + 5;
        // SAFETY: installs a handler for a real-time signal nothing else in
        // the test process uses; the handler only touches atomics and walks
        // its own stack.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(std::ffi::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            assert_eq!(libc::sigaction(signal, &action, std::ptr::null_mut()), 0);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let flipper = std::thread::spawn(move || {
            // SAFETY: the calling thread's own id.
            tx.send(unsafe { libc::pthread_self() }).unwrap();
            while !STOP.load(Relaxed) {
                crate::arch::add_then_mark(&COUNT, 1, &STEP, 1);
                crate::arch::add_then_mark(&COUNT, u32::MAX, &STEP, 0);
            }
        });
        let target = rx.recv().unwrap();
        // One signal at a time: each is sent once the last was handled. A
        // real-time signal queues, and sent faster than the handler (which
        // walks the stack) runs, the queue fills and pthread_kill fails
        // with EAGAIN (RLIMIT_SIGPENDING).
        while HANDLED.load(Relaxed) < 20_000 {
            let handled = HANDLED.load(Relaxed);
            // SAFETY: the flipper runs until STOP, so `target` is live.
            assert_eq!(unsafe { libc::pthread_kill(target, signal) }, 0);
            while HANDLED.load(Relaxed) == handled {
                std::thread::yield_now();
            }
        }
        STOP.store(true, Relaxed);
        flipper.join().unwrap();
        eprintln!(
            "{} handlers, {} in the gap",
            HANDLED.load(Relaxed),
            IN_GAP.load(Relaxed)
        );
        assert_eq!(DISAGREED.load(Relaxed), 0);
    }
}
