//! Helper threads: a busy worker and lightweight helpers that run ahead
//! of it, precomputing (prefetching) what it will need, and wait most of
//! the time. This is the execution model the seeds' waiting primitives
//! exist for: seed 000 section 4.4 (speculative precomputation, SPR: one
//! helper beside the worker prefetches for the next phase, then is
//! throttled at a barrier so it does not run too far ahead and pollute
//! the cache) and seed 001 part II (helper threads that speculatively
//! relax the edges of Dijkstra's next minimum vertices).
//!
//! - [`Progress`]: the shared words. The worker publishes its phase (one
//!   store, a system call only when a helper sleeps); helpers publish the
//!   phases they finished; either side waits for the other through a
//!   [`Policy`].
//! - [`run_helper`]: one helper's loop: throttle when `distance` phases
//!   ahead, skip the phases the worker has left, precompute, publish.
//! - [`Placement`]: the helper on the worker's SMT sibling when there is
//!   one, else on another core, and which it was.
//! - [`run`]: all of it in one call: pins, spawns the helpers (scoped, so
//!   precomputations borrow the caller's data), runs the worker's closure
//!   with a [`Worker`] handle, stops and joins the helpers.
//!
//! The worker never waits for a helper unless it asks
//! ([`Worker::wait_for_helper`]); a helper that falls behind skips to the
//! worker's phase. The helper's waiting mechanism and policy are the
//! [`HelperConfig::policy`]: spinning steals issue slots from an SMT
//! sibling, blocking makes every publish a system call, and the hardware
//! waits (where the CPU has them) are the compromise seed 000 measures.
//!
//! # Examples
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use waitwise::helper::{self, HelperConfig, Pinning};
//! use waitwise::Policy;
//!
//! let data: Vec<u64> = (0..1000).collect();
//! let touched = AtomicU64::new(0);
//! let config = HelperConfig { distance: 1, policy: Policy::two_phase(0.5) };
//! let (sum, report) = helper::run(
//!     &config,
//!     Pinning::None,
//!     vec![|step: &helper::Step<'_>| {
//!         // Precompute (here: read) the block of phase `step.phase()`.
//!         let p = step.phase() as usize;
//!         if p < 10 {
//!             let s: u64 = data[p * 100..(p + 1) * 100].iter().sum();
//!             touched.fetch_add(s, Ordering::Relaxed);
//!         }
//!     }],
//!     |worker| {
//!         let mut sum = 0;
//!         for p in 0..10u32 {
//!             worker.publish(p);
//!             sum += data[p as usize * 100..(p as usize + 1) * 100].iter().sum::<u64>();
//!         }
//!         sum
//!     },
//! );
//! assert_eq!(sum, 499_500);
//! assert_eq!(report.helpers.len(), 1);
//! ```

pub mod placement;
pub mod progress;
pub mod runner;

pub use placement::{HelperCpu, Placement, Relation};
pub use progress::{HelperState, Progress, Throttle, Waited, FINISHED, LAST_PHASE};
pub use runner::{run_helper, HelperConfig, HelperStats, Step};

use crate::policy::Policy;

/// Whether [`run`] pins the worker and its helpers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Pinning {
    /// Pin the worker (the calling thread) to the CPU it runs on and the
    /// helpers as [`Placement::for_current_thread`] chooses; the worker's
    /// affinity is restored when [`run`] returns.
    #[default]
    Auto,
    /// Pin nobody.
    None,
    /// Pin as given (a placement chosen once and reused, so that runs
    /// compare alike). Helpers beyond its list are not pinned.
    Given(Placement),
}

/// The worker's side of [`run`].
#[derive(Debug)]
pub struct Worker<'a> {
    progress: &'a Progress,
    policy: Policy,
}

impl Worker<'_> {
    /// "I am in `phase` now": one store, a system call only when a helper
    /// sleeps. Phases must not decrease (see [`Progress::publish`]).
    #[inline]
    pub fn publish(&self, phase: u32) {
        self.progress.publish(phase);
    }

    /// Number of helpers.
    pub fn helpers(&self) -> usize {
        self.progress.helpers()
    }

    /// Waits, with the helpers' policy, until helper `helper` finished
    /// `phase` or ended. The only way a worker waits for a helper.
    ///
    /// # Panics
    ///
    /// If `helper` is not below [`Worker::helpers`].
    pub fn wait_for_helper(&self, helper: usize, phase: u32) -> HelperState {
        self.progress.wait_for_helper(helper, phase, &self.policy)
    }

    /// The shared words, for protocols of the caller's own.
    pub fn progress(&self) -> &Progress {
        self.progress
    }
}

