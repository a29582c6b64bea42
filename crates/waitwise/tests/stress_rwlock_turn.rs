//! Stress tests of the reader-writer lock's readers' turn
//! (`mutex/rwlock.rs`): readers and writers mixed at 2, 3, 4 and 8
//! threads (more threads than this machine's CPUs), holders that now and
//! then leave their CPU inside the critical section (so that readers wait
//! behind writers and ask for turns), and timed readers and writers that
//! give up (leaving turns nobody takes). Checked: exclusion (a writer
//! updates two halves, readers never see them differ), no lost update, no
//! lost wake-up and no turn that keeps writers out for good (every case
//! finishes), the lock free at the end; and a reader that never sleeps
//! gets its turns between two writers that keep the lock busy (counted in
//! writes, not time). Validation only; timing is for
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

/// Readers that poll in [`polling_readers_get_turns_between_alternating_writers`].
const POLLING_READERS: usize = 6;
/// Reads each of them makes.
const POLLED_READS: u64 = 2_000;
/// The writes the two writers may make before those readers have their
/// reads: the test fails beyond. A reader that runs gets in within a few
/// writes; one that loses its CPU for a time slice misses the writes of
/// that slice: all the readers had their reads within 70,000-410,000
/// writes here. A reader that never asks again after a missed turn waits
/// while the writers alternate, without end (the cap was reached in 0.3 s).
const WRITES_BEFORE_STARVED: u64 = 20_000_000;
/// Writes made before the readers start: both writers are under way.
const WRITES_UNDER_WAY: u64 = 10_000;

/// Two writers that alternate keep a writer waiting at almost every
/// moment, so turns are what lets readers in; the readers poll (yielding)
/// and never sleep, so no wake-up brings one back to ask for a turn, and
/// with more threads than CPUs they miss turns. Each must ask again after
/// every turn it misses.
#[test]
fn polling_readers_get_turns_between_alternating_writers() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let policy = Policy::always_spin().with_mechanism(waitwise::Mechanism::Yield);
    let lock = Arc::new(RwLock::from_raw(
        RawRwLock::with_options(WaitOptions::new().policy(policy)),
        0u64,
    ));
    // Relaxed: a flag and a counter; the lock orders the data.
    let done = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let (lock, done, writes) = (lock.clone(), done.clone(), writes.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed)
                    && writes.fetch_add(1, Ordering::Relaxed) < WRITES_BEFORE_STARVED
                {
                    *lock.write() += 1;
                }
            })
        })
        .collect();
    // Both writers under way before the first read.
    while writes.load(Ordering::Relaxed) < WRITES_UNDER_WAY {
        std::thread::yield_now();
    }
    let readers: Vec<_> = (0..POLLING_READERS)
        .map(|_| {
            let lock = lock.clone();
            std::thread::spawn(move || {
                let mut last = 0;
                for _ in 0..POLLED_READS {
                    let seen = *lock.read();
                    assert!(seen >= last, "a write was lost");
                    last = seen;
                }
            })
        })
        .collect();
    for h in readers {
        h.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    for h in writers {
        h.join().unwrap();
    }
    let w = writes.load(Ordering::Relaxed);
    assert!(
        w < WRITES_BEFORE_STARVED,
        "the readers made {POLLED_READS} reads each only after {w} writes"
    );
}
