//! How every experiment subcommand prints its result: readable tables by
//! default, `--json` for the whole result object, `--csv` for every table
//! (each preceded by a `# name` line).

use serde::Serialize;
use waitwise_bench::experiments::ExperimentOutput;
use waitwise_bench::export::{CsvExporter, Exporter, TextExporter};

/// Output options shared by the experiment subcommands.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct OutputArgs {
    /// Print the full result as one JSON object.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print every table as CSV, each after a `# <table>` line.
    #[arg(long)]
    pub csv: bool,
}

/// Prints `result` as `args` asks.
pub fn emit<R: ExperimentOutput + Serialize>(result: &R, args: &OutputArgs) -> anyhow::Result<()> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(result)?);
        return Ok(());
    }
    for table in result.tables() {
        if args.csv {
            println!("# {}", table.name);
            print!("{}", CsvExporter.export(&table)?);
        } else {
            println!("{}", TextExporter.export(&table)?);
        }
    }
    if !args.csv {
        for note in result.notes() {
            println!("{note}");
        }
    }
    Ok(())
}
