//! The pool while other programs want the CPUs: an idle worker then
//! searches by yielding before it goes idle, for as long as its yields
//! come back quickly (`thread_pool.rs`, "A busy machine"). The machine's
//! demand is pinned to busy for the whole test process (`force_demand`),
//! so the search runs whatever the machine's real load; with more workers
//! than CPUs, every task still runs exactly once, and an idle pool still
//! stops using the CPUs. Validation only; timing is for
//! `waitwise peers --only pool`.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use waitwise::policy::idle_extension::{force_demand, CpuDemand};
use waitwise::pool::ThreadPool;

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn busy_machine() {
    force_demand(Some(CpuDemand::Busy));
}

/// A Fibonacci-shaped tree of joins; counts its leaves.
fn tree(pool: &ThreadPool, depth: u32, leaves: &AtomicU64) {
    if depth < 2 {
        leaves.fetch_add(1, Ordering::Relaxed);
        return;
    }
    pool.join(
        || tree(pool, depth - 1, leaves),
        || tree(pool, depth - 2, leaves),
    );
}

/// The leaves of `tree(depth)`: fib(depth + 1).
fn leaves_of(depth: u32) -> u64 {
    let (mut a, mut b) = (1u64, 1u64);
    for _ in 1..depth {
        (a, b) = (b, a + b);
    }
    b
}

#[test]
fn trees_submitted_one_after_another_count_every_leaf() {
    busy_machine();
    for workers in [1, 2, cpus() * 4] {
        let pool = ThreadPool::new(workers).unwrap();
        for depth in [1, 2, 8, 12] {
            for _ in 0..50 {
                let leaves = AtomicU64::new(0);
                pool.install(|| tree(&pool, depth, &leaves));
                assert_eq!(
                    leaves.load(Ordering::Relaxed),
                    leaves_of(depth),
                    "depth {depth}, {workers} workers"
                );
            }
        }
    }
}

#[test]
fn tasks_from_many_submitters_with_gaps_run_once() {
    busy_machine();
    let (submitters, per) = (cpus() * 2, 300);
    let pool = ThreadPool::new(cpus() * 2).unwrap();
    let runs: Vec<AtomicUsize> = (0..submitters * per).map(|_| AtomicUsize::new(0)).collect();
    std::thread::scope(|s| {
        for chunk in runs.chunks(per) {
            let pool = &pool;
            s.spawn(move || {
                for (j, slot) in chunk.iter().enumerate() {
                    // One task per scope: it ends before the next starts.
                    pool.scope(|t| {
                        t.spawn(move || {
                            slot.fetch_add(1, Ordering::Relaxed);
                        })
                    });
                    // Now and then a gap: the workers run out of work,
                    // search by yielding, then go idle.
                    if j % 50 == 49 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            });
        }
    });
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.load(Ordering::Relaxed), 1, "task {i}");
    }
}

#[test]
fn scopes_and_broadcasts_reach_every_worker_while_they_search_by_yielding() {
    busy_machine();
    let workers = cpus() * 3;
    let pool = ThreadPool::new(workers).unwrap();
    for round in 0..200 {
        let sum = AtomicUsize::new(0);
        pool.scope(|s| {
            for i in 0..16 {
                let sum = &sum;
                s.spawn(move || {
                    sum.fetch_add(i, Ordering::Relaxed);
                });
            }
        });
        assert_eq!(sum.load(Ordering::Relaxed), (0..16).sum(), "round {round}");
        let seen: Vec<usize> = pool.broadcast(|ctx| ctx.index());
        assert_eq!(seen, (0..workers).collect::<Vec<_>>(), "round {round}");
    }
}

/// The time on a CPU of this process's threads whose name starts with
/// `prefix` (`/proc/self/task/*/schedstat`), or `None` where the kernel
/// does not say.
fn cpu_time_of_threads(prefix: &str) -> Option<Duration> {
    let mut total = 0u64;
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        let dir = entry.ok()?.path();
        let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
        if !comm.starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

#[test]
fn an_idle_pool_stops_using_the_cpus_after_its_yielding_search() {
    busy_machine();
    let pool = ThreadPool::builder()
        .workers(cpus() * 2)
        .thread_name("busy-idle")
        .build()
        .unwrap();
    let leaves = AtomicU64::new(0);
    pool.install(|| tree(&pool, 12, &leaves));
    assert_eq!(leaves.load(Ordering::Relaxed), leaves_of(12));
    // Every worker has run out of work: its yielding search (at most 32
    // yields), then its idle policy's polling (bounded by the block cost
    // and the idle extension's cap) end well within this.
    std::thread::sleep(Duration::from_millis(500));
    let Some(before) = cpu_time_of_threads("busy-idle") else {
        eprintln!("no per-thread CPU times here: the idle check is skipped");
        return;
    };
    let window = Duration::from_millis(300);
    std::thread::sleep(window);
    let used = cpu_time_of_threads("busy-idle").unwrap() - before;
    assert!(
        used < window / 10,
        "the idle workers used {used:?} of CPU in {window:?}"
    );
}
