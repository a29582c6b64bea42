//! `waitwise probe`: the machine probe ([`waitwise::probe`]) for the tool:
//! [`run`] with an error for the user, and [`to_text`], the readable table
//! that `waitwise probe` prints and the report's "Machine" section shows.
//! `waitwise probe --json` prints the core crate's [`Probe`] as it
//! serializes (its keys are listed in [`waitwise::probe`]).

use anyhow::Context;
pub use waitwise::probe::Probe;

/// Runs the probe (well under 5 seconds).
pub fn run() -> anyhow::Result<Probe> {
    waitwise::probe::run().context("reading the CPU topology from /sys")
}

/// The readable table `waitwise probe` prints.
pub fn to_text(probe: &Probe) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    machine_text(&mut s, probe);
    costs_text(&mut s, probe);
    policies_text(&mut s, probe);
    mechanisms_text(&mut s, probe);
    for e in &probe.env_errors {
        let _ = writeln!(s, "\nwarning: {e}");
    }
    s
}

/// CPU, features, topology and clock.
fn machine_text(s: &mut String, probe: &Probe) {
    use std::fmt::Write;
    let yes = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(
        s,
        "CPU            {} ({})",
        probe.cpu.model, probe.cpu.vendor
    );
    let _ = writeln!(
        s,
        "Features       WAITPKG: {}   MONITORX: {}   invariant TSC: {}   monitor line: {} B",
        yes(probe.features.waitpkg),
        yes(probe.features.monitorx),
        yes(probe.features.invariant_tsc),
        probe.features.monitor_line_bytes
    );
    let t = &probe.topology;
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
    let _ = writeln!(s, "Wake-ups       {}", wake_placement_text(probe));
    let clock = if probe.clock.source == "tsc" {
        format!(
            "tsc at {:.3} GHz ({})",
            probe.clock.tsc_hz as f64 / 1e9,
            if probe.clock.tsc_hz_from_cpuid {
                "rate from CPUID"
            } else {
                "rate learned against the monotonic clock"
            }
        )
    } else if probe.features.invariant_tsc {
        "monotonic (the TSC's rate is not learned yet)".to_string()
    } else {
        "monotonic (no invariant TSC)".to_string()
    };
    let _ = writeln!(
        s,
        "Clock          {clock}, read overhead {}",
        fmt_ns(probe.clock.read_overhead_ns)
    );
}

/// Where woken threads ran ([`waitwise::probe::wake_placement`]).
fn wake_placement_text(probe: &Probe) -> String {
    match probe.wake_placement {
        None => "placement not measured (one allowed CPU, or the probe could not pin its threads)"
            .to_string(),
        Some(p) if p.packs() => format!(
            "a thread woken from another CPU ran beside its waker in {} of {}: this \
             scheduler packs threads that sleep and wake each other onto one CPU, where \
             their hand-offs cost a context switch until it moves one away",
            p.beside_waker, p.counted
        ),
        Some(p) => format!(
            "a thread woken from another CPU ran beside its waker in {} of {}",
            p.beside_waker, p.counted
        ),
    }
}

/// The measured costs and `B`.
fn costs_text(s: &mut String, probe: &Probe) {
    use std::fmt::Write;
    let opt = |v: Option<f64>| v.map_or("n/a".to_string(), fmt_ns);
    let c = &probe.costs;
    let _ = writeln!(s, "\nCosts");
    let _ = writeln!(s, "  pause                     {}", fmt_ns(c.pause_ns));
    let per_cpu: Vec<String> = c
        .pause_ns_per_cpu
        .iter()
        .map(|p| match p.pause_ns {
            Some(ns) => format!("cpu{} {}", p.cpu, fmt_ns(ns)),
            None => format!("cpu{} n/a (cannot pin)", p.cpu),
        })
        .collect();
    let _ = writeln!(s, "  pause per CPU             {}", per_cpu.join(", "));
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
    let _ = writeln!(s, "  B measured now            {}", block_measured_text(c));
    let _ = writeln!(
        s,
        "  B started from            {} ({})",
        fmt_ns(c.block_start_ns),
        c.block_start_source
    );
    match c.block_learned_ns {
        Some(ns) => {
            let _ = writeln!(
                s,
                "  B learned                 {} (lower quartile of the {} wake-ups sampled in this process)",
                fmt_ns(ns),
                c.block_learned_samples
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  B learned                 not yet ({} wake-ups sampled)",
                c.block_learned_samples
            );
        }
    }
    let _ = writeln!(
        s,
        "  B in force                {} ({})",
        fmt_ns(c.block_ns),
        c.block_source
    );
}

/// The default policies and their poll limits.
fn policies_text(s: &mut String, probe: &Probe) {
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "\nDefault policies (L_poll = alpha * B; adapt/b: where an object starts, rand/b's mean B/(e-1), before it learns)"
    );
    for (kind, name) in &probe.policy.names {
        let _ = writeln!(
            s,
            "  {kind:<18} {name:<10} L_poll = {}",
            fmt_ns(probe.policy.poll_limit_ns[kind])
        );
    }
    let _ = writeln!(
            s,
            "  (waitwise::Mutex waits {}; Barrier waits {} while the threads fit on the CPUs, {} when they outnumber them)",
            waitwise::mutex::RawTtasMutex::new().policy().describe(),
            waitwise::barrier::default_policy(1).describe(),
            waitwise::barrier::default_policy(usize::MAX).describe()
        );
}

/// Which mechanisms run here, and the warnings.
fn mechanisms_text(s: &mut String, probe: &Probe) {
    use std::fmt::Write;
    let c = &probe.costs;
    let _ = writeln!(s, "\nMechanisms");
    for (name, m) in &probe.mechanisms {
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
    if c.block_stability.machine_busy() {
        let _ = writeln!(
            s,
            "\nwarning: {} other threads wanted a CPU on {} CPUs while the probe ran: the costs above were measured on a busy machine",
            c.block_stability.other_runnable_threads.unwrap_or(0),
            c.block_stability.cpus
        );
    }
}

/// The measured `B` with how far it can be trusted: the median of the
/// agreeing measurements and their spread, or "unstable" with the range
/// and the reason.
pub fn block_measured_text(c: &waitwise::probe::Costs) -> String {
    let st = &c.block_stability;
    let n = st.measurements.len();
    let range = || {
        let bs = st.measurements.iter().map(|m| m.block_ns);
        let lo = bs.clone().fold(f64::INFINITY, f64::min);
        let hi = bs.fold(f64::NEG_INFINITY, f64::max);
        format!("{} to {}", fmt_ns(lo), fmt_ns(hi))
    };
    match (st.block_ns, st.instability) {
        (Some(b), None) => format!(
            "{}  stable: (futex - spin round trip) / 2, median of {} agreeing measurements (spread {:.2}x; {n} taken)",
            fmt_ns(b),
            waitwise::probe::block_stability::STABLE_RUN,
            st.spread
        ),
        (Some(b), Some(why)) if n > 0 => format!(
            "unstable: {} (range {} over {n} measurements): {why}",
            fmt_ns(b),
            range()
        ),
        (_, Some(why)) => format!("not measured: {why}"),
        (None, None) => "not measured".into(),
    }
}

/// `ns` in the unit that reads best (ns, us, ms; "inf" when infinite).
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
