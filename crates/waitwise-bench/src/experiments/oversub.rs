//! `waitwise oversub`: Lim & Agarwal's Tables 2-5 on this machine: a
//! producer-consumer loop, a barrier loop and a mutex loop (module
//! `workload`), each run *matched* (threads = CPUs) and *unmatched*
//! (threads = 2x and 4x the CPUs, [`Config::multipliers`]), under each
//! waiting choice:
//!
//! - `s//inf`: always poll, blocking only after the deadlock-avoidance
//!   timeout of `100 B` ([`barrier::spin_policy`]; Lim & Agarwal's 50,000
//!   cycles at `B` = 500), clamped to 2-5 ms (at least a scheduler time
//!   slice: see [`barrier::SPIN_TIMEOUT_BOUNDS`]);
//! - `/b/0`, `s/b/1`, `s/b/0.5`, `s/b/alpha(kind)` (0.54 for
//!   producer-consumer and mutex, 0.62 for barriers), `rand/b`;
//! - the static choice with the default's mechanisms, the default before
//!   `adapt/b`: the mutex's yield-polling `Ss/b/0.54`, the barrier's
//!   `s/b/0.62` (yield-polling `Ss/b/0.62` when the threads outnumber the
//!   CPUs);
//! - `adapt/b`, polling with the mechanism the object's default polls with
//!   (the default of the semaphore, the barrier and the mutex), and
//!   compared with the best of the static choices above in every loop and
//!   condition ([`AdaptiveCheck`]: within [`ADAPTIVE_TOLERANCE`],
//!   judged on the ratio of the two runs of each round and its 95%
//!   interval, [`AdaptiveVerdict`]); past its limit it polls on while the
//!   machine's runnable threads fit on its CPUs
//!   ([`waitwise::policy::idle_extension`], whose signal sees other
//!   programs too: on a loaded machine the extension stays off; `waitwise
//!   oversub --idle-signal busy` turns it off, `idle` pins it on);
//! - the pthread peer: a counting semaphore on `pthread_cond_wait` /
//!   `pthread_cond_signal`, `pthread_barrier_wait`, `pthread_mutex_lock`.
//!
//! # Figures
//!
//! - **runtime**: wall time of the loop (all threads start at a gate, the
//!   clock stops when the last one finishes), and **normalized runtime**:
//!   its median over `/b/0`'s median for the same loop and thread count,
//!   as in the paper.
//! - **blocks**: waits that slept in the kernel in one run (median over
//!   runs), from the objects' wait profiles (profiling is on for every
//!   waitwise object, including `/b/0`). pthread: n/a.
//! - **waiting overhead**: the CPU time the run spent on anything but its
//!   useful work: `sum of the threads' CPU time - units of work done x the
//!   cost of one unit alone` (the unit's CPU time, measured before the runs
//!   on one pinned thread). It counts polling, the synchronization calls,
//!   the kernel's block and wake-up paths and cache effects of switching;
//!   time a thread spent blocked costs no CPU and is not counted. Shown in
//!   CPU ms and as a percentage of the machine's capacity during the run
//!   (`runtime x CPUs`). It can be slightly negative when the work ran
//!   faster than in the calibration.
//!
//! # Pinning
//!
//! Thread `i` is pinned to allowed CPU `i mod CPUs` (round-robin): matched
//! runs have one thread per CPU, unmatched runs 2 or 4 threads per CPU,
//! multiplexed by the kernel's scheduler, as Lim & Agarwal's unmatched
//! runs multiplex threads on processors.
//!
//! # Statistics
//!
//! Per (loop, thread count) every waiting choice gets one warm-up run (a
//! quarter of the iterations, dropped) and [`Config::runs`] measured runs,
//! interleaved; the first and last 10% are trimmed; median, mean and 95% CI
//! are reported, and a median whose 95% CI is wider than 20% of it flags the row. The
//! normalized runtime is the median over rounds of the run's time over the
//! same round's `/b/0` run: on a VM whose speed drifts between rounds, a
//! ratio of two medians taken from different rounds once put `s/b/0.5` at
//! 0.76x and `s/b/0.54` at 1.30x of `/b/0` in the same table.
//!
//! `adapt/b` is judged against the best static choice on fresh rounds
//! ([`Config::confirm_runs`]): once the measured runs have named the best
//! (the least of seven or so noisy medians, which sits below that choice's
//! typical runtime by the luck that picked it), `adapt/b` and that choice
//! run again, paired round by round in alternating order, and the check
//! takes the median of those rounds' ratios.

mod peers;
mod workload;

pub use workload::{Waiting, Workload, MUTEX_REFERENCE_CPUS};

use super::asymmetry::unit_cost_ns;
use super::barriers::{describe_pinning, round_robin};
use super::load::{load_average, load_note};
use super::table_parts::NOISY_NOTE;
use super::{progress, ExperimentOutput, RenderedChart};
use crate::chart::BarChart;
use crate::contender::barrier;
use crate::contender::Family;
use crate::export::{Cell, Column, Table};
use crate::measure::summary_ns;
use crate::placement::pin;
use crate::stats::{summarize, Summary};
use serde::Serialize;
use std::time::Instant;
use waitwise::policy::{Policy, PollLimit};
use waitwise_platform::thread::thread_cpu_time;
use workload::{Loop, Sizes, Work};

/// Settings of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// Threads per CPU: 1 is matched, above 1 unmatched.
    pub multipliers: Vec<usize>,
    /// Loop iterations per thread ([`Workload::iterations`] scales them per
    /// loop, load and, for the mutex loop, the number of CPUs).
    pub iterations: u64,
    /// Side of the unit-of-work matrix multiply.
    pub unit_n: usize,
    /// Work per iteration `W`, us (converted to whole units with the
    /// measured unit cost).
    pub work_us: f64,
    /// Work inside the lock per iteration `C` (mutex loop), us.
    pub critical_us: f64,
    /// Measured runs per cell (times [`Workload::run_scale`]).
    pub runs: usize,
    /// Loops to run (empty: all three).
    pub workloads: Vec<Workload>,
    /// Fresh paired rounds of `adapt/b` and the best static choice (times
    /// [`Workload::run_scale`]), run after the measured runs chose that
    /// best, on which [`AdaptiveCheck`] judges `adapt/b` (0: judge on the
    /// measured runs).
    pub confirm_runs: usize,
}

impl Config {
    /// Quick: under a minute on a 2-vCPU machine.
    pub fn quick() -> Self {
        Self {
            multipliers: vec![1, 2, 4],
            iterations: 400,
            unit_n: 10,
            work_us: 20.0,
            critical_us: 4.0,
            runs: 7,
            workloads: Vec::new(),
            confirm_runs: 25,
        }
    }

