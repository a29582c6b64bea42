//! A thread that has just woken a sleeper is likely to wait for that
//! sleeper next: a request answered by a reply, a ball handed back and
//! forth between two [`Event`](crate::Event)s. The woken thread runs again
//! only after the wake-up latency `W` (~4 µs, or ~35 µs when its vCPU had
//! halted), so the waker's next wait lasts at least `W`. A policy that
//! blocks such a wait (`adapt/b` learns to, once waits outlast `B`) makes
//! the other thread's next wait as long in turn: one block becomes a chain
//! of blocks, each costing a wake-up, that lasts until a wake-up happens
//! to be fast. The barriers break the same chain with their own stamps
//! (module `barrier::wake_chain`); this is its form for objects whose
//! waker and waiter meet on different objects.
//!
//! Its parts:
//! - [`WokenParty`], one per waited object: the notifier stamps the time
//!   when it wakes a sleeper ([`WokenParty::woke`]), and the woken waiter
//!   measures `W` against that stamp ([`WokenParty::measure`]) into the
//!   process's estimate.
//! - The stamp is also kept for the notifying thread, and its next wait
//!   ([`woken_party_due`]) polls until the woken party is due (the stamp
//!   plus twice `W`) before its policy may block.
//!
//! A wrong guess (the thread's next wait is for someone else) costs one
//! poll of about `2W`, once per wake-up.
//!
//! # Memory ordering
//!
//! Every stamp and the estimate are hints: `Relaxed` everywhere, and a
//! stale one costs a poll that ends too early or too late, never a lost
//! wake-up (the waits run on the [`WaitWord`](crate::WaitWord) protocol).

use std::cell::Cell;
// std's atomics even under loom: hints that the models do not explore
// (the waits that read them skip them there).
use std::sync::atomic::{AtomicU64, Ordering};
use waitwise_platform::clock::{cycle_clock, Deadline};

/// Largest wake-up latency believed, in ns: a longer one is a waiter that
/// was descheduled after it woke, or a stale stamp, not a wake-up. About
/// three times the slowest wake-up mode seen (a halted vCPU's, ~35 µs).
///
/// The cap matters most where the scheduler puts a woken thread on its
/// waker's CPU (a guest whose idle vCPUs look preempted does): the woken
/// party then runs only when the waker leaves the CPU, so its latency is
/// however long the waker kept it, and a waker that polls for it until
/// twice that latency keeps it longer still. Believed, such latencies
/// feed each other up to the scheduler's slice (~1 ms per episode); not
/// believed, the waker's next poll lasts twice a real wake-up at most, and
/// then its policy yields the CPU.
pub const MAX_WAKE_LATENCY_NS: u64 = 100_000;

/// The process's wake-up latency, in cycle-clock ticks (0: none measured
/// yet): the slowest recent one ([`WokenParty::measure`]). `Relaxed`
/// (module docs, "Memory ordering").
static WAKE_LATENCY: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// When this thread last woke a sleeper, in cycle-clock ticks (0: not
    /// since its last wait).
    static WOKE_AT: Cell<u64> = const { Cell::new(0) };
}

/// One object's stamp: when its last notify woke a sleeper.
#[derive(Debug, Default)]
pub(crate) struct WokenParty {
    /// Cycle-clock ticks; 0: none. `Relaxed` (module docs).
    woke_at: AtomicU64,
}

impl WokenParty {
    /// No wake-up yet.
    pub(crate) const fn new() -> Self {
        Self {
            woke_at: AtomicU64::new(0),
        }
    }

    /// This thread has just woken a sleeper of the object: stamps the
    /// object and the thread.
    #[cold]
    pub(crate) fn woke(&self) {
        let now = cycle_clock().now().max(1);
        self.woke_at.store(now, Ordering::Relaxed);
        WOKE_AT.with(|at| at.set(now));
    }

