//! [`WakeChain`]: breaks the chains of blocks that a barrier's own
//! wake-ups cause.
//!
//! A barrier waiter that blocked is woken by the episode's last arrival,
//! and runs again only after the wake-up latency `W`: on a VM whose idle
//! vCPU halted, ~35 µs against ~4 µs (module `policy::block_cost`). Its
//! next arrival is late by `W`, so in the next episode the other parties
//! wait at least `W`. When `W` exceeds their poll limit `alpha * B` (a `B`
//! measured in the fast mode, or the slow mode setting in later), they
//! block too, and their wake-ups make the episode after that as slow: one
//! block becomes a chain of blocks, each costing `W`, that lasts until a
//! wake-up happens to be fast. Lim & Agarwal's analysis takes wait times
//! as given; here the policy makes its own.
//!
//! The remedy costs one poll of about `W`: the releaser stamps the time
//! when it wakes sleepers, every woken waiter measures `W` against that
//! stamp, and while the stamp says a woken party may still be on its way,
//! waits first poll until it is due (the stamp plus twice the last `W`)
//! before their policy starts. `examples/barrier_bench` (2 threads, runs
//! interleaved with an always-blocking barrier's) shows the chains broken:
//! almost no blocks with it, thousands with plain `s/b/0.62`, whose runs
//! are several times slower.
//!
//! Only the default waiting of the counting barriers and the
//! [`PairBarrier`](super::PairBarrier) use it; an explicit policy runs as
//! given.
//!
//! # Memory ordering
//!
//! Both stamps are hints: `Relaxed` everywhere. A stale stamp costs one
//! poll that ends too early or too late, never a lost wake-up: the waits
//! themselves run on the [`WaitWord`](crate::WaitWord) protocol.

use crate::mechanism::Mechanism;
use crate::policy::Policy;
use crate::wait_word::{WaitOutcome, WaitWordRef};
use crate::woken_party::{due_after, latency_since};
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{AtomicU64, Ordering};

/// When the last release woke sleepers, and how long the last woken
/// waiter took to run again.
#[derive(Debug)]
pub(crate) struct WakeChain {
    enabled: bool,
    /// Cycle-clock ticks when the last release woke sleepers; 0 when it
    /// woke nobody. Every access is `Relaxed`: a hint that orders no other
    /// memory (module docs, "Memory ordering").
    woke_at: AtomicU64,
    /// The last measured wake-up latency, in ticks. `Relaxed` likewise.
    latency: AtomicU64,
}

impl WakeChain {
    /// A chain breaker, on or off (off: waits and wakes are the plain
    /// [`WaitWordRef`] ones).
    pub(crate) fn new(enabled: bool) -> Self {
        Self {
            // Under loom the stamps are skipped: the model explores the
            // blocking protocol, and there is no clock.
            enabled: enabled && !cfg!(loom),
            woke_at: AtomicU64::new(0),
            latency: AtomicU64::new(0),
        }
    }

    /// After a `SeqCst` change of `word` that releases its waiters: wakes
    /// them (all of them, or one) if any sleeps, stamping the time first.
    #[inline]
    pub(crate) fn wake(&self, word: WaitWordRef<'_>, all: bool) {
        if self.enabled {
            // Relaxed, all: the stamp is a hint (module doc, "Memory
            // ordering").
            if !word.has_sleepers() {
                if self.woke_at.load(Ordering::Relaxed) != 0 {
                    self.woke_at.store(0, Ordering::Relaxed);
                }
                return;
            }
            self.woke_at
                .store(cycle_clock().now().max(1), Ordering::Relaxed);
        }
        if all {
            word.wake_all();
        } else {
            word.wake_one();
        }
    }

    /// Waits until `ready(word)`: first, while a woken party may still be
    /// on its way, polls with `policy`'s mechanism until it is due (unless
    /// that poll would hold a CPU other runnable threads want while such
    /// polls do not pay, [`crate::policy::skips_poll_on_busy_cpus`], or the
    /// mechanism is `yield`);
    /// then `policy`. A wait that blocked measures its wake-up latency.
    ///
    /// A `yield` poll is left out because each yield beside a CPU-bound
    /// thread hands that thread a whole time slice: a poll due after two
    /// wake-up latencies then lasts milliseconds, where blocking wakes the
    /// waiter as soon as its party arrives. The default waiting polls by
    /// `yield` when the CPUs are crowded.
    #[inline]
    pub(crate) fn wait_until(
        &self,
        word: WaitWordRef<'_>,
        policy: &Policy,
        mut ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        if self.enabled
            && policy.mechanism() != Mechanism::Yield
            && !crate::policy::skips_poll_on_busy_cpus(policy.mechanism())
        {
            if let Some(due) = self.woken_party_due() {
                // The engine's polling phase alone: `enabled` only for
                // policies that poll (`NodeWaiting::default_with`).
                let out = word.poll_until(policy.mechanism(), due, &mut ready);
                if !out.timed_out() {
                    return out;
                }
            }
        }
        let out = word.wait_until(policy, Deadline::NEVER, ready);
        if self.enabled && out.blocked() {
            self.measure_latency();
        }
        out
    }

    /// When a party woken by the last release should have arrived: the
    /// stamp plus twice the last latency. `None` when the last release
    /// woke nobody, or no latency is known yet.
    #[inline]
    fn woken_party_due(&self) -> Option<Deadline> {
        // Relaxed: hints (module doc); a stale pair makes one poll end too
        // early or too late.
        let woke_at = self.woke_at.load(Ordering::Relaxed);
        let latency = self.latency.load(Ordering::Relaxed);
        (woke_at != 0 && latency != 0).then(|| due_after(woke_at, latency))
    }

