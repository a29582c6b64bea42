//! Waiter liveness for the FIFO locks: a queued waiter publishes a *beat*
//! (polling at time T, or asleep) that a releaser reads to tell a waiter
//! that runs from one that does not, so that the lock goes to a running
//! waiter instead of waiting for a sleeping or preempted one (the convoy).
//! This is the time-published queue lock of He, Scherer and Scott (HiPC
//! 2005, MCS-TP / CLH-TP), with the sleep of a two-phase waiter published
//! too. The RwLock's waiting readers share one beat, so that a writer does
//! not hold a readers' turn open for a reader that was preempted
//! ([`Judge::preempted`]; `rwlock.rs`).
//!
//! # The beat word (`u64`)
//!
//! ```text
//!  bits 63..32  tag: whose beat it is (the ticket lock's ticket; the MCS
//!               waiter's node; 0 for the RwLock's readers)
//!  bits 31..2   time of the beat, in units of 2^UNIT_SHIFT ns (wrapping);
//!               0 when asleep, or polling but not beaten yet (counts as running)
//!  bit 1        PATIENT: never pass this waiter over while it sleeps
//!  bit 0        POLLING (1) or asleep (0)
//! ```
//!
//! A releaser may pass a waiter over ([`Judge::passable`]) only when the
//! beat is that waiter's (tag), and the waiter is asleep and not patient,
//! or its last beat is older than [`STALE_NS`] (not running: preempted, or
//! between its poll limit and its sleep; a preempted waiter cannot take the
//! lock before it runs again, patient or not, and handing it the lock
//! would stop the lock for a scheduler time slice). A beat of another tag
//! (a waiter that has not published yet) counts as running. The beat is a
//! hint: the locks are correct whatever it says, only the choice of the
//! next owner depends on it.
//!
//! # Cost
//!
//! A polling waiter reads the clock and stores its beat when it starts
//! polling and every [`BEAT_NS`] after (one store to a line that only
//! releasers read). A release whose next waiter has published a beat
//! (polls or sleeps, not patient) reads the clock once and the beats of
//! the waiters it considers; one whose next waiter has just arrived, or
//! sleeps patient, reads no clock. Under loom there is no time: only a
//! published sleep makes a waiter passable.
//!
//! # Ordering
//!
//! Every beat access is `Relaxed`: a beat publishes no data and orders
//! nothing; the locks hand over through their own words.

use crate::mechanism::Mechanism;
use crate::wait_word::{poll_until_unscored, score_poll, WaitOutcome};
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::futex::Futex;
use waitwise_platform::shim::{AtomicU64, Ordering};

/// How often a polling waiter publishes its beat, ns. Guessed: a clock read
/// and a store per µs cost a polling waiter nothing it would otherwise use,
/// and the beat is fine enough for [`STALE_NS`].
pub(super) const BEAT_NS: u64 = 1_000;

/// A beat older than this says its waiter is not running, ns. Guessed: ten
/// beats, so that an interrupt or a short steal of the vCPU does not pass a
/// running waiter over; a preempted waiter stays off its CPU for a
/// scheduler time slice (milliseconds), far longer.
pub(super) const STALE_NS: u64 = 10_000;

/// How often a waiter may be passed over before it rejoins the queue as
/// patient (never passed over again while it sleeps): the bound on the
/// unfairness to sleepers. Guessed;
/// 1 under loom so the models reach the patient waiter.
pub(super) const MAX_PASSES: u32 = if cfg!(loom) { 1 } else { 4 };

/// Beat time unit: 2^8 ns = 256 ns (30 bits of units wrap after ~275 s).
const UNIT_SHIFT: u32 = 8;
/// Bit 0: the waiter polls.
const POLLING: u64 = 1;
/// Bit 1: the waiter must not be passed over.
const PATIENT: u64 = 2;
/// Bits 31..2: the time of the beat.
const TIME_MASK: u32 = !3;

/// The clock as beats read it: 30 bits of [`UNIT_SHIFT`] units in bits
/// 31..2. Always 0 under loom (models do not see time).
#[inline]
fn now_field() -> u32 {
    if cfg!(loom) {
        0
    } else {
        ((cycle_clock().now() >> UNIT_SHIFT) as u32) << 2
    }
}

/// The beat of a polling waiter, stamped now.
#[inline]
pub(super) fn polling(tag: u32, patient: bool) -> u64 {
    (u64::from(tag) << 32) | u64::from(now_field()) | POLLING | patient_bit(patient)
}

/// The beat of a waiter that has not beaten yet (no clock read: time 0):
/// counts as running.
#[inline]
pub(super) fn arrived(patient: bool) -> u64 {
    POLLING | patient_bit(patient)
}

/// The beat of a waiter about to sleep.
#[inline]
pub(super) fn asleep(tag: u32, patient: bool) -> u64 {
    (u64::from(tag) << 32) | patient_bit(patient)
}

#[inline]
fn patient_bit(patient: bool) -> u64 {
    if patient {
        PATIENT
    } else {
        0
    }
}

/// Whether `beat` says, without a clock read, that its waiter is not
/// passable: it arrived and has not beaten yet, or sleeps patient.
#[inline]
pub(super) fn surely_not_passable(beat: u64) -> bool {
    let stamp = beat as u32 & TIME_MASK;
    if beat & POLLING != 0 {
        stamp == 0
    } else {
        beat & PATIENT != 0
    }
}

