//! `backoff`: polls separated by exponentially growing pauses, up to a cap
//! (the crossbeam `Backoff::snooze` shape, without its yield step:
//! yielding is its own mechanism here). Fewer polls mean less coherence
//! traffic on a hot line when many threads wait on it (Lim & Agarwal 6.3).
//!
//! The pauses are times, not PAUSE counts ([`pause_for_ns`]): a PAUSE
//! costs from a few to ~140 cycles depending on the core, so a count would
//! make the cap anything from 0.1 to 5 µs.

use super::MechanismWait;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::pause_time::pause_for_ns;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// The first pause, ns. Guessed: about one PAUSE on recent Intel cores
/// (140 cycles at 3-4 GHz is 35-45 ns; `waitwise probe` shows this CPU's).
pub const BACKOFF_FIRST_NS: u64 = 32;

/// The largest pause is `BACKOFF_FIRST_NS << BACKOFF_CAP_SHIFT` (2 µs).
/// Chosen as crossbeam's `SPIN_LIMIT` (6) doublings: 2 µs is the scale of a
/// futex wake-up, beyond which backing off further only adds latency.
pub const BACKOFF_CAP_SHIFT: u32 = 6;

/// Waits until `word != current` or `deadline` passes. The clock is read
/// during every pause.
#[inline]
pub fn wait(word: &AtomicU32, current: u32, deadline: Deadline) -> MechanismWait {
    let clock = cycle_clock();
    let mut shift: u32 = 0;
    loop {
        // Acquire: a waiter that sees the new value sees the writer's prior writes.
        let v = word.load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        pause_for_ns(BACKOFF_FIRST_NS << shift);
        shift = (shift + 1).min(BACKOFF_CAP_SHIFT);
        if deadline.passed_at(clock.now()) {
            return MechanismWait::TimedOut;
        }
    }
}
