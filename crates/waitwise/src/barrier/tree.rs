//! [`TreeBarrier`]: a software combining tree (Yew, Tzeng & Lawrie 1987),
//! the barrier Lim & Agarwal measured on Alewife. Also the engine of the
//! [`TopologyBarrier`](super::TopologyBarrier), which only chooses another
//! shape.
//!
//! # Algorithm
//!
//! Every node is a [`CountingNode`] (module `node`: a counter with a sense
//! bit on its own cache line) counting the arrivals of its children. A
//! thread arrives at its leaf; the last arrival at a node climbs to the
//! parent and arrives there; every other arrival waits at the node for its
//! sense to flip. The last arrival at the root leads the episode. Going back
//! down, each climber releases the nodes it filled, root first, so the
//! threads that waited higher up (and have more to release) go first.
//!
//! At most `fan_in` threads touch one node's word, and a waiter polls only
//! its node's line, so arrivals and releases do not all hit one word as in
//! the central [`Barrier`](super::Barrier).
//!
//! # A policy per level (Lim & Agarwal, section 6.2)
//!
//! A thread that loses at a leaf waits for the whole barrier; one that
//! loses at the root waits only for the last subtree. So waits at the
//! leaves are long and block at once (`/b/0`), waits at the root are short
//! and poll for `0.62 B` first, and the levels between poll for half that
//! ([`INNER_ALPHA`]). See [`TreePolicies`].
//!
//! # Memory ordering
//!
//! That of [`CountingNode`], composed: a thread's writes before arriving
//! reach its leaf's last arrival through the leaf word, then climb with it
//! (each node's last arrival acquires its children's adds and releases with
//! its own add above), and come down with the releases, each a `SeqCst`
//! store read by `Acquire` loads.

use super::central::BarrierWaitResult;
use super::handle::{Claims, HandleError, MAX_HANDLE_PARTIES};
use super::node::{Arrival, CountingNode};
use super::waiting::{self, NodeWaiting, INNER_ALPHA};
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::{Profiler, WaitProfile};
use std::marker::PhantomData;

/// Fan-in used where a fan-in below 2 is asked for: the smallest that
/// combines anything.
pub const MIN_FAN_IN: usize = 2;

/// One policy per level of a tree barrier: leaves, inner nodes, root.
///
/// A node that is both a leaf and the root (a tree of one node) follows
/// `root`. Policies run as given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreePolicies {
    /// Nodes whose children are threads.
    pub leaf: Policy,
    /// Nodes between the leaves and the root.
    pub inner: Policy,
    /// The root.
    pub root: Policy,
}

impl TreePolicies {
    /// Lim & Agarwal's advice for a tree over `parties` threads: `/b/0` at
    /// the leaves, two-phase with [`INNER_ALPHA`] between, the barrier
    /// default at the root ([`default_policy`](super::default_policy):
    /// `s/b/0.62`); polling waits poll with
    /// [`poll_mechanism`](super::poll_mechanism)`(parties)`.
    pub fn lim_agarwal(parties: usize) -> Self {
        Self {
            leaf: Policy::always_block(),
            inner: Policy::two_phase(INNER_ALPHA).with_mechanism(waiting::poll_mechanism(parties)),
            root: waiting::default_policy(parties),
        }
    }

    /// `policy` at every level.
    pub const fn uniform(policy: Policy) -> Self {
        Self {
            leaf: policy,
            inner: policy,
            root: policy,
        }
    }
}

/// A member of a level while a tree is being built: a thread, or a node
/// built on a level below; `first_thread` is the lowest thread under it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Member {
    node: Option<usize>,
    pub(crate) first_thread: usize,
}

/// Builds a combining tree level by level; `T` tags each node with its level.
#[derive(Debug)]
pub(crate) struct TreeBuilder<T> {
    /// Per node: parties, parent, tag.
    nodes: Vec<(usize, Option<usize>, T)>,
    /// Per thread: the node it arrives at first.
    entry: Vec<Option<usize>>,
    members: Vec<Member>,
}

