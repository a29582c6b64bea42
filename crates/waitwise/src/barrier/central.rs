//! [`Barrier`]: the central counter barrier, sense-reversing, lock-free.
//!
//! Every party adds itself to one counter; the last arrival flips the sense
//! bit in the same word, which releases everyone at once, and makes a
//! `futex_wake` system call only if some waiter went to sleep. The state
//! word, its transitions and the memory-ordering argument are those of the
//! [`CountingNode`] (module `node`): this barrier is one node.
//!
//! Costs per episode: one `fetch_add` per party, one store and one load by
//! the last arrival, and each waiter's polling (or sleeping) on the word.
//! Every arrival changes the word the waiters poll, so with many parties a
//! [`TreeBarrier`](super::TreeBarrier) spreads the traffic better.

use super::node::{Arrival, CountingNode};
use super::wait_policy::Waiting;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::{Profiler, WaitProfile};

/// What [`Barrier::wait`] (and the other barriers' waits) returns: whether
/// this thread is the episode's leader.
///
/// Exactly one party per episode is the leader, as with
/// [`std::sync::BarrierWaitResult`]; which one depends on the barrier
/// (the last arrival for the counter barriers, thread 0 for the
/// [`DisseminationBarrier`](super::DisseminationBarrier)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierWaitResult {
    leader: bool,
}

impl BarrierWaitResult {
    /// A result saying whether the thread led the episode.
    pub(crate) const fn new(leader: bool) -> Self {
        Self { leader }
    }

    /// Whether this thread is the episode's leader (exactly one per episode).
    pub fn is_leader(&self) -> bool {
        self.leader
    }
}

/// A reusable barrier for `n` threads: a central counter with a sense bit.
///
/// Use it where you would use [`std::sync::Barrier`]: same semantics, no
/// lock inside, and waiters poll before sleeping (by default for `0.62 B`,
/// with PAUSE while the parties fit on the CPUs and with `yield` when they
/// outnumber them, then block: see
/// [`default_policy`](super::default_policy)), so short episodes never
/// enter the kernel, long ones do not burn CPU, and a waiter never holds
/// the CPU a late party needs for long.
///
/// - `n == 0` is treated as `n == 1`, like std: every `wait` returns at once
///   and leads.
/// - At most `n` threads may be inside `wait` at once. More is a logic
///   error: some of them may be released early (never undefined behaviour).
/// - The barrier cannot be dropped while a thread waits in it: `wait`
///   borrows it, so sharing it needs an `Arc` or a scope that outlives
///   every waiter.
///
/// # Examples
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use waitwise::barrier::Barrier;
///
/// let barrier = Barrier::new(3);
/// let leaders = AtomicUsize::new(0);
/// std::thread::scope(|s| {
///     for _ in 0..3 {
///         s.spawn(|| {
///             for _ in 0..100 {
///                 if barrier.wait().is_leader() {
///                     leaders.fetch_add(1, Ordering::Relaxed);
///                 }
///             }
///         });
///     }
/// });
/// assert_eq!(leaders.load(Ordering::Relaxed), 100); // one per episode
/// assert_eq!(barrier.parties(), 3);
/// assert!(Barrier::new(0).wait().is_leader()); // n == 0 acts as 1
/// ```
#[derive(Debug)]
pub struct Barrier {
    node: CountingNode,
    profiler: Profiler,
}

impl Barrier {
    /// A barrier for `n` threads with the default policy for `n` parties
    /// ([`default_policy`](super::default_policy)). `n == 0` acts as 1.
    pub fn new(n: usize) -> Self {
        Self::with_options(n, WaitOptions::new())
    }

    /// A barrier for `n` threads with `options` (policy override,
    /// profiling). `n == 0` acts as 1.
    pub fn with_options(n: usize, options: WaitOptions) -> Self {
        let n = n.max(1);
        Self {
            node: CountingNode::new(n, Waiting::from_options(n, &options)),
            profiler: options.profiler(),
        }
    }

    /// Blocks until all parties have called `wait` in this episode. Returns
    /// a leader result to exactly one of them (the last to arrive).
    #[inline]
    pub fn wait(&self) -> BarrierWaitResult {
        match self.node.arrive() {
            Arrival::Last { sense } => {
                self.node.release(sense);
                BarrierWaitResult::new(true)
            }
            Arrival::Wait { sense } => {
                self.node.wait_release(sense, &self.profiler);
                BarrierWaitResult::new(false)
            }
        }
    }

    /// Number of threads an episode waits for (`n`, or 1 for `n == 0`).
    pub fn parties(&self) -> usize {
        self.node.parties()
    }

    /// The policy waits follow.
    pub fn policy(&self) -> &Policy {
        self.node.policy()
    }

    /// The wait-time histogram of the waits so far (the last arrival does
    /// not wait and is not recorded); `None` unless profiling is on.
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.profiler.snapshot("barrier")
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn single_party_always_leads() {
        for n in [0, 1] {
            let b = Barrier::new(n);
            for _ in 0..3 {
                assert!(b.wait().is_leader());
            }
        }
    }

    #[test]
    fn profile_counts_waits_of_non_leaders() {
        let b = Barrier::with_options(2, WaitOptions::new().profile(true));
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..10 {
                        b.wait();
                    }
                });
            }
        });
        let p = b.wait_profile().unwrap();
        assert_eq!(p.kind, "barrier");
        assert_eq!(p.total_waits, 10);
        assert!(Barrier::with_options(2, WaitOptions::new().profile(false))
            .wait_profile()
            .is_none());
    }

    #[test]
    fn explicit_policy_is_kept() {
        let b = Barrier::with_options(64, WaitOptions::new().policy(Policy::always_spin()));
        assert_eq!(b.policy().name(), "s//inf");
    }
}
