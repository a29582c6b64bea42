//! Whether a channel operation that must wait shares its CPU with the
//! other side: then its re-tries skip their spins and its polling phase
//! polls by `yield`.
//!
//! A spin waits for a peer that runs on another CPU and will push or pop
//! within a few hundred ns. A peer on the waiter's own CPU cannot run while
//! the waiter spins: every spin, the re-tries' ~4 µs of backoff and the
//! polling phase alike, only delays it until the scheduler's tick, and a
//! producer and a consumer that share a CPU (the scheduler puts a woken
//! thread beside its waker when the other CPUs are busy) then move a
//! few values per time slice. A `yield` hands the CPU to the peer at once.
//! Measured with one producer and one consumer pinned to one CPU,
//! capacity 16: 1.4 M values/s with the spins, 6-7 M/s without them
//! (crossbeam-channel: 3 M/s).
//!
//! Each side notes the CPU it runs on as it starts a wait (a
//! `sched_getcpu`, ~3 ns with glibc's rseq area), and compares it with the
//! CPU the other side noted at its last wait. Each side's note is on a
//! cache line of its own and is written only when it changes (the thread
//! moved, or another thread of that side waited), so in a steady state
//! both lines stay shared and the look costs two cache hits: written at
//! every wait, the notes would bounce between the CPUs at every wait of a
//! one-slot ping-pong. The answer is a hint: a
//! side that has not waited for a while may have moved since, and with
//! several senders (or receivers) the note is the last waiter's. A wrong
//! "same CPU" costs a waiter yields where spins would have done (a yield
//! with nothing else to run returns at once); a wrong "other CPU" costs
//! what waiting cost before.
//!
//! # Memory ordering
//!
//! `Relaxed` throughout: the notes are hints that order nothing.

use waitwise_platform::shim::{AtomicU32, Ordering};

/// No CPU noted yet (or it could not be read).
const UNKNOWN: u32 = u32::MAX;

/// The CPU each side of a channel last started a wait on, each on a cache
/// line of its own (module doc).
#[derive(Debug)]
pub(super) struct WaitingCpus {
    sender: Note,
    receiver: Note,
}

/// One side's note.
#[derive(Debug)]
#[repr(align(64))]
struct Note(AtomicU32);

/// Which side of the channel waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Sender,
    Receiver,
}

impl WaitingCpus {
    pub(super) fn new() -> Self {
        Self {
            sender: Note(AtomicU32::new(UNKNOWN)),
            receiver: Note(AtomicU32::new(UNKNOWN)),
        }
    }

    /// A waiter of `side` starts a wait: notes its CPU and returns whether
    /// the other side's last wait started on the same one.
    #[inline]
    pub(super) fn peer_on_my_cpu(&self, side: Side) -> bool {
        self.note_and_compare(side, current_cpu())
    }

    /// [`peer_on_my_cpu`](Self::peer_on_my_cpu) for a waiter on `cpu`.
    fn note_and_compare(&self, side: Side, cpu: u32) -> bool {
        let (mine, theirs) = match side {
            Side::Sender => (&self.sender, &self.receiver),
            Side::Receiver => (&self.receiver, &self.sender),
        };
        // Relaxed: hints (module doc).
        if mine.0.load(Ordering::Relaxed) != cpu {
            mine.0.store(cpu, Ordering::Relaxed);
        }
        cpu != UNKNOWN && theirs.0.load(Ordering::Relaxed) == cpu
    }
}

/// The calling thread's CPU, [`UNKNOWN`] where it cannot be read (and
/// under loom, whose models have no CPUs).
#[inline]
fn current_cpu() -> u32 {
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
    fn a_peer_counts_as_beside_only_when_it_last_waited_on_this_cpu() {
        let cpus = WaitingCpus::new();
        // Nobody noted a CPU yet.
        assert!(!cpus.note_and_compare(Side::Sender, 3));
        // The receiver on CPU 3, where the sender last waited.
        assert!(cpus.note_and_compare(Side::Receiver, 3));
        assert!(cpus.note_and_compare(Side::Sender, 3));
        // The sender moved; the receiver's note is still CPU 3.
        assert!(!cpus.note_and_compare(Side::Sender, 1));
        assert!(!cpus.note_and_compare(Side::Receiver, 3));
        // An unreadable CPU is never the same as another.
        assert!(!cpus.note_and_compare(Side::Sender, UNKNOWN));
        assert!(!cpus.note_and_compare(Side::Receiver, UNKNOWN));
    }

    #[test]
    fn the_notes_do_not_share_a_cache_line() {
        let cpus = WaitingCpus::new();
        let (s, r) = (
            &cpus.sender as *const Note as usize,
            &cpus.receiver as *const Note as usize,
        );
        assert!(s.abs_diff(r) >= 64);
    }

    #[test]
    fn the_calling_threads_cpu_is_read() {
        let cpus = WaitingCpus::new();
        // Both notes from this thread: the same CPU unless it migrated in
        // between, which a pinned thread cannot.
        let pinned = waitwise_platform::affinity::current_cpu()
            .is_some_and(|c| waitwise_platform::affinity::pin_current_thread(c).is_ok());
        cpus.peer_on_my_cpu(Side::Sender);
        let beside = cpus.peer_on_my_cpu(Side::Receiver);
        if pinned {
            assert!(beside);
        }
    }
}
