//! Loom models of the reader-writer lock's upgradable reads
//! (`mutex/rwlock.rs`, "Upgradable reads"): an upgradable reader admits
//! readers but no writer and no second upgradable reader, and its upgrade
//! waits for the readers to leave and lets no writer in between. Checked
//! in every interleaving: exclusion and publication (loom checks the
//! `UnsafeCell` accesses), no write between the upgradable read and the
//! upgrade, and no lost wake-up (a deadlock loom reports).
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_rwlock_upgrade`
//! (seconds of model checking on 2 cores, plus the build).
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::thread;
use waitwise::mutex::RawRwLock;
use waitwise::{Deadline, Policy, WaitOptions};
use waitwise_platform::shim::Arc;

/// A count that loom checks for unsynchronized access.
struct Shared {
    lock: RawRwLock,
    count: UnsafeCell<u32>,
}

// SAFETY: `count` is only accessed with the lock held (loom checks it).
unsafe impl Sync for Shared {}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        lock: RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block())),
        count: UnsafeCell::new(0),
    })
}

/// Reads the count under the upgradable lock, upgrades, and adds one; the
/// count must not have changed in between. Returns what it wrote.
fn read_upgrade_increment(s: &Shared) -> u32 {
    assert!(s.lock.lock_upgradable_until(Deadline::NEVER));
    // SAFETY: upgradable-locked just above: only reads run concurrently.
    let seen = s.count.with(|c| unsafe { *c });
    // SAFETY: upgradable-locked above.
    assert!(unsafe { s.lock.upgrade_until(Deadline::NEVER) });
    // SAFETY: write-locked by the upgrade: no other access.
    let written = s.count.with_mut(|c| unsafe {
        assert_eq!(*c, seen, "a writer got in before the upgrade");
        *c += 1;
        *c
    });
    // SAFETY: write-locked by the upgrade.
    unsafe { s.lock.unlock_exclusive() };
    written
}

/// Adds one under the write lock.
fn increment(s: &Shared) {
    assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
    // SAFETY: write-locked just above: no other access.
    s.count.with_mut(|c| unsafe { *c += 1 });
    // SAFETY: write-locked above.
    unsafe { s.lock.unlock_exclusive() };
}

/// Reads the count under a read lock.
fn read_count(s: &Shared) -> u32 {
    assert!(s.lock.lock_shared_until(Deadline::NEVER));
    // SAFETY: read-locked just above: only reads run concurrently.
    let v = s.count.with(|c| unsafe { *c });
    // SAFETY: read-locked above.
    unsafe { s.lock.unlock_shared() };
    v
}

/// The main thread upgrades while a reader and a writer come and go: the
/// upgrade waits for the reader, no write falls between its read and its
/// upgrade, and both others get in.
#[test]
fn upgrade_vs_read_vs_write() {
    loom::model(|| {
        let s = shared();
        let reader = {
            let s = s.clone();
            thread::spawn(move || read_count(&s))
        };
        let writer = {
            let s = s.clone();
            thread::spawn(move || increment(&s))
        };
        let written = read_upgrade_increment(&s);
        assert!((1..=2).contains(&written));
        assert!(reader.join().unwrap() <= 2);
        writer.join().unwrap();
        assert_eq!(read_count(&s), 2);
        assert!(!s.lock.is_locked());
    });
}

/// Two upgradable readers: the second waits for the first (which upgrades
/// and writes), so both increments land and neither deadlocks.
#[test]
fn two_upgradable_readers_take_turns() {
    loom::model(|| {
        let s = shared();
        let other = {
            let s = s.clone();
            thread::spawn(move || read_upgrade_increment(&s))
        };
        let mine = read_upgrade_increment(&s);
        let theirs = other.join().unwrap();
        assert_eq!((mine.min(theirs), mine.max(theirs)), (1, 2));
        assert!(!s.lock.is_locked());
    });
}

/// A writer downgrades to an upgradable read and upgrades again while
/// another upgradable reader downgrades to a plain read: the writer reads
/// its own write after the downgrade, and both get in.
#[test]
fn upgrade_vs_downgrade() {
    loom::model(|| {
        let s = shared();
        let other = {
            let s = s.clone();
            thread::spawn(move || {
                assert!(s.lock.lock_upgradable_until(Deadline::NEVER));
                // SAFETY: upgradable-locked above; becomes a read lock.
                unsafe { s.lock.downgrade_upgradable() };
                // SAFETY: read-locked by the downgrade.
                let v = s.count.with(|c| unsafe { *c });
                // SAFETY: read-locked by the downgrade.
                unsafe { s.lock.unlock_shared() };
                v
            })
        };
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        // SAFETY: write-locked just above.
        s.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: write-locked above; becomes the upgradable read lock.
        unsafe { s.lock.downgrade_to_upgradable() };
        // SAFETY: upgradable-locked by the downgrade.
        assert_eq!(s.count.with(|c| unsafe { *c }), 1);
        // SAFETY: upgradable-locked by the downgrade.
        assert!(unsafe { s.lock.upgrade_until(Deadline::NEVER) });
        // SAFETY: write-locked by the upgrade.
        s.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: write-locked by the upgrade.
        unsafe { s.lock.unlock_exclusive() };
        assert!(other.join().unwrap() <= 2);
        assert_eq!(read_count(&s), 2);
        assert!(!s.lock.is_locked());
    });
}
