//! `waitwise barriers`: seed 000's Table 2 (Fig. 3a) on this machine, for
//! waitwise's barriers under each policy, the peers and a pure-spin
//! barrier, plus the cost of one barrier episode.
//!
//! **Table 2 (seed 000 Fig. 3a).** A heavy thread (the worker) runs an
//! `n x n` floating-point matrix multiply ([`Config::matrix_n`], 512 in the
//! paper) and then arrives at the barrier; a light thread (the waiter)
//! does nothing and re-enters the barrier at once, so it always waits for
//! the worker. Per implementation:
//!
//! - `T_work`: the worker's kernel time (interference from the waiter);
//! - `T_wakeup`: from the worker's arrival (`t0`, fenced RDTSC just before
//!   its `wait`) to the waiter leaving the barrier (`t2`, stamped as soon
//!   as its `wait` returns);
//! - `T_call`: the worker's time inside its `wait` (`t1 - t0`, `t1` just
//!   after it returns): what the last arrival pays to release the episode;
//! - waiter CPU: the waiter's CPU time over its wall time in `wait`.
//!
//! Each interval has one clock read subtracted. The waiter also stamps its
//! own arrival; a round where it arrived after the worker (roles swapped,
//! possible only if the kernel is shorter than a wake-up) is counted in
//! `swapped_rounds` and kept.
//!
//! **Episode cost.** `threads` threads call `wait` back to back; ns per
//! episode is a run's wall time over its episodes. Runs stop at
//! [`Config::max_episodes`] or after [`Config::budget_ms`], whichever
//! comes first: the leader of an episode checks the clock every
//! [`CHECK_EVERY`] episodes and, once over, schedules the stop for the next
//! episode, which every thread then sees (so all threads leave after the
//! same episode). The budget matters for polling barriers when threads
//! outnumber CPUs: the pure-spin barrier then takes milliseconds per
//! episode (a waiter spins until the scheduler preempts it), and its row
//! reports how few episodes fit in the budget. Runs of all
//! implementations are interleaved, so interference from other processes
//! spreads over all of them.
//!
//! **Pinning.** Table 2: worker and waiter as [`PairPlacement`] chooses
//! (the waiter on the worker's SMT sibling if there is one, else another
//! core). Episode cost: thread `i` on allowed CPU `i mod CPUs`
//! (round-robin; with 4 threads on 2 CPUs, two threads share each CPU).
//!
//! Table 2 runs in [`WAKEUP_PASSES`] passes over all implementations, each
//! with its own warm-up rounds, for the same reason.
//!
//! Statistics: warm-up rounds (Table 2) or one warm-up run per cell
//! (episode cost) are dropped, then the first and last 10% of rounds;
//! median, mean and 95% CIs; a median whose 95% CI is wider than 20% of it
//! flags the row as noisy.

use super::load::{load_average, load_note};
use super::table_parts::{
    hand_off_cells, hand_off_columns, name_and_family, not_run, push_figures_row, NOISY_NOTE,
};
use super::{bar_charts, is_selected, progress, ExperimentOutput, MetricBars, RenderedChart};
use crate::contender::barrier::{self, BarrierContender, BarrierSpec};
use crate::contender::Family;
use crate::export::{Cell, Column, Table};
use crate::kernel::MatMul;
use crate::measure::{summary_ns, timing_from_ticks, CpuShare, Timing};
use crate::placement::{pin, PairPlacement};
use crate::stats::Summary;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use waitwise_platform::affinity;
use waitwise_platform::clock::cycle_clock;

/// How often (in episodes) an episode's leader checks the run's time
/// budget. Guessed: one clock read per 8 episodes adds under 3 ns to an
/// episode, and a slow barrier overshoots its budget by at most 8 episodes.
pub const CHECK_EVERY: u64 = 8;

/// Passes of the Table 2 measurement: each runs every implementation for
/// a share of the rounds (with its own warm-up). Guessed: enough to spread
/// slowly drifting background load over all rows.
pub const WAKEUP_PASSES: usize = 3;

/// The thread counts the barrier goals are judged at: one per CPU on a
/// 2-CPU machine, and twice that.
const GOAL_THREADS: (usize, usize) = (2, 4);

