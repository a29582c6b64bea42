//! What `waitwise peers` shows: one table and one heatmap per primitive,
//! and notes that count, per primitive, the cells that meet the targets.

use super::compare::{
    AHEAD_THROUGHPUT_AT_LEAST, TARGET_CPU_PER_OP_AT_MOST, TARGET_LONGEST_AT_MOST,
    TARGET_P99_AT_MOST, TARGET_THROUGHPUT_AT_LEAST,
};
use super::grid::{Axis, Primitive};
use super::{CellResult, PeersResult, PrimitiveResult};
use crate::chart::Heatmap;
use crate::experiments::{ExperimentOutput, Headline, RenderedChart};
use crate::export::{Cell, Column, Table};
use std::fmt;
use waitwise::probe::wake_placement::WakePlacement;

/// Why a ratio is missing: the cell ran, but waitwise or every peer
/// completed nothing, or the peer had nothing to compare.
const NO_RATIO: &str = "no ratio";

/// Why least/most served is missing: the workload has fewer than two
/// threads competing for the same thing (one submitter, one pair, a
/// barrier's lockstep).
const NO_SPREAD: &str = "n/a: fewer than two competing threads";

/// One primitive's cells against the targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetCount {
    /// The primitive.
    pub primitive: Primitive,
    /// Cells in its grid.
    pub cells: usize,
    /// Cells with a comparison (run, and both sides completed runs).
    pub compared: usize,
    /// Compared cells that meet every target.
    pub meeting: usize,
    /// Compared cells with throughput at least
    /// [`AHEAD_THROUGHPUT_AT_LEAST`] times the best peer's.
    pub ahead: usize,
}

impl TargetCount {
    /// Counts `p`'s cells.
    pub fn of(p: &PrimitiveResult) -> Self {
        let compared: Vec<_> = p
            .cells
            .iter()
            .filter_map(|c| c.comparison.as_ref())
            .collect();
        Self {
            primitive: p.primitive,
            cells: p.cells.len(),
            compared: compared.len(),
            meeting: compared.iter().filter(|c| c.meets_targets).count(),
            ahead: compared.iter().filter(|c| c.ahead).count(),
        }
    }
}

impl fmt::Display for TargetCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} of {} compared cells meet the targets; {} of {} at >= {AHEAD_THROUGHPUT_AT_LEAST}x the best peer's throughput",
            self.primitive.name(),
            self.meeting,
            self.compared,
            self.ahead,
            self.compared
        )?;
        if self.compared < self.cells {
            write!(
                f,
                " ({} of {} cells not compared)",
                self.cells - self.compared,
                self.cells
            )?;
        }
        write!(f, ".")
    }
}

/// The column of `axis`.
fn axis_column(axis: Axis) -> Column {
    match axis {
        Axis::Cs => Column::new(
            "cs",
            Some("ns"),
            "critical section (pool: each leaf's work), spin-loop hints converted from ns",
        ),
        Axis::Gap => Column::new(
            "gap",
            Some("ns"),
            "work between a thread's operations, spin-loop hints converted from ns",
        ),
        Axis::Threads => Column::new(
            "threads",
            None,
            "threads (pool: workers); CPUs times threads per CPU",
        ),
        Axis::MessageWords => Column::new("message", Some("words"), "u64 words per message"),
        Axis::Capacity => Column::new("capacity", None, "channel slots"),
        Axis::Block => Column::new(
            "block_cost",
            None,
            "B the waitwise objects run with: settled (this process's), low/high (forced), learned",
        ),
        Axis::Load => Column::new("co_runner", None, "a busy co-runner process on every CPU"),
    }
}

