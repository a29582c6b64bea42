//! Waiting policies: *when* to stop polling and block.
//!
//! A policy is a polling mechanism, the futex as the signalling mechanism,
//! and a poll limit `L_poll` (Lim & Agarwal section 3). Names follow their
//! nomenclature and appear in every report:
//!
//! | name | meaning |
//! |---|---|
//! | `s//inf` | always poll (optionally block after a deadlock-avoidance timeout) |
//! | `/b/0` | always block at once |
//! | `s/b/ALPHA` | poll for `ALPHA * B`, then block |
//! | `Ss/b/ALPHA` | yield-poll (switch-spin) for `ALPHA * B`, then block |
//! | `hw/b/ALPHA` | hardware wait (UMWAIT/MWAITX, with fallback) for `ALPHA * B`, then block |
//! | `rand/b` | poll for a limit drawn per wait from `e^(x/B)/(B(e-1))` on `[0,B]` |
//! | `adapt/b` | per object, follow the bounded poll-limit law that cost least on its recent waits ([`adaptive`]) |
//!
//! `B` is the block cost on this machine ([`block_cost()`](fn@block_cost): a
//! documented starting value, then learned from the program's own
//! wake-ups); `ALPHA`
//! defaults by [`SyncKind`] and can be overridden per object or by
//! `WAITWISE_ALPHA` ([`crate::env`]).
//!
//! A default wait whose threads outnumber the CPUs polls by `yield`
//! rather than PAUSE ([`crowding`]). On a busy machine a default wait
//! polls with PAUSE only while such polls have paid off in this process
//! lately, and blocks at once otherwise ([`busy_polls`]).
//!
//! Policies advise, callers block: a policy only answers "which mechanism,
//! and for how long" ([`Policy::poll_budget`]); [`crate::WaitWord`] runs it.

pub mod adaptive;
pub mod block_cost;
pub mod busy_polls;
pub mod crowding;
pub mod idle_extension;
pub mod kind;
pub mod machine_profile;
pub mod randomized;

pub use block_cost::{block_cost, block_ns, starting_block_cost, BlockCost, BlockCostSource};
pub use kind::{SyncKind, ALPHA_ANY, ALPHA_EXPONENTIAL, ALPHA_UNIFORM};

use crate::mechanism::Mechanism;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;
use waitwise_platform::clock::{cycle_clock, Deadline};

/// How long the polling phase lasts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PollLimit {
    /// `/b/0`: no polling.
    Zero,
    /// `alpha * B`.
    Alpha(f64),
    /// A fixed time.
    Fixed(Duration),
    /// Drawn per wait from the randomized density on `[0, B]`.
    Randomized,
    /// Drawn per wait from the law the object's own summary of recent
    /// waits chooses ([`adaptive`]); always in `[0, 2B]` (times the
    /// switch-spinning efficiency, at most 4, for a wait that polls by
    /// yielding: [`adaptive`], "Polling by yielding"), extended while no
    /// other thread wants the waiter's CPU ([`idle_extension`]).
    Adaptive,
    /// `s//inf`: poll forever, or until the deadlock-avoidance timeout, then
    /// block.
    Forever {
        /// Block after polling this long (deadlock avoidance when the
        /// waiter may hold the CPU its waker needs).
        timeout: Option<Duration>,
    },
}

/// A waiting policy: a polling mechanism plus a poll limit; blocking is
/// always on the futex.
///
/// # Examples
/// ```
/// use waitwise::policy::{Policy, SyncKind};
/// use waitwise::mechanism::Mechanism;
///
/// assert_eq!(Policy::always_block().name(), "/b/0");
/// assert_eq!(Policy::always_spin().name(), "s//inf");
/// assert_eq!(Policy::two_phase(0.5).name(), "s/b/0.5");
/// assert_eq!(Policy::two_phase(1.0).with_mechanism(Mechanism::Yield).name(), "Ss/b/1");
/// assert_eq!(Policy::fixed_alpha(SyncKind::Barrier).name(), "s/b/0.62");
/// assert_eq!("s/b/0.54".parse::<Policy>().unwrap(), Policy::two_phase(0.54));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    mechanism: Mechanism,
    limit: PollLimit,
}

