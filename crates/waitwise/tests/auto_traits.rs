//! Compile-time checks of the auto traits (`Send`, `Sync`, `Unpin`,
//! `UnwindSafe`, `RefUnwindSafe`) of every public primitive and guard,
//! against what std, parking_lot and crossbeam-channel give their
//! counterparts: code that swaps one of them for waitwise's must still
//! compile. Each check is a call of a generic function that only
//! compiles when the trait holds; the negative ones (a guard must not be
//! `Send`) are `compile_fail` doctests beside the types.
#![cfg(not(loom))]

use std::thread;
use waitwise::mutex::{McsMutex, McsMutexGuard, TicketMutex, TicketMutexGuard};
use waitwise::{MutexGuard, RwLockReadGuard, RwLockWriteGuard};

fn assert_sync<T: Sync>() {}

#[test]
fn lock_guards_are_sync_like_std_mutex_guard() {
    // std: `impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T>`.
    assert_sync::<MutexGuard<'static, u32>>();
    assert_sync::<TicketMutexGuard<'static, u32>>();
    assert_sync::<McsMutexGuard<'static, u32>>();
    assert_sync::<RwLockReadGuard<'static, u32>>();
    assert_sync::<RwLockWriteGuard<'static, u32>>();
}

#[test]
fn fifo_mutex_guards_can_be_read_from_another_thread() {
    let ticket = TicketMutex::new(7);
    let mcs = McsMutex::new(8);
    let (t, m) = (ticket.lock(), mcs.lock());
    // Borrowing a guard into a scoped thread needs `&Guard: Send`, i.e.
    // `Guard: Sync`.
    let (t, m) = (&t, &m);
    thread::scope(|s| {
        s.spawn(move || assert_eq!((**t, **m), (7, 8)));
    });
}
