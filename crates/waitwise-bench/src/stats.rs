//! Pure statistics for repeated measurements: trimming, median, mean, 95% CI.
//!
//! Every experiment repeats a measurement in rounds, then
//! 1. drops the first and last [`TRIM_FRACTION`] of the rounds in time order
//!    ([`trim_rounds`]): warm-up and cool-down, as seed 004 does;
//! 2. summarizes the rest ([`summarize`]): median, mean, sample standard
//!    deviation, min, max and the 95% confidence interval of the mean;
//! 3. flags the row as noisy when that interval is wider than
//!    [`NOISY_CI_FRACTION`] of the median ([`Summary::is_noisy`]).
//!
//! Nothing here reads a clock or allocates more than one sorted copy of the
//! samples; every function is deterministic and tested below against values
//! computed by hand.
//!
//! # References
//! - Poenaru, *Explicit OS support for hardware threads*, ETH Zürich 2017
//!   (seed 004), section 4.1: "we discarded the first and last approx. 10%
//!   observations, in order to eliminate the warm-up and cool-down phases",
//!   then "the mean and the 95% CI" of the rest.
//! - Student (W. S. Gosset), *The probable error of a mean*, Biometrika 6(1),
//!   1908: the t distribution used for the interval of a mean of few samples.
//! - NIST/SEMATECH e-Handbook of Statistical Methods, section 1.3.6.7.2,
//!   "Critical values of the Student's t distribution": the source of
//!   [`T_975`] (checked to 4 decimals by numerical integration of the t
//!   density).
//! - Abramowitz & Stegun, *Handbook of Mathematical Functions*, 26.7.5: the
//!   Cornish-Fisher expansion of the t quantile in powers of 1/df, used above
//!   df = 30 (error below 1e-4 there).
//! - Issue 4 ("Measurement discipline"): the 20% noisy threshold.

use serde::{Deserialize, Serialize};

/// Fraction of rounds dropped at *each* end by [`trim_rounds`]: 10% (seed 004,
/// section 4.1, "the first and last approx. 10% observations").
pub const TRIM_FRACTION: f64 = 0.1;

/// A [`Summary`] is noisy when its 95% CI is wider than this fraction of its
/// median (issue 4: "flag rows whose CI is wider than 20% of the median").
pub const NOISY_CI_FRACTION: f64 = 0.2;

/// Standard normal quantile z_{0.975}: the limit of t_{0.975, df} as df grows.
const Z_975: f64 = 1.959_963_984_540_054;

/// Two-sided 95% critical values t_{0.975, df} of Student's t, for df = 1..=30
/// (index `df - 1`). NIST/SEMATECH e-Handbook 1.3.6.7.2, 4 decimals.
pub const T_975: [f64; 30] = [
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, // 1-10
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, // 11-20
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423, // 21-30
];

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
    /// Lower end of the 95% confidence interval of the mean:
    /// `mean - t_{0.975, n-1} * stddev / sqrt(n)`. Equals `mean` when `n == 1`.
    pub ci95_low: f64,
    /// Upper end of the 95% confidence interval of the mean:
    /// `mean + t_{0.975, n-1} * stddev / sqrt(n)`. Equals `mean` when `n == 1`.
    pub ci95_high: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Lower end of a distribution-free 95% confidence interval of the
    /// median: the sample of rank `n/2 - 1.96 sqrt(n)/2` (1-based, rounded
    /// down; order statistics,
    /// normal approximation to the binomial; the smallest sample for small
    /// `n`). Unlike the mean's interval it ignores how far outliers lie, so
    /// it is the one to compare rows by when a few rounds were preempted.
    pub median_ci95_low: f64,
    /// Upper end of that interval: the sample of rank `1 + n/2 + 1.96
    /// sqrt(n)/2` (rounded up; the largest sample for small `n`).
    pub median_ci95_high: f64,
}

impl Summary {
    /// Width of the 95% confidence interval, `ci95_high - ci95_low`.
    pub fn ci95_width(&self) -> f64 {
        self.ci95_high - self.ci95_low
    }

