//! [`Progress`]: the words a worker and its helpers share. The worker
//! publishes the phase it is in; each helper publishes how many phases it
//! has finished; either side may wait for the other through a [`Policy`].
//!
//! # Protocol
//!
//! ```text
//!  worker word:  0 -> 1 -> 2 -> ... (publish: the phase the worker is in)  -> FINISHED
//!  helper word:  0 -> p+1 (finished phase p; phases may be skipped)         -> FINISHED
//! ```
//!
//! Both words only grow (the worker publishes non-decreasing phases, and
//! [`FINISHED`] is the largest value), so a wait's condition, once true,
//! stays true. A helper that may run phase `p` only while the worker is at
//! least at `p - distance` waits for `worker >= p - distance` (or
//! [`FINISHED`]); a worker that asked for phase `p`'s precomputation waits
//! for `helper > p` (or [`FINISHED`]: the helper ended).
//!
//! # Memory ordering
//!
//! Each change of a word is a `SeqCst` store followed by the [`WaitWord`]
//! wake (a read of its sleeper count, a system call only when somebody
//! sleeps): the Dekker pattern that [`WaitWord`] documents, so no wake-up
//! is lost. The store is also a release: a helper that sees phase `w` sees
//! what the worker wrote before publishing it, and a worker that sees a
//! helper's `p + 1` sees what the helper's precomputation for `p` wrote.
//! Plain reads of the words are `Acquire` for the same reason.

use crate::policy::Policy;
use crate::wait_word::{WaitOutcome, WaitWord};
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::Ordering;

/// The value of a word whose owner has ended: the worker finished its
/// work (helpers stop), or a helper returned (the worker stops waiting
/// for it). No phase equals it; [`Progress::publish`] saturates below it.
pub const FINISHED: u32 = u32::MAX;

/// The largest phase a worker can publish.
pub const LAST_PHASE: u32 = FINISHED - 1;

/// The words shared by one worker and `n` helpers.
///
/// # Examples
/// ```
/// use waitwise::helper::{Progress, Throttle};
/// use waitwise::Policy;
///
/// let p = Progress::new(1);
/// p.publish(3);
/// // A helper 2 phases ahead of phase 3 may run phase 5 at once...
/// assert_eq!(p.throttle(5, 2, &Policy::always_spin()), Throttle::Go { worker: 3, waited: None });
/// p.finish();
/// // ...and stops once the worker finished.
/// assert_eq!(p.throttle(9, 2, &Policy::always_spin()), Throttle::Finished);
/// ```
#[derive(Debug)]
pub struct Progress {
    /// The phase the worker is in, or [`FINISHED`].
    worker: WaitWord,
    /// Per helper: one past the last phase it finished, or [`FINISHED`].
    helpers: Box<[WaitWord]>,
}

/// What [`Progress::throttle`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttle {
    /// The helper may run its phase; the worker is in phase `worker`.
    Go {
        /// The worker's phase when the helper went.
        worker: u32,
        /// `None` when the helper did not have to wait; otherwise whether
        /// the wait slept in the kernel.
        waited: Option<Waited>,
    },
    /// The worker finished: the helper stops.
    Finished,
}

/// How a throttled helper waited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// Polled only.
    Polled,
    /// Slept in the kernel at least once.
    Blocked,
}

impl Waited {
    fn of(out: &WaitOutcome) -> Self {
        if out.blocked() {
            Waited::Blocked
        } else {
            Waited::Polled
        }
    }
}

/// What [`Progress::wait_for_helper`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelperState {
    /// The helper finished the phase asked for (or a later one).
    Done,
    /// The helper ended before reaching it (the worker finished, or the
    /// helper's precomputation panicked).
    Ended,
}

impl Progress {
    /// The words of a worker at phase 0 and `helpers` helpers that have
    /// finished nothing.
    pub fn new(helpers: usize) -> Self {
        Self {
            worker: WaitWord::new(0),
            helpers: (0..helpers).map(|_| WaitWord::new(0)).collect(),
        }
    }

    /// Number of helpers.
    pub fn helpers(&self) -> usize {
        self.helpers.len()
    }

    /// Worker: "I am in `phase` now". One `SeqCst` store, and a wake-up
    /// system call only if a helper sleeps. Phases must not decrease; a
    /// phase above [`LAST_PHASE`] is published as [`LAST_PHASE`].
    #[inline]
    pub fn publish(&self, phase: u32) {
        // SeqCst: the Dekker write (module doc).
        self.worker
            .value()
            .store(phase.min(LAST_PHASE), Ordering::SeqCst);
        self.worker.wake_all();
    }

    /// Worker: "I am done"; every helper's next throttle returns
    /// [`Throttle::Finished`], and helpers that check
    /// [`Progress::worker_phase`] see [`FINISHED`].
    pub fn finish(&self) {
        // SeqCst: the Dekker write (module doc).
        self.worker.value().store(FINISHED, Ordering::SeqCst);
        self.worker.wake_all();
    }

