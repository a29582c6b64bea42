//! Numerical integration: adaptive Simpson quadrature over piecewise-smooth integrands.
//!
//! Used where the paper gives no closed form (the randomized policy under a wait-time
//! distribution) and to check the closed forms (Eq. 4-7, Appendix B) against a direct
//! integration of Eq. 1-2. The integrand is split at the caller's breakpoints (the
//! polling limit `alpha beta B`, `beta B`, histogram edges) so each piece is smooth.

/// Maximum recursion depth of one Simpson piece (2^-40 of the piece's width).
const MAX_DEPTH: u32 = 40;

/// `int_a^b f(t) dt` to absolute tolerance `tol`, by adaptive Simpson (Lyness 1969).
///
/// # Examples
/// ```
/// let v = waitwise_model::integrate::adaptive_simpson(&|x: f64| x * x, 0.0, 3.0, 1e-12);
/// assert!((v - 9.0).abs() < 1e-9);
/// ```
pub fn adaptive_simpson(f: &dyn Fn(f64) -> f64, a: f64, b: f64, tol: f64) -> f64 {
    if b.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) {
        return 0.0;
    }
    let m = 0.5 * (a + b);
    let (fa, fm, fb) = (f(a), f(m), f(b));
    let whole = (b - a) / 6.0 * (fa + 4.0 * fm + fb);
    recurse(f, a, b, fa, fm, fb, whole, tol, MAX_DEPTH)
}

#[allow(clippy::too_many_arguments)]
fn recurse(
    f: &dyn Fn(f64) -> f64,
    a: f64,
    b: f64,
    fa: f64,
    fm: f64,
    fb: f64,
    whole: f64,
    tol: f64,
    depth: u32,
) -> f64 {
    let m = 0.5 * (a + b);
    let (lm, rm) = (0.5 * (a + m), 0.5 * (m + b));
    let (flm, frm) = (f(lm), f(rm));
    let left = (m - a) / 6.0 * (fa + 4.0 * flm + fm);
    let right = (b - m) / 6.0 * (fm + 4.0 * frm + fb);
    let delta = left + right - whole;
    if depth == 0 || delta.abs() <= 15.0 * tol {
        return left + right + delta / 15.0;
    }
    recurse(f, a, m, fa, flm, fm, left, 0.5 * tol, depth - 1)
        + recurse(f, m, b, fm, frm, fb, right, 0.5 * tol, depth - 1)
}

/// `int f` over `[points[0], points[last]]`, split at every point and each piece further
/// into `panels` equal panels (so narrow peaks are not stepped over).
///
/// `points` need not be sorted or distinct; non-finite points are ignored.
pub fn integrate_pieces(f: &dyn Fn(f64) -> f64, points: &[f64], panels: u32, tol: f64) -> f64 {
    let mut p: Vec<f64> = points.iter().copied().filter(|x| x.is_finite()).collect();
    p.sort_by(f64::total_cmp);
    p.dedup();
    let pieces = (p.len().saturating_sub(1) as f64) * f64::from(panels.max(1));
    let tol_each = tol / pieces.max(1.0);
    let mut sum = 0.0;
    for w in p.windows(2) {
        let (a, b) = (w[0], w[1]);
        let h = (b - a) / f64::from(panels.max(1));
        for i in 0..panels.max(1) {
            let lo = a + h * f64::from(i);
            let hi = if i + 1 == panels.max(1) { b } else { lo + h };
            sum += adaptive_simpson(f, lo, hi, tol_each);
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_density_integrates_to_one() {
        let v = integrate_pieces(&|t: f64| (-t).exp(), &[0.0, 40.0], 16, 1e-12);
        assert!((v - 1.0).abs() < 1e-10, "{v}");
    }

    #[test]
    fn kink_at_breakpoint() {
        let v = integrate_pieces(&|t: f64| t.min(1.0), &[0.0, 1.0, 2.0], 1, 1e-12);
        assert!((v - 1.5).abs() < 1e-12);
    }

    #[test]
    fn empty_interval_is_zero() {
        assert_eq!(adaptive_simpson(&|_| 1.0, 1.0, 1.0, 1e-9), 0.0);
        assert_eq!(integrate_pieces(&|_| 1.0, &[], 4, 1e-9), 0.0);
    }
}
