//! Fitting the paper's wait-time models to a recorded wait profile (Appendix A).
//!
//! Lim & Agarwal plot measured wait-time frequencies on a semi-log scale: an exponential
//! law is a straight line, and a linear regression on the log frequencies fits it
//! ("outliers with frequencies less than 10 were pruned"). Here the profile is the log2
//! histogram the waitwise primitives record (bucket `i` counts waits in `[2^i, 2^(i+1))`
//! ns), so frequencies are first divided by bucket width to get a density:
//!
//! * **exponential**: least squares of `ln(count_i / width_i)` on the bucket midpoint over
//!   buckets with at least [`MIN_REGRESSION_COUNT`] waits; `lambda = -slope`. (If fewer
//!   than two buckets qualify or the slope is not negative, `lambda = 1 / mean`.)
//! * **uniform**: `U` minimizing the Kolmogorov-Smirnov distance, searched over `2 x mean`
//!   and the last non-empty bucket.
//!
//! Goodness of fit is the Kolmogorov-Smirnov distance between the histogram's CDF and the
//! model's, at the bucket edges (our choice: it compares both models on one scale; the
//! regression's `r^2` is reported too). The better model's minimax alpha is recommended
//! (`ALPHA_EXPONENTIAL` or `ALPHA_UNIFORM`); if neither fits (distance above
//! [`POOR_FIT_DISTANCE`]) the recommendation is `ALPHA_UNIFORM`, whose worst case over
//! *both* families is lowest (1.618 for each; `ALPHA_EXPONENTIAL` reaches 1.727 on uniform
//! waits; see [`crate::minimax`]).
//! With a block cost, the alpha that minimizes the expected cost on the histogram itself
//! is reported as well (the off-line profile method of section 3.2.1).

use serde::{Deserialize, Serialize};

use crate::algorithm::{WaitingAlgorithm, ALPHA_EXPONENTIAL, ALPHA_UNIFORM};
use crate::cost;
use crate::distribution::{BucketConvention, Histogram, WaitDistribution};
use crate::error::{self, ModelError, Result};

/// Buckets with fewer waits are left out of the regression (Lim & Agarwal Appendix A).
pub const MIN_REGRESSION_COUNT: u64 = 10;

/// A Kolmogorov-Smirnov distance above this means the model does not describe the
/// profile. Guessed: about what 100 samples of the true law reach 1% of the time.
pub const POOR_FIT_DISTANCE: f64 = 0.16;

/// Fewer waits than this are too few to recommend an alpha from: the fit
/// stands, but the recommendation stays the kind's default. Guessed: with
/// 100 waits a KS distance below [`POOR_FIT_DISTANCE`] is unlikely by
/// chance for the wrong law.
pub const MIN_WAITS_TO_RECOMMEND: u64 = 100;

/// One synchronization object's recorded waits. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ObjectProfile {
    /// What the object is: `barrier`, `mutex`, `producer-consumer`, ... (free text).
    #[serde(default)]
    pub kind: String,
    /// The object's name or label, if recorded.
    #[serde(default, alias = "label")]
    pub name: Option<String>,
    /// Wait counts per log2 bucket.
    #[serde(default, alias = "histogram")]
    pub buckets: Vec<u64>,
    /// Bucket convention (default: bucket `i` is `[2^i, 2^(i+1))` ns).
    #[serde(default)]
    pub convention: BucketConvention,
}

/// A recorded wait profile: many objects, optionally the measured block cost.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WaitProfile {
    /// The objects.
    #[serde(default)]
    pub objects: Vec<ObjectProfile>,
    /// Measured cost of one block (unload + wake + reload) in ns, if known.
    #[serde(default, alias = "block_cost", alias = "b_ns")]
    pub block_cost_ns: Option<f64>,
}

