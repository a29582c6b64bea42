//! Whether polls that hold their CPU pay off while the machine is busy:
//! learned from how such polls end, per process.
//!
//! While more threads are runnable than the machine has CPUs, a default
//! wait whose poll would hold its CPU (PAUSE, spinning, a hardware wait:
//! [`super::polling_holds_wanted_cpu`]) may poll or block at once. Which one pays
//! depends on the scheduler, not on the wait:
//!
//! - Where a thread that polls beside a CPU-bound program takes turns
//!   with it slice by slice, the thread that will end the wait is most
//!   often off its CPU while the poller polls: the poll fails, and the
//!   wait blocks anyway, a poll limit late. Blocking at once is better.
//! - Where the process's threads keep running side by side (two threads
//!   handing an event back and forth beside a busy loop on each of 2
//!   CPUs, under Linux 6.18's EEVDF), the poll sees the release within
//!   ~100 ns nearly every time, and a wait that blocks at once pays a
//!   sleep and a wake-up behind the busy loop: 15,000 round trips a
//!   second against 3 million for a poll of 10-100 µs, at 140x the CPU
//!   per round trip, while the busy loops got no more than their fair
//!   share of the CPUs from the polling pair.
//!
//! So the process keeps a score of the outcomes of its polls that ran
//! while the machine was busy: a poll that saw its release adds
//! [`SUCCESS_GAIN`], one that ran out of its limit takes
//! [`FAILURE_COST`] (between 0 and [`SCORE_CAP`]). Such polls run while
//! the score is at least [`POLL_FROM_SCORE`], so while at least about
//! two in three succeed; below it each thread still polls one busy wait
//! in [`PROBE_EVERY`], so that a scheduler that starts to keep the
//! threads side by side is noticed. The score starts at 0: a process
//! blocks at once on a busy machine until its probes pay.
//!
//! The score is asked only while the process itself used less than
//! [`CROWDING_SHARE`](super::crowding::CROWDING_SHARE) of its CPUs
//! lately: otherwise most of the threads that want a CPU are likely its
//! own, the one the poll waits for among them, and the wait blocks at once
//! (`policy::skips_poll_on_busy_cpus`). Four pairs of threads handing
//! events back and forth on 2 CPUs that polled beside each other so made
//! about half the round trips of blocking at once.
//!
//! A wait that polls by `yield`, or that the crowding rules made poll by
//! `yield` ([`super::crowding`]), is not scored: its poll hands the CPU
//! over. The score is a hint, read and written with relaxed loads and
//! stores, so racing updates may lose one; it orders no memory and costs
//! no wake-up either way. Its atomics are std's under loom too: the
//! models explore the blocking protocols, which this hint never changes.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

/// What a poll that saw its release adds to the score.
pub const SUCCESS_GAIN: u32 = 1;

/// What a poll that ran out of its limit takes from the score: 2, so that
/// polling goes on while at least two polls in three succeed. A failed
/// poll costs its limit (at most about `B`) on top of the block; one that
/// succeeds saves a block and a wake-up behind a busy thread, so polling
/// pays already from about one success in two. Guessed on the cautious
/// side of that.
pub const FAILURE_COST: u32 = 2;

/// The score's ceiling: 32, so that a run of 16 failed polls stops the
/// polling however long it paid before.
pub const SCORE_CAP: u32 = 32;

/// The score from which busy waits poll: 8, four failed polls from 0.
pub const POLL_FROM_SCORE: u32 = 8;

/// Below [`POLL_FROM_SCORE`], each thread polls one busy wait in this
/// many as a probe: 16, so that probing costs a failed poll limit per 16
/// waits at most while polling does not pay.
pub const PROBE_EVERY: u32 = 16;

/// The process's score (module docs). Relaxed: a hint.
static SCORE: AtomicU32 = AtomicU32::new(0);

std::thread_local! {
    /// Whether this thread's next poll that holds its CPU was admitted by
    /// the score and is to be scored.
    static SCORED_POLL: Cell<bool> = const { Cell::new(false) };
    /// Busy waits this thread saw below the score, for the probes.
    static BUSY_WAITS: Cell<u32> = const { Cell::new(0) };
}

