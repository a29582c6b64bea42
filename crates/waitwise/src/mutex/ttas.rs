//! The test-and-test-and-set lock with two-phase waiting and bounded
//! unfairness: the algorithm once, as [`TtasLockRef`], a view over a
//! borrowed futex word, and [`RawTtasMutex`], the default
//! [`Mutex`](super::Mutex), on top of it.
//!
//! # State word
//!
//! ```text
//!  bits 0-1   the lock's state:
//!    UNLOCKED    0  free
//!    LOCKED      1  held, and no thread needs a futex wake-up
//!    CONTENDED   2  held, and a thread may be asleep on the futex (or owes a
//!                   sleeper its wake-up, see below)
//!    HANDED_OFF  3  released directly to a sleeper that the releaser woke:
//!                   held by nobody yet, and only a thread returning from
//!                   its sleep may take it (no barging)
//!  bits 2-31  STARVING: waiters that ask for a hand-off (see "Bounded
//!             unfairness")
//! ```
//!
//! Drepper's three states ("Futexes are tricky", mutex 2) are glibc's values
//! for `pthread_mutex_t`'s `__lock`, so the interposer's mutexes run this
//! algorithm inside glibc's object. Only a waiter whose [`LockWait`] asks
//! for hand-offs ([`LockWait::hand_off_after`]) ever counts itself in
//! `STARVING`, and only a count above zero makes an unlock hand off: a
//! front end that never asks (the interposer) keeps the word at 0, 1 and 2.
//!
//! Transitions:
//! - lock, fast: `0 => LOCKED`, one CAS (a word with `STARVING > 0` goes
//!   the slow way).
//! - lock, polling phase (test-and-test-and-set): wait until the state
//!   reads `UNLOCKED` (polling as the front end's [`LockWait`] says, for
//!   `alpha * B` with `yield` by default), then `UNLOCKED => LOCKED` (or
//!   `=> CONTENDED` when this waiter owes a wake-up); after a lost race,
//!   back off for a random delay that doubles with every loss (Lim &
//!   Agarwal section 6.3: waiters released at once must not all hammer the
//!   word). When the phase ends, one more probe, `UNLOCKED => LOCKED` (or
//!   `=> CONTENDED`): a lock released while the waiter was off its CPU
//!   (yielding) is taken without marking it `CONTENDED`, which would cost
//!   its unlock a `futex_wake` for nobody.
//! - lock, blocking phase: `UNLOCKED | LOCKED | CONTENDED => CONTENDED`
//!   (`HANDED_OFF` is left as it is); if it was `UNLOCKED` the lock is
//!   ours, else sleep on the futex while the word is unchanged; a thread
//!   whose sleep ends (woken or timed out) takes a `HANDED_OFF` lock
//!   (`HANDED_OFF => CONTENDED`), else goes back to the polling phase.
//! - unlock: `LOCKED => UNLOCKED` (one CAS, no system call) when the word is
//!   exactly `LOCKED`; else `CONTENDED => UNLOCKED` and `futex_wake(1)`,
//!   or, with `STARVING > 0`, `CONTENDED => HANDED_OFF` and
//!   `futex_wake(1)` (a hand-off, below).
//!
//! A woken sleeper *owes* the sleepers still in the kernel their wake-up
//! (unlock set the word to `UNLOCKED`, forgetting them): until it pays, it
//! acquires only as `CONTENDED`, or it marks the word `CONTENDED` before
//! sleeping again (or sleeps on a `HANDED_OFF` word, whose taker marks it),
//! or, giving up on a timeout, it marks a held lock `CONTENDED`.
//! Unlike std's mutex it first polls again (parking_lot does the same), so a
//! holder that re-acquires in a loop runs on with cheap unlocks while the
//! woken thread polls, instead of paying a `futex_wake` per release.
//!
//! # Bounded unfairness
//!
//! The lock is unfair: a running thread takes a released lock before a
//! woken one gets a CPU, which is what keeps its throughput under
//! contention, and also what lets one waiter lose race after race. Its
//! bound, as parking_lot's eventual fairness but decided by the waiter
//! that loses and counted in lost rounds rather than a fixed time (Go's
//! 1 ms starvation switch, golang/go#33747, collapses once every waiter's
//! wait exceeds it): a waiter that has come back from its futex sleep
//! (woken, or refused because the word changed) and then been beaten to
//! the lock [`LockWait::hand_off_after`] times counts itself in `STARVING`
//! and from then on sleeps at once, without a polling phase. While
//! `STARVING > 0`, every unlock of a `CONTENDED` lock hands it to a
//! sleeper instead of releasing it: it sets `HANDED_OFF`, which no
//! arriving or polling thread can take, and wakes one sleeper, which takes
//! it as `CONTENDED`. The kernel wakes a futex's sleepers of equal priority
//! in the order they went to sleep (loom's model does too), so each
//! hand-off goes to the longest sleeper and the starving waiter gets the
//! lock after at most as many hand-offs as there were sleepers ahead of it
//! (fewer than the lock's waiters); it then leaves `STARVING` and the lock
//! is unfair again. The bound grows with the number of waiters, because a
//! waiter is woken about once per that many releases. Each hand-off costs
//! the lock a wake-up latency (nobody holds it until the woken thread
//! runs), which is why the lock hands off only on request, and why
//! [`RawTtasMutex`] hands off at most once per
//! [`HAND_OFF_PACE_IN_B`](super::HAND_OFF_PACE_IN_B) `B`, or per
//! [`HAND_OFF_PACE_MAX_NS`](super::HAND_OFF_PACE_MAX_NS) where that is
//! shorter ([`HandOffPace`]): a lock saturated by many waiters would
//! otherwise keep `STARVING` above zero and hand off at nearly every
//! release, one critical section per wake-up latency. A release the pace
//! refuses releases and wakes one sleeper as if nobody asked, `STARVING`
//! kept; the first release after the interval hands off. The bound becomes at most
//! as many paced hand-offs as there were sleepers ahead: a starving waiter
//! is served within about `sleepers x HAND_OFF_PACE_IN_B x B` (at most
//! `sleepers x HAND_OFF_PACE_MAX_NS`), while hand-offs cost the lock at
//! most about `1 / HAND_OFF_PACE_IN_B` of its time where `B` is below
//! `HAND_OFF_PACE_MAX_NS / HAND_OFF_PACE_IN_B`, and one wake-up latency
//! per `HAND_OFF_PACE_MAX_NS` above it.
//!
//! The bound acts only through sleepers. A waiter whose polling phase
//! always ends in a win never counts a lost round and never asks; that is
//! the usual case when a short critical section is contended by threads
//! that outnumber the CPUs, where the wait for a yield-polling waiter is
//! the holder's short run of acquisitions, and almost no wait outlasts the
//! polling limit (`examples/mutex_starvation.rs --profile` counts the
//! waits that slept). There the shares of the acquisitions would be
//! decided by the polling races between the CPUs, which a slower CPU
//! loses more often than its speed alone says; [`RawTtasMutex`] evens
//! them out with turns between the CPUs, ended by count (`cpu_turns.rs`):
//! once one CPU has kept re-acquiring while another waited, the lock is
//! kept for one CPU's threads for as many releases as it makes in about
//! [`TURN_TARGET_NS`](super::TURN_TARGET_NS), then for the next waiting
//! CPU's. The turns are a hint beside the word, not a state of it: they
//! change who tries for a free lock, never the word's protocol above.
//!
//! A hand-off whose `futex_wake` finds nobody asleep (the starving waiters
//! are between counting themselves and sleeping) takes the lock back and
//! releases it, `HANDED_OFF => UNLOCKED`, then wakes one sleeper again: a
//! waiter may have gone to sleep on the `HANDED_OFF` word in between, and
//! nobody else owes it a wake-up. The hand-off's correctness does not rest
//! on the count the kernel returns (loom's futex returns none): a woken
//! thread that finds the lock released races for it as after any wake-up.
//!
//! # Memory ordering
//!
//! Acquiring is an `Acquire` RMW and releasing a `Release` RMW: the pair
//! orders the critical sections (a hand-off's `CONTENDED => HANDED_OFF` is
//! the release, its taker's `HANDED_OFF => CONTENDED` the acquire; taking
//! the lock back, `HANDED_OFF => UNLOCKED`, is `Release` as well). No
//! `SeqCst` is needed for the sleep/wake hand-shake: sleeper and waker both
//! make RMWs on the one word, which has a single modification order (the
//! unlock's RMW either sees the sleeper's `CONTENDED` or the sleeper's RMW
//! sees the unlock's `UNLOCKED`), and the kernel re-checks the word under
//! its own lock before sleeping. The `STARVING` count publishes no data;
//! it changes inside the same RMWs. Failed CAS and polling loads carry no
//! data and are `Relaxed`/`Acquire` hints only.
//!
//! # Waiting
//!
//! The front end hands its waiting in as a [`LockWait`]: a
//! [`TwoPhaseWait`] (how to poll and for how long, its clock, its
//! mechanism; how to sleep on the futex) that also says whether and when
//! to ask for a hand-off. [`RawTtasMutex`] waits with [`PolicyWait`]
//! ([`AskingForHandOff`]): the mutex kind's default, `adapt/b` (each lock
//! learning its poll limit from its own waits), with the `yield`
//! mechanism, one look at the word per `sched_yield`, so a waiter neither
//! pulls the lock's line from the holder nor keeps a CPU from a preempted
//! holder (figures in the [module docs](super)), asking
//! for a hand-off after [`HAND_OFF_AFTER_LOST_ROUNDS`] lost rounds; a
//! `WaitOptions` policy replaces the limit and the mechanism. The polling
//! phase is the engine's ([`poll_until`](crate::wait_word::poll_until));
//! the blocking phase uses the word's futex directly with the states above
//! (a [`WaitWord`](crate::WaitWord) sleeper count would stay non-zero
//! until a woken thread runs, and every release in between would make a
//! system call).
//!
//! # Early looks
//!
//! Before that, a contended acquisition of [`RawTtasMutex`] under the
//! default waiting looks at the word a few times, a spin-loop hint apart
//! ([`look_early`](crate::wait_word::look_early)), and takes the lock if
//! a look finds it free in its CPU's turn: a holder running on another
//! CPU through a short critical section releases within that, where the
//! first `yield` costs the wait ~0.5-1 µs on a KVM guest (parking_lot's
//! and std's mutexes spin first too). Not while the process's own threads
//! crowd the CPUs (the holder may then need this CPU), not profiled (a
//! profiled wait records every wait), never under loom.
//!
//! When those looks find the lock held throughout, the holder is likely
//! one that takes it back at once after each release, which leaves the
//! word free for a few ns at a time. The acquisition then registers its
//! CPU as waiting (as a polling waiter does, so that the turns start and
//! the lock's pace is noted) and looks again after pauses of spin-loop
//! hints that double up to
//! [`BACKED_OFF_LOOK_MAX_HINTS`](crate::wait_word::BACKED_OFF_LOOK_MAX_HINTS)
//! (~10 µs in all, [`look_backing_off`](crate::wait_word::look_backing_off)),
//! before its policy's set-up and its first `yield`: sparse looks catch
//! such a release often enough and seldom take the word's line from the
//! holder. Not in another CPU's turn (no look could take the lock); not
//! while the lock's releases come less than
//! [`FAST_RELEASE_NS`](super::FAST_RELEASE_NS) apart
//! ([`CpuTurns::releases_come_fast`]), about a cache-line transfer
//! between CPUs, where the holder's run of acquisitions from its own cache
//! is worth more than a waiter's catch: on 2 vCPUs, two threads taking the
//! lock with empty critical sections made 28-35 M acquisitions/s with
//! the looks and 62-64 M/s without (parking_lot: 34 M/s); and only while
//! every runnable thread of the machine has a CPU
//! ([`cpu_demand`](crate::policy::idle_extension::cpu_demand), as every
//! poll that holds its CPU): while others wait for one, the looks would
//! take this CPU's time from them, or from a preempted holder.

