//! The test-and-test-and-set lock with two-phase waiting: the algorithm
//! once, as [`TtasLockRef`], a view over a borrowed futex word, and
//! [`RawTtasMutex`], the default [`Mutex`](super::Mutex), on top of it.
//!
//! # State word (Drepper's three states, "Futexes are tricky" mutex 2)
//!
//! ```text
//!  UNLOCKED   0  free
//!  LOCKED     1  held, and no thread needs a futex wake-up
//!  CONTENDED  2  held, and a thread may be asleep on the futex (or owes a
//!                sleeper its wake-up, see below)
//! ```
//!
//! These are glibc's values for `pthread_mutex_t`'s `__lock`, so the
//! interposer's mutexes run this algorithm inside glibc's object.
//!
//! Transitions:
//! - lock, fast: `UNLOCKED => LOCKED`, one CAS.
//! - lock, polling phase (test-and-test-and-set): wait until the word reads
//!   `UNLOCKED` (polling as the front end's [`LockWait`] says, for
//!   `alpha * B` with `yield` by default), then
//!   `UNLOCKED => LOCKED` (or `=> CONTENDED` when this waiter owes a wake-up);
//!   after a lost race, back off for a random delay that doubles with every
//!   loss (Lim & Agarwal section 6.3: waiters released at once must not all
//!   hammer the word).
//! - lock, blocking phase: `any => CONTENDED` (swap); if it was `UNLOCKED`
//!   the lock is ours, else sleep on the futex while it reads `CONTENDED`,
//!   then go back to the polling phase.
//! - unlock: `any => UNLOCKED` (swap) and `futex_wake(1)` only if it was
//!   `CONTENDED`: no system call when nobody sleeps, one atomic either way.
//!
//! A woken sleeper *owes* the sleepers still in the kernel their wake-up
//! (unlock set the word to `UNLOCKED`, forgetting them): until it pays, it
//! acquires only as `CONTENDED`, or it swaps `CONTENDED` in before sleeping
//! again, or, giving up on a timeout, it marks a held lock `CONTENDED`.
//! Unlike std's mutex it first polls again (parking_lot does the same), so a
//! holder that re-acquires in a loop runs on with cheap unlocks while the
//! woken thread polls, instead of paying a `futex_wake` per release.
//!
//! # Memory ordering
//!
//! Acquiring is an `Acquire` RMW and releasing a `Release` swap: the pair
//! orders the critical sections. No `SeqCst` is needed for the sleep/wake
//! hand-shake: sleeper and waker both make RMWs on the one word, which has a
//! single modification order (the unlock's swap either sees the sleeper's
//! `CONTENDED` or the sleeper's swap sees the unlock's `UNLOCKED`), and the
//! kernel re-checks the word under its own lock before sleeping. Failed CAS
//! and polling loads carry no data and are `Relaxed`/`Acquire` hints only.
//!
//! # Waiting
//!
//! The front end hands its waiting in as a [`LockWait`]: how to poll and
//! for how long (its clock, its mechanism), and how to sleep on the futex.
//! [`RawTtasMutex`] waits with [`PolicyLockWait`]: the mutex kind's
//! `alpha = ln(e-1)` with the `yield` mechanism (`Ss/b/0.54`), one look at
//! the word per `sched_yield`, so a waiter neither pulls the lock's line
//! from the holder nor keeps a CPU from a preempted holder (figures in the
//! [module docs](super)); a `WaitOptions` policy replaces the limit and the
//! mechanism. The polling phase is the engine's
//! ([`poll_until`]); the blocking phase uses the word's futex directly with
//! the states above (a [`WaitWord`](crate::WaitWord) sleeper count would
//! stay non-zero until a woken thread runs, and every release in between
//! would make a system call).

#[cfg(not(loom))]
use super::waiting::{deadline_after, deadline_at};
use super::waiting::{Backoff, LockWaits};
use crate::loom_const::const_unless_loom;
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::{Policy, PollBudget};
use crate::profile::WaitProfile;
use crate::wait_word::poll_until;
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

/// How a contended acquisition of a [`TtasLockRef`] waits: the front end's
/// polling phase and its futex sleep, the services the algorithm asks for
/// (the hooks of parking_lot's `park`, the `ops` of Concurrency Kit's
/// `ck_ec`). [`PolicyLockWait`] is the engine's; the interposer brings its
/// own clock, and a sleep that passes a wake-up on when glibc unwinds the
/// sleeping thread.
pub trait LockWait {
    /// Starts a polling phase, which lasts until its limit or `deadline`,
    /// whichever comes first. `false`: no polling phase (the acquisition
    /// makes one test-and-set probe, then sleeps).
    fn start_polling(&mut self, deadline: Deadline) -> bool;

