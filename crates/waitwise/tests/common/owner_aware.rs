//! The FIFO locks' shared stress harness for their owner awareness' owner awareness (`mutex/liveness.rs`):
//! the MCS lock passing over sleeping or preempted waiters (who rejoin)
//! and the ticket lock skipping them (who take a new ticket), with more
//! threads than CPUs. Checked: mutual exclusion (a non-atomic counter
//! read and written back inside the lock), every thread finishes its
//! acquisitions (a lost wake-up or a stranded passed-over waiter hangs the
//! test), and the lock is free at the end. Cases are a table: threads,
//! policy, and whether threads pause outside the lock (so that waiters
//! sleep, and releases find sleepers to pass over) or yield inside it (so
//! that holders and waiters are preempted). Validation only; timing is for
//! `examples/mutex_bench.rs`.

use lock_api::RawMutex;
use std::sync::{Arc, Barrier};
use std::time::Duration;
use waitwise::{Policy, WaitOptions};

pub const TOTAL_OPS: u64 = 20_000;

/// What the threads do besides taking the lock.
#[derive(Clone, Copy, Debug)]
pub enum Load {
    /// Nothing: a short critical section back to back.
    Hammer,
    /// Every 16th acquisition, yield inside the critical section (a
    /// preempted holder; waiters behind it time out and sleep).
    YieldInside,
    /// Every 8th acquisition, sleep 20 µs outside the lock (waiters find
    /// the queue empty, sleepers behind, arrivals behind sleepers).
    PauseOutside,
}

pub fn run<R: RawMutex + Send + Sync + 'static>(make: fn() -> R, threads: u64, load: Load) {
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let m = Arc::new(lock_api::Mutex::<R, u64>::from_raw(make(), 0));
    let start = Arc::new(Barrier::new(threads as usize));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (m, start) = (m.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for i in 0..per_thread {
                    {
                        let mut g = m.lock();
                        // Read, then write: a racing thread would lose updates.
                        let v = *g;
                        if matches!(load, Load::YieldInside) && i % 16 == 0 {
                            std::thread::yield_now();
                        }
                        *g = v + 1;
                    }
                    if matches!(load, Load::PauseOutside) && i % 8 == 0 {
                        std::thread::sleep(Duration::from_micros(20));
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(
        *m.lock(),
        per_thread * threads,
        "{threads} threads, {load:?}"
    );
    assert!(!m.is_locked());
}

/// Every case of a lock: threads (3 to 16 on this machine's CPUs) times
/// loads.
pub fn table<R: RawMutex + Send + Sync + 'static>(make: fn() -> R) {
    for threads in [3, 4, 8, 16] {
        for load in [Load::Hammer, Load::YieldInside, Load::PauseOutside] {
            run(make, threads, load);
        }
    }
}

pub fn short_polls() -> WaitOptions {
    WaitOptions::new().policy(Policy::poll_then_block(Duration::from_micros(1)))
}

pub fn blocking() -> WaitOptions {
    WaitOptions::new().policy(Policy::always_block())
}

pub fn spinning() -> WaitOptions {
    WaitOptions::new().policy(Policy::always_spin())
}
