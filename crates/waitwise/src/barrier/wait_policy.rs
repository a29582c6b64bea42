//! How barrier waits wait by default: a short PAUSE prelude, then the
//! barrier kind's policy polling with `yield` (`Ss/b/0.62`), then the futex.
//!
//! The barrier kind's `alpha` is `0.62` (uniform waits, Lim & Agarwal
//! Thm. 4; `WAITWISE_ALPHA` overrides it). What remains is *how* to poll
//! for those `alpha * B`:
//!
//! - With PAUSE (`s/b/0.62`), a waiter holds its CPU. That is right only
//!   while every party has a CPU of its own. When the parties outnumber the
//!   CPUs, or other processes load the machine, the waiter burns the CPU
//!   the late party needs to arrive, and every episode ends in a block
//!   (measured: `cargo run -p waitwise --release --example barrier_bench`,
//!   rows `s/b/0.62` at 4 threads on 2 CPUs).
//! - With `yield` (`Ss/b/0.62`, Lim & Agarwal's switch-spinning and their
//!   recommendation for barriers), a waiter hands its CPU to any runnable
//!   thread at every poll, so a late party runs at once, and polls like a
//!   spinner when nothing else wants the CPU. But each poll is a system
//!   call, which delays noticing a fast release by up to one `sched_yield`.
//! - So a waiter first polls with PAUSE for [`PAUSE_PRELUDE`], which covers
//!   a release by a party that is running (a few cache-line hand-offs),
//!   then switch-spins, then blocks. When the parties outnumber the CPUs
//!   this process may use ([`is_oversubscribed`]) the prelude is skipped:
//!   the late party is then most likely waiting for this very CPU.
//! - Other processes can take the CPUs too, which no CPU count shows. So
//!   each barrier keeps a [`PreludeScore`]: after [`PRELUDE_MISSES`]
//!   preludes in a row that ended without the release, waits skip the
//!   prelude, until a wait without it sees the release within the
//!   prelude's length again (the clock says so; no extra wait).
//!
//! A policy given explicitly (in [`WaitOptions`] or as level policies) is
//! used as given, without prelude.

use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::{Policy, SyncKind, ALPHA_UNIFORM};
use crate::wait_word::{WaitOutcome, WaitWord};
use std::sync::OnceLock;
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// The polling mechanism of the default barrier policies: `yield`
/// (`Ss/b/alpha`).
pub const POLL_MECHANISM: Mechanism = Mechanism::Yield;

/// How long a default wait polls with PAUSE before switch-spinning.
/// Guessed, then checked with `barrier_bench`: a release by a running
/// party takes a few cache-line hand-offs (~100 ns each between cores),
/// and 1 µs is well under the block cost `B` (2-10 µs) it delays.
pub const PAUSE_PRELUDE: Duration = Duration::from_micros(1);

/// Preludes in a row that may end without the release before waits stop
/// trying them. Guessed: a few wasted microseconds, against the cost of
/// switch-spinning a fast release (one `sched_yield` of delay).
pub const PRELUDE_MISSES: u32 = 4;

/// `alpha` for the nodes between the leaves and the root of a tree barrier:
/// half the root's. Guessed: Lim & Agarwal (section 6.2) give only the two
/// ends, always-block at the leaves and two-phase near the root.
pub const INNER_ALPHA: f64 = ALPHA_UNIFORM / 2.0;

/// Number of CPUs this process may run on (its affinity mask and cgroup
/// quota, as `std::thread::available_parallelism` reads them), read once.
/// 1 when it cannot be read.
pub fn allowed_cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether `parties` threads outnumber the CPUs this process may use.
pub fn is_oversubscribed(parties: usize) -> bool {
    parties > allowed_cpus()
}

/// The default barrier policy: the barrier kind's `alpha`, polling with
/// [`POLL_MECHANISM`] (`Ss/b/0.62` unless `WAITWISE_ALPHA` is set).
///
/// # Examples
/// ```
/// use waitwise::barrier::{allowed_cpus, default_prelude, default_policy, PAUSE_PRELUDE};
///
/// assert!(default_policy().name().starts_with("Ss/b/"));
/// assert_eq!(default_prelude(1), Some(PAUSE_PRELUDE));
/// assert_eq!(default_prelude(allowed_cpus() + 1), None); // oversubscribed
/// ```
pub fn default_policy() -> Policy {
    Policy::for_kind(SyncKind::Barrier).with_mechanism(POLL_MECHANISM)
}