/// Settings of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// Side of the worker's matrix multiply (Table 2).
    pub matrix_n: usize,
    /// Measured rounds of Table 2.
    pub rounds: usize,
    /// Warm-up rounds of Table 2 (dropped).
    pub warmup_rounds: usize,
    /// Thread counts of the episode-cost table.
    pub threads: Vec<usize>,
    /// Measured runs per episode-cost cell.
    pub runs: usize,
    /// Time budget of one episode-cost run, ms.
    pub budget_ms: u64,
    /// Most episodes of one episode-cost run.
    pub max_episodes: u64,
    /// Run only implementations whose name contains one of these (empty:
    /// all).
    pub only: Vec<String>,
}

impl Config {
    /// Quick: about 15 s on a 2-vCPU machine.
    pub fn quick() -> Self {
        Self {
            matrix_n: 128,
            rounds: 30,
            warmup_rounds: 3,
            threads: vec![GOAL_THREADS.0, GOAL_THREADS.1],
            runs: 7,
            budget_ms: 60,
            max_episodes: 2_000_000,
            only: Vec::new(),
        }
    }

    /// The paper's 512 x 512 kernel, more rounds and runs.
    pub fn full() -> Self {
        Self {
            matrix_n: 512,
            rounds: 50,
            warmup_rounds: 5,
            runs: 15,
            budget_ms: 200,
            max_episodes: 10_000_000,
            ..Self::quick()
        }
    }

    /// A tiny configuration for tests.
    pub fn tiny() -> Self {
        Self {
            matrix_n: 16,
            rounds: 3,
            warmup_rounds: 1,
            threads: vec![2, 3],
            runs: 2,
            budget_ms: 2,
            max_episodes: 2_000,
            only: Vec::new(),
        }
    }
}

/// Seed 000 Table 2 figures of one implementation.
#[derive(Clone, Debug, Serialize)]
pub struct WakeupResult {
    /// The worker's kernel time, ns.
    pub t_work_ns: Option<Summary>,
    /// Worker's arrival to the waiter leaving the barrier.
    pub t_wakeup: Option<Timing>,
    /// The worker's (last arrival's) time inside `wait`.
    pub t_call: Option<Timing>,
    /// Waiter CPU time over its wall time in `wait` (1.0 = a whole CPU).
    pub waiter_cpu_fraction: Option<Summary>,
    /// Measured rounds where the waiter arrived after the worker.
    pub swapped_rounds: usize,
}

/// Episode cost of one implementation at one thread count.
#[derive(Clone, Debug, Serialize)]
pub struct EpisodeResult {
    /// Threads in the run.
    pub threads: usize,
    /// Why it did not run ("n/a: two parties only"), if it did not.
    pub not_available: Option<String>,
    /// Wall time per episode, ns (one sample per run).
    pub ns_per_episode: Option<Summary>,
    /// The runs' ns per episode, in round order (every implementation
    /// runs once per round), for ratios within a round.
    pub runs_ns: Vec<f64>,
    /// Fewest episodes one measured run completed.
    pub min_episodes: u64,
    /// Whether some run stopped at the time budget rather than at
    /// `max_episodes`.
    pub budget_limited: bool,
}

/// One implementation's row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Implementation name.
    pub name: String,
    /// waitwise, peer or baseline.
    pub family: Family,
    /// The explicit waitwise policy, if any.
    pub policy: Option<String>,
    /// Why Table 2 did not run, if it did not.
    pub not_available: Option<String>,
    /// Seed 000 Table 2 figures.
    pub wakeup: Option<WakeupResult>,
    /// Episode cost, one entry per thread count of the config.
    pub episodes: Vec<EpisodeResult>,
}

/// The experiment's result.
#[derive(Clone, Debug, Serialize)]
pub struct BarriersResult {
    /// The settings used.
    pub config: Config,
    /// Where the Table 2 threads ran.
    pub placement: PairPlacement,
    /// CPUs this process may use.
    pub allowed_cpus: usize,
    /// The episode-cost pinning, one line per thread count.
    pub episode_pinning: Vec<String>,
    /// The block cost `B` waitwise measured, ns.
    pub block_ns: f64,
    /// `s//inf`'s deadlock-avoidance timeout, ns.
    pub spin_timeout_ns: f64,
    /// 1-minute load average before and after the run (other processes).
    pub load_average: [Option<f64>; 2],
    /// One row per implementation.
    pub rows: Vec<Row>,
}

