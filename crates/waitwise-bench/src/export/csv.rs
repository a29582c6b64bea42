//! CSV export, RFC 4180.
//!
//! Written by hand rather than with the `csv` crate: the whole format is the
//! quoting rule in [`field`] (RFC 4180 section 2, rules 5-7) and CRLF line
//! ends (rule 1), and a dependency would not make it shorter.
//!
//! The header row is [`Table::header_keys`]: each column key with its unit
//! (`t_wakeup_ns`), then `note`. Numbers are written in Rust's shortest
//! round-trip form (`0.1`, `1234.5`, `NaN`, `inf`), so a column of numbers
//! holds numbers only and reads as numbers in any CSV reader. A missing
//! value is an empty field, and its reason ("n/a: CPU lacks WAITPKG") goes
//! into the row's `note` field, once per reason, after the row's own note
//! (see [`note_field`]): the file still says what was not measured and why.

use super::error::ExportError;
use super::exporter::Exporter;
use super::table::{Cell, Table};

/// RFC 4180 CSV: one header row of keys, one record per row, CRLF line ends.
///
/// # Examples
/// ```
/// use waitwise_bench::export::{Cell, Column, CsvExporter, Exporter, Table};
/// let mut table = Table::new("t", "T", vec![Column::new("name", None, "")]);
/// table.push_row(vec![Cell::text("a, \"b\"")], None);
/// assert_eq!(CsvExporter.export(&table).unwrap(), "name,note\r\n\"a, \"\"b\"\"\",\r\n");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn export(&self, table: &Table) -> Result<String, ExportError> {
        table.validate()?;
        let mut out = String::new();
        let header: Vec<String> = table.header_keys().iter().map(|k| field(k)).collect();
        out.push_str(&header.join(","));
        out.push_str("\r\n");
        for (index, row) in table.rows.iter().enumerate() {
            let mut record: Vec<String> = row.iter().map(cell_text).map(|t| field(&t)).collect();
            record.push(field(&note_field(table, index)));
            out.push_str(&record.join(","));
            out.push_str("\r\n");
        }
        Ok(out)
    }

    fn extension(&self) -> &'static str {
        "csv"
    }
}

/// The text of a cell before quoting: empty for a missing value, whose
/// reason goes into the note field.
fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Text(text) => text.clone(),
        Cell::Number(value) => value.to_string(),
        Cell::Integer(value) => value.to_string(),
        Cell::Missing(_) => String::new(),
    }
}

/// The `note` field of row `index`: the row's note, then each reason of its
/// missing values that the note does not already say, joined by `"; "`.
///
/// A reason that explains every missing value of the row stands alone
/// (`n/a: CPU lacks WAITPKG`); otherwise it names the keys it explains
/// (`exp_r2: no regression`), so each empty field can be traced to its
/// reason.
fn note_field(table: &Table, index: usize) -> String {
    let mut parts: Vec<String> = table
        .row_note(index)
        .map(str::to_owned)
        .into_iter()
        .collect();
    let keys = table.header_keys();
    // (reason, keys of the cells it explains), in column order.
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for (key, cell) in keys.iter().zip(&table.rows[index]) {
        if let Cell::Missing(reason) = cell {
            match reasons.iter_mut().find(|(r, _)| r == reason) {
                Some((_, keys)) => keys.push(key),
                None => reasons.push((reason, vec![key])),
            }
        }
    }
    let single = reasons.len() == 1;
    for (reason, keys) in reasons {
        if parts.iter().any(|p| p.contains(reason)) {
            continue;
        }
        parts.push(if single {
            reason.to_owned()
        } else {
            format!("{}: {reason}", keys.join(", "))
        });
    }
    parts.join("; ")
}

/// `text` as a CSV field: enclosed in double quotes when it holds a comma,
/// a double quote, CR or LF (RFC 4180 section 2 rule 6) or starts or ends
/// with a space (which some readers trim), with each inner double quote
/// doubled (rule 7).
fn field(text: &str) -> String {
    let needs_quotes =
        text.contains([',', '"', '\r', '\n']) || text.starts_with(' ') || text.ends_with(' ');
    if needs_quotes {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::testing::sample_table;
    use crate::export::Column;

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field(""), "");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field("cr\r\nlf"), "\"cr\r\nlf\"");
        assert_eq!(field(" padded"), "\" padded\"");
        assert_eq!(field("s/b/0.54 (pause)"), "s/b/0.54 (pause)");
    }

    #[test]
    fn table_is_written_with_header_units_and_missing_reasons() {
        let mut table = sample_table();
        table.push_row(
            vec![Cell::text("odd"), Cell::Number(f64::NAN), Cell::Integer(-1)],
            None,
        );
        let csv = CsvExporter.export(&table).unwrap();
        assert_eq!(
            csv,
            "contender,t_wakeup_ns,rounds,note\r\n\
             spin,81.523,240,\r\n\
             umwait,,0,\"not run, CPU lacks WAITPKG; n/a: CPU lacks WAITPKG\"\r\n\
             odd,NaN,-1,\r\n"
        );
        assert_eq!(CsvExporter.file_name(&table), "mechanisms.csv");
    }

    #[test]
    fn missing_values_are_empty_and_their_reasons_go_to_the_note() {
        let mut table = Table::new(
            "fit",
            "Fit",
            vec![
                Column::new("object", None, ""),
                Column::new("r2", None, ""),
                Column::new("ks", None, ""),
                Column::new("mean", Some("ns"), ""),
            ],
        );
        let no_waits = || Cell::missing("no waits");
        // One reason for every missing value: the reason alone.
        table.push_row(
            vec![Cell::text("a"), no_waits(), no_waits(), Cell::Number(1.0)],
            None,
        );
        // Two reasons: each names its keys, after the row's note.
        table.push_row(
            vec![
                Cell::text("b"),
                Cell::missing("no regression"),
                no_waits(),
                no_waits(),
            ],
            Some("fitted".into()),
        );
        // The row's note already says it: not repeated.
        table.push_row(
            vec![Cell::text("c"), no_waits(), no_waits(), no_waits()],
            Some("no waits recorded".into()),
        );
        assert_eq!(
            CsvExporter.export(&table).unwrap(),
            "object,r2,ks,mean_ns,note\r\n\
             a,,,1,no waits\r\n\
             b,,,,\"fitted; r2: no regression; ks, mean_ns: no waits\"\r\n\
             c,,,,no waits recorded\r\n"
        );
    }

    #[test]
    fn malformed_tables_are_errors() {
        let mut table = Table::new("t", "T", vec![Column::new("a", None, "")]);
        table.push_row(vec![], None);
        assert!(matches!(
            CsvExporter.export(&table),
            Err(ExportError::RowLength { .. })
        ));
    }
}
