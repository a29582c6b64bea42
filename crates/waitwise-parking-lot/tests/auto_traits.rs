//! Compile-time checks of the auto traits of the drop-in's types against
//! what parking_lot 0.12 gives them: a dependency tree patched onto this
//! crate must still compile. `Mutex<T>`, `FairMutex<T>`,
//! `ReentrantMutex<T>` and `RwLock<T>` are `UnwindSafe` but not
//! `RefUnwindSafe`, exactly as parking_lot's (`lock_api`'s types; the
//! `waitwise::mutex` module docs, "Unwind safety", say why no other crate
//! can add it); guards are `Sync` and, without `send_guard`, not `Send`.

use parking_lot::{
    Condvar, FairMutex, FairMutexGuard, Mutex, MutexGuard, Once, RawFairMutex, RawMutex, RawRwLock,
    ReentrantMutex, ReentrantMutexGuard, RwLock, RwLockReadGuard, RwLockUpgradableReadGuard,
    RwLockWriteGuard,
};
use std::panic::{RefUnwindSafe, UnwindSafe};

/// What parking_lot gives `Condvar`, `Once` and its raw locks.
fn assert_all<T: Send + Sync + Unpin + UnwindSafe + RefUnwindSafe>() {}
/// What parking_lot gives its lock types.
fn assert_lock<T: Send + Sync + Unpin + UnwindSafe>() {}
/// What parking_lot gives its guards (`Send` only with `send_guard`).
fn assert_guard<T: Sync + Unpin>() {}
#[cfg(feature = "send_guard")]
fn assert_send<T: Send>() {}

#[test]
fn condvar_once_and_raw_locks_are_send_sync_and_unwind_safe_like_parking_lot() {
    assert_all::<Condvar>();
    assert_all::<Once>();
    assert_all::<RawMutex>();
    assert_all::<RawFairMutex>();
    assert_all::<RawRwLock>();
}

#[test]
fn locks_are_send_sync_and_unwind_safe_like_parking_lot() {
    assert_lock::<Mutex<u32>>();
    assert_lock::<FairMutex<u32>>();
    assert_lock::<ReentrantMutex<u32>>();
    assert_lock::<RwLock<u32>>();
}

#[test]
fn guards_are_sync_like_parking_lot() {
    assert_guard::<MutexGuard<'static, u32>>();
    assert_guard::<FairMutexGuard<'static, u32>>();
    assert_guard::<ReentrantMutexGuard<'static, u32>>();
    assert_guard::<RwLockReadGuard<'static, u32>>();
    assert_guard::<RwLockWriteGuard<'static, u32>>();
    assert_guard::<RwLockUpgradableReadGuard<'static, u32>>();
    #[cfg(feature = "send_guard")]
    {
        assert_send::<MutexGuard<'static, u32>>();
        assert_send::<RwLockUpgradableReadGuard<'static, u32>>();
    }
}
