//! Stress test of `Once` (`src/once.rs`): rounds of 2, 4 and 8 threads
//! (more than this machine's CPUs) racing into one fresh `Once`, some
//! with `call_once_force` after a poisoning first closure. Checked: one
//! closure returns per `Once`, every caller returns after it (it sees
//! the closure's write), no caller hangs. Validation only.

use parking_lot::{Once, OnceState};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Barrier;

/// Fresh `Once`s per thread count.
const ROUNDS: u32 = 300;

#[test]
fn racing_callers_run_one_closure_and_see_its_write() {
    for threads in [2, 4, 8] {
        for round in 0..ROUNDS {
            let once = Once::new();
            let (runs, value) = (AtomicU32::new(0), AtomicU32::new(0));
            let poison_first = round % 3 == 0;
            if poison_first {
                let r = catch_unwind(AssertUnwindSafe(|| once.call_once(|| panic!("poison"))));
                assert!(r.is_err());
                assert_eq!(once.state(), OnceState::Poisoned);
            }
            let start = Barrier::new(threads);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        start.wait();
                        once.call_once_force(|state| {
                            assert_eq!(state.poisoned(), poison_first);
                            runs.fetch_add(1, Ordering::Relaxed);
                            value.store(round + 1, Ordering::Relaxed);
                        });
                        // Relaxed: `Once` publishes the closure's store.
                        assert_eq!(value.load(Ordering::Relaxed), round + 1);
                    });
                }
            });
            assert_eq!(runs.load(Ordering::Relaxed), 1);
            assert!(once.state().done());
        }
    }
}
