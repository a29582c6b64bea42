//! Test helpers for tables: one sample table for the exporters' and the
//! HTML report's tests, and the check that a table's CSV and JSON exports
//! agree.

use super::{Cell, Column, Exporter, JsonExporter, Table};

/// Seed 000's Table 1 in small: a text, a number with a unit and an
/// integer column, markup in the title and in a column doc, and a row with
/// a missing value and a note that CSV must quote.
pub(crate) fn sample_table() -> Table {
    let mut table = Table::new(
        "mechanisms",
        "Condition <wait> & notify",
        vec![
            Column::new("contender", None, "waiting \"mechanism\""),
            Column::new("t_wakeup", Some("ns"), "notify to running"),
            Column::new("rounds", None, "count"),
        ],
    );
    table.push_row(
        vec![Cell::text("spin"), Cell::Number(81.523), Cell::Integer(240)],
        None,
    );
    table.push_row(
        vec![
            Cell::text("umwait"),
            Cell::missing("n/a: CPU lacks WAITPKG"),
            Cell::Integer(0),
        ],
        Some("not run, CPU lacks WAITPKG".into()),
    );
    table
}

/// `t` validates, and its CSV header keys are the keys of its JSON export
/// (the report's CSVs and `results.json` agree).
pub(crate) fn assert_exports_agree(t: &Table) {
    t.validate().unwrap();
    let json: serde_json::Value = serde_json::from_str(&JsonExporter.export(t).unwrap()).unwrap();
    let mut keys: Vec<String> = json[0]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !k.ends_with("_note"))
        .cloned()
        .collect();
    let mut header = t.header_keys();
    keys.sort();
    header.sort();
    assert_eq!(header, keys, "table {}", t.name);
}
