//! A cell's figures from its samples ([`summarize`]): its measured
//! factor, the model's on the same waits, and the switching cell's
//! ([`switching_factor`], [`switching_floor`]).

use super::accounting::CellPrices;
use super::config::CalibrationDist;
use super::result::Row;
use super::sample::Sample;
use waitwise_model::adaptive;
use waitwise_model::algorithm::WaitingAlgorithm;
use waitwise_model::cost;
use waitwise_model::distribution::WaitDistribution;

/// Figures of one cell from its samples: a sample of phase `p` is priced
/// with `prices[p]` (one [`CellPrices`] per law of the cell, measured by the
/// references of that phase).
///
/// A blocked wait's polling CPU is its CPU less the references' *mean*
/// kernel CPU per block, not floored at zero: the kernel's CPU varies from
/// block to block, and flooring each difference would charge every
/// blocked wait the mean of its positive part (a cell of `/b/0` waits,
/// which poll not at all, would measure well above the model that way). Only
/// the cell's total polling CPU is floored at zero. A polled wait's is
/// floored per wait, as its hand-off reference is a median.
///
/// `label_law` is the cell's law scaled with the process's `B` (the
/// theory's factor for the labelled cell, `predicted_factor`);
/// `drawn_law` the one its waits were drawn from (the floor's).
pub(super) fn summarize(
    row: &mut Row,
    samples: &[Sample],
    alg: &WaitingAlgorithm,
    label_law: &WaitDistribution,
    drawn_law: &WaitDistribution,
    prices: &[CellPrices],
) {
    let Some(first) = prices.first() else {
        return;
    };
    let b = first.b;
    let phases = prices.len() as f64;
    row.hand_off_cpu_ns = prices.iter().map(|a| a.hand_off.median_ns).sum::<f64>() / phases;
    row.cell_block_ns = prices.iter().map(|a| a.b_cell).sum::<f64>() / phases;
    let n = samples.len();
    row.rounds = n;
    row.predicted_factor = cost::competitive_factor(alg, label_law, b).ok();
    if row.dist != CalibrationDist::Switching && row.cell_block_ns > 0.0 {
        row.online_floor = cost::online_floor(drawn_law, row.cell_block_ns).ok();
    }
    if n == 0 {
        return;
    }
    let mut sums = price_samples(samples, alg, prices);
    if sums.poll < 0.0 {
        sums.cost -= sums.poll;
        sums.poll = 0.0;
    }
    let nf = n as f64;
    row.outliers = sums.outliers;
    row.mean_drawn_wait_ns = samples.iter().map(|s| s.drawn_ns).sum::<f64>() / nf;
    row.mean_wait_ns = samples.iter().map(|s| s.wait_ns).sum::<f64>() / nf;
    row.block_fraction = samples.iter().filter(|s| s.blocked).count() as f64 / nf;
    row.mean_poll_cpu_ns = sums.poll / nf;
    row.mean_cost_ns = sums.cost / nf;
    row.mean_optimal_ns = sums.optimal / nf;
    if sums.optimal > 0.0 {
        let factor = sums.cost / sums.optimal;
        row.measured_factor = Some(factor);
        row.measured_factor_se = ratio_standard_error(&sums.pairs, factor);
        row.predicted_sample_factor = Some(sums.model / sums.optimal).filter(|f| f.is_finite());
    }
    row.ratio = match (row.measured_factor, row.predicted_sample_factor) {
        (Some(m), Some(p)) if p > 0.0 => Some(m / p),
        _ => None,
    };
}

/// A cell's waits priced one by one ([`price_samples`]), ns.
struct PricedSums {
    /// Measured cost: polling CPU plus the cell's `B` per block.
    cost: f64,
    /// Optimum, `min(t, B)` per wait.
    optimal: f64,
    /// The model's cost on the same waits.
    model: f64,
    /// Polling CPU.
    poll: f64,
    /// `(cost, optimum)` of each wait, for the factor's standard error.
    pairs: Vec<(f64, f64)>,
    /// Waits counted at a cap.
    outliers: usize,
}

/// The longest a blocked wait of `alg` polled, ns, when its sample does
/// not say (`Sample::poll_cap_ns`): its poll limit for the process's `b`
/// (`B` for `rand/b`); for `adapt/b`, its longest arm (s/b/2) with its
/// objects' own `B`, at most `BLOCK_RANGE` times the process's.
fn max_poll_ns(alg: &WaitingAlgorithm, b: f64) -> f64 {
    if *alg == WaitingAlgorithm::Adaptive {
        use waitwise::policy::adaptive::{BLOCK_RANGE, MAX_LIMIT_IN_B};
        MAX_LIMIT_IN_B * BLOCK_RANGE * b
    } else {
        alg.alpha(b).unwrap_or(1.0) * b
    }
}

