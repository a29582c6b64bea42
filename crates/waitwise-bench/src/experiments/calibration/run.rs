//! A run: every (law, scale) group piloted, measured and summarized in
//! turn ([`run`]), in the model's regime or not ([`run_in_model_regime`]).

use super::super::load::load_average;
use super::super::progress;
use super::accounting::{block_cpu_ns, CellPrices};
use super::cells::{dist_laws_scaled, draw_waits, followed_block_costs, CellWaits};
use super::config::{CalibrationDist, Config};
use super::measurement::{cpu_clock_overhead_ns, measure};
use super::ordering::ordering_check;
use super::pilot::Group;
use super::result::{CalibrationResult, Row};
use super::sample::{assign_phases, Sample};
use super::summary::{summarize, switching_factor, switching_floor};
use crate::placement::PairPlacement;
use std::time::{Duration, Instant};
use waitwise::policy::{block_cost, Policy};
use waitwise_model::algorithm::WaitingAlgorithm;

/// [`run`] in the cost model's regime, as `waitwise model calibrate`
/// runs by default: `adapt/b`'s idle-CPU signal pinned to busy (no poll
/// past a limit, every poll charged its CPU time), then restored to what
/// it was, also when the run panics. For callers that run other
/// experiments in the same process (the report).
pub fn run_in_model_regime(config: &Config) -> CalibrationResult {
    use waitwise::policy::idle_extension::{force_demand, forced_demand, CpuDemand};
    /// Puts back the signal the run found.
    struct Restore(Option<CpuDemand>);
    impl Drop for Restore {
        fn drop(&mut self) {
            force_demand(self.0);
        }
    }
    let _restore = Restore(forced_demand());
    force_demand(Some(CpuDemand::Busy));
    run(config)
}

/// The name of the idle-CPU signal in force ([`CalibrationResult::idle_signal`]).
fn idle_signal_name() -> String {
    use waitwise::policy::idle_extension::{forced_demand, CpuDemand};
    match forced_demand() {
        Some(CpuDemand::Busy) => "busy",
        Some(CpuDemand::Idle) => "idle",
        Some(CpuDemand::Unknown) => "unknown",
        None => "auto",
    }
    .into()
}

/// Runs the experiment with `adapt/b`'s idle-CPU signal as the process
/// has it ([`run_in_model_regime`] pins it to the model's regime).
pub fn run(config: &Config) -> CalibrationResult {
    let t0 = Instant::now();
    let idle_signal = idle_signal_name();
    let load = load_average();
    let placement = PairPlacement::choose();
    let block_cost = block_cost();
    let b = block_cost.ns;
    let overhead = cpu_clock_overhead_ns();
    let groups: usize = config
        .dists
        .iter()
        .map(|d| d.cell_scales(&config.scales).len())
        .sum();
    let share =
        Duration::from_secs_f64((config.time_budget_s.max(0.0) / groups.max(1) as f64).min(3600.0));
    let setting = RunSetting {
        config,
        placement: &placement,
        b,
        overhead,
        share,
    };
    let mut rows = Vec::with_capacity(groups * config.policies.len());
    let mut ordering = Vec::new();
    let mut references: Vec<Sample> = Vec::new();
    let mut step = 0;
    for (di, &dist) in config.dists.iter().enumerate() {
        for (si, &scale) in dist.cell_scales(&config.scales).iter().enumerate() {
            step += 1;
            progress(
                "calibration",
                step,
                groups,
                &format!(
                    "{} {}={scale}, policies interleaved (B = {b:.0} ns)",
                    dist.name(),
                    dist.scale_label()
                ),
            );
            let first = rows.len();
            let stream = (di * 1000 + si) as u64;
            references.extend(setting.measure_group(dist, scale, stream, &mut rows));
            let cell_rows: Vec<&Row> = rows[first..].iter().collect();
            ordering.push(ordering_check(dist, scale, &cell_rows));
        }
    }
    let all_blocks = block_cpu_ns(&references, overhead);
    CalibrationResult {
        config: config.clone(),
        placement,
        block_cost,
        cpu_clock_overhead_ns: overhead,
        block_cpu_ns: all_blocks.mean_ns,
        block_cpu_median_ns: all_blocks.median_ns,
        load_average: load,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        idle_signal,
        wall_s: t0.elapsed().as_secs_f64(),
        rows,
        ordering,
    }
}

/// What every (law, scale) group of a run shares.
struct RunSetting<'a> {
    config: &'a Config,
    placement: &'a PairPlacement,
    /// The process's `B`, ns.
    b: f64,
    /// Two `thread_cpu_time` reads, ns.
    overhead: f64,
    /// Each group's share of the time budget.
    share: Duration,
}

/// A policy of a group that parsed, with the index of its row.
struct Runnable {
    row: usize,
    policy: Policy,
    alg: WaitingAlgorithm,
}

