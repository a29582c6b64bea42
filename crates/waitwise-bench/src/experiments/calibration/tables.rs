//! The run's tables, charts and notes ([`ExperimentOutput`]).

use super::super::{ExperimentOutput, RenderedChart};
use super::config::CalibrationDist;
use super::result::{CalibrationResult, Row, AGREEMENT_TOLERANCE};
use crate::chart::{LineChart, Series};
use crate::export::{Cell, Column, Table};

/// A factor's cell: the value, or "no data".
fn factor_cell(v: Option<f64>) -> Cell {
    Cell::number_or_missing(v, "no data")
}

impl ExperimentOutput for CalibrationResult {
    fn tables(&self) -> Vec<Table> {
        vec![self.cell_table(), self.ordering_table()]
    }

    fn charts(&self) -> Vec<RenderedChart> {
        let mut charts = Vec::new();
        // The switching cell is one point per policy: in the table only.
        for &dist in self
            .config
            .dists
            .iter()
            .filter(|&&d| d != CalibrationDist::Switching)
        {
            let mut series = Vec::new();
            for p in &self.config.policies {
                let rows: Vec<&Row> = self
                    .rows
                    .iter()
                    .filter(|r| r.dist == dist && &r.policy == p)
                    .collect();
                let pts = |f: fn(&Row) -> Option<f64>| {
                    rows.iter()
                        .filter_map(|r| Some((r.scale, f(r)?)))
                        .collect::<Vec<_>>()
                };
                series.push(Series {
                    name: format!("{p} measured"),
                    points: pts(|r| r.measured_factor),
                });
                series.push(Series {
                    name: format!("{p} model"),
                    // The model on the waits that happened (the producer
                    // is sometimes late), the figure `ratio` compares with.
                    points: pts(|r| r.predicted_sample_factor),
                });
            }
            let title = format!(
                "Calibration, {} waits: measured vs model on the same waits (B = {:.0} ns)",
                dist.name(),
                self.block_cost.ns
            );
            let chart = LineChart {
                title: title.clone(),
                x_label: match dist {
                    CalibrationDist::Uniform => "U/B (log scale)".into(),
                    _ => "lambda*B (log scale)".into(),
                },
                y_label: "competitive factor (cost / optimum, log scale)".into(),
                x_log: true,
                y_log: true,
                series,
            };
            if let Ok(svg) = chart.to_svg() {
                charts.push(RenderedChart {
                    caption: title,
                    svg,
                });
            }
        }
        charts
    }

    fn notes(&self) -> Vec<String> {
        self.findings().iter().map(ToString::to_string).collect()
    }
}

impl CalibrationResult {
    /// One row per cell: measured and predicted factors.
    fn cell_table(&self) -> Table {
        let mut t = Table::new(
            "calibration",
            format!("Measured vs predicted competitive factor, B = {:.0} ns measured (Lim & Agarwal section 4)", self.block_cost.ns),
            vec![
                Column::new("dist", None, "wait-time law"),
                Column::new("scale", None, "lambda*B (exponential) or U/B (uniform)"),
                Column::new("policy", None, "waitwise policy"),
                Column::new("rounds", Some("count"), "waits measured"),
                Column::new("mean_wait", Some("ns"), "mean wait that happened (stamp before wait to stamp before notify)"),
                Column::new("blocked", Some("pct"), "waits that slept in the kernel"),
                Column::new("mean_cost", Some("ns"), "mean polling CPU + blocks x B per wait"),
                Column::new("measured_factor", None, "sum(cost) / sum(min(t, B))"),
                Column::new("predicted_factor", None, "model: competitive factor of the law"),
                Column::new("predicted_sample_factor", None, "model: cost_for_wait on the measured waits / same optimum"),
                Column::new("ratio", None, "measured_factor / predicted_sample_factor"),
                Column::new("online_floor", None, "least factor of any on-line policy on the law with the cell's B"),
            ],
        );
        for r in &self.rows {
            let note = r.not_available.clone().or_else(|| {
                r.ratio
                    .filter(|q| (q - 1.0).abs() > AGREEMENT_TOLERANCE)
                    .map(|q| format!("off the model by {:+.0}%", 100.0 * (q - 1.0)))
            });
            t.push_row(
                vec![
                    Cell::text(r.dist.name()),
                    Cell::Number(r.scale),
                    Cell::text(&r.policy),
                    Cell::Integer(r.rounds as i64),
                    Cell::Number(r.mean_wait_ns),
                    Cell::Number(100.0 * r.block_fraction),
                    Cell::Number(r.mean_cost_ns),
                    factor_cell(r.measured_factor),
                    factor_cell(r.predicted_factor),
                    factor_cell(r.predicted_sample_factor),
                    factor_cell(r.ratio),
                    factor_cell(r.online_floor),
                ],
                note,
            );
        }
        t
    }

    /// One row per (law, scale): the measured order against the model's.
    fn ordering_table(&self) -> Table {
        let mut o = Table::new(
            "calibration_ordering",
            "Policy order, best first: model vs measurement (pairs the model separates by > 10%)",
            vec![
                Column::new("dist", None, "wait-time law"),
                Column::new("scale", None, "lambda*B (exponential) or U/B (uniform)"),
                Column::new(
                    "predicted_order",
                    None,
                    "best first, by the model on the measured waits",
                ),
                Column::new("measured_order", None, "best first, measured"),
                Column::new(
                    "concordant",
                    Some("count"),
                    "decided pairs ordered as the model says",
                ),
                Column::new(
                    "decided",
                    Some("count"),
                    "pairs the model separates by more than 10%",
                ),
            ],
        );
        for c in &self.ordering {
            o.push_row(
                vec![
                    Cell::text(c.dist.name()),
                    Cell::Number(c.scale),
                    Cell::text(c.predicted_order.join(" < ")),
                    Cell::text(c.measured_order.join(" < ")),
                    Cell::Integer(c.concordant_pairs as i64),
                    Cell::Integer(c.decided_pairs as i64),
                ],
                (!c.violations.is_empty()).then(|| c.violations.join("; ")),
            );
        }
        o
    }
}
