//! [`Signal`]: "the ring may have changed" for threads waiting on the
//! channel, one per direction ("not empty" for receivers, "not full" for
//! senders). A waiter registers, re-checks the ring, and waits on a
//! [`WaitWord`] generation; the thread that changed the ring bumps the
//! generation only when someone is registered, so a channel nobody waits
//! on pays one load per operation and no read-modify-write.
//!
//! # State
//!
//! ```text
//!  waiters: u32    threads registered (polling or asleep) on this signal
//!  word:    u32    generation, bumped by each notify that found waiters, wrapping
//! ```
//!
//! Transitions, per waiter:
//! - register: `waiters + 1`, read the generation `g`, then re-check the
//!   ring (the caller's try operation).
//! - wait: poll, then block, until `word != g` (the [`WaitWord`] runs the
//!   policy), then `waiters - 1`.
//!
//! Per notifier (after changing the ring):
//! - `waiters == 0`: nothing.
//! - `waiters > 0`: `word => word + 1`, then wake one (an item or a slot
//!   is for one thread) or all (disconnection) sleepers; the [`WaitWord`]
//!   skips the system call when none sleeps.
//!
//! # Memory ordering
//!
//! The waiter writes `waiters` then reads the ring; the notifier writes the
//! ring (an index CAS or the disconnect `fetch_or`, `SeqCst`) then reads
//! `waiters`. This store-buffering pattern needs `SeqCst` on both sides (the
//! ring's empty/full checks put a `SeqCst` fence before their index load):
//! at least one side sees the other, so either the waiter finds the change,
//! or the notifier finds the waiter and bumps the generation after the
//! waiter read it. Under loom, which treats `SeqCst` accesses as `AcqRel`,
//! an explicit fence is added on the notifier's side. Unregistering is
//! `Relaxed`: a stale non-zero count costs a notifier one needless bump.
//! The bump is a `fetch_add` and not a store: two notifiers that both read
//! an old generation must still move it past every waiter's `g`.

use crate::policy::Policy;
use crate::wait_word::{WaitOutcome, WaitWord};
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// A change notification for one direction of the channel.
#[derive(Debug)]
pub(crate) struct Signal {
    /// The generation the waiters wait on.
    word: WaitWord,
    /// Registered waiters (see the module docs).
    waiters: AtomicU32,
}

/// Under loom only: a `SeqCst` fence between the notifier's ring write and
/// its read of `waiters`. Nothing otherwise.
#[inline(always)]
fn dekker_fence() {
    #[cfg(loom)]
    waitwise_platform::shim::fence(Ordering::SeqCst);
}

impl Signal {
    /// A signal nobody waits on.
    pub(crate) fn new() -> Self {
        Self {
            word: WaitWord::new(0),
            waiters: AtomicU32::new(0),
        }
    }

    /// Registers the caller as a waiter; returns the generation to wait
    /// past. The caller must re-check the ring before [`Signal::wait`], and
    /// call [`Signal::unregister`] exactly once afterwards.
    #[inline]
    pub(crate) fn register(&self) -> u32 {
        // waiters => waiters + 1 (SeqCst: the waiter's store-buffering write)
        let before = self.waiters.fetch_add(1, Ordering::SeqCst);
        assert!(
            before < u32::MAX,
            "waitwise::channel: more than u32::MAX waiters"
        );
        // SeqCst: read before the ring re-check, so a bump after that
        // re-check is a bump past this value.
        self.word.value().load(Ordering::SeqCst)
    }

    /// Waits until the generation moves past `seen` or `deadline` passes.
    #[inline]
    pub(crate) fn wait(&self, policy: &Policy, deadline: Deadline, seen: u32) -> WaitOutcome {
        self.word.wait_until(policy, deadline, |g| g != seen)
    }

    /// Undoes [`Signal::register`].
    #[inline]
    pub(crate) fn unregister(&self) {
        // waiters => waiters - 1 (Relaxed: see the module docs)
        self.waiters.fetch_sub(1, Ordering::Relaxed);
    }

    /// After a change that serves one waiter (an item pushed, a slot
    /// freed): wake one, if anyone waits. One load when nobody does.
    #[inline]
    pub(crate) fn notify_one(&self) {
        dekker_fence();
        if self.waiters.load(Ordering::SeqCst) != 0 {
            self.notify_slow(false);
        }
    }

    /// After a change that serves every waiter (disconnection).
    pub(crate) fn notify_all(&self) {
        dekker_fence();
        if self.waiters.load(Ordering::SeqCst) != 0 {
            self.notify_slow(true);
        }
    }

    #[cold]
    fn notify_slow(&self, all: bool) {
        // generation => generation + 1 (SeqCst: the WaitWord protocol's write)
        self.word.value().fetch_add(1, Ordering::SeqCst);
        if all {
            self.word.wake_all();
        } else {
            self.word.wake_one();
        }
    }
}
