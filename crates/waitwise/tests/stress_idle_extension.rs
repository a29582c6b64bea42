//! Stress tests of `adapt/b`'s idle-CPU extension
//! ([`waitwise::policy::idle_extension`]), as parameter tables: waits
//! oversubscribed on purpose (more threads than CPUs) with the signal
//! pinned to "idle" ([`force_demand`]), so that every wait that reaches
//! its poll limit polls on in slices, yields between them, and blocks at
//! the cap. Each loop must complete with nothing lost: every notify seen,
//! every permit taken once, every increment counted, every barrier
//! episode passed, and waits with deadlines inside the extension time out.
//! Validation only: no timing is asserted. Run with
//! `cargo test -p waitwise --release --test stress_idle_extension` (a few
//! seconds).
#![cfg(not(loom))]

mod common;

use std::time::Duration;
use waitwise::barrier::Barrier;
use waitwise::policy::idle_extension::{force_demand, CpuDemand};
use waitwise::semaphore::Semaphore;
use waitwise::{Event, Mutex, Policy, WaitOptions};

fn adaptive() -> WaitOptions {
    // Every test here runs the extension whatever the machine's load.
    force_demand(Some(CpuDemand::Idle));
    WaitOptions::new().policy(Policy::adaptive())
}

/// (threads in the ring, laps, a thread's pause every this many laps, µs).
const RING_CASES: [(usize, u32, u32, u64); 4] = [
    (2, 5_000, 0, 0),
    (8, 1_000, 0, 0),
    (16, 300, 0, 0),
    (6, 300, 30, 500),
];

/// A token ring of semaphores (the oversubscription experiment's
/// producer-consumer loop): every permit is taken exactly once.
#[test]
fn oversubscribed_semaphore_ring_loses_no_permit() {
    for (threads, laps, pause_every, pause_us) in RING_CASES {
        let opts = adaptive();
        let links: Vec<Semaphore> = (0..threads)
            .map(|_| Semaphore::with_options(0, opts))
            .collect();
        std::thread::scope(|scope| {
            for tid in 0..threads {
                let links = &links;
                scope.spawn(move || {
                    for lap in 0..laps {
                        if pause_every > 0 && tid == 0 && lap % pause_every == 0 {
                            std::thread::sleep(Duration::from_micros(pause_us));
                        }
                        links[(tid + 1) % threads].release(1);
                        assert!(
                            links[tid].acquire_timeout(Duration::from_secs(60)),
                            "lost permit ({threads} threads)"
                        );
                    }
                });
            }
        });
        assert!(links.iter().all(|l| l.available() == 0));
    }
}

/// (pairs of threads, round trips, pause every this many rounds, µs; the
/// 1 ms pause outlasts the extension's cap, so the waiter blocks).
const PING_PONG_CASES: [(usize, u32, u32, u64); 3] =
    [(1, 10_000, 0, 0), (4, 2_000, 0, 0), (2, 200, 10, 1_000)];

/// Event ping-pong, several pairs at once: every notify is seen.
#[test]
fn oversubscribed_event_ping_pong_loses_no_notify() {
    for (pairs, rounds, pause_every, pause_us) in PING_PONG_CASES {
        let opts = adaptive();
        std::thread::scope(|scope| {
            for _ in 0..pairs {
                scope.spawn(move || {
                    let ping = Event::with_options(opts);
                    let pong = Event::with_options(opts);
                    std::thread::scope(|inner| {
                        inner.spawn(|| {
                            for i in 0..rounds {
                                ping.wait();
                                if pause_every > 0 && i % pause_every == 0 {
                                    std::thread::sleep(Duration::from_micros(pause_us));
                                }
                                pong.notify();
                            }
                        });
                        for _ in 0..rounds {
                            ping.notify();
                            assert!(pong.wait_timeout(Duration::from_secs(60)), "lost notify");
                        }
                    });
                });
            }
        });
    }
}

/// (threads, increments per thread).
const MUTEX_CASES: [(usize, u64); 3] = [(2, 50_000), (8, 10_000), (16, 3_000)];

/// A counter under the default mutex's algorithm with `adapt/b`: every
/// increment is counted, with occasional holds longer than the cap.
#[test]
fn oversubscribed_mutex_counts_every_increment() {
    for (threads, increments) in MUTEX_CASES {
        let m = Mutex::from_raw(waitwise::mutex::RawDefault::with_options(adaptive()), 0u64);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    for i in 0..increments {
                        let mut g = m.lock();
                        *g += 1;
                        if i % 2000 == 0 {
                            std::thread::sleep(Duration::from_micros(300));
                        }
                    }
                });
            }
        });
        assert_eq!(*m.lock(), threads as u64 * increments);
    }
}

/// (threads, episodes).
const BARRIER_CASES: [(usize, u32); 3] = [(2, 5_000), (8, 500), (16, 200)];

/// A barrier loop: every thread passes every episode, and the counter
/// each episode's threads add to is exact at the next one.
#[test]
fn oversubscribed_barrier_passes_every_episode() {
    for (threads, episodes) in BARRIER_CASES {
        let barrier = Barrier::with_options(threads, adaptive());
        common::assert_barrier_passes_every_episode(&barrier, threads, episodes);
    }
}

/// Deadlines that pass inside the extension end the wait as timed out,
/// and a notify after the cap still wakes the blocked waiter.
#[test]
fn deadlines_inside_the_extension_time_out() {
    let opts = adaptive();
    let ev = Event::with_options(opts);
    let sem = Semaphore::with_options(0, opts);
    for us in [0, 5, 50, 150, 400] {
        assert!(!ev.wait_timeout(Duration::from_micros(us)));
        assert!(!sem.acquire_timeout(Duration::from_micros(us)));
    }
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(3));
            ev.notify();
            sem.release(1);
        });
        ev.wait();
        assert!(sem.acquire_timeout(Duration::from_secs(60)));
    });
}
