//! Wait-time distributions: the models of Lim & Agarwal Appendix A and recorded histograms.
//!
//! | variant | where from | shape |
//! |---|---|---|
//! | [`WaitDistribution::Exponential`] | Eq. 3, producer-consumer under Poisson arrivals | `lambda e^(-lambda t)` |
//! | [`WaitDistribution::Uniform`] | Section 4.4.2, barriers | `1/U` on `[0, U]` |
//! | [`WaitDistribution::Erlang`] | Eq. 8, the `r`-th of Poisson arrivals | `lambda (lambda t)^(r-1) e^(-lambda t) / (r-1)!` |
//! | [`WaitDistribution::BarrierMixture`] | Eq. 9-10, barrier of `M` participants | `(1/N) sum_{r=1..N} f_r(t)`, `N = M - 1` |
//! | [`WaitDistribution::Mm1mMutex`] | Eq. 11-13, FCFS mutex as an M/M/1//M queue | `sum_{q=1..M-1} p_q f_q(t) / (1 - p_0 - p_M)` |
//! | [`WaitDistribution::Empirical`] | the per-object log2 histograms the primitives record | piecewise uniform |
//!
//! Every distribution offers its CDF, tail and *partial expectation*
//! `int_0^a t f(t) dt` in closed form (Erlang sums through the Poisson CDF), which is all
//! Eq. 1-2 need; [`crate::cost`] checks them against direct numerical integration of the
//! density.
//!
//! Choices the paper leaves open, made here:
//! * Eq. 11 weights `p_q` are used exactly as printed (time-average queue lengths of the
//!   finite-source queue), normalized over `q = 1..M-1` as in Eq. 13.
//! * An empirical histogram is taken as uniform within each bucket.

use serde::{Deserialize, Serialize};

use crate::error::{self, ModelError, Result};
use crate::rng::Rng;
use crate::special;

/// Tail probability below which the support of an unbounded law is cut off for numerical
/// integration (the neglected mass is added back analytically).
pub(crate) const TAIL_EPSILON: f64 = 1e-15;

/// Most buckets a log2 histogram of 64-bit nanosecond waits can use.
pub const MAX_LOG2_BUCKETS: usize = 64;

/// How bucket indices of a recorded histogram map to wait times (in nanoseconds, or
/// whatever unit the recorder used; `B` must be given in the same unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BucketConvention {
    /// Bucket `i` counts waits in `[2^i, 2^(i+1))`: the format waitwise primitives record.
    #[default]
    Log2,
    /// Bucket 0 counts waits in `[0, 1)`, bucket `i >= 1` counts `[2^(i-1), 2^i)`.
    Log2WithZero,
}

impl BucketConvention {
    /// `[lo, hi)` of bucket `i`.
    pub fn bounds(self, i: usize) -> (f64, f64) {
        match self {
            Self::Log2 => (2f64.powi(i as i32), 2f64.powi(i as i32 + 1)),
            Self::Log2WithZero if i == 0 => (0.0, 1.0),
            Self::Log2WithZero => (2f64.powi(i as i32 - 1), 2f64.powi(i as i32)),
        }
    }
}

/// A piecewise-uniform law: probability `weights[i]` spread evenly over
/// `[edges[i], edges[i+1])`.
///
/// # Examples
/// ```
/// use waitwise_model::distribution::{BucketConvention, Histogram};
/// // 10 waits in [1, 2) ns and 30 in [2, 4) ns.
/// let h = Histogram::from_log2_buckets(&[10, 30], BucketConvention::Log2).unwrap();
/// assert!((h.mean() - (0.25 * 1.5 + 0.75 * 3.0)).abs() < 1e-12);
/// assert!(Histogram::from_log2_buckets(&[0, 0], BucketConvention::Log2).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Bucket edges, strictly increasing, `weights.len() + 1` of them.
    edges: Vec<f64>,
    /// Probability of each bucket; non-negative, summing to 1.
    weights: Vec<f64>,
}

impl Histogram {
    /// Builds the law from recorded bucket counts (`counts[i]` waits in bucket `i`).
    ///
    /// Trailing empty buckets are dropped; fails on an all-zero histogram or more than
    /// [`MAX_LOG2_BUCKETS`] buckets.
    pub fn from_log2_buckets(counts: &[u64], convention: BucketConvention) -> Result<Self> {
        if counts.len() > MAX_LOG2_BUCKETS {
            return Err(ModelError::TooManyBuckets {
                found: counts.len(),
                max: MAX_LOG2_BUCKETS,
            });
        }
        let last = counts
            .iter()
            .rposition(|&c| c > 0)
            .ok_or(ModelError::EmptyHistogram)?;
        let counts = &counts[..=last];
        let total: f64 = counts.iter().map(|&c| c as f64).sum();
        let mut edges = vec![convention.bounds(0).0];
        edges.extend((0..counts.len()).map(|i| convention.bounds(i).1));
        let weights = counts.iter().map(|&c| c as f64 / total).collect();
        Ok(Self { edges, weights })
    }

