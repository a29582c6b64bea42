//! Karlin et al.'s randomized two-phase policy (`rand/b`).
//!
//! For every wait the polling limit `L` is drawn from the density
//! `p(x) = e^(x/B) / (B (e - 1))` on `[0, B]` (Karlin, Manasse, McGeoch & Owicki,
//! "Competitive randomized algorithms for non-uniform problems", SODA 1990; cited by
//! Lim & Agarwal as reference 19). The thread spins (`beta = 1`) for up to `L`, then blocks.
//!
//! For a fixed wait `t <= B`, with `tau = t / B`:
//! `E[cost] = int_0^t (x + B) p(x) dx + t int_t^B p(x) dx = B tau e^tau/(e-1) + t (e - e^tau)/(e-1) = t e/(e-1)`,
//! and for `t > B` it is `int_0^B (x + B) p(x) dx = B e/(e-1)`. So the expected cost is
//! exactly `e/(e-1) min(t, B)`: `e/(e-1)` times the off-line optimum for *every* `t`, hence
//! also for every wait-time distribution. [`expected_cost_for_wait`] integrates the
//! density numerically instead of trusting this algebra, and the tests compare the two.

use crate::algorithm::E_OVER_E_MINUS_1;
use crate::distribution::WaitDistribution;
use crate::error::{self, Result};
use crate::integrate;
use crate::rng::Rng;

/// Density of the polling limit at `x` for block cost `b`.
pub fn poll_limit_pdf(x: f64, b: f64) -> f64 {
    if (0.0..=b).contains(&x) {
        (x / b).exp() / (b * (std::f64::consts::E - 1.0))
    } else {
        0.0
    }
}

/// CDF of the polling limit: `(e^(x/B) - 1) / (e - 1)` on `[0, B]`.
pub fn poll_limit_cdf(x: f64, b: f64) -> f64 {
    (x / b).clamp(0.0, 1.0).exp_m1() / (std::f64::consts::E - 1.0)
}

/// Draws a polling limit by inverting the CDF: `L = B ln(1 + u (e - 1))`.
pub fn sample_poll_limit(rng: &mut Rng, b: f64) -> f64 {
    b * (rng.next_f64() * (std::f64::consts::E - 1.0)).ln_1p()
}

/// Expected cost of one wait of length `t >= 0` (block cost `b > 0`), by numerical
/// integration over the polling-limit density.
///
/// # Examples
/// ```
/// use waitwise_model::randomized::expected_cost_for_wait;
/// let c = expected_cost_for_wait(0.3, 1.0).unwrap();
/// assert!((c - 0.3 * std::f64::consts::E / (std::f64::consts::E - 1.0)).abs() < 1e-9);
/// ```
pub fn expected_cost_for_wait(t: f64, b: f64) -> Result<f64> {
    let b = error::positive("B", b)?;
    let t = error::non_negative_or_inf("t", t)?;
    let cost = |x: f64| if t <= x { t } else { x + b };
    let f = |x: f64| cost(x) * poll_limit_pdf(x, b);
    Ok(integrate::integrate_pieces(
        &f,
        &[0.0, t.min(b), b],
        8,
        1e-13 * b,
    ))
}

/// The closed form `e/(e-1) min(t, B)` of [`expected_cost_for_wait`].
pub fn expected_cost_for_wait_closed_form(t: f64, b: f64) -> Result<f64> {
    let b = error::positive("B", b)?;
    let t = error::non_negative_or_inf("t", t)?;
    Ok(E_OVER_E_MINUS_1 * t.min(b))
}

/// Expected cost of one wait of length `t` when the polling limit is drawn
/// from the randomized density for `draw_scale` (`e^(x/D) / (D (e - 1))` on
/// `[0, D]`) but a block costs `block_cost`: what `rand/b` tuned for one `B`
/// costs on a machine whose blocks cost another. Closed form:
/// `t P(L > t) + E[L; L <= t] + B P(L <= t)`. Equals
/// [`expected_cost_for_wait_closed_form`] when `draw_scale == block_cost`.
///
/// # Examples
/// ```
/// use waitwise_model::randomized::{expected_cost_for_wait_closed_form, expected_cost_for_wait_scaled};
/// let same = expected_cost_for_wait_scaled(0.3, 1.0, 1.0).unwrap();
/// assert!((same - expected_cost_for_wait_closed_form(0.3, 1.0).unwrap()).abs() < 1e-12);
/// // Blocks twice as dear: every wait that blocks pays one more draw scale.
/// assert!(expected_cost_for_wait_scaled(5.0, 1.0, 2.0).unwrap() > 2.5);
/// ```
pub fn expected_cost_for_wait_scaled(t: f64, draw_scale: f64, block_cost: f64) -> Result<f64> {
    let d = error::positive("draw scale", draw_scale)?;
    let b = error::positive("B", block_cost)?;
    let t = error::non_negative_or_inf("t", t)?;
    let e = std::f64::consts::E;
    let u = (t / d).min(1.0);
    let eu = u.exp();
    // P(L > t), E[L; L <= t] and P(L <= t) under the density on [0, d].
    let p_poll = (e - eu) / (e - 1.0);
    let mean_blocked_limit = d * ((u - 1.0) * eu + 1.0) / (e - 1.0);
    let p_block = (eu - 1.0) / (e - 1.0);
    Ok(t.min(d) * p_poll + mean_blocked_limit + b * p_block)
}

