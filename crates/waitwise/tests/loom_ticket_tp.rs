//! Loom models of the time-published ticket lock (`mutex/ticket.rs`,
//! "Fairness"; `mutex/liveness.rs`): a release skips tickets whose waiters
//! published their sleep, serves a running ticket behind them or, when
//! none is taken, frees the lock (`serving = next`, with the
//! store-buffering check of a ticket taken meanwhile); skipped waiters take
//! a new ticket, patient after `MAX_PASSES` (1 under loom) skips, and a
//! patient sleeper is never skipped. Two slots under loom: the third
//! ticket shares the first one's slot and beat. Checked in every interleaving:
//! mutual exclusion and publication (loom checks the `UnsafeCell`
//! accesses), no lost wake-up (a stranded sleeper is a deadlock loom
//! reports), and a free lock once everybody is done.
//!
//! Under loom a waiter publishes its sleep and sleeps at once (the models
//! use `/b/0` and loom skips polling), and a waiter that has not published
//! counts as running, so a release that finds one sleeper and one
//! newcomer behind it skips the sleeper.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_ticket_tp`
//! (a few seconds of model checking on 2 cores, plus the build).
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::thread;
use waitwise::mutex::RawTicketMutex;
use waitwise::{Policy, WaitOptions};
use waitwise_platform::shim::Arc;

/// The lock and a counter that loom checks for unsynchronized access.
struct Shared {
    lock: RawTicketMutex,
    count: UnsafeCell<u32>,
}

// SAFETY: `count` is only accessed with `lock` held (and loom checks it).
unsafe impl Sync for Shared {}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        lock: RawTicketMutex::with_options(WaitOptions::new().policy(Policy::always_block())),
        count: UnsafeCell::new(0),
    })
}

/// Takes the lock once and adds one to the count.
fn increment(s: &Shared) {
    let g = s.lock.lock();
    // SAFETY: the lock is held.
    s.count.with_mut(|c| unsafe { *c += 1 });
    // SAFETY: `g` is this acquisition.
    unsafe { s.lock.unlock(g) };
}

fn spawn_incrementer(s: &Arc<Shared>) -> thread::JoinHandle<()> {
    let s = s.clone();
    thread::spawn(move || increment(&s))
}

/// The count, read with the lock held; the lock is then free.
fn final_count(s: &Shared) -> u32 {
    let g = s.lock.lock();
    // SAFETY: the lock is held.
    let n = s.count.with(|c| unsafe { *c });
    // SAFETY: `g` is this acquisition.
    unsafe { s.lock.unlock(g) };
    assert!(!s.lock.is_locked());
    n
}

/// Two waiters queue behind a holder; the release may find the first
/// asleep and the second not yet published (running), skip the first and
/// serve the second; the first takes a new ticket (patient) and is served.
#[test]
fn sleeper_passed_over_for_a_running_waiter() {
    loom::model(|| {
        let s = shared();
        let g = s.lock.lock();
        let hs: Vec<_> = (0..2).map(|_| spawn_incrementer(&s)).collect();
        // SAFETY: `g` is this acquisition.
        unsafe { s.lock.unlock(g) };
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(final_count(&s), 2);
    });
}

/// One waiter queues behind a holder and sleeps: the release skips it and
/// frees the lock (or serves the waiter, when it had not published its
/// sleep yet), the holder takes the lock again, and the skipped waiter
/// takes a new ticket as patient and is served asleep.
#[test]
fn lone_sleeper_passed_over_frees_the_lock() {
    loom::model(|| {
        let s = shared();
        let g = s.lock.lock();
        let h = spawn_incrementer(&s);
        // SAFETY: `g` is this acquisition.
        unsafe { s.lock.unlock(g) };
        increment(&s);
        h.join().unwrap();
        assert_eq!(final_count(&s), 2);
    });
}

/// A release that skips every ticket taken races a newcomer taking the
/// next one: either sees the other (the release serves the newcomer's
/// slot, or the newcomer sees `serving`), or the newcomer's `try_lock`
/// finds the lock free; a timed attempt waits on `serving` meanwhile.
#[test]
fn skip_races_a_new_ticket() {
    loom::model(|| {
        let s = shared();
        let g = s.lock.lock();
        let h = spawn_incrementer(&s);
        let late = {
            let s = s.clone();
            thread::spawn(move || {
                if let Some(g) = s.lock.try_lock() {
                    // SAFETY: the lock is held.
                    s.count.with_mut(|c| unsafe { *c += 1 });
                    // SAFETY: `g` is this acquisition.
                    unsafe { s.lock.unlock(g) };
                    1
                } else {
                    increment(&s);
                    1
                }
            })
        };
        // SAFETY: `g` is this acquisition.
        unsafe { s.lock.unlock(g) };
        h.join().unwrap();
        let n = late.join().unwrap();
        assert_eq!(final_count(&s), 1 + n);
    });
}
