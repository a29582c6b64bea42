//! `waitwise peers`: each waitwise primitive against the libraries people
//! would use instead, over a grid of operating points.
//!
//! | primitive | waitwise | peers |
//! |---|---|---|
//! | mutex | `waitwise::Mutex` | `parking_lot::Mutex`, `std::sync::Mutex` |
//! | rwlock | `waitwise::RwLock` | `parking_lot::RwLock`, `std::sync::RwLock` |
//! | condvar | `waitwise::Condvar` | `parking_lot::Condvar`, `std::sync::Condvar` |
//! | channel | `waitwise::channel::bounded` | crossbeam-channel, `std::sync::mpsc::sync_channel` |
//! | barrier | `waitwise::barrier::Barrier` | `std::sync::Barrier`, `pthread_barrier_wait`, a spin barrier |
//! | event | `waitwise::Event` | a spin hand-off, a futex hand-off |
//! | pool | `waitwise::pool::ThreadPool` | rayon |
//!
//! The workloads are in `peers/primitives/`, one file each. A cell is one
//! operating point ([`grid`]: critical section, gap between operations,
//! threads per CPU, message size and capacity, the block cost `B`, a busy
//! co-runner process on every CPU or not). Busy work is counted in spin-loop
//! hints, converted from ns with one rate measured at the start
//! ([`hints`]).
//!
//! # Rounds
//!
//! A cell runs [`Config::rounds`] rounds; in each, every contender runs
//! once for [`Config::run_ms`], in an order that rotates from round to
//! round. Per run ([`figures`]): throughput, the p99 and longest single
//! wait (each acquisition, send, receive or wait timed on the cycle
//! clock), least/most served, the process's CPU time per operation
//! (the co-runners are processes of their own), and the CPUs' idle share (`/proc/stat`).
//!
//! # Comparison
//!
//! waitwise against the peer with the highest median throughput in the
//! cell ([`mod@compare`]): every figure as the median over rounds of the two
//! runs' ratio in the same round, the throughput ratio with its 95%
//! interval (order statistics). A cell meets the targets when throughput
//! is at least [`compare::TARGET_THROUGHPUT_AT_LEAST`] of the best peer's,
//! p99 at most [`compare::TARGET_P99_AT_MOST`], longest at most
//! [`compare::TARGET_LONGEST_AT_MOST`] and CPU per operation at most
//! [`compare::TARGET_CPU_PER_OP_AT_MOST`] times the peer's.
//!
//! # Block cost
//!
//! `B` is fixed once per process, so the cells with a forced (`low`,
//! `high`) or `learned` `B` run in a child process of the `waitwise`
//! binary ([`child`]); without the binary ([`Config::program`] unset) they
//! are listed as not run.

pub mod child;
pub mod compare;
pub mod figures;
pub mod grid;
pub mod hints;
pub mod primitives;
mod tables;
pub mod wait_log;

use super::is_selected;
use child::{run_in_child, ChildJob};
use compare::{compare, Comparison};
use figures::{measure, RunFigures};
use grid::{cells, Axes, BlockSetting, Design, Point, Primitive};
use hints::HintRate;
use primitives::{contenders, RunSettings};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use waitwise::probe::wake_placement::WakePlacement;
use waitwise_platform::cpu_time::OthersCpu;

/// Settings of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// The values of each axis.
    pub axes: Axes,
    /// How the cells cover them.
    pub design: Design,
    /// Rounds per cell (each contender once per round).
    pub rounds: usize,
    /// Each contender's run time in a round, ms.
    pub run_ms: u64,
    /// Only the primitives whose name contains one of these (empty: all).
    pub only: Vec<String>,
    /// The `waitwise` binary, for the cells with a block cost other than
    /// the process's ([`child`]); `None`: those cells are not run.
    pub program: Option<PathBuf>,
}

impl Config {
    /// Quick: every axis crossed once from a base point (a star), about a
    /// minute on a 2-CPU machine.
    pub fn quick() -> Self {
        Self {
            axes: Axes {
                cs_ns: vec![100, 1_000],
                gap_ns: vec![0, 1_000],
                threads_per_cpu: vec![1, 4],
                message_words: vec![1, 32],
                capacity: vec![16, 1],
                block: vec![BlockSetting::Settled, BlockSetting::Low],
                load: vec![false, true],
            },
            design: Design::Star,
            rounds: 6,
            run_ms: 40,
            only: Vec::new(),
            program: None,
        }
    }

