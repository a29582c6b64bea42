//! `waitwise report [--out DIR] [--full]`: every experiment, written as a
//! readable report directory.

use super::paths::check_writable_dir;
use super::stdout::outln;
use std::path::PathBuf;
use waitwise_bench::report::{run as run_report, ReportConfig, Size};

/// Options of `waitwise report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Output directory.
    #[arg(long, default_value = "waitwise-report")]
    pub out: PathBuf,
    /// Paper-sized runs (takes much longer).
    #[arg(long, conflicts_with = "tiny")]
    pub full: bool,
    /// Seconds-long runs, to check the pipeline.
    #[arg(long, hide = true)]
    pub tiny: bool,
}

/// Checks that the report directory can be written, before the experiments
/// run for minutes.
///
/// # Errors
/// `--out` is a file, or is or would be in a directory that cannot be
/// written.
pub fn validate(args: &ReportArgs) -> anyhow::Result<()> {
    check_writable_dir("--out", &args.out)
}

/// Runs everything and writes the report.
pub fn run(args: &ReportArgs) -> anyhow::Result<()> {
    let size = if args.full {
        Size::Full
    } else if args.tiny {
        Size::Tiny
    } else {
        Size::Quick
    };
    let command_line: Vec<String> = std::env::args().collect();
    let written = run_report(
        &ReportConfig {
            out_dir: args.out.clone(),
            size,
            program: std::env::current_exe().ok(),
        },
        &command_line.join(" "),
    )?;
    outln!("wrote {}", written.index.display())?;
    outln!("wrote {}", written.results.display())?;
    for csv in &written.csvs {
        outln!("wrote {}", csv.display())?;
    }
    Ok(())
}