/// The cell of `axis` in `c`'s row.
fn axis_cell(axis: Axis, c: &CellResult) -> Cell {
    let p = &c.point;
    let int = |v: Option<u64>| v.map_or(Cell::missing("n/a"), |v| Cell::Integer(v as i64));
    match axis {
        Axis::Cs => int(p.cs_ns),
        Axis::Gap => int(p.gap_ns),
        Axis::Threads => Cell::Integer(p.threads as i64),
        Axis::MessageWords => int(p.message_words.map(|w| w as u64)),
        Axis::Capacity => int(p.capacity.map(|w| w as u64)),
        Axis::Block => Cell::text(p.block.name()),
        Axis::Load => Cell::text(if p.load { "yes" } else { "no" }),
    }
}

/// The figure columns after the axes.
fn figure_columns() -> Vec<Column> {
    vec![
        Column::new("b", Some("ns"), "the B in force after the cell"),
        Column::new("best_peer", None, "the peer with the highest median throughput in the cell"),
        Column::new("throughput", Some("ratio"), "waitwise's throughput over the best peer's: median over rounds of the paired ratio (above 1: waitwise ahead)"),
        Column::new("throughput_ci95_low", Some("ratio"), "lower end of that median's 95% interval (order statistics)"),
        Column::new("throughput_ci95_high", Some("ratio"), "upper end of that median's 95% interval"),
        Column::new("p99", Some("ratio"), "p99 wait, waitwise over the best peer (below 1: shorter)"),
        Column::new("longest", Some("ratio"), "longest single wait, waitwise over the best peer"),
        Column::new("least_over_most", Some("ratio"), "fewest over most operations of a competing thread, waitwise's over the best peer's (above 1: more even)"),
        Column::new("cpu_per_op", Some("ratio"), "process CPU time per operation, waitwise over the best peer"),
        Column::new("idle_waitwise", Some("pct"), "the CPUs' idle share over waitwise's runs (their /proc/stat ticks pooled)"),
        Column::new("idle_best_peer", Some("pct"), "the CPUs' idle share over the best peer's runs (ticks pooled)"),
        Column::new("waitwise_throughput", Some("ops/s"), "waitwise's operations per second (median)"),
        Column::new("targets", None, "met: every target (see the notes); missed: at least one"),
    ]
}

/// The figure cells of `c`'s row.
fn figure_cells(c: &CellResult) -> Vec<Cell> {
    let width = figure_columns().len();
    if let Some(why) = &c.not_run {
        return vec![Cell::missing(why.clone()); width];
    }
    let Some(cmp) = &c.comparison else {
        let mut cells = vec![Cell::Number(c.block_ns)];
        cells.extend(vec![Cell::missing(NO_RATIO); width - 1]);
        return cells;
    };
    let ratio = |r: Option<f64>| Cell::number_or_missing(r, NO_RATIO);
    let pct = |r: Option<f64>| Cell::number_or_missing(r.map(|x| x * 100.0), "not known");
    let waitwise_throughput = c.contenders.first().and_then(|w| {
        let v: Vec<f64> = w.rounds.iter().flatten().map(|f| f.throughput).collect();
        crate::stats::summarize(&v).map(|s| s.median)
    });
    vec![
        Cell::Number(c.block_ns),
        Cell::text(cmp.best_peer.clone()),
        Cell::Number(cmp.throughput.median),
        Cell::Number(cmp.throughput.ci95_low),
        Cell::Number(cmp.throughput.ci95_high),
        ratio(cmp.p99),
        ratio(cmp.longest),
        Cell::number_or_missing(cmp.least_over_most, NO_SPREAD),
        ratio(cmp.cpu_per_op),
        pct(cmp.idle_waitwise),
        pct(cmp.idle_best_peer),
        Cell::number_or_missing(waitwise_throughput, NO_RATIO),
        Cell::text(if cmp.meets_targets { "met" } else { "missed" }),
    ]
}

