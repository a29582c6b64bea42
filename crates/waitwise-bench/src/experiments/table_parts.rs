//! Parts of result tables the experiments share: a row's name and family,
//! the columns and cells of a worker-to-waiter hand-off, a figure's median
//! in the report's units, and the cells and notes of rows that did not run
//! or came out noisy.

use crate::contender::Family;
use crate::export::{Cell, Column, Table};
use crate::measure::Timing;
use crate::stats::Summary;

/// Row note of a figure whose median's 95% CI is wider than 20% of the
/// median ([`Summary::is_noisy`]).
pub const NOISY_NOTE: &str = "noisy: median 95% CI wider than 20% of the median";

/// Why a figure is missing when its measurement produced no samples.
const NO_DATA: &str = "no data";

/// The first two cells of an implementation's row: its name and its
/// [`Family`].
pub fn name_and_family(name: &str, family: Family) -> Vec<Cell> {
    vec![Cell::text(name), Cell::text(family.name())]
}

/// The columns of a worker-to-waiter hand-off (seed 000's Tables 1 and 2):
/// `t_work` (ms), `t_wakeup` (ns, CI half-width, cycles), `t_call` (ns,
/// cycles) and `waiter_cpu` (pct). `wakeup`, `call` and `waiter_cpu` say
/// what the experiment's wake-up, call and waiter CPU figures are.
pub fn hand_off_columns(wakeup: &str, call: &str, waiter_cpu: &str) -> Vec<Column> {
    vec![
        Column::new(
            "t_work",
            Some("ms"),
            "worker's kernel time (median): interference from the waiter",
        ),
        Column::new("t_wakeup", Some("ns"), wakeup),
        Column::new(
            "t_wakeup_median_ci95",
            Some("ns"),
            "half the width of the 95% CI of the median wake-up (order statistics; its ends are in results.json)",
        ),
        Column::new("t_wakeup", Some("cycles"), wakeup),
        Column::new("t_call", Some("ns"), call),
        Column::new("t_call", Some("cycles"), call),
        Column::new("waiter_cpu", Some("pct"), waiter_cpu),
    ]
}

/// The cells under [`hand_off_columns`], from the worker's kernel time
/// (ns), the wake-up and call latencies and the waiter's CPU fraction.
pub fn hand_off_cells(
    t_work_ns: Option<&Summary>,
    t_wakeup: Option<&Timing>,
    t_call: Option<&Timing>,
    waiter_cpu_fraction: Option<&Summary>,
) -> Vec<Cell> {
    vec![
        median_ms(t_work_ns),
        median_ns(t_wakeup),
        median_ci95_half_width_ns(t_wakeup),
        median_cycles(t_wakeup),
        median_ns(t_call),
        median_cycles(t_call),
        median_pct(waiter_cpu_fraction),
    ]
}

/// The median of `t`, ns.
pub fn median_ns(t: Option<&Timing>) -> Cell {
    Cell::number_or_missing(t.map(|t| t.ns.median), NO_DATA)
}

/// The median of `t`, clock ticks.
pub fn median_cycles(t: Option<&Timing>) -> Cell {
    Cell::number_or_missing(t.map(|t| t.cycles.median), NO_DATA)
}

/// Half the width of the 95% CI of `t`'s median, ns.
fn median_ci95_half_width_ns(t: Option<&Timing>) -> Cell {
    Cell::number_or_missing(t.map(|t| t.ns.median_ci95_half_width()), NO_DATA)
}

/// The median of `s`, a summary in ns, in ms.
fn median_ms(s: Option<&Summary>) -> Cell {
    Cell::number_or_missing(s.map(|s| s.median / 1e6), NO_DATA)
}

/// The median of `s`, a summary of fractions, in percent.
pub fn median_pct(s: Option<&Summary>) -> Cell {
    Cell::number_or_missing(s.map(|s| 100.0 * s.median), NO_DATA)
}

/// `width` cells of a row, or part of a row, that did not run: each says
/// why (`not_available`, else "not run").
pub fn not_run(not_available: Option<&str>, width: usize) -> impl Iterator<Item = Cell> + '_ {
    let why = not_available.unwrap_or("not run");
    (0..width).map(move |_| Cell::missing(why))
}

/// Appends a row: `head` (see [`name_and_family`]), then `figures`, noted
/// [`NOISY_NOTE`] when `noisy`; or, when `not_available` says why the row
/// did not run or there are no `figures`, `width` cells saying why (see
/// [`not_run`]), noted with `not_available`.
pub fn push_figures_row(
    table: &mut Table,
    mut head: Vec<Cell>,
    not_available: Option<&str>,
    figures: Option<(Vec<Cell>, bool)>,
    width: usize,
) {
    match (not_available, figures) {
        (None, Some((cells, noisy))) => {
            head.extend(cells);
            table.push_row(head, noisy.then(|| NOISY_NOTE.to_string()));
        }
        (na, _) => {
            head.extend(not_run(na, width));
            table.push_row(head, na.map(str::to_string));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(width: usize) -> Table {
        let columns = (0..2 + width)
            .map(|i| Column::new(format!("c{i}"), None, ""))
            .collect();
        Table::new("t", "T", columns)
    }

    #[test]
    fn rows_that_did_not_run_say_why() {
        let mut t = table(2);
        let head = || name_and_family("x", Family::Peer);
        let figures = || Some((vec![Cell::Number(1.0), Cell::Number(2.0)], true));
        push_figures_row(&mut t, head(), None, figures(), 2);
        push_figures_row(&mut t, head(), Some("n/a: no CPU"), figures(), 2);
        push_figures_row(&mut t, head(), None, None, 2);
        t.validate().unwrap();
        assert_eq!(t.rows[0][1], Cell::text("peer"));
        assert_eq!(t.rows[0][3], Cell::Number(2.0));
        assert_eq!(t.row_note(0), Some(NOISY_NOTE));
        assert_eq!(t.rows[1][2], Cell::missing("n/a: no CPU"));
        assert_eq!(t.row_note(1), Some("n/a: no CPU"));
        assert_eq!(t.rows[2][3], Cell::missing("not run"));
        assert_eq!(t.row_note(2), None);
    }

    #[test]
    fn hand_off_cells_fill_hand_off_columns() {
        let columns = hand_off_columns("wake", "call", "cpu");
        let cells = hand_off_cells(None, None, None, None);
        assert_eq!(cells.len(), columns.len());
        assert!(cells.iter().all(|c| *c == Cell::missing("no data")));
        assert_eq!(columns[3].header_key(), "t_wakeup_cycles");
        assert_eq!(columns[4].doc, "call");
    }
}
