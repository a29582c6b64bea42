//! How every experiment subcommand prints its result: readable tables by
//! default, `--json` for the whole result object, `--csv` for every table
//! (each preceded by a `# name` line). [`print_table`] prints one table
//! either way, also for `model` and `profile`.

use serde::Serialize;
use waitwise_bench::experiments::ExperimentOutput;
use waitwise_bench::export::{CsvExporter, Exporter, Table, TextExporter};

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
        print_table(&table, args.csv)?;
    }
    if !args.csv {
        for note in result.notes() {
            println!("{note}");
        }
    }
    Ok(())
}

/// Prints one table as aligned text, or with `csv` as CSV after a
/// `# <table>` line.
pub fn print_table(t: &Table, csv: bool) -> anyhow::Result<()> {
    if csv {
        println!("# {}", t.name);
        print!("{}", CsvExporter.export(t)?);
    } else {
        println!("{}", TextExporter.export(t)?);
    }
    Ok(())
}
