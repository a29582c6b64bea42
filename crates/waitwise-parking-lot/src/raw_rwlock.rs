//! [`RawRwLock`]: parking_lot's raw reader-writer lock, as waitwise's
//! reader-writer lock behind `lock_api` 0.4's traits.

use crate::timeout;
use std::time::{Duration, Instant};
use waitwise::Deadline;

/// The raw lock behind [`RwLock`](crate::RwLock): waitwise's
/// writer-preferring reader-writer lock ([`waitwise::mutex::RawRwLock`]),
/// with upgradable, recursive and timed reads, and downgrades both ways.
///
/// As parking_lot's, a read lock waits while a writer waits (so a thread
/// that read-locks twice can deadlock with a writer between its two
/// locks) unless taken with `read_recursive`. The fair unlocks are the
/// plain unlocks (the lock bounds its unfairness itself): correct, but
/// they force no hand-off as parking_lot's do.
///
/// # Examples
/// ```
/// use parking_lot::lock_api::{RawRwLock as _, RawRwLockUpgrade as _};
///
/// let raw = parking_lot::RawRwLock::INIT;
/// raw.lock_upgradable();
/// assert!(raw.try_lock_shared());
/// assert!(!raw.try_lock_upgradable());
/// // SAFETY: the read lock and the upgradable lock are held (above).
/// unsafe {
///     raw.unlock_shared();
///     raw.upgrade();
///     raw.unlock_exclusive();
/// }
/// assert!(!raw.is_locked());
/// ```
pub struct RawRwLock(waitwise::mutex::RawRwLock);

// SAFETY: waitwise's lock admits one writer or any readers (plus at most
// one upgradable reader among them); acquisitions are SeqCst RMWs
// (acquire), releases SeqCst RMWs (release); no unlock needs guard state.
unsafe impl lock_api::RawRwLock for RawRwLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawRwLock(waitwise::mutex::RawRwLock::new());
    type GuardMarker = crate::GuardMarker;

    #[inline]
    fn lock_shared(&self) {
        self.0.lock_shared_until(Deadline::NEVER);
    }

    #[inline]
    fn try_lock_shared(&self) -> bool {
        self.0.try_lock_shared()
    }

    #[inline]
    unsafe fn unlock_shared(&self) {
        // SAFETY: the caller holds a read lock (the trait's contract).
        unsafe { self.0.unlock_shared() }
    }

    #[inline]
    fn lock_exclusive(&self) {
        self.0.lock_exclusive_until(Deadline::NEVER);
    }

    #[inline]
    fn try_lock_exclusive(&self) -> bool {
        self.0.try_lock_exclusive()
    }

    #[inline]
    unsafe fn unlock_exclusive(&self) {
        // SAFETY: the caller holds the write lock (the trait's contract).
        unsafe { self.0.unlock_exclusive() }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }

    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        self.0.is_locked_exclusive()
    }
}

// SAFETY: the fair unlocks are the plain unlocks, which release.
unsafe impl lock_api::RawRwLockFair for RawRwLock {
    #[inline]
    unsafe fn unlock_shared_fair(&self) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.unlock_shared() }
    }

    #[inline]
    unsafe fn unlock_exclusive_fair(&self) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.unlock_exclusive() }
    }
}

// SAFETY: the write unlock and the read lock in one CAS: no writer enters
// in between.
unsafe impl lock_api::RawRwLockDowngrade for RawRwLock {
    #[inline]
    unsafe fn downgrade(&self) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.downgrade() }
    }
}

// SAFETY: timed attempts acquire through the same CASes or undo their
// registration.
unsafe impl lock_api::RawRwLockTimed for RawRwLock {
    type Duration = Duration;
    type Instant = Instant;

    #[inline]
    fn try_lock_shared_for(&self, timeout: Duration) -> bool {
        self.0.lock_shared_until(timeout::after(timeout))
    }

    #[inline]
    fn try_lock_shared_until(&self, timeout: Instant) -> bool {
        self.0.lock_shared_until(timeout::at(timeout))
    }

