//! `CLOCK_MONOTONIC` time for the interposer's own loops, and a PAUSE poll
//! of a word on it: the semaphore's polling phase (a real-time thread's
//! polls with the engine's, by yielding), and the end of the rwlock's
//! polling phase and its absolute futex timeouts. (Mutexes, condition
//! variables and barriers poll with the engine's polling phase, on
//! waitwise's clock: modules `mutex`, `cond`, `barrier`; the spin lock
//! polls in `waitwise::mutex::SpinLockRef`.)

use std::sync::atomic::{AtomicU32, Ordering};

// The poll reads the clock every CLOCK_CHECK_INTERVAL polls, the engine's
// PAUSE interval (its doc says why), tested with a mask below.
use waitwise::mechanism::pause::CLOCK_CHECK_INTERVAL;
const _: () = assert!(CLOCK_CHECK_INTERVAL.is_power_of_two());

/// `CLOCK_MONOTONIC` in ns: the platform's reader, whose call a forced
/// unwind from a signal handler may pass through.
pub use waitwise_platform::clock::monotonic_raw_ns as monotonic_ns;

/// Polls `word` (Acquire loads, PAUSE between them) for at most `limit_ns`
/// until `ready(value)`; returns the ready value, or `None` when the limit
/// passed (at once for 0).
#[inline]
pub fn poll(word: &AtomicU32, limit_ns: u64, ready: impl FnMut(u32) -> bool) -> Option<u32> {
    if limit_ns == 0 {
        return None;
    }
    poll_until(word, end_after(limit_ns), ready)
}

/// The `CLOCK_MONOTONIC` time `limit_ns` from now, for [`poll_until`].
#[inline]
pub fn end_after(limit_ns: u64) -> u64 {
    monotonic_ns().saturating_add(limit_ns)
}

/// [`poll`] until the `CLOCK_MONOTONIC` time `end` (from [`end_after`]).
#[inline]
pub fn poll_until(word: &AtomicU32, end: u64, ready: impl FnMut(u32) -> bool) -> Option<u32> {
    poll_with(word, end, ready)
}

#[inline(always)]
fn poll_with(word: &AtomicU32, end: u64, mut ready: impl FnMut(u32) -> bool) -> Option<u32> {
    let mut polls: u32 = 0;
    loop {
        // Acquire: a waiter that sees the new value sees the writer's
        // prior writes.
        let v = word.load(Ordering::Acquire);
        if ready(v) {
            return Some(v);
        }
        std::hint::spin_loop();
        polls = polls.wrapping_add(1);
        if polls & (CLOCK_CHECK_INTERVAL - 1) == 0 && monotonic_ns() >= end {
            return None;
        }
    }
}
