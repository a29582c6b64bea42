//! What one thread of a `waitwise peers` run records: its operations, and
//! the time of each wait (an acquisition, a receive, a barrier wait) on
//! the cycle clock, in a log-linear histogram that costs one increment.

use std::time::Duration;
use waitwise_platform::clock::{cycle_clock, CycleClock};

/// Sub-buckets per power of two, as a power of two: 8 buckets per
/// doubling, so a quantile read from the histogram is within 12.5% of
/// the sample's value.
pub const SUB_BUCKET_BITS: u32 = 3;
/// Sub-buckets per power of two.
const SUB_BUCKETS: u64 = 1 << SUB_BUCKET_BITS;
/// Buckets for every `u64`: the exact values below `2 * SUB_BUCKETS`,
/// then `SUB_BUCKETS` per doubling up to `2^64`.
const BUCKETS: usize = ((64 - SUB_BUCKET_BITS + 1) as usize) * SUB_BUCKETS as usize;

/// The bucket of `ticks`: the value itself below `2 * SUB_BUCKETS`, else
/// its power of two and the next [`SUB_BUCKET_BITS`] bits below the top.
pub fn bucket_of(ticks: u64) -> usize {
    if ticks < 2 * SUB_BUCKETS {
        return ticks as usize;
    }
    let top = 63 - ticks.leading_zeros();
    let sub = (ticks >> (top - SUB_BUCKET_BITS)) & (SUB_BUCKETS - 1);
    ((top - SUB_BUCKET_BITS + 1) as u64 * SUB_BUCKETS + sub) as usize
}

/// The smallest value in bucket `i` (the inverse of [`bucket_of`] on
/// bucket bounds).
pub fn bucket_low(i: usize) -> u64 {
    let i = i as u64;
    if i < 2 * SUB_BUCKETS {
        return i;
    }
    let top = i / SUB_BUCKETS + u64::from(SUB_BUCKET_BITS) - 1;
    (SUB_BUCKETS + i % SUB_BUCKETS) << (top - u64::from(SUB_BUCKET_BITS))
}

/// Wait times, in clock ticks.
#[derive(Clone, Debug)]
pub struct WaitHistogram {
    counts: Vec<u64>,
    total: u64,
    longest: u64,
}

impl Default for WaitHistogram {
    fn default() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            total: 0,
            longest: 0,
        }
    }
}

impl WaitHistogram {
    /// Counts one wait of `ticks`.
    #[inline]
    pub fn record(&mut self, ticks: u64) {
        self.counts[bucket_of(ticks)] += 1;
        self.total += 1;
        self.longest = self.longest.max(ticks);
    }

    /// Adds `other`'s waits.
    pub fn merge(&mut self, other: &WaitHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.longest = self.longest.max(other.longest);
    }

    /// Waits recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The longest wait, ticks (exact).
    pub fn longest(&self) -> u64 {
        self.longest
    }

    /// The `q` quantile (0..=1), ticks: the middle of the bucket that
    /// holds it, at most the longest wait; `None` without waits.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let low = bucket_low(i);
                let high = if i + 1 < BUCKETS {
                    bucket_low(i + 1)
                } else {
                    u64::MAX
                };
                return Some((low + (high - low) / 2).min(self.longest));
            }
        }
        Some(self.longest)
    }
}

/// One thread's record of a run: its operations, its waits, and the run's
/// end on the cycle clock.
pub struct ThreadLog {
    /// Operations this thread completed (the ones the run's throughput
    /// counts).
    pub ops: u64,
    /// Its waits.
    pub waits: WaitHistogram,
    /// Whether its `ops` count in the least/most-served figure (the
    /// threads competing for the same thing).
    pub served: bool,
    clock: &'static CycleClock,
    now: u64,
    end: u64,
}

impl ThreadLog {
    /// A log whose run ends `run` from now.
    pub fn start(served: bool, run: Duration) -> Self {
        let clock = cycle_clock();
        let now = clock.now();
        Self {
            ops: 0,
            waits: WaitHistogram::default(),
            served,
            clock,
            now,
            end: now.saturating_add(clock.duration_to_ticks(run)),
        }
    }

    /// Runs `wait`, records its time, and returns what it returned.
    #[inline]
    pub fn timed<R>(&mut self, wait: impl FnOnce() -> R) -> R {
        let t0 = self.clock.now();
        let r = wait();
        self.now = self.clock.now();
        self.waits.record(self.now.saturating_sub(t0));
        r
    }

    /// Whether the run's end has not come by the last clock read (the end
    /// of the last [`timed`](Self::timed) wait, or [`tick`](Self::tick)).
    #[inline]
    pub fn running(&self) -> bool {
        self.now < self.end
    }

    /// Reads the clock (for loops whose last timed wait is not recent).
    #[inline]
    pub fn tick(&mut self) {
        self.now = self.clock.now();
    }
}

/// Every thread's log of one run, and the run's wall time.
pub struct RunLog {
    /// One per thread.
    pub threads: Vec<ThreadLog>,
    /// From the start gate to the last thread's end.
    pub wall: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_16_and_within_an_eighth_above() {
        for t in 0..16 {
            assert_eq!(bucket_of(t), t as usize);
            assert_eq!(bucket_low(t as usize), t);
        }
        for t in [16u64, 17, 100, 1_000, 123_456, u64::MAX / 3, u64::MAX] {
            let i = bucket_of(t);
            assert!(i < BUCKETS, "{t}");
            let low = bucket_low(i);
            assert!(low <= t, "{t}: low {low}");
            if i + 1 < BUCKETS {
                assert!(t < bucket_low(i + 1), "{t}");
            }
            assert!((t - low) as f64 <= t as f64 / 8.0, "{t}");
        }
    }

    #[test]
    fn quantiles_come_from_the_right_bucket() {
        let mut h = WaitHistogram::default();
        assert_eq!(h.quantile(0.99), None);
        for t in 1..=100u64 {
            h.record(t * 100);
        }
        let p99 = h.quantile(0.99).unwrap() as f64;
        assert!((p99 - 9_900.0).abs() <= 9_900.0 / 8.0, "{p99}");
        assert_eq!(h.longest(), 10_000);
        let mut other = WaitHistogram::default();
        other.record(1_000_000);
        h.merge(&other);
        assert_eq!((h.total(), h.longest()), (101, 1_000_000));
        assert!(h.quantile(1.0).unwrap() <= 1_000_000);
    }

    #[test]
    fn a_log_times_its_waits_and_sees_its_end() {
        let mut log = ThreadLog::start(true, Duration::from_millis(1));
        let v = log.timed(|| 7);
        assert_eq!((v, log.waits.total()), (7, 1));
        std::thread::sleep(Duration::from_millis(2));
        assert!(log.running());
        log.tick();
        assert!(!log.running());
    }
}