impl WaitProfile {
    /// Parses `{ "objects": [...] }`, a bare `[...]` of objects, or a single
    /// `{ "buckets": [...] }`.
    ///
    /// # Examples
    /// ```
    /// use waitwise_model::fit::WaitProfile;
    /// let one = WaitProfile::from_json(r#"{"buckets": [1, 2, 3], "extra": true}"#).unwrap();
    /// assert_eq!(one.objects.len(), 1);
    /// let many = WaitProfile::from_json(r#"{"objects": [{"kind": "barrier", "buckets": [4]}]}"#).unwrap();
    /// assert_eq!(many.objects[0].kind, "barrier");
    /// assert!(WaitProfile::from_json("{}").is_err());
    /// ```
    pub fn from_json(json: &str) -> Result<Self> {
        let bad = |e: serde_json::Error| ModelError::Profile(e.to_string());
        let value: serde_json::Value = serde_json::from_str(json).map_err(bad)?;
        if value.is_array() {
            let objects = serde_json::from_value(value).map_err(bad)?;
            return Ok(Self {
                objects,
                block_cost_ns: None,
            });
        }
        if value.get("objects").is_some() {
            return serde_json::from_value(value).map_err(bad);
        }
        if value.get("buckets").is_some() || value.get("histogram").is_some() {
            let block_cost_ns = value
                .get("block_cost_ns")
                .or_else(|| value.get("block_cost"))
                .and_then(serde_json::Value::as_f64);
            let object = serde_json::from_value(value).map_err(bad)?;
            return Ok(Self {
                objects: vec![object],
                block_cost_ns,
            });
        }
        Err(ModelError::Profile(
            "expected an \"objects\" list or a \"buckets\" array".to_owned(),
        ))
    }
}

/// Which model describes a profile better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FittedModel {
    /// Exponential waits (producer-consumer, lightly loaded mutex).
    Exponential,
    /// Uniform waits (barriers).
    Uniform,
}

/// The exponential fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExponentialFit {
    /// Fitted rate, per ns.
    pub lambda_per_ns: f64,
    /// `1 / lambda`, ns.
    pub mean_ns: f64,
    /// `r^2` of the log-linear regression (`None` when it could not be run).
    pub r_squared: Option<f64>,
    /// Buckets used by the regression.
    pub points_used: usize,
    /// Kolmogorov-Smirnov distance to the histogram.
    pub ks_distance: f64,
}

/// The uniform fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UniformFit {
    /// Fitted `U`, ns.
    pub upper_ns: f64,
    /// Kolmogorov-Smirnov distance to the histogram.
    pub ks_distance: f64,
}

/// The alpha that is best for the recorded histogram itself, given the block cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileAlpha {
    /// Block cost used, ns.
    pub block_cost_ns: f64,
    /// Alpha minimizing the expected cost on the histogram (searched on `[0, 4]`, step 0.01).
    pub alpha: f64,
    /// Its competitive factor on the histogram.
    pub factor: f64,
    /// The competitive factor of the recommended (model) alpha on the histogram.
    pub recommended_factor: f64,
}

/// Fit of one object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitResult {
    /// The object's kind, as recorded.
    pub kind: String,
    /// The object's name, as recorded.
    pub name: Option<String>,
    /// Number of waits recorded.
    pub total_waits: u64,
    /// Mean wait, ns (histogram taken as uniform within buckets); 0 if no waits.
    pub mean_ns: f64,
    /// Exponential fit (`None` without waits).
    pub exponential: Option<ExponentialFit>,
    /// Uniform fit (`None` without waits).
    pub uniform: Option<UniformFit>,
    /// The better-fitting model (`None` without waits).
    pub best_model: Option<FittedModel>,
    /// Recommended polling limit, multiple of the block cost.
    pub recommended_alpha: f64,
    /// Its name, e.g. `s/b/0.541`.
    pub recommended_algorithm: String,
    /// Why, in one sentence.
    pub reason: String,
    /// Whether the profile itself is the evidence for `recommended_alpha`:
    /// at least [`MIN_WAITS_TO_RECOMMEND`] waits and a law that fits.
    /// `false`: `recommended_alpha` is the kind's default, kept for want of
    /// evidence, and `reason` says why.
    pub recommends: bool,
    /// With a block cost: the best alpha for this very histogram.
    pub profile_alpha: Option<ProfileAlpha>,
}

