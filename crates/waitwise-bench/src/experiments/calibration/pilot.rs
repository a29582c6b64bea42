//! The pilot of a cell ([`Group::pilot_block_costs`]): short runs of its
//! whole cycle that find what its blocks cost before it is measured.

use super::accounting::cell_block_cost_ns;
use super::cells::{dist_laws_scaled, draw_waits, CellWaits, DRAWN_B_RANGE};
use super::config::CalibrationDist;
use super::measurement::measure;
use super::sample::{assign_phases, Sample};
use crate::placement::PairPlacement;
use std::time::{Duration, Instant};
use waitwise::policy::Policy;

/// Measured cycles of each pilot pass of a stationary cell
/// ([`Group::pilot_block_costs`]); a switching cell's one pass runs one
/// period of each law. Chosen: a mean wake-up latency within a few %
/// when the references spread by half their mean, for a tenth of a quick
/// run's 1000-round cell per pass.
pub(super) const PILOT_ROUNDS: usize = 100;

/// Cycles each pilot pass runs first and drops, at most (the cell's own
/// warm-up, if shorter). Guessed: the passes follow each other, so only
/// the first starts cold.
pub(super) const PILOT_WARMUP: usize = 20;

/// Pilot passes per stationary cell: each draws its waits with the `B`
/// the last one measured, so a later one measures blocks after sleeps of
/// about the lengths the cell will sleep (sleeps longer than the
/// back-to-back hand-offs `B` is measured with wake up slower). Chosen: the
/// estimate still moves from the second pass to the third, and the cell
/// follows its own references from there (`TrackedBlockCost`).
pub(super) const PILOT_PASSES: usize = 3;

/// One (law, scale) group's fixed settings, for its pilot.
pub(super) struct Group<'a> {
    pub(super) dist: CalibrationDist,
    pub(super) scale: f64,
    pub(super) policies: &'a [Policy],
    pub(super) warmup: usize,
    pub(super) placement: &'a PairPlacement,
    /// The process's `B`, ns.
    pub(super) process_b: f64,
}

impl Group<'_> {
    /// The `B` each law of the cell is drawn with, ns: what the cell's
    /// blocks cost, measured by [`PILOT_PASSES`] short runs of the whole
    /// cycle (every policy and both references, as the cell runs, so the
    /// CPU sleeps and polls as it will), the first with the process's `B`,
    /// each next one with the last one's, never less than the process's
    /// nor more than [`DRAWN_B_RANGE`] times it (a switching cell: one pass,
    /// a period of each law). The process's `B` is measured with
    /// back-to-back hand-offs (short sleeps); a cell sleeps as long as its
    /// law says, and on a VM a longer sleep wakes slower, so without a
    /// pilot a cell would run at a smaller real `U/B` than its label
    /// (module docs, "The scale of a cell"). A law whose pilot saw no
    /// block keeps the last `B`. Each pass stops at `share / 8` (after the
    /// warm-up and `MIN_ROUNDS` cycles).
    pub(super) fn pilot_block_costs(&self, seed: u64, stream: u64, share: Duration) -> Vec<f64> {
        let b = self.process_b;
        let Ok((laws, period)) = self.dist.laws(self.scale, b) else {
            return vec![b];
        };
        let n_laws = laws.len().max(1);
        let (rounds, passes) = if n_laws > 1 {
            (period * n_laws, 1)
        } else {
            (PILOT_ROUNDS, PILOT_PASSES)
        };
        let warmup = self.warmup.min(PILOT_WARMUP);
        let mut wait_b = vec![b; n_laws];
        for pass in 0..passes {
            let Ok((laws, _)) = dist_laws_scaled(self.dist, self.scale, &wait_b) else {
                break;
            };
            // A stream of its own: the cell's waits are the seed's.
            let pilot_stream = stream + 1_000_000 * (pass as u64 + 1);
            let waits = draw_waits(&laws, period, warmup + rounds, seed, pilot_stream);
            let mut measured = measure(
                self.policies,
                &CellWaits::new(&waits, &wait_b, period, b),
                warmup,
                self.placement,
                Instant::now() + share / 8,
            );
            assign_phases(&mut measured, warmup, period, n_laws);
            let (Some(hand_off), Some(reference)) = (measured.pop(), measured.pop()) else {
                break;
            };
            for (p, slot) in wait_b.iter_mut().enumerate() {
                let of_phase = |v: &[Sample]| -> Vec<Sample> {
                    v.iter().filter(|s| s.phase == p).copied().collect()
                };
                let (refs, hands) = (of_phase(&reference.samples), of_phase(&hand_off.samples));
                if let Some(cell_b) = cell_block_cost_ns(&refs, &hands) {
                    // max then min, not clamp: no panic on a bad B.
                    *slot = cell_b.max(b).min(b * DRAWN_B_RANGE);
                }
            }
        }
        wait_b
    }
}
