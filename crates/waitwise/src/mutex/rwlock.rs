//! [`RawRwLock`]: a writer-preferring reader-writer lock on one
//! [`WaitWord`].
//!
//! # State word
//!
//! ```text
//!  bit  31     WRITE_LOCKED    a writer holds the lock
//!  bits 30..20 writers waiting (11 bits, at most MAX_WRITERS_WAITING)
//!  bits 19..0  readers holding (20 bits, at most MAX_READERS)
//! ```
//!
//! Writer-preferring: a reader does not enter while a writer holds *or
//! waits for* the lock, so a stream of readers cannot starve writers
//! (readers can be starved by a stream of writers instead; a thread that
//! takes a read lock twice can deadlock with a waiting writer, as with
//! std's `RwLock`).
//!
//! Transitions (each one CAS or RMW on the word):
//! - read lock: `!WRITE_LOCKED && writers_waiting == 0 => readers + 1`;
//!   otherwise wait for that condition.
//! - read unlock: `readers - 1`; if it was the last reader and a writer
//!   waits, wake the word's sleepers.
//! - write lock: `readers == 0 && !WRITE_LOCKED => WRITE_LOCKED`; otherwise
//!   register (`writers_waiting + 1`), wait for `readers == 0 &&
//!   !WRITE_LOCKED`, then `writers_waiting - 1 | WRITE_LOCKED` in one CAS.
//!   A timed-out writer unregisters and wakes the sleepers (readers it held
//!   back may now enter).
//! - write unlock: `- WRITE_LOCKED`, and wake the sleepers.
//!
//! Readers and writers sleep on the same word, so a release wakes all
//! sleepers (`wake_all`, a system call only when somebody sleeps) and those
//! that still cannot enter sleep again: a herd, but only of threads that
//! were already blocked, and releasing every waiting reader at once is what
//! a write unlock must do anyway.
//!
//! # Memory ordering
//!
//! Every successful acquisition is a `SeqCst` RMW (it includes Acquire,
//! pairing with the Release of the last unlock), every release a `SeqCst`
//! RMW: `SeqCst` because releases are the write half of the [`WaitWord`]
//! sleeper protocol. Failed CASes carry no data and are `Relaxed`, as are
//! the loads that seed a CAS loop: a stale value only fails the CAS (whose
//! failure returns the current one) or, in a `try_*`, reports a lock that
//! was held a moment ago.

use super::waiting::LockWaits;
#[cfg(not(loom))]
use super::waiting::{deadline_after, deadline_at};
use crate::loom_const::const_unless_loom;
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::wait_word::WaitWord;
#[cfg(not(loom))]
use std::time::{Duration, Instant};
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::Ordering;

/// Set while a writer holds the lock.
const WRITE_LOCKED: u32 = 1 << 31;
/// One waiting writer.
const WRITER_WAITING: u32 = 1 << 20;
/// One reader.
const READER: u32 = 1;
const READERS_MASK: u32 = WRITER_WAITING - 1;
const WAITING_MASK: u32 = WRITE_LOCKED - WRITER_WAITING;
/// Most readers holding the lock at once.
pub const MAX_READERS: u32 = READERS_MASK - 1;
/// Most writers waiting at once.
pub const MAX_WRITERS_WAITING: u32 = (WAITING_MASK >> 20) - 1;

#[inline]
fn readers(s: u32) -> u32 {
    s & READERS_MASK
}

#[inline]
fn writers_waiting(s: u32) -> u32 {
    (s & WAITING_MASK) >> 20
}

#[inline]
fn write_locked(s: u32) -> bool {
    s & WRITE_LOCKED != 0
}

/// A reader may enter: no writer holds or waits, and the count has room.
#[inline]
fn readable(s: u32) -> bool {
    !write_locked(s) && writers_waiting(s) == 0 && readers(s) < MAX_READERS
}

/// A writer may enter: nobody holds the lock.
#[inline]
fn writable(s: u32) -> bool {
    !write_locked(s) && readers(s) == 0
}

/// A writer-preferring reader-writer lock with two-phase waiting (the mutex
/// policy, polling with backoff), behind [`crate::mutex::RwLock`].
///
/// # Examples
/// ```
/// use waitwise::mutex::RwLock;
///
/// let lock = RwLock::new(5);
/// {
///     let r1 = lock.read();
///     let r2 = lock.read();
///     assert_eq!(*r1 + *r2, 10);
///     assert!(lock.try_write().is_none());
/// }
/// *lock.write() += 1;
/// assert_eq!(*lock.read(), 6);
/// ```
pub struct RawRwLock {
    word: WaitWord,
    waits: LockWaits,
}

impl RawRwLock {
    const_unless_loom! {
        /// An unlocked lock with the default mutex policy.
        pub fn new() -> Self {
            Self::with_options(WaitOptions::new())
        }

        /// An unlocked lock waiting as `options` say.
        pub fn with_options(options: WaitOptions) -> Self {
            Self {
                word: WaitWord::new(0),
                waits: LockWaits::new(options, Mechanism::Backoff),
            }
        }
    }

