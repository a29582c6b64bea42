//! A test-and-test-and-set spin lock over a borrowed 32-bit word:
//! [`SpinLockRef`], the algorithm of the interposer's `pthread_spin_*`
//! (glibc's `pthread_spinlock_t` is one such word).
//!
//! # State word
//!
//! ```text
//!  FREE  1  not held
//!  HELD  0  held; any value but FREE reads as held
//! ```
//!
//! These are glibc's values for `pthread_spinlock_t` on x86-64 (its init
//! and unlock store 1, its lock decrements the word and owns the lock
//! when that leaves 0, its waiters poll until the word is positive), so a
//! process-shared lock works between a process on glibc's functions and
//! one on these: glibc's failed decrements leave a held lock's word
//! negative, which reads as held here too.
//!
//! Transitions:
//! - lock: `FREE => HELD` (swap); a waiter that finds it `HELD` polls the
//!   word with loads until it reads `FREE`, then swaps again
//!   (test-and-test-and-set: the polling loads share the line with the
//!   holder instead of taking it exclusive).
//! - try-lock: one load, and the swap only when it read `FREE`: a held
//!   lock costs no exclusive line transfer.
//! - unlock: `HELD => FREE` (store).
//!
//! A spin lock never sleeps, by definition, so it needs no wake-up and
//! works as it is between processes. The waiter polls with the CPU's spin
//! hint (PAUSE on x86) and, after [`YIELD_AFTER_NS`] of that on the
//! `CLOCK_MONOTONIC` clock, yields the CPU between polls so that a
//! preempted holder can run (a plain spin lock burns its whole time slice
//! then). The clock is read every [`CLOCK_CHECK_INTERVAL`] polls only.
//!
//! # Memory ordering
//!
//! Acquire swap to take, Release store to give back: the pair orders the
//! critical sections. The polling loads carry no data (Relaxed): the swap
//! after them is what acquires.
//!
//! Under loom the spin hint and the yield are loom yields and the clock
//! is not read, so the models explore the word's protocol alone; the
//! unlock's store is a swap there (the same transition and ordering):
//! with the plain store, loom 0.7 explores an execution in which a waiter
//! that swapped `HELD` in itself keeps reading `HELD` after the unlock,
//! however often it yields, and stops at its branch limit.

use waitwise_platform::shim::{AtomicU32, Ordering};

/// Poll with the spin hint this long before yielding between polls.
/// Guessed: about a futex sleep/wake cycle, past which the holder is
/// likely preempted rather than in a long critical section.
#[cfg_attr(loom, allow(dead_code))]
const YIELD_AFTER_NS: u64 = 10_000;

/// Read the clock every this many polls (a power of two). Guessed: a
/// PAUSE costs 10-140 cycles depending on the CPU, so 64 of them are far
/// below [`YIELD_AFTER_NS`], and the ~20 ns clock read stays a small
/// fraction of the polling.
#[cfg_attr(loom, allow(dead_code))]
const CLOCK_CHECK_INTERVAL: u32 = 64;

/// The spin lock over a borrowed word (module docs: states, ordering): the
/// one copy of the algorithm, for every front end whose word lives
/// elsewhere (the interposer's `pthread_spinlock_t`). Every thread that
/// uses the word must go through this view, or through glibc's x86-64
/// `pthread_spin_*` (module docs). A fresh lock's word is
/// [`SpinLockRef::FREE`].
///
/// # Examples
/// ```
/// use waitwise::mutex::SpinLockRef;
/// use std::sync::atomic::AtomicU32;
///
/// let word = AtomicU32::new(SpinLockRef::FREE);
/// let lock = SpinLockRef::new(&word);
/// lock.lock();
/// assert!(!lock.try_lock());
/// lock.unlock();
/// assert!(lock.try_lock());
/// lock.unlock();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SpinLockRef<'a> {
    word: &'a AtomicU32,
}

impl<'a> SpinLockRef<'a> {
    /// The word of a lock that is not held.
    pub const FREE: u32 = 1;
    /// The word of a held lock as this view writes it (glibc's lock may
    /// leave it negative: every value but [`SpinLockRef::FREE`] is held).
    pub const HELD: u32 = 0;

