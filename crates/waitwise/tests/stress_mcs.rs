//! Stress tests of the MCS lock (`mutex/mcs.rs`): mutual exclusion checked
//! with a non-atomic counter at 2, 3, 4 and 8 threads, at least 100,000
//! lock/unlock operations per case; a panicking holder's guard unlocks;
//! and its owner awareness ([`owner_aware`]). Validation only; timing is
//! for `examples/mutex_bench.rs`.
#![cfg(not(loom))]

#[macro_use]
mod common;

use std::sync::Arc;
use waitwise::mutex::RawMcsMutex;
use waitwise::{Policy, WaitOptions};

exclusion_table! {
    mcs_default: RawMcsMutex::new;
    mcs_always_block: || RawMcsMutex::with_options(WaitOptions::new().policy(Policy::always_block()));
}

#[test]
fn guard_unlocks_on_panic() {
    let mcs = Arc::new(waitwise::mutex::McsMutex::new(1));
    let mcs2 = mcs.clone();
    assert!(std::thread::spawn(move || {
        let _g = mcs2.lock();
        panic!("inside");
    })
    .join()
    .is_err());
    assert!(mcs.try_lock().is_some());
}

/// Owner awareness (`mutex/liveness.rs`): releases pass over sleeping or
/// preempted waiters, which rejoin; cases are the table of
/// `common/owner_aware.rs`.
mod owner_aware {
    use super::common::owner_aware::*;
    use waitwise::mutex::RawMcsMutex;
    use waitwise::{Policy, WaitOptions};

    #[test]
    fn mcs_default() {
        table(RawMcsMutex::new);
    }

    #[test]
    fn mcs_short_polls() {
        table(|| RawMcsMutex::with_options(short_polls()));
    }

    #[test]
    fn mcs_always_block() {
        table(|| RawMcsMutex::with_options(blocking()));
    }

    /// Waiters never sleep: only preempted (stale) waiters are passed over.

    #[test]
    fn mcs_always_spin() {
        table(|| RawMcsMutex::with_options(spinning()));
    }

    #[test]
    fn mcs_adaptive() {
        table(|| RawMcsMutex::with_options(WaitOptions::new().policy(Policy::adaptive())));
    }
}