    /// Takes a read lock if no writer holds or waits; never waits.
    #[inline]
    pub fn try_lock_shared(&self) -> bool {
        let w = self.word.value();
        // Relaxed load and CAS failure: guesses for the SeqCst CAS, which
        // acquires (module doc).
        let mut s = w.load(Ordering::Relaxed);
        while readable(s) {
            // readers + 1
            match w.compare_exchange_weak(s, s + READER, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Takes a read lock unless `deadline` passes first.
    #[inline]
    pub fn lock_shared_until(&self, deadline: Deadline) -> bool {
        self.try_lock_shared() || self.lock_shared_contended(deadline)
    }

    #[cold]
    fn lock_shared_contended(&self, deadline: Deadline) -> bool {
        let policy = self.waits.policy();
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let mut blocked = false;
        let acquired = loop {
            let out = self.word.wait_until(&policy, deadline, readable);
            blocked |= out.blocked();
            if self.try_lock_shared() {
                break true;
            }
            if out.timed_out() {
                break false;
            }
        };
        profiler.finish(start, blocked);
        acquired
    }

    /// Releases a read lock.
    ///
    /// # Safety
    ///
    /// The caller holds a read lock on this lock, taken by `lock_shared*` /
    /// `try_lock_shared` and not released since.
    #[inline]
    pub unsafe fn unlock_shared(&self) {
        // readers - 1
        let s = self.word.value().fetch_sub(READER, Ordering::SeqCst);
        debug_assert!(readers(s) > 0, "unlock_shared of an unread RwLock: {s:#x}");
        // The last reader out wakes waiting writers; a reader leaving a full
        // lock (MAX_READERS) wakes readers that slept for want of room.
        // `wake_all` makes no system call when nobody sleeps.
        if (readers(s) == 1 && writers_waiting(s) > 0) || readers(s) == MAX_READERS {
            self.word.wake_all();
        }
    }

    /// Takes the write lock if nobody holds the lock; never waits.
    #[inline]
    pub fn try_lock_exclusive(&self) -> bool {
        // 0 => WRITE_LOCKED (waiting writers do not stop a barging try).
        let w = self.word.value();
        // Relaxed load and CAS failure: guesses for the SeqCst CAS, which
        // acquires (module doc).
        let mut s = w.load(Ordering::Relaxed);
        while writable(s) {
            match w.compare_exchange_weak(s, s | WRITE_LOCKED, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Takes the write lock unless `deadline` passes first.
    #[inline]
    pub fn lock_exclusive_until(&self, deadline: Deadline) -> bool {
        self.try_lock_exclusive() || self.lock_exclusive_contended(deadline)
    }

    #[cold]
    fn lock_exclusive_contended(&self, deadline: Deadline) -> bool {
        let policy = self.waits.policy();
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let w = self.word.value();
        // Register: writers_waiting + 1 (unless the lock turned free).
        // Relaxed load and CAS failures: guesses for the SeqCst CASes,
        // which order (module doc).
        let mut s = w.load(Ordering::Relaxed);
        loop {
            if writable(s) {
                match w.compare_exchange_weak(
                    s,
                    s | WRITE_LOCKED,
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        profiler.finish(start, false);
                        return true;
                    }
                    Err(now) => s = now,
                }
                continue;
            }
            assert!(
                writers_waiting(s) < MAX_WRITERS_WAITING,
                "waitwise::RwLock: more than {MAX_WRITERS_WAITING} waiting writers"
            );
            // Failure Relaxed: the value is only the next guess.
            match w.compare_exchange_weak(
                s,
                s + WRITER_WAITING,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        let mut blocked = false;
        let acquired = loop {
            let out = self.word.wait_until(&policy, deadline, writable);
            blocked |= out.blocked();
            let mut s = out.value();
            // writers_waiting - 1 | WRITE_LOCKED while writable; on timeout
            // writers_waiting - 1 alone.
            let done = loop {
                let (next, got) = if writable(s) {
                    (s - WRITER_WAITING + WRITE_LOCKED, true)
                } else if out.timed_out() {
                    (s - WRITER_WAITING, false)
                } else {
                    break None;
                };
                // Failure Relaxed: the value is only the next guess.
                match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                    Ok(_) => break Some(got),
                    Err(now) => s = now,
                }
            };
            match done {
                Some(true) => break true,
                Some(false) => {
                    // Readers held back by our registration may enter now.
                    self.word.wake_all();
                    break false;
                }
                None => continue,
            }
        };
        profiler.finish(start, blocked);
        acquired
    }

    /// Releases the write lock.
    ///
    /// # Safety
    ///
    /// The caller holds the write lock of this lock.
    #[inline]
    pub unsafe fn unlock_exclusive(&self) {
        // WRITE_LOCKED => 0 (waiting-writer count kept).
        let s = self.word.value().fetch_sub(WRITE_LOCKED, Ordering::SeqCst);
        debug_assert!(
            write_locked(s),
            "unlock_exclusive of an unwritten RwLock: {s:#x}"
        );
        self.word.wake_all();
    }

    /// Whether anybody holds the lock (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        let s = self.word.value().load(Ordering::Relaxed);
        write_locked(s) || readers(s) > 0
    }

    /// Whether a writer holds the lock (a snapshot).
    #[inline]
    pub fn is_locked_exclusive(&self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        write_locked(self.word.value().load(Ordering::Relaxed))
    }

    /// The wait-time histogram, when profiling is on.
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.waits.profile()
    }

    /// The policy waits follow.
    pub fn policy(&self) -> Policy {
        self.waits.policy()
    }
}

impl Default for RawRwLock {
    fn default() -> Self {
        Self::new()
    }
}

/// The state a user can act on (a snapshot): write-locked or not, the
/// readers holding it, the writers waiting, and the policy.
impl std::fmt::Debug for RawRwLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Relaxed: a snapshot for display that orders nothing.
        let s = self.word.value().load(Ordering::Relaxed);
        f.debug_struct("RawRwLock")
            .field("write_locked", &write_locked(s))
            .field("readers", &readers(s))
            .field("writers_waiting", &writers_waiting(s))
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

// SAFETY: a writer enters only by a CAS from a state with no readers and no
// writer to WRITE_LOCKED, a reader only by a CAS from a state without
// WRITE_LOCKED that adds one reader; both SeqCst (acquire), releases SeqCst
// RMWs (release). Guards are stateless: forgetting one leaves the lock held,
// moving or dropping the lock touches nothing a guard refers to. They are
// `GuardNoSend`, so the guards are not `Send`, as std's and parking_lot's.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLock for RawRwLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type SharedGuard = lock_api::GuardNoSend;
    type ExclusiveGuard = lock_api::GuardNoSend;

    #[inline]
    fn lock_shared(&self) -> Self::SharedGuard {
        let acquired = self.lock_shared_until(Deadline::NEVER);
        debug_assert!(acquired);
        lock_api::GuardNoSend::new()
    }

    #[inline]
    fn try_lock_shared(&self) -> Option<Self::SharedGuard> {
        RawRwLock::try_lock_shared(self).then(lock_api::GuardNoSend::new)
    }

    #[inline]
    unsafe fn unlock_shared(&self, _guard: Self::SharedGuard) {
        // SAFETY: the caller passes the guard of a held read lock.
        unsafe { RawRwLock::unlock_shared(self) }
    }

    #[inline]
    fn lock_exclusive(&self) -> Self::ExclusiveGuard {
        let acquired = self.lock_exclusive_until(Deadline::NEVER);
        debug_assert!(acquired);
        lock_api::GuardNoSend::new()
    }

    #[inline]
    fn try_lock_exclusive(&self) -> Option<Self::ExclusiveGuard> {
        RawRwLock::try_lock_exclusive(self).then(lock_api::GuardNoSend::new)
    }

    #[inline]
    unsafe fn unlock_exclusive(&self, _guard: Self::ExclusiveGuard) {
        // SAFETY: the caller passes the guard of the held write lock.
        unsafe { RawRwLock::unlock_exclusive(self) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        RawRwLock::is_locked(self)
    }

    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        RawRwLock::is_locked_exclusive(self)
    }
}

// SAFETY: timed attempts acquire through the same CASes or change nothing
// but their own registration, which they undo.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockTimed for RawRwLock {
    type Duration = Duration;
    type Instant = Instant;

    fn try_lock_shared_for(&self, timeout: Duration) -> Option<Self::SharedGuard> {
        self.lock_shared_until(deadline_after(timeout))
            .then(lock_api::GuardNoSend::new)
    }

    fn try_lock_shared_until(&self, timeout: Instant) -> Option<Self::SharedGuard> {
        self.lock_shared_until(deadline_at(timeout))
            .then(lock_api::GuardNoSend::new)
    }

    fn try_lock_exclusive_for(&self, timeout: Duration) -> Option<Self::ExclusiveGuard> {
        self.lock_exclusive_until(deadline_after(timeout))
            .then(lock_api::GuardNoSend::new)
    }

    fn try_lock_exclusive_until(&self, timeout: Instant) -> Option<Self::ExclusiveGuard> {
        self.lock_exclusive_until(deadline_at(timeout))
            .then(lock_api::GuardNoSend::new)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_reader_waiting_for_room_is_woken_when_a_reader_leaves() {
        let lock = Arc::new(RawRwLock::with_options(
            WaitOptions::new().policy(Policy::always_block()),
        ));
        // A lock that MAX_READERS readers hold (taking a million read locks
        // one by one would only be slower).
        lock.word
            .value()
            .store(MAX_READERS * READER, Ordering::SeqCst);
        let l2 = lock.clone();
        let reader = std::thread::spawn(move || l2.lock_shared_until(Deadline::NEVER));
        // Let the reader find the lock full and go to sleep.
        while !lock.word.has_sleepers() {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(10));
        // SAFETY: the word says MAX_READERS readers hold the lock; this
        // releases one of them.
        unsafe { lock.unlock_shared() };
        assert!(reader.join().unwrap());
        assert_eq!(
            readers(lock.word.value().load(Ordering::SeqCst)),
            MAX_READERS
        );
    }
}
