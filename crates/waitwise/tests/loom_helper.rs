//! Loom models of the helper/worker protocol ([`waitwise::helper`]): a
//! throttled helper never runs more than `distance` phases ahead, is never
//! stranded asleep when the worker publishes or finishes, and a worker that
//! asks to wait for a helper is always released. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_helper`
//! (a few seconds on 2 cores).
#![cfg(loom)]

use loom::thread;
use waitwise::helper::{run_helper, HelperConfig, HelperState, Progress, FINISHED};
use waitwise::Policy;
use waitwise_platform::shim::Arc;

fn blocking(distance: u32) -> HelperConfig {
    HelperConfig {
        distance,
        policy: Policy::always_block(),
    }
}

/// Worker publishes 1 and 2 then finishes; the helper (distance 1) runs
/// every phase it runs with the worker at most one phase behind, and
/// returns (no lost wake-up leaves it asleep: loom reports a deadlock).
#[test]
fn throttled_helper_stays_within_distance_and_stops() {
    loom::model(|| {
        let p = Arc::new(Progress::new(1));
        let p2 = p.clone();
        let helper = thread::spawn(move || {
            let mut phases = Vec::new();
            let stats = run_helper(&p2, 0, &blocking(1), |step| {
                let w = step.worker_phase();
                assert!(
                    w == FINISHED || step.phase() <= w + 1,
                    "{} vs {w}",
                    step.phase()
                );
                phases.push(step.phase());
            });
            (phases, stats)
        });
        p.publish(1);
        p.publish(2);
        p.finish();
        let (phases, stats) = helper.join().unwrap();
        assert!(phases.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(stats.phases_run, phases.len() as u64);
    });
}

/// A worker that waits for the helper's phase 1 is released, and sees
/// what the precomputation of phase 1 wrote.
#[test]
fn worker_waiting_for_the_helper_is_released_and_sees_its_work() {
    loom::model(|| {
        let p = Arc::new(Progress::new(1));
        let slot = Arc::new(loom::sync::atomic::AtomicU32::new(0));
        let (p2, slot2) = (p.clone(), slot.clone());
        let helper = thread::spawn(move || {
            run_helper(&p2, 0, &blocking(1), |step| {
                if step.phase() == 1 {
                    // Relaxed: the helper's SeqCst publish of phase 1
                    // orders it (the point of this model).
                    slot2.store(7, loom::sync::atomic::Ordering::Relaxed);
                }
            })
        });
        assert_eq!(
            p.wait_for_helper(0, 1, &Policy::always_block()),
            HelperState::Done
        );
        assert_eq!(slot.load(loom::sync::atomic::Ordering::Relaxed), 7);
        p.finish();
        helper.join().unwrap();
    });
}

/// Two helpers at distance 0 (the Dijkstra shape) both stop when the
/// worker finishes, whatever phase each is waiting for.
#[test]
fn two_following_helpers_stop_when_the_worker_finishes() {
    loom::model(|| {
        let p = Arc::new(Progress::new(2));
        let helpers: Vec<_> = (0..2)
            .map(|i| {
                let p = p.clone();
                thread::spawn(move || run_helper(&p, i, &blocking(0), |_| {}))
            })
            .collect();
        p.publish(1);
        p.finish();
        for h in helpers {
            h.join().unwrap();
        }
        assert_eq!(p.helper_progress(0), FINISHED);
        assert_eq!(p.helper_progress(1), FINISHED);
    });
}

/// A worker waiting for a phase the helper never reaches (it finished
/// first) is released by the helper's end.
#[test]
fn worker_waiting_for_an_ended_helper_is_released() {
    loom::model(|| {
        let p = Arc::new(Progress::new(1));
        let p2 = p.clone();
        let helper = thread::spawn(move || run_helper(&p2, 0, &blocking(0), |_| {}));
        let p3 = p.clone();
        let finisher = thread::spawn(move || p3.finish());
        let state = p.wait_for_helper(0, 5, &Policy::always_block());
        assert_eq!(state, HelperState::Ended);
        finisher.join().unwrap();
        helper.join().unwrap();
    });
}
