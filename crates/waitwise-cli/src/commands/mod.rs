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

/// Refuses to run on a malformed `WAITWISE_DISABLE` (an unknown name must
/// not silently leave a hardware wait enabled). Other rejected overrides
/// (`WAITWISE_ALPHA`, `WAITWISE_BLOCK_NS`) keep their defaults and were
/// already reported on stderr by the library.
pub fn validate_environment() -> anyhow::Result<()> {
    waitwise_platform::disable::disabled()?;
    Ok(())
}
