//! [`WaitWord`]: the waiting engine every primitive is built on. A 32-bit
//! word that threads wait on until it satisfies a condition, running a
//! [`Policy`] (poll with its mechanism for `L_poll`, then block on the
//! futex), plus a count of threads asleep on it so that wakers make the
//! `futex_wake` system call only when somebody sleeps.
//!
//! Each phase can also be asked for on its own, by algorithms that combine
//! them with steps of their own (parking_lot's `park` hooks serve the same
//! end): [`poll_until`] polls any futex word with a mechanism until a
//! deadline, and [`WaitWordRef::block_until`] runs the blocking phase
//! below. [`WaitWordRef`] runs the whole wait, or either phase, over a
//! word and a sleeper count that live elsewhere.
//!
//! # Sleeper protocol (a state machine per waiter)
//!
//! ```text
//!  POLLING --limit reached--> REGISTERING: sleepers += 1, re-check word
//!     |                           | ready: sleepers -= 1, return
//!     | ready: return             v not ready
//!     |                       ASLEEP: futex_wait(word, seen)
//!     |                           | woken / value changed / timed out
//!     |                           v
//!     |                       sleepers -= 1, re-check word, maybe POLLING again
//! ```
//!
//! A waker first changes the word, then reads `sleepers` and calls
//! `futex_wake` only if it is non-zero.
//!
//! # Memory ordering
//!
//! This is a store-buffering (Dekker) pattern: the waiter writes `sleepers`
//! then reads the word; the waker writes the word then reads `sleepers`. At
//! least one of them must see the other's write, else the waiter sleeps on a
//! value that already changed while the waker skips the wake-up: a lost
//! wake-up. All four accesses are `SeqCst`, which forbids that outcome (the
//! single total order of `SeqCst` operations puts one write before the other
//! thread's read). Loom models `SeqCst` accesses only as `AcqRel`, so under
//! `--cfg loom` a `fence(SeqCst)` is added between each write and read
//! (`dekker_fence`); on real hardware it compiles to nothing, and the futex
//! itself re-checks the value atomically in the kernel, closing the window
//! between the re-check and the sleep.
//!
//! Polling loads are `Acquire` (a waiter that sees the new value sees what the
//! waker wrote before it); decrementing `sleepers` is `Relaxed` because a
//! stale non-zero count only costs a waker one unnecessary system call.

use crate::loom_const::const_unless_loom;
use crate::mechanism::{Mechanism, MechanismWait};
#[cfg(not(loom))]
use crate::policy::adaptive::AdaptiveSummary;
#[cfg(not(loom))]
use crate::policy::idle_extension::Advice;
use crate::policy::idle_extension::Extension;
use crate::policy::Policy;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::{Futex, FutexWait, Interrupted, OnSignal};
use waitwise_platform::shim::{AtomicU32, Ordering};

/// Why [`WaitWord::wait_until`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    /// The condition held for `value`.
    Ready {
        /// The word's value that satisfied the condition.
        value: u32,
        /// Whether the waiter slept in the kernel at least once.
        blocked: bool,
    },
    /// The deadline passed first; `value` is the last value seen.
    TimedOut {
        /// The last value seen.
        value: u32,
        /// Whether the waiter slept in the kernel at least once.
        blocked: bool,
    },
    /// A signal handler interrupted the kernel sleep while the condition
    /// did not hold. Only [`WaitWordRef::wait_until_interruptible`] returns
    /// this.
    Interrupted {
        /// The word's value after the interruption.
        value: u32,
    },
    /// Woken from a kernel sleep while the condition did not hold. Only
    /// [`WaitWord::wait_until_woken`] returns this; its callers (condition
    /// variables) treat it as a spurious wake-up. `value` is the word after
    /// the wake-up.
    Woken {
        /// The word's value after the wake-up.
        value: u32,
    },
}

impl WaitOutcome {
    /// Whether the wait slept in the kernel at least once.
    pub fn blocked(&self) -> bool {
        match *self {
            WaitOutcome::Ready { blocked, .. } | WaitOutcome::TimedOut { blocked, .. } => blocked,
            WaitOutcome::Woken { .. } | WaitOutcome::Interrupted { .. } => true,
        }
    }

    /// The last value of the word the wait saw.
    pub fn value(&self) -> u32 {
        match *self {
            WaitOutcome::Ready { value, .. }
            | WaitOutcome::TimedOut { value, .. }
            | WaitOutcome::Woken { value }
            | WaitOutcome::Interrupted { value } => value,
        }
    }

    /// Whether the deadline passed.
    pub fn timed_out(&self) -> bool {
        matches!(self, WaitOutcome::TimedOut { .. })
    }
}

/// How the blocking phase of a wait ends, besides its condition holding and
/// its deadline passing. The default sleeps again after every wake-up and
/// every signal ([`WaitWord::wait_until`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SleepRules {
    /// Return [`WaitOutcome::Woken`] after the first kernel wake-up even if
    /// the condition does not hold, and even if the deadline has passed by
    /// then ([`WaitWord::wait_until_woken`]).
    pub return_when_woken: bool,
    /// Return [`WaitOutcome::Interrupted`] when a signal handler interrupts
    /// the sleep ([`WaitWordRef::wait_until_interruptible`]).
    pub return_on_signal: bool,
    /// The sleep is a POSIX cancellation point
    /// (`Futex::wait_cancellable`): a deferred cancellation request ends
    /// the thread there. The sleeper count is given back on the way out
    /// (as on any unwind); what else the caller registered is the caller's
    /// to undo.
    pub cancellable: bool,
}

