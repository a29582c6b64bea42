//! [`DisseminationBarrier`]: Hensgen, Finkel & Manber's dissemination
//! barrier (1988), as Mellor-Crummey & Scott (1991) present it: no counter
//! at all, only pairwise flags, each with one writer and one reader.
//!
//! # Algorithm
//!
//! With `n` threads there are `R = ceil(log2 n)` rounds. In round `k`,
//! thread `i` signals thread `(i + 2^k) mod n` and waits for the signal of
//! thread `(i - 2^k) mod n`. After round `k` a thread knows that the `2^(k+1)`
//! threads before it (cyclically) have arrived; after `R` rounds, all `n`.
//! Every thread waits in every round, on a flag only one thread writes, so
//! there is no hot word; the price is `n * R` signals per episode.
//!
//! # State words
//!
//! ```text
//!  flag[i][k]: u32  episodes in which thread i was signalled in round k (wrapping)
//!  episode[i]: u32  episodes thread i has completed, kept in its handle
//! ```
//!
//! Transitions, for thread `i` in its episode `e` (`e` = completed + 1):
//! - signal round `k`: `flag[to][k] := e` (a store: it is the flag's only
//!   writer), then `wake_one` if the partner sleeps on it;
//! - wait round `k`: until `flag[i][k] >= e` (wrapping comparison).
//!
//! Why `>=` and not `==`: the signaller may already be one episode ahead
//! (it can finish episode `e` while thread `i` still waits in its last
//! rounds of `e`, and signal `e + 1`). It can never be two ahead: finishing
//! `e + 1` needs thread `i`'s own arrival at `e + 1`. So the flag is always
//! within one of `e`, and the wrapping comparison is exact.
//!
//! # Memory ordering
//!
//! The signal store is `SeqCst`: it is the write half of the [`WaitWord`]
//! sleeper protocol. It also releases everything the signaller knows (its
//! own writes and, transitively, those of the threads that signalled it in
//! earlier rounds); the waiter's `Acquire` load of the flag takes it over.
//! After the last round every thread has acquired, through some chain of
//! signals, every other thread's writes before its arrival. The episode
//! counter is touched only by the handle's thread: see [`Claims`] for how it
//! passes between holders.

use super::central::BarrierWaitResult;
use super::handle::{Claims, HandleError, MAX_HANDLE_PARTIES};
use super::waiting::NodeWaiting;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::{Profiler, WaitProfile};
use crate::wait_word::WaitWord;
use std::cell::Cell;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// Whether a flag holding `flag` shows the signal of episode `episode`:
/// `flag >= episode` in wrapping arithmetic (the two are never more than
/// one apart, see the module docs).
#[inline]
fn signalled(flag: u32, episode: u32) -> bool {
    (flag.wrapping_sub(episode) as i32) >= 0
}

/// Rounds for `n` threads: `ceil(log2 n)`, 0 for one thread.
fn rounds_for(n: usize) -> usize {
    (usize::BITS - (n.max(1) - 1).leading_zeros()) as usize
}

/// A reusable dissemination barrier for `n` threads; each thread waits
/// through its own [`DisseminationHandle`].
///
/// Use it when there is no cheap shared counter to hit (many threads, or
/// several sockets): every flag has one writer and one reader. It does
/// `n * ceil(log2 n)` signals per episode where a tree does about `n`, so
/// for few threads the [`Barrier`](super::Barrier) is cheaper.
///
/// - `n == 0` is treated as 1, `n` above
///   [`MAX_HANDLE_PARTIES`] as that.
/// - Thread ids are claimed: [`DisseminationBarrier::handle`] gives id `i`
///   to one live handle at a time, [`DisseminationBarrier::handles`] all of
///   them. A handle is `Send` but not `Sync`; it borrows the barrier, so the
///   barrier cannot be dropped while a thread waits. A thread may drop its
///   handle between episodes and another take the id: the episode count
///   stays with the id.
/// - No thread arrives last in a meaningful sense, so thread 0 leads every
///   episode.
///
/// # Examples
/// ```
/// use waitwise::barrier::DisseminationBarrier;
///
/// let barrier = DisseminationBarrier::new(3);
/// assert_eq!(barrier.rounds(), 2);
/// let slots: Vec<_> = (0..3).map(|_| std::sync::atomic::AtomicUsize::new(0)).collect();
/// std::thread::scope(|s| {
///     for h in barrier.handles().unwrap() {
///         let slots = &slots;
///         s.spawn(move || {
///             for round in 1..=20 {
///                 slots[h.id()].store(round, std::sync::atomic::Ordering::Relaxed);
///                 h.wait();
///                 // Everyone has arrived at this round:
///                 for s in slots {
///                     assert!(s.load(std::sync::atomic::Ordering::Relaxed) >= round);
///                 }
///                 h.wait();
///             }
///         });
///     }
/// });
/// ```
pub struct DisseminationBarrier {
    parties: usize,
    rounds: usize,
    /// `flags[i * rounds + k]`: thread `i`'s flag for round `k`.
    flags: Box<[WaitWord]>,
    /// Completed episodes of each id while no handle holds it.
    episodes: Box<[AtomicU32]>,
    claims: Claims,
    policy: Policy,
    profiler: Profiler,
}

impl DisseminationBarrier {
    /// A dissemination barrier for `n` threads with the default policy for
    /// `n` parties ([`default_policy`](super::default_policy)).
    pub fn new(n: usize) -> Self {
        Self::with_options(n, WaitOptions::new())
    }

