//! `sem_*`: waitwise's counting semaphore ([`SemaphoreRef`], the algorithm
//! of `waitwise::semaphore::Semaphore`) on the words of the caller's
//! `sem_t`, waiting two-phase until the count is positive. Errors go to
//! `errno` with a -1 return, as POSIX specifies for semaphores.
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
//! # Algorithm
//!
//! [`SemaphoreRef`] (module `waitwise::semaphore`, also behind the C
//! ABI's semaphore, checked by the loom models in
//! `crates/waitwise/tests/loom_semaphore.rs`) runs on `VALUE` and
//! `SLEEPERS`: musl's protocol, with the count and a
//! may-sleep bit in one word, whose `sem_post` never reads the semaphore
//! after the increment that lets a waiter go (glibc bug 12674's pattern:
//! that waiter may destroy and free the semaphore at once). Its memory
//! orderings are stated there. `SEM_VALUE_MAX` is its largest count.
//! What is here is the layout, the forwarding of glibc's semaphores,
//! POSIX's error semantics and how a waiter polls and sleeps
//! ([`CancellableSemaphoreWait`]): PAUSE-polling for the configured
//! `alpha * B`, then a cancellable sleep that a signal may end.
//!
//! `MARK` is Relaxed: `sem_init` writes it before the semaphore is shared
//! (whatever shares it orders the store) and it stays fixed until
//! `sem_destroy`; it guards no other data.
//!
//! # Signals and cancellation
//!
//! `sem_wait`, `sem_timedwait` and `sem_clockwait` are cancellation
//! points: they act on a pending request on entry, and a request that
//! arrives while they sleep ends the thread there. A thread that glibc
//! unwinds out of the sleep (that, or a signal handler's `pthread_exit`)
//! leaves `SLEEPERS` and passes on a wake-up it may have been handed
//! ([`abandon_unwound_sleep`], a glibc cleanup handler). A signal handler
//! that interrupts the sleep and returns ends the wait with `EINTR`, as
//! glibc does (`sem_wait` only without `SA_RESTART`, the timed waits
//! always: the kernel's rule for an untimed and a timed futex wait).
//! Programs rely on it to leave a wait loop on a signal.

use crate::profile::{self, Kind};
use crate::real::{self, forward, set_errno};
use crate::{cleanup, time};
use libc::{sem_t, timespec, EAGAIN, EINVAL};
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use waitwise::platform::cancel;
use waitwise::platform::futex::{Futex, FutexWait, Interrupted, OnSignal};
use waitwise::semaphore::{
    abandon_unwound_sleep, AcquireOutcome, SemaphoreRef, SemaphoreWait, MAY_SLEEP,
};
use waitwise::two_phase_wait::TwoPhaseWait;
use waitwise::{Deadline, Mechanism, SyncKind};

const _: () = assert!(std::mem::size_of::<sem_t>() == 32);

const VALUE: usize = 0;
const SLEEPERS: usize = 1;
const MARK: usize = 2;
/// `MARK` of a native semaphore ("WWse"): neither of glibc's values.
pub const NATIVE_MARK: u32 = 0x5757_7365;
/// `SEM_VALUE_MAX` on glibc: the algorithm's largest count.
const SEM_VALUE_MAX: u32 = SemaphoreRef::MAX_PERMITS;
const _: () = assert!(SEM_VALUE_MAX == i32::MAX as u32);

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

/// The algorithm over a native semaphore's `VALUE` and `SLEEPERS`.
#[inline(always)]
fn sem(w: &Words) -> SemaphoreRef<'_> {
    SemaphoreRef::new(Futex::from_atomic(&w[VALUE]), &w[SLEEPERS])
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

/// Waits for a unit until `deadline`; 0 or an errno value (`ETIMEDOUT`,
/// `EINTR`). A cancellation request ends the thread in the sleep.
#[cold]
fn take_contended(w: &Words, s: *mut sem_t, deadline: Deadline) -> c_int {
    crate::first_wait::prepare();
    let start = profile::start();
    let poll_limit_ns = crate::config::poll_limit_ns(SyncKind::ProducerConsumer);
    let mut wait = CancellableSemaphoreWait {
        poll_limit_ns,
        limit_ns: 0,
        yielding: poll_limit_ns != 0
            && crate::config::choice() != crate::config::PolicyChoice::Spin
            && crate::config::realtime_thread(),
    };
    let out = sem(w).acquire_contended(&mut wait, deadline);
    profile::finish(start, Kind::Sem, s, out.blocked());
    match out {
        AcquireOutcome::Acquired { .. } => 0,
        AcquireOutcome::TimedOut { .. } => libc::ETIMEDOUT,
        AcquireOutcome::Interrupted => libc::EINTR,
    }
}

