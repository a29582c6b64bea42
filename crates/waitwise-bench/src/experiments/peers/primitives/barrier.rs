//! The barrier workload: every thread loops `gap; wait` until the run's
//! end, timing each wait; the throughput counts episodes. Thread 0
//! decides the end: before the wait of its last episode it publishes that
//! episode's number, and every thread leaves after the episode of that
//! number, so all leave together (a thread that reads the number early,
//! while still in an earlier episode, goes on to the last one).

use super::super::grid::Point;
use super::super::hints::spin;
use super::super::wait_log::{RunLog, ThreadLog};
use super::{run_threads, Contender, RunSettings};
use crate::contender::barrier::{BarrierContender, BarrierSpec};
use crate::contender::Family;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// waitwise's `Barrier` (default waiting), then its peers and the spin
/// barrier (the existing barrier contenders).
pub const CONTENDERS: [Contender; 4] = [
    Contender {
        name: "waitwise::Barrier",
        family: Family::Waitwise,
    },
    Contender {
        name: "std::sync::Barrier",
        family: Family::Peer,
    },
    Contender {
        name: "pthread_barrier_wait",
        family: Family::Peer,
    },
    Contender {
        name: "spin (sense-reversing)",
        family: Family::Baseline,
    },
];

/// The barrier of contender `which`, for `n` threads.
fn make(which: usize, n: usize) -> Arc<dyn BarrierContender> {
    let spec = match which {
        0 => BarrierSpec::barrier_default(),
        1 => BarrierSpec::std(),
        2 => BarrierSpec::pthread(),
        _ => BarrierSpec::spin(),
    };
    spec.make(n, false)
}

/// Runs contender `which` at `p`.
pub fn run(which: usize, p: &Point, s: &RunSettings) -> RunLog {
    let n = p.threads.max(1);
    let barrier = make(which, n);
    // The last episode's number; u64::MAX while the run goes on.
    let last = AtomicU64::new(u64::MAX);
    let gap = s.gap_hints(p);
    run_threads(n, |i| {
        let mut log = ThreadLog::start(false, s.run);
        for episode in 0.. {
            spin(gap);
            if i == 0 && !log.running() {
                // Relaxed: the barrier's own synchronization orders this
                // store before every thread's load after this episode.
                last.store(episode, Ordering::Relaxed);
            }
            log.timed(|| barrier.wait(i));
            if i == 0 {
                log.ops += 1;
            }
            // Relaxed: see the store; an older value only says "go on".
            if episode >= last.load(Ordering::Relaxed) {
                break;
            }
        }
        log
    })
}
