//! Stress tests for `Semaphore`: it never admits more holders than it has
//! permits, with blocking, `try_` and timed acquires; timeouts. Validation
//! only.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use waitwise::semaphore::Semaphore;
use waitwise::WaitOptions;

mod common;

/// How holders acquire.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Blocking,
    Try,
    Timed,
}

/// `threads` threads acquire `total / threads` times each; a holder counts
/// itself in `inside` and checks the count never exceeds `permits`.
fn run(threads: usize, permits: u32, total: u64, mode: Mode, options: WaitOptions) {
    let sem = Arc::new(Semaphore::with_options(permits, options));
    let inside = Arc::new(AtomicU32::new(0));
    let admitted = Arc::new(AtomicU64::new(0));
    let per = total / threads as u64;
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (sem, inside, admitted) = (sem.clone(), inside.clone(), admitted.clone());
            std::thread::spawn(move || {
                for i in 0..per {
                    match mode {
                        Mode::Blocking => sem.acquire(),
                        Mode::Try => {
                            while !sem.try_acquire() {
                                std::thread::yield_now();
                            }
                        }
                        Mode::Timed => while !sem.acquire_timeout(Duration::from_micros(20)) {},
                    }
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    assert!(now <= permits, "{now} holders for {permits} permits");
                    // A short critical section, so holders overlap.
                    for _ in 0..(i % 8) * 4 {
                        std::hint::spin_loop();
                    }
                    inside.fetch_sub(1, Ordering::SeqCst);
                    // Relaxed: a count, read after every thread is joined.
                    admitted.fetch_add(1, Ordering::Relaxed);
                    sem.release(1);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(admitted.load(Ordering::SeqCst), per * threads as u64);
    assert_eq!(sem.available(), permits, "permits lost or created");
}

/// (threads, permits): 2, 3, 4 and 8 threads on 2 CPUs.
const TABLE: [(usize, u32); 7] = [(2, 1), (3, 1), (3, 2), (4, 1), (4, 3), (8, 1), (8, 4)];

#[test]
fn never_over_admits_blocking() {
    for (threads, permits) in TABLE {
        run(
            threads,
            permits,
            200_000,
            Mode::Blocking,
            WaitOptions::new(),
        );
    }
}

#[test]
fn never_over_admits_try() {
    for (threads, permits) in TABLE {
        run(threads, permits, 100_000, Mode::Try, WaitOptions::new());
    }
}

#[test]
fn never_over_admits_timed() {
    for (threads, permits) in TABLE {
        run(threads, permits, 100_000, Mode::Timed, WaitOptions::new());
    }
}

#[test]
fn never_over_admits_per_policy() {
    for policy in common::stress_policies() {
        for (threads, permits) in [(2, 1), (4, 2), (8, 1)] {
            run(
                threads,
                permits,
                100_000,
                Mode::Blocking,
                WaitOptions::new().policy(policy),
            );
        }
    }
}

/// `release(n)` with several sleepers: all `n` get through.
#[test]
fn release_many_wakes_many() {
    for threads in [2, 3, 4, 8] {
        let rounds = 2_000;
        let sem = Arc::new(Semaphore::new(0));
        let done = Arc::new(Semaphore::new(0));
        let ws: Vec<_> = (0..threads)
            .map(|_| {
                let (sem, done) = (sem.clone(), done.clone());
                std::thread::spawn(move || {
                    for _ in 0..rounds {
                        sem.acquire();
                        done.release(1);
                    }
                })
            })
            .collect();
        for _ in 0..rounds {
            sem.release(threads as u32);
            for _ in 0..threads {
                done.acquire();
            }
        }
        for w in ws {
            w.join().unwrap();
        }
        assert_eq!(sem.available(), 0);
    }
}

#[test]
fn timeouts_report_and_respect_their_bounds() {
    for policy in common::timeout_policies() {
        let sem = Semaphore::with_options(0, WaitOptions::new().policy(policy));
        common::assert_timeouts_bounded(policy, |timeout| {
            assert!(!sem.acquire_timeout(timeout));
        });
        assert_eq!(sem.available(), 0);
    }
}
