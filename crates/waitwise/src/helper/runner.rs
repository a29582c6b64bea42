//! [`run_helper`]: one helper's loop over [`Progress`]: throttle, skip the
//! phases the worker has already left, precompute, publish, and count.

use super::progress::{Progress, Throttle, Waited, LAST_PHASE};
use crate::policy::Policy;
use std::time::{Duration, Instant};

/// How a helper runs ahead of its worker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HelperConfig {
    /// How many phases ahead of the worker the helper may be: it runs
    /// phase `p` only while the worker is in phase `p - distance` or
    /// later. 0: the helper works on the worker's current phase (the
    /// helper-threaded Dijkstra); 1: on the next one (seed 000's SPR,
    /// "in phase k the helper prefetches for phase k+1, then is
    /// throttled").
    pub distance: u32,
    /// How the helper waits when it is `distance` phases ahead: the seeds'
    /// point is that this choice decides whether the helper helps.
    pub policy: Policy,
}

impl Default for HelperConfig {
    /// One phase ahead, waiting with the default barrier policy (a helper
    /// throttle is a two-thread barrier in seed 000).
    fn default() -> Self {
        Self {
            distance: 1,
            policy: Policy::for_kind(crate::policy::SyncKind::Barrier),
        }
    }
}

/// One phase a helper is asked to precompute, with a view of the worker.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    phase: u32,
    helper: usize,
    progress: &'a Progress,
}

impl<'a> Step<'a> {
    /// The phase to precompute.
    pub fn phase(&self) -> u32 {
        self.phase
    }

    /// Which helper this is (0-based).
    pub fn helper(&self) -> usize {
        self.helper
    }

    /// The worker's phase now ([`FINISHED`](super::FINISHED) once it is
    /// done).
    #[inline]
    pub fn worker_phase(&self) -> u32 {
        self.progress.worker_phase()
    }

    /// Whether the worker has moved past this phase (or finished): work
    /// for it can no longer help, and a precomputation that checks this
    /// may stop early (the Dijkstra helpers stop this way).
    #[inline]
    pub fn is_stale(&self) -> bool {
        self.worker_phase() > self.phase
    }
}

/// What one helper did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct HelperStats {
    /// Phases precomputed.
    pub phases_run: u64,
    /// Phases skipped because the worker had already left them.
    pub phases_skipped: u64,
    /// Throttles that had to wait.
    pub waits: u64,
    /// Of those, waits that slept in the kernel.
    pub blocked_waits: u64,
    /// Time spent precomputing, ns.
    pub work_ns: u64,
    /// Time spent throttled, ns.
    pub wait_ns: u64,
}

impl HelperStats {
    /// The fraction of the helper's time spent throttled,
    /// `wait / (wait + work)`; 0 when it did nothing.
    pub fn wait_fraction(&self) -> f64 {
        let total = self.wait_ns + self.work_ns;
        if total == 0 {
            0.0
        } else {
            self.wait_ns as f64 / total as f64
        }
    }
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Runs helper `helper` of `progress` until the worker finishes: for each
/// phase from 0, throttle (wait while more than `config.distance` phases
/// ahead), jump to the worker's phase when behind it, call
/// `precompute`, publish the phase as finished. Marks the helper ended
/// on the way out, also when `precompute` panics, so a worker waiting for
/// it returns.
///
/// # Panics
///
/// If `helper` is not below [`Progress::helpers`]; and whatever
/// `precompute` panics with.
pub fn run_helper(
    progress: &Progress,
    helper: usize,
    config: &HelperConfig,
    mut precompute: impl FnMut(&Step<'_>),
) -> HelperStats {
    struct EndOnExit<'a>(&'a Progress, usize);
    impl Drop for EndOnExit<'_> {
        fn drop(&mut self) {
            self.0.helper_ended(self.1);
        }
    }
    assert!(
        helper < progress.helpers(),
        "helper {helper} of {}",
        progress.helpers()
    );
    let _end = EndOnExit(progress, helper);
    let mut stats = HelperStats::default();
    let mut phase = 0u32;
    loop {
        let t0 = Instant::now();
        let worker = match progress.throttle(phase, config.distance, &config.policy) {
            Throttle::Finished => break,
            Throttle::Go { worker, waited } => {
                if let Some(w) = waited {
                    stats.waits += 1;
                    stats.blocked_waits += u64::from(w == Waited::Blocked);
                    stats.wait_ns += ns(t0.elapsed());
                }
                worker
            }
        };
        if phase < worker {
            // The worker already left phases phase..worker: skip them.
            stats.phases_skipped += u64::from(worker - phase);
            phase = worker;
        }
        let t1 = Instant::now();
        precompute(&Step {
            phase,
            helper,
            progress,
        });
        stats.work_ns += ns(t1.elapsed());
        stats.phases_run += 1;
        progress.helper_finished(helper, phase);
        if phase >= LAST_PHASE {
            break;
        }
        phase += 1;
    }
    stats
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_helper_runs_each_phase_once_within_distance() {
        let p = Progress::new(1);
        let config = HelperConfig {
            distance: 2,
            policy: Policy::always_block(),
        };
        let mut seen = Vec::new();
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                run_helper(&p, 0, &config, |step| {
                    let w = step.worker_phase();
                    seen.push((step.phase(), w));
                })
            });
            for phase in 1..=20 {
                // Wait (asked for) until the helper finished the phase
                // ahead, so that no phase is skipped.
                p.wait_for_helper(0, phase, &Policy::always_block());
                p.publish(phase);
            }
            p.finish();
            let stats = h.join().unwrap();
            assert_eq!(stats.phases_skipped, 0);
        });
        let phases: Vec<u32> = seen.iter().map(|&(p, _)| p).collect();
        assert_eq!(phases[..21], (0..=20).collect::<Vec<_>>()[..]);
        for &(phase, worker) in &seen {
            assert!(worker == super::super::FINISHED || phase <= worker + 2);
        }
    }

    #[test]
    fn a_helper_behind_the_worker_skips_ahead() {
        let p = Progress::new(1);
        p.publish(7);
        let mut first = None;
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                run_helper(&p, 0, &HelperConfig::default(), |step| {
                    first.get_or_insert(step.phase());
                })
            });
            p.wait_for_helper(0, 7, &Policy::always_block());
            p.finish();
            let stats = h.join().unwrap();
            assert_eq!(stats.phases_skipped, 7);
        });
        assert_eq!(first, Some(7));
    }

    #[test]
    fn a_panicking_precomputation_ends_the_helper() {
        let p = Progress::new(1);
        std::thread::scope(|s| {
            let h = s.spawn(|| run_helper(&p, 0, &HelperConfig::default(), |_| panic!("boom")));
            assert_eq!(
                p.wait_for_helper(0, 0, &Policy::always_block()),
                super::super::HelperState::Ended
            );
            assert!(h.join().is_err());
        });
    }
}
