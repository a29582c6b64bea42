//! The idle/wake protocol of the pool's workers: how an idle worker waits,
//! and how a submitter finds one and wakes it with one store.
//!
//! Each worker owns a [`Slot`]: a [`WaitWord`] holding its state and a
//! mailbox for one payload, on one cache line. An [`IdleSet`] holds one
//! bit per worker, set by the worker when it goes idle and cleared by the
//! worker alone: a hint of where idle workers are. A submitter *claims* an
//! idle worker by a compare-and-swap of its word from [`IDLE`] to
//! [`CLAIMED`] (two submitters never claim the same worker), puts the
//! payload in the mailbox beside it, stores [`NOTIFIED`] and calls
//! [`WaitWord::wake_one`], which makes no system call unless the worker
//! sleeps. The claim, the payload and the wake-up are writes to the one
//! line that a polling worker reads: it comes to the submitter once and
//! goes back to the worker once, with the payload in it.
//!
//! # Worker states (the slot's word)
//!
//! ```text
//!  RUNNING --nothing to do: word = IDLE, set bit--> IDLE
//!  IDLE --re-check finds work: CAS IDLE => RUNNING, clear bit--> RUNNING
//!  IDLE --a submitter: CAS IDLE => CLAIMED, fill the mailbox, word = NOTIFIED--> NOTIFIED
//!  NOTIFIED --the worker takes the mailbox and runs (the word stays NOTIFIED)--> running
//! ```
//!
//! A running worker's word holds `RUNNING` or `NOTIFIED`; either means
//! the same, and the next idle wait stores `IDLE` first. The worker clears
//! its bit when it leaves the idle state, except after a payload: then it
//! starts the payload first and clears the bit later ([`Idle::mark_busy`],
//! called by the pool when the payload ends or first submits work), so
//! that the wake-up costs it no write to the idle set's line. A set bit
//! is thus a hint (a claimer reads the word before its CAS); a clear bit
//! is exact for a worker that went idle (module doc, "Memory ordering").
//!
//! The mailbox belongs to whoever holds the worker's claim: the submitter
//! between its successful CAS and its `NOTIFIED` store, the worker after
//! it sees `NOTIFIED` and until it stores `IDLE` again. A worker whose
//! re-check finds work but whose CAS back to `RUNNING` fails was claimed
//! in that instant; it waits for the claimer's `NOTIFIED` like any idle
//! worker.
//!
//! # Memory ordering
//!
//! Finding work after going idle is a store-buffering (Dekker) pattern:
//! the worker stores `IDLE`, sets its bit, then re-checks whether work is
//! queued; the submitter publishes its work, then looks for a set bit and
//! an `IDLE` word ([`Idle::wake_one_to_look`]). The bit's RMW and loads are
//! `SeqCst`, and the caller's re-check and publication are ordered against
//! them by `SeqCst` (fences or accesses), so at least one side sees the
//! other's write: either the worker finds the work, or the submitter finds
//! the bit set by this idle entry, and then (the worker's `IDLE` store is
//! sequenced before that RMW, which releases it) the word at `IDLE` or a
//! later state. Under loom a `SeqCst` fence is added between each write and
//! read, as in [`WaitWord`].
//!
//! The `IDLE` store is `Release`: the claimer's CAS (`SeqCst`, so
//! acquiring) that reads it then sees the worker's last use of the
//! mailbox before it. The CASes are `SeqCst`: a claim and a take-back race
//! on one word and exactly one wins. The `NOTIFIED` store is `SeqCst`: it
//! is the write half of the [`WaitWord`] sleeper protocol (the engine's
//! `wake_one` reads the sleeper count after it), and it releases the
//! mailbox write before it to the worker's `Acquire` load that sees it.

use crate::policy::Policy;
#[cfg(doc)]
use crate::wait_word::WaitWord;
use crate::wait_word::WaitWordRef;
use std::ops::Range;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::Futex;
use waitwise_platform::shim::{AtomicU32, AtomicU64, Ordering};