/// Expected cost for wait `t > 0` divided by the off-line optimum `min(t, B)`.
pub fn ratio_for_wait(t: f64, b: f64) -> Result<f64> {
    let t = error::positive("t", t)?;
    Ok(expected_cost_for_wait(t, b)? / t.min(b))
}

/// Expected cost under a wait-time distribution: `e/(e-1) E[min(t, B)]`.
pub fn expected_cost(dist: &WaitDistribution, b: f64) -> Result<f64> {
    dist.validate()?;
    let b = error::positive("B", b)?;
    let (_, tail, pe) = dist.cdf_tail_pe(b);
    Ok(E_OVER_E_MINUS_1 * (pe + b * tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_cost_agrees_with_the_closed_form_and_integration() {
        for &(t, d) in &[(0.0, 1.0), (0.2, 1.0), (0.9, 1.0), (3.0, 1.0), (40.0, 7.0)] {
            let same = expected_cost_for_wait_scaled(t, d, d).unwrap();
            let closed = expected_cost_for_wait_closed_form(t, d).unwrap();
            assert!((same - closed).abs() < 1e-9 * d.max(1.0), "t={t} d={d}");
        }
        // Against a midpoint sum over the drawn limit, B != D.
        let (t, d, b) = (0.6, 1.0, 2.5);
        let n = 200_000;
        let e = std::f64::consts::E;
        let mut sum = 0.0;
        for i in 0..n {
            let x = d * (i as f64 + 0.5) / n as f64;
            let f = (x / d).exp() / (d * (e - 1.0));
            let cost = if t < x { t } else { x + b };
            sum += f * cost * d / n as f64;
        }
        let scaled = expected_cost_for_wait_scaled(t, d, b).unwrap();
        assert!((scaled - sum).abs() < 1e-6, "{scaled} vs {sum}");
    }

    #[test]
    fn ratio_is_e_over_e_minus_1_for_every_wait_up_to_b() {
        let b = 500.0;
        for i in 1..=1000 {
            let t = b * f64::from(i) / 1000.0;
            let r = ratio_for_wait(t, b).unwrap();
            assert!((r - E_OVER_E_MINUS_1).abs() < 1e-3, "t = {t}: {r}");
        }
        for t in [1e-6, 1e-3, 0.5] {
            let r = ratio_for_wait(t, b).unwrap();
            assert!((r - E_OVER_E_MINUS_1).abs() < 1e-3, "t = {t}: {r}");
        }
    }

    #[test]
    fn ratio_holds_beyond_b() {
        for t in [1.0001, 2.0, 100.0] {
            assert!((ratio_for_wait(t, 1.0).unwrap() - E_OVER_E_MINUS_1).abs() < 1e-6);
        }
    }

    #[test]
    fn numeric_matches_closed_form() {
        for t in [0.0, 0.1, 0.5, 0.99, 1.0, 3.0] {
            let n = expected_cost_for_wait(t, 1.0).unwrap();
            let c = expected_cost_for_wait_closed_form(t, 1.0).unwrap();
            assert!((n - c).abs() < 1e-9, "{t}: {n} vs {c}");
        }
    }

    #[test]
    fn sampled_limits_follow_the_density() {
        let mut rng = Rng::new(5);
        let n = 100_000;
        let below_half = (0..n)
            .filter(|_| sample_poll_limit(&mut rng, 2.0) < 1.0)
            .count();
        let p = below_half as f64 / f64::from(n);
        assert!((p - poll_limit_cdf(1.0, 2.0)).abs() < 0.01, "{p}");
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(expected_cost_for_wait(1.0, 0.0).is_err());
        assert!(expected_cost_for_wait(-1.0, 1.0).is_err());
        assert!(ratio_for_wait(0.0, 1.0).is_err());
    }
}
