//! [`Format`]: the export formats, as named on the command line.

use super::csv::CsvExporter;
use super::exporter::Exporter;
use super::json::JsonExporter;

/// The export formats, as chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// RFC 4180 CSV ([`CsvExporter`]).
    Csv,
    /// JSON array of objects ([`JsonExporter`]).
    Json,
}

impl Format {
    /// Every format, in the order the report writes them.
    pub const ALL: [Format; 2] = [Format::Csv, Format::Json];

    /// The exporter for this format.
    pub fn exporter(self) -> &'static dyn Exporter {
        match self {
            Format::Csv => &CsvExporter,
            Format::Json => &JsonExporter,
        }
    }
}
