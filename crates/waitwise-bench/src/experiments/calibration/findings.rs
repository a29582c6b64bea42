//! What a run found, as data ([`CalibrationFinding`]), with its wording
//! in `Display`: detection ([`CalibrationResult::findings`]) pushes
//! variants, and the report's notes are their text.

use super::accounting::least_most_median;
use super::config::{CalibrationDist, SWITCHING_PERIOD, SWITCHING_SCALES};
use super::ordering::REVERSAL_Z;
use super::result::{
    CalibrationResult, PolicyFactors, Row, AGREEMENT_TOLERANCE, MEASUREMENT_TOLERANCE,
};
use std::fmt;
use waitwise::policy::adaptive::{arm_cost, arm_name, CREDIT_FALLBACK_ARM, WORST_CASE_FACTOR};
use waitwise::policy::BlockCostSource;

/// The target for `adapt/b`'s measured factor in a stationary cell (where
/// the model's `adapt/b` reaches it with the `B` the cell's blocks cost:
/// [`Row::online_floor`]).
pub const STATIONARY_TARGET: f64 = 1.25;

/// The target for `adapt/b`'s measured factor in the switching cell.
pub const SWITCHING_TARGET: f64 = 1.4;

/// A static policy whose mean measured factor is within this of the mean
/// of the cells' on-line floors runs at the floor: nothing is left for a
/// better choice of poll limits. Chosen: about the run-to-run spread of a
/// mean factor over a quick run's cells.
const FLOOR_TIE: f64 = 0.05;

/// A row "polled every wait" when at most this fraction of its waits
/// blocked (a stray block in a thousand waits is a preemption, not the
/// policy's choice).
const POLLED_ALL_FRACTION: f64 = 0.01;

/// A row "blocked nearly every wait" when at least this fraction of its
/// waits blocked: where blocking is nearly optimal, `adapt/b`'s cost is
/// its blocks and the short polls before them. Chosen: just under the
/// fraction `adapt/b` blocks in the cells where `/b/0` is best.
const BLOCKED_MOST_FRACTION: f64 = 0.95;

/// A `/b/0` row "did not always sleep" below this fraction of blocked
/// waits.
const SKIPPED_BLOCK_FRACTION: f64 = 0.9;

/// The producer "released late" in a cell whose mean wait exceeds its
/// mean drawn wait by more than this many `B`.
const LATE_IN_B: f64 = 0.25;

/// The always-spinning consumer "was preempted" in a cell whose polling
/// CPU is under this fraction of its wait.
const PREEMPTED_CPU_FRACTION: f64 = 0.8;

/// The kernel's CPU per block "exceeds `B`" beyond this many `B`.
const BLOCK_CPU_IN_B: f64 = 1.5;

/// One finding of a run, each a note of the report.
#[derive(Clone, Debug, PartialEq)]
pub enum CalibrationFinding {
    /// The run's setting: `B` and its source, placement, CPUs, load, wall
    /// time.
    Setting {
        /// The process's `B`, ns.
        b_ns: f64,
        /// Where `B` came from.
        source: BlockCostSource,
        /// Where producer and consumer ran, in words.
        placement: String,
        /// CPUs this process may use.
        cpus: usize,
        /// 1-minute load average at the start.
        load_average: Option<f64>,
        /// Wall time of the run, s.
        wall_s: f64,
    },
    /// `adapt/b` ran with its idle-CPU signal not pinned to busy: outside
    /// the cost model's regime.
    IdleSignalNotBusy {
        /// The signal in force ([`CalibrationResult::idle_signal`]).
        signal: String,
    },
    /// How each wait's cost was computed, with the run's corrections.
    CostAccounting {
        /// Two thread CPU-time reads, ns.
        clock_overhead_ns: f64,
        /// Mean kernel CPU per block over the cells, ns.
        block_cpu_ns: f64,
        /// Median of the same, ns.
        block_cpu_median_ns: f64,
        /// Least and most of the cells' own `B`, ns.
        cell_b_ns: (f64, f64),
        /// The process's `B`, ns.
        process_b_ns: f64,
        /// Least and most `B` the cells' waits were drawn with, ns.
        wait_b_ns: (f64, f64),
        /// Waits counted at a cap.
        outliers: usize,
        /// Waits measured.
        waits: usize,
        /// Waits that blocked.
        blocked: f64,
    },
    /// Every pair of policies the model separates is measured in its
    /// order.
    OrderingMatches {
        /// Pairs the model separates by more than 10%.
        decided: usize,
        /// Pairs measured the other way within noise.
        ties: Vec<String>,
    },
    /// Some pairs are measured the other way beyond noise.
    OrderingDiffers {
        /// Pairs measured in the model's order.
        concordant: usize,
        /// Pairs the model separates by more than 10%.
        decided: usize,
        /// Pairs reversed beyond noise.
        reversed: Vec<String>,
        /// Pairs measured the other way within noise.
        ties: Vec<String>,
    },
    /// How many cells sit within [`AGREEMENT_TOLERANCE`] of the model.
    Magnitude {
        /// Cells within it.
        within: usize,
        /// Cells with figures.
        total: usize,
        /// The cells outside it, with their ratio.
        outside: Vec<String>,
    },
    /// `adapt/b` against the static policies.
    Adaptive(Box<AdaptiveFinding>),
    /// `/b/0` returned without sleeping in some short-wait cells.
    BlockSkipped {
        /// Those cells, with the fraction that blocked.
        cells: Vec<String>,
    },
    /// The producer released late.
    LateProducer {
        /// Those cells, with how late.
        cells: Vec<String>,
    },
    /// The always-spinning consumer was off its CPU for part of long
    /// waits.
    PreemptedPolling {
        /// Those cells, with the fraction of the wait on CPU.
        cells: Vec<String>,
    },
    /// `B` was measured while a polling partner was descheduled.
    BlockCostOnBusyMachine {
        /// The polling round trip, ns.
        spin_round_trip_ns: f64,
        /// The futex round trip, ns.
        futex_round_trip_ns: f64,
    },
    /// A block burns more of the waiter's CPU than `B`.
    BlockCpuAboveB {
        /// The kernel's CPU per block, ns.
        block_cpu_ns: f64,
        /// The process's `B`, ns.
        b_ns: f64,
    },
    /// What a hand-off costs beyond the wait itself.
    HandOffCpu {
        /// Least over the cells, ns.
        lo_ns: f64,
        /// Most over the cells, ns.
        hi_ns: f64,
    },
    /// `adapt/b`'s own work per polled wait.
    AdaptiveBookkeeping {
        /// The figures.
        bookkeeping: AdaptiveBookkeeping,
        /// `adapt/b`'s measured mean factor.
        measured: f64,
    },
    /// `adapt/b`'s work around each block.
    AdaptiveBlocked(AdaptiveBlockedDeparture),
    /// What the model leaves out.
    NotInModel {
        /// Two thread CPU-time reads, ns.
        clock_overhead_ns: f64,
    },
}

