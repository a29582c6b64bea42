//! The [`Exporter`] trait that every export format implements, the
//! [`Format`] names for the command line, and [`ExportError`].

use thiserror::Error;

use super::csv::CsvExporter;
use super::json::JsonExporter;
use super::table::Table;

/// Turns a [`Table`] into the text of one file.
///
/// Implementations validate the table first ([`Table::validate`]) and never
/// panic; writing the text to disk is the caller's job (`anyhow` context at
/// the I/O edge).
pub trait Exporter {
    /// The file's text.
    ///
    /// # Errors
    /// An [`ExportError`] when the table is malformed (see
    /// [`Table::validate`]).
    fn export(&self, table: &Table) -> Result<String, ExportError>;

    /// File extension without the dot: `"csv"`, `"json"`.
    fn extension(&self) -> &'static str;

    /// File name for `table`: its name and this format's extension,
    /// `mechanisms.csv`.
    fn file_name(&self, table: &Table) -> String {
        format!("{}.{}", table.name, self.extension())
    }
}

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

/// Why a table could not be exported.
#[derive(Debug, Error)]
pub enum ExportError {
    /// A row does not have one cell per column.
    #[error(
        "table {table:?}, row {row}: expected {expected} cells (one per column), found {found}"
    )]
    RowLength {
        /// The table's name.
        table: String,
        /// Index of the row, from 0.
        row: usize,
        /// Number of columns.
        expected: usize,
        /// Number of cells in the row.
        found: usize,
    },
    /// Two exported keys are equal, counting the unit suffix, the row
    /// [`NOTE_KEY`](super::NOTE_KEY) and the JSON `<key>_note` keys.
    #[error("table {table:?}: key {key:?} appears twice among the exported keys")]
    DuplicateKey {
        /// The table's name.
        table: String,
        /// The repeated key.
        key: String,
    },
    /// A column key is empty or blank.
    #[error("table {table:?}: column {column} has an empty key")]
    EmptyKey {
        /// The table's name.
        table: String,
        /// Index of the column, from 0.
        column: usize,
    },
    /// `row_notes` is longer than `rows`.
    #[error("table {table:?}: {notes} row notes for {rows} rows")]
    ExtraNotes {
        /// The table's name.
        table: String,
        /// Number of notes.
        notes: usize,
        /// Number of rows.
        rows: usize,
    },
    /// serde_json failed to encode a value.
    #[error("JSON encoding failed: {0}")]
    Json(#[from] serde_json::Error),
}