/// CPUs for `threads` threads: thread `i` on allowed CPU `i mod CPUs`
/// (`None`, unpinned, when the allowed set cannot be read).
pub fn round_robin(threads: usize) -> Vec<Option<usize>> {
    let allowed = affinity::allowed_cpus().unwrap_or_default();
    (0..threads)
        .map(|i| (!allowed.is_empty()).then(|| allowed[i % allowed.len()]))
        .collect()
}

/// Says where `cpus` put the threads: `4 threads on cpu0,cpu1,cpu0,cpu1
/// (round-robin, 2 per CPU)`.
pub fn describe_pinning(cpus: &[Option<usize>]) -> String {
    let list: Vec<String> = cpus
        .iter()
        .map(|c| c.map_or("unpinned".into(), |c| format!("cpu{c}")))
        .collect();
    let distinct = {
        let mut d: Vec<usize> = cpus.iter().flatten().copied().collect();
        d.sort_unstable();
        d.dedup();
        d.len()
    };
    let share = if distinct > 0 && cpus.len() > distinct {
        format!(
            "round-robin, up to {} threads per CPU",
            cpus.len().div_ceil(distinct)
        )
    } else {
        "one thread per CPU".into()
    };
    format!("{} threads on {} ({share})", cpus.len(), list.join(","))
}

struct WakeupRaw {
    t_work_ns: Vec<f64>,
    t_wakeup: Vec<u64>,
    t_call: Vec<u64>,
    cpu_fraction: Vec<f64>,
    swapped: usize,
}

impl WakeupRaw {
    /// Adds another pass's rounds after these.
    fn append(&mut self, mut other: WakeupRaw) {
        self.t_work_ns.append(&mut other.t_work_ns);
        self.t_wakeup.append(&mut other.t_wakeup);
        self.t_call.append(&mut other.t_call);
        self.cpu_fraction.append(&mut other.cpu_fraction);
        self.swapped += other.swapped;
    }
}

/// Seed 000 Fig. 3a, `warmup + rounds` times.
fn run_wakeup(
    b: Arc<dyn BarrierContender>,
    placement: &PairPlacement,
    n: usize,
    warmup: usize,
    rounds: usize,
) -> WakeupRaw {
    let total = warmup + rounds;
    let waiter = {
        let (b, cpu) = (b.clone(), placement.waiter_cpu);
        std::thread::spawn(move || {
            pin(cpu);
            let clock = cycle_clock();
            let (mut arrived, mut left, mut cpu_frac) = (
                Vec::with_capacity(total),
                Vec::with_capacity(total),
                Vec::with_capacity(total),
            );
            for _ in 0..total {
                let share = CpuShare::start();
                arrived.push(clock.start());
                b.wait(1);
                left.push(clock.start());
                cpu_frac.push(share.fraction());
            }
            (arrived, left, cpu_frac)
        })
    };
    let worker = {
        let (b, cpu) = (b.clone(), placement.worker_cpu);
        std::thread::spawn(move || {
            pin(cpu);
            let clock = cycle_clock();
            let mut kernel = MatMul::new(n);
            let (mut t0s, mut calls, mut works) = (
                Vec::with_capacity(total),
                Vec::with_capacity(total),
                Vec::with_capacity(total),
            );
            for _ in 0..total {
                let w0 = clock.start();
                kernel.run();
                let t0 = clock.start();
                b.wait(0);
                let t1 = clock.end();
                works.push(clock.ticks_to_ns(t0.saturating_sub(w0)));
                t0s.push(t0);
                calls.push(t1.saturating_sub(t0));
            }
            (t0s, calls, works)
        })
    };
    let (arrived, left, cpu_frac) = waiter.join().expect("waiter thread panicked");
    let (t0s, calls, works) = worker.join().expect("worker thread panicked");
    let wake: Vec<u64> = left
        .iter()
        .zip(&t0s)
        .map(|(l, t)| l.saturating_sub(*t))
        .collect();
    let swapped = arrived
        .iter()
        .zip(&t0s)
        .skip(warmup)
        .filter(|(a, t)| a > t)
        .count();
    WakeupRaw {
        t_work_ns: works[warmup..].to_vec(),
        t_wakeup: wake[warmup..].to_vec(),
        t_call: calls[warmup..].to_vec(),
        cpu_fraction: cpu_frac[warmup..].to_vec(),
        swapped,
    }
}