    /// Builds the law from explicit edges and weights (weights are normalized).
    pub fn from_edges(edges: Vec<f64>, weights: Vec<f64>) -> Result<Self> {
        let h = Self { edges, weights };
        h.validate()?;
        let total: f64 = h.weights.iter().sum();
        Ok(Self {
            weights: h.weights.iter().map(|w| w / total).collect(),
            ..h
        })
    }

    /// Checks the invariants (also for a deserialized value).
    pub fn validate(&self) -> Result<()> {
        let bad = |why: &str| Err(ModelError::Profile(format!("histogram: {why}")));
        if self.weights.is_empty() || self.edges.len() != self.weights.len() + 1 {
            return bad("needs one more edge than weights");
        }
        if !self.edges[0].is_finite() || self.edges[0] < 0.0 {
            return bad("edges must be finite and >= 0");
        }
        if self
            .edges
            .windows(2)
            .any(|w| w[1] <= w[0] || !w[1].is_finite())
        {
            return bad("edges must be finite and strictly increasing");
        }
        if self.weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return bad("weights must be finite and >= 0");
        }
        if self.weights.iter().sum::<f64>() <= 0.0 {
            return Err(ModelError::EmptyHistogram);
        }
        Ok(())
    }

    /// Bucket edges.
    pub fn edges(&self) -> &[f64] {
        &self.edges
    }

    /// Bucket probabilities.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Mean wait.
    pub fn mean(&self) -> f64 {
        self.buckets().map(|(lo, hi, w)| w * 0.5 * (lo + hi)).sum()
    }

    fn buckets(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        self.weights
            .iter()
            .enumerate()
            .map(|(i, &w)| (self.edges[i], self.edges[i + 1], w))
    }

    fn pdf(&self, t: f64) -> f64 {
        self.buckets()
            .find(|&(lo, hi, _)| t >= lo && t < hi)
            .map_or(0.0, |(lo, hi, w)| w / (hi - lo))
    }

    /// `(cdf, partial expectation)` at `a`.
    fn at(&self, a: f64) -> (f64, f64) {
        let (mut cdf, mut pe) = (0.0, 0.0);
        for (lo, hi, w) in self.buckets() {
            if a >= hi {
                cdf += w;
                pe += w * 0.5 * (lo + hi);
            } else if a > lo {
                let frac = (a - lo) / (hi - lo);
                cdf += w * frac;
                pe += w * (a * a - lo * lo) / (2.0 * (hi - lo));
            }
        }
        (cdf.min(1.0), pe)
    }

    fn sample(&self, rng: &mut Rng) -> f64 {
        let mut u = rng.next_f64();
        for (lo, hi, w) in self.buckets() {
            if u < w {
                return lo + (hi - lo) * (u / w);
            }
            u -= w;
        }
        *self.edges.last().unwrap_or(&0.0)
    }
}

/// A wait-time distribution (density `f(t)` for `t >= 0`).
///
/// Build with the validating constructors; values built directly or deserialized are
/// checked by [`WaitDistribution::validate`], which every cost function calls.
///
/// # Examples
/// ```
/// use waitwise_model::distribution::WaitDistribution;
/// let d = WaitDistribution::exponential(0.5).unwrap();
/// assert!((d.mean() - 2.0).abs() < 1e-12);
/// assert!((d.cdf(2.0) - (1.0 - (-1.0f64).exp())).abs() < 1e-12);
/// assert!(WaitDistribution::exponential(0.0).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WaitDistribution {
    /// Exponential with rate `lambda` (Eq. 3).
    Exponential {
        /// Arrival rate of the producer, `> 0`.
        lambda: f64,
    },
    /// Uniform on `[0, upper]` (Section 4.4.2, Appendix B's `U`).
    Uniform {
        /// `U > 0`.
        upper: f64,
    },
    /// Erlang of order `order` and rate `lambda` (Eq. 8).
    Erlang {
        /// `r >= 1`.
        order: u32,
        /// Rate of each arrival, `> 0`.
        lambda: f64,
    },
    /// Barrier wait: a waiter is equally likely to be any of the first `N = M - 1`
    /// arrivals, so its wait is Erlang of a uniformly chosen order in `1..=N` (Eq. 9-10).
    BarrierMixture {
        /// `M >= 2` participants.
        participants: u32,
        /// Arrival rate of each participant, `> 0`.
        lambda: f64,
    },
    /// FCFS mutex modelled as an M/M/1//M queue (Eq. 11-13).
    Mm1mMutex {
        /// `M >= 2` potential lock requesters.
        requesters: u32,
        /// Request rate of each requester, `> 0`.
        lambda: f64,
        /// Departure (service) rate of lock holders, `> 0`.
        mu: f64,
    },
    /// A recorded histogram, uniform within buckets.
    Empirical(Histogram),
}

