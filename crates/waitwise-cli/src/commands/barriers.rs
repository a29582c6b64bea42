//! `waitwise barriers`: the worker/helper barrier of Anastopoulos & Koziris
//! 2008, Table 2, and the cost of one barrier episode, per implementation
//! and policy.

use super::output::{emit, OutputArgs};
use super::preset::preset;
use waitwise_bench::experiments::barriers::{run as run_experiment, Config};

/// Options of `waitwise barriers`.
#[derive(clap::Args, Debug)]
pub struct BarriersArgs {
    /// Paper-sized run (512x512 kernel, more rounds and runs).
    #[arg(long)]
    pub full: bool,
    /// Side of the worker's matrix multiply (default 128 quick, 512 full).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub matrix: Option<u32>,
    /// Measured worker/helper rounds.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub rounds: Option<u32>,
    /// Measured runs per episode-cost cell.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: Option<u32>,
    /// Time budget of one episode-cost run, ms.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub budget_ms: Option<u64>,
    /// Only implementations whose name contains this (repeatable).
    #[arg(long)]
    pub only: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The configuration these options ask for.
pub fn config(args: &BarriersArgs) -> Config {
    let mut c = preset(args.full, Config::quick, Config::full);
    if let Some(n) = args.matrix {
        c.matrix_n = n as usize;
    }
    if let Some(r) = args.rounds {
        c.rounds = r as usize;
    }
    if let Some(r) = args.runs {
        c.runs = r as usize;
    }
    if let Some(b) = args.budget_ms {
        c.budget_ms = b;
    }
    c.only = args.only.clone();
    c
}

/// Checks `--only` and the export paths.
///
/// # Errors
/// An `--only` entry that names no implementation, or an export path that
/// cannot be written.
pub fn validate(args: &BarriersArgs) -> anyhow::Result<()> {
    let specs = waitwise_bench::contender::barrier::all();
    super::check_only(
        &args.only,
        specs.iter().map(|s| s.name.as_str()),
        "barrier implementation",
    )?;
    args.output.validate()
}

/// Runs the experiment and prints it.
pub fn run(args: &BarriersArgs) -> anyhow::Result<()> {
    emit(&run_experiment(&config(args)), &args.output)
}
