//! Correctness of `waitwise::pool::ThreadPool`: every task runs exactly
//! once, panics reach the caller, scoped borrows end before the scope
//! returns, nested joins on few workers finish, gated SMT siblings never
//! strand work.
#![cfg(not(loom))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use waitwise::pool::{ThreadPool, Tier, WorkerPlace};
use waitwise::Policy;

fn policies() -> [Policy; 3] {
    [
        Policy::for_kind(waitwise::SyncKind::ProducerConsumer),
        Policy::always_spin(),
        Policy::always_block(),
    ]
}

#[test]
fn every_spawned_task_runs_exactly_once() {
    for policy in policies() {
        let pool = ThreadPool::builder()
            .workers(3)
            .policy(policy)
            .build()
            .unwrap();
        let n = 5_000;
        let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
        let tasks: Vec<_> = (0..n)
            .map(|i| {
                let counts = counts.clone();
                pool.spawn(move || {
                    counts[i].fetch_add(1, Ordering::Relaxed);
                    i
                })
            })
            .collect();
        for (i, t) in tasks.into_iter().enumerate() {
            assert_eq!(t.join(), i);
        }
        assert!(
            counts.iter().all(|c| c.load(Ordering::Relaxed) == 1),
            "{policy}"
        );
    }
}

#[test]
fn scoped_tasks_run_once_and_their_borrows_end_with_the_scope() {
    let pool = ThreadPool::new(2).unwrap();
    let mut data = vec![0u64; 1000];
    pool.scope(|s| {
        for (i, x) in data.iter_mut().enumerate() {
            s.spawn(move || {
                if i % 100 == 0 {
                    // Slow tasks: the scope must still wait for them.
                    std::thread::sleep(Duration::from_millis(2));
                }
                *x += i as u64 + 1;
            });
        }
    });
    // Written exactly once each, and all before the scope returned.
    assert!(data.iter().enumerate().all(|(i, &x)| x == i as u64 + 1));
}

