//! What a run found: one [`Row`] per cell, one [`OrderingCheck`] per
//! (law, scale), gathered in a [`CalibrationResult`], and the queries the
//! tables and the findings read them with.

use super::accounting::median;
use super::config::{CalibrationDist, Config};
use crate::placement::PairPlacement;
use serde::Serialize;
use waitwise::policy::BlockCost;
use waitwise_model::algorithm::WaitingAlgorithm;
use waitwise_model::cost;

/// Measured factors within this of the prediction "agree".
pub const AGREEMENT_TOLERANCE: f64 = 0.25;

/// A cell whose static policies measure further than this from the model
/// on the same waits (their median `ratio`) is not judged against
/// [`STATIONARY_TARGET`](super::STATIONARY_TARGET)
/// (`CalibrationResult::unmeasurable`). Chosen: wider than a measurable
/// cell's spread around 1, narrower than the miss of cells whose waits
/// last a few hundred ns, where the fixed CPU of a hand-off dominates.
pub const MEASUREMENT_TOLERANCE: f64 = 0.10;

/// One (law, scale, policy) cell.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Wait-time law.
    pub dist: CalibrationDist,
    /// `lambda * B` or `U / B`.
    pub scale: f64,
    /// Policy name.
    pub policy: String,
    /// Why the cell has no figures (bad policy name, producer lost), if so.
    pub not_available: Option<String>,
    /// Rounds measured (after warm-up).
    pub rounds: usize,
    /// Mean drawn wait, ns.
    pub mean_drawn_wait_ns: f64,
    /// Mean wait that happened (consumer's stamp to producer's notify), ns.
    pub mean_wait_ns: f64,
    /// Fraction of waits that blocked.
    pub block_fraction: f64,
    /// Mean CPU burned polling per wait (clock reads, the fixed hand-off
    /// CPU and the kernel block paths removed), ns.
    pub mean_poll_cpu_ns: f64,
    /// Mean measured cost per wait: polling CPU + blocks x B, ns.
    pub mean_cost_ns: f64,
    /// Mean off-line optimum `min(t, B)` per wait, ns.
    pub mean_optimal_ns: f64,
    /// `B` while this cell ran, measured by its references; blocks cost
    /// this in the measurement, the optimum and the prediction, ns (the
    /// switching cell: the mean of its two phases', each priced with its
    /// own).
    pub cell_block_ns: f64,
    /// The `B` the cell's waits were drawn in units of, ns, so that its
    /// real `lambda*B` or `U/B` is its label: the mean over its cycles of
    /// what its references cost lately (`TrackedBlockCost`, starting from
    /// its pilot's, `Group::pilot_block_costs`; the switching cell: the
    /// mean of its laws'). `cell_block_ns / wait_block_ns` says how far
    /// the two still differ.
    pub wait_block_ns: f64,
    /// The kernel's CPU per block subtracted here: the mean of the
    /// reference waits interleaved with this (law, scale)'s cells, their
    /// top 1% capped at the 99th percentile, ns (the switching cell: the
    /// mean of its phases', each subtracted in its own).
    pub block_cpu_ns: f64,
    /// Waits counted at a cap: blocked ones whose CPU exceeded the poll
    /// limit plus the block references' 99th percentile (a kernel-path
    /// outlier), polled ones whose CPU exceeded the wait plus the hand-off
    /// references' 99th percentile (time charged while the vCPU did not
    /// run).
    pub outliers: usize,
    /// The fixed CPU of a hand-off subtracted from every wait that did not
    /// block: the median of the at-once references interleaved with this
    /// (law, scale)'s cells, ns.
    pub hand_off_cpu_ns: f64,
    /// `sum(cost) / sum(min(t, B))`.
    pub measured_factor: Option<f64>,
    /// Its standard error (delta method over the waits).
    pub measured_factor_se: Option<f64>,
    /// The model's competitive factor for the law (expectation).
    pub predicted_factor: Option<f64>,
    /// The model's factor on the waits that happened (`adapt/b`: its
    /// learner with the cell's `B`, which the objects learn).
    pub predicted_sample_factor: Option<f64>,
    /// `measured_factor / predicted_sample_factor`.
    pub ratio: Option<f64>,
    /// The least factor any on-line policy can expect on the cell's law
    /// with the cell's `B` ([`cost::online_floor`]: the best poll limit for
    /// a policy that knows the law), the same in every row of a cell; for
    /// the switching cell, its phases' laws each with the `B` its own
    /// blocks cost ([`cost::switching_online_floor`]: a policy told each
    /// wait's phase). A cell's law is drawn with [`Row::wait_block_ns`],
    /// but its blocks cost the cell's `B`, so its real `lambda*B` or `U/B`
    /// is its scale times `cell_block_ns / wait_block_ns`.
    pub online_floor: Option<f64>,
}