/// `adapt/b` against the static policies, and against the targets.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveFinding {
    /// Cells with a figure.
    pub cells: usize,
    /// Mean measured factor.
    pub mean_factor: f64,
    /// Whether it is below every static policy's.
    pub lowest: bool,
    /// Every static policy's mean factor.
    pub statics: Vec<(String, f64)>,
    /// The static policies at or below it, with their mean factors.
    pub ahead: Vec<(String, f64)>,
    /// The mean of its cells' on-line floors, when every cell has one.
    pub mean_floor: Option<f64>,
    /// Its worst stationary cell and factor.
    pub worst: Option<(String, f64)>,
    /// Its worst stationary cell where its model allows the target.
    pub worst_allowed: Option<WorstAllowed>,
    /// The switching cell's measured factor.
    pub switching: Option<f64>,
    /// The switching cell's on-line floor.
    pub switching_floor: Option<f64>,
    /// Stationary cells where its model is beyond the target.
    pub beyond: Vec<BeyondTarget>,
    /// Stationary cells not judged: the static policies missed the model.
    pub not_judged: Vec<NotJudged>,
}

/// `adapt/b`'s worst stationary cell where its model allows the target.
#[derive(Clone, Debug, PartialEq)]
pub struct WorstAllowed {
    /// The cell, by law and scale.
    pub cell: String,
    /// Measured factor.
    pub factor: f64,
    /// The cell's on-line floor.
    pub floor: Option<f64>,
    /// The cell's best static policy and its factor.
    pub best_static: Option<(String, f64)>,
}

/// A stationary cell where `adapt/b`'s model is beyond the target.
#[derive(Clone, Debug, PartialEq)]
pub struct BeyondTarget {
    /// The cell, by law and scale.
    pub cell: String,
    /// The cell's `B` over the `B` its waits were drawn with.
    pub b_ratio: f64,
    /// The cell's on-line floor (NaN: none).
    pub floor: f64,
    /// `adapt/b`'s model factor with the cell's `B` (NaN: none).
    pub model: f64,
    /// `adapt/b`'s measured factor (NaN: none).
    pub measured: f64,
}

/// A stationary cell not judged.
#[derive(Clone, Debug, PartialEq)]
pub struct NotJudged {
    /// The cell, by law and scale.
    pub cell: String,
    /// Mean wait, ns.
    pub mean_wait_ns: f64,
    /// The static policies' median ratio to the model.
    pub ratio: f64,
}

/// `adapt/b`'s work per wait beyond a static policy's, which the model
/// does not price: read from the cells where `adapt/b` and `s//inf` both
/// polled every wait, as `adapt/b`'s polling CPU over its wait less the
/// same for `s//inf` (both after the clock reads and the fixed hand-off
/// CPU are removed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveBookkeeping {
    /// Median over those cells, ns per wait.
    pub per_wait_ns: f64,
    /// Least over those cells, ns per wait.
    pub lo_ns: f64,
    /// Most over those cells, ns per wait.
    pub hi_ns: f64,
    /// How many cells.
    pub cells: usize,
    /// `adapt/b`'s mean factor over all its cells with `per_wait_ns` less
    /// per wait that did not block.
    pub mean_factor_without: f64,
}

