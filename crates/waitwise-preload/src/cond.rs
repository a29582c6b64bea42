//! `pthread_cond_*`: waitwise's condition variable sequence algorithm
//! ([`waitwise::condvar::CondSeqRef`], the algorithm of
//! `waitwise::condvar::Condvar`) inside the caller's `pthread_cond_t`: a
//! sequence word that signals bump, with a sleeper count so a signal makes
//! the `futex_wake` system call only when a waiter sleeps. No internal
//! mutex.
//!
//! # Layout (glibc x86-64 `pthread_cond_t`, 48 bytes, as 32-bit words)
//!
//! ```text
//!  word  offset  here                         glibc
//!   0     0      SEQ: bumped by every signal   __wseq (low half)
//!   1     4      SLEEPERS: waiters in futex_wait
//!   2     8      WAITERS: threads inside pthread_cond_*wait,
//!                bit 31: a destroy waits
//!   9    36      FLAGS: bit 0 process-shared   __wrefs: bit 0 process-shared,
//!                (forwarded), bit 1 monotonic  bit 1 CLOCK_MONOTONIC
//! ```
//!
//! `PTHREAD_COND_INITIALIZER` (all zeros) is a native `CLOCK_REALTIME`
//! condvar. `FLAGS` sits where glibc keeps the same two bits, so a
//! process-shared condvar that glibc's `pthread_cond_init` set up carries
//! bit 0 for life and every call forwards it; a native one never sets it.
//!
//! # Algorithm
//!
//! `SEQ`, `SLEEPERS` and `WAITERS` are the words of
//! [`waitwise::condvar::CondSeqRef`], the sequence algorithm of
//! `waitwise::condvar::Condvar` (module `waitwise::condvar`: transitions,
//! spurious wake-ups, memory ordering; checked by the loom models in
//! `crates/waitwise/tests/loom_condvar.rs`). A waiter enters holding the
//! mutex, unlocks it, waits (polling for the configured `alpha * B`, then
//! asleep on `SEQ`), leaves and re-locks the mutex; signal and broadcast
//! bump `SEQ` only while a waiter is in; `pthread_cond_destroy` waits,
//! asleep on `WAITERS`, until notified waiters have left. What is here is
//! the mapping onto glibc's layout, forwarding of process-shared condvars,
//! POSIX's errors and clocks, and cancellation: the wait is a cancellation
//! point, and a waiter that glibc unwinds passes on a wake-up it may have
//! been handed and re-locks the mutex before its cleanup handlers run
//! ([`unwound`]).
//!
//! # Memory ordering
//!
//! The algorithm's words are [`CondSeqRef`]'s. `FLAGS` is Relaxed: init writes it before the condvar is shared
//! (whatever shares it orders the store), and its two bits stay fixed for
//! the condvar's life (glibc's own `__wrefs` updates on a forwarded one
//! leave bit 0 alone); it guards no other data.

use crate::profile::{self, Kind};
use crate::real::{self, forward};
use crate::{cleanup, mutex, time};
use libc::{pthread_cond_t, pthread_condattr_t, pthread_mutex_t, timespec, EINVAL};
use std::ffi::c_int;
use std::sync::atomic::{compiler_fence, AtomicU32, AtomicU8, Ordering};
use std::time::Duration;
use waitwise::condvar::CondSeqRef;
use waitwise::platform::cancel;
use waitwise::platform::futex::Futex;
use waitwise::{Deadline, Policy, SleepRules, SyncKind, WaitWordRef};

const _: () = assert!(std::mem::size_of::<pthread_cond_t>() == 48);

/// Word index of the sequence word (the futex).
const SEQ: usize = 0;
/// Word index of the sleeper count.
const SLEEPERS: usize = 1;
/// Word index of the in-wait count.
const WAITERS: usize = 2;
/// Word index of the flags (glibc's `__wrefs`).
const FLAGS: usize = 9;
/// `FLAGS`: process-shared, set by glibc's init: forwarded.
const FLAG_SHARED: u32 = 1;
/// `FLAGS`: timed waits use `CLOCK_MONOTONIC`.
const FLAG_MONOTONIC: u32 = 2;