#[test]
fn nested_spawns_in_a_scope_finish_before_it_returns() {
    let pool = ThreadPool::new(2).unwrap();
    let hits = AtomicUsize::new(0);
    pool.scope(|s| {
        for _ in 0..10 {
            s.spawn(|| {
                for _ in 0..10 {
                    s.spawn(|| {
                        std::thread::sleep(Duration::from_micros(200));
                        hits.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    assert_eq!(hits.load(Ordering::Relaxed), 100);
}

fn sum(pool: &ThreadPool, v: &[u64]) -> u64 {
    if v.len() <= 16 {
        return v.iter().sum();
    }
    let (l, r) = v.split_at(v.len() / 2);
    let (a, b) = pool.join(|| sum(pool, l), || sum(pool, r));
    a + b
}

#[test]
fn deep_joins_finish_on_one_worker_and_on_many() {
    let v: Vec<u64> = (0..20_000).collect();
    for workers in [1, 2, 8] {
        let pool = ThreadPool::new(workers).unwrap();
        // From outside the pool, and from inside a task.
        assert_eq!(sum(&pool, &v), 199_990_000);
        let mut inside = 0;
        pool.scope(|s| {
            let (out, pool, v) = (&mut inside, &pool, &v);
            s.spawn(move || *out = sum(pool, v));
        });
        assert_eq!(inside, 199_990_000);
    }
}

/// A thread outside the pool waits for what it submitted with the
/// producer-consumer default, `adapt/b`, which learns how long the pool's
/// work takes (module `thread_pool`, "Waiting outside the pool"); once
/// the workers outnumber the CPUs, with the static limit by yield; a
/// policy given to the pool is used as given there too.
#[test]
fn a_submitter_outside_the_pool_waits_adaptively_unless_told() {
    let default = ThreadPool::new(2).unwrap();
    assert_eq!(
        default.outside_policy().name(),
        waitwise::Policy::default_for(waitwise::SyncKind::ProducerConsumer).name()
    );
    let cpus = waitwise::policy::crowding::allowed_cpus();
    // With as many workers as CPUs the submitter beside them polls by
    // yield, and still learns.
    let matched = ThreadPool::new(cpus).unwrap();
    assert_eq!(
        matched.outside_policy().name(),
        waitwise::Policy::default_for(waitwise::SyncKind::ProducerConsumer).name()
    );
    assert_eq!(
        matched.outside_policy().mechanism(),
        waitwise::Mechanism::Yield
    );
    let crowded = ThreadPool::new(cpus + 1).unwrap();
    assert_eq!(
        *crowded.outside_policy(),
        waitwise::Policy::for_kind(waitwise::SyncKind::ProducerConsumer)
            .with_mechanism(waitwise::Mechanism::Yield)
    );
    assert_eq!(
        crowded.outside_policy().mechanism(),
        waitwise::Mechanism::Yield
    );
    assert_eq!(default.install(|| 6 * 7), 42);
    let told = waitwise::Policy::two_phase(0.5);
    let explicit = ThreadPool::builder()
        .workers(2)
        .policy(told)
        .build()
        .unwrap();
    assert_eq!(*explicit.outside_policy(), told);
    assert_eq!(*explicit.policy(), told);
    assert_eq!(explicit.install(|| 6 * 7), 42);
}

/// The default waiting, once the workers outnumber the CPUs the process
/// may use: idle workers poll by yield, and a worker waiting for its own
/// work sleeps as soon as it finds nothing to run (module `thread_pool`,
/// `Inner::polls_while_waiting`); the deep joins above run on such a pool
/// too (8 workers).
#[test]
fn a_pool_with_more_workers_than_cpus_polls_by_yield() {
    let cpus = waitwise::policy::crowding::allowed_cpus();
    let crowded = ThreadPool::new(cpus + 1).unwrap();
    assert_eq!(crowded.policy().mechanism(), waitwise::Mechanism::Yield);
    let v: Vec<u64> = (0..20_000).collect();
    assert_eq!(sum(&crowded, &v), 199_990_000);
}

/// Idle workers count one thread outside the pool waiting for its work
/// beside them (module `thread_pool`, "Waiting outside the pool"): with
/// as many workers as CPUs they poll by yield; with one fewer they and
/// the waiter fit, and poll as the default does. The deep joins run on
/// the matched pool.
#[test]
fn idle_workers_count_the_submitter_waiting_outside() {
    let cpus = waitwise::policy::crowding::allowed_cpus();
    let matched = ThreadPool::new(cpus).unwrap();
    assert_eq!(matched.policy().mechanism(), waitwise::Mechanism::Yield);
    if cpus > 1 {
        let fitting = ThreadPool::new(cpus - 1).unwrap();
        assert_ne!(fitting.policy().mechanism(), waitwise::Mechanism::Yield);
        assert_ne!(
            fitting.outside_policy().mechanism(),
            waitwise::Mechanism::Yield
        );
    }
    let v: Vec<u64> = (0..20_000).collect();
    assert_eq!(sum(&matched, &v), 199_990_000);
}

#[test]
fn a_task_panic_reaches_its_joiner() {
    let pool = ThreadPool::new(2).unwrap();
    let t = pool.spawn(|| -> u32 { panic!("boom in a task") });
    let err = catch_unwind(AssertUnwindSafe(|| t.join())).unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"boom in a task"));
    // The worker survived: the pool still runs tasks.
    assert_eq!(pool.spawn(|| 5).join(), 5);
}

#[test]
fn a_scoped_panic_reaches_the_caller_after_every_task_finished() {
    let pool = ThreadPool::new(2).unwrap();
    let done = AtomicUsize::new(0);
    let err = catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|| panic!("scoped boom"));
            for _ in 0..20 {
                s.spawn(|| {
                    std::thread::sleep(Duration::from_micros(500));
                    done.fetch_add(1, Ordering::Relaxed);
                });
            }
        })
    }))
    .unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"scoped boom"));
    assert_eq!(done.load(Ordering::Relaxed), 20);
    // The closure's own panic wins over a task's, and tasks still finish.
    let err = catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|| panic!("task"));
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(1));
                done.fetch_add(1, Ordering::Relaxed);
            });
            panic!("closure");
        })
    }))
    .unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"closure"));
    assert_eq!(done.load(Ordering::Relaxed), 21);
}

#[test]
fn join_resumes_the_panic_of_either_side() {
    let pool = ThreadPool::new(2).unwrap();
    let err = catch_unwind(AssertUnwindSafe(|| {
        pool.join(|| 1, || -> u8 { panic!("b side") })
    }))
    .unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"b side"));
    let err = catch_unwind(AssertUnwindSafe(|| {
        pool.join(|| -> u8 { panic!("a side") }, || 2)
    }))
    .unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"a side"));
}