/// One episode-cost run: `(wall time, episodes)`.
fn run_episodes(
    b: &dyn BarrierContender,
    cpus: &[Option<usize>],
    budget: Duration,
    max_episodes: u64,
) -> (Duration, u64) {
    let threads = cpus.len();
    let max_episodes = max_episodes.max(1);
    let stop_at = AtomicU64::new(u64::MAX);
    let start = std::sync::Barrier::new(threads + 1);
    let t0 = std::thread::scope(|s| {
        for (tid, cpu) in cpus.iter().enumerate() {
            let (b, stop_at, start) = (b, &stop_at, &start);
            let cpu = *cpu;
            s.spawn(move || {
                pin(cpu);
                start.wait();
                let begun = Instant::now();
                let mut done = 0u64;
                loop {
                    let leader = b.wait(tid);
                    done += 1;
                    if leader
                        && (done.is_multiple_of(CHECK_EVERY) || done >= max_episodes)
                        && (done >= max_episodes || begun.elapsed() >= budget)
                    {
                        // Schedule the stop after the next episode: this
                        // store happens before our next arrival, so every
                        // thread sees it when that episode releases it
                        // (Relaxed: the barrier, not the CAS, orders it).
                        // A CAS: only the first decision counts.
                        let _ = stop_at.compare_exchange(
                            u64::MAX,
                            done + 1,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        );
                    }
                    // Relaxed: the barrier orders the store before this load
                    // in the episode that must see it.
                    if done >= stop_at.load(Ordering::Relaxed) {
                        break;
                    }
                }
            });
        }
        start.wait();
        Instant::now()
    });
    // Relaxed: the scope joined every thread, which orders their stores
    // before this load.
    (t0.elapsed(), stop_at.load(Ordering::Relaxed))
}

fn summarize_wakeup(raw: WakeupRaw) -> WakeupResult {
    WakeupResult {
        t_work_ns: summary_ns(&raw.t_work_ns),
        t_wakeup: timing_from_ticks(&raw.t_wakeup),
        t_call: timing_from_ticks(&raw.t_call),
        waiter_cpu_fraction: summary_ns(&raw.cpu_fraction),
        swapped_rounds: raw.swapped,
    }
}

/// Runs the experiment.
pub fn run(config: &Config) -> BarriersResult {
    let load_before = load_average();
    let placement = PairPlacement::choose();
    let specs: Vec<BarrierSpec> = barrier::all()
        .into_iter()
        .filter(|s| is_selected(&config.only, &s.name))
        .collect();
    let mut rows: Vec<Row> = specs
        .iter()
        .map(|s| Row {
            name: s.name.clone(),
            family: s.family,
            policy: s.policy.map(|p| p.name()),
            not_available: s.unsupported(2),
            wakeup: None,
            episodes: Vec::new(),
        })
        .collect();
    let mut steps = Steps {
        step: 0,
        steps: WAKEUP_PASSES + config.threads.len() * (specs.len() + 1),
    };
    let raws = wakeup_passes(config, &specs, &rows, &placement, &mut steps);
    for (row, raw) in rows.iter_mut().zip(raws) {
        row.wakeup = raw.map(summarize_wakeup);
    }
    let mut pinning = Vec::new();
    for &threads in &config.threads {
        let cpus = if threads == 2 {
            vec![placement.worker_cpu, placement.waiter_cpu]
        } else {
            round_robin(threads)
        };
        pinning.push(describe_pinning(&cpus));
        let cells = episode_cells(config, &specs, threads, &cpus, &mut steps);
        for (row, cell) in rows.iter_mut().zip(cells) {
            row.episodes.push(cell);
        }
    }
    BarriersResult {
        config: config.clone(),
        placement,
        allowed_cpus: waitwise::barrier::allowed_cpus(),
        episode_pinning: pinning,
        block_ns: waitwise::policy::block_ns(),
        spin_timeout_ns: barrier::spin_timeout().as_nanos() as f64,
        load_average: [load_before, load_average()],
        rows,
    }
}

/// The progress line's step counter.
struct Steps {
    step: usize,
    steps: usize,
}

impl Steps {
    /// Moves to the next step.
    fn next(&mut self) {
        self.step += 1;
    }

    /// Says `what` the current step does.
    fn say(&self, what: &str) {
        progress("barriers", self.step, self.steps, what);
    }
}