/// `adapt/b`'s CPU per wait beyond what its model prices, in the cells
/// where it and `/b/0` both blocked nearly every wait
/// (95% of their waits or more): each one's measured cost per wait less
/// its model's on the same waits (`predicted_sample_factor` times the
/// optimum), `adapt/b`'s less `/b/0`'s (whose references price the
/// blocks, so its own is about 0). What is left is the work the model
/// does not see: the wait's start (the summary read, the draw), the
/// polling phase's entry and overshoot beyond the limit drawn, and the
/// record after the wake-up.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveBlockedDeparture {
    /// Median over those cells, ns per wait.
    pub per_wait_ns: f64,
    /// Least over those cells, ns per wait.
    pub lo_ns: f64,
    /// Most over those cells, ns per wait.
    pub hi_ns: f64,
    /// Each cell's `adapt/b` factor, measured and with `per_wait_ns` less
    /// per blocked wait, named by its law and scale.
    pub cells: Vec<(String, f64, f64)>,
}

/// `items` joined by `sep`, at most `max` of them, then "and N more".
fn first_few(items: &[String], max: usize, sep: &str) -> String {
    let mut s = items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(sep);
    if items.len() > max {
        s.push_str(&format!(
            "{sep}and {} more (see the table)",
            items.len() - max
        ));
    }
    s
}

/// A cell by its law and scale: `"uniform U/B=3"`.
fn cell_name(r: &Row) -> String {
    format!("{} {}={}", r.dist.name(), r.dist.scale_label(), r.scale)
}

