//! The hook through which an algorithm over a borrowed futex word waits:
//! [`TwoPhaseWait`], a polling phase and then sleeps on the futex, and
//! [`PolicyWait`], the engine's, which waits as a [`Policy`] says.
//!
//! An algorithm written once over borrowed memory (the TTAS lock's
//! [`TtasLockRef`](crate::mutex::TtasLockRef), the semaphore's
//! [`SemaphoreRef`](crate::semaphore::SemaphoreRef), the reader-writer
//! word's [`RwWordRef`](crate::mutex::RwWordRef)) never chooses a clock,
//! a mechanism or a sleep by itself: it asks its front end, as
//! parking_lot's `park` asks its hooks and Concurrency Kit's `ck_ec` its
//! `ops`. The front end decides how to poll and for how long (its clock,
//! its mechanism) and how to sleep on the futex (a cancellation point, a
//! cleanup when the thread is unwound). The algorithm owns the deadline
//! and hands it in. What one algorithm needs beyond that is a small
//! extension trait beside it:
//! [`LockWait`](crate::mutex::LockWait) (when a waiter asks for a
//! hand-off), [`SemaphoreWait`](crate::semaphore::SemaphoreWait) (a
//! sleep counted among the semaphore's sleepers, which a signal may end)
//! and [`RwWait`](crate::mutex::RwWait) (a sleep in the readers' or the
//! writers' queue, and when a wait ends; its waker half, which unlocks
//! use too, is [`RwWake`](crate::mutex::RwWake)).
//! [`PolicyWait`] implements the first two, so the engine's primitives and
//! the interposer's objects share one policy-driven polling phase.
//!
//! The waited word is a [`WaitWord`]: a [`Futex`] (the default) for the
//! mutex and the semaphore, whose polls see its `u32`; the reader-writer
//! word's [`RwStateWord`](crate::mutex::RwStateWord), a 64-bit word whose
//! low half is the futex, whose polls see an
//! [`RwState`](crate::mutex::RwState).
//!
//! Implementors: [`PolicyWait`]; the TTAS lock's `AskingForHandOff` and
//! `TurnsLockWait`; the interposer's mutex, semaphore and rwlock waits
//! (`PassingOnLockWait`, `CancellableSemaphoreWait`, `BitsetRwWait`); and
//! the loom models' and stress tests' own front ends.

use crate::policy::idle_extension::Extension;
use crate::policy::{Policy, PollBudget};
use crate::wait_word::{poll_extended, poll_until};
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::{Futex, FutexWait};

/// A word a [`TwoPhaseWait`] polls and sleeps on: what a poll sees of it,
/// and the plain sleep on its futex that [`TwoPhaseWait::sleep`] defaults
/// to.
pub trait WaitWord {
    /// What a poll's `ready` is given: the word's value.
    type Value: Copy;

    /// Sleeps while the futex holds `expected`, at most `timeout`, with
    /// [`Futex::wait`]'s results (a spurious [`FutexWait::Woken`]
    /// included: the caller always looks again).
    fn wait(&self, expected: u32, timeout: Option<Duration>) -> FutexWait;
}

impl WaitWord for Futex {
    type Value = u32;

    #[inline]
    fn wait(&self, expected: u32, timeout: Option<Duration>) -> FutexWait {
        Futex::wait(self, expected, timeout)
    }
}

/// How a contended wait on a futex word waits: polling phases, each
/// started with [`TwoPhaseWait::start_polling`] and run with
/// [`TwoPhaseWait::poll`], and sleeps on the futex
/// ([`TwoPhaseWait::sleep`]). The algorithm decides when each happens
/// (the word's protocol); the front end decides how. `W` is the waited
/// word ([`WaitWord`]).
pub trait TwoPhaseWait<W: WaitWord + ?Sized = Futex> {
    /// Starts a polling phase, which lasts until its limit or `deadline`,
    /// whichever comes first. `false`: no polling phase (the algorithm
    /// tries the word once, then sleeps).
    fn start_polling(&mut self, deadline: Deadline) -> bool;

    /// Polls the word until `ready(value)` holds (`true`) or the polling
    /// phase started last ends (`false`). Loads of a [`Futex`] are
    /// `Acquire`; a word may ask less (the reader-writer word's polls may
    /// be `Relaxed`: the CAS that follows is what acquires).
    fn poll(&mut self, word: &W, ready: impl FnMut(W::Value) -> bool) -> bool;

    /// Sleeps while the word's futex holds `expected`, at most `timeout`,
    /// with [`Futex::wait`]'s results. The default is [`WaitWord::wait`].
    #[inline]
    fn sleep(&mut self, word: &W, expected: u32, timeout: Option<Duration>) -> FutexWait {
        word.wait(expected, timeout)
    }
}

/// The engine's [`TwoPhaseWait`] for a [`Policy`]: polls with its
/// mechanism for its limit on the cycle clock ([`poll_until`]; past the
/// limit, `adapt/b`'s idle extension), sleeps with [`Futex::wait`]. The
/// default [`Mutex`](crate::Mutex) and [`Semaphore`](crate::Semaphore)
/// wait with it, and so does the interposer's polling phase. It never asks
/// for a lock hand-off.
///
/// Under loom there is no polling phase (the models explore the blocking
/// protocols, where wake-ups can be lost): the algorithm makes its one
/// try at the word instead.
///
/// # Examples
/// ```
/// use waitwise::two_phase_wait::{PolicyWait, TwoPhaseWait};
/// use waitwise::{Deadline, Policy};
///
/// let mut wait = PolicyWait::new(&Policy::always_block());
/// assert!(!wait.start_polling(Deadline::NEVER), "/b/0 does not poll");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct PolicyWait {
    budget: PollBudget,
    /// When the current polling phase ends.
    poll_end: Deadline,
    /// The wait's deadline (where an idle extension stops).
    deadline: Deadline,
    /// `adapt/b`'s idle extension, one per wait
    /// (`policy::idle_extension`).
    extension: Extension,
}

impl PolicyWait {
    /// Waits as `policy` says. A randomized policy draws its limit here:
    /// make one per wait.
    #[inline]
    pub fn new(policy: &Policy) -> Self {
        Self::with_budget(policy.poll_budget())
    }

    /// Waits with a budget already drawn (by [`Policy::begin_wait`], which
    /// lets `adapt/b` draw from the waited object's own summary).
    #[inline]
    pub fn with_budget(budget: PollBudget) -> Self {
        Self {
            budget,
            poll_end: Deadline::NEVER,
            deadline: Deadline::NEVER,
            extension: Extension::new(),
        }
    }
}

impl TwoPhaseWait for PolicyWait {
    #[inline]
    fn start_polling(&mut self, deadline: Deadline) -> bool {
        if cfg!(loom) || !self.budget.polls() {
            return false;
        }
        self.poll_end = self.budget.poll_deadline(deadline);
        self.deadline = deadline;
        true
    }

    #[inline]
    fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool {
        let m = self.budget.mechanism;
        if self.budget.idle_extension {
            // `adapt/b`: past the limit, on while no other thread wants
            // this CPU (`policy::idle_extension`).
            let out = poll_extended(
                futex,
                m,
                &mut self.poll_end,
                self.deadline,
                &mut self.extension,
                ready,
            );
            return !out.timed_out();
        }
        !poll_until(futex, m, self.poll_end, ready).timed_out()
    }
}