    /// The whole grid: every combination of every value.
    pub fn full() -> Self {
        Self {
            axes: Axes {
                cs_ns: vec![0, 100, 1_000, 10_000],
                gap_ns: vec![0, 1_000, 10_000],
                threads_per_cpu: vec![1, 2, 4],
                message_words: vec![1, 8, 32, 128],
                capacity: vec![1, 16, 256],
                block: vec![
                    BlockSetting::Settled,
                    BlockSetting::Low,
                    BlockSetting::High,
                    BlockSetting::Learned,
                ],
                load: vec![false, true],
            },
            design: Design::Cross,
            rounds: 7,
            run_ms: 40,
            ..Self::quick()
        }
    }

    /// A tiny configuration for tests: one or two cells per primitive, a
    /// few ms each.
    pub fn tiny() -> Self {
        Self {
            axes: Axes {
                cs_ns: vec![100],
                gap_ns: vec![0],
                threads_per_cpu: vec![1, 2],
                message_words: vec![1],
                capacity: vec![4],
                block: vec![BlockSetting::Settled],
                load: vec![false],
            },
            design: Design::Star,
            rounds: 2,
            run_ms: 3,
            ..Self::quick()
        }
    }

    /// The primitives this configuration runs.
    pub fn primitives(&self) -> Vec<Primitive> {
        Primitive::ALL
            .into_iter()
            .filter(|p| is_selected(&self.only, p.name()))
            .collect()
    }
}

/// One contender's runs in a cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContenderRuns {
    /// Its name.
    pub name: String,
    /// waitwise, peer or baseline.
    pub family: crate::contender::Family,
    /// One entry per round (`None`: the run completed nothing).
    pub rounds: Vec<Option<RunFigures>>,
}

/// One cell: a primitive at one operating point.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CellResult {
    /// The primitive.
    pub primitive: Primitive,
    /// The operating point.
    pub point: Point,
    /// Every contender's runs, waitwise's first.
    pub contenders: Vec<ContenderRuns>,
    /// waitwise against the best peer; `None` when either completed no run.
    pub comparison: Option<Comparison>,
    /// waitwise's throughput over each peer's (median of the paired
    /// ratios), in contender order.
    pub per_peer: Vec<(String, Option<f64>)>,
    /// The `B` in force after the cell, ns.
    pub block_ns: f64,
    /// Where that `B` came from (`measured`, `environment`, `learned`...).
    pub block_source: String,
    /// Why the cell did not run, when it did not.
    pub not_run: Option<String>,
}

/// One primitive's cells.
#[derive(Clone, Debug, Serialize)]
pub struct PrimitiveResult {
    /// The primitive.
    pub primitive: Primitive,
    /// Its contenders' names, waitwise's first.
    pub contenders: Vec<String>,
    /// Its cells, in grid order.
    pub cells: Vec<CellResult>,
}

/// The experiment's result.
#[derive(Clone, Debug, Serialize)]
pub struct PeersResult {
    /// The settings used.
    pub config: Config,
    /// CPUs this process may use.
    pub cpus: usize,
    /// The spin-loop hint rate the points were converted with.
    pub hints: HintRate,
    /// The process's `B` (the `settled` cells'), ns.
    pub block_ns: f64,
    /// Where it came from.
    pub block_source: String,
    /// CPUs other programs kept busy on average during the run (this
    /// process, its child cells and its co-runners left out).
    pub others_cpus: Option<f64>,
    /// Where this machine's scheduler ran woken threads, measured before
    /// the cells ([`waitwise::probe::wake_placement`]); `None` on one CPU.
    pub wake_placement: Option<WakePlacement>,
    /// One entry per primitive run.
    pub primitives: Vec<PrimitiveResult>,
    /// Wall time of the whole run, s.
    pub seconds: f64,
}

/// CPUs this process may run on.
pub fn cpus() -> usize {
    waitwise::barrier::allowed_cpus().max(1)
}

