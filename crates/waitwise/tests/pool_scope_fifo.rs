//! rayon-core's `scope/test.rs` order tests for FIFO scopes
//! (`pool/scope_fifo.rs`), ported: a one-worker pool, so no task is
//! stolen and the order is the pool's alone. rayon's tasks take the scope
//! as an argument; here they capture it. Named after rayon's tests.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use waitwise::pool::ThreadPool;

fn one_worker() -> ThreadPool {
    ThreadPool::new(1).unwrap()
}

/// rayon's `test_order!(scope_fifo => spawn_fifo)`: ten tasks, each
/// spawning ten more into the same scope.
fn fifo_tree_order() -> Vec<i32> {
    let pool = one_worker();
    pool.install(|| {
        let vec = Mutex::new(vec![]);
        pool.scope_fifo(|scope| {
            let vec = &vec;
            for i in 0..10 {
                scope.spawn_fifo(move || {
                    for j in 0..10 {
                        scope.spawn_fifo(move || vec.lock().unwrap().push(i * 10 + j));
                    }
                });
            }
        });
        vec.into_inner().unwrap()
    })
}

#[test]
fn fifo_order() {
    assert_eq!(fifo_tree_order(), (0..100).collect::<Vec<i32>>());
}

#[test]
fn nested_fifo_order() {
    let pool = one_worker();
    let vec = pool.install(|| {
        let vec = Mutex::new(vec![]);
        pool.scope_fifo(|scope| {
            let vec = &vec;
            for i in 0..10 {
                let pool = &pool;
                scope.spawn_fifo(move || {
                    pool.scope_fifo(|scope| {
                        for j in 0..10 {
                            scope.spawn_fifo(move || vec.lock().unwrap().push(i * 10 + j));
                        }
                    });
                });
            }
        });
        vec.into_inner().unwrap()
    });
    assert_eq!(vec, (0..100).collect::<Vec<i32>>());
}

#[test]
fn nested_lifo_fifo_order() {
    let pool = one_worker();
    let vec = pool.install(|| {
        let vec = Mutex::new(vec![]);
        pool.scope(|scope| {
            let vec = &vec;
            for i in 0..10 {
                let pool = &pool;
                scope.spawn(move || {
                    pool.scope_fifo(|scope| {
                        for j in 0..10 {
                            scope.spawn_fifo(move || vec.lock().unwrap().push(i * 10 + j));
                        }
                    });
                });
            }
        });
        vec.into_inner().unwrap()
    });
    let expected: Vec<i32> = (0..10)
        .rev()
        .flat_map(|i| (0..10).map(move |j| i * 10 + j))
        .collect();
    assert_eq!(vec, expected);
}

#[test]
fn nested_fifo_lifo_order() {
    let pool = one_worker();
    let vec = pool.install(|| {
        let vec = Mutex::new(vec![]);
        pool.scope_fifo(|scope| {
            let vec = &vec;
            for i in 0..10 {
                let pool = &pool;
                scope.spawn_fifo(move || {
                    pool.scope(|scope| {
                        for j in 0..10 {
                            scope.spawn(move || vec.lock().unwrap().push(i * 10 + j));
                        }
                    });
                });
            }
        });
        vec.into_inner().unwrap()
    });
    let expected: Vec<i32> = (0..10)
        .flat_map(|i| (0..10).rev().map(move |j| i * 10 + j))
        .collect();
    assert_eq!(vec, expected);
}

/// rayon's `test_mixed_order!`: pushes interleaved between an outer and
/// an inner scope, negative values from the inner one.
#[test]
fn mixed_fifo_order() {
    let pool = one_worker();
    let vec = pool.install(|| {
        let vec = Mutex::new(vec![]);
        pool.scope_fifo(|outer| {
            let vec = &vec;
            outer.spawn_fifo(move || vec.lock().unwrap().push(0));
            pool.scope_fifo(|inner| {
                inner.spawn_fifo(move || vec.lock().unwrap().push(-1));
                outer.spawn_fifo(move || vec.lock().unwrap().push(1));
                inner.spawn_fifo(move || vec.lock().unwrap().push(-2));
                outer.spawn_fifo(move || vec.lock().unwrap().push(2));
                inner.spawn_fifo(move || vec.lock().unwrap().push(-3));
            });
            outer.spawn_fifo(move || vec.lock().unwrap().push(3));
        });
        vec.into_inner().unwrap()
    });
    assert_eq!(vec, [-1, 0, -2, 1, -3, 2, 3]);
}

#[test]
fn mixed_fifo_lifo_order() {
    let pool = one_worker();
    let vec = pool.install(|| {
        let vec = Mutex::new(vec![]);
        pool.scope_fifo(|outer| {
            let vec = &vec;
            outer.spawn_fifo(move || vec.lock().unwrap().push(0));
            pool.scope(|inner| {
                inner.spawn(move || vec.lock().unwrap().push(-1));
                outer.spawn_fifo(move || vec.lock().unwrap().push(1));
                inner.spawn(move || vec.lock().unwrap().push(-2));
                outer.spawn_fifo(move || vec.lock().unwrap().push(2));
                inner.spawn(move || vec.lock().unwrap().push(-3));
            });
            outer.spawn_fifo(move || vec.lock().unwrap().push(3));
        });
        vec.into_inner().unwrap()
    });
    assert_eq!(vec, [-3, 0, -2, 1, -1, 2, 3]);
}

/// rayon's `static_scope_fifo`: tasks that borrow only statics, through
/// the global pool's free function.
#[test]
fn static_scope_fifo() {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let mut range = 0..100;
    let sum: usize = range.clone().sum();
    let iter = &mut range;
    COUNTER.store(0, Ordering::Relaxed);
    waitwise::pool::scope_fifo(|s| {
        for i in iter {
            s.spawn_fifo(move || {
                COUNTER.fetch_add(i, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(COUNTER.load(Ordering::Relaxed), sum);
}

/// rayon's `panic_propagate_spawn`, for a FIFO scope: a task's panic
/// reaches the caller after every task ran.
#[test]
fn panic_propagate_spawn_fifo() {
    let ran = AtomicUsize::new(0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        waitwise::pool::scope_fifo(|s| {
            s.spawn_fifo(|| panic!("Hello, world!"));
            for _ in 0..10 {
                s.spawn_fifo(|| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
        })
    }));
    assert!(r.is_err());
    assert_eq!(ran.load(Ordering::Relaxed), 10);
}
