//! Stress tests of `adapt/b` ([`waitwise::policy::adaptive`]), as parameter
//! tables: the per-object summary recorded into by many threads at once
//! (the arm stays in the menu, drawn limits in `[0, 2B]`, scores bounded;
//! the object's learned `B` within its range; its credit spent and earned
//! with no update lost and never overdrawn),
//! and real waits under `adapt/b` (an event ping-pong, a counter under a
//! mutex, a barrier polling by yielding, a token ring of semaphores) that
//! must complete with nothing lost while their objects learn.
//! Validation only: no timing is asserted. Run with
//! `cargo test -p waitwise --release --test stress_adaptive` (a few seconds).
#![cfg(not(loom))]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use waitwise::policy::adaptive::{AdaptiveSummary, ARMS, BLOCK_RANGE, DECAY_SHIFT, MAX_LIMIT_IN_B};
use waitwise::policy::block_cost::MIN_MEASURED_BLOCK_NS;
use waitwise::semaphore::Semaphore;
use waitwise::{Event, Mutex, Policy, WaitOptions};

/// (recording threads, records per thread).
const SUMMARY_CASES: [(usize, usize); 3] = [(2, 200_000), (4, 100_000), (8, 50_000)];

#[test]
fn summary_touched_by_many_threads_stays_valid() {
    for (threads, records) in SUMMARY_CASES {
        let s = AdaptiveSummary::new();
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let mut draws = 0u64;
                while !done.load(Ordering::Relaxed) {
                    assert!(s.arm() < ARMS);
                    let u = (draws % 1000) as f64 / 1000.0;
                    let l = s.poll_limit_ns(u, 1000.0);
                    assert!((0.0..=MAX_LIMIT_IN_B * 1000.0).contains(&l), "{l}");
                    draws += 1;
                }
            });
            let recorders: Vec<_> = (0..threads)
                .map(|k| {
                    let s = &s;
                    scope.spawn(move || {
                        // Half the threads see long waits, half short ones,
                        // and each switches every 1000 records.
                        for i in 0..records {
                            let long = (k + i / 1000) % 2 == 0;
                            let t = if long { 30_000.0 } else { (i % 700) as f64 };
                            s.record(t, 1000.0);
                        }
                    })
                })
                .collect();
            for r in recorders {
                r.join().unwrap();
            }
            done.store(true, Ordering::Relaxed);
            reader.join().unwrap();
        });
        let max = (MAX_LIMIT_IN_B + 1.0) * f64::from(1u32 << DECAY_SHIFT) + 1e-3;
        assert!(
            s.scores().iter().all(|&v| (0.0..=max).contains(&v)),
            "{threads} threads: {:?}",
            s.scores()
        );
        assert!(s.arm() < ARMS);
    }
}

/// The per-object `B` moved by many threads' wake-ups at once (cheap and
/// dear ones, and dropped outliers) and aged by their polled waits while
/// a reader draws with it: it stays
/// within `BLOCK_RANGE` of the process's `B` (and at least the floor), and
/// every limit drawn with it lies in `[0, 2 B_object]`.
#[test]
fn objects_b_moved_by_many_threads_stays_in_range() {
    const PROCESS_B: f64 = 3_000.0;
    let lo = (PROCESS_B / BLOCK_RANGE).max(MIN_MEASURED_BLOCK_NS);
    let hi = PROCESS_B * BLOCK_RANGE;
    for (threads, records) in SUMMARY_CASES {
        let s = AdaptiveSummary::new();
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let mut draws = 0u64;
                while !done.load(Ordering::Relaxed) {
                    let b = s.block_ns(PROCESS_B);
                    assert!((lo..=hi).contains(&b), "{b}");
                    let u = (draws % 1000) as f64 / 1000.0;
                    let l = s.poll_limit_ns(u, b);
                    assert!((0.0..=MAX_LIMIT_IN_B * b).contains(&l), "{l} of {b}");
                    // The longest limit, exploring or not, with the B of
                    // the moment (read again: it may have moved).
                    let longest = s.longest_poll_limit_ns(PROCESS_B);
                    assert!((0.0..=MAX_LIMIT_IN_B * hi).contains(&longest), "{longest}");
                    draws += 1;
                }
            });
            let recorders: Vec<_> = (0..threads)
                .map(|k| {
                    let s = &s;
                    scope.spawn(move || {
                        for i in 0..records {
                            let latency = match (k + i) % 5 {
                                0 => 2_000.0,
                                1 => 200_000.0,
                                2 => 50.0,
                                3 => 5e6,
                                _ => {
                                    // Polled waits: past STALE_AFTER_WAITS
                                    // the object explores (the next samples
                                    // take the explored rule), past
                                    // DRIFT_AFTER_WAITS they age its B.
                                    for _ in 0..64 {
                                        s.age_block(PROCESS_B, 2);
                                    }
                                    continue;
                                }
                            };
                            s.record_wake_up(latency, PROCESS_B);
                        }
                    })
                })
                .collect();
            for r in recorders {
                r.join().unwrap();
            }
            done.store(true, Ordering::Relaxed);
            reader.join().unwrap();
        });
        let b = s.block_ns(PROCESS_B);
        assert!((lo..=hi).contains(&b), "{threads} threads: {b}");
    }
}