/// Whether a waiter passed over `passes` times rejoins as patient.
#[inline]
pub(super) fn is_patient(passes: u32) -> bool {
    passes >= MAX_PASSES
}

/// A releaser's view of the time, read once per release.
#[derive(Clone, Copy, Debug)]
pub(super) struct Judge {
    now: u32,
}

impl Judge {
    /// Reads the clock.
    #[inline]
    pub(super) fn now() -> Self {
        Self { now: now_field() }
    }

    /// Whether the waiter tagged `tag`, whose beat is `beat`, may be passed
    /// over: it published this beat and either sleeps (unless patient) or
    /// has not beaten for [`STALE_NS`] (preempted: patient or not, it
    /// cannot take the lock before it runs again).
    #[inline]
    pub(super) fn passable(self, beat: u64, tag: u32) -> bool {
        if (beat >> 32) as u32 != tag {
            return false;
        }
        if beat & POLLING == 0 {
            return beat & PATIENT == 0;
        }
        self.is_stale(beat)
    }

    /// Whether the waiter tagged `tag`, whose beat is `beat`, was polling
    /// and has not beaten for [`STALE_NS`]: preempted (not asleep, not
    /// running), and not patient.
    #[inline]
    pub(super) fn preempted(self, beat: u64, tag: u32) -> bool {
        (beat >> 32) as u32 == tag
            && beat & POLLING != 0
            && beat & PATIENT == 0
            && self.is_stale(beat)
    }

    /// Whether a polling beat is older than [`STALE_NS`].
    #[inline]
    fn is_stale(self, beat: u64) -> bool {
        let stamp = beat as u32 & TIME_MASK;
        // Time 0: arrived, no beat yet (or a beat at the wrap; under loom
        // every polling beat): counts as running. A beat stamped after the
        // judge read the clock (the waiter beat since) is fresh: the age is
        // the signed difference (the field wraps after ~275 s, far beyond
        // any age that matters).
        let age = (self.now.wrapping_sub(stamp) as i32) >> 2;
        stamp != 0 && age > 0 && (age as u64) << UNIT_SHIFT > STALE_NS
    }
}

/// The polling phase of a queued waiter that publishes its beat: polls
/// `word` with `mechanism` until `ready` holds or `deadline` passes, storing
/// [`polling`]`(tag, patient)` into `beat` every [`BEAT_NS`]. Never sleeps.
#[inline]
pub(super) fn poll_beating(
    word: &Futex,
    mechanism: Mechanism,
    deadline: Deadline,
    beat: &AtomicU64,
    tag: u32,
    patient: bool,
    mut ready: impl FnMut(u32) -> bool,
) -> WaitOutcome {
    loop {
        let slice = Deadline::at_ticks(cycle_clock().now().saturating_add(BEAT_NS));
        let out = poll_until_unscored(word, mechanism, deadline.min(slice), &mut ready);
        if !out.timed_out() || deadline.has_passed() || cfg!(loom) {
            score_poll(mechanism, &out);
            return out;
        }
        // Relaxed: a hint (module docs).
        beat.store(polling(tag, patient), Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_polling_beat_is_not_passable_an_asleep_one_is() {
        let j = Judge::now();
        assert!(!j.passable(polling(7, false), 7));
        assert!(j.passable(asleep(7, false), 7));
    }

    #[test]
    fn patient_sleepers_and_foreign_beats_are_never_passable() {
        let j = Judge::now();
        assert!(!j.passable(asleep(7, true), 7));
        assert!(!j.passable(asleep(6, false), 7));
        assert!(!j.passable(polling(6, false), 7));
        assert!(surely_not_passable(arrived(false)));
        assert!(surely_not_passable(asleep(7, true)));
        assert!(!surely_not_passable(asleep(7, false)));
    }

    #[test]
    fn a_beat_stamped_after_the_judge_read_the_clock_is_fresh() {
        let j = Judge::now();
        let later = (u64::from(7u32) << 32) | u64::from(j.now.wrapping_add(1 << 2)) | POLLING;
        assert!(!j.passable(later, 7));
    }

    #[test]
    fn an_old_polling_beat_is_passable() {
        let beat = polling(3, false);
        let later = Judge {
            now: now_field().wrapping_add((((STALE_NS >> UNIT_SHIFT) + 2) as u32) << 2),
        };
        assert!(later.passable(beat, 3));
    }

    #[test]
    fn only_an_old_polling_beat_says_preempted() {
        let later = Judge {
            now: now_field().wrapping_add((((STALE_NS >> UNIT_SHIFT) + 2) as u32) << 2),
        };
        assert!(later.preempted(polling(0, false), 0));
        assert!(
            !later.preempted(asleep(0, false), 0),
            "asleep, not preempted"
        );
        assert!(!later.preempted(polling(1, false), 0), "another tag");
        assert!(!later.preempted(arrived(false), 0), "no beat yet");
        assert!(!later.preempted(polling(0, true), 0), "patient");
        assert!(!Judge::now().preempted(polling(0, false), 0), "fresh");
    }

    #[test]
    fn patience_after_max_passes() {
        assert!(!is_patient(MAX_PASSES - 1));
        assert!(is_patient(MAX_PASSES));
    }
}
