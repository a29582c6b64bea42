//! Loom models of the barriers: in every interleaving, no thread leaves an
//! episode before all have arrived, every thread's writes before arriving
//! are visible after leaving, exactly one thread leads each episode, and no
//! wake-up is lost (a lost one shows as a deadlock). Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_barrier`
//! (a few seconds on 2 cores).
//!
//! The topology barrier runs the tree barrier's engine on another shape and
//! is covered by `tree_*`, plus one model of a shape built from a topology.
//!
//! The central barrier's algorithm is `CentralBarrierRef`, which `Barrier`
//! runs for any number of parties but a power of two (`central_*` with
//! three), and the interposer's `pthread_barrier_t` for all; for a power of
//! two `Barrier` runs the carry barrier on one word (`central_*` with two
//! parties, `carry_*`); the
//! `central_view_*` models drive the view over borrowed words as the
//! interposer does, with what only it uses: more threads than parties, and
//! an arrival taken back (a waiter that glibc unwinds).
#![cfg(loom)]

use loom::thread;
use std::path::Path;
use std::sync::OnceLock;
use waitwise::barrier::{
    Barrier, CentralBarrierRef, DisseminationBarrier, EpisodeArrival, PairBarrier, TopologyBarrier,
    TreeBarrier,
};
use waitwise::{Deadline, Policy, WaitOptions, WaitWordRef};
use waitwise_platform::futex::Futex;
use waitwise_platform::shim::{Arc, AtomicU32, AtomicU64, Ordering};
use waitwise_platform::topology::Topology;

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

impl ModelBarrier for TopologyBarrier {
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
    model_barrier_with(loom::model::Builder::new(), threads, episodes, new);
}

/// [`model_barrier`] under the settings of `builder` (e.g. a lower
/// preemption bound for a model too big for the default one).
fn model_barrier_with<B: ModelBarrier>(
    builder: loom::model::Builder,
    threads: usize,
    episodes: usize,
    new: fn() -> B,
) {
    builder.check(move || {
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

// Reuse on the shapes above: the second episode's arrivals race with the
// first episode's releases, so a release that publishes too little (or an
// arrival counted in the wrong episode) shows in the `Checker`'s marks or
// in the leader counts.

#[test]
fn central_three_threads_two_episodes() {
    model_barrier(3, 2, || Barrier::with_options(3, blocking()));
}

#[test]
fn tree_three_threads_two_levels_two_episodes() {
    model_barrier(3, 2, || {
        let b = TreeBarrier::with_options(3, 2, blocking());
        assert_eq!(b.height(), 2);
        b
    });
}

/// Two rounds per episode, reused: each thread's writes reach the others
/// through chains of two signals, on flags the first episode already set.
/// (A signaller one episode ahead, which `signalled`'s `>=` is for, cannot
/// happen with three threads; `dissemination_two_threads_two_episodes`
/// covers it.) At most one preemption: with two, loom takes close to a
/// minute (three threads, four waits each).
#[test]
fn dissemination_three_threads_two_episodes() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(1, |b| b.min(1)));
    model_barrier_with(builder, 3, 2, || {
        DisseminationBarrier::with_options(3, blocking())
    });
}

/// Two sockets, four cores each, two hyper-threads per core (a sysfs
/// fixture), read once: it is plain data, outside what loom models.
fn two_sockets() -> &'static Topology {
    static TOPOLOGY: OnceLock<Topology> = OnceLock::new();
    TOPOLOGY.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../waitwise-platform/tests/fixtures/sysfs-2socket-smt2");
        Topology::from_sysfs_root(&root).unwrap()
    })
}

#[test]
fn topology_three_threads_two_levels_two_episodes() {
    model_barrier(3, 2, || {
        // CPUs 0 and 8 are SMT siblings (a core node), CPU 1 another core
        // of the same package: the package node is the root.
        let b = TopologyBarrier::with_options(two_sockets(), &[0, 8, 1], blocking()).unwrap();
        assert_eq!(b.height(), 2);
        b
    });
}

/// A central barrier's words outside any barrier type, driven through
/// [`CentralBarrierRef`] as the interposer drives `pthread_barrier_t`'s.
struct BorrowedCentral {
    state: AtomicU64,
    gen: Futex,
    sleepers: AtomicU32,
}

impl BorrowedCentral {
    fn new() -> Self {
        Self {
            state: AtomicU64::new(0),
            gen: Futex::new(0),
            sleepers: AtomicU32::new(0),
        }
    }

