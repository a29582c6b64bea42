//! Stress tests for `Condvar`: producer/consumer totals over a bounded queue
//! guarded by a mutex (no lost wake-up, or the run deadlocks), with
//! `waitwise::Mutex` and with `parking_lot::Mutex`; timed waits. Validation
//! only.
#![cfg(not(loom))]

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use waitwise::condvar::Condvar;
use waitwise::WaitOptions;

mod common;

/// The queue a mutex guards: values, and whether production ended.
struct Queue {
    items: VecDeque<u64>,
    done: bool,
}

const QUEUE_CAP: usize = 8;

/// Producer/consumer over a queue of `QUEUE_CAP` with two condition
/// variables. `threads` = producers + consumers; `total` values `1..=total`
/// must all arrive, once: the sums and counts must match.
macro_rules! producer_consumer {
    ($mutex:ty, $threads:expr, $total:expr, $options:expr) => {{
        let threads: usize = $threads;
        let total: u64 = $total;
        let producers = (threads / 2).max(1);
        let consumers = threads - producers;
        let shared = Arc::new((
            <$mutex>::new(Queue {
                items: VecDeque::new(),
                done: false,
            }),
            Condvar::with_options($options), // not empty
            Condvar::with_options($options), // not full
        ));
        let per = total / producers as u64;
        let ps: Vec<_> = (0..producers as u64)
            .map(|p| {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let (lock, not_empty, not_full) = &*shared;
                    for i in 0..per {
                        let mut q = lock.lock();
                        not_full.wait_while(&mut q, |q| q.items.len() == QUEUE_CAP);
                        q.items.push_back(p * per + i + 1);
                        drop(q);
                        not_empty.notify_one();
                    }
                })
            })
            .collect();
        let cs: Vec<_> = (0..consumers)
            .map(|_| {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let (lock, not_empty, not_full) = &*shared;
                    let (mut count, mut sum) = (0u64, 0u64);
                    loop {
                        let mut q = lock.lock();
                        not_empty.wait_while(&mut q, |q| q.items.is_empty() && !q.done);
                        match q.items.pop_front() {
                            Some(v) => {
                                drop(q);
                                not_full.notify_one();
                                count += 1;
                                sum += v;
                            }
                            None => return (count, sum), // done and drained
                        }
                    }
                })
            })
            .collect();
        for p in ps {
            p.join().unwrap();
        }
        shared.0.lock().done = true;
        shared.1.notify_all();
        let (mut count, mut sum) = (0, 0);
        for c in cs {
            let (n, s) = c.join().unwrap();
            count += n;
            sum += s;
        }
        let n = per * producers as u64;
        assert_eq!(count, n, "{threads} threads: values lost or duplicated");
        assert_eq!(sum, n * (n + 1) / 2, "{threads} threads: wrong values");
    }};
}

/// (threads, values): 2, 3, 4 and 8 threads on 2 CPUs.
const TABLE: [(usize, u64); 4] = [(2, 200_000), (3, 150_000), (4, 150_000), (8, 100_000)];

#[test]
fn totals_with_waitwise_mutex() {
    for (threads, total) in TABLE {
        producer_consumer!(
            waitwise::mutex::Mutex<Queue>,
            threads,
            total,
            WaitOptions::new()
        );
    }
}

#[test]
fn totals_with_parking_lot_mutex() {
    for (threads, total) in TABLE {
        producer_consumer!(
            parking_lot::Mutex<Queue>,
            threads,
            total,
            WaitOptions::new()
        );
    }
}

#[test]
fn totals_per_policy() {
    for policy in common::stress_policies() {
        for (threads, total) in [(2, 100_000), (4, 100_000)] {
            producer_consumer!(
                waitwise::mutex::Mutex<Queue>,
                threads,
                total,
                WaitOptions::new().policy(policy)
            );
        }
    }
}

/// Many waiters, one flag, `notify_all`: everyone leaves every round.
#[test]
fn notify_all_releases_everyone_each_round() {
    for threads in [2, 3, 4, 8] {
        let rounds = 20_000 / threads as u64;
        let shared = Arc::new((waitwise::mutex::Mutex::new(0u64), Condvar::new()));
        let ws: Vec<_> = (0..threads)
            .map(|_| {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let (lock, cv) = &*shared;
                    for r in 1..=rounds {
                        let mut g = lock.lock();
                        cv.wait_while(&mut g, |round| *round < r);
                    }
                })
            })
            .collect();
        for r in 1..=rounds {
            *shared.0.lock() = r;
            shared.1.notify_all();
            if r % 64 == 0 {
                std::thread::yield_now();
            }
        }
        for w in ws {
            w.join().unwrap();
        }
    }
}

#[test]
fn timeouts_report_and_respect_their_bounds() {
    for policy in common::timeout_policies() {
        let lock = waitwise::mutex::Mutex::new(false);
        let cv = Condvar::with_options(WaitOptions::new().policy(policy));
        let mut g = lock.lock();
        common::assert_timeouts_bounded(policy, |timeout| {
            assert!(cv
                .wait_while_timeout(&mut g, timeout, |flag| !*flag)
                .timed_out());
        });
        // A notify before the timeout ends a wait early.
        let shared = Arc::new((
            waitwise::mutex::Mutex::new(false),
            Condvar::with_options(WaitOptions::new().policy(policy)),
        ));
        let s2 = shared.clone();
        let h = std::thread::spawn(move || {
            let mut g = s2.0.lock();
            s2.1.wait_while_timeout(&mut g, Duration::from_secs(10), |flag| !*flag)
        });
        std::thread::sleep(Duration::from_millis(2));
        *shared.0.lock() = true;
        shared.1.notify_one();
        assert!(!h.join().unwrap().timed_out());
    }
}
