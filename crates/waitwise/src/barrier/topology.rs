//! [`TopologyBarrier`]: a combining tree shaped like the machine. Threads
//! on SMT siblings of one core combine first, then cores within a package,
//! then packages within a NUMA node, then NUMA nodes at the root; each
//! level waits with its own policy.
//!
//! # Why follow the topology
//!
//! Siblings share a core's caches, so their node's word never leaves the
//! core; a package's node stays in its last-level cache; only the few
//! arrivals at the upper levels cross sockets. And the levels wait
//! differently (Lim & Agarwal, sections 4.4 and 6.2): a thread that loses
//! at a leaf waits for the whole machine, so it blocks at once and gives
//! its core's issue slots to its sibling (seed 000's point about polling
//! hyper-threads); a thread that loses near the root waits only for the
//! last package, so it polls first ([`TopologyPolicies`]).
//!
//! # Shape
//!
//! Built from a [`Topology`] and a thread-to-CPU assignment (the caller
//! pins thread `i` to `cpus[i]`, e.g. with
//! `waitwise::platform::affinity::pin_current_thread`). Level by level,
//! the members (threads, or nodes from the level below) are grouped by the
//! key of their lowest thread's CPU: `(package, core)` for
//! [`Level::Core`], package for [`Level::Package`], NUMA node for
//! [`Level::NumaNode`]; a group of two or more becomes a node, a group of
//! one passes up unchanged. If more than one member is left, a
//! [`Level::Machine`] root combines them. Threads assigned to the same CPU
//! share its core's node.
//!
//! The waiting algorithm, state words and memory ordering are those of the
//! [`TreeBarrier`](super::TreeBarrier) (module `tree`).

use super::central::BarrierWaitResult;
use super::handle::{Claims, HandleError, MAX_HANDLE_PARTIES};
use super::tree::{CombiningTree, Member, TreeBuilder};
use super::waiting::{self, NodeWaiting, INNER_ALPHA};
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::{Profiler, WaitProfile};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use waitwise_platform::topology::{CpuTopology, Topology};

/// The level of a [`TopologyBarrier`] node: what its children share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Threads on one core (SMT siblings, or the same CPU).
    Core,
    /// Cores of one package.
    Package,
    /// Packages of one NUMA node.
    NumaNode,
    /// NUMA nodes (or whatever is left) of the machine.
    Machine,
}

/// One policy per level of a [`TopologyBarrier`]. The root, whatever its
/// level, follows `root`. Policies run as given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopologyPolicies {
    /// [`Level::Core`] nodes (the leaves).
    pub core: Policy,
    /// [`Level::Package`] nodes.
    pub package: Policy,
    /// [`Level::NumaNode`] nodes.
    pub numa_node: Policy,
    /// The root node.
    pub root: Policy,
}

impl TopologyPolicies {
    /// Lim & Agarwal's advice: `/b/0` at the cores (the leaves),
    /// `Ss/b/`[`INNER_ALPHA`] at packages and NUMA nodes, the barrier
    /// default ([`default_policy`](super::default_policy): `Ss/b/0.62`) at
    /// the root.
    pub fn lim_agarwal(parties: usize) -> Self {
        let inner = Policy::two_phase(INNER_ALPHA).with_mechanism(waiting::poll_mechanism(parties));
        Self {
            core: Policy::always_block(),
            package: inner,
            numa_node: inner,
            root: waiting::default_policy(parties),
        }
    }

    /// `policy` at every level.
    pub const fn uniform(policy: Policy) -> Self {
        Self {
            core: policy,
            package: policy,
            numa_node: policy,
            root: policy,
        }
    }

    /// The policy of a node at `level`, or of the root.
    pub fn for_level(&self, level: Level, is_root: bool) -> Policy {
        match (is_root, level) {
            (true, _) | (false, Level::Machine) => self.root,
            (false, Level::Core) => self.core,
            (false, Level::Package) => self.package,
            (false, Level::NumaNode) => self.numa_node,
        }
    }
}

