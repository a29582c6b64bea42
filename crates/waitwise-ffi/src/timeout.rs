//! Timeouts across the ABI: relative, in nanoseconds, as `uint64_t`.

use std::time::Duration;

/// `WAITWISE_TIMEOUT_INFINITE` (`UINT64_MAX`): a timed call that never
/// times out.
pub const WAITWISE_TIMEOUT_INFINITE: u64 = u64::MAX;

/// The timeout a `*_ns` argument asks for: `0` = only check, `UINT64_MAX`
/// = never time out, anything else that many nanoseconds from now.
#[inline]
pub fn from_ns(ns: u64) -> Duration {
    if ns == WAITWISE_TIMEOUT_INFINITE {
        Duration::MAX
    } else {
        Duration::from_nanos(ns)
    }
}
