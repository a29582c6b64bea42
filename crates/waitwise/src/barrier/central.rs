//! The central barrier: one counter of arrivals that the last arrival of
//! each episode resets, and a futex word of completed episodes that the
//! waiters wait on. The algorithm is written once, as
//! [`CentralBarrierRef`], a view over borrowed words; [`Barrier`] owns its
//! words on a cache line of their own, and the interposer's
//! `pthread_barrier_t` keeps them inside glibc's object. For a power-of-two
//! number of parties [`Barrier`] runs the carry barrier (module `carry`)
//! on the futex word alone instead: one `fetch_add` per arrival, the last
//! one's carry opening the next episode.
//!
//! # Words
//!
//! ```text
//!  state (64 bits): episode (high half) | arrivals in that episode (low half)
//!  gen   (32 bits): episodes completed, the futex the waiters wait on,
//!                   with its sleeper count (a WaitWordRef)
//! ```
//!
//! # Protocol
//!
//! A thread arrives with one CAS on `state`, which counts it and tells it
//! its episode `e`. The last arrival's CAS also resets the count and opens
//! episode `e + 1`; it then bumps `gen` and wakes the sleepers (if any):
//! [`CentralBarrierRef::complete`]. The others wait until `gen` has passed
//! `e` ([`CentralBarrierRef::has_completed`]).
//!
//! Count and episode share one word so that more threads than parties may
//! use the barrier (POSIX allows it for `pthread_barrier_t`): a thread may
//! arrive for the next episode while the last arrival of this one is still
//! completing it. With two words (an arrival counter reset by a store, and
//! the episode), an arrival between the last arrival's increment and its
//! reset would be overwritten (that episode would let `parties + 1`
//! threads through), and one that read the episode just before the bump
//! would leave with this episode although it counted in the next.
//!
//! `gen` counts completed episodes: each last arrival adds one, and the
//! last arrivals of two consecutive episodes may bump in either order.
//! "`gen` has passed `e`" is `gen - e > 0` (wrapping, as a signed
//! difference): then at least `e + 1` episodes have bumped, and since an
//! episode completes only after the one before it (its first arrival
//! follows that one's last in `state`'s order), episodes `0..=e` are all
//! complete. A waiter's futex value can therefore never come back to what
//! it slept on while it waits (no ABA), as long as fewer than `2^31`
//! episodes complete meanwhile.
//!
//! An arrival may be taken back while its episode is open
//! ([`CentralBarrierRef::take_back`]): the interposer does so for a waiter
//! that glibc unwinds, so the episode waits for another thread instead of
//! completing one short.
//!
//! # Memory ordering
//!
//! Arrivals (and take-backs) are `AcqRel` CASes on `state`, all RMWs, so
//! every later arrival's CAS acquires every earlier arrival's writes
//! (release sequences). The last arrival of episode `e` or of any later
//! episode has therefore seen the pre-barrier writes of every thread of
//! episode `e`; it bumps `gen` with a `SeqCst` (release) RMW, and a waiter
//! that sees `gen` past `e` (an `Acquire` load in the engine) has acquired,
//! through `gen`'s own RMW chain, a bump by such a last arrival (at least
//! one of the `e + 1` bumps it counts comes from episode `e` or later). So
//! every thread leaves having seen every thread's pre-barrier writes. The
//! bump is `SeqCst` for the sleeper-count Dekker pattern of
//! [`WaitWordRef`]. A failed CAS's value is only the next guess
//! (`Relaxed`).

use super::carry::{self, CarryArrival, CarryBarrierRef};
use super::node::MAX_PARTIES;
use super::waiting::LazyBarrierWaiting;
use crate::loom_const::const_unless_loom;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::wait_word::WaitWordRef;
use std::fmt;
use waitwise_platform::futex::Futex;
use waitwise_platform::shim::{AtomicU32, AtomicU64, Ordering};

/// `state`'s arrival count.
#[inline(always)]
fn arrivals(state: u64) -> u32 {
    state as u32
}

/// `state`'s episode number.
#[inline(always)]
fn episode(state: u64) -> u32 {
    (state >> 32) as u32
}

/// `state` for `arrivals` threads in episode `episode`.
#[inline(always)]
fn pack(episode: u32, arrivals: u32) -> u64 {
    (u64::from(episode) << 32) | u64::from(arrivals)
}

/// What an arrival at a [`CentralBarrierRef`] learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpisodeArrival {
    /// This arrival completed `episode`: call
    /// [`CentralBarrierRef::complete`], then wake the waiters.
    Last {
        /// The episode this arrival completed.
        episode: u32,
    },
    /// Others are missing: wait until
    /// [`CentralBarrierRef::has_completed`]`(gen, episode)`.
    Wait {
        /// The episode this arrival counts in.
        episode: u32,
    },
}