/// The worker is running a task or looking for one (after a re-check took
/// it back; after a wake-up the word keeps [`NOTIFIED`]); nobody else
/// touches its mailbox.
pub const RUNNING: u32 = 0;
/// The worker waits idle, its bit set; the first CAS from here claims it.
pub const IDLE: u32 = 1;
/// A claimer holds the worker and is filling its mailbox.
pub const CLAIMED: u32 = 2;
/// A claimer filled (or left empty) the mailbox and woke the worker.
pub const NOTIFIED: u32 = 3;

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

    /// Clears worker `i`'s bit (only worker `i` calls this).
    pub fn unset(&self, i: usize) {
        self.words[i / 64].fetch_and(!(1 << (i % 64)), Ordering::SeqCst);
    }

    /// The workers in `range` whose bits are set, lowest first, each
    /// word read once with `SeqCst` (the Dekker read after the caller's
    /// publication).
    pub fn marked(&self, range: Range<usize>) -> impl Iterator<Item = usize> + '_ {
        dekker_fence();
        let (lo, hi) = (range.start, range.end);
        (lo / 64..hi.div_ceil(64)).flat_map(move |w| {
            let mask = bits(lo.max(w * 64) - w * 64, hi.min((w + 1) * 64) - w * 64);
            let mut cur = self.words[w].load(Ordering::SeqCst) & mask;
            std::iter::from_fn(move || {
                (cur != 0).then(|| {
                    let b = cur.trailing_zeros() as usize;
                    cur &= cur - 1;
                    w * 64 + b
                })
            })
        })
    }

    /// Whether any worker is marked idle (a snapshot: one `Relaxed` load
    /// per 64 workers, the bits past the last worker never set; a hint,
    /// no synchronization).
    #[inline]
    pub fn any(&self) -> bool {
        self.words.iter().any(|w| w.load(Ordering::Relaxed) != 0)
    }

    /// Whether any worker in `range` is marked idle (a snapshot: one
    /// `Relaxed` load per 64 workers; a hint, no synchronization).
    pub fn any_in(&self, range: Range<usize>) -> bool {
        let (lo, hi) = (range.start, range.end);
        (lo / 64..hi.div_ceil(64)).any(|w| {
            let mask = bits(lo.max(w * 64) - w * 64, hi.min((w + 1) * 64) - w * 64);
            self.words[w].load(Ordering::Relaxed) & mask != 0
        })
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

/// One worker's state word, its sleeper count and its mailbox, in that
/// order at the start of a 128-byte block of their own: the word and a
/// payload of up to 56 bytes (48 if 16-byte aligned) share one 64-byte
/// line, so that a claim, the payload and the wake-up travel to the worker
/// as one line. The 128-byte alignment keeps neighbours off the line pair,
/// as [`WaitWord`]'s does.
#[repr(C, align(128))]
#[derive(Debug)]
pub struct Slot<T> {
    futex: Futex,
    sleepers: AtomicU32,
    mailbox: Mailbox<T>,
}

impl<T> Slot<T> {
    /// The state word with its sleeper count.
    #[inline(always)]
    fn word(&self) -> WaitWordRef<'_> {
        WaitWordRef::new(&self.futex, &self.sleepers)
    }
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
                    futex: Futex::new(RUNNING),
                    sleepers: AtomicU32::new(0),
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

    /// Whether any worker may wait idle (a snapshot of the bits: one load
    /// per 64 workers; a set bit may be stale).
    #[inline]
    pub fn any_idle(&self) -> bool {
        self.set.any()
    }

    /// Whether any worker in `range` may wait idle (a snapshot of the
    /// bits: one load per 64 workers; a set bit may be stale).
    pub fn any_idle_in(&self, range: Range<usize>) -> bool {
        self.set.any_in(range)
    }

    /// Whether worker `i` waits idle, unclaimed (a snapshot).
    pub fn is_idle(&self, i: usize) -> bool {
        self.set.any_in(i..i + 1) && self.slots[i].word().value().load(Ordering::Relaxed) == IDLE
    }

    /// Worker `i` goes idle and waits, following `policy`, until a claimer
    /// wakes it. `recheck` runs after the worker is marked idle and says
    /// whether it should look for work at once (work published, then
    /// ordered by `SeqCst` before the publisher's [`Idle::wake_one_to_look`],
    /// or shutdown); it must order its reads after the mark by `SeqCst`
    /// (module doc).
    ///
    /// After [`Wake::Payload`] the worker's bit is still set: the worker
    /// calls [`Idle::mark_busy`] once it ran the payload.
    ///
    /// Called only by worker `i`, while it runs ([`RUNNING`] or
    /// [`NOTIFIED`]).
    pub fn idle_wait(&self, i: usize, policy: &Policy, recheck: impl FnOnce() -> bool) -> Wake<T> {
        let slot = &self.slots[i];
        // RUNNING => IDLE. Release: a claimer's CAS that reads IDLE sees
        // our last use of the mailbox (module doc).
        slot.word().value().store(IDLE, Ordering::Release);
        self.set.set(i);
        if recheck() {
            // IDLE => RUNNING, unless a claimer was first.
            if slot
                .word()
                .value()
                .compare_exchange(IDLE, RUNNING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                self.set.unset(i);
                return Wake::Look;
            }
        }
        // IDLE => CLAIMED => NOTIFIED by a claimer (ours may be under way).
        let out = slot
            .word()
            .wait_until(policy, Deadline::NEVER, |v| v == NOTIFIED);
        debug_assert!(!out.timed_out());
        // NOTIFIED => running. The word keeps NOTIFIED (nobody reads the
        // state of a running worker, and the next idle_wait stores IDLE
        // first): no store here, so the wake-up costs the line one fewer
        // transfer. The mailbox is ours until we store IDLE again.
        // SAFETY: we hold the claim (we saw NOTIFIED with Acquire, which
        // the claimer's SeqCst store released after its mailbox write), and
        // no claimer can reach the mailbox until our word is IDLE again.
        match slot.mailbox.with_mut(|p| unsafe { (*p).take() }) {
            Some(payload) => Wake::Payload(payload),
            None => {
                self.set.unset(i);
                Wake::Look
            }
        }
    }

    /// Worker `i` ran, or is running, the payload [`Idle::idle_wait`]
    /// gave it: clears its bit if it is still set. Called only by worker
    /// `i`, while it runs.
    pub fn mark_busy(&self, i: usize) {
        if self.set.any_in(i..i + 1) {
            self.set.unset(i);
        }
    }

    /// Claims an idle worker in `range` and hands it `payload`; gives the
    /// payload back when no worker there is idle.
    pub fn hand_to_idle(&self, range: Range<usize>, payload: T) -> Result<usize, T> {
        match self.claim(range) {
            Some(i) => {
                self.notify(i, Some(payload));
                Ok(i)
            }
            None => Err(payload),
        }
    }

    /// After publishing work and a `SeqCst` fence (or access): claims an
    /// idle worker in `range` and wakes it to look for that work. Returns
    /// the worker woken, if any.
    pub fn wake_one_to_look(&self, range: Range<usize>) -> Option<usize> {
        let i = self.claim(range)?;
        self.notify(i, None);
        Some(i)
    }

    /// Wakes every idle worker to look (shutdown).
    pub fn wake_all_to_look(&self) {
        while self.wake_one_to_look(0..self.len()).is_some() {}
    }

    /// Claims the lowest-numbered idle worker in `range`: a set bit and a
    /// CAS of its word from IDLE to CLAIMED.
    fn claim(&self, range: Range<usize>) -> Option<usize> {
        self.set.marked(range).find(|&i| {
            let w = self.slots[i].word().value();
            // A load first: a stale bit costs no write to a busy line.
            w.load(Ordering::SeqCst) == IDLE
                && w.compare_exchange(IDLE, CLAIMED, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
        })
    }

    /// Claimed worker `i`: fill its mailbox, CLAIMED => NOTIFIED, wake it
    /// if it sleeps.
    fn notify(&self, i: usize, payload: Option<T>) {
        let slot = &self.slots[i];
        // SAFETY: we hold worker i's claim (our CAS moved its word from
        // IDLE to CLAIMED), so the worker waits for NOTIFIED and nobody
        // else touches the mailbox.
        slot.mailbox.with_mut(|p| unsafe { *p = payload });
        // SeqCst: the WaitWord protocol's write half, releasing the mailbox.
        slot.word().value().store(NOTIFIED, Ordering::SeqCst);
        slot.word().wake_one();
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
    fn marked_lists_the_set_bits_in_range() {
        let s = IdleSet::new(130);
        for i in [3, 64, 65, 129] {
            s.set(i);
        }
        let m = |r: Range<usize>| s.marked(r).collect::<Vec<_>>();
        assert!(m(0..3).is_empty());
        assert_eq!(m(0..130), [3, 64, 65, 129]);
        assert_eq!(m(65..129), [65]);
        assert!(s.any_in(100..130));
        s.unset(129);
        assert!(!s.any_in(100..130));
        assert_eq!(m(60..130), [64, 65]);
    }

    #[test]
    fn a_claimed_worker_is_not_claimed_twice() {
        let idle: Idle<u32> = Idle::new(2);
        // Worker 1 idle by hand (its word IDLE, its bit set).
        idle.slots[1].word().value().store(IDLE, Ordering::Release);
        idle.set.set(1);
        assert!(idle.is_idle(1));
        assert_eq!(idle.claim(0..2), Some(1));
        assert!(!idle.is_idle(1));
        assert_eq!(idle.claim(0..2), None, "the stale bit is only a hint");
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
