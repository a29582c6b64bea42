//! The error type shared by every chart.

use thiserror::Error;

/// Why a chart could not be rendered.
#[derive(Debug, Error)]
pub enum ChartError {
    /// The data's shape does not match the chart's labels, for example a bar
    /// series with 3 values for 4 categories, or a heatmap row with 5 cells
    /// under 4 x ticks.
    #[error("{what}: expected {expected} values, found {found}")]
    Shape {
        /// Which part of the data is wrong ("series \"median\"", "row 2").
        what: String,
        /// How many values the labels call for.
        expected: usize,
        /// How many values the data has.
        found: usize,
    },
    /// plotters failed while drawing (the message is plotters' own).
    #[error("drawing the chart failed: {0}")]
    Draw(String),
}

impl ChartError {
    /// Wraps a plotters drawing error; used with `map_err`.
    pub(super) fn draw<E: std::fmt::Display>(error: E) -> ChartError {
        ChartError::Draw(error.to_string())
    }
}
