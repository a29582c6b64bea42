//! Whether the channels' re-tries should yield the CPU: not while a
//! recent yield of the process lost it for a whole scheduler slice.
//!
//! A blocking operation re-tries before it waits, and its last re-tries
//! yield (`RETRIES_BEFORE_WAIT` in `endpoints`): when the peer shares the
//! CPU, the yield runs it at once. When another program keeps the CPU
//! busy, the yield hands the CPU to that program for its whole slice
//! (milliseconds), and every operation that waits pays a slice. So each
//! yield of a re-try is timed, and one that kept the caller off the CPU
//! for [`LOST_SLICE_NS`] or more is recorded with the lost-slice guard's
//! memory ([`yield_guard::lost_slice_recently`]), which also holds the
//! slices lost by other yield-polling waits of the process: while it
//! holds one, the re-tries skip their yields; after it one operation
//! tries again. A program whose own threads share the CPUs keeps
//! yielding: a slice lost while its own threads account for every
//! runnable thread is not recorded ([`yield_guard::yield_lost_slice_at`]).

use crate::mechanism::yield_guard::{self, LOST_SLICE_NS};
use waitwise_platform::clock::cycle_clock;

/// Whether a re-try may yield now.
#[inline]
pub(crate) fn may_yield() -> bool {
    !yield_guard::lost_slice_recently()
}

/// Yields the CPU, timed; a yield that lost a slice is recorded, which
/// stops re-try yields for a while ([`may_yield`]).
#[inline]
pub(crate) fn timed_yield() {
    let clock = cycle_clock();
    let before = clock.now();
    waitwise_platform::shim::yield_now();
    let after = clock.now();
    if clock.ticks_to_ns(after.saturating_sub(before)) as u64 >= LOST_SLICE_NS {
        yield_guard::yield_lost_slice_at(after);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_lost_slice_stops_yields_for_a_while() {
        // (The end of the while is `yield_guard::is_recent`'s; another
        // test's loss could start a new one at any moment.)
        yield_guard::note_lost_slice_at(cycle_clock().now());
        assert!(!may_yield());
    }
}