/// The central barrier over borrowed words (module docs: words, protocol,
/// ordering): an arrival counter in `state`, completed episodes in the
/// futex word of `gen`. Every thread that uses the barrier must go through
/// a view of the same words, with the same number of parties.
///
/// # Examples
/// ```
/// use waitwise::barrier::{CentralBarrierRef, EpisodeArrival};
/// use std::sync::atomic::{AtomicU32, AtomicU64};
/// use waitwise::platform::futex::Futex;
/// use waitwise::{Deadline, Policy, WaitWordRef};
///
/// let (state, gen, sleepers) = (AtomicU64::new(0), Futex::new(0), AtomicU32::new(0));
/// let barrier = CentralBarrierRef::new(&state, WaitWordRef::new(&gen, &sleepers));
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| match barrier.arrive(2) {
///             EpisodeArrival::Last { .. } => {
///                 barrier.complete();
///                 barrier.gen().wake_all();
///             }
///             EpisodeArrival::Wait { episode } => {
///                 let policy = Policy::always_block();
///                 barrier.gen().wait_until(&policy, Deadline::NEVER, |g| {
///                     CentralBarrierRef::has_completed(g, episode)
///                 });
///             }
///         });
///     }
/// });
/// assert_eq!(barrier.arrivals(), 0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CentralBarrierRef<'a> {
    state: &'a AtomicU64,
    gen: WaitWordRef<'a>,
}

impl<'a> CentralBarrierRef<'a> {
    /// A view over `state` (arrivals and episode) and `gen` (completed
    /// episodes, with its sleeper count). Zeroed words are a fresh barrier.
    #[inline(always)]
    pub fn new(state: &'a AtomicU64, gen: WaitWordRef<'a>) -> Self {
        Self { state, gen }
    }

