//! Deadline arithmetic for the hardware waits, as pure functions so the
//! corner cases (zero, wrap-around, maximum) are unit-tested on any CPU.
//!
//! - UMWAIT and TPAUSE take an **absolute** TSC deadline in EDX:EAX. The OS
//!   caps every wait at `IA32_UMWAIT_CONTROL` ticks (Linux:
//!   `/sys/devices/system/cpu/umwait_control/max_time`, default 100000); on
//!   that early expiry the instruction sets CF and the loop re-arms.
//! - MWAITX takes a **relative** tick count in EBX (32 bits).
//!
//! The cycle clock counts nanoseconds; [`in_tsc`] turns its deadlines into
//! TSC values. Hardware waits run only on CPUs with an invariant TSC (see
//! [`super::hw_wait_status`]); until the clock knows the TSC's rate, each
//! wait runs to the OS cap (or its slice) and the loop checks the deadline
//! on the cycle clock.

use super::MechanismWait;
use waitwise_platform::clock::{cycle_clock, Deadline};

/// TSC rate assumed for a TPAUSE slice while the real one is not known
/// yet. Guessed: a typical server TSC (2-3.5 GHz); a slice off by 2x only
/// changes how often the waiter polls.
pub const ASSUMED_TSC_HZ: u64 = 3_000_000_000;

/// `deadline` as an absolute TSC value for one hardware wait: `Ok(None)`
/// for no limit (also while the TSC's rate is unknown: the loop re-checks),
/// `Err(TimedOut)` once the deadline has passed on the cycle clock.
#[inline]
pub fn in_tsc(deadline: Deadline) -> Result<Option<u64>, MechanismWait> {
    match deadline.ticks() {
        None => Ok(None),
        Some(_) if deadline.has_passed() => Err(MechanismWait::TimedOut),
        Some(ns) => Ok(cycle_clock().tsc_at(ns)),
    }
}

/// `ns` nanoseconds in TSC ticks at `hz` (or [`ASSUMED_TSC_HZ`]).
#[inline]
pub fn ns_in_tsc_ticks(ns: u64, hz: Option<u64>) -> u64 {
    let ticks = u128::from(ns) * u128::from(hz.unwrap_or(ASSUMED_TSC_HZ)) / 1_000_000_000;
    u64::try_from(ticks).unwrap_or(u64::MAX)
}

/// The absolute deadline for one UMWAIT/TPAUSE: the caller's deadline, or,
/// for a wait without one, the largest representable TSC value (the OS cap
/// ends each wait long before; the loop re-arms). `None` when the caller's
/// deadline has already passed at `now`.
#[inline]
pub fn waitpkg_deadline(now: u64, deadline: Option<u64>) -> Option<u64> {
    match deadline {
        None => Some(u64::MAX),
        Some(d) if d <= now => None,
        Some(d) => Some(d),
    }
}

/// The absolute deadline of one TPAUSE slice of `slice` ticks from `now`,
/// not past the caller's deadline; saturates instead of wrapping (a wrapped
/// deadline would lie in the past and end the pause at once). `None` when the
/// caller's deadline has already passed.
#[inline]
pub fn slice_deadline(now: u64, slice: u64, deadline: Option<u64>) -> Option<u64> {
    let end = now.saturating_add(slice);
    match deadline {
        None => Some(end),
        Some(d) if d <= now => None,
        Some(d) => Some(end.min(d)),
    }
}

/// The relative timer for one MWAITX: ticks left until `deadline`, clamped
/// to `1..=u32::MAX` (EBX is 32 bits; a longer wait re-arms). `None` when the
/// deadline has passed; `u32::MAX` when there is none.
#[inline]
pub fn mwaitx_timer(now: u64, deadline: Option<u64>) -> Option<u32> {
    match deadline {
        None => Some(u32::MAX),
        Some(d) if d <= now => None,
        Some(d) => Some(u32::try_from(d - now).unwrap_or(u32::MAX).max(1)),
    }
}

/// Parses Linux's `umwait_control/max_time` (TSC ticks, decimal). 0 means
/// no OS limit.
pub fn parse_umwait_max_time(s: &str) -> Option<u64> {
    s.trim().parse().ok()
}

/// The OS limit on one UMWAIT/TPAUSE in TSC ticks, as Linux reports it
/// (`None` when the file is absent: no WAITPKG, or an older kernel).
pub fn os_umwait_max_time() -> Option<u64> {
    std::fs::read_to_string("/sys/devices/system/cpu/umwait_control/max_time")
        .ok()
        .and_then(|s| parse_umwait_max_time(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waitpkg_deadline_cases() {
        assert_eq!(waitpkg_deadline(100, None), Some(u64::MAX));
        assert_eq!(waitpkg_deadline(100, Some(100)), None);
        assert_eq!(waitpkg_deadline(100, Some(99)), None);
        assert_eq!(waitpkg_deadline(100, Some(101)), Some(101));
        assert_eq!(waitpkg_deadline(0, Some(0)), None);
        assert_eq!(
            waitpkg_deadline(u64::MAX - 1, Some(u64::MAX)),
            Some(u64::MAX)
        );
    }

    #[test]
    fn slice_deadline_saturates_and_respects_deadline() {
        assert_eq!(slice_deadline(100, 50, None), Some(150));
        assert_eq!(slice_deadline(100, 50, Some(120)), Some(120));
        assert_eq!(slice_deadline(100, 50, Some(100)), None);
        assert_eq!(slice_deadline(u64::MAX - 10, 50, None), Some(u64::MAX));
        assert_eq!(slice_deadline(100, 0, None), Some(100));
    }

    #[test]
    fn mwaitx_timer_is_relative_and_clamped() {
        assert_eq!(mwaitx_timer(1000, Some(1500)), Some(500));
        assert_eq!(mwaitx_timer(1000, Some(1000)), None);
        assert_eq!(mwaitx_timer(1000, Some(1001)), Some(1));
        assert_eq!(mwaitx_timer(0, Some(u64::MAX)), Some(u32::MAX));
        assert_eq!(mwaitx_timer(5, None), Some(u32::MAX));
        assert_eq!(mwaitx_timer(u64::MAX, Some(u64::MAX)), None);
    }

    #[test]
    fn umwait_max_time_parses() {
        assert_eq!(parse_umwait_max_time("100000\n"), Some(100_000));
        assert_eq!(parse_umwait_max_time("0"), Some(0));
        assert_eq!(parse_umwait_max_time("x"), None);
    }
}
