//! How a worker waits for work of its own that other workers run (its
//! `join`'s other half, its scope's tasks): a word in the owner's frame
//! (a done flag, a count of pending tasks) and an event count per worker
//! (in the pool, which outlives every frame), plus one shared by the
//! owners outside the pool.
//!
//! The runner's write to the frame's word is its last touch of the frame;
//! then it bumps the owner's count and wakes it ([`JoinWords::signal`]):
//! the wake-up touches only the pool. The owner reads its count, then the
//! frame's word, and sleeps on the count's value while the word is not yet
//! at its target ([`JoinWords::wait`]). Owners sharing a count wake for
//! each other's signals and go back to sleep.
//!
//! # Memory ordering
//!
//! A store-buffering pattern: the runner writes the frame's word, then the
//! count; the owner reads the count, then the word; all `SeqCst`, so if
//! the owner saw the word short of its target, the bump comes after its
//! read of the count and its sleep on that value returns (the futex
//! re-checks the value in the kernel; the [`WaitWord`] sleeper protocol
//! covers the wake-up). The runner's `SeqCst` write also releases its
//! results to the owner's `SeqCst`/`Acquire` load of the word. Under loom
//! a `SeqCst` fence sits between each write and read, as in [`WaitWord`].

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

/// One event count per worker, and one for the owners outside the pool.
#[derive(Debug)]
pub struct JoinWords {
    words: Box<[WaitWord]>,
}

impl JoinWords {
    /// Counts for `n` workers (owners `0..n`) and for the owners outside
    /// the pool (owner `n`).
    pub fn new(n: usize) -> Self {
        Self {
            words: (0..=n).map(|_| WaitWord::new(0)).collect(),
        }
    }

    /// The owner number of threads outside the pool.
    pub fn outside(&self) -> usize {
        self.words.len() - 1
    }

    /// The runner's side, after its last `SeqCst` write to the owner's
    /// frame (the job's flag set to [`DONE`], a scope's pending count
    /// brought to 0): bump `owner`'s count and wake it if it sleeps.
    pub fn signal(&self, owner: usize) {
        dekker_fence();
        let w = &self.words[owner];
        w.value().fetch_add(1, Ordering::SeqCst);
        w.wake_all();
    }

    /// The owner's side: returns once `word` holds `target` ([`DONE`]
    /// for a job's flag, 0 for a pending count). Between looks it calls
    /// `help`, which runs one queued task and says whether it found one;
    /// with nothing to help with it sleeps on its count, following
    /// `policy`. The count is read before `help` looks, so a signal that
    /// announces work for `help` (a broadcast's share sent to this worker)
    /// after that look ends the sleep.
    pub fn wait(
        &self,
        me: usize,
        word: &AtomicU32,
        target: u32,
        policy: &Policy,
        mut help: impl FnMut() -> bool,
    ) {
        let w = &self.words[me];
        loop {
            // Acquire: pairs with the runner's SeqCst write.
            if word.load(Ordering::Acquire) == target {
                return;
            }
            // The count first, then `help`'s look and the word (module
            // doc).
            let seq = w.value().load(Ordering::SeqCst);
            if help() {
                continue;
            }
            dekker_fence();
            if word.load(Ordering::SeqCst) == target {
                return;
            }
            w.wait_until(policy, Deadline::NEVER, |v| v != seq);
        }
    }
}
