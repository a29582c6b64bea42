//! Where helpers run: on the worker's SMT sibling when it has one (the
//! seeds' setting, where a helper's prefetches land in the caches the
//! worker reads), else on other cores, and only when nothing else is
//! allowed on the worker's own CPU. [`Placement`] says which, so that
//! reports can say what a helper can and cannot do there.

use std::fmt;
use waitwise_platform::topology::Topology;

/// How a helper's CPU relates to the worker's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Relation {
    /// An SMT sibling of the worker's CPU: the two share the core's
    /// private caches, so the helper's loads warm the worker's L1/L2.
    SmtSibling,
    /// Another core: the helper can warm only caches shared between cores
    /// (the last-level cache), never the worker's private ones.
    OtherCore,
    /// The worker's own CPU (only one CPU allowed): helper and worker
    /// take turns.
    SameCpu,
    /// Not pinned (placement off, or the allowed CPUs unknown).
    Unpinned,
}

impl Relation {
    /// A short stable name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Relation::SmtSibling => "smt-sibling",
            Relation::OtherCore => "other-core",
            Relation::SameCpu => "same-cpu",
            Relation::Unpinned => "unpinned",
        }
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One helper's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct HelperCpu {
    /// The CPU, `None` when not pinned.
    pub cpu: Option<usize>,
    /// How it relates to the worker's CPU.
    pub relation: Relation,
}

/// The worker's CPU and each helper's.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Placement {
    /// The worker's CPU, `None` when not pinned.
    pub worker_cpu: Option<usize>,
    /// One entry per helper. When helpers outnumber the CPUs, CPUs are
    /// reused in the same order (siblings first).
    pub helpers: Vec<HelperCpu>,
}

impl Placement {
    /// Nobody pinned.
    pub fn unpinned(helpers: usize) -> Self {
        Self {
            worker_cpu: None,
            helpers: vec![
                HelperCpu {
                    cpu: None,
                    relation: Relation::Unpinned,
                };
                helpers
            ],
        }
    }

    /// Chooses CPUs for a worker and `helpers` helpers among `allowed`
    /// (the CPUs the calling thread may use): the worker keeps `worker`
    /// if it is allowed, else takes the first allowed CPU; helpers take
    /// the worker's SMT siblings (by `topology`), then the other allowed
    /// CPUs, then these again in turn; with only the worker's CPU allowed
    /// they share it. With no allowed CPU known, nobody is pinned.
    pub fn choose(
        topology: Option<&Topology>,
        allowed: &[usize],
        worker: Option<usize>,
        helpers: usize,
    ) -> Self {
        let Some(&first) = allowed.first() else {
            return Self::unpinned(helpers);
        };
        let worker = worker.filter(|w| allowed.contains(w)).unwrap_or(first);
        let siblings: Vec<usize> = topology
            .and_then(|t| t.cpu(worker))
            .map(|c| c.thread_siblings.clone())
            .unwrap_or_default();
        let mut order: Vec<HelperCpu> = siblings
            .iter()
            .filter(|&&s| s != worker && allowed.contains(&s))
            .map(|&cpu| HelperCpu {
                cpu: Some(cpu),
                relation: Relation::SmtSibling,
            })
            .collect();
        order.extend(
            allowed
                .iter()
                .filter(|&&c| c != worker && !siblings.contains(&c))
                .map(|&cpu| HelperCpu {
                    cpu: Some(cpu),
                    relation: Relation::OtherCore,
                }),
        );
        if order.is_empty() {
            order.push(HelperCpu {
                cpu: Some(worker),
                relation: Relation::SameCpu,
            });
        }
        Self {
            worker_cpu: Some(worker),
            helpers: order.iter().cycle().take(helpers).copied().collect(),
        }
    }

    /// [`Placement::choose`] for the calling thread as the worker: its
    /// allowed CPUs, the CPU it runs on now, the machine's topology.
    #[cfg(not(loom))]
    pub fn for_current_thread(helpers: usize) -> Self {
        use waitwise_platform::affinity;
        let allowed = affinity::allowed_cpus().unwrap_or_default();
        let topology = Topology::current().ok();
        Self::choose(
            topology.as_ref(),
            &allowed,
            affinity::current_cpu(),
            helpers,
        )
    }

    /// Whether some helper sits on the worker's SMT sibling.
    pub fn any_smt_sibling(&self) -> bool {
        self.helpers
            .iter()
            .any(|h| h.relation == Relation::SmtSibling)
    }

    /// One line for reports: `worker cpu0; helpers: cpu1 (other-core)`.
    pub fn describe(&self) -> String {
        let cpu = |c: Option<usize>| c.map_or("unpinned".to_string(), |c| format!("cpu{c}"));
        let helpers: Vec<String> = self
            .helpers
            .iter()
            .map(|h| format!("{} ({})", cpu(h.cpu), h.relation))
            .collect();
        format!(
            "worker {}; helpers: {}",
            cpu(self.worker_cpu),
            helpers.join(", ")
        )
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use waitwise_platform::topology::CpuTopology;

    /// `cores` cores of `smt` CPUs each, numbered core-major.
    fn topo(cores: usize, smt: usize) -> Topology {
        let cpus: Vec<CpuTopology> = (0..cores * smt)
            .map(|cpu| {
                let core = cpu / smt;
                CpuTopology {
                    cpu,
                    core_id: core as u32,
                    package_id: 0,
                    node: None,
                    thread_siblings: (core * smt..(core + 1) * smt).collect(),
                }
            })
            .collect();
        Topology {
            online: (0..cores * smt).collect(),
            cpus,
        }
    }

    #[test]
    fn the_sibling_comes_first() {
        let t = topo(2, 2);
        let p = Placement::choose(Some(&t), &[0, 1, 2, 3], Some(2), 2);
        assert_eq!(p.worker_cpu, Some(2));
        assert_eq!(
            p.helpers,
            vec![
                HelperCpu {
                    cpu: Some(3),
                    relation: Relation::SmtSibling
                },
                HelperCpu {
                    cpu: Some(0),
                    relation: Relation::OtherCore
                },
            ]
        );
        assert!(p.any_smt_sibling());
    }

    #[test]
    fn without_smt_helpers_go_to_other_cores_and_wrap() {
        let t = topo(2, 1);
        let p = Placement::choose(Some(&t), &[0, 1], Some(0), 3);
        let cpus: Vec<_> = p.helpers.iter().map(|h| h.cpu).collect();
        assert_eq!(cpus, vec![Some(1), Some(1), Some(1)]);
        assert!(p.helpers.iter().all(|h| h.relation == Relation::OtherCore));
        assert!(!p.any_smt_sibling());
    }

    #[test]
    fn one_cpu_is_shared_and_none_is_unpinned() {
        let p = Placement::choose(None, &[5], Some(9), 1);
        assert_eq!(p.worker_cpu, Some(5));
        assert_eq!(p.helpers[0].relation, Relation::SameCpu);
        let p = Placement::choose(None, &[], Some(0), 2);
        assert_eq!(p, Placement::unpinned(2));
        assert_eq!(
            p.describe(),
            "worker unpinned; helpers: unpinned (unpinned), unpinned (unpinned)"
        );
    }
}
