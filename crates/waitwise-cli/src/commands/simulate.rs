//! `waitwise simulate`: Lim & Agarwal's Tables 2-5 on a simulated machine.
//!
//! `P` processors x `C` hardware contexts run producer-consumer, barrier or
//! mutex workloads (`waitwise_model::simulator`, seeded and deterministic);
//! each (workload, threads per context) group runs `/b/0` first, then every
//! other algorithm on the same work times. Printed: runtime normalized to
//! `/b/0`, waiting overhead, blocks, and how fast the simulator ran here.

use super::output::{emit, OutputArgs};
use super::profile::positive_f64;
use serde::Serialize;
use waitwise_bench::experiments::{ExperimentOutput, RenderedChart};
use waitwise_bench::export::{Cell, Column, Table};
use waitwise_model::algorithm::WaitingAlgorithm;
use waitwise_model::simulator::interference::{SiblingSlowdowns, FULL_SHARE_SLOWDOWN};
use waitwise_model::simulator::{
    benchmark, MachineConfig, SimConfig, SimRow, SyncKind, Throughput, WorkloadConfig,
    ALEWIFE_BLOCK_CYCLES, ALEWIFE_SPIN_TIMEOUT_CYCLES, ALEWIFE_SWITCH_CYCLES,
};
use waitwise_platform::thread::thread_cpu_time;

/// Most threads one run may simulate (guessed: a few seconds per run).
const MAX_THREADS: u64 = 1 << 16;
/// Most synchronization events (threads x iterations) per run (guessed: about
/// a minute of simulation at the simulator's 1 M events/s floor).
const MAX_SYNC_EVENTS: u64 = 100_000_000;

/// Workloads to simulate.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindArg {
    /// Ring of producers and consumers (Table 2).
    ProducerConsumer,
    /// One barrier per iteration (Table 3).
    Barrier,
    /// Random locks around critical sections (Table 4).
    Mutex,
    /// All three.
    All,
}

