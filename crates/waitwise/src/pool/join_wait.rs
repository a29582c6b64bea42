//! How a worker waits for its `join`'s other half when another worker runs
//! it: a flag in the job (in the owner's frame) and an event count per
//! worker (in the pool, which outlives every frame).
//!
//! The runner stores the flag as its last touch of the job, then bumps the
//! owner's count and wakes it ([`JoinWords::signal`]): the wake-up touches
//! only the pool. The owner reads its count, then the flag, and sleeps on
//! the count's value while the flag is unset ([`JoinWords::wait`]).
//!
//! # Memory ordering
//!
//! A store-buffering pattern: the runner writes the flag, then the count;
//! the owner reads the count, then the flag; all `SeqCst`, so if the owner
//! saw the flag unset, the bump comes after its read of the count and its
//! sleep on that value returns (the futex re-checks the value in the
//! kernel; the [`WaitWord`] sleeper protocol covers the wake-up). The
//! flag's `SeqCst` store also releases the job's result to the owner's
//! `SeqCst`/`Acquire` load of it. Under loom a `SeqCst` fence sits between
//! each write and read, as in [`WaitWord`].

use crate::policy::Policy;
use crate::wait_word::WaitWord;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// The job is done: its result is written and its runner will not touch it again.
pub const DONE: u32 = 1;

/// Under loom only: a `SeqCst` fence between a Dekker write and read.
#[inline(always)]
fn dekker_fence() {
    #[cfg(loom)]
    waitwise_platform::shim::fence(Ordering::SeqCst);
}

/// One event count per worker.
#[derive(Debug)]
pub struct JoinWords {
    words: Box<[WaitWord]>,
}

impl JoinWords {
    /// Counts for `n` workers.
    pub fn new(n: usize) -> Self {
        Self {
            words: (0..n).map(|_| WaitWord::new(0)).collect(),
        }
    }

    /// The runner's side, after storing [`DONE`] into the job's flag with
    /// `SeqCst`: bump `owner`'s count and wake it if it sleeps.
    pub fn signal(&self, owner: usize) {
        dekker_fence();
        let w = &self.words[owner];
        w.value().fetch_add(1, Ordering::SeqCst);
        w.wake_all();
    }

    /// The owner's side: returns once `done` holds [`DONE`]. Between
    /// looks it calls `help`, which runs one queued task and says whether
    /// it found one; with nothing to help with it sleeps on its count,
    /// following `policy`.
    pub fn wait(
        &self,
        me: usize,
        done: &AtomicU32,
        policy: &Policy,
        mut help: impl FnMut() -> bool,
    ) {
        let w = &self.words[me];
        loop {
            // Acquire: pairs with the runner's SeqCst store of DONE.
            if done.load(Ordering::Acquire) == DONE {
                return;
            }
            if help() {
                continue;
            }
            // The count first, then the flag (module doc).
            let seq = w.value().load(Ordering::SeqCst);
            dekker_fence();
            if done.load(Ordering::SeqCst) == DONE {
                return;
            }
            w.wait_until(policy, Deadline::NEVER, |v| v != seq);
        }
    }
}