#[test]
fn dropping_the_pool_runs_the_queued_tasks() {
    let ran = Arc::new(AtomicUsize::new(0));
    {
        let pool = ThreadPool::builder().workers(1).build().unwrap();
        for _ in 0..100 {
            let ran = ran.clone();
            drop(pool.spawn(move || {
                std::thread::sleep(Duration::from_micros(100));
                ran.fetch_add(1, Ordering::Relaxed);
            }));
        }
    }
    assert_eq!(ran.load(Ordering::Relaxed), 100);
}

#[test]
fn zero_workers_and_bad_places_are_errors() {
    assert!(ThreadPool::new(0).is_err());
    let sibling_first = vec![
        WorkerPlace {
            cpu: None,
            tier: Tier::Sibling,
        },
        WorkerPlace {
            cpu: None,
            tier: Tier::Core,
        },
    ];
    assert!(ThreadPool::builder()
        .with_places(sibling_first)
        .build()
        .is_err());
}

#[test]
fn default_placement_is_cores_first() {
    let pool = ThreadPool::new(3).unwrap();
    let tiers: Vec<Tier> = pool.placement().iter().map(|p| p.tier).collect();
    let mut sorted = tiers.clone();
    sorted.sort_by_key(|t| *t as u8);
    assert_eq!(tiers, sorted);
    assert_eq!(tiers[0], Tier::Core);
    assert!((pool.sibling_threshold() - 0.504).abs() < 0.01);
}

/// A core worker and two gated siblings: with the gate closed (the spill is
/// far below the threshold here) the siblings stay parked, and the core
/// worker runs every task.
#[test]
fn gated_siblings_never_strand_work() {
    let places = vec![
        WorkerPlace {
            cpu: None,
            tier: Tier::Core,
        },
        WorkerPlace {
            cpu: None,
            tier: Tier::Sibling,
        },
        WorkerPlace {
            cpu: None,
            tier: Tier::Sibling,
        },
    ];
    for t2 in [1.0, 1.33, 2.0] {
        let pool = ThreadPool::builder()
            .with_places(places.clone())
            .smt_pair_throughput(t2)
            .build()
            .unwrap();
        let n = AtomicUsize::new(0);
        pool.scope(|s| {
            for _ in 0..2_000 {
                s.spawn(|| {
                    n.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
        assert_eq!(n.load(Ordering::Relaxed), 2_000);
        let tasks: Vec<_> = (0..200u64).map(|i| pool.spawn(move || i * 2)).collect();
        let total: u64 = tasks.into_iter().map(|t| t.join()).sum();
        assert_eq!(total, 39_800);
    }
}

#[test]
fn an_idle_pool_goes_idle() {
    let pool = ThreadPool::new(2).unwrap();
    assert_eq!(pool.spawn(|| 1).join(), 1);
    while !pool.all_idle() {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(pool.any_idle());
}

/// A task's captures are dropped exactly once, whether the closure
/// travels inside the job (small) or boxed (large), and whether it runs on
/// a worker handed it directly or one that took it from a queue.
#[test]
fn small_and_large_closures_drop_their_captures_once() {
    let pool = ThreadPool::new(2).unwrap();
    let token = Arc::new(());
    let tasks: Vec<_> = (0..1_000u64)
        .map(|i| {
            let t = token.clone();
            if i % 2 == 0 {
                pool.spawn(move || Arc::strong_count(&t) > 0)
            } else {
                let pad = [i; 8];
                pool.spawn(move || Arc::strong_count(&t) > 0 && pad[7] == i)
            }
        })
        .collect();
    assert!(tasks.into_iter().all(|t| t.join()));
    assert_eq!(Arc::strong_count(&token), 1);
}

/// A worker of one pool running another pool's scope and join is an
/// owner outside that pool (it sleeps on the pool's shared outside word):
/// every task still runs once and every wait ends, with several such
/// owners at once.
#[test]
fn scopes_and_joins_from_another_pools_workers() {
    let outer = ThreadPool::new(3).unwrap();
    let inner = ThreadPool::new(2).unwrap();
    let total = AtomicUsize::new(0);
    outer.scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..50 {
                    inner.scope(|t| {
                        for _ in 0..4 {
                            t.spawn(|| {
                                total.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    });
                    let (a, b) = inner.join(|| 1, || 2);
                    total.fetch_add(a + b, Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(total.load(Ordering::Relaxed), 3 * 50 * (4 + 3));
}
