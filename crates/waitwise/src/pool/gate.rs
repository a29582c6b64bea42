//! When a worker on an SMT sibling may run: seed 004's parking rule
//! (Poenaru 2017, section 6.7), generalised to any measured SMT
//! throughput.
//!
//! # The threshold
//!
//! Norm a core running one thread to throughput 1, and let `T2` be the
//! throughput of the core when both of its hardware threads run (seed 004
//! measured `T2 ≈ 1.33`, each thread at `≈ 0.66`). A sibling that is awake
//! takes half of the core's shared resources whether it is busy or not, so
//! its partner runs at `T2 / 2`; if the sibling is busy a fraction `u` of
//! the time (its *utilization*, measured at its own speed), the core
//! delivers `T2 / 2 + u · T2 / 2`. Parked, the sibling gives everything to
//! its partner, which delivers 1. Keeping the sibling awake pays when
//!
//! ```text
//! (1 + u) · T2 / 2 > 1   <=>   u > 2 / T2 - 1
//! ```
//!
//! so the threshold is `u* = 2 / T2 - 1` ([`park_threshold`]): `0.504` at
//! seed 004's `T2 = 1.33` (its "park an HT that uses less than half of its
//! processing power"), 0 for a core that doubles its throughput with SMT,
//! 1 for one that gains nothing (never wake the sibling for throughput).
//!
//! # The utilization measured
//!
//! The work a sibling would take is the *spill*: tasks submitted when no
//! worker on a core of its own was idle. The pool times every spill task
//! ([`UtilizationGate::record`]) and, once per [`WINDOW_NS`], computes `u`
//! as the spill's busy time over the window's length. Siblings may be
//! woken, and may poll when idle, while the last window's `u` reached the
//! threshold ([`UtilizationGate::is_open`]); otherwise they stay parked
//! (blocked in the kernel) and the core workers run the spill.
//!
//! # Memory ordering
//!
//! All accesses are `Relaxed`: the gate is a statistic. A window rolled
//! twice, or a spill time counted in the next window, changes `u` by one
//! task's time; no decision that depends on it can lose work, because the
//! core workers run every queued task whether the gate is open or not.

use waitwise_platform::shim::{AtomicBool, AtomicU64, Ordering};

/// Seed 004's throughput of a 2-way SMT core with both threads running,
/// normed to one thread alone (Poenaru 2017, section 4.2: each thread
/// `≈ 0.66`, together `≈ 1.33`). Measured there on Haswell; used when the
/// pool is not given a figure measured on this machine.
pub const SEED_004_PAIR_THROUGHPUT: f64 = 1.33;

/// Length of a utilization window. Guessed: long enough to hold many
/// short tasks (a window of 10 ms holds 10,000 tasks of 1 µs), short
/// enough that a sibling follows a load change within a few windows.
pub const WINDOW_NS: u64 = 10_000_000;

/// The utilization above which an SMT sibling is worth waking, for a core
/// whose two threads together deliver `pair_throughput` times one thread
/// alone: `2 / T2 - 1`, clamped to `[0, 1]` (module doc). A figure that is
/// not a positive number gives 1 (never wake a sibling for throughput).
///
/// ```
/// use waitwise::pool::gate::park_threshold;
/// assert!((park_threshold(1.33) - 0.504).abs() < 1e-3);
/// assert_eq!(park_threshold(2.0), 0.0);
/// assert_eq!(park_threshold(1.0), 1.0);
/// assert_eq!(park_threshold(f64::NAN), 1.0);
/// ```
pub fn park_threshold(pair_throughput: f64) -> f64 {
    if !(pair_throughput.is_finite() && pair_throughput > 0.0) {
        return 1.0;
    }
    (2.0 / pair_throughput - 1.0).clamp(0.0, 1.0)
}

/// The spill's utilization, measured per window, against the threshold.
#[derive(Debug)]
pub struct UtilizationGate {
    threshold: f64,
    /// Start of the current window, ns on the caller's clock.
    window_start_ns: AtomicU64,
    /// Spill busy time recorded in the current window, ns.
    spill_ns: AtomicU64,
    /// Whether the last complete window reached the threshold.
    open: AtomicBool,
    /// `u` of the last complete window, as `f64` bits.
    last_u: AtomicU64,
}

impl UtilizationGate {
    /// A closed gate for a core with SMT throughput `pair_throughput`,
    /// whose first window starts at `now_ns`.
    pub fn new(pair_throughput: f64, now_ns: u64) -> Self {
        Self {
            threshold: park_threshold(pair_throughput),
            window_start_ns: AtomicU64::new(now_ns),
            spill_ns: AtomicU64::new(0),
            open: AtomicBool::new(false),
            last_u: AtomicU64::new(0f64.to_bits()),
        }
    }

    /// The threshold `u*`.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// The spill utilization of the last complete window.
    pub fn last_utilization(&self) -> f64 {
        f64::from_bits(self.last_u.load(Ordering::Relaxed))
    }

    /// Adds `busy_ns` of spill work finished at `now_ns`.
    pub fn record(&self, busy_ns: u64, now_ns: u64) {
        self.spill_ns.fetch_add(busy_ns, Ordering::Relaxed);
        self.roll_if_due(now_ns);
    }

    /// Whether siblings may run now (rolls the window first if it ended).
    pub fn is_open(&self, now_ns: u64) -> bool {
        self.roll_if_due(now_ns);
        self.open.load(Ordering::Relaxed)
    }

    /// Ends the window if it lasted [`WINDOW_NS`]: `u` = spill / length.
    fn roll_if_due(&self, now_ns: u64) {
        let start = self.window_start_ns.load(Ordering::Relaxed);
        let len = now_ns.saturating_sub(start);
        if len < WINDOW_NS {
            return;
        }
        // One caller rolls the window; the others keep counting into it.
        if self
            .window_start_ns
            .compare_exchange(start, now_ns, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let spill = self.spill_ns.swap(0, Ordering::Relaxed);
        let u = spill as f64 / len as f64;
        self.last_u.store(u.to_bits(), Ordering::Relaxed);
        self.open.store(u >= self.threshold, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn threshold_is_half_at_seed_004s_throughput() {
        assert!((park_threshold(SEED_004_PAIR_THROUGHPUT) - 0.5).abs() < 0.01);
        assert!((park_threshold(1.6) - 0.25).abs() < 1e-12);
        assert_eq!(park_threshold(0.8), 1.0);
        assert_eq!(park_threshold(-1.0), 1.0);
    }

    #[test]
    fn opens_when_the_spill_reaches_the_threshold_and_closes_after() {
        let g = UtilizationGate::new(1.33, 0);
        assert!(!g.is_open(0));
        // 60% of a window spent on spill work: above 0.504.
        g.record(WINDOW_NS * 6 / 10, WINDOW_NS / 2);
        assert!(!g.is_open(WINDOW_NS / 2), "the window has not ended");
        assert!(g.is_open(WINDOW_NS));
        assert!((g.last_utilization() - 0.6).abs() < 1e-9);
        // 40% in the next window: below, the gate closes.
        g.record(WINDOW_NS * 4 / 10, WINDOW_NS + 1);
        assert!(!g.is_open(2 * WINDOW_NS));
        // An idle stretch: u = 0, stays closed.
        assert!(!g.is_open(10 * WINDOW_NS));
        assert_eq!(g.last_utilization(), 0.0);
    }

    #[test]
    fn a_core_without_smt_gain_never_opens() {
        let g = UtilizationGate::new(1.0, 0);
        g.record(WINDOW_NS * 99 / 100, 1);
        assert!(!g.is_open(WINDOW_NS));
    }
}
