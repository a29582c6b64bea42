//! Stress tests of the reader-writer lock's upgradable reads
//! (`mutex/rwlock.rs`, "Upgradable reads"): upgradable readers that read,
//! then upgrade (or downgrade, or time out an upgrade) beside writers and
//! plain readers, at 2, 3, 4 and 8 threads (more threads than this
//! machine's CPUs), with the default policy and one that always sleeps.
//! Checked: no writer gets in between an upgradable read and its upgrade
//! (the value is unchanged), exclusion (a writer updates two halves,
//! readers never see them differ), no lost update, no lost wake-up (every
//! case finishes), the lock free at the end. Validation only.
#![cfg(not(loom))]

use std::sync::{Arc, Barrier};
use std::time::Duration;
use waitwise::mutex::{RawRwLock, RwLock, RwLockUpgradableReadGuard, RwLockWriteGuard};
use waitwise::{Policy, WaitOptions};

/// Acquisitions per case, over all threads.
const TOTAL_OPS: u64 = 40_000;
/// Thread counts of every case.
const THREADS: [u64; 4] = [2, 3, 4, 8];

/// `threads` threads in a rotation of roles: upgrader, writer, reader.
fn case(threads: u64, raw: fn() -> RawRwLock) {
    let lock = Arc::new(RwLock::from_raw(raw(), (0u64, 0u64)));
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let start = Arc::new(Barrier::new(threads as usize));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (lock, start) = (lock.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut writes = 0;
                for n in 0..per_thread {
                    match i % 3 {
                        0 => {
                            let up = lock.upgradable_read();
                            let seen = *up;
                            assert_eq!(seen.0, seen.1, "an upgradable reader saw half a write");
                            if n % 16 == 0 {
                                std::thread::yield_now(); // readers and writers queue up
                            }
                            let up = match n % 4 {
                                // An upgrade that readers may outlast: it
                                // keeps the upgradable read.
                                1 => match RwLockUpgradableReadGuard::try_upgrade_for(
                                    up,
                                    Duration::from_micros(50),
                                ) {
                                    Ok(w) => RwLockWriteGuard::downgrade_to_upgradable(w),
                                    Err(up) => up,
                                },
                                2 => {
                                    let r = RwLockUpgradableReadGuard::downgrade(up);
                                    assert_eq!(*r, seen);
                                    continue;
                                }
                                _ => up,
                            };
                            assert_eq!(*up, seen);
                            let mut w = RwLockUpgradableReadGuard::upgrade(up);
                            assert_eq!(*w, seen, "a writer got in before the upgrade");
                            w.0 += 1;
                            w.1 += 1;
                            writes += 1;
                        }
                        1 => {
                            let mut g = lock.write();
                            g.0 += 1;
                            if n % 16 == 0 {
                                std::thread::yield_now();
                            }
                            g.1 += 1;
                            writes += 1;
                        }
                        _ => {
                            let g = lock.read();
                            assert_eq!(g.0, g.1, "a reader saw a write half done");
                        }
                    }
                }
                writes
            })
        })
        .collect();
    let writes: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(!lock.is_locked());
    assert_eq!(*lock.read(), (writes, writes));
}

#[test]
fn upgradable_readers_upgrade_beside_writers_and_readers() {
    for threads in THREADS {
        case(threads, RawRwLock::new);
    }
}

#[test]
fn upgradable_readers_upgrade_when_waiters_sleep() {
    for threads in THREADS {
        case(threads, || {
            RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()))
        });
    }
}