/// What one wait should do before blocking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PollBudget {
    /// The polling mechanism (already resolved along its fallback chain).
    pub mechanism: Mechanism,
    /// Poll this many ns; `None` = poll until the wait's own deadline.
    pub limit_ns: Option<f64>,
    /// Past `limit_ns`, keep polling while no other thread wants the
    /// waiter's CPU ([`idle_extension`], `adapt/b` only).
    pub idle_extension: bool,
}

/// Whether polling with `mechanism` now would hold a CPU that another
/// runnable thread wants: [`polling_holds_wanted_cpu`] with the machine's
/// demand as a wait that starts takes it
/// ([`idle_extension::demand_at_wait_start`]). A demand pinned with
/// [`idle_extension::force_demand`] is for the idle extension's
/// experiments and leaves this rule out (`false`).
///
/// Default waits (`adapt/b`, the barriers' chain breaker, the event's
/// poll before it registers) then block at once unless such polls paid
/// off lately ([`skips_poll_on_busy_cpus`]); the channel's default waits
/// block at once. Waits given a policy explicitly poll as told, and
/// `yield` polling has its own guard.
#[inline]
pub(crate) fn holds_wanted_cpu(mechanism: Mechanism) -> bool {
    #[cfg(not(loom))]
    {
        crowding::holds_cpu(mechanism)
            && idle_extension::forced_demand().is_none()
            && polling_holds_wanted_cpu(mechanism, idle_extension::demand_at_wait_start())
    }
    #[cfg(loom)]
    {
        let _ = mechanism;
        false
    }
}

/// Whether a default wait that would poll with `mechanism` skips its
/// polling phase and blocks at once: the poll would hold a CPU another
/// runnable thread wants ([`holds_wanted_cpu`]), and either most of the
/// threads that want one are likely the process's own (it used most of
/// its CPUs lately, [`idle_extension::process_uses_most_cpus`]: the poll
/// would hold a CPU that the thread it waits for may want) or such polls
/// have not paid off in this process lately ([`busy_polls`]). A poll the
/// score admits is scored when it ends.
#[inline]
pub(crate) fn skips_poll_on_busy_cpus(mechanism: Mechanism) -> bool {
    holds_wanted_cpu(mechanism) && (own_load_is_most() || !busy_polls::admits_poll())
}

/// [`idle_extension::process_uses_most_cpus`]; never under loom.
#[inline]
fn own_load_is_most() -> bool {
    #[cfg(not(loom))]
    {
        idle_extension::process_uses_most_cpus()
    }
    #[cfg(loom)]
    {
        false
    }
}

/// Whether polling with `mechanism` holds a CPU that another runnable
/// thread wants when the machine's demand is `demand`: the mechanism
/// keeps its CPU while it polls (PAUSE, spinning, backoff, a hardware
/// wait) and more threads are runnable than the machine has CPUs
/// ([`idle_extension::CpuDemand::Busy`]).
///
/// Such a poll delays whoever waits for a CPU, the thread that will end
/// the wait among them, and the scheduler counts the poller as a thread
/// that never sleeps: beside a CPU-bound program it takes turns with it
/// slice by slice, where a thread that sleeps runs as soon as it is woken.
#[inline]
pub fn polling_holds_wanted_cpu(mechanism: Mechanism, demand: idle_extension::CpuDemand) -> bool {
    crowding::holds_cpu(mechanism) && demand == idle_extension::CpuDemand::Busy
}

