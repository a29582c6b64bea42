//! [`Index`]: a ring index (`head` or `tail`) that threads can wait on.
//! Two words, each a [`WaitWord`]:
//!
//! - `position`: the index itself. Waiters *poll* it with the policy's
//!   mechanism: every push (for `tail`) or pop (for `head`) changes it, so a
//!   polling peer costs the other side nothing.
//! - `events`: an event count for waiters that *park* (block). A sleeping
//!   waiter costs the other side one system call per sleep, not one per
//!   operation: the first change after a waiter parked clears the waiting
//!   bit and wakes; the following ones see the bit clear and skip.
//!
//! # Event count word
//!
//! ```text
//!  bits 31..1: epoch    bumped by each notify that found the bit set, wrapping
//!  bit  0    : WAITING  some waiter prepared to park since the last bump
//! ```
//!
//! Per waiter, once polling has not seen the index move:
//! - prepare: `events => events | WAITING` (`fetch_or`), keeping the result
//!   as its key; then re-try its ring operation;
//! - sleep: block until `events != key` (the [`WaitWord`] re-checks after
//!   registering as a sleeper, and the kernel once more).
//!
//! Per notifier, after changing `position` with a `SeqCst` read-modify-write:
//! - `WAITING` clear: nothing (one load).
//! - `WAITING` set: `events => (epoch + 1, clear)` (CAS), then wake every
//!   sleeper registered on `events` (every parked waiter lost its bit, so
//!   all must re-check; the losers prepare again), and signal the
//!   selectors registered on the index (`selectors.rs`).
//!
//! Clearing the bit always moves the epoch, so a waiter can never sleep on
//! a cleared word: a notify that raced with its prepare changes the value
//! it would sleep on. A waiter sleeps on a stale key only if 2^31 notifies
//! happen between its prepare and its sleep.
//!
//! # Memory ordering
//!
//! The waiter writes `events` then reads the ring; the notifier writes the
//! ring (its index CAS) then reads `events`. Store-buffering: `SeqCst`
//! read-modify-writes and loads, and a `SeqCst` fence after the prepare
//! because the ring's own loads are `Relaxed`/`Acquire`. If the waiter's
//! re-try misses the change, the notifier's load comes later in the single
//! total order and sees `WAITING` (or a later epoch, which the waiter's
//! sleep then refuses). Under loom, which treats `SeqCst` accesses as
//! `AcqRel`, a fence is added on the notifier's side too. The bump is a CAS
//! and not a swap so that a notifier with a stale view cannot move the
//! epoch backwards.

use super::selectors::Selectors;
use crate::policy::Policy;
use crate::wait_word::{WaitOutcome, WaitWord};
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{fence, AtomicU32, Ordering};

/// Bit 0 of the event count: a waiter prepared to park.
const WAITING: u32 = 1;

/// A waiter's view of the event count, taken when it prepared to park.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ParkKey(u32);

/// A position word that waiters can poll and park on (see the module docs).
#[derive(Debug)]
pub(crate) struct Index {
    /// The position; alone on its cache lines ([`WaitWord`] is aligned).
    position: WaitWord,
    /// The event count parked waiters sleep on.
    events: WaitWord,
    /// The selectors waiting on this index besides (`selectors.rs`),
    /// signalled on the notify's slow path.
    selectors: Selectors,
}

/// Under loom only: a `SeqCst` fence between the notifier's change of the
/// position and its read of the event count. Nothing otherwise.
#[inline(always)]
fn dekker_fence() {
    #[cfg(loom)]
    fence(Ordering::SeqCst);
}

impl Index {
    /// Position 0, nobody waiting.
    pub(crate) fn new() -> Self {
        Self {
            position: WaitWord::new(0),
            events: WaitWord::new(0),
            selectors: Selectors::new(),
        }
    }

    /// The position word. Change it only with `SeqCst` read-modify-writes,
    /// then call [`Index::notify`].
    #[inline(always)]
    pub(crate) fn value(&self) -> &AtomicU32 {
        self.position.value()
    }

    /// After changing the position (or the ring's disconnect mark): wake
    /// the parked waiters, if any. One load when nobody parked.
    #[inline]
    pub(crate) fn notify(&self) {
        dekker_fence();
        let events = self.events.value().load(Ordering::SeqCst);
        if events & WAITING != 0 {
            self.notify_slow(events);
        }
    }

    #[cold]
    fn notify_slow(&self, mut events: u32) {
        loop {
            // WAITING set => epoch + 1, WAITING clear (failure Relaxed: the
            // value seen only decides whether to try again)
            match self.events.value().compare_exchange_weak(
                events,
                (events | WAITING).wrapping_add(1),
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.events.wake_all();
                    self.selectors.signal_all();
                    return;
                }
                Err(now) if now & WAITING != 0 => events = now,
                // Another notifier bumped the epoch; it wakes the sleepers.
                Err(_) => return,
            }
        }
    }

    /// POLLING: waits, without registering anywhere, until the position is
    /// no longer `seen`, for at most the policy's poll limit (and at most
    /// `deadline`). `TimedOut` means: go on to [`Index::prepare`].
    #[inline]
    pub(crate) fn poll(&self, policy: &Policy, deadline: Deadline, seen: u32) -> WaitOutcome {
        let budget = policy.poll_budget();
        if !budget.polls() {
            return WaitOutcome::TimedOut {
                value: seen,
                blocked: false,
            };
        }
        let poll_deadline = match budget.limit_ns {
            None => deadline,
            Some(ns) => deadline.min(Deadline::after(Duration::from_nanos(ns as u64))),
        };
        // The engine's polling phase alone: never blocks.
        self.position
            .as_ref()
            .poll_until(budget.mechanism, poll_deadline, |position| position != seen)
    }

    /// The selectors waiting on this index (`selectors.rs`).
    #[inline]
    pub(crate) fn selectors(&self) -> &Selectors {
        &self.selectors
    }

    /// POLLING => PARKING: announces a waiter. The caller must re-try its
    /// ring operation before [`Index::sleep`].
    #[inline]
    pub(crate) fn prepare(&self) -> ParkKey {
        // events => events | WAITING
        let key = self.events.value().fetch_or(WAITING, Ordering::SeqCst) | WAITING;
        // SeqCst fence: the ring re-try's loads are Relaxed/Acquire (see the
        // module's memory-ordering paragraph).
        fence(Ordering::SeqCst);
        ParkKey(key)
    }

    /// PARKING => ASLEEP: blocks until a notify moved the event count past
    /// `key`, or `deadline`.
    #[inline]
    pub(crate) fn sleep(&self, key: ParkKey, deadline: Deadline) -> WaitOutcome {
        self.events
            .wait_until(&Policy::always_block(), deadline, |events| events != key.0)
    }
}
