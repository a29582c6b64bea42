//! Synchronization kinds and the `alpha` each one gets.
//!
//! A two-phase waiter polls for `L_poll = alpha * B` before blocking, where
//! `B` is the cost of blocking. Lim & Agarwal (1993) show which `alpha`
//! bounds the expected cost against the offline optimum for the wait-time
//! distribution each kind produces.
//!
//! # Why the defaults are static, not `adapt/b`
//!
//! Every kind defaults to its static `s/b/alpha(kind)` (the barrier and
//! the mutex poll with their own mechanisms);
//! [`Policy::adaptive`](super::Policy::adaptive) (`adapt/b`) is opt-in.
//! A kind's default moves to `adapt/b` only when a quiet machine measures
//! it ahead in both of issue 14's benchmarks, and it has not:
//!
//! - `waitwise model calibrate` (the waiting *cost*, Lim & Agarwal's
//!   metric) favours it: the model puts its mean factor over the
//!   calibration cells at 1.13 against 1.4 or more for every static
//!   policy (`waitwise_model::adaptive`), and the measurement agrees
//!   within its noise.
//! - `waitwise oversub` (the loops' *runtime*) does not: `adapt/b` (polling
//!   as each object's default polls) was within 5% of the best static
//!   choice in 3 and 4 of the 9 conditions in two runs on a loaded 2-CPU
//!   machine. It falls behind most where polling is what the loop needs:
//!   with one thread per CPU a poller burns a CPU nothing else wanted, so
//!   the best static choices poll long (`s//inf`, `s/b/1`, `s/b/0.5`:
//!   0.36-0.61x `/b/0` in the producer-consumer and barrier loops), while
//!   `adapt/b` minimizes the waiting cost with every poll limit in
//!   `[0, B]` and blocks the waits its summary finds longer than a
//!   fraction of `B` (a barrier wait here is uniform up to ~2.4 `B`),
//!   paying a wake-up on the loop's critical path (0.49-0.84x `/b/0`, up
//!   to 1.48x the best). No policy bounded to `[0, B]` matches `s//inf`
//!   there, and the barrier's static default misses it as well. Where
//!   other processes want the CPUs (the mutex loop, 2x and 4x), `/b/0`
//!   led every polling choice, the default included, by 9-25%.
//!
//! Its per-wait bound is also wider (16.5 against `s/b/0.54`'s 2.85) and
//! its learning costs a clock read and seven score updates per contended
//! wait. The commands that decide, for a quiet re-run:
//! `cargo run --release -p waitwise-cli -- model calibrate` (the
//! "Adaptive:" note) and `cargo run --release -p waitwise-cli -- oversub
//! --full` (its "Adaptive:" note lists every condition beyond 5%).

use std::fmt;

/// `ln(e - 1) ≈ 0.5413`: optimal for exponentially distributed waits; the
/// competitive factor never exceeds `e/(e-1) ≈ 1.58` (Lim & Agarwal, Thm. 3).
pub const ALPHA_EXPONENTIAL: f64 = 0.541_324_854_612_918_1;

/// `(sqrt(5) - 1) / 2 ≈ 0.6180`: optimal for uniformly distributed waits; the
/// competitive factor never exceeds the golden ratio ≈ 1.62 (Thm. 4).
pub const ALPHA_UNIFORM: f64 = 0.618_033_988_749_894_9;

/// `1.0`: poll as long as a block costs; 2-competitive against any
/// adversary (Karlin et al., cited in Lim & Agarwal section 2).
pub const ALPHA_ANY: f64 = 1.0;

/// What a wait is for; decides the default `alpha`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum SyncKind {
    /// Producer-consumer and event waits (helper/worker notify): waits are
    /// near exponential, so [`ALPHA_EXPONENTIAL`].
    ProducerConsumer,
    /// Barrier waits: near uniform for the early arrivals, so [`ALPHA_UNIFORM`].
    Barrier,
    /// Mutex waits: at low contention near exponential, so [`ALPHA_EXPONENTIAL`].
    Mutex,
    /// Unknown: [`ALPHA_ANY`].
    Unknown,
}

impl SyncKind {
    /// Every kind, in report order.
    pub const ALL: [SyncKind; 4] = [
        SyncKind::ProducerConsumer,
        SyncKind::Barrier,
        SyncKind::Mutex,
        SyncKind::Unknown,
    ];

    /// The static default `alpha` for this kind (before any `WAITWISE_ALPHA`).
    pub const fn default_alpha(self) -> f64 {
        match self {
            SyncKind::ProducerConsumer | SyncKind::Mutex => ALPHA_EXPONENTIAL,
            SyncKind::Barrier => ALPHA_UNIFORM,
            SyncKind::Unknown => ALPHA_ANY,
        }
    }

    /// Stable name for reports and JSON keys.
    pub const fn name(self) -> &'static str {
        match self {
            SyncKind::ProducerConsumer => "producer-consumer",
            SyncKind::Barrier => "barrier",
            SyncKind::Mutex => "mutex",
            SyncKind::Unknown => "unknown",
        }
    }
}

impl fmt::Display for SyncKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_constants_match_their_formulas() {
        assert!((ALPHA_EXPONENTIAL - (std::f64::consts::E - 1.0).ln()).abs() < 1e-15);
        assert!((ALPHA_UNIFORM - (5f64.sqrt() - 1.0) / 2.0).abs() < 1e-15);
    }
}