/// Fits every object of a profile (block cost from the profile, if any).
pub fn fit_profile(profile: &WaitProfile) -> Result<Vec<FitResult>> {
    fit_profile_with_block_cost(profile, profile.block_cost_ns)
}

/// Fits every object of a profile; `block_cost_ns` (if given) overrides the profile's.
///
/// Objects without waits get a result with no fits and the alpha their kind suggests
/// (uniform for barriers, exponential otherwise; section 3.2.1).
pub fn fit_profile_with_block_cost(
    profile: &WaitProfile,
    block_cost_ns: Option<f64>,
) -> Result<Vec<FitResult>> {
    if let Some(b) = block_cost_ns {
        error::positive("block_cost_ns", b)?;
    }
    profile
        .objects
        .iter()
        .map(|o| fit_object(o, block_cost_ns))
        .collect()
}

/// Fits one object.
pub fn fit_object(object: &ObjectProfile, block_cost_ns: Option<f64>) -> Result<FitResult> {
    let total_waits: u64 = object
        .buckets
        .iter()
        .fold(0u64, |a, &c| a.saturating_add(c));
    let mut result = FitResult {
        kind: object.kind.clone(),
        name: object.name.clone(),
        total_waits,
        mean_ns: 0.0,
        exponential: None,
        uniform: None,
        best_model: None,
        recommended_alpha: 0.0,
        recommended_algorithm: String::new(),
        reason: String::new(),
        recommends: false,
        profile_alpha: None,
    };
    let kind_default = if object.kind.contains("barrier") {
        ALPHA_UNIFORM
    } else {
        ALPHA_EXPONENTIAL
    };
    if total_waits == 0 {
        let alpha = kind_default;
        result.recommended_alpha = alpha;
        result.recommended_algorithm = WaitingAlgorithm::TwoPhase { alpha }.name();
        result.reason = format!(
            "no waits recorded; default for kind {:?} (section 3.2.1)",
            object.kind
        );
        return Ok(result);
    }
    let hist = Histogram::from_log2_buckets(&object.buckets, object.convention)?;
    result.mean_ns = hist.mean();
    let exp = fit_exponential(object, &hist);
    let uni = fit_uniform(&hist);
    let (best, best_ks) = if exp.ks_distance <= uni.ks_distance {
        (FittedModel::Exponential, exp.ks_distance)
    } else {
        (FittedModel::Uniform, uni.ks_distance)
    };
    let (alpha, reason) = if total_waits < MIN_WAITS_TO_RECOMMEND {
        (
            kind_default,
            format!(
                "only {total_waits} waits (fewer than {MIN_WAITS_TO_RECOMMEND}): no recommendation; the kind's default stays"
            ),
        )
    } else if best_ks > POOR_FIT_DISTANCE {
        (
            kind_default,
            format!(
                "neither law fits (KS {best_ks:.3}): no recommendation; the kind's default stays"
            ),
        )
    } else if best == FittedModel::Exponential {
        (
            ALPHA_EXPONENTIAL,
            format!("exponential fits best (KS {best_ks:.3}); Theorem 3"),
        )
    } else {
        (
            ALPHA_UNIFORM,
            format!("uniform fits best (KS {best_ks:.3}); Theorem 4"),
        )
    };
    result.exponential = Some(exp);
    result.uniform = Some(uni);
    result.best_model = Some(best);
    result.recommended_alpha = alpha;
    result.recommended_algorithm = WaitingAlgorithm::TwoPhase { alpha }.name();
    result.reason = reason;
    result.recommends = total_waits >= MIN_WAITS_TO_RECOMMEND && best_ks <= POOR_FIT_DISTANCE;
    if let Some(b) = block_cost_ns {
        result.profile_alpha = Some(profile_alpha(&hist, b, alpha)?);
    }
    Ok(result)
}