impl PollBudget {
    /// Whether a wait with this budget polls at all: not `/b/0`, not the
    /// `block` mechanism, not by yielding while yields lose whole
    /// scheduler slices to threads that keep the CPU
    /// ([`yield_guard`](crate::mechanism::yield_guard)), and, for
    /// `adapt/b`, not with a mechanism that holds the CPU while more
    /// threads are runnable than the machine has CPUs
    /// ([`holds_wanted_cpu`](Self::holds_wanted_cpu)): such a wait blocks
    /// at once.
    #[inline]
    pub(crate) fn polls(&self) -> bool {
        self.mechanism != Mechanism::Block
            && self.limit_ns != Some(0.0)
            && !(self.mechanism == Mechanism::Yield
                && crate::mechanism::yield_guard::yielding_loses_slices())
            && !self.skips_poll_on_busy_cpus()
    }

    /// Whether an `adapt/b` poll would hold a CPU that another runnable
    /// thread wants, and such polls do not pay lately
    /// ([`skips_poll_on_busy_cpus`]).
    #[inline]
    fn skips_poll_on_busy_cpus(&self) -> bool {
        self.idle_extension && skips_poll_on_busy_cpus(self.mechanism)
    }

    /// When a polling phase that starts now ends: `limit_ns` from now on
    /// the cycle clock, or the wait's own `deadline` if that comes first.
    #[inline]
    pub(crate) fn poll_deadline(&self, deadline: Deadline) -> Deadline {
        match self.limit_ns {
            None => deadline,
            Some(_) => self.poll_deadline_from(cycle_clock().now(), deadline),
        }
    }

    /// When a polling phase that started at `start_ticks` on the cycle
    /// clock ends: [`PollBudget::poll_deadline`] for a phase whose start
    /// the caller has read already (an `adapt/b` wait reads it when it
    /// begins), which saves a clock read.
    #[inline]
    pub(crate) fn poll_deadline_from(&self, start_ticks: u64, deadline: Deadline) -> Deadline {
        match self.limit_ns {
            None => deadline,
            Some(ns) => deadline.min(Deadline::at_ticks(
                start_ticks.saturating_add(cycle_clock().ns_to_ticks(ns as u64)),
            )),
        }
    }
}

impl Policy {
    /// `s//inf`: always poll (PAUSE loop), never block.
    pub const fn always_spin() -> Self {
        Self {
            mechanism: Mechanism::Pause,
            limit: PollLimit::Forever { timeout: None },
        }
    }

    /// `s//inf` with a deadlock-avoidance timeout: poll, and block only after
    /// `timeout` (Lim & Agarwal's `s//inf` experiments need one when threads
    /// outnumber processors).
    pub const fn always_spin_with_timeout(timeout: Duration) -> Self {
        Self {
            mechanism: Mechanism::Pause,
            limit: PollLimit::Forever {
                timeout: Some(timeout),
            },
        }
    }

    /// `/b/0`: always block at once.
    pub const fn always_block() -> Self {
        Self {
            mechanism: Mechanism::Block,
            limit: PollLimit::Zero,
        }
    }

    /// `s/b/alpha`: poll (PAUSE loop) for `alpha * B`, then block. A negative
    /// or non-finite `alpha` is treated as 0 (block at once).
    pub fn two_phase(alpha: f64) -> Self {
        let alpha = if alpha.is_finite() && alpha > 0.0 {
            alpha
        } else {
            0.0
        };
        Self {
            mechanism: Mechanism::Pause,
            limit: PollLimit::Alpha(alpha),
        }
    }

    /// Poll for a fixed time, then block.
    pub const fn poll_then_block(poll: Duration) -> Self {
        Self {
            mechanism: Mechanism::Pause,
            limit: PollLimit::Fixed(poll),
        }
    }

    /// The randomized two-phase policy (`rand/b`).
    pub const fn randomized() -> Self {
        Self {
            mechanism: Mechanism::Pause,
            limit: PollLimit::Randomized,
        }
    }

    /// The adaptive two-phase policy (`adapt/b`): each object follows the
    /// bounded poll-limit law that cost least on its recent waits, within
    /// [`adaptive::WORST_CASE_FACTOR`] of the off-line optimum on any wait
    /// sequence ([`adaptive`]).
    pub const fn adaptive() -> Self {
        Self {
            mechanism: Mechanism::Pause,
            limit: PollLimit::Adaptive,
        }
    }