    /// Polls the word until `ready(value)` holds (`true`) or the polling
    /// phase started last ends (`false`). Loads are `Acquire`.
    fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool;

    /// Sleeps while the word holds `expected`, at most `timeout`, with
    /// [`Futex::wait`]'s results. The default is [`Futex::wait`].
    #[inline]
    fn sleep(&mut self, futex: &Futex, expected: u32, timeout: Option<Duration>) -> FutexWait {
        futex.wait(expected, timeout)
    }
}

/// The engine's [`LockWait`] for a [`Policy`]: polls with its mechanism
/// for its limit on the cycle clock ([`poll_until`]), sleeps with
/// [`Futex::wait`]. [`RawTtasMutex`] waits with it.
///
/// Under loom there is no polling phase (the models explore the blocking
/// protocol, where wake-ups can be lost): each round makes the one
/// test-and-set probe.
#[derive(Clone, Copy, Debug)]
pub struct PolicyLockWait {
    budget: PollBudget,
    /// When the current polling phase ends.
    poll_end: Deadline,
}

impl PolicyLockWait {
    /// Waits as `policy` says. A randomized policy draws its limit here:
    /// make one per acquisition.
    #[inline]
    pub fn new(policy: &Policy) -> Self {
        Self {
            budget: policy.poll_budget(),
            poll_end: Deadline::NEVER,
        }
    }

    /// Waits with a budget already drawn (by [`Policy::begin_wait`]).
    #[inline]
    pub fn with_budget(budget: PollBudget) -> Self {
        Self {
            budget,
            poll_end: Deadline::NEVER,
        }
    }
}

impl LockWait for PolicyLockWait {
    #[inline]
    fn start_polling(&mut self, deadline: Deadline) -> bool {
        if cfg!(loom) || !self.budget.polls() {
            return false;
        }
        self.poll_end = self.budget.poll_deadline(deadline);
        true
    }

    #[inline]
    fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool {
        !poll_until(futex, self.budget.mechanism, self.poll_end, ready).timed_out()
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
/// transitions, ordering): the one copy of the algorithm, for
/// [`RawTtasMutex`] and for front ends whose word lives elsewhere (the
/// interposer's `pthread_mutex_t`, whose `__lock` holds the same three
/// states). Every thread that locks or unlocks the word must go through
/// this view.
///
/// # Examples
/// ```
/// use waitwise::mutex::{PolicyLockWait, TtasLockRef};
/// use waitwise::platform::futex::Futex;
/// use waitwise::{Deadline, Policy};
///
/// let word = Futex::new(0); // UNLOCKED
/// let lock = TtasLockRef::new(&word);
/// assert!(lock.try_lock());
/// assert!(!lock.try_lock());
/// let mut wait = PolicyLockWait::new(&Policy::always_block());
/// let timed = lock.lock_contended(&mut wait, Deadline::after(std::time::Duration::ZERO));
/// assert!(!timed.acquired());
/// assert!(lock.unlock()); // it was held
/// assert!(!lock.is_locked());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TtasLockRef<'a> {
    futex: &'a Futex,
}

impl<'a> TtasLockRef<'a> {
    /// A view over `futex`, whose word holds one of the three states.
    #[inline(always)]
    pub fn new(futex: &'a Futex) -> Self {
        Self { futex }
    }

    /// Acquires the lock if it is free; never waits.
    #[inline]
    pub fn try_lock(self) -> bool {
        self.acquire_as(LOCKED)
    }

