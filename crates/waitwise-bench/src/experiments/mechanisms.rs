//! `waitwise mechanisms`: seed 000's Table 1 (condition wait / notify) on
//! this machine, for every waitwise mechanism and policy and the peers.
//!
//! A worker thread does something, then notifies a waiter that has been
//! waiting on another CPU (its SMT sibling when there is one). Three regimes:
//!
//! - **work** (seed 000 Fig. 2b): the worker runs an `n x n` floating-point
//!   matrix multiply (512 in the paper, [`Config::matrix_n`]). Measured:
//!   `T_work` (the worker's kernel time: interference from the waiter),
//!   `T_wakeup` (notify to waiter running), `T_call` (time inside notify),
//!   and the waiter's CPU time over its wall time.
//! - **short**: the worker notifies [`Config::short_delay_fraction`] of the
//!   default `L_poll` after the waiter started waiting, so two-phase waiters
//!   are still polling: the responsiveness a two-phase policy keeps.
//! - **sleep**: the worker sleeps [`Config::sleep_ms`] before notifying: how
//!   much CPU a long wait burns.
//!
//! Stamps: the worker takes `t0` (fenced RDTSC) just before `notify` and
//! `t1` just after; the waiter takes `t2` as soon as `wait` returns.
//! `T_call = t1 - t0`, `T_wakeup = t2 - t0` (invariant TSCs agree across
//! CPUs), each less one clock read. Warm-up rounds are dropped, then the
//! first and last 10% of rounds (seed 004), and median, mean and 95% CI are
//! reported; a median whose 95% CI is wider than 20% of it flags the row as
//! noisy.
//!
//! In the work and short regimes one worker and one waiter run every
//! contender in turn, one round each, cycle after cycle: on a VM the
//! hand-off's speed switches between modes for tens to hundreds of
//! milliseconds (a spinning waiter's work-regime `T_wakeup` can double
//! from one run to the next), so contenders run one after another would
//! each meet a different machine. Interleaved by round,
//! they meet the same one, and each cycle gives a like-for-like ratio to
//! `spin` ([`Row::work_wakeup_vs_spin`]), which the ranking notes use.

use super::table_parts::{
    hand_off_cells, hand_off_columns, median_cycles, median_ns, median_pct, name_and_family,
    push_figures_row,
};
use super::{
    bar_charts, is_selected, not_available_note, progress, ExperimentOutput, MetricBars,
    RenderedChart,
};
use crate::contender::{self, Contender, Family, WaitPair};
use crate::export::{Cell, Column, Table};
use crate::harness_wait::spin_until;
use crate::kernel::MatMul;
use crate::measure::{summary_ns, timing_from_ticks, CpuShare, Timing};
use crate::placement::{pin, PairPlacement};
use crate::stats::Summary;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use waitwise::policy::{Policy, SyncKind};
use waitwise_platform::clock::cycle_clock;

/// Settings of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// Side of the worker's matrix multiply (work regime).
    pub matrix_n: usize,
    /// Measured rounds in the work regime.
    pub work_rounds: usize,
    /// Measured rounds in the short regime.
    pub short_rounds: usize,
    /// Fraction of the default `L_poll` the worker waits in the short regime.
    pub short_delay_fraction: f64,
    /// Measured rounds in the sleep regime.
    pub sleep_rounds: usize,
    /// How long the worker sleeps in the sleep regime, ms.
    pub sleep_ms: u64,
    /// Warm-up rounds (cycles over the contenders in the work and short
    /// regimes) before each measurement (dropped).
    pub warmup_rounds: usize,
    /// Run only contenders whose name contains one of these (empty: all).
    pub only: Vec<String>,
}

impl Config {
    /// Quick: seconds on a 2-vCPU machine.
    pub fn quick() -> Self {
        Self {
            matrix_n: 128,
            work_rounds: 200,
            short_rounds: 200,
            short_delay_fraction: 0.25,
            sleep_rounds: 3,
            sleep_ms: 50,
            warmup_rounds: 3,
            only: Vec::new(),
        }
    }

    /// The paper's size: 512 x 512, 50 rounds.
    pub fn full() -> Self {
        Self {
            matrix_n: 512,
            work_rounds: 50,
            short_rounds: 2000,
            sleep_rounds: 10,
            warmup_rounds: 5,
            ..Self::quick()
        }
    }

