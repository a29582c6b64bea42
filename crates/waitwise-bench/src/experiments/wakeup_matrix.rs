//! `waitwise wakeup-matrix`: seed 004 section 4.1 on this machine. Wake-up
//! latency for every ordered pair of CPUs (waker CPU, waiter CPU), per
//! waiting mechanism, in the paper's two measurement setups, drawn as
//! heatmaps.
//!
//! # What one round measures
//!
//! Two threads are pinned to CPUs `a` and `b`. In each round one of them is
//! the *waiter* (the paper's sleeper): it raises a `ready` flag and waits on a
//! [`WaitWord`] with the mechanism under test. The other, the *waker* (the
//! paper's interrupter), spins until it sees `ready`, waits a short slack so
//! the waiter has really entered its wait (the paper's 300 `nop`s; here
//! [`Config::poll_slack_ns`], [`Config::block_slack_ns`] or a fraction of
//! `L_poll`, see below), stamps `t0`, stores the next value into the word and
//! calls [`WaitWord::wake_one`] (a `futex_wake` only when the waiter sleeps).
//! **Roles alternate every round** (`a` wakes `b`, then `b` wakes `a`), in
//! both setups, as in the paper. In both setups the woken waiter raises a
//! second flag, `back`, and the waker waits for it before it turns waiter
//! for the next round, so every round starts with both threads running:
//! without it a waiter polling for less than a slow wake-up (the two-phase
//! policy, whose `L_poll` is about a microsecond) would block while its
//! waker is still being scheduled, and every later round would start from a
//! sleeping thread.
//!
//! - **normal** (seed 004 Fig. 4.1): the waiter stamps `t1` as soon as its
//!   wait returns; one direction's duration is `t1 - t0`, two stamps taken on
//!   two CPUs. Following the paper, the reported sample is the *average of
//!   two consecutive rounds with opposite directions*:
//!   `((t1_b - t0_a) + (t1_a - t0_b)) / 2`. A constant offset between the two
//!   CPUs' counters enters the two terms with opposite signs and cancels,
//!   so the figure does not depend on the kernel having synchronized the
//!   TSCs. We chose this over reporting `a -> b` alone because it is what
//!   the paper reports and it stays right on machines whose TSCs are
//!   offset; the price is that the normal matrix is symmetric by
//!   construction (cell `(a, b)` = cell `(b, a)`). What the averaging hides
//!   is kept: [`PairLatency::direction_gap_ns`] is half the difference of
//!   the two directions' medians (clock offset plus any real asymmetry), and
//!   the reduced setup shows real asymmetry without any offset.
//!   The waker also stamps after its store and wake, which gives the cost
//!   of sending the wake-up ([`PairLatency::call`], the paper's
//!   `t_wake_stop - t_wake_start`).
//! - **reduced** (seed 004 Fig. 4.6): only the waker reads the clock. After
//!   waking, the waiter raises a second flag (`back`); the waker spins on it
//!   and stamps `t1`. The duration is `t1 - t0`, both stamps on the waker's
//!   CPU: no skew, so each direction is reported on its own and the matrix
//!   is not symmetric. As the paper says, this figure includes the extra
//!   flag hop back to the waker (a cache-line transfer and the waker's spin
//!   noticing it); it is *not* halved, because the two legs are different
//!   operations (a wake-up through the mechanism, then a plain spin flag),
//!   so half of their sum would be neither.
//!
//! Every interval has one clock read's overhead subtracted (seed 004 reads
//! the counter 1001 times to measure it; [`crate::measure`]). Warm-up rounds
//! are dropped, then the first and last 10% of the samples, and the mean,
//! its 95% CI and the median with its 95% CI are reported in ns and cycles;
//! a median whose 95% CI is wider than 20% of it flags the cell as noisy.
//!
//! # Contenders and notify delay
//!
//! `spin`, `pause`, `block`, the default two-phase policy
//! (`Policy::for_kind(SyncKind::ProducerConsumer)`) and the hardware waits
//! `umwait`, `tpause`, `mwaitx`. A hardware wait this CPU lacks is listed as
//! "n/a: CPU lacks WAITPKG" (or MONITORX) and never run. Polling mechanisms
//! are woken [`Config::poll_slack_ns`] after the waiter is ready, `block`
//! [`Config::block_slack_ns`] after (long enough to be asleep in the
//! kernel), and the two-phase policy at [`Config::two_phase_delay_fraction`]
//! of its `L_poll`: inside its polling phase, the responsiveness it promises.
//!
//! # Which CPUs
//!
//! All allowed CPUs ([`CpuChoice::All`]), a list ([`CpuChoice::List`],
//! `--cpus 0-3,8`), or, for the quick run on machines with more than
//! [`REPRESENTATIVE_ABOVE`] CPUs, a representative subset
//! ([`representative_subset`]): the first CPU, its SMT sibling, another core
//! of its package and a CPU of another package. Pairs of a CPU with itself
//! are not measured and show as "n/a" in the heatmaps.

use super::table_parts::NOISY_NOTE;
use super::{not_available_note, progress, ExperimentOutput, RenderedChart};
use crate::chart::Heatmap;
use crate::export::{Cell, Column, Table};
use crate::measure::{clock_name, timing_from_ticks, Timing};
use crate::placement::pin;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use waitwise::mechanism::{Mechanism, WaitpkgState};
use waitwise::policy::{Policy, SyncKind};
use waitwise::{Deadline, WaitWord};
use waitwise_platform::affinity;
use waitwise_platform::clock::cycle_clock;
use waitwise_platform::topology::{parse_cpu_list, CpuListError, Topology};

/// The quick run measures every allowed CPU up to this many; above, a
/// representative subset (guessed: 8 CPUs are 56 ordered pairs, still
/// seconds per mechanism; 64 would be 4032).
pub const REPRESENTATIVE_ABOVE: usize = 8;

/// Fewest CPUs for which the report draws the matrix as heatmaps: below,
/// a 2x2 or 3x3 matrix reads better as the table's rows (a guess about
/// readability, not a measurement).
pub const HEATMAP_MIN_CPUS: usize = 4;