impl WaitDistribution {
    /// Exponential(`lambda`), `lambda > 0`.
    pub fn exponential(lambda: f64) -> Result<Self> {
        Ok(Self::Exponential {
            lambda: error::positive("lambda", lambda)?,
        })
    }

    /// Uniform(0, `upper`), `upper > 0`.
    pub fn uniform(upper: f64) -> Result<Self> {
        Ok(Self::Uniform {
            upper: error::positive("U", upper)?,
        })
    }

    /// Erlang(`order`, `lambda`), `order >= 1`, `lambda > 0`.
    pub fn erlang(order: u32, lambda: f64) -> Result<Self> {
        Ok(Self::Erlang {
            order: error::count_at_least("r", order, 1)?,
            lambda: error::positive("lambda", lambda)?,
        })
    }

    /// The barrier mixture of Eq. 10 for `participants >= 2`, per-thread rate `lambda`.
    pub fn barrier_mixture(participants: u32, lambda: f64) -> Result<Self> {
        Ok(Self::BarrierMixture {
            participants: error::count_at_least("M", participants, 2)?,
            lambda: error::positive("lambda", lambda)?,
        })
    }

    /// The M/M/1//M mutex of Eq. 13 for `requesters >= 2`, rates `lambda`, `mu`.
    pub fn mm1m_mutex(requesters: u32, lambda: f64, mu: f64) -> Result<Self> {
        Ok(Self::Mm1mMutex {
            requesters: error::count_at_least("M", requesters, 2)?,
            lambda: error::positive("lambda", lambda)?,
            mu: error::positive("mu", mu)?,
        })
    }

    /// A recorded log2 histogram (see [`Histogram::from_log2_buckets`]).
    pub fn empirical(counts: &[u64], convention: BucketConvention) -> Result<Self> {
        Ok(Self::Empirical(Histogram::from_log2_buckets(
            counts, convention,
        )?))
    }

    /// Checks the parameters of a value built directly or deserialized.
    pub fn validate(&self) -> Result<()> {
        match self {
            Self::Exponential { lambda } => Self::exponential(*lambda).map(drop),
            Self::Uniform { upper } => Self::uniform(*upper).map(drop),
            Self::Erlang { order, lambda } => Self::erlang(*order, *lambda).map(drop),
            Self::BarrierMixture {
                participants,
                lambda,
            } => Self::barrier_mixture(*participants, *lambda).map(drop),
            Self::Mm1mMutex {
                requesters,
                lambda,
                mu,
            } => Self::mm1m_mutex(*requesters, *lambda, *mu).map(drop),
            Self::Empirical(h) => h.validate(),
        }
    }

    /// The Erlang-mixture form `(rate, weights of orders 1..)`, for the laws that have one.
    fn erlang_mixture(&self) -> Option<(f64, Vec<f64>)> {
        match *self {
            Self::Exponential { lambda } => Some((lambda, vec![1.0])),
            Self::Erlang { order, lambda } => {
                let mut w = vec![0.0; order as usize];
                w[order as usize - 1] = 1.0;
                Some((lambda, w))
            }
            Self::BarrierMixture {
                participants,
                lambda,
            } => {
                let n = participants - 1;
                Some((lambda, vec![1.0 / f64::from(n); n as usize]))
            }
            Self::Mm1mMutex {
                requesters,
                lambda,
                mu,
            } => Some((mu, mm1m_weights(requesters, lambda / mu))),
            Self::Uniform { .. } | Self::Empirical(_) => None,
        }
    }

    /// Probability density at `t`.
    pub fn pdf(&self, t: f64) -> f64 {
        if t < 0.0 {
            return 0.0;
        }
        match self {
            Self::Exponential { lambda } => lambda * (-lambda * t).exp(),
            Self::Uniform { upper } => {
                if t <= *upper {
                    1.0 / upper
                } else {
                    0.0
                }
            }
            Self::Empirical(h) => h.pdf(t),
            _ => self
                .erlang_mixture()
                .map_or(0.0, |(rate, w)| special::erlang_mixture_pdf(rate, &w, t)),
        }
    }

