//! Stress test of the pool's broadcasts and FIFO scopes
//! (`pool/broadcast.rs`, `pool/scope_fifo.rs`, each worker's inbox in
//! `pool/thread_pool.rs`): pools of 2, 3 and 8 workers (more than this
//! machine's CPUs), with 4 outside threads and the workers themselves
//! broadcasting, joining and filling FIFO scopes at once. Checked: every
//! broadcast runs exactly one share on each worker, every FIFO task runs
//! once, no lost wake-up (every case finishes). Validation only.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicUsize, Ordering};
use waitwise::pool::{self, ThreadPool};

/// Rounds per outside thread.
const ROUNDS: usize = 200;
/// Threads outside the pool driving it.
const DRIVERS: usize = 4;

#[test]
fn broadcasts_joins_and_fifo_scopes_from_inside_and_outside() {
    for workers in [2, 3, 8] {
        let pool = ThreadPool::builder()
            .workers(workers)
            .pin(false)
            .build()
            .unwrap();
        let fifo_runs = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for d in 0..DRIVERS {
                let (pool, fifo_runs) = (&pool, &fifo_runs);
                s.spawn(move || {
                    for round in 0..ROUNDS {
                        match (d + round) % 3 {
                            0 => {
                                let v = pool.broadcast(|ctx| {
                                    assert_eq!(pool::current_thread_index(), Some(ctx.index()));
                                    ctx.index()
                                });
                                assert!(v.into_iter().eq(0..workers));
                            }
                            1 => {
                                // A broadcast from a stolen join half.
                                let (a, b) = pool.install(|| {
                                    pool::join(
                                        || round,
                                        || pool::broadcast(|ctx| ctx.index()).len(),
                                    )
                                });
                                assert_eq!((a, b), (round, workers));
                            }
                            _ => {
                                let seen = std::sync::Mutex::new(Vec::new());
                                pool.scope_fifo(|s| {
                                    for i in 0..8 {
                                        let seen = &seen;
                                        s.spawn_fifo(move || {
                                            fifo_runs.fetch_add(1, Ordering::Relaxed);
                                            seen.lock().unwrap().push(i);
                                        });
                                    }
                                });
                                let mut seen = seen.into_inner().unwrap();
                                seen.sort_unstable();
                                assert_eq!(seen, (0..8).collect::<Vec<_>>());
                            }
                        }
                    }
                });
            }
        });
        let fifo_rounds = (0..DRIVERS)
            .flat_map(|d| (0..ROUNDS).map(move |r| (d + r) % 3))
            .filter(|&k| k == 2)
            .count();
        assert_eq!(fifo_runs.load(Ordering::Relaxed), fifo_rounds * 8);
    }
}