    /// A tiny configuration for tests.
    pub fn tiny() -> Self {
        Self {
            matrix_n: 16,
            work_rounds: 3,
            short_rounds: 5,
            short_delay_fraction: 0.25,
            sleep_rounds: 1,
            sleep_ms: 2,
            warmup_rounds: 1,
            only: Vec::new(),
        }
    }
}

/// Figures of one contender in one regime.
#[derive(Clone, Debug, Serialize)]
pub struct RegimeResult {
    /// The worker's time for its action (kernel, delay or sleep), ns.
    pub t_work_ns: Option<Summary>,
    /// Notify to waiter running.
    pub t_wakeup: Option<Timing>,
    /// Time inside notify.
    pub t_call: Option<Timing>,
    /// Waiter CPU time over the wait's wall time (1.0 = a whole CPU).
    pub waiter_cpu_fraction: Option<Summary>,
}

impl RegimeResult {
    fn noisy(&self) -> bool {
        self.t_wakeup.as_ref().is_some_and(|t| t.ns.is_noisy())
    }
}

/// One contender's row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Contender name.
    pub name: String,
    /// waitwise or peer.
    pub family: Family,
    /// The waitwise policy (`s/b/0.54`, ...), if any.
    pub policy: Option<String>,
    /// Why it did not run ("n/a: CPU lacks WAITPKG"), if it did not.
    pub not_available: Option<String>,
    /// Work regime (Anastopoulos & Koziris 2008, Table 1).
    pub work: Option<RegimeResult>,
    /// Notify inside the default `L_poll`.
    pub short: Option<RegimeResult>,
    /// Long wait (sleep).
    pub sleep: Option<RegimeResult>,
    /// Work regime: this row's `T_wakeup` over `spin`'s in the same cycle
    /// of interleaved rounds, summarized over the cycles (median and its
    /// 95% interval); `None` for `spin` itself, or when either did not run.
    pub work_wakeup_vs_spin: Option<Summary>,
}

/// The experiment's result.
#[derive(Clone, Debug, Serialize)]
pub struct MechanismsResult {
    /// The settings used.
    pub config: Config,
    /// Where the threads ran.
    pub placement: PairPlacement,
    /// The default producer-consumer `L_poll`, ns.
    pub default_poll_limit_ns: f64,
    /// The short regime's notify delay, ns.
    pub short_delay_ns: f64,
    /// One row per contender.
    pub rows: Vec<Row>,
}

enum Action {
    Work(usize),
    Delay(Duration),
    Sleep(Duration),
}

struct Raw {
    t_work_ns: Vec<f64>,
    t_wakeup: Vec<u64>,
    t_call: Vec<u64>,
    cpu_fraction: Vec<f64>,
}

/// The worker yields once per this many polls while it waits for the
/// waiter's next step. Guessed: rare against a hand-off, often enough
/// that a waiter descheduled on the worker's CPU runs soon.
const HARNESS_YIELD_EVERY: u32 = 256;

/// Runs `pairs` in turn on one worker and one waiter thread, one
/// hand-off each under `action`, for `warmup + rounds` cycles; returns each
/// pair's samples of the measured cycles, in cycle order.
fn run_pairs(
    pairs: &[Arc<dyn WaitPair>],
    placement: &PairPlacement,
    warmup: usize,
    rounds: usize,
    action: &Action,
) -> Vec<Raw> {
    let k = pairs.len();
    let total = (warmup + rounds) * k;
    let ready = Arc::new(AtomicU64::new(0));
    let waiter = {
        let (pairs, ready, cpu) = (pairs.to_vec(), ready.clone(), placement.waiter_cpu);
        std::thread::spawn(move || {
            pin(cpu);
            waiter_steps(&pairs, &ready, total)
        })
    };
    let worker = {
        let (pairs, ready, cpu) = (pairs.to_vec(), ready.clone(), placement.worker_cpu);
        let mut kernel = match action {
            Action::Work(n) => Some(MatMul::new(*n)),
            _ => None,
        };
        let action = match action {
            Action::Work(n) => Action::Work(*n),
            Action::Delay(d) => Action::Delay(*d),
            Action::Sleep(d) => Action::Sleep(*d),
        };
        std::thread::spawn(move || {
            pin(cpu);
            worker_steps(&pairs, &ready, total, &action, kernel.as_mut())
        })
    };
    let (woke, cpu_frac) = waiter.join().expect("waiter thread panicked");
    let (t0s, calls, works) = worker.join().expect("worker thread panicked");
    // Pair `j`'s measured samples: steps `j`, `j + k`, ... past the warm-up.
    let of = |j: usize| (warmup * k + j..total).step_by(k);
    (0..k)
        .map(|j| Raw {
            t_work_ns: of(j).map(|s| works[s]).collect(),
            t_wakeup: of(j).map(|s| woke[s].saturating_sub(t0s[s])).collect(),
            t_call: of(j).map(|s| calls[s]).collect(),
            cpu_fraction: of(j).map(|s| cpu_frac[s]).collect(),
        })
        .collect()
}