/// A [`TopologyBarrier`] could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyBarrierError {
    /// The CPU assignment is empty.
    #[error("a topology barrier needs at least one thread")]
    NoThreads,
    /// More threads than [`MAX_HANDLE_PARTIES`].
    #[error("{threads} threads is more than a barrier takes ({max})")]
    TooManyThreads {
        /// Threads asked for.
        threads: usize,
        /// The most allowed.
        max: usize,
    },
    /// A thread is assigned to a CPU the topology does not list as online.
    #[error("thread {thread} is assigned to CPU {cpu}, which is not online in the topology")]
    UnknownCpu {
        /// The thread.
        thread: usize,
        /// Its CPU.
        cpu: usize,
    },
}

/// One node of a [`TopologyBarrier`], as [`TopologyBarrier::nodes`]
/// describes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopologyNode {
    /// What its children share.
    pub level: Level,
    /// Number of children (threads or nodes) it counts.
    pub parties: usize,
    /// Whether it is the root.
    pub is_root: bool,
    /// The policy its waits follow.
    pub policy: Policy,
}

/// A reusable barrier shaped like the machine's topology, with a waiting
/// policy per level; each thread waits through its own [`TopologyHandle`].
///
/// Use it for many threads pinned to CPUs across cores, packages and NUMA
/// nodes. Thread ids are claimed like the [`TreeBarrier`](super::TreeBarrier)'s
/// (one live handle per id, `Send` but not `Sync`, borrowing the barrier so
/// it cannot be dropped while a thread waits). The leader of an episode is
/// the last arrival at the root.
///
/// # Examples
/// ```
/// use std::path::Path;
/// use waitwise::barrier::{Level, TopologyBarrier};
/// use waitwise::platform::topology::Topology;
///
/// // Two sockets, four cores each, two hyper-threads per core.
/// let root = Path::new(env!("CARGO_MANIFEST_DIR"))
///     .join("../waitwise-platform/tests/fixtures/sysfs-2socket-smt2");
/// let topo = Topology::from_sysfs_root(&root).unwrap();
/// // Threads on CPUs 0 and 8 (siblings), 1 (package 0), 4 (package 1).
/// let barrier = TopologyBarrier::new(&topo, &[0, 8, 1, 4]).unwrap();
/// let levels: Vec<_> = barrier.nodes().iter().map(|n| (n.level, n.parties)).collect();
/// assert_eq!(levels, [(Level::Core, 2), (Level::Package, 2), (Level::Machine, 2)]);
/// assert_eq!(barrier.nodes()[0].policy.name(), "/b/0"); // leaves block at once
///
/// std::thread::scope(|s| {
///     let leaders: Vec<_> = barrier
///         .handles()
///         .unwrap()
///         .into_iter()
///         .map(|h| s.spawn(move || (0..10).filter(|_| h.wait().is_leader()).count()))
///         .collect();
///     let total: usize = leaders.into_iter().map(|t| t.join().unwrap()).sum();
///     assert_eq!(total, 10);
/// });
/// ```
pub struct TopologyBarrier {
    tree: CombiningTree,
    levels: Vec<Level>,
    cpus: Vec<usize>,
    claims: Claims,
    profiler: Profiler,
}

impl TopologyBarrier {
    /// A barrier for `cpus.len()` threads, thread `i` running on `cpus[i]`,
    /// with [`TopologyPolicies::lim_agarwal`] for `cpus.len()` threads.
    pub fn new(topology: &Topology, cpus: &[usize]) -> Result<Self, TopologyBarrierError> {
        Self::with_options(topology, cpus, WaitOptions::new())
    }

    /// Like [`TopologyBarrier::new`] with `options`: a policy set there is
    /// used, exactly, at every level; otherwise
    /// [`TopologyPolicies::lim_agarwal`] for `cpus.len()` threads.
    pub fn with_options(
        topology: &Topology,
        cpus: &[usize],
        options: WaitOptions,
    ) -> Result<Self, TopologyBarrierError> {
        match waiting::explicit_policy(&options) {
            Some(p) => Self::build(topology, cpus, TopologyPolicies::uniform(p), false, options),
            None => Self::build(
                topology,
                cpus,
                TopologyPolicies::lim_agarwal(cpus.len()),
                true,
                options,
            ),
        }
    }

