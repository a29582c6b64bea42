//! Pure statistics for repeated measurements: trimming, median, mean, 95%
//! confidence intervals of the median and of the mean, the "noisy" flag.
//!
//! Every experiment repeats a measurement in rounds, then
//! 1. drops the first and last [`TRIM_FRACTION`] of the rounds in time order
//!    ([`trim_rounds`]): warm-up and cool-down, as seed 004 does;
//! 2. summarizes the rest ([`summarize`]): median, mean, sample standard
//!    deviation, min, max, the 95% confidence interval of the median (order
//!    statistics) and the 95% confidence interval of the mean (Student's t);
//! 3. flags the row as noisy when the *median's* interval is wider than
//!    [`NOISY_CI_FRACTION`] of the median ([`Summary::is_noisy`]).
//!
//! Tables report medians, so the interval shown beside a median and the one
//! that decides the noisy flag is the median's. It is distribution-free: the
//! interval between the order statistics of ranks `l` and `n + 1 - l`
//! covers the population median with probability `1 - 2 P(X < l)`, `X ~
//! Binomial(n, 1/2)`, whatever the law of the samples; a heavy latency tail
//! (a few preempted rounds) widens the mean's interval but not this one. The
//! mean's interval is kept for seed 004's "mean and 95% CI" and in
//! `results.json`.
//!
//! # What comes from `statrs` and what is written here
//! The two quantiles, Student's t for the mean's interval and the
//! binomial CDF for the median's ranks, come from `statrs`
//! ([`statrs::distribution::StudentsT`], [`statrs::distribution::Binomial`]),
//! which computes them to machine precision through the regularized
//! incomplete beta function; this replaces a 4-decimal t table and a
//! Cornish-Fisher expansion. Kept here, because each is a few lines that
//! `statrs` does not provide in this shape: the time-order trimming, the
//! one-pass summary over a sorted copy (statrs' `Data` would need a second
//! copy and has no interval), and the search for the rank `l`.
//!
//! Nothing here reads a clock or allocates more than one sorted copy of the
//! samples; every function is deterministic and tested below against values
//! computed by hand and, for the median's interval, against its coverage on
//! known distributions (seeded).
//!
//! # References
//! - Poenaru, *Explicit OS support for hardware threads*, ETH Zürich 2017
//!   (seed 004), section 4.1: "we discarded the first and last approx. 10%
//!   observations, in order to eliminate the warm-up and cool-down phases",
//!   then "the mean and the 95% CI" of the rest.
//! - Conover, *Practical Nonparametric Statistics*, 3rd ed., Wiley 1999,
//!   section 3.2 (the confidence interval for a quantile): the median's
//!   interval from order statistics and the binomial distribution.
//! - Student (W. S. Gosset), *The probable error of a mean*, Biometrika 6(1),
//!   1908: the t distribution used for the interval of a mean.
//! - The 20% noisy threshold is this crate's measurement rule, applied to
//!   the median's interval, not the mean's (the median is what the tables
//!   report).

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal, StudentsT};

/// Fraction of rounds dropped at *each* end by [`trim_rounds`]: 10% (seed 004,
/// section 4.1, "the first and last approx. 10% observations").
pub const TRIM_FRACTION: f64 = 0.1;

/// A [`Summary`] is noisy when the 95% CI of its median is wider than this
/// fraction of the median (such a row is flagged in the tables).
pub const NOISY_CI_FRACTION: f64 = 0.2;

/// Confidence level of every interval here.
pub const CONFIDENCE: f64 = 0.95;

