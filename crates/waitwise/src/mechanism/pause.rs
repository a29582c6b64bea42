//! `pause`: a load loop with PAUSE (x86) or the platform's spin hint. PAUSE
//! de-pipelines the loop, saves power and leaves the SMT sibling more of the
//! core; it also avoids the memory-order mis-speculation flush when the store
//! finally arrives.

use super::MechanismWait;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{spin_hint, AtomicU32, Ordering};

/// Polls between clock reads. Chosen: a PAUSE costs ~10-150 cycles
/// depending on the microarchitecture (measured by `waitwise probe` as
/// `costs.pause_ns`), and a poll that reaches its limit overshoots it by up
/// to this many PAUSEs: every two-phase wait that blocks pays that on top of
/// its limit. Every 4 polls keeps the overshoot to ~0.1-0.2 µs (16 let it
/// reach ~0.4 µs with a 25 ns PAUSE and ~0.75 µs with Skylake's); the clock
/// read (~20 ns through the vDSO, a few cycles as RDTSC) delays noticing a
/// change by at most its own length.
pub const CLOCK_CHECK_INTERVAL: u32 = 4;

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