/// Table 2 in passes, each running every implementation in turn, so that
/// background load drifting during the run spreads over all rows; one
/// accumulated record per implementation (`None` where it cannot run).
fn wakeup_passes(
    config: &Config,
    specs: &[BarrierSpec],
    rows: &[Row],
    placement: &PairPlacement,
    steps: &mut Steps,
) -> Vec<Option<WakeupRaw>> {
    let mut raws: Vec<Option<WakeupRaw>> = specs.iter().map(|_| None).collect();
    let per_pass = config.rounds.div_ceil(WAKEUP_PASSES).max(1);
    for pass in 0..WAKEUP_PASSES {
        steps.next();
        steps.say(&format!(
            "worker/waiter rounds, pass {}/{WAKEUP_PASSES}",
            pass + 1
        ));
        for (i, spec) in specs.iter().enumerate() {
            if rows[i].not_available.is_some() {
                continue;
            }
            let rounds = per_pass.min(config.rounds.saturating_sub(pass * per_pass));
            if rounds == 0 {
                continue;
            }
            let raw = run_wakeup(
                spec.make(2, false),
                placement,
                config.matrix_n,
                config.warmup_rounds,
                rounds,
            );
            match &mut raws[i] {
                Some(acc) => acc.append(raw),
                slot => *slot = Some(raw),
            }
        }
    }
    raws
}

/// Table 3 at `threads` threads pinned to `cpus`: every implementation
/// warmed up, then the runs, each running every implementation in turn;
/// one cell per implementation.
fn episode_cells(
    config: &Config,
    specs: &[BarrierSpec],
    threads: usize,
    cpus: &[Option<usize>],
    steps: &mut Steps,
) -> Vec<EpisodeResult> {
    let budget = Duration::from_millis(config.budget_ms);
    let barriers: Vec<Option<Arc<dyn BarrierContender>>> = specs
        .iter()
        .map(|s| {
            s.unsupported(threads)
                .is_none()
                .then(|| s.make(threads, false))
        })
        .collect();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); specs.len()];
    let mut min_episodes = vec![u64::MAX; specs.len()];
    let mut limited = vec![false; specs.len()];
    for (i, b) in barriers.iter().enumerate() {
        steps.next();
        steps.say(&format!("{}: {threads} threads, warm-up", specs[i].name));
        if let Some(b) = b {
            run_episodes(b.as_ref(), cpus, budget / 4, config.max_episodes / 4);
        }
    }
    steps.next();
    for r in 0..config.runs {
        steps.say(&format!("{threads} threads: run {}/{}", r + 1, config.runs));
        for (i, b) in barriers.iter().enumerate() {
            if let Some(b) = b {
                let (t, episodes) = run_episodes(b.as_ref(), cpus, budget, config.max_episodes);
                samples[i].push(t.as_nanos() as f64 / episodes as f64);
                min_episodes[i] = min_episodes[i].min(episodes);
                limited[i] |= episodes < config.max_episodes;
            }
        }
    }
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let not_available = spec.unsupported(threads);
            EpisodeResult {
                threads,
                ns_per_episode: if not_available.is_none() {
                    summary_ns(&samples[i])
                } else {
                    None
                },
                runs_ns: samples[i].clone(),
                min_episodes: if min_episodes[i] == u64::MAX {
                    0
                } else {
                    min_episodes[i]
                },
                budget_limited: limited[i],
                not_available,
            }
        })
        .collect()
}

impl BarriersResult {
    /// The row named `name`.
    pub fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// Median ns per episode of the row whose name starts with `prefix`, at
    /// `threads` threads.
    pub fn episode_ns(&self, prefix: &str, threads: usize) -> Option<f64> {
        let row = self.rows.iter().find(|r| r.name.starts_with(prefix))?;
        row.episodes
            .iter()
            .find(|e| e.threads == threads)?
            .ns_per_episode
            .map(|s| s.median)
    }

    /// Episode cost of the row named by prefix `a` over that of `b`, at
    /// `threads`: the median over rounds of the ratio within a round (the
    /// runs of one round are seconds closer together than the rounds, and
    /// on a VM the machine's speed drifts between rounds).
    pub fn episode_ratio(&self, a: &str, b: &str, threads: usize) -> Option<f64> {
        let runs = |prefix: &str| {
            let row = self.rows.iter().find(|r| r.name.starts_with(prefix))?;
            row.episodes
                .iter()
                .find(|e| e.threads == threads && e.not_available.is_none())
                .map(|e| e.runs_ns.clone())
        };
        let (a, b) = (runs(a)?, runs(b)?);
        let ratios: Vec<f64> = a
            .iter()
            .zip(&b)
            .filter(|(_, &y)| y > 0.0)
            .map(|(x, y)| x / y)
            .collect();
        summary_ns(&ratios).map(|s| s.median)
    }