/// Harness spin loops (not the measured waits) yield once per this many
/// polls, so a descheduled partner cannot stall them for a whole time slice
/// (guessed: about a millisecond of PAUSEs, far beyond any measured wake-up
/// except a slow `block`, where one `sched_yield` adds about a microsecond).
const HARNESS_YIELD_EVERY: u32 = 1 << 16;

/// Which CPUs to measure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuChoice {
    /// Every allowed CPU.
    All,
    /// Every allowed CPU up to [`REPRESENTATIVE_ABOVE`]; above, the subset
    /// [`representative_subset`] picks.
    Representative,
    /// These CPUs (validated by [`Config::with_cpu_list`]).
    List(Vec<usize>),
    /// The first `n` allowed CPUs (tests).
    First(usize),
}

/// A `--cpus` list that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpuChoiceError {
    /// The list does not parse.
    #[error("bad CPU list {list:?}: {reason}")]
    Parse {
        /// The list as given.
        list: String,
        /// What is wrong with it (not a `source`: the message already
        /// says it, and error chains would print it twice).
        reason: CpuListError,
    },
    /// A CPU this process may not run on (offline, absent, or outside the
    /// cpuset / affinity mask).
    #[error("CPU {cpu} is not one this process may run on (allowed: {allowed})")]
    NotAllowed {
        /// The CPU.
        cpu: usize,
        /// The allowed CPUs, as a list.
        allowed: String,
    },
    /// Fewer than two CPUs: there is no pair to measure.
    #[error("a wake-up matrix needs at least two CPUs; {list:?} names {count}")]
    TooFew {
        /// The list as given.
        list: String,
        /// How many CPUs it names.
        count: usize,
    },
    /// The allowed CPUs could not be read.
    #[error("cannot read the CPUs this process may run on: {0}")]
    Affinity(String),
}

/// Settings of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// Which CPUs to measure.
    pub cpus: CpuChoice,
    /// Measured samples per cell for polling mechanisms and the two-phase
    /// policy (before the 10% trim at each end).
    pub rounds: usize,
    /// Measured samples per cell for `block` (each round sleeps in the
    /// kernel, so fewer).
    pub block_rounds: usize,
    /// Warm-up rounds per direction before each pair's measurement (dropped).
    pub warmup_rounds: usize,
    /// Delay between seeing the waiter ready and waking it, for polling
    /// mechanisms, ns (the paper's 300 `nop`s of slack).
    pub poll_slack_ns: u64,
    /// The same delay for `block`: long enough for the waiter to be asleep
    /// in `futex_wait`, ns.
    pub block_slack_ns: u64,
    /// The same delay for the two-phase policy, as a fraction of its
    /// `L_poll` (below 1: the notify lands in the polling phase).
    pub two_phase_delay_fraction: f64,
}

impl Config {
    /// Quick: well under 30 s on a 2-vCPU machine; a representative subset
    /// of CPUs on machines with more than [`REPRESENTATIVE_ABOVE`].
    pub fn quick() -> Self {
        Self {
            cpus: CpuChoice::Representative,
            rounds: 500,
            block_rounds: 100,
            warmup_rounds: 20,
            poll_slack_ns: 1_000,
            block_slack_ns: 50_000,
            two_phase_delay_fraction: 0.25,
        }
    }

    /// Paper-sized and larger: every allowed CPU, 1000 samples per cell for
    /// every mechanism (the paper ran 240 rounds, 220 kept).
    pub fn full() -> Self {
        Self {
            cpus: CpuChoice::All,
            rounds: 1000,
            block_rounds: 1000,
            warmup_rounds: 50,
            ..Self::quick()
        }
    }

    /// A tiny configuration for tests: two CPUs, a few rounds.
    pub fn tiny() -> Self {
        Self {
            cpus: CpuChoice::First(2),
            rounds: 12,
            block_rounds: 6,
            warmup_rounds: 2,
            poll_slack_ns: 500,
            block_slack_ns: 20_000,
            two_phase_delay_fraction: 0.25,
        }
    }

    /// This configuration restricted to the CPUs in `list` (`0-3,8`), which
    /// must parse, name at least two CPUs, and name only CPUs this process
    /// may run on.
    ///
    /// # Errors
    /// A [`CpuChoiceError`] saying which of those failed.
    pub fn with_cpu_list(mut self, list: &str) -> Result<Self, CpuChoiceError> {
        let allowed =
            affinity::allowed_cpus().map_err(|e| CpuChoiceError::Affinity(e.to_string()))?;
        self.cpus = CpuChoice::List(validate_cpu_list(list, &allowed)?);
        Ok(self)
    }
}

/// Parses `list` and checks it against `allowed` (see
/// [`Config::with_cpu_list`]).
///
/// # Errors
/// [`CpuChoiceError::Parse`], [`CpuChoiceError::NotAllowed`] or
/// [`CpuChoiceError::TooFew`].
pub fn validate_cpu_list(list: &str, allowed: &[usize]) -> Result<Vec<usize>, CpuChoiceError> {
    let cpus = parse_cpu_list(list).map_err(|reason| CpuChoiceError::Parse {
        list: list.to_owned(),
        reason,
    })?;
    if let Some(&cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(CpuChoiceError::NotAllowed {
            cpu,
            allowed: format_cpu_list(allowed),
        });
    }
    if cpus.len() < 2 {
        return Err(CpuChoiceError::TooFew {
            list: list.to_owned(),
            count: cpus.len(),
        });
    }
    Ok(cpus)
}