impl Row {
    /// The `B` this cell's waits were drawn with ([`Row::wait_block_ns`]),
    /// or `process_b` for a row that recorded none (not measured).
    pub(super) fn drawn_with_ns(&self, process_b: f64) -> f64 {
        if self.wait_block_ns > 0.0 {
            self.wait_block_ns
        } else {
            process_b
        }
    }

    /// A cell with no figures yet.
    pub(super) fn unmeasured(dist: CalibrationDist, scale: f64, policy: &str) -> Self {
        Self {
            dist,
            scale,
            policy: policy.to_string(),
            not_available: None,
            rounds: 0,
            mean_drawn_wait_ns: 0.0,
            mean_wait_ns: 0.0,
            block_fraction: 0.0,
            mean_poll_cpu_ns: 0.0,
            mean_cost_ns: 0.0,
            mean_optimal_ns: 0.0,
            cell_block_ns: 0.0,
            wait_block_ns: 0.0,
            block_cpu_ns: 0.0,
            outliers: 0,
            hand_off_cpu_ns: 0.0,
            measured_factor: None,
            measured_factor_se: None,
            predicted_factor: None,
            predicted_sample_factor: None,
            ratio: None,
            online_floor: None,
        }
    }
}

/// The ordering check of one (law, scale).
#[derive(Clone, Debug, Serialize)]
pub struct OrderingCheck {
    /// Wait-time law.
    pub dist: CalibrationDist,
    /// `lambda * B` or `U / B`.
    pub scale: f64,
    /// Policies, best first, by the model's factor on the measured waits.
    pub predicted_order: Vec<String>,
    /// Policies, best first, by measured factor.
    pub measured_order: Vec<String>,
    /// Policy pairs whose predicted factors differ by more than 10%.
    pub decided_pairs: usize,
    /// Of those, pairs the measurement orders the same way.
    pub concordant_pairs: usize,
    /// The pairs ordered the other way beyond noise: `"a < b predicted
    /// (1.00 vs 1.50), measured 1.40 vs 1.20"`.
    pub violations: Vec<String>,
    /// Decided pairs measured the other way by less than [`REVERSAL_Z`](super::REVERSAL_Z)
    /// standard errors (counted as concordant: a tie within noise).
    pub ties_within_noise: Vec<String>,
}

/// The experiment's result.
#[derive(Clone, Debug, Serialize)]
pub struct CalibrationResult {
    /// The settings used.
    pub config: Config,
    /// Where producer and consumer ran.
    pub placement: PairPlacement,
    /// The block cost `B` used by the policies and the model.
    pub block_cost: BlockCost,
    /// Cost of the two `thread_cpu_time` reads around a wait, ns (subtracted).
    pub cpu_clock_overhead_ns: f64,
    /// Thread CPU time of one futex sleep + wake-up (mean over the
    /// reference `/b/0` waits of every cell, clock cost removed), ns. Each
    /// cell subtracts per block the mean of its own references
    /// ([`Row::block_cpu_ns`]), since `B` holds it.
    pub block_cpu_ns: f64,
    /// The median of the same, ns.
    pub block_cpu_median_ns: f64,
    /// 1-minute load average when the run started (`None` off Linux).
    pub load_average: Option<f64>,
    /// CPUs this process may use.
    pub cpus: usize,
    /// `adapt/b`'s idle-CPU signal during the run
    /// (`waitwise::policy::idle_extension`): `"busy"` or `"idle"` when
    /// pinned, `"auto"` when read from the machine.
    pub idle_signal: String,
    /// Wall time of the whole run, s.
    pub wall_s: f64,
    /// One row per cell.
    pub rows: Vec<Row>,
    /// One ordering check per (law, scale).
    pub ordering: Vec<OrderingCheck>,
}

/// One policy's measured factors over the cells, against
/// [`STATIONARY_TARGET`](super::STATIONARY_TARGET) and
/// [`SWITCHING_TARGET`](super::SWITCHING_TARGET).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyFactors {
    /// Policy name.
    pub policy: String,
    /// Mean measured factor over every cell with a figure.
    pub mean_factor: f64,
    /// The largest measured factor of a stationary (exponential or
    /// uniform) cell, with the cell.
    pub worst_stationary: Option<(String, f64)>,
    /// The measured factor of the switching cell.
    pub switching: Option<f64>,
    /// Cells with a figure.
    pub cells: usize,
}