/// A futex word on its own cache line, with a sleeper count.
///
/// 128-byte alignment keeps the word alone on its line on CPUs that fetch
/// lines in adjacent pairs, so hardware monitors (UMWAIT, MWAITX) see no
/// false wake-ups from neighbours, and no store to a neighbour is mistaken
/// for a store to the word. The sleeper count shares the line: it changes
/// only when a waiter is about to sleep, which is when monitoring stopped.
/// So does the word's `adapt/b` summary
/// ([`WaitWord::adaptive_summary`]): it is written as a wait ends, once
/// per recorded wait, which another waiter's monitor sees as a change (it
/// looks at the word again and finds it as it was).
#[repr(align(128))]
#[derive(Debug)]
pub struct WaitWord {
    futex: Futex,
    /// Number of threads registered as (about to be) asleep in `futex_wait`.
    sleepers: AtomicU32,
    /// What this word's `adapt/b` waits learned
    /// ([`crate::policy::adaptive`]), in the word's own cache line (a test
    /// checks that it fits): a wait's learning touches no line and no page
    /// that its word did not. Under loom no wait learns.
    #[cfg(not(loom))]
    summary: AdaptiveSummary,
}

/// Under loom only: a `SeqCst` fence between the Dekker write and read,
/// because loom treats `SeqCst` accesses as `AcqRel`. Nothing otherwise.
#[inline(always)]
fn dekker_fence() {
    #[cfg(loom)]
    waitwise_platform::shim::fence(Ordering::SeqCst);
}

impl WaitWord {
    const_unless_loom! {
        /// A word holding `value`, with no sleepers.
        pub fn new(value: u32) -> Self {
            Self {
                futex: Futex::new(value),
                sleepers: AtomicU32::new(0),
                #[cfg(not(loom))]
                summary: AdaptiveSummary::new(),
            }
        }
    }

    /// The word. Change it with `SeqCst` operations when waiters may sleep,
    /// then call [`WaitWord::wake_one`] or [`WaitWord::wake_all`].
    #[inline(always)]
    pub fn value(&self) -> &AtomicU32 {
        self.futex.value()
    }

    /// The underlying futex (for mechanisms that need it).
    #[inline(always)]
    pub fn futex(&self) -> &Futex {
        &self.futex
    }

    /// The summary this word's waits learn in under `adapt/b`
    /// ([`crate::policy::adaptive`]), its own, for measurements that look
    /// at what the word's waits learned.
    #[cfg(not(loom))]
    pub fn adaptive_summary(&self) -> &AdaptiveSummary {
        &self.summary
    }

    /// A borrowed view for code that keeps the word and the sleeper count
    /// elsewhere.
    #[inline(always)]
    pub fn as_ref(&self) -> WaitWordRef<'_> {
        WaitWordRef {
            futex: &self.futex,
            sleepers: &self.sleepers,
            #[cfg(not(loom))]
            summary: Some(&self.summary),
        }
    }

    /// Whether any thread is registered as asleep.
    #[inline]
    pub fn has_sleepers(&self) -> bool {
        self.as_ref().has_sleepers()
    }

    /// Wakes one sleeper, if any is registered; no system call otherwise.
    /// Call after changing the word with a `SeqCst` operation. Returns
    /// whether a system call was made.
    #[inline]
    pub fn wake_one(&self) -> bool {
        self.as_ref().wake_one()
    }

    /// Wakes every sleeper, if any is registered; no system call otherwise.
    /// Call after changing the word with a `SeqCst` operation. Returns
    /// whether a system call was made.
    #[inline]
    pub fn wake_all(&self) -> bool {
        self.as_ref().wake_all()
    }

    /// Waits until `ready(word)` holds or `deadline` passes, following
    /// `policy`: poll with its mechanism for its limit, then sleep on the
    /// futex (re-checking after every wake-up, so spurious wake-ups are
    /// harmless).
    #[inline]
    pub fn wait_until(
        &self,
        policy: &Policy,
        deadline: Deadline,
        ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        self.as_ref().wait_until(policy, deadline, ready)
    }

    /// Like [`WaitWord::wait_until`], but returns [`WaitOutcome::Woken`]
    /// after the first kernel wake-up that finds `ready` false, instead of
    /// sleeping again.
    ///
    /// For condition variables, whose waiters wait for a notify *after*
    /// they started (`ready` is `seq != seen`): a waiter that started after
    /// a notify's increment, but is the one the kernel wakes for it (the
    /// kernel wakes real-time waiters by priority, not arrival), must
    /// return rather than go back to sleep, or no waiter returns for that
    /// notify while an earlier waiter still sleeps. Returning is a
    /// spurious wake-up, which condition variables allow.
    #[inline]
    pub fn wait_until_woken(
        &self,
        policy: &Policy,
        deadline: Deadline,
        ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        self.as_ref().wait_until_woken(policy, deadline, ready)
    }
}

/// The [`WaitWord`] protocol over a futex word and a sleeper count that
/// live elsewhere (e.g. inside a C library's fixed-size object, as the
/// `LD_PRELOAD` interposer needs). Same rules as [`WaitWord`]; without the
/// cache-line alignment, hardware monitors may see false wake-ups.
#[derive(Clone, Copy, Debug)]
pub struct WaitWordRef<'a> {
    futex: &'a Futex,
    sleepers: &'a AtomicU32,
    /// The summary `adapt/b` waits learn in: the [`WaitWord`]'s own, or
    /// `None` for the static table's slot of the futex's address.
    #[cfg(not(loom))]
    summary: Option<&'a AdaptiveSummary>,
}

