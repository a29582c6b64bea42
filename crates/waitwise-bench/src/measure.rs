//! Turning raw clock stamps into reported figures: subtract the clock's own
//! read overhead, convert ticks to ns, trim and summarize (hyperfine's
//! `time_overhead()` idea; seed 004's 1001-read overhead measurement lives
//! in the platform clock).

use crate::stats::{summarize_trimmed, Summary};
use serde::Serialize;
use waitwise_platform::clock::{cycle_clock, ClockSource};

/// A figure in both units the report uses.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Timing {
    /// In nanoseconds.
    pub ns: Summary,
    /// In clock ticks (TSC cycles when the clock is the TSC; equal to `ns`
    /// on the monotonic fallback).
    pub cycles: Summary,
}

/// Summarizes intervals measured in clock ticks, each made of
/// `stamps_per_sample` clock reads whose overhead is subtracted once per
/// interval (an interval between two reads contains one read's cost).
pub fn timing_from_ticks(ticks: &[u64]) -> Option<Timing> {
    let clock = cycle_clock();
    let overhead = clock.read_overhead_ticks();
    let cycles: Vec<f64> = ticks
        .iter()
        .map(|&t| t.saturating_sub(overhead) as f64)
        .collect();
    let c = summarize_trimmed(&cycles)?;
    Some(Timing {
        ns: c.scaled(1.0 / (clock.hz() as f64 / 1e9)),
        cycles: c,
    })
}

/// Summarizes plain nanosecond samples (wall or CPU times measured with the
/// OS clocks, whose overhead is negligible at their scale).
pub fn summary_ns(samples: &[f64]) -> Option<Summary> {
    summarize_trimmed(samples)
}

/// `"tsc"` or `"monotonic"`: what the cycles columns count.
pub fn clock_name() -> &'static str {
    match cycle_clock().source() {
        ClockSource::Tsc { .. } => "tsc",
        ClockSource::Monotonic => "monotonic",
    }
}
