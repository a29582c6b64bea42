//! The cycle clock: the time-stamp counter when the CPU advertises an
//! invariant TSC, else `CLOCK_MONOTONIC` nanoseconds; its frequency, its own
//! read overhead, and conversion to nanoseconds.
//!
//! Start stamps use `LFENCE; RDTSC` and end stamps `RDTSCP; LFENCE` so the
//! measured region cannot leak out of the stamps. The read overhead is
//! measured as seed 004 (Poenaru 2017, section 4.1) does: read the clock 1001
//! times back to back and take the median of the 1000 differences.
//!
//! The clock is detected once per process ([`cycle_clock`]); calibrating the
//! TSC frequency against `CLOCK_MONOTONIC` takes [`CALIBRATION_WINDOW`].

use crate::arch;
use crate::features;
use crate::once::ForkSafeOnce;
use serde::Serialize;
use std::time::{Duration, Instant};

/// How long the TSC frequency is calibrated against `CLOCK_MONOTONIC` when
/// CPUID does not state it. Chosen: 10 ms gives ~1e-4 relative error with a
/// ~1 µs clock read jitter, and keeps first use cheap.
pub const CALIBRATION_WINDOW: Duration = Duration::from_millis(10);

/// Number of back-to-back reads used to measure the read overhead (seed 004).
pub const OVERHEAD_READS: usize = 1001;

/// What the cycle clock counts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ClockSource {
    /// Time-stamp counter ticks at `hz` per second.
    Tsc {
        /// Ticks per second.
        hz: u64,
        /// Whether `hz` came from CPUID (else calibrated).
        from_cpuid: bool,
    },
    /// Nanoseconds of `CLOCK_MONOTONIC` (no invariant TSC).
    Monotonic,
}

/// A fast monotonic tick counter with a known rate.
#[derive(Debug)]
pub struct CycleClock {
    source: ClockSource,
    /// Ticks per nanosecond.
    ticks_per_ns: f64,
    read_overhead_ticks: u64,
    epoch: Instant,
}

/// The process's cycle clock, detected and calibrated on first use.
#[inline]
pub fn cycle_clock() -> &'static CycleClock {
    static CLOCK: ForkSafeOnce<CycleClock> = ForkSafeOnce::new();
    CLOCK.get_or_init(CycleClock::detect)
}

impl CycleClock {
    #[cold]
    fn detect() -> Self {
        let f = features::cpu();
        let source = if f.invariant_tsc && arch::HAS_HW_WAIT_INSTRUCTIONS {
            match f.tsc_hz {
                Some(hz) => ClockSource::Tsc {
                    hz,
                    from_cpuid: true,
                },
                None => ClockSource::Tsc {
                    hz: calibrate_tsc_hz(CALIBRATION_WINDOW),
                    from_cpuid: false,
                },
            }
        } else {
            ClockSource::Monotonic
        };
        Self::with_source(source)
    }

    /// A clock over an explicit source (tests and tools that want
    /// `Monotonic` on purpose).
    pub fn with_source(source: ClockSource) -> Self {
        let ticks_per_ns = match source {
            ClockSource::Tsc { hz, .. } => hz as f64 / 1e9,
            ClockSource::Monotonic => 1.0,
        };
        let mut clock = Self {
            source,
            ticks_per_ns,
            read_overhead_ticks: 0,
            epoch: Instant::now(),
        };
        clock.read_overhead_ticks = clock.measure_read_overhead();
        clock
    }

    /// What this clock counts.
    pub fn source(&self) -> ClockSource {
        self.source
    }

    /// Ticks per second.
    pub fn hz(&self) -> u64 {
        (self.ticks_per_ns * 1e9).round() as u64
    }

    /// A start stamp (fenced so earlier work cannot leak past it).
    #[inline(always)]
    pub fn start(&self) -> u64 {
        match self.source {
            ClockSource::Tsc { .. } => arch::read_tsc_start(),
            ClockSource::Monotonic => self.monotonic_ns(),
        }
    }

    /// An end stamp (fenced so measured work cannot leak past it).
    #[inline(always)]
    pub fn end(&self) -> u64 {
        match self.source {
            ClockSource::Tsc { .. } => arch::read_tsc_end(),
            ClockSource::Monotonic => self.monotonic_ns(),
        }
    }

