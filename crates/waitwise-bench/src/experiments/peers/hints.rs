//! Busy work counted in spin-loop hints (`std::hint::spin_loop`, PAUSE on
//! x86): the critical sections and gaps of `waitwise peers`, set in ns and
//! converted with one rate measured at the start of the run.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Hints timed per calibration pass. Guessed: a few ms at 10-150 ns a
/// hint, long enough that the clock's resolution does not matter.
pub const CALIBRATION_HINTS: u32 = 100_000;

/// Calibration passes; the fastest is kept (a pass the scheduler
/// interrupted runs slow, never fast).
pub const CALIBRATION_PASSES: usize = 3;

/// The cost of one spin-loop hint on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HintRate {
    /// Wall time of one hint, ns.
    pub ns_per_hint: f64,
}

impl HintRate {
    /// Times [`CALIBRATION_PASSES`] passes of [`CALIBRATION_HINTS`] hints
    /// and keeps the fastest.
    pub fn calibrate() -> Self {
        let best = (0..CALIBRATION_PASSES)
            .map(|_| {
                let t = Instant::now();
                spin(CALIBRATION_HINTS);
                t.elapsed().as_nanos() as f64
            })
            .fold(f64::INFINITY, f64::min);
        Self {
            ns_per_hint: (best / f64::from(CALIBRATION_HINTS)).max(0.1),
        }
    }

    /// Hints that take about `ns` (0 for 0; at least 1 otherwise).
    pub fn hints_for(&self, ns: u64) -> u32 {
        if ns == 0 {
            return 0;
        }
        let n = (ns as f64 / self.ns_per_hint).round();
        n.clamp(1.0, f64::from(u32::MAX)) as u32
    }
}

/// Runs `hints` spin-loop hints.
#[inline]
pub fn spin(hints: u32) {
    for _ in 0..hints {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_scale_with_the_rate() {
        let rate = HintRate { ns_per_hint: 40.0 };
        assert_eq!(rate.hints_for(0), 0);
        assert_eq!(rate.hints_for(10), 1);
        assert_eq!(rate.hints_for(1_000), 25);
        assert_eq!(rate.hints_for(10_000), 250);
        let measured = HintRate::calibrate();
        assert!(measured.ns_per_hint.is_finite() && measured.ns_per_hint > 0.0);
    }
}
