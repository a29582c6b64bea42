//! The [`Exporter`] trait that every export format implements.

use super::error::ExportError;
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
