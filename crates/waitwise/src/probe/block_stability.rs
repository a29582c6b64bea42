//! Whether a measured `B` can be trusted: repeated round-trip measurements,
//! each checked to be a hand-off between two running threads, until
//! consecutive ones agree.
//!
//! One measurement of `B` (two threads pinned to two CPUs, polling and
//! futex round trips, [`round_trips`]) can be wrong two ways:
//!
//! - **The threads did not run at once.** When another thread holds one of
//!   the two CPUs, the polling partner waits for a time slice and the
//!   polling round trip takes microseconds to milliseconds instead of
//!   ~100 ns: the measurement times the scheduler, not a wake-up.
//!   [`CONCURRENT_SPIN_ROUND_TRIP_MAX_NS`] tells the two apart.
//! - **The wake-up cost switched mode.** A virtual machine's wake-up cost
//!   switches between modes that last milliseconds, so measurements
//!   seconds apart differ several-fold.
//!
//! [`measure`] repeats the measurement until [`STABLE_RUN`] consecutive
//! clean ones agree within [`STABLE_SPREAD`], at most [`MAX_MEASUREMENTS`]
//! times, and [`BlockStability`] says which happened, with the spread, and
//! whether other threads wanted every CPU while it ran (then it is not
//! stable either: it measured a busy machine).
//! `waitwise probe --save` keeps only a stable `B`.

use crate::policy::block_cost::{cost_from_round_trips, round_trips, CALIBRATION_BUDGET};
use waitwise_platform::runnable;

/// Measurements at most. Guessed: with [`CALIBRATION_BUDGET`] each, under
/// half a second in all.
pub const MAX_MEASUREMENTS: usize = 7;
/// Consecutive clean measurements that must agree.
pub const STABLE_RUN: usize = 3;
/// Their largest `B` over their smallest, at most, for "stable". Guessed:
/// wider than the run-to-run noise of one wake-up mode, narrower than the
/// several-fold gap between modes.
pub const STABLE_SPREAD: f64 = 1.5;
/// A polling round trip above this did not hand off between two running
/// threads: polling hand-offs between running threads take well under a
/// microsecond on any CPU waitwise runs on, and a time slice is
/// milliseconds. Derived from those two orders of magnitude.
pub const CONCURRENT_SPIN_ROUND_TRIP_MAX_NS: f64 = 5_000.0;

/// One measurement of `B`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Measurement {
    /// `B` from this measurement's round trips, ns.
    pub block_ns: f64,
    /// Its fastest polling round trip, ns.
    pub spin_round_trip_ns: f64,
    /// Its median futex round trip, ns.
    pub futex_round_trip_ns: f64,
    /// Whether both threads ran at once (polling round trip at most
    /// [`CONCURRENT_SPIN_ROUND_TRIP_MAX_NS`]).
    pub concurrent: bool,
}

impl Measurement {
    /// The measurement from one pair of round trips.
    pub fn of(spin_round_trip_ns: f64, futex_round_trip_ns: f64) -> Measurement {
        let block_ns = cost_from_round_trips(round_trips::RoundTrips {
            spin_ns: spin_round_trip_ns,
            futex_ns: futex_round_trip_ns,
            cpus: None,
        })
        .ns;
        Measurement {
            block_ns,
            spin_round_trip_ns,
            futex_round_trip_ns,
            concurrent: spin_round_trip_ns <= CONCURRENT_SPIN_ROUND_TRIP_MAX_NS,
        }
    }
}

/// Why a measured `B` is not stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Instability {
    /// No measurement had both threads running at once.
    NeverConcurrent,
    /// Clean measurements, but no [`STABLE_RUN`] consecutive ones agreed
    /// within [`STABLE_SPREAD`].
    Spread,
    /// The clean measurements agreed, but measurements where the threads
    /// did not run at once kept breaking their runs.
    Interrupted,
    /// Other threads wanted every CPU while the probe ran: whatever it
    /// measured, it measured a busy machine.
    Busy,
    /// The round trips could not run (no second thread).
    NotMeasured,
}

