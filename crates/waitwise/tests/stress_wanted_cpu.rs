//! Stress tests of the default waits on a machine whose CPUs are all
//! wanted (`waitwise::policy::polling_holds_wanted_cpu`): busy-loop
//! threads, one more than the CPUs, keep more threads runnable than the
//! machine has CPUs, so that default waits that would poll with PAUSE
//! block at once (the barriers' chain breaker, the channel's re-tries and
//! polling phase), and the events' and condition variables' waits poll by
//! `yield` (the busy loops are the process's own threads). Each hand-off loop must complete with
//! nothing lost. Validation only: no timing is asserted. Run with
//! `cargo test -p waitwise --release --test stress_wanted_cpu`.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use waitwise::barrier::Barrier;
use waitwise::mechanism::yield_guard;
use waitwise::policy::crowding;
use waitwise::policy::idle_extension::{
    cpu_demand, demand_at_wait_start, runnable_per_cpu, CpuDemand,
};
use waitwise::policy::polling_holds_wanted_cpu;
use waitwise::{channel, Condvar, Event, Mechanism, Mutex, Policy};

/// The CPUs the tests count on.
fn cpus() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Runs `body` while busy loops, one more than the CPUs, keep them wanted.
fn beside_busy_loops(body: impl FnOnce()) {
    beside_n_busy_loops(cpus() + 1, body);
}

/// Runs `body` while `loops` busy loops run.
fn beside_n_busy_loops(loops: usize, body: impl FnOnce()) {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..loops {
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
fn notified_waits_poll_by_yield_while_the_process_crowds_the_cpus() {
    // Over two runnable threads per CPU, all of them the process's.
    beside_n_busy_loops(2 * cpus() + 1, || {
        // The share sampler needs two looks a share interval apart; the
        // demand's cache, a read of the machine.
        let end = Instant::now() + Duration::from_millis(120);
        let mut demand = cpu_demand();
        while Instant::now() < end {
            let _ = yield_guard::recent_process_share();
            demand = cpu_demand();
            std::thread::sleep(Duration::from_millis(5));
        }
        // The process uses all of its CPUs, and the machine is busy (or
        // its load cannot be read).
        let share = yield_guard::recent_process_share();
        assert!(
            share.is_some_and(|s| s >= crowding::CROWDING_SHARE),
            "{share:?}"
        );
        assert_ne!(demand, CpuDemand::Idle);
        let busy = polling_holds_wanted_cpu(Mechanism::Pause, demand_at_wait_start());
        let runnable = runnable_per_cpu();
        let crowded = crowding::crowded_by_own_threads(runnable, share);
        assert!(crowded || runnable.is_none(), "{runnable:?} {share:?}");
        let notified = crowding::for_notified_wait(Policy::adaptive(), 2).mechanism();
        if busy && crowded {
            // Yield, or block while yields lose slices: never PAUSE.
            assert!(!crowding::holds_cpu(notified), "{notified:?}");
        }
    });
}

#[test]
fn condvar_turns_lose_no_notify() {
    const TURNS: u64 = 2_000;
    beside_busy_loops(|| {
        let (turn, cv) = (Mutex::new(0u64), Condvar::new());
        std::thread::scope(|s| {
            for me in 0..2 {
                let (turn, cv) = (&turn, &cv);
                s.spawn(move || {
                    for _ in 0..TURNS {
                        let mut t = turn.lock();
                        while *t % 2 != me {
                            cv.wait(&mut t);
                        }
                        *t += 1;
                        cv.notify_one();
                    }
                });
            }
        });
        assert_eq!(*turn.lock(), 2 * TURNS);
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
