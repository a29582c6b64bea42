//! [`Event`]: the helper/worker condition wait of seed 000 (Anastopoulos &
//! Koziris 2008): a waiter sleeps until a worker notifies it, and a notify
//! to a polling waiter costs one atomic operation and no system call.
//!
//! # Semantics: auto-reset, like seed 000's `MWMON_NOTIFIED`/`ORIGINAL`
//!
//! - [`Event::notify`] releases one waiting thread; if none is waiting, the
//!   event stays *signalled* and the next [`Event::wait`] returns at once
//!   (a notify is never lost). Several notifies with nobody waiting collapse
//!   into one signal.
//! - With several registered waiters, `k` notifies release `k` of them.
//! - [`Event::notify_all`] releases every thread waiting at that moment (or
//!   signals the event, if none is).
//! - Every wake-up is accounted for: there are no spurious returns from
//!   [`Event::wait`]; [`Event::wait_timeout`] returns `false` only when the
//!   timeout passed without a notify being consumed.
//!
//! # State word
//!
//! ```text
//!  bits 31..16: waiters  threads registered in wait() and not yet released
//!  bits 15..0 : permits  notifies not yet consumed, <= max(waiters, 1)
//! ```
//!
//! Transitions (each one CAS on the word):
//! - wait, fast: `permits > 0  =>  permits - 1` and return.
//! - wait, register: `permits == 0  =>  waiters + 1`, then wait for
//!   `permits > 0` and take `permits - 1, waiters - 1` in one step.
//! - wait, time out: `permits == 0  =>  waiters - 1` (if a permit arrived
//!   meanwhile, it is consumed instead and the wait succeeds).
//! - notify: `permits < max(waiters, 1)  =>  permits + 1`, then wake one
//!   sleeper if any is registered on the [`WaitWord`]; else the word is
//!   written back unchanged (see "Memory ordering") and nothing is woken.
//! - notify_all: `permits = max(waiters, permits, 1)`, then wake all sleepers
//!   (unchanged and written back when every waiter has a permit).
//!
//! # Crowded waits
//!
//! A waiter of the default policy polls with PAUSE while the registered
//! waiters (itself included, counted when it registers) and one notifier
//! fit on the CPUs the process may use, and by `yield` once they outnumber
//! them ([`crate::policy::crowding`], as the condition variable): the
//! notifier most likely needs the CPU a PAUSE poller would hold. It polls
//! by `yield` too while they fit but the process's own threads crowd the
//! CPUs: more runnable threads than CPUs, and the process uses at least
//! three quarters of its CPUs (event pairs that outnumber the CPUs).
//! While the process's yields lose whole slices such a waiter blocks at
//! once ([`crate::policy::crowding::for_notified_wait`]). A policy given
//! explicitly is used as given.
//!
//! # A notifier on the waiter's CPU
//!
//! A notify that finds a registered waiter notes the CPU it runs on
//! (module `cpu_note`; written only when it changes). A waiter of the
//! default waiting whose early looks found no permit, and that runs on
//! that CPU, polls by `yield` from the start: it neither polls before
//! registering nor polls with PAUSE after
//! ([`crowding::for_wait_beside_its_releaser`]). Its notifier, most likely
//! the thread that noted the CPU, cannot run while it holds the CPU. A
//! scheduler that puts a woken thread beside its waker (as a guest does
//! whose idle vCPUs look preempted, or that packs threads onto few vCPUs)
//! leaves two threads that hand events back and forth on one CPU for tens
//! of ms, and a program may pin them there. Measured with such a pair on
//! one of 2 allowed vCPUs: 130-220 k round trips/s with PAUSE polls,
//! 530-550 k/s with `yield`. A note that is stale (the notifier moved)
//! costs one wait that yields where it would have polled with PAUSE; that
//! wait registers, and the next notify notes the new CPU.
//!
//! # Polling before registering
//!
//! A waiter of the default waiting that finds no permit first looks for
//! one a few times, a spin-loop hint apart ([`look_early`]), while the
//! registered waiters, itself and a notifier fit on the CPUs: a notifier
//! that runs hands over within that, and the wait then skips its
//! policy's set-up (the machine's demand, the clock, the budget). It
//! looks even while the process's own threads crowd the CPUs, where its
//! policy then polls by `yield`: pairs of threads that hand events back
//! and forth and outnumber the CPUs then hand over without a context
//! switch while the scheduler runs both threads of a pair, and a waiter
//! whose notifier does not run loses a few hundred ns before its `yield`.
//! Then it polls for one without registering, for a quarter of `B` at
//! most, while the registered waiters, itself and a notifier fit on the
//! CPUs and polling would hold no CPU another runnable thread wants (the
//! conditions under which its policy would poll with PAUSE,
//! [`crate::policy::crowding`]).
//! A notifier that is running hands over within a cache-line transfer;
//! the waiter then takes the permit with the fast path's one CAS, where a
//! registered one pays two more on the line the notifier writes (the
//! registration, and the release's permit-and-waiter step). A notify
//! meanwhile finds no registered waiter and leaves a permit, as for a
//! wait that had not begun. Past the poll the wait registers and follows
//! its policy. An explicit policy is followed as given, from the start.
//!
//! A thread whose last notify woke a sleeping waiter polls longer in its
//! next such wait: until that party is due (the wake-up's time plus twice
//! the process's recent wake-up latency), when that is later than a
//! quarter of `B` (module `woken_party`). Two threads that hand an event
//! pair back and forth otherwise chain their blocks: each one that slept
//! answers a wake-up late, the other's next wait outlasts its poll and
//! sleeps too, and `adapt/b`, seeing waits longer than `B`, learns to
//! block at once.
//!
//! # Memory ordering
//!
//! Every state change is a `SeqCst` CAS: it is the write half of the
//! [`WaitWord`] sleeper protocol, and it gives the release (notify) /
//! acquire (wait) pairing that makes the worker's writes before `notify`
//! visible to the waiter after `wait`. Loads that only seed a CAS loop, and
//! CAS failure orderings, are `Relaxed`: a failed CAS writes nothing, and
//! the value it returns is only the next guess, so only the successful
//! `SeqCst` CAS orders anything.
//!
//! A notify that finds every waiter already holding a permit changes
//! nothing, but it still writes the word (a CAS of the value to itself)
//! rather than returning after its load. A notify that only looked would
//! publish none of its writes: in `item = 1; notify(); item = 2; notify()`,
//! the waiter that consumes the one permit could see `item == 1`, wait
//! again, and sleep through a notify that happened (a lost wake-up; the
//! loom model `a_notify_into_a_pending_signal_still_publishes_its_writes`
//! finds it). As a write, the collapsed notify either comes before the
//! permit's consumption in the word's modification order, which then
//! synchronizes with it, or after, in which case its CAS fails and it adds
//! a permit of its own.

