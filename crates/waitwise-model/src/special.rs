//! Special functions the wait-time models need: `ln n!` and Poisson/Erlang sums.
//!
//! The Erlang PDF of order `r` and rate `lambda` (Lim & Agarwal Eq. 8 and 12) has a
//! closed-form CDF through the Poisson distribution:
//! `P(T > a) = sum_{n < r} e^(-x) x^n / n!` with `x = lambda a`, and its partial
//! expectation is `int_0^a t f_r(t) dt = (r / lambda) P(T_{r+1} <= a)`.
//! Terms are computed in log space so large orders (1000-participant barriers) neither
//! overflow nor underflow to garbage.

/// `ln(n!)`: exact summation below 20, Stirling's series (error < 1e-15) above.
pub(crate) fn ln_factorial(n: u32) -> f64 {
    if n < 20 {
        return (2..=n).map(|k| f64::from(k).ln()).sum();
    }
    let n = f64::from(n);
    let inv = 1.0 / n;
    let inv2 = inv * inv;
    n * n.ln() - n
        + 0.5 * (2.0 * std::f64::consts::PI * n).ln()
        + inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 / 1260.0))
}

/// `pmf[n] = e^(-x) x^n / n!` for `n = 0..=k`.
pub(crate) fn poisson_pmfs(x: f64, k: u32) -> Vec<f64> {
    let mut out = Vec::with_capacity(k as usize + 1);
    if x <= 0.0 {
        out.push(1.0);
        out.resize(k as usize + 1, 0.0);
        return out;
    }
    let ln_x = x.ln();
    let mut lp = -x;
    out.push(lp.exp());
    for n in 1..=k {
        lp += ln_x - f64::from(n).ln();
        out.push(lp.exp());
    }
    out
}

/// CDF, tail and partial expectation at `a` of a mixture of Erlang laws with a common
/// `rate`; `weights[i]` is the weight of order `i + 1` (weights sum to 1).
///
/// Returns `(cdf, tail, partial_expectation)`; `tail` is summed directly (not `1 - cdf`)
/// so that it stays accurate far in the tail.
pub(crate) fn erlang_mixture_at(rate: f64, weights: &[f64], a: f64) -> (f64, f64, f64) {
    let k = weights.len() as u32;
    let pmf = poisson_pmfs(rate * a.max(0.0), k + 1);
    // below[r] = P(Poisson < r) = P(Erlang_r > a).
    let mut below = 0.0;
    let mut tail = 0.0;
    let mut pe = 0.0;
    for (i, w) in weights.iter().enumerate() {
        let r = i + 1;
        below += pmf[r - 1]; // P(Poisson <= r - 1) = P(Erlang_r > a)
        let below_next = below + pmf[r]; // P(Erlang_{r+1} > a)
        tail += w * below.min(1.0);
        pe += w * (r as f64 / rate) * (1.0 - below_next).max(0.0);
    }
    let tail = tail.clamp(0.0, 1.0);
    (1.0 - tail, tail, pe)
}

/// Density at `t` of the Erlang mixture of [`erlang_mixture_at`].
pub(crate) fn erlang_mixture_pdf(rate: f64, weights: &[f64], t: f64) -> f64 {
    if t < 0.0 {
        return 0.0;
    }
    let pmf = poisson_pmfs(rate * t, weights.len() as u32);
    weights
        .iter()
        .enumerate()
        .map(|(i, w)| w * rate * pmf[i])
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_factorial_is_continuous_across_the_switch() {
        let exact: f64 = (2..=25u32).map(|k| f64::from(k).ln()).sum();
        assert!((ln_factorial(25) - exact).abs() < 1e-12);
        let exact20: f64 = (2..=20u32).map(|k| f64::from(k).ln()).sum();
        assert!((ln_factorial(20) - exact20).abs() < 1e-12);
        assert_eq!(ln_factorial(0), 0.0);
    }

    #[test]
    fn order_one_mixture_is_exponential() {
        let (cdf, tail, pe) = erlang_mixture_at(2.0, &[1.0], 0.7);
        let x: f64 = 1.4;
        assert!((cdf - (1.0 - (-x).exp())).abs() < 1e-14);
        assert!((tail - (-x).exp()).abs() < 1e-14);
        // int_0^a t l e^{-l t} dt = (1 - e^{-la}(1 + la)) / l
        assert!((pe - (1.0 - (-x).exp() * (1.0 + x)) / 2.0).abs() < 1e-14);
    }

    #[test]
    fn large_orders_stay_finite() {
        let w = vec![1.0 / 1023.0; 1023];
        let (cdf, tail, pe) = erlang_mixture_at(1.0, &w, 5000.0);
        assert!(cdf.is_finite() && tail.is_finite() && pe.is_finite());
        assert!((cdf - 1.0).abs() < 1e-12);
        assert!((pe - 512.0).abs() < 1e-6, "{pe}"); // mean (N + 1) / 2
    }
}
