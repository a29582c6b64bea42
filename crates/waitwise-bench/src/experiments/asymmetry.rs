//! `waitwise asymmetry`: seed 000's Fig. 4 (the Fig. 3b pseudo-benchmark)
//! on this machine: barrier throughput under workload asymmetry.
//!
//! Two threads loop [`Config::iterations`] times (10^6 in the paper,
//! `--full`) with a barrier between iterations. The unit of work is a
//! `10 x 10` floating-point matrix multiply ([`Config::unit_n`]); the heavy
//! thread does [`Config::heavy_units`] (10) units per iteration, the light
//! thread `0..=10` ([`Config::light_loads`]). With a light load of 0 the
//! light thread spends nearly the whole iteration waiting (the helper
//! case: the waiter should stay out of the heavy thread's way); at 10 the
//! threads are symmetric and what counts is the barrier's call and wake-up
//! latency. The figure is the total time of the loop, per barrier
//! implementation and light load.
//!
//! Threads are pinned as [`PairPlacement`] chooses: the light thread on the
//! heavy thread's SMT sibling when there is one (the paper's setting), else
//! on another core, and the result says which. Each (implementation, load)
//! cell gets one warm-up run (a quarter of the iterations, dropped) and
//! [`Config::runs`] measured runs, interleaved across implementations;
//! the first and last 10% of runs are trimmed, and median, mean and 95% CI
//! reported; a median whose 95% CI is wider than 20% of it flags the cell
//! as noisy.

use super::load::{load_average, load_note};
use super::table_parts::name_and_family;
use super::{is_selected, progress, ExperimentOutput, RenderedChart};
use crate::chart::{LineChart, Series};
use crate::contender::barrier::{self, BarrierContender, BarrierSpec};
use crate::contender::Family;
use crate::export::{Cell, Column, Table};
use crate::kernel::MatMul;
use crate::measure::summary_ns;
use crate::placement::{pin, PairPlacement};
use crate::stats::Summary;
use serde::Serialize;
use std::time::{Duration, Instant};
use waitwise::policy::Policy;
use waitwise_platform::thread::thread_cpu_time;

/// Settings of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// Side of the unit-of-work matrix multiply (10 in the paper).
    pub unit_n: usize,
    /// Units the heavy thread does per iteration (10 in the paper).
    pub heavy_units: u32,
    /// The light thread's units per iteration, one sweep point each.
    pub light_loads: Vec<u32>,
    /// Loop iterations per run (10^6 in the paper).
    pub iterations: u64,
    /// Measured runs per (implementation, load).
    pub runs: usize,
    /// Run only implementations whose name contains one of these (empty:
    /// all).
    pub only: Vec<String>,
}

impl Config {
    /// Quick: about 30 s on a 2-vCPU machine.
    pub fn quick() -> Self {
        Self {
            unit_n: 10,
            heavy_units: 10,
            light_loads: (0..=10).collect(),
            iterations: 2_000,
            runs: 5,
            only: Vec::new(),
        }
    }

    /// The paper's 10^6 iterations (one measured run per cell: each takes
    /// seconds).
    pub fn full() -> Self {
        Self {
            iterations: 1_000_000,
            runs: 3,
            ..Self::quick()
        }
    }

    /// A tiny configuration for tests.
    pub fn tiny() -> Self {
        Self {
            unit_n: 4,
            heavy_units: 2,
            light_loads: vec![0, 2],
            iterations: 50,
            runs: 2,
            only: Vec::new(),
        }
    }
}

/// One sweep point of one implementation.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// The light thread's units per iteration.
    pub light_units: u32,
    /// Total loop time, ms (one sample per run).
    pub total_ms: Option<Summary>,
}

/// One implementation's line.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Implementation name.
    pub name: String,
    /// waitwise, peer or baseline.
    pub family: Family,
    /// The explicit waitwise policy, if any.
    pub policy: Option<String>,
    /// One point per light load, in the config's order.
    pub points: Vec<Point>,
}

