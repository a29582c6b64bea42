//! `waitwise mechanisms`: condition wait/notify per mechanism, policy and
//! peer (Anastopoulos & Koziris 2008, Table 1).

use super::output::{emit, OutputArgs};
use super::preset::preset;
use waitwise_bench::experiments::mechanisms::{run as run_experiment, Config};

/// Options of `waitwise mechanisms`.
#[derive(clap::Args, Debug)]
pub struct MechanismsArgs {
    /// Paper-sized run (512x512 kernel, more rounds).
    #[arg(long)]
    pub full: bool,
    /// Side of the worker's matrix multiply (default 128 quick, 512 full).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub matrix: Option<u32>,
    /// Measured rounds in the work regime.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub rounds: Option<u32>,
    /// Only contenders whose name contains this (repeatable).
    #[arg(long)]
    pub only: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The configuration these options ask for.
pub fn config(args: &MechanismsArgs) -> Config {
    let mut c = preset(args.full, Config::quick, Config::full);
    if let Some(n) = args.matrix {
        c.matrix_n = n as usize;
    }
    if let Some(r) = args.rounds {
        c.work_rounds = r as usize;
    }
    c.only = args.only.clone();
    c
}

/// Checks `--only` and the export paths.
///
/// # Errors
/// An `--only` entry that names no contender, or an export path that cannot
/// be written.
pub fn validate(args: &MechanismsArgs) -> anyhow::Result<()> {
    let contenders = waitwise_bench::contender::all();
    super::check_only(
        &args.only,
        contenders.iter().map(|c| c.name.as_str()),
        "contender",
    )?;
    args.output.validate()
}

/// Runs the experiment and prints it.
pub fn run(args: &MechanismsArgs) -> anyhow::Result<()> {
    emit(&run_experiment(&config(args)), &args.output)
}