    /// Longer loops and more runs.
    pub fn full() -> Self {
        Self {
            iterations: 5_000,
            runs: 7,
            ..Self::quick()
        }
    }

    /// A tiny configuration for tests.
    pub fn tiny() -> Self {
        Self {
            multipliers: vec![1, 2],
            iterations: 30,
            unit_n: 4,
            work_us: 2.0,
            critical_us: 0.5,
            runs: 2,
            workloads: Vec::new(),
            confirm_runs: 2,
        }
    }
}

/// One waiting choice at one thread count.
#[derive(Clone, Debug, Serialize)]
pub struct CellResult {
    /// Threads in the run.
    pub threads: usize,
    /// Threads per CPU (1: matched).
    pub multiplier: usize,
    /// Wall time of the loop, ms.
    pub runtime_ms: Option<Summary>,
    /// Runtime over `/b/0`'s (same loop and threads): the median over
    /// rounds of the run's time over that round's `/b/0` run.
    pub normalized: Option<f64>,
    /// Waits that slept, per run (median); `None` for pthread.
    pub blocks: Option<f64>,
    /// Waiting overhead in CPU ms (see the module docs).
    pub wait_overhead_ms: Option<Summary>,
    /// Waiting overhead as % of `runtime x CPUs` (median over runs).
    pub wait_overhead_pct: Option<f64>,
    /// Set when a run broke the loop's invariant (a bug, reported).
    pub error: Option<String>,
    /// Wall time of each measured run, ms, in round order: run `i` of
    /// every choice of a loop and thread count ran in the same round.
    pub runs_ms: Vec<f64>,
    /// Wall time of each confirmation run, ms, in round order
    /// ([`Config::confirm_runs`]): filled for `adapt/b` and the best static
    /// choice of the loop and thread count, empty for the others.
    pub confirm_ms: Vec<f64>,
}

/// One waiting choice for one loop.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The loop.
    pub workload: Workload,
    /// Row label: the policy name, "default ...", or the pthread peer.
    pub waiting: String,
    /// The choice's name across loops ([`Choice::series`]).
    pub series: String,
    /// waitwise or peer.
    pub family: Family,
    /// The waitwise policy, when one was given explicitly.
    pub policy: Option<String>,
    /// Whether this is what the object does by default.
    pub is_default: bool,
    /// One cell per multiplier.
    pub cells: Vec<CellResult>,
}

/// The experiment's result.
#[derive(Clone, Debug, Serialize)]
pub struct OversubResult {
    /// The settings used.
    pub config: Config,
    /// CPUs this process may use.
    pub cpus: usize,
    /// Pinning, one line per thread count.
    pub pinning: Vec<String>,
    /// The block cost `B`, ns.
    pub block_ns: f64,
    /// `s//inf`'s deadlock-avoidance timeout, ns.
    pub spin_timeout_ns: f64,
    /// One unit of work alone, ns.
    pub unit_ns: f64,
    /// `W` in units.
    pub work_units: u32,
    /// `C` in units.
    pub critical_units: u32,
    /// 1-minute load average before and after the run (other processes).
    pub load_average: [Option<f64>; 2],
    /// Rows, loop by loop.
    pub rows: Vec<Row>,
    /// `adapt/b` against the best static waitwise choice, per loop and
    /// condition ([`adaptive_checks`]).
    pub adaptive: Vec<AdaptiveCheck>,
}

/// `adapt/b` within this fraction of the best static policy of the same
/// loop and condition counts as keeping up with it.
pub const ADAPTIVE_TOLERANCE: f64 = 0.05;

/// `adapt/b` (polling as the object's default polls,
/// `workload::adaptive_as_default`) against the best static waitwise
/// choice of one loop and condition: every row but `adapt/b` and the
/// pthread peer, the object's default included.
#[derive(Clone, Debug, Serialize)]
pub struct AdaptiveCheck {
    /// The loop.
    pub workload: Workload,
    /// Threads per CPU.
    pub multiplier: usize,
    /// `adapt/b`'s normalized runtime (over `/b/0`'s).
    pub adaptive: f64,
    /// The best static choice's row label.
    pub best: String,
    /// Its normalized runtime.
    pub best_normalized: f64,
    /// `adapt/b`'s runtime over the best static choice's: the median over
    /// rounds of the two runs' ratio in the same round (paired, so that a
    /// round the VM slowed counts for both), or `adaptive /
    /// best_normalized` without per-run times.
    pub ratio: f64,
    /// The distribution-free 95% interval of that median (`None` without
    /// at least two paired rounds).
    pub ratio_ci95: Option<[f64; 2]>,
    /// Rounds paired in `ratio`.
    pub paired_rounds: usize,
    /// Whether those rounds are the confirmation rounds
    /// ([`Config::confirm_runs`]), run after the best was chosen, rather
    /// than the measured runs that chose it.
    pub fresh_rounds: bool,
    /// `ratio <= 1 + ADAPTIVE_TOLERANCE`.
    pub within_tolerance: bool,
    /// What the runs say about the target.
    pub verdict: AdaptiveVerdict,
}

/// What the paired runs say about `adapt/b` keeping within
/// [`ADAPTIVE_TOLERANCE`] of the best static choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AdaptiveVerdict {
    /// The median paired ratio is within the tolerance.
    Within,
    /// The median is beyond it, but its 95% interval reaches back inside:
    /// the runs cannot tell.
    Undecided,
    /// The whole 95% interval of the median lies beyond the tolerance (or,
    /// without an interval, the ratio does).
    Behind,
}

impl AdaptiveVerdict {
    /// From a paired ratio and its interval.
    pub fn of(ratio: f64, ci95: Option<[f64; 2]>) -> Self {
        let limit = 1.0 + ADAPTIVE_TOLERANCE;
        if ratio <= limit {
            Self::Within
        } else if ci95.is_some_and(|[low, _]| low <= limit) {
            Self::Undecided
        } else {
            Self::Behind
        }
    }
}

