//! Stress test of `FairMutex` (`src/raw_fair_mutex.rs`, the holder's
//! ticket kept in the lock between its lock and its unlock): 2, 3, 4 and
//! 8 threads (more than this machine's CPUs) taking the lock by `lock`,
//! `try_lock` and `try_lock_for`. Checked: exclusion (two halves updated
//! apart never differ), no lost update, the lock free at the end (every
//! unlock found its ticket). Validation only.

use parking_lot::FairMutex;
use std::sync::Barrier;
use std::time::Duration;

/// Acquisitions per case, over all threads.
const TOTAL_OPS: u64 = 40_000;

#[test]
fn fair_mutex_keeps_each_holders_ticket() {
    for threads in [2u64, 3, 4, 8] {
        let m = FairMutex::new((0u64, 0u64));
        let per_thread = TOTAL_OPS / threads;
        let start = Barrier::new(threads as usize);
        let done: u64 = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        let mut mine = 0;
                        for n in 0..per_thread {
                            let g = match n % 3 {
                                0 => Some(m.lock()),
                                1 => m.try_lock(),
                                _ => m.try_lock_for(Duration::from_micros(20)),
                            };
                            if let Some(mut g) = g {
                                assert_eq!(g.0, g.1, "two holders at once");
                                g.0 += 1;
                                if n % 64 == 0 {
                                    std::thread::yield_now();
                                }
                                g.1 += 1;
                                mine += 1;
                            }
                        }
                        mine
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert!(!m.is_locked());
        assert_eq!(m.into_inner(), (done, done));
    }
}