    fn view(&self) -> CentralBarrierRef<'_> {
        CentralBarrierRef::new(&self.state, WaitWordRef::new(&self.gen, &self.sleepers))
    }

    /// Waits until `episode` completed.
    fn wait_for(&self, episode: u32) {
        let out = self
            .view()
            .gen()
            .wait_until(&Policy::always_block(), Deadline::NEVER, |gen| {
                CentralBarrierRef::has_completed(gen, episode)
            });
        assert!(!out.timed_out());
    }

    /// One wait of a barrier of `parties`; whether this thread led.
    fn wait(&self, parties: u32) -> bool {
        let b = self.view();
        match b.arrive(parties) {
            EpisodeArrival::Last { .. } => {
                b.complete();
                b.gen().wake_all();
                true
            }
            EpisodeArrival::Wait { episode } => {
                self.wait_for(episode);
                false
            }
        }
    }

    /// Completed episodes, after every thread is joined.
    fn completed(&self) -> u32 {
        // Relaxed: read after joining every thread that wrote it.
        self.gen.value().load(Ordering::Relaxed)
    }
}

/// Four threads, each waiting once with `wait` (whether it led) on a
/// barrier of two: two episodes, whichever pairs form, each with one
/// leader, and each thread leaves having seen at least its partner's
/// pre-barrier write. Returns after every thread is joined.
fn four_threads_on_two_parties<B: Send + Sync + 'static>(b: Arc<B>, wait: fn(&B) -> bool) {
    let leaders = Arc::new(AtomicU32::new(0));
    let marks: Arc<Vec<AtomicU32>> = Arc::new((0..4).map(|_| AtomicU32::new(0)).collect());
    let run = {
        let leaders = leaders.clone();
        move |t: usize| {
            // Relaxed on purpose: only the barrier may order the mark
            // before the other threads' loads.
            marks[t].store(1, Ordering::Relaxed);
            if wait(&b) {
                // Relaxed: a count, read after every thread is joined.
                leaders.fetch_add(1, Ordering::Relaxed);
            }
            // At least one other thread (this episode's partner) arrived
            // before this thread left.
            let seen = marks
                .iter()
                .filter(|m| m.load(Ordering::Relaxed) == 1)
                .count();
            assert!(seen >= 2, "left having seen {seen} arrivals");
        }
    };
    spawn_all(4, run);
    // Relaxed: every thread is joined.
    assert_eq!(leaders.load(Ordering::Relaxed), 2);
}

/// The central view with four threads on two parties
/// ([`four_threads_on_two_parties`]), as the interposer allows. At most one
/// preemption: with two, loom takes over five minutes (four threads).
#[test]
fn central_view_more_threads_than_parties() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(1, |b| b.min(1)));
    builder.check(|| {
        let b = Arc::new(BorrowedCentral::new());
        four_threads_on_two_parties(b.clone(), |b| b.wait(2));
        assert_eq!(b.completed(), 2);
        assert_eq!(b.view().arrivals(), 0);
    });
}

/// The carry barrier (a `Barrier` of two) with four threads
/// ([`four_threads_on_two_parties`]): an arrival after the carry counts in
/// the next episode. At most one preemption, as the model above.
#[test]
fn carry_more_threads_than_parties() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(1, |b| b.min(1)));
    builder.check(|| {
        let b = Arc::new(Barrier::with_options(2, blocking()));
        four_threads_on_two_parties(b, |b| b.wait().is_leader());
    });
}

/// Four parties of the carry barrier, one episode. At most one
/// preemption (four threads).
#[test]
fn carry_four_threads_one_episode() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(1, |b| b.min(1)));
    model_barrier_with(builder, 4, 1, || Barrier::with_options(4, blocking()));
}

/// A waiter that leaves (an arrival taken back, as the interposer does for
/// a thread glibc unwinds) while another waits: if it got out before the
/// episode completed, the episode waits for another arrival; if not, its
/// arrival counted and it leaves with the episode. Either way one episode
/// completes and nobody is stranded.
#[test]
fn central_view_taken_back_arrival() {
    loom::model(|| {
        let b = Arc::new(BorrowedCentral::new());
        let leaving = {
            let b = b.clone();
            thread::spawn(move || {
                let view = b.view();
                match view.arrive(2) {
                    EpisodeArrival::Last { .. } => {
                        view.complete();
                        view.gen().wake_all();
                        false
                    }
                    EpisodeArrival::Wait { episode } => {
                        if view.take_back(episode) {
                            return true;
                        }
                        b.wait_for(episode);
                        false
                    }
                }
            })
        };
        let staying = {
            let b = b.clone();
            thread::spawn(move || {
                b.wait(2);
            })
        };
        if leaving.join().unwrap() {
            // Taken back: the episode needs another arrival.
            b.wait(2);
        }
        staying.join().unwrap();
        assert_eq!(b.completed(), 1);
        assert_eq!(b.view().arrivals(), 0);
    });
}