    /// Median T_wakeup of the row whose name starts with `prefix`, ns.
    pub fn wakeup_ns(&self, prefix: &str) -> Option<f64> {
        let row = self.rows.iter().find(|r| r.name.starts_with(prefix))?;
        row.wakeup.as_ref()?.t_wakeup.as_ref().map(|t| t.ns.median)
    }

    fn wakeup_table(&self) -> Table {
        let mut t = Table::new(
            "barriers",
            format!(
                "Barriers, worker runs a {0}x{0} matrix multiply, helper waits (Anastopoulos & Koziris 2008, Table 2)",
                self.config.matrix_n
            ),
            [
                vec![
                    Column::new("implementation", None, "barrier and its waiting"),
                    Column::new("family", None, "waitwise, peer or baseline"),
                ],
                hand_off_columns(
                    "worker's arrival to the waiter leaving (median)",
                    "last arrival's time inside wait (median)",
                    "waiter CPU time over its wall time in wait (median)",
                ),
                vec![Column::new(
                    "swapped_rounds",
                    None,
                    "rounds where the waiter arrived last (kept)",
                )],
            ]
            .concat(),
        );
        for r in &self.rows {
            let figures = r.wakeup.as_ref().map(|w| {
                let mut cells = hand_off_cells(
                    w.t_work_ns.as_ref(),
                    w.t_wakeup.as_ref(),
                    w.t_call.as_ref(),
                    w.waiter_cpu_fraction.as_ref(),
                );
                cells.push(Cell::Integer(w.swapped_rounds as i64));
                (cells, w.t_wakeup.as_ref().is_some_and(|t| t.ns.is_noisy()))
            });
            push_figures_row(
                &mut t,
                name_and_family(&r.name, r.family),
                r.not_available.as_deref(),
                figures,
                8,
            );
        }
        t
    }

    fn episode_table(&self) -> Table {
        let mut columns = vec![
            Column::new("implementation", None, "barrier and its waiting"),
            Column::new("family", None, "waitwise, peer or baseline"),
        ];
        for &n in &self.config.threads {
            columns.push(Column::new(
                format!("t{n}_episode"),
                Some("ns"),
                format!("{n} threads: wall time per episode (median over runs)"),
            ));
            columns.push(Column::new(
                format!("t{n}_episode_median_ci95"),
                Some("ns"),
                format!("{n} threads: half the width of the 95% CI of the median"),
            ));
            columns.push(Column::new(
                format!("t{n}_min_episodes"),
                None,
                format!("{n} threads: fewest episodes in one run"),
            ));
        }
        let mut t = Table::new(
            "barriers_episode",
            "Barrier episode cost: threads call wait back to back",
            columns,
        );
        for r in &self.rows {
            let mut cells = name_and_family(&r.name, r.family);
            let mut notes = Vec::new();
            for e in &r.episodes {
                match (&e.not_available, &e.ns_per_episode) {
                    (None, Some(s)) => {
                        cells.extend([
                            Cell::Number(s.median),
                            Cell::Number(s.median_ci95_half_width()),
                            Cell::Integer(e.min_episodes as i64),
                        ]);
                        if s.is_noisy() {
                            notes.push(format!("{} threads {NOISY_NOTE}", e.threads));
                        }
                        if e.budget_limited
                            && e.threads > self.allowed_cpus
                            && e.min_episodes < 1000
                        {
                            notes.push(format!(
                                "{} threads: time-budgeted ({} ms per run)",
                                e.threads, self.config.budget_ms
                            ));
                        }
                    }
                    (na, _) => cells.extend(not_run(na.as_deref(), 3)),
                }
            }
            t.push_row(cells, (!notes.is_empty()).then(|| notes.join("; ")));
        }
        t
    }
}

impl ExperimentOutput for BarriersResult {
    fn tables(&self) -> Vec<Table> {
        vec![self.wakeup_table(), self.episode_table()]
    }

