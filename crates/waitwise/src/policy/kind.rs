//! Synchronization kinds and the `alpha` each one gets.
//!
//! A two-phase waiter polls for `L_poll = alpha * B` before blocking, where
//! `B` is the cost of blocking. Lim & Agarwal (1993) show which `alpha`
//! bounds the expected cost against the offline optimum for the wait-time
//! distribution each kind produces.
//!
//! # The defaults
//!
//! An object whose options name no policy waits with
//! [`Policy::default_for`](super::Policy::default_for) its kind:
//!
//! - **producer-consumer** (events, condition variables, semaphores) and
//!   **barrier** waits: `adapt/b` (the barrier polling by yielding when
//!   its parties outnumber the CPUs, the condition variable and the event
//!   when their waiters and a notifier do: [`crowding`](super::crowding));
//! - **mutex** waits: `adapt/b`, polling by yielding, for the default
//!   `Mutex` (`TtasMutex`); the FIFO locks (`TicketMutex`, `McsMutex`)
//!   and the `RwLock` keep the static `s/b/0.54` with their own polling
//!   mechanisms;
//! - **unknown** waits: `s/b/1`.
//!
//! The rule: a kind's default is `adapt/b` when a quiet machine measures
//! it ahead of the kind's static default in both of the adaptive
//! policy's benchmarks (`waitwise model calibrate` and the
//! oversubscription experiment). `waitwise model calibrate` (the waiting *cost*, Lim &
//! Agarwal's metric) puts its mean factor over the cells below every
//! static policy's, for every kind alike, except while a VM's blocks cost
//! many times the process's `B` (there `s//inf` can lead). `waitwise
//! oversub` (the loops' *runtime*) decides per kind, from `adapt/b`'s runs
//! against the default's in the same rounds: the producer-consumer, the
//! barrier and the mutex loops take `adapt/b` where it is ahead or level
//! in every condition (matched, 2x and 4x threads per CPU); its idle-CPU
//! extension polls where the static limit blocks, it prices an
//! oversubscribed barrier's yield-polls as switch-spinning, and with paced
//! hand-offs ([`HandOffPace`](crate::mutex::HandOffPace)) the mutex's
//! waits are worth learning. Its known cost is beside busy-loop processes
//! (`examples/handoff_under_load`), where its learning step runs on
//! every contended wait. The ticket lock keeps the static limit: its waits
//! are turns in a queue, which a wait history predicts poorly, and so do
//! the other FIFO locks. The channel and the pool wait through hooks of
//! their own, which do not learn, and keep the static `s/b/0.54`. So does
//! the `LD_PRELOAD` interposer: its condition variables and barriers are
//! level with their static limits within the spread of its benchmark
//! programs (`crates/waitwise-preload/bench`), and level is no reason to
//! give a program's every wait a learning step and its address-hashed
//! summary. The commands that decide, for a re-run:
//! `cargo run --release -p waitwise-cli -- model calibrate` and
//! `cargo run --release -p waitwise-cli -- oversub --runs 15` (their
//! "Adaptive:" notes).

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

    /// Whether objects of this kind default to `adapt/b` (module docs,
    /// "The defaults").
    pub const fn defaults_to_adaptive(self) -> bool {
        matches!(
            self,
            SyncKind::ProducerConsumer | SyncKind::Barrier | SyncKind::Mutex
        )
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
