//! `waitwise oversub`: Lim & Agarwal 1993, Tables 2-5: producer-consumer,
//! barrier and mutex loops, matched and unmatched, per waiting algorithm.

use super::output::{emit, OutputArgs};
use super::preset::preset;
use waitwise_bench::experiments::oversub::{run as run_experiment, Config, Workload};

/// Which loop to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum LoopArg {
    /// The producer-consumer token ring.
    ProducerConsumer,
    /// Work, then a barrier.
    Barrier,
    /// Lock, work, unlock, work.
    Mutex,
}

impl From<LoopArg> for Workload {
    fn from(l: LoopArg) -> Self {
        match l {
            LoopArg::ProducerConsumer => Workload::ProducerConsumer,
            LoopArg::Barrier => Workload::Barrier,
            LoopArg::Mutex => Workload::Mutex,
        }
    }
}

/// What `adapt/b`'s idle-CPU signal answers during the run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdleSignalArg {
    /// Read the machine (`/proc/loadavg`), as programs do.
    #[default]
    Auto,
    /// Pinned to "every runnable thread has a CPU": the extension runs
    /// whatever other programs do (what a quiet machine would answer).
    Idle,
    /// Pinned to "busy": the extension never runs.
    Busy,
}

/// Options of `waitwise oversub`.
#[derive(clap::Args, Debug)]
pub struct OversubArgs {
    /// Longer loops and more runs.
    #[arg(long)]
    pub full: bool,
    /// Loop iterations per thread in the oversubscribed runs (the matched
    /// producer-consumer and barrier runs do 5x as many, the mutex loop 4x)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub iterations: Option<u64>,
    /// Measured runs per cell.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: Option<u32>,
    /// Fresh rounds pairing `adapt/b` with the best static choice of each
    /// loop and condition, run after the measured runs chose that best, on
    /// which `adapt/b` is judged (0: judge on the measured runs).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub confirm_runs: Option<u32>,
    /// Work per iteration, us, in (0, 1000000].
    #[arg(long)]
    pub work_us: Option<f64>,
    /// Threads per CPU to run (repeatable; default 1, 2 and 4).
    #[arg(long = "multiplier", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub multipliers: Vec<u32>,
    /// Loops to run (repeatable; default all three).
    #[arg(long = "loop", value_enum)]
    pub loops: Vec<LoopArg>,
    /// `adapt/b`'s idle-CPU signal (`waitwise::policy::idle_extension`):
    /// read from the machine, or pinned for the run (noted on stderr).
    #[arg(long, value_enum, default_value_t)]
    pub idle_signal: IdleSignalArg,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The configuration these options ask for.
pub fn config(args: &OversubArgs) -> anyhow::Result<Config> {
    let mut c = preset(args.full, Config::quick, Config::full);
    if let Some(i) = args.iterations {
        c.iterations = i;
    }
    if let Some(r) = args.runs {
        c.runs = r as usize;
    }
    if let Some(r) = args.confirm_runs {
        c.confirm_runs = r as usize;
    }
    if let Some(w) = args.work_us {
        anyhow::ensure!(
            w.is_finite() && w > 0.0 && w <= 1e6,
            "--work-us must be in (0, 1000000], got {w}"
        );
        c.work_us = w;
    }
    if !args.multipliers.is_empty() {
        c.multipliers = args.multipliers.iter().map(|&m| m as usize).collect();
    }
    c.workloads = args.loops.iter().map(|&l| l.into()).collect();
    Ok(c)
}

/// Checks the options and the export paths.
///
/// # Errors
/// See [`config`]; or an export path that cannot be written.
pub fn validate(args: &OversubArgs) -> anyhow::Result<()> {
    config(args)?;
    args.output.validate()
}

/// Runs the experiment and prints it.
pub fn run(args: &OversubArgs) -> anyhow::Result<()> {
    pin_idle_signal(args.idle_signal, "oversub");
    emit(&run_experiment(&config(args)?), &args.output)
}

/// Pins (or unpins) `adapt/b`'s idle-CPU signal for the rest of the
/// process as `arg` says, noting a pin on stderr as `command: ...`.
pub fn pin_idle_signal(arg: IdleSignalArg, command: &str) {
    use waitwise::policy::idle_extension::{force_demand, CpuDemand};
    let pinned = match arg {
        IdleSignalArg::Auto => None,
        IdleSignalArg::Idle => Some(CpuDemand::Idle),
        IdleSignalArg::Busy => Some(CpuDemand::Busy),
    };
    if let Some(d) = pinned {
        eprintln!("{command}: adapt/b's idle-CPU signal pinned to {d:?} for this run");
    }
    force_demand(pinned);
}