use crate::cpu_note::{current_cpu, CpuNote};
use crate::loom_const::const_unless_loom;
use crate::mechanism::Mechanism;
use crate::options::{LazyWaiting, WaitOptions};
use crate::policy::{block_ns, crowding, Policy, SyncKind};
use crate::profile::WaitProfile;
use crate::wait_word::{look_early, WaitOutcome, WaitWord};
use crate::woken_party::{woken_party_due, WokenParty};
use std::fmt;
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::Ordering;

const PERMIT: u32 = 1;
/// How long a wait polls before it registers, as a share of `B` (module
/// docs, "Polling before registering").
const PRE_POLL_SHARE_OF_B: f64 = 0.25;
const WAITER: u32 = 1 << 16;
const PERMITS_MASK: u32 = WAITER - 1;
/// Most threads that may wait on one event at once.
pub const MAX_WAITERS: u32 = (u32::MAX >> 16) - 1;

#[inline]
fn permits(s: u32) -> u32 {
    s & PERMITS_MASK
}

#[inline]
fn waiters(s: u32) -> u32 {
    s >> 16
}

/// An auto-reset event: `notify` releases one `wait`, and is remembered if
/// nobody waits yet.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use waitwise::Event;
///
/// let ev = Arc::new(Event::new());
/// let helper = {
///     let ev = ev.clone();
///     std::thread::spawn(move || { ev.wait(); 42 })
/// };
/// ev.notify();
/// assert_eq!(helper.join().unwrap(), 42);
///
/// // A notify before the wait is not lost:
/// ev.notify();
/// assert!(ev.wait_timeout(std::time::Duration::ZERO));
/// // ...and it was consumed:
/// assert!(!ev.wait_timeout(std::time::Duration::ZERO));
/// ```
///
/// The constructors are `const`, so an event can be a `static`:
/// ```
/// use waitwise::Event;
///
/// static READY: Event = Event::new();
/// let worker = std::thread::spawn(|| READY.wait());
/// READY.notify();
/// worker.join().unwrap();
/// assert!(!READY.is_signalled());
/// ```
pub struct Event {
    word: WaitWord,
    waits: LazyWaiting,
    /// When a notify last woke a sleeper (module `woken_party`).
    woken: WokenParty,
    /// The CPU of the last notify that found a registered waiter (module
    /// docs, "A notifier on the waiter's CPU").
    notifier_cpu: CpuNote,
}

