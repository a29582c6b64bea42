//! The machine probe: what this machine offers for waiting, and what waiting
//! costs here, as plain data.
//!
//! [`run`] gathers the CPU features, the topology, the cycle clock, a few
//! measured costs, `B`, the default poll limits and which mechanisms run as
//! asked. The `waitwise probe` command prints it as a table or as JSON, and
//! the C ABI's `waitwise_probe_json` returns the same JSON. With the `serde`
//! feature every type here serializes with stable keys (documented in the
//! README):
//!
//! `cpu.model`, `cpu.vendor`, `features.waitpkg`, `features.monitorx`,
//! `features.invariant_tsc`, `topology.cpus`, `topology.cores`,
//! `topology.packages`, `topology.numa_nodes`, `topology.smt_siblings`,
//! `clock.tsc_hz`, `clock.read_overhead_ns`, `costs.pause_ns`,
//! `costs.yield_ns`, `costs.futex_wake_no_waiter_ns`,
//! `costs.spin_round_trip_ns`, `costs.futex_round_trip_ns`,
//! `costs.block_ns` (B), `policy.poll_limit_ns` (kind -> L_poll),
//! `mechanisms` (name -> {available, fallback}),
//! `wake_placement.counted`, `wake_placement.beside_waker`.
//!
//! `costs.block_stability` says whether the measured `B` can be trusted
//! ([`block_stability`]); `wake_placement` whether this scheduler runs a
//! woken thread beside its waker ([`wake_placement`]), which makes
//! threads that sleep and wake each other share one CPU.
//!
//! The whole probe takes well under 5 seconds (the wake placement about
//! [`WAKE_UPS`](wake_placement::WAKE_UPS) times
//! [`IDLE_BEFORE_WAKE`](wake_placement::IDLE_BEFORE_WAKE); the round trips are budgeted
//! at [`CALIBRATION_BUDGET`](block_cost::CALIBRATION_BUDGET) per measurement, at most
//! [`block_stability::MAX_MEASUREMENTS`] of them, each cost loop at a few
//! ms).

pub mod block_stability;
pub mod wake_placement;

use crate::env;
use crate::mechanism::Mechanism;
use crate::policy::block_cost::{self, BlockCostSource};
use crate::policy::{Policy, SyncKind};
use block_stability::BlockStability;
use std::collections::BTreeMap;
use std::time::Instant;
use waitwise_platform::affinity;
use waitwise_platform::clock::{cycle_clock, ClockSource};
use waitwise_platform::features;
use waitwise_platform::futex::Futex;
use waitwise_platform::thread;
use waitwise_platform::topology::{Topology, TopologyError};

/// PAUSE instructions timed per batch for [`Costs::pause_ns`]. Guessed: a
/// few ms of work, long enough to swamp the clock reads.
const PAUSE_OPS: u32 = 20_000;
/// `sched_yield()` calls timed per batch for [`Costs::yield_ns`]. Guessed,
/// as [`PAUSE_OPS`].
const YIELD_OPS: u32 = 2_000;
/// Waiter-less `futex_wake` calls timed per batch for
/// [`Costs::futex_wake_no_waiter_ns`]. Guessed, as [`PAUSE_OPS`].
const FUTEX_WAKE_OPS: u32 = 5_000;
/// Batches per cost; the median batch is the figure.
const BATCHES: usize = 5;

/// The probe's findings.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Probe {
    /// The processor.
    pub cpu: CpuInfo,
    /// Waiting-related CPU features.
    pub features: FeatureInfo,
    /// Machine topology.
    pub topology: TopologyInfo,
    /// The cycle clock.
    pub clock: ClockInfo,
    /// Measured costs, ns.
    pub costs: Costs,
    /// Poll limits of the default policies.
    pub policy: PolicyInfo,
    /// Every mechanism: runs here, or what runs instead.
    pub mechanisms: BTreeMap<&'static str, MechanismInfo>,
    /// Where woken threads run: beside their wakers or not
    /// ([`wake_placement`]); `None` on one allowed CPU.
    pub wake_placement: Option<wake_placement::WakePlacement>,
    /// The rejected `WAITWISE_*` values, one message each (empty when all
    /// is well; [`crate::env::errors`]).
    pub env_errors: Vec<String>,
}

/// `cpu.*`
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CpuInfo {
    /// Brand string.
    pub model: String,
    /// "Intel", "AMD", or the raw vendor string.
    pub vendor: String,
}

