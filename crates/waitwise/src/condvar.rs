//! [`Condvar`]: a condition variable for `lock_api` mutex guards, waiting
//! through the producer-consumer policy.
//!
//! A waiter reads a sequence number while it holds the mutex, unlocks, and
//! waits (poll, then block on the futex) until the number changes; a notify
//! bumps the number and wakes sleepers, making the `futex_wake` system call
//! only when one sleeps. It works with the guard of any
//! [`lock_api::RawMutex`], so with `waitwise::Mutex<T>` as well as with
//! `parking_lot::Mutex<T>`.
//!
//! # State word
//!
//! ```text
//!  bits 31..0: seq  number of notifies so far, wrapping
//! ```
//!
//! Transitions:
//! - wait: read `seq` under the mutex, unlock, wait until `seq != seen`,
//!   re-lock. The word is not written.
//! - notify_one / notify_all: `seq => seq + 1`, then wake one / every
//!   sleeper if any is registered on the [`WaitWord`]; no system call
//!   otherwise.
//!
//! # Spurious wake-ups
//!
//! Allowed, as with every condition variable: a notify releases every thread
//! that is still *polling* (they all see the new `seq`), not only one; a
//! waiter that sleeps returns after its first kernel wake-up even if `seq`
//! has not moved since it read it; and a waiter returns if 2^32 notifies
//! happen between its read and its sleep only by luck. The second is what
//! keeps `notify_one` from being lost: the kernel wakes real-time waiters by
//! priority, not arrival, so the one it wakes for a notify may be a waiter
//! that started after that notify's increment; if it slept again, no waiter
//! would return for the notify while an earlier one still slept. Wait in a loop on the condition, or use
//! [`Condvar::wait_while`]. No wake-up is ever lost: a notify that follows a
//! state change made under the mutex always changes `seq` after the waiter
//! read it (see below).
//!
//! # Memory ordering
//!
//! The waiter reads `seq` with `Relaxed` while it holds the mutex. A notifier
//! that changed the condition under the mutex after the waiter unlocked it
//! acquired the mutex after the waiter's read, so its increment happens after
//! that read, and by coherence the read cannot see it: the waiter waits for a
//! value that has already changed, or will change. The mutex orders the
//! condition itself; `seq` carries no data. The increment is `SeqCst`: it is
//! the write half of the [`WaitWord`] sleeper protocol (a store-buffering
//! pattern with the sleeper count), and a swap would not do: concurrent
//! notifies must each move `seq` on.

use crate::options::WaitOptions;
use crate::policy::{Policy, SyncKind};
use crate::profile::{Profiler, WaitProfile};
use crate::wait_word::WaitWord;
use lock_api::{MutexGuard, RawMutex};
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::Ordering;

/// How a timed wait on a [`Condvar`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitTimeoutResult {
    /// Woken before the timeout: by a notify, or spuriously.
    Woken,
    /// The timeout passed (for `wait_while_timeout`: with the condition
    /// still true).
    TimedOut,
}

impl WaitTimeoutResult {
    /// Whether the wait ended because the timeout passed.
    pub fn timed_out(self) -> bool {
        self == WaitTimeoutResult::TimedOut
    }
}

/// A condition variable: block until another thread changes shared state
/// under a mutex and notifies.
///
/// Use it when threads wait for a condition on data that a mutex protects
/// (a queue becoming non-empty, a flag set). For a one-shot signal without a
/// mutex, [`crate::Event`] is cheaper.
///
/// Waits may wake spuriously (see the [module docs](self)): check the
/// condition in a loop, or use [`Condvar::wait_while`].
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use waitwise::condvar::Condvar;
///
/// let pair = Arc::new((parking_lot::Mutex::new(false), Condvar::new()));
/// let pair2 = pair.clone();
/// let producer = std::thread::spawn(move || {
///     let (lock, cv) = &*pair2;
///     *lock.lock() = true;
///     cv.notify_one();
/// });
/// let (lock, cv) = &*pair;
/// let mut ready = lock.lock();
/// cv.wait_while(&mut ready, |ready| !*ready);
/// assert!(*ready);
/// drop(ready);
/// producer.join().unwrap();
/// ```
#[derive(Debug)]
pub struct Condvar {
    /// The notify sequence number (see the module docs).
    seq: WaitWord,
    policy: Policy,
    profiler: Profiler,
}