/// The row of `rows` (one loop's) whose choice `adapt/b` is judged
/// against at `multiplier`: the waitwise row other than `adapt/b` with the
/// least normalized runtime, and that runtime. [`run`] picks it from the
/// measured runs before its confirmation rounds; [`adaptive_checks`] picks
/// it again from the same figures.
pub fn best_static<R: std::borrow::Borrow<Row>>(
    rows: &[R],
    multiplier: usize,
) -> Option<(usize, f64)> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| (i, r.borrow()))
        .filter(|(_, r)| r.series != "adapt/b" && r.family == Family::Waitwise)
        .filter_map(|(i, r)| Some((i, cell_at(r, multiplier)?.normalized?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The cell of `row` at `multiplier`.
fn cell_at(row: &Row, multiplier: usize) -> Option<&CellResult> {
    row.cells.iter().find(|c| c.multiplier == multiplier)
}

/// The [`AdaptiveCheck`] of every loop and condition that has figures for
/// `adapt/b` and at least one static choice. The paired runs are the
/// confirmation rounds where both rows have them (fresh runs, whose luck
/// did not pick the best: the least of several noisy medians sits below
/// its choice's typical runtime, which would count against `adapt/b`),
/// else the measured runs.
pub fn adaptive_checks(rows: &[Row], multipliers: &[usize]) -> Vec<AdaptiveCheck> {
    let mut out = Vec::new();
    for w in Workload::ALL {
        let loop_rows: Vec<&Row> = rows.iter().filter(|r| r.workload == w).collect();
        let Some(adapt) = loop_rows.iter().find(|r| r.series == "adapt/b") else {
            continue;
        };
        for &m in multipliers {
            let Some(adapt_cell) = cell_at(adapt, m) else {
                continue;
            };
            let Some(adaptive) = adapt_cell.normalized else {
                continue;
            };
            let Some((best, best_normalized)) = best_static(&loop_rows, m) else {
                continue;
            };
            let best = loop_rows[best];
            let Some(best_cell) = cell_at(best, m) else {
                continue;
            };
            let fresh = !adapt_cell.confirm_ms.is_empty() && !best_cell.confirm_ms.is_empty();
            let (a_runs, b_runs) = if fresh {
                (&adapt_cell.confirm_ms, &best_cell.confirm_ms)
            } else {
                (&adapt_cell.runs_ms, &best_cell.runs_ms)
            };
            let paired: Vec<f64> = a_runs
                .iter()
                .zip(b_runs)
                .filter(|(a, b)| **a > 0.0 && **b > 0.0)
                .map(|(a, b)| a / b)
                .collect();
            let (ratio, ratio_ci95) = match summarize(&paired) {
                Some(s) if s.n >= 2 => (s.median, Some([s.median_ci95_low, s.median_ci95_high])),
                _ => (adaptive / best_normalized, None),
            };
            out.push(AdaptiveCheck {
                workload: w,
                multiplier: m,
                adaptive,
                best: best.waiting.clone(),
                best_normalized,
                ratio,
                ratio_ci95,
                paired_rounds: paired.len(),
                fresh_rounds: fresh,
                within_tolerance: ratio <= 1.0 + ADAPTIVE_TOLERANCE,
                verdict: AdaptiveVerdict::of(ratio, ratio_ci95),
            });
        }
    }
    out
}

/// One waiting choice of one loop.
#[derive(Clone, Debug)]
pub struct Choice {
    /// Row label: the policy name, "default ...", or the pthread peer.
    pub label: String,
    /// The same choice's name across loops (chart legend): `s//inf`,
    /// `/b/0`, `s/b/1`, `s/b/0.5`, `s/b/alpha(kind)`, `rand/b`, `adapt/b`, `default`,
    /// `pthread`.
    pub series: &'static str,
    /// How waits wait.
    pub waiting: Waiting,
    /// Whether this is what the object does by default.
    pub is_default: bool,
}

/// Legend order of the chart.
const SERIES: [&str; 9] = [
    "s//inf",
    "/b/0",
    "s/b/1",
    "s/b/0.5",
    "s/b/alpha(kind)",
    "rand/b",
    "adapt/b",
    "default",
    "pthread",
];

/// The waiting choices for `workload`.
pub fn waitings(workload: Workload) -> Vec<Choice> {
    let kind_policy = Policy::for_kind(workload.kind());
    let statics = [
        ("s//inf".into(), SERIES[0], barrier::spin_policy()),
        ("/b/0".into(), SERIES[1], Policy::always_block()),
        ("s/b/1".into(), SERIES[2], Policy::two_phase(1.0)),
        ("s/b/0.5".into(), SERIES[3], Policy::two_phase(0.5)),
        (kind_policy.name(), SERIES[4], kind_policy),
        ("rand/b".into(), SERIES[5], Policy::randomized()),
    ];
    let mut v: Vec<Choice> = statics
        .into_iter()
        .map(|(label, series, policy)| Choice {
            label,
            series,
            waiting: Waiting::Policy(policy),
            is_default: false,
        })
        .collect();
    v.push(adaptive_choice(workload));
    v.extend(static_default_choice(workload));
    v.push(Choice {
        label: workload.pthread_name().into(),
        series: SERIES[8],
        waiting: Waiting::Pthread,
        is_default: false,
    });
    v
}

/// `adapt/b` with the mechanisms of the object's default. The semaphore,
/// the barrier and the mutex wait with it by default (the barrier
/// yielding while it polls when oversubscribed, the mutex always).
fn adaptive_choice(workload: Workload) -> Choice {
    let is_default = workload.kind().defaults_to_adaptive();
    let label = match workload {
        Workload::ProducerConsumer => "adapt/b".into(),
        Workload::Barrier => "adapt/b (pause matched, yield unmatched)".into(),
        Workload::Mutex => workload::adaptive_as_default(workload, 1).describe(),
    };
    Choice {
        label: format!("{label}{}", if is_default { " (default)" } else { "" }),
        series: SERIES[6],
        waiting: Waiting::AdaptiveAsDefault,
        is_default,
    }
}

/// The barrier's and the mutex's static choice with their default's
/// mechanisms: a static policy to compare `adapt/b` with.
fn static_default_choice(workload: Workload) -> Option<Choice> {
    let label = match workload {
        Workload::Barrier => format!(
            "{} matched, {} unmatched",
            workload::static_as_default(workload, 1).name(),
            workload::static_as_default(workload, usize::MAX).name()
        ),
        Workload::Mutex => workload::static_as_default(workload, 1).name(),
        Workload::ProducerConsumer => return None,
    };
    Some(Choice {
        label,
        series: "static default",
        waiting: Waiting::StaticAsDefault,
        is_default: false,
    })
}

struct RunRaw {
    wall_ms: f64,
    overhead_ms: f64,
    overhead_pct: f64,
    blocks: Option<u64>,
    error: Option<String>,
}

/// One run of `l` on `cpus.len()` threads.
fn run_once(
    l: &dyn Loop,
    cpus: &[Option<usize>],
    iterations: u64,
    unit_n: usize,
    unit_ns: f64,
    n_cpus: usize,
) -> RunRaw {
    let gate = std::sync::Barrier::new(cpus.len() + 1);
    let (wall, per_thread) = std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(tid, &cpu)| {
                let gate = &gate;
                s.spawn(move || {
                    pin(cpu);
                    let mut work = Work::new(unit_n);
                    gate.wait();
                    let c0 = thread_cpu_time();
                    for i in 0..iterations {
                        l.iteration(tid, i, &mut work);
                    }
                    let cpu = thread_cpu_time() - c0;
                    work.finish();
                    (cpu.as_nanos() as f64, work.units)
                })
            })
            .collect();
        gate.wait();
        let t0 = Instant::now();
        let per: Vec<(f64, u64)> = handles
            .into_iter()
            .map(|h| h.join().expect("loop thread panicked"))
            .collect();
        (t0.elapsed(), per)
    });
    let cpu_ns: f64 = per_thread.iter().map(|p| p.0).sum();
    let useful_ns: f64 = per_thread.iter().map(|p| p.1 as f64 * unit_ns).sum();
    let wall_ns = wall.as_nanos() as f64;
    let overhead = cpu_ns - useful_ns;
    RunRaw {
        wall_ms: wall_ns / 1e6,
        overhead_ms: overhead / 1e6,
        overhead_pct: if wall_ns > 0.0 {
            100.0 * overhead / (wall_ns * n_cpus as f64)
        } else {
            0.0
        },
        blocks: l.blocks(),
        error: l.check(iterations).err(),
    }
}

