//! [`Table`]: one experiment's results as named, unit-carrying columns and
//! rows of [`Cell`]s, the one shape every export format and the HTML report
//! read.

use serde::{Deserialize, Serialize};

use super::error::ExportError;

/// Key of the per-row note column that every export ends with (see
/// [`Table::row_notes`]).
pub const NOTE_KEY: &str = "note";

/// Suffix of the JSON key that explains a missing value: `t_wakeup_ns` is
/// null and `t_wakeup_ns_note` says why.
pub(super) const MISSING_NOTE_SUFFIX: &str = "_note";

/// A table of results, for example seed 000 Table 1 measured on this machine.
///
/// Build it with [`Table::new`] and [`Table::push_row`] (which keeps
/// [`row_notes`](Table::row_notes) aligned with the rows), then hand it to an
/// [`Exporter`](super::Exporter) or to the HTML report.
///
/// # Examples
/// ```
/// use waitwise_bench::export::{Cell, Column, CsvExporter, Exporter, Table};
/// let mut table = Table::new(
///     "mechanisms",
///     "Condition wait/notify (Anastopoulos & Koziris 2008, Table 1)",
///     vec![
///         Column::new("contender", None, "waiting mechanism or peer"),
///         Column::new("t_wakeup", Some("ns"), "notify to waiter running, median"),
///     ],
/// );
/// table.push_row(vec![Cell::text("spin"), Cell::Number(81.5)], None);
/// table.push_row(
///     vec![Cell::text("umwait"), Cell::missing("n/a: CPU lacks WAITPKG")],
///     None,
/// );
/// let csv = CsvExporter.export(&table).unwrap();
/// assert!(csv.starts_with("contender,t_wakeup_ns,note\r\n"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// File stem of the exported files: `"mechanisms"` gives
    /// `mechanisms.csv`. Letters, digits, `-` and `_` only, by convention.
    pub name: String,
    /// Human title, shown over the table in the report.
    pub title: String,
    /// The columns, in display and export order.
    pub columns: Vec<Column>,
    /// The rows; each has exactly one cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// An optional note per row, by row index: why the row is flagged, for
    /// example "noisy: 95% CI is 35% of the median". Rows with a note are
    /// highlighted in the report and the note is exported in the
    /// [`NOTE_KEY`] column. May be shorter than `rows` (the rest have none),
    /// never longer.
    #[serde(default)]
    pub row_notes: Vec<Option<String>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(name: impl Into<String>, title: impl Into<String>, columns: Vec<Column>) -> Table {
        Table {
            name: name.into(),
            title: title.into(),
            columns,
            rows: Vec::new(),
            row_notes: Vec::new(),
        }
    }

    /// Appends a row and its note (`None` for an ordinary row).
    ///
    /// A row with the wrong number of cells is kept as given and reported
    /// by [`Table::validate`] at export time.
    pub fn push_row(&mut self, cells: Vec<Cell>, note: Option<String>) {
        self.row_notes.resize(self.rows.len(), None);
        self.rows.push(cells);
        self.row_notes.push(note);
    }

    /// The note of row `index`, if it has one.
    pub fn row_note(&self, index: usize) -> Option<&str> {
        self.row_notes.get(index).and_then(|n| n.as_deref())
    }

    /// The keys of an exported row, in order: each column's
    /// [`Column::header_key`], then [`NOTE_KEY`]. The CSV header is exactly
    /// this; JSON objects have these keys plus `<key>_note` beside each
    /// missing value.
    pub fn header_keys(&self) -> Vec<String> {
        self.columns
            .iter()
            .map(Column::header_key)
            .chain(std::iter::once(NOTE_KEY.to_owned()))
            .collect()
    }

    /// Checks what every format relies on: no empty or repeated key (the
    /// JSON `<key>_note` keys included), one cell per column in every row,
    /// no more notes than rows.
    ///
    /// # Errors
    /// The first problem found, as an [`ExportError`].
    pub fn validate(&self) -> Result<(), ExportError> {
        let keys = self.header_keys();
        let mut seen = std::collections::HashSet::new();
        for (index, column) in self.columns.iter().enumerate() {
            if column.key.trim().is_empty() {
                return Err(ExportError::EmptyKey {
                    table: self.name.clone(),
                    column: index,
                });
            }
        }
        let note_keys = self
            .columns
            .iter()
            .map(|c| format!("{}{MISSING_NOTE_SUFFIX}", c.header_key()));
        for key in keys.iter().cloned().chain(note_keys) {
            if !seen.insert(key.clone()) {
                return Err(ExportError::DuplicateKey {
                    table: self.name.clone(),
                    key,
                });
            }
        }
        for (index, row) in self.rows.iter().enumerate() {
            if row.len() != self.columns.len() {
                return Err(ExportError::RowLength {
                    table: self.name.clone(),
                    row: index,
                    expected: self.columns.len(),
                    found: row.len(),
                });
            }
        }
        if self.row_notes.len() > self.rows.len() {
            return Err(ExportError::ExtraNotes {
                table: self.name.clone(),
                notes: self.row_notes.len(),
                rows: self.rows.len(),
            });
        }
        Ok(())
    }
}

