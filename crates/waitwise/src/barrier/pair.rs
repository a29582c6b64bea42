//! [`PairBarrier`]: the two-party helper/worker barrier of seed 000
//! (Anastopoulos & Koziris 2008, section 4.3): a lightweight *helper*
//! thread idles at the barrier while a *worker* computes; the worker's
//! arrival releases a polling helper with one atomic add and no system
//! call, and wakes a sleeping one with one `futex_wake`.
//!
//! Seed 000's `mwmmon` barrier counts arrivals under a spin lock and counts
//! departures too, so a fast thread cannot re-enter before the slow one
//! left. Here one word does both, without a lock.
//!
//! # State word
//!
//! ```text
//!  bits 31..1: episode  (wrapping)
//!  bit 0     : arrived  one of the two parties is waiting in this episode
//! ```
//!
//! Both arrivals are the same `fetch_add(1)`:
//! - first: `(e, 0) => (e, 1)`, then wait until the word is no longer
//!   `(e, 1)`;
//! - second: `(e, 1) => (e + 1, 0)`: the carry out of bit 0 counts the
//!   arrival, resets the flag and starts the next episode in one step. Then
//!   `wake_one` makes a system call only if the first party sleeps.
//!
//! Why the word cannot come back to `(e, 1)` under a waiter (no ABA): the
//! episode advances only when both parties arrive, so it moves by at most
//! one while one of them waits.
//!
//! # Memory ordering
//!
//! Both adds are `SeqCst`: the second is the write half of the
//! [`WaitWord`] sleeper protocol, and as read-modify-writes on one word they
//! synchronize each party's writes before arriving with the other's reads
//! after leaving (the waiter's load of the new word is `Acquire`).

use super::central::BarrierWaitResult;
use super::waiting::LazyBarrierWaiting;
use crate::loom_const::const_unless_loom;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::wait_word::WaitWord;
use std::fmt;
use waitwise_platform::shim::Ordering;

/// One party has arrived in this episode.
const ARRIVED: u32 = 1;

/// A reusable barrier for exactly two threads, such as a worker and its
/// helper thread.
///
/// Use it when two threads meet again and again, especially when one of
/// them (the helper) usually waits for the other: the worker's arrival is a
/// single atomic add, plus a system call only when the helper gave up
/// polling and slept. `wait` is symmetric; the second arrival of each
/// episode is its leader.
///
/// At most two threads may use it; a third concurrent caller is a logic
/// error that pairs arrivals arbitrarily (never undefined behaviour). The
/// barrier cannot be dropped while a thread waits in it: `wait` borrows it.
///
/// # Examples
/// ```
/// use waitwise::barrier::PairBarrier;
///
/// let barrier = PairBarrier::new();
/// let mut data = vec![0u64; 4];
/// std::thread::scope(|s| {
///     let helper = s.spawn(|| {
///         let mut led = 0;
///         for _ in 0..100 {
///             led += barrier.wait().is_leader() as u32;
///         }
///         led
///     });
///     let mut led = 0;
///     for i in 0..100 {
///         data[i % 4] += 1;
///         led += barrier.wait().is_leader() as u32;
///     }
///     assert_eq!(led + helper.join().unwrap(), 100); // one leader per episode
/// });
/// assert_eq!(data.iter().sum::<u64>(), 100);
/// ```
pub struct PairBarrier {
    word: WaitWord,
    waits: LazyBarrierWaiting,
}

impl PairBarrier {
    const_unless_loom! {
        /// A two-party barrier with the default policy for two parties
        /// ([`default_policy`](super::default_policy)`(2)`).
        pub fn new() -> Self {
            Self::with_options(WaitOptions::new())
        }

        /// A two-party barrier with `options` (policy override, profiling).
        pub fn with_options(options: WaitOptions) -> Self {
            Self {
                word: WaitWord::new(0),
                waits: LazyBarrierWaiting::new(2, options),
            }
        }
    }

    /// Blocks until the other party has called `wait` in this episode too.
    /// The second to arrive is the leader.
    #[inline]
    pub fn wait(&self) -> BarrierWaitResult {
        // (e, 0) => (e, 1), or (e, 1) => (e + 1, 0)
        let old = self.word.value().fetch_add(ARRIVED, Ordering::SeqCst);
        if old & ARRIVED != 0 {
            self.waits.get().chain.wake(self.word.as_ref(), false);
            return BarrierWaitResult::new(true);
        }
        self.wait_for_partner(old.wrapping_add(ARRIVED));
        BarrierWaitResult::new(false)
    }

    /// The first arrival's wait, until the word leaves `waiting`.
    fn wait_for_partner(&self, waiting: u32) {
        self.waits
            .get()
            .wait_until(self.word.as_ref(), |w| w != waiting);
    }

    /// Always 2.
    pub fn parties(&self) -> usize {
        2
    }

    /// The policy the first arrival's wait follows.
    pub fn policy(&self) -> &Policy {
        &self.waits.get().policy
    }

    /// The wait-time histogram of the first arrivals' waits; `None` unless
    /// profiling is on.
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.waits.get().profiler.snapshot("barrier")
    }
}

impl Default for PairBarrier {
    fn default() -> Self {
        Self::new()
    }
}

/// The state a user can act on (a snapshot): whether one party waits in
/// this episode, and the policy by name.
impl fmt::Debug for PairBarrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display that orders nothing.
        let word = self.word.value().load(Ordering::Relaxed);
        f.debug_struct("PairBarrier")
            .field("one_waiting", &(word & ARRIVED != 0))
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn const_new_static_and_debug() {
        static PAIR: PairBarrier = PairBarrier::new();
        let other = std::thread::spawn(|| PAIR.wait().is_leader());
        let here = PAIR.wait().is_leader();
        assert_ne!(here, other.join().unwrap());
        let b = PairBarrier::with_options(WaitOptions::new().policy(Policy::always_block()));
        assert_eq!(
            format!("{b:?}"),
            "PairBarrier { one_waiting: false, policy: /b/0 }"
        );
    }
}
