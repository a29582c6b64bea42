//! Stress test of the reader-writer lock's starving writers
//! (`mutex/rwlock.rs`, "Bounded unfairness among writers"): writers that
//! re-take the lock by barging tries as fast as they can, writers that
//! wait for it (some giving up after 20 us and retrying, so that starving
//! writers time out), and readers, on more threads than this machine has
//! CPUs. Checked: exclusion (a writer updates two halves, readers never see
//! them differ), no lost update, no lost wake-up (every waiting writer
//! finishes its acquisitions while the barging ones go on), and no
//! starving count left behind (the free lock takes a barging write at the
//! end). Validation only; timing is for `examples/mutex_starvation.rs`.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;
use waitwise::mutex::{RawRwLock, RwLock};
use waitwise::{Policy, WaitOptions};

/// Acquisitions of each waiting writer.
const WAITING_WRITES: u64 = 20_000;

fn case(raw: fn() -> RawRwLock, barging: usize, waiting: usize, readers: usize) {
    let lock = Arc::new(RwLock::from_raw(raw(), (0u64, 0u64)));
    let done = Arc::new(AtomicBool::new(false));
    let barged = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(barging + waiting + readers));
    let spawn = |f: Box<dyn FnOnce() + Send>| {
        let start = start.clone();
        std::thread::spawn(move || {
            start.wait();
            f()
        })
    };
    let update = |g: &mut (u64, u64)| {
        let a = g.0;
        g.0 = a + 1;
        g.1 += 1;
    };
    let mut others = Vec::new();
    for _ in 0..barging {
        let (lock, done, barged) = (lock.clone(), done.clone(), barged.clone());
        others.push(spawn(Box::new(move || {
            while !done.load(Ordering::Relaxed) {
                if let Some(mut g) = lock.try_write() {
                    update(&mut g);
                    barged.fetch_add(1, Ordering::Relaxed);
                } else {
                    std::hint::spin_loop();
                }
            }
        })));
    }
    for _ in 0..readers {
        let (lock, done) = (lock.clone(), done.clone());
        others.push(spawn(Box::new(move || {
            while !done.load(Ordering::Relaxed) {
                let g = lock.read();
                assert_eq!(g.0, g.1, "a reader saw a writer's half-done update");
            }
        })));
    }
    let waiters: Vec<_> = (0..waiting)
        .map(|_| {
            let lock = lock.clone();
            spawn(Box::new(move || {
                for n in 0..WAITING_WRITES {
                    let mut g = loop {
                        if n % 4 != 0 {
                            break lock.write();
                        }
                        if let Some(g) = lock.try_write_for(Duration::from_micros(20)) {
                            break g;
                        }
                    };
                    update(&mut g);
                }
            }))
        })
        .collect();
    for h in waiters {
        h.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    for h in others {
        h.join().unwrap();
    }
    let writes = waiting as u64 * WAITING_WRITES + barged.load(Ordering::Relaxed);
    assert_eq!(*lock.read(), (writes, writes));
    assert!(!lock.is_locked());
    assert!(
        lock.try_write().is_some(),
        "no starving writer is left counted on the free lock"
    );
    // SAFETY: only reads the raw lock's state.
    let state = format!("{:?}", unsafe { lock.raw() });
    assert!(
        state.contains("writers_waiting: 0, writers_starving: 0"),
        "{state}"
    );
}

#[test]
fn waiting_writers_finish_beside_barging_writers_default_policy() {
    case(RawRwLock::new, 3, 3, 2);
}

#[test]
fn waiting_writers_finish_beside_barging_writers_always_block() {
    case(
        || RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block())),
        2,
        4,
        1,
    );
}
