//! Expected waiting costs and competitive factors (Lim & Agarwal section 4.2).
//!
//! For a two-phase algorithm with polling cost limit `alpha B` and switch-spinning
//! efficiency `beta` (Eq. 1):
//!
//! `E[C_Ss/b/alpha] = int_0^(alpha beta B) (t / beta) f(t) dt + (1 + alpha) B P(t > alpha beta B)`
//!
//! and for the optimal off-line algorithm, which polls iff `t <= beta B` (Eq. 2):
//!
//! `E[C_Ss/b/Opt] = int_0^(beta B) (t / beta) f(t) dt + B P(t > beta B) = E[min(t / beta, B)]`.
//!
//! `alpha = inf` is always-(switch-)spin, `alpha = 0` always-block, `beta = 1` plain
//! spinning. The competitive factor of an algorithm is `E[C] / E[C_opt]`, with the
//! optimum using the algorithm's own `beta` (the paper compares `Ss/b/alpha` with
//! `Ss/b/Opt`).
//!
//! [`expected_cost`] evaluates Eq. 1 through each distribution's closed-form partial
//! expectation; [`expected_cost_numeric`] integrates the density directly; the paper's
//! own closed forms (Eq. 4-7, Appendix B) are [`exponential_cost`], [`exponential_optimal_cost`],
//! [`uniform_cost`] and [`uniform_optimal_cost`]. The tests check all three agree.

use crate::adaptive;
use crate::algorithm::WaitingAlgorithm;
use crate::distribution::WaitDistribution;
use crate::error::{self, Result};
use crate::integrate;
use crate::randomized;

/// Cost of one wait of length `t` under a static polling limit (`alpha` in units of `B`).
pub(crate) fn two_phase_cost_for_wait(t: f64, alpha: f64, beta: f64, b: f64) -> f64 {
    if t <= alpha * beta * b {
        t / beta
    } else {
        (1.0 + alpha) * b
    }
}

/// Eq. 1 for a validated distribution (`alpha = inf`: mean / beta).
pub(crate) fn two_phase_expected(dist: &WaitDistribution, alpha: f64, beta: f64, b: f64) -> f64 {
    if alpha.is_infinite() {
        return dist.mean() / beta;
    }
    let (_, tail, pe) = dist.cdf_tail_pe(alpha * beta * b);
    pe / beta + (1.0 + alpha) * b * tail
}

/// Eq. 2 for a validated distribution.
pub(crate) fn optimal_expected(dist: &WaitDistribution, beta: f64, b: f64) -> f64 {
    let (_, tail, pe) = dist.cdf_tail_pe(beta * b);
    pe / beta + b * tail
}

/// Cost of one wait of length `t >= 0` (expected over the random limit for `rand/b`).
///
/// # Examples
/// ```
/// use waitwise_model::{algorithm::WaitingAlgorithm, cost::cost_for_wait};
/// let s_b_1 = WaitingAlgorithm::two_phase(1.0).unwrap();
/// assert_eq!(cost_for_wait(&s_b_1, 0.5, 1.0).unwrap(), 0.5); // spun the whole wait
/// assert_eq!(cost_for_wait(&s_b_1, 3.0, 1.0).unwrap(), 2.0); // spun B, then blocked
/// ```
pub fn cost_for_wait(alg: &WaitingAlgorithm, t: f64, block_cost: f64) -> Result<f64> {
    alg.validate()?;
    let b = error::positive("B", block_cost)?;
    let t = error::non_negative_or_inf("t", t)?;
    if *alg == WaitingAlgorithm::Adaptive {
        // Stationary limit for waits all of length t: the cheapest arm.
        return Ok((0..adaptive::ARMS)
            .map(|arm| adaptive::arm_cost(arm, t, b))
            .fold(f64::INFINITY, f64::min));
    }
    match alg.alpha(b) {
        Some(alpha) => Ok(two_phase_cost_for_wait(t, alpha, alg.beta(), b)),
        None => randomized::expected_cost_for_wait_closed_form(t, b),
    }
}

/// Off-line optimal cost of one wait: `min(t / beta, B)`.
pub fn optimal_cost_for_wait(t: f64, beta: f64, block_cost: f64) -> Result<f64> {
    let b = error::positive("B", block_cost)?;
    let beta = error::at_least_one("beta", beta)?;
    Ok((error::non_negative_or_inf("t", t)? / beta).min(b))
}