impl<T: Copy> TreeBuilder<T> {
    /// `threads` threads, not yet combined.
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            nodes: Vec::new(),
            entry: vec![None; threads],
            members: (0..threads)
                .map(|t| Member {
                    node: None,
                    first_thread: t,
                })
                .collect(),
        }
    }

    /// The members of the current level.
    pub(crate) fn members(&self) -> &[Member] {
        &self.members
    }

    /// Replaces the current level by `groups` (which must partition it):
    /// each group of two or more becomes a node tagged `tag`; a group of
    /// one passes up unchanged.
    pub(crate) fn combine(&mut self, tag: T, groups: Vec<Vec<Member>>) {
        let mut next = Vec::with_capacity(groups.len());
        for group in groups {
            match group.as_slice() {
                [] => {}
                [one] => next.push(*one),
                many => {
                    let id = self.nodes.len();
                    self.nodes.push((many.len(), None, tag));
                    for m in many {
                        match m.node {
                            None => self.entry[m.first_thread] = Some(id),
                            Some(child) => self.nodes[child].1 = Some(id),
                        }
                    }
                    let first_thread = many.iter().map(|m| m.first_thread).min().unwrap_or(0);
                    next.push(Member {
                        node: Some(id),
                        first_thread,
                    });
                }
            }
        }
        self.members = next;
    }

    /// The tree, each node's waiting given by `waiting(tag, is_root)`; also
    /// each node's tag, in node order.
    pub(crate) fn finish(
        self,
        waiting: impl Fn(T, bool) -> NodeWaiting,
    ) -> (CombiningTree, Vec<T>) {
        let tags = self.nodes.iter().map(|n| n.2).collect();
        let nodes = self
            .nodes
            .into_iter()
            .map(|(parties, parent, tag)| TreeNode {
                counter: CountingNode::new(parties, waiting(tag, parent.is_none())),
                parent,
            })
            .collect();
        let tree = CombiningTree {
            nodes,
            entry: self.entry.into_boxed_slice(),
        };
        (tree, tags)
    }
}

#[derive(Debug)]
struct TreeNode {
    counter: CountingNode,
    parent: Option<usize>,
}

/// A built combining tree: nodes, and each thread's first node (`None` for
/// a thread alone, which leads every episode at once).
#[derive(Debug)]
pub(crate) struct CombiningTree {
    nodes: Box<[TreeNode]>,
    entry: Box<[Option<usize>]>,
}

impl CombiningTree {
    /// Number of threads.
    pub(crate) fn parties(&self) -> usize {
        self.entry.len()
    }

    /// Number of nodes.
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Node `i`'s number of children and policy.
    pub(crate) fn node(&self, i: usize) -> (usize, &Policy) {
        let c = &self.nodes[i].counter;
        (c.parties(), c.policy())
    }

    /// Number of node levels on the longest path from a thread to the root.
    pub(crate) fn height(&self) -> usize {
        let depth = |mut at: Option<usize>| {
            let mut d = 0;
            while let Some(i) = at {
                d += 1;
                at = self.nodes[i].parent;
            }
            d
        };
        self.entry.iter().map(|&e| depth(e)).max().unwrap_or(0)
    }

    /// One episode for `thread` (in range: its handle checked).
    #[inline]
    pub(crate) fn wait(&self, thread: usize, profiler: &Profiler) -> BarrierWaitResult {
        let leader = match self.entry[thread] {
            None => true,
            Some(node) => self.arrive(node, profiler),
        };
        BarrierWaitResult::new(leader)
    }

    /// Arrives at `node`: climbs if last, else waits. Returns whether this
    /// thread filled the root. The depth of the recursion is the height.
    fn arrive(&self, node: usize, profiler: &Profiler) -> bool {
        let n = &self.nodes[node];
        match n.counter.arrive() {
            Arrival::Last { sense } => {
                let leader = match n.parent {
                    None => true,
                    Some(parent) => self.arrive(parent, profiler),
                };
                // Released above (or led): open this node, top-down.
                n.counter.release(sense);
                leader
            }
            Arrival::Wait { sense } => {
                n.counter.wait_release(sense, profiler);
                false
            }
        }
    }
}