    fn charts(&self) -> Vec<RenderedChart> {
        let names: Vec<String> = self.rows.iter().map(|r| r.name.clone()).collect();
        // Each row's summary of one figure; the charts draw its median with
        // the median's 95% CI as a whisker.
        let metric = |pick: &dyn Fn(&WakeupResult) -> Option<Summary>| -> Vec<Option<Summary>> {
            self.rows
                .iter()
                .map(|r| r.wakeup.as_ref().and_then(pick))
                .collect()
        };
        let mut charts = vec![
            MetricBars::medians_with_ci(
                "Barrier T_wakeup: worker's arrival to waiter leaving",
                "wake-up latency (us, log scale)",
                &metric(&|w| w.t_wakeup.as_ref().map(|t| t.ns)),
                1e-3,
                true,
            ),
            MetricBars::medians_with_ci(
                "Barrier T_call: last arrival's time in wait",
                "call latency (us, log scale)",
                &metric(&|w| w.t_call.as_ref().map(|t| t.ns)),
                1e-3,
                true,
            ),
            MetricBars::medians_with_ci(
                "Barrier T_work: worker's kernel time (interference)",
                "kernel time (ms)",
                &metric(&|w| w.t_work_ns),
                1e-6,
                false,
            ),
            MetricBars::medians_with_ci(
                "Waiter CPU use while waiting at the barrier",
                "CPU time / wall time (%)",
                &metric(&|w| w.waiter_cpu_fraction),
                100.0,
                false,
            ),
        ];
        let episodes = |n: usize| -> Vec<Option<Summary>> {
            self.rows
                .iter()
                .map(|r| {
                    r.episodes
                        .iter()
                        .find(|e| e.threads == n)
                        .and_then(|e| e.ns_per_episode)
                })
                .collect()
        };
        let threads = &self.config.threads;
        let series = threads
            .iter()
            .map(|&n| {
                let medians = episodes(n).iter().map(|s| s.map(|s| s.median)).collect();
                (format!("{n} threads"), medians)
            })
            .collect();
        let intervals = threads
            .iter()
            .map(|&n| {
                let ends = |s: Summary| (s.median_ci95_low, s.median_ci95_high);
                episodes(n).into_iter().map(|s| s.map(ends)).collect()
            })
            .collect();
        charts.push(MetricBars {
            title: "Barrier episode cost".into(),
            y_label: "wall time per episode (ns, log scale)".into(),
            series,
            intervals,
            y_log: true,
        });
        bar_charts(&names, charts)
    }