    /// `UNLOCKED => target`. Acquire: pairs with the last unlock's Release.
    /// Failure Relaxed: a failed CAS takes nothing.
    #[inline(always)]
    fn acquire_as(self, target: u32) -> bool {
        self.futex
            .value()
            .compare_exchange(UNLOCKED, target, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether the lock is held (a snapshot).
    #[inline]
    pub fn is_locked(self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        self.futex.value().load(Ordering::Relaxed) != UNLOCKED
    }

    /// Releases the lock, waking one sleeper if the word says one may
    /// sleep. Call it only as the holder. Returns `false` when the word
    /// was `UNLOCKED` (the lock was not held: the caller's error, which the
    /// front end reports or ignores; the word is left `UNLOCKED`).
    ///
    /// # Panics
    ///
    /// When the word holds none of the three states.
    #[inline]
    pub fn unlock(self) -> bool {
        // LOCKED/CONTENDED => UNLOCKED. Release: publishes the critical
        // section to the next acquirer. A swap, not a CAS from LOCKED: one
        // atomic whatever the state, and its result says whether to wake.
        let prev = self.futex.value().swap(UNLOCKED, Ordering::Release);
        if prev != LOCKED {
            return self.unlock_contended(prev);
        }
        true
    }

    #[cold]
    fn unlock_contended(self, prev: u32) -> bool {
        match prev {
            CONTENDED => {
                self.futex.wake(1);
                true
            }
            UNLOCKED => false,
            _ => panic!("waitwise: unlock of a TTAS lock word in state {prev}"),
        }
    }

    /// The contended acquisition, after a failed [`TtasLockRef::try_lock`]:
    /// the two phases, waiting as `wait` says, until the lock is acquired
    /// or `deadline` passes.
    pub fn lock_contended(self, wait: &mut impl LockWait, deadline: Deadline) -> LockOutcome {
        let w = self.futex.value();
        let mut backoff = Backoff::new();
        let mut owes_wake = false;
        let mut blocked = false;
        loop {
            // UNLOCKED => LOCKED, or => CONTENDED while owing a wake-up.
            let target = if owes_wake { CONTENDED } else { LOCKED };
            if wait.start_polling(deadline) {
                // Polling phase: wait for UNLOCKED, race for it, back off
                // after a lost race; one limit for the whole phase.
                while wait.poll(self.futex, |v| v == UNLOCKED) {
                    if self.acquire_as(target) {
                        return LockOutcome::Acquired { blocked };
                    }
                    backoff.snooze();
                }
            } else if w.load(Ordering::Relaxed) == UNLOCKED && self.acquire_as(target) {
                // No polling phase (`/b/0`, or loom): one test-and-set
                // probe, so a free lock is not marked CONTENDED for
                // nothing. The Relaxed load only spares a doomed CAS.
                return LockOutcome::Acquired { blocked };
            }
            if !owes_wake && deadline.has_passed() {
                return LockOutcome::TimedOut { blocked };
            }
            // any => CONTENDED: from here on a release wakes a sleeper, so
            // any wake-up owed is paid. Acquire: the swap may take the lock.
            if w.swap(CONTENDED, Ordering::Acquire) == UNLOCKED {
                return LockOutcome::Acquired { blocked };
            }
            owes_wake = false;
            let timeout = deadline.remaining();
            if timeout == Some(Duration::ZERO) {
                return LockOutcome::TimedOut { blocked };
            }
            // Sleep while CONTENDED (the kernel re-checks atomically).
            let timed_out = match wait.sleep(self.futex, CONTENDED, timeout) {
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
            if timed_out || deadline.has_passed() {
                let acquired = if owes_wake {
                    self.pay_wake_on_give_up()
                } else {
                    self.try_lock()
                };
                return if acquired {
                    LockOutcome::Acquired { blocked }
                } else {
                    LockOutcome::TimedOut { blocked }
                };
            }
        }
    }

    /// A woken waiter gives up on its deadline: make sure the sleepers it
    /// owes a wake-up will get one. Takes the lock if it is free (and then
    /// returns `true`), else marks it `CONTENDED`.
    #[cold]
    fn pay_wake_on_give_up(self) -> bool {
        let w = self.futex.value();
        // Relaxed: a first guess, validated by the Acquire CAS below. A
        // CONTENDED read needs no more: it comes after the unlock that woke
        // us in the word's modification order, so a holder's unlock will
        // see it and wake.
        let mut s = w.load(Ordering::Relaxed);
        loop {
            let next = match s {
                // UNLOCKED => CONTENDED: acquired, and our unlock wakes.
                UNLOCKED => CONTENDED,
                // LOCKED => CONTENDED: the holder's unlock wakes.
                LOCKED => CONTENDED,
                // Already CONTENDED: the holder's unlock wakes.
                _ => return false,
            };
            // Acquire: this CAS may take the lock. Failure Relaxed: the
            // value is only the next guess.
            match w.compare_exchange_weak(s, next, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return s == UNLOCKED,
                Err(now) => s = now,
            }
        }
    }
}

/// The lock word on a cache line of its own, as a
/// [`WaitWord`](crate::WaitWord)'s: hardware monitors see no false
/// wake-ups from neighbours, and no neighbour's store pulls the line from
/// the holder.
#[repr(align(128))]
#[derive(Debug)]
struct LockWord(Futex);

/// A test-and-test-and-set lock with two-phase waiting (poll, yielding
/// between looks, for `alpha * B`, then sleep on the futex), the default
/// [`Mutex`](super::Mutex): [`TtasLockRef`] on a word of its own, waiting
/// with [`PolicyLockWait`].
///
/// Unfair: a releasing thread can re-acquire before a woken waiter runs,
/// which is what makes it fast under contention; use
/// [`RawTicketMutex`](super::RawTicketMutex) for FIFO order. 128 bytes (the
/// word's own cache line) plus its options.
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
pub struct RawTtasMutex {
    word: LockWord,
    waits: LockWaits,
}

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
                word: LockWord(Futex::new(UNLOCKED)),
                waits: LockWaits::new(options, Mechanism::Yield),
            }
        }
    }

