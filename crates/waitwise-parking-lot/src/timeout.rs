//! parking_lot's timeouts (`Duration`, `Instant`) as waitwise deadlines.

use std::time::{Duration, Instant};
use waitwise::Deadline;

/// The deadline of a `*_for(timeout)` call.
#[inline]
pub(crate) fn after(timeout: Duration) -> Deadline {
    Deadline::after(timeout)
}

/// The deadline of a `*_until(instant)` call: passed already when
/// `instant` is.
#[inline]
pub(crate) fn at(instant: Instant) -> Deadline {
    Deadline::after(instant.saturating_duration_since(Instant::now()))
}
