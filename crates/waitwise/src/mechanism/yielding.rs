//! `yield`: `sched_yield()` between polls, the user-level analog of Lim &
//! Agarwal's switch-spinning (`Ss`): when other threads are runnable on this
//! CPU the waiter hands them the CPU at each poll; when none is, it spins
//! through the kernel.

use super::MechanismWait;
use std::cell::Cell;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{yield_now, AtomicU32, Ordering};

std::thread_local! {
    /// How long the yield before this thread's last [`wait`] that saw a
    /// change took, ns (0 when the change was seen before any yield).
    static LAST_YIELD_NS: Cell<u64> = const { Cell::new(0) };
}

/// How long the yield that preceded the calling thread's last change seen
/// by [`wait`] took, ns: what the lost-slice guard
/// ([`yield_guard`](super::yield_guard)) asks of a wait that ends.
#[inline]
pub fn last_yield_ns() -> u64 {
    LAST_YIELD_NS.with(Cell::get)
}

/// Waits until `word != current` or `deadline` passes. A yield costs ~0.3-1 µs,
/// so the clock is read after every poll; the reads also time the yield
/// before a change ([`last_yield_ns`]).
#[inline]
pub fn wait(word: &AtomicU32, current: u32, deadline: Deadline) -> MechanismWait {
    let clock = cycle_clock();
    // Acquire: a waiter that sees the new value sees the writer's prior writes.
    let v = word.load(Ordering::Acquire);
    if v != current {
        LAST_YIELD_NS.with(|c| c.set(0));
        return MechanismWait::Changed(v);
    }
    let mut before = clock.now();
    loop {
        yield_now();
        let after = clock.now();
        // Acquire: as above.
        let v = word.load(Ordering::Acquire);
        if v != current {
            let took_ns = clock.ticks_to_ns(after.saturating_sub(before)) as u64;
            LAST_YIELD_NS.with(|c| c.set(took_ns));
            return MechanismWait::Changed(v);
        }
        if deadline.passed_at(after) {
            return MechanismWait::TimedOut;
        }
        before = after;
    }
}
