//! `std::sync::Condvar` + `Mutex<bool>` as a contender.

use super::WaitPair;
use std::sync::{Condvar, Mutex};

/// A flag under a std mutex, signalled through a std condvar.
pub struct StdCondvarPair {
    flag: Mutex<bool>,
    cv: Condvar,
}

impl StdCondvarPair {
    /// Unsignalled.
    pub fn new() -> Self {
        Self {
            flag: Mutex::new(false),
            cv: Condvar::new(),
        }
    }
}

impl Default for StdCondvarPair {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitPair for StdCondvarPair {
    fn wait(&self) {
        let mut f = self.flag.lock().unwrap_or_else(|e| e.into_inner());
        while !*f {
            f = self.cv.wait(f).unwrap_or_else(|e| e.into_inner());
        }
        *f = false;
    }
    fn notify(&self) {
        *self.flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.cv.notify_one();
    }
}
