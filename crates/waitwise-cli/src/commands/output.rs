//! How the commands print their results: readable tables by default,
//! `--json` for the whole result object, `--csv` for every table (each
//! after a `# <table>` line); `--export-json FILE` and `--export-csv FILE`
//! write the same JSON and CSV to files as well, whatever standard output
//! shows (as hyperfine's options of the same names do).
//!
//! A command describes its output once as a [`Printout`] and hands it the
//! options: [`Printout::emit`].

use super::paths::check_writable_file;
use super::stdout::{self, outln};
use anyhow::Context;
use serde::Serialize;
use std::path::{Path, PathBuf};
use waitwise_bench::experiments::ExperimentOutput;
use waitwise_bench::export::{CsvExporter, Exporter, Table, TextExporter};

/// Output options shared by the commands with tables.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct OutputArgs {
    /// Print the full result as one JSON object.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print every table as CSV, each after a `# <table>` line.
    #[arg(long)]
    pub csv: bool,
    /// Also write the full result as JSON (what --json prints) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Also write every table as CSV (what --csv prints) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
}

impl OutputArgs {
    /// Options that print JSON on standard output and export nothing.
    pub fn json_only(json: bool) -> OutputArgs {
        OutputArgs {
            json,
            ..OutputArgs::default()
        }
    }

    /// Checks the export paths before anything runs.
    ///
    /// # Errors
    /// An export file that cannot be written (see [`check_writable_file`]).
    pub fn validate(&self) -> anyhow::Result<()> {
        if let Some(path) = &self.export_json {
            check_writable_file("--export-json", path)?;
        }
        if let Some(path) = &self.export_csv {
            check_writable_file("--export-csv", path)?;
        }
        Ok(())
    }
}

/// What a command prints.
pub struct Printout<'a, S: Serialize> {
    /// The whole result: what `--json` prints.
    pub result: &'a S,
    /// The tables: what `--csv` prints, every row.
    pub tables: Vec<Table>,
    /// The tables of the readable view (the same as `tables` unless a
    /// command shows fewer rows on the terminal).
    pub text_tables: Vec<Table>,
    /// Lines after the readable view's tables.
    pub notes: Vec<String>,
}

impl<'a, S: Serialize> Printout<'a, S> {
    /// `result` with `tables`, shown whole in every format, and no notes.
    pub fn new(result: &'a S, tables: Vec<Table>) -> Self {
        Printout {
            result,
            text_tables: tables.clone(),
            tables,
            notes: Vec::new(),
        }
    }

    /// The readable view shows `tables` instead.
    pub fn text_tables(mut self, tables: Vec<Table>) -> Self {
        self.text_tables = tables;
        self
    }

    /// The readable view ends with `notes`.
    pub fn notes(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }

    /// Writes the export files `args` asks for, then prints to standard
    /// output as it asks. Files come first, so that a reader closing the
    /// pipe early (`| head`) does not cost them.
    ///
    /// # Errors
    /// A file or standard output that cannot be written, or a malformed
    /// table.
    pub fn emit(&self, args: &OutputArgs) -> anyhow::Result<()> {
        if let Some(path) = &args.export_json {
            write_file(path, &self.json()?)?;
        }
        if let Some(path) = &args.export_csv {
            write_file(path, &self.csv()?)?;
        }
        if args.json {
            stdout::write(&self.json()?)
        } else if args.csv {
            stdout::write(&self.csv()?)
        } else {
            for t in &self.text_tables {
                outln!("{}", TextExporter.export(t)?)?;
            }
            for note in &self.notes {
                outln!("{note}")?;
            }
            Ok(())
        }
    }

    fn json(&self) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(self.result)? + "\n")
    }

    fn csv(&self) -> anyhow::Result<String> {
        let mut out = String::new();
        for t in &self.tables {
            out.push_str(&format!("# {}\n", t.name));
            out.push_str(&CsvExporter.export(t)?);
        }
        Ok(out)
    }
}

impl<'a, R: ExperimentOutput + Serialize> Printout<'a, R> {
    /// An experiment's result: its tables and notes.
    pub fn of(result: &'a R) -> Self {
        Printout::new(result, result.tables()).notes(result.notes())
    }
}

/// Prints an experiment's result as `args` asks.
pub fn emit<R: ExperimentOutput + Serialize>(result: &R, args: &OutputArgs) -> anyhow::Result<()> {
    Printout::of(result).emit(args)
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