    #[inline]
    fn try_lock_exclusive_for(&self, timeout: Duration) -> bool {
        self.0.lock_exclusive_until(timeout::after(timeout))
    }

    #[inline]
    fn try_lock_exclusive_until(&self, timeout: Instant) -> bool {
        self.0.lock_exclusive_until(timeout::at(timeout))
    }
}

// SAFETY: a recursive read lock is a read lock (readers + 1 from a state
// without a writer) that ignores waiting writers.
unsafe impl lock_api::RawRwLockRecursive for RawRwLock {
    #[inline]
    fn lock_shared_recursive(&self) {
        self.0.lock_shared_recursive_until(Deadline::NEVER);
    }

    #[inline]
    fn try_lock_shared_recursive(&self) -> bool {
        self.0.try_lock_shared_recursive()
    }
}

// SAFETY: as the untimed recursive read lock.
unsafe impl lock_api::RawRwLockRecursiveTimed for RawRwLock {
    #[inline]
    fn try_lock_shared_recursive_for(&self, timeout: Duration) -> bool {
        self.0.lock_shared_recursive_until(timeout::after(timeout))
    }

    #[inline]
    fn try_lock_shared_recursive_until(&self, timeout: Instant) -> bool {
        self.0.lock_shared_recursive_until(timeout::at(timeout))
    }
}

// SAFETY: waitwise's upgradable reader is a reader that excludes other
// upgradable readers; its upgrade moves from "only reader" to the write
// lock in one CAS.
unsafe impl lock_api::RawRwLockUpgrade for RawRwLock {
    #[inline]
    fn lock_upgradable(&self) {
        self.0.lock_upgradable_until(Deadline::NEVER);
    }

    #[inline]
    fn try_lock_upgradable(&self) -> bool {
        self.0.try_lock_upgradable()
    }

    #[inline]
    unsafe fn unlock_upgradable(&self) {
        // SAFETY: the caller holds the upgradable lock (the contract).
        unsafe { self.0.unlock_upgradable() }
    }

    #[inline]
    unsafe fn upgrade(&self) {
        // SAFETY: the caller holds the upgradable lock (the contract).
        unsafe { self.0.upgrade_until(Deadline::NEVER) };
    }

    #[inline]
    unsafe fn try_upgrade(&self) -> bool {
        // SAFETY: the caller holds the upgradable lock (the contract).
        unsafe { self.0.try_upgrade() }
    }
}

// SAFETY: the fair upgradable unlock is the plain one.
unsafe impl lock_api::RawRwLockUpgradeFair for RawRwLock {
    #[inline]
    unsafe fn unlock_upgradable_fair(&self) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.unlock_upgradable() }
    }
}

// SAFETY: both downgrades keep this thread a reader in the same CAS.
unsafe impl lock_api::RawRwLockUpgradeDowngrade for RawRwLock {
    #[inline]
    unsafe fn downgrade_upgradable(&self) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.downgrade_upgradable() }
    }

    #[inline]
    unsafe fn downgrade_to_upgradable(&self) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.downgrade_to_upgradable() }
    }
}

// SAFETY: as the untimed upgradable methods; a timed-out upgrade keeps the
// upgradable lock.
unsafe impl lock_api::RawRwLockUpgradeTimed for RawRwLock {
    #[inline]
    fn try_lock_upgradable_for(&self, timeout: Duration) -> bool {
        self.0.lock_upgradable_until(timeout::after(timeout))
    }

    #[inline]
    fn try_lock_upgradable_until(&self, timeout: Instant) -> bool {
        self.0.lock_upgradable_until(timeout::at(timeout))
    }

    #[inline]
    unsafe fn try_upgrade_for(&self, timeout: Duration) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.upgrade_until(timeout::after(timeout)) }
    }

    #[inline]
    unsafe fn try_upgrade_until(&self, timeout: Instant) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.upgrade_until(timeout::at(timeout)) }
    }
}
