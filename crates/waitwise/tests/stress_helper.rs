//! Stress tests for the helper/worker protocol ([`waitwise::helper`]):
//! helpers never run more than `distance` phases ahead, run phases in
//! increasing order, stop when the worker finishes, and release a worker
//! that waits for them, also with more helpers than CPUs. Validation only;
//! timing is for `waitwise helpers`.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use waitwise::helper::{self, HelperConfig, HelperState, Pinning, Step, FINISHED};
use waitwise::{Mechanism, Policy};

/// One row: `helpers` helpers at `distance` under `policy`, a worker that
/// publishes `phases` phases and, every `ask_every` phases (0: never),
/// waits for every helper to finish the phase ahead.
struct Row {
    policy: Policy,
    helpers: usize,
    distance: u32,
    phases: u32,
    ask_every: u32,
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn check(row: &Row) {
    // Per helper: the highest phase it finished, and protocol violations.
    let done: Vec<AtomicU32> = (0..row.helpers).map(|_| AtomicU32::new(0)).collect();
    let bad = AtomicU64::new(0);
    let config = HelperConfig {
        distance: row.distance,
        policy: row.policy,
    };
    let helpers: Vec<_> = (0..row.helpers)
        .map(|i| {
            let (done, bad) = (&done, &bad);
            let mut last: Option<u32> = None;
            move |step: &Step<'_>| {
                let w = step.worker_phase();
                let ahead = w != FINISHED && step.phase() > w.saturating_add(row.distance);
                let backwards = last.is_some_and(|l| l >= step.phase());
                if ahead || backwards {
                    // Relaxed: read after the join.
                    bad.fetch_add(1, Ordering::Relaxed);
                }
                last = Some(step.phase());
                // Relaxed: the helper's SeqCst publish after this orders it
                // before the worker's wait returns.
                done[i].store(step.phase(), Ordering::Relaxed);
            }
        })
        .collect();
    let ((), report) = helper::run(&config, Pinning::Auto, helpers, |worker| {
        for p in 0..row.phases {
            worker.publish(p);
            if row.ask_every != 0 && p % row.ask_every == 0 {
                for (i, finished) in done.iter().enumerate() {
                    let target = p + row.distance;
                    if worker.wait_for_helper(i, target) == HelperState::Done {
                        assert!(finished.load(Ordering::Relaxed) >= target);
                    }
                }
            }
        }
    });
    assert_eq!(bad.load(Ordering::Relaxed), 0);
    assert_eq!(report.helpers.len(), row.helpers);
    for s in &report.helpers {
        assert!(s.blocked_waits <= s.waits);
        // A helper that was never scheduled before the worker finished
        // ran nothing; one the worker waited for ran something.
        assert!(row.ask_every == 0 || s.phases_run >= 1);
    }
}

#[test]
fn helpers_per_policy_and_distance() {
    let table = [
        (Policy::always_block(), 1, 1, 20_000, 7),
        (Policy::two_phase(0.5), 1, 1, 50_000, 3),
        (
            Policy::two_phase(0.5).with_mechanism(Mechanism::Backoff),
            1,
            2,
            50_000,
            5,
        ),
        (
            Policy::always_spin_with_timeout(std::time::Duration::from_millis(1)),
            1,
            1,
            50_000,
            11,
        ),
        (Policy::randomized(), 2, 0, 20_000, 5),
        (
            Policy::two_phase(1.0).with_mechanism(Mechanism::Yield),
            2,
            3,
            20_000,
            0,
        ),
    ];
    for (policy, helpers, distance, phases, ask_every) in table {
        check(&Row {
            policy,
            helpers,
            distance,
            phases,
            ask_every,
        });
    }
}

/// Twice and four times as many helpers as CPUs: every wait still ends.
#[test]
fn oversubscribed_helpers() {
    let n = cpus();
    let table = [
        (Policy::always_block(), 2 * n, 0, 5_000, 3),
        (Policy::two_phase(0.5), 4 * n, 1, 5_000, 5),
        (
            Policy::always_spin_with_timeout(std::time::Duration::from_millis(1)),
            2 * n,
            1,
            5_000,
            0,
        ),
    ];
    for (policy, helpers, distance, phases, ask_every) in table {
        check(&Row {
            policy,
            helpers,
            distance,
            phases,
            ask_every,
        });
    }
}
