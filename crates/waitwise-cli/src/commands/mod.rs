//! The subcommands, one file each; each exposes `XArgs` (clap), its checks
//! (`validate`, where it has any) and `run(&XArgs)`. [`Command`] dispatches
//! to them; the shared parts are [`output`] (tables, JSON, CSV, exports),
//! [`stdout`] (printing without panics), [`paths`] (output path checks) and
//! [`exit`] (exit status).

pub mod asymmetry;
pub mod barriers;
pub mod exit;
pub mod helpers;
pub mod interference;
pub mod mechanisms;
pub mod model;
pub mod output;
pub mod oversub;
pub mod paths;
pub mod peers;
pub mod preset;
pub mod probe;
pub mod profile;
pub mod report;
pub mod run;
pub mod simulate;
pub mod stdout;
pub mod wakeup_matrix;

use clap::Subcommand;

/// Calibrations averaged into B before experiments (see
/// [`Command::settle_block_cost`]).
const SETTLE_REPEATS: usize = 8;

/// The subcommands of `waitwise`.
#[derive(Subcommand)]
pub enum Command {
    /// What this machine offers for waiting and what waiting costs here.
    Probe(probe::ProbeArgs),
    /// Condition wait/notify per mechanism, policy and peer (Anastopoulos &
    /// Koziris 2008, Table 1).
    Mechanisms(mechanisms::MechanismsArgs),
    /// Barrier implementations under each policy and peers (Anastopoulos &
    /// Koziris 2008, Table 2).
    Barriers(barriers::BarriersArgs),
    /// Barrier time under workload asymmetry (Anastopoulos & Koziris 2008,
    /// Fig. 4).
    Asymmetry(asymmetry::AsymmetryArgs),
    /// Matched vs oversubscribed runs per waiting algorithm (Lim & Agarwal
    /// 1993, Tables 2-5).
    Oversub(oversub::OversubArgs),
    /// Each primitive against its peers (parking_lot, std, crossbeam,
    /// pthread, rayon) over a grid of operating points.
    Peers(peers::PeersArgs),
    /// Wake-up latency for every ordered pair of CPUs (Poenaru 2017, section
    /// 4.1).
    WakeupMatrix(wakeup_matrix::WakeupMatrixArgs),
    /// Helper threads: speculative precomputation and helper-threaded
    /// Dijkstra under each helper wait (Anastopoulos & Koziris 2008,
    /// section 4.4; Anastopoulos 2009, part II).
    Helpers(helpers::HelpersArgs),
    /// What a waiting thread costs the thread beside it, per placement,
    /// kernel and mechanism (UltraSPARC T2 spin-loop study; Poenaru 2017).
    Interference(interference::InterferenceArgs),
    /// Run every experiment (quick by default) and write the report directory.
    Report(report::ReportArgs),
    /// The two-phase waiting cost model (Lim & Agarwal 1993): curves, optimal
    /// alpha, fits to profiles, calibration on this machine.
    Model(model::ModelArgs),
    /// Discrete-event simulation of waiting algorithms on a large machine
    /// (Lim & Agarwal 1993, Tables 2-5).
    Simulate(simulate::SimulateArgs),
    /// Read a wait-time profile (WAITWISE_PROFILE) and recommend alpha per kind.
    Profile(profile::ProfileArgs),
    /// Run a program under the interposer (LD_PRELOAD); with --profile,
    /// report where its threads waited.
    Run(run::RunArgs),
}

impl Command {
    /// Checks what the command line asks for before anything runs: value
    /// ranges clap cannot express, `--only` filters, output paths.
    ///
    /// # Errors
    /// What is wrong, naming the option and what it accepts; `main` exits
    /// with [`exit::USAGE`].
    pub fn validate(&self) -> anyhow::Result<()> {
        match self {
            Command::Probe(_) => Ok(()),
            Command::Mechanisms(a) => mechanisms::validate(a),
            Command::Barriers(a) => barriers::validate(a),
            Command::Asymmetry(a) => asymmetry::validate(a),
            Command::Oversub(a) => oversub::validate(a),
            Command::Peers(a) => peers::validate(a),
            Command::WakeupMatrix(a) => wakeup_matrix::validate(a),
            Command::Helpers(a) => helpers::validate(a),
            Command::Interference(a) => interference::validate(a),
            Command::Report(a) => report::validate(a),
            Command::Model(a) => model::validate(a),
            Command::Simulate(a) => simulate::validate(a),
            Command::Profile(a) => a.output.validate(),
            Command::Run(a) => run::validate(a),
        }
    }