type Words = [AtomicU32; 12];

/// # Safety
///
/// `c` points to a live `pthread_cond_t` for `'a`.
#[inline(always)]
unsafe fn words<'a>(c: *mut pthread_cond_t) -> &'a Words {
    // SAFETY: by the caller's contract; AtomicU32 has u32's layout.
    unsafe { &*(c as *const Words) }
}

#[inline(always)]
fn forwarded(w: &Words) -> bool {
    // Relaxed: the bit is fixed for the condvar's life (module doc).
    w[FLAGS].load(Ordering::Relaxed) & FLAG_SHARED != 0
}

/// The sequence algorithm over the condvar's words.
#[inline(always)]
fn cond_seq(w: &Words) -> CondSeqRef<'_> {
    CondSeqRef::new(
        WaitWordRef::new(Futex::from_atomic(&w[SEQ]), &w[SLEEPERS]),
        Futex::from_atomic(&w[WAITERS]),
    )
}

/// `pthread_cond_init`: native, with the attribute's clock, unless
/// process-shared.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_init(
    c: *mut pthread_cond_t,
    attr: *const pthread_condattr_t,
) -> c_int {
    if c.is_null() {
        return EINVAL;
    }
    let (mut pshared, mut clock) = (libc::PTHREAD_PROCESS_PRIVATE, libc::CLOCK_REALTIME);
    if !attr.is_null() {
        // SAFETY: `attr` is an initialized attribute object (POSIX).
        unsafe {
            real::pthread_condattr_getpshared(attr, &mut pshared);
            libc::pthread_condattr_getclock(attr, &mut clock);
        }
    }
    if pshared != libc::PTHREAD_PROCESS_PRIVATE {
        // SAFETY: forwarding the caller's valid arguments.
        return unsafe {
            forward!(
                real::COND_INIT,
                fn(*mut pthread_cond_t, *const pthread_condattr_t) -> c_int
            )(c, attr)
        };
    }
    // SAFETY: a writable pthread_cond_t, not in use yet.
    unsafe { c.write_bytes(0, 1) };
    if clock == libc::CLOCK_MONOTONIC {
        // SAFETY: as above.
        let w = unsafe { words(c) };
        // Relaxed: not shared yet; whatever shares the condvar orders this
        // store before other threads' reads.
        w[FLAGS].store(FLAG_MONOTONIC, Ordering::Relaxed);
    }
    0
}

/// `pthread_cond_destroy`: waits (asleep) until threads woken from a wait
/// have left.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_destroy(c: *mut pthread_cond_t) -> c_int {
    if c.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(c) };
    if forwarded(w) {
        // SAFETY: a glibc condvar; forwarding the caller's argument.
        return unsafe { forward!(real::COND_DESTROY, fn(*mut pthread_cond_t) -> c_int)(c) };
    }
    cond_seq(w).wait_for_waiters_to_leave();
    0
}

/// `pthread_cond_signal`: wakes at least one waiter, if any.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_signal(c: *mut pthread_cond_t) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { notify(c, WakeCount::One) }
}

/// `pthread_cond_broadcast`: wakes every waiter.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_broadcast(c: *mut pthread_cond_t) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { notify(c, WakeCount::All) }
}

/// Whom a notify wakes.
#[derive(Clone, Copy)]
enum WakeCount {
    One,
    All,
}

/// The body of signal and broadcast, for a native condvar
/// [`CondSeqRef`]'s notify.
///
/// # Safety
/// `c` is null or points at a live `pthread_cond_t`.
unsafe fn notify(c: *mut pthread_cond_t, count: WakeCount) -> c_int {
    if c.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(c) };
    if forwarded(w) {
        // SAFETY: a glibc condvar; forwarding the caller's argument.
        return unsafe {
            match count {
                WakeCount::One => forward!(real::COND_SIGNAL, fn(*mut pthread_cond_t) -> c_int)(c),
                WakeCount::All => {
                    forward!(real::COND_BROADCAST, fn(*mut pthread_cond_t) -> c_int)(c)
                }
            }
        };
    }
    match count {
        WakeCount::One => cond_seq(w).notify_one(),
        WakeCount::All => cond_seq(w).notify_all(),
    };
    0
}

