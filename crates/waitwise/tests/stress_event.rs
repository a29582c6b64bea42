//! Stress tests for `Event`: notify/wait hand-offs never lose a wake-up.
//! Validation only; timing is for the benchmarks.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use waitwise::{Event, Policy};

/// Ping-pong `rounds` times between two threads over two events: every
/// notify must be consumed by exactly one wait, or the pair deadlocks.
/// `None`: the events' default waiting (which polls for a permit before
/// it registers).
fn ping_pong(policy: Option<Policy>, rounds: u64) {
    let event = || policy.map_or_else(Event::new, Event::with_policy);
    let ping = Arc::new(event());
    let pong = Arc::new(event());
    let (p2, q2) = (ping.clone(), pong.clone());
    let partner = std::thread::spawn(move || {
        for _ in 0..rounds {
            p2.wait();
            q2.notify();
        }
    });
    for _ in 0..rounds {
        ping.notify();
        pong.wait();
    }
    partner.join().unwrap();
    assert!(!ping.is_signalled() && !pong.is_signalled());
}

/// 500,000 round trips = 1,000,000 notify/wait hand-offs.
#[test]
fn one_million_hand_offs_default_policy() {
    ping_pong(
        Some(Policy::for_kind(waitwise::SyncKind::ProducerConsumer)),
        500_000,
    );
}

#[test]
fn one_million_hand_offs_default_waiting() {
    ping_pong(None, 500_000);
}

/// Ping-pong pairs pinned to one CPU (where the process may pin) while the
/// process may use more: each waiter finds its notifier noted on its own
/// CPU and polls by `yield` (module docs of `event`, "A notifier on the
/// waiter's CPU"). One pair, then three pairs with wait timeouts mixed in
/// through `wait_timeout`, and a pair whose threads are released to every
/// CPU halfway (the notes go stale): every notify is consumed by exactly
/// one wait.
#[test]
fn pairs_on_one_cpu_hand_off_every_event() {
    use waitwise::platform::affinity;
    let cpu = affinity::current_cpu().unwrap_or(0);
    let allowed = affinity::allowed_cpus().unwrap_or_default();
    let pin = move || {
        let _ = affinity::pin_current_thread(cpu);
    };
    let release = move || {
        let _ = affinity::set_current_thread_affinity(&allowed);
    };
    let pair = |rounds: u64, timeouts: bool, release_halfway: bool| {
        let (ping, pong) = (Event::new(), Event::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                pin();
                for i in 0..rounds {
                    if release_halfway && i == rounds / 2 {
                        release();
                    }
                    if timeouts {
                        while !ping.wait_timeout(Duration::from_micros(i % 7)) {}
                    } else {
                        ping.wait();
                    }
                    pong.notify();
                }
            });
            pin();
            for i in 0..rounds {
                if release_halfway && i == rounds / 2 {
                    release();
                }
                ping.notify();
                pong.wait();
            }
        });
        assert!(!ping.is_signalled() && !pong.is_signalled());
    };
    pair(100_000, false, false);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| pair(20_000, true, false));
        }
    });
    pair(100_000, false, true);
}

/// Four ping-pong pairs per CPU the process may use, on the default
/// waiting: the process's own threads crowd the CPUs, and a waiter looks
/// early for its permit before its policy polls by `yield`. Every pair
/// makes all its round trips.
#[test]
fn pairs_that_outnumber_the_cpus_on_the_default_waiting() {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let pairs: Vec<_> = (0..4 * cpus)
        .map(|_| std::thread::spawn(|| ping_pong(None, 20_000)))
        .collect();
    for p in pairs {
        p.join().unwrap();
    }
}

#[test]
fn hand_offs_per_policy() {
    // (policy, rounds): blocking rounds cost tens of µs each on a VM, so
    // they get fewer rounds.
    let table: [(Policy, u64); 5] = [
        (Policy::always_spin(), 200_000),
        (Policy::always_block(), 20_000),
        (Policy::two_phase(1.0), 100_000),
        (Policy::randomized(), 50_000),
        (
            Policy::two_phase(0.5).with_mechanism(waitwise::Mechanism::Yield),
            50_000,
        ),
    ];
    for (policy, rounds) in table {
        ping_pong(Some(policy), rounds);
    }
}

/// `threads` consumers and one producer on 2 CPUs (oversubscribed from 2 on):
/// every notify releases exactly one wait; totals must match exactly.
/// `None`: the events' default waiting, which polls by yield once the
/// waiters and the producer outnumber the CPUs (crowded waits).
fn many_to_many(threads: usize, per_thread: u64, policy: Option<Policy>) {
    let event = || policy.map_or_else(Event::new, Event::with_policy);
    let ev = Arc::new(event());
    let consumed = Arc::new(AtomicU64::new(0));
    let acks = Arc::new(event());
    let consumers: Vec<_> = (0..threads)
        .map(|_| {
            let (ev, consumed, acks) = (ev.clone(), consumed.clone(), acks.clone());
            std::thread::spawn(move || {
                for _ in 0..per_thread {
                    ev.wait();
                    consumed.fetch_add(1, Ordering::SeqCst);
                    acks.notify();
                }
            })
        })
        .collect();
    // The main thread produces; each notify waits for an ack so notifies
    // never collapse (an un-acked notify may merge with the next one).
    let total = threads as u64 * per_thread;
    for _ in 0..total {
        ev.notify();
        acks.wait();
    }
    for c in consumers {
        c.join().unwrap();
    }
    assert_eq!(consumed.load(Ordering::SeqCst), total);
}

#[test]
fn oversubscribed_four_threads() {
    for (threads, per_thread) in [(2, 50_000), (3, 30_000), (4, 25_000), (8, 5_000)] {
        many_to_many(
            threads,
            per_thread,
            Some(Policy::for_kind(waitwise::SyncKind::ProducerConsumer)),
        );
    }
}

#[test]
fn oversubscribed_default_waiting() {
    for (threads, per_thread) in [(2, 50_000), (4, 25_000), (8, 5_000)] {
        many_to_many(threads, per_thread, None);
    }
}

#[test]
fn notify_all_races_with_timeouts() {
    // Waiters with short timeouts race notify_all; every notify_all either
    // releases a waiter or leaves the event signalled, never both lost.
    let ev = Arc::new(Event::new());
    let released = Arc::new(AtomicU64::new(0));
    let ws: Vec<_> = (0..4)
        .map(|_| {
            let (ev, released) = (ev.clone(), released.clone());
            std::thread::spawn(move || {
                for _ in 0..2_000 {
                    if ev.wait_timeout(Duration::from_micros(50)) {
                        released.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    for _ in 0..2_000 {
        ev.notify_all();
        std::thread::yield_now();
    }
    for w in ws {
        w.join().unwrap();
    }
    assert!(released.load(Ordering::SeqCst) > 0);
}
