//! Simulator configuration: the machine, the workload, the waiting algorithm.
//!
//! Times are in processor cycles, as in Lim & Agarwal's Alewife simulations.

use serde::{Deserialize, Serialize};

use super::interference::FULL_SHARE_SLOWDOWN;
use crate::algorithm::WaitingAlgorithm;
use crate::distribution::WaitDistribution;
use crate::error::{ModelError, Result};

/// Cost of one block in cycles (unload + reenable + reload). Measured by Lim & Agarwal on
/// Alewife: "approximately 500 cycles" (section 2).
pub const ALEWIFE_BLOCK_CYCLES: f64 = 500.0;

/// Cost of a hardware context switch in cycles. Lim & Agarwal section 2: "On Alewife,
/// N = 4 and C = 12" (`C` is the context-switch overhead).
pub const ALEWIFE_SWITCH_CYCLES: f64 = 12.0;

/// Deadlock-avoidance limit of always-spin, in cycles: Lim & Agarwal limit `Ss//inf` to
/// 50,000 cycles (100 B) "to implement a timeout mechanism for deadlock avoidance".
pub const ALEWIFE_SPIN_TIMEOUT_CYCLES: f64 = 50_000.0;

/// The simulated machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineConfig {
    /// Processors `P` (>= 1).
    pub processors: u32,
    /// Hardware contexts per processor `C` (>= 1): threads loaded at once.
    pub contexts: u32,
    /// Block cost `B`, cycles; half is paid unloading, half reloading (a guess: Table 6
    /// splits Alewife's cost into unload, queue and reload steps of similar size).
    pub block_cost: f64,
    /// Cost of switching the processor to a different loaded thread, cycles.
    pub switch_cost: f64,
    /// How much a polling thread slows the jobs sharing its processor: the
    /// sibling slowdown factor of the polling mechanism (>= 1; see
    /// [`super::interference`]). [`FULL_SHARE_SLOWDOWN`] (2: a poller
    /// takes a full share) by default.
    #[serde(default = "full_share_slowdown")]
    pub poll_slowdown: f64,
}

fn full_share_slowdown() -> f64 {
    FULL_SHARE_SLOWDOWN
}

impl Default for MachineConfig {
    /// Alewife as simulated by Lim & Agarwal: 64 processors x 4 contexts, `B = 500`.
    fn default() -> Self {
        Self {
            processors: 64,
            contexts: 4,
            block_cost: ALEWIFE_BLOCK_CYCLES,
            switch_cost: ALEWIFE_SWITCH_CYCLES,
            poll_slowdown: FULL_SHARE_SLOWDOWN,
        }
    }
}

/// How threads synchronize.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncKind {
    /// Each thread produces one value per iteration and consumes the same iteration's
    /// values of its two ring neighbours (Jacobi/MGrid-style J-structures, Table 2).
    ProducerConsumer,
    /// All threads meet at one barrier per iteration (CGrad/Jacobi-Bar, Table 3).
    Barrier,
    /// Each iteration a thread works, then takes a randomly chosen lock for a critical
    /// section (the paper's synthetic Mutex benchmark, Table 4).
    Mutex,
}

impl SyncKind {
    /// Name used in tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::ProducerConsumer => "producer-consumer",
            Self::Barrier => "barrier",
            Self::Mutex => "mutex",
        }
    }
}

/// What the threads do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadConfig {
    /// Synchronization pattern.
    pub kind: SyncKind,
    /// Compute time between synchronizations, cycles.
    pub work: WaitDistribution,
    /// Critical-section length (mutex only), cycles.
    pub critical_section: WaitDistribution,
    /// Number of locks (mutex only, >= 1).
    pub locks: u32,
    /// Iterations each thread runs (>= 1).
    pub iterations: u32,
}

impl WorkloadConfig {
    /// Defaults that put waits in the paper's regime (guessed, then checked against the
    /// qualitative results of Tables 2-4): waiting overhead of 5-25 % under `/b/0`.
    ///
    /// * producer-consumer: work exponential with mean 4 B; neighbours' waits are then
    ///   mostly shorter than B, like matched Jacobi.
    /// * barrier: work exponential with mean 2 B; with `C` threads per processor an
    ///   episode lasts about 20 B, so most barrier waits exceed B (as in the paper's
    ///   profiles).
    /// * mutex: work exponential with mean 20 B, critical sections exponential with mean
    ///   B / 2, 16 locks.
    pub fn paper_like(kind: SyncKind, block_cost: f64, iterations: u32) -> Self {
        let exp = |mean: f64| WaitDistribution::Exponential { lambda: 1.0 / mean };
        let (work, cs) = match kind {
            SyncKind::ProducerConsumer => (exp(4.0 * block_cost), exp(block_cost)),
            SyncKind::Barrier => (exp(2.0 * block_cost), exp(block_cost)),
            SyncKind::Mutex => (exp(20.0 * block_cost), exp(0.5 * block_cost)),
        };
        Self {
            kind,
            work,
            critical_section: cs,
            locks: 16,
            iterations,
        }
    }
}