    fn notes(&self) -> Vec<String> {
        let mut n = vec![
            format!("Table 2 placement: {}.", self.placement.describe()),
            format!(
                "Barrier (default) waits {} while the threads fit on the CPUs, {} when they outnumber them.",
                waitwise::barrier::default_policy(1).describe(),
                waitwise::barrier::default_policy(usize::MAX).describe()
            ),
        ];
        n.extend(load_note(
            self.load_average[0],
            self.load_average[1],
            self.allowed_cpus,
        ));
        for p in &self.episode_pinning {
            n.push(format!("Episode cost pinning: {p}."));
        }
        n.push(format!(
            "Block cost B = {:.0} ns; s//inf blocks after its deadlock-avoidance timeout of {:.0} us ({}: 100 B is Lim & Agarwal's 50,000 cycles at B = 500, and the floor about a scheduler time slice).",
            self.block_ns,
            self.spin_timeout_ns / 1e3,
            crate::contender::barrier::spin_timeout_rule()
        ));
        n.push(format!(
            "Episode runs stop at {} episodes or after {} ms, whichever comes first; polling barriers with more threads than CPUs finish few episodes in that time (see the fewest-episodes column).",
            self.config.max_episodes, self.config.budget_ms
        ));
        let swapped: Vec<String> = self
            .rows
            .iter()
            .filter_map(|r| {
                r.wakeup
                    .as_ref()
                    .filter(|w| w.swapped_rounds > 0)
                    .map(|w| format!("{} ({})", r.name, w.swapped_rounds))
            })
            .collect();
        if !swapped.is_empty() {
            n.push(format!(
                "Rounds where the waiter arrived after the worker: {}.",
                swapped.join(", ")
            ));
        }
        let (two, four) = GOAL_THREADS;
        let (default, spin, pthread) = ("Barrier (default", "spin", "pthread_barrier_wait");
        // Ratios: the median over rounds of the ratio within a round.
        if let (Some(d), Some(s), Some(p), Some(vs_spin), Some(vs_default)) = (
            self.episode_ns(default, two),
            self.episode_ns(spin, two),
            self.episode_ns(pthread, two),
            self.episode_ratio(default, spin, two),
            self.episode_ratio(pthread, default, two),
        ) {
            n.push(format!(
                "{two} threads: default Barrier {d:.0} ns/episode, {vs_spin:.2}x the pure-spin barrier's {s:.0} ns; pthread_barrier_wait {p:.0} ns, {vs_default:.1}x slower than the default Barrier. Ratios are medians over rounds of the ratio within a round."
            ));
        }
        if let (Some(d), Some(p), Some(vs_pthread)) = (
            self.episode_ns(default, four),
            self.episode_ns(pthread, four),
            self.episode_ratio(default, pthread, four),
        ) {
            let spin = self.episode_ns(spin, four).map_or(String::new(), |s| {
                format!("; pure spin {:.0} us/episode", s / 1e3)
            });
            n.push(format!(
                "{four} threads on {} CPUs: default Barrier {d:.0} ns/episode, {vs_pthread:.2}x pthread_barrier_wait's {p:.0} ns{spin}.",
                self.allowed_cpus
            ));
        }
        if let (Some(d), Some(p), Some(s)) = (
            self.wakeup_ns(default),
            self.wakeup_ns(pthread),
            self.wakeup_ns(spin),
        ) {
            n.push(format!("T_wakeup: default Barrier {d:.0} ns, pthread_barrier_wait {p:.0} ns ({:.1}x), pure spin {s:.0} ns.", p / d));
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::agreement::assert_exports_agree;

    #[test]
    fn tiny_run_fills_both_tables() {
        let mut cfg = Config::tiny();
        cfg.only = vec![
            "default".into(),
            "/b/0".into(),
            "pthread".into(),
            "spin".into(),
            "std".into(),
        ];
        let res = run(&cfg);
        assert!(res.rows.iter().any(|r| r.name.starts_with("PairBarrier")));
        let d = res
            .rows
            .iter()
            .find(|r| r.name.starts_with("Barrier (default"))
            .unwrap();
        assert!(d.wakeup.as_ref().unwrap().t_wakeup.is_some());
        assert_eq!(d.episodes.len(), 2);
        assert!(d.episodes.iter().all(|e| e.ns_per_episode.is_some()));
        let pair = res
            .rows
            .iter()
            .find(|r| r.name.starts_with("PairBarrier"))
            .unwrap();
        assert!(
            pair.episodes[1].not_available.is_some(),
            "pair barrier at 3 threads must be n/a"
        );
        let tables = res.tables();
        assert_eq!(tables.len(), 2);
        for t in &tables {
            assert_exports_agree(t);
            assert_eq!(t.rows.len(), res.rows.len());
        }
        let json = serde_json::to_value(&res).unwrap();
        for key in [
            "config",
            "placement",
            "allowed_cpus",
            "episode_pinning",
            "block_ns",
            "spin_timeout_ns",
            "rows",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
        let row = &json["rows"][0];
        for key in [
            "name",
            "family",
            "policy",
            "not_available",
            "wakeup",
            "episodes",
        ] {
            assert!(row.get(key).is_some(), "row.{key}");
        }
        assert_eq!(res.charts().len(), 5);
        assert!(!res.notes().is_empty());
    }

    #[test]
    fn episode_runs_stop_together() {
        let b = crate::contender::barrier::spin::SpinBarrier::new(2);
        let (_, episodes) = run_episodes(&b, &[None, None], Duration::from_secs(10), 40);
        assert_eq!(
            episodes, 41,
            "stop is scheduled one episode after max_episodes is reached"
        );
        let (t, episodes) = run_episodes(&b, &[None, None], Duration::ZERO, 1_000_000);
        assert!(episodes <= CHECK_EVERY + 1 && t < Duration::from_secs(5));
    }

    #[test]
    fn round_robin_wraps() {
        let allowed = affinity::allowed_cpus().unwrap_or_default();
        let cpus = round_robin(5);
        assert_eq!(cpus.len(), 5);
        if !allowed.is_empty() {
            for (i, c) in cpus.iter().enumerate() {
                assert_eq!(*c, Some(allowed[i % allowed.len()]));
            }
        }
        assert!(describe_pinning(&[Some(0), Some(1), Some(0), Some(1)])
            .contains("up to 2 threads per CPU"));
    }
}