/// `[0, 1, 2, 3, 8]` as `0-3,8`.
fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// A representative subset of `allowed` (ascending) for a quick matrix on a
/// big machine, and what each CPU stands for: the first CPU, its SMT
/// sibling, another core in the same package, and a CPU in another package,
/// each when there is one. Without topology: the first four CPUs.
pub fn representative_subset(
    allowed: &[usize],
    topo: Option<&Topology>,
) -> (Vec<usize>, Vec<String>) {
    let Some(&first) = allowed.first() else {
        return (Vec::new(), Vec::new());
    };
    let Some(t) = topo.filter(|t| t.cpu(first).is_some()) else {
        let cpus: Vec<usize> = allowed.iter().copied().take(4).collect();
        let roles = cpus
            .iter()
            .map(|c| format!("cpu{c} (topology unknown)"))
            .collect();
        return (cpus, roles);
    };
    let home = t.cpu(first).expect("checked above");
    let mut picks = vec![(first, format!("cpu{first} (first allowed)"))];
    if let Some(sib) = t.sibling_of(first).filter(|s| allowed.contains(s)) {
        picks.push((sib, format!("cpu{sib} (its SMT sibling)")));
    }
    let on = |pred: &dyn Fn(&waitwise_platform::topology::CpuTopology) -> bool| {
        allowed
            .iter()
            .copied()
            .find(|&c| t.cpu(c).is_some_and(pred))
    };
    if let Some(c) = on(&|x| x.package_id == home.package_id && x.core_id != home.core_id) {
        picks.push((c, format!("cpu{c} (another core, same package)")));
    }
    if let Some(c) = on(&|x| x.package_id != home.package_id) {
        picks.push((c, format!("cpu{c} (another package)")));
    }
    if picks.len() < 2 {
        // One core, one package, no sibling allowed: any second CPU.
        if let Some(&c) = allowed.iter().find(|&&c| c != first) {
            picks.push((c, format!("cpu{c} (second allowed)")));
        }
    }
    picks.sort_by_key(|p| p.0);
    picks.dedup_by_key(|p| p.0);
    picks.into_iter().unzip()
}

/// The two measurement setups of seed 004 section 4.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Setup {
    /// Waker stamps before the wake-up, waiter after it; both directions
    /// averaged to cancel clock skew (seed 004 Fig. 4.1).
    Normal,
    /// The waker takes both stamps: wake-up plus the waiter's flag back
    /// (seed 004 Fig. 4.6).
    Reduced,
}

impl Setup {
    /// Both, in report order.
    pub const ALL: [Setup; 2] = [Setup::Normal, Setup::Reduced];

    /// `"normal"` or `"reduced"`.
    pub fn name(self) -> &'static str {
        match self {
            Setup::Normal => "normal",
            Setup::Reduced => "reduced",
        }
    }
}

/// How a contender's waiter waits, which decides its notify delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// Polls until woken.
    Poll,
    /// Sleeps in the kernel at once.
    Block,
    /// Polls for `L_poll`, then sleeps.
    TwoPhase,
}

/// How the waiter of one contender waits.
#[derive(Clone, Copy, Debug)]
struct Contender {
    policy: Policy,
    kind: WaitKind,
}

impl Contender {
    /// Row name: the mechanism, or the policy for the two-phase one.
    fn name(&self) -> String {
        match self.kind {
            WaitKind::TwoPhase => self.policy.describe(),
            _ => self.policy.mechanism().name().to_string(),
        }
    }
}

/// The contenders, in report order: `spin`, `pause`, `block`, the default
/// two-phase policy, then the hardware waits.
fn contenders() -> Vec<Contender> {
    let poll = |m: Mechanism| Contender {
        policy: Policy::always_spin().with_mechanism(m),
        kind: WaitKind::Poll,
    };
    vec![
        poll(Mechanism::Spin),
        poll(Mechanism::Pause),
        Contender {
            policy: Policy::always_block(),
            kind: WaitKind::Block,
        },
        Contender {
            policy: Policy::for_kind(SyncKind::ProducerConsumer),
            kind: WaitKind::TwoPhase,
        },
        poll(Mechanism::Umwait(WaitpkgState::C02)),
        poll(Mechanism::Tpause),
        poll(Mechanism::Mwaitx),
    ]
}

/// One ordered pair's figures in one setup.
#[derive(Clone, Debug, Serialize)]
pub struct PairLatency {
    /// The CPU that wakes.
    pub waker_cpu: usize,
    /// The CPU that waits.
    pub waiter_cpu: usize,
    /// How the two CPUs relate: "SMT siblings", "same package",
    /// "other package" or "topology unknown".
    pub relation: String,
    /// Wake-up latency (normal: both directions averaged, so equal to the
    /// reverse pair's; reduced: this direction, including the flag back).
    pub latency: Option<Timing>,
    /// Normal setup only: time the waker spends in the store and
    /// `wake_one` (the paper's `t_wake_stop - t_wake_start`), this direction.
    pub call: Option<Timing>,
    /// Normal setup only: half of (median of this direction - median of the
    /// reverse), ns, each direction's stamps taken on two CPUs: clock offset
    /// between the CPUs plus any real asymmetry. The averaged latency is
    /// free of it.
    pub direction_gap_ns: Option<f64>,
}

/// One contender in one setup.
#[derive(Clone, Debug, Serialize)]
pub struct SetupResult {
    /// Which setup.
    pub setup: Setup,
    /// Measured samples per cell, before trimming.
    pub rounds: usize,
    /// Delay between the waiter being ready and the wake-up, ns.
    pub notify_delay_ns: f64,
    /// One entry per ordered pair of distinct CPUs, waker-major.
    pub pairs: Vec<PairLatency>,
}

/// One contender's results.
#[derive(Clone, Debug, Serialize)]
pub struct MechanismMatrix {
    /// Row name: the mechanism (`spin`, `umwait`) or the policy
    /// (`s/b/0.54 (pause)`).
    pub name: String,
    /// The waitwise policy the waiter ran (`s//inf`, `/b/0`, `s/b/0.54`).
    pub policy: String,
    /// How the waiter waits.
    pub kind: WaitKind,
    /// Why it did not run ("n/a: CPU lacks WAITPKG"), if it did not.
    pub not_available: Option<String>,
    /// Normal then reduced; empty when not available.
    pub setups: Vec<SetupResult>,
}

impl MechanismMatrix {
    /// The results of `setup`, if it ran.
    pub fn setup(&self, setup: Setup) -> Option<&SetupResult> {
        self.setups.iter().find(|s| s.setup == setup)
    }
}

