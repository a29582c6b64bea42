//! Result tables and their export formats, one format per file.
//!
//! | file | what |
//! | --- | --- |
//! | `table.rs` | [`Table`], [`Column`], [`Cell`]: one experiment's results, with units |
//! | `exporter.rs` | the [`Exporter`] trait every format implements, and [`ExportError`] |
//! | `csv.rs` | [`CsvExporter`]: RFC 4180 CSV, header keys carry the unit (`t_wakeup_ns`) |
//! | `text.rs` | [`TextExporter`]: aligned columns for the terminal |
//! | `json.rs` | [`JsonExporter`]: an array of objects with the same keys as the CSV header |
//!
//! [`Format`] names the formats for the command line (`--csv`, `--json`).

mod csv;
mod exporter;
mod json;
mod table;
#[cfg(test)]
pub(crate) mod testing;
mod text;

pub use self::csv::CsvExporter;
pub use self::exporter::{ExportError, Exporter, Format};
pub use self::json::JsonExporter;
pub use self::table::{Cell, Column, Table, NOTE_KEY};
pub use self::text::{format_number, TextExporter};