/// `pthread_cond_wait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_wait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
) -> c_int {
    if c.is_null() || m.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(c) };
    if forwarded(w) {
        // SAFETY: a glibc condvar; forwarding the caller's arguments.
        return unsafe {
            forward!(
                real::COND_WAIT,
                fn(*mut pthread_cond_t, *mut pthread_mutex_t) -> c_int
            )(c, m)
        };
    }
    // SAFETY: as above.
    unsafe { wait(c, m, Deadline::NEVER) }
}

/// `pthread_cond_timedwait`: `abstime` on the condvar's clock (set at init
/// by `pthread_condattr_setclock`, `CLOCK_REALTIME` by default).
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_timedwait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    abstime: *const timespec,
) -> c_int {
    if c.is_null() || m.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(c) };
    if forwarded(w) {
        // SAFETY: a glibc condvar; forwarding the caller's arguments.
        return unsafe {
            forward!(
                real::COND_TIMEDWAIT,
                fn(*mut pthread_cond_t, *mut pthread_mutex_t, *const timespec) -> c_int
            )(c, m, abstime)
        };
    }
    // Relaxed: the bit is fixed for the condvar's life (module doc).
    let clock = if w[FLAGS].load(Ordering::Relaxed) & FLAG_MONOTONIC != 0 {
        libc::CLOCK_MONOTONIC
    } else {
        libc::CLOCK_REALTIME
    };
    // SAFETY: caller's contract.
    match unsafe { time::deadline(clock, abstime) } {
        // SAFETY: as above.
        Ok(d) => unsafe { wait(c, m, d) },
        Err(e) => e,
    }
}

/// `pthread_cond_clockwait` (glibc 2.30): `abstime` on `clock`, whatever
/// the condvar's own clock.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_clockwait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const timespec,
) -> c_int {
    if c.is_null() || m.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(c) };
    if forwarded(w) {
        // SAFETY: a glibc condvar; forwarding the caller's arguments.
        return unsafe {
            forward!(
                real::COND_CLOCKWAIT,
                fn(
                    *mut pthread_cond_t,
                    *mut pthread_mutex_t,
                    libc::clockid_t,
                    *const timespec,
                ) -> c_int
            )(c, m, clock, abstime)
        };
    }
    // SAFETY: caller's contract.
    match unsafe { time::deadline(clock, abstime) } {
        // SAFETY: as above.
        Ok(d) => unsafe { wait(c, m, d) },
        Err(e) => e,
    }
}

/// The wait itself: act on a pending cancellation, enter, unlock, wait
/// for a notify, leave, re-lock.
///
/// It is a cancellation point: a cancellation request pending on entry is
/// acted on with the mutex still held, and one that arrives while the
/// thread sleeps ends the sleep; either way the thread's cleanup handlers
/// then run with the mutex held, as POSIX requires ([`unwound`]). No value
/// here has a destructor (crate docs, "Unwinding").
///
/// # Safety
///
/// `c` is a live native condvar, `m` a live mutex.
unsafe fn wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, deadline: Deadline) -> c_int {
    cancel::point();
    // SAFETY: caller's contract.
    let cond_seq = cond_seq(unsafe { words(c) });
    let waiter = Waiter {
        c,
        m,
        step: AtomicU8::new(OUTSIDE),
    };
    // From enter to leave, the cleanup routine knows what to undo: a
    // signal handler's `pthread_exit` may end the thread at any
    // instruction, and a waiter count left behind would keep
    // `pthread_cond_destroy` waiting forever. The count and its mark
    // change as one step (`enter_marking`, `leave_marking`).
    //
    // Known window: an unwind that starts inside the unlock just below,
    // after the mutex was released and before `WAITING` is marked, runs the
    // thread's cleanup handlers without the mutex (the count is still
    // given back).
    // SAFETY: `unwound` takes a `Waiter` and never unwinds; `m` is a live
    // mutex (caller's contract) for the unlock inside.
    let waited = unsafe {
        cleanup::on_forced_unwind(&waiter, unwound, || {
            let ticket = cond_seq.enter_marking(&waiter.step, HOLDING);
            // `m` is a live mutex (caller's contract; outer unsafe block).
            let r = mutex::unlock(m);
            if r != 0 {
                // Not the owner of an error-checking mutex: EPERM, no wait.
                cond_seq.leave_marking(&waiter.step, OUTSIDE);
                return Err(r);
            }
            waiter.now(WAITING);
            crate::first_wait::prepare();
            let start = profile::start();
            let limit = crate::config::poll_limit_ns(SyncKind::ProducerConsumer);
            let policy = crate::config::wait_policy(
                Policy::poll_then_block(Duration::from_nanos(limit)),
                // The waiters and a notifier.
                ticket.waiters() as usize + 1,
            );
            let rules = SleepRules {
                cancellable: true,
                ..SleepRules::default()
            };
            let out = cond_seq.wait(ticket, &policy, deadline, rules);
            profile::finish(start, Kind::Cond, c, out.blocked());
            cond_seq.leave_marking(&waiter.step, LEFT);
            Ok(out.timed_out())
        })
    };
    let timed_out = match waited {
        Ok(timed_out) => timed_out,
        Err(r) => return r,
    };
    // SAFETY: caller's contract.
    match unsafe { mutex::lock(m) } {
        0 if timed_out => libc::ETIMEDOUT,
        r => r,
    }
}

