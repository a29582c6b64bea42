//! A deterministic discrete-event simulator of waiting on a large multithreaded machine.
//!
//! `P` processors with `C` hardware contexts each run threads that synchronize by
//! producer-consumer, barrier or mutex, with configurable work-time distributions, block
//! cost `B` and context-switch cost, matched (threads <= contexts) or unmatched; every
//! thread waits with one [`WaitingAlgorithm`](crate::algorithm::WaitingAlgorithm). The
//! output mirrors Lim & Agarwal's Tables 2-5: runtime normalized to `/b/0`, waiting
//! overhead, blocks.
//!
//! | file | what it holds |
//! |---|---|
//! | `config.rs` | [`SimConfig`], [`MachineConfig`], [`WorkloadConfig`], [`TableConfig`] and the Alewife constants |
//! | `engine.rs` | the event queue (binary heap) and the event handlers |
//! | `machine.rs` | processors, contexts, run and ready queues, waiting mechanisms and their costs |
//! | `workload.rs` | the barrier, producer-consumer ring and mutexes |
//! | [`interference`] | what a poller costs its neighbours: sibling slowdown factors per mechanism |
//! | `report.rs` | [`SimReport`], [`SimRow`], [`Throughput`] |
//! | `table.rs` | [`table`]: the matched/unmatched x algorithm grid |
//!
//! # Examples
//! ```
//! use waitwise_model::algorithm::WaitingAlgorithm;
//! use waitwise_model::simulator::{simulate, SimConfig, SyncKind};
//! let mut cfg = SimConfig::paper_like(SyncKind::Barrier, 2, WaitingAlgorithm::AlwaysSpin { timeout: None });
//! cfg.workload.iterations = 10;
//! let r = simulate(&cfg).unwrap();
//! assert!(r.completed);
//! assert!(r.normalized_runtime > 2.0); // unmatched always-spin: deadlock until timeouts
//! ```

mod config;
mod engine;
pub mod interference;
mod machine;
mod report;
mod table;
mod workload;

pub use config::{
    MachineConfig, SimConfig, SyncKind, TableConfig, WorkloadConfig, ALEWIFE_BLOCK_CYCLES,
    ALEWIFE_SPIN_TIMEOUT_CYCLES, ALEWIFE_SWITCH_CYCLES,
};
pub use report::{SimReport, SimRow, Throughput};
pub use table::table;

use crate::error::Result;

/// Runs one configuration and its `/b/0` baseline (same seed, same work times).
pub fn simulate(cfg: &SimConfig) -> Result<SimReport> {
    table::run_normalized(cfg)
}

/// Runs one configuration (no baseline) and measures the simulator's own speed on the
/// host. The report's `normalized_runtime` is NaN.
pub fn benchmark(cfg: &SimConfig) -> Result<(SimReport, Throughput)> {
    let start = std::time::Instant::now();
    let report = table::run_once(cfg)?;
    let wall_seconds = start.elapsed().as_secs_f64();
    let throughput = Throughput {
        sync_events: report.sync_events,
        events: report.events,
        wall_seconds,
        sync_events_per_second: report.sync_events as f64 / wall_seconds.max(1e-9),
    };
    Ok((report, throughput))
}