impl Event {
    const_unless_loom! {
        /// A non-signalled event waiting with the producer-consumer kind's
        /// default policy ([`Policy::default_for`]: `adapt/b`, or
        /// `s/b/ALPHA` when `WAITWISE_ALPHA` is set, read on the first
        /// wait), polling by `yield` while its waiters and a notifier
        /// outnumber the CPUs (module docs, "Crowded waits").
        pub fn new() -> Self {
            Self::with_options(WaitOptions::new())
        }

        /// A non-signalled event waiting with `policy`.
        pub fn with_policy(policy: Policy) -> Self {
            Self::with_options(WaitOptions::new().policy(policy))
        }

        /// A non-signalled event with explicit options (policy, profiling).
        pub fn with_options(options: WaitOptions) -> Self {
            Self {
                word: WaitWord::new(0),
                waits: LazyWaiting::new(options, SyncKind::ProducerConsumer),
                woken: WokenParty::new(),
                notifier_cpu: CpuNote::new(),
            }
        }
    }

    /// The summary this event's waits learn in under `adapt/b`
    /// ([`crate::policy::adaptive`]): its arm, its learned `B`, the longest
    /// poll limit its next wait can draw. The event's own (its
    /// [`WaitWord`]'s); an event with a static policy leaves it alone.
    ///
    /// # Examples
    /// ```
    /// use waitwise::{Event, Policy};
    ///
    /// let ev = Event::with_policy(Policy::adaptive());
    /// let b = waitwise::policy::block_ns();
    /// // Whatever it learned, its next wait polls at most twice its B.
    /// let summary = ev.adaptive_summary();
    /// assert!(summary.longest_poll_limit_ns(b) <= 2.0 * summary.block_ns(b));
    /// ```
    #[cfg(not(loom))]
    pub fn adaptive_summary(&self) -> &crate::policy::adaptive::AdaptiveSummary {
        self.word.adaptive_summary()
    }

