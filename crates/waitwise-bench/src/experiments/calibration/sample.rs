//! One measured wait ([`Sample`]) and one event's waits of a cell
//! ([`Measured`]).

/// One measured wait.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    /// Wait that happened, ns.
    pub(super) wait_ns: f64,
    /// Wait drawn, ns.
    pub(super) drawn_ns: f64,
    /// The `B` the wait was drawn in units of, ns (its cell's tracked `B`
    /// at the wait's cycle: [`TrackedBlockCost`]).
    pub(super) wait_b_ns: f64,
    /// Consumer thread CPU time across the wait (raw), ns.
    pub(super) cpu_ns: f64,
    /// Whether the wait blocked.
    pub(super) blocked: bool,
    /// Producer's stamp before `notify` to the consumer's after `wait`, ns.
    pub(super) wake_latency_ns: f64,
    /// Which of the cell's laws drew the wait (0 but in the switching
    /// cell): each phase is priced with its own references.
    pub(super) phase: usize,
    /// The longest poll limit the wait could draw, ns, when its policy
    /// draws from what its object learned (`adapt/b`: its summary's arm
    /// with its `B`, read after the event's previous wait); `None` for a
    /// policy whose limit the accounting knows.
    pub(super) poll_cap_ns: Option<f64>,
}

/// What [`measure`] returns: samples, or why it stopped.
pub(super) struct Measured {
    pub(super) samples: Vec<Sample>,
    pub(super) lost_producer: bool,
}

/// Marks each sample with the law that drew its wait: sample `i` of every
/// event waited in cycle `warmup + i`.
pub(super) fn assign_phases(
    measured: &mut [Measured],
    warmup: usize,
    period: usize,
    n_laws: usize,
) {
    for m in measured {
        for (i, s) in m.samples.iter_mut().enumerate() {
            s.phase = ((warmup + i) / period.max(1)) % n_laws.max(1);
        }
    }
}