/// Whether a wait whose poll would hold a CPU other runnable threads want
/// polls all the same: the score says such polls pay, or the calling
/// thread's probe is due. An admitted poll is scored when it ends
/// ([`poll_ended`]).
#[inline]
pub fn admits_poll() -> bool {
    let admitted = admits_at(SCORE.load(Ordering::Relaxed), probe_due);
    SCORED_POLL.with(|scored| scored.set(admitted));
    admitted
}

/// Counts a busy wait of the calling thread below the score; whether it
/// is the thread's probe (one in [`PROBE_EVERY`]).
fn probe_due() -> bool {
    BUSY_WAITS.with(|n| {
        let seen = n.get().wrapping_add(1);
        n.set(seen);
        seen % PROBE_EVERY == 0
    })
}

/// Whether a busy wait polls at `score` (pure): from [`POLL_FROM_SCORE`]
/// on, else when `probe_due()` says so (asked only then).
#[inline]
pub fn admits_at(score: u32, probe_due: impl FnOnce() -> bool) -> bool {
    score >= POLL_FROM_SCORE || probe_due()
}

/// Scores the calling thread's poll that holds its CPU and just ended,
/// if [`admits_poll`] admitted it: `released` when it saw what it waited
/// for, `false` when it ran out of its limit. Any other poll: nothing but
/// one thread-local read.
#[inline]
pub fn poll_ended(released: bool) {
    if SCORED_POLL.with(|scored| scored.replace(false)) {
        let score = SCORE.load(Ordering::Relaxed);
        let next = next_score(score, released);
        if next != score {
            SCORE.store(next, Ordering::Relaxed);
        }
    }
}

/// The score after a scored poll ended (pure): up by [`SUCCESS_GAIN`] when
/// `released`, else down by [`FAILURE_COST`], within `0..=SCORE_CAP`.
#[inline]
pub fn next_score(score: u32, released: bool) -> u32 {
    if released {
        (score + SUCCESS_GAIN).min(SCORE_CAP)
    } else {
        score.saturating_sub(FAILURE_COST)
    }
}

/// The process's score now (for reports and tests).
pub fn score() -> u32 {
    SCORE.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_that_pay_raise_the_score_to_its_cap_and_failures_lower_it_to_zero() {
        let mut s = 0;
        for _ in 0..100 {
            s = next_score(s, true);
        }
        assert_eq!(s, SCORE_CAP);
        for _ in 0..100 {
            s = next_score(s, false);
        }
        assert_eq!(s, 0);
    }

    #[test]
    fn polling_goes_on_while_two_polls_in_three_succeed_and_stops_below() {
        let run = |pattern: &[bool]| {
            let mut s = POLL_FROM_SCORE;
            for _ in 0..100 {
                for &released in pattern {
                    s = next_score(s, released);
                }
            }
            s
        };
        assert!(run(&[true, true, false]) >= POLL_FROM_SCORE);
        assert!(run(&[true, false]) < POLL_FROM_SCORE);
        assert!(run(&[true, true, true, false]) >= POLL_FROM_SCORE);
    }

    #[test]
    fn a_low_score_polls_only_when_a_probe_is_due() {
        assert!(admits_at(POLL_FROM_SCORE, || unreachable!(
            "no probe asked"
        )));
        assert!(!admits_at(POLL_FROM_SCORE - 1, || false));
        assert!(admits_at(0, || true));
    }

    #[test]
    fn a_thread_below_the_score_probes_one_busy_wait_in_probe_every() {
        // A thread of its own: the probe count is per thread.
        let admitted = std::thread::spawn(|| {
            (0..PROBE_EVERY * 4)
                .filter(|_| admits_at(0, probe_due))
                .count()
        })
        .join()
        .unwrap();
        assert_eq!(admitted, 4);
    }

    #[test]
    fn an_admitted_poll_is_scored_once() {
        std::thread::spawn(|| {
            SCORED_POLL.with(|s| s.set(true));
            poll_ended(true);
            assert!(!SCORED_POLL.with(Cell::get), "scored, then cleared");
            poll_ended(false);
            assert!(!SCORED_POLL.with(Cell::get));
        })
        .join()
        .unwrap();
    }
}