/// The PAUSE prelude of default waits for `parties` threads:
/// [`PAUSE_PRELUDE`], or none when they outnumber the allowed CPUs.
pub fn default_prelude(parties: usize) -> Option<Duration> {
    (!is_oversubscribed(parties)).then_some(PAUSE_PRELUDE)
}

/// How one barrier wait waits: an optional PAUSE prelude, then `policy`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BarrierWait {
    pub(crate) policy: Policy,
    pub(crate) prelude: Option<Duration>,
}

impl BarrierWait {
    /// `policy` as given, no prelude.
    pub(crate) fn exactly(policy: Policy) -> Self {
        Self {
            policy,
            prelude: None,
        }
    }

    /// `policy` with the default prelude for `parties`, if it polls at all.
    pub(crate) fn with_default_prelude(policy: Policy, parties: usize) -> Self {
        let polls = policy.mechanism() != Mechanism::Block && policy.alpha() != Some(0.0);
        Self {
            policy,
            prelude: default_prelude(parties).filter(|_| polls),
        }
    }

    /// The default for `parties` threads.
    pub(crate) fn default_for(parties: usize) -> Self {
        Self::with_default_prelude(default_policy(), parties)
    }

    /// For a one-level barrier of `parties` threads built with `opts`: the
    /// policy set there, exactly, or the default.
    pub(crate) fn from_options(parties: usize, opts: &WaitOptions) -> Self {
        explicit_policy(opts).map_or_else(|| Self::default_for(parties), Self::exactly)
    }

    /// Waits until `ready(word)`: the prelude (if `score` says it pays),
    /// then the policy. Returns the outcome (never timed out).
    #[inline]
    pub(crate) fn wait_until(
        &self,
        word: &WaitWord,
        score: &PreludeScore,
        mut ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        // Acquire: pairs with the releasing SeqCst write.
        let v = word.value().load(Ordering::Acquire);
        if ready(v) {
            return WaitOutcome::Ready {
                value: v,
                blocked: false,
            };
        }
        // Under loom the prelude (a timed poll) is skipped: the model
        // explores the blocking protocol.
        match (self.prelude, cfg!(loom)) {
            (Some(prelude), false) => self.wait_with_prelude(word, score, prelude, ready),
            _ => word.wait_until(&self.policy, Deadline::NEVER, ready),
        }
    }

    fn wait_with_prelude(
        &self,
        word: &WaitWord,
        score: &PreludeScore,
        prelude: Duration,
        mut ready: impl FnMut(u32) -> bool,
    ) -> WaitOutcome {
        let prelude_end = Deadline::after(prelude);
        if score.pays() {
            let out = word.wait_until(&Policy::always_spin(), prelude_end, &mut ready);
            if !out.timed_out() {
                score.hit();
                return out;
            }
            score.miss();
            return word.wait_until(&self.policy, Deadline::NEVER, ready);
        }
        let out = word.wait_until(&self.policy, Deadline::NEVER, ready);
        if !out.blocked() && !prelude_end.has_passed() {
            // The prelude would have caught this release.
            score.hit();
        }
        out
    }
}

/// Whether PAUSE preludes have been paying off at one barrier: the number
/// of preludes that may still end without the release before waits skip
/// them (0: skip). Shared by the barrier's waiters; a hint, so racing
/// updates are harmless.
///
/// Every access is `Relaxed`: the score orders no other memory, and a stale
/// value costs at most one prelude too many or too few.
#[derive(Debug)]
pub(crate) struct PreludeScore(AtomicU32);

impl PreludeScore {
    /// A score that tries preludes.
    pub(crate) fn new() -> Self {
        Self(AtomicU32::new(PRELUDE_MISSES))
    }

    /// Whether the next wait should try the prelude.
    #[inline]
    fn pays(&self) -> bool {
        self.0.load(Ordering::Relaxed) > 0
    }

    /// A prelude caught (or would have caught) the release.
    #[inline]
    fn hit(&self) {
        // Written only when it changes: the line stays shared while all is well.
        if self.0.load(Ordering::Relaxed) != PRELUDE_MISSES {
            self.0.store(PRELUDE_MISSES, Ordering::Relaxed);
        }
    }

    /// A prelude ended without the release.
    #[inline]
    fn miss(&self) {
        let left = self.0.load(Ordering::Relaxed);
        self.0.store(left.saturating_sub(1), Ordering::Relaxed);
    }
}

/// The policy given in `opts`, if it names one (used exactly as given).
pub(crate) fn explicit_policy(opts: &WaitOptions) -> Option<Policy> {
    opts.policy_override()
}
