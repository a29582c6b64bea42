//! A sample table for the exporters' and the HTML report's tests.

use super::table::{Cell, Column, Table};

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