    /// What an object of `kind` waits with when its options name no
    /// policy: `adapt/b` for producer-consumer, barrier and mutex waits,
    /// the static [`Policy::for_kind`] for unknown waits (the
    /// measurements behind the choice, and the locks that keep the static
    /// limit: [`kind`], "The defaults"); a valid `WAITWISE_ALPHA` makes
    /// every kind's default the static `s/b/ALPHA`.
    ///
    /// # Examples
    /// ```
    /// use waitwise::{Policy, SyncKind};
    /// if std::env::var_os("WAITWISE_ALPHA").is_none() {
    ///     assert_eq!(Policy::default_for(SyncKind::Barrier).name(), "adapt/b");
    ///     assert_eq!(Policy::default_for(SyncKind::Unknown), Policy::for_kind(SyncKind::Unknown));
    /// }
    /// ```
    pub fn default_for(kind: SyncKind) -> Self {
        if crate::env::alpha_override().is_none() && kind.defaults_to_adaptive() {
            Self::adaptive()
        } else {
            Self::for_kind(kind)
        }
    }

    /// The static two-phase policy of a synchronization kind,
    /// `s/b/alpha(kind)` (Lim & Agarwal's choice for its wait-time law),
    /// with `WAITWISE_ALPHA` taking precedence when it is set and valid.
    /// The default of the mutex and unknown kinds; see
    /// [`Policy::default_for`].
    pub fn for_kind(kind: SyncKind) -> Self {
        match crate::env::alpha_override() {
            Some(alpha) => Self::two_phase(alpha),
            None => Self::fixed_alpha(kind),
        }
    }

    /// `s/b/alpha(kind)` with the static default, ignoring `WAITWISE_ALPHA`.
    pub fn fixed_alpha(kind: SyncKind) -> Self {
        Self::two_phase(kind.default_alpha())
    }

    /// The same limit with another polling mechanism (`Yield` makes it
    /// `Ss/b/...`, a hardware wait `hw/b/...`). `Block` as the polling
    /// mechanism means no polling.
    pub const fn with_mechanism(mut self, mechanism: Mechanism) -> Self {
        self.mechanism = mechanism;
        self
    }

    /// The polling mechanism as asked (before fallback).
    pub const fn mechanism(&self) -> Mechanism {
        self.mechanism
    }

    /// The poll limit.
    pub const fn limit(&self) -> PollLimit {
        self.limit
    }

    /// `alpha`, for policies defined by one.
    pub fn alpha(&self) -> Option<f64> {
        match self.limit {
            PollLimit::Alpha(a) => Some(a),
            PollLimit::Zero => Some(0.0),
            _ => None,
        }
    }

    /// Whether this policy ever blocks without a deadline from the caller.
    pub fn may_block(&self) -> bool {
        !matches!(self.limit, PollLimit::Forever { timeout: None })
    }

    /// The expected poll limit in ns with the measured `B` (for reports;
    /// `None` for `s//inf` without timeout; the mean `B/(e-1)` for `rand/b`,
    /// and for `adapt/b`, whose objects start there before they learn).
    pub fn poll_limit_ns(&self) -> Option<f64> {
        match self.limit {
            PollLimit::Zero => Some(0.0),
            PollLimit::Alpha(a) => Some(a * block_ns()),
            PollLimit::Fixed(d) => Some(d.as_nanos() as f64),
            PollLimit::Randomized | PollLimit::Adaptive => {
                Some(block_ns() / (std::f64::consts::E - 1.0))
            }
            PollLimit::Forever { timeout } => timeout.map(|d| d.as_nanos() as f64),
        }
    }