fn median(v: &[f64]) -> Option<f64> {
    summary_ns(v).map(|s| s.median)
}

/// Runs the experiment.
pub fn run(config: &Config) -> OversubResult {
    let load_before = load_average();
    let cpus = waitwise::barrier::allowed_cpus();
    let unit_ns = unit_cost_ns(round_robin(1)[0], config.unit_n);
    let to_units = |us: f64| ((us * 1e3 / unit_ns).round() as u32).max(1);
    let sizes = Sizes {
        work: to_units(config.work_us),
        critical: to_units(config.critical_us),
    };
    let workloads: Vec<Workload> = if config.workloads.is_empty() {
        Workload::ALL.to_vec()
    } else {
        config.workloads.clone()
    };
    let mut pinning = Vec::new();
    let mut rows = Vec::new();
    let steps = workloads.len() * config.multipliers.len();
    let mut step = 0;
    for &w in &workloads {
        let choices = waitings(w);
        let mut wrows = empty_rows(w, &choices);
        for &m in &config.multipliers {
            step += 1;
            let threads = cpus * m;
            let cell = CellRun {
                config,
                workload: w,
                multiplier: m,
                threads,
                placement: round_robin(threads),
                sizes,
                unit_ns,
                cpus,
                step,
                steps,
            };
            let line = describe_pinning(&cell.placement);
            if !pinning.contains(&line) {
                pinning.push(line);
            }
            cell.measure(&choices, &mut wrows);
        }
        rows.extend(wrows);
    }
    OversubResult {
        config: config.clone(),
        cpus,
        pinning,
        block_ns: waitwise::policy::block_ns(),
        spin_timeout_ns: barrier::spin_timeout().as_nanos() as f64,
        unit_ns,
        work_units: sizes.work,
        critical_units: sizes.critical,
        load_average: [load_before, load_average()],
        adaptive: adaptive_checks(&rows, &config.multipliers),
        rows,
    }
}

/// One row per waiting choice of `w`, without cells yet.
fn empty_rows(w: Workload, choices: &[Choice]) -> Vec<Row> {
    choices
        .iter()
        .map(|c| Row {
            workload: w,
            waiting: c.label.clone(),
            series: c.series.to_string(),
            family: if c.waiting == Waiting::Pthread {
                Family::Peer
            } else {
                Family::Waitwise
            },
            policy: match c.waiting {
                Waiting::Policy(p) => Some(p.name()),
                Waiting::AdaptiveAsDefault => Some(Policy::adaptive().name()),
                Waiting::StaticAsDefault => Some(Policy::for_kind(w.kind()).name()),
                Waiting::Default | Waiting::Pthread => None,
            },
            is_default: c.is_default,
            cells: Vec::new(),
        })
        .collect()
}

/// One (loop, thread count) cell of a run: its setting and its runs.
struct CellRun<'a> {
    config: &'a Config,
    workload: Workload,
    multiplier: usize,
    threads: usize,
    placement: Vec<Option<usize>>,
    sizes: Sizes,
    unit_ns: f64,
    cpus: usize,
    /// This cell's place among the run's cells, for the progress line.
    step: usize,
    steps: usize,
}

impl CellRun<'_> {
    fn progress(&self, what: &str) {
        progress("oversub", self.step, self.steps, what);
    }

    /// One run of the loop with `waiting`, on a fresh object.
    fn run_with(&self, waiting: Waiting, iterations: u64) -> RunRaw {
        let l = workload::build(self.workload, waiting, self.threads, self.sizes);
        run_once(
            l.as_ref(),
            &self.placement,
            iterations,
            self.config.unit_n,
            self.unit_ns,
            self.cpus,
        )
    }

    /// Warms every choice up, runs them in turn round after round, pushes
    /// each one's cell onto its row of `wrows`, then confirms `adapt/b`
    /// against the best static choice.
    fn measure(&self, choices: &[Choice], wrows: &mut [Row]) {
        let (w, threads, m) = (self.workload, self.threads, self.multiplier);
        let iterations = w.iterations(self.config.iterations, m, self.cpus);
        self.progress(&format!(
            "{} loop, {threads} threads ({m}x CPUs): warm-up",
            w.name()
        ));
        for c in choices {
            self.run_with(c.waiting, (iterations / 4).max(1));
        }
        let mut raws: Vec<Vec<RunRaw>> = (0..choices.len()).map(|_| Vec::new()).collect();
        let runs = self.config.runs * w.run_scale();
        for r in 0..runs {
            self.progress(&format!(
                "{} loop, {threads} threads: run {}/{runs}",
                w.name(),
                r + 1
            ));
            for (i, c) in choices.iter().enumerate() {
                raws[i].push(self.run_with(c.waiting, iterations));
            }
        }
        let base = choices
            .iter()
            .position(|c| c.waiting == Waiting::Policy(Policy::always_block()));
        for (i, runs) in raws.iter().enumerate() {
            let base_runs = base.map(|b| raws[b].as_slice());
            wrows[i]
                .cells
                .push(cell_result(threads, m, runs, base_runs));
        }
        self.confirm(choices, wrows, iterations);
    }

    /// The confirmation rounds: `adapt/b` and the best static choice of
    /// the cell, alternately first, their times pushed onto the cells.
    fn confirm(&self, choices: &[Choice], wrows: &mut [Row], iterations: u64) {
        let (w, threads) = (self.workload, self.threads);
        let adapt = choices.iter().position(|c| c.series == "adapt/b");
        let best = best_static(wrows, self.multiplier).map(|(i, _)| i);
        let confirm = self.config.confirm_runs * w.run_scale();
        let (Some(adapt), Some(best), true) = (adapt, best, confirm > 0) else {
            return;
        };
        for r in 0..confirm {
            self.progress(&format!(
                "{} loop, {threads} threads: adapt/b and {}, confirmation {}/{confirm}",
                w.name(),
                choices[best].label,
                r + 1
            ));
            // Alternating which runs first, so that neither always
            // follows the other's cache and scheduler state.
            let order = if r % 2 == 0 {
                [adapt, best]
            } else {
                [best, adapt]
            };
            for i in order {
                let raw = self.run_with(choices[i].waiting, iterations);
                let cell = wrows[i].cells.last_mut().expect("the cell just pushed");
                cell.confirm_ms.push(raw.wall_ms);
                if cell.error.is_none() {
                    cell.error = raw.error;
                }
            }
        }
    }
}

