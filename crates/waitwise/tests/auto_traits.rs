//! Compile-time checks of the auto traits (`Send`, `Sync`, `Unpin`,
//! `UnwindSafe`, `RefUnwindSafe`) of every public primitive and guard,
//! against what std, parking_lot and crossbeam-channel give their
//! counterparts: code that swaps one of them for waitwise's must still
//! compile. Each check is a call of a generic function that only
//! compiles when the traits hold; the negative ones (a guard must not be
//! `Send`) are `compile_fail` doctests beside the types.
//!
//! The `lock_api` wrappers (`Mutex`, `RwLock` and the FIFO mutexes) are
//! `UnwindSafe` but not `RefUnwindSafe`, as parking_lot's: their data is
//! an `UnsafeCell` inside `lock_api`'s type, and only `lock_api` could
//! declare it (`waitwise::mutex` module docs, "Unwind safety").
#![cfg(not(loom))]

use std::cell::Cell;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::thread;
use waitwise::barrier::{
    DisseminationBarrier, DisseminationHandle, PairBarrier, TopologyBarrier, TopologyHandle,
    TreeBarrier, TreeHandle,
};
use waitwise::channel::{IntoIter, Iter, Receiver, Sender, TryIter};
use waitwise::mutex::{
    McsMutex, McsMutexGuard, RawMcsMutex, RawRwLock, RawTicketMutex, RawTtasMutex, TicketMutex,
    TicketMutexGuard, TtasMutex, TtasMutexGuard,
};
use waitwise::pool::ThreadPool;
use waitwise::{
    Barrier, Condvar, Event, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    Semaphore, WaitWord,
};

fn assert_sync<T: Sync>() {}

/// What std gives `Barrier`, `Condvar`, `Mutex<T>` and `RwLock<T>`
/// (for `T: Send + Sync`, unwind safe), and crossbeam-channel its ends.
fn assert_all<T: Send + Sync + Unpin + UnwindSafe + RefUnwindSafe>() {}

/// What parking_lot gives its `Mutex<T>` and `RwLock<T>`.
fn assert_lock_api_wrapper<T: Send + Sync + Unpin + UnwindSafe>() {}

/// What std and parking_lot give their guards (both not `Send`).
fn assert_guard<T: Sync + Unpin>() {}

#[test]
fn primitives_are_send_sync_unpin_and_unwind_safe_like_std_barrier_and_condvar() {
    assert_all::<Event>();
    assert_all::<Condvar>();
    assert_all::<Semaphore>();
    assert_all::<Barrier>();
    assert_all::<PairBarrier>();
    assert_all::<TreeBarrier>();
    assert_all::<DisseminationBarrier>();
    assert_all::<TopologyBarrier>();
    assert_all::<WaitWord>();
}

#[test]
fn raw_locks_are_send_sync_unpin_and_unwind_safe() {
    assert_all::<RawTtasMutex>();
    assert_all::<RawTicketMutex>();
    assert_all::<RawMcsMutex>();
    assert_all::<RawRwLock>();
}

#[test]
fn lock_wrappers_are_send_sync_unpin_and_unwind_safe_like_parking_lot() {
    assert_lock_api_wrapper::<Mutex<u32>>();
    assert_lock_api_wrapper::<TtasMutex<u32>>();
    assert_lock_api_wrapper::<TicketMutex<u32>>();
    assert_lock_api_wrapper::<McsMutex<u32>>();
    assert_lock_api_wrapper::<RwLock<u32>>();
}

#[test]
fn lock_guards_are_sync_like_std_mutex_guard() {
    // std: `impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T>`.
    assert_sync::<MutexGuard<'static, u32>>();
    assert_sync::<TicketMutexGuard<'static, u32>>();
    assert_sync::<McsMutexGuard<'static, u32>>();
    assert_sync::<RwLockReadGuard<'static, u32>>();
    assert_sync::<RwLockWriteGuard<'static, u32>>();
    assert_guard::<MutexGuard<'static, u32>>();
    assert_guard::<TtasMutexGuard<'static, u32>>();
    assert_guard::<TicketMutexGuard<'static, u32>>();
    assert_guard::<McsMutexGuard<'static, u32>>();
    assert_guard::<RwLockReadGuard<'static, u32>>();
    assert_guard::<RwLockWriteGuard<'static, u32>>();
    assert_guard::<waitwise::mutex::RwLockUpgradableReadGuard<'static, u32>>();
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

#[test]
fn channel_ends_are_unwind_safe_for_any_t_like_crossbeam_channel() {
    assert_all::<Sender<u32>>();
    assert_all::<Receiver<u32>>();
    // `Cell` is neither `Sync` nor `RefUnwindSafe`: the ends still are
    // (values move through the channel, they are never shared).
    assert_all::<Sender<Cell<u32>>>();
    assert_all::<Receiver<Cell<u32>>>();
    assert_all::<IntoIter<Cell<u32>>>();
    fn assert_iter<T: Send + Sync + Unpin + UnwindSafe + RefUnwindSafe>() {}
    assert_iter::<Iter<'static, Cell<u32>>>();
    assert_iter::<TryIter<'static, Cell<u32>>>();
}

#[test]
fn a_channel_end_is_used_in_catch_unwind_without_assert_unwind_safe() {
    let (tx, rx) = waitwise::channel::bounded(2);
    let caught = std::panic::catch_unwind(|| {
        tx.send(1).unwrap();
        panic!("after a send");
    });
    assert!(caught.is_err());
    assert_eq!(rx.recv(), Ok(1));
}

#[test]
fn barrier_handles_move_to_their_thread_and_the_pool_is_shared() {
    // A handle is one participant's: it moves to its thread (`Send`) and
    // is not shared (not `Sync`, by a `Cell` marker).
    fn assert_handle<T: Send + Unpin>() {}
    assert_handle::<TreeHandle<'static>>();
    assert_handle::<DisseminationHandle<'static>>();
    assert_handle::<TopologyHandle<'static>>();
    fn assert_pool<T: Send + Sync + Unpin>() {}
    assert_pool::<ThreadPool>();
}

#[test]
fn pool_scopes_are_shared_like_rayons() {
    // A task captures `&Scope` / `&ScopeFifo` to spawn more: both `Sync`,
    // as rayon's `Scope` and `ScopeFifo`.
    fn assert_scope<T: Send + Sync>() {}
    assert_scope::<waitwise::pool::Scope<'static, 'static>>();
    assert_scope::<waitwise::pool::ScopeFifo<'static, 'static>>();
}