/// Expected waiting cost of `alg` when waits follow `dist` (Eq. 1; closed forms).
///
/// # Examples
/// ```
/// use waitwise_model::{algorithm::WaitingAlgorithm, cost, distribution::WaitDistribution};
/// let d = WaitDistribution::exponential(1.0).unwrap();
/// // Theorem 2: at lambda beta B = 1 every algorithm costs B.
/// let c = cost::expected_cost(&WaitingAlgorithm::two_phase(0.7).unwrap(), &d, 1.0).unwrap();
/// assert!((c - 1.0).abs() < 1e-12);
/// ```
pub fn expected_cost(
    alg: &WaitingAlgorithm,
    dist: &WaitDistribution,
    block_cost: f64,
) -> Result<f64> {
    alg.validate()?;
    dist.validate()?;
    let b = error::positive("B", block_cost)?;
    if *alg == WaitingAlgorithm::Adaptive {
        // Stationary limit: the cheapest arm for the law.
        return Ok((0..adaptive::ARMS)
            .map(|arm| adaptive::arm_expected_cost(arm, dist, b))
            .fold(f64::INFINITY, f64::min));
    }
    match alg.alpha(b) {
        Some(alpha) => Ok(two_phase_expected(dist, alpha, alg.beta(), b)),
        None => randomized::expected_cost(dist, b),
    }
}

/// Expected waiting cost by adaptive-Simpson integration of `cost(t) f(t)`; an independent
/// check on [`expected_cost`] (and the only route that does not use the randomized
/// policy's algebraic simplification).
pub fn expected_cost_numeric(
    alg: &WaitingAlgorithm,
    dist: &WaitDistribution,
    block_cost: f64,
) -> Result<f64> {
    alg.validate()?;
    dist.validate()?;
    let b = error::positive("B", block_cost)?;
    if *alg == WaitingAlgorithm::Adaptive {
        return Ok(adaptive_expected_numeric(dist, b));
    }
    let beta = alg.beta();
    let end = dist.support_end();
    let mut points = vec![0.0, end, beta * b, b];
    points.extend(dist.breakpoints());
    let tail_cost = match alg.alpha(b) {
        Some(alpha) => {
            points.push(alpha * beta * b);
            if alpha.is_infinite() {
                end / beta
            } else {
                (1.0 + alpha) * b
            }
        }
        None => randomized::expected_cost_for_wait_closed_form(end, b)?,
    };
    let points: Vec<f64> = points.into_iter().filter(|&p| p <= end).collect();
    let randomized_alg = alg.alpha(b).is_none();
    let integrand = |t: f64| {
        let c = if randomized_alg {
            randomized::expected_cost_for_wait(t, b).unwrap_or(f64::NAN)
        } else {
            two_phase_cost_for_wait(t, alg.alpha(b).unwrap_or(0.0), beta, b)
        };
        c * dist.pdf(t)
    };
    let panels = if randomized_alg { 8 } else { 64 };
    let scale = dist.mean().max(b);
    let body = integrate::integrate_pieces(&integrand, &points, panels, 1e-11 * scale);
    Ok(body + tail_cost * dist.tail(end))
}

/// `adapt/b`'s stationary cost by integration: each arm's cost integrated
/// over the law, the least of them.
fn adaptive_expected_numeric(dist: &WaitDistribution, b: f64) -> f64 {
    let end = dist.support_end();
    let mut points = vec![0.0, end, b];
    points.extend(adaptive::SCALES.iter().map(|a| a * b));
    points.extend((0..adaptive::ARMS).filter_map(|arm| Some(adaptive::poll_multiple(arm)? * b)));
    points.extend(dist.breakpoints());
    let points: Vec<f64> = points.into_iter().filter(|&p| p <= end).collect();
    let scale = dist.mean().max(b);
    (0..adaptive::ARMS)
        .map(|arm| {
            let integrand = |t: f64| adaptive::arm_cost(arm, t, b) * dist.pdf(t);
            let body = integrate::integrate_pieces(&integrand, &points, 64, 1e-11 * scale);
            body + adaptive::arm_cost(arm, end, b) * dist.tail(end)
        })
        .fold(f64::INFINITY, f64::min)
}

