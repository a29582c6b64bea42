//! `waitwise peers`: each waitwise primitive against its peers (parking_lot,
//! std, crossbeam-channel, pthread, rayon, spin and futex hand-offs) over a
//! grid of operating points, waitwise over the best peer per cell.

use super::output::{emit, OutputArgs};
use super::preset::preset;
use super::stdout;
use anyhow::Context;
use std::io::Read;
use waitwise_bench::experiments::peers::child::{ChildJob, CHILD_OPTION};
use waitwise_bench::experiments::peers::grid::{BlockSetting, Primitive};
use waitwise_bench::experiments::peers::{run as run_experiment, run_job, Config};

/// Options of `waitwise peers`.
#[derive(clap::Args, Debug)]
pub struct PeersArgs {
    /// The whole grid (every combination of every axis value; long).
    #[arg(long)]
    pub full: bool,
    /// Rounds per cell (each contender once per round; 6 or more for a
    /// 95% interval).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: Option<u32>,
    /// Each contender's run time per round, ms.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub run_ms: Option<u64>,
    /// Only primitives whose name contains this (repeatable): mutex,
    /// rwlock, condvar, channel, barrier, event, pool.
    #[arg(long)]
    pub only: Vec<String>,
    /// Run as a child with this block cost: read a job on standard input,
    /// print its cells as JSON (used by `waitwise peers` itself).
    #[arg(long = "child-block", hide = true, value_name = "SETTING")]
    pub child_block: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl PeersArgs {
    /// Whether this run's `B` is learned from its own wake-ups (a child
    /// for the `learned` cells): then nothing may fix it first.
    pub fn learns_block_cost(&self) -> bool {
        self.child_block.as_deref() == Some(BlockSetting::Learned.name())
    }
}

/// The configuration these options ask for; the cells with another block
/// cost run in children of this binary.
pub fn config(args: &PeersArgs) -> Config {
    let mut c = preset(args.full, Config::quick, Config::full);
    if let Some(r) = args.rounds {
        c.rounds = r as usize;
    }
    if let Some(ms) = args.run_ms {
        c.run_ms = ms;
    }
    c.only = args.only.clone();
    c.program = std::env::current_exe().ok();
    c
}

/// Checks `--only`, the child setting and the export paths.
///
/// # Errors
/// An `--only` entry that names no primitive, an unknown child setting, or
/// an export path that cannot be written.
pub fn validate(args: &PeersArgs) -> anyhow::Result<()> {
    super::check_only(
        &args.only,
        Primitive::ALL.iter().map(|p| p.name()),
        "primitive",
    )?;
    if let Some(name) = &args.child_block {
        if BlockSetting::from_name(name).is_none() {
            anyhow::bail!("{CHILD_OPTION} {name:?}: expected settled, low, high or learned");
        }
    }
    args.output.validate()
}

/// Runs the experiment and prints it, or, as a child, runs its job.
pub fn run(args: &PeersArgs) -> anyhow::Result<()> {
    match &args.child_block {
        Some(block) => run_child(block),
        None => emit(&run_experiment(&config(args)), &args.output),
    }
}

/// Reads a [`ChildJob`] on standard input, runs it, prints the cells.
fn run_child(block: &str) -> anyhow::Result<()> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("reading the job on standard input")?;
    let job: ChildJob = serde_json::from_str(&input).context("parsing the job")?;
    let cells = run_job(&job, &format!("peers, B {block}"));
    stdout::write(&serde_json::to_string(&cells)?)
}