/// `(least, most)` of `v`: (inf, -inf) when empty.
fn least_most(v: &[f64]) -> (f64, f64) {
    (
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

impl CalibrationResult {
    /// What the run found, in the order the report lists it.
    pub fn findings(&self) -> Vec<CalibrationFinding> {
        let mut n = vec![self.setting()];
        if self.idle_signal != "busy" && self.config.policies.iter().any(|p| p == "adapt/b") {
            n.push(CalibrationFinding::IdleSignalNotBusy {
                signal: self.idle_signal.clone(),
            });
        }
        n.push(self.cost_accounting());
        n.push(self.ordering_finding());
        n.push(self.magnitude());
        if let Some(a) = self.adaptive_finding() {
            n.push(CalibrationFinding::Adaptive(Box::new(a)));
        }
        n.extend(self.departures());
        n
    }

    fn setting(&self) -> CalibrationFinding {
        CalibrationFinding::Setting {
            b_ns: self.block_cost.ns,
            source: self.block_cost.source.clone(),
            placement: self.placement.describe(),
            cpus: self.cpus,
            load_average: self.load_average,
            wall_s: self.wall_s,
        }
    }

    fn cost_accounting(&self) -> CalibrationFinding {
        let b = self.block_cost.ns;
        let cell_b: Vec<f64> = self.measured_rows().map(|r| r.cell_block_ns).collect();
        let wait_b: Vec<f64> = self.measured_rows().map(|r| r.drawn_with_ns(b)).collect();
        CalibrationFinding::CostAccounting {
            clock_overhead_ns: self.cpu_clock_overhead_ns,
            block_cpu_ns: self.block_cpu_ns,
            block_cpu_median_ns: self.block_cpu_median_ns,
            cell_b_ns: least_most(&cell_b),
            process_b_ns: b,
            wait_b_ns: least_most(&wait_b),
            outliers: self.measured_rows().map(|r| r.outliers).sum(),
            waits: self.measured_rows().map(|r| r.rounds).sum(),
            blocked: self
                .measured_rows()
                .map(|r| r.block_fraction * r.rounds as f64)
                .sum(),
        }
    }

    fn ordering_finding(&self) -> CalibrationFinding {
        let decided: usize = self.ordering.iter().map(|o| o.decided_pairs).sum();
        let ties = self.ordering_remarks(|o| &o.ties_within_noise);
        if self.ordering_matches() {
            CalibrationFinding::OrderingMatches { decided, ties }
        } else {
            CalibrationFinding::OrderingDiffers {
                concordant: self.ordering.iter().map(|o| o.concordant_pairs).sum(),
                decided,
                reversed: self.ordering_remarks(|o| &o.violations),
                ties,
            }
        }
    }

    fn magnitude(&self) -> CalibrationFinding {
        let (within, total) = self.within_tolerance();
        let outside = self
            .measured_rows()
            .filter(|r| {
                r.ratio
                    .is_some_and(|q| (q - 1.0).abs() > AGREEMENT_TOLERANCE)
            })
            .map(|r| {
                format!(
                    "{} {} x{:.2}",
                    cell_name(r),
                    r.policy,
                    r.ratio.unwrap_or(f64::NAN)
                )
            })
            .collect();
        CalibrationFinding::Magnitude {
            within,
            total,
            outside,
        }
    }

    /// `adapt/b` against the static policies, when it ran.
    fn adaptive_finding(&self) -> Option<AdaptiveFinding> {
        let all = self.policy_factors();
        let adapt = all.iter().find(|p| p.policy == "adapt/b")?;
        let statics: Vec<&PolicyFactors> = all.iter().filter(|p| p.policy != "adapt/b").collect();
        // The stationary cells where the model lets adapt/b reach the
        // target with the B the cell's blocks cost, and those where it
        // does not.
        let stationary: Vec<&Row> = self
            .measured_rows()
            .filter(|r| r.policy == "adapt/b" && r.dist != CalibrationDist::Switching)
            .collect();
        let reaches = |r: &Row| {
            self.adaptive_with_cell_b(r)
                .is_some_and(|p| p <= STATIONARY_TARGET)
        };
        Some(AdaptiveFinding {
            cells: adapt.cells,
            mean_factor: adapt.mean_factor,
            lowest: statics.iter().all(|p| adapt.mean_factor < p.mean_factor),
            statics: statics
                .iter()
                .map(|p| (p.policy.clone(), p.mean_factor))
                .collect(),
            ahead: statics
                .iter()
                .filter(|p| p.mean_factor <= adapt.mean_factor)
                .map(|p| (p.policy.clone(), p.mean_factor))
                .collect(),
            mean_floor: self.mean_online_floor(),
            worst: adapt.worst_stationary.clone(),
            worst_allowed: self.worst_allowed(&stationary),
            switching: adapt.switching,
            switching_floor: self
                .measured_rows()
                .find(|r| r.policy == "adapt/b" && r.dist == CalibrationDist::Switching)
                .and_then(|r| r.online_floor),
            beyond: stationary
                .iter()
                .filter(|r| !reaches(r))
                .map(|r| BeyondTarget {
                    cell: cell_name(r),
                    b_ratio: r.cell_block_ns / r.drawn_with_ns(self.block_cost.ns),
                    floor: r.online_floor.unwrap_or(f64::NAN),
                    model: self.adaptive_with_cell_b(r).unwrap_or(f64::NAN),
                    measured: r.measured_factor.unwrap_or(f64::NAN),
                })
                .collect(),
            not_judged: stationary
                .iter()
                .filter_map(|r| {
                    Some(NotJudged {
                        cell: cell_name(r),
                        mean_wait_ns: r.mean_wait_ns,
                        ratio: self.unmeasurable(r)?,
                    })
                })
                .collect(),
        })
    }

    /// `adapt/b`'s worst cell of `stationary` where its model, with the
    /// cell's `B`, allows [`STATIONARY_TARGET`] and the cell is judged.
    fn worst_allowed(&self, stationary: &[&Row]) -> Option<WorstAllowed> {
        let allowed = |r: &Row| {
            self.adaptive_with_cell_b(r)
                .is_some_and(|p| p <= STATIONARY_TARGET)
                && self.unmeasurable(r).is_none()
        };
        let (r, factor) = stationary
            .iter()
            .filter(|r| allowed(r))
            .filter_map(|r| Some((*r, r.measured_factor?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        Some(WorstAllowed {
            cell: cell_name(r),
            factor,
            floor: r.online_floor,
            best_static: self.best_static_in(r).map(|(p, f)| (p.to_string(), f)),
        })
    }

    /// What `adapt/b`'s own work per wait costs beside `s//inf`
    /// ([`AdaptiveBookkeeping`]), from the cells where both polled every
    /// wait; `None` without such a cell.
    pub(super) fn adaptive_bookkeeping(&self) -> Option<AdaptiveBookkeeping> {
        let row = |r: &Row, policy: &str| self.cell_mates(r).find(|o| o.policy == policy);
        let polled_all = |r: &Row| r.block_fraction <= POLLED_ALL_FRACTION;
        let mut excess: Vec<f64> = self
            .measured_rows()
            .filter(|r| r.policy == "adapt/b" && polled_all(r))
            .filter_map(|a| {
                let s = row(a, "s//inf").filter(|s| polled_all(s))?;
                Some((a.mean_poll_cpu_ns - a.mean_wait_ns) - (s.mean_poll_cpu_ns - s.mean_wait_ns))
            })
            .collect();
        if excess.is_empty() {
            return None;
        }
        let cells = excess.len();
        let (lo, hi, per_wait_ns) = least_most_median(&mut excess);
        // Every adapt/b row's factor with that much less per polled wait.
        let without: Vec<f64> = self
            .measured_rows()
            .filter(|r| r.policy == "adapt/b" && r.mean_cost_ns > 0.0)
            .filter_map(|r| {
                let f = r.measured_factor?;
                let less = (1.0 - r.block_fraction) * per_wait_ns.max(0.0);
                Some(f * (r.mean_cost_ns - less).max(0.0) / r.mean_cost_ns)
            })
            .collect();
        Some(AdaptiveBookkeeping {
            per_wait_ns,
            lo_ns: lo,
            hi_ns: hi,
            cells,
            mean_factor_without: without.iter().sum::<f64>() / without.len().max(1) as f64,
        })
    }

    /// What `adapt/b` spends beyond its model where it blocks nearly every
    /// wait ([`AdaptiveBlockedDeparture`]); `None` without such a cell
    /// (or without `/b/0` beside it).
    pub(super) fn adaptive_blocked_departure(&self) -> Option<AdaptiveBlockedDeparture> {
        let beyond_model = |r: &Row| {
            let predicted = r.predicted_sample_factor? * r.mean_optimal_ns;
            Some(r.mean_cost_ns - predicted).filter(|d| d.is_finite())
        };
        let mut per_cell = Vec::new();
        for a in self.measured_rows().filter(|r| {
            r.policy == "adapt/b"
                && r.dist != CalibrationDist::Switching
                && r.block_fraction >= BLOCKED_MOST_FRACTION
        }) {
            let Some(b) = self
                .cell_mates(a)
                .find(|o| o.policy == "/b/0" && o.block_fraction >= BLOCKED_MOST_FRACTION)
            else {
                continue;
            };
            if let (Some(da), Some(db)) = (beyond_model(a), beyond_model(b)) {
                per_cell.push((a, da - db));
            }
        }
        if per_cell.is_empty() {
            return None;
        }
        let mut excess: Vec<f64> = per_cell.iter().map(|&(_, d)| d).collect();
        let (lo_ns, hi_ns, per_wait_ns) = least_most_median(&mut excess);
        let cells = per_cell
            .iter()
            .filter_map(|&(r, _)| {
                let f = r.measured_factor?;
                let less = r.block_fraction * per_wait_ns.max(0.0);
                let without = f * (r.mean_cost_ns - less).max(0.0) / r.mean_cost_ns;
                Some((
                    format!("{} {}={}", r.dist.name(), r.dist.scale_label(), r.scale),
                    f,
                    without,
                ))
            })
            .collect();
        Some(AdaptiveBlockedDeparture {
            per_wait_ns,
            lo_ns,
            hi_ns,
            cells,
        })
    }

    /// Where and why reality departs from the model, from the data.
    fn departures(&self) -> Vec<CalibrationFinding> {
        let mut n = Vec::new();
        let b = self.block_cost.ns;
        let cells_where = |keep: &dyn Fn(&Row) -> bool, name: &dyn Fn(&Row) -> String| {
            self.measured_rows()
                .filter(|r| keep(r))
                .map(name)
                .collect::<Vec<String>>()
        };
        // Blocking policies that did not block on short waits: the notify
        // arrived before the futex sleep.
        let cells = cells_where(
            &|r| r.policy == "/b/0" && r.block_fraction < SKIPPED_BLOCK_FRACTION,
            &|r| {
                format!(
                    "{} ({:.0}% blocked)",
                    cell_name(r),
                    100.0 * r.block_fraction
                )
            },
        );
        if !cells.is_empty() {
            n.push(CalibrationFinding::BlockSkipped { cells });
        }
        // Late producer: the wait that happened is longer than the one drawn.
        let cells = cells_where(
            &|r| r.mean_wait_ns > r.mean_drawn_wait_ns + LATE_IN_B * b,
            &|r| {
                let late = r.mean_wait_ns - r.mean_drawn_wait_ns;
                format!("{} {} (+{late:.0} ns)", cell_name(r), r.policy)
            },
        );
        if !cells.is_empty() {
            n.push(CalibrationFinding::LateProducer { cells });
        }
        // Polling that burned less CPU than wall time: the consumer was preempted.
        let cells = cells_where(
            &|r| {
                r.policy == "s//inf"
                    && r.mean_wait_ns > 0.0
                    && r.mean_poll_cpu_ns < PREEMPTED_CPU_FRACTION * r.mean_wait_ns
            },
            &|r| {
                let on_cpu = 100.0 * r.mean_poll_cpu_ns / r.mean_wait_ns;
                format!("{} ({on_cpu:.0}% of the wait on CPU)", cell_name(r))
            },
        );
        if !cells.is_empty() {
            n.push(CalibrationFinding::PreemptedPolling { cells });
        }
        n.extend(self.block_cost_departures());
        n.extend(self.adaptive_departures());
        n.push(CalibrationFinding::NotInModel {
            clock_overhead_ns: self.cpu_clock_overhead_ns,
        });
        n
    }

    /// Departures of `B` and of the CPU a block and a hand-off cost.
    fn block_cost_departures(&self) -> Vec<CalibrationFinding> {
        let mut n = Vec::new();
        let b = self.block_cost.ns;
        if let BlockCostSource::Measured {
            futex_round_trip_ns,
            spin_round_trip_ns,
        } = self.block_cost.source
        {
            if spin_round_trip_ns >= futex_round_trip_ns {
                n.push(CalibrationFinding::BlockCostOnBusyMachine {
                    spin_round_trip_ns,
                    futex_round_trip_ns,
                });
            }
        }
        if self.block_cpu_ns > BLOCK_CPU_IN_B * b {
            n.push(CalibrationFinding::BlockCpuAboveB {
                block_cpu_ns: self.block_cpu_ns,
                b_ns: b,
            });
        }
        // Fixed cost of a hand-off: the at-once references' CPU beyond the
        // wait itself (call path, clock stamps, the cache misses that carry
        // the notify), subtracted from polled waits.
        let hand_offs: Vec<f64> = self.measured_rows().map(|r| r.hand_off_cpu_ns).collect();
        if let (Some(lo_ns), Some(hi_ns)) = (
            hand_offs.iter().copied().reduce(f64::min),
            hand_offs.iter().copied().reduce(f64::max),
        ) {
            n.push(CalibrationFinding::HandOffCpu { lo_ns, hi_ns });
        }
        n
    }

    /// Departures of `adapt/b`'s own work, around polls and around blocks.
    fn adaptive_departures(&self) -> Vec<CalibrationFinding> {
        let mut n = Vec::new();
        if let Some(bookkeeping) = self.adaptive_bookkeeping() {
            let measured = self
                .policy_factors()
                .into_iter()
                .find(|p| p.policy == "adapt/b")
                .map_or(f64::NAN, |p| p.mean_factor);
            n.push(CalibrationFinding::AdaptiveBookkeeping {
                bookkeeping,
                measured,
            });
        }
        if let Some(k) = self.adaptive_blocked_departure() {
            n.push(CalibrationFinding::AdaptiveBlocked(k));
        }
        n
    }
}

impl fmt::Display for CalibrationFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Setting {
                b_ns,
                source,
                placement,
                cpus,
                load_average,
                wall_s,
            } => {
                let source = source_words(source);
                let load = load_average.map_or("unknown".into(), |l| format!("{l:.2}"));
                write!(f, "B = {b_ns:.0} ns ({source}). Placement: {placement}. {cpus} CPU(s), load average {load} at start; run took {wall_s:.1} s.")
            }
            Self::IdleSignalNotBusy { signal } => write!(f, "Departure: adapt/b's idle-CPU signal was {signal} in this run, not pinned to busy as `waitwise model calibrate` pins it by default: where the signal said idle (on a quiet machine, whenever the producer and the consumer are the only runnable threads), adapt/b polled on past its limit, up to 200 us, and those polls are charged here. That is outside the cost model's regime, so adapt/b's factors are not the model's and not comparable with a default run."),
            Self::CostAccounting {
                clock_overhead_ns,
                block_cpu_ns,
                block_cpu_median_ns,
                cell_b_ns,
                process_b_ns: b,
                wait_b_ns,
                outliers,
                waits,
                blocked,
            } => write!(f, "Cost accounting: thread CPU across each wait, less {clock_overhead_ns:.0} ns of clock reads, less the kernel CPU per block (already part of B) that reference /b/0 waits interleaved with each cell measured: {block_cpu_ns:.0} ns on average over the cells (median {block_cpu_median_ns:.0} ns), plus the cell's own B per block (measured beside it by the references: {:.0}-{:.0} ns; the process's B, which set the poll limits, is {b:.0} ns; the cells' waits were drawn in units of {:.0}-{:.0} ns, the B their references cost as they ran, from their pilots' on, never less than the process's). Outliers are counted at a cap, in the references and the cells alike: a block at its poll limit plus the references' 99th percentile, a polled wait at its length plus the hand-off references' 99th percentile ({outliers} of {waits} waits, {blocked:.0} of which blocked).", cell_b_ns.0, cell_b_ns.1, wait_b_ns.0, wait_b_ns.1),
            Self::OrderingMatches { decided, ties } => write!(f, "Ordering: MATCHES the model: all {decided} policy pairs the model separates by more than 10% are measured in the same order (near-ties are not judged).{}", tie_words(ties)),
            Self::OrderingDiffers {
                concordant,
                decided,
                reversed,
                ties,
            } => write!(f, "Ordering: does NOT fully match the model: {concordant} of {decided} decided pairs agree; reversed beyond noise: {}.{}", first_few(reversed, 5, "; "), tie_words(ties)),
            Self::Magnitude {
                within,
                total,
                outside,
            } => {
                if outside.is_empty() {
                    write!(f, "Magnitude: all {total} cells sit within 25% of the model's prediction on the same waits.")
                } else {
                    write!(f, "Magnitude: {within} of {total} cells sit within 25% of the model's prediction; outside: {}.", first_few(outside, 8, ", "))
                }
            }
            Self::Adaptive(a) => a.fmt(f),
            Self::BlockSkipped { cells } => write!(f, "Departure: /b/0 did not always sleep where waits are short ({}): the notify landed between registering and the futex sleep, so the waiter returned without paying B. The model charges B for every wait; reality is cheaper there.", first_few(cells, 5, ", ")),
            Self::LateProducer { cells } => write!(f, "Departure: the producer released late in {} cell(s) ({}): it was descheduled or shared a CPU with the polling consumer on a loaded machine. Factors use the waits that happened, so this shifts the law, not the comparison.", cells.len(), first_few(cells, 4, ", ")),
            Self::PreemptedPolling { cells } => write!(f, "Departure: the always-spinning consumer was off its CPU for part of long waits ({}): the loaded machine preempted it, so real polling cost less than the model's t.", first_few(cells, 4, ", ")),
            Self::BlockCostOnBusyMachine {
                spin_round_trip_ns,
                futex_round_trip_ns,
            } => write!(f, "Departure: B itself was measured on a busy machine: the polling round trip ({spin_round_trip_ns:.0} ns) was slower than the futex one ({futex_round_trip_ns:.0} ns), so a polling partner was descheduled and B fell back to half a futex round trip. That B is small next to the fixed costs of a wait and of a block, and the cells are noisier than with a clean B: rerun on a quieter machine."),
            Self::BlockCpuAboveB { block_cpu_ns, b_ns: b } => write!(f, "Departure: one block burns {block_cpu_ns:.0} ns of the waiter's CPU in the kernel, {:.1}x the measured B of {b:.0} ns. B is measured as a hand-off latency (futex round trip over polling round trip), and on this machine it understates what a block costs in CPU; with B this small, the policies' poll limits alpha*B are short too.", block_cpu_ns / b),
            Self::HandOffCpu { lo_ns: lo, hi_ns: hi } => write!(f, "Departure: a hand-off costs {lo:.0}-{hi:.0} ns of CPU beyond the wait itself (s//inf references released at once, interleaved with each cell): the wait call, the profiler's clock reads and the cache misses that carry the notify. The model prices a polled wait at exactly t and has no such term; it is subtracted from every wait that did not block, like the clock reads. Cells whose waits are short next to it (U/B and 1/(lambda*B) small) are the most sensitive to its drift."),
            Self::AdaptiveBookkeeping {
                bookkeeping: k,
                measured,
            } => write!(f, "Departure: adapt/b's own work per wait (two cycle-clock reads, its draw and its summary update) is not in the model. In the {} cell(s) where adapt/b and s//inf both polled every wait, adapt/b burned {:.0} ns more per wait than s//inf (median; {:.0} to {:.0}). It weighs most where waits last a few hundred ns (a small B, e.g. the fast wake-up mode of a VM), which is where s//inf can lead adapt/b's mean factor; less that much per polled wait, adapt/b's mean factor would be {:.3} (measured {measured:.3}).", k.cells, k.per_wait_ns, k.lo_ns, k.hi_ns, k.mean_factor_without),
            Self::AdaptiveBlocked(k) => {
                let cells: Vec<String> = k
                    .cells
                    .iter()
                    .map(|(name, f, without)| format!("{name} {f:.3} -> {without:.3}"))
                    .collect();
                write!(f, "Departure: where blocking is nearly optimal, adapt/b's work before and after each block is not in the model either. In the {} cell(s) where adapt/b and /b/0 both blocked at least {:.0}% of their waits, adapt/b's cost per wait beyond its model exceeded /b/0's by {:.0} ns (median; {:.0} to {:.0}): the wait's start (the summary read, the draw), the polling phase's entry and its overshoot beyond the short limit drawn, and the record after the wake-up, run cold after a sleep. Less that much per blocked wait, its factor in those cells would be {}.", k.cells.len(), BLOCKED_MOST_FRACTION * 100.0, k.per_wait_ns, k.lo_ns, k.hi_ns, cells.join(", "))
            }
            Self::NotInModel { clock_overhead_ns } => write!(f, "Not in the model: the wake-up latency after a block (the waiter's delay, not its CPU: it is not counted here), clock-read granularity ({clock_overhead_ns:.0} ns per pair of thread CPU-time reads, subtracted), and the variation of a block's cost within a cell (each cell uses the mean B of its own references, which sleep as long as its waits, not as long as its blocked waits sleep; a block that sleeps only briefly, or whose notify arrives while it registers, costs less, which shows most where few waits block, e.g. rand/b at small U/B)."),
        }
    }
}

/// Where `B` came from, in words.
fn source_words(source: &BlockCostSource) -> String {
    match source {
        BlockCostSource::Measured {
            futex_round_trip_ns,
            spin_round_trip_ns,
        } => {
            format!("measured: futex round trip {futex_round_trip_ns:.0} ns, polling round trip {spin_round_trip_ns:.0} ns")
        }
        BlockCostSource::Environment => "from WAITWISE_BLOCK_NS".into(),
        BlockCostSource::MachineProfile { path } => format!("from the machine profile {path}"),
        BlockCostSource::Fallback => "fallback constant: the measurement could not run".into(),
        BlockCostSource::Learned { samples } => {
            format!("learned from {samples} wake-ups of this process")
        }
    }
}

/// The sentence on pairs reversed within noise, or nothing.
fn tie_words(ties: &[String]) -> String {
    if ties.is_empty() {
        return String::new();
    }
    format!(
        " {} of them are measured the other way by less than {REVERSAL_Z} standard errors, a tie within noise: {}.",
        ties.len(),
        first_few(ties, 3, "; ")
    )
}

/// `"within"` or `"NOT within"`.
fn within(ok: bool) -> &'static str {
    if ok {
        "within"
    } else {
        "NOT within"
    }
}

impl fmt::Display for AdaptiveFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let statics: Vec<String> = self
            .statics
            .iter()
            .map(|(p, m)| format!("{p} {m:.3}"))
            .collect();
        write!(
            f,
            "Adaptive: adapt/b's mean measured factor over {} cells is {:.3}, {} every static policy's ({}).",
            self.cells,
            self.mean_factor,
            if self.lowest { "below" } else { "NOT below" },
            statics.join(", "),
        )?;
        self.fmt_against_floor(f)?;
        let worst = self
            .worst
            .as_ref()
            .map_or("no stationary cell".into(), |(c, m)| {
                format!("{m:.3} ({c})")
            });
        let worst_allowed = self.worst_allowed.as_ref().map_or("none".into(), |w| {
            format!(
                "{:.3} ({}; {} {STATIONARY_TARGET}{}{})",
                w.factor,
                w.cell,
                within(w.factor <= STATIONARY_TARGET),
                w.floor
                    .map_or(String::new(), |floor| format!("; floor {floor:.3}")),
                w.best_static
                    .as_ref()
                    .map_or(String::new(), |(p, b)| format!(
                        ", the cell's best static policy {p} measured {b:.3}"
                    ))
            )
        });
        write!(f, " Its worst stationary cell {worst}; its worst stationary cell where its model, with the B the cell's blocks cost, allows {STATIONARY_TARGET} {worst_allowed}; the switching cell (lambda*B {} and {} every {SWITCHING_PERIOD} waits) {}.", SWITCHING_SCALES[0], SWITCHING_SCALES[1], self.switching_words())?;
        self.fmt_cells(f)?;
        write!(f, " A cell's waits are drawn in units of the B its references cost as it runs (from its pilot's on), so where its blocks still cost more or less, its real lambda*B or U/B is its scale times that ratio; the floor is the least factor any on-line policy can expect there (the best poll limit for the law, known in advance; e/(e-1) = 1.58 at a real exponential lambda*B of 1), and on long waits adapt/b blocks at once (/b/0, B per wait) while its object's credit pays for that, else runs {}, which costs {:.3} B there: the price of its worst case, {:.1} on any sequence.", arm_name(CREDIT_FALLBACK_ARM), arm_cost(CREDIT_FALLBACK_ARM, f64::INFINITY), WORST_CASE_FACTOR)
    }
}

