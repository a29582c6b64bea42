//! `spin`: a plain load loop without PAUSE. It keeps the core's pipeline
//! full and, on SMT, starves the sibling hyper-thread. It is not the fastest
//! to notice a store either: leaving the loop pays a memory-order flush, and
//! the loop keeps requesting the line the notifier needs: `waitwise
//! mechanisms` compares it with `pause` and the delay loops, contenders
//! interleaved round by round. Seed 000's "spin-loops" are
//! `pause`: they put PAUSE in the loop body.

use super::MechanismWait;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{AtomicU32, Ordering};

/// Polls between clock reads. Chosen: a poll is ~1 ns, a clock read ~10-20 ns,
/// so checking every 64 polls keeps the clock below a quarter of the loop's
/// time and overshoots a deadline by well under 0.1 µs.
pub const CLOCK_CHECK_INTERVAL: u32 = 64;

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
        #[cfg(loom)]
        loom::thread::yield_now();
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(CLOCK_CHECK_INTERVAL) && deadline.passed_at(clock.now()) {
            return MechanismWait::TimedOut;
        }
    }
}
