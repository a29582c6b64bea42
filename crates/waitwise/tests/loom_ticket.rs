//! Loom models of the ticket lock (`mutex/ticket.rs`): mutual exclusion,
//! publication (loom checks the `UnsafeCell` accesses) and no lost wake-up
//! in any interleaving, for its fast, slow, `try` and timed acquisitions,
//! and the time-published hand-off it shares with the MCS lock
//! ([`fifo`], `loom_common/fifo.rs`). Under loom the lock has two slots,
//! so a third ticket shares the first one's slot and beat.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_ticket`.
#![cfg(loom)]

#[macro_use]
mod loom_common;

use loom_common::locks::*;
use waitwise::mutex::RawTicketMutex;
use waitwise::Deadline;
use waitwise_platform::shim::Arc;

#[test]
fn ticket_two_threads_exclusive() {
    loom::model(|| increment_in_two_threads(RawTicketMutex::with_options(blocking())));
}

#[test]
fn ticket_timed_attempt_and_queue() {
    loom::model(|| {
        let m = Arc::new(RawTicketMutex::with_options(blocking()));
        let g = m.lock();
        let t = spawn_locker(&m);
        assert!(m
            .try_lock_until(Deadline::after(std::time::Duration::ZERO))
            .is_none());
        // SAFETY: `g` is this acquisition.
        unsafe { m.unlock(g) };
        t.join().unwrap();
        assert!(!m.is_locked());
    });
}

/// Two tickets queued behind a holder: the release to the first also
/// pre-wakes the second (one shared slot under loom), which must go back
/// to sleep rather than take the lock; neither is stranded.
#[test]
fn ticket_three_threads_queue_with_pre_wake() {
    loom::model(|| {
        let m = Arc::new(RawTicketMutex::with_options(blocking()));
        let g = m.lock();
        let hs: Vec<_> = (0..2).map(|_| spawn_locker(&m)).collect();
        // SAFETY: `g` is this acquisition.
        unsafe { m.unlock(g) };
        for h in hs {
            h.join().unwrap();
        }
        assert!(!m.is_locked());
    });
}

/// A release that runs late (preempted after reading `next`) must not strand
/// a later waiter: with one slot under loom, ticket 1's release and ticket
/// 2's waiter share the slot that a late release for ticket 1 still wakes.
#[test]
fn ticket_late_release_does_not_strand_a_later_waiter() {
    // The interleaving needs four preemptions (found by loom before the fix
    // with this bound; the default of 2 misses it).
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(4);
    model.check(|| {
        let m = Arc::new(RawTicketMutex::with_options(blocking()));
        let g = m.lock();
        let others: Vec<_> = (0..2).map(|_| spawn_locker(&m)).collect();
        // SAFETY: `g` is this acquisition.
        unsafe { m.unlock(g) };
        for t in others {
            t.join().unwrap();
        }
        assert!(!m.is_locked());
    });
}

fn ticket() -> RawTicketMutex {
    RawTicketMutex::with_options(blocking())
}

#[test]
fn ticket_try_lock_races_a_locker() {
    try_lock_races_a_locker(ticket);
}

#[test]
fn ticket_timed_attempt_races_a_holder_and_a_sleeper() {
    timed_attempt_races_a_holder_and_a_sleeper(ticket);
}

fifo_models!(fifo, waitwise::mutex::RawTicketMutex);