/// What [`run`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RunReport {
    /// Where the worker and the helpers ran.
    pub placement: Placement,
    /// Each helper's counts, in helper order.
    pub helpers: Vec<HelperStats>,
    /// Wall time of the worker's closure, ns: the run without spawning
    /// and joining the helpers (a program keeps its helpers for its whole
    /// life, as seed 000's SPR does).
    pub worker_ns: u64,
}

/// Runs `work` on the calling thread as the worker, with one helper per
/// entry of `helpers` running [`run_helper`] with it, each on its own
/// scoped thread (so they may borrow the caller's data). When `work`
/// returns (or panics) the helpers are told to finish and joined.
///
/// # Panics
///
/// Re-raises a panic of `work` or of a helper after all are joined.
#[cfg(not(loom))]
pub fn run<R, F>(
    config: &HelperConfig,
    pinning: Pinning,
    helpers: Vec<F>,
    work: impl FnOnce(&Worker<'_>) -> R,
) -> (R, RunReport)
where
    F: FnMut(&Step<'_>) + Send,
{
    use waitwise_platform::affinity;

    /// Finishes the worker's side on every way out of `work`, so helpers
    /// never wait for a worker that is gone.
    struct FinishOnExit<'a>(&'a Progress);
    impl Drop for FinishOnExit<'_> {
        fn drop(&mut self) {
            self.0.finish();
        }
    }

    let progress = Progress::new(helpers.len());
    let placement = match pinning {
        Pinning::Auto => Placement::for_current_thread(helpers.len()),
        Pinning::None => Placement::unpinned(helpers.len()),
        Pinning::Given(mut p) => {
            p.helpers.resize(
                helpers.len(),
                HelperCpu {
                    cpu: None,
                    relation: Relation::Unpinned,
                },
            );
            p
        }
    };
    let saved = match placement.worker_cpu {
        Some(_) => affinity::allowed_cpus().ok(),
        None => None,
    };
    let (result, stats, worker_ns) = std::thread::scope(|s| {
        let handles: Vec<_> = helpers
            .into_iter()
            .enumerate()
            .map(|(i, precompute)| {
                let cpu = placement.helpers[i].cpu;
                let progress = &progress;
                s.spawn(move || {
                    if let Some(cpu) = cpu {
                        // Best effort: an unpinned helper still helps.
                        let _ = affinity::set_current_thread_affinity(&[cpu]);
                    }
                    run_helper(progress, i, config, precompute)
                })
            })
            .collect();
        if let Some(cpu) = placement.worker_cpu {
            let _ = affinity::set_current_thread_affinity(&[cpu]);
        }
        let worker = Worker {
            progress: &progress,
            policy: config.policy,
        };
        let started = std::time::Instant::now();
        let result = {
            let _finish = FinishOnExit(&progress);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&worker)))
        };
        let worker_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let stats: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (result, stats, worker_ns)
    });
    if let Some(cpus) = saved {
        let _ = affinity::set_current_thread_affinity(&cpus);
    }
    let result = result.unwrap_or_else(|p| std::panic::resume_unwind(p));
    let helpers = stats
        .into_iter()
        .map(|s| s.unwrap_or_else(|p| std::panic::resume_unwind(p)))
        .collect();
    (
        result,
        RunReport {
            placement,
            helpers,
            worker_ns,
        },
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn run_stops_helpers_when_work_returns_and_restores_affinity() {
        let before = waitwise_platform::affinity::allowed_cpus().ok();
        let max_ahead = AtomicU32::new(0);
        let config = HelperConfig {
            distance: 3,
            policy: Policy::two_phase(0.5),
        };
        let helpers: Vec<_> = (0..2)
            .map(|_| {
                |step: &Step<'_>| {
                    let w = step.worker_phase();
                    if w != FINISHED {
                        max_ahead.fetch_max(step.phase().saturating_sub(w), Ordering::Relaxed);
                    }
                }
            })
            .collect();
        let (n, report) = run(&config, Pinning::Auto, helpers, |worker| {
            for p in 0..200 {
                worker.publish(p);
            }
            worker.helpers()
        });
        assert_eq!(n, 2);
        assert_eq!(report.helpers.len(), 2);
        assert_eq!(report.placement.helpers.len(), 2);
        assert!(max_ahead.load(Ordering::Relaxed) <= 3);
        assert_eq!(waitwise_platform::affinity::allowed_cpus().ok(), before);
    }

    #[test]
    fn a_panicking_worker_still_stops_its_helpers() {
        let config = HelperConfig {
            distance: 1,
            policy: Policy::always_block(),
        };
        let out = std::panic::catch_unwind(|| {
            run(&config, Pinning::None, vec![|_: &Step<'_>| {}], |_| {
                panic!("worker fails")
            })
        });
        assert!(out.is_err());
    }
}
