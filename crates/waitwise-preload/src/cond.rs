//! `pthread_cond_*`: a native condition variable, a sequence word that
//! signals bump, with a sleeper count so a signal makes the `futex_wake`
//! system call only when a waiter sleeps. No internal mutex.
//!
//! # Layout (glibc x86-64 `pthread_cond_t`, 48 bytes, as 32-bit words)
//!
//! ```text
//!  word  offset  here                         glibc
//!   0     0      SEQ: bumped by every signal   __wseq (low half)
//!   1     4      SLEEPERS: waiters in futex_wait
//!   2     8      WAITERS: threads inside pthread_cond_*wait
//!   9    36      FLAGS: bit 0 process-shared   __wrefs: bit 0 process-shared,
//!                (forwarded), bit 1 monotonic  bit 1 CLOCK_MONOTONIC
//! ```
//!
//! `PTHREAD_COND_INITIALIZER` (all zeros) is a native `CLOCK_REALTIME`
//! condvar. `FLAGS` sits where glibc keeps the same two bits, so a
//! process-shared condvar that glibc's `pthread_cond_init` set up carries
//! bit 0 for life and every call forwards it; a native one never sets it.
//!
//! # Protocol
//!
//! A waiter, holding the mutex, registers in `WAITERS`, reads `SEQ`,
//! unlocks the mutex and waits (two-phase, [`WaitWordRef`]) until `SEQ`
//! differs or the kernel wakes it; then it leaves `WAITERS` and re-locks the
//! mutex. A signal that follows the waiter's unlock (the only kind it must
//! not miss) bumps `SEQ` after the read, so the waiter sees the change. A
//! signal wakes one sleeper, but every *polling* waiter sees the bump and
//! returns: POSIX allows such spurious wake-ups. A sleeper returns after
//! its first kernel wake-up even if `SEQ` has not moved for it: the kernel
//! wakes real-time threads by priority, so the sleeper a signal wakes may
//! have started after the bump, and if it slept again no thread blocked at
//! the signal would be unblocked, as POSIX requires. Broadcast wakes every
//! sleeper.
//!
//! # Memory ordering
//!
//! The waiter's `SEQ` read and `WAITERS` increment are ordered before the
//! signaler's bump / check by the mutex (unlock Release, lock Acquire),
//! when the signaler locked it after the waiter's unlock; Relaxed suffices
//! for both. A signaler that sees `WAITERS == 0` skips everything: any
//! waiter it must wake registered under the mutex before the signaler's
//! critical section. The bump is SeqCst: with the sleeper count it forms
//! [`WaitWordRef`]'s Dekker pattern. Leaving `WAITERS` is Release, and
//! `pthread_cond_destroy` waits (Acquire) until it is zero, so a waiter that
//! was woken never touches a destroyed condvar; it sleeps on `WAITERS` with
//! the `DESTROYING` bit set, and the waiter whose decrement leaves only that
//! bit wakes it.
//!
//! `FLAGS` is Relaxed: init writes it before the condvar is shared
//! (whatever shares it orders the store), and its two bits stay fixed for
//! the condvar's life (glibc's own `__wrefs` updates on a forwarded one
//! leave bit 0 alone); it guards no other data.

use crate::profile::{self, Kind};
use crate::real::{self, forward};
use crate::{cleanup, mutex, poll, time};
use libc::{pthread_cond_t, pthread_condattr_t, pthread_mutex_t, timespec, EINVAL};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU32, Ordering};
use waitwise::platform::cancel;
use waitwise::platform::futex::{wake_address, Futex};
use waitwise::{Deadline, SleepRules, SyncKind, WaitWordRef};

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
/// `WAITERS`: a `pthread_cond_destroy` sleeps until the count is zero, and
/// the last waiter to leave wakes it.
const DESTROYING: u32 = 1 << 31;

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

fn engine(w: &Words) -> WaitWordRef<'_> {
    WaitWordRef::new(Futex::from_atomic(&w[SEQ]), &w[SLEEPERS])
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
    // Ask the last waiter to leave for a wake-up. Acquire: pairs with the
    // waiters' Release decrements; after this no waiter touches the object.
    let mut v = w[WAITERS].fetch_or(DESTROYING, Ordering::Acquire) | DESTROYING;
    while v != DESTROYING {
        Futex::from_atomic(&w[WAITERS]).wait(v, None);
        // Acquire: as above.
        v = w[WAITERS].load(Ordering::Acquire);
    }
    // Relaxed: nobody uses the condvar any more (POSIX), until an init.
    w[WAITERS].store(0, Ordering::Relaxed);
    0
}