/// The waiter's side of [`run_pairs`]: for each step, publishes it and
/// waits on its pair; returns each step's wake-up stamp and CPU share.
fn waiter_steps(
    pairs: &[Arc<dyn WaitPair>],
    ready: &AtomicU64,
    total: usize,
) -> (Vec<u64>, Vec<f64>) {
    let k = pairs.len();
    for pair in pairs {
        pair.register_waiter();
    }
    let clock = cycle_clock();
    let mut woke = Vec::with_capacity(total);
    let mut cpu_frac = Vec::with_capacity(total);
    for step in 0..total {
        let share = CpuShare::start();
        // Release: the worker's Acquire load of the step number happens
        // after our previous step's bookkeeping.
        ready.store(step as u64 + 1, Ordering::Release);
        pairs[step % k].wait();
        woke.push(clock.start());
        cpu_frac.push(share.fraction());
    }
    (woke, cpu_frac)
}

/// The worker's side of [`run_pairs`]: for each step, waits for the
/// waiter to publish it, runs `action` (with `kernel` for work) and
/// notifies the step's pair; returns each step's stamp before the notify,
/// ticks inside the notify and ns of work.
fn worker_steps(
    pairs: &[Arc<dyn WaitPair>],
    ready: &AtomicU64,
    total: usize,
    action: &Action,
    mut kernel: Option<&mut MatMul>,
) -> (Vec<u64>, Vec<u64>, Vec<f64>) {
    let k = pairs.len();
    let clock = cycle_clock();
    let (mut t0s, mut calls, mut works) = (Vec::new(), Vec::new(), Vec::new());
    for step in 0..total {
        // Acquire: pairs with the waiter's Release store of the step
        // number.
        spin_until(HARNESS_YIELD_EVERY, || {
            ready.load(Ordering::Acquire) == step as u64 + 1
        });
        let w0 = clock.start();
        match action {
            Action::Work(_) => {
                if let Some(kernel) = kernel.as_mut() {
                    kernel.run();
                }
            }
            Action::Delay(d) => {
                let end = w0 + clock.duration_to_ticks(*d);
                while clock.now() < end {
                    std::hint::spin_loop();
                }
            }
            Action::Sleep(d) => std::thread::sleep(*d),
        }
        let t0 = clock.start();
        pairs[step % k].notify();
        let t1 = clock.end();
        works.push(clock.ticks_to_ns(t0 - w0));
        t0s.push(t0);
        calls.push(t1.saturating_sub(t0));
    }
    (t0s, calls, works)
}

/// Per cycle, `row`'s wake-up over `spin`'s (each less one clock read),
/// summarized; `None` when a cycle has a zero for spin or no samples.
fn wakeup_ratios(row: &Raw, spin: &Raw) -> Option<Summary> {
    let overhead = cycle_clock().read_overhead_ticks();
    let ratios: Vec<f64> = row
        .t_wakeup
        .iter()
        .zip(&spin.t_wakeup)
        .map(|(&r, &s)| r.saturating_sub(overhead) as f64 / s.saturating_sub(overhead) as f64)
        .collect();
    summary_ns(&ratios)
}

fn summarize(raw: Raw) -> RegimeResult {
    RegimeResult {
        t_work_ns: summary_ns(&raw.t_work_ns),
        t_wakeup: timing_from_ticks(&raw.t_wakeup),
        t_call: timing_from_ticks(&raw.t_call),
        waiter_cpu_fraction: summary_ns(&raw.cpu_fraction),
    }
}

