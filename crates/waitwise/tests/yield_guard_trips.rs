//! The lost-slice guard of yield polling (`mechanism::yield_guard`), in a
//! process of its own (the guard is process-wide): lost slices reported
//! while the process uses little CPU trip it, yield-polling waits then
//! block at once and still complete (a mutex and condition variable
//! hand-off chain, whose mutex polls by yielding), and turning the guard
//! off ends its quiet period.
#![cfg(not(loom))]

use std::sync::Arc;
use std::time::Duration;
use waitwise::mechanism::yield_guard::{self, LOSSES_TO_TRIP, LOST_SLICE_NS, SHARE_INTERVAL_NS};

/// `threads` threads take `turns` turns each through one mutex and
/// condition variable; returns the turns counted.
fn take_turns(threads: usize, turns: usize) -> u64 {
    let st = Arc::new((
        waitwise::Mutex::new(0u64),
        waitwise::condvar::Condvar::new(),
    ));
    let hs: Vec<_> = (0..threads)
        .map(|id| {
            let st = st.clone();
            std::thread::spawn(move || {
                for _ in 0..turns {
                    let mut g = st.0.lock();
                    while *g as usize % threads != id {
                        st.1.wait(&mut g);
                    }
                    *g += 1;
                    st.1.notify_all();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let n = *st.0.lock();
    n
}

#[test]
fn lost_slices_while_the_process_idles_trip_the_guard_and_waits_still_complete() {
    assert!(!yield_guard::yielding_loses_slices());
    // A burst of losses takes the first look at the process's CPU time
    // (no verdict yet); the process then idles past the share interval,
    // and the next burst finds its share low.
    for _ in 0..LOSSES_TO_TRIP {
        yield_guard::wait_ended_after_yield(LOST_SLICE_NS);
    }
    assert_eq!(yield_guard::trips(), 0, "the first look gives no verdict");
    std::thread::sleep(Duration::from_nanos(SHARE_INTERVAL_NS) * 2);
    for _ in 0..LOSSES_TO_TRIP {
        yield_guard::wait_ended_after_yield(LOST_SLICE_NS);
    }
    assert_eq!(yield_guard::trips(), 1);
    assert!(yield_guard::yielding_loses_slices());

    // The mutex's waiters now block at once; every hand-off still happens.
    assert_eq!(take_turns(4, 500), 2000);

    yield_guard::set_enabled(false);
    assert!(
        !yield_guard::yielding_loses_slices(),
        "off ends the quiet period"
    );
    for _ in 0..LOSSES_TO_TRIP * 2 {
        yield_guard::wait_ended_after_yield(LOST_SLICE_NS);
    }
    assert!(
        !yield_guard::yielding_loses_slices(),
        "an off guard never trips"
    );
    assert_eq!(take_turns(4, 500), 2000);
}
