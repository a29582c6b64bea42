//! parking_lot 0.12's public API on waitwise's locks, as a crate named
//! `parking_lot`, so that one line in a workspace's `Cargo.toml` moves a
//! whole dependency tree, parking_lot's users included, onto waitwise:
//!
//! ```toml
//! [patch.crates-io]
//! parking_lot = { path = "path/to/waitwise/crates/waitwise-parking-lot" }
//! ```
//!
//! | parking_lot | here | raw lock |
//! |---|---|---|
//! | [`Mutex`], [`RawMutex`] | `lock_api::Mutex<RawMutex, T>` | waitwise's default mutex, [`waitwise::mutex::RawTtasMutex`] |
//! | [`FairMutex`], [`RawFairMutex`] | `lock_api::Mutex<RawFairMutex, T>` | the FIFO [`waitwise::mutex::RawTicketMutex`] |
//! | [`ReentrantMutex`], [`RawThreadId`] | `lock_api::ReentrantMutex<RawMutex, RawThreadId, T>` | as [`Mutex`] |
//! | [`RwLock`], [`RawRwLock`] | `lock_api::RwLock<RawRwLock, T>`, upgradable reads included | [`waitwise::mutex::RawRwLock`] |
//! | [`Condvar`] | for [`MutexGuard`]s | [`waitwise::Condvar`] |
//! | [`Once`] | `call_once`, `call_once_force`, [`OnceState`] | a [`waitwise::Mutex`] and a state byte |
//!
//! The `lock_api` re-exported is 0.4, parking_lot 0.12's, so a dependent
//! that names `lock_api::Mutex<parking_lot::RawMutex, T>` itself gets the
//! same type. Features as parking_lot's: `send_guard`, `arc_lock`,
//! `serde`, `owning_ref`; `nightly` and `hardware-lock-elision` are
//! accepted and change nothing. Not provided: `deadlock_detection` (its
//! `deadlock` module).
//!
//! Where the behaviour differs from parking_lot's (the README has the
//! full list): the fair unlocks (`unlock_fair`, `bump`) of [`Mutex`] and
//! [`RwLock`] are their plain unlocks (waitwise's locks bound their
//! unfairness themselves), and a read lock waits for a waiting writer
//! unless taken with `read_recursive`, as in parking_lot.
//!
//! # Examples
//! ```
//! use parking_lot::{Condvar, Mutex, RwLock, RwLockUpgradableReadGuard};
//!
//! let m = Mutex::new(1);
//! *m.lock() += 1;
//! assert_eq!(*m.lock(), 2);
//!
//! let l = RwLock::new(5);
//! let up = l.upgradable_read();
//! assert_eq!(*l.read(), 5); // readers still enter
//! *RwLockUpgradableReadGuard::upgrade(up) += 1;
//! assert_eq!(*l.read(), 6);
//!
//! let cv = Condvar::new();
//! assert!(!cv.notify_one()); // nobody waits
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod condvar;
mod fair_mutex;
mod mutex;
mod once;
mod raw_fair_mutex;
mod raw_mutex;
mod raw_rwlock;
mod remutex;
mod rwlock;
mod timeout;

/// The guards' `Send` marker: parking_lot's guards are `Send` only with
/// the `send_guard` feature.
#[cfg(feature = "send_guard")]
type GuardMarker = lock_api::GuardSend;
#[cfg(not(feature = "send_guard"))]
type GuardMarker = lock_api::GuardNoSend;

pub use condvar::{Condvar, WaitTimeoutResult};
pub use fair_mutex::{const_fair_mutex, FairMutex, FairMutexGuard, MappedFairMutexGuard};
pub use mutex::{const_mutex, MappedMutexGuard, Mutex, MutexGuard};
pub use once::{Once, OnceState};
pub use raw_fair_mutex::RawFairMutex;
pub use raw_mutex::RawMutex;
pub use raw_rwlock::RawRwLock;
pub use remutex::{
    const_reentrant_mutex, MappedReentrantMutexGuard, RawThreadId, ReentrantMutex,
    ReentrantMutexGuard,
};
pub use rwlock::{
    const_rwlock, MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard,
    RwLockUpgradableReadGuard, RwLockWriteGuard,
};

pub use ::lock_api;

#[cfg(feature = "arc_lock")]
pub use lock_api::{
    ArcMutexGuard, ArcReentrantMutexGuard, ArcRwLockReadGuard, ArcRwLockUpgradableReadGuard,
    ArcRwLockWriteGuard,
};