/// A choice's cell from its runs, normalized round by round to the
/// always-blocking choice's runs `base` (when it ran).
fn cell_result(
    threads: usize,
    multiplier: usize,
    runs: &[RunRaw],
    base: Option<&[RunRaw]>,
) -> CellResult {
    let per_round: Option<Vec<f64>> = base.map(|base| {
        runs.iter()
            .zip(base)
            .filter(|(_, base)| base.wall_ms > 0.0)
            .map(|(run, base)| run.wall_ms / base.wall_ms)
            .collect()
    });
    let wall: Vec<f64> = runs.iter().map(|r| r.wall_ms).collect();
    let blocks: Option<Vec<f64>> = runs.iter().map(|r| r.blocks.map(|b| b as f64)).collect();
    CellResult {
        threads,
        multiplier,
        runtime_ms: summary_ns(&wall),
        normalized: per_round.and_then(|r| median(&r)),
        blocks: blocks.and_then(|b| median(&b)),
        wait_overhead_ms: summary_ns(&runs.iter().map(|r| r.overhead_ms).collect::<Vec<_>>()),
        wait_overhead_pct: median(&runs.iter().map(|r| r.overhead_pct).collect::<Vec<_>>()),
        error: runs.iter().find_map(|r| r.error.clone()),
        runs_ms: wall,
        confirm_ms: Vec::new(),
    }
}

/// The columns of a loop's table ([`OversubResult`]'s `workload_table`).
fn workload_columns() -> Vec<Column> {
    vec![
        Column::new("threads", None, "threads in the run"),
        Column::new(
            "condition",
            None,
            "matched (threads = CPUs) or unmatched (threads per CPU)",
        ),
        Column::new("waiting", None, "waiting algorithm"),
        Column::new("family", None, "waitwise or peer"),
        Column::new(
            "runtime",
            Some("ms"),
            "wall time of the loop (median over runs)",
        ),
        Column::new(
            "runtime_median_ci95",
            Some("ms"),
            "half the width of the 95% CI of the median runtime",
        ),
        Column::new(
            "normalized_runtime",
            Some("ratio"),
            "median runtime over /b/0's",
        ),
        Column::new(
            "blocks",
            None,
            "waits that slept in the kernel, per run (median); pthread n/a",
        ),
        Column::new(
            "wait_overhead",
            Some("ms"),
            "CPU time beyond the useful work (median; see notes)",
        ),
        Column::new(
            "wait_overhead",
            Some("pct"),
            "waiting overhead over runtime x CPUs (median)",
        ),
    ]
}

/// Row `r`'s cell `c` at `multiplier` as a table row, and its note.
fn workload_row(r: &Row, c: &CellResult, multiplier: usize) -> (Vec<Cell>, Option<String>) {
    let cells = vec![
        Cell::Integer(c.threads as i64),
        Cell::text(condition(multiplier)),
        Cell::text(&r.waiting),
        Cell::text(r.family.name()),
        Cell::number_or_missing(c.runtime_ms.map(|s| s.median), "no data"),
        Cell::number_or_missing(c.runtime_ms.map(|s| s.median_ci95_half_width()), "no data"),
        Cell::number_or_missing(c.normalized, "no /b/0 figure"),
        Cell::number_or_missing(c.blocks, "n/a: no wait profile"),
        Cell::number_or_missing(c.wait_overhead_ms.map(|s| s.median), "no data"),
        Cell::number_or_missing(c.wait_overhead_pct, "no data"),
    ];
    let mut notes = Vec::new();
    if let Some(e) = &c.error {
        notes.push(format!("error: {e}"));
    }
    if c.runtime_ms.is_some_and(|s| s.is_noisy()) {
        notes.push(NOISY_NOTE.into());
    }
    if r.is_default {
        notes.push("the object's default waiting".into());
    }
    (cells, (!notes.is_empty()).then(|| notes.join("; ")))
}

/// `matched` or `unmatched (2x)`.
fn condition(multiplier: usize) -> String {
    if multiplier <= 1 {
        "matched".into()
    } else {
        format!("unmatched ({multiplier}x)")
    }
}

impl OversubResult {
    /// The cell of `workload`'s row labelled `waiting` (or its default row
    /// when `waiting` is `None`) at `multiplier`.
    pub fn cell(
        &self,
        workload: Workload,
        waiting: Option<&str>,
        multiplier: usize,
    ) -> Option<&CellResult> {
        let row = self
            .rows
            .iter()
            .find(|r| r.workload == workload && waiting.map_or(r.is_default, |w| r.waiting == w))?;
        row.cells.iter().find(|c| c.multiplier == multiplier)
    }

