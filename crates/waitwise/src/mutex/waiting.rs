//! What every lock in this module shares about *waiting*: the per-object
//! [`WaitOptions`], the policy they resolve to, a profiler created on the
//! first contended wait (so that `const INIT` locks still honour
//! `WAITWISE_PROFILE`), deadline conversion for the timed traits, and the
//! randomized exponential backoff that keeps polling waiters from
//! hammering a hot lock word (Lim & Agarwal section 6.3).

use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::{Policy, SyncKind};
use crate::profile::{Profiler, WaitProfile};
use std::cell::Cell;
use std::sync::OnceLock;
#[cfg(not(loom))]
use std::time::{Duration, Instant};
#[cfg(not(loom))]
use waitwise_platform::clock::Deadline;
use waitwise_platform::pause_time::pause_for_ns;

/// Largest backoff after a lost acquisition race: up to
/// `BACKOFF_UNIT_NS << BACKOFF_CAP_SHIFT` (2 µs). A time, not a PAUSE
/// count (a PAUSE costs a few to ~140 cycles depending on the core).
/// Guessed to match `mechanism::backoff`'s cap: longer delays only add
/// hand-off latency once the poll budget `alpha * B` is of the same order.
pub const BACKOFF_CAP_SHIFT: u32 = 6;

/// One backoff step, ns: the delay after a lost race is a random number
/// of steps in `[1, 2^shift]`. Guessed: about one PAUSE on recent Intel
/// cores (`mechanism::backoff::BACKOFF_FIRST_NS`).
pub const BACKOFF_UNIT_NS: u64 = crate::mechanism::backoff::BACKOFF_FIRST_NS;

/// The waiting side of a lock: options, lazily resolved profiler.
#[derive(Debug)]
pub(crate) struct LockWaits {
    options: WaitOptions,
    profiler: OnceLock<Profiler>,
    /// The polling mechanism used when `options` names no policy.
    default_mechanism: Mechanism,
    /// Whether the default follows the mutex kind's default (`adapt/b`,
    /// [`Policy::default_for`]) rather than its static `s/b/alpha`.
    adaptive_default: bool,
}

impl LockWaits {
    /// Waits configured by `options`, polling with `default_mechanism`
    /// for the mutex kind's static `alpha * B` unless `options` overrides
    /// the whole policy (the FIFO locks and the reader-writer lock).
    pub(crate) const fn new(options: WaitOptions, default_mechanism: Mechanism) -> Self {
        Self::with_default(options, default_mechanism, false)
    }

    /// As [`LockWaits::new`], with the mutex kind's default limit,
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

thread_local! {
    /// Per-thread xorshift state for backoff jitter (seeded from the
    /// thread-local's address so threads do not back off in lock step).
    static JITTER: Cell<u32> = const { Cell::new(0) };
}

/// Randomized exponential backoff after a lost race for a lock word
/// (Anderson 1990; Lim & Agarwal section 6.3): waiters released at once
/// spread their next attempts over `[1, 2^k]` steps of [`BACKOFF_UNIT_NS`], `k` growing with each
/// lost race up to [`BACKOFF_CAP_SHIFT`].
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    shift: u32,
}

impl Backoff {
    /// A fresh backoff (first delay: one step).
    pub(crate) const fn new() -> Self {
        Self { shift: 0 }
    }

    /// Delays for a random number of steps in `[1, 2^shift]`, then doubles
    /// the range. Nothing under loom (the model explores interleavings,
    /// not timing).
    #[inline]
    pub(crate) fn snooze(&mut self) {
        if cfg!(loom) {
            return;
        }
        let n = jitter() & ((1u32 << self.shift) - 1);
        pause_for_ns(BACKOFF_UNIT_NS * u64::from(n + 1));
        self.shift = (self.shift + 1).min(BACKOFF_CAP_SHIFT);
    }
}

/// A cheap per-thread pseudo-random number (xorshift32).
#[inline]
fn jitter() -> u32 {
    JITTER.with(|s| {
        let mut x = s.get();
        if x == 0 {
            x = (s as *const Cell<u32> as usize as u32) | 1;
        }
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.set(x);
        x
    })
}