use super::cpu_turns::{refresh_cpu_slot, CpuTurns, HolderCpu, TurnFor};
// Under loom the pace is not consulted (`may_hand_off`).
#[cfg(not(loom))]
use super::hand_off_pace::hand_off_interval_ns;
use super::hand_off_pace::HandOffPace;
use super::waiting::LockWaiting;
#[cfg(not(loom))]
use super::waiting::{deadline_after, deadline_at};
use crate::loom_const::const_unless_loom;
use crate::mechanism::backoff::Backoff;
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::two_phase_wait::{PolicyWait, TwoPhaseWait};
use crate::wait_word::poll_until;
#[cfg(not(loom))]
use crate::wait_word::{look_backing_off, look_early};
use std::time::Duration;
#[cfg(not(loom))]
use std::time::Instant;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::{Futex, FutexWait};
use waitwise_platform::shim::Ordering;

/// Free.
const UNLOCKED: u32 = 0;
/// Held; no thread needs a futex wake-up.
const LOCKED: u32 = 1;
/// Held; a thread may sleep on the futex, so the releaser wakes one.
const CONTENDED: u32 = 2;
/// Released to a sleeper the releaser woke; held by nobody yet, taken only
/// by a thread whose sleep ended. Never set while `STARVING` is 0.
const HANDED_OFF: u32 = 3;
/// The state's bits.
const STATE_MASK: u32 = 3;
/// One waiter in `STARVING` (bits 2-31: at most 2^30 - 1 waiters, far
/// more threads than a process has).
const STARVING_ONE: u32 = 4;

/// How many rounds a waiter of [`RawTtasMutex`] loses before it asks for a
/// hand-off. A round is lost when the waiter comes back from its futex
/// sleep (woken or refused) without the lock, and when a polling phase saw
/// the lock free but lost every race for it: a poller on the CPU beside a
/// thread that re-acquires in a loop sees the lock free only in the short
/// window before the next acquisition and can lose most races while never
/// sleeping long. Guessed, then checked with
/// `examples/mutex_starvation.rs`: 1 would hand off at the first lost race,
/// paying a wake-up latency per hand-off where the unfair lock would have
/// run on; larger values let the longest wait grow by about one
/// sleep/wake round per extra loss. Counting only sleep rounds left the
/// least served of 8 threads on 2 CPUs with 0.48-0.69 of the most served
/// one's acquisitions; counting lost polling phases too, 0.80-0.90.
pub const HAND_OFF_AFTER_LOST_ROUNDS: u32 = 2;