    /// `adapt/b` against the best static choice, per loop and condition
    /// ([`AdaptiveCheck`]).
    fn adaptive_table(&self) -> Table {
        let mut t = Table::new(
            "oversub_adaptive",
            format!(
                "adapt/b against the best static waitwise choice of each loop and condition (target: within {:.0}%)",
                ADAPTIVE_TOLERANCE * 100.0
            ),
            vec![
                Column::new("loop", None, "the loop"),
                Column::new(
                    "condition",
                    None,
                    "matched (threads = CPUs) or unmatched (threads per CPU)",
                ),
                Column::new(
                    "best_static",
                    None,
                    "the static choice with the least normalized runtime in the measured runs",
                ),
                Column::new(
                    "ratio",
                    Some("ratio"),
                    "adapt/b's runtime over the best's: the median over paired rounds of the two runs' ratio",
                ),
                Column::new(
                    "ratio_ci95_low",
                    Some("ratio"),
                    "low end of the median's distribution-free 95% interval",
                ),
                Column::new(
                    "ratio_ci95_high",
                    Some("ratio"),
                    "high end of the median's distribution-free 95% interval",
                ),
                Column::new("rounds", None, "paired rounds in the ratio"),
                Column::new(
                    "rounds_kind",
                    None,
                    "fresh: confirmation rounds run after the measured runs chose the best; measured: the runs that chose it",
                ),
                Column::new(
                    "verdict",
                    None,
                    "within the target, undecided (beyond it, the interval reaching back) or behind (the whole interval beyond)",
                ),
            ],
        );
        for c in &self.adaptive {
            let [low, high] = c
                .ratio_ci95
                .map_or([None, None], |[l, h]| [Some(l), Some(h)]);
            t.push_row(
                vec![
                    Cell::text(c.workload.name()),
                    Cell::text(condition(c.multiplier)),
                    Cell::text(&c.best),
                    Cell::Number(c.ratio),
                    Cell::number_or_missing(low, "fewer than two paired rounds"),
                    Cell::number_or_missing(high, "fewer than two paired rounds"),
                    Cell::Integer(c.paired_rounds as i64),
                    Cell::text(if c.fresh_rounds { "fresh" } else { "measured" }),
                    Cell::text(match c.verdict {
                        AdaptiveVerdict::Within => "within",
                        AdaptiveVerdict::Undecided => "undecided",
                        AdaptiveVerdict::Behind => "behind",
                    }),
                ],
                None,
            );
        }
        t
    }

    fn workload_table(&self, w: Workload) -> Table {
        let mut t = Table::new(
            format!("oversub_{}", w.name().replace('-', "_")),
            format!(
                "{} loop on {} CPUs, matched and unmatched (Lim & Agarwal Tables 2-5)",
                w.name(),
                self.cpus
            ),
            workload_columns(),
        );
        for &m in &self.config.multipliers {
            for r in self.rows.iter().filter(|r| r.workload == w) {
                let Some(c) = r.cells.iter().find(|c| c.multiplier == m) else {
                    continue;
                };
                let (cells, note) = workload_row(r, c, m);
                t.push_row(cells, note);
            }
        }
        t
    }

    fn workloads(&self) -> Vec<Workload> {
        let mut v: Vec<Workload> = Vec::new();
        for r in &self.rows {
            if !v.contains(&r.workload) {
                v.push(r.workload);
            }
        }
        v
    }
}

impl ExperimentOutput for OversubResult {
    fn tables(&self) -> Vec<Table> {
        let mut tables: Vec<Table> = self
            .workloads()
            .into_iter()
            .map(|w| self.workload_table(w))
            .collect();
        if !self.adaptive.is_empty() {
            tables.push(self.adaptive_table());
        }
        tables
    }

    fn charts(&self) -> Vec<RenderedChart> {
        let workloads = self.workloads();
        let mut categories = Vec::new();
        for &w in &workloads {
            for &m in &self.config.multipliers {
                categories.push(format!(
                    "{}, {} threads, {}",
                    w.name(),
                    self.cpus * m,
                    condition(m)
                ));
            }
        }
        // One series per waiting choice across loops; `default` is the
        // row each object uses by default (in every loop the same row as
        // `adapt/b`).
        let series = SERIES
            .iter()
            .map(|&name| {
                let mut v = Vec::new();
                for &w in &workloads {
                    let row = self.rows.iter().find(|r| {
                        r.workload == w
                            && if name == "default" {
                                r.is_default
                            } else {
                                r.series == name
                            }
                    });
                    for &m in &self.config.multipliers {
                        v.push(
                            row.and_then(|r| r.cells.iter().find(|c| c.multiplier == m))
                                .and_then(|c| c.normalized),
                        );
                    }
                }
                (name.to_string(), v)
            })
            .collect();
        let title = "Runtime normalized to /b/0, matched and unmatched";
        let caption = format!(
            "{title}. default: each object's own waiting (adapt/b in every loop, polling as each object polls: PAUSE, or yield for the mutex and the oversubscribed barrier); \
             pthread: pthread_cond, pthread_barrier, pthread_mutex."
        );
        let chart = BarChart {
            intervals: Vec::new(),
            title: title.into(),
            y_label: "runtime / runtime of /b/0 (log scale)".into(),
            categories,
            series,
            y_log: true,
        };
        chart
            .to_svg()
            .ok()
            .map(|svg| RenderedChart { caption, svg })
            .into_iter()
            .collect()
    }

    fn notes(&self) -> Vec<String> {
        let mut n = self.setting_notes();
        n.extend(self.loop_notes());
        n.extend(self.adaptive_note());
        let errors: Vec<String> = self
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().filter_map(|c| c.error.clone()))
            .collect();
        if !errors.is_empty() {
            n.push(format!("Errors: {}.", errors.join("; ")));
        }
        n
    }
}

impl OversubResult {
    /// The load, the pinning, the unit of work and what the overhead is.
    fn setting_notes(&self) -> Vec<String> {
        let mut n: Vec<String> = load_note(self.load_average[0], self.load_average[1], self.cpus)
            .into_iter()
            .collect();
        for p in &self.pinning {
            n.push(format!("Pinning: {p}."));
        }
        n.push(format!(
            "Unit of work: a {0}x{0} multiply, {1:.0} ns alone; W = {2} units ({3:.1} us), C = {4} units; {5} iterations per thread in the oversubscribed runs, {10} in the matched ones ({8} in the mutex loop, matched or not). B = {6:.0} ns; s//inf blocks after {7:.0} us ({9}).",
            self.config.unit_n,
            self.unit_ns,
            self.work_units,
            self.work_units as f64 * self.unit_ns / 1e3,
            self.critical_units,
            self.config.iterations,
            self.block_ns,
            self.spin_timeout_ns / 1e3,
            Workload::Mutex.iterations(self.config.iterations, 1, self.cpus),
            barrier::spin_timeout_rule(),
            Workload::ProducerConsumer.iterations(self.config.iterations, 1, self.cpus),
        ));
        n.push(
            "Waiting overhead = the threads' total CPU time minus the units of work done times one unit's cost alone: polling, synchronization calls, \
             block and wake-up paths; blocked time costs no CPU and is not counted."
                .into(),
        );
        n
    }

