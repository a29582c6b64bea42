//! A futex hand-off: the waiter sleeps in the kernel at once (no polling),
//! the notifier stores and wakes it only when it sleeps. What always
//! blocking costs, without a library's bookkeeping.

use super::WaitPair;
use std::sync::atomic::Ordering;
use waitwise_platform::futex::Futex;

/// No notification pending, nobody asleep.
const EMPTY: u32 = 0;
/// A notification is pending (auto-reset by the wait that takes it).
const NOTIFIED: u32 = 1;
/// The waiter is asleep, or about to sleep, on the word.
const SLEEPING: u32 = 2;

/// One futex word with the three states above.
pub struct FutexPair {
    word: Futex,
}

impl FutexPair {
    /// Nothing pending.
    pub fn new() -> Self {
        Self {
            word: Futex::new(EMPTY),
        }
    }
}

impl Default for FutexPair {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitPair for FutexPair {
    fn wait(&self) {
        let word = self.word.value();
        loop {
            // NOTIFIED => EMPTY and return. Acquire: pairs with the
            // notifier's Release swap, so its writes before `notify` are
            // visible.
            if word
                .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
            // EMPTY => SLEEPING, or already SLEEPING after a spurious wake.
            // Relaxed: the state is re-read by the CAS above after the
            // sleep; this store only asks the notifier to wake us.
            let _ = word.compare_exchange(EMPTY, SLEEPING, Ordering::Relaxed, Ordering::Relaxed);
            // Sleeps only while the word still says SLEEPING; a notify in
            // between changed it and the wait returns at once.
            self.word.wait(SLEEPING, None);
        }
    }

    fn notify(&self) {
        // any => NOTIFIED; a swap, not a CAS, since every state becomes
        // NOTIFIED and only the old one decides the wake. Release: pairs
        // with the waiter's Acquire CAS.
        if self.word.value().swap(NOTIFIED, Ordering::Release) == SLEEPING {
            self.word.wake_one();
        }
    }
}
