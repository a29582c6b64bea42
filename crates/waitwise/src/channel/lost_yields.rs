//! Whether the channels' re-tries should yield the CPU: not while a
//! recent yield lost it for a whole scheduler slice.
//!
//! A blocking operation re-tries before it waits, and its last re-tries
//! yield (`RETRIES_BEFORE_WAIT` in `endpoints`): when the peer shares the
//! CPU, the yield runs it at once. When another program keeps the CPU
//! busy, the yield hands the CPU to that program for its whole slice
//! (milliseconds), and every operation that waits pays a slice. So each
//! yield of a re-try is timed, and one that kept the caller off the CPU
//! for [`LOST_SLICE_NS`] or more stops the channels' re-try yields,
//! process-wide, for [`NO_YIELDS_NS`]; after that one operation tries
//! again. A program whose own threads share the CPUs keeps yielding: its
//! threads give the CPU back within a slice.
//!
//! # Memory ordering
//!
//! One word, `Relaxed`: a hint that publishes no memory. A stale read
//! costs one yield more or less.

use waitwise_platform::clock::cycle_clock;

/// A yield that kept its caller off the CPU this long lost a scheduler
/// slice, ns: the lost-slice line of the yield guard
/// ([`crate::mechanism::yield_guard::LOST_SLICE_NS`]).
pub(crate) const LOST_SLICE_NS: u64 = crate::mechanism::yield_guard::LOST_SLICE_NS;

/// How long re-tries skip their yields after a lost slice, ns. Guessed:
/// long against a slice, so that a busy machine costs one lost slice per
/// period (a few %), short against a program's phases.
pub(crate) const NO_YIELDS_NS: u64 = 50_000_000;

/// Until when re-tries skip their yields, cycle-clock ticks (0: they
/// yield).
static NO_YIELDS_UNTIL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether a re-try may yield now.
#[inline]
pub(crate) fn may_yield() -> bool {
    // Relaxed: a hint (module docs).
    let until = NO_YIELDS_UNTIL.load(std::sync::atomic::Ordering::Relaxed);
    until == 0 || cycle_clock().now() >= until
}

/// Yields the CPU, timed; a yield that lost a slice stops re-try yields
/// for [`NO_YIELDS_NS`].
#[inline]
pub(crate) fn timed_yield() {
    let clock = cycle_clock();
    let before = clock.now();
    waitwise_platform::shim::yield_now();
    let after = clock.now();
    if clock.ticks_to_ns(after.saturating_sub(before)) as u64 >= LOST_SLICE_NS {
        note_lost_slice(after);
    }
}

/// Stops re-try yields for [`NO_YIELDS_NS`] from `now` (ticks).
#[cold]
fn note_lost_slice(now: u64) {
    let until = now
        .saturating_add(cycle_clock().ns_to_ticks(NO_YIELDS_NS))
        .max(1);
    // Relaxed: a hint (module docs).
    NO_YIELDS_UNTIL.store(until, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_slice_stops_yields_for_a_while() {
        assert!(may_yield() || NO_YIELDS_UNTIL.load(std::sync::atomic::Ordering::Relaxed) != 0);
        note_lost_slice(cycle_clock().now());
        assert!(!may_yield());
        // Over: yields again.
        NO_YIELDS_UNTIL.store(1, std::sync::atomic::Ordering::Relaxed);
        assert!(may_yield());
    }
}
