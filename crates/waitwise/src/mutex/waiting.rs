//! What every lock in this module shares about *waiting*: the per-object
//! [`WaitOptions`], the policy they resolve to, a profiler created on the
//! first contended wait (so that `const INIT` locks still honour
//! `WAITWISE_PROFILE`), and deadline conversion for the timed traits. The
//! randomized exponential backoff that keeps polling waiters from
//! hammering a hot lock word is [`Backoff::spin_randomized`].

#[cfg(doc)]
use crate::mechanism::backoff::Backoff;
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::{Policy, SyncKind};
use crate::profile::{Profiler, WaitProfile};
use std::sync::OnceLock;
#[cfg(not(loom))]
use std::time::{Duration, Instant};
#[cfg(not(loom))]
use waitwise_platform::clock::Deadline;

/// The waiting side of a lock: options, lazily resolved profiler.
#[derive(Debug)]
pub(crate) struct LockWaiting {
    options: WaitOptions,
    profiler: OnceLock<Profiler>,
    /// The polling mechanism used when `options` names no policy.
    default_mechanism: Mechanism,
    /// Whether the default follows the mutex kind's default (`adapt/b`,
    /// [`Policy::default_for`]) rather than its static `s/b/alpha`.
    adaptive_default: bool,
}

impl LockWaiting {
    /// Waits configured by `options`, polling with `default_mechanism`
    /// for the mutex kind's static `alpha * B` unless `options` overrides
    /// the whole policy (the FIFO locks and the reader-writer lock).
    pub(crate) const fn new(options: WaitOptions, default_mechanism: Mechanism) -> Self {
        Self::with_default(options, default_mechanism, false)
    }

    /// As [`LockWaiting::new`], with the mutex kind's default limit,
    /// `adapt/b` (the default `Mutex`; `policy/kind.rs`, "The defaults").
    pub(crate) const fn adaptive(options: WaitOptions, default_mechanism: Mechanism) -> Self {
        Self::with_default(options, default_mechanism, true)
    }

    const fn with_default(
        options: WaitOptions,
        default_mechanism: Mechanism,
        adaptive_default: bool,
    ) -> Self {
        Self {
            options,
            profiler: OnceLock::new(),
            default_mechanism,
            adaptive_default,
        }
    }

    /// The policy a contended acquisition follows: the options' explicit
    /// policy, else the mutex kind's default (`adapt/b`) or its static
    /// `alpha` (either one `s/b/WAITWISE_ALPHA` when that is set), with
    /// this lock's polling mechanism.
    #[inline]
    pub(crate) fn policy(&self) -> Policy {
        match self.options.policy_override() {
            Some(explicit) => explicit,
            None if self.adaptive_default => {
                Policy::default_for(SyncKind::Mutex).with_mechanism(self.default_mechanism)
            }
            None => Policy::for_kind(SyncKind::Mutex).with_mechanism(self.default_mechanism),
        }
    }

    /// Whether the waits follow the default policy (the options name none).
    #[cfg(not(loom))]
    #[inline]
    pub(crate) fn is_default(&self) -> bool {
        self.options.policy_override().is_none()
    }

    /// The profiler (created on first use from the options / environment).
    #[inline]
    pub(crate) fn profiler(&self) -> &Profiler {
        self.profiler.get_or_init(|| self.options.profiler())
    }

    /// The recorded wait-time histogram, `None` when profiling is off.
    pub(crate) fn profile(&self) -> Option<WaitProfile> {
        self.profiler().snapshot("mutex")
    }
}

/// A deadline for `try_lock_until(instant)`: an instant in the past means
/// "now" (one attempt, no wait).
#[cfg(not(loom))]
#[inline]
pub(crate) fn deadline_at(instant: Instant) -> Deadline {
    Deadline::after(instant.saturating_duration_since(Instant::now()))
}

/// A deadline for `try_lock_for(timeout)`.
#[cfg(not(loom))]
#[inline]
pub(crate) fn deadline_after(timeout: Duration) -> Deadline {
    Deadline::after(timeout)
}
