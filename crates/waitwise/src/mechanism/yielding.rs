//! `yield`: `sched_yield()` between polls, the user-level analog of Lim &
//! Agarwal's switch-spinning (`Ss`): when other threads are runnable on this
//! CPU the waiter hands them the CPU at each poll; when none is, it spins
//! through the kernel.

use super::MechanismWait;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{yield_now, AtomicU32, Ordering};

/// Waits until `word != current` or `deadline` passes. A yield costs ~0.3-1 µs,
/// so the clock is read after every poll.
#[inline]
pub fn wait(word: &AtomicU32, current: u32, deadline: Deadline) -> MechanismWait {
    let clock = cycle_clock();
    loop {
        // Acquire: a waiter that sees the new value sees the writer's prior writes.
        let v = word.load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        yield_now();
        if deadline.passed_at(clock.now()) {
            return MechanismWait::TimedOut;
        }
    }
}
