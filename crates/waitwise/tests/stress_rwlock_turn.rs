//! Stress tests of the reader-writer lock's readers' turn
//! (`mutex/rwlock.rs`): readers and writers mixed at 2, 3, 4 and 8
//! threads (more threads than this machine's CPUs), holders that now and
//! then leave their CPU inside the critical section (so that readers wait
//! behind writers and ask for turns), and timed readers and writers that
//! give up (leaving turns nobody takes). Checked: exclusion (a writer
//! updates two halves, readers never see them differ), no lost update, no
//! lost wake-up and no turn that keeps writers out for good (every case
//! finishes), the lock free at the end. Validation only; timing is for
//! `examples/mutex_starvation.rs`.
#![cfg(not(loom))]

use std::sync::{Arc, Barrier};
use std::time::Duration;
use waitwise::mutex::{RawRwLock, RwLock};
use waitwise::{Policy, WaitOptions};

/// Acquisitions per case, over all threads.
const TOTAL_OPS: u64 = 60_000;
/// Thread counts of every case.
const THREADS: [u64; 4] = [2, 3, 4, 8];

/// `threads` threads, a quarter of them (at least one) writers; with
/// `timed`, every fourth acquisition gives up after 20 us and retries.
fn case(threads: u64, raw: fn() -> RawRwLock, timed: bool) {
    let lock = Arc::new(RwLock::from_raw(raw(), (0u64, 0u64)));
    let writers = (threads / 4).max(1);
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let start = Arc::new(Barrier::new(threads as usize));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (lock, start) = (lock.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for n in 0..per_thread {
                    let give_up = timed && n % 4 == 0;
                    if i < writers {
                        let mut g = loop {
                            if !give_up {
                                break lock.write();
                            }
                            if let Some(g) = lock.try_write_for(Duration::from_micros(20)) {
                                break g;
                            }
                        };
                        let a = g.0;
                        g.0 = a + 1;
                        if n % 32 == 0 {
                            std::thread::yield_now();
                        }
                        g.1 += 1;
                    } else {
                        let g = loop {
                            if !give_up {
                                break lock.read();
                            }
                            if let Some(g) = lock.try_read_for(Duration::from_micros(20)) {
                                break g;
                            }
                        };
                        if n % 64 == 0 {
                            std::thread::yield_now();
                        }
                        assert_eq!(g.0, g.1, "a reader saw a writer's half-done update");
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*lock.read(), (writers * per_thread, writers * per_thread));
    assert!(!lock.is_locked());
    assert!(
        lock.try_write().is_some(),
        "no turn is left keeping writers out"
    );
}

fn default_lock() -> RawRwLock {
    RawRwLock::new()
}

fn blocking_lock() -> RawRwLock {
    RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()))
}

#[test]
fn rwlock_turns_default() {
    for t in THREADS {
        case(t, default_lock, false);
    }
}

#[test]
fn rwlock_turns_always_block() {
    for t in THREADS {
        case(t, blocking_lock, false);
    }
}

#[test]
fn rwlock_turns_with_deadlines() {
    for t in THREADS {
        case(t, default_lock, true);
        case(t, blocking_lock, true);
    }
}