/// A thread leaves `WAITERS`: its last access to the condvar but for the
/// address of a wake-up that a waiting `pthread_cond_destroy` asked for
/// (a wake on memory the destroyer may already have freed is harmless: the
/// kernel finds no sleeper there, and glibc does the same).
#[inline]
fn leave(w: &Words) {
    let word = w[WAITERS].as_ptr();
    // Release: our last access to the condvar (see pthread_cond_destroy).
    if w[WAITERS].fetch_sub(1, Ordering::Release) == DESTROYING | 1 {
        wake_address(word, u32::MAX);
    }
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

/// The body of signal and broadcast: bump the sequence and wake, only
/// when a waiter is registered (no system call otherwise).
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
    // Relaxed: see the module's memory-ordering paragraph.
    if w[WAITERS].load(Ordering::Relaxed) != 0 {
        // SeqCst: the Dekker write before the sleeper check.
        w[SEQ].fetch_add(1, Ordering::SeqCst);
        match count {
            WakeCount::One => engine(w).wake_one(),
            WakeCount::All => engine(w).wake_all(),
        };
    }
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

/// The wait itself: act on a pending cancellation, register, unlock, wait
/// for a bump, leave, re-lock.
///
/// It is a cancellation point: a cancellation request pending on entry is
/// acted on with the mutex still held, and one that arrives while the
/// thread sleeps ends the sleep; either way the thread's cleanup handlers
/// then run with the mutex held, as POSIX requires ([`unwound`]).
///
/// # Safety
///
/// `c` is a live native condvar, `m` a live mutex.
unsafe fn wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, deadline: Deadline) -> c_int {
    cancel::point();
    // SAFETY: caller's contract.
    let w = unsafe { words(c) };
    // Relaxed: ordered before any signal we must see by the mutex unlock.
    w[WAITERS].fetch_add(1, Ordering::Relaxed);
    let seq = w[SEQ].load(Ordering::Relaxed);
    // SAFETY: caller's contract.
    let r = unsafe { mutex::unlock(m) };
    if r != 0 {
        // Not the owner of an error-checking mutex: EPERM, no wait.
        leave(w);
        return r;
    }
    let waiter = Waiter { c, m };
    // SAFETY: `unwound` takes a `Waiter` and never unwinds.
    let timed_out = unsafe {
        cleanup::on_forced_unwind(&waiter, unwound, || {
            let start = profile::start();
            let limit = crate::config::poll_limit_ns(SyncKind::ProducerConsumer);
            // A kernel wake-up returns even if `seq` has not moved for us:
            // the kernel may hand a signal to a waiter that came after it.
            let rules = SleepRules {
                return_when_woken: true,
                cancellable: true,
                ..SleepRules::default()
            };
            let out = poll::wait(engine(w), limit, deadline, |v| v != seq, rules);
            profile::finish(start, Kind::Cond, c, out.blocked());
            out.timed_out()
        })
    };
    leave(w);
    // SAFETY: caller's contract.
    match unsafe { mutex::lock(m) } {
        0 if timed_out => libc::ETIMEDOUT,
        r => r,
    }
}

/// What [`unwound`] needs of a waiter.
struct Waiter {
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
}

/// The cleanup of a waiter that glibc unwinds (cancelled, or its signal
/// handler called `pthread_exit`): it passes on a signal it may have been
/// handed (waking one other sleeper, a spurious wake-up at worst, as glibc
/// does), leaves `WAITERS`, and re-locks the mutex, which POSIX requires to
/// be held when the thread's own cleanup handlers run.
///
/// # Safety
///
/// `waiter` points at the live [`Waiter`] of a thread inside [`wait`].
unsafe extern "C" fn unwound(waiter: *mut std::ffi::c_void) {
    // SAFETY: caller's contract.
    let waiter = unsafe { &*(waiter as *const Waiter) };
    // SAFETY: the condvar stays alive while a thread waits on it (POSIX).
    let w = unsafe { words(waiter.c) };
    engine(w).wake_one();
    leave(w);
    // SAFETY: the waiter's mutex, which it unlocked to wait.
    unsafe { mutex::lock(waiter.m) };
}
