//! JSON export: an array with one object per row.
//!
//! Each object has exactly the CSV header keys ([`Table::header_keys`]), in
//! the same order, numbers as JSON numbers, text as strings and the row note
//! as a string or `null`. A missing value is `null`, followed by a
//! `<key>_note` string with its reason:
//!
//! ```json
//! [
//!   {"contender": "spin", "t_wakeup_ns": 81.5, "note": null},
//!   {"contender": "umwait", "t_wakeup_ns": null, "t_wakeup_ns_note": "n/a: CPU lacks WAITPKG", "note": null}
//! ]
//! ```
//!
//! A NaN or infinite number (which JSON cannot hold) is written the same way,
//! `null` with a note. Each row is a `serde_json::Map`, which keeps its keys
//! in insertion order (serde_json's `preserve_order` feature), so the keys
//! come in the table's column order.

use serde_json::{Map, Value};

use super::error::ExportError;
use super::exporter::Exporter;
use super::table::{Cell, Table, MISSING_NOTE_SUFFIX, NOTE_KEY};

/// JSON: an array of one object per row, keyed like the CSV header.
///
/// # Examples
/// ```
/// use waitwise_bench::export::{Cell, Column, Exporter, JsonExporter, Table};
/// let mut table = Table::new("t", "T", vec![Column::new("t", Some("ns"), "")]);
/// table.push_row(vec![Cell::Number(1.5)], None);
/// table.push_row(vec![Cell::missing("n/a: CPU lacks WAITPKG")], None);
/// let json: serde_json::Value = serde_json::from_str(&JsonExporter.export(&table).unwrap()).unwrap();
/// assert_eq!(json[0]["t_ns"], 1.5);
/// assert!(json[1]["t_ns"].is_null());
/// assert_eq!(json[1]["t_ns_note"], "n/a: CPU lacks WAITPKG");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn export(&self, table: &Table) -> Result<String, ExportError> {
        table.validate()?;
        let keys = table.header_keys();
        let rows: Vec<Value> = table
            .rows
            .iter()
            .enumerate()
            .map(|(index, row)| {
                let mut object = Map::new();
                for (key, cell) in keys.iter().zip(row) {
                    let (value, note) = encode(cell);
                    object.insert(key.clone(), value);
                    if let Some(note) = note {
                        object.insert(format!("{key}{MISSING_NOTE_SUFFIX}"), Value::String(note));
                    }
                }
                let note = table.row_note(index).map(str::to_owned);
                object.insert(NOTE_KEY.to_owned(), note.map_or(Value::Null, Value::String));
                Value::Object(object)
            })
            .collect();
        let mut out = serde_json::to_string_pretty(&rows)?;
        out.push('\n');
        Ok(out)
    }

    fn extension(&self) -> &'static str {
        "json"
    }
}

/// A cell's JSON value and, for a missing or non-finite value, the note that
/// goes under `<key>_note`.
fn encode(cell: &Cell) -> (Value, Option<String>) {
    match cell {
        Cell::Text(text) => (Value::String(text.clone()), None),
        Cell::Number(value) => match serde_json::Number::from_f64(*value) {
            Some(number) => (Value::Number(number), None),
            None => (Value::Null, Some(format!("not a finite number: {value}"))),
        },
        Cell::Integer(value) => (Value::from(*value), None),
        Cell::Missing(reason) => (Value::Null, Some(reason.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::testing::sample_table;
    use crate::export::{Column, CsvExporter};
    use serde_json::Value;

    /// [`sample_table`] and a row with text CSV must quote, a number JSON
    /// cannot hold and the largest integer.
    fn sample() -> Table {
        let mut table = sample_table();
        table.push_row(
            vec![
                Cell::text("spin, \"fast\"\nloop"),
                Cell::Number(f64::INFINITY),
                Cell::Integer(i64::MAX),
            ],
            None,
        );
        table
    }

    fn parse(table: &Table) -> Vec<serde_json::Map<String, Value>> {
        let text = JsonExporter.export(table).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_object().unwrap().clone())
            .collect()
    }

    /// Splits CSV text into records of fields (RFC 4180), to check the
    /// exporter against an independent reader.
    fn read_csv(text: &str) -> Vec<Vec<String>> {
        let (mut records, mut record, mut field) = (vec![], vec![], String::new());
        let (mut quoted, mut chars) = (false, text.chars().peekable());
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                (true, '"') => quoted = false,
                (true, c) => field.push(c),
                (false, '"') => quoted = true,
                (false, ',') => record.push(std::mem::take(&mut field)),
                (false, '\r') => {}
                (false, '\n') => {
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                }
                (false, c) => field.push(c),
            }
        }
        records
    }

    #[test]
    fn csv_header_keys_equal_json_keys() {
        let table = sample();
        let csv = read_csv(&CsvExporter.export(&table).unwrap());
        let header = &csv[0];
        assert_eq!(header, &table.header_keys());
        for (index, object) in parse(&table).iter().enumerate() {
            // The JSON keys, less the notes beside missing values, are the
            // CSV header, in the same order.
            let keys: Vec<&String> = object
                .keys()
                .filter(|k| !k.ends_with(MISSING_NOTE_SUFFIX))
                .collect();
            assert_eq!(keys, header.iter().collect::<Vec<_>>(), "row {index}");
            // Each note key sits beside a null value of a CSV key.
            for key in object.keys().filter(|k| k.ends_with(MISSING_NOTE_SUFFIX)) {
                let base = key.trim_end_matches(MISSING_NOTE_SUFFIX);
                assert!(header.iter().any(|h| h == base) && object[base].is_null());
            }
        }
        // Same number of records, and the CSV reads back the text exactly.
        assert_eq!(csv.len(), 1 + table.rows.len());
        assert_eq!(csv[3][0], "spin, \"fast\"\nloop");
    }

    #[test]
    fn json_values_are_typed_and_keys_keep_column_order() {
        let table = sample();
        let rows = parse(&table);
        let keys: Vec<&str> = rows[1].keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "contender",
                "t_wakeup_ns",
                "t_wakeup_ns_note",
                "rounds",
                "note"
            ]
        );
        let rows = parse(&table);
        assert_eq!(rows[0]["contender"], "spin");
        assert_eq!(rows[0]["t_wakeup_ns"], 81.523);
        assert_eq!(rows[0]["rounds"], 240);
        assert!(rows[0]["note"].is_null());
        assert!(rows[1]["t_wakeup_ns"].is_null());
        assert_eq!(rows[1]["t_wakeup_ns_note"], "n/a: CPU lacks WAITPKG");
        assert_eq!(rows[1]["note"], "not run, CPU lacks WAITPKG");
        assert_eq!(rows[2]["contender"], "spin, \"fast\"\nloop");
        assert!(rows[2]["t_wakeup_ns"].is_null());
        assert_eq!(rows[2]["t_wakeup_ns_note"], "not a finite number: inf");
        assert_eq!(rows[2]["rounds"], i64::MAX);
    }

    #[test]
    fn empty_table_is_an_empty_array() {
        let table = Table::new("empty", "Empty", vec![Column::new("a", None, "")]);
        assert_eq!(JsonExporter.export(&table).unwrap(), "[]\n");
        assert_eq!(JsonExporter.file_name(&table), "empty.json");
    }
}