impl<'a> WaitWordRef<'a> {
    /// A view over `futex` with its sleeper count `sleepers`. Every waiter
    /// and waker of the word must use the same pair.
    #[inline(always)]
    pub fn new(futex: &'a Futex, sleepers: &'a AtomicU32) -> Self {
        Self {
            futex,
            sleepers,
            #[cfg(not(loom))]
            summary: None,
        }
    }

    /// The futex.
    #[inline(always)]
    pub fn futex(&self) -> &'a Futex {
        self.futex
    }

    /// The word.
    #[inline(always)]
    pub fn value(&self) -> &'a AtomicU32 {
        self.futex.value()
    }

    /// Whether any thread is registered as asleep.
    #[inline]
    pub fn has_sleepers(&self) -> bool {
        dekker_fence();
        self.sleepers.load(Ordering::SeqCst) != 0
    }

    /// Wakes one sleeper, if any is registered; no system call otherwise.
    /// Call after changing the word with a `SeqCst` operation. Returns
    /// whether a system call was made.
    #[inline]
    pub fn wake_one(&self) -> bool {
        if self.has_sleepers() {
            self.futex.wake(1);
            true
        } else {
            false
        }
    }

    /// Wakes every sleeper, if any is registered; no system call otherwise.
    /// Call after changing the word with a `SeqCst` operation. Returns
    /// whether a system call was made.
    #[inline]
    pub fn wake_all(&self) -> bool {
        if self.has_sleepers() {
            self.futex.wake(u32::MAX);
            true
        } else {
            false
        }
    }

    /// Waits until `ready(word)` holds or `deadline` passes, following
    /// `policy`: poll with its mechanism for its limit, then sleep on the
    /// futex (re-checking after every wake-up, so spurious wake-ups are
    /// harmless).
    #[inline]
    pub fn wait_until(
        &self,
        policy: &Policy,
        deadline: Deadline,
        ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        self.wait(policy, deadline, ready, SleepRules::default())
    }

    /// See [`WaitWord::wait_until_woken`].
    #[inline]
    pub fn wait_until_woken(
        &self,
        policy: &Policy,
        deadline: Deadline,
        ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        self.wait(
            policy,
            deadline,
            ready,
            SleepRules {
                return_when_woken: true,
                ..SleepRules::default()
            },
        )
    }

    /// Like [`WaitWord::wait_until`], but a signal handler that interrupts
    /// a kernel sleep ends the wait with [`WaitOutcome::Interrupted`] (see
    /// `Futex::wait_interruptible`), for callers that must report `EINTR`
    /// (the interposer's `sem_wait`).
    #[inline]
    pub fn wait_until_interruptible(
        &self,
        policy: &Policy,
        deadline: Deadline,
        ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        self.wait(
            policy,
            deadline,
            ready,
            SleepRules {
                return_on_signal: true,
                ..SleepRules::default()
            },
        )
    }

    /// Waits until `ready(word)` holds or `deadline` passes, following
    /// `policy`, with the blocking phase ending as `rules` say.
    #[inline]
    pub fn wait_with(
        &self,
        policy: &Policy,
        deadline: Deadline,
        ready: impl FnMut(u32) -> bool,
        rules: SleepRules,
    ) -> WaitOutcome {
        self.wait(policy, deadline, ready, rules)
    }

    /// The fast path (the condition already holds) with the caller's own
    /// `ready`, called directly; the slow path behind `dyn`, once per wait.
    #[inline]
    fn wait(
        &self,
        policy: &Policy,
        deadline: Deadline,
        mut ready: impl FnMut(u32) -> bool,
        rules: SleepRules,
    ) -> WaitOutcome {
        // Acquire: pairs with the waker's SeqCst (release) change.
        let v = self.futex.value().load(Ordering::Acquire);
        if ready(v) {
            return WaitOutcome::Ready {
                value: v,
                blocked: false,
            };
        }
        self.wait_slow(policy, deadline, v, &mut ready, rules)
    }

    #[cold]
    fn wait_slow(
        &self,
        policy: &Policy,
        deadline: Deadline,
        v: u32,
        ready: &mut dyn FnMut(u32) -> bool,
        rules: SleepRules,
    ) -> WaitOutcome {
        // `adapt/b` learns from the wait: it reads this object's summary
        // (the word's own, else the table's for its address) and records
        // the wait at the end.
        let addr = self.futex as *const Futex as usize;
        #[cfg(not(loom))]
        let (budget, learning) = match self.summary {
            Some(summary) => policy.begin_wait_in(summary, addr),
            None => policy.begin_wait(addr),
        };
        #[cfg(loom)]
        let (budget, learning) = policy.begin_wait(addr);
        let started = learning.as_ref().and_then(|l| l.start_ticks());
        let out = self.poll_then_block(budget, started, deadline, v, ready, rules);
        if let Some(learning) = learning {
            learning.finish(out.blocked(), out.timed_out());
        }
        out
    }

    /// The two phases with `budget`; the polling phase starts at
    /// `started` on the cycle clock when the caller has read it (else
    /// now).
    #[inline]
    fn poll_then_block(
        &self,
        budget: crate::policy::PollBudget,
        started: Option<u64>,
        deadline: Deadline,
        v: u32,
        ready: &mut dyn FnMut(u32) -> bool,
        rules: SleepRules,
    ) -> WaitOutcome {
        // Polling phase (under loom the first load above was the poll: the
        // model explores the blocking protocol, where wake-ups can be lost).
        if !cfg!(loom) && budget.polls() {
            let out = poll_phase(self.futex, budget, started, deadline, v, &mut *ready);
            if !out.timed_out() || deadline.has_passed() {
                return out;
            }
        }
        self.block_until(deadline, ready, rules)
    }

    /// The polling phase on its own:
    /// [`wait_word::poll_until`](crate::wait_word::poll_until) on this
    /// word. It never registers as a sleeper: no waker needs to wake it.
    #[inline]
    pub fn poll_until(
        &self,
        mechanism: Mechanism,
        deadline: Deadline,
        ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        poll_until(self.futex, mechanism, deadline, ready)
    }

    /// The blocking phase on its own: register as a sleeper, re-check
    /// `ready`, sleep on the futex, unregister, re-check, and again, until
    /// `ready(word)` holds or `deadline` passes (or `rules` end it
    /// earlier). Returns [`WaitOutcome::Ready`] at once, without sleeping,
    /// when the first re-check holds.
    pub fn block_until(
        &self,
        deadline: Deadline,
        ready: &mut dyn FnMut(u32) -> bool,
        rules: SleepRules,
    ) -> WaitOutcome {
        // A wait about to sleep may read the machine's demand for the
        // waits that start after it (`idle_extension`, "The cache on the
        // wait path").
        #[cfg(not(loom))]
        crate::policy::idle_extension::refresh_stale_demand();
        let mut blocked = false;
        loop {
            // POLLING => REGISTERING
            register(self.sleepers);
            dekker_fence();
            let v = self.futex.value().load(Ordering::SeqCst);
            if ready(v) {
                // REGISTERING => done, without sleeping.
                unregister(self.sleepers);
                return WaitOutcome::Ready { value: v, blocked };
            }
            let timeout = deadline.remaining();
            if timeout == Some(std::time::Duration::ZERO) {
                unregister(self.sleepers);
                return WaitOutcome::TimedOut { value: v, blocked };
            }
            // REGISTERING => ASLEEP (the kernel re-checks `v` atomically).
            let slept = self.sleep_registered(v, timeout, rules);
            blocked = true;
            // ASLEEP => awake: unregister, re-check.
            unregister(self.sleepers);
            // Acquire: pairs with the waker's SeqCst (release) change.
            let v = self.futex.value().load(Ordering::Acquire);
            if ready(v) {
                return WaitOutcome::Ready { value: v, blocked };
            }
            // A kernel wake-up ends a `return_when_woken` wait as one, also
            // past the deadline: the waker chose this sleeper, and reporting
            // a timeout would drop the wake-up it was handed.
            if slept == Ok(FutexWait::Woken) && rules.return_when_woken {
                return WaitOutcome::Woken { value: v };
            }
            // The kernel's word on the timeout is final (it was computed from
            // `deadline`); otherwise check our clock.
            if slept == Ok(FutexWait::TimedOut) || deadline.has_passed() {
                return WaitOutcome::TimedOut { value: v, blocked };
            }
            if slept == Err(Interrupted) {
                return WaitOutcome::Interrupted { value: v };
            }
        }
    }

    /// REGISTERING => ASLEEP: one futex sleep while the word is `v`, as
    /// `rules` say; a forced unwind out of it (a cancellation, or a signal
    /// handler's `pthread_exit`) gives the registration back on its way.
    #[inline]
    fn sleep_registered(
        &self,
        v: u32,
        timeout: Option<std::time::Duration>,
        rules: SleepRules,
    ) -> Result<FutexWait, Interrupted> {
        let sleep = || {
            if rules.cancellable {
                let on_signal = if rules.return_on_signal {
                    OnSignal::Return
                } else {
                    OnSignal::Retry
                };
                self.futex.wait_cancellable(v, timeout, on_signal)
            } else if rules.return_on_signal {
                self.futex.wait_interruptible(v, timeout)
            } else {
                Ok(self.futex.wait(v, timeout))
            }
        };
        #[cfg(not(loom))]
        {
            // SAFETY: `give_back_sleeper` decrements `self.sleepers`,
            // borrowed for the whole call, and cannot unwind; the futex
            // waits do not panic.
            unsafe {
                waitwise_platform::cancel::on_forced_unwind(self.sleepers, give_back_sleeper, sleep)
            }
        }
        #[cfg(loom)]
        sleep()
    }
}

