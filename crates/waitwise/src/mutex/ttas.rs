//! [`RawTtasMutex`]: test-and-test-and-set with two-phase waiting on a
//! [`WaitWord`]. The default [`crate::Mutex`].
//!
//! # State word: a counter whose parity is the lock
//!
//! ```text
//!  word = 2 * releases + locked     (u32, wrapping; 2^32 is even)
//!  even: UNLOCKED    odd: LOCKED
//! ```
//!
//! Transitions (one atomic each):
//! - lock: `even => even + 1` with a single `fetch_or(LOCKED)` (x86:
//!   `lock bts`); an odd result means somebody else holds it, nothing changed.
//! - unlock: `odd => odd + 1` with `fetch_add(1)`: clears the lock bit *and*
//!   counts the release, then [`WaitWord::wake_one`], which reads the sleeper
//!   count and makes the `futex_wake` system call only if someone sleeps.
//!
//! Because every release changes the word, a waiter waits for "the word is
//! no longer the locked value I saw" rather than for "unlocked": a sleeper
//! woken by a release it then loses to a barging thread returns to its
//! polling phase instead of going straight back to sleep, so a holder that
//! re-acquires in a loop does not pay a `futex_wake` on every release
//! (the same reason parking_lot re-spins after an unpark).
//!
//! # Waiting
//!
//! A contended `lock` runs the mutex policy (`s/b/ln(e-1)`: poll for
//! `0.54 B`, then block) with the `backoff` mechanism, so polls get sparser
//! the longer the holder keeps the lock; after losing a race for a released
//! word it backs off for a random delay that doubles with each loss (Lim &
//! Agarwal section 6.3: waiters released at once must not all hammer the
//! word). A `WaitOptions` policy replaces both the limit and the mechanism.
//!
//! # Memory ordering
//!
//! Acquiring is an `Acquire` RMW (or `SeqCst`, which includes it), releasing
//! a `SeqCst` RMW: the release/acquire pair orders the critical sections.
//! The release is `SeqCst` rather than `Release` because it is the write
//! half of the [`WaitWord`] sleeper protocol (a store-buffering pattern with
//! the sleeper count; see `wait_word.rs`); on x86 both are the same `lock
//! xadd`. A failed acquisition attempt needs no ordering: nothing is read
//! under the lock until an attempt succeeds.

use super::waiting::{deadline_after, deadline_at, Backoff, LockWaits};
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::profile::WaitProfile;
use crate::wait_word::{WaitOutcome, WaitWord};
use std::time::{Duration, Instant};
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::Ordering;

/// Bit 0 of the word: set while the lock is held (the word is odd).
const LOCKED: u32 = 1;

/// Whether `word` is a locked state.
#[inline]
fn is_locked(word: u32) -> bool {
    word & LOCKED != 0
}

/// A test-and-test-and-set lock with two-phase waiting (poll with backoff
/// for `alpha * B`, then sleep on the futex), the default [`crate::Mutex`].
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
    /// An unlocked mutex with the default mutex policy.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Self::with_options(WaitOptions::new())
    }

    /// An unlocked mutex with the default mutex policy.
    #[cfg(loom)]
    pub fn new() -> Self {
        Self::with_options(WaitOptions::new())
    }

    /// An unlocked mutex waiting as `options` say (policy, profiling). Wrap
    /// it with `lock_api::Mutex::from_raw(raw, value)`.
    #[cfg(not(loom))]
    pub const fn with_options(options: WaitOptions) -> Self {
        Self {
            word: WaitWord::new(0),
            waits: LockWaits::new(options, Mechanism::Backoff),
        }
    }

    /// An unlocked mutex waiting as `options` say (policy, profiling).
    #[cfg(loom)]
    pub fn with_options(options: WaitOptions) -> Self {
        Self {
            word: WaitWord::new(0),
            waits: LockWaits::new(options, Mechanism::Backoff),
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
        // even => even + 1 (odd: already held, unchanged).
        !is_locked(self.word.value().fetch_or(LOCKED, Ordering::SeqCst))
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
        // odd => odd + 1: unlocked, one more release.
        let prev = self.word.value().fetch_add(1, Ordering::SeqCst);
        debug_assert!(is_locked(prev), "unlock of an unlocked TtasMutex: {prev:#x}");
        self.word.wake_one();
    }

    /// Whether the lock is held (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        is_locked(self.word.value().load(Ordering::Relaxed))
    }

    /// The wait-time histogram of contended acquisitions, when profiling is
    /// on (`WaitOptions::profile(true)` or `WAITWISE_PROFILE=1`).
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.waits.profile()
    }

    #[cold]
    fn lock_contended(&self, deadline: Deadline) -> bool {
        let policy = self.waits.policy();
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let mut blocked = false;
        let mut backoff = Backoff::new();
        let w = self.word.value();
        // Relaxed: only a hint of which value to wait on; the acquiring RMW
        // below orders the critical section.
        let mut seen = w.load(Ordering::Relaxed);
        let acquired = loop {
            if !is_locked(seen) {
                // even => even + 1
                let prev = w.fetch_or(LOCKED, Ordering::SeqCst);
                if !is_locked(prev) {
                    break true;
                }
                // Lost the race to another waiter or a barging holder.
                seen = prev | LOCKED;
                backoff.snooze();
                // Relaxed: a hint, as above.
                let now = w.load(Ordering::Relaxed);
                if now != seen {
                    seen = now;
                    continue;
                }
            }
            // Wait for any release since `seen` (any change of the word).
            let held = seen;
            match self.word.wait_until(&policy, deadline, |v| v != held) {
                WaitOutcome::Ready { value, blocked: b } => {
                    blocked |= b;
                    seen = value;
                }
                WaitOutcome::TimedOut { value, blocked: b } => {
                    blocked |= b;
                    // One last attempt: the lock may have been released
                    // just as the deadline passed.
                    break !is_locked(value) && self.try_lock();
                }
            }
        };
        profiler.finish(start, blocked);
        acquired
    }
}

impl Default for RawTtasMutex {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: `lock`/`try_lock` return only once the word went from even to odd
// with an acquiring RMW made by this call, and only the matching `unlock`
// (odd => even, SeqCst) releases it: mutual exclusion with acquire/release
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
