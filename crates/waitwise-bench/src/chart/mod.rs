//! SVG charts for the report, one chart kind per file, each rendered to a
//! `String` with plotters' SVG backend (no files, no system fonts: text is
//! emitted as SVG `<text>` and drawn by the browser).
//!
//! | file | chart | used for |
//! | --- | --- | --- |
//! | `line.rs` | [`LineChart`] of [`Series`], linear or log axes | the asymmetry sweep (time vs light load) |
//! | `bar.rs` | [`BarChart`], horizontal grouped bars | Tables 1-2 per metric, matched/unmatched runtime |
//! | `heatmap.rs` | [`Heatmap`] with a value in each cell | the wake-up latency matrix |
//!
//! `style.rs` holds what they share (palette, fonts, number format, legend);
//! `error.rs` the one error type. Every chart has a title, axis labels (put
//! the unit in the label: "wake-up latency (ns)"), a legend or color scale,
//! and never panics on odd data: empty series, NaN, or values a log axis
//! cannot show are skipped and counted in a note under the plot.

mod bar;
mod error;
mod heatmap;
mod line;
mod style;

pub use bar::BarChart;
pub use error::ChartError;
pub use heatmap::Heatmap;
pub use line::{LineChart, Series};