/// A reusable combining-tree barrier for `n` threads with a configurable
/// fan-in; each thread waits through its own [`TreeHandle`].
///
/// Use it instead of [`Barrier`](super::Barrier) when many threads meet:
/// each node counts at most `fan_in` arrivals on its own cache line, and the
/// levels wait with different policies ([`TreePolicies`]).
///
/// - `n == 0` is treated as 1, `n` above
///   [`MAX_HANDLE_PARTIES`] as that; a `fan_in`
///   below 2 as 2, one above `n` as `n`.
/// - Thread ids are claimed: [`TreeBarrier::handle`] gives id `i` to one
///   live handle at a time, [`TreeBarrier::handles`] all of them. A handle
///   is `Send` but not `Sync`; it borrows the barrier, so the barrier cannot
///   be dropped while a thread waits.
/// - The leader of an episode is the last arrival at the root.
///
/// # Examples
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use waitwise::barrier::TreeBarrier;
///
/// let barrier = TreeBarrier::new(5, 2);
/// assert_eq!(barrier.height(), 3); // 5 threads, pairs: 3 levels
/// let leaders = AtomicUsize::new(0);
/// std::thread::scope(|s| {
///     for h in barrier.handles().unwrap() {
///         let leaders = &leaders;
///         s.spawn(move || {
///             for _ in 0..50 {
///                 if h.wait().is_leader() {
///                     leaders.fetch_add(1, Ordering::Relaxed);
///                 }
///             }
///         });
///     }
/// });
/// assert_eq!(leaders.load(Ordering::Relaxed), 50);
/// assert!(barrier.handle(5).is_err()); // ids are 0..5
/// ```
pub struct TreeBarrier {
    tree: CombiningTree,
    fan_in: usize,
    claims: Claims,
    profiler: Profiler,
}

impl TreeBarrier {
    /// A tree barrier for `n` threads, combining `fan_in` at each node, with
    /// [`TreePolicies::lim_agarwal`].
    pub fn new(n: usize, fan_in: usize) -> Self {
        Self::with_options(n, fan_in, WaitOptions::new())
    }

    /// A tree barrier with `options`: a policy set there is used, exactly,
    /// at every level; otherwise [`TreePolicies::lim_agarwal`].
    pub fn with_options(n: usize, fan_in: usize, options: WaitOptions) -> Self {
        match waiting::explicit_policy(&options) {
            Some(p) => Self::build(n, fan_in, TreePolicies::uniform(p), false, options),
            None => Self::build(n, fan_in, TreePolicies::lim_agarwal(n), true, options),
        }
    }

    /// A tree barrier with a policy per level, run exactly as given;
    /// `options` gives profiling (a policy set there is ignored).
    pub fn with_policies(
        n: usize,
        fan_in: usize,
        policies: TreePolicies,
        options: WaitOptions,
    ) -> Self {
        Self::build(n, fan_in, policies, false, options)
    }

    fn build(
        n: usize,
        fan_in: usize,
        policies: TreePolicies,
        defaults: bool,
        options: WaitOptions,
    ) -> Self {
        let n = n.clamp(1, MAX_HANDLE_PARTIES);
        let fan_in = fan_in.clamp(MIN_FAN_IN, n.max(MIN_FAN_IN));
        let mut b = TreeBuilder::new(n);
        let mut level = 0usize;
        while b.members().len() > 1 {
            let groups = b.members().chunks(fan_in).map(<[_]>::to_vec).collect();
            b.combine(level, groups);
            level += 1;
        }
        let (tree, _) = b.finish(|level, root| {
            let policy = match (root, level) {
                (true, _) => policies.root,
                (false, 0) => policies.leaf,
                (false, _) => policies.inner,
            };
            NodeWaiting::new(policy, defaults)
        });
        Self {
            tree,
            fan_in,
            claims: Claims::new(n),
            profiler: options.profiler(),
        }
    }