/// The experiment's result.
#[derive(Clone, Debug, Serialize)]
pub struct AsymmetryResult {
    /// The settings used.
    pub config: Config,
    /// Where the heavy (worker) and light (waiter) threads ran.
    pub placement: PairPlacement,
    /// One unit of work alone on the heavy thread's CPU, ns (median of a
    /// short calibration).
    pub unit_ns: f64,
    /// 1-minute load average before and after the run (other processes).
    pub load_average: [Option<f64>; 2],
    /// One row per implementation.
    pub rows: Vec<Row>,
}

/// The implementations of the sweep: waitwise's default `Barrier` and
/// `PairBarrier`, `Barrier` under `/b/0` and `s//inf`, and the peers.
pub fn implementations() -> Vec<BarrierSpec> {
    vec![
        BarrierSpec::barrier_default(),
        BarrierSpec::pair_default(),
        BarrierSpec::barrier_with(Policy::always_block()),
        BarrierSpec::barrier_with(barrier::spin_policy()),
        BarrierSpec::pthread(),
        BarrierSpec::std(),
        BarrierSpec::spin(),
    ]
}

/// One run of the loop: its wall time.
fn run_once(
    b: &dyn BarrierContender,
    placement: &PairPlacement,
    config: &Config,
    light: u32,
    iterations: u64,
) -> Duration {
    let start = std::sync::Barrier::new(3);
    let thread = |tid: usize, cpu: Option<usize>, units: u32| {
        let start = &start;
        move || {
            pin(cpu);
            let mut kernel = MatMul::new(config.unit_n);
            start.wait();
            let mut sum = 0.0;
            for _ in 0..iterations {
                sum += kernel.run_units(units);
                b.wait(tid);
            }
            std::hint::black_box(sum);
        }
    };
    std::thread::scope(|s| {
        let heavy = s.spawn(thread(0, placement.worker_cpu, config.heavy_units));
        let light_t = s.spawn(thread(1, placement.waiter_cpu, light));
        start.wait();
        let t0 = Instant::now();
        heavy.join().expect("heavy thread panicked");
        light_t.join().expect("light thread panicked");
        t0.elapsed()
    })
}

/// Units per calibration sample of [`unit_cost_ns`].
const CALIBRATION_UNITS: u32 = 200;

/// The CPU cost of one `n x n` unit of work on `cpu`, ns: the least,
/// over 25 samples, of the thread's CPU time for `CALIBRATION_UNITS`
/// units. CPU time, not wall time, so that other processes taking the CPU
/// do not inflate it; the least sample, because a hypervisor that takes the
/// virtual CPU away still charges the thread for the time.
pub fn unit_cost_ns(cpu: Option<usize>, n: usize) -> f64 {
    std::thread::spawn(move || {
        pin(cpu);
        let mut k = MatMul::new(n);
        k.run_units(CALIBRATION_UNITS); // warm-up
        let samples: Vec<f64> = (0..25)
            .map(|_| {
                let c0 = thread_cpu_time();
                k.run_units(CALIBRATION_UNITS);
                (thread_cpu_time() - c0).as_nanos() as f64 / f64::from(CALIBRATION_UNITS)
            })
            .collect();
        samples
            .into_iter()
            .fold(f64::INFINITY, f64::min)
            .clamp(1.0, 1e12)
    })
    .join()
    .unwrap_or(1.0)
}