    /// The completed-episodes word, to wait on and to wake.
    #[inline(always)]
    pub fn gen(self) -> WaitWordRef<'a> {
        self.gen
    }

    /// Counts one arrival in a barrier of `parties` (at least 1) per
    /// episode; the last arrival of an episode opens the next one.
    #[inline]
    pub fn arrive(self, parties: u32) -> EpisodeArrival {
        debug_assert!(parties >= 1);
        // Relaxed: a first guess for the CAS, which is what orders.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let (e, a) = (episode(s), arrivals(s));
            // a < parties: the last arrival resets the count.
            let last = a + 1 >= parties;
            // (e, a) => (e, a + 1), or as the last arrival (e + 1, 0).
            let next = if last {
                pack(e.wrapping_add(1), 0)
            } else {
                pack(e, a + 1)
            };
            // AcqRel: the chain of arrivals (module doc, "Memory
            // ordering"). Failure Relaxed: the value is only the next guess.
            match self
                .state
                .compare_exchange_weak(s, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) if last => return EpisodeArrival::Last { episode: e },
                Ok(_) => return EpisodeArrival::Wait { episode: e },
                Err(now) => s = now,
            }
        }
    }

    /// Completes an episode: `gen + 1`. Only an [`EpisodeArrival::Last`]
    /// calls it, once; then it wakes the waiters
    /// ([`WaitWordRef::wake_all`], or a wake of its own that ends in it).
    #[inline]
    pub fn complete(self) {
        // gen + 1. SeqCst: release to the waiters, and the Dekker write
        // before the waker's sleeper check.
        self.gen.value().fetch_add(1, Ordering::SeqCst);
    }

    /// Whether `gen` (the completed-episodes word) has passed `episode`:
    /// at least `episode + 1` episodes completed (module doc, "Protocol").
    #[inline(always)]
    pub fn has_completed(gen: u32, episode: u32) -> bool {
        (gen.wrapping_sub(episode) as i32) > 0
    }

    /// Takes back an arrival in `episode` if that episode is still open
    /// (its last arrival has not come); `false` if it completed, and the
    /// arrival counted. For a waiter that leaves without waiting (the
    /// interposer's, unwound by glibc).
    pub fn take_back(self, episode_arrived: u32) -> bool {
        // Relaxed: a first guess for the CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        // (e, a) => (e, a - 1) while our episode e is open (its last
        // arrival would have opened e + 1). AcqRel: an arrival like any
        // other, in `state`'s chain. Failure Relaxed: the next guess.
        while episode(s) == episode_arrived && arrivals(s) > 0 {
            match self
                .state
                .compare_exchange_weak(s, s - 1, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Arrivals in the open episode (a snapshot).
    #[inline]
    pub fn arrivals(self) -> u32 {
        // Relaxed: a snapshot that orders nothing.
        arrivals(self.state.load(Ordering::Relaxed))
    }
}

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

/// A reusable barrier for `n` threads: a central counter and a futex word
/// of completed episodes ([`CentralBarrierRef`] on words of its own).
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
/// - More than `n` threads may wait at once: each episode lets exactly `n`
///   through, in arrival order.
/// - The barrier cannot be dropped while a thread waits in it: `wait`
///   borrows it, so sharing it needs an `Arc` or a scope that outlives
///   every waiter.
///
/// Costs per episode: for a power-of-two number of parties up to 256, one
/// `fetch_add` per party on one futex word, the last one's carry opening
/// the next episode and releasing the waiters, who poll that word; for any
/// other number, one CAS per party ([`CentralBarrierRef`]), one RMW and the
/// sleeper check by the last arrival, and each waiter's polling (or
/// sleeping) on the completed-episodes word, which shares the counter's
/// cache line. Every arrival writes that line, so with many parties a
/// [`TreeBarrier`](super::TreeBarrier) spreads the traffic better.
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
///
/// The constructors are `const` (as std's `Barrier::new`), so a barrier
/// can be a `static`:
/// ```
/// use waitwise::barrier::Barrier;
///
/// static START: Barrier = Barrier::new(2);
/// let other = std::thread::spawn(|| START.wait().is_leader());
/// let here = START.wait().is_leader();
/// assert!(here != other.join().unwrap()); // exactly one leader
/// ```
pub struct Barrier {
    words: Words,
    parties: u32,
    waits: LazyBarrierWaiting,
}

/// The barrier's words on a cache line of their own, as a
/// [`WaitWord`](crate::WaitWord)'s.
#[repr(align(128))]
#[derive(Debug)]
struct Words {
    /// Completed episodes: the futex the waiters wait on. For a
    /// power-of-two number of parties, the carry barrier's whole word
    /// (episode and arrivals, module `carry`), `state` unused.
    gen: Futex,
    /// Waiters registered as (about to be) asleep on `gen`.
    sleepers: AtomicU32,
    /// Episode and arrivals (module doc, "Words").
    state: AtomicU64,
}

impl Words {
    const_unless_loom! {
        /// A fresh barrier's words.
        fn new() -> Self {
            Self {
                gen: Futex::new(0),
                sleepers: AtomicU32::new(0),
                state: AtomicU64::new(0),
            }
        }
    }
}

impl Barrier {
    const_unless_loom! {
        /// A barrier for `n` threads with the default policy for `n`
        /// parties ([`default_policy`](super::default_policy)). `n == 0`
        /// acts as 1.
        pub fn new(n: usize) -> Self {
            Self::with_options(n, WaitOptions::new())
        }

        /// A barrier for `n` threads with `options` (policy override,
        /// profiling). `n == 0` acts as 1.
        ///
        /// # Examples
        /// ```
        /// use waitwise::{barrier::Barrier, Policy, WaitOptions};
        ///
        /// let b = Barrier::with_options(2, WaitOptions::new().policy(Policy::always_block()).profile(true));
        /// assert_eq!(b.policy().name(), "/b/0");
        /// std::thread::scope(|s| {
        ///     s.spawn(|| b.wait());
        ///     b.wait();
        /// });
        /// assert_eq!(b.wait_profile().unwrap().total_waits, 1); // the first arrival waited
        /// ```
        pub fn with_options(n: usize, options: WaitOptions) -> Self {
            // `clamp(1, MAX_PARTIES)`, spelled out: `Ord::clamp` is not
            // `const`.
            let n = if n == 0 {
                1
            } else if n > MAX_PARTIES {
                MAX_PARTIES
            } else {
                n
            };
            Self {
                words: Words::new(),
                parties: n as u32,
                waits: LazyBarrierWaiting::new(n, options),
            }
        }
    }

    /// The algorithm, over this barrier's words.
    #[inline(always)]
    fn view(&self) -> CentralBarrierRef<'_> {
        let w = &self.words;
        CentralBarrierRef::new(&w.state, WaitWordRef::new(&w.gen, &w.sleepers))
    }

    /// Blocks until all parties have called `wait` in this episode. Returns
    /// a leader result to exactly one of them (the last to arrive).
    #[inline]
    pub fn wait(&self) -> BarrierWaitResult {
        if carry::fits(self.parties) {
            return self.wait_carrying();
        }
        let b = self.view();
        match b.arrive(self.parties) {
            EpisodeArrival::Last { .. } => {
                b.complete();
                self.waits.get().chain.wake(b.gen(), true);
                BarrierWaitResult::new(true)
            }
            EpisodeArrival::Wait { episode } => {
                self.wait_until(b.gen(), |gen| {
                    CentralBarrierRef::has_completed(gen, episode)
                });
                BarrierWaitResult::new(false)
            }
        }
    }

    /// [`Barrier::wait`] for a power-of-two number of parties: the carry
    /// barrier on the futex word alone ([`carry`]).
    #[inline]
    fn wait_carrying(&self) -> BarrierWaitResult {
        let b = self.carry_view();
        match b.arrive() {
            CarryArrival::Last => {
                self.waits.get().chain.wake(b.word(), true);
                BarrierWaitResult::new(true)
            }
            CarryArrival::Wait { arrived } => {
                self.wait_until(b.word(), |w| b.has_passed(w, arrived));
                BarrierWaitResult::new(false)
            }
        }
    }

    /// The carry barrier over this barrier's futex word (parties that
    /// [`carry::fits`]; `state` is unused then).
    #[inline(always)]
    fn carry_view(&self) -> CarryBarrierRef<'_> {
        let w = &self.words;
        CarryBarrierRef::new(WaitWordRef::new(&w.gen, &w.sleepers), self.parties)
    }

    /// Arrivals in the open episode (a snapshot).
    fn arrivals(&self) -> u32 {
        if carry::fits(self.parties) {
            self.carry_view().arrivals()
        } else {
            self.view().arrivals()
        }
    }

    /// Waits, profiled, until `ready(word)`: the episode this arrival
    /// belongs to has completed (the central counter's episode word, or
    /// the carry barrier's futex word).
    fn wait_until(&self, word: WaitWordRef<'_>, ready: impl FnMut(u32) -> bool) {
        self.waits.get().wait_until(word, ready);
    }

    /// Number of threads an episode waits for (`n`, or 1 for `n == 0`).
    pub fn parties(&self) -> usize {
        self.parties as usize
    }

    /// The policy waits follow.
    pub fn policy(&self) -> &Policy {
        &self.waits.get().policy
    }

    /// The wait-time histogram of the waits so far (the last arrival does
    /// not wait and is not recorded); `None` unless profiling is on.
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.waits.get().profiler.snapshot("barrier")
    }
}

