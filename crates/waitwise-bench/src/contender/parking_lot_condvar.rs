//! `parking_lot::Condvar` + `parking_lot::Mutex<bool>` as a contender.

use super::WaitPair;
use parking_lot::{Condvar, Mutex};

/// A flag under a parking_lot mutex, signalled through its condvar.
pub struct ParkingLotPair {
    flag: Mutex<bool>,
    cv: Condvar,
}

impl ParkingLotPair {
    /// Unsignalled.
    pub fn new() -> Self {
        Self {
            flag: Mutex::new(false),
            cv: Condvar::new(),
        }
    }
}

impl Default for ParkingLotPair {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitPair for ParkingLotPair {
    fn wait(&self) {
        let mut f = self.flag.lock();
        while !*f {
            self.cv.wait(&mut f);
        }
        *f = false;
    }
    fn notify(&self) {
        *self.flag.lock() = true;
        self.cv.notify_one();
    }
}
