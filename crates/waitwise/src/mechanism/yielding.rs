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
    // Acquire: a waiter that sees the new value sees the writer's prior writes.
    match wait_for_change(|| word.load(Ordering::Acquire), current, deadline) {
        Some(v) => MechanismWait::Changed(v),
        None => MechanismWait::TimedOut,
    }
}

/// [`wait`] on any value `load` reads (a word of another width, a decoded
/// state): yields until `load()` differs from `current` (`Some` of it) or
/// `deadline` passes (`None`). The load's ordering is the caller's.
#[inline]
pub fn wait_for_change<T: Copy + PartialEq>(
    mut load: impl FnMut() -> T,
    current: T,
    deadline: Deadline,
) -> Option<T> {
    let clock = cycle_clock();
    let v = load();
    if v != current {
        LAST_YIELD_NS.with(|c| c.set(0));
        return Some(v);
    }
    let mut before = clock.now();
    loop {
        yield_now();
        let after = clock.now();
        let v = load();
        if v != current {
            let took_ns = clock.ticks_to_ns(after.saturating_sub(before)) as u64;
            LAST_YIELD_NS.with(|c| c.set(took_ns));
            return Some(v);
        }
        if deadline.passed_at(after) {
            return None;
        }
        before = after;
    }
}

/// A polling phase that yields between looks: from `seen`, a value `ready`
/// refused, waits for each change of what `load` reads ([`wait_for_change`])
/// until `ready` holds (`true`, the last yield reported to the lost-slice
/// guard as every yielding wait's is) or `deadline` passes (`false`). For
/// words the engine's futex polling does not cover (the reader-writer
/// state word is 64 bits wide).
#[inline]
pub fn poll<T: Copy + PartialEq>(
    mut load: impl FnMut() -> T,
    mut seen: T,
    deadline: Deadline,
    mut ready: impl FnMut(T) -> bool,
) -> bool {
    while let Some(v) = wait_for_change(&mut load, seen, deadline) {
        seen = v;
        if ready(v) {
            super::yield_guard::wait_ended_after_yield(last_yield_ns());
            return true;
        }
    }
    false
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    #[test]
    fn poll_of_a_wide_word_ends_when_ready() {
        let word = AtomicU64::new(1 << 40);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(5));
                word.store(2 << 40, std::sync::atomic::Ordering::Release);
                std::thread::sleep(Duration::from_millis(5));
                word.store(3 << 40, std::sync::atomic::Ordering::Release);
            });
            let load = || word.load(std::sync::atomic::Ordering::Acquire);
            let ready = |v: u64| v == 3 << 40;
            assert!(poll(load, 1 << 40, Deadline::NEVER, ready));
        });
    }

    #[test]
    fn poll_ends_at_its_deadline_when_nothing_changes() {
        let word = AtomicU64::new(7);
        let load = || word.load(std::sync::atomic::Ordering::Acquire);
        let end = Deadline::after(Duration::from_millis(2));
        assert!(!poll(load, 7, end, |_| true));
        assert!(end.has_passed());
    }
}