/// One simulation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// The machine.
    pub machine: MachineConfig,
    /// The workload.
    pub workload: WorkloadConfig,
    /// Threads; `<= processors x contexts` is *matched*, more is *unmatched*.
    pub threads: u32,
    /// The waiting algorithm every thread uses.
    pub algorithm: WaitingAlgorithm,
    /// Limit on any unbounded polling phase (`s//inf`, `Ss//inf`, `alpha = inf`), cycles;
    /// `None` polls forever and may deadlock an unmatched run (reported, not hung).
    pub deadlock_timeout: Option<f64>,
    /// Seed of every random draw.
    pub seed: u64,
    /// Stop after this many simulation events (guards against runaway configurations).
    pub max_events: u64,
}

impl SimConfig {
    /// The paper's machine running `kind` with `threads_per_context` threads per hardware
    /// context (1 = matched, 2 = unmatched), 100 iterations.
    pub fn paper_like(
        kind: SyncKind,
        threads_per_context: u32,
        algorithm: WaitingAlgorithm,
    ) -> Self {
        let machine = MachineConfig::default();
        let threads = machine.processors * machine.contexts * threads_per_context.max(1);
        Self {
            workload: WorkloadConfig::paper_like(kind, machine.block_cost, 100),
            machine,
            threads,
            algorithm,
            deadlock_timeout: Some(ALEWIFE_SPIN_TIMEOUT_CYCLES),
            seed: 1,
            max_events: 1 << 32,
        }
    }

    /// Whether every thread has its own hardware context.
    pub fn is_matched(&self) -> bool {
        u64::from(self.threads)
            <= u64::from(self.machine.processors) * u64::from(self.machine.contexts)
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<()> {
        let bad = |why: &str| Err(ModelError::InvalidConfig(why.to_owned()));
        let m = &self.machine;
        if m.processors == 0 || m.contexts == 0 {
            return bad("processors and contexts must be >= 1");
        }
        if !(m.block_cost.is_finite() && m.block_cost > 0.0) {
            return bad("block_cost must be finite and > 0");
        }
        if !(m.switch_cost.is_finite() && m.switch_cost >= 0.0) {
            return bad("switch_cost must be finite and >= 0");
        }
        if !(m.poll_slowdown.is_finite() && m.poll_slowdown >= 1.0) {
            return bad("poll_slowdown must be finite and >= 1");
        }
        if self.threads == 0 {
            return bad("threads must be >= 1");
        }
        if self.workload.kind == SyncKind::ProducerConsumer && self.threads < 2 {
            return bad("producer-consumer needs >= 2 threads");
        }
        if self.workload.iterations == 0 || self.workload.locks == 0 {
            return bad("iterations and locks must be >= 1");
        }
        if let Some(t) = self.deadlock_timeout {
            if !(t.is_finite() && t > 0.0) {
                return bad("deadlock_timeout must be finite and > 0");
            }
        }
        self.workload.work.validate()?;
        self.workload.critical_section.validate()?;
        self.algorithm.validate()
    }
}

/// A Table-2-5-like grid: every workload, matched and unmatched, every algorithm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableConfig {
    /// The machine.
    pub machine: MachineConfig,
    /// Workloads (rows), each run matched and unmatched.
    pub workloads: Vec<WorkloadConfig>,
    /// Threads per hardware context in the unmatched runs (>= 2).
    pub unmatched_threads_per_context: u32,
    /// Algorithms compared; `/b/0` is always run as the normalization baseline.
    pub algorithms: Vec<WaitingAlgorithm>,
    /// Deadlock-avoidance limit of unbounded polling, cycles.
    pub deadlock_timeout: Option<f64>,
    /// Seed.
    pub seed: u64,
}

impl Default for TableConfig {
    /// 64 x 4 Alewife, the three workloads, 2 threads per context when unmatched, and
    /// `/b/0`, `s/b/1`, `Ss/b/1`, `Ss/b/0.541`, `s//inf`, `Ss//inf`, `rand/b`.
    fn default() -> Self {
        let machine = MachineConfig::default();
        let beta = f64::from(machine.contexts);
        let b = machine.block_cost;
        Self {
            workloads: [
                SyncKind::ProducerConsumer,
                SyncKind::Barrier,
                SyncKind::Mutex,
            ]
            .into_iter()
            .map(|k| WorkloadConfig::paper_like(k, b, 100))
            .collect(),
            machine,
            unmatched_threads_per_context: 2,
            algorithms: vec![
                WaitingAlgorithm::AlwaysBlock,
                WaitingAlgorithm::TwoPhase { alpha: 1.0 },
                WaitingAlgorithm::SwitchSpinTwoPhase { alpha: 1.0, beta },
                WaitingAlgorithm::SwitchSpinTwoPhase {
                    alpha: crate::algorithm::ALPHA_EXPONENTIAL,
                    beta,
                },
                WaitingAlgorithm::AlwaysSpin { timeout: None },
                WaitingAlgorithm::SwitchSpinTwoPhase {
                    alpha: f64::INFINITY,
                    beta,
                },
                WaitingAlgorithm::Randomized,
                WaitingAlgorithm::Adaptive,
            ],
            deadlock_timeout: Some(ALEWIFE_SPIN_TIMEOUT_CYCLES),
            seed: 1,
        }
    }
}