impl std::fmt::Display for Instability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Instability::NeverConcurrent => {
                "the two threads never ran at once (another program held a CPU)"
            }
            Instability::Spread => "consecutive measurements disagreed",
            Instability::Interrupted => {
                "other threads took a CPU during some measurements (the two threads did not run at once)"
            }
            Instability::Busy => "other threads wanted every CPU while the probe ran",
            Instability::NotMeasured => "a second thread could not be started",
        })
    }
}

/// The outcome of [`measure`].
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BlockStability {
    /// Every measurement, in order.
    pub measurements: Vec<Measurement>,
    /// `B`: the median of the agreeing run when stable, else of the clean
    /// measurements, else of all; `None` without measurements.
    pub block_ns: Option<f64>,
    /// Why `B` is not stable; `None` when it is.
    pub instability: Option<Instability>,
    /// Largest over smallest `B` of the measurements `block_ns` is the
    /// median of (1 for one).
    pub spread: f64,
    /// Runnable threads machine-wide other than the prober, the median of
    /// a sample before each measurement, where `/proc` says.
    pub other_runnable_threads: Option<u32>,
    /// CPUs online.
    pub cpus: u32,
}

impl BlockStability {
    /// Whether `B` is stable.
    pub fn is_stable(&self) -> bool {
        self.instability.is_none()
    }

    /// Whether other threads wanted every CPU while the probe ran.
    pub fn machine_busy(&self) -> bool {
        busy(self.other_runnable_threads, self.cpus)
    }

    /// The verdict over `measurements` (taken with `other_runnable_threads`
    /// other runnable threads on `cpus` CPUs).
    pub fn judge(
        measurements: Vec<Measurement>,
        other_runnable_threads: Option<u32>,
        cpus: u32,
    ) -> BlockStability {
        let (used, instability): (Vec<f64>, Option<Instability>) = match stable_run(&measurements) {
            Some(run) => (run, None),
            None => {
                let clean: Vec<f64> = measurements
                    .iter()
                    .filter(|m| m.concurrent)
                    .map(|m| m.block_ns)
                    .collect();
                if measurements.is_empty() {
                    (Vec::new(), Some(Instability::NotMeasured))
                } else if clean.is_empty() {
                    let all = measurements.iter().map(|m| m.block_ns).collect();
                    (all, Some(Instability::NeverConcurrent))
                } else if spread(&clean) <= STABLE_SPREAD {
                    (clean, Some(Instability::Interrupted))
                } else {
                    (clean, Some(Instability::Spread))
                }
            }
        };
        let instability = match instability {
            None if busy(other_runnable_threads, cpus) => Some(Instability::Busy),
            other => other,
        };
        BlockStability {
            block_ns: median(&used),
            spread: spread(&used),
            instability,
            measurements,
            other_runnable_threads,
            cpus,
        }
    }
}

/// The `B`s of the last [`STABLE_RUN`] measurements if all are clean and
/// agree within [`STABLE_SPREAD`].
fn stable_run(measurements: &[Measurement]) -> Option<Vec<f64>> {
    let tail = measurements.get(measurements.len().checked_sub(STABLE_RUN)?..)?;
    let run: Vec<f64> = tail.iter().map(|m| m.block_ns).collect();
    (tail.iter().all(|m| m.concurrent) && spread(&run) <= STABLE_SPREAD).then_some(run)
}

/// Whether `other` runnable threads want every one of `cpus` CPUs.
fn busy(other: Option<u32>, cpus: u32) -> bool {
    other.is_some_and(|n| n >= cpus)
}

/// Largest over smallest of `v` (1 when empty or one).
fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    if v.len() < 2 || min <= 0.0 {
        1.0
    } else {
        max / min
    }
}

