//! waitwise against its best peer in one cell: paired ratios round by
//! round, their medians, the throughput ratio's 95% interval, and the
//! targets a cell is checked against.
//!
//! The best peer is the one with the highest median throughput over the
//! cell's rounds. Every ratio is waitwise's figure over that peer's in
//! the same round (the two ran back to back, so a round the machine
//! slowed counts for both), and the cell reports the median of those
//! ratios. The throughput ratio's interval is the distribution-free 95%
//! interval of that median ([`crate::stats::summarize`], order
//! statistics): the whole range of the ratios below 6 rounds, where its
//! coverage is under 95% (`coverage` says how much).

use super::figures::{IdleTicks, RunFigures};
use crate::stats::summarize;
use serde::{Deserialize, Serialize};

/// Target: waitwise's throughput at least this fraction of the best peer's.
pub const TARGET_THROUGHPUT_AT_LEAST: f64 = 0.95;
/// Target: waitwise's p99 wait at most this multiple of the best peer's.
pub const TARGET_P99_AT_MOST: f64 = 1.5;
/// Target: waitwise's longest wait at most this multiple of the best peer's.
pub const TARGET_LONGEST_AT_MOST: f64 = 2.0;
/// Target: waitwise's CPU time per operation at most this multiple of the
/// best peer's.
pub const TARGET_CPU_PER_OP_AT_MOST: f64 = 1.1;
/// A cell where waitwise's throughput is at least this multiple of the
/// best peer's counts as clearly ahead.
pub const AHEAD_THROUGHPUT_AT_LEAST: f64 = 1.2;

/// The median of paired ratios and its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// Median over the rounds of waitwise's figure over the peer's.
    pub median: f64,
    /// Lower end of the median's 95% interval.
    pub ci95_low: f64,
    /// Upper end of the median's 95% interval.
    pub ci95_high: f64,
    /// Rounds paired.
    pub rounds: usize,
    /// The interval's coverage probability (95% or more from 6 rounds).
    pub coverage: f64,
}

/// The median of `a[i] / b[i]` over the rounds where both are present and
/// `b[i] > 0`, with its interval; `None` without such a round.
pub fn paired_ratio(a: &[Option<f64>], b: &[Option<f64>]) -> Option<Ratio> {
    let ratios: Vec<f64> = a
        .iter()
        .zip(b)
        .filter_map(|(x, y)| match (x, y) {
            (Some(x), Some(y)) if *y > 0.0 && x.is_finite() => Some(x / y),
            _ => None,
        })
        .collect();
    let s = summarize(&ratios)?;
    Some(Ratio {
        median: s.median,
        ci95_low: s.median_ci95_low,
        ci95_high: s.median_ci95_high,
        rounds: s.n,
        coverage: s.median_ci_coverage(),
    })
}

/// One contender's runs in a cell, one entry per round (`None`: the run
/// completed nothing).
pub type Rounds = [Option<RunFigures>];

/// waitwise against its best peer in one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The peer with the highest median throughput.
    pub best_peer: String,
    /// Throughput, waitwise over the best peer (above 1: waitwise ahead).
    pub throughput: Ratio,
    /// p99 wait, waitwise over the best peer (below 1: waitwise shorter).
    pub p99: Option<f64>,
    /// Longest wait, waitwise over the best peer.
    pub longest: Option<f64>,
    /// Least/most served, waitwise over the best peer (above 1: waitwise
    /// more even).
    pub least_over_most: Option<f64>,
    /// CPU time per operation, waitwise over the best peer.
    pub cpu_per_op: Option<f64>,
    /// The CPUs' idle share over waitwise's runs (their ticks pooled).
    pub idle_waitwise: Option<f64>,
    /// The CPUs' idle share over the best peer's runs.
    pub idle_best_peer: Option<f64>,
    /// Whether the cell meets every target ([`meets_targets`]).
    pub meets_targets: bool,
    /// Whether waitwise's throughput is at least
    /// [`AHEAD_THROUGHPUT_AT_LEAST`] times the best peer's.
    pub ahead: bool,
}

/// Compares `waitwise`'s rounds with the best of `peers` (name, rounds);
/// `None` when no peer or waitwise completed a run.
pub fn compare(
    waitwise: &Rounds,
    peers: &[(String, Vec<Option<RunFigures>>)],
) -> Option<Comparison> {
    let (best_name, best) = peers
        .iter()
        .filter_map(|(name, runs)| Some((name, runs, median_of(runs, |f| Some(f.throughput))?)))
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(name, runs, _)| (name.clone(), runs))?;
    let ratio = |pick: fn(&RunFigures) -> Option<f64>| {
        paired_ratio(&column(waitwise, pick), &column(best, pick))
    };
    let throughput = ratio(|f| Some(f.throughput))?;
    let mut c = Comparison {
        best_peer: best_name,
        throughput,
        p99: ratio(|f| Some(f.p99_ns)).map(|r| r.median),
        longest: ratio(|f| Some(f.longest_ns)).map(|r| r.median),
        least_over_most: ratio(|f| f.least_over_most).map(|r| r.median),
        cpu_per_op: ratio(|f| Some(f.cpu_ns_per_op)).map(|r| r.median),
        idle_waitwise: pooled_idle(waitwise),
        idle_best_peer: pooled_idle(best),
        meets_targets: false,
        ahead: throughput.median >= AHEAD_THROUGHPUT_AT_LEAST,
    };
    c.meets_targets = meets_targets(&c);
    Some(c)
}

