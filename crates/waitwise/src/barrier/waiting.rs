//! How barrier waits wait by default: the barrier kind's two-phase policy,
//! polling with PAUSE while every party can have a CPU of its own
//! (`s/b/0.62`) and with `yield` when the parties outnumber the CPUs
//! (`Ss/b/0.62`).
//!
//! The barrier kind's `alpha` is `0.62` (uniform waits, Lim & Agarwal
//! Thm. 4; `WAITWISE_ALPHA` overrides it). What remains is *how* to poll
//! for those `alpha * B`, and the answer depends on whether the parties
//! fit on the CPUs this process may use ([`is_oversubscribed`]):
//!
//! - When they fit, the late party is running on a CPU of its own, and the
//!   release is one cache-line hand-off away. PAUSE notices it within
//!   ~100 ns. A `yield` poll is a system call, which delays noticing it by
//!   up to one `sched_yield`, several times a short episode; and a PAUSE
//!   prelude before yield-polling does not avoid that: a vCPU held up for
//!   a microsecond (an interrupt, a hypervisor exit) pushes waits into the
//!   `yield` phase. `cargo run -p waitwise --release --example
//!   barrier_bench` compares the three (`s/b/0.62`, pure spin,
//!   `Ss/b/0.62`) at 2 threads on 2 CPUs. Other processes on the machine can still take a party's CPU; the
//!   poll then costs at most `alpha * B` per wait before it blocks, the
//!   bound Lim & Agarwal's analysis rests on.
//! - When they outnumber the CPUs, the late party is most likely waiting for
//!   this very CPU. A PAUSE poller holds it for `alpha * B` and every
//!   episode ends in a block; a `yield` poller (Lim & Agarwal's
//!   switch-spinning, their recommendation for barriers) hands the CPU to
//!   the late party at every poll (rows `s/b/0.62` and `Ss/b/0.62` at 4
//!   threads on 2 CPUs in the same benchmark).
//!
//! A default wait that polls with PAUSE first looks at its word a few
//! times before its policy's set-up ([`look_early`]), and default waits
//! also break the chains of blocks a barrier's own wake-ups cause (module
//! `wake_chain`). A policy given explicitly (in
//! [`WaitOptions`] or as level policies) is used as given.

use super::wake_chain::WakeChain;
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::{Policy, SyncKind, ALPHA_UNIFORM};
use crate::profile::Profiler;
use crate::wait_word::{look_early, WaitWordRef};
use waitwise_platform::once::ForkSafeOnce;

/// `alpha` for the nodes between the leaves and the root of a tree barrier:
/// half the root's. Guessed: Lim & Agarwal (section 6.2) give only the two
/// ends, always-block at the leaves and two-phase near the root.
pub const INNER_ALPHA: f64 = ALPHA_UNIFORM / 2.0;

/// How default barrier waits poll, shared with the other primitives
/// ([`crate::policy::crowding`]): PAUSE while the parties fit on the
/// allowed CPUs, `yield` once they outnumber them.
pub use crate::policy::crowding::{allowed_cpus, is_oversubscribed, poll_mechanism};

/// The default policy of a barrier of `parties` threads: the barrier
/// kind's default ([`Policy::default_for`]: `adapt/b`, or `s/b/ALPHA`
/// when `WAITWISE_ALPHA` is set), polling with [`poll_mechanism`].
///
/// # Examples
/// ```
/// use waitwise::barrier::{allowed_cpus, default_policy};
/// use waitwise::Mechanism;
///
/// assert_eq!(default_policy(1).mechanism(), Mechanism::Pause);
/// assert_eq!(default_policy(allowed_cpus() + 1).mechanism(), Mechanism::Yield);
/// ```
pub fn default_policy(parties: usize) -> Policy {
    Policy::default_for(SyncKind::Barrier).with_mechanism(poll_mechanism(parties))
}

/// How the waits at one barrier node wait: a policy, and whether they
/// break wake-up chains first ([`WakeChain`](super::wake_chain::WakeChain)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NodeWaiting {
    pub(crate) policy: Policy,
    pub(crate) breaks_chains: bool,
}

impl NodeWaiting {
    /// `policy` exactly as given.
    pub(crate) fn exactly(policy: Policy) -> Self {
        Self {
            policy,
            breaks_chains: false,
        }
    }

    /// A default `policy`: it breaks wake-up chains if it polls at all.
    pub(crate) fn default_with(policy: Policy) -> Self {
        let polls = policy.mechanism() != Mechanism::Block && policy.alpha() != Some(0.0);
        Self {
            policy,
            breaks_chains: polls,
        }
    }

    /// `policy` as a default ([`NodeWaiting::default_with`]) or exactly as
    /// given.
    pub(crate) fn new(policy: Policy, is_default: bool) -> Self {
        if is_default {
            Self::default_with(policy)
        } else {
            Self::exactly(policy)
        }
    }