/// The experiment's result.
#[derive(Clone, Debug, Serialize)]
pub struct WakeupMatrixResult {
    /// The settings used.
    pub config: Config,
    /// The CPUs measured, ascending (the heatmaps' axes).
    pub cpus: Vec<usize>,
    /// How they were chosen, in words.
    pub cpu_selection: String,
    /// What the cycles columns count: `"tsc"` or `"monotonic"`.
    pub clock: &'static str,
    /// The clock read overhead subtracted from every interval, in ticks.
    pub clock_overhead_ticks: u64,
    /// The default two-phase policy's `L_poll`, ns.
    pub default_poll_limit_ns: f64,
    /// One entry per contender, available or not.
    pub mechanisms: Vec<MechanismMatrix>,
}

/// The CPUs `config` asks for, and how they were chosen. CPUs not allowed
/// (any more) are left out and said so, never a panic.
fn select_cpus(choice: &CpuChoice) -> (Vec<usize>, String) {
    let allowed = match affinity::allowed_cpus() {
        Ok(a) => a,
        Err(e) => return (Vec::new(), format!("cannot read the allowed CPUs: {e}")),
    };
    let all = format_cpu_list(&allowed);
    match choice {
        CpuChoice::All => (
            allowed.clone(),
            format!(
                "every allowed CPU ({all}): {} ordered pairs",
                pairs(allowed.len())
            ),
        ),
        CpuChoice::First(n) => {
            let cpus: Vec<usize> = allowed.iter().copied().take(*n).collect();
            let text = format!(
                "the first {} allowed CPUs ({})",
                cpus.len(),
                format_cpu_list(&cpus)
            );
            (cpus, text)
        }
        CpuChoice::List(list) => {
            let (cpus, gone): (Vec<usize>, Vec<usize>) =
                list.iter().partition(|c| allowed.contains(c));
            let mut text = format!("CPUs {} as asked", format_cpu_list(&cpus));
            if !gone.is_empty() {
                text.push_str(&format!(
                    "; left out, not allowed: {}",
                    format_cpu_list(&gone)
                ));
            }
            (cpus, text)
        }
        CpuChoice::Representative if allowed.len() <= REPRESENTATIVE_ABOVE => (
            allowed.clone(),
            format!(
                "every allowed CPU ({all}): {} ordered pairs",
                pairs(allowed.len())
            ),
        ),
        CpuChoice::Representative => {
            let topo = Topology::current().ok();
            let (cpus, roles) = representative_subset(&allowed, topo.as_ref());
            let text = format!(
                "representative subset of the {} allowed CPUs: {}; pass --cpus LIST or --full for more",
                allowed.len(),
                roles.join(", ")
            );
            (cpus, text)
        }
    }
}

/// Number of ordered pairs of distinct CPUs among `n`.
fn pairs(n: usize) -> usize {
    n * n.saturating_sub(1)
}

/// How CPUs `a` and `b` relate.
fn relation(topo: Option<&Topology>, a: usize, b: usize) -> String {
    match topo.and_then(|t| Some((t.cpu(a)?, t.cpu(b)?))) {
        None => "topology unknown".into(),
        Some((x, y)) if x.thread_siblings.contains(&b) || y.thread_siblings.contains(&a) => {
            "SMT siblings".into()
        }
        Some((x, y)) if x.package_id == y.package_id => "same package".into(),
        Some(_) => "other package".into(),
    }
}

/// A 64-bit flag on its own cache line.
#[repr(align(128))]
struct Flag(AtomicU64);

/// What the two threads of one pair share.
struct Shared {
    /// The word the waiter waits on; round `r` stores `r + 1`.
    word: WaitWord,
    /// The waiter's "about to wait" flag: round `r` stores `r + 1`.
    ready: Flag,
    /// Reduced setup: the waiter's "running again" flag, `r + 1`.
    back: Flag,
}

/// One thread's stamps, indexed by round (entries of rounds where it had
/// the other role stay 0).
struct SideLog {
    /// As waker: `t0`, just before the store.
    wake_start: Vec<u64>,
    /// As waker, normal setup: ticks in the store and `wake_one`.
    call: Vec<u64>,
    /// As waker, reduced setup: `t1 - t0` after the flag back.
    round_trip: Vec<u64>,
    /// As waiter: `t1`, as soon as the wait returned (used by the normal
    /// setup).
    woke: Vec<u64>,
}

/// Spins until `done()`, yielding once per [`HARNESS_YIELD_EVERY`] polls
/// (harness waits only).
#[inline]
fn spin_until(done: impl FnMut() -> bool) {
    crate::harness_wait::spin_until(HARNESS_YIELD_EVERY, done);
}

/// Thread `me` (0 on CPU `a`, 1 on CPU `b`) of one pair run. In round `r`
/// thread `r % 2 == me` wakes and the other waits: even rounds `a -> b`,
/// odd rounds `b -> a`.
fn side(
    me: usize,
    shared: &Shared,
    policy: &Policy,
    setup: Setup,
    slack_ticks: u64,
    total: usize,
) -> SideLog {
    let clock = cycle_clock();
    let mut log = SideLog {
        wake_start: vec![0; total],
        call: vec![0; total],
        round_trip: vec![0; total],
        woke: vec![0; total],
    };
    for r in 0..total {
        let tag = r as u64 + 1;
        let word_tag = tag as u32;
        if r % 2 != me {
            // Waiter. Release: the waker that sees `ready` also sees our
            // previous round's bookkeeping (none it reads; kept simple).
            shared.ready.0.store(tag, Ordering::Release);
            shared
                .word
                .wait_until(policy, Deadline::NEVER, |v| v >= word_tag);
            log.woke[r] = clock.end();
            // Release: pairs with the waker's Acquire spin. Both setups
            // raise this flag: the next round (in which the waker becomes
            // the waiter) starts only once we run again, else a waiter
            // that polls for less than a slow wake-up would block, and
            // every later round would start from a sleeping thread.
            shared.back.0.store(tag, Ordering::Release);
        } else {
            spin_until(|| shared.ready.0.load(Ordering::Acquire) == tag);
            let end = clock.now().saturating_add(slack_ticks);
            while clock.now() < end {
                std::hint::spin_loop();
            }
            let t0 = clock.start();
            // SeqCst store then `wake_one`: the WaitWord protocol (a sleeper
            // registered before our store is seen by `wake_one`).
            shared.word.value().store(word_tag, Ordering::SeqCst);
            shared.word.wake_one();
            if setup == Setup::Normal {
                log.call[r] = clock.end().saturating_sub(t0);
            }
            // Acquire: pairs with the waiter's Release store of `back`.
            spin_until(|| shared.back.0.load(Ordering::Acquire) == tag);
            if setup == Setup::Reduced {
                log.round_trip[r] = clock.end().saturating_sub(t0);
            }
            log.wake_start[r] = t0;
        }
    }
    log
}

