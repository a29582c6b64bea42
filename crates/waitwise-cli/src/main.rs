//! `waitwise`: probe the machine, run the seed papers' experiments, model and
//! simulate waiting algorithms.
//!
//! Pipeline: parse the command line -> read the environment -> run the
//! subcommand -> print or export its results.

mod commands;

use clap::{Parser, Subcommand};

/// Thread waiting, measured on the machine at hand.
#[derive(Parser)]
#[command(name = "waitwise", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// What this machine offers for waiting and what waiting costs here.
    Probe(commands::probe::ProbeArgs),
    /// Seed 000 Table 1: condition wait/notify per mechanism, policy and peer.
    Mechanisms(commands::mechanisms::MechanismsArgs),
    /// Seed 000 Table 2: barrier implementations under each policy and peers.
    Barriers(commands::barriers::BarriersArgs),
    /// Seed 000 Fig. 4: barrier time under workload asymmetry.
    Asymmetry(commands::asymmetry::AsymmetryArgs),
    /// Lim & Agarwal Tables 2-5: matched vs oversubscribed runs.
    Oversub(commands::oversub::OversubArgs),
    /// Seed 004: wake-up latency for every ordered pair of CPUs.
    WakeupMatrix(commands::wakeup_matrix::WakeupMatrixArgs),
    /// Run every experiment (quick by default) and write the report directory.
    Report(commands::report::ReportArgs),
    /// Lim & Agarwal cost model: curves, optimal alpha, fits to profiles.
    Model(commands::model::ModelArgs),
    /// Discrete-event simulation of waiting algorithms on a large machine.
    Simulate(commands::simulate::SimulateArgs),
    /// Read a wait-time profile (WAITWISE_PROFILE) and recommend alpha per kind.
    Profile(commands::profile::ProfileArgs),
}

/// Calibrations averaged into B before experiments (see `main`).
const SETTLE_REPEATS: usize = 8;

impl Command {
    /// Whether the command measures waits (and so needs a steady B).
    fn runs_experiments(&self) -> bool {
        match self {
            Command::Mechanisms(_)
            | Command::Barriers(_)
            | Command::Asymmetry(_)
            | Command::Oversub(_)
            | Command::WakeupMatrix(_)
            | Command::Report(_) => true,
            Command::Model(args) => args.measures(),
            Command::Probe(_) | Command::Simulate(_) | Command::Profile(_) => false,
        }
    }
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    commands::read_environment();
    // Experiments fix B now, while this process runs nothing else:
    // measured inside an experiment, it would time hand-offs against the
    // experiment's own busy threads. They spend up to 0.4 s on a settled B
    // (8 spaced calibrations: the wake-up cost on a VM switches modes over
    // tens of ms, and their results hinge on B). The other commands
    // measure nothing up front.
    if cli.command.runs_experiments() {
        let _ = waitwise::policy::block_cost::settle_block_cost(
            SETTLE_REPEATS,
            std::time::Duration::from_millis(10),
        );
    }
    let result = match cli.command {
        Command::Probe(args) => commands::probe::run(&args),
        Command::Mechanisms(args) => commands::mechanisms::run(&args),
        Command::Barriers(args) => commands::barriers::run(&args),
        Command::Asymmetry(args) => commands::asymmetry::run(&args),
        Command::Oversub(args) => commands::oversub::run(&args),
        Command::WakeupMatrix(args) => commands::wakeup_matrix::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Model(args) => commands::model::run(&args),
        Command::Simulate(args) => commands::simulate::run(&args),
        Command::Profile(args) => commands::profile::run(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("waitwise: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