    fn make_handle(&self, id: usize) -> TreeHandle<'_> {
        TreeHandle {
            barrier: self,
            id,
            not_sync: PhantomData,
        }
    }

    /// The handle for thread `id`, if `id < parties()` and no live handle
    /// holds it.
    pub fn handle(&self, id: usize) -> Result<TreeHandle<'_>, HandleError> {
        self.claims.claim(id)?;
        Ok(self.make_handle(id))
    }

    /// Handles for every id, in order; an error (and no handle) if one is
    /// held.
    pub fn handles(&self) -> Result<Vec<TreeHandle<'_>>, HandleError> {
        self.claims.claim_all()?;
        Ok((0..self.parties()).map(|id| self.make_handle(id)).collect())
    }

    /// Number of threads an episode waits for.
    pub fn parties(&self) -> usize {
        self.tree.parties()
    }

    /// The fan-in (at least 2).
    pub fn fan_in(&self) -> usize {
        self.fan_in
    }

    /// Number of node levels (0 for one thread).
    pub fn height(&self) -> usize {
        self.tree.height()
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.tree.node_count()
    }

    /// The wait-time histogram of all waits at all nodes; `None` unless
    /// profiling is on.
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.profiler.snapshot("barrier")
    }
}

/// Thread `id`'s place in a [`TreeBarrier`]; dropping it frees the id.
#[derive(Debug)]
pub struct TreeHandle<'a> {
    barrier: &'a TreeBarrier,
    id: usize,
    /// One thread waits through a handle at a time.
    not_sync: PhantomData<std::cell::Cell<()>>,
}

impl TreeHandle<'_> {
    /// Blocks until all parties have called `wait` in this episode.
    #[inline]
    pub fn wait(&self) -> BarrierWaitResult {
        self.barrier.tree.wait(self.id, &self.barrier.profiler)
    }

    /// This handle's thread id.
    pub fn id(&self) -> usize {
        self.id
    }
}

impl Drop for TreeHandle<'_> {
    fn drop(&mut self) {
        self.barrier.claims.release(self.id);
    }
}

/// The shape, which is what a user can act on (the arrivals are spread
/// over the nodes' words, not shown).
impl std::fmt::Debug for TreeBarrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeBarrier")
            .field("parties", &self.parties())
            .field("fan_in", &self.fan_in())
            .field("height", &self.height())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_shape() {
        let b = TreeBarrier::new(5, 2);
        assert_eq!(
            format!("{b:?}"),
            format!(
                "TreeBarrier {{ parties: 5, fan_in: 2, height: {} }}",
                b.height()
            )
        );
    }

    #[test]
    fn shapes() {
        for (n, k, height, nodes) in [
            (0, 2, 0, 0),
            (1, 2, 0, 0),
            (2, 2, 1, 1),
            (4, 2, 2, 3),
            (5, 2, 3, 4),
            (8, 8, 1, 1),
            (9, 8, 2, 2),
            (3, 0, 2, 2),
        ] {
            let b = TreeBarrier::new(n, k);
            assert_eq!((b.height(), b.node_count()), (height, nodes), "n={n} k={k}");
        }
    }

    #[test]
    fn level_policies() {
        let b = TreeBarrier::new(4, 2);
        let waits: Vec<_> = (0..b.node_count()).map(|i| *b.tree.node(i).1).collect();
        assert_eq!(waits[0], Policy::always_block());
        assert_eq!(waits[1], Policy::always_block());
        assert_eq!(waits[2], waiting::default_policy(4));
        let one = TreeBarrier::new(2, 2);
        assert_eq!(*one.tree.node(0).1, waiting::default_policy(2));
        let spin =
            TreeBarrier::with_options(4, 2, WaitOptions::new().policy(Policy::always_spin()));
        assert_eq!(*spin.tree.node(0).1, Policy::always_spin());
    }

    #[test]
    fn single_thread_leads_and_ids_are_claimed() {
        let b = TreeBarrier::new(1, 4);
        let h = b.handle(0).unwrap();
        assert!(h.wait().is_leader());
        assert_eq!(b.handle(0).unwrap_err(), HandleError::InUse { id: 0 });
        drop(h);
        assert!(b.handle(0).is_ok());
    }
}
