//! Stress tests for `waitwise::pool::ThreadPool`, with more workers than
//! CPUs: every task runs exactly once under concurrent submitters, nested
//! joins and every idle policy. Validation only; timing is for the
//! benchmark (`cargo run -p waitwise --release --example pool_bench`).
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use waitwise::pool::ThreadPool;
use waitwise::{Mechanism, Policy};

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `submitters` threads each spawn `per` tasks on a pool of `workers`;
/// every task bumps its own counter once.
fn many_submitters(workers: usize, submitters: usize, per: usize, policy: Policy) {
    let pool = Arc::new(
        ThreadPool::builder()
            .workers(workers)
            .policy(policy)
            .build()
            .unwrap(),
    );
    let counts: Arc<Vec<AtomicUsize>> =
        Arc::new((0..submitters * per).map(|_| AtomicUsize::new(0)).collect());
    std::thread::scope(|s| {
        for k in 0..submitters {
            let (pool, counts) = (pool.clone(), counts.clone());
            s.spawn(move || {
                let tasks: Vec<_> = (0..per)
                    .map(|j| {
                        let counts = counts.clone();
                        pool.spawn(move || {
                            counts[k * per + j].fetch_add(1, Ordering::Relaxed);
                        })
                    })
                    .collect();
                for t in tasks {
                    t.join();
                }
            });
        }
    });
    for (i, c) in counts.iter().enumerate() {
        assert_eq!(
            c.load(Ordering::Relaxed),
            1,
            "task {i}, {workers} workers, {policy}"
        );
    }
}

#[test]
fn more_workers_than_cpus_every_task_once() {
    let n = cpus();
    // (workers, submitters, tasks per submitter, policy)
    let table: [(usize, usize, usize, Policy); 6] = [
        (
            2 * n,
            2,
            20_000,
            Policy::for_kind(waitwise::SyncKind::ProducerConsumer),
        ),
        (4 * n, 3, 10_000, Policy::always_block()),
        (
            4 * n,
            3,
            10_000,
            Policy::always_spin_with_timeout(std::time::Duration::from_micros(50)),
        ),
        (
            8 * n,
            4,
            5_000,
            Policy::two_phase(0.5).with_mechanism(Mechanism::Yield),
        ),
        (16 * n, 2, 5_000, Policy::randomized()),
        (1, 4, 5_000, Policy::two_phase(1.0)),
    ];
    for (workers, submitters, per, policy) in table {
        many_submitters(workers, submitters, per, policy);
    }
}

fn tree(pool: &ThreadPool, depth: u32, leaves: &AtomicU64) {
    if depth == 0 {
        leaves.fetch_add(1, Ordering::Relaxed);
        return;
    }
    pool.join(
        || tree(pool, depth - 1, leaves),
        || tree(pool, depth - 1, leaves),
    );
}

#[test]
fn nested_joins_with_more_workers_than_cpus() {
    for workers in [1, cpus() + 1, 8 * cpus()] {
        let pool = ThreadPool::new(workers).unwrap();
        let leaves = AtomicU64::new(0);
        for _ in 0..5 {
            tree(&pool, 12, &leaves);
        }
        assert_eq!(leaves.load(Ordering::Relaxed), 5 << 12, "{workers} workers");
    }
}

#[test]
fn scopes_from_many_threads_at_once() {
    let pool = ThreadPool::new(4 * cpus()).unwrap();
    let total = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for round in 0..200u64 {
                    pool.scope(|sc| {
                        for i in 0..20u64 {
                            let total = &total;
                            sc.spawn(move || {
                                total.fetch_add(round * 20 + i, Ordering::Relaxed);
                            });
                        }
                    });
                }
            });
        }
    });
    // 4 threads x sum over 0..4000
    assert_eq!(total.load(Ordering::Relaxed), 4 * (3999 * 4000 / 2));
}

#[test]
fn pools_built_and_dropped_repeatedly() {
    for i in 0..200 {
        let pool = ThreadPool::new(1 + i % (3 * cpus())).unwrap();
        let t = pool.spawn(move || i * 3);
        if i % 2 == 0 {
            assert_eq!(t.join(), i * 3);
        } else {
            drop(t);
        }
    }
}