/// How many times a default wait looks at its word before its policy's
/// set-up ([`look_early`]): 16, a spin-loop hint before each, a few
/// hundred ns in all. A thread that runs on a CPU of its own releases, notifies
/// or arrives within a few cache-line hand-offs, and such a wait then ends
/// in a fraction of what the set-up costs (the budget, the machine's
/// demand, the clock) and, for a lock, before its polling mechanism's
/// first `yield` (~0.5-1 µs on a KVM guest). On 2 CPUs: two threads
/// meeting at a `Barrier` took 38-60 ns per episode with the set-up first
/// and 33-41 ns with these looks (a spin barrier: 32-34 ns).
pub const EARLY_LOOKS: u32 = 16;

/// The early looks of a default wait (no policy set-up, no scoring):
/// loads `word` up to [`EARLY_LOOKS`] times, each after a spin-loop hint
/// (the caller has just looked), until `take(value)` holds (`true`: the
/// wait is over); `take` may act on the value it is given, such as a CAS
/// that takes a permit or a lock. The caller decides whether a wait looks
/// early: only where the thread it waits for likely runs on another CPU.
#[inline]
pub fn look_early(word: &AtomicU32, mut take: impl FnMut(u32) -> bool) -> bool {
    for _ in 0..EARLY_LOOKS {
        waitwise_platform::shim::spin_hint();
        // Acquire: pairs with the Release half of the change a look finds.
        if take(word.load(Ordering::Acquire)) {
            return true;
        }
    }
    false
}