/// The state bits of a word.
#[inline(always)]
fn state(word: u32) -> u32 {
    word & STATE_MASK
}

/// `word` with its state replaced by `next`, `STARVING` kept.
#[inline(always)]
fn with_state(word: u32, next: u32) -> u32 {
    (word & !STATE_MASK) | next
}

/// Whether a waiter asks for hand-offs.
#[inline(always)]
fn starving(word: u32) -> bool {
    word >= STARVING_ONE
}

/// What a contended acquisition of a [`TtasLockRef`] asks of its front
/// end beyond a [`TwoPhaseWait`] (its polling phases and its futex
/// sleeps): whether and when to ask for a hand-off. [`PolicyWait`] never
/// asks; [`AskingForHandOff`] makes any wait ask.
pub trait LockWait: TwoPhaseWait {
    /// After how many lost rounds (back from its futex sleep, woken or
    /// refused, then beaten to the lock) the waiter asks for a hand-off
    /// (module docs, "Bounded unfairness"); `Some(0)` asks at its first
    /// sleep. `None`, the default: never, and the word keeps glibc's three
    /// values.
    ///
    /// A waiter that asks may be handed the lock while it sleeps, so its
    /// [`TwoPhaseWait::sleep`] must return to the algorithm whenever it
    /// returns [`FutexWait::Woken`] or [`FutexWait::TimedOut`]: a front end
    /// whose sleep can end otherwise (an unwind) must not ask.
    #[inline]
    fn hand_off_after(&self) -> Option<u32> {
        None
    }
}

/// The engine's wait never asks for a hand-off.
impl LockWait for PolicyWait {}

/// A [`LockWait`] that polls and sleeps as `W` does and asks for a
/// hand-off after a number of lost rounds ([`LockWait::hand_off_after`]).
/// [`RawTtasMutex`] asks after [`HAND_OFF_AFTER_LOST_ROUNDS`].
///
/// # Examples
/// ```
/// use waitwise::mutex::{AskingForHandOff, LockWait};
/// use waitwise::two_phase_wait::PolicyWait;
/// use waitwise::Policy;
///
/// let wait = AskingForHandOff::new(PolicyWait::new(&Policy::always_block()), 2);
/// assert_eq!(wait.hand_off_after(), Some(2));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AskingForHandOff<W> {
    wait: W,
    lost_rounds: u32,
}

impl<W: TwoPhaseWait> AskingForHandOff<W> {
    /// Waits as `wait` does, asking for a hand-off after `lost_rounds`
    /// lost rounds.
    #[inline]
    pub fn new(wait: W, lost_rounds: u32) -> Self {
        Self { wait, lost_rounds }
    }
}

impl<W: TwoPhaseWait> TwoPhaseWait for AskingForHandOff<W> {
    #[inline]
    fn start_polling(&mut self, deadline: Deadline) -> bool {
        self.wait.start_polling(deadline)
    }

    #[inline]
    fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool {
        self.wait.poll(futex, ready)
    }

    #[inline]
    fn sleep(&mut self, futex: &Futex, expected: u32, timeout: Option<Duration>) -> FutexWait {
        self.wait.sleep(futex, expected, timeout)
    }
}

impl<W: TwoPhaseWait> LockWait for AskingForHandOff<W> {
    #[inline]
    fn hand_off_after(&self) -> Option<u32> {
        Some(self.lost_rounds)
    }
}

/// How [`TtasLockRef::lock_contended`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockOutcome {
    /// The caller holds the lock.
    Acquired {
        /// Whether the waiter slept in the kernel at least once.
        blocked: bool,
    },
    /// The deadline passed first; the lock is not held, and the wake-ups
    /// the waiter owed are paid.
    TimedOut {
        /// Whether the waiter slept in the kernel at least once.
        blocked: bool,
    },
}

impl LockOutcome {
    /// Whether the caller holds the lock.
    #[inline]
    pub fn acquired(self) -> bool {
        matches!(self, LockOutcome::Acquired { .. })
    }

    /// Whether the waiter slept in the kernel at least once.
    #[inline]
    pub fn blocked(self) -> bool {
        match self {
            LockOutcome::Acquired { blocked } | LockOutcome::TimedOut { blocked } => blocked,
        }
    }
}

/// The TTAS lock over a borrowed futex word (module docs: states,
/// transitions, hand-offs, ordering): the one copy of the algorithm, for
/// [`RawTtasMutex`] and for front ends whose word lives elsewhere (the
/// interposer's `pthread_mutex_t`, whose `__lock` holds the three states
/// of a lock whose waiters never ask for hand-offs). Every thread that
/// locks or unlocks the word must go through this view.
///
/// # Examples
/// ```
/// use waitwise::mutex::TtasLockRef;
/// use waitwise::platform::futex::Futex;
/// use waitwise::two_phase_wait::PolicyWait;
/// use waitwise::{Deadline, Policy};
///
/// let word = Futex::new(0); // UNLOCKED
/// let lock = TtasLockRef::new(&word);
/// assert!(lock.try_lock());
/// assert!(!lock.try_lock());
/// let mut wait = PolicyWait::new(&Policy::always_block());
/// let timed = lock.lock_contended(&mut wait, Deadline::after(std::time::Duration::ZERO));
/// assert!(!timed.acquired());
/// assert!(lock.unlock()); // it was held
/// assert!(!lock.is_locked());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TtasLockRef<'a> {
    futex: &'a Futex,
}

/// What a waiter that leaves the word (acquiring or giving up) takes back
/// from `STARVING`: its own count, if it is in it.
#[inline(always)]
fn count_of(in_starving: bool) -> u32 {
    if in_starving {
        STARVING_ONE
    } else {
        0
    }
}

impl<'a> TtasLockRef<'a> {
    /// A view over `futex`, whose word holds a state as above (0: a fresh,
    /// unlocked lock).
    #[inline(always)]
    pub fn new(futex: &'a Futex) -> Self {
        Self { futex }
    }