impl RunSetting<'_> {
    /// Measures one (law, scale) group: pushes one row per policy onto
    /// `rows`, pilots the cell, measures it and summarizes each policy's
    /// row; returns the block references' samples.
    fn measure_group(
        &self,
        dist: CalibrationDist,
        scale: f64,
        stream: u64,
        rows: &mut Vec<Row>,
    ) -> Vec<Sample> {
        let (config, b) = (self.config, self.b);
        // The labelled cell, with the process's B: what the theory
        // promises there (`predicted_factor`).
        let label_law = dist.law(scale, b);
        let label_laws = dist.laws(scale, b);
        let (n_laws, period) = match &label_laws {
            Ok((l, p)) => (l.len().max(1), *p),
            Err(_) => (1, usize::MAX),
        };
        let runnable = push_rows(
            dist,
            scale,
            &config.policies,
            label_law.as_ref().err(),
            rows,
        );
        let Ok(law) = &label_law else {
            return Vec::new();
        };
        if runnable.is_empty() {
            return Vec::new();
        }
        let policies: Vec<Policy> = runnable.iter().map(|r| r.policy).collect();
        let (waits, wait_b) = self.pilot_and_draw(dist, scale, period, stream, &policies);
        let mut measured = measure(
            &policies,
            &CellWaits::new(&waits, &wait_b, period, b),
            config.warmup_rounds,
            self.placement,
            Instant::now() + self.share,
        );
        assign_phases(&mut measured, config.warmup_rounds, period, n_laws);
        let hand_off = measured.pop().expect("the references are measured last");
        let reference = measured.pop().expect("the references are measured last");
        // The laws the measured waits were drawn from: each with the
        // mean of the B its cycles followed.
        let followed_b = followed_block_costs(&reference.samples, &wait_b);
        let drawn = dist_laws_scaled(dist, scale, &followed_b);
        let prices = self.phase_prices(n_laws, &reference.samples, &hand_off.samples);
        for (r, m) in runnable.iter().zip(&measured) {
            let row = &mut rows[r.row];
            if m.lost_producer {
                row.not_available = Some("producer did not notify within 2 s".into());
            }
            row.block_cpu_ns =
                prices.iter().map(|a| a.block_cpu.mean_ns).sum::<f64>() / prices.len() as f64;
            row.wait_block_ns = followed_b.iter().sum::<f64>() / followed_b.len() as f64;
            let Ok((drawn_laws, _)) = &drawn else {
                continue;
            };
            summarize(row, &m.samples, &r.alg, law, &drawn_laws[0], &prices);
            if let Ok((label_laws, period)) = &label_laws {
                if label_laws.len() > 1 {
                    row.predicted_factor =
                        switching_factor(&r.alg, label_laws, *period, b, config.seed);
                    row.online_floor = switching_floor(drawn_laws, &prices);
                }
            }
        }
        reference.samples
    }

    /// Pilots a group's cell ([`Group::pilot_block_costs`]) and draws its
    /// waits in units of the `B` each law's pilot found; returns the
    /// waits and those `B`s, ns.
    fn pilot_and_draw(
        &self,
        dist: CalibrationDist,
        scale: f64,
        period: usize,
        stream: u64,
        policies: &[Policy],
    ) -> (Vec<f64>, Vec<f64>) {
        let config = self.config;
        let group = Group {
            dist,
            scale,
            policies,
            warmup: config.warmup_rounds,
            placement: self.placement,
            process_b: self.b,
        };
        let wait_b = group.pilot_block_costs(config.seed, stream, self.share);
        let waits = match dist_laws_scaled(dist, scale, &wait_b) {
            Ok((laws, _)) => draw_waits(
                &laws,
                period,
                config.warmup_rounds + config.rounds,
                config.seed,
                stream,
            ),
            Err(_) => Vec::new(),
        };
        (waits, wait_b)
    }

    /// One [`CellPrices`] per law of the cell, from the references of its
    /// phase; from all of them for a phase without a blocked reference or
    /// without an at-once one.
    fn phase_prices(
        &self,
        n_laws: usize,
        reference: &[Sample],
        hand_off: &[Sample],
    ) -> Vec<CellPrices> {
        (0..n_laws)
            .map(|p| {
                let of_phase = |v: &[Sample]| -> Vec<Sample> {
                    v.iter().filter(|s| s.phase == p).copied().collect()
                };
                let (refs, hands) = (of_phase(reference), of_phase(hand_off));
                if refs.iter().any(|s| s.blocked) && !hands.is_empty() {
                    CellPrices::from_references(&refs, &hands, self.b, self.overhead)
                } else {
                    CellPrices::from_references(reference, hand_off, self.b, self.overhead)
                }
            })
            .collect()
    }
}

/// Pushes one unmeasured row per policy of a (law, scale) group onto
/// `rows` (with why it cannot run: a name neither `Policy` nor
/// `WaitingAlgorithm` parses, or `law_error`), and returns those that can.
fn push_rows(
    dist: CalibrationDist,
    scale: f64,
    policies: &[String],
    law_error: Option<&waitwise_model::error::ModelError>,
    rows: &mut Vec<Row>,
) -> Vec<Runnable> {
    let mut runnable = Vec::new();
    for name in policies {
        let mut row = Row::unmeasured(dist, scale, name);
        let parsed = name
            .parse::<Policy>()
            .map_err(|e| e.to_string())
            .and_then(|p| {
                Ok((
                    p,
                    name.parse::<WaitingAlgorithm>()
                        .map_err(|e| e.to_string())?,
                ))
            });
        match (parsed, law_error) {
            (Err(e), _) => row.not_available = Some(format!("n/a: {e}")),
            (_, Some(e)) => row.not_available = Some(format!("n/a: {e}")),
            (Ok((policy, alg)), None) => runnable.push(Runnable {
                row: rows.len(),
                policy,
                alg,
            }),
        }
        rows.push(row);
    }
    runnable
}