    /// The CI width relative to the median, `ci95_width / |median|`.
    ///
    /// Infinite when the median is 0 and the interval is not a point; 0 when
    /// both are 0.
    pub fn relative_ci_width(&self) -> f64 {
        let width = self.ci95_width();
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
    /// True when the 95% CI is wider than [`NOISY_CI_FRACTION`] of the median
    /// (the absolute median, so that overhead-corrected values slightly below 0
    /// still behave), and also when `n < 2`: a single sample gives no estimate
    /// of the spread at all, so its (zero-width) interval must not pass for a
    /// tight one.
    ///
    /// # Examples
    /// ```
    /// use waitwise_bench::stats::summarize;
    /// assert!(!summarize(&[100.0, 102.0, 98.0, 100.0]).unwrap().is_noisy());
    /// assert!(summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap().is_noisy());
    /// assert!(summarize(&[42.0]).unwrap().is_noisy());
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

/// Summarizes `samples` (in any order): median, mean, standard deviation,
/// min, max and the 95% CI of the mean by Student's t.
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
    // 1-based ranks of the median's interval: j = n/2 - z sqrt(n)/2 and
    // k = 1 + n/2 + z sqrt(n)/2, rounded outwards; to 0-based indices.
    let spread = Z_975 * (n as f64).sqrt() / 2.0;
    let lo = ((n as f64 / 2.0 - spread).floor() as i64 - 1).clamp(0, n as i64 - 1) as usize;
    let hi = ((n as f64 / 2.0 + spread).ceil() as usize).min(n - 1);
    Some(Summary {
        n,
        median,
        mean,
        stddev,
        ci95_low: mean - half_width,
        ci95_high: mean + half_width,
        min: sorted[0],
        max: sorted[n - 1],
        median_ci95_low: sorted[lo],
        median_ci95_high: sorted[hi],
    })
}

/// [`summarize`] of [`trim_rounds`]`(samples, TRIM_FRACTION)`: the standard
/// treatment of one experiment's rounds, given in time order.
pub fn summarize_trimmed(samples: &[f64]) -> Option<Summary> {
    summarize(trim_rounds(samples, TRIM_FRACTION))
}

/// Two-sided 95% critical value t_{0.975, df} of Student's t distribution.
///
/// Exact table ([`T_975`]) for df 1..=30, the Cornish-Fisher expansion
/// (Abramowitz & Stegun 26.7.5, four terms) above, which is within 1e-4 of
/// the true quantile there and tends to z = 1.95996 as df grows. `df = 0`
/// (no spread estimate) returns infinity.
pub fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T_975[df - 1],
        _ => {
            let x = Z_975;
            let v = df as f64;
            let (x2, x3) = (x * x, x * x * x);
            let (x5, x7, x9) = (x3 * x2, x3 * x2 * x2, x3 * x3 * x3);
            let g1 = (x3 + x) / 4.0;
            let g2 = (5.0 * x5 + 16.0 * x3 + 3.0 * x) / 96.0;
            let g3 = (3.0 * x7 + 19.0 * x5 + 17.0 * x3 - 15.0 * x) / 384.0;
            let g4 = (79.0 * x9 + 776.0 * x7 + 1482.0 * x5 - 1920.0 * x3 - 945.0 * x) / 92160.0;
            x + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
        }
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
        // Width 3.93 > 0.2 * 3.
        assert!(s.is_noisy());
    }

    #[test]
    fn summary_of_a_tight_even_set() {
        // mean 100, median (100 + 100) / 2 = 100; squares 0 + 4 + 4 + 0 = 8,
        // variance 8/3, s = 1.6329932; s/2 = 0.8164966; t(3) = 3.1824,
        // half width 2.5984; CI = [97.4016, 102.5984]; width 5.2 < 20.
        let s = summarize(&[100.0, 102.0, 98.0, 100.0]).unwrap();
        assert_eq!(s.median, 100.0);
        assert_eq!(s.mean, 100.0);
        assert!(close(s.stddev, 1.632_993_2, 1e-6));
        assert!(close(s.ci95_low, 97.4016, 1e-3));
        assert!(close(s.ci95_high, 102.5984, 1e-3));
        assert!(!s.is_noisy());
        assert!(close(s.relative_ci_width(), 0.051_968, 1e-4));
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
    fn t_table_and_expansion_agree_with_reference_values() {
        assert_eq!(t_975(1), 12.7062);
        assert_eq!(t_975(4), 2.7764);
        assert_eq!(t_975(30), 2.0423);
        assert_eq!(t_975(0), f64::INFINITY);
        // Reference quantiles, 4 decimals (numerical integration of the density).
        for (df, t) in [
            (31, 2.0395),
            (40, 2.0211),
            (60, 2.0003),
            (120, 1.9799),
            (1000, 1.9623),
        ] {
            assert!(close(t_975(df), t, 1e-4), "df {df}: {} vs {t}", t_975(df));
        }
        // The expansion continues the table without a jump at df = 30.
        let expansion_at_30 = {
            let x = Z_975;
            x + (x.powi(3) + x) / 4.0 / 30.0
                + (5.0 * x.powi(5) + 16.0 * x.powi(3) + 3.0 * x) / 96.0 / 900.0
        };
        assert!(close(expansion_at_30, T_975[29], 2e-4));
        assert!(close(t_975(usize::MAX), Z_975, 1e-9));
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
}