    /// A waiter of the object that slept has just run again: counts
    /// `now - stamp` into the process's wake-up latency when it is
    /// believable ([`MAX_WAKE_LATENCY_NS`]), which then holds the larger
    /// of it and seven eighths of the previous one. Returns whether it
    /// was counted.
    #[cold]
    pub(crate) fn measure(&self) -> bool {
        let Some(latency) = latency_since(self.woke_at.load(Ordering::Relaxed)) else {
            return false;
        };
        // The slowest recent wake-up: wake-ups are bimodal (a running or a
        // halted vCPU), and a poll sized by the fast mode misses every slow
        // one.
        let old = WAKE_LATENCY.load(Ordering::Relaxed);
        WAKE_LATENCY.store(latency.max(old - old / 8), Ordering::Relaxed);
        true
    }
}

/// The wake-up latency of a waiter running now that was woken at
/// `woke_at` (cycle-clock ticks; 0: no stamp), in ticks, if believable:
/// positive and at most [`MAX_WAKE_LATENCY_NS`].
#[inline]
pub(crate) fn latency_since(woke_at: u64) -> Option<u64> {
    if woke_at == 0 {
        return None;
    }
    let clock = cycle_clock();
    let latency = clock.now().saturating_sub(woke_at);
    (latency > 0 && latency <= clock.ns_to_ticks(MAX_WAKE_LATENCY_NS)).then_some(latency)
}

/// When a party woken at `woke_at` should have run again, given the
/// wake-up latency `latency` (both in ticks): twice the latency after.
#[inline]
pub(crate) fn due_after(woke_at: u64, latency: u64) -> Deadline {
    Deadline::at_ticks(woke_at.saturating_add(latency.saturating_mul(2)))
}

/// For a wait this thread starts: when the party it woke last should have
/// run again (its stamp plus twice the process's wake-up latency), if it
/// woke one since its last wait and a latency is known. Clears the
/// thread's stamp: one wait per wake-up polls for the woken party.
#[inline]
pub(crate) fn woken_party_due() -> Option<Deadline> {
    let woke_at = WOKE_AT.with(|at| at.replace(0));
    if woke_at == 0 {
        return None;
    }
    // Relaxed: a hint (module docs).
    let latency = WAKE_LATENCY.load(Ordering::Relaxed);
    (latency != 0).then(|| due_after(woke_at, latency))
}

/// This thread's stamp (0: none since its last wait), for tests.
#[cfg(all(test, not(loom)))]
pub(crate) fn thread_stamp() -> u64 {
    WOKE_AT.with(Cell::get)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_wake_up_stamps_the_thread_once() {
        let party = WokenParty::new();
        // Some latency known (another test may have measured one).
        WAKE_LATENCY.fetch_max(cycle_clock().ns_to_ticks(1_000), Ordering::Relaxed);
        assert!(woken_party_due().is_none(), "nothing woken on this thread");
        party.woke();
        assert!(woken_party_due().is_some());
        assert!(woken_party_due().is_none(), "one wait per wake-up");
    }

    #[test]
    fn a_latency_longer_than_a_wake_up_is_not_kept() {
        let clock = cycle_clock();
        // The clock may start at the process's first read: let it pass
        // the 500 µs this test goes back.
        while clock.now() <= clock.ns_to_ticks(1_000_000) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let party = WokenParty::new();
        assert!(!party.measure(), "no stamp, nothing to measure");
        let late = clock.now() - clock.ns_to_ticks(500_000);
        party.woke_at.store(late, Ordering::Relaxed);
        assert!(!party.measure());
    }

    #[test]
    fn a_wake_up_latency_is_kept() {
        let party = WokenParty::new();
        // A stamp taken now and measured at once is believable, unless
        // this thread is descheduled between the two for longer than the
        // cap: try until one is kept.
        let kept = (0..1000).any(|_| {
            party
                .woke_at
                .store(cycle_clock().now().max(1), Ordering::Relaxed);
            std::hint::black_box(0..100).for_each(|_| std::hint::spin_loop());
            party.measure()
        });
        assert!(kept);
        assert_ne!(WAKE_LATENCY.load(Ordering::Relaxed), 0);
    }
}
