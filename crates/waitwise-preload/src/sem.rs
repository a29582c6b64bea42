//! `sem_*`: an unnamed semaphore as one counter word whose top bit says
//! that a waiter may sleep, waiting two-phase until the count is positive.
//! Errors go to `errno` with a -1 return, as POSIX specifies for
//! semaphores.
//!
//! # Layout (glibc x86-64 `sem_t`, 32 bytes, as 32-bit words)
//!
//! ```text
//!  word  offset  here                          glibc (struct new_sem)
//!   0     0      VALUE: the count (bits 0-30)  value (low half of `data`)
//!                and MAY_SLEEP (bit 31); the futex
//!   1     4      SLEEPERS: waiters in the      nwaiters (high half)
//!                blocking phase
//!   2     8      MARK: NATIVE_MARK             private: 0 private, 128 shared
//! ```
//!
//! `MARK` tells a semaphore set up here from one glibc set up: a
//! process-shared `sem_init` (forwarded) or a named semaphore from
//! `sem_open` (which this library does not replace) has 0 or 128 there,
//! never [`NATIVE_MARK`], and every call on it is forwarded.
//!
//! # Protocol (musl's)
//!
//! - take: `n | bit => n - 1 | bit` for `n > 0` (one CAS; the bit stays).
//! - sleep: a waiter that found `n = 0` counts itself in `SLEEPERS`, sets
//!   `0 => MAY_SLEEP`, and sleeps while the word is exactly `MAY_SLEEP`.
//! - post: reads `SLEEPERS` *before* its increment, then
//!   `v => v + 1` (clearing `MAY_SLEEP` when at most one waiter sleeps),
//!   and wakes when the old value had `MAY_SLEEP`: one sleeper if more than
//!   one sleeps (the bit stays, so the next post wakes the next), all
//!   otherwise (the bit is gone, and a sleeper that counted itself after the
//!   read must wake to set it again).
//!
//! Whether to wake comes from the value the increment replaced, so a post
//! never reads the semaphore after the increment that lets a waiter go:
//! that waiter may take the unit, destroy the semaphore and free its
//! memory at once (glibc bug 12674's pattern). The wake-up system call
//! still names the address, which is harmless on freed memory (no sleeper
//! is found there; glibc's `sem_post` does the same).
//!
//! No lost wake-up: a waiter sleeps only while the word is `MAY_SLEEP`
//! (the kernel compares atomically), so any post after that changes the
//! word from a value with the bit set and wakes; a post before it changes
//! the word, and the sleep returns at once.
//!
//! # Memory ordering
//!
//! A successful take is an Acquire CAS, a post a Release (SeqCst) CAS:
//! what the poster wrote before posting is visible to the thread that
//! takes the unit. Setting `MAY_SLEEP` and counting in `SLEEPERS` are
//! SeqCst (with the post's read of `SLEEPERS` and its CAS, the sleeper
//! count must not be read stale *and* the bit missed; the bit alone
//! decides the wake, the count only whether one or all). Loads that only
//! seed a CAS loop, failed CASes and leaving `SLEEPERS` are Relaxed: the
//! successful CAS is what orders, and a stale high count only makes a post
//! keep the bit (one more wake call later). `MARK` is Relaxed: `sem_init`
//! writes it before the semaphore is shared (whatever shares it orders the
//! store) and it stays fixed until `sem_destroy`; it guards no other data.
//!
//! # Signals and cancellation
//!
//! `sem_wait`, `sem_timedwait` and `sem_clockwait` are cancellation
//! points: they act on a pending request on entry, and a request that
//! arrives while they sleep ends the thread there. A thread that glibc
//! unwinds out of the sleep (that, or a signal handler's `pthread_exit`)
//! leaves `SLEEPERS` and passes on a wake-up it may have been handed
//! ([`unwound`]). A signal handler that interrupts the sleep and returns
//! ends the wait with `EINTR`, as glibc does (`sem_wait` only without
//! `SA_RESTART`, the timed waits always: the kernel's rule for an untimed
//! and a timed futex wait). Programs rely on it to leave a wait loop on a
//! signal.

