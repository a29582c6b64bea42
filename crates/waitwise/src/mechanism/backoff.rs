//! `backoff`: polls separated by exponentially growing batches of PAUSE, up
//! to a cap (the crossbeam `Backoff::snooze` shape, without its yield step:
//! yielding is its own mechanism here). Fewer polls mean less coherence
//! traffic on a hot line when many threads wait on it (Lim & Agarwal 6.3).

use super::MechanismWait;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{spin_hint, AtomicU32, Ordering};

/// The largest batch is `2^BACKOFF_CAP_SHIFT` PAUSEs. Chosen as crossbeam's
/// `SPIN_LIMIT` (6): 64 PAUSEs is ~0.5-5 µs, the scale of a futex wake-up,
/// beyond which backing off further only adds latency.
pub const BACKOFF_CAP_SHIFT: u32 = 6;

/// Waits until `word != current` or `deadline` passes. The clock is read
/// after every batch.
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
        for _ in 0..(1u32 << shift) {
            spin_hint();
        }
        shift = (shift + 1).min(BACKOFF_CAP_SHIFT);
        if deadline.passed_at(clock.now()) {
            return MechanismWait::TimedOut;
        }
    }
}