/// Runs every selected primitive's cells: the process's own `B` here,
/// the others in child processes.
pub fn run(config: &Config) -> PeersResult {
    let started = Instant::now();
    let before = OthersCpu::now();
    let hints = HintRate::calibrate();
    let wake_placement = waitwise::probe::wake_placement::measure();
    let cpus = cpus();
    let plan: Vec<(Primitive, Vec<Point>)> = config
        .primitives()
        .into_iter()
        .map(|p| (p, cells(p, &config.axes, config.design, cpus)))
        .collect();
    let job = |cells| ChildJob {
        hints,
        rounds: config.rounds,
        run_ms: config.run_ms,
        cells,
    };
    let here: Vec<(Primitive, Point)> = flatten(&plan, |b| b == BlockSetting::Settled);
    let mut results = run_job(&job(here), "peers");
    for block in [BlockSetting::Low, BlockSetting::High, BlockSetting::Learned] {
        let there = flatten(&plan, |b| b == block);
        if !there.is_empty() {
            results.extend(run_elsewhere(config, block, job(there)));
        }
    }
    let b = waitwise::policy::block_cost::block_cost();
    PeersResult {
        config: config.clone(),
        cpus,
        hints,
        block_ns: b.ns,
        block_source: b.source.name().into(),
        others_cpus: before
            .zip(OthersCpu::now())
            .and_then(|(b, a)| a.average_cpus_since(&b)),
        wake_placement,
        primitives: assemble(&plan, results),
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// The `(primitive, point)` pairs of `plan` whose block setting passes
/// `keep`, in plan order.
fn flatten(
    plan: &[(Primitive, Vec<Point>)],
    keep: impl Fn(BlockSetting) -> bool,
) -> Vec<(Primitive, Point)> {
    plan.iter()
        .flat_map(|(p, points)| points.iter().map(move |pt| (*p, pt.clone())))
        .filter(|(_, pt)| keep(pt.block))
        .collect()
}

/// `job`'s cells under `block`, in a child process; cells listed as not
/// run when there is no binary or the child failed.
fn run_elsewhere(config: &Config, block: BlockSetting, job: ChildJob) -> Vec<CellResult> {
    let why = match &config.program {
        None => "not run: a forced or learned B needs a process of its own (run `waitwise peers`)"
            .to_string(),
        Some(program) => match run_in_child(program, block, &job) {
            Ok(cells) => return cells,
            Err(e) => format!("not run: {e:#}"),
        },
    };
    job.cells
        .into_iter()
        .map(|(primitive, point)| not_run(primitive, point, why.clone()))
        .collect()
}

/// Runs every cell of `job` in this process, with progress lines tagged
/// `tag`; what a child process runs too.
pub fn run_job(job: &ChildJob, tag: &str) -> Vec<CellResult> {
    let settings = RunSettings {
        run: Duration::from_millis(job.run_ms),
        hints: job.hints,
    };
    let total = job.cells.len();
    job.cells
        .iter()
        .enumerate()
        .map(|(i, (primitive, point))| {
            super::progress(
                tag,
                i + 1,
                total,
                &format!("{} {}", primitive.name(), point.label()),
            );
            run_cell(*primitive, point, &settings, job.rounds)
        })
        .collect()
}

/// Runs one cell: `rounds` rounds of every contender, the order rotating
/// by one each round.
pub fn run_cell(primitive: Primitive, point: &Point, s: &RunSettings, rounds: usize) -> CellResult {
    let list = contenders(primitive);
    let cpus = point.threads / point.threads_per_cpu.max(1);
    let mut runs: Vec<Vec<Option<RunFigures>>> = vec![Vec::with_capacity(rounds); list.len()];
    for round in 0..rounds {
        for k in 0..list.len() {
            let which = (round + k) % list.len();
            let f = measure(point.load, cpus, || {
                primitives::run(primitive, which, point, s)
            });
            runs[which].push(f);
        }
    }
    let contenders: Vec<ContenderRuns> = list
        .iter()
        .zip(runs)
        .map(|(c, rounds)| ContenderRuns {
            name: c.name.into(),
            family: c.family,
            rounds,
        })
        .collect();
    finish_cell(primitive, point.clone(), contenders)
}

/// The cell's comparisons from its contenders' runs (waitwise's first).
fn finish_cell(primitive: Primitive, point: Point, contenders: Vec<ContenderRuns>) -> CellResult {
    let (waitwise, peers) = contenders.split_first().expect("waitwise runs first");
    let peer_runs: Vec<(String, Vec<Option<RunFigures>>)> = peers
        .iter()
        .map(|c| (c.name.clone(), c.rounds.clone()))
        .collect();
    let throughput = |runs: &[Option<RunFigures>]| -> Vec<Option<f64>> {
        runs.iter().map(|r| r.map(|f| f.throughput)).collect()
    };
    let per_peer = peers
        .iter()
        .map(|c| {
            let r = compare::paired_ratio(&throughput(&waitwise.rounds), &throughput(&c.rounds));
            (c.name.clone(), r.map(|r| r.median))
        })
        .collect();
    let b = waitwise::policy::block_cost::block_cost();
    CellResult {
        primitive,
        point,
        comparison: compare(&waitwise.rounds, &peer_runs),
        per_peer,
        contenders,
        block_ns: b.ns,
        block_source: b.source.name().into(),
        not_run: None,
    }
}

/// A cell listed with the reason it did not run.
fn not_run(primitive: Primitive, point: Point, why: String) -> CellResult {
    CellResult {
        primitive,
        point,
        contenders: Vec::new(),
        comparison: None,
        per_peer: Vec::new(),
        block_ns: f64::NAN,
        block_source: String::new(),
        not_run: Some(why),
    }
}

/// `results` (in any order) sorted back into `plan`'s primitives and
/// cell order.
fn assemble(plan: &[(Primitive, Vec<Point>)], results: Vec<CellResult>) -> Vec<PrimitiveResult> {
    let mut results: Vec<Option<CellResult>> = results.into_iter().map(Some).collect();
    plan.iter()
        .map(|(primitive, points)| PrimitiveResult {
            primitive: *primitive,
            contenders: contenders(*primitive)
                .iter()
                .map(|c| c.name.to_string())
                .collect(),
            cells: points
                .iter()
                .filter_map(|pt| {
                    let at = results.iter().position(|r| {
                        r.as_ref()
                            .is_some_and(|r| r.primitive == *primitive && r.point == *pt)
                    })?;
                    results[at].take()
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::ExperimentOutput;

    #[test]
    fn quick_preset_crosses_every_axis_in_few_cells() {
        let c = Config::quick();
        let total: usize = c
            .primitives()
            .into_iter()
            .map(|p| cells(p, &c.axes, c.design, 2).len())
            .sum();
        assert!(total <= 45, "{total} quick cells");
        assert!(c.rounds >= 5);
        for p in Primitive::ALL {
            assert!(cells(p, &c.axes, c.design, 2).len() > p.axes().len());
        }
    }

    #[test]
    fn only_selects_primitives_by_name() {
        let c = Config {
            only: vec!["lock".into()],
            ..Config::tiny()
        };
        assert_eq!(c.primitives(), vec![Primitive::RwLock]);
    }

    /// Every primitive's cells run end to end and compare with finite
    /// ratios; nothing here depends on how fast the machine is.
    #[test]
    fn tiny_run_has_finite_ratios_for_every_primitive() {
        let r = run(&Config::tiny());
        assert_eq!(r.primitives.len(), Primitive::ALL.len());
        for p in &r.primitives {
            assert!(!p.cells.is_empty(), "{:?}", p.primitive);
            for c in &p.cells {
                assert!(c.not_run.is_none(), "{:?}", c.not_run);
                let cmp = c.comparison.as_ref().expect("a comparison");
                assert!(cmp.throughput.median.is_finite() && cmp.throughput.median > 0.0);
                assert!(cmp.throughput.ci95_low <= cmp.throughput.ci95_high);
            }
        }
        let tables = r.tables();
        assert_eq!(tables.len(), Primitive::ALL.len());
        for t in &tables {
            crate::export::agreement::assert_exports_agree(t);
        }
        assert_eq!(r.charts().len(), Primitive::ALL.len());
        assert!(r.notes().iter().any(|n| n.starts_with("mutex: ")));
    }

    #[test]
    fn cells_without_a_binary_are_listed_not_run() {
        let c = Config {
            axes: Axes {
                block: vec![BlockSetting::Low],
                ..Config::tiny().axes
            },
            only: vec!["event".into()],
            ..Config::tiny()
        };
        let r = run(&c);
        let cells = &r.primitives[0].cells;
        assert!(!cells.is_empty());
        assert!(cells.iter().all(|c| c.not_run.is_some()));
        r.tables()[0].validate().unwrap();
    }
}
