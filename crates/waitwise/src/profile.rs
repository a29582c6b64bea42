//! Wait-time profiling: a per-object log2 histogram of how long each wait
//! took, so the model can fit the wait-time distribution and recommend
//! `alpha` (Lim & Agarwal, Appendix A).
//!
//! Off by default. On with [`Profiler::enabled`] (the primitives' builders
//! take a flag) or for every object with `WAITWISE_PROFILE` set to anything
//! but empty or `0` ([`crate::env::Profiling`]: `1` or a path; the library
//! writes no file, the interposer writes the path). When off, a primitive
//! pays one predictable branch per wait and nothing else; when on, two
//! clock reads and one relaxed increment (two when the wait blocked).
//!
//! Bucket `i` counts waits that lasted `[2^i, 2^(i+1))` ns (bucket 0 also
//! holds waits under 1 ns); the last bucket holds everything longer.

use std::sync::atomic::{AtomicU64, Ordering};
use waitwise_platform::clock::cycle_clock;

/// Number of log2 buckets: up to 2^40 ns ≈ 18 minutes.
pub const BUCKETS: usize = 40;

/// A histogram of wait durations, updated with relaxed increments (the
/// counts are statistics: no other memory depends on them).
#[derive(Debug)]
pub struct WaitHistogram {
    buckets: [AtomicU64; BUCKETS],
    blocks: AtomicU64,
}

/// Which log2 bucket `ns` falls in.
#[inline]
pub fn bucket_of(ns: u64) -> usize {
    if ns == 0 {
        0
    } else {
        ((63 - ns.leading_zeros()) as usize).min(BUCKETS - 1)
    }
}

impl WaitHistogram {
    fn new() -> Self {
        Self {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            blocks: AtomicU64::new(0),
        }
    }

    /// Records one wait of `ns` nanoseconds.
    #[inline]
    pub fn record(&self, ns: u64, blocked: bool) {
        // Relaxed: statistics; no other memory depends on them.
        self.buckets[bucket_of(ns)].fetch_add(1, Ordering::Relaxed);
        if blocked {
            self.blocks.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A copy of the counts.
    pub fn snapshot(&self, kind: &str) -> WaitProfile {
        // Relaxed: statistics; a snapshot taken while waits run may miss
        // the latest counts, which no reader depends on.
        let buckets: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        WaitProfile {
            kind: kind.to_string(),
            total_waits: buckets.iter().sum(),
            blocks: self.blocks.load(Ordering::Relaxed),
            buckets,
        }
    }
}

/// A recorded wait-time histogram, the exchange format between the
/// primitives, the C interposer's profile file and `waitwise model fit`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WaitProfile {
    /// Synchronization kind of the object ("barrier", "mutex", ...).
    pub kind: String,
    /// `buckets[i]`: waits that lasted `[2^i, 2^(i+1))` ns.
    pub buckets: Vec<u64>,
    /// Total waits recorded (the sum of `buckets`).
    pub total_waits: u64,
    /// Waits that slept in the kernel at least once.
    pub blocks: u64,
}

/// Whether `WAITWISE_PROFILE` asks for profiling of every object.
pub fn profiling_from_env() -> bool {
    crate::env::profiling().is_on()
}

/// A primitive's optional profiler: `None` inside when off.
#[derive(Debug, Default)]
pub struct Profiler {
    hist: Option<Box<WaitHistogram>>,
}

/// A started measurement (`None` when profiling is off).
#[derive(Clone, Copy, Debug)]
pub struct WaitStart(Option<u64>);

impl Profiler {
    /// Profiling on or off for this object.
    pub fn enabled(on: bool) -> Self {
        Self {
            hist: on.then(|| Box::new(WaitHistogram::new())),
        }
    }

    /// On when `WAITWISE_PROFILE` says so.
    pub fn from_env() -> Self {
        Self::enabled(profiling_from_env())
    }

    /// Whether this object records waits.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.hist.is_some()
    }

    /// Call before a wait that may take time.
    #[inline]
    pub fn start(&self) -> WaitStart {
        WaitStart(self.hist.as_ref().map(|_| cycle_clock().now()))
    }

    /// Call after the wait, with whether it blocked.
    #[inline]
    pub fn finish(&self, start: WaitStart, blocked: bool) {
        if let (Some(h), Some(t0)) = (&self.hist, start.0) {
            let clock = cycle_clock();
            let ns = clock.ticks_to_ns(clock.now().saturating_sub(t0)) as u64;
            h.record(ns, blocked);
        }
    }

    /// The histogram so far, labelled with `kind` (`None` when off).
    pub fn snapshot(&self, kind: &str) -> Option<WaitProfile> {
        self.hist.as_ref().map(|h| h.snapshot(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(2), 1);
        assert_eq!(bucket_of(3), 1);
        assert_eq!(bucket_of(1024), 10);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn off_records_nothing_on_records() {
        let off = Profiler::enabled(false);
        off.finish(off.start(), true);
        assert!(off.snapshot("x").is_none());
        let on = Profiler::enabled(true);
        on.finish(on.start(), true);
        on.finish(on.start(), false);
        let p = on.snapshot("mutex").unwrap();
        assert_eq!(p.total_waits, 2);
        assert_eq!(p.blocks, 1);
        assert_eq!(p.buckets.len(), BUCKETS);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_round_trip() {
        let on = Profiler::enabled(true);
        on.finish(on.start(), true);
        let p = on.snapshot("mutex").unwrap();
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<WaitProfile>(&json).unwrap(), p);
    }
}
