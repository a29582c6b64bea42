//! Where the experiment threads run, chosen from the topology and reported
//! in every result: a waiter belongs on its worker's SMT sibling (the seeds'
//! setting); without one it goes to another core, and the report says so.

use serde::Serialize;
use waitwise_platform::affinity;
use waitwise_platform::topology::Topology;

/// CPUs for a worker and a waiter, and what that means.
#[derive(Clone, Debug, Serialize)]
pub struct PairPlacement {
    /// The worker's CPU (`None`: not pinned).
    pub worker_cpu: Option<usize>,
    /// The waiter's CPU (`None`: not pinned).
    pub waiter_cpu: Option<usize>,
    /// How they relate, in words for the report.
    pub relation: String,
}

impl PairPlacement {
    /// The waiter on the worker's SMT sibling when there is one, else on a
    /// separate core, else (one allowed CPU) on the same CPU.
    pub fn choose() -> Self {
        let allowed = affinity::allowed_cpus().unwrap_or_default();
        let topo = Topology::current().ok();
        let Some(&worker) = allowed.first() else {
            return Self {
                worker_cpu: None,
                waiter_cpu: None,
                relation: "not pinned (CPU set unknown)".into(),
            };
        };
        if let Some(sib) = topo
            .as_ref()
            .and_then(|t| t.sibling_of(worker))
            .filter(|s| allowed.contains(s))
        {
            return Self {
                worker_cpu: Some(worker),
                waiter_cpu: Some(sib),
                relation: "waiter on the worker's SMT sibling".into(),
            };
        }
        match allowed.get(1) {
            Some(&other) => Self {
                worker_cpu: Some(worker),
                waiter_cpu: Some(other),
                relation: "no SMT sibling: waiter on a separate core".into(),
            },
            None => Self {
                worker_cpu: Some(worker),
                waiter_cpu: Some(worker),
                relation: "one CPU allowed: worker and waiter share it".into(),
            },
        }
    }

    /// A short line for tables: `worker cpu0, waiter cpu1 (no SMT sibling: ...)`.
    pub fn describe(&self) -> String {
        let cpu = |c: Option<usize>| c.map_or("unpinned".to_string(), |c| format!("cpu{c}"));
        format!(
            "worker {}, waiter {} ({})",
            cpu(self.worker_cpu),
            cpu(self.waiter_cpu),
            self.relation
        )
    }
}

/// Pins the calling thread to `cpu` when given; a failure is reported on
/// stderr and the thread runs unpinned (the report still states the plan).
pub fn pin(cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        if let Err(e) = affinity::pin_current_thread(cpu) {
            eprintln!("waitwise: could not pin to cpu{cpu}: {e}");
        }
    }
}