/// Expected cost of the optimal off-line algorithm `Ss/b/Opt` with efficiency `beta` (Eq. 2).
pub fn optimal_cost(dist: &WaitDistribution, beta: f64, block_cost: f64) -> Result<f64> {
    dist.validate()?;
    let b = error::positive("B", block_cost)?;
    let beta = error::at_least_one("beta", beta)?;
    Ok(optimal_expected(dist, beta, b))
}

/// Competitive factor `E[C_alg] / E[C_opt]`, the optimum using `alg`'s own `beta`.
///
/// # Examples
/// ```
/// use waitwise_model::{algorithm::*, cost, distribution::WaitDistribution};
/// let alg = WaitingAlgorithm::two_phase(ALPHA_EXPONENTIAL).unwrap();
/// for lambda in [0.01, 0.3, 1.0, 3.0, 100.0] {
///     let d = WaitDistribution::exponential(lambda).unwrap();
///     assert!(cost::competitive_factor(&alg, &d, 1.0).unwrap() <= E_OVER_E_MINUS_1 + 1e-12);
/// }
/// ```
pub fn competitive_factor(
    alg: &WaitingAlgorithm,
    dist: &WaitDistribution,
    block_cost: f64,
) -> Result<f64> {
    Ok(expected_cost(alg, dist, block_cost)? / optimal_cost(dist, alg.beta(), block_cost)?)
}

/// Grid of poll limits [`online_floor`] evaluates: this many, log-spaced
/// from `B / 1000` to `1000 B` (guessed: fine enough that the golden-section
/// refinement starts inside the minimum's bracket for the laws here).
const FLOOR_GRID: usize = 241;

/// The least competitive factor any on-line policy can expect on waits
/// drawn independently from `dist`, with block cost `block_cost` (plain
/// spinning, `beta = 1`), even a policy that knows the law:
/// `min over L of E[C_s/b/L] / E[min(t, B)]`.
///
/// Why it is a floor: a wait drawn independently of the past meets a poll
/// limit chosen from the past alone (fixed, as `s/b/alpha`; drawn, as
/// `rand/b` and every arm of `adapt/b`), so its expected cost is a mixture
/// of the `E[C_s/b/L]` and never below their least; summed over the waits,
/// neither is the total. For exponential waits the least is at `L = 0` or
/// `L = inf` (memoryless): `min(lambda B, 1) / (1 - e^(-lambda B))`, the
/// `e/(e-1)` of Theorem 3 at `lambda B = 1`; for uniform ones at `0` or `U`.
/// Any law: both ends, the law's breakpoints and a log grid of limits
/// (`FLOOR_GRID`), the best refined by golden section between its grid
/// neighbours.
///
/// # Examples
/// ```
/// use waitwise_model::{cost, distribution::WaitDistribution};
/// let d = WaitDistribution::exponential(1.0).unwrap();
/// let floor = cost::online_floor(&d, 1.0).unwrap();
/// assert!((floor - std::f64::consts::E / (std::f64::consts::E - 1.0)).abs() < 1e-9);
/// ```
pub fn online_floor(dist: &WaitDistribution, block_cost: f64) -> Result<f64> {
    let b = error::positive("B", block_cost)?;
    Ok(least_online_cost(dist, b)? / optimal_expected(dist, 1.0, b))
}

