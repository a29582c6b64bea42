//! [`WaitOptions`]: the per-object settings every primitive accepts — its
//! waiting policy (default: the one for its [`SyncKind`]) and whether it
//! records a wait-time profile — and `LazyWaiting`, their resolution on an
//! object's first wait.

use crate::policy::{crowding, Policy, SyncKind};
use crate::profile::Profiler;
use std::fmt;
use waitwise_platform::once::ForkSafeOnce;

/// Per-object waiting settings.
///
/// # Examples
/// ```
/// use waitwise::{Policy, SyncKind, WaitOptions};
///
/// let opts = WaitOptions::new().policy(Policy::always_block()).profile(true);
/// assert_eq!(opts.resolve_policy(SyncKind::Barrier).name(), "/b/0");
/// assert!(opts.profiler().is_enabled());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WaitOptions {
    policy: Option<Policy>,
    profile: Option<bool>,
}

impl WaitOptions {
    /// Defaults: the kind's policy, profiling as `WAITWISE_PROFILE` says.
    pub const fn new() -> Self {
        Self {
            policy: None,
            profile: None,
        }
    }

    /// Override the policy.
    pub const fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Turn wait-time profiling on or off for this object (overrides
    /// `WAITWISE_PROFILE`).
    pub const fn profile(mut self, on: bool) -> Self {
        self.profile = Some(on);
        self
    }

    /// The policy set explicitly with [`WaitOptions::policy`], if any
    /// (primitives that adapt their default waiting use this to leave an
    /// explicit choice alone).
    pub const fn policy_override(&self) -> Option<Policy> {
        self.policy
    }

    /// The policy to use for an object of `kind`: the one set, else the
    /// kind's default ([`Policy::default_for`]).
    pub fn resolve_policy(&self, kind: SyncKind) -> Policy {
        self.policy.unwrap_or_else(|| Policy::default_for(kind))
    }

    /// The profiler to give the object.
    pub fn profiler(&self) -> Profiler {
        match self.profile {
            Some(on) => Profiler::enabled(on),
            None => Profiler::from_env(),
        }
    }
}

/// An object's [`WaitOptions`], resolved into its policy and profiler on
/// first use rather than at construction, so that the primitives have
/// `const fn` constructors (for statics, as std's) and still honour
/// `WAITWISE_ALPHA` and `WAITWISE_PROFILE`, which are read at run time.
///
/// The resolution is a [`ForkSafeOnce`]: a `fork()` while another thread
/// resolves cannot leave the child's copy waiting forever. After it, each
/// use costs one `Acquire` load.
pub(crate) struct LazyWaiting {
    options: WaitOptions,
    kind: SyncKind,
    resolved: ForkSafeOnce<Resolved>,
}

/// What [`LazyWaiting`] resolves to.
struct Resolved {
    policy: Policy,
    profiler: Profiler,
}

impl LazyWaiting {
    /// Waits of an object of `kind` configured by `options`.
    pub(crate) const fn new(options: WaitOptions, kind: SyncKind) -> Self {
        Self {
            options,
            kind,
            resolved: ForkSafeOnce::new(),
        }
    }

    #[inline]
    fn resolved(&self) -> &Resolved {
        self.resolved.get_or_init(|| Resolved {
            policy: self.options.resolve_policy(self.kind),
            profiler: self.options.profiler(),
        })
    }

    /// The policy waits follow: the options' explicit one, else the kind's.
    #[inline]
    pub(crate) fn policy(&self) -> &Policy {
        &self.resolved().policy
    }

    /// Whether the options name no policy (the kind's default waiting).
    #[inline]
    pub(crate) fn is_default(&self) -> bool {
        self.options.policy_override().is_none()
    }

    /// The policy for one notified wait of `threads` threads (the
    /// primitive counts them): an explicit policy as it is; the kind's
    /// default polling by `yield` when they outnumber the CPUs or the
    /// process's own threads crowd them, or blocking at once then while
    /// the process's yields lose slices ([`crowding::for_notified_wait`]).
    #[inline]
    pub(crate) fn policy_for_threads(&self, threads: usize) -> Policy {
        let policy = *self.policy();
        if self.options.policy_override().is_some() {
            policy
        } else {
            crowding::for_notified_wait(policy, threads)
        }
    }

    /// The profiler (off unless the options or `WAITWISE_PROFILE` say on).
    #[inline]
    pub(crate) fn profiler(&self) -> &Profiler {
        &self.resolved().profiler
    }
}

/// The policy by name (resolving it), as the primitives' `Debug` show it.
impl fmt::Debug for LazyWaiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyWaiting")
            .field("policy", &format_args!("{}", self.policy().name()))
            .field("profiling", &self.profiler().is_enabled())
            .finish()
    }
}