/// Raw results of one unordered pair in one setup, per direction.
struct PairRaw {
    /// Normal: averaged samples (both directions); reduced: `a -> b`.
    ab: Vec<u64>,
    /// Reduced: `b -> a` (normal: unused).
    ba: Vec<u64>,
    /// Normal: call ticks `a -> b`, `b -> a`.
    call_ab: Vec<u64>,
    call_ba: Vec<u64>,
    /// Normal: signed one-direction durations, for the direction gap.
    dir_ab: Vec<i64>,
    dir_ba: Vec<i64>,
}

/// Runs `warmup + rounds` rounds in each direction between CPUs `a` and `b`.
fn run_pair(
    a: usize,
    b: usize,
    policy: &Policy,
    setup: Setup,
    slack_ns: f64,
    warmup: usize,
    rounds: usize,
) -> PairRaw {
    let total = 2 * (warmup + rounds);
    let shared = Shared {
        word: WaitWord::new(0),
        ready: Flag(AtomicU64::new(0)),
        back: Flag(AtomicU64::new(0)),
    };
    let slack_ticks = cycle_clock().ns_to_ticks(slack_ns.max(0.0) as u64);
    let (la, lb) = std::thread::scope(|s| {
        let shared = &shared;
        let ta = s.spawn(move || {
            pin(Some(a));
            side(0, shared, policy, setup, slack_ticks, total)
        });
        let tb = s.spawn(move || {
            pin(Some(b));
            side(1, shared, policy, setup, slack_ticks, total)
        });
        (
            ta.join().expect("wake-up matrix thread panicked"),
            tb.join().expect("wake-up matrix thread panicked"),
        )
    });
    let mut raw = PairRaw {
        ab: Vec::with_capacity(rounds),
        ba: Vec::with_capacity(rounds),
        call_ab: Vec::with_capacity(rounds),
        call_ba: Vec::with_capacity(rounds),
        dir_ab: Vec::with_capacity(rounds),
        dir_ba: Vec::with_capacity(rounds),
    };
    for k in warmup..warmup + rounds {
        let (even, odd) = (2 * k, 2 * k + 1);
        match setup {
            Setup::Normal => {
                // Signed: with offset TSCs one direction may be negative.
                let ab = lb.woke[even] as i64 - la.wake_start[even] as i64;
                let ba = la.woke[odd] as i64 - lb.wake_start[odd] as i64;
                raw.dir_ab.push(ab);
                raw.dir_ba.push(ba);
                raw.ab.push(((ab + ba) / 2).max(0) as u64);
                raw.call_ab.push(la.call[even]);
                raw.call_ba.push(lb.call[odd]);
            }
            Setup::Reduced => {
                raw.ab.push(la.round_trip[even]);
                raw.ba.push(lb.round_trip[odd]);
            }
        }
    }
    raw
}

/// Median of signed tick counts (robust to the rare preempted round).
fn median(v: &[i64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2] as f64),
        n => Some((v[n / 2 - 1] as f64 + v[n / 2] as f64) / 2.0),
    }
}

/// Runs one contender in one setup over every pair of `cpus`.
fn run_setup(
    c: &Contender,
    setup: Setup,
    cpus: &[usize],
    topo: Option<&Topology>,
    config: &Config,
    poll_limit_ns: f64,
) -> SetupResult {
    let (rounds, notify_delay_ns) = match c.kind {
        WaitKind::Poll => (config.rounds, config.poll_slack_ns as f64),
        WaitKind::Block => (config.block_rounds, config.block_slack_ns as f64),
        WaitKind::TwoPhase => (
            config.rounds,
            poll_limit_ns * config.two_phase_delay_fraction,
        ),
    };
    let mut pairs = Vec::with_capacity(cpus.len() * cpus.len().saturating_sub(1));
    for (i, &a) in cpus.iter().enumerate() {
        for &b in &cpus[i + 1..] {
            let raw = run_pair(
                a,
                b,
                &c.policy,
                setup,
                notify_delay_ns,
                config.warmup_rounds,
                rounds,
            );
            let clock = cycle_clock();
            let pair =
                |waker: usize, waiter: usize, latency: &[u64], call: &[u64], gap: Option<f64>| {
                    PairLatency {
                        waker_cpu: waker,
                        waiter_cpu: waiter,
                        relation: relation(topo, waker, waiter),
                        latency: timing_from_ticks(latency),
                        call: timing_from_ticks(call),
                        direction_gap_ns: gap,
                    }
                };
            let gap = match (median(&raw.dir_ab), median(&raw.dir_ba)) {
                (Some(x), Some(y)) => Some(clock.ticks_to_ns(1) * (x - y) / 2.0),
                _ => None,
            };
            match setup {
                Setup::Normal => {
                    pairs.push(pair(a, b, &raw.ab, &raw.call_ab, gap));
                    pairs.push(pair(b, a, &raw.ab, &raw.call_ba, gap.map(|g| -g)));
                }
                Setup::Reduced => {
                    pairs.push(pair(a, b, &raw.ab, &[], None));
                    pairs.push(pair(b, a, &raw.ba, &[], None));
                }
            }
        }
    }
    pairs.sort_by_key(|p| (p.waker_cpu, p.waiter_cpu));
    SetupResult {
        setup,
        rounds,
        notify_delay_ns,
        pairs,
    }
}