    /// `P(wait <= a)`.
    pub fn cdf(&self, a: f64) -> f64 {
        self.cdf_tail_pe(a).0
    }

    /// `P(wait > a)`, accurate far into the tail.
    pub fn tail(&self, a: f64) -> f64 {
        self.cdf_tail_pe(a).1
    }

    /// Partial expectation `int_0^a t f(t) dt` (the first term of Eq. 1).
    pub fn partial_expectation(&self, a: f64) -> f64 {
        self.cdf_tail_pe(a).2
    }

    /// `(cdf, tail, partial expectation)` at `a`, in one pass.
    pub fn cdf_tail_pe(&self, a: f64) -> (f64, f64, f64) {
        if a <= 0.0 {
            return (0.0, 1.0, 0.0);
        }
        if a.is_infinite() {
            return (1.0, 0.0, self.mean());
        }
        match self {
            Self::Exponential { lambda } => {
                let x = lambda * a;
                let tail = (-x).exp();
                // (1 - e^{-x}(1 + x)) / lambda, written to avoid cancellation for small x.
                let pe = (-(-x).exp_m1() - x * tail) / lambda;
                (-(-x).exp_m1(), tail, pe)
            }
            Self::Uniform { upper } => {
                let b = a.min(*upper);
                (b / upper, 1.0 - b / upper, b * b / (2.0 * upper))
            }
            Self::Empirical(h) => {
                let (cdf, pe) = h.at(a);
                (cdf, (1.0 - cdf).max(0.0), pe)
            }
            _ => self.erlang_mixture().map_or((0.0, 1.0, 0.0), |(rate, w)| {
                special::erlang_mixture_at(rate, &w, a)
            }),
        }
    }

    /// Mean wait.
    pub fn mean(&self) -> f64 {
        match self {
            Self::Exponential { lambda } => 1.0 / lambda,
            Self::Uniform { upper } => upper / 2.0,
            Self::Empirical(h) => h.mean(),
            _ => self.erlang_mixture().map_or(0.0, |(rate, w)| {
                w.iter()
                    .enumerate()
                    .map(|(i, wi)| wi * (i + 1) as f64)
                    .sum::<f64>()
                    / rate
            }),
        }
    }

    /// One random wait.
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match self {
            Self::Exponential { lambda } => rng.exponential(*lambda),
            Self::Uniform { upper } => rng.next_f64() * upper,
            Self::Empirical(h) => h.sample(rng),
            _ => match self.erlang_mixture() {
                Some((rate, w)) => {
                    let mut u = rng.next_f64();
                    let mut order = w.len();
                    for (i, wi) in w.iter().enumerate() {
                        if u < *wi {
                            order = i + 1;
                            break;
                        }
                        u -= wi;
                    }
                    (0..order).map(|_| rng.exponential(rate)).sum()
                }
                None => 0.0,
            },
        }
    }

    /// Points where the density is not smooth (`U`, histogram edges), for quadrature.
    pub(crate) fn breakpoints(&self) -> Vec<f64> {
        match self {
            Self::Uniform { upper } => vec![*upper],
            Self::Empirical(h) => h.edges().to_vec(),
            _ => Vec::new(),
        }
    }

    /// A wait `t` with `P(wait > t) < TAIL_EPSILON` (the end of the support if bounded).
    pub(crate) fn support_end(&self) -> f64 {
        match self {
            Self::Uniform { upper } => *upper,
            Self::Empirical(h) => *h.edges().last().unwrap_or(&0.0),
            Self::Exponential { lambda } => -TAIL_EPSILON.ln() / lambda,
            _ => {
                let mut t = self.mean().max(f64::MIN_POSITIVE);
                while self.tail(t) >= TAIL_EPSILON && t < f64::MAX / 4.0 {
                    t *= 2.0;
                }
                t
            }
        }
    }
}

