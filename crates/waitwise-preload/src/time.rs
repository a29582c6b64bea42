//! Absolute `timespec` deadlines of the timed waits, turned into waitwise
//! [`Deadline`]s on the cycle clock.
//!
//! The time left is computed once, on entry, against the clock the caller
//! named (`CLOCK_REALTIME` unless `pthread_condattr_setclock` or a
//! `*clock*` entry point says otherwise); from then on the wait runs on the
//! monotonic cycle clock. So a wall-clock jump during the wait does not move
//! its end (glibc's `CLOCK_REALTIME` waits would follow it).

use std::ffi::c_int;
use std::time::Duration;
use waitwise::Deadline;

/// Whether `clock` may time a wait (POSIX: `CLOCK_REALTIME` and
/// `CLOCK_MONOTONIC`; anything else is `EINVAL`).
#[inline]
pub fn supported_clock(clock: libc::clockid_t) -> bool {
    clock == libc::CLOCK_REALTIME || clock == libc::CLOCK_MONOTONIC
}

/// `*abstime` if it and `clock` may time a wait: `EINVAL` for a null
/// pointer, an unsupported clock or a `tv_nsec` outside `[0, 1e9)`.
///
/// # Safety
///
/// `abstime` is null or points to a readable `timespec`.
pub unsafe fn checked(
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> Result<libc::timespec, c_int> {
    if abstime.is_null() || !supported_clock(clock) {
        return Err(libc::EINVAL);
    }
    // SAFETY: non-null, and readable by the caller's contract.
    let ts = unsafe { abstime.read() };
    if !(0..1_000_000_000).contains(&ts.tv_nsec) {
        return Err(libc::EINVAL);
    }
    Ok(ts)
}

/// The deadline for the absolute time `*abstime` on `clock`.
///
/// Errors: as [`checked`]. A time already past (including a negative
/// `tv_sec`) gives a deadline that has passed: the wait times out unless
/// its condition already holds.
///
/// # Safety
///
/// `abstime` is null or points to a readable `timespec`.
pub unsafe fn deadline(
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> Result<Deadline, c_int> {
    // SAFETY: caller's contract.
    let ts = unsafe { checked(clock, abstime) }?;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is writable; the clock is one of the two supported.
    unsafe { libc::clock_gettime(clock, &mut now) };
    let left_ns = (ts.tv_sec as i128 - now.tv_sec as i128) * 1_000_000_000
        + (ts.tv_nsec as i128 - now.tv_nsec as i128);
    if left_ns <= 0 {
        return Ok(Deadline::after(Duration::ZERO));
    }
    let left = Duration::from_nanos(u64::try_from(left_ns).unwrap_or(u64::MAX));
    // A deadline centuries away is no deadline (Deadline::after saturates).
    Ok(Deadline::after(left))
}

/// [`deadline`] for a mutex lock that must wait: a negative `tv_sec` is a
/// time past whatever its `tv_nsec`, so the lock times out (glibc's mutex
/// lock returns `ETIMEDOUT` for it before the kernel would check
/// `tv_nsec`; its other waits check `tv_nsec` first).
///
/// # Safety
///
/// As [`deadline`].
pub unsafe fn mutex_deadline(
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> Result<Deadline, c_int> {
    // SAFETY: non-null, and readable by the caller's contract.
    if supported_clock(clock) && !abstime.is_null() && unsafe { abstime.read() }.tv_sec < 0 {
        return Ok(Deadline::after(Duration::ZERO));
    }
    // SAFETY: caller's contract.
    unsafe { deadline(clock, abstime) }
}
