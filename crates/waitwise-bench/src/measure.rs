//! Turning raw clock stamps into reported figures: subtract the clock's own
//! read overhead, convert ticks to ns, trim and summarize (hyperfine's
//! `time_overhead()` idea; seed 004's 1001-read overhead measurement lives
//! in the platform clock).

use crate::stats::{summarize_trimmed, Summary};
use serde::Serialize;
use std::time::{Duration, Instant};
use waitwise_platform::clock::{cycle_clock, ClockSource};
use waitwise_platform::thread::thread_cpu_time;

/// A figure in both units the report uses.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Timing {
    /// In nanoseconds.
    pub ns: Summary,
    /// In TSC cycles: `ns` at the TSC's rate. The cycle clock counts
    /// nanoseconds (it scales the TSC when it reads it), so cycles are
    /// converted back with the rate; on the monotonic fallback, where no
    /// TSC rate is known, equal to `ns` ([`clock_name`] says which).
    pub cycles: Summary,
}

/// Summarizes intervals measured in clock ticks, each made of
/// `stamps_per_sample` clock reads whose overhead is subtracted once per
/// interval (an interval between two reads contains one read's cost).
pub fn timing_from_ticks(ticks: &[u64]) -> Option<Timing> {
    let clock = cycle_clock();
    let overhead = clock.read_overhead_ticks();
    let intervals: Vec<f64> = ticks
        .iter()
        .map(|&t| t.saturating_sub(overhead) as f64)
        .collect();
    let ns = summarize_trimmed(&intervals)?.scaled(1e9 / clock.hz() as f64);
    Some(timing_from_ns(ns, clock.tsc_hz()))
}

/// A timing from its nanosecond summary: cycles at `tsc_hz`, or the same
/// figures when no TSC rate is known.
pub fn timing_from_ns(ns: Summary, tsc_hz: Option<u64>) -> Timing {
    let cycles_per_ns = tsc_hz.map_or(1.0, |hz| hz as f64 / 1e9);
    Timing {
        ns,
        cycles: ns.scaled(cycles_per_ns),
    }
}

/// Summarizes plain nanosecond samples (wall or CPU times measured with the
/// OS clocks, whose overhead is negligible at their scale).
pub fn summary_ns(samples: &[f64]) -> Option<Summary> {
    summarize_trimmed(samples)
}

/// The calling thread's share of a CPU over an interval: its CPU time over
/// the wall time (a waiter's CPU use while it waits).
#[derive(Clone, Copy, Debug)]
pub struct CpuShare {
    wall: Instant,
    cpu: Duration,
}

impl CpuShare {
    /// Starts the interval now.
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }

    /// CPU time over wall time since [`CpuShare::start`], at most 1.0 (a
    /// whole CPU); 0.0 when no wall time passed. CPU time is read first,
    /// then wall time: the wall interval encloses the CPU interval, so the
    /// fraction cannot exceed 1 by measurement order (only by clock
    /// granularity).
    pub fn fraction(&self) -> f64 {
        let cpu = (thread_cpu_time() - self.cpu).as_nanos() as f64;
        let wall = self.wall.elapsed().as_nanos() as f64;
        if wall > 0.0 {
            (cpu / wall).min(1.0)
        } else {
            0.0
        }
    }
}

/// `"tsc"` or `"monotonic"`: what the cycles columns count.
pub fn clock_name() -> &'static str {
    match cycle_clock().source() {
        ClockSource::Tsc { .. } => "tsc",
        ClockSource::Monotonic => "monotonic",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_ns_at_the_tsc_rate() {
        let ns = summarize_trimmed(&[100.0, 200.0, 300.0]).unwrap();
        let t = timing_from_ns(ns, Some(2_596_000_000));
        assert!((t.cycles.median - 2.596 * t.ns.median).abs() < 1e-9);
        assert!((t.cycles.mean - 2.596 * t.ns.mean).abs() < 1e-9);
        let no_tsc = timing_from_ns(ns, None);
        assert_eq!(no_tsc.cycles.median, no_tsc.ns.median);
    }

    #[test]
    fn measured_cycles_follow_this_machines_tsc_rate() {
        let t = timing_from_ticks(&[1_000, 2_000, 3_000]).unwrap();
        match cycle_clock().tsc_hz() {
            Some(hz) => {
                let rate = t.cycles.median / t.ns.median;
                assert!((rate - hz as f64 / 1e9).abs() < 1e-6, "{rate} vs {hz} Hz");
            }
            None => assert_eq!(t.cycles.median, t.ns.median),
        }
    }

    #[test]
    fn cpu_share_is_a_fraction() {
        let share = CpuShare::start();
        let end = Instant::now() + Duration::from_millis(2);
        while Instant::now() < end {
            std::hint::spin_loop();
        }
        let busy = share.fraction();
        assert!((0.0..=1.0).contains(&busy), "{busy}");
        let share = CpuShare::start();
        std::thread::sleep(Duration::from_millis(20));
        assert!(share.fraction() < 0.5);
    }
}