/// Drops the first and last `fraction` of `samples`, which must be in the
/// order they were measured (round 0 first).
///
/// Drops `floor(n * fraction)` samples at each end, as seed 004 section 4.1
/// does to remove warm-up and cool-down rounds. With `fraction =
/// TRIM_FRACTION`, 10 rounds keep rounds 1..=8 and fewer than 10 rounds are
/// kept whole.
///
/// Odd input never panics and never empties a non-empty slice: a negative or
/// NaN `fraction` trims nothing, and a `fraction` of 0.5 or more still keeps
/// the middle sample (two for an even count).
///
/// # Examples
/// ```
/// use waitwise_bench::stats::{trim_rounds, TRIM_FRACTION};
/// let rounds: Vec<f64> = (1..=10).map(f64::from).collect();
/// assert_eq!(trim_rounds(&rounds, TRIM_FRACTION), &rounds[1..9]);
/// assert_eq!(trim_rounds(&rounds[..5], TRIM_FRACTION).len(), 5);
/// ```
pub fn trim_rounds(samples: &[f64], fraction: f64) -> &[f64] {
    let n = samples.len();
    if n == 0 || fraction.is_nan() || fraction <= 0.0 {
        return samples;
    }
    // The tiny epsilon keeps `n * fraction` that is an integer on paper (for
    // instance 30 * 0.1) from flooring one below it.
    let wanted = (n as f64 * fraction + 1e-9).floor();
    let max_per_end = (n - 1) / 2;
    let per_end = if wanted >= max_per_end as f64 {
        max_per_end
    } else {
        wanted as usize
    };
    &samples[per_end..n - per_end]
}

/// Descriptive statistics of one set of samples, in the samples' own unit
/// (nanoseconds, cycles, seconds, ...): the caller names the unit.
///
/// Produced by [`summarize`]; serialized into `results.json`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples summarized (after any trimming).
    pub n: usize,
    /// Median: the middle sample, or the mean of the two middle ones when `n`
    /// is even.
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor `n - 1`); 0 when `n == 1`.
    pub stddev: f64,
    /// Lower end of the 95% confidence interval of the *mean*:
    /// `mean - t_{0.975, n-1} * stddev / sqrt(n)`. Equals `mean` when `n == 1`.
    pub ci95_low: f64,
    /// Upper end of the 95% confidence interval of the *mean*:
    /// `mean + t_{0.975, n-1} * stddev / sqrt(n)`. Equals `mean` when `n == 1`.
    pub ci95_high: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Lower end of the distribution-free 95% confidence interval of the
    /// *median*: the order statistic of rank `l` (1-based), the largest rank
    /// with `P(X < l) <= 2.5%` for `X ~ Binomial(n, 1/2)` (see
    /// [`median_ci_ranks`]); the smallest sample when `n < 6`, where no rank
    /// reaches 95% (see [`Summary::median_ci_coverage`]).
    pub median_ci95_low: f64,
    /// Upper end of that interval: the order statistic of rank `n + 1 - l`.
    pub median_ci95_high: f64,
}

impl Summary {
    /// Width of the 95% confidence interval of the mean, `ci95_high -
    /// ci95_low`.
    pub fn ci95_width(&self) -> f64 {
        self.ci95_high - self.ci95_low
    }

    /// Width of the 95% confidence interval of the median,
    /// `median_ci95_high - median_ci95_low`.
    pub fn median_ci95_width(&self) -> f64 {
        self.median_ci95_high - self.median_ci95_low
    }

    /// Half the width of the median's 95% interval: the one number a table
    /// shows beside a median (the interval need not be symmetric around the
    /// median; its ends are in `results.json`).
    pub fn median_ci95_half_width(&self) -> f64 {
        self.median_ci95_width() / 2.0
    }

    /// The probability that the median's interval covers the population
    /// median: at least [`CONFIDENCE`] from `n = 6` on; below it for fewer
    /// samples, where the interval is the whole range `[min, max]` and
    /// covers with probability `1 - 2^(1-n)` (0 for `n = 1`).
    pub fn median_ci_coverage(&self) -> f64 {
        median_ci_ranks(self.n).map_or(0.0, |(_, _, coverage)| coverage)
    }