/// `features.*`
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FeatureInfo {
    /// UMONITOR/UMWAIT/TPAUSE.
    pub waitpkg: bool,
    /// MONITORX/MWAITX.
    pub monitorx: bool,
    /// Invariant TSC.
    pub invariant_tsc: bool,
    /// Bytes a monitored word owns.
    pub monitor_line_bytes: u32,
}

/// `topology.*`
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TopologyInfo {
    /// Online CPUs.
    pub cpus: usize,
    /// Physical cores.
    pub cores: usize,
    /// Packages (sockets).
    pub packages: usize,
    /// NUMA nodes.
    pub numa_nodes: usize,
    /// Sets of SMT siblings (empty without SMT).
    pub smt_siblings: Vec<Vec<usize>>,
    /// CPUs this process may run on.
    pub allowed_cpus: Vec<usize>,
}

/// `clock.*`
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ClockInfo {
    /// What the clock reads: "tsc" or "monotonic" (no invariant TSC, or
    /// its rate not learned yet).
    pub source: &'static str,
    /// The TSC's frequency; 1e9 for the monotonic clock.
    pub tsc_hz: u64,
    /// Whether the TSC frequency came from CPUID (else learned against the
    /// monotonic clock while the process ran).
    pub tsc_hz_from_cpuid: bool,
    /// Median cost of one clock read, ns.
    pub read_overhead_ns: f64,
}

/// `costs.*`, all in nanoseconds.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Costs {
    /// One PAUSE (spin hint), on the CPU the probe ran on.
    pub pause_ns: f64,
    /// One PAUSE on each allowed CPU (core types of a hybrid CPU differ);
    /// `pause_ns` `None` where the CPU could not be pinned.
    pub pause_ns_per_cpu: Vec<waitwise_platform::pause_time::CpuPauseCost>,
    /// One `sched_yield()` with nothing else runnable.
    pub yield_ns: f64,
    /// One `futex_wake` with no waiter (the syscall a waker avoids).
    pub futex_wake_no_waiter_ns: f64,
    /// Round trip between two threads by polling.
    pub spin_round_trip_ns: Option<f64>,
    /// Round trip between two threads by futex sleep/wake.
    pub futex_round_trip_ns: Option<f64>,
    /// B, the cost of blocking, as the policies use it now.
    pub block_ns: f64,
    /// Where that B came from: "measured" (fixed by a tool), "learned",
    /// "environment", "machine_profile" or "fallback".
    pub block_source: &'static str,
    /// B measured by this probe from the round trips above
    /// (`(futex - polling round trip) / 2`, the median of the agreeing
    /// measurements; see `block_stability`); what `waitwise probe --save`
    /// saves when it is stable.
    pub block_measured_ns: Option<f64>,
    /// How far `block_measured_ns` can be trusted: every measurement,
    /// whether consecutive ones agreed, their spread, and whether other
    /// threads wanted every CPU.
    pub block_stability: BlockStability,
    /// The B this process started from.
    pub block_start_ns: f64,
    /// Where the starting B came from: "environment", "machine_profile" or
    /// "fallback".
    pub block_start_source: &'static str,
    /// B learned from this process's own wake-ups (the probe's futex round
    /// trips among them), when there were enough.
    pub block_learned_ns: Option<f64>,
    /// Wake-ups sampled for the learned B.
    pub block_learned_samples: u64,
}

/// `policy.*`
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PolicyInfo {
    /// Default policy name per kind.
    pub names: BTreeMap<&'static str, String>,
    /// Default L_poll per kind, ns (infinite for a policy that never blocks).
    pub poll_limit_ns: BTreeMap<&'static str, f64>,
}

/// `mechanisms.NAME`
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct MechanismInfo {
    /// Runs as asked on this CPU.
    pub available: bool,
    /// What runs instead, when not available.
    pub fallback: Option<&'static str>,
    /// Why not ("CPU lacks WAITPKG", ...).
    pub reason: Option<String>,
}

/// Runs the probe: reads the machine's description and measures the costs.
///
/// Fails only when the topology cannot be read from sysfs.
///
/// # Examples
///
/// ```
/// let probe = waitwise::probe::run().unwrap();
/// assert!(probe.topology.cpus >= 1);
/// assert!(probe.costs.block_ns > 0.0);
/// assert!(probe.mechanisms["spin"].available);
/// ```
pub fn run() -> Result<Probe, TopologyError> {
    let topology = topology_info()?;
    // The costs first: their round trips run long enough (and the clock
    // is read often enough) for the cycle clock to learn the TSC's rate
    // where CPUID does not state it.
    let costs = costs();
    Ok(Probe {
        cpu: cpu_info(),
        features: feature_info(),
        topology,
        clock: clock_info(),
        costs,
        policy: policy_info(),
        mechanisms: mechanism_info(),
        wake_placement: wake_placement::measure(),
        env_errors: env::errors().iter().map(ToString::to_string).collect(),
    })
}