/// `p`'s table: one row per cell.
fn table(p: &PrimitiveResult) -> Table {
    let axes = p.primitive.axes();
    let mut columns: Vec<Column> = axes.iter().map(|a| axis_column(*a)).collect();
    columns.extend(figure_columns());
    let mut t = Table::new(
        format!("peers_{}", p.primitive.name()),
        format!(
            "{} against its peers ({}): waitwise over the best peer, per cell",
            p.contenders.first().map_or("", String::as_str),
            p.contenders.get(1..).unwrap_or_default().join(", ")
        ),
        columns,
    );
    for c in &p.cells {
        let mut row: Vec<Cell> = axes.iter().map(|a| axis_cell(*a, c)).collect();
        row.extend(figure_cells(c));
        t.push_row(row, c.not_run.clone());
    }
    t
}

/// `p`'s heatmap: a row per cell, waitwise's throughput over the best
/// peer's and over each peer's.
fn heatmap(p: &PrimitiveResult) -> Heatmap {
    let mut x_ticks = vec!["best peer".to_string()];
    x_ticks.extend(p.contenders.iter().skip(1).cloned());
    let values = p
        .cells
        .iter()
        .map(|c| {
            let mut row = vec![c.comparison.as_ref().map(|cmp| cmp.throughput.median)];
            row.extend(p.contenders.iter().skip(1).map(|name| {
                c.per_peer
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, r)| *r)
            }));
            row
        })
        .collect();
    Heatmap {
        title: format!(
            "{}: waitwise's throughput over the peer's",
            p.primitive.name()
        ),
        x_label: "against".into(),
        y_label: "cell".into(),
        x_ticks,
        y_ticks: p.cells.iter().map(|c| c.point.label()).collect(),
        values,
        unit: "x".into(),
    }
}

impl ExperimentOutput for PeersResult {
    fn tables(&self) -> Vec<Table> {
        self.primitives.iter().map(table).collect()
    }

    fn charts(&self) -> Vec<RenderedChart> {
        self.primitives
            .iter()
            .filter_map(|p| {
                let map = heatmap(p);
                map.to_svg().ok().map(|svg| RenderedChart {
                    caption: map.title,
                    svg,
                })
            })
            .collect()
    }

    fn headline(&self) -> Headline {
        Headline {
            tables: vec![target_table(&self.primitives)],
            charts: self.charts(),
        }
    }

    fn notes(&self) -> Vec<String> {
        let mut n: Vec<String> = self
            .primitives
            .iter()
            .map(|p| TargetCount::of(p).to_string())
            .collect();
        n.push(format!(
            "Targets: throughput >= {TARGET_THROUGHPUT_AT_LEAST}x the best peer's, p99 wait <= {TARGET_P99_AT_MOST}x, longest wait <= {TARGET_LONGEST_AT_MOST}x, CPU per operation <= {TARGET_CPU_PER_OP_AT_MOST}x."
        ));
        n.push(format!(
            "Each cell: {} rounds of {} ms per contender, the order rotating each round; ratios are medians over rounds of waitwise's figure over the best peer's in the same round. The throughput interval is the median's order-statistic interval, {}.",
            self.config.rounds,
            self.config.run_ms,
            coverage_words(self.config.rounds)
        ));
        n.push(format!(
            "One spin-loop hint took {:.1} ns; {} CPUs; the process's B = {:.0} ns ({}), the settled cells'. Low and high B are forced to {} and {} ns in a child process; learned is a child's own.",
            self.hints.ns_per_hint,
            self.cpus,
            self.block_ns,
            self.block_source,
            super::grid::FORCED_LOW_BLOCK_NS,
            super::grid::FORCED_HIGH_BLOCK_NS
        ));
        n.extend(others_note(self.others_cpus, self.cpus));
        n.extend(packing_note(self.wake_placement));
        n
    }
}