    /// The median CI's width relative to the median, `median_ci95_width /
    /// |median|`.
    ///
    /// Infinite when the median is 0 and the interval is not a point; 0 when
    /// both are 0.
    pub fn relative_ci_width(&self) -> f64 {
        let width = self.median_ci95_width();
        if width == 0.0 {
            0.0
        } else if self.median == 0.0 {
            f64::INFINITY
        } else {
            width / self.median.abs()
        }
    }

    /// Whether this row should be flagged as noisy in tables and reports.
    ///
    /// True when the 95% CI of the median is wider than
    /// [`NOISY_CI_FRACTION`] of the median (the absolute median, so that
    /// overhead-corrected values slightly below 0 still behave), and also
    /// when `n < 2`: a single sample gives no estimate of the spread at all,
    /// so its (zero-width) interval must not pass for a tight one. A heavy
    /// tail alone does not make a row noisy: the median's interval does not
    /// see how far the slowest rounds lie.
    ///
    /// # Examples
    /// ```
    /// use waitwise_bench::stats::summarize;
    /// assert!(!summarize(&[100.0, 102.0, 98.0, 100.0]).unwrap().is_noisy());
    /// assert!(summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap().is_noisy());
    /// assert!(summarize(&[42.0]).unwrap().is_noisy());
    /// // 100 rounds near 100 ns and ten preempted ones at 50 us: the
    /// // median's interval stays narrow.
    /// let mut rounds: Vec<f64> = (0..100).map(|i| 95.0 + f64::from(i % 10)).collect();
    /// rounds.extend([50_000.0; 10]);
    /// assert!(!summarize(&rounds).unwrap().is_noisy());
    /// ```
    pub fn is_noisy(&self) -> bool {
        self.n < 2 || self.relative_ci_width() > NOISY_CI_FRACTION
    }

    /// The same summary with every value multiplied by `factor`, for example
    /// cycles to nanoseconds with `factor = 1 / GHz`.
    ///
    /// All statistics here are equivariant under scaling, so this equals
    /// summarizing the scaled samples (up to rounding). A negative factor swaps
    /// the ends of the interval and of the range; the standard deviation
    /// scales by `|factor|`.
    pub fn scaled(&self, factor: f64) -> Summary {
        let (ci95_low, ci95_high) = ordered(self.ci95_low * factor, self.ci95_high * factor);
        let (min, max) = ordered(self.min * factor, self.max * factor);
        let (median_ci95_low, median_ci95_high) = ordered(
            self.median_ci95_low * factor,
            self.median_ci95_high * factor,
        );
        Summary {
            n: self.n,
            median: self.median * factor,
            mean: self.mean * factor,
            stddev: self.stddev * factor.abs(),
            ci95_low,
            ci95_high,
            min,
            max,
            median_ci95_low,
            median_ci95_high,
        }
    }

    /// Whether the two medians' 95% intervals are disjoint (the medians
    /// differ beyond sampling noise).
    pub fn median_differs_from(&self, other: &Summary) -> bool {
        self.median_ci95_high < other.median_ci95_low
            || other.median_ci95_high < self.median_ci95_low
    }
}

