//! `waitwise probe`: what this machine offers for waiting, and what waiting
//! costs here. Prints a table, or one JSON object with stable keys
//! (documented in the README):
//!
//! `cpu.model`, `cpu.vendor`, `features.waitpkg`, `features.monitorx`,
//! `features.invariant_tsc`, `topology.cpus`, `topology.cores`,
//! `topology.packages`, `topology.numa_nodes`, `topology.smt_siblings`,
//! `clock.tsc_hz`, `clock.read_overhead_ns`, `costs.pause_ns`,
//! `costs.yield_ns`, `costs.futex_wake_no_waiter_ns`,
//! `costs.spin_round_trip_ns`, `costs.futex_round_trip_ns`,
//! `costs.block_ns` (B), `policy.poll_limit_ns` (kind -> L_poll),
//! `mechanisms` (name -> {available, fallback}).
//!
//! The whole probe takes well under 5 seconds (the round trips are budgeted
//! at 40 ms, each cost loop at a few ms).

use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;
use waitwise::mechanism::Mechanism;
use waitwise::policy::{block_cost, BlockCostSource, Policy, SyncKind};
use waitwise_platform::clock::{cycle_clock, ClockSource};
use waitwise_platform::features;
use waitwise_platform::futex::Futex;
use waitwise_platform::topology::Topology;

/// The probe's findings.
#[derive(Clone, Debug, Serialize)]
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
    /// Environment overrides that were rejected (empty when all is well).
    pub env_errors: Vec<String>,
}

/// `cpu.*`
#[derive(Clone, Debug, Serialize)]
pub struct CpuInfo {
    /// Brand string.
    pub model: String,
    /// "Intel", "AMD", or the raw vendor string.
    pub vendor: String,
}

/// `features.*`
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
pub struct ClockInfo {
    /// "tsc" or "monotonic".
    pub source: &'static str,
    /// Ticks per second (TSC frequency; 1e9 for the monotonic clock).
    pub tsc_hz: u64,
    /// Whether the TSC frequency came from CPUID (else calibrated).
    pub tsc_hz_from_cpuid: bool,
    /// Median cost of one clock read, ns.
    pub read_overhead_ns: f64,
}

/// `costs.*`, all in nanoseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Costs {
    /// One PAUSE (spin hint).
    pub pause_ns: f64,
    /// One `sched_yield()` with nothing else runnable.
    pub yield_ns: f64,
    /// One `futex_wake` with no waiter (the syscall a waker avoids).
    pub futex_wake_no_waiter_ns: f64,
    /// Round trip between two threads by polling.
    pub spin_round_trip_ns: Option<f64>,
    /// Round trip between two threads by futex sleep/wake.
    pub futex_round_trip_ns: Option<f64>,
    /// B, the cost of blocking, as the policies use it.
    pub block_ns: f64,
    /// Where B came from: "measured", "environment" or "fallback".
    pub block_source: &'static str,
}

/// `policy.*`
#[derive(Clone, Debug, Serialize)]
pub struct PolicyInfo {
    /// Default policy name per kind.
    pub names: BTreeMap<&'static str, String>,
    /// Default L_poll per kind, ns.
    pub poll_limit_ns: BTreeMap<&'static str, f64>,
}

/// `mechanisms.NAME`
#[derive(Clone, Debug, Serialize)]
pub struct MechanismInfo {
    /// Runs as asked on this CPU.
    pub available: bool,
    /// What runs instead, when not available.
    pub fallback: Option<&'static str>,
    /// Why not ("CPU lacks WAITPKG", ...).
    pub reason: Option<String>,
}

/// Runs the probe.
pub fn run() -> anyhow::Result<Probe> {
    let f = features::cpu();
    let topo = Topology::current().context("reading the CPU topology from /sys")?;
    let clock = cycle_clock();
    let (source, tsc_hz_from_cpuid) = match clock.source() {
        ClockSource::Tsc { from_cpuid, .. } => ("tsc", from_cpuid),
        ClockSource::Monotonic => ("monotonic", false),
    };
    let b = block_cost();
    let (spin_rt, futex_rt) = match b.source {
        BlockCostSource::Measured {
            futex_round_trip_ns,
            spin_round_trip_ns,
        } => (Some(spin_round_trip_ns), Some(futex_round_trip_ns)),
        _ => match waitwise::policy::block_cost::round_trips::measure(
            waitwise::policy::block_cost::CALIBRATION_BUDGET,
        ) {
            Some(rt) => (Some(rt.spin_ns), Some(rt.futex_ns)),
            None => (None, None),
        },
    };
    let costs = Costs {
        pause_ns: per_op_ns(20_000, std::hint::spin_loop),
        yield_ns: per_op_ns(2_000, waitwise_platform::thread::sched_yield),
        futex_wake_no_waiter_ns: {
            let f = Futex::new(0);
            per_op_ns(5_000, || {
                f.wake(1);
            })
        },
        spin_round_trip_ns: spin_rt,
        futex_round_trip_ns: futex_rt,
        block_ns: b.ns,
        block_source: match b.source {
            BlockCostSource::Measured { .. } => "measured",
            BlockCostSource::Environment => "environment",
            BlockCostSource::Fallback => "fallback",
        },
    };
    let mut names = BTreeMap::new();
    let mut poll_limit_ns = BTreeMap::new();
    for kind in SyncKind::ALL {
        let p = Policy::for_kind(kind);
        names.insert(kind.name(), p.name());
        poll_limit_ns.insert(kind.name(), p.poll_limit_ns().unwrap_or(f64::INFINITY));
    }
    let mechanisms = Mechanism::ALL
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
        .collect();
    Ok(Probe {
        cpu: CpuInfo {
            model: f.model.clone(),
            vendor: f.vendor.name().to_string(),
        },
        features: FeatureInfo {
            waitpkg: f.waitpkg,
            monitorx: f.monitorx,
            invariant_tsc: f.invariant_tsc,
            monitor_line_bytes: f.monitor_line_bytes,
        },
        topology: TopologyInfo {
            cpus: topo.num_cpus(),
            cores: topo.num_cores(),
            packages: topo.num_packages(),
            numa_nodes: topo.num_numa_nodes(),
            smt_siblings: topo.smt_sibling_sets(),
            allowed_cpus: waitwise_platform::affinity::allowed_cpus().unwrap_or_default(),
        },
        clock: ClockInfo {
            source,
            tsc_hz: clock.hz(),
            tsc_hz_from_cpuid,
            read_overhead_ns: clock.read_overhead_ns(),
        },
        costs,
        policy: PolicyInfo {
            names,
            poll_limit_ns,
        },
        mechanisms,
        env_errors: waitwise::policy::env::errors(),
    })
}