/// Per primitive, how many cells meet every target and how many are at
/// [`AHEAD_THROUGHPUT_AT_LEAST`] or more of the best peer's throughput.
fn target_table(primitives: &[PrimitiveResult]) -> Table {
    let columns = vec![
        Column::new("primitive", None, "the waitwise primitive"),
        Column::new("cells", None, "operating points in its grid"),
        Column::new("compared", None, "cells where waitwise and a peer both completed runs"),
        Column::new("meet_targets", None, "compared cells meeting every target (throughput, p99, longest wait, CPU per operation)"),
        Column::new("ahead", None, "compared cells at 1.2x the best peer's throughput or more"),
    ];
    let mut t = Table::new(
        "peers_targets",
        "waitwise against its peers: cells meeting the targets, cells ahead",
        columns,
    );
    for p in primitives {
        let c = TargetCount::of(p);
        let n = |v: usize| Cell::Integer(v as i64);
        t.push_row(
            vec![
                Cell::text(p.primitive.name()),
                n(c.cells),
                n(c.compared),
                n(c.meeting),
                n(c.ahead),
            ],
            None,
        );
    }
    t
}

/// A note when other programs used the CPUs during the run: how many CPUs
/// they kept busy on average (this process, its child cells and its
/// co-runners left out).
fn others_note(others_cpus: Option<f64>, cpus: usize) -> Option<String> {
    /// Below this, what other programs used is within the noise of the
    /// tick counts. Guessed.
    const NOTICEABLE_CPUS: f64 = 0.1;
    let others = others_cpus.filter(|&c| c >= NOTICEABLE_CPUS)?;
    Some(format!(
        "Other programs kept {others:.2} of the {cpus} CPUs busy on average during this run (this process, its child \
         cells and its co-runners left out); every figure includes their interference."
    ))
}

/// A note when this machine's scheduler runs most woken threads beside
/// their wakers ([`WakePlacement::packs`]): the rounds of a pair that
/// sleeps now and then can lose milliseconds on one CPU, where a spin
/// baseline, which never sleeps, is never packed.
fn packing_note(placement: Option<WakePlacement>) -> Option<String> {
    let p = placement.filter(WakePlacement::packs)?;
    Some(format!(
        "This machine's scheduler ran a thread woken from another CPU beside its waker in {} of {} wake-ups \
         (waitwise probe, Wake-ups): two threads that hand work back and forth and sleep now and then can share \
         one CPU for milliseconds of a round, handing off by context switch there, until the scheduler moves one \
         away. The spin baselines (event, barrier) never sleep and are never packed; waitwise and the peers that \
         sleep lose the rounds it happens in.",
        p.beside_waker, p.counted
    ))
}

/// What the interval of `rounds` paired ratios covers, in words.
fn coverage_words(rounds: usize) -> String {
    match crate::stats::median_ci_ranks(rounds) {
        Some((1, _, c)) => format!(
            "here the whole range of the rounds' ratios ({:.1}% coverage)",
            c * 100.0
        ),
        Some((l, u, c)) => format!(
            "here ranks {l} and {u} of {rounds} ({:.1}% coverage)",
            c * 100.0
        ),
        None => "empty without rounds".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_counts_read_as_a_sentence() {
        let t = TargetCount {
            primitive: Primitive::Mutex,
            cells: 6,
            compared: 5,
            meeting: 3,
            ahead: 1,
        };
        assert_eq!(
            t.to_string(),
            "mutex: 3 of 5 compared cells meet the targets; 1 of 5 at >= 1.2x the best peer's throughput (1 of 6 cells not compared)."
        );
    }

    #[test]
    fn packing_is_noted_only_when_most_wake_ups_land_beside_the_waker() {
        let p = |counted, beside_waker| {
            Some(WakePlacement {
                counted,
                beside_waker,
            })
        };
        assert!(packing_note(p(16, 13)).is_some_and(|n| n.contains("13 of 16")));
        assert!(packing_note(p(16, 2)).is_none());
        assert!(packing_note(None).is_none());
    }

    #[test]
    fn coverage_is_stated_for_few_and_many_rounds() {
        assert!(coverage_words(5).contains("whole range") && coverage_words(5).contains("93.8%"));
        assert!(coverage_words(6).contains("96.9%"));
        assert!(coverage_words(20).contains("ranks 6 and 15"));
    }
}
