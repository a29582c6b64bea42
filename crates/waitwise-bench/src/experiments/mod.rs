//! The seed papers' experiments, each a subcommand of `waitwise` and a
//! section of `waitwise report`. One experiment per file; each has a
//! `Config` (with `quick()` and `full()` presets), a `run(&Config)` that
//! returns a serde result struct, and `tables()`/`charts()` on that result.

pub mod asymmetry;
pub mod barriers;
pub mod calibration;
pub mod mechanisms;
pub mod model_figures;
pub mod oversub;
pub mod wakeup_matrix;

use crate::export::Table;
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
}

/// A progress line on stderr: `[experiment] step/total what`.
pub fn progress(experiment: &str, step: usize, total: usize, what: &str) {
    eprintln!("[{experiment}] {step}/{total} {what}");
}
