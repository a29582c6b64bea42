//! Result tables and their export formats, one format per file.
//!
//! | file | what |
//! | --- | --- |
//! | `table.rs` | [`Table`], [`Column`], [`Cell`]: one experiment's results, with units |
//! | `exporter.rs` | the [`Exporter`] trait every format implements |
//! | `error.rs` | [`ExportError`]: why a table could not be exported |
//! | `format.rs` | [`Format`]: the formats by their command-line names |
//! | `csv.rs` | [`CsvExporter`]: RFC 4180 CSV, header keys carry the unit (`t_wakeup_ns`) |
//! | `text.rs` | [`TextExporter`]: aligned columns for the terminal |
//! | `json.rs` | [`JsonExporter`]: an array of objects with the same keys as the CSV header |
//!
//! Test helpers: `testing.rs` holds a sample table, `agreement.rs` the
//! check that a table's CSV and JSON exports agree.

#[cfg(test)]
pub(crate) mod agreement;
mod csv;
mod error;
mod exporter;
mod format;
mod json;
mod table;
#[cfg(test)]
pub(crate) mod testing;
mod text;

pub use self::csv::CsvExporter;
pub use self::error::ExportError;
pub use self::exporter::Exporter;
pub use self::format::Format;
pub use self::json::JsonExporter;
pub use self::table::{Cell, Column, Table, NOTE_KEY};
pub use self::text::{format_number, TextExporter};