/// The longest pause, in spin-loop hints, between two of
/// [`look_backing_off`]'s looks: its looks come after 2, 4, ... up to this
/// many hints, about 1,000 hints in all (~10 µs at ~10 ns a hint).
/// Measured on 2 vCPUs with the `waitwise peers` mutex workload (two
/// threads taking the default mutex back to back through critical
/// sections of ~100 ns, 16 runs of 40 ms per process, parking_lot's
/// `Mutex` in the same process): with no such looks the p99 wait was
/// 2.4-4.0 µs against parking_lot's 1.7-2.4 µs; with pauses up to 64
/// hints, 2.9 µs; 128, 1.9 µs; 256, 0.9-1.0 µs; 512, 0.4-0.6 µs, with the
/// throughput from 1.1-1.2x parking_lot's to 1.2-1.4x. A fixed short
/// interval instead (64 plain looks) cut the p99 as well, but its looks
/// took the word's line from the holder: 0.9x parking_lot's throughput.
pub const BACKED_OFF_LOOK_MAX_HINTS: u32 = 512;

/// Looks at `word` after pauses of spin-loop hints that double from 2 to
/// [`BACKED_OFF_LOOK_MAX_HINTS`], until `take(value)` holds (`true`: the
/// wait is over); `take` may act on the value, as in [`look_early`]. For a
/// wait whose early looks found a thread re-acquiring in a loop on another
/// CPU: such a holder leaves the word free only for a few ns between its
/// releases and its next acquisitions, so a look catches it only now and
/// then, and sparse looks take the word's line from the holder seldom
/// (exponential backoff before yielding, as parking_lot's `SpinWait`).
/// No look comes after `deadline` (`false` then).
#[inline]
pub fn look_backing_off(
    word: &AtomicU32,
    deadline: Deadline,
    mut take: impl FnMut(u32) -> bool,
) -> bool {
    let mut pause = 2;
    while pause <= BACKED_OFF_LOOK_MAX_HINTS {
        for _ in 0..pause {
            waitwise_platform::shim::spin_hint();
        }
        if deadline.has_passed() {
            return false;
        }
        // Acquire: as in `look_early`.
        if take(word.load(Ordering::Acquire)) {
            return true;
        }
        pause *= 2;
    }
    false
}

/// The polling phase on its own, for any futex word (one with no sleeper
/// count too, such as a lock word whose states say who sleeps): polls with
/// `mechanism` until `ready(word)` holds ([`WaitOutcome::Ready`]) or
/// `deadline` passes ([`WaitOutcome::TimedOut`] with the last value
/// seen); never sleeps, so `blocked` is `false`. The word is looked at
/// first, so a word already ready returns at once whatever the deadline.
///
/// With [`Mechanism::Block`], which does not poll, the first look is the
/// whole phase: sleeping here, unregistered, would strand the waiter
/// behind a waker that skips the wake-up when no sleeper is registered.
/// Under loom likewise: the models explore the blocking protocols, where
/// wake-ups can be lost, not timing.
///
/// A poll that holds its CPU on a busy machine, admitted by the process's
/// score of such polls, is scored by its outcome here
/// ([`crate::policy::busy_polls`]).
#[inline]
pub fn poll_until(
    futex: &Futex,
    mechanism: Mechanism,
    deadline: Deadline,
    ready: impl FnMut(u32) -> bool,
) -> WaitOutcome {
    let out = poll_until_unscored(futex, mechanism, deadline, ready);
    score_poll(mechanism, &out);
    out
}

/// Scores a polling phase with `mechanism` that ended with `out`, if it
/// was a busy machine's poll that the process's score admitted
/// ([`crate::policy::busy_polls::poll_ended`]); a `yield` poll is never
/// scored.
#[inline]
pub(crate) fn score_poll(mechanism: Mechanism, out: &WaitOutcome) {
    if mechanism != Mechanism::Yield {
        crate::policy::busy_polls::poll_ended(!out.timed_out());
    }
}

/// [`poll_until`] without scoring: one slice of a polling phase that
/// scores itself when it ends (a queued waiter that publishes its beat
/// between slices).
#[inline]
pub(crate) fn poll_until_unscored(
    futex: &Futex,
    mechanism: Mechanism,
    deadline: Deadline,
    mut ready: impl FnMut(u32) -> bool,
) -> WaitOutcome {
    // Acquire: pairs with the waker's release change of the word.
    let v = futex.value().load(Ordering::Acquire);
    if ready(v) {
        return WaitOutcome::Ready {
            value: v,
            blocked: false,
        };
    }
    if cfg!(loom) || mechanism == Mechanism::Block {
        return WaitOutcome::TimedOut {
            value: v,
            blocked: false,
        };
    }
    poll_from(futex, mechanism, v, deadline, ready)
}

