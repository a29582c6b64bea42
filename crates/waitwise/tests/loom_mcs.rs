//! Loom models of the MCS lock (`mutex/mcs.rs`): mutual exclusion,
//! publication (loom checks the `UnsafeCell` accesses) and no lost wake-up
//! in any interleaving, and the time-published hand-off it shares with the
//! ticket lock ([`fifo`], `loom_common/fifo.rs`). The lock has no timed
//! acquisition: its timed model is a `try`.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_mcs`.
#![cfg(loom)]

#[macro_use]
mod loom_common;

use loom_common::locks::*;
use waitwise::mutex::RawMcsMutex;
use waitwise_platform::shim::Arc;

#[test]
fn mcs_two_threads_exclusive() {
    loom::model(|| increment_in_two_threads(RawMcsMutex::with_options(blocking())));
}

#[test]
fn mcs_three_threads_queue() {
    loom::model(|| {
        let m = Arc::new(RawMcsMutex::with_options(blocking()));
        let hs: Vec<_> = (0..2).map(|_| spawn_locker(&m)).collect();
        if let Some(g) = m.try_lock() {
            // SAFETY: `g` is this acquisition.
            unsafe { m.unlock(g) };
        }
        for h in hs {
            h.join().unwrap();
        }
        assert!(!m.is_locked());
    });
}

fn mcs() -> RawMcsMutex {
    RawMcsMutex::with_options(blocking())
}

#[test]
fn mcs_try_lock_races_a_locker() {
    try_lock_races_a_locker(mcs);
}

#[test]
fn mcs_try_lock_races_a_holder_and_a_sleeper() {
    // No timed acquisition: `acquire_until` is `try_lock` here.
    timed_attempt_races_a_holder_and_a_sleeper(mcs);
}

fifo_models!(fifo, waitwise::mutex::RawMcsMutex);