/// [`Waiter::step`]: not entered, or refused; nothing to undo.
const OUTSIDE: u8 = 0;
/// [`Waiter::step`]: entered, still holding the mutex.
const HOLDING: u8 = 1;
/// [`Waiter::step`]: entered, the mutex released.
const WAITING: u8 = 2;
/// [`Waiter::step`]: left, the mutex not re-locked yet; a destroyer may
/// wait for the wake-up that the leave was about to make.
const LEFT: u8 = 3;

/// What [`unwound`] needs of a waiter. No destructor (crate docs,
/// "Unwinding").
struct Waiter {
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    /// How far the wait got: [`OUTSIDE`], [`HOLDING`], [`WAITING`] or
    /// [`LEFT`].
    step: AtomicU8,
}

impl Waiter {
    /// Records the step the wait has reached. Only this thread reads it
    /// (its cleanup routine runs on it), so Relaxed; the compiler fences
    /// keep the store between the steps it separates.
    #[inline(always)]
    fn now(&self, step: u8) {
        compiler_fence(Ordering::SeqCst);
        self.step.store(step, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
    }
}

/// The cleanup of a waiter that glibc unwinds (cancelled, or its signal
/// handler called `pthread_exit`), as far as the wait got: a waiter that
/// released the mutex passes on a signal it may have been handed and
/// leaves ([`CondSeqRef::leave_passing_on_wake`], as glibc does), and
/// re-locks the mutex, which POSIX requires to be held when the thread's
/// own cleanup handlers run; one that still holds it only leaves; one that
/// left wakes a destroyer that may wait for it and re-locks.
///
/// # Safety
///
/// `waiter` points at the live [`Waiter`] of a thread inside [`wait`].
unsafe extern "C" fn unwound(waiter: *mut std::ffi::c_void) {
    // SAFETY: caller's contract.
    let waiter = unsafe { &*(waiter as *const Waiter) };
    // SAFETY: the condvar stays alive while a thread waits on it (POSIX).
    let cond_seq = cond_seq(unsafe { words(waiter.c) });
    // A signal that ended the thread between a count change and its mark
    // left the mark to store.
    cancel::complete_interrupted_mark();
    // Relaxed: written by this thread (Waiter::now, and the marking enter
    // and leave).
    match waiter.step.load(Ordering::Relaxed) {
        HOLDING => cond_seq.leave(),
        LEFT => {
            cond_seq.wake_destroyer();
            // SAFETY: the waiter's mutex, which it unlocked to wait.
            unsafe { mutex::lock(waiter.m) };
        }
        WAITING => {
            cond_seq.leave_passing_on_wake();
            // SAFETY: the waiter's mutex, which it unlocked to wait.
            unsafe { mutex::lock(waiter.m) };
        }
        _ => {}
    }
}