impl Condvar {
    /// A condition variable waiting with the producer-consumer policy
    /// (`s/b/ln(e-1)` unless `WAITWISE_ALPHA` says otherwise), profiling as
    /// `WAITWISE_PROFILE` says.
    pub fn new() -> Self {
        Self::with_options(WaitOptions::new())
    }

    /// A condition variable with explicit waiting settings.
    ///
    /// # Examples
    /// ```
    /// use waitwise::{condvar::Condvar, Policy, WaitOptions};
    ///
    /// let cv = Condvar::with_options(WaitOptions::new().policy(Policy::always_block()));
    /// assert_eq!(cv.policy().name(), "/b/0");
    /// ```
    pub fn with_options(options: WaitOptions) -> Self {
        Self {
            seq: WaitWord::new(0),
            policy: options.resolve_policy(SyncKind::ProducerConsumer),
            profiler: options.profiler(),
        }
    }

    /// The policy waits follow.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The wait-time histogram so far (`None` when profiling is off).
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.profiler.snapshot(SyncKind::ProducerConsumer.name())
    }

    /// Unlocks the guard's mutex, waits for a notify, and locks it again.
    /// May wake spuriously.
    ///
    /// # Examples
    /// ```
    /// use std::sync::Arc;
    /// use waitwise::condvar::Condvar;
    ///
    /// let shared = Arc::new((parking_lot::Mutex::new(Vec::new()), Condvar::new()));
    /// let s2 = shared.clone();
    /// std::thread::spawn(move || {
    ///     s2.0.lock().push(7);
    ///     s2.1.notify_all();
    /// });
    /// let mut queue = shared.0.lock();
    /// while queue.is_empty() {
    ///     shared.1.wait(&mut queue);
    /// }
    /// assert_eq!(queue.pop(), Some(7));
    /// ```
    pub fn wait<R: RawMutex, T: ?Sized>(&self, guard: &mut MutexGuard<'_, R, T>) {
        self.wait_deadline(guard, Deadline::NEVER);
    }

    /// Waits while `condition` holds for the protected data; returns with the
    /// mutex locked and the condition false.
    pub fn wait_while<R, T, F>(&self, guard: &mut MutexGuard<'_, R, T>, mut condition: F)
    where
        R: RawMutex,
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut **guard) {
            self.wait(guard);
        }
    }

    /// Like [`Condvar::wait`], but gives up after `timeout`.
    /// `Duration::ZERO` unlocks, re-locks and reports
    /// [`WaitTimeoutResult::TimedOut`] at once; `Duration::MAX` never times
    /// out.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::condvar::Condvar;
    ///
    /// let lock = parking_lot::Mutex::new(());
    /// let cv = Condvar::new();
    /// let mut guard = lock.lock();
    /// assert!(cv.wait_timeout(&mut guard, Duration::from_millis(1)).timed_out());
    /// ```
    pub fn wait_timeout<R: RawMutex, T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, R, T>,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        self.wait_deadline(guard, Deadline::after(timeout))
    }

    /// Like [`Condvar::wait`], but gives up at `deadline`.
    pub fn wait_deadline<R: RawMutex, T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, R, T>,
        deadline: Deadline,
    ) -> WaitTimeoutResult {
        // Relaxed: read under the mutex; see the module's memory-ordering
        // paragraph for why a notify after our unlock cannot be missed.
        let seen = self.seq.value().load(Ordering::Relaxed);
        let start = self.profiler.start();
        let out = MutexGuard::unlocked(guard, || {
            // Until woken at all, not until `seq` moves: see
            // `WaitWord::wait_until_woken` (a notify the kernel delivers to
            // a later waiter must still return someone).
            self.seq
                .wait_until_woken(&self.policy, deadline, |seq| seq != seen)
        });
        self.profiler.finish(start, out.blocked());
        if out.timed_out() {
            WaitTimeoutResult::TimedOut
        } else {
            WaitTimeoutResult::Woken
        }
    }

    /// Waits while `condition` holds, at most `timeout`. Returns
    /// [`WaitTimeoutResult::TimedOut`] only if the condition still holds
    /// when the time is up; the mutex is locked on return either way.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::condvar::Condvar;
    ///
    /// let lock = parking_lot::Mutex::new(3);
    /// let cv = Condvar::new();
    /// let mut n = lock.lock();
    /// // The condition is already false: no wait at all.
    /// assert!(!cv.wait_while_timeout(&mut n, Duration::ZERO, |n| *n == 0).timed_out());
    /// // Still true after the timeout:
    /// assert!(cv.wait_while_timeout(&mut n, Duration::from_millis(1), |n| *n == 3).timed_out());
    /// ```
    pub fn wait_while_timeout<R, T, F>(
        &self,
        guard: &mut MutexGuard<'_, R, T>,
        timeout: Duration,
        mut condition: F,
    ) -> WaitTimeoutResult
    where
        R: RawMutex,
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        let deadline = Deadline::after(timeout);
        while condition(&mut **guard) {
            if deadline.has_passed() || self.wait_deadline(guard, deadline).timed_out() {
                // The wait's own verdict is final: check the condition once
                // more, then report.
                return if condition(&mut **guard) {
                    WaitTimeoutResult::TimedOut
                } else {
                    WaitTimeoutResult::Woken
                };
            }
        }
        WaitTimeoutResult::Woken
    }

    /// Wakes one waiting thread (and, spuriously, any that are still
    /// polling). Costs one atomic increment, plus a `futex_wake` system
    /// call only if a waiter sleeps in the kernel.
    #[inline]
    pub fn notify_one(&self) {
        // seq => seq + 1
        self.seq.value().fetch_add(1, Ordering::SeqCst);
        self.seq.wake_one();
    }

    /// Wakes every waiting thread. Costs one atomic increment, plus a
    /// `futex_wake` system call only if a waiter sleeps in the kernel.
    #[inline]
    pub fn notify_all(&self) {
        // seq => seq + 1
        self.seq.value().fetch_add(1, Ordering::SeqCst);
        self.seq.wake_all();
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn notify_without_waiters_makes_no_syscall() {
        let cv = Condvar::new();
        cv.notify_one();
        cv.notify_all();
        assert!(!cv.seq.has_sleepers());
        assert_eq!(cv.seq.value().load(Ordering::SeqCst), 2);
    }

    #[test]
    fn zero_timeout_returns_at_once_with_the_lock_held() {
        let lock = parking_lot::Mutex::new(0);
        let cv = Condvar::with_options(WaitOptions::new().policy(Policy::always_block()));
        let mut g = lock.lock();
        let t = Instant::now();
        assert!(cv.wait_timeout(&mut g, Duration::ZERO).timed_out());
        assert!(t.elapsed() < Duration::from_millis(500));
        assert!(lock.is_locked());
        *g += 1;
    }

    #[test]
    fn sleeping_waiter_is_woken_for_every_policy() {
        for policy in [
            Policy::always_block(),
            Policy::always_spin(),
            Policy::for_kind(SyncKind::ProducerConsumer),
        ] {
            let shared = Arc::new((
                parking_lot::Mutex::new(false),
                Condvar::with_options(WaitOptions::new().policy(policy)),
            ));
            let s2 = shared.clone();
            let h = std::thread::spawn(move || {
                let mut g = s2.0.lock();
                s2.1.wait_while(&mut g, |flag| !*flag);
            });
            std::thread::sleep(Duration::from_millis(2));
            *shared.0.lock() = true;
            shared.1.notify_one();
            h.join().unwrap();
        }
    }

    #[test]
    fn profiling_records_waits() {
        let lock = parking_lot::Mutex::new(());
        let cv = Condvar::with_options(WaitOptions::new().profile(true));
        let mut g = lock.lock();
        cv.wait_timeout(&mut g, Duration::from_micros(10));
        assert_eq!(cv.wait_profile().unwrap().total_waits, 1);
        assert!(Condvar::with_options(WaitOptions::new().profile(false))
            .wait_profile()
            .is_none());
    }
}
