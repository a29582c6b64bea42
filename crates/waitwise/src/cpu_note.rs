//! [`CpuNote`]: the CPU a thread last noted on an object, so that a waiter
//! can tell whether the thread that will release it last ran on the
//! waiter's own CPU.
//!
//! Such a releaser cannot run while the waiter polls with PAUSE: every
//! poll only delays it until the waiter's polling limit or the
//! scheduler's tick. A scheduler puts a woken thread beside its waker when
//! the other CPUs look busy or preempted (a guest's idle vCPUs can), and
//! a guest that packs threads onto few vCPUs does so on purpose, so two
//! threads that hand work back and forth end up on one CPU for tens of ms
//! at a time, and a program may pin them there. A waiter that knows it
//! then polls by `yield`, which hands the CPU to its releaser at once
//! ([`crate::policy::crowding::for_wait_beside_its_releaser`]).
//!
//! A note is read and written with `sched_getcpu` (~1 ns with glibc's
//! rseq area) and is written only when it changes, so that in a steady
//! state its cache line stays shared and a look costs a cache hit. The
//! answer is a hint: the noted thread may have moved since. A wrong "same
//! CPU" costs a waiter yields where PAUSEs would have done (a yield with
//! nothing else to run returns at once); a wrong "other CPU" costs what
//! waiting cost without the note.
//!
//! # Memory ordering
//!
//! `Relaxed` throughout: the notes are hints that order nothing. They are
//! std's atomics even under loom, where nothing notes a CPU: the models
//! explore the waiting protocols, not these hints.

use std::sync::atomic::{AtomicU32, Ordering};

/// No CPU noted (or it could not be read).
pub(crate) const UNKNOWN: u32 = u32::MAX;

/// The CPU a thread last noted.
#[derive(Debug)]
pub(crate) struct CpuNote(AtomicU32);

impl CpuNote {
    /// Nothing noted.
    pub(crate) const fn new() -> Self {
        Self(AtomicU32::new(UNKNOWN))
    }

    /// Notes `cpu`, writing only when the note changes (module docs).
    #[inline]
    pub(crate) fn note(&self, cpu: u32) {
        // Relaxed: a hint (module docs).
        if self.0.load(Ordering::Relaxed) != cpu {
            self.0.store(cpu, Ordering::Relaxed);
        }
    }

    /// Whether the note is `cpu`; never for [`UNKNOWN`].
    #[inline]
    pub(crate) fn is(&self, cpu: u32) -> bool {
        // Relaxed: a hint (module docs).
        cpu != UNKNOWN && self.0.load(Ordering::Relaxed) == cpu
    }
}

/// The calling thread's CPU, [`UNKNOWN`] where it cannot be read (and
/// under loom, whose models have no CPUs).
#[inline]
pub(crate) fn current_cpu() -> u32 {
    #[cfg(not(loom))]
    {
        waitwise_platform::affinity::current_cpu()
            .and_then(|c| u32::try_from(c).ok())
            .unwrap_or(UNKNOWN)
    }
    #[cfg(loom)]
    UNKNOWN
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_note_matches_only_the_cpu_noted_last() {
        let note = CpuNote::new();
        assert!(!note.is(3), "nothing noted yet");
        note.note(3);
        assert!(note.is(3));
        assert!(!note.is(1));
        note.note(1);
        assert!(note.is(1) && !note.is(3));
        note.note(UNKNOWN);
        assert!(!note.is(UNKNOWN), "an unreadable CPU matches nothing");
    }

    #[test]
    fn the_calling_threads_cpu_is_read() {
        let cpu = current_cpu();
        assert_ne!(cpu, UNKNOWN, "sched_getcpu works on Linux");
        // Pinned, the thread reads the CPU it was pinned to.
        if waitwise_platform::affinity::pin_current_thread(cpu as usize).is_ok() {
            assert_eq!(current_cpu(), cpu);
        }
    }
}
