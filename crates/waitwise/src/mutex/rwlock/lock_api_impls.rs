//! [`RawRwLock`] as lock_api's raw reader-writer lock, with downgrade,
//! upgradable and timed locking: the guard-level API `lock_api::RwLock`
//! builds on (`crate::RwLock`).

use super::*;

// SAFETY: a writer enters only by a CAS from a state with no readers and no
// writer to WRITE_LOCKED, a reader only by a CAS from a state without
// WRITE_LOCKED that adds one reader; both SeqCst (acquire), releases SeqCst
// RMWs (release). Guards are stateless: forgetting one leaves the lock held,
// moving or dropping the lock touches nothing a guard refers to. They are
// `GuardNoSend`, so the guards are not `Send`, as std's and parking_lot's.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLock for RawRwLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type SharedGuard = lock_api::GuardNoSend;
    type ExclusiveGuard = lock_api::GuardNoSend;

    #[inline]
    fn lock_shared(&self) -> Self::SharedGuard {
        let acquired = self.lock_shared_until(Deadline::NEVER);
        debug_assert!(acquired);
        lock_api::GuardNoSend::new()
    }

    #[inline]
    fn try_lock_shared(&self) -> Option<Self::SharedGuard> {
        RawRwLock::try_lock_shared(self).then(lock_api::GuardNoSend::new)
    }

    #[inline]
    unsafe fn unlock_shared(&self, _guard: Self::SharedGuard) {
        // SAFETY: the caller passes the guard of a held read lock.
        unsafe { RawRwLock::unlock_shared(self) }
    }

    #[inline]
    fn lock_exclusive(&self) -> Self::ExclusiveGuard {
        let acquired = self.lock_exclusive_until(Deadline::NEVER);
        debug_assert!(acquired);
        lock_api::GuardNoSend::new()
    }

    #[inline]
    fn try_lock_exclusive(&self) -> Option<Self::ExclusiveGuard> {
        RawRwLock::try_lock_exclusive(self).then(lock_api::GuardNoSend::new)
    }

    #[inline]
    unsafe fn unlock_exclusive(&self, _guard: Self::ExclusiveGuard) {
        // SAFETY: the caller passes the guard of the held write lock.
        unsafe { RawRwLock::unlock_exclusive(self) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        RawRwLock::is_locked(self)
    }

    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        RawRwLock::is_locked_exclusive(self)
    }
}

// SAFETY: `downgrade` moves the state from WRITE_LOCKED with no readers to
// one reader in one SeqCst CAS: no writer can enter in between (it needs
// `readers == 0 && !WRITE_LOCKED`), and readers enter only after it.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockDowngrade for RawRwLock {
    #[inline]
    unsafe fn downgrade(&self, _guard: Self::ExclusiveGuard) -> Self::SharedGuard {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::downgrade(self) };
        lock_api::GuardNoSend::new()
    }
}

// SAFETY: the upgradable reader is a reader (counted in `readers`) that
// excludes other upgradable readers by the UPGRADABLE bit, taken in the
// same SeqCst CAS; `upgrade` moves from `readers == 1` with UPGRADABLE to
// WRITE_LOCKED with no readers in one SeqCst CAS (acquiring the read
// unlocks before it), so no writer enters in between and no reader is
// left inside.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockUpgrade for RawRwLock {
    type UpgradableGuard = lock_api::GuardNoSend;

    #[inline]
    fn lock_upgradable(&self) -> Self::UpgradableGuard {
        let acquired = self.lock_upgradable_until(Deadline::NEVER);
        debug_assert!(acquired);
        lock_api::GuardNoSend::new()
    }

    #[inline]
    fn try_lock_upgradable(&self) -> Option<Self::UpgradableGuard> {
        RawRwLock::try_lock_upgradable(self).then(lock_api::GuardNoSend::new)
    }

    #[inline]
    unsafe fn unlock_upgradable(&self, _guard: Self::UpgradableGuard) {
        // SAFETY: the caller passes the guard of the held upgradable lock.
        unsafe { RawRwLock::unlock_upgradable(self) }
    }

    #[inline]
    unsafe fn upgrade(&self, _guard: Self::UpgradableGuard) -> Self::ExclusiveGuard {
        // SAFETY: the caller passes the guard of the held upgradable lock.
        let acquired = unsafe { self.upgrade_until(Deadline::NEVER) };
        debug_assert!(acquired);
        lock_api::GuardNoSend::new()
    }

    #[inline]
    unsafe fn try_upgrade(
        &self,
        guard: Self::UpgradableGuard,
    ) -> Result<Self::ExclusiveGuard, Self::UpgradableGuard> {
        // SAFETY: the caller passes the guard of the held upgradable lock.
        if unsafe { RawRwLock::try_upgrade(self) } {
            Ok(lock_api::GuardNoSend::new())
        } else {
            Err(guard)
        }
    }
}