    /// What one wait should do: poll with which mechanism, for how long.
    /// `limit_ns == Some(0.0)` means block at once. `adapt/b` knows no
    /// object here and draws like `rand/b` (its starting arm): waits that
    /// learn call [`Policy::begin_wait`].
    #[inline]
    pub fn poll_budget(&self) -> PollBudget {
        if self.mechanism == Mechanism::Block {
            return PollBudget {
                mechanism: Mechanism::Block,
                limit_ns: Some(0.0),
                idle_extension: false,
            };
        }
        let limit_ns = match self.limit {
            PollLimit::Zero => Some(0.0),
            PollLimit::Alpha(a) => Some(a * block_ns()),
            PollLimit::Fixed(d) => Some(d.as_nanos() as f64),
            PollLimit::Randomized | PollLimit::Adaptive => {
                Some(randomized::draw_poll_limit(block_ns()))
            }
            PollLimit::Forever { timeout } => timeout.map(|d| d.as_nanos() as f64),
        };
        PollBudget {
            mechanism: self.mechanism.effective(),
            limit_ns,
            idle_extension: self.limit == PollLimit::Adaptive,
        }
    }

    /// What one wait on the word at `word_addr` should do, and, for
    /// `adapt/b`, the handle that records the wait in that object's summary
    /// (the static table's, [`adaptive::summary_for`]) when it ends
    /// ([`adaptive::Learning::finish`]). Other policies: as
    /// [`Policy::poll_budget`], no handle. Under loom no wait learns.
    #[inline]
    pub fn begin_wait(
        &self,
        word_addr: usize,
    ) -> (PollBudget, Option<adaptive::Learning<'static>>) {
        #[cfg(not(loom))]
        if self.learns() {
            return self.begin_wait_in(adaptive::summary_for(word_addr), word_addr);
        }
        let _ = word_addr;
        (self.poll_budget(), None)
    }

    /// [`Policy::begin_wait`] learning in `summary`: an object's own (a
    /// [`crate::WaitWord`] carries one beside its word), for the word at
    /// `word_addr` (where its wakers stamp their wakes).
    #[inline]
    pub fn begin_wait_in<'a>(
        &self,
        summary: &'a adaptive::AdaptiveSummary,
        word_addr: usize,
    ) -> (PollBudget, Option<adaptive::Learning<'a>>) {
        #[cfg(not(loom))]
        if self.learns() {
            let mechanism = self.mechanism.effective();
            let beta = if mechanism == Mechanism::Yield {
                adaptive::switch_spin_beta(idle_extension::runnable_per_cpu())
            } else {
                1.0
            };
            let (limit_ns, learning) =
                adaptive::Learning::begin_on(summary, word_addr, block_ns(), beta);
            let budget = PollBudget {
                mechanism,
                limit_ns: Some(limit_ns),
                idle_extension: true,
            };
            return (budget, Some(learning));
        }
        let _ = (summary, word_addr);
        (self.poll_budget(), None)
    }

    /// Whether this policy's waits learn (`adapt/b` with a mechanism that
    /// polls).
    #[cfg(not(loom))]
    #[inline]
    fn learns(&self) -> bool {
        self.limit == PollLimit::Adaptive && self.mechanism != Mechanism::Block
    }

    /// The Lim & Agarwal name: `s//inf`, `/b/0`, `s/b/0.54`, `Ss/b/1`,
    /// `hw/b/0.62`, `rand/b`, `adapt/b`, `s/b/5us`.
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// The name plus the polling mechanism, e.g. `s/b/0.54 (pause)`.
    pub fn describe(&self) -> String {
        match self.limit {
            PollLimit::Zero => self.name(),
            _ => format!("{} ({})", self.name(), self.mechanism.name()),
        }
    }

    fn prefix(&self) -> &'static str {
        match self.mechanism {
            Mechanism::Yield => "Ss",
            m if m.is_hardware() => "hw",
            _ => "s",
        }
    }
}

/// Formats `alpha` with at most two decimals and no trailing zeros.
fn format_alpha(alpha: f64) -> String {
    let s = format!("{alpha:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mechanism == Mechanism::Block {
            return f.write_str("/b/0");
        }
        let p = self.prefix();
        match self.limit {
            PollLimit::Zero => f.write_str("/b/0"),
            PollLimit::Alpha(a) => write!(f, "{p}/b/{}", format_alpha(a)),
            PollLimit::Fixed(d) => write!(f, "{p}/b/{}us", d.as_micros()),
            PollLimit::Randomized => write!(f, "rand/b"),
            PollLimit::Adaptive => write!(f, "adapt/b"),
            PollLimit::Forever { timeout: None } => write!(f, "{p}//inf"),
            PollLimit::Forever { timeout: Some(d) } => write!(f, "{p}//inf({}ms)", d.as_millis()),
        }
    }
}

