//! A cell's waits: drawn from its laws in units of a `B` ([`CellWaits`],
//! [`draw_waits`]), and the `B` they followed ([`followed_block_costs`]).

use super::config::CalibrationDist;
use super::sample::Sample;
use waitwise_model::distribution::WaitDistribution;
use waitwise_model::rng::Rng;

/// A cell's waits are drawn in units of a `B` at most the process's `B`
/// times this, whatever its pilot and its references measured (a host
/// stall must not stretch a cell's waits a hundredfold). Chosen: above
/// the ratio of a cell's blocks to the process's `B` on a VM whose host
/// polls halted vCPUs briefly (an order of magnitude), with a margin, so
/// the bound holds only a stall.
pub(super) const DRAWN_B_RANGE: f64 = 32.0;

/// A cell's drawn waits and the `B` they follow while it runs.
pub(super) struct CellWaits<'a> {
    /// Each cycle's wait, ns, drawn with the `B` of its law in
    /// `drawn_b_ns`.
    pub(super) drawn_ns: &'a [f64],
    /// The `B` each law's waits were drawn with, ns (the last one for
    /// laws past its end); each law's tracked `B` starts from it.
    pub(super) drawn_b_ns: &'a [f64],
    /// Cycles per law: cycle `r` is of law `(r / period) % drawn_b_ns.len()`.
    pub(super) period: usize,
    /// The tracked `B`'s bounds, ns: the process's `B` and
    /// [`DRAWN_B_RANGE`] times it.
    pub(super) least_b_ns: f64,
    pub(super) most_b_ns: f64,
}

impl<'a> CellWaits<'a> {
    /// `drawn_ns`, drawn with `drawn_b_ns`, `period` cycles per law, in a
    /// process whose `B` is `process_b_ns` (the tracked `B`'s least, and
    /// [`DRAWN_B_RANGE`] times it its most).
    pub(super) fn new(
        drawn_ns: &'a [f64],
        drawn_b_ns: &'a [f64],
        period: usize,
        process_b_ns: f64,
    ) -> Self {
        Self {
            drawn_ns,
            drawn_b_ns,
            period,
            least_b_ns: process_b_ns,
            most_b_ns: process_b_ns * DRAWN_B_RANGE,
        }
    }

    /// The law (phase) of cycle `r`.
    pub(super) fn phase(&self, r: usize) -> usize {
        (r / self.period.max(1)) % self.drawn_b_ns.len().max(1)
    }

    /// The `B` law `phase`'s waits were drawn with, ns.
    pub(super) fn drawn_b(&self, phase: usize) -> f64 {
        self.drawn_b_ns
            .get(phase)
            .or(self.drawn_b_ns.last())
            .copied()
            .unwrap_or(1.0)
    }
}

/// The mean `B` each law's measured waits were drawn in units of
/// ([`TrackedBlockCost`]), from the samples of one event (every event
/// waits every cycle), ns; `start_b[p]` for a law with no sample.
pub(super) fn followed_block_costs(samples: &[Sample], start_b: &[f64]) -> Vec<f64> {
    start_b
        .iter()
        .enumerate()
        .map(|(p, &start)| {
            let (sum, n) = samples
                .iter()
                .filter(|s| s.phase == p)
                .fold((0.0, 0usize), |(sum, n), s| (sum + s.wait_b_ns, n + 1));
            if n == 0 {
                start
            } else {
                sum / n as f64
            }
        })
        .collect()
}

/// The laws of a cell (as [`CalibrationDist::laws`]) with law `p` scaled
/// with `wait_b[p]` (the last of `wait_b` for laws past its end).
pub(super) fn dist_laws_scaled(
    dist: CalibrationDist,
    scale: f64,
    wait_b: &[f64],
) -> waitwise_model::error::Result<(Vec<WaitDistribution>, usize)> {
    let b_of = |p: usize| wait_b.get(p).or(wait_b.last()).copied().unwrap_or(1.0);
    let (mut laws, period) = dist.laws(scale, b_of(0))?;
    for (p, law) in laws.iter_mut().enumerate().skip(1) {
        *law = dist.laws(scale, b_of(p))?.0.swap_remove(p);
    }
    Ok((laws, period))
}

/// `n` waits, ns: wait `i` from `laws[(i / period) % laws.len()]`, drawn
/// from the `stream` of `seed`.
pub(super) fn draw_waits(
    laws: &[WaitDistribution],
    period: usize,
    n: usize,
    seed: u64,
    stream: u64,
) -> Vec<f64> {
    if laws.is_empty() {
        return Vec::new();
    }
    let mut rng = Rng::stream(seed, stream);
    (0..n)
        .map(|i| laws[(i / period.max(1)) % laws.len()].sample(&mut rng))
        .collect()
}