/// Runs the experiment. Never panics on the CPU choice: CPUs that are not
/// allowed are left out (and said so), and fewer than two CPUs give a
/// result without pairs.
pub fn run(config: &Config) -> WakeupMatrixResult {
    let (cpus, cpu_selection) = select_cpus(&config.cpus);
    let topo = Topology::current().ok();
    let default_poll_limit_ns = Policy::for_kind(SyncKind::ProducerConsumer)
        .poll_limit_ns()
        .unwrap_or(0.0);
    let all = contenders();
    let steps = all.len() * Setup::ALL.len();
    let mut mechanisms = Vec::with_capacity(all.len());
    for (i, c) in all.iter().enumerate() {
        let name = c.name();
        let availability = c.policy.mechanism().availability();
        let not_available = (!availability.available).then(|| {
            format!(
                "n/a: {}",
                availability
                    .reason
                    .unwrap_or_else(|| "not available".into())
            )
        });
        let mut setups = Vec::new();
        for (j, setup) in Setup::ALL.into_iter().enumerate() {
            let step = i * Setup::ALL.len() + j + 1;
            if let Some(na) = &not_available {
                progress(
                    "wakeup-matrix",
                    step,
                    steps,
                    &format!("{name} {}: {na}", setup.name()),
                );
                continue;
            }
            progress(
                "wakeup-matrix",
                step,
                steps,
                &format!(
                    "{name}, {} setup, {} pairs",
                    setup.name(),
                    pairs(cpus.len())
                ),
            );
            if cpus.len() >= 2 {
                setups.push(run_setup(
                    c,
                    setup,
                    &cpus,
                    topo.as_ref(),
                    config,
                    default_poll_limit_ns,
                ));
            }
        }
        mechanisms.push(MechanismMatrix {
            name,
            policy: c.policy.name(),
            kind: c.kind,
            not_available,
            setups,
        });
    }
    WakeupMatrixResult {
        config: config.clone(),
        cpus,
        cpu_selection,
        clock: clock_name(),
        clock_overhead_ticks: cycle_clock().read_overhead_ticks(),
        default_poll_limit_ns,
        mechanisms,
    }
}

/// `v` ns for a note: `273 ns`, `25.3 us`, `1.02 ms`.
fn format_ns(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1} us", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

impl WakeupMatrixResult {
    /// The contender named `name`.
    pub fn mechanism(&self, name: &str) -> Option<&MechanismMatrix> {
        self.mechanisms.iter().find(|m| m.name == name)
    }

    /// Mean latency over all pairs of `name` in `setup`, ns (each pair's
    /// mean, averaged).
    pub fn mean_over_pairs_ns(&self, name: &str, setup: Setup) -> Option<f64> {
        let s = self.mechanism(name)?.setup(setup)?;
        let v: Vec<f64> = s
            .pairs
            .iter()
            .filter_map(|p| p.latency.as_ref().map(|t| t.ns.mean))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// The heatmap of one contender in one setup: columns wakers, rows
    /// waiters, mean ns; the diagonal is n/a.
    pub fn heatmap(&self, m: &MechanismMatrix, s: &SetupResult) -> Heatmap {
        let ticks: Vec<String> = self.cpus.iter().map(|c| c.to_string()).collect();
        let values = self
            .cpus
            .iter()
            .map(|&waiter| {
                self.cpus
                    .iter()
                    .map(|&waker| {
                        s.pairs
                            .iter()
                            .find(|p| p.waker_cpu == waker && p.waiter_cpu == waiter)
                            .and_then(|p| p.latency.as_ref())
                            .map(|t| t.ns.mean)
                    })
                    .collect()
            })
            .collect();
        Heatmap {
            title: format!(
                "Wake-up latency, {}, {} setup (mean)",
                m.name,
                s.setup.name()
            ),
            x_label: "waker CPU".into(),
            y_label: "waiter CPU".into(),
            x_ticks: ticks.clone(),
            y_ticks: ticks,
            values,
            unit: "ns".into(),
        }
    }
}

impl WakeupMatrixResult {
    /// One heatmap per mechanism and setup that ran, whatever the number of
    /// CPUs.
    pub fn heatmaps(&self) -> Vec<RenderedChart> {
        let mut charts = Vec::new();
        for m in &self.mechanisms {
            for s in &m.setups {
                let map = self.heatmap(m, s);
                let caption = match s.setup {
                    Setup::Normal => format!(
                        "{}: wake-up latency (mean ns), normal setup: waker stamps before the wake-up, waiter after; both directions averaged, so the matrix is symmetric",
                        m.name
                    ),
                    Setup::Reduced => format!(
                        "{}: wake-up latency (mean ns), reduced setup: the waker takes both stamps; includes the waiter's flag back",
                        m.name
                    ),
                };
                match map.to_svg() {
                    Ok(svg) => charts.push(RenderedChart { caption, svg }),
                    Err(e) => eprintln!("waitwise: heatmap {}: {e}", map.title),
                }
            }
        }
        charts
    }
}

impl WakeupMatrixResult {
    /// Per setup, each mechanism's mean over the pairs.
    fn mean_notes(&self) -> Vec<String> {
        let mut n = Vec::new();
        for setup in Setup::ALL {
            let means: Vec<String> = self
                .mechanisms
                .iter()
                .filter_map(|m| {
                    self.mean_over_pairs_ns(&m.name, setup)
                        .map(|v| format!("{} {}", m.name, format_ns(v)))
                })
                .collect();
            if !means.is_empty() {
                n.push(format!(
                    "Mean over pairs, {} setup: {}.",
                    setup.name(),
                    means.join(", ")
                ));
            }
        }
        n
    }

