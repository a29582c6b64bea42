//! Loom models of the barriers: in every interleaving, no thread leaves an
//! episode before all have arrived, every thread's writes before arriving
//! are visible after leaving, exactly one thread leads each episode, and no
//! wake-up is lost (a lost one shows as a deadlock). Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_barrier`
//! (a few seconds on 2 cores).
//!
//! The topology barrier runs the tree barrier's engine on another shape and
//! is covered by `tree_*`.
#![cfg(loom)]

use loom::thread;
use waitwise::barrier::{Barrier, DisseminationBarrier, PairBarrier, TreeBarrier};
use waitwise::{Policy, WaitOptions};
use waitwise_platform::shim::{Arc, AtomicU32, Ordering};

/// What every model checks: per-thread "arrived at episode k" marks written
/// with Relaxed stores before each wait (so only the barrier orders them),
/// and a count of leaders per episode.
struct Checker {
    arrived: Vec<AtomicU32>,
    leaders: Vec<AtomicU32>,
}

impl Checker {
    fn new(threads: usize, episodes: usize) -> Arc<Self> {
        Arc::new(Self {
            arrived: (0..threads).map(|_| AtomicU32::new(0)).collect(),
            leaders: (0..episodes).map(|_| AtomicU32::new(0)).collect(),
        })
    }

    /// Thread `t` runs `episodes` episodes through `wait` (returns leader).
    fn run(&self, t: usize, mut wait: impl FnMut() -> bool) {
        for k in 1..=self.leaders.len() as u32 {
            self.arrived[t].store(k, Ordering::Relaxed);
            let leader = wait();
            for a in &self.arrived {
                let seen = a.load(Ordering::Relaxed);
                assert!(
                    seen == k || seen == k + 1,
                    "left episode {k}, saw a thread at {seen}"
                );
            }
            if leader {
                self.leaders[k as usize - 1].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn assert_one_leader_each(&self) {
        for l in &self.leaders {
            assert_eq!(l.load(Ordering::Relaxed), 1);
        }
    }
}

/// Runs `body(t)` on threads `1..threads` and on this thread as 0.
fn spawn_all(threads: usize, body: impl Fn(usize) + Send + Sync + 'static) {
    let body = Arc::new(body);
    let others: Vec<_> = (1..threads)
        .map(|t| {
            let body = body.clone();
            thread::spawn(move || body(t))
        })
        .collect();
    body(0);
    for o in others {
        o.join().unwrap();
    }
}

fn blocking() -> WaitOptions {
    WaitOptions::new().policy(Policy::always_block())
}

#[test]
fn central_two_threads_two_episodes() {
    loom::model(|| {
        let b = Arc::new(Barrier::with_options(2, blocking()));
        let c = Checker::new(2, 2);
        let c2 = c.clone();
        spawn_all(2, move |t| c2.run(t, || b.wait().is_leader()));
        c.assert_one_leader_each();
    });
}

#[test]
fn central_three_threads_one_episode() {
    loom::model(|| {
        let b = Arc::new(Barrier::with_options(3, blocking()));
        let c = Checker::new(3, 1);
        let c2 = c.clone();
        spawn_all(3, move |t| c2.run(t, || b.wait().is_leader()));
        c.assert_one_leader_each();
    });
}

#[test]
fn pair_two_episodes() {
    loom::model(|| {
        let b = Arc::new(PairBarrier::with_options(blocking()));
        let c = Checker::new(2, 2);
        let c2 = c.clone();
        spawn_all(2, move |t| c2.run(t, || b.wait().is_leader()));
        c.assert_one_leader_each();
    });
}

#[test]
fn tree_three_threads_two_levels() {
    loom::model(|| {
        let b = Arc::new(TreeBarrier::with_options(3, 2, blocking()));
        assert_eq!(b.height(), 2);
        let c = Checker::new(3, 1);
        let c2 = c.clone();
        spawn_all(3, move |t| {
            let h = b.handle(t).unwrap();
            c2.run(t, || h.wait().is_leader());
        });
        c.assert_one_leader_each();
    });
}

#[test]
fn tree_two_threads_two_episodes() {
    loom::model(|| {
        let b = Arc::new(TreeBarrier::with_options(2, 2, blocking()));
        let c = Checker::new(2, 2);
        let c2 = c.clone();
        spawn_all(2, move |t| {
            let h = b.handle(t).unwrap();
            c2.run(t, || h.wait().is_leader());
        });
        c.assert_one_leader_each();
    });
}

#[test]
fn dissemination_two_threads_two_episodes() {
    loom::model(|| {
        let b = Arc::new(DisseminationBarrier::with_options(2, blocking()));
        let c = Checker::new(2, 2);
        let c2 = c.clone();
        spawn_all(2, move |t| {
            let h = b.handle(t).unwrap();
            c2.run(t, || h.wait().is_leader());
        });
        c.assert_one_leader_each();
    });
}

#[test]
fn dissemination_three_threads_one_episode() {
    loom::model(|| {
        let b = Arc::new(DisseminationBarrier::with_options(3, blocking()));
        let c = Checker::new(3, 1);
        let c2 = c.clone();
        spawn_all(3, move |t| {
            let h = b.handle(t).unwrap();
            c2.run(t, || h.wait().is_leader());
        });
        c.assert_one_leader_each();
    });
}
