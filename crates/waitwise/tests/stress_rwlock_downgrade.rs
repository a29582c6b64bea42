//! Stress tests of the reader-writer lock's downgrade (`mutex/rwlock.rs`,
//! lock_api's `RwLockWriteGuard::downgrade`): writers that write, then
//! downgrade and read their own write back, beside plain readers, at 2,
//! 3, 4 and 8 threads (more threads than this machine's CPUs), with the
//! default policy and one that always sleeps. Checked: no writer gets in
//! between a write and its downgraded read (the value read back is the
//! one written), exclusion (a writer updates two halves, readers never
//! see them differ), no lost update, no lost wake-up (every case
//! finishes), the lock free at the end. Validation only.
#![cfg(not(loom))]

use std::sync::{Arc, Barrier};
use waitwise::mutex::{RawRwLock, RwLock, RwLockWriteGuard};
use waitwise::{Policy, WaitOptions};

/// Acquisitions per case, over all threads.
const TOTAL_OPS: u64 = 40_000;
/// Thread counts of every case.
const THREADS: [u64; 4] = [2, 3, 4, 8];

/// `threads` threads, half of them (at least one) downgrading writers.
fn case(threads: u64, raw: fn() -> RawRwLock) {
    let lock = Arc::new(RwLock::from_raw(raw(), (0u64, 0u64)));
    let writers = (threads / 2).max(1);
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let start = Arc::new(Barrier::new(threads as usize));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (lock, start) = (lock.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for n in 0..per_thread {
                    if i < writers {
                        let mut g = lock.write();
                        g.0 += 1;
                        if n % 16 == 0 {
                            std::thread::yield_now(); // readers queue up
                        }
                        g.1 += 1;
                        let written = *g;
                        let g = RwLockWriteGuard::downgrade(g);
                        if n % 16 == 8 {
                            std::thread::yield_now(); // writers queue up
                        }
                        assert_eq!(*g, written, "a writer got in between");
                    } else {
                        let g = lock.read();
                        assert_eq!(g.0, g.1, "a reader saw a write half done");
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert!(!lock.is_locked());
    let writes = writers * per_thread;
    assert_eq!(*lock.read(), (writes, writes));
}

#[test]
fn downgraded_writers_read_their_own_write_beside_readers() {
    for threads in THREADS {
        case(threads, RawRwLock::new);
    }
}

#[test]
fn downgraded_writers_read_their_own_write_when_waiters_sleep() {
    for threads in THREADS {
        case(threads, || {
            RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()))
        });
    }
}
