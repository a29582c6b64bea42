//! The idle/wake protocol of the pool's workers: how an idle worker waits,
//! and how a submitter finds one and wakes it with one store.
//!
//! Each worker owns a [`Slot`]: a [`WaitWord`] holding its state and a
//! mailbox for one payload. An [`IdleSet`] holds one bit per worker, set
//! while the worker waits idle. A submitter *claims* an idle worker by
//! clearing its bit (one RMW: two submitters never claim the same worker),
//! puts the payload in the worker's mailbox, stores [`NOTIFIED`] and calls
//! [`WaitWord::wake_one`], which makes no system call unless the worker
//! sleeps. A worker that is still polling sees the store and runs: the wake
//! is that one store.
//!
//! # Worker states (the slot's word)
//!
//! ```text
//!  RUNNING --queue empty: word = IDLE, set bit--> IDLE
//!  IDLE --re-check finds work, bit still set: clear it--> RUNNING
//!  IDLE --a submitter clears the bit, fills the mailbox, word = NOTIFIED--> NOTIFIED
//!  NOTIFIED --the worker takes the mailbox and runs (the word stays NOTIFIED)--> running
//! ```
//!
//! A running worker's word holds `RUNNING` or `NOTIFIED`; either means
//! the same, and the next idle wait stores `IDLE` before its bit is set.
//!
//! The mailbox belongs to whoever holds the worker's claim: the submitter
//! between its successful claim and its `NOTIFIED` store, the worker after
//! it sees `NOTIFIED` and until it sets its bit again. A worker whose
//! re-check finds work but whose bit is already clear was claimed in that
//! instant; it waits for the claimer's `NOTIFIED` like any idle worker.
//!
//! # Memory ordering
//!
//! Finding work after going idle is a store-buffering (Dekker) pattern:
//! the worker sets its bit, then re-checks whether work is queued; the
//! submitter publishes its work, then looks for a set bit
//! ([`Idle::wake_one_to_look`]). Both sides use `SeqCst` (the bit RMWs
//! here, the caller's publication and re-check), so at least one of them
//! sees the other's write: either the worker finds the work, or the
//! submitter finds the worker. Under loom a `SeqCst` fence is added
//! between each write and read, as in [`WaitWord`].
//!
//! The `NOTIFIED` store is `SeqCst`: it is the write half of the
//! [`WaitWord`] sleeper protocol (the engine's `wake_one` reads the
//! sleeper count after it), and it releases the mailbox write before it
//! to the worker's `Acquire` load that sees it. The worker's `IDLE` and
//! `RUNNING` stores are `Relaxed`: nobody waits for them, and the claim
//! that follows `IDLE` is ordered after it by the bit's `SeqCst` RMWs.

use crate::policy::Policy;
use crate::wait_word::WaitWord;
use std::ops::Range;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{AtomicU64, Ordering};

/// The worker is running a task or looking for one (after a re-check took
/// it back; after a wake-up the word keeps [`NOTIFIED`]); its bit is clear
/// and nobody else touches its mailbox.
pub const RUNNING: u32 = 0;
/// The worker waits idle; its bit is set (or was just cleared by a
/// claimer that will store [`NOTIFIED`]).
pub const IDLE: u32 = 1;
/// A claimer filled (or left empty) the mailbox and woke the worker.
pub const NOTIFIED: u32 = 2;

/// Under loom only: a `SeqCst` fence between a Dekker write and read (loom
/// treats `SeqCst` accesses as `AcqRel`).
#[inline(always)]
fn dekker_fence() {
    #[cfg(loom)]
    waitwise_platform::shim::fence(Ordering::SeqCst);
}

/// One bit per worker, set while the worker waits idle.
#[derive(Debug)]
pub struct IdleSet {
    words: Box<[AtomicU64]>,
}