/// Options of `waitwise simulate`.
#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    /// Processors P.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=16_384))]
    pub processors: u32,
    /// Hardware contexts per processor C.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub contexts: u32,
    /// Workload.
    #[arg(long, value_enum, default_value_t = KindArg::All)]
    pub kind: KindArg,
    /// Threads per hardware context, comma-separated: 1 is matched, more is
    /// unmatched (oversubscribed).
    #[arg(long, value_delimiter = ',', default_values_t = [1u32, 2], value_parser = clap::value_parser!(u32).range(1..=16))]
    pub threads_per_context: Vec<u32>,
    /// Waiting algorithms, comma-separated Lim & Agarwal names (`/b/0` is
    /// always run as the baseline; `Ss` names switch-spin with beta = C).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "/b/0,s/b/1,Ss/b/1,Ss/b/0.541,s//inf,Ss//inf,rand/b,adapt/b"
    )]
    pub algorithms: Vec<String>,
    /// Block cost B, cycles (Alewife: 500).
    #[arg(long, default_value_t = ALEWIFE_BLOCK_CYCLES, value_parser = positive_f64)]
    pub block_cost: f64,
    /// Context-switch cost, cycles (Alewife: 12).
    #[arg(long, default_value_t = ALEWIFE_SWITCH_CYCLES, value_parser = non_negative_f64)]
    pub switch_cost: f64,
    /// Deadlock-avoidance limit of unbounded polling (s//inf), cycles.
    #[arg(long, default_value_t = ALEWIFE_SPIN_TIMEOUT_CYCLES, value_parser = positive_f64)]
    pub spin_timeout: f64,
    /// Iterations per thread.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub iterations: u32,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The pollers' waiting mechanism (spin, pause, backoff, yield, block,
    /// umwait, tpause, mwaitx, delay-*): a poller slows the threads sharing
    /// its processor by that mechanism's sibling slowdown factor (seeds 000
    /// and 002, or --interference). Unset: a poller takes a full share.
    #[arg(long, value_name = "NAME")]
    pub poll_mechanism: Option<String>,
    /// Take --poll-mechanism's factor from this `waitwise interference
    /// --json` result (measured on an SMT sibling).
    #[arg(long, value_name = "FILE", requires = "poll_mechanism")]
    pub interference: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn non_negative_f64(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err("must be a finite number >= 0".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The settings of a run, echoed in `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct SimulateSettings {
    /// The machine.
    pub machine: MachineConfig,
    /// Workloads run.
    pub workloads: Vec<WorkloadConfig>,
    /// Threads per context of each group.
    pub threads_per_context: Vec<u32>,
    /// Algorithms, `/b/0` first (`Ss` ones with beta = C).
    pub algorithms: Vec<WaitingAlgorithm>,
    /// Deadlock-avoidance limit, cycles.
    pub spin_timeout: f64,
    /// Seed.
    pub seed: u64,
}

/// What `waitwise simulate` prints.
#[derive(Debug, Clone, Serialize)]
pub struct SimulateResult {
    /// The settings.
    pub settings: SimulateSettings,
    /// One row per (workload, threads per context, algorithm).
    pub rows: Vec<SimRow>,
    /// The simulator's speed over all runs, by wall clock (host- and
    /// load-dependent).
    pub throughput: Throughput,
    /// CPU time the simulating thread used over all runs, s.
    pub cpu_seconds: f64,
    /// Synchronization events per second of that CPU time: the simulator's
    /// speed on one core, whatever else the machine runs.
    pub sync_events_per_cpu_second: f64,
}

/// Parses the algorithm names; `Ss` algorithms get `beta`; `/b/0` first.
fn algorithms(names: &[String], beta: f64) -> anyhow::Result<Vec<WaitingAlgorithm>> {
    let mut out = vec![WaitingAlgorithm::AlwaysBlock];
    for name in names {
        let mut a: WaitingAlgorithm = name
            .parse()
            .map_err(|e| anyhow::anyhow!("--algorithms: {e}"))?;
        if let WaitingAlgorithm::SwitchSpinTwoPhase { alpha, .. } = a {
            a = WaitingAlgorithm::switch_spin_two_phase(alpha, beta)?;
        }
        if !out.contains(&a) {
            out.push(a);
        }
    }
    Ok(out)
}

/// The pollers' sibling slowdown factor: `--poll-mechanism`'s, from the
/// seeds or the `--interference` file; a full share without it.
fn poll_slowdown(args: &SimulateArgs) -> anyhow::Result<f64> {
    let Some(m) = &args.poll_mechanism else {
        return Ok(FULL_SHARE_SLOWDOWN);
    };
    let factors = match &args.interference {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("--interference {}: {e}", path.display()))?;
            SiblingSlowdowns::from_interference_json(&text)
                .map_err(|e| anyhow::anyhow!("--interference {}: {e}", path.display()))?
        }
        None => SiblingSlowdowns::seed_defaults(),
    };
    factors.factor(m).ok_or_else(|| {
        let known: Vec<&str> = factors.mechanisms().collect();
        anyhow::anyhow!(
            "--poll-mechanism {m:?}: no sibling slowdown factor in {} (known: {})",
            factors.source,
            known.join(", ")
        )
    })
}

/// Checks the sizes and builds the settings.
pub fn settings(args: &SimulateArgs) -> anyhow::Result<SimulateSettings> {
    let machine = MachineConfig {
        processors: args.processors,
        contexts: args.contexts,
        block_cost: args.block_cost,
        switch_cost: args.switch_cost,
        poll_slowdown: poll_slowdown(args)?,
    };
    let kinds = match args.kind {
        KindArg::ProducerConsumer => vec![SyncKind::ProducerConsumer],
        KindArg::Barrier => vec![SyncKind::Barrier],
        KindArg::Mutex => vec![SyncKind::Mutex],
        KindArg::All => vec![
            SyncKind::ProducerConsumer,
            SyncKind::Barrier,
            SyncKind::Mutex,
        ],
    };
    let mut tpc = args.threads_per_context.clone();
    tpc.sort_unstable();
    tpc.dedup();
    if tpc.is_empty() {
        anyhow::bail!("--threads-per-context needs at least one value");
    }
    for &t in &tpc {
        let threads = u64::from(args.processors) * u64::from(args.contexts) * u64::from(t);
        if threads > MAX_THREADS {
            anyhow::bail!(
                "{} processors x {} contexts x {t} threads per context = {threads} threads; at most {MAX_THREADS}",
                args.processors,
                args.contexts
            );
        }
        if threads * u64::from(args.iterations) > MAX_SYNC_EVENTS {
            anyhow::bail!(
                "{threads} threads x {} iterations is more than {MAX_SYNC_EVENTS} synchronizations per run; lower --iterations",
                args.iterations
            );
        }
    }
    let algs = algorithms(&args.algorithms, f64::from(args.contexts).max(1.0))?;
    Ok(SimulateSettings {
        workloads: kinds
            .into_iter()
            .map(|k| WorkloadConfig::paper_like(k, args.block_cost, args.iterations))
            .collect(),
        machine,
        threads_per_context: tpc,
        algorithms: algs,
        spin_timeout: args.spin_timeout,
        seed: args.seed,
    })
}

/// Runs every (workload, threads per context, algorithm) of `settings`.
pub fn simulate(settings: &SimulateSettings) -> anyhow::Result<SimulateResult> {
    let contexts = u64::from(settings.machine.processors) * u64::from(settings.machine.contexts);
    let mut rows = Vec::new();
    let mut cpu = std::time::Duration::ZERO;
    let mut total = Throughput {
        sync_events: 0,
        events: 0,
        wall_seconds: 0.0,
        sync_events_per_second: 0.0,
    };
    for workload in &settings.workloads {
        for &tpc in &settings.threads_per_context {
            let threads = u32::try_from(contexts * u64::from(tpc))?;
            let mut baseline = f64::NAN;
            for &algorithm in &settings.algorithms {
                let cfg = SimConfig {
                    machine: settings.machine.clone(),
                    workload: workload.clone(),
                    threads,
                    algorithm,
                    deadlock_timeout: Some(settings.spin_timeout),
                    seed: settings.seed,
                    max_events: 1 << 32,
                };
                let cpu0 = thread_cpu_time();
                let (mut report, t) = benchmark(&cfg)?;
                cpu += thread_cpu_time().saturating_sub(cpu0);
                if algorithm == WaitingAlgorithm::AlwaysBlock {
                    baseline = report.runtime_cycles;
                }
                report.normalized_runtime = report.runtime_cycles / baseline;
                total.sync_events += t.sync_events;
                total.events += t.events;
                total.wall_seconds += t.wall_seconds;
                rows.push(SimRow {
                    workload: workload.kind.name().into(),
                    matched: tpc == 1,
                    contexts: settings.machine.contexts,
                    threads,
                    report,
                });
            }
        }
    }
    total.sync_events_per_second = total.sync_events as f64 / total.wall_seconds.max(1e-9);
    let cpu_seconds = cpu.as_secs_f64();
    Ok(SimulateResult {
        settings: settings.clone(),
        rows,
        sync_events_per_cpu_second: total.sync_events as f64 / cpu_seconds.max(1e-9),
        cpu_seconds,
        throughput: total,
    })
}

impl ExperimentOutput for SimulateResult {
    fn tables(&self) -> Vec<Table> {
        let m = &self.settings.machine;
        let mut t = Table::new(
            "simulate",
            format!(
                "Simulated {} processors x {} contexts, B = {} cycles (Lim & Agarwal Tables 2-5)",
                m.processors, m.contexts, m.block_cost
            ),
            vec![
                Column::new("workload", None, "synchronization pattern"),
                Column::new("threads", Some("count"), "threads simulated"),
                Column::new("matched", None, "matched: one thread per context"),
                Column::new("algorithm", None, "waiting algorithm"),
                Column::new(
                    "runtime",
                    Some("cycles"),
                    "simulated time until the last thread finished",
                ),
                Column::new("normalized", Some("ratio"), "runtime / the /b/0 run's"),
                Column::new("wait_overhead", Some("pct"), "processor time spent waiting"),
                Column::new("blocks", Some("count"), "threads unloaded while waiting"),
                Column::new(
                    "timeouts",
                    Some("count"),
                    "polling phases cut by the deadlock timeout",
                ),
            ],
        );
        for r in &self.rows {
            let s = &r.report;
            t.push_row(
                vec![
                    Cell::text(&r.workload),
                    Cell::Integer(i64::from(r.threads)),
                    Cell::text(if r.matched { "matched" } else { "unmatched" }),
                    Cell::text(&s.algorithm),
                    Cell::Number(s.runtime_cycles),
                    Cell::Number(s.normalized_runtime),
                    Cell::Number(100.0 * s.waiting_overhead),
                    Cell::Integer(i64::try_from(s.blocks).unwrap_or(i64::MAX)),
                    Cell::Integer(i64::try_from(s.timeouts).unwrap_or(i64::MAX)),
                ],
                (!s.completed).then(|| "incomplete: deadlock or event limit".to_string()),
            );
        }
        vec![t]
    }

    fn charts(&self) -> Vec<RenderedChart> {
        Vec::new()
    }

    fn notes(&self) -> Vec<String> {
        let t = &self.throughput;
        let mut n = vec![format!(
            "Simulator speed: {} synchronization events ({} discrete events) in {:.2} s of CPU = {:.2} M sync events/s on one core ({:.2} s wall = {:.2} M/s; the difference is other load on this machine).",
            t.sync_events,
            t.events,
            self.cpu_seconds,
            self.sync_events_per_cpu_second / 1e6,
            t.wall_seconds,
            t.sync_events_per_second / 1e6
        )];
        n.push(format!(
            "A poller slows the threads sharing its processor by a factor {:.3} (its mechanism's sibling slowdown; 2 is a full share, Lim & Agarwal's model; set with --poll-mechanism and --interference).",
            self.settings.machine.poll_slowdown
        ));
        let mut groups: Vec<(&str, u32)> = self
            .rows
            .iter()
            .map(|r| (r.workload.as_str(), r.threads))
            .collect();
        groups.dedup();
        for (workload, threads) in groups {
            let g: Vec<&SimRow> = self
                .rows
                .iter()
                .filter(|r| r.workload == workload && r.threads == threads)
                .collect();
            let Some(best) = g.iter().min_by(|a, b| {
                a.report
                    .normalized_runtime
                    .total_cmp(&b.report.normalized_runtime)
            }) else {
                continue;
            };
            let mut line = format!(
                "{workload}, {threads} threads ({}): best {} ({:.3})",
                if g[0].matched { "matched" } else { "unmatched" },
                best.report.algorithm,
                best.report.normalized_runtime
            );
            if let Some(s) = g.iter().find(|r| r.report.algorithm == "s/b/1") {
                line.push_str(&format!(
                    "; s/b/1 is {:+.1}% from the best",
                    100.0 * (s.report.normalized_runtime / best.report.normalized_runtime - 1.0)
                ));
            }
            if let Some(s) = g.iter().find(|r| r.report.algorithm == "s//inf") {
                line.push_str(&format!(
                    "; s//inf runs {:.2}x /b/0",
                    s.report.normalized_runtime
                ));
            }
            n.push(line + ".");
        }
        n
    }
}

/// Checks the sizes, the algorithms and the export paths.
///
/// # Errors
/// See [`settings`]; or an export path that cannot be written.
pub fn validate(args: &SimulateArgs) -> anyhow::Result<()> {
    settings(args)?;
    args.output.validate()
}

/// Runs the simulation and prints it.
pub fn run(args: &SimulateArgs) -> anyhow::Result<()> {
    let s = settings(args)?;
    let result = simulate(&s)?;
    emit(&result, &args.output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_spin_gets_beta_and_block_comes_first() {
        let a = algorithms(&["Ss/b/1".into(), "/b/0".into(), "s//inf".into()], 4.0).unwrap();
        assert_eq!(a[0], WaitingAlgorithm::AlwaysBlock);
        assert_eq!(
            a[1],
            WaitingAlgorithm::SwitchSpinTwoPhase {
                alpha: 1.0,
                beta: 4.0
            }
        );
        assert_eq!(a.len(), 3);
        assert!(algorithms(&["q/b/1".into()], 4.0).is_err());
    }
}