fn cpu_info() -> CpuInfo {
    let f = features::cpu();
    CpuInfo {
        model: f.model.to_string(),
        vendor: f.vendor.name().to_string(),
    }
}

fn feature_info() -> FeatureInfo {
    let f = features::cpu();
    FeatureInfo {
        waitpkg: f.waitpkg,
        monitorx: f.monitorx,
        invariant_tsc: f.invariant_tsc,
        monitor_line_bytes: f.monitor_line_bytes,
    }
}

fn topology_info() -> Result<TopologyInfo, TopologyError> {
    let topo = Topology::current()?;
    Ok(TopologyInfo {
        cpus: topo.num_cpus(),
        cores: topo.num_cores(),
        packages: topo.num_packages(),
        numa_nodes: topo.num_numa_nodes(),
        smt_siblings: topo.smt_sibling_sets(),
        allowed_cpus: affinity::allowed_cpus().unwrap_or_default(),
    })
}

fn clock_info() -> ClockInfo {
    let clock = cycle_clock();
    let (source, tsc_hz_from_cpuid) = match clock.source() {
        ClockSource::Tsc { from_cpuid, .. } => ("tsc", from_cpuid),
        ClockSource::Monotonic => ("monotonic", false),
    };
    ClockInfo {
        source,
        tsc_hz: clock.tsc_hz().unwrap_or(clock.hz()),
        tsc_hz_from_cpuid,
        read_overhead_ns: clock.read_overhead_ns(),
    }
}

/// The measured costs. The round trips are measured afresh until
/// consecutive measurements agree ([`block_stability::measure`]); their
/// futex wake-ups also teach the learned `B`. The round-trip figures are
/// those of the measurement `B` is the median of.
fn costs() -> Costs {
    let stability = block_stability::measure();
    let chosen = stability
        .block_ns
        .and_then(|b| stability.measurements.iter().find(|m| m.block_ns == b));
    let in_force = block_cost::block_cost();
    let start = block_cost::starting_block_cost();
    let learned = block_cost::learned_block_cost();
    let futex = Futex::new(0);
    Costs {
        pause_ns: per_op_ns(PAUSE_OPS, std::hint::spin_loop),
        pause_ns_per_cpu: waitwise_platform::pause_time::pause_ns_per_cpu(
            &affinity::allowed_cpus().unwrap_or_default(),
        ),
        yield_ns: per_op_ns(YIELD_OPS, thread::sched_yield),
        futex_wake_no_waiter_ns: per_op_ns(FUTEX_WAKE_OPS, || {
            futex.wake(1);
        }),
        spin_round_trip_ns: chosen.map(|m| m.spin_round_trip_ns),
        futex_round_trip_ns: chosen.map(|m| m.futex_round_trip_ns),
        block_ns: in_force.ns,
        block_source: in_force.source.name(),
        block_measured_ns: stability.block_ns,
        block_stability: stability,
        block_start_ns: start.ns,
        block_start_source: start.source.name(),
        block_learned_ns: learned.as_ref().map(|b| b.ns),
        block_learned_samples: match learned.map(|b| b.source) {
            Some(BlockCostSource::Learned { samples }) => samples,
            _ => 0,
        },
    }
}

fn policy_info() -> PolicyInfo {
    let mut names = BTreeMap::new();
    let mut poll_limit_ns = BTreeMap::new();
    for kind in SyncKind::ALL {
        let p = Policy::default_for(kind);
        names.insert(kind.name(), p.name());
        poll_limit_ns.insert(kind.name(), p.poll_limit_ns().unwrap_or(f64::INFINITY));
    }
    PolicyInfo {
        names,
        poll_limit_ns,
    }
}

fn mechanism_info() -> BTreeMap<&'static str, MechanismInfo> {
    Mechanism::ALL
        .into_iter()
        .map(|m| {
            let a = m.availability();
            (
                m.name(),
                MechanismInfo {
                    available: a.available,
                    fallback: a.fallback,
                    reason: a.reason,
                },
            )
        })
        .collect()
}

/// Median over [`BATCHES`] batches of the per-operation time of `op`, ns.
fn per_op_ns(ops: u32, mut op: impl FnMut()) -> f64 {
    let mut batches: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..ops {
                op();
            }
            t.elapsed().as_nanos() as f64 / f64::from(ops)
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[BATCHES / 2]
}