    /// The largest gap between a pair's two directions, from the first
    /// polling mechanism.
    fn direction_gap_note(&self) -> Option<String> {
        // The offset between two CPUs' clocks is common to every
        // mechanism; report it from the first polling one (the cleanest
        // figure: block's directions differ by scheduling noise).
        let m = self
            .mechanisms
            .iter()
            .find(|m| m.kind == WaitKind::Poll && !m.setups.is_empty())?;
        let g = m
            .setup(Setup::Normal)
            .into_iter()
            .flat_map(|s| s.pairs.iter())
            .filter_map(|p| p.direction_gap_ns)
            .fold(None, |acc: Option<f64>, g| {
                Some(acc.map_or(g.abs(), |a| a.max(g.abs())))
            })?;
        Some(format!(
            "Largest half-difference between the two directions' medians, {}, normal setup: {g:.0} ns (clock offset between the CPUs plus real asymmetry; averaged out of the figures).",
            m.name
        ))
    }
}

impl ExperimentOutput for WakeupMatrixResult {
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "wakeup_matrix",
            "Wake-up latency per ordered CPU pair, mechanism and setup (Poenaru 2017, section 4.1)",
            vec![
                Column::new("waker_cpu", None, "CPU that stores and wakes"),
                Column::new("waiter_cpu", None, "CPU that waits"),
                Column::new("relation", None, "how the two CPUs relate"),
                Column::new("mechanism", None, "how the waiter waits (mechanism or policy)"),
                Column::new("setup", None, "normal (both directions averaged) or reduced (waker's clock only, includes the flag back)"),
                Column::new("mean", Some("ns"), "mean wake-up latency after trimming"),
                Column::new("mean_ci95", Some("ns"), "half-width of the 95% CI of the mean"),
                Column::new("median", Some("ns"), "median wake-up latency"),
                Column::new("median_ci95", Some("ns"), "half the width of the 95% CI of the median (order statistics)"),
                Column::new("mean", Some("cycles"), "mean wake-up latency in TSC cycles (the ns figure at the TSC rate)"),
                Column::new("call_median", Some("ns"), "normal setup: median time in the store and wake_one"),
                Column::new("samples", None, "samples summarized (after trimming)"),
                Column::new("noisy", None, "yes when the median's 95% CI is wider than 20% of the median"),
            ],
        );
        for m in &self.mechanisms {
            if let Some(na) = &m.not_available {
                for setup in Setup::ALL {
                    let mut row = vec![Cell::missing(na.clone()); 3];
                    row.push(Cell::text(&m.name));
                    row.push(Cell::text(setup.name()));
                    row.extend(std::iter::repeat_n(Cell::missing(na.clone()), 8));
                    t.push_row(row, Some(na.clone()));
                }
                continue;
            }
            for s in &m.setups {
                for p in &s.pairs {
                    let mut row = vec![
                        Cell::Integer(p.waker_cpu as i64),
                        Cell::Integer(p.waiter_cpu as i64),
                        Cell::text(&p.relation),
                        Cell::text(&m.name),
                        Cell::text(s.setup.name()),
                    ];
                    let call = match (s.setup, p.call.as_ref()) {
                        (Setup::Reduced, _) => Cell::missing("reduced setup: not measured"),
                        (_, Some(c)) => Cell::Number(c.ns.median),
                        (_, None) => Cell::missing("no data"),
                    };
                    let note = match &p.latency {
                        Some(l) => {
                            let noisy = l.ns.is_noisy();
                            row.extend([
                                Cell::Number(l.ns.mean),
                                Cell::Number(l.ns.ci95_width() / 2.0),
                                Cell::Number(l.ns.median),
                                Cell::Number(l.ns.median_ci95_half_width()),
                                Cell::Number(l.cycles.mean),
                                call,
                                Cell::Integer(l.ns.n as i64),
                                Cell::text(if noisy { "yes" } else { "no" }),
                            ]);
                            noisy.then(|| NOISY_NOTE.to_string())
                        }
                        None => {
                            row.extend(std::iter::repeat_n(Cell::missing("no data"), 5));
                            row.extend([call, Cell::Integer(0), Cell::missing("no data")]);
                            Some("no samples".to_string())
                        }
                    };
                    t.push_row(row, note);
                }
            }
        }
        vec![t]
    }

    /// One heatmap per mechanism and setup, when at least
    /// [`HEATMAP_MIN_CPUS`] CPUs were measured; none below (the table holds
    /// every pair).
    fn charts(&self) -> Vec<RenderedChart> {
        if self.cpus.len() >= HEATMAP_MIN_CPUS {
            self.heatmaps()
        } else {
            Vec::new()
        }
    }

    fn notes(&self) -> Vec<String> {
        let mut n = vec![format!("CPUs: {}.", self.cpu_selection)];
        if self.cpus.len() < 2 {
            n.push("Fewer than two CPUs: no pair to measure.".into());
        }
        if (2..HEATMAP_MIN_CPUS).contains(&self.cpus.len()) {
            n.push(format!(
                "{} CPUs: the matrix is the table's rows; heatmaps are drawn from {HEATMAP_MIN_CPUS} CPUs on.",
                self.cpus.len()
            ));
        }
        n.push(
            "Normal setup: each sample averages a->b and b->a from consecutive rounds (Poenaru 2017), cancelling any clock offset between CPUs; reduced setup: the waker's own clock, one direction, including the waiter's flag back (not halved).".into(),
        );
        let na: Vec<&str> = self
            .mechanisms
            .iter()
            .filter(|m| m.not_available.is_some())
            .map(|m| m.name.as_str())
            .collect();
        n.extend(not_available_note(&na));
        let c = &self.config;
        n.push(format!(
            "Notify delay after the waiter is ready: {} ns for polling, {:.0} us for block, {:.2} of L_poll ({:.0} of {:.0} ns) for the two-phase policy.",
            c.poll_slack_ns,
            c.block_slack_ns as f64 / 1e3,
            c.two_phase_delay_fraction,
            c.two_phase_delay_fraction * self.default_poll_limit_ns,
            self.default_poll_limit_ns
        ));
        n.extend(self.mean_notes());
        n.extend(self.direction_gap_note());
        let noisy = self
            .mechanisms
            .iter()
            .flat_map(|m| m.setups.iter())
            .flat_map(|s| s.pairs.iter())
            .filter(|p| p.latency.as_ref().is_some_and(|l| l.ns.is_noisy()))
            .count();
        if noisy > 0 {
            n.push(format!(
                "{noisy} cells are noisy (median 95% CI wider than 20% of the median)."
            ));
        }
        n.push(format!(
            "Clock: {}, {} ticks of read overhead subtracted per interval.",
            self.clock, self.clock_overhead_ticks
        ));
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use waitwise_platform::topology::CpuTopology;

    /// The table's header has every figure of a cell.
    fn assert_has_keys(t: &Table) {
        let keys = t.header_keys();
        for k in [
            "waker_cpu",
            "waiter_cpu",
            "mechanism",
            "setup",
            "mean_ns",
            "mean_ci95_ns",
            "median_ns",
            "median_ci95_ns",
            "mean_cycles",
            "noisy",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} missing from {keys:?}");
        }
    }

    #[test]
    fn tiny_run_fills_the_table_and_heatmaps() {
        let res = run(&Config::tiny());
        let tables = res.tables();
        assert_eq!(tables.len(), 1);
        let t = &tables[0];
        crate::export::agreement::assert_exports_agree(t);
        assert_eq!(t.name, "wakeup_matrix");
        assert_has_keys(t);
        let json = serde_json::to_value(&res).unwrap();
        for key in ["config", "cpus", "cpu_selection", "mechanisms", "clock"] {
            assert!(json.get(key).is_some(), "{key}");
        }
        for name in ["spin", "pause", "block", "umwait", "tpause", "mwaitx"] {
            assert!(res.mechanism(name).is_some(), "{name} not listed");
        }
        let two = res.cpus.len() >= 2;
        let mut ran = 0;
        for m in &res.mechanisms {
            let c = contenders()
                .into_iter()
                .find(|c| c.name() == m.name)
                .unwrap();
            let available = c.policy.mechanism().availability().available;
            if !available {
                // Listed as n/a, never run.
                let na = m.not_available.as_deref().unwrap();
                assert!(na.starts_with("n/a: "), "{na}");
                assert!(m.setups.is_empty());
                let rows: Vec<_> = t
                    .rows
                    .iter()
                    .filter(|r| r[3] == Cell::text(&m.name))
                    .collect();
                assert_eq!(rows.len(), 2);
                assert!(rows.iter().all(|r| r[5].is_missing()));
                continue;
            }
            assert!(m.not_available.is_none());
            if two {
                assert_eq!(m.setups.len(), 2, "{}", m.name);
                for s in &m.setups {
                    assert_eq!(s.pairs.len(), 2);
                    for p in &s.pairs {
                        assert_ne!(p.waker_cpu, p.waiter_cpu);
                        assert!(p.latency.is_some(), "{} {:?}", m.name, s.setup);
                    }
                }
                ran += 2;
            }
        }
        if two {
            assert!(ran >= 8, "spin, pause, block and two-phase in both setups");
        }
        let charts = res.heatmaps();
        assert_eq!(charts.len(), ran);
        // The report draws them only from HEATMAP_MIN_CPUS CPUs on.
        assert_eq!(
            res.charts().len(),
            if res.cpus.len() >= HEATMAP_MIN_CPUS {
                ran
            } else {
                0
            }
        );
        for c in &charts {
            assert!(c.svg.starts_with("<svg"));
            assert!(c.svg.contains("waker CPU") && c.svg.contains("waiter CPU"));
            assert!(c.svg.contains("n/a"), "the diagonal is n/a");
        }
        assert!(!res.notes().is_empty());
    }

    #[test]
    fn cpu_lists_are_validated() {
        let allowed = [0, 1, 2, 3];
        assert_eq!(validate_cpu_list("0-1,3", &allowed).unwrap(), vec![0, 1, 3]);
        assert!(matches!(
            validate_cpu_list("0-", &allowed),
            Err(CpuChoiceError::Parse { .. })
        ));
        assert!(matches!(
            validate_cpu_list("3-1", &allowed),
            Err(CpuChoiceError::Parse { .. })
        ));
        let e = validate_cpu_list("0,9", &allowed).unwrap_err();
        assert_eq!(
            e,
            CpuChoiceError::NotAllowed {
                cpu: 9,
                allowed: "0-3".into()
            }
        );
        assert!(e.to_string().contains("CPU 9"));
        assert!(matches!(
            validate_cpu_list("2", &allowed),
            Err(CpuChoiceError::TooFew { count: 1, .. })
        ));
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    }

    fn cpu(cpu: usize, core_id: u32, package_id: u32, siblings: &[usize]) -> CpuTopology {
        CpuTopology {
            cpu,
            core_id,
            package_id,
            node: Some(package_id),
            thread_siblings: siblings.to_vec(),
        }
    }

    #[test]
    fn representative_subset_covers_sibling_core_and_package() {
        // 2 packages x 4 cores x 2 threads; cpu n and n+8 are siblings.
        let cpus: Vec<CpuTopology> = (0..16)
            .map(|c| {
                let core = c % 8;
                cpu(c, (core % 4) as u32, (core / 4) as u32, &[core, core + 8])
            })
            .collect();
        let topo = Topology {
            online: (0..16).collect(),
            cpus,
        };
        let allowed: Vec<usize> = (0..16).collect();
        let (subset, roles) = representative_subset(&allowed, Some(&topo));
        assert_eq!(subset, vec![0, 1, 4, 8]);
        assert_eq!(roles.len(), 4);
        assert!(roles.iter().any(|r| r.contains("SMT sibling")));
        assert!(roles.iter().any(|r| r.contains("another package")));
        assert_eq!(relation(Some(&topo), 0, 8), "SMT siblings");
        assert_eq!(relation(Some(&topo), 0, 1), "same package");
        assert_eq!(relation(Some(&topo), 0, 4), "other package");
        // Without topology: the first four.
        assert_eq!(representative_subset(&allowed, None).0, vec![0, 1, 2, 3]);
        assert!(representative_subset(&[], None).0.is_empty());
    }
}