/// One column of a [`Table`]: a key, a unit and what it means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// Machine name without the unit: `"t_wakeup"`. The exported key adds the
    /// unit ([`Column::header_key`]).
    pub key: String,
    /// Unit of the values: `"ns"`, `"cycles"`, `"s"`, `"ratio"`, `"count"`;
    /// `None` for text and unitless columns.
    pub unit: Option<String>,
    /// One sentence on what the column holds, shown in the report.
    pub doc: String,
}

impl Column {
    /// A column; `unit` is copied when given.
    pub fn new(key: impl Into<String>, unit: Option<&str>, doc: impl Into<String>) -> Column {
        Column {
            key: key.into(),
            unit: unit.map(str::to_owned),
            doc: doc.into(),
        }
    }

    /// The exported key: the key, then `_` and the unit, so that a file read
    /// without its documentation still says its units: `t_wakeup` in `ns` is
    /// `t_wakeup_ns`.
    ///
    /// The unit is made key-safe first (lowercase ASCII letters and digits,
    /// `%` as `pct`, `/` as `_per_`, anything else as `_`), and is not added
    /// twice when the key already ends with it.
    ///
    /// # Examples
    /// ```
    /// use waitwise_bench::export::Column;
    /// assert_eq!(Column::new("t_wakeup", Some("ns"), "").header_key(), "t_wakeup_ns");
    /// assert_eq!(Column::new("rate", Some("ops/s"), "").header_key(), "rate_ops_per_s");
    /// assert_eq!(Column::new("busy", Some("%"), "").header_key(), "busy_pct");
    /// assert_eq!(Column::new("t_ns", Some("ns"), "").header_key(), "t_ns");
    /// assert_eq!(Column::new("name", None, "").header_key(), "name");
    /// ```
    pub fn header_key(&self) -> String {
        let unit = self.unit.as_deref().map(unit_suffix).unwrap_or_default();
        if unit.is_empty() || self.key.ends_with(&format!("_{unit}")) {
            self.key.clone()
        } else {
            format!("{}_{unit}", self.key)
        }
    }

    /// The column's title in the report: `t_wakeup (ns)`.
    pub fn display_name(&self) -> String {
        match self.unit.as_deref() {
            Some(unit) if !unit.is_empty() => format!("{} ({unit})", self.key),
            _ => self.key.clone(),
        }
    }
}

/// `unit` as a key suffix: see [`Column::header_key`].
fn unit_suffix(unit: &str) -> String {
    let mut out = String::new();
    for c in unit.trim().chars() {
        match c {
            'a'..='z' | '0'..='9' => out.push(c),
            'A'..='Z' => out.push(c.to_ascii_lowercase()),
            '%' => out.push_str("pct"),
            '/' => out.push_str("_per_"),
            _ => out.push('_'),
        }
    }
    // Collapse runs of '_' and trim them at the ends.
    out.split('_')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// One value of a [`Table`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cell {
    /// Text: a contender's name, a CPU list, a setup.
    Text(String),
    /// A measured or derived number, in the column's unit.
    Number(f64),
    /// An exact count: rounds, CPUs, blocks.
    Integer(i64),
    /// No value, and why: "n/a: CPU lacks WAITPKG". Such rows are kept, never
    /// dropped, so a reader sees what was not measured.
    Missing(String),
}

impl Cell {
    /// A [`Cell::Text`].
    pub fn text(text: impl Into<String>) -> Cell {
        Cell::Text(text.into())
    }