/// The polling phase of a wait with `budget` on `futex`, whose value `v`
/// `ready` refused: polls to the budget's limit (counted from `started` on
/// the cycle clock when the caller has read it, else from now), then on
/// through the idle extension if the budget has one. For waits that sleep
/// elsewhere than on the word they poll (the RwLock) as for
/// [`WaitWordRef`]'s own.
#[inline]
pub(crate) fn poll_phase(
    futex: &Futex,
    budget: crate::policy::PollBudget,
    started: Option<u64>,
    deadline: Deadline,
    v: u32,
    ready: &mut dyn FnMut(u32) -> bool,
) -> WaitOutcome {
    let mut poll_end = match started {
        Some(at) => budget.poll_deadline_from(at, deadline),
        None => budget.poll_deadline(deadline),
    };
    let out = poll_from(futex, budget.mechanism, v, poll_end, &mut *ready);
    score_poll(budget.mechanism, &out);
    if out.timed_out() && budget.idle_extension {
        // The limit has passed: straight to the extension's advice (a
        // second poll to the passed limit would spin a few PAUSEs more
        // before every block).
        let mut extension = Extension::new();
        extend_polling(
            out,
            futex,
            budget.mechanism,
            &mut poll_end,
            deadline,
            &mut extension,
            &mut *ready,
        )
    } else {
        out
    }
}

/// The polling phase of a budget with the idle extension
/// ([`crate::policy::idle_extension`]): polls with `mechanism` to `*end`,
/// then on as [`extend_polling`] says. Returns [`WaitOutcome::Ready`] when
/// `ready` holds, else [`WaitOutcome::TimedOut`] (the extension advises
/// blocking, or `deadline` passed). Under loom, one look at the word: the
/// models explore the blocking protocol, not timing.
#[inline]
pub(crate) fn poll_extended(
    futex: &Futex,
    mechanism: Mechanism,
    end: &mut Deadline,
    deadline: Deadline,
    extension: &mut Extension,
    mut ready: impl FnMut(u32) -> bool,
) -> WaitOutcome {
    let out = poll_until(futex, mechanism, *end, &mut ready);
    extend_polling(out, futex, mechanism, end, deadline, extension, ready)
}

/// The idle extension after a polling phase that ended with `out`, its
/// limit `*end` passed: while `out` timed out, yields the CPU (a thread
/// runnable on this CPU takes it) and, while the extension then advises
/// polling, moves `*end` one slice on (never past `deadline`) and polls
/// to it with `mechanism`. Returns the last outcome. Under loom, `out`
/// itself.
#[inline]
fn extend_polling(
    out: WaitOutcome,
    futex: &Futex,
    mechanism: Mechanism,
    end: &mut Deadline,
    deadline: Deadline,
    extension: &mut Extension,
    mut ready: impl FnMut(u32) -> bool,
) -> WaitOutcome {
    #[cfg(loom)]
    {
        let _ = (futex, mechanism, end, deadline, extension, &mut ready);
        out
    }
    #[cfg(not(loom))]
    {
        // A wait this long may read the machine's demand for the waits
        // that start after it (`idle_extension`, "The cache on the wait
        // path").
        crate::policy::idle_extension::refresh_stale_demand();
        let clock = waitwise_platform::clock::cycle_clock();
        let mut out = out;
        while out.timed_out() && !deadline.has_passed() {
            // The yield lets a thread runnable on this CPU take it, and
            // how long it took (the clock counts ns) says whether one
            // did work there.
            let before = clock.now();
            waitwise_platform::shim::yield_now();
            let yield_ns = clock.now().saturating_sub(before);
            let Advice::Poll { ns } = extension.after_yield(yield_ns) else {
                break;
            };
            *end = deadline.min(Deadline::after(std::time::Duration::from_nanos(ns)));
            out = poll_until(futex, mechanism, *end, &mut ready);
        }
        out
    }
}

/// The polling loop from `seen`, a value `ready` refused: waits with
/// `mechanism` for each change until `ready` holds or `deadline` passes.
#[inline]
fn poll_from(
    futex: &Futex,
    mechanism: Mechanism,
    mut seen: u32,
    deadline: Deadline,
    mut ready: impl FnMut(u32) -> bool,
) -> WaitOutcome {
    while let MechanismWait::Changed(v) = mechanism.wait_for_change(futex, seen, deadline) {
        seen = v;
        if ready(v) {
            if mechanism == Mechanism::Yield {
                crate::mechanism::yield_guard::wait_ended_after_yield(
                    crate::mechanism::yielding::last_yield_ns(),
                );
            }
            return WaitOutcome::Ready {
                value: v,
                blocked: false,
            };
        }
    }
    WaitOutcome::TimedOut {
        value: seen,
        blocked: false,
    }
}

/// POLLING => REGISTERING: counts the caller in `sleepers`. SeqCst: the
/// Dekker write (module doc).
///
/// Registration is a plain increment and [`unregister`] a plain decrement
/// on every path, not a `Drop` guard: the blocking loop has no landing pad,
/// so a forced unwind that a signal handler's `pthread_exit` starts at any
/// of its instructions passes through it (Rust's personality routine
/// aborts an unwind that starts between the call sites of a function with
/// landing pads). An unwind out of the sleep itself gives the count back
/// through a cleanup handler ([`WaitWordRef::sleep_registered`]); one that
/// starts in the few instructions between the increment and that handler's
/// registration, or a panic in the caller's `ready`, leaves the count one
/// too high, which costs wakers a needless wake call, never a lost one.
#[inline(always)]
fn register(sleepers: &AtomicU32) {
    sleepers.fetch_add(1, Ordering::SeqCst);
}