impl IdleSet {
    /// A set for `n` workers, none idle.
    pub fn new(n: usize) -> Self {
        Self {
            words: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Marks worker `i` idle. SeqCst: the Dekker write (module doc).
    pub fn set(&self, i: usize) {
        self.words[i / 64].fetch_or(1 << (i % 64), Ordering::SeqCst);
        dekker_fence();
    }

    /// Clears worker `i`'s bit; `true` if it was set (the caller took the
    /// worker back), `false` if a claimer cleared it first.
    pub fn try_unset(&self, i: usize) -> bool {
        let bit = 1 << (i % 64);
        self.words[i / 64].fetch_and(!bit, Ordering::SeqCst) & bit != 0
    }

    /// Claims the lowest-numbered idle worker in `range` (clears its bit);
    /// `None` if none there is idle. SeqCst: the Dekker read after the
    /// caller's publication, and a claim is an RMW so two claimers never
    /// get the same worker.
    pub fn claim(&self, range: Range<usize>) -> Option<usize> {
        dekker_fence();
        let mut w = range.start / 64;
        while w * 64 < range.end {
            let lo = (w * 64).max(range.start);
            let hi = ((w + 1) * 64).min(range.end);
            let mask = bits(lo - w * 64, hi - w * 64);
            let word = &self.words[w];
            let mut cur = word.load(Ordering::SeqCst);
            while cur & mask != 0 {
                let bit = 1u64 << (cur & mask).trailing_zeros();
                match word.compare_exchange_weak(
                    cur,
                    cur & !bit,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(_) => return Some(w * 64 + bit.trailing_zeros() as usize),
                    Err(now) => cur = now,
                }
            }
            w += 1;
        }
        None
    }

    /// Whether any worker in `range` is marked idle (a snapshot).
    pub fn any_in(&self, range: Range<usize>) -> bool {
        range
            .clone()
            .any(|i| self.words[i / 64].load(Ordering::Relaxed) & (1 << (i % 64)) != 0)
    }
}

/// Bits `lo..hi` of a 64-bit word.
fn bits(lo: usize, hi: usize) -> u64 {
    let upto = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    upto(hi) & !upto(lo)
}

/// The mailbox cell: loom's checked `UnsafeCell` under loom.
#[cfg(not(loom))]
#[derive(Debug)]
struct Mailbox<T>(std::cell::UnsafeCell<Option<T>>);

#[cfg(not(loom))]
impl<T> Mailbox<T> {
    fn new() -> Self {
        Self(std::cell::UnsafeCell::new(None))
    }

    fn with_mut<R>(&self, f: impl FnOnce(*mut Option<T>) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(loom)]
#[derive(Debug)]
struct Mailbox<T>(loom::cell::UnsafeCell<Option<T>>);

#[cfg(loom)]
impl<T> Mailbox<T> {
    fn new() -> Self {
        Self(loom::cell::UnsafeCell::new(None))
    }

    fn with_mut<R>(&self, f: impl FnOnce(*mut Option<T>) -> R) -> R {
        self.0.with_mut(f)
    }
}

/// One worker's state word and mailbox, on its own cache line (the
/// [`WaitWord`]'s alignment).
#[derive(Debug)]
pub struct Slot<T> {
    word: WaitWord,
    mailbox: Mailbox<T>,
}

// SAFETY: the mailbox is accessed only by the holder of the worker's claim
// (module doc), one thread at a time, with the NOTIFIED store/load
// ordering the hand-over; a `T: Send` payload may move between threads.
unsafe impl<T: Send> Sync for Slot<T> {}
// SAFETY: as above; the slot owns at most one `T: Send`.
unsafe impl<T: Send> Send for Slot<T> {}

/// What an idle worker woke up to.
#[derive(Debug, PartialEq, Eq)]
pub enum Wake<T> {
    /// A claimer handed it this payload.
    Payload(T),
    /// Look for work again: the re-check found some (or shutdown), or a
    /// claimer woke it without a payload.
    Look,
}

/// The idle workers of a pool: their slots and the idle set.
#[derive(Debug)]
pub struct Idle<T> {
    set: IdleSet,
    slots: Box<[Slot<T>]>,
}

impl<T: Send> Idle<T> {
    /// `n` workers, all running.
    pub fn new(n: usize) -> Self {
        Self {
            set: IdleSet::new(n),
            slots: (0..n)
                .map(|_| Slot {
                    word: WaitWord::new(RUNNING),
                    mailbox: Mailbox::new(),
                })
                .collect(),
        }
    }

    /// Number of workers.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no workers.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether any worker in `range` waits idle (a snapshot).
    pub fn any_idle_in(&self, range: Range<usize>) -> bool {
        self.set.any_in(range)
    }

    /// Worker `i` goes idle and waits, following `policy`, until a claimer
    /// wakes it. `recheck` runs after the worker is marked idle and says
    /// whether it should look for work at once (work published with
    /// `SeqCst` before the publisher's [`Idle::wake_one_to_look`], or
    /// shutdown); it must read with `SeqCst` (module doc).
    ///
    /// Called only by worker `i`, while it runs ([`RUNNING`] or
    /// [`NOTIFIED`]).
    pub fn idle_wait(&self, i: usize, policy: &Policy, recheck: impl FnOnce() -> bool) -> Wake<T> {
        let slot = &self.slots[i];
        // RUNNING => IDLE. Relaxed: the SeqCst bit RMW below orders it
        // before any claim (module doc).
        slot.word.value().store(IDLE, Ordering::Relaxed);
        self.set.set(i);
        if recheck() && self.set.try_unset(i) {
            // IDLE => RUNNING: we took ourselves back before any claim.
            slot.word.value().store(RUNNING, Ordering::Relaxed);
            return Wake::Look;
        }
        // IDLE => NOTIFIED by a claimer (ours may already be under way).
        let out = slot
            .word
            .wait_until(policy, Deadline::NEVER, |v| v == NOTIFIED);
        debug_assert!(!out.timed_out());
        // NOTIFIED => running. The word keeps NOTIFIED (nobody reads the
        // state of a running worker, and the next idle_wait stores IDLE
        // first): no store here, so the wake-up costs the line one fewer
        // transfer. The mailbox is ours until we set the bit again.
        // SAFETY: we hold the claim (we saw NOTIFIED with Acquire, which
        // the claimer's SeqCst store released after its mailbox write), and
        // no claimer can reach the mailbox until our bit is set again.
        match slot.mailbox.with_mut(|p| unsafe { (*p).take() }) {
            Some(payload) => Wake::Payload(payload),
            None => Wake::Look,
        }
    }

    /// Claims an idle worker in `range` and hands it `payload`; gives the
    /// payload back when no worker there is idle.
    pub fn hand_to_idle(&self, range: Range<usize>, payload: T) -> Result<usize, T> {
        match self.set.claim(range) {
            Some(i) => {
                self.notify(i, Some(payload));
                Ok(i)
            }
            None => Err(payload),
        }
    }

    /// After publishing work with `SeqCst`: claims an idle worker in
    /// `range` and wakes it to look for that work. Returns the worker
    /// woken, if any.
    pub fn wake_one_to_look(&self, range: Range<usize>) -> Option<usize> {
        let i = self.set.claim(range)?;
        self.notify(i, None);
        Some(i)
    }

    /// Wakes every idle worker to look (shutdown).
    pub fn wake_all_to_look(&self) {
        while self.wake_one_to_look(0..self.len()).is_some() {}
    }

    /// Claimed worker `i`: fill its mailbox, IDLE => NOTIFIED, wake it if
    /// it sleeps.
    fn notify(&self, i: usize, payload: Option<T>) {
        let slot = &self.slots[i];
        // SAFETY: we hold worker i's claim (we cleared its bit), so the
        // worker waits for NOTIFIED and nobody else touches the mailbox.
        slot.mailbox.with_mut(|p| unsafe { *p = payload });
        // SeqCst: the WaitWord protocol's write half, releasing the mailbox.
        slot.word.value().store(NOTIFIED, Ordering::SeqCst);
        slot.word.wake_one();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn bits_cover_the_range() {
        assert_eq!(bits(0, 64), u64::MAX);
        assert_eq!(bits(0, 1), 1);
        assert_eq!(bits(3, 5), 0b11000);
        assert_eq!(bits(5, 5), 0);
    }

    #[test]
    fn claims_lowest_idle_in_range_once() {
        let s = IdleSet::new(130);
        for i in [3, 64, 65, 129] {
            s.set(i);
        }
        assert_eq!(s.claim(0..3), None);
        assert_eq!(s.claim(0..130), Some(3));
        assert_eq!(s.claim(65..130), Some(65));
        assert_eq!(s.claim(0..130), Some(64));
        assert!(s.any_in(100..130));
        assert_eq!(s.claim(0..130), Some(129));
        assert_eq!(s.claim(0..130), None);
        s.set(7);
        assert!(s.try_unset(7));
        assert!(!s.try_unset(7));
    }

    #[test]
    fn recheck_takes_the_worker_back() {
        let idle: Idle<u32> = Idle::new(1);
        let w = idle.idle_wait(0, &Policy::always_block(), || true);
        assert_eq!(w, Wake::Look);
        assert!(!idle.any_idle_in(0..1));
        assert_eq!(idle.hand_to_idle(0..1, 5), Err(5));
    }

    #[test]
    fn a_payload_reaches_a_polling_and_a_parked_worker() {
        for policy in [Policy::always_spin(), Policy::always_block()] {
            let idle: Idle<u32> = Idle::new(2);
            std::thread::scope(|s| {
                let t = s.spawn(|| idle.idle_wait(1, &policy, || false));
                let mut payload = 9;
                loop {
                    match idle.hand_to_idle(0..2, payload) {
                        Ok(i) => break assert_eq!(i, 1),
                        Err(p) => payload = p,
                    }
                    std::thread::yield_now();
                }
                assert_eq!(t.join().unwrap(), Wake::Payload(9));
            });
        }
    }
}
