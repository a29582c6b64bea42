//! Data for Lim & Agarwal's Figures 2 and 3: competitive factor against the scale of the
//! wait-time law, one series per polling limit.
//!
//! * Figure 2 (exponential waits): x = `lambda beta B`, log axis.
//! * Figure 3 (waits uniform on `[0, U]`): x = `U / (beta B)`, log axis.
//!
//! Series: `alpha` in `{0, ln(e-1), (sqrt5-1)/2, 1, 2, inf}` (the paper's 0.54 and 0.62
//! are the exact Theorem 3 and 4 constants here, so the names read `0.541` and `0.618`)
//! plus the randomized policy, a flat line at `e/(e-1)`, and `adapt/b` at its stationary
//! limit (the cheapest arm of its menu for the law, [`crate::adaptive::stationary_factor`];
//! a learner that has seen enough waits of one law). Because the factor depends on
//! `beta` only through x, the series carry `s/...` names; with switch-spinning they are
//! the `Ss/...` curves of the paper.

use serde::{Deserialize, Serialize};

use crate::adaptive;
use crate::algorithm::{WaitingAlgorithm, ALPHA_EXPONENTIAL, ALPHA_UNIFORM, E_OVER_E_MINUS_1};
use crate::cost;
use crate::distribution::WaitDistribution;

/// Smallest x plotted.
const X_MIN: f64 = 0.01;
/// Largest x plotted.
const X_MAX: f64 = 100.0;
/// Points per decade.
const PER_DECADE: u32 = 25;

/// Which figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CurveDistribution {
    /// Figure 2: exponential waits.
    Exponential,
    /// Figure 3: uniform waits.
    Uniform,
}

/// One curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Algorithm name (`/b/0`, `s/b/0.541`, ..., `s//inf`, `rand/b`).
    pub name: String,
    /// `(x, competitive factor)`, x increasing and log-spaced.
    pub points: Vec<(f64, f64)>,
}

/// A whole figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curves {
    /// The wait-time family.
    pub dist: CurveDistribution,
    /// Label of the (logarithmic) x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// One series per algorithm.
    pub series: Vec<Series>,
}

/// The alphas of the figures, in plotting order.
pub const FIGURE_ALPHAS: [f64; 6] = [
    0.0,
    ALPHA_EXPONENTIAL,
    ALPHA_UNIFORM,
    1.0,
    2.0,
    f64::INFINITY,
];

/// The data of Figure 2 (`Exponential`) or Figure 3 (`Uniform`).
///
/// # Examples
/// ```
/// use waitwise_model::curves::{figure, CurveDistribution};
/// let c = figure(CurveDistribution::Exponential);
/// assert_eq!(c.series.len(), 8);
/// // Theorem 2: every curve passes through e/(e-1) at x = 1.
/// for s in &c.series {
///     let (_, y) = s.points.iter().find(|(x, _)| (x - 1.0).abs() < 1e-9).unwrap();
///     assert!((y - 1.5819767).abs() < 1e-6, "{}", s.name);
/// }
/// ```
pub fn figure(dist: CurveDistribution) -> Curves {
    let decades = (X_MAX / X_MIN).log10().round() as u32;
    let xs: Vec<f64> = (0..=decades * PER_DECADE)
        .map(|i| X_MIN * 10f64.powf(f64::from(i) / f64::from(PER_DECADE)))
        .collect();
    let factor = |x: f64, alpha: f64| match dist {
        CurveDistribution::Exponential => cost::exponential_factor(x, alpha),
        CurveDistribution::Uniform => cost::uniform_factor(x, alpha),
    };
    let mut series: Vec<Series> = FIGURE_ALPHAS
        .iter()
        .map(|&alpha| Series {
            name: WaitingAlgorithm::TwoPhase { alpha }.name(),
            points: xs.iter().map(|&x| (x, factor(x, alpha))).collect(),
        })
        .collect();
    series.push(Series {
        name: WaitingAlgorithm::Randomized.name(),
        points: xs.iter().map(|&x| (x, E_OVER_E_MINUS_1)).collect(),
    });
    let law = |x: f64| match dist {
        CurveDistribution::Exponential => WaitDistribution::exponential(x),
        CurveDistribution::Uniform => WaitDistribution::uniform(x),
    };
    series.push(Series {
        name: WaitingAlgorithm::Adaptive.name(),
        points: xs
            .iter()
            .map(|&x| {
                let f = law(x).and_then(|d| adaptive::stationary_factor(&d, 1.0));
                (x, f.unwrap_or(f64::NAN))
            })
            .collect(),
    });
    let x_label = match dist {
        CurveDistribution::Exponential => "lambda * beta * B",
        CurveDistribution::Uniform => "U / (beta * B)",
    };
    Curves {
        dist,
        x_label: x_label.to_owned(),
        y_label: "competitive factor E[C] / E[C_opt]".to_owned(),
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::GOLDEN_RATIO;

    fn max_of(c: &Curves, name: &str) -> f64 {
        let s = c.series.iter().find(|s| s.name == name).unwrap();
        s.points.iter().map(|p| p.1).fold(0.0, f64::max)
    }

    #[test]
    fn figure_3_golden_curve_is_bounded_by_the_golden_ratio() {
        let c = figure(CurveDistribution::Uniform);
        assert!(max_of(&c, "s/b/0.618") <= GOLDEN_RATIO + 1e-9);
        assert!(max_of(&c, "s/b/0.541") > GOLDEN_RATIO);
        assert_eq!(c.x_label, "U / (beta * B)");
    }

    #[test]
    fn figure_2_optimal_curve_is_bounded() {
        let c = figure(CurveDistribution::Exponential);
        assert!(max_of(&c, "s/b/0.541") <= E_OVER_E_MINUS_1 + 1e-9);
        assert!(max_of(&c, "/b/0") > 10.0 && max_of(&c, "s//inf") > 10.0);
        let names: Vec<&str> = c.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "/b/0",
                "s/b/0.541",
                "s/b/0.618",
                "s/b/1",
                "s/b/2",
                "s//inf",
                "rand/b",
                "adapt/b"
            ]
        );
        // adapt/b's stationary limit is never above rand/b (an arm of its
        // menu); equal at x = 1, where every on-line policy costs the same.
        let adapt = &c.series[7];
        assert!(adapt
            .points
            .iter()
            .all(|&(_, y)| y <= E_OVER_E_MINUS_1 + 1e-9));
    }

    #[test]
    fn serializes_with_the_documented_keys() {
        let v = serde_json::to_value(figure(CurveDistribution::Uniform)).unwrap();
        assert_eq!(v["dist"], "uniform");
        assert!(v["series"][0]["points"][0].is_array());
    }
}
