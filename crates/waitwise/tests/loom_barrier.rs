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
            // Relaxed on purpose: only the barrier may order these marks
            // before the loads below (see `Checker`).
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
                // Relaxed: a count, read after every thread is joined.
                self.leaders[k as usize - 1].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn assert_one_leader_each(&self) {
        for l in &self.leaders {
            // Relaxed: called after every thread is joined.
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

/// How a thread of the models waits on each kind of barrier: on the
/// shared barrier itself, or through its own handle.
trait ModelBarrier: Send + Sync + 'static {
    /// Thread `t`'s part: all its episodes, through `c.run`.
    fn run(&self, t: usize, c: &Checker);
}

impl ModelBarrier for Barrier {
    fn run(&self, t: usize, c: &Checker) {
        c.run(t, || self.wait().is_leader());
    }
}

impl ModelBarrier for PairBarrier {
    fn run(&self, t: usize, c: &Checker) {
        c.run(t, || self.wait().is_leader());
    }
}

impl ModelBarrier for TreeBarrier {
    fn run(&self, t: usize, c: &Checker) {
        let h = self.handle(t).unwrap();
        c.run(t, || h.wait().is_leader());
    }
}

impl ModelBarrier for DisseminationBarrier {
    fn run(&self, t: usize, c: &Checker) {
        let h = self.handle(t).unwrap();
        c.run(t, || h.wait().is_leader());
    }
}

/// The model every test runs: in each execution, builds the barrier with
/// `new`, runs `episodes` episodes on `threads` threads (see [`Checker`]),
/// then checks that each episode had exactly one leader.
fn model_barrier<B: ModelBarrier>(threads: usize, episodes: usize, new: fn() -> B) {
    loom::model(move || {
        let b = Arc::new(new());
        let c = Checker::new(threads, episodes);
        let c2 = c.clone();
        spawn_all(threads, move |t| b.run(t, &c2));
        c.assert_one_leader_each();
    });
}

#[test]
fn central_two_threads_two_episodes() {
    model_barrier(2, 2, || Barrier::with_options(2, blocking()));
}

#[test]
fn central_three_threads_one_episode() {
    model_barrier(3, 1, || Barrier::with_options(3, blocking()));
}

#[test]
fn pair_two_episodes() {
    model_barrier(2, 2, || PairBarrier::with_options(blocking()));
}

#[test]
fn tree_three_threads_two_levels() {
    model_barrier(3, 1, || {
        let b = TreeBarrier::with_options(3, 2, blocking());
        assert_eq!(b.height(), 2);
        b
    });
}

#[test]
fn tree_two_threads_two_episodes() {
    model_barrier(2, 2, || TreeBarrier::with_options(2, 2, blocking()));
}

#[test]
fn dissemination_two_threads_two_episodes() {
    model_barrier(2, 2, || DisseminationBarrier::with_options(2, blocking()));
}

#[test]
fn dissemination_three_threads_one_episode() {
    model_barrier(3, 1, || DisseminationBarrier::with_options(3, blocking()));
}