/// Runs the experiment.
pub fn run(config: &Config) -> MechanismsResult {
    let placement = PairPlacement::choose();
    let default_poll_limit_ns = Policy::for_kind(SyncKind::ProducerConsumer)
        .poll_limit_ns()
        .unwrap_or(0.0);
    let short_delay_ns = default_poll_limit_ns * config.short_delay_fraction;
    let contenders: Vec<Contender> = contender::all()
        .into_iter()
        .filter(|c| is_selected(&config.only, &c.name))
        .collect();
    let total = contenders.len();
    let steps = 2 + total;
    let delay = Duration::from_nanos(short_delay_ns as u64);
    // The work and short regimes: every contender that may run, in turn.
    let running: Vec<usize> = (0..total)
        .filter(|&i| contenders[i].availability.is_ok())
        .collect();
    let pairs =
        || -> Vec<Arc<dyn WaitPair>> { running.iter().map(|&i| contenders[i].make()).collect() };
    let regime = |step: usize, what: &str, warmup: usize, rounds: usize, action: Action| {
        progress("mechanisms", step, steps, what);
        let mut raws = run_pairs(&pairs(), &placement, warmup, rounds, &action).into_iter();
        let mut by_contender: Vec<Option<Raw>> = contenders.iter().map(|_| None).collect();
        for &i in &running {
            by_contender[i] = raws.next();
        }
        by_contender
    };
    let w = config.warmup_rounds;
    let mut work = regime(
        1,
        "work regime, contenders interleaved",
        w,
        config.work_rounds,
        Action::Work(config.matrix_n),
    );
    let mut short = regime(
        2,
        "short regime, contenders interleaved",
        w * 5,
        config.short_rounds,
        Action::Delay(delay),
    );
    let vs_spin = wakeups_vs_spin(&contenders, &work);
    let rows = contenders
        .iter()
        .enumerate()
        .map(|(i, c)| {
            progress(
                "mechanisms",
                3 + i,
                steps,
                &format!("{} (long wait)", c.name),
            );
            let row = Row {
                name: c.name.clone(),
                family: c.family,
                policy: c.policy.map(|p| p.name()),
                not_available: c.availability.as_ref().err().map(|r| format!("n/a: {r}")),
                work: work[i].take().map(summarize),
                short: short[i].take().map(summarize),
                sleep: None,
                work_wakeup_vs_spin: vs_spin[i],
            };
            with_sleep_regime(row, c, config, &placement)
        })
        .collect();
    MechanismsResult {
        config: config.clone(),
        placement,
        default_poll_limit_ns,
        short_delay_ns,
        rows,
    }
}

/// Each contender's work-regime wake-ups over `spin`'s, cycle by cycle
/// ([`wakeup_ratios`]); `None` for `spin` itself and where either did not
/// run.
fn wakeups_vs_spin(contenders: &[Contender], work: &[Option<Raw>]) -> Vec<Option<Summary>> {
    let spin = contenders.iter().position(|c| c.name == "spin");
    (0..contenders.len())
        .map(|i| {
            let spin = work[spin.filter(|&s| s != i)?].as_ref()?;
            wakeup_ratios(work[i].as_ref()?, spin)
        })
        .collect()
}

/// `row` with the sleep regime of contender `c` measured, when it can run:
/// one warm-up round first, so that per-thread lazy state (e.g. the
/// cache-miss chase buffer) does not land inside a measured wait.
fn with_sleep_regime(
    mut row: Row,
    c: &Contender,
    config: &Config,
    placement: &PairPlacement,
) -> Row {
    if c.availability.is_ok() {
        let sleep = Duration::from_millis(config.sleep_ms);
        let raw = run_pairs(
            &[c.make()],
            placement,
            1,
            config.sleep_rounds,
            &Action::Sleep(sleep),
        );
        row.sleep = raw.into_iter().next().map(summarize);
    }
    row
}

impl MechanismsResult {
    /// The row named `name`.
    pub fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// Median short-regime wake-up of `name`, ns.
    pub fn short_wakeup_ns(&self, name: &str) -> Option<f64> {
        self.row(name)?
            .short
            .as_ref()?
            .t_wakeup
            .as_ref()
            .map(|t| t.ns.median)
    }