impl AdaptiveFinding {
    /// The switching cell's factor against its target and floor.
    fn switching_words(&self) -> String {
        self.switching.map_or("not measured".into(), |m| {
            format!(
                "{m:.3} ({} {SWITCHING_TARGET}{})",
                within(m <= SWITCHING_TARGET),
                self.switching_floor.map_or(String::new(), |floor| format!(
                    "; floor {floor:.3} with each phase's B{}",
                    if floor > SWITCHING_TARGET {
                        ", beyond it for any on-line policy"
                    } else {
                        ""
                    }
                ))
            )
        })
    }

    /// Where a static policy is ahead, how close it runs to what any
    /// on-line policy can expect.
    fn fmt_against_floor(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (false, Some(floor)) = (self.ahead.is_empty(), self.mean_floor) else {
            return Ok(());
        };
        let ahead: Vec<String> = self
            .ahead
            .iter()
            .map(|(p, m)| format!("{p} {m:.3} ({:+.3} from the mean floor)", m - floor))
            .collect();
        let names: Vec<&str> = self.ahead.iter().map(|(p, _)| p.as_str()).collect();
        write!(f, " Ahead of it: {}. The mean of the cells' on-line floors is {floor:.3}: no on-line policy can expect a lower mean, even told each cell's law in advance and learning for free, so to be below {} a policy must run at the floor in every cell", ahead.join(", "), names.join(" and "))?;
        if self.ahead.iter().any(|(_, m)| *m < floor + FLOOR_TIE) {
            write!(f, " (within {FLOOR_TIE} of the floor, such a policy is at it: no choice of poll limits could save anything on these waits, and what adapt/b spends on learning, the bookkeeping departure below, decides)")?;
        }
        f.write_str(".")
    }