/// Eq. 11-13 weights of Erlang orders `q = 1..M-1`, with `load = lambda / mu`:
/// `p_q ~ load^q M! / (M - q)!`, renormalized over `1..M-1`. Computed in log space.
fn mm1m_weights(requesters: u32, load: f64) -> Vec<f64> {
    let m = requesters;
    let ln_load = load.ln();
    let ln_m_fact = special::ln_factorial(m);
    let logs: Vec<f64> = (1..m)
        .map(|q| f64::from(q) * ln_load + ln_m_fact - special::ln_factorial(m - q))
        .collect();
    let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let raw: Vec<f64> = logs.iter().map(|l| (l - max).exp()).collect();
    let total: f64 = raw.iter().sum();
    raw.iter().map(|r| r / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrate::integrate_pieces;

    fn all() -> Vec<WaitDistribution> {
        vec![
            WaitDistribution::exponential(0.3).unwrap(),
            WaitDistribution::uniform(7.0).unwrap(),
            WaitDistribution::erlang(4, 2.0).unwrap(),
            WaitDistribution::barrier_mixture(64, 1.0).unwrap(),
            WaitDistribution::mm1m_mutex(16, 0.02, 0.1).unwrap(),
            WaitDistribution::mm1m_mutex(16, 1.0, 0.1).unwrap(),
            WaitDistribution::empirical(&[1, 5, 20, 40, 12, 3], BucketConvention::Log2).unwrap(),
            WaitDistribution::empirical(&[4, 0, 2, 9], BucketConvention::Log2WithZero).unwrap(),
        ]
    }

    #[test]
    fn closed_forms_match_integrated_density() {
        for d in all() {
            let end = d.support_end();
            let mut pts = vec![0.0, end];
            pts.extend(d.breakpoints());
            let mass = integrate_pieces(&|t| d.pdf(t), &pts, 64, 1e-12);
            assert!((mass - 1.0).abs() < 1e-8, "{d:?}: mass {mass}");
            let mean = integrate_pieces(&|t| t * d.pdf(t), &pts, 64, 1e-12);
            assert!(
                (mean - d.mean()).abs() < 1e-7 * d.mean(),
                "{d:?}: {mean} vs {}",
                d.mean()
            );
            for frac in [0.1, 0.5, 1.0, 2.0] {
                let a = frac * d.mean();
                let mut p = vec![0.0, a];
                p.extend(d.breakpoints().into_iter().filter(|&x| x < a));
                let cdf = integrate_pieces(&|t| d.pdf(t), &p, 64, 1e-13);
                let pe = integrate_pieces(&|t| t * d.pdf(t), &p, 64, 1e-13);
                let (c, tail, e) = d.cdf_tail_pe(a);
                assert!((cdf - c).abs() < 1e-8, "{d:?} cdf({a}) {cdf} vs {c}");
                assert!((c + tail - 1.0).abs() < 1e-12);
                assert!(
                    (pe - e).abs() < 1e-8 * d.mean().max(1.0),
                    "{d:?} pe({a}) {pe} vs {e}"
                );
            }
        }
    }

    #[test]
    fn sample_means_match() {
        let mut rng = Rng::new(42);
        for d in all() {
            let n = 40_000;
            let m: f64 = (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / f64::from(n);
            assert!(
                (m - d.mean()).abs() < 0.03 * d.mean(),
                "{d:?}: {m} vs {}",
                d.mean()
            );
        }
    }

    #[test]
    fn barrier_mean_is_paper_value() {
        // Appendix A: expected barrier wait (N + 1) / (2 lambda).
        let d = WaitDistribution::barrier_mixture(64, 0.5).unwrap();
        assert!((d.mean() - 64.0).abs() < 1e-9);
    }

    #[test]
    fn mm1m_limits() {
        // Low load: almost all mass on q = 1 (exponential with rate mu).
        let low = WaitDistribution::mm1m_mutex(16, 1e-6, 0.1).unwrap();
        assert!((low.mean() - 10.0).abs() < 1e-2);
        // High load: almost all mass on q = M - 1.
        let high = WaitDistribution::mm1m_mutex(16, 1e3, 0.1).unwrap();
        assert!((high.mean() - 150.0).abs() < 0.1);
    }

    #[test]
    fn constructors_reject_bad_input() {
        assert!(WaitDistribution::uniform(-1.0).is_err());
        assert!(WaitDistribution::erlang(0, 1.0).is_err());
        assert!(WaitDistribution::barrier_mixture(1, 1.0).is_err());
        assert!(WaitDistribution::mm1m_mutex(16, 1.0, f64::NAN).is_err());
        assert!(WaitDistribution::empirical(&[], BucketConvention::Log2).is_err());
        assert!(WaitDistribution::empirical(&[1; 65], BucketConvention::Log2).is_err());
        assert!(WaitDistribution::Exponential { lambda: -1.0 }
            .validate()
            .is_err());
        assert!(Histogram::from_edges(vec![0.0, 1.0], vec![1.0, 2.0]).is_err());
        assert!(Histogram::from_edges(vec![1.0, 0.5], vec![1.0]).is_err());
    }
}