    fn regime_rows(
        &self,
        pick: impl Fn(&Row) -> Option<&RegimeResult>,
        cells: impl Fn(&RegimeResult) -> Vec<Cell>,
        width: usize,
        table: &mut Table,
    ) {
        for r in &self.rows {
            push_figures_row(
                table,
                name_and_family(&r.name, r.family),
                r.not_available.as_deref(),
                pick(r).map(|res| (cells(res), res.noisy())),
                width,
            );
        }
    }
}

/// A median with its 95% interval, for notes: `123 ns [110, 140]`.
fn with_interval(s: &Summary) -> String {
    format!(
        "{:.0} ns [{:.0}, {:.0}]",
        s.median, s.median_ci95_low, s.median_ci95_high
    )
}

impl MechanismsResult {
    /// The work regime's `pick` figure (ns) of every waitwise row that ran.
    fn own_work_figures(
        &self,
        pick: impl Fn(&RegimeResult) -> Option<&Timing>,
    ) -> Vec<(&str, Summary)> {
        self.rows
            .iter()
            .filter(|r| r.family == Family::Waitwise)
            .filter_map(|r| Some((r.name.as_str(), pick(r.work.as_ref()?)?.ns)))
            .collect()
    }

    /// Seed 000 Table 1's two orderings checked on this run: `spin` wakes
    /// first and `block` costs the notifier most, among waitwise's own
    /// rows. `T_wakeup` is compared by the per-cycle ratios to `spin`
    /// ([`Row::work_wakeup_vs_spin`]), `T_call` by medians; both with
    /// order-statistic 95% intervals, so a tie within noise is called one.
    fn ranking_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(note) = self.wakeup_ranking_note() {
            notes.push(note);
        }
        // T_call: block against the rows that never block (the polling
        // mechanisms); the two-phase policies sleep through a wait this
        // long as well, so their notify is the same futex wake as block's
        // and they are reported beside it, not ranked against it.
        let call = self.own_work_figures(|r| r.t_call.as_ref());
        let sleeps = |name: &str| {
            self.row(name)
                .and_then(|r| r.policy.as_deref())
                .is_some_and(|p| p.contains("/b"))
        };
        let block = call.iter().find(|(n, _)| *n == "block");
        let highest_poller = call
            .iter()
            .filter(|(n, _)| !sleeps(n))
            .max_by(|a, b| a.1.median.total_cmp(&b.1.median));
        if let (Some((_, block)), Some((high_name, high))) = (block, highest_poller) {
            let verdict = if block.median > high.median {
                format!(
                    "block has the highest T_call of waitwise's mechanisms (the highest polling one: {high_name} {})",
                    with_interval(high)
                )
            } else {
                format!(
                    "block does NOT have the highest T_call: {high_name} {} is higher",
                    with_interval(high)
                )
            };
            let sleepers: Vec<&Summary> = call
                .iter()
                .filter(|(n, _)| *n != "block" && sleeps(n))
                .map(|(_, s)| s)
                .collect();
            let same_wake = match (
                sleepers.iter().map(|s| s.median).reduce(f64::min),
                sleepers.iter().map(|s| s.median).reduce(f64::max),
            ) {
                (Some(lo), Some(hi)) => format!(
                    " The {} two-phase rows sleep through this wait too and make the same futex wake: {:.0}-{:.0} ns.",
                    sleepers.len(),
                    lo,
                    hi
                ),
                _ => String::new(),
            };
            notes.push(format!(
                "Work regime, T_call: block {}; {verdict}.{same_wake}",
                with_interval(block)
            ));
        }
        notes
    }
}

