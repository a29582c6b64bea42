//! One file per subcommand; each exposes `XArgs` (clap) and `run(&XArgs)`.

pub mod asymmetry;
pub mod barriers;
pub mod mechanisms;
pub mod model;
pub mod output;
pub mod oversub;
pub mod preset;
pub mod probe;
pub mod profile;
pub mod report;
pub mod simulate;
pub mod wakeup_matrix;

/// Reads every `WAITWISE_*` variable now, before any command runs, as the
/// library and the interposer do ([`waitwise::env`]): a rejected value
/// prints its one line on stderr, its default is used and the command runs
/// on. `waitwise probe` lists them again as `env_errors`.
pub fn read_environment() {
    let _ = waitwise::env::settings();
}
