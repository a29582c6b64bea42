//! `backoff`: polls separated by exponentially growing pauses, up to a cap
//! (the crossbeam `Backoff::snooze` shape, without its yield step:
//! yielding is its own mechanism here). Fewer polls mean less coherence
//! traffic on a hot line when many threads wait on it (Lim & Agarwal 6.3).
//!
//! [`Backoff`] is the one backoff of the crate, in crossbeam's shape
//! (`crossbeam-utils/src/backoff.rs`): [`Backoff::spin`] after a failed
//! compare-and-swap, [`Backoff::spin_randomized`] after a lost race for a
//! lock word, [`Backoff::snooze`] while another thread finishes an
//! operation, then [`Backoff::is_completed`] tells the caller to block.
//! The mechanism's own [`wait`] polls with [`Backoff::spin`].
//!
//! The pauses are times, not PAUSE counts ([`pause_for_ns`]): a PAUSE
//! costs from a few to ~140 cycles depending on the core, so a count would
//! make the cap anything from 0.1 to 5 µs.

use super::MechanismWait;
use std::cell::Cell;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::pause_time::pause_for_ns;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// The first pause, ns. Guessed: about one PAUSE on recent Intel cores
/// (140 cycles at 3-4 GHz is 35-45 ns; `waitwise probe` shows this CPU's).
pub const BACKOFF_FIRST_NS: u64 = 32;

/// The largest pause is `BACKOFF_FIRST_NS << BACKOFF_CAP_SHIFT` (2 µs), and
/// [`Backoff::snooze`] yields after this many doublings. Chosen as
/// crossbeam's `SPIN_LIMIT` (6) doublings: 2 µs is the scale of a futex
/// wake-up, beyond which backing off further only adds latency.
pub const BACKOFF_CAP_SHIFT: u32 = 6;

/// [`Backoff::is_completed`] once [`Backoff::snooze`] has run this many
/// steps (pauses, then yields). Chosen as crossbeam's `YIELD_LIMIT`.
pub const BACKOFF_YIELD_LIMIT: u32 = 10;

/// Waits until `word != current` or `deadline` passes. The clock is read
/// during every pause.
#[inline]
pub fn wait(word: &AtomicU32, current: u32, deadline: Deadline) -> MechanismWait {
    let clock = cycle_clock();
    let mut backoff = Backoff::new();
    loop {
        // Acquire: a waiter that sees the new value sees the writer's prior writes.
        let v = word.load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        backoff.spin();
        if deadline.passed_at(clock.now()) {
            return MechanismWait::TimedOut;
        }
    }
}

/// Exponential backoff for retry loops: pauses of [`BACKOFF_FIRST_NS`]
/// doubling up to [`BACKOFF_CAP_SHIFT`] times, then, for [`Backoff::snooze`],
/// yields.
///
/// # Examples
///
/// ```
/// use waitwise::mechanism::backoff::Backoff;
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// let ready = AtomicBool::new(true);
/// let mut backoff = Backoff::new();
/// while !ready.load(Ordering::Acquire) {
///     if backoff.is_completed() {
///         break; // time to block instead
///     }
///     backoff.snooze();
/// }
/// assert_eq!(backoff.rounds(), 0);
/// ```
#[derive(Debug, Default)]
pub struct Backoff {
    step: u32,
}

impl Backoff {
    /// A fresh backoff: the next pause is the first.
    #[inline]
    pub const fn new() -> Self {
        Self { step: 0 }
    }

    /// Steps taken so far.
    #[inline]
    pub fn rounds(&self) -> u32 {
        self.step
    }

    /// After a failed compare-and-swap: a short pause, never a yield (the
    /// winner has already moved on), doubling up to the cap.
    #[inline]
    pub fn spin(&mut self) {
        pause_for_ns(BACKOFF_FIRST_NS << self.step.min(BACKOFF_CAP_SHIFT));
        if self.step <= BACKOFF_CAP_SHIFT {
            self.step += 1;
        }
    }

    /// After a lost race for a lock word (Anderson 1990; Lim & Agarwal
    /// section 6.3): a pause of a random number of [`BACKOFF_FIRST_NS`]
    /// steps in `[1, 2^k]`, `k` growing with each call up to
    /// [`BACKOFF_CAP_SHIFT`], so that waiters released at once spread their
    /// next attempts. Nothing under loom (the model explores interleavings,
    /// not timing).
    #[inline]
    pub fn spin_randomized(&mut self) {
        if cfg!(loom) {
            return;
        }
        let shift = self.step.min(BACKOFF_CAP_SHIFT);
        let n = jitter() & ((1u32 << shift) - 1);
        pause_for_ns(BACKOFF_FIRST_NS * u64::from(n + 1));
        if self.step <= BACKOFF_CAP_SHIFT {
            self.step += 1;
        }
    }

    /// While another thread finishes its operation: pauses as
    /// [`Backoff::spin`] up to the cap, then yields the CPU (that thread
    /// may have been preempted half way).
    #[inline]
    pub fn snooze(&mut self) {
        self.snooze_with(waitwise_platform::shim::yield_now);
    }

    /// [`Backoff::snooze`], yielding with `yield_now` once the pauses are
    /// done (a caller that times its yields).
    #[inline]
    pub fn snooze_with(&mut self, yield_now: impl FnOnce()) {
        if self.is_spinning() {
            pause_for_ns(BACKOFF_FIRST_NS << self.step);
            self.step += 1;
        } else {
            yield_now();
            self.step = self.step.saturating_add(1);
        }
    }

    /// Ends the pauses early: the next [`Backoff::snooze`] yields, and the
    /// step count moves to the first yield's, so that as many yields
    /// remain before [`Backoff::is_completed`] as after all the pauses.
    #[inline]
    pub fn stop_spinning(&mut self) {
        self.step = self.step.max(BACKOFF_CAP_SHIFT + 1);
    }

    /// Whether the next [`Backoff::snooze`] pauses (rather than yields).
    #[inline]
    pub fn is_spinning(&self) -> bool {
        self.step <= BACKOFF_CAP_SHIFT
    }

    /// Whether backing off has gone on long enough that the caller should
    /// block instead (past [`BACKOFF_YIELD_LIMIT`] steps).
    #[inline]
    pub fn is_completed(&self) -> bool {
        self.step > BACKOFF_YIELD_LIMIT
    }
}

thread_local! {
    /// Per-thread xorshift state for backoff jitter (seeded from the
    /// thread-local's address so threads do not back off in lock step).
    static JITTER: Cell<u32> = const { Cell::new(0) };
}

/// A cheap per-thread pseudo-random number (xorshift32).
#[inline]
fn jitter() -> u32 {
    JITTER.with(|s| {
        let mut x = s.get();
        if x == 0 {
            x = (s as *const Cell<u32> as usize as u32) | 1;
        }
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.set(x);
        x
    })
}
