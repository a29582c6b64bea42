//! [`RwLock`]: parking_lot's reader-writer lock type, on [`RawRwLock`].

use crate::raw_rwlock::RawRwLock;

/// A reader-writer lock with upgradable reads: parking_lot's `RwLock`,
/// `lock_api::RwLock` on waitwise's writer-preferring lock
/// ([`RawRwLock`]).
///
/// # Examples
/// ```
/// use parking_lot::{RwLock, RwLockUpgradableReadGuard, RwLockWriteGuard};
///
/// let l = RwLock::new(1);
/// {
///     let (a, b) = (l.read(), l.read());
///     assert_eq!(*a + *b, 2);
///     assert!(l.try_write().is_none());
/// }
/// let up = l.upgradable_read();
/// let mut w = RwLockUpgradableReadGuard::upgrade(up);
/// *w += 1;
/// let r = RwLockWriteGuard::downgrade(w);
/// assert_eq!(*r, 2);
/// ```
pub type RwLock<T> = lock_api::RwLock<RawRwLock, T>;

/// A [`RwLock`] built in a `const` context.
pub const fn const_rwlock<T>(val: T) -> RwLock<T> {
    RwLock::const_new(<RawRwLock as lock_api::RawRwLock>::INIT, val)
}

/// Shared guard of a [`RwLock`].
pub type RwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawRwLock, T>;

/// Exclusive guard of a [`RwLock`].
pub type RwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawRwLock, T>;

/// A [`RwLockReadGuard`] narrowed to part of the data.
pub type MappedRwLockReadGuard<'a, T> = lock_api::MappedRwLockReadGuard<'a, RawRwLock, T>;

/// A [`RwLockWriteGuard`] narrowed to part of the data.
pub type MappedRwLockWriteGuard<'a, T> = lock_api::MappedRwLockWriteGuard<'a, RawRwLock, T>;

/// Upgradable read guard of a [`RwLock`]: shared with readers, exclusive
/// of writers and other upgradable readers; `upgrade` makes it the write
/// guard once the readers have left.
pub type RwLockUpgradableReadGuard<'a, T> = lock_api::RwLockUpgradableReadGuard<'a, RawRwLock, T>;