/// The state a user can act on (a snapshot): the parties, how many of
/// them have arrived in the current episode, and the policy by name.
impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier")
            .field("parties", &self.parties)
            .field("arrived", &self.arrivals())
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn const_new_static_and_debug() {
        static ONE: Barrier = Barrier::new(0);
        assert!(ONE.wait().is_leader());
        assert_eq!(ONE.parties(), 1);
        assert_eq!(ONE.policy(), &super::super::default_policy(1));
        let b = Barrier::with_options(3, WaitOptions::new().policy(Policy::always_block()));
        assert_eq!(
            format!("{b:?}"),
            "Barrier { parties: 3, arrived: 0, policy: /b/0 }"
        );
    }

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
    fn more_threads_than_parties_pass_in_twos() {
        let b = Barrier::with_options(2, WaitOptions::new().policy(Policy::always_block()));
        let leaders = std::sync::atomic::AtomicUsize::new(0);
        // Four threads, one wait each, per round: two episodes whichever
        // pairs form. (With several waits per thread, three threads could
        // pair among themselves to the end and strand the fourth.)
        for _ in 0..50 {
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        if b.wait().is_leader() {
                            // Relaxed: a count, read after the scopes joined.
                            leaders.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    });
                }
            });
        }
        assert_eq!(leaders.into_inner(), 100);
        assert_eq!(b.view().arrivals(), 0);
    }

    #[test]
    fn an_arrival_is_taken_back_only_while_its_episode_is_open() {
        let b = Barrier::new(2);
        let view = b.view();
        assert_eq!(view.arrive(2), EpisodeArrival::Wait { episode: 0 });
        assert!(view.take_back(0));
        assert_eq!(view.arrivals(), 0);
        assert_eq!(view.arrive(2), EpisodeArrival::Wait { episode: 0 });
        assert_eq!(view.arrive(2), EpisodeArrival::Last { episode: 0 });
        view.complete();
        assert!(!view.take_back(0), "episode 0 completed");
        assert!(CentralBarrierRef::has_completed(
            view.gen().value().load(Ordering::SeqCst),
            0
        ));
        assert_eq!(view.arrive(2), EpisodeArrival::Wait { episode: 1 });
        // An arrival of episode 0 cannot take back one of episode 1.
        assert!(!view.take_back(0));
        assert_eq!(view.arrivals(), 1);
    }

    #[test]
    fn completion_is_a_wrapping_comparison() {
        assert!(!CentralBarrierRef::has_completed(5, 5));
        assert!(CentralBarrierRef::has_completed(6, 5));
        assert!(CentralBarrierRef::has_completed(0, u32::MAX));
        assert!(!CentralBarrierRef::has_completed(u32::MAX, 0));
    }

    #[test]
    fn explicit_policy_is_kept() {
        let b = Barrier::with_options(64, WaitOptions::new().policy(Policy::always_spin()));
        assert_eq!(b.policy().name(), "s//inf");
    }
}