/// Leaves `sleepers` (see [`register`]). Relaxed: a stale non-zero count
/// only costs a waker a needless wake call (module doc, "Memory ordering").
#[inline(always)]
fn unregister(sleepers: &AtomicU32) {
    sleepers.fetch_sub(1, Ordering::Relaxed);
}

/// The cleanup handler of a sleep: a forced unwind out of it gives the
/// sleeper count back.
///
/// # Safety
///
/// `sleepers` is the `&AtomicU32` that [`WaitWordRef::sleep_registered`]
/// registered it with, still borrowed there.
#[cfg(not(loom))]
unsafe extern "C" fn give_back_sleeper(sleepers: *mut std::ffi::c_void) {
    // SAFETY: by the contract above.
    unregister(unsafe { &*(sleepers as *const AtomicU32) });
}

impl Default for WaitWord {
    fn default() -> Self {
        Self::new(0)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::mechanism::Mechanism;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn early_looks_end_when_a_look_takes() {
        let word = AtomicU32::new(0);
        let mut looks = 0;
        // The third look finds the change and acts on it.
        assert!(look_early(&word, |v| {
            looks += 1;
            if looks == 3 {
                return word
                    .compare_exchange(v, v + 1, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok();
            }
            false
        }));
        assert_eq!((looks, word.load(Ordering::Relaxed)), (3, 1));
        looks = 0;
        assert!(!look_early(&word, |_| {
            looks += 1;
            false
        }));
        assert_eq!(looks, EARLY_LOOKS);
    }

    #[test]
    fn backed_off_looks_end_when_a_look_takes_and_double_their_pauses() {
        let word = AtomicU32::new(7);
        let mut seen = Vec::new();
        assert!(look_backing_off(&word, Deadline::NEVER, |v| {
            seen.push(v);
            seen.len() == 4
        }));
        assert_eq!(seen, [7; 4], "each look reads the word once");
        let mut looks = 0;
        assert!(!look_backing_off(&word, Deadline::NEVER, |_| {
            looks += 1;
            false
        }));
        // Pauses of 2, 4, ..., BACKED_OFF_LOOK_MAX_HINTS hints: one look each.
        assert_eq!(looks, BACKED_OFF_LOOK_MAX_HINTS.trailing_zeros());
        looks = 0;
        let passed = Deadline::after(Duration::ZERO);
        assert!(!look_backing_off(&word, passed, |_| {
            looks += 1;
            true
        }));
        assert_eq!(looks, 0, "no look after the deadline");
    }

    #[test]
    fn layout_owns_a_line() {
        assert_eq!(std::mem::align_of::<WaitWord>(), 128);
        assert_eq!(std::mem::size_of::<WaitWord>(), 128);
    }

    /// The summary's learning touches no line the wait did not: the word,
    /// its sleeper count and the summary all lie in the first 64 bytes.
    #[test]
    fn the_summary_shares_the_words_cache_line() {
        use std::mem::{offset_of, size_of};
        let end = |offset: usize, size: usize| offset + size;
        assert!(end(offset_of!(WaitWord, futex), size_of::<Futex>()) <= 64);
        assert!(end(offset_of!(WaitWord, sleepers), size_of::<AtomicU32>()) <= 64);
        assert!(end(offset_of!(WaitWord, summary), size_of::<AdaptiveSummary>()) <= 64);
    }

    /// `adapt/b` waits on a `WaitWord` learn in the word's own summary:
    /// long waits (here timed out, at least `B` each) move it to the arm
    /// that blocks at once, and two words learn apart whatever their
    /// addresses hash to.
    #[test]
    fn a_word_learns_in_its_own_summary() {
        let (long, fresh) = (WaitWord::new(0), WaitWord::new(0));
        let b = crate::policy::block_ns();
        let timeout = Duration::from_nanos((4.0 * b) as u64).max(Duration::from_micros(500));
        for _ in 0..40 {
            let out = long.wait_until(&Policy::adaptive(), Deadline::after(timeout), |v| v != 0);
            assert!(out.timed_out());
        }
        assert_eq!(
            long.adaptive_summary().arm(),
            crate::policy::adaptive::ARM_BLOCK
        );
        // Timed-out waits earn no credit: they ran F(1/32) in its place.
        assert_eq!(long.adaptive_summary().credit_ns(), 0.0);
        assert_eq!(
            fresh.adaptive_summary().arm(),
            crate::policy::adaptive::START_ARM
        );
        assert_eq!(
            fresh.adaptive_summary().scores(),
            [0.0; crate::policy::adaptive::ARMS]
        );
    }

    #[test]
    fn ready_at_once() {
        let w = WaitWord::new(7);
        let out = w.wait_until(&Policy::always_block(), Deadline::NEVER, |v| v == 7);
        assert_eq!(
            out,
            WaitOutcome::Ready {
                value: 7,
                blocked: false
            }
        );
    }

    /// Wakes `w`'s sleepers every millisecond until `t` has returned (a wake
    /// that comes before the sleeper is in the kernel is missed, so repeat).
    fn wake_until_done(w: &WaitWord, t: std::thread::JoinHandle<WaitOutcome>) -> WaitOutcome {
        while !t.is_finished() {
            w.wake_one();
            std::thread::sleep(Duration::from_millis(1));
        }
        t.join().unwrap()
    }

    #[test]
    fn wait_until_woken_returns_after_a_wake_without_a_change() {
        let w = Arc::new(WaitWord::new(0));
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            w2.wait_until_woken(&Policy::always_block(), Deadline::NEVER, |v| v == 1)
        });
        let out = wake_until_done(&w, t);
        assert_eq!(out, WaitOutcome::Woken { value: 0 });
        assert!(out.blocked() && !out.timed_out());
    }