    /// The wait-time histogram, when profiling is on.
    ///
    /// # Examples
    /// ```
    /// use waitwise::{Event, WaitOptions};
    ///
    /// let ev = Event::with_options(WaitOptions::new().profile(true));
    /// ev.notify();
    /// ev.wait();
    /// assert_eq!(ev.wait_profile().unwrap().total_waits, 1);
    /// assert!(Event::with_options(WaitOptions::new().profile(false)).wait_profile().is_none());
    /// ```
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.waits
            .profiler()
            .snapshot(SyncKind::ProducerConsumer.name())
    }

    /// The policy waits follow.
    pub fn policy(&self) -> &Policy {
        self.waits.policy()
    }

    /// Waits until notified (consumes one notify).
    ///
    /// # Panics
    ///
    /// If more than [`MAX_WAITERS`] threads would wait on this event at
    /// once (the state word counts them in 16 bits); so do
    /// [`Event::wait_timeout`] and [`Event::wait_deadline`].
    #[inline]
    pub fn wait(&self) {
        let notified = self.wait_deadline(Deadline::NEVER);
        debug_assert!(notified);
    }

    /// Waits until notified or `timeout` passes; returns `true` when
    /// notified. `Duration::ZERO` only checks; `Duration::MAX` waits forever.
    #[inline]
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        self.wait_deadline(Deadline::after(timeout))
    }

    /// Waits until notified or `deadline`; returns `true` when notified.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::{Deadline, Event};
    ///
    /// let ev = Event::new();
    /// // One deadline for several waits: the total wait is bounded.
    /// let deadline = Deadline::after(Duration::from_millis(5));
    /// assert!(!ev.wait_deadline(deadline));
    /// assert!(deadline.has_passed());
    /// ```
    #[inline]
    pub fn wait_deadline(&self, deadline: Deadline) -> bool {
        let profiler = self.waits.profiler();
        if self.try_consume_fast() {
            if profiler.is_enabled() {
                profiler.finish(profiler.start(), false);
            }
            return true;
        }
        let start = profiler.start();
        let (notified, blocked) = self.wait_contended(deadline);
        profiler.finish(start, blocked);
        notified
    }

    /// Fast path: take a pending permit with one CAS.
    #[inline]
    fn try_consume_fast(&self) -> bool {
        // Relaxed: a guess for the CAS (a stale one only sends us to the
        // slow path); the SeqCst CAS acquires (module doc).
        let s = self.word.value().load(Ordering::Relaxed);
        // permits > 0 => permits - 1
        permits(s) > 0
            && self
                .word
                .value()
                .compare_exchange(s, s - PERMIT, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
    }

    /// Returns (notified, blocked at least once).
    #[cold]
    fn wait_contended(&self, deadline: Deadline) -> (bool, bool) {
        let w = self.word.value();
        // Relaxed: a guess (see below).
        let mut s = w.load(Ordering::Relaxed);
        if self.took_early_permit(s) {
            return (true, false);
        }
        let beside = self.notifier_beside();
        // Relaxed: as above.
        s = w.load(Ordering::Relaxed);
        if let Some(mechanism) = self.polls_before_registering(s).filter(|_| !beside) {
            match self.take_polled_permit(mechanism, deadline) {
                Some(taken) => return (taken, false),
                // Relaxed: as above.
                None => s = w.load(Ordering::Relaxed),
            }
        }
        // Register, unless a permit shows up first. Relaxed load and CAS
        // failure: guesses for the SeqCst CAS, which orders (module doc).
        let registered = loop {
            let next = if permits(s) > 0 {
                // permits > 0 => permits - 1: notified without registering.
                s - PERMIT
            } else {
                assert!(
                    waiters(s) < MAX_WAITERS,
                    "waitwise::Event: more than {MAX_WAITERS} waiters"
                );
                // permits == 0 => waiters + 1
                s + WAITER
            };
            // Failure Relaxed: the value is only the next guess.
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) if permits(s) > 0 => return (true, false),
                Ok(_) => break next,
                Err(now) => s = now,
            }
        };
        // The registered waiters and a notifier (module docs, "Crowded
        // waits"), or a notifier on this CPU ("A notifier on the waiter's
        // CPU").
        let policy = if beside {
            crowding::for_wait_beside_its_releaser(*self.waits.policy())
        } else {
            self.waits
                .policy_for_threads(waiters(registered) as usize + 1)
        };
        let mut blocked = false;
        loop {
            let out = self.word.wait_until(&policy, deadline, |s| permits(s) > 0);
            if out.blocked() && !cfg!(loom) {
                self.woken.measure();
            }
            blocked |= out.blocked();
            match out {
                WaitOutcome::Ready { mut value, .. } => loop {
                    // permits > 0 => permits - 1, waiters - 1: released.
                    // (Failure Relaxed: the value is only the next guess.)
                    match w.compare_exchange_weak(
                        value,
                        value - PERMIT - WAITER,
                        Ordering::SeqCst,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return (true, blocked),
                        Err(now) if permits(now) > 0 => value = now,
                        Err(_) => break, // another waiter took it: wait again
                    }
                },
                // Only `wait_until_woken` / `wait_until_interruptible`
                // return these; wait again.
                WaitOutcome::Woken { .. } | WaitOutcome::Interrupted { .. } => {}
                WaitOutcome::TimedOut { mut value, .. } => loop {
                    let (next, notified) = if permits(value) > 0 {
                        (value - PERMIT - WAITER, true)
                    } else {
                        // permits == 0 => waiters - 1: give up.
                        (value - WAITER, false)
                    };
                    // Failure Relaxed: the value is only the next guess.
                    match w.compare_exchange_weak(value, next, Ordering::SeqCst, Ordering::Relaxed)
                    {
                        Ok(_) => return (notified, blocked),
                        Err(now) => value = now,
                    }
                },
            }
        }
    }

    /// Whether a wait that found the state `s` took a permit within its
    /// early looks ([`look_early`]; module docs, "Polling before
    /// registering"): under the default waiting only, while the registered
    /// waiters, this one and a notifier fit on the CPUs. Never under loom
    /// (as no poll: the models explore the blocking protocol).
    #[inline]
    fn took_early_permit(&self, s: u32) -> bool {
        if cfg!(loom)
            || !self.waits.is_default()
            || crowding::is_oversubscribed(waiters(s) as usize + 2)
        {
            return false;
        }
        let w = self.word.value();
        // The CAS orders as the fast path's.
        look_early(w, |s| {
            permits(s) > 0
                && w.compare_exchange(s, s - PERMIT, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
        })
    }

    /// Whether the last notify that found a registered waiter ran on this
    /// thread's CPU (module docs, "A notifier on the waiter's CPU"): under
    /// the default waiting only, never under loom.
    #[inline]
    fn notifier_beside(&self) -> bool {
        !cfg!(loom) && self.waits.is_default() && self.notifier_cpu.is(current_cpu())
    }

    /// The mechanism a wait that finds the state `s` polls with before it
    /// registers (module docs, "Polling before registering"), if it does:
    /// under the default waiting only, while the registered waiters, this
    /// one and a notifier fit on the CPUs and polling would hold no CPU
    /// another runnable thread wants.
    #[inline]
    fn polls_before_registering(&self, s: u32) -> Option<Mechanism> {
        if !self.waits.is_default() {
            return None;
        }
        let mechanism = self
            .waits
            .policy_for_threads(waiters(s) as usize + 2)
            .mechanism();
        (crowding::holds_cpu(mechanism) && !crate::policy::skips_poll_on_busy_cpus(mechanism))
            .then_some(mechanism)
    }

    /// Polls with `mechanism`, unregistered, until a permit shows up or a
    /// quarter of `B` (or `deadline`) passes, and takes it with the fast
    /// path's one CAS.
    /// `Some(true)`: taken; `Some(false)`: `deadline` passed without one;
    /// `None`: go on and register (the poll ran out, or another waiter
    /// took the permit first).
    #[inline]
    fn take_polled_permit(&self, mechanism: Mechanism, deadline: Deadline) -> Option<bool> {
        let poll_ns = (block_ns() * PRE_POLL_SHARE_OF_B) as u64;
        let quarter_b = Deadline::after(Duration::from_nanos(poll_ns));
        // A thread that has just woken a sleeper polls until that party is
        // due instead, if later (module `woken_party`).
        let until = match woken_party_due() {
            Some(due) if due.ticks() > quarter_b.ticks() => deadline.min(due),
            _ => deadline.min(quarter_b),
        };
        match self
            .word
            .as_ref()
            .poll_until(mechanism, until, |s| permits(s) > 0)
        {
            WaitOutcome::Ready { value, .. } => {
                // permits > 0 => permits - 1, as the fast path; failure
                // Relaxed: another waiter took it, and this one registers.
                let taken = self.word.value().compare_exchange(
                    value,
                    value - PERMIT,
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                );
                taken.is_ok().then_some(true)
            }
            _ if deadline.has_passed() => Some(self.try_consume_fast()),
            _ => None,
        }
    }

    /// Releases one waiting thread, or signals the event if none waits.
    /// One atomic operation, and a futex wake only if a waiter sleeps.
    #[inline]
    pub fn notify(&self) {
        let w = self.word.value();
        // The first guess is an event with no waiter and no permit, as
        // while its waiter polls before registering: then one RMW brings
        // the line and changes it, where a load first would bring it to
        // read and again to write. A failed CAS (Relaxed) returns the
        // next guess; only the SeqCst CAS orders (module doc).
        let mut s = 0;
        loop {
            // permits < max(waiters, 1) => permits + 1. Otherwise every
            // waiter already has a permit (or the event is signalled): the
            // notify collapses into it, but still by a CAS that writes the
            // word unchanged, so that whoever consumes that permit sees this
            // notifier's writes too (module doc, "Memory ordering").
            let next = if permits(s) >= waiters(s).max(1) {
                s
            } else {
                s + PERMIT
            };
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) if next == s => return,
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if waiters(s) > 0 {
            self.note_notifier_cpu();
            if self.word.wake_one() && !cfg!(loom) {
                self.woken.woke();
            }
        }
    }

    /// Releases every thread waiting now (or signals the event if none waits).
    ///
    /// # Examples
    /// ```
    /// use waitwise::Event;
    ///
    /// let ev = Event::new();
    /// std::thread::scope(|s| {
    ///     let waiters: Vec<_> = (0..3).map(|_| s.spawn(|| ev.wait())).collect();
    ///     // Each wait registers before it sleeps; release whoever waits now,
    ///     // until all three have gone (a late one finds the signal set).
    ///     while !waiters.iter().all(|w| w.is_finished()) {
    ///         ev.notify_all();
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// ```
    #[inline]
    pub fn notify_all(&self) {
        let w = self.word.value();
        // Relaxed load and CAS failure: guesses for the SeqCst CAS, which
        // orders (module doc).
        let mut s = w.load(Ordering::Relaxed);
        loop {
            // permits = max(waiters, permits, 1); unchanged when every waiter
            // already has a permit, and then still written, as in `notify`.
            let target = waiters(s).max(1).max(permits(s));
            let next = (s & !PERMITS_MASK) | target;
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) if next == s => return,
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if waiters(s) > 0 {
            self.note_notifier_cpu();
            if self.word.wake_all() && !cfg!(loom) {
                self.woken.woke();
            }
        }
    }

    /// Notes the notifying thread's CPU for the waiters (module docs, "A
    /// notifier on the waiter's CPU"); not under loom.
    #[inline]
    fn note_notifier_cpu(&self) {
        if !cfg!(loom) {
            self.notifier_cpu.note(current_cpu());
        }
    }

    /// Whether a notify is pending (a `wait` would return at once).
    pub fn is_signalled(&self) -> bool {
        // Acquire: pairs with the SeqCst CAS of the notify that left the
        // permit, so a `true` also shows that notifier's earlier writes.
        permits(self.word.value().load(Ordering::Acquire)) > 0
    }
}

