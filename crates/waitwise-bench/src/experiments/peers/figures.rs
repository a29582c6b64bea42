//! One run's figures: throughput, p99 and longest wait, least/most
//! served, CPU time per operation and the CPUs' idle share, measured
//! around a workload that returns its threads' [`RunLog`].

use super::wait_log::{RunLog, WaitHistogram};
use crate::experiments::load::BusyLoad;
use serde::{Deserialize, Serialize};
use waitwise_platform::clock::cycle_clock;
use waitwise_platform::cpu_time::{process_cpu_secs, CpuTicks};

/// The quantile reported as the tail wait.
pub const TAIL_QUANTILE: f64 = 0.99;

/// One contender's run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    /// Operations completed.
    pub ops: u64,
    /// Operations per second of wall time.
    pub throughput: f64,
    /// 99th percentile of the waits, ns (within an eighth, from the
    /// histogram).
    pub p99_ns: f64,
    /// The longest single wait, ns.
    pub longest_ns: f64,
    /// Fewest operations of a competing thread over the most (1 = even);
    /// `None` with fewer than two competing threads.
    pub least_over_most: Option<f64>,
    /// The process's CPU time (user + system; co-runners are other processes)
    /// per operation, ns.
    pub cpu_ns_per_op: f64,
    /// The machine's CPUs' idle and total clock ticks during the run
    /// (`/proc/stat`, usually 100 a second per CPU: a few per short run,
    /// so a cell pools its rounds' ticks); `None` where unknown.
    pub idle_ticks: Option<IdleTicks>,
}

/// Idle ticks out of all ticks of the machine's CPUs over a span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleTicks {
    /// Ticks the CPUs idled.
    pub idle: u64,
    /// All ticks (busy, idle, stolen).
    pub total: u64,
}

impl IdleTicks {
    /// The ticks between two readings; `None` when either is missing.
    pub fn between(before: Option<CpuTicks>, after: Option<CpuTicks>) -> Option<Self> {
        let d = after?.since(before?);
        Some(Self {
            idle: d.idle,
            total: d.busy + d.idle + d.steal,
        })
    }

    /// The idle share of all the ticks of `spans`; `None` without ticks.
    pub fn pooled_share(spans: impl Iterator<Item = IdleTicks>) -> Option<f64> {
        let sum = spans.fold(IdleTicks::default(), |a, b| IdleTicks {
            idle: a.idle + b.idle,
            total: a.total + b.total,
        });
        (sum.total > 0).then(|| sum.idle as f64 / sum.total as f64)
    }
}

/// Runs `workload` (with a busy co-runner on each of `cpus` CPUs when
/// `load`) and measures it. `None` when it completed no operation.
pub fn measure(load: bool, cpus: usize, workload: impl FnOnce() -> RunLog) -> Option<RunFigures> {
    let cpu_before = process_cpu_secs();
    let corunners = load.then(|| BusyLoad::start(cpus));
    let ticks_before = CpuTicks::now();
    let log = workload();
    let ticks_after = CpuTicks::now();
    // The co-runners are processes of their own: the process's CPU time
    // is the workload's.
    let cpu = (process_cpu_secs() - cpu_before).max(0.0);
    if let Some(c) = corunners {
        c.stop();
    }
    figures(&log, cpu, IdleTicks::between(ticks_before, ticks_after))
}

/// The figures of `log`, given the CPU seconds the run used and the
/// machine's idle ticks.
pub fn figures(log: &RunLog, cpu_secs: f64, idle_ticks: Option<IdleTicks>) -> Option<RunFigures> {
    let ops: u64 = log.threads.iter().map(|t| t.ops).sum();
    let wall = log.wall.as_secs_f64();
    if ops == 0 || wall <= 0.0 {
        return None;
    }
    let mut waits = WaitHistogram::default();
    for t in &log.threads {
        waits.merge(&t.waits);
    }
    let clock = cycle_clock();
    let ns = |ticks: u64| clock.ticks_to_ns(ticks);
    Some(RunFigures {
        ops,
        throughput: ops as f64 / wall,
        p99_ns: waits.quantile(TAIL_QUANTILE).map_or(0.0, ns),
        longest_ns: ns(waits.longest()),
        least_over_most: least_over_most(log.threads.iter().filter(|t| t.served).map(|t| t.ops)),
        cpu_ns_per_op: cpu_secs * 1e9 / ops as f64,
        idle_ticks,
    })
}

/// Fewest over most of `ops`; `None` for fewer than two counts or a most
/// of 0.
pub fn least_over_most(ops: impl Iterator<Item = u64>) -> Option<f64> {
    let (mut n, mut least, mut most) = (0, u64::MAX, 0);
    for o in ops {
        n += 1;
        least = least.min(o);
        most = most.max(o);
    }
    (n >= 2 && most > 0).then(|| least as f64 / most as f64)
}

#[cfg(test)]
mod tests {
    use super::super::wait_log::ThreadLog;
    use super::*;
    use std::time::Duration;

    #[test]
    fn figures_count_every_thread_and_serve_the_competing_ones() {
        let mut a = ThreadLog::start(true, Duration::ZERO);
        let mut b = ThreadLog::start(true, Duration::ZERO);
        let c = ThreadLog::start(false, Duration::ZERO);
        a.ops = 300;
        b.ops = 100;
        a.timed(|| ());
        b.timed(|| ());
        let log = RunLog {
            threads: vec![a, b, c],
            wall: Duration::from_millis(100),
        };
        let ticks = IdleTicks { idle: 1, total: 4 };
        let f = figures(&log, 0.002, Some(ticks)).unwrap();
        assert_eq!(f.ops, 400);
        assert!((f.throughput - 4_000.0).abs() < 1e-6);
        assert_eq!(f.least_over_most, Some(1.0 / 3.0));
        assert!((f.cpu_ns_per_op - 5_000.0).abs() < 1e-6);
        assert!(f.longest_ns >= f.p99_ns);
        let empty = RunLog {
            threads: vec![],
            wall: Duration::from_millis(1),
        };
        assert!(figures(&empty, 0.0, None).is_none());
    }

    #[test]
    fn idle_shares_pool_the_ticks() {
        let spans = [
            IdleTicks { idle: 0, total: 2 },
            IdleTicks { idle: 3, total: 4 },
        ];
        assert_eq!(IdleTicks::pooled_share(spans.into_iter()), Some(0.5));
        assert_eq!(IdleTicks::pooled_share(std::iter::empty()), None);
    }

    #[test]
    fn least_over_most_needs_two_threads() {
        assert_eq!(least_over_most([5].into_iter()), None);
        assert_eq!(least_over_most([0, 0].into_iter()), None);
        assert_eq!(least_over_most([2, 4, 8].into_iter()), Some(0.25));
    }
}