/// `(a, b)` in ascending order.
fn ordered(a: f64, b: f64) -> (f64, f64) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// The 1-based ranks `(l, n + 1 - l)` of the order statistics that bound the
/// distribution-free 95% confidence interval of the median of `n` samples,
/// and the interval's exact coverage `1 - 2 P(X < l)`, `X ~ Binomial(n,
/// 1/2)`.
///
/// `l` is the largest rank with `P(X < l) <= 2.5%`, so the coverage is the
/// smallest that is still at least 95%. Below `n = 6` no rank qualifies
/// (`P(X < 1) = 2^-n > 2.5%`) and the ranks are `(1, n)`, the whole range,
/// with its coverage `1 - 2^(1-n)` under 95%. `None` for `n = 0`.
///
/// # Examples
/// ```
/// use waitwise_bench::stats::median_ci_ranks;
/// // Conover's table: n = 100 gives the 40th and 61st order statistics.
/// let (l, u, coverage) = median_ci_ranks(100).unwrap();
/// assert_eq!((l, u), (40, 61));
/// assert!(coverage >= 0.95 && coverage < 0.97);
/// assert_eq!(median_ci_ranks(3).unwrap().0, 1);
/// ```
pub fn median_ci_ranks(n: usize) -> Option<(usize, usize, f64)> {
    if n == 0 {
        return None;
    }
    let tail = (1.0 - CONFIDENCE) / 2.0;
    // P(X <= k), X ~ Binomial(n, 1/2); exact for every n statrs accepts.
    let cdf = |k: usize| -> f64 { Binomial::new(0.5, n as u64).map_or(1.0, |b| b.cdf(k as u64)) };
    // Largest l in 1..=ceil(n/2) with P(X <= l - 1) <= tail: the CDF grows
    // with l, so bisect on it.
    let (mut lo, mut hi) = (0usize, n.div_ceil(2));
    // Invariant: rank lo qualifies (0 stands for "none"), rank hi + 1 does not.
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if cdf(mid - 1) <= tail {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let l = lo.max(1);
    // lo == 0 only for n < 6 (from n = 6 on, P(X < 1) = 2^-n < 2.5%).
    let outside = if lo == 0 {
        0.5f64.powi(n.min(64) as i32)
    } else {
        cdf(l - 1)
    };
    Some((l, n + 1 - l, (1.0 - 2.0 * outside).max(0.0)))
}

/// Summarizes `samples` (in any order): median, mean, standard deviation,
/// min, max, the 95% CI of the median by order statistics and the 95% CI of
/// the mean by Student's t.
///
/// Returns `None` when `samples` is empty or holds a NaN or an infinity: a
/// summary of such data would be meaningless, and silently dropping values
/// would hide a measurement bug. Trim first with [`trim_rounds`], or call
/// [`summarize_trimmed`].
///
/// # Examples
/// ```
/// use waitwise_bench::stats::summarize;
/// let s = summarize(&[4.0, 1.0, 3.0, 2.0]).unwrap();
/// assert_eq!(s.n, 4);
/// assert_eq!(s.median, 2.5);
/// assert_eq!(s.mean, 2.5);
/// assert_eq!((s.min, s.max), (1.0, 4.0));
/// assert!(summarize(&[]).is_none());
/// ```
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = samples.len();
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let stddev = if n < 2 {
        0.0
    } else {
        let sum_sq: f64 = sorted.iter().map(|x| (x - mean) * (x - mean)).sum();
        (sum_sq / (n - 1) as f64).sqrt()
    };
    let half_width = if n < 2 {
        0.0
    } else {
        t_975(n - 1) * stddev / (n as f64).sqrt()
    };
    let (l, u, _) = median_ci_ranks(n)?;
    Some(Summary {
        n,
        median,
        mean,
        stddev,
        ci95_low: mean - half_width,
        ci95_high: mean + half_width,
        min: sorted[0],
        max: sorted[n - 1],
        median_ci95_low: sorted[l - 1],
        median_ci95_high: sorted[u - 1],
    })
}

/// [`summarize`] of [`trim_rounds`]`(samples, TRIM_FRACTION)`: the standard
/// treatment of one experiment's rounds, given in time order.
pub fn summarize_trimmed(samples: &[f64]) -> Option<Summary> {
    summarize(trim_rounds(samples, TRIM_FRACTION))
}

/// Degrees of freedom above which [`t_975`] returns the normal quantile:
/// there t_{0.975, df} is within 2e-5 of z_{0.975} (a relative 1e-5), and
/// statrs' t inverse CDF stops converging in reasonable time for df near
/// 1e8.
const T_AS_NORMAL_DF: usize = 100_000;