    /// Acquires the lock if it is free and nobody asks for a hand-off;
    /// never waits.
    #[inline]
    pub fn try_lock(self) -> bool {
        // 0 => LOCKED. Acquire: pairs with the last unlock's Release.
        // Failure Relaxed: a failed CAS takes nothing.
        self.futex
            .value()
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// `UNLOCKED => target` with the word's `STARVING` count less the
    /// caller's own (`in_starving`), while the state reads `UNLOCKED`.
    /// Acquire: pairs with the last unlock's Release. Relaxed load and
    /// failure: guesses for the CAS.
    #[inline]
    fn acquire_free(self, target: u32, in_starving: bool) -> bool {
        let w = self.futex.value();
        let mut s = w.load(Ordering::Relaxed);
        while state(s) == UNLOCKED {
            let next = with_state(s, target) - count_of(in_starving);
            match w.compare_exchange_weak(s, next, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Whether the lock is held, or handed off to a waiter (a snapshot).
    #[inline]
    pub fn is_locked(self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        state(self.futex.value().load(Ordering::Relaxed)) != UNLOCKED
    }

    /// Releases the lock, waking one sleeper if the word says one may
    /// sleep, handing the lock to it if a waiter asks. Call it only as the
    /// holder. Returns `false` when the lock was not held (`UNLOCKED`, or
    /// `HANDED_OFF` to a waiter): the caller's error, which the front end
    /// reports or ignores; the word is left as it was.
    #[inline]
    pub fn unlock(self) -> bool {
        self.unlock_paced(|| true)
    }

    /// [`TtasLockRef::unlock`], handing off only if `may_hand_off()` says
    /// so when a waiter asks (a [`HandOffPace`](super::HandOffPace), module
    /// docs, "Bounded unfairness"); it is called at most once, and only
    /// when a waiter asks. Refused, the release releases and wakes one
    /// sleeper, as if nobody asked.
    #[inline]
    pub fn unlock_paced(self, may_hand_off: impl FnOnce() -> bool) -> bool {
        // LOCKED => UNLOCKED. Release: publishes the critical section to
        // the next acquirer. A CAS, not a swap: a word with more in it
        // than LOCKED may have to stay held (a hand-off). Failure Relaxed:
        // the value seeds the slow path's CAS.
        match self.futex.value().compare_exchange(
            LOCKED,
            UNLOCKED,
            Ordering::Release,
            Ordering::Relaxed,
        ) {
            Ok(_) => true,
            Err(now) => self.unlock_contended(now, may_hand_off),
        }
    }

    #[cold]
    fn unlock_contended(self, mut s: u32, may_hand_off: impl FnOnce() -> bool) -> bool {
        let w = self.futex.value();
        // Asked once, at the first release that a waiter asks to hand off;
        // the answer stands through the CAS's retries.
        let mut may_hand_off = Some(may_hand_off);
        let mut hand_off_allowed = false;
        loop {
            let next = match state(s) {
                // LOCKED => UNLOCKED, STARVING kept: nobody sleeps yet.
                LOCKED => with_state(s, UNLOCKED),
                CONTENDED if starving(s) => {
                    if let Some(ask) = may_hand_off.take() {
                        hand_off_allowed = ask();
                    }
                    if hand_off_allowed {
                        // CONTENDED => HANDED_OFF: a waiter asks for a
                        // hand-off.
                        with_state(s, HANDED_OFF)
                    } else {
                        // Refused by the pace: CONTENDED => UNLOCKED,
                        // STARVING kept, and wake one.
                        with_state(s, UNLOCKED)
                    }
                }
                // CONTENDED => UNLOCKED, and wake one.
                CONTENDED => UNLOCKED,
                // Not held by the caller.
                _ => return false,
            };
            // Release: publishes the critical section (to the taker of a
            // hand-off too). Failure Relaxed: the value is the next guess.
            match w.compare_exchange_weak(s, next, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        match state(s) {
            CONTENDED if starving(s) && hand_off_allowed => self.hand_off(),
            CONTENDED => {
                self.futex.wake(1);
            }
            _ => {}
        }
        true
    }

    /// After `CONTENDED => HANDED_OFF`: wake the sleeper that takes the
    /// lock; if the kernel finds none asleep, take the lock back and
    /// release it (module docs, "Bounded unfairness"). The word is still
    /// held (by the hand-off) when it is read here, so it is live memory.
    #[cold]
    fn hand_off(self) {
        if self.futex.wake(1) > 0 {
            return; // the woken thread takes it
        }
        let w = self.futex.value();
        // Relaxed: a guess for the CAS.
        let mut s = w.load(Ordering::Relaxed);
        while state(s) == HANDED_OFF {
            // HANDED_OFF => UNLOCKED. Release: as the unlock's.
            match w.compare_exchange_weak(
                s,
                with_state(s, UNLOCKED),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    // A waiter may have gone to sleep on HANDED_OFF since
                    // the first wake-up: it is owed one.
                    self.futex.wake(1);
                    return;
                }
                Err(now) => s = now,
            }
        }
        // A thread whose sleep ended took it.
    }

    /// A thread whose sleep ended takes a `HANDED_OFF` lock:
    /// `HANDED_OFF => CONTENDED` (it was woken: it owes the other sleepers
    /// their wake-up), leaving `STARVING` if it is in it.
    #[inline]
    fn take_handed_off(self, in_starving: bool) -> bool {
        let w = self.futex.value();
        // Relaxed: a guess for the CAS.
        let mut s = w.load(Ordering::Relaxed);
        while state(s) == HANDED_OFF {
            let next = with_state(s, CONTENDED) - count_of(in_starving);
            // Acquire: pairs with the hand-off's Release.
            match w.compare_exchange_weak(s, next, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// The blocking phase's mark: `UNLOCKED => CONTENDED` (taking the
    /// lock: `None`), `LOCKED | CONTENDED => CONTENDED`, `HANDED_OFF` kept
    /// (its taker marks it), joining `STARVING` if `join`. Returns the
    /// word to sleep on. Acquire: the RMW may take the lock.
    #[inline]
    fn mark_contended(self, in_starving: bool, join: bool) -> Option<u32> {
        let w = self.futex.value();
        // Relaxed: a guess for the CAS.
        let mut s = w.load(Ordering::Relaxed);
        loop {
            let next = match state(s) {
                UNLOCKED => with_state(s, CONTENDED) - count_of(in_starving),
                HANDED_OFF => s + count_of(join),
                _ => with_state(s, CONTENDED) + count_of(join),
            };
            if next == s {
                return Some(s); // already CONTENDED or HANDED_OFF
            }
            match w.compare_exchange_weak(s, next, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) if state(s) == UNLOCKED => return None,
                Ok(_) => return Some(next),
                Err(now) => s = now,
            }
        }
    }

    /// The contended acquisition, after a failed [`TtasLockRef::try_lock`]:
    /// the two phases, waiting as `wait` says, until the lock is acquired
    /// or `deadline` passes.
    pub fn lock_contended(self, wait: &mut impl LockWait, deadline: Deadline) -> LockOutcome {
        let mut backoff = Backoff::new();
        let mut owes_wake = false;
        let mut blocked = false;
        // Counted in STARVING (it asked for a hand-off).
        let mut in_starving = false;
        let mut lost_rounds = 0u32;
        let hand_off_after = wait.hand_off_after();
        loop {
            // UNLOCKED => LOCKED, or => CONTENDED while owing a wake-up.
            let target = if owes_wake { CONTENDED } else { LOCKED };
            if !in_starving && wait.start_polling(deadline) {
                // Polling phase: wait for UNLOCKED, race for it, back off
                // after a lost race; one limit for the whole phase.
                let mut lost_race = false;
                while wait.poll(self.futex, |v| state(v) == UNLOCKED) {
                    if self.acquire_free(target, false) {
                        return LockOutcome::Acquired { blocked };
                    }
                    lost_race = true;
                    backoff.spin_randomized();
                }
                lost_rounds = lost_rounds.saturating_add(u32::from(lost_race));
            }
            // One test-and-set probe (after the polling phase, or instead
            // of one: `/b/0`, loom, a starving waiter), so that a lock
            // found free is taken as `target`, not marked CONTENDED for
            // nobody (whose unlock would make a `futex_wake` system call).
            if self.acquire_free(target, in_starving) {
                return LockOutcome::Acquired { blocked };
            }
            if !owes_wake && deadline.has_passed() {
                let acquired = self.give_up(false, in_starving);
                return outcome(acquired, blocked);
            }
            // Woken often enough without winning: ask for a hand-off.
            let join = !in_starving && hand_off_after.is_some_and(|n| lost_rounds >= n);
            // any => CONTENDED: from here on a release wakes a sleeper, so
            // any wake-up owed is paid (a HANDED_OFF word's taker marks it).
            let Some(expected) = self.mark_contended(in_starving, join) else {
                return LockOutcome::Acquired { blocked };
            };
            in_starving |= join;
            owes_wake = false;
            let timeout = deadline.remaining();
            if timeout == Some(Duration::ZERO) {
                let acquired = self.give_up(false, in_starving);
                return outcome(acquired, blocked);
            }
            // Sleep while the word is unchanged (the kernel re-checks
            // atomically).
            let slept = wait.sleep(self.futex, expected, timeout);
            let timed_out = match slept {
                FutexWait::Woken => {
                    blocked = true;
                    owes_wake = true;
                    false
                }
                // The kernel's clock says the timeout passed (loom's model
                // says so at once): give up, whatever the cycle clock says.
                FutexWait::TimedOut => {
                    blocked = true;
                    true
                }
                FutexWait::ValueChanged => false,
            };
            if slept != FutexWait::ValueChanged && self.take_handed_off(in_starving) {
                return LockOutcome::Acquired { blocked };
            }
            if timed_out || deadline.has_passed() {
                let acquired = self.give_up(owes_wake, in_starving);
                return outcome(acquired, blocked);
            }
            // Back from the blocking phase without the lock: a lost round
            // unless the next polling phase wins.
            lost_rounds = lost_rounds.saturating_add(1);
        }
    }

    /// A waiter gives up on its deadline: it leaves `STARVING` and, if it
    /// `owes` a wake-up, makes sure the sleepers it owes one will get it.
    /// Takes the lock if it is free (and then returns `true`): as
    /// `CONTENDED` if it owes (its unlock wakes), else as `LOCKED`;
    /// otherwise marks a `LOCKED` lock `CONTENDED` if it owes (the holder's
    /// unlock wakes).
    #[cold]
    fn give_up(self, owes: bool, in_starving: bool) -> bool {
        let w = self.futex.value();
        let leave = count_of(in_starving);
        // Relaxed: a first guess, validated by the Acquire CAS below. A
        // CONTENDED read needs no more: it comes after the unlock that woke
        // us in the word's modification order, so a holder's unlock will
        // see it and wake.
        let mut s = w.load(Ordering::Relaxed);
        loop {
            let next = match state(s) {
                UNLOCKED if owes => with_state(s, CONTENDED) - leave,
                UNLOCKED => with_state(s, LOCKED) - leave,
                LOCKED if owes => with_state(s, CONTENDED) - leave,
                // Already CONTENDED, held, or HANDED_OFF to a woken thread
                // (which marks it): only leave STARVING.
                _ => s - leave,
            };
            if next == s {
                return false;
            }
            // Acquire: this CAS may take the lock. Failure Relaxed: the
            // value is only the next guess.
            match w.compare_exchange_weak(s, next, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return state(s) == UNLOCKED,
                Err(now) => s = now,
            }
        }
    }
}

/// The outcome of an acquisition that ended on its deadline, `acquired`
/// by its last attempt or not.
#[inline]
fn outcome(acquired: bool, blocked: bool) -> LockOutcome {
    if acquired {
        LockOutcome::Acquired { blocked }
    } else {
        LockOutcome::TimedOut { blocked }
    }
}

/// A test-and-test-and-set lock with two-phase waiting (poll, yielding
/// between looks, for `alpha * B`, then sleep on the futex), the default
/// [`Mutex`](super::Mutex): [`TtasLockRef`] on a word of its own, waiting
/// with [`PolicyWait`], asking for hand-offs ([`AskingForHandOff`]).
///
/// Unfair, within a bound: a releasing thread can re-acquire before a
/// woken waiter runs, which is what makes it fast under contention, but a
/// waiter beaten to the lock in [`HAND_OFF_AFTER_LOST_ROUNDS`] rounds is
/// handed the lock within as many hand-offs as there are sleepers ahead
/// of it, at most one per
/// [`hand_off_interval_ns`](super::hand_off_interval_ns) (module docs,
/// "Bounded unfairness"); use
/// [`RawTicketMutex`](super::RawTicketMutex) for FIFO order.
///
/// The lock word is the last field (`repr(C)`), so in a `lock_api::Mutex`
/// the protected value follows it at once and shares its cache line (as
/// parking_lot's lock byte does): the acquisition that brings the lock's
/// line to a CPU brings the value with it, and a short critical section
/// takes no second cache miss while it holds the lock. A word on a line of
/// its own doubled the lines every hand-over between CPUs moves and
/// lengthened each contended critical section by a miss
/// (`examples/mutex_starvation.rs`). The price: a waiter that polls the
/// word also sees the holder's stores to the value (a yield-polling waiter
/// looks once per `sched_yield`; a hardware monitor wakes early and looks
/// again).
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use waitwise::mutex::TtasMutex;
///
/// let counter = Arc::new(TtasMutex::new(0u64));
/// let handles: Vec<_> = (0..2)
///     .map(|_| {
///         let c = counter.clone();
///         std::thread::spawn(move || for _ in 0..1000 { *c.lock() += 1 })
///     })
///     .collect();
/// for h in handles {
///     h.join().unwrap();
/// }
/// assert_eq!(*counter.lock(), 2000);
/// ```
#[repr(C)]
pub struct RawTtasMutex {
    /// Turns between CPUs (`cpu_turns.rs`). First, a cache line away from
    /// the word (checked below): the waiters out of turn look at it.
    turns: CpuTurns,
    waits: LockWaiting,
    /// When the lock last handed off (module docs, "Bounded unfairness");
    /// not consulted under loom.
    #[cfg_attr(loom, allow(dead_code))]
    pace: HandOffPace,
    /// The CPU of the last release while turns are considered
    /// (`cpu_turns.rs`), beside the word: the holder owns the line.
    holder_cpu: HolderCpu,
    /// Last: beside the value a `lock_api::Mutex` puts after it.
    word: Futex,
}

// The turns and the word share no cache line (64 bytes) wherever the
// mutex lies.
#[cfg(not(loom))]
const _: () = assert!(
    std::mem::offset_of!(RawTtasMutex, word)
        >= std::mem::offset_of!(RawTtasMutex, turns) + std::mem::size_of::<CpuTurns>() + 63
);

impl RawTtasMutex {
    const_unless_loom! {
        /// An unlocked mutex with the default mutex policy.
        pub fn new() -> Self {
            Self::with_options(WaitOptions::new())
        }

        /// An unlocked mutex waiting as `options` say (policy, profiling).
        /// Wrap it with `lock_api::Mutex::from_raw(raw, value)`.
        pub fn with_options(options: WaitOptions) -> Self {
            Self {
                turns: CpuTurns::new(),
                waits: LockWaiting::adaptive(options, Mechanism::Yield),
                pace: HandOffPace::new(),
                holder_cpu: HolderCpu::new(),
                word: Futex::new(UNLOCKED),
            }
        }
    }

    /// The algorithm, over this mutex's word.
    #[inline(always)]
    fn lock_ref(&self) -> TtasLockRef<'_> {
        TtasLockRef::new(&self.word)
    }

    /// Acquires the lock, waiting as long as it takes.
    #[inline]
    pub fn lock(&self) {
        if !self.try_lock_in_turn() {
            let acquired = self.lock_contended(Deadline::NEVER);
            debug_assert!(acquired);
        }
    }

    /// The fast path of `lock`: [`RawTtasMutex::try_lock`], unless a turn
    /// is kept for another CPU (`cpu_turns.rs`).
    #[inline(always)]
    fn try_lock_in_turn(&self) -> bool {
        self.turns.in_turn() && self.try_lock()
    }

    /// Acquires the lock if it is free; never waits.
    #[inline]
    pub fn try_lock(&self) -> bool {
        self.lock_ref().try_lock()
    }

    /// Acquires the lock unless `deadline` passes first; `true` if acquired.
    #[inline]
    pub fn try_lock_until(&self, deadline: Deadline) -> bool {
        self.try_lock_in_turn() || self.lock_contended(deadline)
    }

    /// Releases the lock.
    ///
    /// # Safety
    ///
    /// The lock must be held, by this context: acquired by a `lock` or
    /// successful `try_lock*` on this mutex and not released since.
    #[inline]
    pub unsafe fn unlock(&self) {
        // While still holding: only the holder writes the turns.
        let bookkept = self.turns.before_release(&self.holder_cpu);
        if !self.lock_ref().unlock_paced(|| self.may_hand_off()) {
            unlock_of_unlocked();
        }
        if bookkept {
            self.turns.after_bookkeeping();
        }
    }

    /// Whether a release that a waiter asks to hand off may (module docs,
    /// "Bounded unfairness"): one hand-off per [`hand_off_interval_ns`].
    /// Under loom every one may (the models explore refusals through
    /// [`TtasLockRef::unlock_paced`]).
    #[cold]
    #[cfg(not(loom))]
    fn may_hand_off(&self) -> bool {
        self.pace.allows(
            waitwise_platform::clock::cycle_clock().now(),
            hand_off_interval_ns(crate::policy::block_cost::block_ns()),
        )
    }

    #[cfg(loom)]
    fn may_hand_off(&self) -> bool {
        true
    }

    /// Whether the lock is held (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.lock_ref().is_locked()
    }

    /// The turns between CPUs (`cpu_turns.rs`), to see how they stand.
    #[inline]
    pub fn turns(&self) -> &CpuTurns {
        &self.turns
    }

    /// The wait-time histogram of contended acquisitions, when profiling is
    /// on (`WaitOptions::profile(true)` or `WAITWISE_PROFILE=1`).
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.waits.profile()
    }

    /// The policy contended acquisitions follow.
    pub fn policy(&self) -> Policy {
        self.waits.policy()
    }

    /// The contended acquisition, profiled; `true` if acquired.
    #[cold]
    fn lock_contended(&self, deadline: Deadline) -> bool {
        if self.took_early(deadline) {
            return true;
        }
        let profiler = self.waits.profiler();
        let start = profiler.start();
        // `adapt/b` learns from the acquisition (keyed by the word's address).
        let word = self.lock_ref().futex as *const Futex as usize;
        let (budget, learning) = self.waits.policy().begin_wait(word);
        let mut wait = TurnsLockWait::new(
            AskingForHandOff::new(PolicyWait::with_budget(budget), HAND_OFF_AFTER_LOST_ROUNDS),
            &self.turns,
        );
        let out = self.lock_ref().lock_contended(&mut wait, deadline);
        if let Some(learning) = learning {
            learning.finish(out.blocked(), !out.acquired());
        }
        profiler.finish(start, out.blocked());
        out.acquired()
    }
}

impl RawTtasMutex {
    /// Whether a contended acquisition took the lock within its early
    /// looks ([`look_early`], then [`look_backing_off`] where the module
    /// docs' "Early looks" say, none after `deadline`): under the default
    /// waiting only, unprofiled (a profiled wait records every wait), in
    /// this CPU's turn or none, while the process's own threads do not
    /// crowd the CPUs. Never under loom (the models explore the word's
    /// protocol).
    #[cfg(not(loom))]
    #[inline]
    fn took_early(&self, deadline: Deadline) -> bool {
        if !self.waits.is_default()
            || self.waits.profiler().is_enabled()
            || crate::policy::idle_extension::own_threads_crowd_cpus()
        {
            return false;
        }
        let word = self.word.value();
        let mut take = |v| state(v) == UNLOCKED && self.try_lock_in_turn();
        if look_early(word, &mut take) {
            return true;
        }
        let slot = super::cpu_turns::cpu_slot();
        if self.turns.releases_come_fast()
            || self.turns.turn_for(slot) != TurnFor::Mine
            || crate::policy::polling_holds_wanted_cpu(
                Mechanism::Pause,
                crate::policy::idle_extension::cpu_demand(),
            )
        {
            return false;
        }
        // This CPU waits, as the holder's next bookkeeping will see: the
        // turns start and the lock's pace is noted as for a polling waiter.
        self.turns.register_waiting(slot);
        look_backing_off(word, deadline, &mut take)
    }

    #[cfg(loom)]
    fn took_early(&self, _deadline: Deadline) -> bool {
        false
    }
}

/// [`RawTtasMutex`]'s [`LockWait`]: the policy's, and the CPU turns
/// (`cpu_turns.rs`): a polling waiter races for a free lock only in its
/// CPU's turn; in another CPU's turn it yields between looks at the turn
/// (not at the lock word, which that CPU's acquisitions keep changing),
/// or sleeps on it in slow turns (a lock held through critical sections
/// of a µs or more, whose threads fit on the CPUs: `cpu_turns.rs`,
/// "Sleeping through a turn"), spins when the turn is about to end, and
/// waits on past its polling limit while the turn moves.
struct TurnsLockWait<'a> {
    inner: AskingForHandOff<PolicyWait>,
    turns: &'a CpuTurns,
    /// The waiter's CPU slot.
    slot: u32,
    /// Whether the policy's polling phase runs.
    inner_polling: bool,
    deadline: Deadline,
}

impl<'a> TurnsLockWait<'a> {
    #[inline]
    fn new(inner: AskingForHandOff<PolicyWait>, turns: &'a CpuTurns) -> Self {
        Self {
            inner,
            turns,
            slot: refresh_cpu_slot(),
            inner_polling: false,
            deadline: Deadline::NEVER,
        }
    }

    /// Whether a turn is kept for another CPU.
    #[inline]
    fn off_turn(&self) -> bool {
        self.turns.turn_for(self.slot) != TurnFor::Mine
    }

    /// In another CPU's turn: waits for the turn to be this CPU's
    /// ([`CpuTurns::wait_for_turn`]).
    #[cold]
    fn wait_for_turn(&mut self) -> bool {
        self.turns.wait_for_turn(self.slot, self.deadline)
    }
}

impl TwoPhaseWait for TurnsLockWait<'_> {
    #[inline]
    fn start_polling(&mut self, deadline: Deadline) -> bool {
        // This CPU waits, as the holder's next bookkeeping will see.
        self.turns.register_waiting(self.slot);
        self.inner_polling = self.inner.start_polling(deadline);
        self.deadline = deadline;
        self.inner_polling || self.off_turn()
    }

    #[inline]
    fn poll(&mut self, futex: &Futex, mut ready: impl FnMut(u32) -> bool) -> bool {
        let (turns, slot) = (self.turns, self.slot);
        loop {
            // After the policy's phase, a turn that comes gets one slice.
            let mut slice_for_turn = false;
            if self.off_turn() {
                if !self.wait_for_turn() {
                    return false;
                }
                slice_for_turn = !self.inner_polling;
            }
            // This CPU's turn, or none: a free lock is ready; a turn kept
            // for another CPU ends the polling, to wait for the turn.
            let mut turn_gone = false;
            let mut in_turn = |v: u32| {
                if turns.turn_for(slot) != TurnFor::Mine {
                    turn_gone = true;
                    return true;
                }
                ready(v)
            };
            let got = if self.inner_polling {
                self.inner.poll(futex, &mut in_turn)
            } else if slice_for_turn {
                let slice = Duration::from_nanos(crate::policy::block_cost::block_ns() as u64);
                let end = self.deadline.min(Deadline::after(slice));
                !poll_until(futex, Mechanism::Yield, end, &mut in_turn).timed_out()
            } else {
                false
            };
            if turn_gone {
                continue;
            }
            if !got {
                self.inner_polling = false;
            }
            return got;
        }
    }

    #[inline]
    fn sleep(&mut self, futex: &Futex, expected: u32, timeout: Option<Duration>) -> FutexWait {
        let slept = self.inner.sleep(futex, expected, timeout);
        // The kernel may wake the thread on another CPU than it slept on,
        // and the slot is otherwise looked up only when the wait starts:
        // a stale one would have it wait for the other CPU's turns for
        // the rest of the wait.
        self.slot = refresh_cpu_slot();
        slept
    }
}

impl LockWait for TurnsLockWait<'_> {
    #[inline]
    fn hand_off_after(&self) -> Option<u32> {
        self.inner.hand_off_after()
    }
}

/// An unlock found the lock not held: `unlock`'s contract was broken.
#[cold]
#[inline(never)]
fn unlock_of_unlocked() -> ! {
    panic!("waitwise::TtasMutex: unlock of an unlocked mutex");
}

impl Default for RawTtasMutex {
    fn default() -> Self {
        Self::new()
    }
}

/// The state by name (a snapshot): `unlocked`, `locked`, `contended`
/// (locked, and a waiter may sleep) or `handed off` (released to a woken
/// waiter), and the policy.
impl std::fmt::Debug for RawTtasMutex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Relaxed: a snapshot for display that orders nothing.
        let state = match state(self.word.value().load(Ordering::Relaxed)) {
            UNLOCKED => "unlocked",
            LOCKED => "locked",
            CONTENDED => "contended",
            _ => "handed off",
        };
        f.debug_struct("RawTtasMutex")
            .field("state", &format_args!("{state}"))
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

// SAFETY: `lock`/`try_lock` return only once this call moved the state from
// UNLOCKED or HANDED_OFF to LOCKED or CONTENDED with an Acquire RMW, and only
// the matching `unlock` (a Release RMW to UNLOCKED, or to HANDED_OFF, which
// only a waiter's Acquire RMW takes) releases it: mutual exclusion with
// acquire/release semantics. The guard is stateless: forgetting it leaves the lock held
// (no memory is involved), and moving or dropping the mutex is safe.
//
// The guard is `GuardNoSend`, so a `MutexGuard` is not `Send`, as std's and
// parking_lot's are not: the thread that locked unlocks (nothing here
// depends on it; it keeps code portable to std and to pthread mutexes).
#[cfg(not(loom))]
unsafe impl lock_api::RawMutex for RawTtasMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = lock_api::GuardNoSend;

