//! The polling phase of the waits on a [`waitwise::WaitWordRef`]: PAUSE-poll
//! a word until a condition holds or the poll limit passes; the caller
//! then blocks with the `WaitWordRef`. (Mutexes and condition variables
//! poll with the engine's polling phase: modules `mutex` and `cond`.)
//!
//! The poll limit is measured with `CLOCK_MONOTONIC` (the vDSO, no system
//! call) rather than waitwise's cycle clock: the cycle clock calibrates
//! itself on first use (about 10 ms of busy loop on CPUs whose CPUID does
//! not state the TSC frequency), a cost every process that ever contends
//! would pay, which is too much for short-lived programs under the
//! interposer. Untimed blocking never reads a clock; timed waits use
//! waitwise [`waitwise::Deadline`]s and pay the calibration once.

use std::sync::atomic::{AtomicU32, Ordering};
use waitwise::{Deadline, Policy, SleepRules, WaitOutcome, WaitWordRef};

/// Read the clock every this many polls (a power of two). Guessed: a PAUSE costs 10-140
/// cycles depending on the CPU, so 16 of them are 0.1-1 µs, well under any
/// useful poll limit, and the ~20 ns clock read stays a small fraction.
const CLOCK_CHECK_INTERVAL: u32 = 16;

/// `CLOCK_MONOTONIC` in ns (a vDSO call).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is writable; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

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

/// A whole two-phase wait on `engine`'s word: poll for `limit_ns`, then
/// block until `ready(value)` or `deadline`, the blocking phase ending as
/// `rules` say (re-checking after every wake-up by default).
#[inline]
pub fn wait(
    engine: WaitWordRef<'_>,
    limit_ns: u64,
    deadline: Deadline,
    mut ready: impl FnMut(u32) -> bool,
    rules: SleepRules,
) -> WaitOutcome {
    if let Some(value) = poll(engine.value(), deadline.cap_ns(limit_ns), &mut ready) {
        return WaitOutcome::Ready {
            value,
            blocked: false,
        };
    }
    engine.wait_with(&Policy::always_block(), deadline, ready, rules)
}