    /// The cheapest read (no fences), for deadline checks in poll loops.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self.source {
            ClockSource::Tsc { .. } => arch::read_tsc(),
            ClockSource::Monotonic => self.monotonic_ns(),
        }
    }

    #[inline]
    fn monotonic_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// The median cost of one clock read, in ticks (seed 004's method).
    pub fn read_overhead_ticks(&self) -> u64 {
        self.read_overhead_ticks
    }

    /// The median cost of one clock read, in nanoseconds.
    pub fn read_overhead_ns(&self) -> f64 {
        self.ticks_to_ns(self.read_overhead_ticks)
    }

    /// `ticks` in nanoseconds.
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 / self.ticks_per_ns
    }

    /// `ticks` as a `Duration`.
    #[inline]
    pub fn ticks_to_duration(&self, ticks: u64) -> Duration {
        Duration::from_nanos(self.ticks_to_ns(ticks) as u64)
    }

    /// `ns` nanoseconds in ticks, saturating at `u64::MAX`.
    #[inline]
    pub fn ns_to_ticks(&self, ns: u64) -> u64 {
        let t = ns as f64 * self.ticks_per_ns;
        if t >= u64::MAX as f64 {
            u64::MAX
        } else {
            t as u64
        }
    }

    /// `d` in ticks, saturating at `u64::MAX`.
    #[inline]
    pub fn duration_to_ticks(&self, d: Duration) -> u64 {
        self.ns_to_ticks(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The tick count `d` from now, or `None` when that does not fit in 64
    /// bits (a deadline centuries away is no deadline).
    #[inline]
    pub fn deadline_after(&self, d: Duration) -> Option<u64> {
        let ticks = self.duration_to_ticks(d);
        if ticks == u64::MAX {
            return None;
        }
        self.now().checked_add(ticks)
    }

    fn measure_read_overhead(&self) -> u64 {
        let mut stamps = [0u64; OVERHEAD_READS];
        for s in stamps.iter_mut() {
            *s = self.start();
        }
        let mut diffs: Vec<u64> = stamps
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .collect();
        diffs.sort_unstable();
        diffs[diffs.len() / 2]
    }
}

/// A point in time on the [`cycle_clock`], or never.
///
/// Waits take a `Deadline` rather than a `Duration` so that a wait made of
/// several steps (poll, then block, then re-check) keeps one end time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    ticks: Option<u64>,
}

impl Deadline {
    /// No deadline: wait until the condition holds.
    pub const NEVER: Deadline = Deadline { ticks: None };

    /// `timeout` from now on the cycle clock. A timeout too large to
    /// represent (`Duration::MAX`) is [`Deadline::NEVER`]: it cannot overflow.
    #[inline]
    pub fn after(timeout: Duration) -> Self {
        Self {
            ticks: cycle_clock().deadline_after(timeout),
        }
    }

    /// `timeout` from now, or never for `None`.
    #[inline]
    pub fn after_opt(timeout: Option<Duration>) -> Self {
        timeout.map_or(Self::NEVER, Self::after)
    }

    /// A deadline at an absolute tick count of the cycle clock.
    #[inline]
    pub const fn at_ticks(ticks: u64) -> Self {
        Self { ticks: Some(ticks) }
    }

    /// The absolute tick count, or `None` for never.
    #[inline]
    pub const fn ticks(self) -> Option<u64> {
        self.ticks
    }

    /// Whether this is [`Deadline::NEVER`].
    #[inline]
    pub const fn is_never(self) -> bool {
        self.ticks.is_none()
    }

    /// Whether the deadline lies at or before tick `now`.
    #[inline]
    pub fn passed_at(self, now: u64) -> bool {
        matches!(self.ticks, Some(t) if now >= t)
    }

    /// Whether the deadline has passed.
    #[inline]
    pub fn has_passed(self) -> bool {
        match self.ticks {
            None => false,
            Some(t) => cycle_clock().now() >= t,
        }
    }