    /// The cells beyond the target, and those not judged.
    fn fmt_cells(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let beyond: Vec<String> = self
            .beyond
            .iter()
            .map(|c| format!("{} (its B {:.2}x the B its waits were drawn with: floor {:.3}, adapt/b's model {:.3}, measured {:.3})", c.cell, c.b_ratio, c.floor, c.model, c.measured))
            .collect();
        let beyond = if beyond.is_empty() {
            "none here".to_string()
        } else {
            beyond.join(", ")
        };
        write!(f, " Cells where adapt/b's model with the cell's B is beyond {STATIONARY_TARGET}: {beyond}.")?;
        if self.not_judged.is_empty() {
            return Ok(());
        }
        let not_judged: Vec<String> = self
            .not_judged
            .iter()
            .map(|c| {
                format!(
                    "{} (mean wait {:.0} ns; the static policies {:+.0}% off the model, median)",
                    c.cell,
                    c.mean_wait_ns,
                    100.0 * (c.ratio - 1.0)
                )
            })
            .collect();
        write!(f, " Cells not judged, where the static policies measured more than {:.0}% off the model on the same waits (the measurement fails there, not a policy; adapt/b's own work per wait is in the departures below): {}.", 100.0 * MEASUREMENT_TOLERANCE, not_judged.join(", "))
    }
}
