//! [`RawMutex`]: parking_lot's raw mutex, as waitwise's default raw
//! mutex behind `lock_api` 0.4's traits.

use crate::timeout;
use std::time::{Duration, Instant};
use waitwise::mutex::RawTtasMutex;

/// The raw mutex behind [`Mutex`](crate::Mutex): waitwise's
/// test-and-test-and-set lock ([`RawTtasMutex`]: one CAS to lock, one
/// swap to unlock, waiters poll then sleep, unfairness bounded by
/// hand-offs to a waiter that lost too many rounds).
///
/// `unlock_fair` is the plain unlock (the lock bounds its unfairness
/// itself), so `MutexGuard::unlock_fair` and `bump` are correct but do
/// not force a hand-off as parking_lot's do.
///
/// # Examples
/// ```
/// use parking_lot::lock_api::RawMutex as _;
///
/// let raw = parking_lot::RawMutex::INIT;
/// raw.lock();
/// assert!(!raw.try_lock());
/// // SAFETY: locked just above.
/// unsafe { raw.unlock() };
/// assert!(!raw.is_locked());
/// ```
pub struct RawMutex(RawTtasMutex);

// SAFETY: `RawTtasMutex` is a mutex (one holder at a time, acquisitions
// acquire, unlocks release) whose unlock needs no guard state; this type
// forwards to it.
unsafe impl lock_api::RawMutex for RawMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawMutex(RawTtasMutex::new());
    type GuardMarker = crate::GuardMarker;

    #[inline]
    fn lock(&self) {
        self.0.lock();
    }

    #[inline]
    fn try_lock(&self) -> bool {
        self.0.try_lock()
    }

    #[inline]
    unsafe fn unlock(&self) {
        // SAFETY: the caller holds the lock (the trait's contract).
        unsafe { self.0.unlock() }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
}

// SAFETY: the fair unlock is the plain unlock, which releases the lock.
unsafe impl lock_api::RawMutexFair for RawMutex {
    #[inline]
    unsafe fn unlock_fair(&self) {
        // SAFETY: the caller holds the lock (the trait's contract).
        unsafe { self.0.unlock() }
    }
}

// SAFETY: a timed attempt acquires through the same CAS as `lock` or
// returns false having changed nothing it does not undo.
unsafe impl lock_api::RawMutexTimed for RawMutex {
    type Duration = Duration;
    type Instant = Instant;

    #[inline]
    fn try_lock_for(&self, timeout: Duration) -> bool {
        self.0.try_lock_until(timeout::after(timeout))
    }

    #[inline]
    fn try_lock_until(&self, timeout: Instant) -> bool {
        self.0.try_lock_until(timeout::at(timeout))
    }
}