impl Default for Event {
    fn default() -> Self {
        Self::new()
    }
}

/// The state a user can act on (a snapshot): whether a notify is pending,
/// how many threads wait, and the policy by name.
impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display that orders nothing.
        let s = self.word.value().load(Ordering::Relaxed);
        f.debug_struct("Event")
            .field("signalled", &(permits(s) > 0))
            .field("waiters", &waiters(s))
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn an_early_look_takes_a_permit_under_the_default_waiting_only() {
        let default = Event::new();
        assert!(!default.took_early_permit(0), "no permit to take");
        default.notify();
        let s = default.word.value().load(Ordering::Relaxed);
        assert!(default.took_early_permit(s) || crowding::is_oversubscribed(2));
        let explicit = Event::with_policy(Policy::two_phase(0.5));
        explicit.notify();
        let s = explicit.word.value().load(Ordering::Relaxed);
        assert!(!explicit.took_early_permit(s));
        assert!(
            explicit.wait_timeout(Duration::ZERO),
            "the permit is still there"
        );
    }

    #[test]
    fn a_notify_that_wakes_a_sleeper_stamps_the_notifying_thread() {
        use crate::woken_party::{thread_stamp, woken_party_due};
        let ev = Event::with_policy(Policy::always_block());
        std::thread::scope(|s| {
            s.spawn(|| ev.wait());
            while !ev.word.has_sleepers() {
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = woken_party_due();
            ev.notify();
            assert_ne!(thread_stamp(), 0, "woke the sleeper");
        });
        // One wait takes the stamp.
        let _ = woken_party_due();
        assert_eq!(thread_stamp(), 0);
        // A notify that wakes nobody leaves a permit and no stamp.
        ev.notify();
        assert_eq!(thread_stamp(), 0);
        assert!(ev.wait_timeout(Duration::ZERO));
    }

    #[test]
    fn a_notify_that_finds_a_registered_waiter_notes_its_cpu() {
        let pinned = crate::cpu_note::current_cpu();
        let pinned = waitwise_platform::affinity::pin_current_thread(pinned as usize)
            .is_ok()
            .then_some(pinned);
        let ev = Event::with_policy(Policy::always_block());
        // A notify into an empty event notes nothing.
        ev.notify();
        assert!(!ev.notifier_cpu.is(crate::cpu_note::current_cpu()));
        assert!(ev.wait_timeout(Duration::ZERO));
        std::thread::scope(|s| {
            s.spawn(|| ev.wait());
            // Relaxed: only the count is read.
            while waiters(ev.word.value().load(Ordering::Relaxed)) == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            ev.notify();
        });
        if let Some(cpu) = pinned {
            assert!(ev.notifier_cpu.is(cpu), "noted the notifier's CPU");
        }
    }

    #[test]
    fn only_a_default_waiter_on_the_noted_cpu_counts_its_notifier_beside() {
        let cpu = crate::cpu_note::current_cpu();
        if waitwise_platform::affinity::pin_current_thread(cpu as usize).is_err() {
            return; // the CPU could move under the comparisons
        }
        let default = Event::new();
        assert!(!default.notifier_beside(), "nothing noted yet");
        default.notifier_cpu.note(cpu);
        assert!(default.notifier_beside());
        default.notifier_cpu.note(cpu + 1);
        assert!(!default.notifier_beside(), "noted on another CPU");
        let explicit = Event::with_policy(Policy::two_phase(0.5));
        explicit.notifier_cpu.note(cpu);
        assert!(!explicit.notifier_beside(), "an explicit policy as given");
    }

    #[test]
    fn debug_shows_signal_and_waiters() {
        let e = Event::with_policy(Policy::always_block());
        assert_eq!(
            format!("{e:?}"),
            "Event { signalled: false, waiters: 0, policy: /b/0 }"
        );
        e.notify();
        assert!(format!("{e:?}").contains("signalled: true"));
    }

    #[test]
    fn const_new_makes_a_static_event_that_reads_the_default_policy() {
        static EVENT: Event = Event::new();
        assert_eq!(
            EVENT.policy(),
            &Policy::default_for(SyncKind::ProducerConsumer)
        );
        EVENT.notify();
        assert!(EVENT.wait_timeout(Duration::ZERO));
        let defaulted: Event = Default::default();
        assert!(!defaulted.is_signalled());
    }

    #[test]
    fn profiling_records_each_wait() {
        let e = Event::with_options(WaitOptions::new().profile(true));
        e.notify();
        e.wait();
        assert!(!e.wait_timeout(Duration::from_millis(1)));
        let p = e.wait_profile().unwrap();
        assert_eq!(p.total_waits, 2);
        assert!(Event::with_options(WaitOptions::new().profile(false))
            .wait_profile()
            .is_none());
    }

    #[test]
    fn notify_before_wait_is_kept_once() {
        let e = Event::new();
        e.notify();
        e.notify();
        assert!(e.is_signalled());
        assert!(e.wait_timeout(Duration::ZERO));
        assert!(!e.wait_timeout(Duration::ZERO));
    }

    #[test]
    fn zero_timeout_returns_at_once_and_max_does_not_overflow() {
        let e = Event::with_policy(Policy::always_block());
        let t = Instant::now();
        assert!(!e.wait_timeout(Duration::ZERO));
        assert!(t.elapsed() < Duration::from_secs(1));
        let e = Arc::new(e);
        let e2 = e.clone();
        let h = std::thread::spawn(move || e2.wait_timeout(Duration::MAX));
        std::thread::sleep(Duration::from_millis(5));
        e.notify();
        assert!(h.join().unwrap());
    }

    #[test]
    fn timeout_reports_false_and_unregisters() {
        let e = Event::new();
        assert!(!e.wait_timeout(Duration::from_millis(2)));
        assert_eq!(e.word.value().load(Ordering::SeqCst), 0);
    }

    #[test]
    fn k_notifies_release_k_of_n_waiters() {
        let e = Arc::new(Event::new());
        let released = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let (e, r) = (e.clone(), released.clone());
                std::thread::spawn(move || {
                    if e.wait_timeout(Duration::from_millis(500)) {
                        r.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                })
            })
            .collect();
        while waiters(e.word.value().load(Ordering::SeqCst)) < 4 {
            std::thread::yield_now();
        }
        e.notify();
        e.notify();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(released.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn notify_all_releases_every_current_waiter() {
        for policy in [
            Policy::always_block(),
            Policy::for_kind(SyncKind::ProducerConsumer),
            Policy::default_for(SyncKind::ProducerConsumer),
        ] {
            let e = Arc::new(Event::with_policy(policy));
            let hs: Vec<_> = (0..3)
                .map(|_| {
                    let e = e.clone();
                    std::thread::spawn(move || e.wait())
                })
                .collect();
            while waiters(e.word.value().load(Ordering::SeqCst)) < 3 {
                std::thread::yield_now();
            }
            e.notify_all();
            for h in hs {
                h.join().unwrap();
            }
            assert!(!e.is_signalled());
        }
    }
}