    /// Per loop, `s//inf` and the default against `/b/0`.
    fn loop_notes(&self) -> Vec<String> {
        let mut n = Vec::new();
        for w in self.workloads() {
            let spin_label = "s//inf";
            for &m in self.config.multipliers.iter().filter(|&&m| m > 1) {
                let (Some(spin), Some(def)) =
                    (self.cell(w, Some(spin_label), m), self.cell(w, None, m))
                else {
                    continue;
                };
                if let (Some(s), Some(d)) = (spin.normalized, def.normalized) {
                    // A lock holder is rarely descheduled, so polling for a
                    // lock does not deadlock (Lim & Agarwal section 6.3).
                    let why = if w == Workload::Mutex {
                        " (a lock holder is rarely descheduled, so polling for a lock costs less here, as in Lim & Agarwal Table 4)"
                    } else {
                        ""
                    };
                    n.push(format!(
                        "{} loop, unmatched {m}x: s//inf {s:.2}x /b/0{why}; default {d:.2}x /b/0.",
                        w.name()
                    ));
                }
            }
            if let Some(d) = self.cell(w, None, 1).and_then(|c| c.normalized) {
                n.push(format!("{} loop, matched: default {d:.2}x /b/0.", w.name()));
            }
        }
        n
    }

    /// `adapt/b` against the best static choice, when it was compared.
    fn adaptive_note(&self) -> Option<String> {
        if self.adaptive.is_empty() {
            return None;
        }
        let of = |v: AdaptiveVerdict| -> Vec<String> {
            self.adaptive
                .iter()
                .filter(|c| c.verdict == v)
                .map(|c| {
                    format!(
                        "{} {} {:.3}x the best static ({}){}",
                        c.workload.name(),
                        condition(c.multiplier),
                        c.ratio,
                        c.best,
                        c.ratio_ci95.map_or(String::new(), |[lo, hi]| format!(
                            ", 95% CI {lo:.3}-{hi:.3}"
                        ))
                    )
                })
                .collect()
        };
        let (undecided, behind) = (of(AdaptiveVerdict::Undecided), of(AdaptiveVerdict::Behind));
        let within = self.adaptive.len() - undecided.len() - behind.len();
        let worst = self.adaptive.iter().map(|c| c.ratio).fold(0.0, f64::max);
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join("; ")
            }
        };
        let rounds = if self.adaptive.iter().all(|c| c.fresh_rounds) {
            let (least, most) = self.adaptive.iter().fold((usize::MAX, 0), |(l, h), c| {
                (l.min(c.paired_rounds), h.max(c.paired_rounds))
            });
            let count = if least == most {
                format!("{least}")
            } else {
                format!("{least}-{most}")
            };
            format!(
                "median over {count} fresh rounds pairing adapt/b with the best, run after the measured runs chose it, so that the luck that made it the least of several medians does not count against adapt/b"
            )
        } else {
            "median over rounds of the paired runs' ratio".to_string()
        };
        Some(format!(
            "Adaptive: adapt/b (polling as each object's default polls) is within {tol:.0}% of the best static waitwise choice of its loop in {within} of {} conditions ({rounds}; worst {worst:.3}x); beyond {tol:.0}% but with a 95% interval reaching back within it (the runs cannot tell): {}; behind beyond doubt: {}.",
            self.adaptive.len(),
            list(&undecided),
            list(&behind),
            tol = ADAPTIVE_TOLERANCE * 100.0,
        ))
    }
}

