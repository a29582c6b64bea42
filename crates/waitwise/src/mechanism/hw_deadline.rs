//! Deadline arithmetic for the hardware waits, as pure functions so the
//! corner cases (zero, wrap-around, maximum) are unit-tested on any CPU.
//!
//! - UMWAIT and TPAUSE take an **absolute** TSC deadline in EDX:EAX. The OS
//!   caps every wait at `IA32_UMWAIT_CONTROL` ticks (Linux:
//!   `/sys/devices/system/cpu/umwait_control/max_time`, default 100000); on
//!   that early expiry the instruction sets CF and the loop re-arms.
//! - MWAITX takes a **relative** tick count in EBX (32 bits).
//!
//! Ticks are TSC ticks: hardware waits only run when the cycle clock is the
//! TSC (see [`super::hw_wait_status`]).

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
