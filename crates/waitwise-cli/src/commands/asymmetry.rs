//! `waitwise asymmetry`: Anastopoulos & Koziris 2008, Fig. 4: total time of
//! a two-thread barrier loop per implementation as the light thread's load
//! goes 0..10.

use super::output::{emit, OutputArgs};
use super::preset::preset;
use waitwise_bench::experiments::asymmetry::{implementations, run as run_experiment, Config};

/// Options of `waitwise asymmetry`.
#[derive(clap::Args, Debug)]
pub struct AsymmetryArgs {
    /// The paper's 10^6 iterations per run.
    #[arg(long)]
    pub full: bool,
    /// Loop iterations per run (overrides the preset).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub iterations: Option<u64>,
    /// Measured runs per (implementation, load).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: Option<u32>,
    /// Only implementations whose name contains this (repeatable).
    #[arg(long)]
    pub only: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The configuration these options ask for.
pub fn config(args: &AsymmetryArgs) -> Config {
    let mut c = preset(args.full, Config::quick, Config::full);
    if let Some(i) = args.iterations {
        c.iterations = i;
    }
    if let Some(r) = args.runs {
        c.runs = r as usize;
    }
    c.only = args.only.clone();
    c
}

/// Checks `--only` and the export paths.
///
/// # Errors
/// An `--only` entry that names no implementation, or an export path that
/// cannot be written.
pub fn validate(args: &AsymmetryArgs) -> anyhow::Result<()> {
    let specs = implementations();
    super::check_only(
        &args.only,
        specs.iter().map(|s| s.name.as_str()),
        "barrier implementation",
    )?;
    args.output.validate()
}

/// Runs the experiment and prints it.
pub fn run(args: &AsymmetryArgs) -> anyhow::Result<()> {
    emit(&run_experiment(&config(args)), &args.output)
}
