//! [`Mutex`]: parking_lot's mutex type, on [`RawMutex`].

use crate::raw_mutex::RawMutex;

/// A mutual exclusion lock: parking_lot's `Mutex`, `lock_api::Mutex` on
/// waitwise's default raw mutex ([`RawMutex`]). No poisoning: a panic in
/// a critical section unlocks it.
///
/// # Examples
/// ```
/// use parking_lot::Mutex;
/// use std::sync::Arc;
///
/// let m = Arc::new(Mutex::new(0));
/// let hs: Vec<_> = (0..4)
///     .map(|_| {
///         let m = m.clone();
///         std::thread::spawn(move || *m.lock() += 1)
///     })
///     .collect();
/// for h in hs {
///     h.join().unwrap();
/// }
/// assert_eq!(*m.lock(), 4);
/// ```
pub type Mutex<T> = lock_api::Mutex<RawMutex, T>;

/// A [`Mutex`] built in a `const` context (parking_lot's `const_mutex`;
/// `Mutex::new` is `const` as well).
///
/// ```
/// static M: parking_lot::Mutex<u32> = parking_lot::const_mutex(3);
/// assert_eq!(*M.lock(), 3);
/// ```
pub const fn const_mutex<T>(val: T) -> Mutex<T> {
    Mutex::const_new(<RawMutex as lock_api::RawMutex>::INIT, val)
}

/// The guard of a [`Mutex`]: unlocks on drop.
pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawMutex, T>;

/// A [`MutexGuard`] narrowed to part of the data (`MutexGuard::map`).
pub type MappedMutexGuard<'a, T> = lock_api::MappedMutexGuard<'a, RawMutex, T>;