/// Prices each sample with the prices of its phase and sums.
///
/// A blocked wait polled at most its poll limit ([`max_poll_ns`], or the
/// limit its sample recorded); CPU beyond that and the references' cap is
/// a kernel-path outlier. A polled wait burned at most its length; CPU
/// beyond that and the hand-off cap was charged while its vCPU did not
/// run.
fn price_samples(samples: &[Sample], alg: &WaitingAlgorithm, prices: &[CellPrices]) -> PricedSums {
    let (b, overhead) = (prices[0].b, prices[0].clock_overhead);
    let max_poll = max_poll_ns(alg, b);
    let mut sums = PricedSums {
        cost: 0.0,
        optimal: 0.0,
        model: 0.0,
        poll: 0.0,
        pairs: Vec::with_capacity(samples.len()),
        outliers: 0,
    };
    // adapt/b: the model's learner sees the cell's waits in the order they
    // happened, as the event's own summary did, with the B of the cell's
    // blocks, which the event's summary learns from its own wake-ups.
    let mut learner = adaptive::Learner::new();
    for s in samples {
        let CellPrices {
            b_cell,
            block_cpu,
            hand_off,
            ..
        } = prices[s.phase.min(prices.len() - 1)];
        let cpu = s.cpu_ns - overhead;
        let cap = if s.blocked {
            s.poll_cap_ns.unwrap_or(max_poll) + block_cpu.cap_ns
        } else {
            s.wait_ns + hand_off.cap_ns
        };
        if cpu > cap {
            sums.outliers += 1;
        }
        let poll = if s.blocked {
            cpu.min(cap) - block_cpu.mean_ns
        } else {
            (cpu.min(cap) - hand_off.median_ns).max(0.0)
        };
        let cost = poll + if s.blocked { b_cell } else { 0.0 };
        sums.poll += poll;
        sums.cost += cost;
        sums.optimal += s.wait_ns.min(b_cell);
        sums.pairs.push((cost, s.wait_ns.min(b_cell)));
        sums.model += if *alg == WaitingAlgorithm::Adaptive {
            let arm = learner.begin();
            let c = adaptive::arm_cost_scaled(arm, s.wait_ns, b_cell, b_cell);
            learner.finish(arm, s.wait_ns, b_cell);
            c
        } else {
            cost_in_cell(alg, s.wait_ns, b, b_cell).unwrap_or(f64::NAN)
        };
    }
    sums
}

/// The model's cost of one wait of length `t` for the policy `alg` as it
/// ran, tuned for the process's `b` (its poll limit `alpha * b`, or
/// `rand/b`'s draw on `[0, b]`), when a block costs `b_cell`.
pub(super) fn cost_in_cell(
    alg: &WaitingAlgorithm,
    t: f64,
    b: f64,
    b_cell: f64,
) -> waitwise_model::error::Result<f64> {
    let rescaled = |alpha: f64| alpha * b / b_cell;
    match *alg {
        WaitingAlgorithm::Randomized => {
            waitwise_model::randomized::expected_cost_for_wait_scaled(t, b, b_cell)
        }
        WaitingAlgorithm::TwoPhase { alpha } => {
            cost::cost_for_wait(&WaitingAlgorithm::two_phase(rescaled(alpha))?, t, b_cell)
        }
        WaitingAlgorithm::SwitchSpinTwoPhase { alpha, beta } => cost::cost_for_wait(
            &WaitingAlgorithm::switch_spin_two_phase(rescaled(alpha), beta)?,
            t,
            b_cell,
        ),
        // adapt/b's cost depends on the waits before (`summarize` runs its
        // learner over the cell's waits); on its own, its stationary limit.
        WaitingAlgorithm::AlwaysSpin { .. }
        | WaitingAlgorithm::AlwaysBlock
        | WaitingAlgorithm::Adaptive => cost::cost_for_wait(alg, t, b_cell),
    }
}

/// Standard error of the ratio estimator `sum(x) / sum(y) = factor` from
/// its `(x, y)` pairs (delta method: the spread of `x - factor * y` over
/// the mean of `y`); `None` with fewer than 2 pairs.
pub(super) fn ratio_standard_error(pairs: &[(f64, f64)], factor: f64) -> Option<f64> {
    let n = pairs.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean_y = pairs.iter().map(|p| p.1).sum::<f64>() / nf;
    let resid: Vec<f64> = pairs.iter().map(|&(x, y)| x - factor * y).collect();
    let mean_r = resid.iter().sum::<f64>() / nf;
    let var = resid.iter().map(|r| (r - mean_r).powi(2)).sum::<f64>() / (nf - 1.0);
    (mean_y > 0.0).then(|| var.sqrt() / nf.sqrt() / mean_y)
}

/// The model's factor of `alg` on waits drawn from `laws` in turn, `period`
/// waits each: for a static policy, the laws' expected costs over their
/// optima in equal parts; for `adapt/b`, its learner on 20,000 drawn waits.
pub(super) fn switching_factor(
    alg: &WaitingAlgorithm,
    laws: &[WaitDistribution],
    period: usize,
    b: f64,
    seed: u64,
) -> Option<f64> {
    if *alg == WaitingAlgorithm::Adaptive {
        return adaptive::simulated_factor(laws, period, 20_000, b, seed).ok();
    }
    let mut cost_sum = 0.0;
    let mut opt_sum = 0.0;
    for law in laws {
        cost_sum += cost::expected_cost(alg, law, b).ok()?;
        opt_sum += cost::optimal_cost(law, 1.0, b).ok()?;
    }
    (opt_sum > 0.0).then(|| cost_sum / opt_sum)
}

/// The switching cell's floor ([`cost::switching_online_floor`]): each
/// phase's law with the `B` its own references' blocks cost (`prices`, one
/// per phase); `None` when the model refuses one.
pub(super) fn switching_floor(laws: &[WaitDistribution], prices: &[CellPrices]) -> Option<f64> {
    let phases: Vec<(WaitDistribution, f64)> = laws
        .iter()
        .zip(prices)
        .map(|(law, acc)| (law.clone(), acc.b_cell))
        .collect();
    cost::switching_online_floor(&phases).ok()
}
