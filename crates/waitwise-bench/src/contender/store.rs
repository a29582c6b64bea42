//! The baseline: a single atomic store releases a waiter spinning on the
//! flag. No implementation can notify for less; `T_call` of the others is
//! read against this row.

use super::WaitPair;
use std::sync::atomic::{AtomicU32, Ordering};

/// A flag on its own cache line, set by one store.
#[repr(align(128))]
pub struct StorePair {
    flag: AtomicU32,
}

impl StorePair {
    /// Unset.
    pub fn new() -> Self {
        Self {
            flag: AtomicU32::new(0),
        }
    }
}

impl Default for StorePair {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitPair for StorePair {
    fn wait(&self) {
        // Acquire/Release: the waiter sees what the notifier wrote first.
        while self.flag.load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
        self.flag.store(0, Ordering::Relaxed);
    }
    fn notify(&self) {
        self.flag.store(1, Ordering::SeqCst);
    }
}
