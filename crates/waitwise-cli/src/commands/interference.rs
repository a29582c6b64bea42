//! `waitwise interference`: what a waiting thread costs the thread beside
//! it, per placement, kernel and mechanism (the UltraSPARC T2 spin-loop
//! study; Poenaru 2017's SMT throughput).

use super::output::{emit, OutputArgs};
use super::preset::preset;
use waitwise::mechanism::Mechanism;
use waitwise_bench::experiments::interference::{run as run_experiment, Config};

/// Options of `waitwise interference`.
#[derive(clap::Args, Debug)]
pub struct InterferenceArgs {
    /// Longer windows, more of them.
    #[arg(long)]
    pub full: bool,
    /// Length of one window (the kernel's run alone), ms.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub window_ms: Option<u64>,
    /// Windows per (placement, kernel, mechanism).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub windows: Option<u32>,
    /// Only mechanisms whose name contains this (repeatable).
    #[arg(long)]
    pub only: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The configuration these options ask for.
pub fn config(args: &InterferenceArgs) -> Config {
    let mut c = preset(args.full, Config::quick, Config::full);
    if let Some(w) = args.window_ms {
        c.window_ms = w;
    }
    if let Some(n) = args.windows {
        c.windows = n as usize;
    }
    c.only = args.only.clone();
    c
}

/// Checks `--only` and the export paths.
///
/// # Errors
/// An `--only` entry that names no mechanism, or an export path that
/// cannot be written.
pub fn validate(args: &InterferenceArgs) -> anyhow::Result<()> {
    super::check_only(
        &args.only,
        Mechanism::ALL.iter().map(|m| m.name()),
        "mechanism",
    )?;
    args.output.validate()
}

/// Runs the experiment and prints it.
pub fn run(args: &InterferenceArgs) -> anyhow::Result<()> {
    emit(&run_experiment(&config(args)), &args.output)
}
