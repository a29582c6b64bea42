//! [`FairMutex`]: parking_lot's always-fair mutex type, on
//! [`RawFairMutex`].

use crate::raw_fair_mutex::RawFairMutex;

/// A mutex that hands the lock over in FIFO order: parking_lot's
/// `FairMutex`, `lock_api::Mutex` on [`RawFairMutex`] (waitwise's ticket
/// lock).
///
/// # Examples
/// ```
/// let m = parking_lot::FairMutex::new(Vec::new());
/// m.lock().push(1);
/// assert_eq!(*m.lock(), [1]);
/// ```
pub type FairMutex<T> = lock_api::Mutex<RawFairMutex, T>;

/// A [`FairMutex`] built in a `const` context.
pub const fn const_fair_mutex<T>(val: T) -> FairMutex<T> {
    FairMutex::const_new(<RawFairMutex as lock_api::RawMutex>::INIT, val)
}

/// The guard of a [`FairMutex`].
pub type FairMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawFairMutex, T>;

/// A [`FairMutexGuard`] narrowed to part of the data.
pub type MappedFairMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, RawFairMutex, T>;
