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
//! Each side notes the CPU it runs on as it starts a wait, and compares it
//! with the CPU the other side noted at its last wait ([`CpuNote`]). Each
//! side's note is on a cache line of its own and is written only when it
//! changes (the thread moved, or another thread of that side waited), so
//! in a steady state both lines stay shared and the look costs two cache
//! hits: written at every wait, the notes would bounce between the CPUs
//! at every wait of a one-slot ping-pong. With several senders (or
//! receivers) the note is the last waiter's.

use crate::cpu_note::{current_cpu, CpuNote};

/// The CPU each side of a channel last started a wait on, each on a cache
/// line of its own (module doc).
#[derive(Debug)]
pub(super) struct WaitingCpus {
    sender: Note,
    receiver: Note,
}

/// One side's note, on a cache line of its own.
#[derive(Debug)]
#[repr(align(64))]
struct Note(CpuNote);

/// Which side of the channel waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Sender,
    Receiver,
}

impl WaitingCpus {
    pub(super) fn new() -> Self {
        Self {
            sender: Note(CpuNote::new()),
            receiver: Note(CpuNote::new()),
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
        mine.0.note(cpu);
        theirs.0.is(cpu)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::cpu_note::UNKNOWN;

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