use crate::profile::{self, Kind};
use crate::real::{self, forward, set_errno};
use crate::{cleanup, poll, time};
use libc::{sem_t, timespec, EAGAIN, EINVAL};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use waitwise::platform::cancel;
use waitwise::platform::futex::{wake_address, Futex, FutexWait, Interrupted, OnSignal};
use waitwise::{Deadline, SyncKind};

const _: () = assert!(std::mem::size_of::<sem_t>() == 32);

const VALUE: usize = 0;
const SLEEPERS: usize = 1;
const MARK: usize = 2;
/// `MARK` of a native semaphore ("WWse"): neither of glibc's values.
pub const NATIVE_MARK: u32 = 0x5757_7365;
/// `VALUE`: a waiter may sleep on the word; a post that replaces a value
/// with this bit wakes.
const MAY_SLEEP: u32 = 1 << 31;
/// `VALUE`: the count's bits.
const COUNT_MASK: u32 = MAY_SLEEP - 1;
/// `SEM_VALUE_MAX` on glibc (the count's largest value).
const SEM_VALUE_MAX: u32 = i32::MAX as u32;

type Words = [AtomicU32; 8];

/// # Safety
///
/// `s` points to a live `sem_t` for `'a`.
#[inline(always)]
unsafe fn words<'a>(s: *mut sem_t) -> &'a Words {
    // SAFETY: by the caller's contract; AtomicU32 has u32's layout.
    unsafe { &*(s as *const Words) }
}

#[inline(always)]
fn native(w: &Words) -> bool {
    // Relaxed: MARK is fixed from init to destroy (module doc).
    w[MARK].load(Ordering::Relaxed) == NATIVE_MARK
}

/// The count in a `VALUE`.
#[inline(always)]
fn count(v: u32) -> u32 {
    v & COUNT_MASK
}

/// -1 with `errno = e`.
fn fail(e: c_int) -> c_int {
    set_errno(e);
    -1
}

/// `sem_init`: `EINVAL` above `SEM_VALUE_MAX`; process-shared semaphores
/// are forwarded.
#[no_mangle]
pub unsafe extern "C-unwind" fn sem_init(s: *mut sem_t, pshared: c_int, value: c_uint) -> c_int {
    if s.is_null() || value > SEM_VALUE_MAX {
        return fail(EINVAL);
    }
    if pshared != 0 {
        // SAFETY: forwarding the caller's valid arguments.
        return unsafe {
            forward!(real::SEM_INIT, fn(*mut sem_t, c_int, c_uint) -> c_int)(s, pshared, value)
        };
    }
    // SAFETY: a writable sem_t, not in use yet.
    unsafe { s.write_bytes(0, 1) };
    // SAFETY: as above.
    let w = unsafe { words(s) };
    // Relaxed: not shared yet; whatever shares the semaphore orders these
    // stores before other threads' reads.
    w[VALUE].store(value, Ordering::Relaxed);
    w[MARK].store(NATIVE_MARK, Ordering::Relaxed);
    0
}

/// `sem_destroy`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sem_destroy(s: *mut sem_t) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    if !native(unsafe { words(s) }) {
        // SAFETY: a glibc semaphore; forwarding the caller's argument.
        return unsafe { forward!(real::SEM_DESTROY, fn(*mut sem_t) -> c_int)(s) };
    }
    0
}

/// Takes one unit if there is one: `n | bit => n - 1 | bit`. Acquire:
/// pairs with the post. The first load and CAS failures are Relaxed:
/// guesses (module doc).
#[inline]
fn try_take(w: &Words) -> bool {
    let mut v = w[VALUE].load(Ordering::Relaxed);
    while count(v) > 0 {
        match w[VALUE].compare_exchange_weak(v, v - 1, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => v = now,
        }
    }
    false
}

