//! `pause`: a load loop with PAUSE (x86) or the platform's spin hint. PAUSE
//! de-pipelines the loop, saves power and leaves the SMT sibling more of the
//! core; it also avoids the memory-order mis-speculation flush when the store
//! finally arrives.

use super::MechanismWait;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{spin_hint, AtomicU32, Ordering};

/// Polls between clock reads. Chosen: PAUSE costs ~10-150 cycles depending on
/// the microarchitecture (measured by `waitwise probe` as `costs.pause_ns`),
/// so a clock read every 16 polls costs a few percent and overshoots a
/// deadline by at most ~1 µs.
pub const CLOCK_CHECK_INTERVAL: u32 = 16;

/// Waits until `word != current` or `deadline` passes.
#[inline]
pub fn wait(word: &AtomicU32, current: u32, deadline: Deadline) -> MechanismWait {
    let clock = cycle_clock();
    let mut polls: u32 = 0;
    loop {
        // Acquire: a waiter that sees the new value sees the writer's prior writes.
        let v = word.load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        spin_hint();
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(CLOCK_CHECK_INTERVAL) && deadline.passed_at(clock.now()) {
            return MechanismWait::TimedOut;
        }
    }
}
