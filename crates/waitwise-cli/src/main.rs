//! `waitwise`: probe the machine, run the seed papers' experiments, model and
//! simulate waiting algorithms.
//!
//! Pipeline: parse the command line -> validate the environment -> run the
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
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if let Err(e) = commands::validate_environment() {
        eprintln!("waitwise: {e:#}");
        return std::process::ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Probe(args) => commands::probe::run(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("waitwise: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
