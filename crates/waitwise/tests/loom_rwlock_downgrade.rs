//! Loom models of the reader-writer lock's downgrade (`mutex/rwlock.rs`,
//! `RawRwLock::downgrade`): the write lock becomes a read lock in one
//! CAS, so no writer gets in between, waiting readers get in, and waiting
//! writers get in once the readers leave. Checked in every interleaving:
//! exclusion and publication (loom checks the `UnsafeCell` accesses), no
//! writer between the write and the downgraded read, and no lost wake-up
//! (a deadlock loom reports).
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_rwlock_downgrade`
//! (a few seconds of model checking on 2 cores, plus the build).
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

/// Adds one under the write lock, downgrades, and returns what it reads
/// under the read lock, which must be what it wrote.
fn increment_then_read(s: &Shared) -> u32 {
    assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
    // SAFETY: write-locked just above: no other access.
    let written = s.count.with_mut(|c| unsafe {
        *c += 1;
        *c
    });
    // SAFETY: write-locked above.
    unsafe { s.lock.downgrade() };
    // SAFETY: read-locked by the downgrade: only reads run concurrently.
    let read = s.count.with(|c| unsafe { *c });
    assert_eq!(read, written, "a writer got in between");
    // SAFETY: read-locked by the downgrade.
    unsafe { s.lock.unlock_shared() };
    read
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

/// A writer downgrades while a second writer and a reader wait: nothing
/// changes the count between its write and its read, and both waiters
/// get in.
#[test]
fn downgrade_with_a_writer_and_a_reader_waiting() {
    loom::model(|| {
        let s = shared();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let writer = {
            let s = s.clone();
            thread::spawn(move || increment_then_read(&s))
        };
        let reader = {
            let s = s.clone();
            thread::spawn(move || read_count(&s))
        };
        // SAFETY: write-locked above: no other access.
        s.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: write-locked above.
        unsafe { s.lock.downgrade() };
        // SAFETY: read-locked by the downgrade.
        assert_eq!(s.count.with(|c| unsafe { *c }), 1);
        // SAFETY: read-locked by the downgrade.
        unsafe { s.lock.unlock_shared() };
        assert_eq!(writer.join().unwrap(), 2);
        assert!((1..=2).contains(&reader.join().unwrap()));
        assert_eq!(read_count(&s), 2);
    });
}

/// Two writers downgrade while a third thread reads: each reads its own
/// write, and the lock ends free.
#[test]
fn two_downgrading_writers_and_a_reader() {
    loom::model(|| {
        let s = shared();
        let a = {
            let s = s.clone();
            thread::spawn(move || increment_then_read(&s))
        };
        let b = {
            let s = s.clone();
            thread::spawn(move || increment_then_read(&s))
        };
        let seen = read_count(&s);
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        assert!(seen <= 2);
        assert_eq!((a.min(b), a.max(b)), (1, 2));
        assert!(!s.lock.is_locked());
    });
}