/// How a contended `sem_*wait` waits: PAUSE-polls for the configured
/// limit with the engine's polling phase (a real-time thread yields
/// between looks instead, [`crate::config::realtime_thread`]), then sleeps as a
/// cancellation point that a signal handler ends (`EINTR`), with a
/// cleanup handler that gives the registration back and passes on a
/// wake-up when glibc unwinds the sleeper. No destructor: a forced unwind may pass through its owner's
/// frame (crate docs, "Unwinding").
struct CancellableSemaphoreWait {
    /// The polling phase's limit in ns.
    poll_limit_ns: u64,
    /// The started polling phase's limit in ns, cut to the deadline.
    limit_ns: u64,
    /// Poll with `sched_yield` between looks rather than PAUSE.
    yielding: bool,
}

impl TwoPhaseWait for CancellableSemaphoreWait {
    /// A phase of the configured limit, cut to `deadline`; none when that
    /// leaves nothing.
    #[inline]
    fn start_polling(&mut self, deadline: Deadline) -> bool {
        self.limit_ns = deadline.cap_ns(self.poll_limit_ns);
        self.limit_ns != 0
    }

    #[inline]
    fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool {
        let mechanism = if self.yielding {
            Mechanism::Yield
        } else {
            Mechanism::Pause
        };
        let end = Deadline::after(Duration::from_nanos(self.limit_ns));
        !waitwise::wait_word::poll_until(futex, mechanism, end, ready).timed_out()
    }
}

impl SemaphoreWait for CancellableSemaphoreWait {
    #[inline(never)]
    fn sleep_counted(
        &mut self,
        sem: SemaphoreRef<'_>,
        timeout: Option<Duration>,
    ) -> Result<FutexWait, Interrupted> {
        // SAFETY: `abandon_unwound_sleep` takes the view it is given,
        // alive in this frame, and never unwinds.
        unsafe {
            cleanup::on_forced_unwind(&sem, abandon_unwound_sleep, || {
                sem.futex()
                    .wait_cancellable(MAY_SLEEP, timeout, OnSignal::Return)
            })
        }
    }
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
    if sem(w).try_acquire() {
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
    if sem(w).try_acquire() {
        0
    } else {
        fail(EAGAIN)
    }
}

/// `sem_timedwait`: `abstime` on `CLOCK_REALTIME`; `ETIMEDOUT`, or
/// `EINVAL` for a bad `abstime`, checked before the semaphore is looked at
/// (as glibc: an available semaphore keeps its count).
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
    unsafe { timed_wait(s, libc::CLOCK_REALTIME, abstime) }
}

/// `sem_clockwait` (glibc 2.30, CPython's timed locks): `abstime` on
/// `clock` (`CLOCK_REALTIME` or `CLOCK_MONOTONIC`; another clock, or a bad
/// `abstime`, is `EINVAL` whatever the count, as [`sem_timedwait`]).
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
    unsafe { timed_wait(s, clock, abstime) }
}

/// The body of `sem_timedwait` and `sem_clockwait`: the arguments are
/// checked first, as glibc does, so a bad one is `EINVAL` with the count
/// kept even when the semaphore is available.
///
/// # Safety
///
/// `s` is a live native semaphore; `abstime` null or readable.
unsafe fn timed_wait(s: *mut sem_t, clock: libc::clockid_t, abstime: *const timespec) -> c_int {
    // SAFETY: caller's contract.
    if let Err(e) = unsafe { time::checked(clock, abstime) } {
        return fail(e);
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
    // After the increment the semaphore is not read again: only its
    // address goes to the kernel (module doc).
    if sem(w).release(1) == 0 {
        return fail(libc::EOVERFLOW);
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
    // At most SEM_VALUE_MAX, so it fits an `int`.
    // SAFETY: `sval` is writable (caller's contract).
    unsafe { sval.write(sem(w).available() as c_int) };
    0
}
