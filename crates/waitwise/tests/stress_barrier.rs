//! Stress tests of every barrier, as a parameter table: barrier, threads
//! (2, 3, 4, 8: up to 4x this machine's 2 CPUs), episodes, policy.
//!
//! Each thread marks the episode it arrives at (a Relaxed store, so only
//! the barrier orders it), waits, then checks:
//! - every thread is in this episode or the next (no thread left before all
//!   arrived, no arrival counted in the wrong episode);
//! - the leader of episode `k` follows the leader of episode `k - 1`
//!   (exactly one leader per episode).
//!
//! A failed check is recorded, not panicked on, so the other threads are
//! not left waiting forever; the test asserts at the end. Every case makes
//! 100,000 `wait` calls or more (the central barrier at 2 threads: 100,000
//! episodes). Run with
//! `cargo test -p waitwise --release --test stress_barrier`
//! (about 10-20 s on 2 CPUs).
#![cfg(not(loom))]

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use waitwise::barrier::{Barrier, DisseminationBarrier, PairBarrier, TopologyBarrier, TreeBarrier};
use waitwise::platform::topology::Topology;
use waitwise::{Policy, WaitOptions};

/// Wait calls per case (episodes = this / threads, at least 100,000 for
/// two threads).
const WAITS_PER_CASE: u64 = 200_000;

/// Per-case shared state.
struct Checker {
    arrived: Vec<AtomicU64>,
    last_leader: AtomicU64,
    errors: Mutex<Vec<String>>,
}