    #[inline]
    fn lock(&self) -> Self::Guard {
        RawTtasMutex::lock(self);
        lock_api::GuardNoSend::new()
    }

    #[inline]
    fn try_lock(&self) -> Option<Self::Guard> {
        RawTtasMutex::try_lock(self).then(lock_api::GuardNoSend::new)
    }

    #[inline]
    unsafe fn unlock(&self, _guard: Self::Guard) {
        // SAFETY: the caller passes the guard of a held acquisition.
        unsafe { RawTtasMutex::unlock(self) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        RawTtasMutex::is_locked(self)
    }
}

// SAFETY: as for `RawMutex`: a timed attempt either acquires with the same
// RMW or returns `None` having changed nothing.
#[cfg(not(loom))]
unsafe impl lock_api::RawMutexTimed for RawTtasMutex {
    type Duration = Duration;
    type Instant = Instant;

    #[inline]
    fn try_lock_for(&self, timeout: Duration) -> Option<Self::Guard> {
        (RawTtasMutex::try_lock(self) || self.lock_contended(deadline_after(timeout)))
            .then(lock_api::GuardNoSend::new)
    }

    #[inline]
    fn try_lock_until(&self, timeout: Instant) -> Option<Self::Guard> {
        (RawTtasMutex::try_lock(self) || self.lock_contended(deadline_at(timeout)))
            .then(lock_api::GuardNoSend::new)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Duration;
    use waitwise_platform::shim::AtomicU32;

    /// A front end's [`LockWait`] with no polling phase that counts the
    /// sleeps it is asked for.
    #[derive(Default)]
    struct CountingSleeps {
        sleeps: u32,
    }

    impl TwoPhaseWait for CountingSleeps {
        fn start_polling(&mut self, _deadline: Deadline) -> bool {
            false
        }

        fn poll(&mut self, _futex: &Futex, _ready: impl FnMut(u32) -> bool) -> bool {
            unreachable!("no polling phase was started")
        }

        fn sleep(&mut self, futex: &Futex, expected: u32, timeout: Option<Duration>) -> FutexWait {
            self.sleeps += 1;
            futex.wait(expected, timeout)
        }
    }

    impl LockWait for CountingSleeps {}

    #[test]
    fn a_borrowed_word_sleeps_through_the_front_ends_hook() {
        // A word inside another object, as `pthread_mutex_t`'s `__lock`.
        let object = [AtomicU32::new(UNLOCKED), AtomicU32::new(0)];
        let lock = TtasLockRef::new(Futex::from_atomic(&object[0]));
        assert!(lock.try_lock());
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let mut wait = CountingSleeps::default();
                let out = lock.lock_contended(&mut wait, Deadline::NEVER);
                (out, wait.sleeps)
            });
            // Relaxed: a test's look at the state; the lock orders the rest.
            while object[0].load(Ordering::Relaxed) != CONTENDED {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(lock.unlock());
            let (out, sleeps) = waiter.join().unwrap();
            assert!(out.acquired(), "{out:?}");
            assert!(sleeps >= 1);
        });
        // The waiter holds it now (and owed nobody a wake-up).
        assert!(lock.unlock());
        assert!(!lock.unlock(), "an unlocked word is reported");
        // A timed attempt on a held lock gives up and leaves it held.
        assert!(lock.try_lock());
        let mut wait = PolicyWait::new(&Policy::always_block());
        let soon = Deadline::after(Duration::from_millis(1));
        assert!(!lock.lock_contended(&mut wait, soon).acquired());
        assert!(lock.is_locked());
        assert!(lock.unlock());
    }

    #[test]
    fn the_value_follows_the_word() {
        let m: lock_api::Mutex<RawTtasMutex, u64> = lock_api::Mutex::new(0);
        // SAFETY: only the word's address is read; the lock is not touched.
        let word = unsafe { m.raw() }.word.value() as *const AtomicU32 as usize;
        let value = m.data_ptr() as usize;
        assert!(value > word && value - word <= 8, "{word:#x} {value:#x}");
    }

    #[test]
    fn debug_names_the_state() {
        let m = RawTtasMutex::with_options(WaitOptions::new().policy(Policy::always_block()));
        assert_eq!(
            format!("{m:?}"),
            "RawTtasMutex { state: unlocked, policy: /b/0 }"
        );
        m.lock();
        assert!(format!("{m:?}").contains("state: locked"));
        // SAFETY: locked just above, by this thread.
        unsafe { m.unlock() };
    }

    #[test]
    fn unlock_of_a_handed_off_word_is_reported_and_changes_nothing() {
        let word = Futex::new(HANDED_OFF | STARVING_ONE);
        assert!(!TtasLockRef::new(&word).unlock());
        assert_eq!(
            word.value().load(Ordering::Relaxed),
            HANDED_OFF | STARVING_ONE
        );
    }

    #[test]
    fn a_starving_waiter_makes_unlock_hand_off_and_a_woken_sleeper_take_it() {
        // Held, a sleeper marked, one waiter asking: the unlock keeps the
        // lock from arriving threads; with nobody asleep it takes it back.
        let word = Futex::new(CONTENDED | STARVING_ONE);
        let lock = TtasLockRef::new(&word);
        assert!(lock.unlock());
        assert_eq!(word.value().load(Ordering::Relaxed), STARVING_ONE);
        assert!(
            !lock.try_lock(),
            "the fast path leaves a starving word alone"
        );
        assert!(lock.acquire_free(LOCKED, false));
        assert_eq!(word.value().load(Ordering::Relaxed), LOCKED | STARVING_ONE);
        // A handed-off word goes to a thread whose sleep ended.
        word.value()
            .store(HANDED_OFF | STARVING_ONE, Ordering::Relaxed);
        assert!(lock.is_locked());
        assert!(!lock.acquire_free(LOCKED, false));
        assert!(lock.take_handed_off(true));
        assert_eq!(word.value().load(Ordering::Relaxed), CONTENDED);
        assert!(lock.unlock());
        assert!(!lock.is_locked());
    }

    #[test]
    fn a_paced_unlock_asks_only_for_a_starving_waiter_and_a_refusal_releases() {
        let never_asked = || -> bool { panic!("asked with no starving waiter") };
        for held in [LOCKED, CONTENDED] {
            let word = Futex::new(held);
            assert!(TtasLockRef::new(&word).unlock_paced(never_asked));
            assert_eq!(word.value().load(Ordering::Relaxed), UNLOCKED);
        }
        // Refused: released (not handed off), the asking waiter still
        // counted, and asked once.
        let word = Futex::new(CONTENDED | STARVING_ONE);
        let mut asked = 0;
        assert!(TtasLockRef::new(&word).unlock_paced(|| {
            asked += 1;
            false
        }));
        assert_eq!(asked, 1);
        assert_eq!(word.value().load(Ordering::Relaxed), STARVING_ONE);
        // Not held: reported before anything is asked.
        assert!(!TtasLockRef::new(&word).unlock_paced(never_asked));
    }

    /// A front end that asks for a hand-off at its first sleep.
    struct AskingAtOnce;

    impl TwoPhaseWait for AskingAtOnce {
        fn start_polling(&mut self, _deadline: Deadline) -> bool {
            false
        }

        fn poll(&mut self, _futex: &Futex, _ready: impl FnMut(u32) -> bool) -> bool {
            unreachable!("no polling phase was started")
        }
    }

    impl LockWait for AskingAtOnce {
        fn hand_off_after(&self) -> Option<u32> {
            Some(0)
        }
    }

    #[test]
    fn a_sleeping_starving_waiter_is_handed_the_lock() {
        let word = Futex::new(UNLOCKED);
        let lock = TtasLockRef::new(&word);
        assert!(lock.try_lock());
        std::thread::scope(|s| {
            let waiter = s.spawn(|| lock.lock_contended(&mut AskingAtOnce, Deadline::NEVER));
            // Relaxed: a test's look at the state; the lock orders the rest.
            while word.value().load(Ordering::Relaxed) != CONTENDED | STARVING_ONE {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(10)); // let it sleep
            assert!(lock.unlock());
            assert!(waiter.join().unwrap().acquired());
        });
        // The waiter holds it and left STARVING: the next unlock releases.
        let s = word.value().load(Ordering::Relaxed);
        assert!(state(s) == LOCKED || state(s) == CONTENDED, "{s}");
        assert!(!starving(s), "{s}");
        assert!(lock.unlock());
        assert_eq!(word.value().load(Ordering::Relaxed), UNLOCKED);
    }

    /// A front end whose one polling phase sees the lock free once (a look
    /// that the test's holder makes stale at once: the race is lost) and
    /// asks for a hand-off after one lost round.
    #[derive(Default)]
    struct LosingOneRace {
        phases: u32,
        looks: u32,
    }

    impl TwoPhaseWait for LosingOneRace {
        fn start_polling(&mut self, _deadline: Deadline) -> bool {
            self.phases += 1;
            self.phases == 1
        }

        fn poll(&mut self, _futex: &Futex, _ready: impl FnMut(u32) -> bool) -> bool {
            self.looks += 1;
            self.looks == 1
        }
    }

    impl LockWait for LosingOneRace {
        fn hand_off_after(&self) -> Option<u32> {
            Some(1)
        }
    }

    #[test]
    fn a_polling_phase_that_loses_every_race_counts_as_a_lost_round() {
        let word = Futex::new(UNLOCKED);
        let lock = TtasLockRef::new(&word);
        assert!(lock.try_lock());
        std::thread::scope(|s| {
            let waiter =
                s.spawn(|| lock.lock_contended(&mut LosingOneRace::default(), Deadline::NEVER));
            // Before its first sleep the waiter asks: the lost race was a
            // lost round.
            // Relaxed: a test's look at the state; the lock orders the rest.
            while word.value().load(Ordering::Relaxed) != CONTENDED | STARVING_ONE {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(lock.unlock());
            assert!(waiter.join().unwrap().acquired());
        });
        assert!(!starving(word.value().load(Ordering::Relaxed)));
        assert!(lock.unlock());
        assert_eq!(word.value().load(Ordering::Relaxed), UNLOCKED);
    }

    #[test]
    fn a_timed_out_starving_waiter_leaves_the_count() {
        let word = Futex::new(UNLOCKED);
        let lock = TtasLockRef::new(&word);
        assert!(lock.try_lock());
        let soon = Deadline::after(Duration::from_millis(5));
        assert!(!lock.lock_contended(&mut AskingAtOnce, soon).acquired());
        assert_eq!(word.value().load(Ordering::Relaxed), CONTENDED);
        assert!(lock.unlock());
        assert!(!lock.is_locked());
    }
}