    /// A view over `word` ([`SpinLockRef::FREE`]: not held).
    #[inline(always)]
    pub fn new(word: &'a AtomicU32) -> Self {
        Self { word }
    }

    /// Whether the lock is held now (a snapshot: it may change at once).
    #[inline]
    pub fn is_locked(self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        self.word.load(Ordering::Relaxed) != Self::FREE
    }

    /// Takes the lock if it is free now; never waits. One load, and one
    /// swap only when the load read it free.
    #[inline]
    pub fn try_lock(self) -> bool {
        // Relaxed load first: a held lock costs no exclusive line transfer;
        // the swap acquires (FREE => HELD).
        self.word.load(Ordering::Relaxed) == Self::FREE && self.try_swap()
    }

    /// Takes the lock, polling while it is held (module docs).
    #[inline]
    pub fn lock(self) {
        if !self.try_swap() {
            self.lock_contended();
        }
    }

    /// The contended path of [`SpinLockRef::lock`], after the lock was
    /// found held: polls until it reads free, then swaps, until the swap
    /// takes it. Holds no value with a destructor (a forced unwind out of
    /// its yield passes through it).
    #[cold]
    pub fn lock_contended(self) {
        #[cfg(not(loom))]
        let yield_at = waitwise_platform::clock::monotonic_raw_ns().saturating_add(YIELD_AFTER_NS);
        #[cfg(not(loom))]
        let mut polls = 0u32;
        loop {
            while self.peek() != Self::FREE {
                #[cfg(not(loom))]
                {
                    polls = polls.wrapping_add(1);
                    if polls & (CLOCK_CHECK_INTERVAL - 1) == 0
                        && waitwise_platform::clock::monotonic_raw_ns() >= yield_at
                    {
                        waitwise_platform::shim::yield_now();
                        continue;
                    }
                }
                waitwise_platform::shim::spin_hint();
            }
            if self.try_swap() {
                return;
            }
        }
    }

    /// Releases the lock the caller holds: `HELD => FREE`.
    #[inline]
    pub fn unlock(self) {
        // Release: publishes the critical section to the next holder.
        #[cfg(not(loom))]
        self.word.store(Self::FREE, Ordering::Release);
        // Under loom a swap (the same transition): with a plain store loom
        // lets a waiter poll the stale HELD for ever (module docs).
        #[cfg(loom)]
        self.word.swap(Self::FREE, Ordering::Release);
    }

    /// The word as a waiter polls it.
    #[inline(always)]
    fn peek(self) -> u32 {
        // Relaxed: a hint; the swap acquires.
        self.word.load(Ordering::Relaxed)
    }

    /// The fast path of [`SpinLockRef::lock`]: one swap, `FREE => HELD`
    /// if it was free (`true`: taken), with no load first, for a caller
    /// that expects the lock free and waits with
    /// [`SpinLockRef::lock_contended`] otherwise.
    #[inline(always)]
    pub fn try_swap(self) -> bool {
        // Acquire: pairs with the last unlock's Release. A swap, not a
        // CAS: on a held word it writes HELD over HELD or over a glibc
        // waiter's negative value, both still held, and it never fails
        // spuriously.
        self.word.swap(Self::HELD, Ordering::Acquire) == Self::FREE
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn lock_try_lock_unlock() {
        let word = AtomicU32::new(SpinLockRef::FREE);
        let l = SpinLockRef::new(&word);
        assert!(!l.is_locked());
        l.lock();
        assert!(l.is_locked());
        assert_eq!(word.load(Ordering::Relaxed), SpinLockRef::HELD);
        assert!(!l.try_lock());
        l.unlock();
        assert_eq!(word.load(Ordering::Relaxed), SpinLockRef::FREE);
        assert!(l.try_lock());
        l.unlock();
    }

    #[test]
    fn a_waiter_gets_the_lock_when_the_holder_lets_go() {
        let word = AtomicU32::new(SpinLockRef::FREE);
        let l = SpinLockRef::new(&word);
        l.lock();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                l.lock();
                l.unlock();
            });
            // Long enough that the waiter usually reaches its yielding
            // phase; the test does not depend on it.
            std::thread::sleep(std::time::Duration::from_millis(2));
            l.unlock();
            waiter.join().unwrap();
        });
        assert!(!l.is_locked());
    }
}