    /// Like [`TopologyBarrier::new`] with a policy per level, run exactly
    /// as given; `options` gives profiling (a policy set there is ignored).
    pub fn with_policies(
        topology: &Topology,
        cpus: &[usize],
        policies: TopologyPolicies,
        options: WaitOptions,
    ) -> Result<Self, TopologyBarrierError> {
        Self::build(topology, cpus, policies, false, options)
    }

    fn build(
        topology: &Topology,
        cpus: &[usize],
        policies: TopologyPolicies,
        defaults: bool,
        options: WaitOptions,
    ) -> Result<Self, TopologyBarrierError> {
        if cpus.is_empty() {
            return Err(TopologyBarrierError::NoThreads);
        }
        if cpus.len() > MAX_HANDLE_PARTIES {
            return Err(TopologyBarrierError::TooManyThreads {
                threads: cpus.len(),
                max: MAX_HANDLE_PARTIES,
            });
        }
        let info: Vec<&CpuTopology> = cpus
            .iter()
            .enumerate()
            .map(|(thread, &cpu)| {
                topology
                    .cpu(cpu)
                    .ok_or(TopologyBarrierError::UnknownCpu { thread, cpu })
            })
            .collect::<Result<_, _>>()?;

        let mut b = TreeBuilder::new(cpus.len());
        let key = |level: Level, c: &CpuTopology| match level {
            Level::Core => (c.package_id, c.core_id),
            Level::Package => (c.package_id, 0),
            Level::NumaNode => (c.node.unwrap_or(0), 0),
            Level::Machine => (0, 0),
        };
        for level in [Level::Core, Level::Package, Level::NumaNode, Level::Machine] {
            let mut groups: BTreeMap<(u32, u32), Vec<Member>> = BTreeMap::new();
            for m in b.members() {
                groups
                    .entry(key(level, info[m.first_thread]))
                    .or_default()
                    .push(*m);
            }
            b.combine(level, groups.into_values().collect());
        }
        let (tree, levels) = b.finish(|level, is_root| {
            NodeWaiting::new(policies.for_level(level, is_root), defaults)
        });
        Ok(Self {
            tree,
            levels,
            cpus: cpus.to_vec(),
            claims: Claims::new(cpus.len()),
            profiler: options.profiler(),
        })
    }

    fn make_handle(&self, id: usize) -> TopologyHandle<'_> {
        TopologyHandle {
            barrier: self,
            id,
            not_sync: PhantomData,
        }
    }

    /// The handle for thread `id`, if `id < parties()` and no live handle
    /// holds it.
    pub fn handle(&self, id: usize) -> Result<TopologyHandle<'_>, HandleError> {
        self.claims.claim(id)?;
        Ok(self.make_handle(id))
    }

    /// Handles for every id, in order; an error (and no handle) if one is
    /// held.
    pub fn handles(&self) -> Result<Vec<TopologyHandle<'_>>, HandleError> {
        self.claims.claim_all()?;
        Ok((0..self.parties()).map(|id| self.make_handle(id)).collect())
    }

    /// Number of threads an episode waits for.
    pub fn parties(&self) -> usize {
        self.tree.parties()
    }

    /// The CPU thread `id` is assigned to (`None` when out of range).
    pub fn cpu(&self, id: usize) -> Option<usize> {
        self.cpus.get(id).copied()
    }

    /// The nodes, leaves first (each level's nodes before the next level's).
    pub fn nodes(&self) -> Vec<TopologyNode> {
        let root = self.levels.len().checked_sub(1);
        self.levels
            .iter()
            .enumerate()
            .map(|(i, &level)| {
                let (parties, policy) = self.tree.node(i);
                TopologyNode {
                    level,
                    parties,
                    is_root: Some(i) == root,
                    policy: *policy,
                }
            })
            .collect()
    }

    /// Number of node levels on the longest path from a thread to the root.
    pub fn height(&self) -> usize {
        self.tree.height()
    }

    /// The wait-time histogram of all waits at all nodes; `None` unless
    /// profiling is on.
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.profiler.snapshot("barrier")
    }
}

/// Thread `id`'s place in a [`TopologyBarrier`]; dropping it frees the id.
#[derive(Debug)]
pub struct TopologyHandle<'a> {
    barrier: &'a TopologyBarrier,
    id: usize,
    /// One thread waits through a handle at a time.
    not_sync: PhantomData<std::cell::Cell<()>>,
}