/// Runs `episodes` episodes on `threads` threads; `waiter(t)` makes thread
/// `t`'s wait function (returning whether it led), inside that thread.
fn check<'b>(
    threads: usize,
    episodes: u64,
    waiter: &(dyn Fn(usize) -> Box<dyn FnMut() -> bool + 'b> + Sync + 'b),
) {
    let c = Checker {
        arrived: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        last_leader: AtomicU64::new(0),
        errors: Mutex::new(Vec::new()),
    };
    std::thread::scope(|s| {
        for t in 0..threads {
            let c = &c;
            s.spawn(move || {
                let mut wait = waiter(t);
                for k in 1..=episodes {
                    // Relaxed on purpose: only the barrier may order these
                    // marks before the loads below (module doc).
                    c.arrived[t].store(k, Ordering::Relaxed);
                    let leader = wait();
                    let mut errors = Vec::new();
                    for (j, a) in c.arrived.iter().enumerate() {
                        let seen = a.load(Ordering::Relaxed);
                        if seen != k && seen != k + 1 {
                            errors.push(format!(
                                "thread {t} left episode {k} while thread {j} was at {seen}"
                            ));
                        }
                    }
                    if leader {
                        // Relaxed: the barrier orders the leaders' swaps
                        // (episode k - 1's leader swapped before arriving
                        // at episode k), which is what this checks.
                        let prev = c.last_leader.swap(k, Ordering::Relaxed);
                        if prev != k - 1 {
                            errors.push(format!(
                                "thread {t} led episode {k} after the leader of {prev}"
                            ));
                        }
                    }
                    if !errors.is_empty() {
                        c.errors.lock().unwrap().extend(errors);
                    }
                }
            });
        }
    });
    let errors = c.errors.into_inner().unwrap();
    assert!(
        errors.is_empty(),
        "{} errors, first: {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    // Relaxed: the scope joined every thread.
    assert_eq!(
        c.last_leader.load(Ordering::Relaxed),
        episodes,
        "a leader per episode"
    );
}

fn episodes(threads: usize) -> u64 {
    WAITS_PER_CASE / threads as u64
}

fn options(policy: Option<&str>) -> WaitOptions {
    match policy {
        None => WaitOptions::new(),
        Some(name) => WaitOptions::new().policy(name.parse::<Policy>().unwrap()),
    }
}

fn central(threads: usize, policy: Option<&str>) {
    let b = Barrier::with_options(threads, options(policy));
    check(threads, episodes(threads), &|_| {
        Box::new(|| b.wait().is_leader())
    });
}

fn pair(policy: Option<&str>) {
    let b = PairBarrier::with_options(options(policy));
    check(2, episodes(2), &|_| Box::new(|| b.wait().is_leader()));
}

fn tree(threads: usize, fan_in: usize, policy: Option<&str>) {
    let b = TreeBarrier::with_options(threads, fan_in, options(policy));
    check(threads, episodes(threads), &|t| {
        let h = b.handle(t).unwrap();
        Box::new(move || h.wait().is_leader())
    });
}

fn dissemination(threads: usize, policy: Option<&str>) {
    let b = DisseminationBarrier::with_options(threads, options(policy));
    check(threads, episodes(threads), &|t| {
        let h = b.handle(t).unwrap();
        Box::new(move || h.wait().is_leader())
    });
}

/// On the two-socket SMT fixture, threads spread over siblings, cores and
/// sockets (the threads are not pinned: only the tree's shape matters).
fn topology(threads: usize, policy: Option<&str>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../waitwise-platform/tests/fixtures/sysfs-2socket-smt2");
    let topo = Topology::from_sysfs_root(&root).unwrap();
    let cpus = &[0, 8, 1, 4, 12, 9, 5, 2][..threads];
    let b = TopologyBarrier::with_options(&topo, cpus, options(policy)).unwrap();
    check(threads, episodes(threads), &|t| {
        let h = b.handle(t).unwrap();
        Box::new(move || h.wait().is_leader())
    });
}

/// One `#[test]` per row: `name: call;`.
macro_rules! table {
    ($($name:ident: $call:expr;)*) => {
        $(
            #[test]
            fn $name() {
                $call;
            }
        )*
    };
}

table! {
    central_2_default: central(2, None);
    central_3_default: central(3, None);
    central_4_default: central(4, None);
    central_8_default: central(8, None);
    central_2_block: central(2, Some("/b/0"));
    central_4_block: central(4, Some("/b/0"));
    central_4_poll: central(4, Some("s/b/0.62"));
    pair_default: pair(None);
    pair_block: pair(Some("/b/0"));
    tree_2_fan2: tree(2, 2, None);
    tree_3_fan2: tree(3, 2, None);
    tree_4_fan2: tree(4, 2, None);
    tree_8_fan2: tree(8, 2, None);
    tree_8_fan3_poll: tree(8, 3, Some("s/b/0.62"));
    dissemination_2: dissemination(2, None);
    dissemination_3: dissemination(3, None);
    dissemination_4: dissemination(4, None);
    dissemination_8: dissemination(8, None);
    dissemination_8_block: dissemination(8, Some("/b/0"));
    topology_2: topology(2, None);
    topology_3: topology(3, None);
    topology_4: topology(4, None);
    topology_8: topology(8, None);
}

/// More threads than parties (as POSIX allows): `threads` threads share
/// the waits of `episodes(parties)` episodes, each taking one wait at a time
/// from a common count (a thread that ran ahead cannot be left without
/// partners); every episode lets exactly `parties` through, so each has one
/// leader and nobody is stranded.
fn more_threads_than_parties(parties: usize, threads: usize, policy: Option<&str>) {
    let b = Barrier::with_options(parties, options(policy));
    let episodes = episodes(parties);
    let arrivals = AtomicU64::new(episodes * parties as u64);
    let leaders = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                // Relaxed: a count of tickets; the barrier orders the rest.
                while arrivals
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                    .is_ok()
                {
                    if b.wait().is_leader() {
                        // Relaxed: a count, read after the scope joins.
                        leaders.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(leaders.load(Ordering::Relaxed), episodes);
}

#[test]
fn carry_2_parties_6_threads() {
    more_threads_than_parties(2, 6, None);
}

#[test]
fn carry_4_parties_8_threads_blocking() {
    more_threads_than_parties(4, 8, Some("/b/0"));
}

#[test]
fn central_3_parties_6_threads() {
    more_threads_than_parties(3, 6, None);
}