/// KS distance between the histogram and a model CDF, at the bucket edges.
fn ks_distance(hist: &Histogram, model_cdf: &dyn Fn(f64) -> f64) -> f64 {
    let mut cum = 0.0;
    let mut worst = model_cdf(hist.edges()[0]).abs();
    for (i, w) in hist.weights().iter().enumerate() {
        cum += w;
        worst = worst.max((cum - model_cdf(hist.edges()[i + 1])).abs());
    }
    worst
}

fn fit_exponential(object: &ObjectProfile, hist: &Histogram) -> ExponentialFit {
    let points: Vec<(f64, f64)> = object
        .buckets
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c >= MIN_REGRESSION_COUNT)
        .map(|(i, &c)| {
            let (lo, hi) = object.convention.bounds(i);
            (0.5 * (lo + hi), (c as f64 / (hi - lo)).ln())
        })
        .collect();
    let regression = linear_regression(&points).filter(|r| r.0 < 0.0);
    let (lambda, r_squared) = match regression {
        Some((slope, r2)) => (-slope, Some(r2)),
        None => (1.0 / hist.mean(), None),
    };
    ExponentialFit {
        lambda_per_ns: lambda,
        mean_ns: 1.0 / lambda,
        r_squared,
        points_used: if r_squared.is_some() { points.len() } else { 0 },
        ks_distance: ks_distance(hist, &|t| -(-lambda * t).exp_m1()),
    }
}

fn fit_uniform(hist: &Histogram) -> UniformFit {
    let edges = hist.edges();
    let last = hist.weights().iter().rposition(|&w| w > 0.0).unwrap_or(0);
    let (lo, hi) = (edges[last], edges[last + 1]);
    let mut candidates = vec![2.0 * hist.mean()];
    candidates.extend((0..=64).map(|k| lo + (hi - lo) * f64::from(k) / 64.0));
    candidates
        .into_iter()
        .filter(|u| *u > 0.0)
        .map(|u| UniformFit {
            upper_ns: u,
            ks_distance: ks_distance(hist, &|t| (t / u).clamp(0.0, 1.0)),
        })
        .min_by(|a, b| a.ks_distance.total_cmp(&b.ks_distance))
        .unwrap_or(UniformFit {
            upper_ns: hi,
            ks_distance: 1.0,
        })
}

/// Least squares `y = a + s x`: `Some((s, r^2))`, or `None` with fewer than two distinct x.
fn linear_regression(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy > 0.0 {
        sxy * sxy / (sxx * syy)
    } else {
        1.0
    };
    Some((slope, r2))
}