    /// A [`Cell::Missing`] with this reason.
    pub fn missing(reason: impl Into<String>) -> Cell {
        Cell::Missing(reason.into())
    }

    /// A [`Cell::Number`] when there is a value, else a [`Cell::Missing`]
    /// with this reason.
    pub fn number_or_missing(value: Option<f64>, reason: impl Into<String>) -> Cell {
        value.map_or_else(|| Cell::missing(reason), Cell::Number)
    }

    /// Whether this cell holds no value ([`Cell::Missing`]).
    pub fn is_missing(&self) -> bool {
        matches!(self, Cell::Missing(_))
    }
}

impl From<f64> for Cell {
    fn from(value: f64) -> Cell {
        Cell::Number(value)
    }
}

impl From<i64> for Cell {
    fn from(value: i64) -> Cell {
        Cell::Integer(value)
    }
}

impl From<&str> for Cell {
    fn from(value: &str) -> Cell {
        Cell::Text(value.to_owned())
    }
}

impl From<String> for Cell {
    fn from(value: String) -> Cell {
        Cell::Text(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table::new(
            "t",
            "T",
            vec![
                Column::new("a", None, "first"),
                Column::new("b", Some("ns"), "second"),
            ],
        )
    }

    #[test]
    fn push_row_keeps_notes_aligned() {
        let mut t = table();
        t.rows.push(vec![Cell::text("raw"), Cell::Number(1.0)]);
        t.push_row(
            vec![Cell::text("x"), Cell::Number(2.0)],
            Some("noisy".into()),
        );
        assert_eq!(t.row_notes, vec![None, Some("noisy".to_owned())]);
        assert_eq!(t.row_note(1), Some("noisy"));
        assert_eq!(t.row_note(0), None);
        assert_eq!(t.row_note(7), None);
        assert!(t.validate().is_ok());
    }

    #[test]
    fn validate_reports_shape_and_key_problems() {
        let mut t = table();
        t.push_row(vec![Cell::text("x")], None);
        assert!(matches!(
            t.validate(),
            Err(ExportError::RowLength {
                row: 0,
                expected: 2,
                found: 1,
                ..
            })
        ));

        let mut t = table();
        t.columns
            .push(Column::new("b_ns", None, "same key as b in ns"));
        assert!(
            matches!(t.validate(), Err(ExportError::DuplicateKey { key, .. }) if key == "b_ns")
        );

        let mut t = table();
        t.columns
            .push(Column::new("note", None, "clashes with the row note"));
        assert!(matches!(
            t.validate(),
            Err(ExportError::DuplicateKey { .. })
        ));

        let mut t = table();
        t.columns
            .push(Column::new("b_ns_note", None, "clashes with b's JSON note"));
        assert!(matches!(
            t.validate(),
            Err(ExportError::DuplicateKey { .. })
        ));

        let mut t = table();
        t.columns.push(Column::new(" ", None, "empty"));
        assert!(matches!(
            t.validate(),
            Err(ExportError::EmptyKey { column: 2, .. })
        ));

        let mut t = table();
        t.row_notes.push(None);
        assert!(matches!(
            t.validate(),
            Err(ExportError::ExtraNotes {
                notes: 1,
                rows: 0,
                ..
            })
        ));
    }

    #[test]
    fn optional_numbers_are_numbers_or_missing() {
        assert_eq!(Cell::number_or_missing(Some(2.5), "why"), Cell::Number(2.5));
        assert_eq!(Cell::number_or_missing(None, "why"), Cell::missing("why"));
    }

    #[test]
    fn header_keys_carry_units() {
        assert_eq!(table().header_keys(), vec!["a", "b_ns", "note"]);
        let odd = Column::new("x", Some(" Cycles / op "), "");
        assert_eq!(odd.header_key(), "x_cycles_per_op");
        assert_eq!(Column::new("x", Some(""), "").header_key(), "x");
        assert_eq!(Column::new("x", Some("ns"), "").display_name(), "x (ns)");
        assert_eq!(Column::new("x", None, "").display_name(), "x");
    }

    #[test]
    fn table_round_trips_through_serde() {
        let mut t = table();
        t.push_row(
            vec![Cell::text("x"), Cell::missing("n/a")],
            Some("why".into()),
        );
        t.push_row(vec![Cell::Integer(3), Cell::Number(2.5)], None);
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains(r#"{"missing":"n/a"}"#), "{json}");
        let back: Table = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
    }
}
