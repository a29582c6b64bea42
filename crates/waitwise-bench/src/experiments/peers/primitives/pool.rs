//! The pool workload: one submitter runs fork-join trees on a pool of
//! `threads` workers until the run's end: a Fibonacci-shaped recursion of
//! `join`s of depth [`TREE_DEPTH`] whose leaves work `cs`. Each tree is
//! timed; the throughput counts trees. A fresh pool per run.

use super::super::grid::Point;
use super::super::hints::spin;
use super::super::wait_log::{RunLog, ThreadLog};
use super::{Contender, RunSettings};
use crate::contender::Family;
use std::time::Instant;
use waitwise::pool::ThreadPool;

/// waitwise's `ThreadPool`, then rayon.
pub const CONTENDERS: [Contender; 2] = [
    Contender {
        name: "waitwise::pool",
        family: Family::Waitwise,
    },
    Contender {
        name: "rayon",
        family: Family::Peer,
    },
];

/// Depth of one tree: 233 leaves and 232 joins (`fib(13)`). Guessed: tens
/// of µs a tree with empty leaves, so a run holds hundreds of trees.
pub const TREE_DEPTH: u32 = 12;

/// Runs contender `which` at `p`.
pub fn run(which: usize, p: &Point, s: &RunSettings) -> RunLog {
    let workers = p.threads.max(1);
    let leaf = s.cs_hints(p);
    match which {
        0 => {
            let pool = ThreadPool::new(workers).expect("the waitwise pool starts");
            submit(s, || pool.install(|| tree(&pool, TREE_DEPTH, leaf)))
        }
        _ => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(workers)
                .build()
                .expect("the rayon pool starts");
            submit(s, || pool.install(|| rayon_tree(TREE_DEPTH, leaf)))
        }
    }
}

/// Runs `one_tree` back to back until the run's end, timing each.
fn submit(s: &RunSettings, one_tree: impl Fn() -> u64) -> RunLog {
    let start = Instant::now();
    let mut log = ThreadLog::start(false, s.run);
    while log.running() {
        std::hint::black_box(log.timed(&one_tree));
        log.ops += 1;
    }
    RunLog {
        threads: vec![log],
        wall: start.elapsed(),
    }
}

/// A Fibonacci-shaped tree of `pool.join`s; returns its leaves.
fn tree(pool: &ThreadPool, depth: u32, leaf: u32) -> u64 {
    if depth < 2 {
        spin(leaf);
        return 1;
    }
    let (a, b) = pool.join(
        || tree(pool, depth - 1, leaf),
        || tree(pool, depth - 2, leaf),
    );
    a + b
}

/// The same tree on rayon's `join`.
fn rayon_tree(depth: u32, leaf: u32) -> u64 {
    if depth < 2 {
        spin(leaf);
        return 1;
    }
    let (a, b) = rayon::join(
        || rayon_tree(depth - 1, leaf),
        || rayon_tree(depth - 2, leaf),
    );
    a + b
}
