//! What a run measures: the wait-time laws ([`CalibrationDist`]), their
//! scales, the policies and the rounds ([`Config`]).

use serde::Serialize;
use waitwise_model::distribution::WaitDistribution;

/// The policies a run measures by default, in table order: always block,
/// always spin, the two-phase policies at the model's notable `alpha`s
/// (0.54, 0.62, 1), randomized and adaptive.
pub const POLICIES: [&str; 7] = [
    "/b/0", "s//inf", "s/b/0.54", "s/b/0.62", "s/b/1", "rand/b", "adapt/b",
];

/// The switching cell's two laws, `lambda * B` (short waits, then long
/// ones).
pub const SWITCHING_SCALES: [f64; 2] = [10.0, 0.1];

/// The switching cell moves to the other law every this many waits.
pub const SWITCHING_PERIOD: usize = 200;

/// The wait-time law of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CalibrationDist {
    /// Exponential waits, rate `lambda = scale / B` (Figure 2's `lambda * B`).
    Exponential,
    /// Waits uniform on `[0, U]`, `U = scale * B` (Figure 3's `U / B`).
    Uniform,
    /// One cell, whatever the scales: exponential waits whose `lambda * B`
    /// alternates between the [`SWITCHING_SCALES`] every
    /// [`SWITCHING_PERIOD`] waits (the cell's `scale` is the period). A
    /// static policy's predicted factor is that of the two laws in equal
    /// parts; `adapt/b`'s is the model's learner run on drawn waits
    /// ([`waitwise_model::adaptive::simulated_factor`]).
    Switching,
}

impl CalibrationDist {
    /// `"exponential"`, `"uniform"` or `"switching"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Exponential => "exponential",
            Self::Uniform => "uniform",
            Self::Switching => "switching",
        }
    }

    /// What the scale means: `lambda*B`, `U/B`, or the switching period.
    pub fn scale_label(self) -> &'static str {
        match self {
            Self::Exponential => "lambda*B",
            Self::Uniform => "U/B",
            Self::Switching => "period",
        }
    }

    /// The law at `scale` for block cost `b_ns` (times in ns); for
    /// `Switching`, the first of its laws.
    pub fn law(self, scale: f64, b_ns: f64) -> waitwise_model::error::Result<WaitDistribution> {
        match self {
            Self::Exponential => WaitDistribution::exponential(scale / b_ns),
            Self::Uniform => WaitDistribution::uniform(scale * b_ns),
            Self::Switching => WaitDistribution::exponential(SWITCHING_SCALES[0] / b_ns),
        }
    }

    /// The laws a cell draws from in turn, each for `period` waits.
    pub(super) fn laws(
        self,
        scale: f64,
        b_ns: f64,
    ) -> waitwise_model::error::Result<(Vec<WaitDistribution>, usize)> {
        match self {
            Self::Switching => Ok((
                SWITCHING_SCALES
                    .iter()
                    .map(|&x| WaitDistribution::exponential(x / b_ns))
                    .collect::<waitwise_model::error::Result<_>>()?,
                SWITCHING_PERIOD,
            )),
            _ => Ok((vec![self.law(scale, b_ns)?], usize::MAX)),
        }
    }

    /// The scales a run measures for this law: `scales`, or the one
    /// switching cell.
    pub(super) fn cell_scales(self, scales: &[f64]) -> Vec<f64> {
        match self {
            Self::Switching => vec![SWITCHING_PERIOD as f64],
            _ => scales.to_vec(),
        }
    }
}

/// Settings of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// Wait-time laws measured.
    pub dists: Vec<CalibrationDist>,
    /// `lambda * B` (exponential) or `U / B` (uniform) values.
    pub scales: Vec<f64>,
    /// waitwise policy names (`/b/0`, `s/b/0.54`, ...), parsed by both
    /// `waitwise::Policy` and `waitwise_model::WaitingAlgorithm`.
    pub policies: Vec<String>,
    /// Measured rounds (waits) per cell, at most.
    pub rounds: usize,
    /// Rounds run first and dropped (cold caches, first futex use).
    pub warmup_rounds: usize,
    /// Seed of the drawn waits.
    pub seed: u64,
    /// Wall-clock budget of the measurement, seconds: each cell gets an
    /// equal share and stops early (after at least 10 rounds) when its
    /// share is spent; its pilot passes (`Group::pilot_block_costs`) each
    /// stop at an eighth of a share, so a run can take up to 11/8 of the
    /// budget.
    pub time_budget_s: f64,
}

impl Config {
    /// Quick: under a minute on a loaded 2-CPU machine.
    pub fn quick() -> Self {
        Self {
            dists: vec![
                CalibrationDist::Exponential,
                CalibrationDist::Uniform,
                CalibrationDist::Switching,
            ],
            scales: vec![0.1, 0.3, 1.0, 3.0, 10.0],
            policies: POLICIES.iter().map(|p| p.to_string()).collect(),
            rounds: 1000,
            warmup_rounds: 50,
            seed: 5,
            time_budget_s: 40.0,
        }
    }

    /// Full: more scales, more rounds.
    pub fn full() -> Self {
        Self {
            scales: vec![0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0],
            rounds: 5000,
            warmup_rounds: 200,
            time_budget_s: 600.0,
            ..Self::quick()
        }
    }

    /// A tiny configuration for tests.
    pub fn tiny() -> Self {
        Self {
            scales: vec![0.3, 3.0],
            rounds: 12,
            warmup_rounds: 2,
            time_budget_s: 5.0,
            ..Self::quick()
        }
    }
}
