//! `sem_*`: an unnamed semaphore as a counter word, waiting two-phase
//! until it is positive. Errors go to `errno` with a -1 return, as POSIX
//! specifies for semaphores.
//!
//! # Layout (glibc x86-64 `sem_t`, 32 bytes, as 32-bit words)
//!
//! ```text
//!  word  offset  here                          glibc (struct new_sem)
//!   0     0      VALUE: the count, the futex   value (low half of `data`)
//!   1     4      SLEEPERS                      nwaiters (high half)
//!   2     8      MARK: NATIVE_MARK             private: 0 private, 128 shared
//! ```
//!
//! `MARK` tells a semaphore set up here from one glibc set up: a
//! process-shared `sem_init` (forwarded) or a named semaphore from
//! `sem_open` (which this library does not replace) has 0 or 128 there,
//! never [`NATIVE_MARK`], and every call on it is forwarded.
//!
//! # Memory ordering
//!
//! A successful decrement is an Acquire CAS, a post a Release (SeqCst, for
//! the sleeper-count Dekker pattern of [`WaitWordRef`]) increment: what the
//! poster wrote before posting is visible to the thread that takes the unit.
//! `MARK` is Relaxed: `sem_init` writes it before the semaphore is shared
//! (whatever shares it orders the store) and it stays fixed until
//! `sem_destroy`; it guards no other data. Loads of `VALUE` that only seed a
//! CAS loop, and failed CASes, are Relaxed: the successful CAS is what
//! orders.
//!
//! # Signals
//!
//! A signal handler that interrupts a blocked `sem_wait` or `sem_timedwait`
//! ends it with `EINTR`, as POSIX specifies and glibc does (`sem_wait`
//! only without `SA_RESTART`, `sem_timedwait` always: the kernel's rule for
//! an untimed / timed futex wait, which both make the same way). Programs
//! rely on it to leave a wait loop on a signal. So the blocking phase is
//! [`WaitWordRef::wait_until_interruptible`], whose futex wait reports
//! `EINTR` (a plain wait retries it).

use crate::profile::{self, Kind};
use crate::real::{self, forward, set_errno};
use crate::{ffi_guard, poll, time};
use libc::{sem_t, timespec, EAGAIN, EINVAL};
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicU32, Ordering};
use waitwise::platform::futex::Futex;
use waitwise::{Deadline, SyncKind, WaitOutcome, WaitWordRef};

const _: () = assert!(std::mem::size_of::<sem_t>() == 32);

const VALUE: usize = 0;
const SLEEPERS: usize = 1;
const MARK: usize = 2;
/// `MARK` of a native semaphore ("WWse"): neither of glibc's values.
pub const NATIVE_MARK: u32 = 0x5757_7365;
/// `SEM_VALUE_MAX` on glibc.
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

fn engine(w: &Words) -> WaitWordRef<'_> {
    WaitWordRef::new(Futex::from_atomic(&w[VALUE]), &w[SLEEPERS])
}

/// -1 with `errno = e`.
fn fail(e: c_int) -> c_int {
    set_errno(e);
    -1
}

/// `sem_init`: `EINVAL` above `SEM_VALUE_MAX`; process-shared semaphores
/// are forwarded.
#[no_mangle]
pub unsafe extern "C" fn sem_init(s: *mut sem_t, pshared: c_int, value: c_uint) -> c_int {
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
pub unsafe extern "C" fn sem_destroy(s: *mut sem_t) -> c_int {
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

/// Takes one unit if there is one. Acquire: pairs with the post. The
/// first load and CAS failures are Relaxed: guesses (module doc).
#[inline]
fn try_take(w: &Words) -> bool {
    let mut v = w[VALUE].load(Ordering::Relaxed);
    while v > 0 {
        match w[VALUE].compare_exchange_weak(v, v - 1, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => v = now,
        }
    }
    false
}

/// Waits for a unit until `deadline`; 0 or an errno value (`ETIMEDOUT`,
/// `EINTR`).
#[cold]
fn take_contended(w: &Words, s: *mut sem_t, deadline: Deadline) -> c_int {
    ffi_guard(EINVAL, || {
        let start = profile::start();
        let limit = crate::config::poll_limit_ns(SyncKind::ProducerConsumer);
        let mut blocked = false;
        let r = loop {
            let out = poll::wait_or_interrupted(engine(w), limit, deadline, |v| v > 0);
            blocked |= out.blocked();
            // A unit that is there is taken, whatever ended the wait.
            if try_take(w) {
                break 0;
            }
            match out {
                WaitOutcome::Interrupted { .. } => break libc::EINTR,
                _ if out.timed_out() || deadline.has_passed() => break libc::ETIMEDOUT,
                _ => {}
            }
        };
        profile::finish(start, Kind::Sem, s, blocked);
        r
    })
}

/// `sem_wait`.
#[no_mangle]
pub unsafe extern "C" fn sem_wait(s: *mut sem_t) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(s) };
    if !native(w) {
        // SAFETY: a glibc semaphore; forwarding the caller's argument.
        return unsafe { forward!(real::SEM_WAIT, fn(*mut sem_t) -> c_int)(s) };
    }
    if try_take(w) {
        return 0;
    }
    match take_contended(w, s, Deadline::NEVER) {
        0 => 0,
        e => fail(e),
    }
}

/// `sem_trywait`: `EAGAIN` at zero.
#[no_mangle]
pub unsafe extern "C" fn sem_trywait(s: *mut sem_t) -> c_int {
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
pub unsafe extern "C" fn sem_timedwait(s: *mut sem_t, abstime: *const timespec) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(s) };
    if !native(w) {
        // SAFETY: a glibc semaphore; forwarding the caller's arguments.
        return unsafe {
            forward!(
                real::SEM_TIMEDWAIT,
                fn(*mut sem_t, *const timespec) -> c_int
            )(s, abstime)
        };
    }
    if try_take(w) {
        return 0;
    }
    // SAFETY: caller's contract.
    let deadline = match unsafe { time::deadline(libc::CLOCK_REALTIME, abstime) } {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    match take_contended(w, s, deadline) {
        0 => 0,
        e => fail(e),
    }
}

/// `sem_post`: `EOVERFLOW` at `SEM_VALUE_MAX`.
#[no_mangle]
pub unsafe extern "C" fn sem_post(s: *mut sem_t) -> c_int {
    if s.is_null() {
        return fail(EINVAL);
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(s) };
    if !native(w) {
        // SAFETY: a glibc semaphore; forwarding the caller's argument.
        return unsafe { forward!(real::SEM_POST, fn(*mut sem_t) -> c_int)(s) };
    }
    // Relaxed: a first guess for the CAS below, which is what orders.
    let mut v = w[VALUE].load(Ordering::Relaxed);
    loop {
        if v >= SEM_VALUE_MAX {
            return fail(libc::EOVERFLOW);
        }
        // v => v + 1. SeqCst: release to the taker, and the Dekker write
        // before the sleeper check.
        match w[VALUE].compare_exchange_weak(v, v + 1, Ordering::SeqCst, Ordering::Relaxed) {
            Ok(_) => break,
            Err(now) => v = now,
        }
    }
    engine(w).wake_one();
    0
}

/// `sem_getvalue`: the count (never negative here).
#[no_mangle]
pub unsafe extern "C" fn sem_getvalue(s: *mut sem_t, sval: *mut c_int) -> c_int {
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
    unsafe { sval.write(w[VALUE].load(Ordering::Relaxed) as c_int) };
    0
}
