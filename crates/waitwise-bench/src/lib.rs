//! Measurement tools for waitwise: statistics, charts, export and the HTML report.
//!
//! This crate sits in the "tools on top" layer: it may use every waitwise crate,
//! and nothing in the library layers uses it.
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`stats`] | pure statistics: trimming warm-up/cool-down rounds, median, mean, 95% CI, the "noisy" flag |
//! | [`chart`] | SVG charts (line, grouped bar, heatmap) rendered with plotters, as strings |
//! | [`export`] | result tables ([`export::Table`]) and one file per export format (CSV, JSON) behind [`export::Exporter`] |
//! | [`findings`] | the measured facts the report's summary opens with, as data ([`findings::Finding`]) |
//! | [`html`] | a self-contained HTML page builder for `waitwise report` |
//! | [`harness_wait`] | how the harness waits for its partner threads between measured steps |
//!
//! Data flows one way: experiments produce samples, [`stats`] summarizes them,
//! the summaries fill [`export::Table`]s, and the tables and [`chart`]s go to
//! [`export`] (CSV/JSON files) and [`html`] (`index.html`).

pub mod chart;
pub mod claims;
pub mod contender;
pub mod experiments;
pub mod export;
pub mod findings;
pub mod harness_wait;
pub mod helpers;
pub mod html;
pub mod kernel;
pub mod measure;
pub mod placement;
pub mod probe;
pub mod report;
pub mod stats;
