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
/// change by at most its own length. The clock is also read after the
/// first PAUSE ([`wait`]).
pub const CLOCK_CHECK_INTERVAL: u32 = 4;

/// Waits until `word != current` or `deadline` passes.
///
/// The clock is read after the first PAUSE, then every
/// [`CLOCK_CHECK_INTERVAL`]: a phase whose deadline is already near (the
/// short limits `adapt/b` draws where its waits block, up to `B / 32`: a
/// few dozen to a couple of hundred ns) ends after one PAUSE and one clock
/// read instead of four PAUSEs: about half the time of a phase that
/// checks the clock only every four PAUSEs, where a PAUSE and a clock read
/// cost about the same.
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
        if (polls == 1 || polls.is_multiple_of(CLOCK_CHECK_INTERVAL))
            && deadline.passed_at(clock.now())
        {
            return MechanismWait::TimedOut;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_passed_deadline_times_out_and_a_changed_word_is_seen_first() {
        let word = AtomicU32::new(7);
        assert_eq!(
            wait(&word, 7, Deadline::after(std::time::Duration::ZERO)),
            MechanismWait::TimedOut
        );
        // The word is looked at before the clock: a change wins even past
        // the deadline.
        assert_eq!(
            wait(&word, 3, Deadline::after(std::time::Duration::ZERO)),
            MechanismWait::Changed(7)
        );
        // A deadline a few polls away passes too.
        let soon = Deadline::after(std::time::Duration::from_nanos(200));
        assert_eq!(wait(&word, 7, soon), MechanismWait::TimedOut);
        assert!(soon.has_passed());
    }
}
