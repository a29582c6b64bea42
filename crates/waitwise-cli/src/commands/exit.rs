//! How a run of `waitwise` ends: its exit status and its one message on
//! stderr.
//!
//! | status | when |
//! |---|---|
//! | 0 | success; also when the reader of standard output closed it early (`waitwise ... \| head -1`) |
//! | 1 | a failure while running: an experiment, reading an input file, writing standard output or a file |
//! | 2 | the command line was rejected before anything ran: clap's parse errors, and the checks of [`super::Command::validate`] (ranges, `--only` filters, output paths) |
//!
//! Status 2 is clap's own status for usage errors, so every rejected
//! command line ends the same way. `waitwise run` is the exception once its
//! program has run: it exits with the program's status
//! ([`super::run::shell_status`]).

use super::stdout::{errln, StdoutClosed};
use std::process::ExitCode;

/// Exit status of a rejected command line (clap's `error.exit()` uses the
/// same).
pub const USAGE: u8 = 2;
/// Exit status of a failure while running.
pub const FAILED: u8 = 1;

/// Why a run did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// The command line asks for something invalid or impossible; nothing
    /// ran.
    Usage(anyhow::Error),
    /// The command failed while running.
    Run(anyhow::Error),
}

/// Prints the failure's message, if any, and returns the exit status: a
/// usage error as clap prints its own, a failure while running as
/// `waitwise: <what failed>: <cause>`.
pub fn finish(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Run(e)) if e.is::<StdoutClosed>() => ExitCode::SUCCESS,
        Err(Failure::Usage(e)) => {
            // The shape of clap's own usage errors.
            errln!("error: {e:#}\n\nFor more information, try '--help'.");
            ExitCode::from(USAGE)
        }
        Err(Failure::Run(e)) => {
            errln!("waitwise: {e:#}");
            ExitCode::from(FAILED)
        }
    }
}
