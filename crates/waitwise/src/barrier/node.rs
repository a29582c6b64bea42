//! [`CountingNode`]: a counter of arrivals with a sense bit on one
//! [`WaitWord`], one node of the combining trees
//! ([`TreeBarrier`](super::TreeBarrier),
//! [`TopologyBarrier`](super::TopologyBarrier)).
//!
//! # State word
//!
//! ```text
//!  bit 31     : sense    flips once per episode: the release
//!  bits 30..0 : arrived  parties counted in this episode, < parties
//! ```
//!
//! Transitions:
//! - arrive, not last: `(sense, a) => (sense, a + 1)` with one `fetch_add`;
//!   the value it returns names the episode's sense, and the arrival waits
//!   until the word's sense differs from it.
//! - arrive, last: `(sense, parties - 1) => (sense, parties)` with the same
//!   `fetch_add`; the node is full, and the last arrival owns it until it
//!   releases it.
//! - release (by the last arrival, after whatever it does above this node):
//!   `(sense, parties) => (!sense, 0)` with one store, then `wake_all` only
//!   if somebody sleeps on the word.
//!
//! Why a store and not a CAS or an add for the release: once the node is
//! full every other party waits for the sense to flip and none can touch
//! the word, so there is nothing to compare against. The count is reset in
//! the same store that releases, so no arrival of the next episode can be
//! counted against the old count: nobody arrives before the flip.
//!
//! Why one sense bit is enough (sense reversal): the sense can flip at most
//! once while a party waits, because the next flip needs that party's own
//! next arrival. So "the sense differs from the one my arrival saw" means
//! "my episode is over", and a sleeping waiter's futex value can never come
//! back to what it slept on (no ABA).
//!
//! # Memory ordering
//!
//! The arrival `fetch_add` and the release store are `SeqCst`: they are the
//! write half of the [`WaitWord`] sleeper protocol (the waker reads the
//! sleeper count after them). Together with the waiter's acquiring load of
//! the flipped word they make everything every party wrote before arriving
//! visible to every party after leaving: each arrival's add is a release
//! that the last arrival's add reads (a release sequence on one word), and
//! the last arrival's release store is read by every waiter.

use super::waiting::NodeWaiting;
use super::wake_chain::WakeChain;
use crate::policy::Policy;
use crate::profile::Profiler;
use crate::wait_word::WaitWord;
use waitwise_platform::shim::Ordering;

/// The sense bit.
const SENSE: u32 = 1 << 31;
/// The arrival count.
const ARRIVED_MASK: u32 = SENSE - 1;
/// Most parties one node counts: the count must not carry into the sense
/// bit. No real program gets near it (Linux caps threads at `pid_max`,
/// at most 2^22); larger requests are clamped to it.
pub(crate) const MAX_PARTIES: usize = ARRIVED_MASK as usize;

#[inline]
fn sense(word: u32) -> u32 {
    word & SENSE
}

#[inline]
fn arrived(word: u32) -> u32 {
    word & ARRIVED_MASK
}

/// What an arrival at a node learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// This arrival filled the node: it must (eventually) call
    /// [`CountingNode::release`] with this sense.
    Last {
        /// The episode's sense (bit 31 only).
        sense: u32,
    },
    /// Others are missing: wait with [`CountingNode::wait_release`] for the
    /// sense to differ from this one.
    Wait {
        /// The episode's sense (bit 31 only).
        sense: u32,
    },
}

/// A counter of `parties` arrivals with a sense bit; waits follow `policy`
/// (after polling for woken parties when `chain` is on).
#[derive(Debug)]
pub(crate) struct CountingNode {
    word: WaitWord,
    parties: u32,
    policy: Policy,
    chain: WakeChain,
}

impl CountingNode {
    /// A node counting `parties` arrivals (clamped to `1..=MAX_PARTIES`).
    pub(crate) fn new(parties: usize, waiting: NodeWaiting) -> Self {
        Self {
            word: WaitWord::new(0),
            parties: parties.clamp(1, MAX_PARTIES) as u32,
            policy: waiting.policy,
            chain: WakeChain::new(waiting.breaks_chains),
        }
    }

    /// Number of arrivals that fill the node.
    pub(crate) fn parties(&self) -> usize {
        self.parties as usize
    }

    /// The policy waits at this node follow.
    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Counts one arrival.
    #[inline]
    pub(crate) fn arrive(&self) -> Arrival {
        // (sense, a) => (sense, a + 1)
        let old = self.word.value().fetch_add(1, Ordering::SeqCst);
        if arrived(old) + 1 >= self.parties {
            Arrival::Last { sense: sense(old) }
        } else {
            Arrival::Wait { sense: sense(old) }
        }
    }

    /// Opens the next episode: `(sense, parties) => (!sense, 0)`, then wakes
    /// the sleepers, if any. Only the [`Arrival::Last`] of the episode calls
    /// it, with the sense its arrival returned.
    #[inline]
    pub(crate) fn release(&self, sense: u32) {
        // (sense, parties) => (!sense, 0)
        self.word.value().store(sense ^ SENSE, Ordering::SeqCst);
        self.chain.wake(self.word.as_ref(), true);
    }

    /// Waits until the sense differs from `sense_seen`; records the wait in
    /// `profiler`. Returns whether it blocked.
    #[inline]
    pub(crate) fn wait_release(&self, sense_seen: u32, profiler: &Profiler) -> bool {
        let start = profiler.start();
        let out = self
            .chain
            .wait_until(self.word.as_ref(), &self.policy, |w| sense(w) != sense_seen);
        debug_assert!(!out.timed_out(), "a wait without deadline timed out");
        profiler.finish(start, out.blocked());
        out.blocked()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn blocking() -> NodeWaiting {
        NodeWaiting::exactly(Policy::always_block())
    }

    #[test]
    fn last_arrival_releases_and_resets() {
        let n = CountingNode::new(3, blocking());
        assert_eq!(n.arrive(), Arrival::Wait { sense: 0 });
        assert_eq!(n.arrive(), Arrival::Wait { sense: 0 });
        assert_eq!(n.arrive(), Arrival::Last { sense: 0 });
        n.release(0);
        assert_eq!(n.word.value().load(Ordering::SeqCst), SENSE);
        assert_eq!(n.arrive(), Arrival::Wait { sense: SENSE });
    }

    #[test]
    fn zero_and_huge_parties_are_clamped() {
        assert_eq!(CountingNode::new(0, blocking()).parties(), 1);
        assert_eq!(
            CountingNode::new(usize::MAX, blocking()).parties(),
            MAX_PARTIES
        );
        let one = CountingNode::new(0, blocking());
        assert_eq!(one.arrive(), Arrival::Last { sense: 0 });
    }
}
