//! Simulator results (serde structs; every field documented with its unit).

use serde::{Deserialize, Serialize};

/// Outcome of one run, with the `/b/0` baseline for normalization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    /// Algorithm name (`/b/0`, `s/b/1`, ...).
    pub algorithm: String,
    /// Workload name.
    pub workload: String,
    /// Threads simulated.
    pub threads: u32,
    /// Whether threads fit in the hardware contexts.
    pub matched: bool,
    /// Whether every thread finished (false: deadlock or the event limit).
    pub completed: bool,
    /// Simulated time until the last thread finished, cycles.
    pub runtime_cycles: f64,
    /// `runtime_cycles` divided by the `/b/0` run's (as in Tables 2-5).
    pub normalized_runtime: f64,
    /// Processor time spent waiting (spinning, switch-spin polling, unloading and
    /// reloading), as a fraction of `processors x runtime`.
    pub waiting_overhead: f64,
    /// Threads blocked (unloaded) while waiting.
    pub blocks: u64,
    /// Polling phases cut short by the deadlock-avoidance timeout.
    pub timeouts: u64,
    /// Waits (synchronizations that did not succeed at once).
    pub waits: u64,
    /// Synchronization operations: barrier arrivals; productions and consumptions;
    /// lock acquisitions and releases.
    pub sync_events: u64,
    /// Discrete events processed.
    pub events: u64,
}

/// One line of a Table-2-5-like grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimRow {
    /// Workload name.
    pub workload: String,
    /// Matched (threads <= contexts) or not.
    pub matched: bool,
    /// Hardware contexts per processor.
    pub contexts: u32,
    /// Threads simulated.
    pub threads: u32,
    /// The run.
    pub report: SimReport,
}

/// Simulator speed, measured on the host (not deterministic).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Synchronization operations simulated.
    pub sync_events: u64,
    /// Discrete events processed.
    pub events: u64,
    /// Wall-clock time of the run, seconds.
    pub wall_seconds: f64,
    /// `sync_events / wall_seconds`.
    pub sync_events_per_second: f64,
}