    /// Time left: `None` for never, `Some(ZERO)` once passed.
    #[inline]
    pub fn remaining(self) -> Option<Duration> {
        self.ticks.map(|t| {
            let clock = cycle_clock();
            clock.ticks_to_duration(t.saturating_sub(clock.now()))
        })
    }

    /// `ns`, cut to the time left (0 once passed): how long a step of a
    /// wait, such as its polling phase, may last within this deadline.
    #[inline]
    pub fn cap_ns(self, ns: u64) -> u64 {
        self.remaining().map_or(ns, |left| {
            ns.min(u64::try_from(left.as_nanos()).unwrap_or(u64::MAX))
        })
    }

    /// The earlier of two deadlines.
    #[inline]
    pub fn min(self, other: Deadline) -> Deadline {
        match (self.ticks, other.ticks) {
            (None, _) => other,
            (_, None) => self,
            (Some(a), Some(b)) => Deadline {
                ticks: Some(a.min(b)),
            },
        }
    }
}

/// Measures the TSC frequency against `CLOCK_MONOTONIC` over `window`.
pub fn calibrate_tsc_hz(window: Duration) -> u64 {
    let t0 = Instant::now();
    let c0 = arch::read_tsc_start();
    while t0.elapsed() < window {
        std::hint::spin_loop();
    }
    let c1 = arch::read_tsc_end();
    let elapsed = t0.elapsed();
    let hz = (c1.wrapping_sub(c0)) as f64 / elapsed.as_secs_f64();
    hz.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_ns_is_the_time_left_at_most() {
        assert_eq!(Deadline::NEVER.cap_ns(5_000), 5_000);
        assert_eq!(
            Deadline::after(Duration::from_secs(3600)).cap_ns(5_000),
            5_000
        );
        assert!(Deadline::after(Duration::from_micros(2)).cap_ns(1_000_000) <= 2_000);
        assert_eq!(Deadline::after(Duration::ZERO).cap_ns(5_000), 0);
    }

    #[test]
    fn clock_advances_and_converts() {
        let c = cycle_clock();
        let a = c.start();
        std::thread::sleep(Duration::from_millis(5));
        let b = c.end();
        let ns = c.ticks_to_ns(b - a);
        assert!(ns >= 4.0e6, "5 ms sleep measured as {ns} ns");
        assert!(c.hz() > 0);
    }

    #[test]
    fn conversions_saturate() {
        let c = CycleClock::with_source(ClockSource::Tsc {
            hz: 3_000_000_000,
            from_cpuid: true,
        });
        assert_eq!(c.ns_to_ticks(1_000), 3_000);
        assert_eq!(c.ns_to_ticks(u64::MAX), u64::MAX);
        assert_eq!(c.duration_to_ticks(Duration::MAX), u64::MAX);
        assert_eq!(c.deadline_after(Duration::MAX), None);
        assert!(c.deadline_after(Duration::ZERO).is_some());
        assert!((c.ticks_to_ns(3_000) - 1_000.0).abs() < 1e-9);
    }

    #[test]
    fn monotonic_source_counts_nanoseconds() {
        let c = CycleClock::with_source(ClockSource::Monotonic);
        assert_eq!(c.hz(), 1_000_000_000);
        let a = c.now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(c.now() - a >= 2_000_000);
    }

    #[test]
    fn deadlines() {
        assert!(Deadline::after(Duration::MAX).is_never());
        assert!(!Deadline::NEVER.has_passed());
        assert_eq!(Deadline::NEVER.remaining(), None);
        let zero = Deadline::after(Duration::ZERO);
        assert!(zero.has_passed());
        assert_eq!(zero.remaining(), Some(Duration::ZERO));
        let later = Deadline::after(Duration::from_secs(10));
        assert!(!later.has_passed());
        assert_eq!(later.min(zero), zero);
        assert_eq!(Deadline::NEVER.min(zero), zero);
        assert!(Deadline::at_ticks(5).passed_at(5));
        assert!(!Deadline::at_ticks(5).passed_at(4));
    }

    #[test]
    fn read_overhead_is_small() {
        // Not a timing assertion: a read costing over 1 ms means the
        // measurement itself is broken.
        assert!(cycle_clock().read_overhead_ns() < 1e6);
    }
}
