//! `waitwise wakeup-matrix`: Poenaru 2017, section 4.1: wake-up latency for every
//! ordered pair of CPUs, per mechanism, in the normal and reduced setups.

use super::output::{emit, OutputArgs};
use super::preset::preset;
use anyhow::Context;
use waitwise_bench::experiments::wakeup_matrix::{run as run_experiment, Config};

/// Options of `waitwise wakeup-matrix`.
#[derive(clap::Args, Debug)]
pub struct WakeupMatrixArgs {
    /// Every allowed CPU and 1000 samples per cell (default: quick, with a
    /// representative subset of CPUs on machines with more than 8).
    #[arg(long)]
    pub full: bool,
    /// Only these CPUs, as a Linux CPU list (`0-3,8`); at least two, each
    /// one this process may run on.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Measured samples per cell, for every mechanism (default 500, and 100
    /// for block; 1000 with --full).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub rounds: Option<u32>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The configuration these options ask for.
///
/// # Errors
/// A `--cpus` list that does not parse, names fewer than two CPUs, or names
/// a CPU this process may not run on.
pub fn config(args: &WakeupMatrixArgs) -> anyhow::Result<Config> {
    let mut c = preset(args.full, Config::quick, Config::full);
    if let Some(list) = &args.cpus {
        c = c.with_cpu_list(list).context("--cpus")?;
    }
    if let Some(r) = args.rounds {
        c.rounds = r as usize;
        c.block_rounds = r as usize;
    }
    Ok(c)
}

/// Checks the options and the export paths.
///
/// # Errors
/// See [`config`]; or an export path that cannot be written.
pub fn validate(args: &WakeupMatrixArgs) -> anyhow::Result<()> {
    config(args)?;
    args.output.validate()
}

/// Runs the experiment and prints it.
pub fn run(args: &WakeupMatrixArgs) -> anyhow::Result<()> {
    emit(&run_experiment(&config(args)?), &args.output)
}
