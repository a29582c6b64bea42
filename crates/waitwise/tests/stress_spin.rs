//! Stress test for the spin lock (`SpinLockRef`, the interposer's
//! `pthread_spin_*`): mutual exclusion checked with a non-atomic counter at
//! 2, 3, 4 and 8 threads (more threads than this machine's CPUs, so holders
//! are preempted and waiters reach the yielding phase), with and without a
//! delay inside the critical section, lockers and try-lockers mixed.
//! Validation only.
#![cfg(not(loom))]

use std::cell::UnsafeCell;
use std::sync::atomic::AtomicU32;
use std::sync::Barrier;
use waitwise::mutex::SpinLockRef;

/// Lock/unlock operations per case, over all threads.
const TOTAL_OPS: u64 = 100_000;

/// A counter behind a spin lock word.
struct Guarded {
    word: AtomicU32,
    count: UnsafeCell<u64>,
}

// SAFETY: `count` is only touched while `word`'s spin lock is held.
unsafe impl Sync for Guarded {}

/// `threads` threads increment the counter `TOTAL_OPS` times in all,
/// `spins` spin hints inside each critical section; every `try_every`-th
/// acquisition of a thread is a `try_lock` loop instead of `lock`.
fn exclusion(threads: u64, spins: u32, try_every: u64) {
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let mut g = Guarded {
        word: AtomicU32::new(SpinLockRef::FREE),
        count: UnsafeCell::new(0),
    };
    let start = Barrier::new(threads as usize);
    let (g_ref, start) = (&g, &start);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(move || {
                let g = g_ref;
                let lock = SpinLockRef::new(&g.word);
                start.wait();
                for i in 0..per_thread {
                    if try_every != 0 && i % try_every == 0 {
                        while !lock.try_lock() {
                            std::hint::spin_loop();
                        }
                    } else {
                        lock.lock();
                    }
                    // SAFETY: the lock is held.
                    let v = unsafe { *g.count.get() };
                    for _ in 0..spins {
                        std::hint::spin_loop();
                    }
                    // SAFETY: the lock is held.
                    unsafe { *g.count.get() = v + 1 };
                    lock.unlock();
                }
            });
        }
    });
    assert_eq!(*g.count.get_mut(), per_thread * threads);
    assert!(!SpinLockRef::new(&g.word).is_locked());
}

/// (threads, spin hints in the critical section, try_lock every n-th
/// acquisition, 0: never).
const CASES: [(u64, u32, u64); 8] = [
    (2, 0, 0),
    (3, 0, 0),
    (4, 0, 0),
    (8, 0, 0),
    (2, 50, 0),
    (4, 50, 0),
    (2, 0, 3),
    (8, 10, 5),
];

#[test]
fn spin_lock_excludes() {
    for (threads, spins, try_every) in CASES {
        exclusion(threads, spins, try_every);
    }
}
