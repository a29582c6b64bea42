//! The pace of a lock's hand-offs: at most one per interval.
//!
//! A hand-off (module docs of `ttas.rs`, "Bounded unfairness") leaves the
//! lock held by nobody until the woken waiter runs, so each one costs the
//! lock about a wake-up latency, `B`. Without a pace, a lock saturated by
//! many waiters hands off at almost every release: enough waiters lose
//! their rounds to keep `STARVING` above zero, and the lock runs one
//! critical section per wake-up latency, a convoy. [`HandOffPace`] lets a
//! release hand off only when [`hand_off_interval_ns`] has passed since
//! the last hand-off: [`HAND_OFF_PACE_IN_B`] `B`, so that hand-offs cost
//! the lock at most about `1 / HAND_OFF_PACE_IN_B` of its time, but never
//! more than [`HAND_OFF_PACE_MAX_NS`], so that a waiter is not passed over
//! for milliseconds where a wake-up is slow. A refused release releases as
//! if nobody asked (and wakes one sleeper), and the next one after the
//! interval hands off.

use waitwise_platform::shim::{AtomicU64, Ordering};

/// The least time between two hand-offs of one lock, in units of `B`.
///
/// Measured on a 16-CPU Intel guest (`waitwise oversub --loop mutex`, 16
/// and 64 threads, `B` about 7 µs): with a hand-off at every asking
/// release the default `Mutex` took 1.8-1.9x `pthread_mutex`'s time with 64
/// threads and 1.2-1.4x with 16; without hand-offs 0.72x and 0.68-0.70x;
/// paced at one per 200 µs (about 29 `B`) 0.84-0.86x and 0.77-0.81x; paced
/// at one per 50 µs (about 7 `B`) still 1.7-1.9x with 64 threads. 32 `B`
/// bounds the hand-offs' cost at about 3% of the lock's time.
pub const HAND_OFF_PACE_IN_B: f64 = 32.0;

/// The longest time between two hand-offs, ns, whatever `B`: where a
/// wake-up costs more than `HAND_OFF_PACE_MAX_NS / HAND_OFF_PACE_IN_B`
/// (~8 µs), hand-offs may cost the lock more than `1 / HAND_OFF_PACE_IN_B`
/// of its time (one wake-up latency per interval).
///
/// Measured on 2 vCPUs (`waitwise peers --only mutex`, 8 threads, ~100 ns
/// critical sections, processes alternating with and without the cap,
/// whose measured `B` was mostly 10-20 µs): paced at 32 `B` alone, the
/// default `Mutex`'s longest wait was about 2.4x parking_lot's (whose
/// fair unlock comes after a random 0-1 ms); with the cap 1.5-1.7x, at
/// the same throughput. Where `B` is below ~8 µs (the 16-CPU guest
/// above, or this one in its fast wake-up mode) the cap does not bind.
pub const HAND_OFF_PACE_MAX_NS: u64 = 250_000;

/// The least time between two hand-offs when a block costs `block_ns`:
/// [`HAND_OFF_PACE_IN_B`] `B`, at most [`HAND_OFF_PACE_MAX_NS`].
#[inline]
pub fn hand_off_interval_ns(block_ns: f64) -> u64 {
    ((HAND_OFF_PACE_IN_B * block_ns) as u64).min(HAND_OFF_PACE_MAX_NS)
}

/// When a lock last handed off, on the cycle clock. Only the lock's holder
/// writes it, so successive writes are ordered by the lock itself. The
/// reader-writer lock paces its starving writers with it too (`rwlock.rs`):
/// there a waiting writer reads it, outside the lock.
#[derive(Debug)]
pub struct HandOffPace {
    /// Cycle-clock nanoseconds of the last hand-off; 0 before the first.
    last_ns: AtomicU64,
}

impl HandOffPace {
    crate::loom_const::const_unless_loom! {
        /// A pace that allows the first hand-off.
        pub fn new() -> Self {
            Self {
                last_ns: AtomicU64::new(0),
            }
        }
    }

    /// Whether a release at cycle-clock time `now_ns` may hand off, at
    /// least `interval_ns` after the last hand-off; if so, it counts as
    /// the last one. Call it only as the lock's holder.
    #[inline]
    pub fn allows(&self, now_ns: u64, interval_ns: u64) -> bool {
        if !self.has_passed(now_ns, interval_ns) {
            return false;
        }
        self.mark(now_ns);
        true
    }

    /// Whether `interval_ns` has passed at cycle-clock time `now_ns` since
    /// the last hand-off (or none was made). Any thread may ask: one that
    /// does not hold the lock may read a value a holder is replacing, and
    /// is then answered by the previous hand-off's time.
    #[inline]
    pub fn has_passed(&self, now_ns: u64, interval_ns: u64) -> bool {
        // Relaxed: holders write it one at a time, ordered by the lock's
        // acquire/release; a reader outside the lock needs no order, only
        // some recent value.
        let last = self.last_ns.load(Ordering::Relaxed);
        last == 0 || now_ns.saturating_sub(last) >= interval_ns
    }

    /// Counts a hand-off at cycle-clock time `now_ns` as the last one. Call
    /// it only as the lock's holder.
    #[inline]
    pub fn mark(&self, now_ns: u64) {
        // Relaxed: as in `has_passed`.
        self.last_ns.store(now_ns.max(1), Ordering::Relaxed);
    }
}

impl Default for HandOffPace {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_32_b_up_to_the_cap() {
        assert_eq!(hand_off_interval_ns(1_000.0), 32_000);
        assert_eq!(hand_off_interval_ns(7_000.0), 224_000);
        assert_eq!(hand_off_interval_ns(40_000.0), HAND_OFF_PACE_MAX_NS);
        assert_eq!(hand_off_interval_ns(f64::INFINITY), HAND_OFF_PACE_MAX_NS);
        assert_eq!(hand_off_interval_ns(0.0), 0);
    }

    #[test]
    fn the_first_hand_off_is_allowed_then_one_per_interval() {
        let pace = HandOffPace::new();
        assert!(pace.allows(1_000, 500));
        assert!(!pace.allows(1_200, 500));
        assert!(!pace.allows(1_499, 500));
        assert!(pace.allows(1_500, 500));
        assert!(!pace.allows(1_600, 500));
        assert!(pace.allows(5_000, 500));
    }

    #[test]
    fn a_clock_at_zero_or_going_back_refuses_only_within_the_interval() {
        let pace = HandOffPace::new();
        // A first hand-off at clock 0 is recorded as 1, not as "never".
        assert!(pace.allows(0, 100));
        assert!(!pace.allows(50, 100));
        // An earlier reading (another CPU's clock a little behind) is
        // within the interval: refused, not wrapped to a huge gap.
        assert!(pace.allows(1_000, 100));
        assert!(!pace.allows(990, 100));
    }

    #[test]
    fn a_zero_interval_always_allows() {
        let pace = HandOffPace::new();
        assert!(pace.allows(10, 0));
        assert!(pace.allows(10, 0));
    }
}