/// A policy name that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown waiting policy `{0}` (expected s//inf, /b/0, s/b/ALPHA, Ss/b/ALPHA, hw/b/ALPHA, rand/b or adapt/b)")]
pub struct UnknownPolicy(pub String);

impl FromStr for Policy {
    type Err = UnknownPolicy;

    /// Parses `s//inf`, `/b/0`, `s/b/ALPHA`, `Ss/b/ALPHA`, `hw/b/ALPHA`
    /// (UMWAIT with its fallback chain), `rand/b` and `adapt/b`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || UnknownPolicy(s.to_string());
        let s = s.trim();
        match s {
            "s//inf" => return Ok(Self::always_spin()),
            "/b/0" => return Ok(Self::always_block()),
            "rand/b" => return Ok(Self::randomized()),
            "adapt/b" => return Ok(Self::adaptive()),
            _ => {}
        }
        let (prefix, alpha) = s.split_once("/b/").ok_or_else(err)?;
        let alpha: f64 = alpha.parse().map_err(|_| err())?;
        if !alpha.is_finite() || alpha < 0.0 {
            return Err(err());
        }
        let mechanism = match prefix {
            "s" => Mechanism::Pause,
            "Ss" => Mechanism::Yield,
            "hw" => Mechanism::Umwait(crate::mechanism::WaitpkgState::C02),
            _ => return Err(err()),
        };
        Ok(Self::two_phase(alpha).with_mechanism(mechanism))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_budget_polls_unless_blocking_at_once() {
        assert!(Policy::always_spin().poll_budget().polls());
        assert!(Policy::poll_then_block(Duration::from_micros(5))
            .poll_budget()
            .polls());
        assert!(!Policy::always_block().poll_budget().polls());
        assert!(!Policy::poll_then_block(Duration::ZERO)
            .poll_budget()
            .polls());
        assert!(!Policy::always_spin()
            .with_mechanism(Mechanism::Block)
            .poll_budget()
            .polls());
    }

    #[test]
    fn poll_deadline_is_the_earlier_of_limit_and_wait_deadline() {
        let spin = Policy::always_spin().poll_budget();
        assert_eq!(spin.poll_deadline(Deadline::NEVER), Deadline::NEVER);
        let soon = Deadline::after(Duration::from_micros(1));
        assert_eq!(spin.poll_deadline(soon), soon);

        let limited = Policy::poll_then_block(Duration::from_secs(3600)).poll_budget();
        assert_eq!(limited.poll_deadline(soon), soon);
        let capped = limited.poll_deadline(Deadline::NEVER);
        assert!(!capped.is_never());
        let later = Deadline::after(Duration::from_secs(7200));
        assert!(capped.ticks() < later.ticks());
    }

    /// A phase whose start the caller read already (an `adapt/b` wait's
    /// start) ends its limit after that start, or at the wait's deadline.
    #[test]
    fn poll_deadline_from_a_start_read_before() {
        let clock = cycle_clock();
        let limited = Policy::poll_then_block(Duration::from_micros(7)).poll_budget();
        let start = clock.now();
        let end = start + clock.ns_to_ticks(7_000);
        assert_eq!(
            limited.poll_deadline_from(start, Deadline::NEVER),
            Deadline::at_ticks(end)
        );
        let sooner = Deadline::at_ticks(start + 1);
        assert_eq!(limited.poll_deadline_from(start, sooner), sooner);
        let spin = Policy::always_spin().poll_budget();
        assert_eq!(
            spin.poll_deadline_from(start, Deadline::NEVER),
            Deadline::NEVER
        );
        // adapt/b's wait hands its start over (its value is a clock
        // reading, not compared here: the TSCs of two CPUs may differ by
        // a few ticks, and the thread may move between them).
        let (_, learning) = Policy::adaptive().begin_wait(0x1000);
        assert!(learning.and_then(|l| l.start_ticks()).is_some());
    }