/// Waits for a unit until `deadline`; 0 or an errno value (`ETIMEDOUT`,
/// `EINTR`). A cancellation request ends the thread in the sleep.
#[cold]
fn take_contended(w: &Words, s: *mut sem_t, deadline: Deadline) -> c_int {
    let start = profile::start();
    let limit = crate::config::poll_limit_ns(SyncKind::ProducerConsumer);
    let mut blocked = false;
    // Polling phase.
    poll::poll(&w[VALUE], deadline.cap_ns(limit), |v| count(v) > 0);
    let r = loop {
        // A unit that is there is taken, whatever ended the last wait.
        if try_take(w) {
            break 0;
        }
        let timeout = deadline.remaining();
        if timeout == Some(std::time::Duration::ZERO) {
            break libc::ETIMEDOUT;
        }
        blocked = true;
        match sleep(w, timeout) {
            Err(Interrupted) => {
                if try_take(w) {
                    break 0;
                }
                break libc::EINTR;
            }
            Ok(FutexWait::TimedOut) if !try_take(w) => break libc::ETIMEDOUT,
            Ok(FutexWait::TimedOut) => break 0,
            Ok(_) => {}
        }
    };
    profile::finish(start, Kind::Sem, s, blocked);
    r
}

/// The blocking phase, once: count in `SLEEPERS`, set `MAY_SLEEP` on a
/// zero count, sleep while the word is `MAY_SLEEP`, leave `SLEEPERS`.
fn sleep(w: &Words, timeout: Option<std::time::Duration>) -> Result<FutexWait, Interrupted> {
    // SeqCst: module doc, "Memory ordering".
    w[SLEEPERS].fetch_add(1, Ordering::SeqCst);
    // 0 => MAY_SLEEP (a failure means a unit came, or the bit is set).
    let _ = w[VALUE].compare_exchange(0, MAY_SLEEP, Ordering::SeqCst, Ordering::Relaxed);
    let futex = Futex::from_atomic(&w[VALUE]);
    // SAFETY: `unwound` takes these words and never unwinds.
    let r = unsafe {
        cleanup::on_forced_unwind(w, unwound, || {
            futex.wait_cancellable(MAY_SLEEP, timeout, OnSignal::Return)
        })
    };
    // Relaxed: module doc.
    w[SLEEPERS].fetch_sub(1, Ordering::Relaxed);
    r
}

/// The cleanup of a sleeper that glibc unwinds (cancelled, or its signal
/// handler called `pthread_exit`): it leaves `SLEEPERS` and wakes another
/// sleeper, in case a post had woken this one (the unit is still in the
/// count: a cancelled wait takes none).
///
/// # Safety
///
/// `w` points at the words of a live semaphore this thread sleeps on.
unsafe extern "C" fn unwound(w: *mut c_void) {
    // SAFETY: caller's contract.
    let w = unsafe { &*(w as *const Words) };
    // Relaxed: module doc.
    w[SLEEPERS].fetch_sub(1, Ordering::Relaxed);
    Futex::from_atomic(&w[VALUE]).wake(1);
}

/// The body of the three waits: a cancellation point, then the fast path,
/// then the wait until `deadline` (`None`: the deadline is bad, `EINVAL`,
/// reported only when the wait must block).
///
/// # Safety
///
/// `s` is a live native semaphore.
unsafe fn wait(s: *mut sem_t, deadline: impl FnOnce() -> Result<Deadline, c_int>) -> c_int {
    cancel::point();
    // SAFETY: caller's contract.
    let w = unsafe { words(s) };
    if try_take(w) {
        return 0;
    }
    let deadline = match deadline() {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    match take_contended(w, s, deadline) {
        0 => 0,
        e => fail(e),
    }
}

/// `sem_wait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sem_wait(s: *mut sem_t) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    if !native(unsafe { words(s) }) {
        // SAFETY: a glibc semaphore; forwarding the caller's argument.
        return unsafe { forward!(real::SEM_WAIT, fn(*mut sem_t) -> c_int)(s) };
    }
    // SAFETY: caller's contract.
    unsafe { wait(s, || Ok(Deadline::NEVER)) }
}

/// `sem_trywait`: `EAGAIN` at zero.
#[no_mangle]
pub unsafe extern "C-unwind" fn sem_trywait(s: *mut sem_t) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(s) };
    if !native(w) {
        // SAFETY: a glibc semaphore; forwarding the caller's argument.
        return unsafe { forward!(real::SEM_TRYWAIT, fn(*mut sem_t) -> c_int)(s) };
    }
    if try_take(w) {
        0
    } else {
        fail(EAGAIN)
    }
}

