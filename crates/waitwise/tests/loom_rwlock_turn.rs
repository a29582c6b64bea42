//! Loom models of the reader-writer lock's readers' turn
//! (`mutex/rwlock.rs`): a reader kept out by waiting writers asks for a
//! turn (`READERS_WAITING`), the next write unlock grants it (`READ_TURN`),
//! the first reader out ends it, and a writer ends a turn nobody took.
//! Checked in every interleaving: exclusion and publication (loom checks
//! the `UnsafeCell` accesses), no lost wake-up and no turn that keeps the
//! writers out for good (either is a deadlock loom reports).
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_rwlock_turn`
//! (about 10 s of model checking on 2 cores, plus the build). Under
//! loom the writers' grace for an unused turn is one look at the word.
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

/// Adds one under the write lock.
fn write_increment(s: &Shared) {
    assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
    // SAFETY: write-locked just above: no other access.
    s.count.with_mut(|c| unsafe { *c += 1 });
    // SAFETY: write-locked above.
    unsafe { s.lock.unlock_exclusive() };
}

/// A thread that adds one under the write lock.
fn spawn_writer(s: &Arc<Shared>) -> thread::JoinHandle<()> {
    let s = s.clone();
    thread::spawn(move || write_increment(&s))
}

/// Reads the count under a read lock (until `deadline`); `None` if the
/// attempt gave up.
fn read_count(s: &Shared, deadline: Deadline) -> Option<u32> {
    if !s.lock.lock_shared_until(deadline) {
        return None;
    }
    // SAFETY: read-locked just above: only reads run concurrently.
    let v = s.count.with(|c| unsafe { *c });
    // SAFETY: read-locked above.
    unsafe { s.lock.unlock_shared() };
    Some(v)
}

/// A writer holds the lock, a second writer and a reader wait: the
/// reader may get a turn ahead of the second writer; everybody gets in.
#[test]
fn rwlock_turn_reader_between_two_writers() {
    loom::model(|| {
        let s = shared();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let writer = spawn_writer(&s);
        let reader = {
            let s = s.clone();
            thread::spawn(move || read_count(&s, Deadline::NEVER).unwrap())
        };
        // SAFETY: write-locked above: no other access.
        s.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: write-locked above.
        unsafe { s.lock.unlock_exclusive() };
        writer.join().unwrap();
        let seen = reader.join().unwrap();
        assert!(seen == 1 || seen == 2, "{seen}");
        assert_eq!(read_count(&s, Deadline::NEVER), Some(2));
        assert!(!s.lock.is_locked());
    });
}

/// A reader that asks for a turn and gives up (loom times its sleep out at
/// once) leaves a turn nobody takes: the waiting writer must still get in.
#[test]
fn rwlock_turn_unused_turn_does_not_keep_a_writer_out() {
    loom::model(|| {
        let s = shared();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let writer = spawn_writer(&s);
        let reader = {
            let s = s.clone();
            thread::spawn(move || {
                // Far enough that the real clock never decides a branch.
                let far = Deadline::after(std::time::Duration::from_secs(3600));
                read_count(&s, far)
            })
        };
        // SAFETY: write-locked above.
        unsafe { s.lock.unlock_exclusive() };
        writer.join().unwrap();
        if let Some(seen) = reader.join().unwrap() {
            assert!(seen <= 1);
        }
        assert_eq!(read_count(&s, Deadline::NEVER), Some(1));
        assert!(!s.lock.is_locked());
    });
}