impl MechanismsResult {
    /// Whether `spin` wakes first among waitwise's rows, from the per-cycle
    /// ratios: a row whose ratio's 95% interval lies below 1 wakes faster
    /// beyond noise, one whose interval holds 1 ties.
    fn wakeup_ranking_note(&self) -> Option<String> {
        let spin = self.row("spin")?.work.as_ref()?.t_wakeup.as_ref()?.ns;
        let ratios: Vec<(&str, &Summary)> = self
            .rows
            .iter()
            .filter(|r| r.family == Family::Waitwise)
            .filter_map(|r| Some((r.name.as_str(), r.work_wakeup_vs_spin.as_ref()?)))
            .collect();
        let (low_name, low) = ratios
            .iter()
            .min_by(|a, b| a.1.median.total_cmp(&b.1.median))?;
        let ratio = |s: &Summary| {
            format!(
                "{:.2}x [{:.2}, {:.2}]",
                s.median, s.median_ci95_low, s.median_ci95_high
            )
        };
        let faster: Vec<&str> = ratios
            .iter()
            .filter(|(_, s)| s.median_ci95_high < 1.0)
            .map(|(n, _)| *n)
            .collect();
        let tied: Vec<&str> = ratios
            .iter()
            .filter(|(_, s)| s.median_ci95_low <= 1.0 && s.median_ci95_high >= 1.0)
            .map(|(n, _)| *n)
            .collect();
        let verdict = if !faster.is_empty() {
            format!(
                "spin does NOT have the lowest T_wakeup: {} {} faster beyond noise (lowest: {low_name} {})",
                faster.join(", "),
                if faster.len() == 1 { "wakes" } else { "wake" },
                ratio(low)
            )
        } else if !tied.is_empty() {
            format!(
                "no row wakes faster than spin beyond noise, but {} {} with it (95% interval of the ratio holds 1; lowest: {low_name} {})",
                tied.join(", "),
                if tied.len() == 1 { "ties" } else { "tie" },
                ratio(low)
            )
        } else {
            format!(
                "spin has the lowest T_wakeup of waitwise's rows: every other row is slower beyond noise (closest: {low_name} {})",
                ratio(low)
            )
        };
        // A row's work-regime median of one figure (T_wakeup or T_call), ns.
        let work_median = |name: &str, figure: fn(&RegimeResult) -> Option<&Timing>| {
            figure(self.row(name)?.work.as_ref()?).map(|t| t.ns.median)
        };
        let work_wakeup = |name: &str| work_median(name, |r| r.t_wakeup.as_ref());
        // Seed 000's "spin-loops" put PAUSE in the loop body (its section
        // 4.2): that is waitwise's `pause`, and the paper's ordering is the
        // spin-loop against the sleeping primitives.
        let paper = match (work_wakeup("pause"), work_wakeup("block")) {
            (Some(pause), Some(block)) => format!(
                " Anastopoulos & Koziris 2008's spin-loops have PAUSE in the loop (waitwise's `pause`; `spin` is the plain load loop, which pays a memory-order flush when the store arrives and keeps pulling the line from the notifier): pause wakes in {pause:.0} ns, block in {block:.0} ns ({:.0}x).",
                block / pause
            ),
            _ => String::new(),
        };
        // The notifier's side of the same hand-offs: a store that must take
        // the line from a PAUSE-less loop takes longer to complete.
        let work_call = |name: &str| work_median(name, |r| r.t_call.as_ref());
        let notifier = match (work_call("spin"), work_call("pause")) {
            (Some(spin), Some(pause)) => format!(
                " The notifier's T_call (the store) takes {spin:.0} ns with a spin waiter and {pause:.0} ns with a pause waiter ({:.2}x).",
                spin / pause
            ),
            _ => String::new(),
        };
        Some(format!(
            "Work regime, T_wakeup (median [95% CI of the median]): spin {}; per-cycle ratio to spin over {} interleaved cycles: {verdict}.{notifier}{paper}",
            with_interval(&spin),
            low.n
        ))
    }
}

/// The columns every table starts with.
fn contender_columns() -> Vec<Column> {
    vec![
        Column::new("contender", None, "implementation"),
        Column::new("family", None, "waitwise or peer"),
    ]
}

impl MechanismsResult {
    /// The work regime: the worker multiplies a matrix before it notifies.
    fn work_table(&self) -> Table {
        let mut work = Table::new(
            "mechanisms",
            format!(
                "Condition wait/notify, worker runs a {0}x{0} matrix multiply (Anastopoulos & Koziris 2008, Table 1)",
                self.config.matrix_n
            ),
            [
                contender_columns(),
                hand_off_columns(
                    "notify to waiter running (median)",
                    "time inside notify (median)",
                    "waiter CPU time over its wall time (median)",
                ),
            ]
            .concat(),
        );
        self.regime_rows(
            |r| r.work.as_ref(),
            |res| {
                hand_off_cells(
                    res.t_work_ns.as_ref(),
                    res.t_wakeup.as_ref(),
                    res.t_call.as_ref(),
                    res.waiter_cpu_fraction.as_ref(),
                )
            },
            7,
            &mut work,
        );
        work
    }