    #[test]
    fn names() {
        assert_eq!(
            Policy::always_spin_with_timeout(Duration::from_millis(20)).name(),
            "s//inf(20ms)"
        );
        assert_eq!(Policy::randomized().name(), "rand/b");
        assert_eq!(Policy::adaptive().name(), "adapt/b");
        assert_eq!(Policy::fixed_alpha(SyncKind::Mutex).name(), "s/b/0.54");
        assert_eq!(Policy::fixed_alpha(SyncKind::Unknown).name(), "s/b/1");
        assert_eq!(
            Policy::two_phase(0.5)
                .with_mechanism(Mechanism::Mwaitx)
                .name(),
            "hw/b/0.5"
        );
        assert_eq!(Policy::two_phase(f64::NAN).name(), "s/b/0");
        assert_eq!(Policy::two_phase(1.0).describe(), "s/b/1 (pause)");
    }

    #[test]
    fn parse_round_trip() {
        for name in [
            "s//inf",
            "/b/0",
            "s/b/0.54",
            "Ss/b/1",
            "hw/b/0.62",
            "rand/b",
            "adapt/b",
            "s/b/2",
        ] {
            assert_eq!(name.parse::<Policy>().unwrap().name(), name);
        }
        for bad in ["", "s/b/", "s/b/x", "q/b/1", "s/b/-1", "s/b/inf"] {
            assert!(bad.parse::<Policy>().is_err(), "{bad}");
        }
    }

    /// Runs `f` between two reads of the process's `B` that agree, and
    /// returns that `B` with `f`'s result: other tests' waits move the
    /// learned `B` at any time, and a limit is checked against the `B` it
    /// was drawn with.
    fn with_steady_b<T>(mut f: impl FnMut() -> T) -> (f64, T) {
        for _ in 0..10_000 {
            let before = block_ns();
            let out = f();
            if block_ns() == before {
                return (before, out);
            }
        }
        panic!("the process's B changed during each of 10,000 tries");
    }

    #[test]
    fn budgets() {
        assert_eq!(Policy::always_block().poll_budget().limit_ns, Some(0.0));
        assert_eq!(Policy::always_spin().poll_budget().limit_ns, None);
        let (b, l) = with_steady_b(|| Policy::two_phase(0.5).poll_budget().limit_ns.unwrap());
        assert!((l - 0.5 * b).abs() < 1e-6);
        for _ in 0..100 {
            let (b, r) = with_steady_b(|| Policy::randomized().poll_budget().limit_ns.unwrap());
            assert!((0.0..=b).contains(&r));
        }
        let word = 0u32;
        let addr = &word as *const u32 as usize;
        // adapt/b draws with its object's B (within BLOCK_RANGE of the
        // process's) from its current arm (at most MAX_LIMIT_IN_B times
        // that B); the object's summary slot is shared with other tests'
        // objects, so its arm and B are any of theirs.
        let most = adaptive::MAX_LIMIT_IN_B * adaptive::BLOCK_RANGE;
        for _ in 0..100 {
            let (b, r) = with_steady_b(|| Policy::adaptive().poll_budget().limit_ns.unwrap());
            assert!((0.0..=b).contains(&r));
            let (b, (budget, learning)) = with_steady_b(|| Policy::adaptive().begin_wait(addr));
            let limit = budget.limit_ns.unwrap();
            assert!((0.0..=most * b).contains(&limit), "{limit} ns, B {b} ns");
            learning.unwrap().finish(false, false);
        }
        assert!(Policy::two_phase(0.5).begin_wait(addr).1.is_none());
        assert_eq!(
            Policy::two_phase(1.0)
                .with_mechanism(Mechanism::Block)
                .poll_budget()
                .limit_ns,
            Some(0.0)
        );
    }
}
