//! The locks' stress tests' shared pieces: mutual exclusion at every
//! thread count ([`exclusion`], `exclusion_table!`) and timed attempts
//! that time out on time ([`timed`]).

use lock_api::{RawMutex, RawMutexTimed};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Lock/unlock operations per case, over all threads.
pub const TOTAL_OPS: u64 = 100_000;

/// Thread counts of every case.
pub const THREADS: [u64; 4] = [2, 3, 4, 8];

/// Scheduling slack allowed past a timeout (a loaded 2-CPU VM).
pub const SLACK: Duration = Duration::from_millis(250);

/// `threads` threads increment a `u64` inside `lock_api::Mutex<R, u64>`
/// (an `UnsafeCell`: a lost update means two threads were inside at once).
pub fn exclusion<R: RawMutex + Send + Sync + 'static>(make: fn() -> R, threads: u64) {
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let m = Arc::new(lock_api::Mutex::<R, u64>::from_raw(make(), 0));
    let start = Arc::new(Barrier::new(threads as usize));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (m, start) = (m.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for i in 0..per_thread {
                    let mut g = m.lock();
                    // Read, then write: a racing thread would lose updates.
                    let v = *g;
                    if i % 64 == 0 {
                        std::hint::spin_loop();
                    }
                    *g = v + 1;
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock(), per_thread * threads);
}

/// While another thread holds the lock, `try_lock_for(timeout)` returns
/// `None` no sooner than `timeout` and within `timeout + SLACK`;
/// `Duration::ZERO` returns at once.
pub fn timed<R: RawMutexTimed<Duration = Duration, Instant = Instant> + Send + Sync + 'static>(
    make: fn() -> R,
) {
    let m = Arc::new(lock_api::Mutex::<R, u32>::from_raw(make(), 0));
    let held = Arc::new(Barrier::new(2));
    let release = Arc::new(AtomicBool::new(false));
    let holder = {
        let (m, held, release) = (m.clone(), held.clone(), release.clone());
        std::thread::spawn(move || {
            let g = m.lock();
            held.wait();
            // Acquire: pairs with the Release store below; the flag carries
            // no data, so Relaxed would do as well.
            while !release.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
            drop(g);
        })
    };
    held.wait();
    for timeout in [Duration::from_millis(20), Duration::from_millis(5)] {
        let t = Instant::now();
        assert!(m.try_lock_for(timeout).is_none());
        let took = t.elapsed();
        assert!(took >= timeout, "returned early: {took:?} < {timeout:?}");
        assert!(took < timeout + SLACK, "returned late: {took:?}");
        let t = Instant::now();
        assert!(m.try_lock_until(Instant::now() + timeout).is_none());
        assert!(t.elapsed() < timeout + SLACK);
    }
    let t = Instant::now();
    assert!(m.try_lock_for(Duration::ZERO).is_none());
    assert!(t.elapsed() < SLACK, "ZERO waited {:?}", t.elapsed());
    // Release: pairs with the holder's Acquire load (no data rides on it).
    release.store(true, Ordering::Release);
    holder.join().unwrap();
    // Free again: a timed attempt succeeds, and the lock still works.
    assert!(m.try_lock_for(Duration::from_millis(100)).is_some());
    *m.lock() += 1;
    assert_eq!(*m.lock(), 1);
}

/// `exclusion_table! { name: make; ... }`: one test per lock maker, each
/// running [`exclusion`] at every thread count of [`THREADS`].
#[allow(unused_macros)]
macro_rules! exclusion_table {
    ($($name:ident: $make:expr;)*) => {$(
        #[test]
        fn $name() {
            for t in $crate::common::locks::THREADS {
                $crate::common::locks::exclusion($make, t);
            }
        }
    )*};
}