/// The median of `v` (the upper middle for an even count).
fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Measures `B` until it is stable or [`MAX_MEASUREMENTS`] are spent.
#[cfg(not(loom))]
pub fn measure() -> BlockStability {
    let mut measurements = Vec::with_capacity(MAX_MEASUREMENTS);
    let mut others = Vec::with_capacity(MAX_MEASUREMENTS);
    while measurements.len() < MAX_MEASUREMENTS {
        // The prober itself is one of the runnable threads counted.
        if let Some(n) = runnable::runnable_threads() {
            others.push(n.saturating_sub(1));
        }
        let Some(rt) = round_trips::measure(CALIBRATION_BUDGET) else {
            break;
        };
        measurements.push(Measurement::of(rt.spin_ns, rt.futex_ns));
        if stable_run(&measurements).is_some() {
            break;
        }
    }
    others.sort_unstable();
    let other = others.get(others.len() / 2).copied();
    BlockStability::judge(measurements, other, runnable::online_cpus())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(block_ns: f64) -> Measurement {
        Measurement {
            block_ns,
            spin_round_trip_ns: 150.0,
            futex_round_trip_ns: 2.0 * block_ns + 150.0,
            concurrent: true,
        }
    }

    fn shared_cpu(block_ns: f64) -> Measurement {
        Measurement {
            concurrent: false,
            spin_round_trip_ns: 50_000.0,
            ..clean(block_ns)
        }
    }

    #[test]
    fn three_agreeing_clean_measurements_are_stable() {
        let s = BlockStability::judge(
            vec![clean(80e3), clean(20e3), clean(22e3), clean(25e3)],
            Some(0),
            2,
        );
        assert!(s.is_stable());
        assert_eq!(s.block_ns, Some(22e3));
        assert!((s.spread - 25.0 / 20.0).abs() < 1e-9);
        assert!(!s.machine_busy());
    }

    #[test]
    fn modes_that_keep_switching_are_unstable_with_their_spread() {
        let s = BlockStability::judge(
            vec![clean(3e3), clean(30e3), clean(4e3), clean(35e3)],
            Some(0),
            2,
        );
        assert_eq!(s.instability, Some(Instability::Spread));
        assert!((s.spread - 35.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn a_time_slice_is_not_a_wake_up() {
        // A busy co-runner on each CPU: the polling round trips are time
        // slices; agreeing figures do not make them a measurement of B.
        let s = BlockStability::judge(vec![shared_cpu(1e3); 7], Some(2), 2);
        assert_eq!(s.instability, Some(Instability::NeverConcurrent));
        assert!(s.machine_busy());
        // Shared-CPU measurements among agreeing clean ones break the runs.
        let s = BlockStability::judge(
            vec![
                clean(20e3),
                shared_cpu(20e3),
                clean(21e3),
                shared_cpu(5e3),
                clean(20e3),
            ],
            None,
            2,
        );
        assert_eq!(s.instability, Some(Instability::Interrupted));
        assert_eq!(s.block_ns, Some(20e3));
    }

    #[test]
    fn agreeing_measurements_on_a_busy_machine_are_not_stable() {
        let s = BlockStability::judge(vec![clean(20e3), clean(21e3), clean(20e3)], Some(2), 2);
        assert_eq!(s.instability, Some(Instability::Busy));
        assert_eq!(s.block_ns, Some(20e3));
        let s = BlockStability::judge(vec![clean(20e3), clean(21e3), clean(20e3)], Some(1), 2);
        assert!(s.is_stable());
    }

    #[test]
    fn measurements_are_classified_by_their_polling_round_trip() {
        assert!(Measurement::of(180.0, 50_000.0).concurrent);
        assert!(!Measurement::of(52_000.0, 55_000.0).concurrent);
        assert!((Measurement::of(200.0, 40_200.0).block_ns - 20_000.0).abs() < 1e-6);
    }

    #[test]
    fn nothing_measured_says_so() {
        let s = BlockStability::judge(Vec::new(), None, 1);
        assert_eq!(s.instability, Some(Instability::NotMeasured));
        assert_eq!(s.block_ns, None);
    }

    #[cfg(not(loom))]
    #[test]
    fn measuring_stops_at_the_cap_or_when_stable() {
        let s = measure();
        assert!(!s.measurements.is_empty() || s.instability == Some(Instability::NotMeasured));
        assert!(s.measurements.len() <= MAX_MEASUREMENTS);
        if s.is_stable() {
            assert!(s.measurements.len() >= STABLE_RUN);
            assert!(s.spread <= STABLE_SPREAD);
        }
    }
}
