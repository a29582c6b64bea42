//! rayon-core's `broadcast/test.rs`, ported to waitwise's pool
//! (`pool/broadcast.rs`, `pool/global.rs`): one run per worker, on that
//! worker, from outside, from inside, across two pools, with panics and
//! sleepy workers. Named after rayon's tests; rayon's one-second sleeps
//! are 10 ms here.
#![cfg(not(loom))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::Duration;
use waitwise::pool::{self, ThreadPool};

fn pool_of(n: usize) -> ThreadPool {
    ThreadPool::builder().workers(n).pin(false).build().unwrap()
}

#[test]
fn broadcast_global() {
    let v = pool::broadcast(|ctx| ctx.index());
    assert!(v.into_iter().eq(0..pool::current_num_threads()));
}

#[test]
fn spawn_broadcast_global() {
    let (tx, rx) = channel();
    pool::spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
    let mut v: Vec<_> = rx.into_iter().collect();
    v.sort_unstable();
    assert!(v.into_iter().eq(0..pool::current_num_threads()));
}

#[test]
fn broadcast_pool() {
    let pool = pool_of(7);
    let v = pool.broadcast(|ctx| ctx.index());
    assert!(v.into_iter().eq(0..7));
}

#[test]
fn spawn_broadcast_pool() {
    let (tx, rx) = channel();
    let pool = pool_of(7);
    pool.spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
    let mut v: Vec<_> = rx.into_iter().collect();
    v.sort_unstable();
    assert!(v.into_iter().eq(0..7));
}

#[test]
fn broadcast_self() {
    let pool = pool_of(7);
    let v = pool.install(|| pool::broadcast(|ctx| ctx.index()));
    assert!(v.into_iter().eq(0..7));
}

/// Each share runs on the worker it names.
#[test]
fn broadcast_runs_each_share_on_its_worker() {
    let pool = pool_of(5);
    let v = pool.broadcast(|ctx| (ctx.index(), pool::current_thread_index(), ctx.num_threads()));
    for (i, (index, current, n)) in v.into_iter().enumerate() {
        assert_eq!((index, current, n), (i, Some(i), 5));
    }
}

#[test]
fn spawn_broadcast_self() {
    let (tx, rx) = channel();
    let pool = pool_of(7);
    pool.spawn(move || pool::spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap()))
        .join();
    let mut v: Vec<_> = rx.into_iter().collect();
    v.sort_unstable();
    assert!(v.into_iter().eq(0..7));
}

#[test]
fn broadcast_mutual() {
    let count = AtomicUsize::new(0);
    let pool1 = pool_of(3);
    let pool2 = pool_of(7);
    pool1.install(|| {
        pool2.broadcast(|_| {
            pool1.broadcast(|_| {
                count.fetch_add(1, Ordering::Relaxed);
            })
        })
    });
    assert_eq!(count.into_inner(), 3 * 7);
}

#[test]
fn broadcast_mutual_sleepy() {
    let count = AtomicUsize::new(0);
    let pool1 = pool_of(3);
    let pool2 = pool_of(7);
    pool1.install(|| {
        std::thread::sleep(Duration::from_millis(10));
        pool2.broadcast(|_| {
            std::thread::sleep(Duration::from_millis(10));
            pool1.broadcast(|_| {
                std::thread::sleep(Duration::from_millis(10));
                count.fetch_add(1, Ordering::Relaxed);
            })
        })
    });
    assert_eq!(count.into_inner(), 3 * 7);
}

#[test]
fn broadcast_panic_one() {
    let count = AtomicUsize::new(0);
    let pool = pool_of(7);
    let result = catch_unwind(AssertUnwindSafe(|| {
        pool.broadcast(|ctx| {
            count.fetch_add(1, Ordering::Relaxed);
            if ctx.index() == 3 {
                panic!("Hello, world!");
            }
        })
    }));
    assert_eq!(count.into_inner(), 7);
    assert!(result.is_err(), "broadcast panic should propagate!");
}

#[test]
fn broadcast_panic_many() {
    let count = AtomicUsize::new(0);
    let pool = pool_of(7);
    let result = catch_unwind(AssertUnwindSafe(|| {
        pool.broadcast(|ctx| {
            count.fetch_add(1, Ordering::Relaxed);
            if ctx.index() % 2 == 0 {
                panic!("Hello, world!");
            }
        })
    }));
    assert_eq!(count.into_inner(), 7);
    assert!(result.is_err(), "broadcast panic should propagate!");
}

#[test]
fn broadcast_sleep_race() {
    let test_duration = Duration::from_millis(200);
    let pool = pool_of(7);
    let start = std::time::Instant::now();
    while start.elapsed() < test_duration {
        pool.broadcast(|ctx| {
            // Workers go idle (polling, then asleep) at staggered times.
            std::thread::sleep(Duration::from_micros(ctx.index() as u64 * 50));
        });
    }
}

#[test]
fn broadcast_after_spawn_broadcast() {
    let (tx, rx) = channel();
    let pool = pool_of(7);
    pool.spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
    let v = pool.broadcast(|ctx| ctx.index());
    assert!(v.into_iter().eq(0..7));
    let mut v: Vec<_> = rx.into_iter().collect();
    v.sort_unstable();
    assert!(v.into_iter().eq(0..7));
}

#[test]
fn broadcast_after_spawn() {
    let (tx, rx) = channel();
    let pool = pool_of(1);
    pool.spawn(move || tx.send(22).unwrap()).join();
    let v = pool.broadcast(|ctx| ctx.index());
    assert_eq!(rx.recv().unwrap(), 22);
    assert_eq!(v, [0]);
    let _ = Arc::new(()); // rayon's test holds the pool in an Arc
}