/// Joins whose first half is slow, so that another worker usually takes
/// the second half from the queue and the caller waits for it (the
/// stack-job wait and wake-up), mixed with halves taken back.
#[test]
fn joins_whose_other_half_is_stolen() {
    fn spin_us(us: u64) {
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_micros(us) {
            std::hint::spin_loop();
        }
    }
    for workers in [2, 3 * cpus()] {
        let pool = ThreadPool::new(workers).unwrap();
        let hits = AtomicU64::new(0);
        for i in 0..2_000u64 {
            let (a, b) = pool.join(
                || {
                    spin_us(i % 7);
                    hits.fetch_add(1, Ordering::Relaxed);
                    i
                },
                || {
                    hits.fetch_add(1, Ordering::Relaxed);
                    vec![i; 3]
                },
            );
            assert_eq!((a, b), (i, vec![i; 3]));
        }
        assert_eq!(hits.load(Ordering::Relaxed), 4_000);
    }
}

/// Tasks that spawn tasks from inside the pool (pushes on the spawning
/// worker's own deque, stolen by the others or popped back), small
/// closures that travel inside the job and large ones that are boxed,
/// while outside threads inject more: every task runs exactly once.
#[test]
fn spawns_from_workers_are_stolen_or_run_by_their_owner_once() {
    // (workers, outside threads, scopes per thread, tasks per scope)
    let table = [
        (2 * cpus(), 2, 200, 8),
        (4 * cpus(), 3, 100, 16),
        (1, 2, 100, 8),
    ];
    for (workers, threads, scopes, per) in table {
        let pool = ThreadPool::new(workers).unwrap();
        let n = threads * scopes * per;
        let small: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        let large: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|s| {
            for k in 0..threads {
                let (pool, small, large) = (&pool, &small, &large);
                s.spawn(move || {
                    for r in 0..scopes {
                        pool.install(|| {
                            pool.scope(|sc| {
                                for j in 0..per {
                                    let i = (k * scopes + r) * per + j;
                                    // 16 bytes: inline.
                                    sc.spawn(move || {
                                        small[i].fetch_add(1, Ordering::Relaxed);
                                    });
                                    // 48 bytes of captures: boxed.
                                    let pad = [i as u64; 4];
                                    sc.spawn(move || {
                                        let i = pad.iter().sum::<u64>() as usize / 4;
                                        large[i].fetch_add(1, Ordering::Relaxed);
                                    });
                                }
                            })
                        });
                    }
                });
            }
        });
        for (i, (a, b)) in small.iter().zip(&large).enumerate() {
            assert_eq!(
                (a.load(Ordering::Relaxed), b.load(Ordering::Relaxed)),
                (1, 1),
                "task {i}, {workers} workers"
            );
        }
    }
}

/// Pools of many workers (several words of idle bits) under bursts from
/// outside with idle gaps between them, so that workers go idle, poll,
/// park and are claimed again in every state.
#[test]
fn bursts_to_a_pool_of_many_workers_every_task_once() {
    let pool = ThreadPool::builder()
        .workers(70)
        .policy(Policy::two_phase(0.1))
        .build()
        .unwrap();
    let counts: Arc<Vec<AtomicUsize>> =
        Arc::new((0..20 * 300).map(|_| AtomicUsize::new(0)).collect());
    for burst in 0..20 {
        let tasks: Vec<_> = (0..300)
            .map(|j| {
                let counts = counts.clone();
                pool.spawn(move || {
                    counts[burst * 300 + j].fetch_add(1, Ordering::Relaxed);
                })
            })
            .collect();
        for t in tasks {
            t.join();
        }
        std::thread::sleep(std::time::Duration::from_micros(200 * (burst % 3) as u64));
    }
    assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
}

/// Workers that join tasks they spawned (the task's wait searches and
/// steals while the policy polls, then blocks on the task's word), with
/// more workers than CPUs and every kind of idle policy.
#[test]
fn workers_joining_their_own_tasks_under_every_policy() {
    fn fib(pool: &Arc<ThreadPool>, n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let p = pool.clone();
        let t = pool.spawn(move || fib(&p, n - 1));
        let b = fib(pool, n - 2);
        t.join() + b
    }
    let policies = [
        Policy::for_kind(waitwise::SyncKind::ProducerConsumer),
        Policy::always_block(),
        Policy::always_spin_with_timeout(std::time::Duration::from_micros(20)),
        Policy::two_phase(0.5).with_mechanism(Mechanism::Yield),
    ];
    for (k, policy) in policies.into_iter().enumerate() {
        let workers = [2 * cpus(), 4 * cpus(), 1, cpus() + 1][k];
        let pool = Arc::new(
            ThreadPool::builder()
                .workers(workers)
                .policy(policy)
                .build()
                .unwrap(),
        );
        let r = pool.install(|| fib(&pool, 16));
        assert_eq!(r, 987, "{workers} workers, {policy}");
    }
}
