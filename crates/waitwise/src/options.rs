//! [`WaitOptions`]: the per-object settings every primitive accepts — its
//! waiting policy (default: the one for its [`SyncKind`]) and whether it
//! records a wait-time profile.

use crate::policy::{Policy, SyncKind};
use crate::profile::Profiler;

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

    /// The policy to use for an object of `kind`.
    pub fn resolve_policy(&self, kind: SyncKind) -> Policy {
        self.policy.unwrap_or_else(|| Policy::for_kind(kind))
    }

    /// The profiler to give the object.
    pub fn profiler(&self) -> Profiler {
        match self.profile {
            Some(on) => Profiler::enabled(on),
            None => Profiler::from_env(),
        }
    }
}