/// Whether `p` is an `s//inf` policy.
pub fn is_spin(p: &Policy) -> bool {
    matches!(p.limit(), PollLimit::Forever { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_run_fills_every_table() {
        let res = run(&Config::tiny());
        let tables = res.tables();
        assert_eq!(tables.len(), 4, "three loops and adapt/b's checks");
        for t in &tables {
            crate::export::agreement::assert_exports_agree(t);
        }
        let pc_rows = waitings(Workload::ProducerConsumer).len();
        assert_eq!(tables[0].rows.len(), pc_rows * 2);
        for r in &res.rows {
            for c in &r.cells {
                assert!(c.error.is_none(), "{:?}", c.error);
                assert!(c.runtime_ms.is_some());
                assert_eq!(
                    c.blocks.is_none(),
                    r.family == Family::Peer,
                    "{} {}",
                    r.workload.name(),
                    r.waiting
                );
            }
        }
        assert_eq!(
            res.cell(Workload::Barrier, Some("/b/0"), 1)
                .unwrap()
                .normalized,
            Some(1.0)
        );
        assert!(
            res.cell(Workload::Barrier, None, 2).is_some(),
            "barrier default row"
        );
        assert!(
            res.cell(Workload::Mutex, None, 1).is_some(),
            "mutex default row"
        );
        let json = serde_json::to_value(&res).unwrap();
        assert_json_keys(&json);
        assert_eq!(res.charts().len(), 1);
        assert!(res.notes().iter().any(|n| n.contains("unmatched 2x")));
        // adapt/b is compared in every loop and condition, on fresh
        // rounds run beside the static choice the measured runs chose.
        assert_eq!(res.adaptive.len(), 3 * res.config.multipliers.len());
        assert_eq!(tables[3].name, "oversub_adaptive");
        assert_eq!(tables[3].rows.len(), res.adaptive.len());
        for c in &res.adaptive {
            let confirm = res.config.confirm_runs * c.workload.run_scale();
            assert!(c.fresh_rounds, "{c:?}");
            assert_eq!(c.paired_rounds, confirm, "{c:?}");
            let confirmed: Vec<&str> = res
                .rows
                .iter()
                .filter(|r| r.workload == c.workload)
                .filter(|r| !cell_at(r, c.multiplier).unwrap().confirm_ms.is_empty())
                .map(|r| r.waiting.as_str())
                .collect();
            assert_eq!(confirmed.len(), 2, "{confirmed:?}");
            assert!(confirmed.contains(&c.best.as_str()), "{confirmed:?} {c:?}");
        }
        assert!(res.notes().iter().any(|n| n.starts_with("Adaptive:")));
        assert!(json.get("adaptive").is_some());
    }

    /// The result's JSON has the run's settings and each cell's figures.
    fn assert_json_keys(json: &serde_json::Value) {
        for key in [
            "config",
            "cpus",
            "pinning",
            "block_ns",
            "spin_timeout_ns",
            "unit_ns",
            "work_units",
            "critical_units",
            "rows",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
        let cell = &json["rows"][0]["cells"][0];
        for key in [
            "threads",
            "multiplier",
            "runtime_ms",
            "normalized",
            "blocks",
            "wait_overhead_ms",
            "wait_overhead_pct",
        ] {
            assert!(cell.get(key).is_some(), "cell.{key}");
        }
    }

    /// A row of one matched cell, for the adaptive checks.
    fn check_row(
        waiting: &str,
        series: &str,
        family: Family,
        normalized: f64,
        runs_ms: Vec<f64>,
    ) -> Row {
        Row {
            workload: Workload::Mutex,
            waiting: waiting.into(),
            series: series.into(),
            family,
            policy: None,
            is_default: false,
            cells: vec![CellResult {
                threads: 2,
                multiplier: 1,
                runtime_ms: None,
                normalized: Some(normalized),
                blocks: None,
                wait_overhead_ms: None,
                wait_overhead_pct: None,
                error: None,
                runs_ms,
                confirm_ms: Vec::new(),
            }],
        }
    }

    #[test]
    fn adaptive_check_takes_the_best_static_waitwise_row() {
        let row = |waiting: &str, series: &str, family, normalized: f64| {
            check_row(waiting, series, family, normalized, Vec::new())
        };
        let rows = [
            row("/b/0", "/b/0", Family::Waitwise, 1.0),
            row("s/b/0.5", "s/b/0.5", Family::Waitwise, 0.9),
            row("adapt/b (yield)", "adapt/b", Family::Waitwise, 0.93),
            row("pthread_mutex", "pthread", Family::Peer, 0.5),
        ];
        let c = adaptive_checks(&rows, &[1, 2]);
        assert_eq!(c.len(), 1, "no figures at 2x");
        assert_eq!(c[0].best, "s/b/0.5");
        assert!((c[0].ratio - 0.93 / 0.9).abs() < 1e-12);
        assert!(c[0].within_tolerance);
        let slow = [
            rows[0].clone(),
            row("adapt/b", "adapt/b", Family::Waitwise, 1.2),
        ];
        assert!(!adaptive_checks(&slow, &[1])[0].within_tolerance);
    }

    #[test]
    fn adaptive_check_pairs_the_runs_of_each_round() {
        let row = |waiting: &str, series: &str, runs_ms: Vec<f64>| {
            check_row(waiting, series, Family::Waitwise, 1.0, runs_ms)
        };
        // Rounds the VM slowed for both: the paired ratio is 1.02 in
        // every one, whatever the spread of the runtimes.
        let best: Vec<f64> = (0..8).map(|i| 10.0 * f64::from(1 + i % 3)).collect();
        let paired = |k: f64| best.iter().map(|b| b * k).collect::<Vec<f64>>();
        let check = |adapt: Vec<f64>| {
            let rows = [
                row("s//inf", "s//inf", best.clone()),
                row("adapt/b", "adapt/b", adapt),
            ];
            adaptive_checks(&rows, &[1]).remove(0)
        };
        let c = check(paired(1.02));
        assert!((c.ratio - 1.02).abs() < 1e-12, "{c:?}");
        assert_eq!(c.verdict, AdaptiveVerdict::Within);
        assert_eq!(check(paired(1.2)).verdict, AdaptiveVerdict::Behind);
        // Ratios 0.9-1.6 over 8 rounds: the median 1.25 is beyond 5%, its
        // interval reaches 0.9.
        let spread: Vec<f64> = best
            .iter()
            .enumerate()
            .map(|(i, b)| b * (0.9 + 0.1 * i as f64))
            .collect();
        let c = check(spread);
        assert_eq!(c.verdict, AdaptiveVerdict::Undecided, "{c:?}");
        assert!(c.ratio_ci95.unwrap()[0] <= 1.05);
    }

    #[test]
    fn adaptive_check_judges_on_the_confirmation_rounds() {
        let row = |waiting: &str, series: &str, normalized: f64, runs_ms: Vec<f64>| {
            check_row(waiting, series, Family::Waitwise, normalized, runs_ms)
        };
        // The measured runs put s//inf 10% ahead (its lucky rounds chose
        // it); the fresh rounds pair the two at 1.01.
        let mut rows = [
            row("s//inf", "s//inf", 0.9, vec![9.0; 5]),
            row("/b/0", "/b/0", 1.0, vec![10.0; 5]),
            row("adapt/b", "adapt/b", 1.0, vec![10.0; 5]),
        ];
        let measured = adaptive_checks(&rows, &[1]).remove(0);
        assert!(!measured.fresh_rounds);
        assert_eq!(measured.paired_rounds, 5);
        assert_eq!(measured.verdict, AdaptiveVerdict::Behind, "{measured:?}");
        rows[0].cells[0].confirm_ms = vec![10.0; 6];
        rows[2].cells[0].confirm_ms = vec![10.1; 6];
        let fresh = adaptive_checks(&rows, &[1]).remove(0);
        assert_eq!(fresh.best, "s//inf");
        assert!(fresh.fresh_rounds);
        assert_eq!(fresh.paired_rounds, 6);
        assert!((fresh.ratio - 1.01).abs() < 1e-12, "{fresh:?}");
        assert_eq!(fresh.verdict, AdaptiveVerdict::Within);
        // Only one of the two confirmed: the measured runs again.
        rows[0].cells[0].confirm_ms.clear();
        assert!(!adaptive_checks(&rows, &[1])[0].fresh_rounds);
    }

    #[test]
    fn every_loop_has_the_paper_policies_and_a_peer() {
        for w in Workload::ALL {
            let names: Vec<String> = waitings(w).into_iter().map(|c| c.label).collect();
            assert!(waitings(w)
                .iter()
                .any(|c| c.series == "adapt/b" && c.waiting == Waiting::AdaptiveAsDefault));
            for want in [
                "s//inf",
                "/b/0",
                "s/b/1",
                "s/b/0.5",
                "rand/b",
                w.pthread_name(),
            ] {
                assert!(
                    names.iter().any(|n| n == want),
                    "{want} missing for {}",
                    w.name()
                );
            }
            assert_eq!(
                waitings(w).iter().filter(|c| c.is_default).count(),
                1,
                "one default row"
            );
            assert!(waitings(w)
                .iter()
                .any(|c| matches!(c.waiting, Waiting::Policy(p) if is_spin(&p))));
        }
    }
}