    /// The default for `parties` threads.
    pub(crate) fn default_for(parties: usize) -> Self {
        Self::default_with(default_policy(parties))
    }

    /// For a one-level barrier of `parties` threads built with `opts`: the
    /// policy set there, exactly, or the default.
    pub(crate) fn from_options(parties: usize, opts: &WaitOptions) -> Self {
        explicit_policy(opts).map_or_else(|| Self::default_for(parties), Self::exactly)
    }
}

/// The policy given in `opts`, if it names one (used exactly as given).
pub(crate) fn explicit_policy(opts: &WaitOptions) -> Option<Policy> {
    opts.policy_override()
}

/// A one-level barrier's waiting ([`NodeWaiting::from_options`], its
/// wake-up chain breaker and its profiler), resolved on the first wait
/// rather than at construction, so that the barriers' constructors are
/// `const` and `WAITWISE_ALPHA`, `WAITWISE_PROFILE` and the allowed CPUs
/// are read at run time. A [`ForkSafeOnce`], as
/// [`LazyWaiting`](crate::options::LazyWaiting).
pub(crate) struct LazyBarrierWaiting {
    parties: usize,
    options: WaitOptions,
    resolved: ForkSafeOnce<BarrierWaiting>,
}

/// What [`LazyBarrierWaiting`] resolves to.
pub(crate) struct BarrierWaiting {
    pub(crate) policy: Policy,
    /// Whether waits first take the early looks ([`look_early`]): default
    /// waiting that polls with PAUSE (the parties fit on the CPUs), not
    /// profiled (a profiled wait records every wait's length).
    pub(crate) looks_early: bool,
    pub(crate) chain: WakeChain,
    pub(crate) profiler: Profiler,
}

impl BarrierWaiting {
    /// Waits, profiled, until `ready(word)`: first the early looks when
    /// [`looks_early`](Self::looks_early), then the policy's wait through
    /// the wake-up chain breaker.
    #[inline]
    pub(crate) fn wait_until(&self, word: WaitWordRef<'_>, mut ready: impl FnMut(u32) -> bool) {
        if !cfg!(loom) && self.looks_early && look_early(word.value(), &mut ready) {
            return;
        }
        let start = self.profiler.start();
        let out = self.chain.wait_until(word, &self.policy, ready);
        debug_assert!(!out.timed_out(), "a wait without deadline timed out");
        self.profiler.finish(start, out.blocked());
    }
}

impl LazyBarrierWaiting {
    /// The waiting of a barrier of `parties` threads built with `options`.
    pub(crate) const fn new(parties: usize, options: WaitOptions) -> Self {
        Self {
            parties,
            options,
            resolved: ForkSafeOnce::new(),
        }
    }

    /// The resolved waiting (resolved on the first call).
    #[inline]
    pub(crate) fn get(&self) -> &BarrierWaiting {
        self.resolved.get_or_init(|| {
            let waiting = NodeWaiting::from_options(self.parties, &self.options);
            let profiler = self.options.profiler();
            BarrierWaiting {
                looks_early: waiting.breaks_chains
                    && waiting.policy.mechanism() == Mechanism::Pause
                    && !profiler.is_enabled(),
                policy: waiting.policy,
                chain: WakeChain::new(waiting.breaks_chains),
                profiler,
            }
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::wait_word::WaitWord;

    #[test]
    fn only_default_pause_waits_that_are_not_profiled_look_early() {
        let default = LazyBarrierWaiting::new(1, WaitOptions::new().profile(false));
        assert!(default.get().looks_early, "one party fits on any machine");
        let crowded = LazyBarrierWaiting::new(allowed_cpus() + 1, WaitOptions::new());
        assert!(!crowded.get().looks_early, "yield polling");
        let explicit = WaitOptions::new().policy(Policy::two_phase(0.5));
        assert!(!LazyBarrierWaiting::new(1, explicit).get().looks_early);
        let profiled = WaitOptions::new().profile(true);
        assert!(!LazyBarrierWaiting::new(1, profiled).get().looks_early);
    }

    #[test]
    fn a_release_seen_in_the_early_looks_ends_the_wait() {
        let waiting = LazyBarrierWaiting::new(1, WaitOptions::new().profile(false));
        let word = WaitWord::new(1);
        let mut looks = 0;
        waiting.get().wait_until(word.as_ref(), |w| {
            looks += 1;
            w == 1
        });
        assert_eq!(looks, 1);
        let profiled = LazyBarrierWaiting::new(1, WaitOptions::new().profile(true));
        profiled.get().wait_until(word.as_ref(), |w| w == 1);
        let recorded = profiled.get().profiler.snapshot("barrier").unwrap();
        assert_eq!(recorded.total_waits, 1, "a profiled wait is recorded");
    }
}