    #[test]
    fn wait_until_sleeps_again_after_a_wake_without_a_change() {
        let w = Arc::new(WaitWord::new(0));
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            let deadline = Deadline::after(Duration::from_millis(30));
            w2.wait_until(&Policy::always_block(), deadline, |v| v == 1)
        });
        let out = wake_until_done(&w, t);
        assert!(out.timed_out(), "{out:?}");
        assert_eq!(out.value(), 0);
    }

    #[test]
    fn wake_without_sleepers_makes_no_syscall() {
        let w = WaitWord::new(0);
        w.value().store(1, Ordering::SeqCst);
        assert!(!w.wake_one());
        assert!(!w.wake_all());
    }

    #[test]
    fn timeouts_for_every_policy() {
        for policy in [
            Policy::always_block(),
            Policy::always_spin(),
            Policy::two_phase(0.5),
            Policy::randomized(),
        ] {
            let w = WaitWord::new(0);
            let out = w.wait_until(&policy, Deadline::after(Duration::from_millis(5)), |v| {
                v != 0
            });
            assert!(out.timed_out(), "{policy}: {out:?}");
            let out = w.wait_until(&policy, Deadline::after(Duration::ZERO), |v| v != 0);
            assert!(out.timed_out(), "{policy}: {out:?}");
        }
    }

    #[test]
    fn every_policy_and_mechanism_sees_the_change() {
        let mut policies = vec![
            Policy::always_block(),
            Policy::always_spin(),
            Policy::two_phase(0.54),
            Policy::randomized(),
        ];
        for m in Mechanism::ALL {
            policies.push(Policy::two_phase(1.0).with_mechanism(m));
        }
        for policy in policies {
            let w = Arc::new(WaitWord::new(0));
            let w2 = w.clone();
            let t = std::thread::spawn(move || w2.wait_until(&policy, Deadline::NEVER, |v| v == 3));
            for i in 1..=3 {
                std::thread::sleep(Duration::from_millis(1));
                w.value().store(i, Ordering::SeqCst);
                w.wake_all();
            }
            let out = t.join().unwrap();
            assert!(
                matches!(out, WaitOutcome::Ready { value: 3, .. }),
                "{policy}: {out:?}"
            );
        }
    }

    #[test]
    fn the_polling_phase_alone_never_sleeps() {
        let w = WaitWord::new(0);
        // Ready at once: no poll, whatever the deadline.
        let now = Deadline::after(Duration::ZERO);
        let out = poll_until(w.futex(), Mechanism::Pause, now, |v| v == 0);
        assert_eq!(
            out,
            WaitOutcome::Ready {
                value: 0,
                blocked: false
            }
        );
        // The deadline ends it, with the last value seen.
        let soon = Deadline::after(Duration::from_millis(2));
        let out = w.as_ref().poll_until(Mechanism::Yield, soon, |v| v == 1);
        let timed_out = WaitOutcome::TimedOut {
            value: 0,
            blocked: false,
        };
        assert_eq!(out, timed_out);
        // `block` does not poll: one look, and no sleep.
        let out = w
            .as_ref()
            .poll_until(Mechanism::Block, Deadline::NEVER, |v| v == 1);
        assert_eq!(out, timed_out);
        // A change by another thread ends it.
        std::thread::scope(|s| {
            let t = s.spawn(|| {
                w.as_ref()
                    .poll_until(Mechanism::Pause, Deadline::NEVER, |v| v == 2)
            });
            std::thread::sleep(Duration::from_millis(1));
            w.value().store(2, Ordering::SeqCst);
            assert_eq!(
                t.join().unwrap(),
                WaitOutcome::Ready {
                    value: 2,
                    blocked: false
                }
            );
        });
        assert!(!w.has_sleepers());
    }

    #[test]
    fn the_blocking_phase_alone_rechecks_first_and_gives_its_count_back() {
        let w = WaitWord::new(0);
        let out = w
            .as_ref()
            .block_until(Deadline::NEVER, &mut |v| v == 0, SleepRules::default());
        assert_eq!(
            out,
            WaitOutcome::Ready {
                value: 0,
                blocked: false
            }
        );
        std::thread::scope(|s| {
            let t = s.spawn(|| {
                w.as_ref()
                    .block_until(Deadline::NEVER, &mut |v| v == 1, SleepRules::default())
            });
            while !w.has_sleepers() {
                std::thread::sleep(Duration::from_millis(1));
            }
            w.value().store(1, Ordering::SeqCst);
            w.wake_all();
            let out = t.join().unwrap();
            assert!(
                matches!(out, WaitOutcome::Ready { value: 1, .. }),
                "{out:?}"
            );
        });
        assert!(!w.has_sleepers());
    }
}