fn profile_alpha(hist: &Histogram, b: f64, recommended: f64) -> Result<ProfileAlpha> {
    let dist = WaitDistribution::Empirical(hist.clone());
    let factor = |alpha: f64| -> Result<f64> {
        cost::competitive_factor(&WaitingAlgorithm::TwoPhase { alpha }, &dist, b)
    };
    let mut best = (0.0, factor(0.0)?);
    for i in 1..=400 {
        let alpha = f64::from(i) * 0.01;
        let f = factor(alpha)?;
        if f < best.1 {
            best = (alpha, f);
        }
    }
    Ok(ProfileAlpha {
        block_cost_ns: b,
        alpha: best.0,
        factor: best.1,
        recommended_factor: factor(recommended)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn record(dist: &WaitDistribution, n: usize, seed: u64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let mut buckets = vec![0u64; 40];
        for _ in 0..n {
            let t = dist.sample(&mut rng).max(1.0);
            buckets[(t.log2().floor() as usize).min(39)] += 1;
        }
        buckets
    }

    #[test]
    fn exponential_profile_is_recognized() {
        let d = WaitDistribution::exponential(1.0 / 5000.0).unwrap();
        let obj = ObjectProfile {
            kind: "producer-consumer".into(),
            buckets: record(&d, 50_000, 1),
            ..Default::default()
        };
        let r = fit_object(&obj, Some(2000.0)).unwrap();
        assert_eq!(r.best_model, Some(FittedModel::Exponential), "{r:?}");
        let e = r.exponential.as_ref().unwrap();
        assert!((e.mean_ns / 5000.0 - 1.0).abs() < 0.25, "{e:?}");
        assert_eq!(r.recommended_algorithm, "s/b/0.541");
        assert!(r.recommends);
        assert!(r.profile_alpha.is_some());
    }

    #[test]
    fn few_waits_or_no_fitting_law_recommend_nothing() {
        let d = WaitDistribution::uniform(20_000.0).unwrap();
        let few = ObjectProfile {
            kind: "barrier".into(),
            buckets: record(&d, 5, 2),
            ..Default::default()
        };
        let r = fit_object(&few, Some(2000.0)).unwrap();
        assert!(!r.recommends);
        assert!(r.reason.contains("only 5 waits"), "{}", r.reason);
        assert_eq!(r.recommended_algorithm, "s/b/0.618");
        // Two far-apart clusters: neither law describes them.
        let mut buckets = vec![0u64; 30];
        buckets[3] = 5000;
        buckets[25] = 5000;
        let bimodal = ObjectProfile {
            kind: "mutex".into(),
            buckets,
            ..Default::default()
        };
        let r = fit_object(&bimodal, Some(2000.0)).unwrap();
        assert!(!r.recommends, "{r:?}");
        assert!(r.reason.contains("neither law fits"), "{}", r.reason);
        assert_eq!(r.recommended_algorithm, "s/b/0.541");
    }

    #[test]
    fn uniform_profile_is_recognized() {
        let d = WaitDistribution::uniform(20_000.0).unwrap();
        let obj = ObjectProfile {
            kind: "barrier".into(),
            buckets: record(&d, 50_000, 2),
            ..Default::default()
        };
        let r = fit_object(&obj, None).unwrap();
        assert_eq!(r.best_model, Some(FittedModel::Uniform), "{r:?}");
        let u = r.uniform.as_ref().unwrap();
        assert!((u.upper_ns / 20_000.0 - 1.0).abs() < 0.1, "{u:?}");
        assert_eq!(r.recommended_algorithm, "s/b/0.618");
    }

    #[test]
    fn empty_object_gets_kind_default() {
        let p = WaitProfile::from_json(
            r#"{"objects": [{"kind": "barrier", "buckets": [0, 0]}, {"kind": "mutex"}]}"#,
        )
        .unwrap();
        let r = fit_profile(&p).unwrap();
        assert_eq!(r[0].recommended_algorithm, "s/b/0.618");
        assert_eq!(r[1].recommended_algorithm, "s/b/0.541");
        assert!(r[0].exponential.is_none());
    }

    #[test]
    fn lenient_json() {
        let p = WaitProfile::from_json(
            r#"{"version": 3, "block_cost_ns": 1500, "objects": [{"kind": "mutex", "buckets": [0, 5, 50, 80, 30], "p50": 9}]}"#,
        )
        .unwrap();
        assert_eq!(p.block_cost_ns, Some(1500.0));
        let r = fit_profile(&p).unwrap();
        assert_eq!(r.len(), 1);
        assert!(r[0].profile_alpha.is_some());
        let single = WaitProfile::from_json(r#"{"buckets": [3, 4], "block_cost_ns": 10}"#).unwrap();
        assert_eq!(single.block_cost_ns, Some(10.0));
        assert!(WaitProfile::from_json("not json").is_err());
        assert!(WaitProfile::from_json(r#"{"objects": 3}"#).is_err());
    }

    #[test]
    fn bad_block_cost_is_an_error() {
        let p = WaitProfile {
            objects: vec![],
            block_cost_ns: Some(-1.0),
        };
        assert!(fit_profile(&p).is_err());
        let too_many = ObjectProfile {
            buckets: vec![1; 70],
            ..Default::default()
        };
        assert!(fit_object(&too_many, None).is_err());
    }
}
