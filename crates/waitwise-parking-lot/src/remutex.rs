//! [`ReentrantMutex`]: parking_lot's reentrant mutex type, on
//! [`RawMutex`] and [`RawThreadId`].

use crate::raw_mutex::RawMutex;
use lock_api::GetThreadId;
use std::num::NonZeroUsize;

/// The current thread's id for [`ReentrantMutex`]: the address of a
/// thread-local byte, unique among the running threads and never zero.
pub struct RawThreadId;

// SAFETY: two threads alive at once have distinct thread-locals, hence
// distinct addresses; a thread-local with a size is never at address 0.
unsafe impl GetThreadId for RawThreadId {
    const INIT: RawThreadId = RawThreadId;

    fn nonzero_thread_id(&self) -> NonZeroUsize {
        thread_local!(static KEY: u8 = const { 0 });
        KEY.with(|x| {
            NonZeroUsize::new(x as *const u8 as usize).expect("a thread-local at address 0")
        })
    }
}

/// A mutex that the thread holding it may lock again: parking_lot's
/// `ReentrantMutex`. Its guard gives shared access only.
///
/// # Examples
/// ```
/// let m = parking_lot::ReentrantMutex::new(1);
/// let a = m.lock();
/// let b = m.lock(); // the same thread: no deadlock
/// assert_eq!(*a + *b, 2);
/// ```
pub type ReentrantMutex<T> = lock_api::ReentrantMutex<RawMutex, RawThreadId, T>;

/// A [`ReentrantMutex`] built in a `const` context.
pub const fn const_reentrant_mutex<T>(val: T) -> ReentrantMutex<T> {
    ReentrantMutex::const_new(
        <RawMutex as lock_api::RawMutex>::INIT,
        <RawThreadId as GetThreadId>::INIT,
        val,
    )
}

/// The guard of a [`ReentrantMutex`].
pub type ReentrantMutexGuard<'a, T> = lock_api::ReentrantMutexGuard<'a, RawMutex, RawThreadId, T>;

/// A [`ReentrantMutexGuard`] narrowed to part of the data.
pub type MappedReentrantMutexGuard<'a, T> =
    lock_api::MappedReentrantMutexGuard<'a, RawMutex, RawThreadId, T>;
