//! The seed papers' experiments, each a subcommand of `waitwise` and a
//! section of `waitwise report`. One experiment per file; each has a
//! `Config` (with `quick()` and `full()` presets), a `run(&Config)` that
//! returns a serde result struct, and `tables()`/`charts()` on that result.
//!
//! Shared by them: [`table_parts`] (columns and cells of the result tables),
//! [`load`] (other processes' load during a run), and here the
//! output trait, progress lines, `--only` filtering, the not-available note
//! and bar charts over an experiment's rows.

pub mod asymmetry;
pub mod barriers;
pub mod calibration;
pub mod interference;
pub mod load;
pub mod mechanisms;
pub mod model_figures;
pub mod oversub;
pub mod peers;
pub mod table_parts;
pub mod wakeup_matrix;

use crate::chart::BarChart;
use crate::export::Table;
use crate::stats::Summary;
use serde::Serialize;

/// A chart ready for the report.
#[derive(Clone, Debug, Serialize)]
pub struct RenderedChart {
    /// Caption under the chart.
    pub caption: String,
    /// The SVG document.
    #[serde(skip)]
    pub svg: String,
}

/// What every experiment hands to the CLI and the report.
pub trait ExperimentOutput {
    /// The result tables (one CSV each).
    fn tables(&self) -> Vec<Table>;
    /// The charts.
    fn charts(&self) -> Vec<RenderedChart>;
    /// Findings in words (placement, what was not available, checks).
    fn notes(&self) -> Vec<String>;
    /// What belongs on the report's first screen; the report shows it there
    /// and leaves these charts out of the experiment's own section. None by
    /// default.
    fn headline(&self) -> Headline {
        Headline::default()
    }
}

/// An experiment's part of the report's first screen.
#[derive(Clone, Debug, Default)]
pub struct Headline {
    /// Short tables (a few rows each).
    pub tables: Vec<Table>,
    /// Charts.
    pub charts: Vec<RenderedChart>,
}

/// A progress line on stderr: `[experiment] step/total what`.
pub fn progress(experiment: &str, step: usize, total: usize, what: &str) {
    eprintln!("[{experiment}] {step}/{total} {what}");
}

/// Whether the row `name` runs under an `--only` list: `only` is empty, or
/// one of its entries is part of `name`.
pub fn is_selected(only: &[String], name: &str) -> bool {
    only.is_empty() || only.iter().any(|o| name.contains(o.as_str()))
}

/// The note listing the rows that cannot run on this CPU (`names`); `None`
/// when there are none.
pub fn not_available_note(names: &[&str]) -> Option<String> {
    (!names.is_empty()).then(|| {
        format!(
            "Not available on this CPU (listed, never run): {}.",
            names.join(", ")
        )
    })
}

/// One chart of [`bar_charts`]: a figure per row, in one or more series.
#[derive(Clone, Debug)]
pub struct MetricBars {
    /// Title, also the chart's caption in the report.
    pub title: String,
    /// Value-axis label, with the unit.
    pub y_label: String,
    /// `(legend name, one value per row)`.
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// Per series, per row: the `(low, high)` 95% CI of the median, drawn
    /// as a whisker (see [`BarChart::intervals`]); empty for none.
    pub intervals: Vec<Vec<Option<(f64, f64)>>>,
    /// Whether the value axis is logarithmic.
    pub y_log: bool,
}

impl MetricBars {
    /// A chart of one series, `median`: the rows' medians.
    pub fn medians(
        title: impl Into<String>,
        y_label: impl Into<String>,
        values: Vec<Option<f64>>,
        y_log: bool,
    ) -> Self {
        Self {
            title: title.into(),
            y_label: y_label.into(),
            series: vec![("median".into(), values)],
            intervals: Vec::new(),
            y_log,
        }
    }

    /// A chart of one series, `median`: the rows' medians times `scale`
    /// (for a unit change: 1e-3 for ns to us), each with the 95% CI of the
    /// median as a whisker.
    pub fn medians_with_ci(
        title: impl Into<String>,
        y_label: impl Into<String>,
        summaries: &[Option<Summary>],
        scale: f64,
        y_log: bool,
    ) -> Self {
        let values = summaries
            .iter()
            .map(|s| s.map(|s| s.median * scale))
            .collect();
        let ends = summaries
            .iter()
            .map(|s| s.map(|s| (s.median_ci95_low * scale, s.median_ci95_high * scale)))
            .collect();
        Self {
            intervals: vec![ends],
            ..Self::medians(title, y_label, values, y_log)
        }
    }
}

/// Draws `charts` with the rows `categories` as bars, each captioned with
/// its title; a chart that cannot be drawn is left out.
pub fn bar_charts(categories: &[String], charts: Vec<MetricBars>) -> Vec<RenderedChart> {
    charts
        .into_iter()
        .filter_map(|c| {
            let chart = BarChart {
                title: c.title.clone(),
                y_label: c.y_label,
                categories: categories.to_vec(),
                series: c.series,
                intervals: c.intervals,
                y_log: c.y_log,
            };
            chart.to_svg().ok().map(|svg| RenderedChart {
                caption: c.title,
                svg,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lists_select_by_part_of_the_name() {
        assert!(is_selected(&[], "spin"));
        let only = ["pause".to_string(), "/b/0".to_string()];
        assert!(is_selected(&only, "s/b/0.54 (pause)"));
        assert!(is_selected(&only, "Barrier (/b/0)"));
        assert!(!is_selected(&only, "spin"));
    }

    #[test]
    fn not_available_note_lists_the_rows() {
        assert_eq!(not_available_note(&[]), None);
        assert_eq!(
            not_available_note(&["umwait", "tpause"]).unwrap(),
            "Not available on this CPU (listed, never run): umwait, tpause."
        );
    }

    #[test]
    fn bar_charts_are_captioned_with_their_titles() {
        let names = vec!["a".to_string(), "b".to_string()];
        let charts = bar_charts(
            &names,
            vec![MetricBars::medians("T", "ns", vec![Some(1.0), None], false)],
        );
        assert_eq!(charts.len(), 1);
        assert_eq!(charts[0].caption, "T");
        assert!(charts[0].svg.starts_with("<svg"));
    }
}
