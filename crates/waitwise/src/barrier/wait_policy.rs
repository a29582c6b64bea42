//! Which policy barrier waits follow by default, and why it changes when
//! threads outnumber CPUs.
//!
//! A barrier's default is the barrier kind's two-phase policy
//! (`s/b/0.62`, Lim & Agarwal Thm. 4; or `WAITWISE_ALPHA`). That is right
//! while every party has a CPU of its own: a waiter burns only its own CPU
//! while polling. When a barrier has more parties than the process may use
//! CPUs, a waiter that polls with PAUSE for `alpha * B` holds the very CPU a
//! late party needs to arrive, and every episode costs a scheduler time
//! slice (milliseconds) instead of microseconds. Then the default becomes
//! [`OVERSUBSCRIBED_MECHANISM`]-polling for the same `alpha * B`, which
//! hands the CPU to the late party at every poll (Lim & Agarwal's
//! switch-spinning, `Ss/b/alpha`), and blocks after it.
//!
//! A policy given explicitly in [`WaitOptions`] is used as given.

use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::{Policy, SyncKind, ALPHA_UNIFORM};
use std::sync::OnceLock;

/// The polling mechanism of the default policy when parties outnumber the
/// allowed CPUs: `yield` (`Ss/b/alpha`). Measured against `/b/0` and
/// `s/b/0.62` with `cargo run -p waitwise --release --example barrier_bench`
/// (4 threads on 2 CPUs): see the table in that example's docs.
pub const OVERSUBSCRIBED_MECHANISM: Mechanism = Mechanism::Yield;

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

/// `policy` adapted to `parties` threads: unchanged while they fit on the
/// allowed CPUs; otherwise a polling policy polls with
/// [`OVERSUBSCRIBED_MECHANISM`] instead (same limit), so a waiter gives its
/// CPU away at every poll. `/b/0` stays `/b/0`.
pub fn adapt_to_parties(policy: Policy, parties: usize) -> Policy {
    if is_oversubscribed(parties) && policy.mechanism() != Mechanism::Block {
        policy.with_mechanism(OVERSUBSCRIBED_MECHANISM)
    } else {
        policy
    }
}

/// The default barrier policy for `parties` threads: the barrier kind's
/// policy, adapted with [`adapt_to_parties`].
///
/// # Examples
/// ```
/// use waitwise::barrier::{allowed_cpus, default_policy};
///
/// assert_eq!(default_policy(1).mechanism(), waitwise::Mechanism::Pause);
/// assert!(default_policy(allowed_cpus() + 1).name().starts_with("Ss/b/"));
/// ```
pub fn default_policy(parties: usize) -> Policy {
    adapt_to_parties(Policy::for_kind(SyncKind::Barrier), parties)
}

/// The policy given in `opts`, if it names one. `WaitOptions` hides whether
/// a policy was set, so an explicit policy equal to the kind's default
/// counts as not given (and gets adapted like the default).
pub(crate) fn explicit_policy(opts: &WaitOptions) -> Option<Policy> {
    let resolved = opts.resolve_policy(SyncKind::Barrier);
    (resolved != Policy::for_kind(SyncKind::Barrier)).then_some(resolved)
}

/// The policy for a one-level barrier of `parties` threads built with `opts`.
pub(crate) fn barrier_policy(parties: usize, opts: &WaitOptions) -> Policy {
    explicit_policy(opts).unwrap_or_else(|| default_policy(parties))
}
