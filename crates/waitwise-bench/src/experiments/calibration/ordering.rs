//! The ordering check of one (law, scale) ([`ordering_check`]): the
//! policies' measured order against the model's.

use super::config::CalibrationDist;
use super::result::{OrderingCheck, Row};

/// Two policies whose predicted factors differ by less than this (relative)
/// are a near-tie: their measured order is not judged. Guessed: about the
/// run-to-run spread of a cell on a loaded 2-CPU machine.
pub(super) const TIE_TOLERANCE: f64 = 0.10;

/// A measured reversal of two policies counts only beyond this many
/// standard errors of their difference (about a 95% two-sided test).
pub const REVERSAL_Z: f64 = 2.0;

/// Compares the measured order of the policies of one (law, scale) with the
/// model's, judging only pairs the model separates by more than 10%. A
/// measured reversal smaller than [`REVERSAL_Z`] standard errors of the
/// difference is a tie within the measurement's noise, listed apart.
pub(super) fn ordering_check(dist: CalibrationDist, scale: f64, rows: &[&Row]) -> OrderingCheck {
    let figures: Vec<(&str, f64, f64, f64)> = rows
        .iter()
        .filter_map(|r| {
            Some((
                r.policy.as_str(),
                r.predicted_sample_factor?,
                r.measured_factor?,
                r.measured_factor_se.unwrap_or(0.0),
            ))
        })
        .collect();
    let order = |key: fn(&(&str, f64, f64, f64)) -> f64| {
        let mut v = figures.clone();
        v.sort_by(|a, b| key(a).total_cmp(&key(b)));
        v.iter().map(|f| f.0.to_string()).collect::<Vec<_>>()
    };
    let (mut decided, mut concordant, mut violations, mut ties) = (0, 0, Vec::new(), Vec::new());
    for (i, a) in figures.iter().enumerate() {
        for b in &figures[i + 1..] {
            let (lo, hi) = if a.1 <= b.1 { (a, b) } else { (b, a) };
            if hi.1 <= lo.1 * (1.0 + TIE_TOLERANCE) {
                continue;
            }
            decided += 1;
            let reversal = format!(
                "{} < {} predicted ({:.2} vs {:.2}), measured {:.2} vs {:.2}",
                lo.0, hi.0, lo.1, hi.1, lo.2, hi.2
            );
            if lo.2 <= hi.2 {
                concordant += 1;
            } else if lo.2 - hi.2 <= REVERSAL_Z * lo.3.hypot(hi.3) {
                concordant += 1;
                ties.push(format!(
                    "{reversal} (within {REVERSAL_Z} standard errors: {:.2})",
                    lo.3.hypot(hi.3)
                ));
            } else {
                violations.push(reversal);
            }
        }
    }
    OrderingCheck {
        dist,
        scale,
        predicted_order: order(|f| f.1),
        measured_order: order(|f| f.2),
        decided_pairs: decided,
        concordant_pairs: concordant,
        violations,
        ties_within_noise: ties,
    }
}
