//! `waitwise`: probe the machine, run the experiments of the papers waitwise
//! builds on, model and simulate waiting algorithms.
//!
//! Pipeline: parse the command line -> read the environment -> validate the
//! options (nothing has run yet) -> run the subcommand, which prints or
//! exports its results -> exit status ([`commands::exit`]).

mod commands;

use clap::{CommandFactory, FromArgMatches, Parser};
use commands::exit::{finish, Failure};

/// Thread waiting, measured on the machine at hand.
#[derive(Parser)]
#[command(name = "waitwise", version, about, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: commands::Command,
}

const AFTER_HELP: &str = "\
Papers the experiments reproduce:
  Anastopoulos & Koziris 2008  MONITOR/MWAIT waiting and barriers for asymmetric threads
                               (mechanisms, barriers, asymmetry)
  Lim & Agarwal 1993           two-phase waiting algorithms, competitive analysis
                               (oversub, model, simulate, profile)
  Poenaru 2017                 OS support for hardware threads: wake-up cost per CPU pair
                               (wakeup-matrix), SMT throughput (interference)
  UltraSPARC T2 spin-loop study  what a spinning thread costs its co-runners (interference)

Exit status: 0 success (also when the reader of standard output closes it early);
1 a failure while running; 2 the command line was rejected, before anything ran.";

fn main() -> std::process::ExitCode {
    let cli = parse();
    commands::read_environment();
    finish(
        cli.command
            .validate()
            .map_err(Failure::Usage)
            .and_then(|()| {
                cli.command.settle_block_cost();
                cli.command.run().map_err(Failure::Run)
            }),
    )
}

/// Parses the command line; clap prints its errors and exits with status 2.
fn parse() -> Cli {
    let matches = commands::accept_negative_numbers(Cli::command()).get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}
