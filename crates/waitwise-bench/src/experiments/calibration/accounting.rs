//! What a cell's CPU times are corrected by ([`CellPrices`]): the clock
//! reads, the kernel's CPU per block ([`BlockCpu`]), the fixed CPU of a
//! hand-off ([`HandOffCpu`]) and the `B` measured beside the cell
//! ([`cell_block_cost_ns`]), all from the references interleaved with it.

use super::sample::Sample;

/// The kernel's CPU per futex sleep + wake from reference samples (the
/// blocked ones, clock cost removed).
#[derive(Clone, Copy, Debug)]
pub(super) struct BlockCpu {
    /// Mean with every sample capped at `cap`: what is subtracted per block.
    /// A mean, not a median: the expected cost is what the model speaks of,
    /// and a median would leave the skew of the block path in the "polling"
    /// CPU.
    pub(super) mean_ns: f64,
    /// Median.
    pub(super) median_ns: f64,
    /// The references' [`KERNEL_CAP_QUANTILE`] quantile: a block whose
    /// kernel path burns more met a host hiccup, which hits a cell's mean
    /// at random; references and
    /// cells are capped alike.
    pub(super) cap_ns: f64,
}

/// Quantile of the reference blocks' CPU above which a block's kernel CPU
/// is capped. Guessed: high enough to keep the ordinary spread of the
/// kernel path, low enough to cap host stalls of a millisecond, which are
/// rarer than one block in a hundred.
pub(super) const KERNEL_CAP_QUANTILE: f64 = 0.99;

/// The fixed CPU of a hand-off beyond the wait itself, from the `s//inf`
/// references released at once: the median of `cpu - clock - wait`, at
/// least 0. Subtracted from every wait that did not block (a blocked wait's
/// call path is inside the block references' CPU already). The median, not
/// the mean: what is fixed per wait is the typical call path; an interrupt
/// that lands in a wait costs in proportion to the wait's length, and a
/// zero-length reference that happened to take one would be subtracted
/// from every short wait.
#[derive(Clone, Copy, Debug)]
pub(super) struct HandOffCpu {
    /// Median CPU beyond the wait: what is subtracted per polled wait.
    pub(super) median_ns: f64,
    /// The references' [`KERNEL_CAP_QUANTILE`] quantile of the same: a
    /// polled wait that burned more than its length plus this was charged
    /// for time its vCPU did not run (a host preemption), counted at it.
    pub(super) cap_ns: f64,
}

/// The median of `v` (the upper one of an even count; 0 when empty;
/// sorts it).
pub(super) fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The least, the most and the median of `v` (not empty; sorts it).
pub(super) fn least_most_median(v: &mut [f64]) -> (f64, f64, f64) {
    let (lo, hi) = (
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    (lo, hi, median(v))
}

/// Sorts `v` and returns its [`KERNEL_CAP_QUANTILE`] quantile (infinity
/// when empty).
pub(super) fn cap_quantile(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len().max(1) - 1) as f64 * KERNEL_CAP_QUANTILE) as usize)
        .copied()
        .unwrap_or(f64::INFINITY)
}

pub(super) fn hand_off_cpu_ns(reference: &[Sample], overhead_ns: f64) -> HandOffCpu {
    let mut beyond: Vec<f64> = reference
        .iter()
        .map(|s| (s.cpu_ns - overhead_ns - s.wait_ns).max(0.0))
        .collect();
    let cap_ns = cap_quantile(&mut beyond);
    HandOffCpu {
        median_ns: median(&mut beyond),
        cap_ns,
    }
}

pub(super) fn block_cpu_ns(reference: &[Sample], overhead_ns: f64) -> BlockCpu {
    let mut cpu: Vec<f64> = reference
        .iter()
        .filter(|s| s.blocked)
        .map(|s| (s.cpu_ns - overhead_ns).max(0.0))
        .collect();
    let cap_ns = cap_quantile(&mut cpu);
    let mean_ns = cpu.iter().map(|&c| c.min(cap_ns)).sum::<f64>() / cpu.len().max(1) as f64;
    BlockCpu {
        mean_ns,
        median_ns: median(&mut cpu),
        cap_ns,
    }
}

/// `B` while a cell ran: the mean wake-up latency of its `/b/0` references
/// that blocked (the top 1% counted at the 99th percentile) less the median
/// of its at-once references (a polling hand-off), which is how
/// `waitwise::policy::block_cost` defines `B` (futex round trip less
/// polling round trip, halved), measured beside the cell. `None` without
/// blocked references.
pub(super) fn cell_block_cost_ns(block_refs: &[Sample], hand_off_refs: &[Sample]) -> Option<f64> {
    let mut sleeps: Vec<f64> = block_refs
        .iter()
        .filter(|s| s.blocked)
        .map(|s| s.wake_latency_ns)
        .collect();
    if sleeps.is_empty() {
        return None;
    }
    let cap = cap_quantile(&mut sleeps);
    let futex = sleeps.iter().map(|&l| l.min(cap)).sum::<f64>() / sleeps.len() as f64;
    let mut polls: Vec<f64> = hand_off_refs.iter().map(|s| s.wake_latency_ns).collect();
    let polling = if polls.is_empty() {
        0.0
    } else {
        median(&mut polls)
    };
    Some((futex - polling).max(waitwise::policy::block_cost::MIN_MEASURED_BLOCK_NS))
}

/// What a cell's waits are priced with: `B`, the clock reads, and the
/// references measured beside the cell.
#[derive(Clone, Copy, Debug)]
pub(super) struct CellPrices {
    /// The process's block cost `B` (the policies' poll limits follow it), ns.
    pub(super) b: f64,
    /// `B` while the cell ran ([`cell_block_cost_ns`]), ns: what a block
    /// costs in the measurement, the optimum and the prediction.
    pub(super) b_cell: f64,
    /// Two `thread_cpu_time` reads, ns.
    pub(super) clock_overhead: f64,
    /// The kernel's CPU per block.
    pub(super) block_cpu: BlockCpu,
    /// The fixed CPU of a hand-off.
    pub(super) hand_off: HandOffCpu,
}

impl CellPrices {
    /// The prices of one cell (or one phase of the switching cell) from
    /// its block references `refs` and at-once references `hand_offs`.
    pub(super) fn from_references(
        refs: &[Sample],
        hand_offs: &[Sample],
        b: f64,
        overhead: f64,
    ) -> Self {
        Self {
            b,
            b_cell: cell_block_cost_ns(refs, hand_offs).unwrap_or(b),
            clock_overhead: overhead,
            block_cpu: block_cpu_ns(refs, overhead),
            hand_off: hand_off_cpu_ns(hand_offs, overhead),
        }
    }
}
