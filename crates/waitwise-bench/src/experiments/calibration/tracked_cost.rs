//! [`TrackedBlockCost`]: the `B` a cell's blocks cost, followed cycle by
//! cycle while the cell runs.

/// The `B` a cell's blocks cost, followed cycle by cycle while it runs,
/// so that its waits stay in units of it: a cycle's wait is its drawn wait
/// stretched by this `B` over the one it was drawn with. A pilot finds
/// where a cell starts, but on a VM the cost of a block keeps moving with
/// the sleeps (the host's halt polling adapts to them), and a cell whose
/// blocks cost more than its waits were drawn with runs at a smaller real
/// `U/B` than its label, where the least factor any on-line policy can
/// expect is higher.
/// The same estimate as [`cell_block_cost_ns`], as moving means: a
/// reference `/b/0` wait's wake-up latency less that of the at-once
/// reference. The `/b/0` mean is a plain mean of the pilot's `B` and the
/// references so far until it spans [`TRACKING_SPAN`] of them, a moving
/// one after: quick to find the cell's level, slow to follow its swings.
/// A cell is priced with one `B` (the mean of its references), so waits
/// that followed every swing would be a mix of scales, harder than the
/// law its floor is taken from: the span is long so that the waits follow
/// the drift, not the swings.
#[derive(Clone, Copy, Debug)]
pub(super) struct TrackedBlockCost {
    /// Mean of the pilot's `B` and the `/b/0` references' wake-up
    /// latencies, ns (moving past [`TRACKING_SPAN`] of them).
    pub(super) block_latency_ns: f64,
    /// `/b/0` references counted so far (up to [`TRACKING_SPAN`]).
    pub(super) blocks: u32,
    /// Moving mean of the at-once references' wake-up latency, ns; `None`
    /// before the first one.
    pub(super) hand_off_latency_ns: Option<f64>,
    pub(super) least_ns: f64,
    pub(super) most_ns: f64,
}

/// The number of references [`TrackedBlockCost`]'s means span at most
/// (one reference weighs `1 / TRACKING_SPAN` in the moving mean). Chosen:
/// about a tenth of a 3000-cycle cell, so that its `B` follows the drift from
/// its pilot's over the cell, not the swings of a few dozen cycles (see
/// [`TrackedBlockCost`]).
pub(super) const TRACKING_SPAN: u32 = 256;

/// Weight of one at-once reference in [`TrackedBlockCost`]'s mean of
/// them. Guessed: their latency is a few hundred ns against a `B` of
/// tens of µs, so its noise hardly moves `B`.
pub(super) const HAND_OFF_WEIGHT: f64 = 1.0 / 32.0;

/// A `/b/0` reference's wake-up latency counts at most this many times
/// [`TrackedBlockCost`]'s mean (a host stall must not stretch the next
/// cycles' waits). Guessed, like the 99th-percentile cap of
/// [`cell_block_cost_ns`].
pub(super) const TRACKING_OUTLIER: f64 = 8.0;

impl TrackedBlockCost {
    /// Starts at `b_ns`; [`Self::b`] stays within `[least_ns, most_ns]`.
    pub(super) fn new(b_ns: f64, least_ns: f64, most_ns: f64) -> Self {
        Self {
            block_latency_ns: b_ns,
            blocks: 0,
            hand_off_latency_ns: None,
            least_ns,
            most_ns,
        }
    }

    /// The `B` to draw the next cycle's wait in units of, ns.
    pub(super) fn b(&self) -> f64 {
        let b = self.block_latency_ns - self.hand_off_latency_ns.unwrap_or(0.0);
        // max then min, not clamp: no panic on bad bounds.
        b.max(self.least_ns).min(self.most_ns)
    }

    /// An at-once reference woke `latency_ns` after its notify.
    pub(super) fn hand_off(&mut self, latency_ns: f64) {
        match &mut self.hand_off_latency_ns {
            Some(mean) => *mean += (latency_ns - *mean) * HAND_OFF_WEIGHT,
            None => {
                // The first one. The block latency started as a `B`, which
                // is a latency less this.
                self.hand_off_latency_ns = Some(latency_ns);
                self.block_latency_ns += latency_ns;
            }
        }
    }

    /// A `/b/0` reference blocked and woke `latency_ns` after its notify.
    pub(super) fn block(&mut self, latency_ns: f64) {
        let capped = latency_ns.min(TRACKING_OUTLIER * self.block_latency_ns);
        // The pilot's B counts as one reference.
        self.blocks = (self.blocks + 1).min(TRACKING_SPAN);
        let weight = 1.0 / f64::from(self.blocks + 1).min(f64::from(TRACKING_SPAN));
        self.block_latency_ns += (capped - self.block_latency_ns) * weight;
    }
}
