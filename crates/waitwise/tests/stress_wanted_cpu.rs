//! Stress tests of the default waits on a machine whose CPUs are all
//! wanted (`waitwise::policy::polling_holds_wanted_cpu`): busy-loop
//! threads, one more than the CPUs, keep more threads runnable than the
//! machine has CPUs, so that default waits that would poll with PAUSE
//! block at once (the events', the barriers' chain breaker, the channel's
//! re-tries and polling phase). Each hand-off loop must complete with
//! nothing lost. Validation only: no timing is asserted. Run with
//! `cargo test -p waitwise --release --test stress_wanted_cpu`.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use waitwise::barrier::Barrier;
use waitwise::policy::idle_extension::CpuDemand;
use waitwise::policy::polling_holds_wanted_cpu;
use waitwise::{channel, Event, Mechanism};

/// Runs `body` while `threads` busy loops keep the CPUs wanted.
fn beside_busy_loops(body: impl FnOnce()) {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..=cpus {
            s.spawn(|| {
                // Relaxed: a stop flag, read until it flips.
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        body();
        stop.store(true, Ordering::Relaxed);
    });
}

#[test]
fn only_polls_that_hold_the_cpu_on_a_busy_machine_are_dropped() {
    for (mechanism, demand, dropped) in [
        (Mechanism::Pause, CpuDemand::Busy, true),
        (Mechanism::Spin, CpuDemand::Busy, true),
        (Mechanism::Pause, CpuDemand::Idle, false),
        (Mechanism::Pause, CpuDemand::Unknown, false),
        (Mechanism::Yield, CpuDemand::Busy, false),
        (Mechanism::Block, CpuDemand::Busy, false),
    ] {
        assert_eq!(
            polling_holds_wanted_cpu(mechanism, demand),
            dropped,
            "{mechanism:?} {demand:?}"
        );
    }
}

#[test]
fn event_ping_pong_loses_no_notify() {
    const TRIPS: u64 = 2_000;
    beside_busy_loops(|| {
        let (ping, pong) = (Event::new(), Event::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..TRIPS {
                    ping.wait();
                    pong.notify();
                }
            });
            for _ in 0..TRIPS {
                ping.notify();
                pong.wait();
            }
        });
    });
}

#[test]
fn channel_delivers_every_value_in_order() {
    const VALUES: u64 = 20_000;
    for capacity in [1, 16] {
        beside_busy_loops(|| {
            let (tx, rx) = channel::bounded(capacity);
            std::thread::scope(|s| {
                s.spawn(move || {
                    for v in 0..VALUES {
                        tx.send(v).unwrap();
                    }
                });
                for expected in 0..VALUES {
                    assert_eq!(rx.recv().unwrap(), expected);
                }
            });
        });
    }
}

#[test]
fn barrier_episodes_all_pass() {
    const EPISODES: u64 = 2_000;
    beside_busy_loops(|| {
        let barrier = Barrier::new(2);
        let passed = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..EPISODES {
                        barrier.wait();
                        // Relaxed: counted, read after the scope joins.
                        passed.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(passed.load(Ordering::Relaxed), 2 * EPISODES);
    });
}