    /// The short regime: the notify lands inside the default polling limit.
    fn short_table(&self) -> Table {
        let spin = self.short_wakeup_ns("spin");
        let mut short = Table::new(
            "mechanisms_short",
            format!(
                "Notify {:.0} ns after the wait starts (inside the default L_poll of {:.0} ns)",
                self.short_delay_ns, self.default_poll_limit_ns
            ),
            [
                contender_columns(),
                vec![
                    Column::new("t_wakeup", Some("ns"), "notify to waiter running (median)"),
                    Column::new(
                        "t_wakeup",
                        Some("cycles"),
                        "notify to waiter running (median)",
                    ),
                    Column::new(
                        "t_wakeup_vs_spin",
                        Some("ratio"),
                        "median wake-up over spin's",
                    ),
                    Column::new("t_call", Some("ns"), "time inside notify (median)"),
                    Column::new("t_call", Some("cycles"), "time inside notify (median)"),
                ],
            ]
            .concat(),
        );
        self.regime_rows(
            |r| r.short.as_ref(),
            |res| {
                let ratio = match (res.t_wakeup.as_ref(), spin) {
                    (Some(t), Some(s)) if s > 0.0 => Cell::Number(t.ns.median / s),
                    _ => Cell::missing("no spin figure"),
                };
                vec![
                    median_ns(res.t_wakeup.as_ref()),
                    median_cycles(res.t_wakeup.as_ref()),
                    ratio,
                    median_ns(res.t_call.as_ref()),
                    median_cycles(res.t_call.as_ref()),
                ]
            },
            5,
            &mut short,
        );
        short
    }

    /// The sleep regime: the notifier sleeps; what the waiter burns.
    fn sleep_table(&self) -> Table {
        let mut sleep = Table::new(
            "mechanisms_sleep",
            format!(
                "Long wait: the notifier sleeps {} ms; CPU the waiter burns meanwhile",
                self.config.sleep_ms
            ),
            [
                contender_columns(),
                vec![
                    Column::new(
                        "waiter_cpu",
                        Some("pct"),
                        "waiter CPU time over its wall time (median)",
                    ),
                    Column::new("t_wakeup", Some("ns"), "notify to waiter running (median)"),
                ],
            ]
            .concat(),
        );
        self.regime_rows(
            |r| r.sleep.as_ref(),
            |res| {
                vec![
                    median_pct(res.waiter_cpu_fraction.as_ref()),
                    median_ns(res.t_wakeup.as_ref()),
                ]
            },
            2,
            &mut sleep,
        );
        sleep
    }
}

impl ExperimentOutput for MechanismsResult {
    fn tables(&self) -> Vec<Table> {
        vec![self.work_table(), self.short_table(), self.sleep_table()]
    }

    fn charts(&self) -> Vec<RenderedChart> {
        let names: Vec<String> = self.rows.iter().map(|r| r.name.clone()).collect();
        // Each row's summary of one figure; the charts draw its median with
        // the median's 95% CI as a whisker.
        let metric = |pick: &dyn Fn(&Row) -> Option<Summary>| -> Vec<Option<Summary>> {
            self.rows.iter().map(pick).collect()
        };
        let wake = |r: &Row, reg: fn(&Row) -> Option<&RegimeResult>| {
            reg(r).and_then(|x| x.t_wakeup.as_ref()).map(|t| t.ns)
        };
        let charts = vec![
            MetricBars::medians_with_ci(
                "T_wakeup, worker runs the kernel",
                "wake-up latency (us, log scale)",
                &metric(&|r| wake(r, |r| r.work.as_ref())),
                1e-3,
                true,
            ),
            MetricBars::medians_with_ci(
                "T_wakeup, notify inside L_poll",
                "wake-up latency (us, log scale)",
                &metric(&|r| wake(r, |r| r.short.as_ref())),
                1e-3,
                true,
            ),
            MetricBars::medians_with_ci(
                "T_call: time inside notify",
                "notify cost (us, log scale)",
                &metric(&|r| {
                    r.work
                        .as_ref()
                        .and_then(|x| x.t_call.as_ref())
                        .map(|t| t.ns)
                }),
                1e-3,
                true,
            ),
            MetricBars::medians_with_ci(
                "T_work: worker's kernel time (interference)",
                "kernel time (ms)",
                &metric(&|r| r.work.as_ref().and_then(|x| x.t_work_ns)),
                1e-6,
                false,
            ),
            MetricBars::medians_with_ci(
                format!("Waiter CPU use during a {} ms wait", self.config.sleep_ms),
                "CPU time / wall time (%)",
                &metric(&|r| r.sleep.as_ref().and_then(|x| x.waiter_cpu_fraction)),
                100.0,
                false,
            ),
        ];
        bar_charts(&names, charts)
    }