impl CalibrationResult {
    /// Rows with both a measured and a predicted factor.
    pub(super) fn measured_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.ratio.is_some())
    }

    /// The remarks `pick` gives of every (law, scale), each prefixed with
    /// its law and scale.
    pub(super) fn ordering_remarks(&self, pick: fn(&OrderingCheck) -> &Vec<String>) -> Vec<String> {
        self.ordering
            .iter()
            .flat_map(|o| {
                pick(o).iter().map(move |remark| {
                    format!(
                        "{} {}={}: {remark}",
                        o.dist.name(),
                        o.dist.scale_label(),
                        o.scale
                    )
                })
            })
            .collect()
    }

    /// Whether every decided policy pair is ordered as the model says
    /// (reversals within noise count as ties).
    pub fn ordering_matches(&self) -> bool {
        self.ordering.iter().all(|o| o.violations.is_empty())
    }

    /// `(rows within 25% of the prediction, rows with figures)`.
    pub fn within_tolerance(&self) -> (usize, usize) {
        let all: Vec<f64> = self.measured_rows().filter_map(|r| r.ratio).collect();
        (
            all.iter()
                .filter(|q| (*q - 1.0).abs() <= AGREEMENT_TOLERANCE)
                .count(),
            all.len(),
        )
    }

    /// Per policy, its mean measured factor over the cells, its worst
    /// stationary cell and its switching cell, in table order.
    pub fn policy_factors(&self) -> Vec<PolicyFactors> {
        self.config
            .policies
            .iter()
            .filter_map(|p| {
                let rows: Vec<(&Row, f64)> = self
                    .rows
                    .iter()
                    .filter(|r| &r.policy == p)
                    .filter_map(|r| Some((r, r.measured_factor?)))
                    .collect();
                if rows.is_empty() {
                    return None;
                }
                let cell =
                    |r: &Row| format!("{} {}={}", r.dist.name(), r.dist.scale_label(), r.scale);
                Some(PolicyFactors {
                    policy: p.clone(),
                    mean_factor: rows.iter().map(|(_, f)| f).sum::<f64>() / rows.len() as f64,
                    worst_stationary: rows
                        .iter()
                        .filter(|(r, _)| r.dist != CalibrationDist::Switching)
                        .max_by(|a, b| a.1.total_cmp(&b.1))
                        .map(|(r, f)| (cell(r), *f)),
                    switching: rows
                        .iter()
                        .find(|(r, _)| r.dist == CalibrationDist::Switching)
                        .map(|(_, f)| *f),
                    cells: rows.len(),
                })
            })
            .collect()
    }

    /// The measured rows of `r`'s cell (same law and scale), `r`'s own
    /// included.
    pub(super) fn cell_mates(&self, r: &Row) -> impl Iterator<Item = &Row> + '_ {
        let (dist, scale) = (r.dist, r.scale);
        self.measured_rows()
            .filter(move |o| o.dist == dist && o.scale == scale)
    }

    /// The static policy with the least measured factor in `r`'s cell
    /// (same law and scale), and that factor.
    pub(super) fn best_static_in(&self, r: &Row) -> Option<(&str, f64)> {
        self.cell_mates(r)
            .filter(|o| o.policy != "adapt/b")
            .filter_map(|o| Some((o.policy.as_str(), o.measured_factor?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The median `ratio` (measured over modelled, on the same waits) of
    /// the static policies of `r`'s cell, when it is further than
    /// [`MEASUREMENT_TOLERANCE`] from 1: the model knows a static
    /// policy's cost on every wait exactly, so there the measurement
    /// fails, not a policy (where a polled cell's waits last a few hundred
    /// ns, the fixed CPU of a hand-off and its variation are a large part
    /// of them). A median, so that one policy's own
    /// departure (`rand/b`'s brief blocks) does not void the cell.
    pub(super) fn unmeasurable(&self, r: &Row) -> Option<f64> {
        let mut ratios: Vec<f64> = self
            .cell_mates(r)
            .filter(|o| o.policy != "adapt/b")
            .filter_map(|o| o.ratio)
            .collect();
        if ratios.is_empty() {
            return None;
        }
        let m = median(&mut ratios);
        ((m - 1.0).abs() > MEASUREMENT_TOLERANCE).then_some(m)
    }

    /// The mean of `adapt/b`'s cells' on-line floors
    /// ([`Row::online_floor`]), the least mean factor any on-line policy
    /// can expect over the same cells; `None` unless every cell with a
    /// figure has a floor.
    pub(super) fn mean_online_floor(&self) -> Option<f64> {
        let floors: Option<Vec<f64>> = self
            .measured_rows()
            .filter(|r| r.policy == "adapt/b" && r.measured_factor.is_some())
            .map(|r| r.online_floor)
            .collect();
        let floors = floors.filter(|f| !f.is_empty())?;
        Some(floors.iter().sum::<f64>() / floors.len() as f64)
    }

    /// `adapt/b`'s model factor in the stationary cell of row `r` with the
    /// cell's own `B`: its cheapest arm for the law the cell drew from
    /// (scaled with the process's `B`), priced with the `B` its blocks
    /// cost, which its objects learn.
    pub(super) fn adaptive_with_cell_b(&self, r: &Row) -> Option<f64> {
        if r.cell_block_ns <= 0.0 {
            return r.predicted_factor;
        }
        let law = r
            .dist
            .law(r.scale, r.drawn_with_ns(self.block_cost.ns))
            .ok()?;
        cost::competitive_factor(&WaitingAlgorithm::Adaptive, &law, r.cell_block_ns).ok()
    }
}
