//! `std::thread::park`/`unpark` as a contender.

use super::WaitPair;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;

/// A flag plus the waiter's thread handle.
pub struct ParkPair {
    flag: AtomicBool,
    waiter: OnceLock<Thread>,
}

impl ParkPair {
    /// Unsignalled, waiter not yet registered.
    pub fn new() -> Self {
        Self {
            flag: AtomicBool::new(false),
            waiter: OnceLock::new(),
        }
    }
}

impl Default for ParkPair {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitPair for ParkPair {
    fn register_waiter(&self) {
        let _ = self.waiter.set(std::thread::current());
    }
    fn wait(&self) {
        // Acquire: pairs with the notifier's Release store.
        while !self.flag.swap(false, Ordering::Acquire) {
            std::thread::park();
        }
    }
    fn notify(&self) {
        // Release: the waiter's Acquire swap sees what came before.
        self.flag.store(true, Ordering::Release);
        if let Some(t) = self.waiter.get() {
            t.unpark();
        }
    }
}