    /// This thread was woken: keeps `now - stamp` as the latency when it is
    /// believable.
    #[cold]
    fn measure_latency(&self) {
        // Relaxed: both stamps are hints (module doc, "Memory ordering"); a
        // stale one gives an implausible latency, which is dropped, or one
        // poll of the wrong length.
        if let Some(latency) = latency_since(self.woke_at.load(Ordering::Relaxed)) {
            self.latency.store(latency, Ordering::Relaxed);
        }
    }

    /// The last measured wake-up latency, in ns (0 before any).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn latency_ns(&self) -> f64 {
        // Relaxed: a hint (module doc); tests read it after joining.
        let ticks = self.latency.load(Ordering::Relaxed);
        cycle_clock().ticks_to_duration(ticks).as_nanos() as f64
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::wait_word::WaitWord;
    use crate::woken_party::MAX_WAKE_LATENCY_NS;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;
    // The tests' own accesses are Relaxed: each reads on the thread that
    // wrote, or after the scope joined the thread that did.
    use waitwise_platform::shim::Ordering as O;

    #[test]
    fn off_means_plain_waits() {
        let chain = WakeChain::new(false);
        let word = WaitWord::new(0);
        chain.wake(word.as_ref(), true);
        assert_eq!(chain.woke_at.load(O::Relaxed), 0);
        let out = chain.wait_until(word.as_ref(), &Policy::always_block(), |v| v == 0);
        assert!(!out.blocked());
    }

    #[test]
    fn a_woken_waiter_measures_its_latency_and_the_next_wait_polls() {
        let chain = WakeChain::new(true);
        let word = WaitWord::new(0);
        // A woken thread that runs more than MAX_WAKE_LATENCY_NS after its
        // wake-up (descheduled on a busy machine) is not believed, and
        // nothing is kept: wake again until one is measured.
        for round in 1..=100 {
            let woke = AtomicBool::new(false);
            std::thread::scope(|s| {
                s.spawn(|| {
                    let policy = Policy::always_block();
                    let out = chain.wait_until(word.as_ref(), &policy, |v| v == round);
                    assert!(out.blocked());
                    woke.store(true, O::Relaxed);
                });
                while !word.has_sleepers() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                word.value().store(round, O::SeqCst);
                chain.wake(word.as_ref(), true);
            });
            assert!(woke.load(O::Relaxed));
            assert_ne!(chain.woke_at.load(O::Relaxed), 0);
            if chain.latency_ns() > 0.0 {
                break;
            }
        }
        let latency = chain.latency_ns();
        assert!(latency > 0.0 && latency <= MAX_WAKE_LATENCY_NS as f64);
        // The stamp is recent: a woken party is due, so a wait polls first.
        assert!(chain.woken_party_due().is_some());
        // A release that wakes nobody clears the stamp.
        chain.wake(word.as_ref(), true);
        assert_eq!(chain.woke_at.load(O::Relaxed), 0);
        assert!(chain.woken_party_due().is_none());
    }

    #[test]
    fn a_latency_longer_than_a_wake_up_is_not_kept() {
        let chain = WakeChain::new(true);
        let clock = cycle_clock();
        let kept = clock.ns_to_ticks(20_000);
        chain.latency.store(kept, O::Relaxed);
        // Woken 500 µs ago: a waiter that waited on its waker's CPU. (The
        // clock may start at the process's first read: let it pass 500 µs.)
        while clock.now() <= clock.ns_to_ticks(1_000_000) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let late = clock.now() - clock.ns_to_ticks(500_000);
        chain.woke_at.store(late, O::Relaxed);
        chain.measure_latency();
        assert_eq!(chain.latency.load(O::Relaxed), kept);
    }

    #[test]
    fn a_poll_for_a_woken_party_that_times_out_falls_back_to_the_policy() {
        let chain = WakeChain::new(true);
        let clock = cycle_clock();
        chain.woke_at.store(clock.now().max(1), O::Relaxed);
        chain.latency.store(clock.ns_to_ticks(1_000), O::Relaxed);
        let word = WaitWord::new(0);
        let polls = std::cell::Cell::new(0u32);
        // Never ready while polling; the policy's first check sees it ready.
        let out = chain.wait_until(word.as_ref(), &Policy::always_block(), |_| {
            polls.set(polls.get() + 1);
            polls.get() > 2
        });
        assert!(!out.timed_out());
    }

    #[test]
    fn a_yield_policy_waits_by_its_policy_without_polling_for_a_woken_party() {
        let chain = WakeChain::new(true);
        let clock = cycle_clock();
        // A woken party due in a second, which a due-poll would wait for.
        chain.woke_at.store(clock.now().max(1), O::Relaxed);
        chain
            .latency
            .store(clock.ns_to_ticks(500_000_000), O::Relaxed);
        let word = WaitWord::new(0);
        let checks = std::sync::atomic::AtomicU32::new(0);
        let checks_before_sleeping = std::sync::atomic::AtomicU32::new(0);
        let policy = Policy::always_block().with_mechanism(Mechanism::Yield);
        std::thread::scope(|s| {
            s.spawn(|| {
                let out = chain.wait_until(word.as_ref(), &policy, |v| {
                    checks.fetch_add(1, O::Relaxed);
                    v == 1
                });
                assert!(out.blocked());
            });
            while !word.has_sleepers() {
                std::thread::sleep(Duration::from_millis(1));
            }
            checks_before_sleeping.store(checks.load(O::Relaxed), O::Relaxed);
            word.value().store(1, O::SeqCst);
            chain.wake(word.as_ref(), true);
        });
        // The policy checks once, and once more after registering; a yield
        // poll would have checked after every yield until the party was due.
        assert!(checks_before_sleeping.load(O::Relaxed) <= 2);
    }
}