/// The least expected cost per wait of any poll limit on waits drawn from
/// `dist` with block cost `block_cost` (the numerator of
/// [`online_floor`]).
fn least_online_cost(dist: &WaitDistribution, block_cost: f64) -> Result<f64> {
    dist.validate()?;
    let b = error::positive("B", block_cost)?;
    let cost_at = |limit: f64| two_phase_expected(dist, limit / b, 1.0, b);
    let grid: Vec<f64> = (0..FLOOR_GRID)
        .map(|i| b * 10f64.powf(-3.0 + 6.0 * i as f64 / (FLOOR_GRID - 1) as f64))
        .collect();
    let mut best = cost_at(0.0).min(cost_at(f64::INFINITY));
    for limit in dist.breakpoints() {
        best = best.min(cost_at(limit));
    }
    let (i, grid_best) = grid
        .iter()
        .map(|&l| cost_at(l))
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("the grid is not empty");
    best = best.min(grid_best);
    // Golden section between the best grid point's neighbours.
    let (mut lo, mut hi) = (grid[i.saturating_sub(1)], grid[(i + 1).min(FLOOR_GRID - 1)]);
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let (m1, m2) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
        if cost_at(m1) <= cost_at(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    best = best.min(cost_at((lo + hi) / 2.0));
    Ok(best)
}

/// [`online_floor`] for waits whose law switches between `phases` in
/// equal parts, each phase `(law, its block cost)`: the sum over the
/// phases of the least expected cost over the sum of their optima, the
/// factor of a policy told each wait's phase that picks that phase's best
/// poll limit.
///
/// Why it is a floor: each wait is drawn from its phase's law independently
/// of the past, so whatever the policy learned, even the phase exactly,
/// its expected cost on that wait is at least its phase's least (the
/// argument of [`online_floor`]); summed over the waits, so is the total.
/// A policy that must notice a switch from the waits pays more.
///
/// # Examples
/// ```
/// use waitwise_model::{cost, distribution::WaitDistribution};
/// // Short waits (lambda B = 10) and long ones (lambda B = 0.1) in turn:
/// // spinning the short ones and blocking the long ones is the floor.
/// let phases = [
///     (WaitDistribution::exponential(10.0).unwrap(), 1.0),
///     (WaitDistribution::exponential(0.1).unwrap(), 1.0),
/// ];
/// let floor = cost::switching_online_floor(&phases).unwrap();
/// let least = 0.1 + 1.0;
/// let optimal = (1.0 - (-10f64).exp()) / 10.0 + (1.0 - (-0.1f64).exp()) / 0.1;
/// assert!((floor - least / optimal).abs() < 1e-6);
/// ```
///
/// # Errors
///
/// [`ModelError::InvalidParameter`](crate::error::ModelError) when
/// `phases` is empty, or a law or block cost is invalid.
pub fn switching_online_floor(phases: &[(WaitDistribution, f64)]) -> Result<f64> {
    if phases.is_empty() {
        return Err(error::ModelError::InvalidParameter {
            name: "phases",
            value: 0.0,
            requirement: "at least one phase",
        });
    }
    let (mut least, mut optimal) = (0.0, 0.0);
    for (law, block_cost) in phases {
        let b = error::positive("B", *block_cost)?;
        least += least_online_cost(law, b)?;
        optimal += optimal_expected(law, 1.0, b);
    }
    Ok(least / optimal)
}

/// Eq. 4-6: `E[C_Ss/b/alpha] = (1 - e^(-lambda alpha beta B)) / (lambda beta) + B e^(-lambda alpha beta B)`
/// for exponential waits; `alpha = inf` gives Eq. 4 (`1 / (lambda beta)`), `alpha = 0`
/// Eq. 5 (`B`).
pub fn exponential_cost(lambda: f64, alpha: f64, beta: f64, block_cost: f64) -> Result<f64> {
    let lambda = error::positive("lambda", lambda)?;
    let alpha = error::non_negative_or_inf("alpha", alpha)?;
    let beta = error::at_least_one("beta", beta)?;
    let b = error::positive("B", block_cost)?;
    if alpha.is_infinite() {
        return Ok(1.0 / (lambda * beta));
    }
    let x = lambda * alpha * beta * b;
    Ok(-(-x).exp_m1() / (lambda * beta) + b * (-x).exp())
}

/// Eq. 7: `E[C_Ss/b/Opt] = (1 - e^(-lambda beta B)) / (lambda beta)` for exponential waits.
pub fn exponential_optimal_cost(lambda: f64, beta: f64, block_cost: f64) -> Result<f64> {
    let lambda = error::positive("lambda", lambda)?;
    let beta = error::at_least_one("beta", beta)?;
    let b = error::positive("B", block_cost)?;
    Ok(-(-lambda * beta * b).exp_m1() / (lambda * beta))
}

/// Appendix B: `U / (2 beta)` if `U <= alpha beta B`, else
/// `[(1 + alpha) B U - (1 + alpha/2) alpha beta B^2] / U`.
pub fn uniform_cost(upper: f64, alpha: f64, beta: f64, block_cost: f64) -> Result<f64> {
    let u = error::positive("U", upper)?;
    let alpha = error::non_negative_or_inf("alpha", alpha)?;
    let beta = error::at_least_one("beta", beta)?;
    let b = error::positive("B", block_cost)?;
    if u <= alpha * beta * b {
        Ok(u / (2.0 * beta))
    } else {
        Ok(((1.0 + alpha) * b * u - (1.0 + alpha / 2.0) * alpha * beta * b * b) / u)
    }
}

/// Appendix B: `U / (2 beta)` if `U <= beta B`, else `[B U - beta B^2 / 2] / U`.
pub fn uniform_optimal_cost(upper: f64, beta: f64, block_cost: f64) -> Result<f64> {
    let u = error::positive("U", upper)?;
    let beta = error::at_least_one("beta", beta)?;
    let b = error::positive("B", block_cost)?;
    if u <= beta * b {
        Ok(u / (2.0 * beta))
    } else {
        Ok((b * u - 0.5 * beta * b * b) / u)
    }
}

/// Competitive factor of `s/b/alpha` for exponential waits as a function of the single
/// dimensionless parameter `x = lambda beta B` (Figure 2's x axis):
/// `(1 - e^(-alpha x) + x e^(-alpha x)) / (1 - e^(-x))`; `alpha = inf`: `x / (1 - e^(-x))`.
pub(crate) fn exponential_factor(x: f64, alpha: f64) -> f64 {
    let opt = -(-x).exp_m1();
    if alpha.is_infinite() {
        return 1.0 / opt;
    }
    let e = (-alpha * x).exp();
    (-(-alpha * x).exp_m1() / x + e) * x / opt
}

/// Competitive factor of `s/b/alpha` for waits uniform on `[0, U]` as a function of
/// `x = U / (beta B)` (Figure 3's x axis; Appendix B's `c`).
pub(crate) fn uniform_factor(x: f64, alpha: f64) -> f64 {
    let cost = if x <= alpha {
        x / 2.0
    } else {
        ((1.0 + alpha) * x - (1.0 + alpha / 2.0) * alpha) / x
    };
    let opt = if x <= 1.0 { x / 2.0 } else { (x - 0.5) / x };
    cost / opt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::*;
    use crate::distribution::BucketConvention;

    #[test]
    fn the_online_floor_of_exponential_waits_is_the_better_end() {
        for x in [0.05, 0.3, 0.433, 1.0, 2.2, 10.0] {
            let d = WaitDistribution::exponential(x).unwrap();
            let want = x.min(1.0) / -(-x).exp_m1();
            let got = online_floor(&d, 1.0).unwrap();
            assert!(
                (got - want).abs() < 1e-9 * want,
                "lambda B {x}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn the_online_floor_of_uniform_waits_is_the_better_end() {
        for x in [0.1, 1.0, 2.34, 3.0, 10.0] {
            let d = WaitDistribution::uniform(x).unwrap();
            let opt = uniform_optimal_cost(x, 1.0, 1.0).unwrap();
            let want = (x / 2.0).min(1.0) / opt;
            let got = online_floor(&d, 1.0).unwrap();
            assert!((got - want).abs() < 1e-9 * want, "U/B {x}: {got} vs {want}");
        }
    }

    #[test]
    fn no_policy_expects_less_than_the_online_floor() {
        let laws = [
            WaitDistribution::exponential(0.7).unwrap(),
            WaitDistribution::uniform(2.5).unwrap(),
            WaitDistribution::erlang(3, 2.0).unwrap(),
            WaitDistribution::barrier_mixture(8, 1.5).unwrap(),
        ];
        let mut policies = vec![WaitingAlgorithm::Randomized, WaitingAlgorithm::Adaptive];
        policies.extend(
            [0.0, 0.25, 0.54, 0.62, 1.0, 2.0, f64::INFINITY]
                .map(|alpha| WaitingAlgorithm::two_phase(alpha).unwrap()),
        );
        for d in &laws {
            for b in [0.3, 1.0, 4.0] {
                let floor = online_floor(d, b).unwrap();
                assert!(floor >= 1.0 - 1e-12, "{d:?} B {b}: floor {floor}");
                for alg in &policies {
                    let f = competitive_factor(alg, d, b).unwrap();
                    assert!(
                        f >= floor - 1e-9,
                        "{alg:?} on {d:?}, B {b}: {f} < floor {floor}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_online_floor_refuses_a_bad_block_cost() {
        let d = WaitDistribution::exponential(1.0).unwrap();
        assert!(online_floor(&d, 0.0).is_err());
        assert!(online_floor(&d, f64::NAN).is_err());
    }

    #[test]
    fn the_switching_floor_of_one_phase_is_its_online_floor() {
        let d = WaitDistribution::uniform(2.5).unwrap();
        let one = switching_online_floor(&[(d.clone(), 3.0)]).unwrap();
        assert!((one - online_floor(&d, 3.0).unwrap()).abs() < 1e-12);
    }

    #[test]
    fn no_policy_expects_less_than_the_switching_floor() {
        let laws = [
            WaitDistribution::exponential(10.0).unwrap(),
            WaitDistribution::exponential(0.1).unwrap(),
        ];
        // The long phase's blocks cost 4 times the short one's.
        let phases = [(laws[0].clone(), 1.0), (laws[1].clone(), 4.0)];
        let floor = switching_online_floor(&phases).unwrap();
        assert!(floor > 1.0, "{floor}");
        for alpha in [0.0, 0.25, 0.54, 1.0, 2.0, f64::INFINITY] {
            let alg = WaitingAlgorithm::two_phase(alpha).unwrap();
            let (mut cost, mut opt) = (0.0, 0.0);
            for (law, b) in &phases {
                cost += expected_cost(&alg, law, *b).unwrap();
                opt += optimal_cost(law, 1.0, *b).unwrap();
            }
            assert!(
                cost / opt >= floor - 1e-9,
                "alpha {alpha}: {} < {floor}",
                cost / opt
            );
        }
        // Equal block costs: adapt/b's learner on drawn waits, which
        // cannot see the switches, stays above it too.
        let equal = [(laws[0].clone(), 1.0), (laws[1].clone(), 1.0)];
        let floor = switching_online_floor(&equal).unwrap();
        let adapt = crate::adaptive::simulated_factor(&laws, 200, 20_000, 1.0, 7).unwrap();
        assert!(adapt >= floor, "adapt/b {adapt} < floor {floor}");
    }

    #[test]
    fn the_switching_floor_refuses_no_phase_and_a_bad_block_cost() {
        let d = WaitDistribution::exponential(1.0).unwrap();
        assert!(switching_online_floor(&[]).is_err());
        assert!(switching_online_floor(&[(d.clone(), 1.0), (d, -1.0)]).is_err());
    }

    fn algorithms() -> Vec<WaitingAlgorithm> {
        vec![
            WaitingAlgorithm::AlwaysSpin { timeout: None },
            WaitingAlgorithm::AlwaysSpin { timeout: Some(1.7) },
            WaitingAlgorithm::AlwaysBlock,
            WaitingAlgorithm::TwoPhase {
                alpha: ALPHA_EXPONENTIAL,
            },
            WaitingAlgorithm::TwoPhase { alpha: 1.0 },
            WaitingAlgorithm::SwitchSpinTwoPhase {
                alpha: 0.5,
                beta: 4.0,
            },
            WaitingAlgorithm::SwitchSpinTwoPhase {
                alpha: f64::INFINITY,
                beta: 2.0,
            },
            WaitingAlgorithm::Randomized,
            WaitingAlgorithm::Adaptive,
        ]
    }

    fn distributions() -> Vec<WaitDistribution> {
        vec![
            WaitDistribution::exponential(0.3).unwrap(),
            WaitDistribution::exponential(4.0).unwrap(),
            WaitDistribution::uniform(0.4).unwrap(),
            WaitDistribution::uniform(9.0).unwrap(),
            WaitDistribution::erlang(3, 2.0).unwrap(),
            WaitDistribution::barrier_mixture(64, 20.0).unwrap(),
            WaitDistribution::mm1m_mutex(16, 0.5, 2.0).unwrap(),
            WaitDistribution::empirical(&[3, 10, 30, 20, 4], BucketConvention::Log2WithZero)
                .unwrap(),
        ]
    }

    #[test]
    fn closed_form_and_numeric_integration_agree() {
        for d in distributions() {
            for a in algorithms() {
                let closed = expected_cost(&a, &d, 1.0).unwrap();
                let numeric = expected_cost_numeric(&a, &d, 1.0).unwrap();
                assert!(
                    (closed - numeric).abs() < 1e-7 * closed.max(1.0),
                    "{} under {d:?}: {closed} vs {numeric}",
                    a.name()
                );
            }
        }
    }

    #[test]
    fn paper_closed_forms_agree_with_generic_eq1() {
        for lambda in [0.01, 0.2, 1.0, 5.0, 80.0] {
            let d = WaitDistribution::exponential(lambda).unwrap();
            for beta in [1.0, 2.5] {
                for alpha in [0.0, 0.3, ALPHA_EXPONENTIAL, 1.0, 2.0, f64::INFINITY] {
                    let alg = WaitingAlgorithm::switch_spin_two_phase(alpha, beta).unwrap();
                    let generic = expected_cost(&alg, &d, 1.0).unwrap();
                    let paper = exponential_cost(lambda, alpha, beta, 1.0).unwrap();
                    assert!(
                        (generic - paper).abs() < 1e-12 * paper.max(1.0),
                        "{lambda} {alpha}"
                    );
                }
                let opt = optimal_cost(&d, beta, 1.0).unwrap();
                assert!((opt - exponential_optimal_cost(lambda, beta, 1.0).unwrap()).abs() < 1e-12);
            }
        }
        for u in [0.1, 0.5, 1.0, 3.0, 100.0] {
            let d = WaitDistribution::uniform(u).unwrap();
            for beta in [1.0, 3.0] {
                for alpha in [0.0, 0.2, ALPHA_UNIFORM, 1.0, 3.0] {
                    let alg = WaitingAlgorithm::switch_spin_two_phase(alpha, beta).unwrap();
                    let generic = expected_cost(&alg, &d, 1.0).unwrap();
                    let paper = uniform_cost(u, alpha, beta, 1.0).unwrap();
                    assert!((generic - paper).abs() < 1e-12, "{u} {alpha} {beta}");
                }
                let opt = optimal_cost(&d, beta, 1.0).unwrap();
                assert!((opt - uniform_optimal_cost(u, beta, 1.0).unwrap()).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn dimensionless_factors_match_full_formulas() {
        for x in [0.01, 0.5, 1.0, 7.0, 300.0] {
            for alpha in [0.0, 0.5, 1.0, f64::INFINITY] {
                let e = exponential_cost(x, alpha, 1.0, 1.0).unwrap()
                    / exponential_optimal_cost(x, 1.0, 1.0).unwrap();
                assert!((exponential_factor(x, alpha) - e).abs() < 1e-12 * e);
                let u = uniform_cost(x, alpha, 1.0, 1.0).unwrap()
                    / uniform_optimal_cost(x, 1.0, 1.0).unwrap();
                assert!((uniform_factor(x, alpha) - u).abs() < 1e-12 * u);
            }
        }
    }

    #[test]
    fn randomized_factor_is_constant_under_any_distribution() {
        for d in distributions() {
            let f = competitive_factor(&WaitingAlgorithm::Randomized, &d, 1.0).unwrap();
            assert!((f - E_OVER_E_MINUS_1).abs() < 1e-12);
        }
    }

    #[test]
    fn timeout_is_two_phase_with_alpha_timeout_over_b() {
        let d = WaitDistribution::exponential(0.7).unwrap();
        let a = expected_cost(
            &WaitingAlgorithm::AlwaysSpin { timeout: Some(3.0) },
            &d,
            2.0,
        )
        .unwrap();
        let b = expected_cost(&WaitingAlgorithm::TwoPhase { alpha: 1.5 }, &d, 2.0).unwrap();
        assert!((a - b).abs() < 1e-15);
    }

    #[test]
    fn bad_input_is_an_error() {
        let d = WaitDistribution::exponential(1.0).unwrap();
        let a = WaitingAlgorithm::AlwaysBlock;
        assert!(expected_cost(&a, &d, 0.0).is_err());
        assert!(expected_cost(&WaitingAlgorithm::TwoPhase { alpha: -1.0 }, &d, 1.0).is_err());
        assert!(expected_cost(&a, &WaitDistribution::Uniform { upper: 0.0 }, 1.0).is_err());
        assert!(exponential_cost(-1.0, 1.0, 1.0, 1.0).is_err());
        assert!(uniform_cost(1.0, 1.0, 0.5, 1.0).is_err());
        assert!(optimal_cost_for_wait(1.0, 1.0, -2.0).is_err());
        assert!(cost_for_wait(&a, f64::NAN, 1.0).is_err());
    }
}
