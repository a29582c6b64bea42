//! Where the pool's workers run: one per core first, then on the cores'
//! SMT siblings, and only then (more workers than allowed CPUs) unpinned,
//! sharing CPUs with the others by time.
//!
//! Workers are numbered in that order, so the pool can prefer lower
//! numbers when it wakes one: a worker on a core of its own runs at full
//! speed, a sibling takes a share of a core a worker already uses.

use std::collections::BTreeMap;
use waitwise_platform::topology::Topology;

/// How a worker's CPU relates to the others'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
    /// The first worker on its core.
    Core,
    /// A worker on an SMT sibling of a core that already has a worker:
    /// the pool keeps it parked while the work it would take is too
    /// little to pay for the core it shares ([`super::gate`]).
    Sibling,
    /// A worker beyond the allowed CPUs: not pinned, it shares a CPU with
    /// another worker by time (useful only for tasks that block).
    Extra,
}

impl Tier {
    /// A short stable name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Core => "core",
            Tier::Sibling => "smt-sibling",
            Tier::Extra => "extra",
        }
    }
}

/// One worker's place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerPlace {
    /// The CPU it is pinned to; `None` when not pinned.
    pub cpu: Option<usize>,
    /// How its CPU relates to the others'.
    pub tier: Tier,
}

/// Places `n` workers on the `allowed` CPUs: one per core first (cores
/// ordered by their lowest allowed CPU), then the second CPU of each core,
/// and so on; workers beyond the allowed CPUs are [`Tier::Extra`] and not
/// pinned. Without a topology every allowed CPU counts as its own core.
/// The result is ordered by tier: `Core`, then `Sibling`, then `Extra`.
pub fn place(n: usize, topology: Option<&Topology>, allowed: &[usize]) -> Vec<WorkerPlace> {
    // Allowed CPUs grouped by (package, core), each group ascending.
    let mut cores: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    let mut sorted = allowed.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for &cpu in &sorted {
        let key = match topology.and_then(|t| t.cpu(cpu)) {
            Some(c) => (c.package_id, c.core_id),
            // Unknown to the topology: a core of its own, keyed apart.
            None => (u32::MAX, cpu as u32),
        };
        cores.entry(key).or_default().push(cpu);
    }
    let mut groups: Vec<Vec<usize>> = cores.into_values().collect();
    groups.sort_by_key(|g| g[0]);
    let mut places = Vec::with_capacity(n);
    let deepest = groups.iter().map(Vec::len).max().unwrap_or(0);
    'rounds: for round in 0..deepest {
        for g in &groups {
            if places.len() == n {
                break 'rounds;
            }
            if let Some(&cpu) = g.get(round) {
                let tier = if round == 0 {
                    Tier::Core
                } else {
                    Tier::Sibling
                };
                places.push(WorkerPlace {
                    cpu: Some(cpu),
                    tier,
                });
            }
        }
    }
    while places.len() < n {
        places.push(WorkerPlace {
            cpu: None,
            tier: Tier::Extra,
        });
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;
    use waitwise_platform::topology::CpuTopology;

    /// `cores` cores of 2 SMT threads numbered Linux-style: cpu i and
    /// i + cores share core i.
    fn smt2(cores: usize) -> Topology {
        let n = 2 * cores;
        Topology {
            cpus: (0..n)
                .map(|cpu| {
                    let core = cpu % cores;
                    CpuTopology {
                        cpu,
                        core_id: core as u32,
                        package_id: 0,
                        node: Some(0),
                        thread_siblings: vec![core, core + cores],
                    }
                })
                .collect(),
            online: (0..n).collect(),
        }
    }

    fn cpus(p: &[WorkerPlace]) -> Vec<Option<usize>> {
        p.iter().map(|w| w.cpu).collect()
    }

    #[test]
    fn cores_first_then_siblings_then_extras() {
        let t = smt2(2);
        let p = place(6, Some(&t), &[0, 1, 2, 3]);
        assert_eq!(cpus(&p), [Some(0), Some(1), Some(2), Some(3), None, None]);
        let tiers: Vec<_> = p.iter().map(|w| w.tier).collect();
        use Tier::*;
        assert_eq!(tiers, [Core, Core, Sibling, Sibling, Extra, Extra]);
    }

    #[test]
    fn fewer_workers_than_cores_use_distinct_cores() {
        let t = smt2(4);
        let p = place(3, Some(&t), &(0..8).collect::<Vec<_>>());
        assert_eq!(cpus(&p), [Some(0), Some(1), Some(2)]);
        assert!(p.iter().all(|w| w.tier == Tier::Core));
    }

    #[test]
    fn a_restricted_mask_without_siblings_has_no_sibling_tier() {
        let t = smt2(2);
        // cpus 0 and 1 are on different cores; their siblings are not allowed.
        let p = place(3, Some(&t), &[1, 0]);
        assert_eq!(cpus(&p), [Some(0), Some(1), None]);
        assert_eq!(p[2].tier, Tier::Extra);
    }

    #[test]
    fn without_topology_every_cpu_is_a_core() {
        let p = place(2, None, &[5, 3]);
        assert_eq!(cpus(&p), [Some(3), Some(5)]);
        assert!(p.iter().all(|w| w.tier == Tier::Core));
        assert!(place(0, None, &[0]).is_empty());
        assert_eq!(place(1, None, &[])[0].tier, Tier::Extra);
    }
}