/// Two-sided 95% critical value t_{0.975, df} of Student's t distribution,
/// from `statrs` (inverse CDF); the normal quantile above
/// `T_AS_NORMAL_DF` degrees of freedom. `df = 0` (no spread estimate)
/// returns infinity.
pub fn t_975(df: usize) -> f64 {
    let p = 0.5 + CONFIDENCE / 2.0;
    match df {
        0 => f64::INFINITY,
        1..=T_AS_NORMAL_DF => {
            StudentsT::new(0.0, 1.0, df as f64).map_or(f64::INFINITY, |t| t.inverse_cdf(p))
        }
        _ => Normal::standard().inverse_cdf(p),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn median_interval_by_order_statistics() {
        // n = 100: the textbook interval runs from the 40th to the 61st
        // ordered sample (1-based): ranks 100/2 -+ 1.96 * 10 / 2.
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = summarize(&v).unwrap();
        assert_eq!((s.median_ci95_low, s.median_ci95_high), (40.0, 61.0));
        // Tiny samples: the whole range.
        let s = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median_ci95_low, s.median_ci95_high), (1.0, 3.0));
        let s = summarize(&[7.0]).unwrap();
        assert_eq!((s.median_ci95_low, s.median_ci95_high), (7.0, 7.0));
        // Scaling carries the interval along (and a negative factor flips it).
        let t = summarize(&v).unwrap().scaled(-2.0);
        assert_eq!((t.median_ci95_low, t.median_ci95_high), (-122.0, -80.0));
        let a = summarize(&(1..=100).map(f64::from).collect::<Vec<_>>()).unwrap();
        let b = summarize(&(1..=100).map(|x| f64::from(x) + 30.0).collect::<Vec<_>>()).unwrap();
        assert!(a.median_differs_from(&b) && b.median_differs_from(&a));
        assert!(!a.median_differs_from(&a));
    }

    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn trim_drops_ten_percent_each_end_in_time_order() {
        let rounds: Vec<f64> = (1..=20).map(f64::from).collect();
        // floor(20 * 0.1) = 2 at each end: rounds 3..=18 stay.
        assert_eq!(trim_rounds(&rounds, TRIM_FRACTION), &rounds[2..18]);
        // Not sorted: time order is kept, whatever the values.
        let unsorted = [9.0, 1.0, 5.0, 7.0, 3.0, 8.0, 2.0, 6.0, 4.0, 0.0];
        assert_eq!(
            trim_rounds(&unsorted, TRIM_FRACTION),
            &[1.0, 5.0, 7.0, 3.0, 8.0, 2.0, 6.0, 4.0]
        );
        // Seed 004 ran 240 iterations: 24 are dropped at each end here.
        let seed = vec![0.0; 240];
        assert_eq!(trim_rounds(&seed, TRIM_FRACTION).len(), 192);
        // n * 0.1 lands on whole numbers here: 3 and 7 per end.
        assert_eq!(trim_rounds(&[0.0; 30], TRIM_FRACTION).len(), 24);
        assert_eq!(trim_rounds(&[0.0; 70], TRIM_FRACTION).len(), 56);
    }

    #[test]
    fn trim_of_short_or_odd_input_keeps_something() {
        assert!(trim_rounds(&[], TRIM_FRACTION).is_empty());
        assert_eq!(trim_rounds(&[1.0; 9], TRIM_FRACTION).len(), 9);
        assert_eq!(trim_rounds(&[1.0; 9], 0.0).len(), 9);
        assert_eq!(trim_rounds(&[1.0; 9], -1.0).len(), 9);
        assert_eq!(trim_rounds(&[1.0; 9], f64::NAN).len(), 9);
        assert_eq!(trim_rounds(&[1.0, 2.0, 3.0], 0.5), &[2.0]);
        assert_eq!(trim_rounds(&[1.0, 2.0, 3.0, 4.0], 0.9), &[2.0, 3.0]);
        assert_eq!(trim_rounds(&[1.0, 2.0], f64::INFINITY), &[1.0, 2.0]);
        assert_eq!(trim_rounds(&[1.0], 0.4), &[1.0]);
    }

    #[test]
    fn summary_of_one_to_five() {
        // mean 3; deviations -2..2, sum of squares 10, variance 10/4 = 2.5;
        // s = sqrt(2.5) = 1.5811388; s/sqrt(5) = 0.7071068;
        // t(4) = 2.7764, half width = 1.9632; CI = [1.0368, 4.9632].
        let s = summarize(&[5.0, 3.0, 1.0, 4.0, 2.0]).unwrap();
        assert_eq!(s.n, 5);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 3.0);
        assert!(close(s.stddev, 1.581_138_8, 1e-6));
        assert!(close(s.ci95_low, 1.036_76, 1e-4));
        assert!(close(s.ci95_high, 4.963_24, 1e-4));
        assert_eq!((s.min, s.max), (1.0, 5.0));
        // n = 5 < 6: the median's interval is the range [1, 5], covering
        // with probability 1 - 2^-4; width 4 > 0.2 * 3.
        assert_eq!((s.median_ci95_low, s.median_ci95_high), (1.0, 5.0));
        assert!(close(s.median_ci_coverage(), 0.9375, 1e-12));
        assert!(s.is_noisy());
    }

    #[test]
    fn summary_of_a_tight_even_set() {
        // mean 100, median (100 + 100) / 2 = 100; squares 0 + 4 + 4 + 0 = 8,
        // variance 8/3, s = 1.6329932; s/2 = 0.8164966; t(3) = 3.1824,
        // half width 2.5984; CI = [97.4016, 102.5984]. The median's
        // interval is the range [98, 102]: width 4 < 20.
        let s = summarize(&[100.0, 102.0, 98.0, 100.0]).unwrap();
        assert_eq!(s.median, 100.0);
        assert_eq!(s.mean, 100.0);
        assert!(close(s.stddev, 1.632_993_2, 1e-6));
        assert!(close(s.ci95_low, 97.4016, 1e-3));
        assert!(close(s.ci95_high, 102.5984, 1e-3));
        assert!(!s.is_noisy());
        assert!(close(s.relative_ci_width(), 0.04, 1e-12));
    }

    #[test]
    fn median_of_even_count_is_mean_of_middle_two() {
        assert_eq!(summarize(&[10.0, 1.0, 7.0, 3.0]).unwrap().median, 5.0);
        assert_eq!(summarize(&[2.0, 1.0]).unwrap().median, 1.5);
    }

    #[test]
    fn single_sample_has_a_point_interval_and_is_noisy() {
        let s = summarize(&[7.5]).unwrap();
        assert_eq!(s.n, 1);
        assert_eq!((s.median, s.mean, s.stddev), (7.5, 7.5, 0.0));
        assert_eq!((s.ci95_low, s.ci95_high), (7.5, 7.5));
        assert!(s.is_noisy());
    }

    #[test]
    fn constant_samples_are_not_noisy_even_at_zero() {
        let s = summarize(&[10.0; 4]).unwrap();
        assert_eq!((s.ci95_low, s.ci95_high, s.stddev), (10.0, 10.0, 0.0));
        assert!(!s.is_noisy());
        let zero = summarize(&[0.0; 3]).unwrap();
        assert!(!zero.is_noisy());
        // A zero median with any spread is infinitely wide relative to it.
        let around_zero = summarize(&[-1.0, 0.0, 1.0]).unwrap();
        assert_eq!(around_zero.relative_ci_width(), f64::INFINITY);
        assert!(around_zero.is_noisy());
    }

    #[test]
    fn empty_or_non_finite_input_has_no_summary() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
        assert!(summarize(&[f64::INFINITY]).is_none());
        assert!(summarize_trimmed(&[]).is_none());
    }

    #[test]
    fn summarize_trimmed_drops_warm_up_and_cool_down() {
        // Rounds 1 and 10 are outliers; trimming 1 per end leaves 2..=9,
        // whose mean and median are 5.5.
        let mut rounds: Vec<f64> = (1..=10).map(f64::from).collect();
        rounds[0] = 1000.0;
        rounds[9] = -1000.0;
        let s = summarize_trimmed(&rounds).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!((s.mean, s.median, s.min, s.max), (5.5, 5.5, 2.0, 9.0));
    }

    #[test]
    fn t_quantiles_match_reference_values() {
        assert_eq!(t_975(0), f64::INFINITY);
        // NIST/SEMATECH e-Handbook 1.3.6.7.2, 4 decimals.
        for (df, t) in [
            (1, 12.7062),
            (4, 2.7764),
            (30, 2.0423),
            (31, 2.0395),
            (40, 2.0211),
            (60, 2.0003),
            (120, 1.9799),
            (1000, 1.9623),
        ] {
            assert!(close(t_975(df), t, 1e-4), "df {df}: {} vs {t}", t_975(df));
        }
        // Tends to the normal quantile z_0.975, continuously.
        assert!(close(t_975(T_AS_NORMAL_DF), 1.959_964, 2e-5));
        assert!(close(t_975(T_AS_NORMAL_DF + 1), 1.959_964, 1e-6));
        assert!(close(t_975(usize::MAX), 1.959_964, 1e-6));
    }

    #[test]
    fn scaling_matches_summarizing_scaled_samples() {
        let samples = [3.0, 9.0, 4.0, 7.0, 5.0, 6.0];
        let scaled_samples: Vec<f64> = samples.iter().map(|x| x * 0.5).collect();
        let a = summarize(&samples).unwrap().scaled(0.5);
        let b = summarize(&scaled_samples).unwrap();
        for (x, y) in [
            (a.median, b.median),
            (a.mean, b.mean),
            (a.stddev, b.stddev),
            (a.ci95_low, b.ci95_low),
            (a.ci95_high, b.ci95_high),
            (a.min, b.min),
            (a.max, b.max),
        ] {
            assert!(close(x, y, 1e-12));
        }
        let neg = summarize(&samples).unwrap().scaled(-1.0);
        assert!(neg.ci95_low <= neg.ci95_high && neg.min <= neg.max);
        assert_eq!((neg.min, neg.max), (-9.0, -3.0));
    }

    #[test]
    fn summary_round_trips_through_json() {
        let s = summarize(&[1.0, 2.0, 4.0]).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        for key in [
            "\"n\"",
            "\"median\"",
            "\"ci95_low\"",
            "\"ci95_high\"",
            "\"stddev\"",
        ] {
            assert!(json.contains(key), "{json}");
        }
        // serde_json writes the shortest round-trip form, but its default
        // parser may miss the last bit (exact parsing is its opt-in
        // `float_roundtrip` feature): compare to 1e-15 relative.
        let back: Summary = serde_json::from_str(&json).unwrap();
        assert_eq!(back.n, s.n);
        for (a, b) in [
            (back.mean, s.mean),
            (back.stddev, s.stddev),
            (back.ci95_low, s.ci95_low),
        ] {
            assert!(close(a, b, 1e-15 * b.abs()), "{a} vs {b}");
        }
    }

    /// SplitMix64: a small seeded generator, so the coverage tests draw the
    /// same samples on every run.
    struct SplitMix64(u64);

    impl SplitMix64 {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// Uniform in (0, 1).
        fn unit(&mut self) -> f64 {
            ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
    }

    /// The share of `trials` samples of size `n` drawn by `draw` whose
    /// median interval covers `true_median`.
    fn median_coverage(
        seed: u64,
        n: usize,
        trials: usize,
        true_median: f64,
        mut draw: impl FnMut(&mut SplitMix64) -> f64,
    ) -> f64 {
        let mut rng = SplitMix64(seed);
        let covered = (0..trials)
            .filter(|_| {
                let v: Vec<f64> = (0..n).map(|_| draw(&mut rng)).collect();
                let s = summarize(&v).unwrap();
                s.median_ci95_low <= true_median && true_median <= s.median_ci95_high
            })
            .count();
        covered as f64 / trials as f64
    }

    #[test]
    fn median_ci_ranks_match_the_binomial_table() {
        assert_eq!(median_ci_ranks(0), None);
        // Below six samples no rank reaches 95%: the range, and its coverage.
        assert_eq!(median_ci_ranks(1), Some((1, 1, 0.0)));
        let (l, u, c) = median_ci_ranks(5).unwrap();
        assert_eq!((l, u), (1, 5));
        assert!(close(c, 1.0 - 2.0 / 32.0, 1e-12));
        // n = 6: P(X = 0) = 1/64 <= 2.5%, so the range with 96.9%.
        let (l, u, c) = median_ci_ranks(6).unwrap();
        assert_eq!((l, u), (1, 6));
        assert!(close(c, 1.0 - 2.0 / 64.0, 1e-12));
        // Conover's Table A3 / the binomial CDF: n = 10 -> ranks 2 and 9
        // (97.85%), n = 20 -> 6 and 15 (95.86%), n = 100 -> 40 and 61.
        for (n, l, u, c) in [
            (10, 2, 9, 0.978_516),
            (20, 6, 15, 0.958_611),
            (100, 40, 61, 0.964_800),
        ] {
            let (rl, ru, rc) = median_ci_ranks(n).unwrap();
            assert_eq!((rl, ru), (l, u), "n {n}");
            assert!(close(rc, c, 1e-5), "n {n}: {rc}");
        }
        // Always at least 95% from n = 6, and the ranks stay in range.
        for n in 6..400 {
            let (l, u, c) = median_ci_ranks(n).unwrap();
            assert!(c >= CONFIDENCE && l >= 1 && l <= u && u <= n, "n {n}");
        }
        // Large n (a wake-up matrix's rounds) stays fast and sensible.
        let (l, u, c) = median_ci_ranks(1_000_000).unwrap();
        assert!(l > 499_000 && u < 501_000 && c >= CONFIDENCE);
    }

    #[test]
    fn median_ci_covers_the_true_median_of_known_distributions() {
        let trials = 2000;
        for n in [8, 20, 51, 200] {
            let exact = median_ci_ranks(n).unwrap().2;
            // Uniform(0, 1): median 1/2.
            let uniform = median_coverage(1, n, trials, 0.5, |r| r.unit());
            // Exponential(1): median ln 2.
            let exponential =
                median_coverage(2, n, trials, std::f64::consts::LN_2, |r| -r.unit().ln());
            // Heavy tail: Pareto with shape 1 (no mean at all), median 2.
            let pareto = median_coverage(3, n, trials, 2.0, |r| 1.0 / r.unit());
            for (name, got) in [
                ("uniform", uniform),
                ("exponential", exponential),
                ("pareto", pareto),
            ] {
                // The binomial coverage is exact for continuous laws: the
                // share over 2000 trials lies within about 3 standard
                // errors (3 * sqrt(0.05 * 0.95 / 2000) = 0.015).
                assert!(
                    (got - exact).abs() < 0.02,
                    "{name}, n {n}: covered {got}, expected {exact}"
                );
            }
        }
    }

    #[test]
    fn a_heavy_tail_widens_the_means_interval_but_not_the_medians() {
        // 200 rounds around 100 ns, 20 of them preempted (50 us): the
        // median's interval stays within a few ns, the mean's spans
        // thousands, so only the old rule would have flagged the row.
        let mut rng = SplitMix64(7);
        let rounds: Vec<f64> = (0..200)
            .map(|i| {
                if i % 10 == 0 {
                    50_000.0
                } else {
                    95.0 + 10.0 * rng.unit()
                }
            })
            .collect();
        let s = summarize(&rounds).unwrap();
        assert!(s.median_ci95_width() < 5.0, "{s:?}");
        assert!(s.ci95_width() > NOISY_CI_FRACTION * s.median);
        assert!(!s.is_noisy());
        // A median that moves between rounds is still flagged.
        let spread: Vec<f64> = (0..40).map(|_| 50.0 + 100.0 * rng.unit()).collect();
        assert!(summarize(&spread).unwrap().is_noisy());
    }
}
