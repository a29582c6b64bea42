//! The check that a table's CSV and JSON exports agree, for every
//! experiment's tests.

use super::exporter::Exporter;
use super::json::JsonExporter;
use super::table::Table;

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
