//! Loom models of the spin lock's one algorithm, `SpinLockRef` (the
//! interposer's `pthread_spin_*`): mutual exclusion with publication of the
//! critical section (two lockers, and a `try_lock` beside a locker), and a
//! waiter that gets the lock once the holder lets go. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_spin`
//! (under a second once built).
#![cfg(loom)]

mod loom_common;

use loom::sync::atomic::{AtomicU32, Ordering};
use loom::thread;
use loom_common::model_reaching_both;
use waitwise::mutex::SpinLockRef;
use waitwise_platform::shim::Arc;

/// The lock word and a counter the lock protects, updated with Relaxed
/// read-then-write: a lost update means two holders at once, and a holder
/// that misses the previous one's write means the lock did not publish it.
struct Shared {
    word: AtomicU32,
    count: AtomicU32,
}

impl Shared {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            word: AtomicU32::new(SpinLockRef::FREE),
            count: AtomicU32::new(0),
        })
    }

    fn lock(&self) -> SpinLockRef<'_> {
        SpinLockRef::new(&self.word)
    }

    /// The critical section: read, then write one more.
    fn bump(&self) {
        // Relaxed: the lock must order these.
        let v = self.count.load(Ordering::Relaxed);
        self.count.store(v + 1, Ordering::Relaxed);
    }
}

#[test]
fn two_lockers_exclude_each_other_and_see_each_others_writes() {
    loom::model(|| {
        let s = Shared::new();
        let t = {
            let s = s.clone();
            thread::spawn(move || {
                s.lock().lock();
                s.bump();
                s.lock().unlock();
            })
        };
        s.lock().lock();
        s.bump();
        s.lock().unlock();
        t.join().unwrap();
        assert_eq!(s.count.load(Ordering::Relaxed), 2);
        assert!(!s.lock().is_locked());
    });
}

#[test]
fn try_lock_beside_a_locker_excludes_and_publishes() {
    model_reaching_both("try_lock took the lock", || {
        let s = Shared::new();
        let t = {
            let s = s.clone();
            thread::spawn(move || {
                let got = s.lock().try_lock();
                if got {
                    s.bump();
                    s.lock().unlock();
                }
                got
            })
        };
        s.lock().lock();
        s.bump();
        s.lock().unlock();
        let got = t.join().unwrap();
        assert_eq!(s.count.load(Ordering::Relaxed), 1 + u32::from(got));
        got
    });
}

#[test]
fn a_waiter_gets_the_lock_after_the_holder_lets_go() {
    loom::model(|| {
        let s = Shared::new();
        s.lock().lock();
        let t = {
            let s = s.clone();
            thread::spawn(move || {
                // Held by the main thread: this waits (polls) until the
                // unlock below.
                s.lock().lock();
                assert_eq!(s.count.load(Ordering::Relaxed), 1);
                s.bump();
                s.lock().unlock();
            })
        };
        s.bump();
        s.lock().unlock();
        t.join().unwrap();
        assert_eq!(s.count.load(Ordering::Relaxed), 2);
    });
}