// SAFETY: both downgrades are one SeqCst CAS that keeps this thread a
// reader throughout: `downgrade_upgradable` only drops UPGRADABLE, and
// `downgrade_to_upgradable` is the write unlock with `readers + 1 |
// UPGRADABLE` in the same CAS, so no writer enters in between.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockUpgradeDowngrade for RawRwLock {
    #[inline]
    unsafe fn downgrade_upgradable(&self, _guard: Self::UpgradableGuard) -> Self::SharedGuard {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::downgrade_upgradable(self) };
        lock_api::GuardNoSend::new()
    }

    #[inline]
    unsafe fn downgrade_to_upgradable(
        &self,
        _guard: Self::ExclusiveGuard,
    ) -> Self::UpgradableGuard {
        // SAFETY: forwarded from the caller.
        unsafe { RawRwLock::downgrade_to_upgradable(self) };
        lock_api::GuardNoSend::new()
    }
}

// SAFETY: as the untimed upgradable methods; a timed-out upgrade undoes
// its count and keeps the upgradable read lock.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockUpgradeTimed for RawRwLock {
    fn try_lock_upgradable_for(&self, timeout: Duration) -> Option<Self::UpgradableGuard> {
        self.lock_upgradable_until(deadline_after(timeout))
            .then(lock_api::GuardNoSend::new)
    }

    fn try_lock_upgradable_until(&self, timeout: Instant) -> Option<Self::UpgradableGuard> {
        self.lock_upgradable_until(deadline_at(timeout))
            .then(lock_api::GuardNoSend::new)
    }

    unsafe fn try_upgrade_for(
        &self,
        guard: Self::UpgradableGuard,
        timeout: Duration,
    ) -> Result<Self::ExclusiveGuard, Self::UpgradableGuard> {
        // SAFETY: the caller passes the guard of the held upgradable lock.
        if unsafe { self.upgrade_until(deadline_after(timeout)) } {
            Ok(lock_api::GuardNoSend::new())
        } else {
            Err(guard)
        }
    }

    unsafe fn try_upgrade_until(
        &self,
        guard: Self::UpgradableGuard,
        timeout: Instant,
    ) -> Result<Self::ExclusiveGuard, Self::UpgradableGuard> {
        // SAFETY: the caller passes the guard of the held upgradable lock.
        if unsafe { self.upgrade_until(deadline_at(timeout)) } {
            Ok(lock_api::GuardNoSend::new())
        } else {
            Err(guard)
        }
    }
}

// SAFETY: timed attempts acquire through the same CASes or change nothing
// but their own registration, which they undo.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockTimed for RawRwLock {
    type Duration = Duration;
    type Instant = Instant;

    fn try_lock_shared_for(&self, timeout: Duration) -> Option<Self::SharedGuard> {
        self.lock_shared_until(deadline_after(timeout))
            .then(lock_api::GuardNoSend::new)
    }

    fn try_lock_shared_until(&self, timeout: Instant) -> Option<Self::SharedGuard> {
        self.lock_shared_until(deadline_at(timeout))
            .then(lock_api::GuardNoSend::new)
    }

    fn try_lock_exclusive_for(&self, timeout: Duration) -> Option<Self::ExclusiveGuard> {
        self.lock_exclusive_until(deadline_after(timeout))
            .then(lock_api::GuardNoSend::new)
    }

    fn try_lock_exclusive_until(&self, timeout: Instant) -> Option<Self::ExclusiveGuard> {
        self.lock_exclusive_until(deadline_at(timeout))
            .then(lock_api::GuardNoSend::new)
    }
}
