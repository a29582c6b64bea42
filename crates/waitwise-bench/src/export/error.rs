//! [`ExportError`]: why a table could not be exported.

use thiserror::Error;

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
