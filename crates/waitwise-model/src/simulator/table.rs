//! Table-2-5-like grids: every workload, matched and unmatched, every algorithm,
//! runtimes normalized to `/b/0`.

use crate::algorithm::WaitingAlgorithm;
use crate::error::{ModelError, Result};

use super::config::{SimConfig, TableConfig};
use super::engine::Sim;
use super::report::{SimReport, SimRow};

/// Runs `cfg` once, without normalization.
pub(crate) fn run_once(cfg: &SimConfig) -> Result<SimReport> {
    cfg.validate()?;
    Ok(Sim::new(cfg).run())
}

/// Runs `cfg` and the `/b/0` baseline with the same seed; fills `normalized_runtime`.
pub(crate) fn run_normalized(cfg: &SimConfig) -> Result<SimReport> {
    let mut report = run_once(cfg)?;
    let baseline = if cfg.algorithm == WaitingAlgorithm::AlwaysBlock {
        report.runtime_cycles
    } else {
        run_once(&SimConfig {
            algorithm: WaitingAlgorithm::AlwaysBlock,
            ..cfg.clone()
        })?
        .runtime_cycles
    };
    report.normalized_runtime = report.runtime_cycles / baseline;
    Ok(report)
}

/// Runs the grid: for each workload, matched (`P x C` threads) then unmatched
/// (`P x C x unmatched_threads_per_context`), `/b/0` first, then the other algorithms.
pub fn table(cfg: &TableConfig) -> Result<Vec<SimRow>> {
    if cfg.unmatched_threads_per_context < 2 {
        return Err(ModelError::InvalidConfig(
            "unmatched_threads_per_context must be >= 2".to_owned(),
        ));
    }
    let contexts = cfg
        .machine
        .processors
        .checked_mul(cfg.machine.contexts)
        .ok_or_else(|| ModelError::InvalidConfig("processors x contexts overflows".to_owned()))?;
    let mut algorithms = vec![WaitingAlgorithm::AlwaysBlock];
    algorithms.extend(
        cfg.algorithms
            .iter()
            .copied()
            .filter(|a| *a != WaitingAlgorithm::AlwaysBlock),
    );
    let mut rows = Vec::new();
    for workload in &cfg.workloads {
        for per_context in [1, cfg.unmatched_threads_per_context] {
            let threads = contexts
                .checked_mul(per_context)
                .ok_or_else(|| ModelError::InvalidConfig("thread count overflows".to_owned()))?;
            let mut baseline = f64::NAN;
            for &algorithm in &algorithms {
                let sim = SimConfig {
                    machine: cfg.machine.clone(),
                    workload: workload.clone(),
                    threads,
                    algorithm,
                    deadlock_timeout: cfg.deadlock_timeout,
                    seed: cfg.seed,
                    max_events: 1 << 32,
                };
                let mut report = run_once(&sim)?;
                if algorithm == WaitingAlgorithm::AlwaysBlock {
                    baseline = report.runtime_cycles;
                }
                report.normalized_runtime = report.runtime_cycles / baseline;
                rows.push(SimRow {
                    workload: workload.kind.name().to_owned(),
                    matched: per_context == 1,
                    contexts: cfg.machine.contexts,
                    threads,
                    report,
                });
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulator::{MachineConfig, SyncKind, WorkloadConfig};

    fn small_table(iterations: u32) -> Vec<SimRow> {
        let mut cfg = TableConfig::default();
        for w in &mut cfg.workloads {
            w.iterations = iterations;
        }
        table(&cfg).unwrap()
    }

    /// Lim & Agarwal's qualitative results at 64 processors x 4 contexts.
    #[test]
    fn reproduces_the_papers_qualitative_results() {
        let rows = small_table(40);
        assert!(rows.iter().all(|r| r.report.completed));
        for kind in ["producer-consumer", "barrier", "mutex"] {
            for matched in [true, false] {
                let row: Vec<&SimRow> = rows
                    .iter()
                    .filter(|r| r.workload == kind && r.matched == matched)
                    .collect();
                let norm = |name: &str| {
                    row.iter()
                        .find(|r| r.report.algorithm == name)
                        .unwrap()
                        .report
                        .normalized_runtime
                };
                let best = row
                    .iter()
                    .map(|r| r.report.normalized_runtime)
                    .fold(f64::INFINITY, f64::min);
                // Two-phase waiting with L_poll = B is within ~10 % of the best algorithm.
                assert!(
                    norm("s/b/1") <= 1.10 * best,
                    "{kind} matched={matched}: s/b/1 {} vs best {best}",
                    norm("s/b/1")
                );
                assert_eq!(norm("/b/0"), 1.0);
                // adapt/b, learning from the workload's waits, is within 5 %
                // of the best algorithm too.
                assert!(
                    norm("adapt/b") <= 1.05 * best,
                    "{kind} matched={matched}: adapt/b {} vs best {best}",
                    norm("adapt/b")
                );
                // Unmatched always-spin deadlocks until timeouts (not for mutexes: lock
                // holders are never descheduled, section 6.3).
                if !matched && kind != "mutex" {
                    assert!(norm("s//inf") > 2.0, "{kind}: s//inf {}", norm("s//inf"));
                    assert!(norm("Ss//inf") > 1.3, "{kind}: Ss//inf {}", norm("Ss//inf"));
                }
            }
        }
    }

    #[test]
    fn runs_are_deterministic() {
        let cfg = SimConfig {
            machine: MachineConfig {
                processors: 8,
                ..MachineConfig::default()
            },
            workload: WorkloadConfig::paper_like(SyncKind::Mutex, 500.0, 20),
            threads: 64,
            algorithm: WaitingAlgorithm::Randomized,
            deadlock_timeout: Some(50_000.0),
            seed: 9,
            max_events: 1 << 30,
        };
        let a = run_normalized(&cfg).unwrap();
        let b = run_normalized(&cfg).unwrap();
        assert_eq!(a, b);
        let c = run_normalized(&SimConfig { seed: 10, ..cfg }).unwrap();
        assert_ne!(a.runtime_cycles, c.runtime_cycles);
    }

    #[test]
    fn deadlock_without_timeout_is_reported_not_hung() {
        let mut cfg = SimConfig::paper_like(
            SyncKind::Barrier,
            2,
            WaitingAlgorithm::AlwaysSpin { timeout: None },
        );
        cfg.machine.processors = 4;
        cfg.threads = 32;
        cfg.deadlock_timeout = None;
        let r = run_once(&cfg).unwrap();
        assert!(!r.completed);
    }

    #[test]
    fn thousand_threads_complete() {
        let mut cfg = SimConfig::paper_like(
            SyncKind::Barrier,
            1,
            WaitingAlgorithm::TwoPhase { alpha: 1.0 },
        );
        cfg.machine.processors = 256;
        cfg.threads = 1024;
        cfg.workload.iterations = 20;
        let r = run_once(&cfg).unwrap();
        assert!(r.completed);
        assert_eq!(r.sync_events, 1024 * 20);
    }

    #[test]
    fn every_algorithm_completes_every_workload() {
        for kind in [
            SyncKind::ProducerConsumer,
            SyncKind::Barrier,
            SyncKind::Mutex,
        ] {
            for alg in TableConfig::default().algorithms {
                let mut cfg = SimConfig::paper_like(kind, 2, alg);
                cfg.machine.processors = 4;
                cfg.threads = 40; // unmatched, uneven
                cfg.workload.iterations = 15;
                let r = run_once(&cfg).unwrap();
                assert!(r.completed, "{kind:?} {}", alg.name());
            }
        }
    }

    #[test]
    fn invalid_configs_are_errors() {
        let ok = SimConfig::paper_like(SyncKind::Barrier, 1, WaitingAlgorithm::AlwaysBlock);
        let bad = [
            SimConfig {
                threads: 0,
                ..ok.clone()
            },
            SimConfig {
                deadlock_timeout: Some(-1.0),
                ..ok.clone()
            },
            SimConfig {
                algorithm: WaitingAlgorithm::TwoPhase { alpha: -1.0 },
                ..ok.clone()
            },
            SimConfig {
                machine: MachineConfig {
                    contexts: 0,
                    ..ok.machine.clone()
                },
                ..ok.clone()
            },
            SimConfig {
                machine: MachineConfig {
                    block_cost: f64::NAN,
                    ..ok.machine.clone()
                },
                ..ok.clone()
            },
        ];
        for cfg in bad {
            assert!(run_normalized(&cfg).is_err());
        }
        let t = TableConfig {
            unmatched_threads_per_context: 1,
            ..TableConfig::default()
        };
        assert!(table(&t).is_err());
    }
}