    /// A dissemination barrier for `n` threads with `options` (policy
    /// override, profiling).
    pub fn with_options(n: usize, options: WaitOptions) -> Self {
        let parties = n.clamp(1, MAX_HANDLE_PARTIES);
        let rounds = rounds_for(parties);
        Self {
            parties,
            rounds,
            flags: (0..parties * rounds).map(|_| WaitWord::new(0)).collect(),
            episodes: (0..parties).map(|_| AtomicU32::new(0)).collect(),
            claims: Claims::new(parties),
            // No wake-chain breaking: each round waits on another flag.
            policy: NodeWaiting::from_options(parties, &options).policy,
            profiler: options.profiler(),
        }
    }

    fn make_handle(&self, id: usize) -> DisseminationHandle<'_> {
        DisseminationHandle {
            barrier: self,
            id,
            // Relaxed: only the holder of `id` touches its counter; the
            // claim's Acquire swap ordered the previous holder's store.
            episode: Cell::new(self.episodes[id].load(Ordering::Relaxed)),
        }
    }

    /// The handle for thread `id`, if `id < parties()` and no live handle
    /// holds it.
    pub fn handle(&self, id: usize) -> Result<DisseminationHandle<'_>, HandleError> {
        self.claims.claim(id)?;
        Ok(self.make_handle(id))
    }

    /// Handles for every id, in order; an error (and no handle) if one is
    /// held.
    pub fn handles(&self) -> Result<Vec<DisseminationHandle<'_>>, HandleError> {
        self.claims.claim_all()?;
        Ok((0..self.parties).map(|id| self.make_handle(id)).collect())
    }

    /// Number of threads an episode waits for.
    pub fn parties(&self) -> usize {
        self.parties
    }

    /// Rounds per episode: `ceil(log2 parties)`.
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// The policy every round's wait follows.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The wait-time histogram, one entry per thread and episode (all its
    /// rounds together); `None` unless profiling is on.
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.profiler.snapshot("barrier")
    }

    fn flag(&self, thread: usize, round: usize) -> &WaitWord {
        &self.flags[thread * self.rounds + round]
    }

    /// One episode `episode` for thread `id`.
    fn episode(&self, id: usize, episode: u32) {
        let start = self.profiler.start();
        let mut blocked = false;
        for round in 0..self.rounds {
            let partner = (id + (1 << round)) % self.parties;
            let out = self.flag(partner, round);
            // flag[partner][round] := episode (the flag's only writer)
            out.value().store(episode, Ordering::SeqCst);
            out.wake_one();
            let r = self
                .flag(id, round)
                .wait_until(&self.policy, Deadline::NEVER, |f| signalled(f, episode));
            blocked |= r.blocked();
        }
        self.profiler.finish(start, blocked);
    }
}

/// Thread `id`'s place in a [`DisseminationBarrier`]; dropping it frees the
/// id (and keeps its episode count for the next holder).
#[derive(Debug)]
pub struct DisseminationHandle<'a> {
    barrier: &'a DisseminationBarrier,
    id: usize,
    /// Episodes this id has completed (the `Cell` also makes the handle
    /// `!Sync`: one thread waits through it at a time).
    episode: Cell<u32>,
}

impl DisseminationHandle<'_> {
    /// Blocks until all parties have called `wait` in this episode. Thread
    /// 0 is the leader.
    #[inline]
    pub fn wait(&self) -> BarrierWaitResult {
        let e = self.episode.get().wrapping_add(1);
        self.barrier.episode(self.id, e);
        self.episode.set(e);
        BarrierWaitResult::new(self.id == 0)
    }

    /// This handle's thread id.
    pub fn id(&self) -> usize {
        self.id
    }
}

impl Drop for DisseminationHandle<'_> {
    fn drop(&mut self) {
        // Relaxed: published by the Release in `Claims::release`.
        self.barrier.episodes[self.id].store(self.episode.get(), Ordering::Relaxed);
        self.barrier.claims.release(self.id);
    }
}

/// The shape and the policy, which is what a user can act on (the
/// episode's state is spread over the flags, not shown).
impl std::fmt::Debug for DisseminationBarrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisseminationBarrier")
            .field("parties", &self.parties())
            .field("rounds", &self.rounds())
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_shape_and_policy() {
        let opts = WaitOptions::new().policy(Policy::always_block());
        let b = DisseminationBarrier::with_options(4, opts);
        assert_eq!(
            format!("{b:?}"),
            "DisseminationBarrier { parties: 4, rounds: 2, policy: /b/0 }"
        );
    }

    #[test]
    fn rounds() {
        for (n, r) in [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (8, 3),
            (9, 4),
        ] {
            assert_eq!(rounds_for(n), r, "n={n}");
        }
    }

    #[test]
    fn wrapping_comparison() {
        assert!(signalled(5, 5));
        assert!(signalled(6, 5));
        assert!(!signalled(4, 5));
        assert!(signalled(0, u32::MAX));
        assert!(!signalled(u32::MAX, 0));
    }

    #[test]
    fn handles_can_change_hands_between_episodes() {
        let b = DisseminationBarrier::with_options(2, WaitOptions::new().profile(true));
        for _ in 0..3 {
            std::thread::scope(|s| {
                for h in b.handles().unwrap() {
                    s.spawn(move || {
                        for _ in 0..5 {
                            h.wait();
                        }
                    });
                }
            });
        }
        // Relaxed: the scopes joined every thread, which orders their
        // writes before this read.
        assert_eq!(b.episodes[0].load(Ordering::Relaxed), 15);
        assert_eq!(b.wait_profile().unwrap().total_waits, 30);
    }

    #[test]
    fn one_thread_leads_without_rounds() {
        let b = DisseminationBarrier::new(0);
        let h = b.handle(0).unwrap();
        assert!(h.wait().is_leader());
        assert_eq!(
            b.handle(1).unwrap_err(),
            HandleError::OutOfRange { id: 1, parties: 1 }
        );
    }
}