/// Runs the experiment.
pub fn run(config: &Config) -> AsymmetryResult {
    let load_before = load_average();
    let placement = PairPlacement::choose();
    let specs: Vec<BarrierSpec> = implementations()
        .into_iter()
        .filter(|s| is_selected(&config.only, &s.name))
        .collect();
    let unit_ns = unit_cost_ns(placement.worker_cpu, config.unit_n);
    let mut samples: Vec<Vec<Vec<f64>>> =
        vec![vec![Vec::new(); config.light_loads.len()]; specs.len()];
    let steps = config.light_loads.len();
    for (li, &light) in config.light_loads.iter().enumerate() {
        progress(
            "asymmetry",
            li + 1,
            steps,
            &format!("light load {light}/{}", config.heavy_units),
        );
        let barriers: Vec<_> = specs.iter().map(|s| s.make(2, false)).collect();
        for b in &barriers {
            run_once(
                b.as_ref(),
                &placement,
                config,
                light,
                (config.iterations / 4).max(1),
            );
        }
        for _ in 0..config.runs {
            for (si, b) in barriers.iter().enumerate() {
                let t = run_once(b.as_ref(), &placement, config, light, config.iterations);
                samples[si][li].push(t.as_secs_f64() * 1e3);
            }
        }
    }
    let rows = specs
        .iter()
        .zip(samples)
        .map(|(s, per_load)| Row {
            name: s.name.clone(),
            family: s.family,
            policy: s.policy.map(|p| p.name()),
            points: config
                .light_loads
                .iter()
                .zip(per_load)
                .map(|(&light_units, v)| Point {
                    light_units,
                    total_ms: summary_ns(&v),
                })
                .collect(),
        })
        .collect();
    AsymmetryResult {
        config: config.clone(),
        placement,
        unit_ns,
        load_average: [load_before, load_average()],
        rows,
    }
}

impl AsymmetryResult {
    /// Median total time (ms) of the row whose name starts with `prefix`,
    /// per light load.
    pub fn times(&self, prefix: &str) -> Option<Vec<Option<f64>>> {
        let row = self.rows.iter().find(|r| r.name.starts_with(prefix))?;
        Some(
            row.points
                .iter()
                .map(|p| p.total_ms.map(|s| s.median))
                .collect(),
        )
    }

    fn load_columns(&self, unit: &str, doc: &str) -> Vec<Column> {
        let mut c = vec![
            Column::new("implementation", None, "barrier and its waiting"),
            Column::new("family", None, "waitwise, peer or baseline"),
        ];
        for l in &self.config.light_loads {
            c.push(Column::new(
                format!("light_{l}"),
                Some(unit),
                format!("light load {l}: {doc}"),
            ));
        }
        c
    }
}

impl ExperimentOutput for AsymmetryResult {
    fn tables(&self) -> Vec<Table> {
        let mut time = Table::new(
            "asymmetry",
            format!(
                "Total time of {} iterations: heavy thread {} units, light thread 0..{} units of a {2}x{2} multiply, barrier between iterations (Anastopoulos & Koziris 2008, Fig. 4)",
                self.config.iterations, self.config.heavy_units, self.config.unit_n
            ),
            self.load_columns("ms", "total loop time (median over runs)"),
        );
        let pthread = self.times("pthread");
        let mut speed = Table::new(
            "asymmetry_vs_pthread",
            "Speed-up over pthread_barrier_wait: pthread's total time / this implementation's (above 1: faster)",
            self.load_columns("ratio", "pthread's median time over this one's"),
        );
        for r in &self.rows {
            let head = || name_and_family(&r.name, r.family);
            let mut cells = head();
            let mut noisy = Vec::new();
            for p in &r.points {
                match p.total_ms {
                    Some(s) => {
                        cells.push(Cell::Number(s.median));
                        if s.is_noisy() {
                            noisy.push(p.light_units.to_string());
                        }
                    }
                    None => cells.push(Cell::missing("no data")),
                }
            }
            let note = (!noisy.is_empty()).then(|| {
                format!(
                    "noisy (median 95% CI wider than 20% of the median) at light load {}",
                    noisy.join(", ")
                )
            });
            time.push_row(cells, note);
            let mut ratios = head();
            for (i, p) in r.points.iter().enumerate() {
                let base = pthread.as_ref().and_then(|v| v.get(i).copied().flatten());
                ratios.push(match (base, p.total_ms) {
                    (Some(b), Some(s)) if s.median > 0.0 => Cell::Number(b / s.median),
                    _ => Cell::missing("no pthread figure"),
                });
            }
            speed.push_row(ratios, None);
        }
        vec![time, speed]
    }