/// Whether `c` meets every target: throughput at least
/// [`TARGET_THROUGHPUT_AT_LEAST`], p99 at most [`TARGET_P99_AT_MOST`],
/// longest at most [`TARGET_LONGEST_AT_MOST`] and CPU per operation at
/// most [`TARGET_CPU_PER_OP_AT_MOST`] times the best peer's. A ratio that
/// could not be formed (a peer with no waits) does not fail its target.
pub fn meets_targets(c: &Comparison) -> bool {
    let at_most = |r: Option<f64>, limit: f64| r.is_none_or(|r| r <= limit);
    c.throughput.median >= TARGET_THROUGHPUT_AT_LEAST
        && at_most(c.p99, TARGET_P99_AT_MOST)
        && at_most(c.longest, TARGET_LONGEST_AT_MOST)
        && at_most(c.cpu_per_op, TARGET_CPU_PER_OP_AT_MOST)
}

/// `pick` of every round.
fn column(runs: &Rounds, pick: fn(&RunFigures) -> Option<f64>) -> Vec<Option<f64>> {
    runs.iter().map(|r| r.as_ref().and_then(pick)).collect()
}

/// The idle share of every round's ticks together.
fn pooled_idle(runs: &Rounds) -> Option<f64> {
    IdleTicks::pooled_share(runs.iter().flatten().filter_map(|f| f.idle_ticks))
}

/// The median of `pick` over the rounds that have it.
fn median_of(runs: &Rounds, pick: fn(&RunFigures) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = column(runs, pick).into_iter().flatten().collect();
    summarize(&values).map(|s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(throughput: f64, p99_ns: f64, cpu_ns_per_op: f64) -> Option<RunFigures> {
        Some(RunFigures {
            ops: 1,
            throughput,
            p99_ns,
            longest_ns: p99_ns * 10.0,
            least_over_most: Some(0.5),
            cpu_ns_per_op,
            idle_ticks: None,
        })
    }

    #[test]
    fn paired_ratios_skip_missing_rounds_and_give_the_range_below_six() {
        let r = paired_ratio(
            &[Some(2.0), Some(3.0), None, Some(4.0), Some(1.0)],
            &[Some(1.0), Some(1.0), Some(1.0), Some(0.0), Some(1.0)],
        )
        .unwrap();
        assert_eq!((r.median, r.rounds), (2.0, 3));
        assert_eq!((r.ci95_low, r.ci95_high), (1.0, 3.0));
        assert!(r.coverage < 0.95);
        let six: Vec<Option<f64>> = (1..=6).map(|i| Some(f64::from(i))).collect();
        let ones = vec![Some(1.0); 6];
        assert!(paired_ratio(&six, &ones).unwrap().coverage >= 0.95);
        assert!(paired_ratio(&[None], &[Some(1.0)]).is_none());
    }

    #[test]
    fn the_best_peer_has_the_highest_median_throughput() {
        let waitwise = vec![run(100.0, 10.0, 50.0); 5];
        let peers = vec![
            ("slow".to_string(), vec![run(50.0, 5.0, 10.0); 5]),
            ("fast".to_string(), vec![run(110.0, 10.0, 50.0); 5]),
        ];
        let c = compare(&waitwise, &peers).unwrap();
        assert_eq!(c.best_peer, "fast");
        assert!((c.throughput.median - 100.0 / 110.0).abs() < 1e-12);
        assert_eq!((c.p99, c.cpu_per_op), (Some(1.0), Some(1.0)));
        // 0.91x of the best peer's throughput misses the 0.95x target.
        assert!(!c.meets_targets && !c.ahead);
        assert!(compare(&waitwise, &[]).is_none());
    }

    #[test]
    fn targets_are_checked_one_by_one() {
        let waitwise = vec![run(130.0, 10.0, 50.0); 5];
        let peer = |p99, cpu| vec![("p".to_string(), vec![run(100.0, p99, cpu); 5])];
        let c = compare(&waitwise, &peer(10.0, 50.0)).unwrap();
        assert!(c.meets_targets && c.ahead);
        // p99 2x the peer's: over 1.5x.
        assert!(!compare(&waitwise, &peer(5.0, 50.0)).unwrap().meets_targets);
        // CPU per op 1.25x the peer's: over 1.1x.
        assert!(!compare(&waitwise, &peer(10.0, 40.0)).unwrap().meets_targets);
        let mut c = c;
        c.p99 = None;
        assert!(meets_targets(&c));
    }
}