/// `sem_timedwait`: `abstime` on `CLOCK_REALTIME`; `ETIMEDOUT`, or
/// `EINVAL` for a bad `abstime` when the semaphore is at zero.
#[no_mangle]
pub unsafe extern "C-unwind" fn sem_timedwait(s: *mut sem_t, abstime: *const timespec) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    if !native(unsafe { words(s) }) {
        // SAFETY: a glibc semaphore; forwarding the caller's arguments.
        return unsafe {
            forward!(
                real::SEM_TIMEDWAIT,
                fn(*mut sem_t, *const timespec) -> c_int
            )(s, abstime)
        };
    }
    // SAFETY: caller's contract (for `abstime` too).
    unsafe { wait(s, || time::deadline(libc::CLOCK_REALTIME, abstime)) }
}

/// `sem_clockwait` (glibc 2.30, CPython's timed locks): `abstime` on
/// `clock` (`CLOCK_REALTIME` or `CLOCK_MONOTONIC`; another clock is
/// `EINVAL` when the semaphore is at zero).
#[no_mangle]
pub unsafe extern "C-unwind" fn sem_clockwait(
    s: *mut sem_t,
    clock: libc::clockid_t,
    abstime: *const timespec,
) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    if !native(unsafe { words(s) }) {
        // SAFETY: a glibc semaphore; forwarding the caller's arguments.
        return unsafe {
            forward!(
                real::SEM_CLOCKWAIT,
                fn(*mut sem_t, libc::clockid_t, *const timespec) -> c_int
            )(s, clock, abstime)
        };
    }
    // SAFETY: caller's contract (for `abstime` too).
    unsafe { wait(s, || time::deadline(clock, abstime)) }
}

/// `sem_post`: `EOVERFLOW` at `SEM_VALUE_MAX`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sem_post(s: *mut sem_t) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(s) };
    if !native(w) {
        // SAFETY: a glibc semaphore; forwarding the caller's argument.
        return unsafe { forward!(real::SEM_POST, fn(*mut sem_t) -> c_int)(s) };
    }
    let word = w[VALUE].as_ptr();
    // Relaxed: a first guess for the CAS below, which is what orders.
    let mut v = w[VALUE].load(Ordering::Relaxed);
    let sleepers = loop {
        if count(v) >= SEM_VALUE_MAX {
            return fail(libc::EOVERFLOW);
        }
        // Read before the increment, never after (module doc). SeqCst:
        // module doc, "Memory ordering".
        let sleepers = w[SLEEPERS].load(Ordering::SeqCst);
        let new = if sleepers <= 1 {
            (v + 1) & COUNT_MASK
        } else {
            v + 1
        };
        // v => v + 1. SeqCst: release to the taker, and ordered with the
        // sleepers' announcements.
        match w[VALUE].compare_exchange_weak(v, new, Ordering::SeqCst, Ordering::Relaxed) {
            Ok(_) => break sleepers,
            Err(now) => v = now,
        }
    };
    if v & MAY_SLEEP != 0 {
        // The semaphore is not touched again: only its address goes to the
        // kernel (module doc).
        wake_address(word, if sleepers > 1 { 1 } else { u32::MAX });
    }
    0
}

/// `sem_getvalue`: the count (never negative here).
#[no_mangle]
pub unsafe extern "C-unwind" fn sem_getvalue(s: *mut sem_t, sval: *mut c_int) -> c_int {
    if s.is_null() || sval.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(s) };
    if !native(w) {
        // SAFETY: a glibc semaphore; forwarding the caller's arguments.
        return unsafe {
            forward!(real::SEM_GETVALUE, fn(*mut sem_t, *mut c_int) -> c_int)(s, sval)
        };
    }
    // Relaxed: a snapshot that may be stale by return anyway; it takes no
    // unit, so it synchronizes with no post.
    // SAFETY: `sval` is writable (caller's contract).
    unsafe { sval.write(count(w[VALUE].load(Ordering::Relaxed)) as c_int) };
    0
}
