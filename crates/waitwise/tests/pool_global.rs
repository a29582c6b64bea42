//! rayon-core's tests of its free functions (`join/test.rs`,
//! `scope/test.rs`), ported to waitwise's (`pool/global.rs`): on the
//! global pool from a plain thread, on the calling worker's pool inside
//! `install`. Named after rayon's tests; rayon's random data is a fixed
//! xorshift sequence here. Also: a broadcast from a stolen `join` half
//! while the joining worker sleeps (its share must still run).
#![cfg(not(loom))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use waitwise::pool::{self, join, scope, ThreadPool};

fn quick_sort<T: PartialOrd + Send>(v: &mut [T]) {
    if v.len() <= 1 {
        return;
    }
    let mid = partition(v);
    let (lo, hi) = v.split_at_mut(mid);
    join(|| quick_sort(lo), || quick_sort(hi));
}

fn partition<T: PartialOrd + Send>(v: &mut [T]) -> usize {
    let pivot = v.len() - 1;
    let mut i = 0;
    for j in 0..pivot {
        if v[j] <= v[pivot] {
            v.swap(i, j);
            i += 1;
        }
    }
    v.swap(i, pivot);
    i
}

fn data(n: usize) -> Vec<u32> {
    let mut x = 0x2545_f491u32;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect()
}

#[test]
fn sort() {
    let mut data = data(6 * 1024);
    let mut sorted_data = data.clone();
    sorted_data.sort();
    quick_sort(&mut data);
    assert_eq!(data, sorted_data);
}

#[test]
fn sort_in_pool() {
    let mut data = data(12 * 1024);
    let pool = ThreadPool::builder().workers(3).pin(false).build().unwrap();
    let mut sorted_data = data.clone();
    sorted_data.sort();
    pool.install(|| quick_sort(&mut data));
    assert_eq!(data, sorted_data);
}

#[test]
#[should_panic(expected = "Hello, world!")]
fn panic_propagate_a() {
    join(|| panic!("Hello, world!"), || ());
}

#[test]
#[should_panic(expected = "Hello, world!")]
fn panic_propagate_b() {
    join(|| (), || panic!("Hello, world!"));
}

#[test]
#[should_panic(expected = "Hello, world!")]
fn panic_propagate_both() {
    join(|| panic!("Hello, world!"), || panic!("Goodbye, world!"));
}

#[test]
fn panic_b_still_executes() {
    let mut x = false;
    match catch_unwind(AssertUnwindSafe(|| {
        join(|| panic!("Hello, world!"), || x = true)
    })) {
        Ok(_) => panic!("failed to propagate panic from closure A,"),
        Err(_) => assert!(x, "closure b failed to execute"),
    }
}

#[test]
fn scope_empty() {
    scope(|_| {});
}

#[test]
fn scope_result() {
    let x = scope(|_| 22);
    assert_eq!(x, 22);
}

#[test]
fn scope_two() {
    let counter = &AtomicUsize::new(0);
    scope(|s| {
        s.spawn(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        s.spawn(move || {
            counter.fetch_add(10, Ordering::SeqCst);
        });
    });
    assert_eq!(counter.load(Ordering::SeqCst), 11);
}

#[test]
fn static_scope() {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let mut range = 0..100;
    let sum: usize = range.clone().sum();
    let iter = &mut range;
    COUNTER.store(0, Ordering::Relaxed);
    scope(|s| {
        for i in iter {
            s.spawn(move || {
                COUNTER.fetch_add(i, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(COUNTER.load(Ordering::Relaxed), sum);
}

/// rayon's `spawn` free function: detached, on the global pool.
#[test]
fn spawn_then_join_mutex() {
    let (tx, rx) = channel();
    for i in 0..10 {
        let tx = tx.clone();
        pool::spawn(move || tx.send(i).unwrap());
    }
    drop(tx);
    let mut v: Vec<i32> = rx.into_iter().collect();
    v.sort_unstable();
    assert_eq!(v, (0..10).collect::<Vec<_>>());
}

/// The free functions run on the calling worker's pool.
#[test]
fn free_functions_use_the_current_pool() {
    let pool = ThreadPool::builder().workers(3).pin(false).build().unwrap();
    let (n, index) = pool.install(|| (pool::current_num_threads(), pool::current_thread_index()));
    assert_eq!(n, 3);
    assert!(index.is_some_and(|i| i < 3));
    assert_eq!(pool::current_thread_index(), None);
    let v = pool.install(|| pool::broadcast(|ctx| ctx.num_threads()));
    assert_eq!(v, [3, 3, 3]);
}

/// A `join` whose second half is stolen and broadcasts: the broadcast
/// needs a share from the joining worker, which waits for that half (and
/// may sleep); it runs its share while it waits.
#[test]
fn broadcast_from_a_stolen_join_half() {
    let pool = ThreadPool::builder().workers(2).pin(false).build().unwrap();
    for _ in 0..100 {
        let (a, b) = pool.install(|| {
            join(
                || 1,
                || {
                    // Stolen, and late: the joining worker is asleep.
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    pool::broadcast(|ctx| ctx.index())
                },
            )
        });
        assert_eq!((a, b), (1, vec![0, 1]));
    }
}

#[test]
fn join_context_both() {
    // Not in a pool: both halves are injected, so both migrated.
    let (a_migrated, b_migrated) = pool::join_context(|a| a.migrated(), |b| b.migrated());
    assert!(a_migrated);
    assert!(b_migrated);
}

#[test]
fn join_context_neither() {
    // In a 1-thread pool, neither half is stolen.
    let pool = ThreadPool::new(1).unwrap();
    let (a_migrated, b_migrated) =
        pool.install(|| pool::join_context(|a| a.migrated(), |b| b.migrated()));
    assert!(!a_migrated);
    assert!(!b_migrated);
}

#[test]
fn join_context_second() {
    use std::sync::Barrier;
    // In a 2-thread pool, the second half must be stolen for both halves
    // to pass the barrier.
    let barrier = Barrier::new(2);
    let pool = ThreadPool::builder().workers(2).pin(false).build().unwrap();
    let (a_migrated, b_migrated) = pool.install(|| {
        pool::join_context(
            |a| {
                barrier.wait();
                a.migrated()
            },
            |b| {
                barrier.wait();
                b.migrated()
            },
        )
    });
    assert!(!a_migrated);
    assert!(b_migrated);
}

/// rayon's `join_counter_overflow`, with 100 000 joins instead of
/// 500 000 (this machine's 2 CPUs are shared).
#[test]
fn join_counter_overflow() {
    const MAX: u32 = 100_000;
    let (mut i, mut j) = (0, 0);
    let pool = ThreadPool::builder().workers(2).pin(false).build().unwrap();
    for _ in 0..MAX {
        pool.join(|| i += 1, || j += 1);
    }
    assert_eq!((i, j), (MAX, MAX));
}