impl TopologyHandle<'_> {
    /// Blocks until all parties have called `wait` in this episode.
    #[inline]
    pub fn wait(&self) -> BarrierWaitResult {
        self.barrier.tree.wait(self.id, &self.barrier.profiler)
    }

    /// This handle's thread id.
    pub fn id(&self) -> usize {
        self.id
    }

    /// The CPU this handle's thread should run on.
    pub fn cpu(&self) -> usize {
        self.barrier.cpus[self.id]
    }
}

impl Drop for TopologyHandle<'_> {
    fn drop(&mut self) {
        self.barrier.claims.release(self.id);
    }
}

/// The shape, which is what a user can act on: the parties, the tree's
/// height and the CPUs the ids are pinned to (the arrivals are spread over
/// the nodes' words, not shown).
impl std::fmt::Debug for TopologyBarrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopologyBarrier")
            .field("parties", &self.parties())
            .field("height", &self.height())
            .field("cpus", &self.cpus)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::path::Path;

    fn two_sockets() -> Topology {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../waitwise-platform/tests/fixtures/sysfs-2socket-smt2");
        Topology::from_sysfs_root(&root).unwrap()
    }

    fn shape(b: &TopologyBarrier) -> Vec<(Level, usize, bool)> {
        b.nodes()
            .iter()
            .map(|n| (n.level, n.parties, n.is_root))
            .collect()
    }

    #[test]
    fn whole_machine_shape() {
        let topo = two_sockets();
        let all: Vec<usize> = (0..16).collect();
        let b = TopologyBarrier::new(&topo, &all).unwrap();
        let s = shape(&b);
        assert_eq!(s.len(), 8 + 2 + 1);
        assert!(s[..8].iter().all(|&n| n == (Level::Core, 2, false)));
        assert!(s[8..10].iter().all(|&n| n == (Level::Package, 4, false)));
        // NUMA nodes coincide with packages here: that level passes through.
        assert_eq!(s[10], (Level::Machine, 2, true));
        assert_eq!(b.height(), 3);
        let p = TopologyPolicies::lim_agarwal(16);
        let nodes = b.nodes();
        assert_eq!(nodes[0].policy, Policy::always_block());
        assert_eq!(nodes[8].policy, p.package);
        assert_eq!(nodes[10].policy, p.root);
        assert_eq!(p.root, waiting::default_policy(16));
    }

    #[test]
    fn single_levels_collapse() {
        let topo = two_sockets();
        // Two threads on sibling CPUs: the core node is the root.
        let b = TopologyBarrier::new(&topo, &[0, 8]).unwrap();
        assert_eq!(shape(&b), [(Level::Core, 2, true)]);
        assert_eq!(b.nodes()[0].policy, TopologyPolicies::lim_agarwal(2).root);
        // One thread per package: only the machine node.
        let b = TopologyBarrier::new(&topo, &[0, 4]).unwrap();
        assert_eq!(shape(&b), [(Level::Machine, 2, true)]);
        // One thread: no node at all, and it always leads.
        let b = TopologyBarrier::new(&topo, &[3]).unwrap();
        assert!(b.nodes().is_empty());
        assert!(b.handle(0).unwrap().wait().is_leader());
        // Oversubscribed CPU: both threads share the core node.
        let b = TopologyBarrier::new(&topo, &[2, 2, 10]).unwrap();
        assert_eq!(shape(&b), [(Level::Core, 3, true)]);
    }

    #[test]
    fn bad_input_is_an_error() {
        let topo = two_sockets();
        assert_eq!(
            TopologyBarrier::new(&topo, &[]).unwrap_err(),
            TopologyBarrierError::NoThreads
        );
        assert_eq!(
            TopologyBarrier::new(&topo, &[0, 99]).unwrap_err(),
            TopologyBarrierError::UnknownCpu { thread: 1, cpu: 99 }
        );
        let uniform = TopologyBarrier::with_options(
            &topo,
            &[0, 1, 4],
            WaitOptions::new().policy(Policy::always_spin()),
        )
        .unwrap();
        assert!(uniform
            .nodes()
            .iter()
            .all(|n| n.policy == Policy::always_spin()));
    }
}