    fn notes(&self) -> Vec<String> {
        let mut n = vec![format!("Placement: {}.", self.placement.describe())];
        let na: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| r.not_available.is_some())
            .map(|r| r.name.as_str())
            .collect();
        n.extend(not_available_note(&na));
        let default = Policy::for_kind(SyncKind::ProducerConsumer).describe();
        let short_call = |name: &str| {
            self.row(name)?
                .short
                .as_ref()?
                .t_call
                .as_ref()
                .map(|t| t.ns.median)
        };
        if let (Some(store), Some(call)) = (short_call("atomic store"), short_call(&default)) {
            n.push(format!(
                "Notify to a polling waiter ({default}): T_call {call:.0} ns = {:.2}x one atomic store's {store:.0} ns.",
                call / store
            ));
        }
        let cpu = |name: &str| {
            self.row(name)?
                .sleep
                .as_ref()?
                .waiter_cpu_fraction
                .as_ref()
                .map(|s| 100.0 * s.median)
        };
        if let (Some(two), Some(spin)) = (cpu(&default), cpu("spin")) {
            n.push(format!(
                "A {} ms wait burns {two:.2}% of a CPU with {default}, {spin:.1}% with spin.",
                self.config.sleep_ms
            ));
        }
        n.extend(self.ranking_notes());
        if let (Some(spin), Some(two)) =
            (self.short_wakeup_ns("spin"), self.short_wakeup_ns(&default))
        {
            n.push(format!(
                "Default two-phase policy, notify inside L_poll: T_wakeup {:.0} ns = {:.2}x spin's {:.0} ns.",
                two,
                two / spin,
                spin
            ));
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_run_fills_every_table() {
        let mut cfg = Config::tiny();
        cfg.only = vec![
            "pause".into(),
            "block".into(),
            "umwait".into(),
            "pthread".into(),
        ];
        let res = run(&cfg);
        assert!(res.row("pause").unwrap().work.is_some());
        assert!(res.row("block").unwrap().short.is_some());
        let tables = res.tables();
        assert_eq!(tables.len(), 3);
        for t in &tables {
            crate::export::agreement::assert_exports_agree(t);
            assert_eq!(t.rows.len(), res.rows.len());
        }
        let json = serde_json::to_value(&res).unwrap();
        for key in ["config", "placement", "rows", "default_poll_limit_ns"] {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert!(!res.charts().is_empty());
    }

    #[test]
    fn interleaved_rounds_give_every_pair_its_own_samples() {
        let all = contender::all();
        let pick = |name: &str| all.iter().find(|c| c.name == name).unwrap().make();
        let pairs = [pick("spin"), pick("pause"), pick("block")];
        let raws = run_pairs(
            &pairs,
            &PairPlacement::choose(),
            2,
            5,
            &Action::Delay(Duration::from_micros(1)),
        );
        assert_eq!(raws.len(), 3);
        for raw in &raws {
            assert_eq!(raw.t_wakeup.len(), 5);
            assert_eq!(raw.t_call.len(), 5);
            assert_eq!(raw.cpu_fraction.len(), 5);
        }
        let vs = wakeup_ratios(&raws[1], &raws[0]).unwrap();
        assert!(vs.median.is_finite() && vs.median > 0.0);
    }

    #[test]
    fn tiny_run_ranks_against_spin() {
        let mut cfg = Config::tiny();
        cfg.only = vec!["spin".into(), "pause".into(), "block".into()];
        let res = run(&cfg);
        assert!(res.row("spin").unwrap().work_wakeup_vs_spin.is_none());
        assert!(res.row("pause").unwrap().work_wakeup_vs_spin.is_some());
        let note = res.wakeup_ranking_note().unwrap();
        assert!(note.contains("per-cycle ratio to spin"), "{note}");
        assert!(note.contains("spin-loops"), "{note}");
        assert!(note.contains("notifier's T_call"), "{note}");
    }
}
