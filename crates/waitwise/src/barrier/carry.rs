//! [`CarryBarrierRef`]: the central barrier for a power-of-two number of
//! parties on one futex word, an arrival being one `fetch_add`.
//!
//! # Word
//!
//! ```text
//!  bits 31..k: episode   (wrapping)
//!  bits k-1..0: arrivals in that episode   (parties = 2^k)
//! ```
//!
//! Every arrival adds 1. The last arrival of an episode finds the arrival
//! bits all ones: its add carries out of them, which resets the count and
//! opens the next episode in the same step, and releases the waiters, who
//! poll (and sleep on) this very word until its episode bits pass theirs.
//! An arrival is one read-modify-write and the release is the last one's:
//! against [`CentralBarrierRef`](super::CentralBarrierRef), which counts
//! with a CAS on one word and releases with an add on another, that is two
//! cache-line hand-offs fewer per episode. [`PairBarrier`](super::PairBarrier)
//! is the case `k = 1` with at most two threads.
//!
//! More threads than parties may use it: an arrival after the carry counts
//! in the next episode, whose bits the carry already cleared. The word
//! changes at every arrival, so a waiter about to sleep may find it changed
//! and look again; only the last arrival wakes sleepers.
//!
//! A waiter's episode can come back under it only after `2^(32-k)` more
//! episodes complete while it waits (the central barrier's caveat, with
//! fewer bits): [`fits`] keeps `k` at most [`MAX_CARRY_BITS`].
//!
//! # Memory ordering
//!
//! Every arrival is a `SeqCst` `fetch_add` on the word: the last arrival's
//! add reads the chain of all earlier arrivals' adds and so acquires their
//! writes, and a waiter's `Acquire` load that sees the episode passed reads
//! that add or a later one in the same chain (a release sequence of RMWs),
//! so every thread leaves having seen every thread's pre-barrier writes.
//! `SeqCst` is also the write half of the [`WaitWordRef`] sleeper protocol.

use crate::wait_word::WaitWordRef;
use waitwise_platform::shim::Ordering;

/// The most arrival bits: parties up to `2^MAX_CARRY_BITS`, leaving at
/// least `2^24` episodes before a waiter's episode could come back.
pub const MAX_CARRY_BITS: u32 = 8;

/// Whether a barrier of `parties` runs as a [`CarryBarrierRef`]: a power
/// of two from 2 to `2^MAX_CARRY_BITS`.
#[inline(always)]
pub const fn fits(parties: u32) -> bool {
    parties.is_power_of_two() && parties >= 2 && parties <= 1 << MAX_CARRY_BITS
}

/// What an arrival at a [`CarryBarrierRef`] learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CarryArrival {
    /// This arrival completed its episode: wake the sleepers.
    Last,
    /// Others are missing: wait until [`CarryBarrierRef::has_passed`].
    Wait {
        /// The word as this arrival left it.
        arrived: u32,
    },
}

/// The carry barrier over a borrowed futex word (module docs). Every thread
/// must use the same word with the same number of parties, one that
/// [`fits`].
#[derive(Clone, Copy, Debug)]
pub struct CarryBarrierRef<'a> {
    word: WaitWordRef<'a>,
    /// The arrival bits.
    mask: u32,
}

impl<'a> CarryBarrierRef<'a> {
    /// A view of `word` (zeroed: a fresh barrier) for `parties`, which
    /// [`fits`].
    #[inline(always)]
    pub fn new(word: WaitWordRef<'a>, parties: u32) -> Self {
        debug_assert!(fits(parties));
        Self {
            word,
            mask: parties - 1,
        }
    }

    /// The word, to wait on and to wake.
    #[inline(always)]
    pub fn word(self) -> WaitWordRef<'a> {
        self.word
    }

    /// Counts one arrival; the last of an episode opens the next.
    #[inline]
    pub fn arrive(self) -> CarryArrival {
        // SeqCst: the chain of arrivals and the sleeper protocol's write
        // (module doc, "Memory ordering").
        let old = self.word.value().fetch_add(1, Ordering::SeqCst);
        if old & self.mask == self.mask {
            CarryArrival::Last
        } else {
            CarryArrival::Wait {
                arrived: old.wrapping_add(1),
            }
        }
    }

    /// Whether `word` shows the episode of an arrival that left the word
    /// at `arrived` completed: its episode bits passed `arrived`'s.
    #[inline(always)]
    pub fn has_passed(self, word: u32, arrived: u32) -> bool {
        let episodes = !self.mask;
        ((word & episodes).wrapping_sub(arrived & episodes) as i32) > 0
    }

    /// Arrivals in the open episode (a snapshot).
    #[inline]
    pub fn arrivals(self) -> u32 {
        // Relaxed: a snapshot that orders nothing.
        self.word.value().load(Ordering::Relaxed) & self.mask
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::wait_word::WaitWord;

    #[test]
    fn fits_powers_of_two_from_two() {
        assert!(!fits(0) && !fits(1) && !fits(3) && !fits(6));
        assert!(fits(2) && fits(4) && fits(256));
        assert!(!fits(512));
    }

    /// The word's value (the tests' accesses are on one thread).
    fn value(word: &WaitWord) -> u32 {
        word.value().load(Ordering::Relaxed)
    }

    #[test]
    fn the_last_arrival_carries_into_the_next_episode() {
        let word = WaitWord::new(0);
        let b = CarryBarrierRef::new(word.as_ref(), 4);
        let mut waiting = Vec::new();
        for _ in 0..3 {
            match b.arrive() {
                CarryArrival::Wait { arrived } => waiting.push(arrived),
                CarryArrival::Last => panic!("too early"),
            }
        }
        assert_eq!(b.arrivals(), 3);
        let now = value(&word);
        assert!(waiting.iter().all(|&a| !b.has_passed(now, a)));
        assert_eq!(b.arrive(), CarryArrival::Last);
        assert_eq!(b.arrivals(), 0);
        let now = value(&word);
        assert!(waiting.iter().all(|&a| b.has_passed(now, a)));
        // An arrival of the next episode waits for it, not for this one.
        let CarryArrival::Wait { arrived } = b.arrive() else {
            panic!("the next episode's first arrival waits")
        };
        assert!(!b.has_passed(value(&word), arrived));
    }

    #[test]
    fn the_episode_bits_wrap() {
        let word = WaitWord::new(u32::MAX - 1);
        let b = CarryBarrierRef::new(word.as_ref(), 2);
        let CarryArrival::Wait { arrived } = b.arrive() else {
            panic!("first arrival waits")
        };
        assert_eq!(b.arrive(), CarryArrival::Last);
        assert_eq!(value(&word), 0);
        assert!(b.has_passed(value(&word), arrived));
    }
}
