//! [`RawTtasMutex`]: test-and-test-and-set with two-phase waiting on a
//! [`WaitWord`]. The default [`Mutex`](super::Mutex).
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
//! Transitions:
//! - lock, fast: `UNLOCKED => LOCKED`, one CAS.
//! - lock, polling phase (test-and-test-and-set): wait until the word reads
//!   `UNLOCKED` (polling with the policy's mechanism, `yield` by default,
//!   for `alpha * B`), then
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
//! The default policy is the mutex kind's `alpha = ln(e-1)` with the
//! `yield` mechanism (`Ss/b/0.54`): one look at the word per `sched_yield`,
//! so a waiter neither pulls the lock's line from the holder nor keeps a
//! CPU from a preempted holder (figures in the [module docs](super)); a
//! `WaitOptions` policy replaces the limit and the mechanism. The polling
//! phase runs through [`WaitWord::wait_until`] with a poll-only policy; the
//! blocking phase uses the word's futex directly with the states above (a
//! [`WaitWord`] sleeper count would stay non-zero until a woken thread runs,
//! and every release in between would make a system call).

#[cfg(not(loom))]
use super::waiting::{deadline_after, deadline_at};
use super::waiting::{Backoff, LockWaits};
use crate::loom_const::const_unless_loom;
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::wait_word::{WaitOutcome, WaitWord};
use std::time::Duration;
#[cfg(not(loom))]
use std::time::Instant;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::FutexWait;
use waitwise_platform::shim::Ordering;

/// Free.
const UNLOCKED: u32 = 0;
/// Held; no thread needs a futex wake-up.
const LOCKED: u32 = 1;
/// Held; a thread may sleep on the futex, so the releaser wakes one.
const CONTENDED: u32 = 2;

/// A test-and-test-and-set lock with two-phase waiting (poll, yielding
/// between looks, for `alpha * B`, then sleep on the futex), the default [`Mutex`](super::Mutex).
///
/// Unfair: a releasing thread can re-acquire before a woken waiter runs,
/// which is what makes it fast under contention; use
/// [`RawTicketMutex`](super::RawTicketMutex) for FIFO order. 128 bytes (the
/// [`WaitWord`]'s own cache line) plus its options.
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
#[derive(Debug)]
pub struct RawTtasMutex {
    word: WaitWord,
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
                word: WaitWord::new(0),
                waits: LockWaits::new(options, Mechanism::Yield),
            }
        }
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
        // UNLOCKED => LOCKED. Acquire: pairs with the last unlock's Release.
        // Failure Relaxed: a failed CAS takes nothing.
        self.word
            .value()
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
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
        // LOCKED/CONTENDED => UNLOCKED. Release: publishes the critical
        // section to the next acquirer. A swap, not a CAS from LOCKED: one
        // atomic whatever the state, and its result says whether to wake.
        let prev = self.word.value().swap(UNLOCKED, Ordering::Release);
        if prev != LOCKED {
            self.unlock_contended(prev);
        }
    }

    #[cold]
    fn unlock_contended(&self, prev: u32) {
        match prev {
            CONTENDED => {
                self.word.futex().wake(1);
            }
            _ => panic!("waitwise::TtasMutex: unlock of a mutex in state {prev}"),
        }
    }

    /// Whether the lock is held (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        self.word.value().load(Ordering::Relaxed) != UNLOCKED
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

    #[cold]
    fn lock_contended(&self, deadline: Deadline) -> bool {
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let (acquired, blocked) = self.wait_for_lock(deadline);
        profiler.finish(start, blocked);
        acquired
    }

    /// The two phases; returns (acquired, slept at least once).
    fn wait_for_lock(&self, deadline: Deadline) -> (bool, bool) {
        let w = self.word.value();
        let budget = self.waits.policy().poll_budget();
        let polls = !cfg!(loom) && budget.polls();
        let poll_policy = Policy::always_spin().with_mechanism(budget.mechanism);
        let mut backoff = Backoff::new();
        let mut owes_wake = false;
        let mut slept = false;
        loop {
            if polls {
                let poll_deadline = budget.poll_deadline(deadline);
                let target = if owes_wake { CONTENDED } else { LOCKED };
                loop {
                    let out = self
                        .word
                        .wait_until(&poll_policy, poll_deadline, |v| v == UNLOCKED);
                    if let WaitOutcome::TimedOut { .. } = out {
                        break;
                    }
                    // UNLOCKED => LOCKED (CONTENDED when owing a wake-up).
                    // Acquire: pairs with the unlock's Release. Failure
                    // Relaxed: a failed CAS takes nothing.
                    if w.compare_exchange(UNLOCKED, target, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                    {
                        return (true, slept);
                    }
                    backoff.snooze();
                }
            } else {
                // No polling phase (`/b/0`, or loom): one test-and-set probe,
                // so a free lock is not marked CONTENDED for nothing.
                let target = if owes_wake { CONTENDED } else { LOCKED };
                // Relaxed load: a hint; the CAS acquires (Acquire).
                if w.load(Ordering::Relaxed) == UNLOCKED
                    && w.compare_exchange(UNLOCKED, target, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    return (true, slept);
                }
            }
            if !owes_wake && deadline.has_passed() {
                return (false, slept);
            }
            // any => CONTENDED: from here on a release wakes a sleeper, so
            // any wake-up owed is paid. Acquire: the swap may take the lock.
            if w.swap(CONTENDED, Ordering::Acquire) == UNLOCKED {
                return (true, slept);
            }
            owes_wake = false;
            let timeout = deadline.remaining();
            if timeout == Some(Duration::ZERO) {
                return (false, slept);
            }
            // Sleep while CONTENDED (the kernel re-checks atomically).
            let timed_out = match self.word.futex().wait(CONTENDED, timeout) {
                FutexWait::Woken => {
                    slept = true;
                    owes_wake = true;
                    false
                }
                // The kernel's clock says the timeout passed (loom's model
                // says so at once): give up, whatever the cycle clock says.
                FutexWait::TimedOut => {
                    slept = true;
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
                return (acquired, slept);
            }
        }
    }

    /// A woken waiter gives up on its deadline: make sure the sleepers it
    /// owes a wake-up will get one. Takes the lock if it is free (and then
    /// returns `true`), else marks it `CONTENDED`.
    #[cold]
    fn pay_wake_on_give_up(&self) -> bool {
        let w = self.word.value();
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

impl Default for RawTtasMutex {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: `lock`/`try_lock` return only once this call moved the word from
// UNLOCKED to LOCKED or CONTENDED with an Acquire RMW, and only the matching
// `unlock` (Release swap to UNLOCKED) releases it: mutual exclusion with acquire/release
// semantics. The guard is stateless: forgetting it leaves the lock held
// (no memory is involved), and moving or dropping the mutex is safe.
#[cfg(not(loom))]
unsafe impl lock_api::RawMutex for RawTtasMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = lock_api::GuardSend;

    #[inline]
    fn lock(&self) -> Self::Guard {
        RawTtasMutex::lock(self);
        lock_api::GuardSend::new()
    }

    #[inline]
    fn try_lock(&self) -> Option<Self::Guard> {
        RawTtasMutex::try_lock(self).then(lock_api::GuardSend::new)
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
            .then(lock_api::GuardSend::new)
    }

    #[inline]
    fn try_lock_until(&self, timeout: Instant) -> Option<Self::Guard> {
        (RawTtasMutex::try_lock(self) || self.lock_contended(deadline_at(timeout)))
            .then(lock_api::GuardSend::new)
    }
}