    fn charts(&self) -> Vec<RenderedChart> {
        let series = self
            .rows
            .iter()
            .map(|r| Series {
                name: r.name.clone(),
                points: r
                    .points
                    .iter()
                    .filter_map(|p| p.total_ms.map(|s| (p.light_units as f64, s.median)))
                    .collect(),
            })
            .collect();
        let title = format!(
            "Barrier loop under asymmetry: {} iterations, heavy thread {} units",
            self.config.iterations, self.config.heavy_units
        );
        let intervals: Vec<Vec<(f64, f64, f64)>> = self
            .rows
            .iter()
            .map(|r| {
                r.points
                    .iter()
                    .filter_map(|p| {
                        let s = p.total_ms?;
                        Some((p.light_units as f64, s.median_ci95_low, s.median_ci95_high))
                    })
                    .collect()
            })
            .collect();
        let chart = LineChart {
            title: title.clone(),
            x_label: "light thread's load (units of work per iteration)".into(),
            y_label: "total time (ms, median)".into(),
            x_log: false,
            y_log: false,
            series,
        };
        chart
            .to_svg_with_intervals(&intervals)
            .ok()
            .map(|svg| RenderedChart {
                caption: title,
                svg,
            })
            .into_iter()
            .collect()
    }

    fn notes(&self) -> Vec<String> {
        let mut n = vec![
            format!("Placement: {}.", self.placement.describe()),
            format!(
                "Barrier (default) waits {} (two threads fit on the CPUs).",
                waitwise::barrier::default_policy(2).describe()
            ),
            format!(
                "One {0}x{0} unit of work alone: {1:.0} ns of CPU time.",
                self.config.unit_n, self.unit_ns
            ),
        ];
        n.extend(load_note(
            self.load_average[0],
            self.load_average[1],
            waitwise::barrier::allowed_cpus(),
        ));
        if let (Some(d), Some(p)) = (self.times("Barrier (default"), self.times("pthread")) {
            let pairs: Vec<(u32, f64)> = self
                .config
                .light_loads
                .iter()
                .zip(d.iter().zip(&p))
                .filter_map(|(&l, (d, p))| Some((l, (*p)? / (*d)?)))
                .collect();
            let all =
                pairs.len() == self.config.light_loads.len() && pairs.iter().all(|(_, r)| *r > 1.0);
            let list: Vec<String> = pairs.iter().map(|(l, r)| format!("{l}: {r:.2}x")).collect();
            n.push(format!(
                "Default Barrier vs pthread_barrier_wait (pthread time / default time) per light load: {}. Faster at every load: {}.",
                list.join(", "),
                if all { "yes" } else { "no" }
            ));
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_run_fills_every_point() {
        let mut cfg = Config::tiny();
        cfg.only = vec!["default".into(), "pthread".into()];
        let res = run(&cfg);
        assert_eq!(res.rows.len(), 3); // Barrier, PairBarrier, pthread
        for r in &res.rows {
            assert_eq!(r.points.len(), 2);
            assert!(r.points.iter().all(|p| p.total_ms.is_some()), "{}", r.name);
        }
        let tables = res.tables();
        assert_eq!(tables.len(), 2);
        for t in &tables {
            crate::export::agreement::assert_exports_agree(t);
            assert_eq!(t.rows.len(), res.rows.len());
            assert_eq!(t.columns.len(), 2 + cfg.light_loads.len());
        }
        let json = serde_json::to_value(&res).unwrap();
        for key in ["config", "placement", "unit_ns", "load_average", "rows"] {
            assert!(json.get(key).is_some(), "{key}");
        }
        for key in ["name", "family", "policy", "points"] {
            assert!(json["rows"][0].get(key).is_some(), "row.{key}");
        }
        assert!(json["rows"][0]["points"][0].get("total_ms").is_some());
        assert_eq!(res.charts().len(), 1);
        assert!(res.notes().iter().any(|n| n.contains("per light load")));
    }
}