    /// The algorithm, over this mutex's word.
    #[inline(always)]
    fn lock_ref(&self) -> TtasLockRef<'_> {
        TtasLockRef::new(&self.word.0)
    }

    /// Acquires the lock, waiting as long as it takes.
    #[inline]
    pub fn lock(&self) {
        if !self.try_lock() {
            let acquired = self.lock_contended(Deadline::NEVER);
            debug_assert!(acquired);
        }
    }

    /// Acquires the lock if it is free; never waits.
    #[inline]
    pub fn try_lock(&self) -> bool {
        self.lock_ref().try_lock()
    }

    /// Acquires the lock unless `deadline` passes first; `true` if acquired.
    #[inline]
    pub fn try_lock_until(&self, deadline: Deadline) -> bool {
        self.try_lock() || self.lock_contended(deadline)
    }

    /// Releases the lock.
    ///
    /// # Safety
    ///
    /// The lock must be held, by this context: acquired by a `lock` or
    /// successful `try_lock*` on this mutex and not released since.
    #[inline]
    pub unsafe fn unlock(&self) {
        if !self.lock_ref().unlock() {
            unlock_of_unlocked();
        }
    }

    /// Whether the lock is held (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.lock_ref().is_locked()
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
        let profiler = self.waits.profiler();
        let start = profiler.start();
        // `adapt/b` learns from the acquisition (keyed by the word's address).
        let word = self.lock_ref().futex as *const Futex as usize;
        let (budget, learning) = self.waits.policy().begin_wait(word);
        let mut wait = PolicyLockWait::with_budget(budget);
        let out = self.lock_ref().lock_contended(&mut wait, deadline);
        if let Some(learning) = learning {
            learning.finish(out.blocked(), !out.acquired());
        }
        profiler.finish(start, out.blocked());
        out.acquired()
    }
}

/// An unlock found the word `UNLOCKED`: `unlock`'s contract was broken.
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

/// The state by name (a snapshot): `unlocked`, `locked`, or `contended`
/// (locked, and a waiter may sleep), and the policy.
impl std::fmt::Debug for RawTtasMutex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Relaxed: a snapshot for display that orders nothing.
        let state = match self.word.0.value().load(Ordering::Relaxed) {
            UNLOCKED => "unlocked",
            LOCKED => "locked",
            _ => "contended",
        };
        f.debug_struct("RawTtasMutex")
            .field("state", &format_args!("{state}"))
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

// SAFETY: `lock`/`try_lock` return only once this call moved the word from
// UNLOCKED to LOCKED or CONTENDED with an Acquire RMW, and only the matching
// `unlock` (Release swap to UNLOCKED) releases it: mutual exclusion with acquire/release
// semantics. The guard is stateless: forgetting it leaves the lock held
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

    impl LockWait for CountingSleeps {
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
        let mut wait = PolicyLockWait::new(&Policy::always_block());
        let soon = Deadline::after(Duration::from_millis(1));
        assert!(!lock.lock_contended(&mut wait, soon).acquired());
        assert!(lock.is_locked());
        assert!(lock.unlock());
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
    #[should_panic(expected = "state 7")]
    fn unlock_of_a_word_in_no_state_panics() {
        let word = Futex::new(7);
        TtasLockRef::new(&word).unlock();
    }
}