    /// Fixes B now, for the commands that measure waits, while this process
    /// runs nothing else: measured inside an experiment, it would time
    /// hand-offs against the experiment's own busy threads. Up to 0.4 s on a
    /// settled B (8 spaced calibrations: the wake-up cost on a VM switches
    /// modes over tens of ms, and the results hinge on B). The other
    /// commands measure nothing up front.
    pub fn settle_block_cost(&self) {
        let measures = match self {
            Command::Mechanisms(_)
            | Command::Barriers(_)
            | Command::Asymmetry(_)
            | Command::Oversub(_)
            | Command::WakeupMatrix(_)
            | Command::Helpers(_)
            | Command::Interference(_)
            | Command::Report(_) => true,
            Command::Peers(args) => !args.learns_block_cost(),
            Command::Model(args) => args.measures(),
            Command::Probe(_) | Command::Simulate(_) | Command::Profile(_) | Command::Run(_) => {
                false
            }
        };
        if measures {
            let _ = waitwise::policy::block_cost::settle_block_cost(
                SETTLE_REPEATS,
                std::time::Duration::from_millis(10),
            );
        }
    }

    /// Runs the command and prints or writes its results.
    ///
    /// # Errors
    /// A failure while running; `main` exits with [`exit::FAILED`], or
    /// quietly with success when standard output was closed by its reader.
    pub fn run(&self) -> anyhow::Result<()> {
        match self {
            Command::Probe(a) => probe::run(a),
            Command::Mechanisms(a) => mechanisms::run(a),
            Command::Barriers(a) => barriers::run(a),
            Command::Asymmetry(a) => asymmetry::run(a),
            Command::Oversub(a) => oversub::run(a),
            Command::Peers(a) => peers::run(a),
            Command::WakeupMatrix(a) => wakeup_matrix::run(a),
            Command::Helpers(a) => helpers::run(a),
            Command::Interference(a) => interference::run(a),
            Command::Report(a) => report::run(a),
            Command::Model(a) => model::run(a),
            Command::Simulate(a) => simulate::run(a),
            Command::Profile(a) => profile::run(a),
            Command::Run(a) => run::run(a),
        }
    }
}

/// `cmd` and its subcommands with every option value allowed to look like a
/// negative number, so that `--rounds -5` reaches the option's value parser
/// (which says what range it accepts) instead of being read as an unknown
/// option `-5`.
pub fn accept_negative_numbers(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        if arg.get_action().takes_values() {
            arg.allow_negative_numbers(true)
        } else {
            arg
        }
    })
    .mut_subcommands(accept_negative_numbers)
}

/// The error for an `--only` filter: every entry of `only` must be part of
/// at least one of `names`.
///
/// # Errors
/// The first entry that matches nothing, with the names it could match.
pub fn check_only<'a>(
    only: &[String],
    names: impl IntoIterator<Item = &'a str> + Clone,
    what: &str,
) -> anyhow::Result<()> {
    for entry in only {
        if !names
            .clone()
            .into_iter()
            .any(|n| n.contains(entry.as_str()))
        {
            let all: Vec<&str> = names.into_iter().collect();
            anyhow::bail!(
                "--only {entry:?} matches no {what}; each --only must be part of one of: {}",
                all.join(", ")
            );
        }
    }
    Ok(())
}

/// Reads every `WAITWISE_*` variable now, before any command runs, as the
/// library and the interposer do ([`waitwise::env`]): a rejected value
/// prints its one line on stderr, its default is used and the command runs
/// on. `waitwise probe` lists them again as `env_errors`.
pub fn read_environment() {
    let _ = waitwise::env::settings();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_entries_must_each_match_a_name() {
        let names = ["spin", "pause", "s/b/0.54"];
        assert!(check_only(&[], names, "contender").is_ok());
        assert!(check_only(&["pa".into(), "s/b".into()], names, "contender").is_ok());
        let err = check_only(&["spin".into(), "umwiat".into()], names, "contender")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"umwiat\"") && err.contains("spin, pause, s/b/0.54"),
            "{err}"
        );
    }
}