    /// The worker's phase, or [`FINISHED`]. Acquire: pairs with the
    /// publishing store (module doc).
    #[inline]
    pub fn worker_phase(&self) -> u32 {
        self.worker.value().load(Ordering::Acquire)
    }

    /// Helper: wait until it may run `phase`, that is until the worker is
    /// in phase `phase - distance` or later, waiting as `policy` says; or
    /// until the worker finishes.
    pub fn throttle(&self, phase: u32, distance: u32, policy: &Policy) -> Throttle {
        let allowed = |w: u32| w == FINISHED || w.saturating_add(distance) >= phase;
        let w = self.worker_phase();
        let (w, waited) = if allowed(w) {
            (w, None)
        } else {
            let out = self.worker.wait_until(policy, Deadline::NEVER, allowed);
            (out.value(), Some(Waited::of(&out)))
        };
        if w == FINISHED {
            Throttle::Finished
        } else {
            Throttle::Go { worker: w, waited }
        }
    }

    /// Helper `helper`: "I finished `phase`". One `SeqCst` store, and a
    /// system call only if the worker sleeps waiting for it.
    ///
    /// # Panics
    ///
    /// If `helper` is not below [`Progress::helpers`].
    #[inline]
    pub fn helper_finished(&self, helper: usize, phase: u32) {
        let word = &self.helpers[helper];
        // SeqCst: the Dekker write (module doc).
        word.value()
            .store(phase.saturating_add(1).min(LAST_PHASE), Ordering::SeqCst);
        word.wake_all();
    }

    /// Helper `helper`: "I have ended"; a worker waiting for it returns
    /// [`HelperState::Ended`].
    ///
    /// # Panics
    ///
    /// If `helper` is not below [`Progress::helpers`].
    pub fn helper_ended(&self, helper: usize) {
        let word = &self.helpers[helper];
        // SeqCst: the Dekker write (module doc).
        word.value().store(FINISHED, Ordering::SeqCst);
        word.wake_all();
    }

    /// How many phases helper `helper` has finished (one past the last
    /// phase it finished), or [`FINISHED`] once it ended.
    ///
    /// # Panics
    ///
    /// If `helper` is not below [`Progress::helpers`].
    pub fn helper_progress(&self, helper: usize) -> u32 {
        // Acquire: pairs with the helper's publishing store (module doc).
        self.helpers[helper].value().load(Ordering::Acquire)
    }

    /// Worker: wait, as `policy` says, until helper `helper` has finished
    /// `phase` (or a later phase), or has ended. Workers call this only
    /// when they ask for it: nothing else makes a worker wait.
    ///
    /// # Panics
    ///
    /// If `helper` is not below [`Progress::helpers`].
    pub fn wait_for_helper(&self, helper: usize, phase: u32, policy: &Policy) -> HelperState {
        let out = self.helpers[helper]
            .wait_until(policy, Deadline::NEVER, |v| v == FINISHED || v > phase);
        if out.value() == FINISHED {
            HelperState::Ended
        } else {
            HelperState::Done
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_helper_goes_when_within_distance() {
        let p = Progress::new(1);
        let spin = Policy::always_spin();
        assert_eq!(
            p.throttle(0, 0, &spin),
            Throttle::Go {
                worker: 0,
                waited: None
            }
        );
        assert_eq!(
            p.throttle(1, 1, &spin),
            Throttle::Go {
                worker: 0,
                waited: None
            }
        );
        p.publish(10);
        assert_eq!(
            p.throttle(12, 2, &spin),
            Throttle::Go {
                worker: 10,
                waited: None
            }
        );
    }

    #[test]
    fn publishing_past_the_last_phase_saturates() {
        let p = Progress::new(0);
        p.publish(FINISHED);
        assert_eq!(p.worker_phase(), LAST_PHASE);
        p.finish();
        assert_eq!(p.worker_phase(), FINISHED);
    }

    #[test]
    fn a_throttled_helper_waits_for_the_worker() {
        let p = Progress::new(1);
        std::thread::scope(|s| {
            let h = s.spawn(|| p.throttle(5, 1, &Policy::always_block()));
            std::thread::sleep(std::time::Duration::from_millis(5));
            p.publish(4);
            match h.join().unwrap() {
                Throttle::Go { worker, waited } => {
                    assert_eq!(worker, 4);
                    // The helper either saw 4 at once (slow start) or slept.
                    assert!(matches!(waited, None | Some(Waited::Blocked)));
                }
                Throttle::Finished => panic!("worker did not finish"),
            }
        });
    }

    #[test]
    fn the_worker_waits_only_when_asked_and_sees_the_end() {
        let p = Progress::new(2);
        p.helper_finished(0, 3);
        assert_eq!(p.helper_progress(0), 4);
        assert_eq!(
            p.wait_for_helper(0, 3, &Policy::always_block()),
            HelperState::Done
        );
        p.helper_ended(1);
        assert_eq!(
            p.wait_for_helper(1, 100, &Policy::always_block()),
            HelperState::Ended
        );
    }
}