/// Median over 5 batches of the per-operation time of `op`, ns.
fn per_op_ns(ops: u32, mut op: impl FnMut()) -> f64 {
    let mut batches: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..ops {
                op();
            }
            t.elapsed().as_nanos() as f64 / f64::from(ops)
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[2]
}

fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "inf".into()
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} us", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

impl Probe {
    /// The readable table `waitwise probe` prints.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let yes = |b: bool| if b { "yes" } else { "no" };
        let opt = |v: Option<f64>| v.map_or("n/a".to_string(), fmt_ns);
        let _ = writeln!(s, "CPU            {} ({})", self.cpu.model, self.cpu.vendor);
        let _ = writeln!(
            s,
            "Features       WAITPKG: {}   MONITORX: {}   invariant TSC: {}   monitor line: {} B",
            yes(self.features.waitpkg),
            yes(self.features.monitorx),
            yes(self.features.invariant_tsc),
            self.features.monitor_line_bytes
        );
        let t = &self.topology;
        let smt = if t.smt_siblings.is_empty() {
            "none (no SMT siblings)".to_string()
        } else {
            format!("{:?}", t.smt_siblings)
        };
        let _ = writeln!(
            s,
            "Topology       {} CPUs, {} cores, {} packages, {} NUMA nodes; SMT sets: {smt}",
            t.cpus, t.cores, t.packages, t.numa_nodes
        );
        let _ = writeln!(
            s,
            "Clock          {} at {:.3} GHz ({}), read overhead {}",
            self.clock.source,
            self.clock.tsc_hz as f64 / 1e9,
            if self.clock.tsc_hz_from_cpuid {
                "from CPUID"
            } else {
                "calibrated"
            },
            fmt_ns(self.clock.read_overhead_ns)
        );
        let c = &self.costs;
        let _ = writeln!(s, "\nCosts");
        let _ = writeln!(s, "  pause                     {}", fmt_ns(c.pause_ns));
        let _ = writeln!(s, "  sched_yield               {}", fmt_ns(c.yield_ns));
        let _ = writeln!(
            s,
            "  futex wake, no waiter     {}",
            fmt_ns(c.futex_wake_no_waiter_ns)
        );
        let _ = writeln!(
            s,
            "  spin round trip           {}",
            opt(c.spin_round_trip_ns)
        );
        let _ = writeln!(
            s,
            "  futex round trip          {}",
            opt(c.futex_round_trip_ns)
        );
        let _ = writeln!(
            s,
            "  B (block cost)            {} ({})",
            fmt_ns(c.block_ns),
            c.block_source
        );
        let _ = writeln!(s, "\nDefault policies (L_poll = alpha * B)");
        for (kind, name) in &self.policy.names {
            let _ = writeln!(
                s,
                "  {kind:<18} {name:<10} L_poll = {}",
                fmt_ns(self.policy.poll_limit_ns[kind])
            );
        }
        let _ = writeln!(
            s,
            "  (waitwise::Mutex waits {}; Barrier waits {} while the threads fit on the CPUs, {} when they outnumber them)",
            waitwise::mutex::RawTtasMutex::new().policy().name(),
            waitwise::barrier::default_policy(1).name(),
            waitwise::barrier::default_policy(usize::MAX).name()
        );
        let _ = writeln!(s, "\nMechanisms");
        for (name, m) in &self.mechanisms {
            if m.available {
                let _ = writeln!(s, "  {name:<13} available");
            } else {
                let _ = writeln!(
                    s,
                    "  {name:<13} not available on this CPU: {}; falls back to {}",
                    m.reason.as_deref().unwrap_or("?"),
                    m.fallback.unwrap_or("?")
                );
            }
        }
        for e in &self.env_errors {
            let _ = writeln!(s, "\nwarning: {e}");
        }
        s
    }
}