/// Many threads spend and earn one object's credit at once (`/b/0`'s, the
/// bound's): every spend that succeeded had credit behind it, and the end
/// credit is exactly what was earned less what was spent (none lost to a
/// race), below the cap throughout.
#[test]
fn credit_spent_and_earned_by_many_threads_balances() {
    use waitwise::policy::adaptive::CREDIT_CAP_IN_B;
    const B: f64 = 1_000.0;
    for (threads, records) in SUMMARY_CASES {
        let s = AdaptiveSummary::new();
        let (spent, earned): (Vec<u64>, Vec<u64>) = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|k| {
                    let s = &s;
                    scope.spawn(move || {
                        let (mut spent, mut earned) = (0u64, 0u64);
                        for i in 0..records {
                            // Earn 700 or 1,300 ns once in three, try to
                            // spend a block twice: the credit runs dry and
                            // refills, far below the cap (an overdraft
                            // would wrap far above it).
                            if (k + i) % 3 == 0 {
                                let add = if i % 4 < 2 { 700.0 } else { 1_300.0 };
                                s.earn_credit(add, B);
                                earned += add as u64;
                            } else if s.take_block_credit(B) {
                                spent += B as u64;
                            }
                            assert!(s.credit_ns() <= CREDIT_CAP_IN_B * B);
                        }
                        (spent, earned)
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).unzip()
        });
        let (spent, earned): (u64, u64) = (spent.iter().sum(), earned.iter().sum());
        assert!(spent > 0, "{threads} threads: nothing spent");
        let end = s.credit_ns() as u64;
        assert_eq!(end + spent, earned, "{threads} threads");
    }
}

/// (round trips, producer's pause every this many rounds): waits switch
/// between immediate and slept-through so the events' summaries move.
const PING_PONG_CASES: [(u32, u32); 2] = [(20_000, 0), (2_000, 50)];

#[test]
fn event_ping_pong_under_adapt_b_loses_no_notify() {
    for (rounds, pause_every) in PING_PONG_CASES {
        let opts = WaitOptions::new().policy(Policy::adaptive());
        let ping = Event::with_options(opts);
        let pong = Event::with_options(opts);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for i in 0..rounds {
                    ping.wait();
                    if pause_every > 0 && i % pause_every == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    pong.notify();
                }
            });
            for _ in 0..rounds {
                ping.notify();
                assert!(pong.wait_timeout(Duration::from_secs(30)), "lost notify");
            }
        });
        assert_eq!(ping.policy().name(), "adapt/b");
    }
}

/// (threads, increments per thread).
const MUTEX_CASES: [(usize, u64); 3] = [(2, 100_000), (4, 50_000), (8, 20_000)];

#[test]
fn mutex_under_adapt_b_counts_every_increment() {
    for (threads, increments) in MUTEX_CASES {
        let m = Mutex::from_raw(
            waitwise::mutex::RawDefault::with_options(
                WaitOptions::new().policy(Policy::adaptive()),
            ),
            0u64,
        );
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    for i in 0..increments {
                        let mut g = m.lock();
                        *g += 1;
                        if i % 1000 == 0 {
                            // An occasional long hold: some waits block.
                            std::thread::sleep(Duration::from_micros(50));
                        }
                    }
                });
            }
        });
        assert_eq!(*m.lock(), threads as u64 * increments);
    }
}

/// (threads, episodes): up to 8 threads per CPU on the 2-CPU machines the
/// project runs on, so the yield-polling waits run with a switch-spinning
/// efficiency above 1 (`adaptive`, "Polling by yielding").
const YIELD_BARRIER_CASES: [(usize, u32); 3] = [(2, 5_000), (6, 1_000), (16, 200)];

/// A barrier whose waits poll by yielding under `adapt/b`, with the
/// machine's real runnable count (not pinned): their limits and records
/// are scaled by the runnable threads per CPU, and every thread still
/// passes every episode with the counter exact at the next.
#[test]
fn yield_polling_barrier_under_adapt_b_passes_every_episode() {
    use waitwise::barrier::Barrier;
    use waitwise::Mechanism;
    for (threads, episodes) in YIELD_BARRIER_CASES {
        let opts = WaitOptions::new().policy(Policy::adaptive().with_mechanism(Mechanism::Yield));
        let barrier = Barrier::with_options(threads, opts);
        common::assert_barrier_passes_every_episode(&barrier, threads, episodes);
    }
}

/// (threads in the ring, laps, a thread's pause every this many laps).
const RING_CASES: [(usize, u32, u32); 3] = [(2, 20_000, 0), (4, 5_000, 0), (3, 2_000, 40)];

/// A token ring of semaphores under `adapt/b` (the oversubscription
/// experiment's producer-consumer loop): each thread releases its
/// successor's link and acquires its own, so every permit is taken exactly
/// once and the ring ends with none left.
#[test]
fn semaphore_ring_under_adapt_b_loses_no_permit() {
    for (threads, laps, pause_every) in RING_CASES {
        let opts = WaitOptions::new().policy(Policy::adaptive());
        let links: Vec<Semaphore> = (0..threads)
            .map(|_| Semaphore::with_options(0, opts))
            .collect();
        std::thread::scope(|scope| {
            for tid in 0..threads {
                let links = &links;
                scope.spawn(move || {
                    for lap in 0..laps {
                        if pause_every > 0 && tid == 0 && lap % pause_every == 0 {
                            std::thread::sleep(Duration::from_micros(200));
                        }
                        links[(tid + 1) % threads].release(1);
                        assert!(
                            links[tid].acquire_timeout(Duration::from_secs(30)),
                            "lost permit"
                        );
                    }
                });
            }
        });
        assert!(links.iter().all(|l| l.available() == 0));
    }
}
