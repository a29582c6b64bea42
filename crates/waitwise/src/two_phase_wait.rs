//! The hook through which an algorithm over a borrowed futex word waits:
//! [`TwoPhaseWait`], a polling phase and then sleeps on the futex, and
//! [`PolicyWait`], the engine's, which waits as a [`Policy`] says.
//!
//! An algorithm written once over borrowed memory (the TTAS lock's
//! [`TtasLockRef`](crate::mutex::TtasLockRef), the semaphore's
//! [`SemaphoreRef`](crate::semaphore::SemaphoreRef)) never chooses a clock,
//! a mechanism or a sleep by itself: it asks its front end, as
//! parking_lot's `park` asks its hooks and Concurrency Kit's `ck_ec` its
//! `ops`. The front end decides how to poll and for how long (its clock,
//! its mechanism) and how to sleep on the futex (a cancellation point, a
//! cleanup when the thread is unwound). What one algorithm needs beyond
//! that is a small extension trait beside it:
//! [`LockWait`](crate::mutex::LockWait) (when a waiter asks for a
//! hand-off) and [`SemaphoreWait`](crate::semaphore::SemaphoreWait) (a
//! sleep counted among the semaphore's sleepers, which a signal may end).
//! [`PolicyWait`] implements both, so the engine's primitives and the
//! interposer's objects share one policy-driven polling phase.

use crate::policy::idle_extension::Extension;
use crate::policy::{Policy, PollBudget};
use crate::wait_word::{poll_extended, poll_until};
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::{Futex, FutexWait};

/// How a contended wait on a futex word waits: polling phases, each
/// started with [`TwoPhaseWait::start_polling`] and run with
/// [`TwoPhaseWait::poll`], and sleeps on the futex
/// ([`TwoPhaseWait::sleep`]). The algorithm decides when each happens
/// (the word's protocol); the front end decides how.
pub trait TwoPhaseWait {
    /// Starts a polling phase, which lasts until its limit or `deadline`,
    /// whichever comes first. `false`: no polling phase (the algorithm
    /// tries the word once, then sleeps).
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
