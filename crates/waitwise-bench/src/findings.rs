//! Findings: the few measured facts `waitwise report` opens with.
//!
//! Each [`Finding`] is data (the figures it rests on) and says itself in
//! words through `Display`; detection functions read one experiment's
//! result and push the findings it supports, and the report lists them with
//! a link to the section that holds the figures ([`Finding::section`]).
//! A finding whose figures are missing (a row that did not run, a tiny
//! run) is simply not pushed.
//!
//! The wording says what was measured and how it compares; it carries no
//! pass/fail threshold.

use std::fmt;

use crate::experiments::barriers::BarriersResult;
use crate::experiments::calibration::CalibrationResult;
use crate::experiments::interference::InterferenceResult;
use crate::experiments::mechanisms::MechanismsResult;
use crate::experiments::oversub::OversubResult;
use crate::export::{Cell, Table};
use crate::helpers::experiment::HelpersResult;
use crate::probe::Probe;
use crate::stats::median_ci_ranks;

/// One measured fact worth a line in the report's summary.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// The default two-phase policy against pure spinning: wake-up when the
    /// notify comes within its poll limit, and CPU burned on a long wait.
    TwoPhaseWaiting {
        /// The policy (`s/b/0.54`).
        policy: String,
        /// Its median wake-up for a notify within the poll limit, ns.
        short_wakeup_ns: f64,
        /// `spin`'s median wake-up in the same regime, ns.
        spin_short_wakeup_ns: f64,
        /// The long wait's length, ms.
        long_wait_ms: u64,
        /// The waiter's CPU time over the long wait, percent (median).
        long_cpu_pct: f64,
        /// `spin`'s, percent.
        spin_long_cpu_pct: f64,
    },
    /// The PAUSE loop's wake-up over the plain load loop's, per cycle of
    /// interleaved rounds: median and its 95% CI.
    PauseVsPlainLoop {
        /// Median ratio (below 1: PAUSE wakes faster).
        ratio: f64,
        /// Lower end of the median's 95% CI.
        low: f64,
        /// Upper end.
        high: f64,
    },
    /// `pthread_barrier_wait` against waitwise's default `Barrier`, one
    /// episode with one thread per CPU.
    BarrierVsPthread {
        /// Threads in the episode.
        threads: usize,
        /// waitwise's median ns per episode.
        waitwise_ns: f64,
        /// pthread's median ns per episode.
        pthread_ns: f64,
        /// pthread's over waitwise's, median over rounds of the ratio.
        ratio: f64,
    },
    /// Always-spin against the objects' default waiting with more threads
    /// than CPUs.
    SpinOversubscribed {
        /// The loop ("barrier", "producer-consumer", "mutex").
        workload: String,
        /// Threads per CPU.
        multiplier: usize,
        /// Always-spin's median runtime, ms.
        spin_ms: f64,
        /// The default waiting's median runtime, ms.
        default_ms: f64,
    },
    /// How often the measurement orders two policies as the cost model does.
    ModelOrdering {
        /// Of the `decided` pairs, those measured in the model's order or
        /// tied within noise.
        concordant: usize,
        /// Policy pairs whose predicted costs differ by more than 10%.
        decided: usize,
        /// Wait-time laws and scales checked.
        cells: usize,
    },
    /// Hardware waits this CPU does not have (never run, listed as n/a).
    HardwareWaitsMissing {
        /// Their names (`umwait`, `mwaitx`, ...).
        mechanisms: Vec<String>,
        /// What waitwise runs in their place (`pause`), each once.
        fallbacks: Vec<String>,
    },
    /// The best helper-thread speed-up over serial among the helper waits
    /// and workloads.
    HelperSpeedup {
        /// The workload and input, in words.
        workload: String,
        /// The helpers' wait.
        wait: String,
        /// Median speed-up (serial over with helpers; above 1 helps).
        median: f64,
        /// Lower end of its median's 95% CI.
        low: f64,
        /// Upper end.
        high: f64,
    },
    /// The active thread's slowdown with a co-runner waiting on its SMT
    /// sibling: by spinning, and by the best other mechanism.
    SiblingSlowdown {
        /// Time factor with a spinning co-runner (1 + slowdown).
        spin_factor: f64,
        /// The mechanism that slowed it least.
        best: String,
        /// Its time factor.
        best_factor: f64,
    },
    /// Two threads on SMT siblings against one thread alone (seed 004's
    /// 1.33), median over kernels.
    SmtPairThroughput {
        /// Both together over one alone.
        pair: f64,
    },
    /// A hardware wait's wake-up for a notify within the poll limit over
    /// spinning's.
    HardwareWaitWakeup {
        /// The mechanism (`umwait`, `mwaitx`).
        mechanism: String,
        /// Its median wake-up over spin's.
        ratio: f64,
    },
    /// Measured rows whose median's 95% CI is wider than 20% of it.
    NoisyRows {
        /// Rows flagged noisy.
        noisy: usize,
        /// Rows with measured figures.
        measured: usize,
    },
}

impl Finding {
    /// The report section that holds the figures (its id in the page, its
    /// key in `results.json`).
    pub fn section(&self) -> &'static str {
        match self {
            Finding::TwoPhaseWaiting { .. } | Finding::PauseVsPlainLoop { .. } => "mechanisms",
            Finding::BarrierVsPthread { .. } => "barriers",
            Finding::SpinOversubscribed { .. } => "oversub",
            Finding::ModelOrdering { .. } => "calibration",
            Finding::HardwareWaitsMissing { .. } => "machine",
            Finding::HelperSpeedup { .. } => "helpers",
            Finding::SiblingSlowdown { .. } | Finding::SmtPairThroughput { .. } => "interference",
            Finding::HardwareWaitWakeup { .. } => "mechanisms",
            Finding::NoisyRows { .. } => "summary",
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::TwoPhaseWaiting {
                policy,
                short_wakeup_ns,
                spin_short_wakeup_ns,
                long_wait_ms,
                long_cpu_pct,
                spin_long_cpu_pct,
            } => write!(
                f,
                "Two-phase waiting ({policy}) wakes in {:.2}x spinning's time \
                 when the notify comes within its poll limit ({short_wakeup_ns:.0} vs {spin_short_wakeup_ns:.0} ns, medians), \
                 and burns {long_cpu_pct:.2}% of a CPU during a {long_wait_ms} ms wait, where spinning burns {spin_long_cpu_pct:.0}%.",
                short_wakeup_ns / spin_short_wakeup_ns
            ),
            Finding::PauseVsPlainLoop { ratio, low, high } => {
                fmt_pause_vs_plain_loop(f, *ratio, *low, *high)
            }
            Finding::BarrierVsPthread {
                threads,
                waitwise_ns,
                pthread_ns,
                ratio,
            } => {
                let compare = if *ratio >= 1.0 {
                    format!("{ratio:.0}x slower than")
                } else {
                    format!("{:.1}x faster than", 1.0 / ratio)
                };
                write!(
                    f,
                    "With {threads} threads, pthread_barrier_wait is {compare} waitwise's Barrier here \
                     ({} vs {} per episode, medians).",
                    ns(*pthread_ns),
                    ns(*waitwise_ns)
                )
            }
            Finding::SpinOversubscribed {
                workload,
                multiplier,
                spin_ms,
                default_ms,
            } => write!(
                f,
                "With {multiplier}x as many threads as CPUs, always-spin runs the {workload} loop in {:.1}x the time \
                 of the default waiting ({spin_ms:.0} vs {default_ms:.0} ms, medians).",
                spin_ms / default_ms
            ),
            Finding::ModelOrdering {
                concordant,
                decided,
                cells,
            } => write!(
                f,
                "Of {decided} pairs of waiting policies whose costs the model (Lim & Agarwal 1993) predicts more than \
                 10% apart, {concordant} are measured in the predicted order or tied within noise, over {cells} \
                 wait-time laws and scales."
            ),
            Finding::HardwareWaitsMissing {
                mechanisms,
                fallbacks,
            } => {
                write!(
                    f,
                    "Not available on this CPU, so never run here: {}",
                    mechanisms.join(", ")
                )?;
                if !fallbacks.is_empty() {
                    write!(f, "; waitwise runs {} in their place", fallbacks.join(", "))?;
                }
                write!(f, ".")
            }
            Finding::HelperSpeedup { .. }
            | Finding::SiblingSlowdown { .. }
            | Finding::SmtPairThroughput { .. }
            | Finding::HardwareWaitWakeup { .. } => self.fmt_helpers_and_hardware(f),
            Finding::NoisyRows { noisy, measured } => fmt_noisy_rows(f, *noisy, *measured),
        }
    }
}

impl Finding {
    /// The wording of the findings on helper threads, SMT siblings and
    /// hardware waits.
    fn fmt_helpers_and_hardware(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::HelperSpeedup {
                workload,
                wait,
                median,
                low,
                high,
            } => write!(
                f,
                "The best helper-thread speed-up over serial is {median:.2}x ({workload}, helpers waiting with {wait}; \
                 95% CI {low:.2} to {high:.2})."
            ),
            Finding::SiblingSlowdown {
                spin_factor,
                best,
                best_factor,
            } => write!(
                f,
                "A co-runner spinning on the SMT sibling slows the active thread {:.0}%; waiting with {best}, {:.0}%.",
                100.0 * (spin_factor - 1.0),
                100.0 * (best_factor - 1.0)
            ),
            Finding::SmtPairThroughput { pair } => write!(
                f,
                "Two threads on SMT siblings run {pair:.2}x one thread's throughput (median over kernels)."
            ),
            Finding::HardwareWaitWakeup { mechanism, ratio } => write!(
                f,
                "{mechanism} wakes in {ratio:.2}x spinning's time for a notify within the poll limit (medians)."
            ),
            _ => Ok(()),
        }
    }
}

/// [`Finding::PauseVsPlainLoop`]'s wording.
fn fmt_pause_vs_plain_loop(
    f: &mut fmt::Formatter<'_>,
    ratio: f64,
    low: f64,
    high: f64,
) -> fmt::Result {
    let verdict = if high < 1.0 {
        "wakes faster than"
    } else if low > 1.0 {
        "wakes slower than"
    } else {
        "wakes as fast, within noise, as"
    };
    write!(
        f,
        "On this CPU the PAUSE loop {verdict} the plain load loop: {ratio:.2}x its wake-up time \
         (per-cycle ratio, median, 95% CI {low:.2} to {high:.2})."
    )
}

/// [`Finding::NoisyRows`]'s wording.
fn fmt_noisy_rows(f: &mut fmt::Formatter<'_>, noisy: usize, measured: usize) -> fmt::Result {
    // The largest sample count whose interval is the whole range.
    let whole_range_up_to = (1..64)
        .take_while(|&n| median_ci_ranks(n).is_some_and(|(l, _, _)| l == 1))
        .last()
        .unwrap_or(1);
    write!(
        f,
        "{noisy} of {measured} measured rows ({:.0}%) are flagged noisy: the 95% CI of their median is \
         wider than 20% of it (with {whole_range_up_to} runs or fewer the interval is the whole range of \
         the runs).",
        100.0 * noisy as f64 / measured.max(1) as f64
    )
}

/// `v` ns in the unit that reads best.
fn ns(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} us", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

/// The mechanisms experiment's findings: two-phase waiting against
/// spinning (the row whose policy is `default_policy`, the
/// producer-consumer default, else the static two-phase policy with the
/// producer-consumer alpha when the default has no row of its own; the
/// producer-consumer default) and PAUSE against the plain loop.
pub fn from_mechanisms(r: &MechanismsResult, default_policy: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    for hw in ["umwait", "mwaitx"] {
        if let (Some(t), Some(spin)) = (r.short_wakeup_ns(hw), r.short_wakeup_ns("spin")) {
            found.push(Finding::HardwareWaitWakeup {
                mechanism: hw.to_owned(),
                ratio: t / spin,
            });
        }
    }
    let static_two_phase =
        waitwise::policy::Policy::fixed_alpha(waitwise::policy::SyncKind::ProducerConsumer).name();
    let measured = |policy: &str| {
        r.rows
            .iter()
            .find(|row| row.policy.as_deref() == Some(policy) && row.not_available.is_none())
    };
    let two_phase = measured(default_policy).or_else(|| measured(&static_two_phase));
    let short_wakeup = |name: &str| r.short_wakeup_ns(name);
    let long_cpu = |name: &str| {
        let s = r.row(name)?.sleep.as_ref()?.waiter_cpu_fraction?;
        Some(100.0 * s.median)
    };
    if let Some(row) = two_phase {
        if let (Some(short), Some(spin_short), Some(cpu), Some(spin_cpu)) = (
            short_wakeup(&row.name),
            short_wakeup("spin"),
            long_cpu(&row.name),
            long_cpu("spin"),
        ) {
            found.push(Finding::TwoPhaseWaiting {
                policy: row.policy.clone().unwrap_or_default(),
                short_wakeup_ns: short,
                spin_short_wakeup_ns: spin_short,
                long_wait_ms: r.config.sleep_ms,
                long_cpu_pct: cpu,
                spin_long_cpu_pct: spin_cpu,
            });
        }
    }
    if let Some(s) = r.row("pause").and_then(|p| p.work_wakeup_vs_spin) {
        found.push(Finding::PauseVsPlainLoop {
            ratio: s.median,
            low: s.median_ci95_low,
            high: s.median_ci95_high,
        });
    }
    found
}

/// The barriers experiment's finding: pthread against waitwise's default
/// `Barrier` at the smallest thread count measured.
pub fn from_barriers(r: &BarriersResult) -> Vec<Finding> {
    let (default, pthread) = ("Barrier (default", "pthread_barrier_wait");
    let Some(&threads) = r.config.threads.iter().min() else {
        return Vec::new();
    };
    match (
        r.episode_ns(default, threads),
        r.episode_ns(pthread, threads),
        r.episode_ratio(pthread, default, threads),
    ) {
        (Some(waitwise_ns), Some(pthread_ns), Some(ratio)) => vec![Finding::BarrierVsPthread {
            threads,
            waitwise_ns,
            pthread_ns,
            ratio,
        }],
        _ => Vec::new(),
    }
}

/// The oversubscription experiment's findings: always-spin (`s//inf`)
/// against the default waiting at the largest multiplier, per loop.
pub fn from_oversub(r: &OversubResult) -> Vec<Finding> {
    let Some(&multiplier) = r.config.multipliers.iter().max().filter(|&&m| m > 1) else {
        return Vec::new();
    };
    let mut workloads = Vec::new();
    for row in &r.rows {
        if !workloads.contains(&row.workload) {
            workloads.push(row.workload);
        }
    }
    workloads
        .into_iter()
        .filter_map(|w| {
            let runtime = |waiting| r.cell(w, waiting, multiplier)?.runtime_ms.map(|s| s.median);
            let (spin_ms, default_ms) = (runtime(Some("s//inf"))?, runtime(None)?);
            Some(Finding::SpinOversubscribed {
                workload: w.name().to_owned(),
                multiplier,
                spin_ms,
                default_ms,
            })
        })
        .collect()
}

/// The calibration experiment's finding: how often the model's order of
/// two policies matches the measured one.
pub fn from_calibration(r: &CalibrationResult) -> Vec<Finding> {
    let decided: usize = r.ordering.iter().map(|o| o.decided_pairs).sum();
    if decided == 0 {
        return Vec::new();
    }
    vec![Finding::ModelOrdering {
        concordant: r.ordering.iter().map(|o| o.concordant_pairs).sum(),
        decided,
        cells: r.ordering.len(),
    }]
}

/// The helpers experiment's finding: the best speed-up measured.
pub fn from_helpers(r: &HelpersResult) -> Vec<Finding> {
    r.rows
        .iter()
        .filter_map(|row| Some((row, row.speedup.as_ref()?)))
        .max_by(|a, b| a.1.median.total_cmp(&b.1.median))
        .map(|(row, s)| Finding::HelperSpeedup {
            workload: row.input.clone(),
            wait: row.wait.clone(),
            median: s.median,
            low: s.median_ci95_low,
            high: s.median_ci95_high,
        })
        .into_iter()
        .collect()
}

/// The interference experiment's findings, where the machine has SMT
/// siblings: what a waiting sibling costs, and the pair's throughput.
pub fn from_interference(r: &InterferenceResult) -> Vec<Finding> {
    let mut found = Vec::new();
    let factors = &r.sibling_slowdown_factors;
    let spin = factors.iter().find(|(m, _)| m == "spin").map(|(_, f)| *f);
    let best = factors
        .iter()
        .filter(|(m, _)| m != "spin")
        .min_by(|a, b| a.1.total_cmp(&b.1));
    if let (Some(spin_factor), Some((best, best_factor))) = (spin, best) {
        found.push(Finding::SiblingSlowdown {
            spin_factor,
            best: best.clone(),
            best_factor: *best_factor,
        });
    }
    let mut pairs: Vec<f64> = r.smt.iter().filter_map(|s| s.pair).collect();
    pairs.sort_by(f64::total_cmp);
    if let Some(&pair) = pairs.get(pairs.len() / 2) {
        found.push(Finding::SmtPairThroughput { pair });
    }
    found
}

/// The probe's finding: the hardware waits this CPU lacks.
pub fn from_probe(p: &Probe) -> Vec<Finding> {
    let missing: Vec<_> = p.mechanisms.iter().filter(|(_, m)| !m.available).collect();
    let mut fallbacks: Vec<String> = Vec::new();
    for fallback in missing.iter().filter_map(|(_, m)| m.fallback) {
        if !fallbacks.iter().any(|f| f == fallback) {
            fallbacks.push(fallback.to_owned());
        }
    }
    if missing.is_empty() {
        Vec::new()
    } else {
        vec![Finding::HardwareWaitsMissing {
            mechanisms: missing
                .iter()
                .map(|(name, _)| (*name).to_string())
                .collect(),
            fallbacks,
        }]
    }
}

/// The share of measured rows flagged noisy over `tables`: a row is
/// measured when it has a number, noisy when its note says "noisy".
pub fn noisy_rows(tables: &[Table]) -> Option<Finding> {
    let (mut noisy, mut measured) = (0, 0);
    for t in tables {
        for (i, row) in t.rows.iter().enumerate() {
            if !row
                .iter()
                .any(|c| matches!(c, Cell::Number(_) | Cell::Integer(_)))
            {
                continue;
            }
            measured += 1;
            if t.row_note(i).is_some_and(|n| n.contains("noisy")) {
                noisy += 1;
            }
        }
    }
    (measured > 0).then_some(Finding::NoisyRows { noisy, measured })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contender::Family;
    use crate::experiments::mechanisms::{Config, RegimeResult, Row};
    use crate::export::Column;
    use crate::measure::Timing;
    use crate::placement::PairPlacement;
    use crate::stats::{summarize, Summary};

    /// A summary of 50 samples around `median` (+-1%).
    fn around(median: f64) -> Summary {
        let v: Vec<f64> = (0..50)
            .map(|i| median * (0.99 + 0.02 * f64::from(i) / 49.0))
            .collect();
        summarize(&v).unwrap()
    }

    fn regime(wakeup_ns: f64, cpu_fraction: f64) -> RegimeResult {
        let t = Timing {
            ns: around(wakeup_ns),
            cycles: around(wakeup_ns),
        };
        RegimeResult {
            t_work_ns: None,
            t_wakeup: Some(t),
            t_call: Some(t),
            waiter_cpu_fraction: Some(around(cpu_fraction)),
        }
    }

    fn row(name: &str, policy: &str, short_ns: f64, long_cpu: f64) -> Row {
        Row {
            name: name.into(),
            family: Family::Waitwise,
            policy: Some(policy.into()),
            not_available: None,
            work: None,
            short: Some(regime(short_ns, 1.0)),
            sleep: Some(regime(30_000.0, long_cpu)),
            work_wakeup_vs_spin: None,
        }
    }

    fn mechanisms(rows: Vec<Row>) -> MechanismsResult {
        MechanismsResult {
            config: Config::tiny(),
            placement: PairPlacement {
                worker_cpu: Some(0),
                waiter_cpu: Some(1),
                relation: "separate core".into(),
            },
            default_poll_limit_ns: 2000.0,
            short_delay_ns: 500.0,
            rows,
        }
    }

    #[test]
    fn two_phase_and_pause_findings_come_from_the_mechanism_rows() {
        let mut pause = row("pause", "s//inf", 90.0, 1.0);
        pause.work_wakeup_vs_spin = Some(around(0.8));
        let r = mechanisms(vec![
            row("spin", "s//inf", 100.0, 1.0),
            pause,
            row("s/b/0.54 (pause)", "s/b/0.54", 105.0, 0.001),
        ]);
        let found = from_mechanisms(&r, "s/b/0.54");
        assert_eq!(found.len(), 2, "{found:?}");
        match &found[0] {
            Finding::TwoPhaseWaiting {
                policy,
                short_wakeup_ns,
                spin_short_wakeup_ns,
                long_cpu_pct,
                spin_long_cpu_pct,
                long_wait_ms,
            } => {
                assert_eq!(policy, "s/b/0.54");
                assert!((short_wakeup_ns / spin_short_wakeup_ns - 1.05).abs() < 0.01);
                assert!((long_cpu_pct - 0.1).abs() < 0.01);
                assert!((spin_long_cpu_pct - 100.0).abs() < 1.0);
                assert_eq!(*long_wait_ms, r.config.sleep_ms);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(found[1], Finding::PauseVsPlainLoop { high, .. } if high < 1.0));
        let text = found[0].to_string();
        assert!(text.contains("1.05x spinning's time"), "{text}");
        assert!(text.contains("0.10% of a CPU"), "{text}");
        assert!(found[1]
            .to_string()
            .contains("wakes faster than the plain load loop"));
        assert_eq!(found[0].section(), "mechanisms");
        // A default without a row of its own (adapt/b): the static
        // two-phase row with the producer-consumer alpha stands for it.
        let found = from_mechanisms(&r, "adapt/b");
        assert!(
            matches!(&found[0], Finding::TwoPhaseWaiting { policy, .. } if policy == "s/b/0.54"),
            "{found:?}"
        );
    }

    #[test]
    fn missing_rows_give_no_finding() {
        // No default two-phase row, no pause ratio: nothing to say.
        let r = mechanisms(vec![row("spin", "s//inf", 100.0, 1.0)]);
        assert!(from_mechanisms(&r, "s/b/0.54").is_empty());
        // A default row that did not run is not used.
        let mut na = row("s/b/0.54 (pause)", "s/b/0.54", 105.0, 0.001);
        na.not_available = Some("n/a".into());
        let r = mechanisms(vec![row("spin", "s//inf", 100.0, 1.0), na]);
        assert!(from_mechanisms(&r, "s/b/0.54").is_empty());
    }

    #[test]
    fn pause_verdict_follows_the_interval() {
        let say = |ratio, low, high| Finding::PauseVsPlainLoop { ratio, low, high }.to_string();
        assert!(say(0.8, 0.7, 0.9).contains("wakes faster than"));
        assert!(say(1.2, 1.1, 1.3).contains("wakes slower than"));
        assert!(say(1.0, 0.9, 1.1).contains("as fast, within noise"));
    }

    #[test]
    fn comparisons_are_stated_without_thresholds() {
        let barrier = Finding::BarrierVsPthread {
            threads: 2,
            waitwise_ns: 92.0,
            pthread_ns: 34_700.0,
            ratio: 377.0,
        }
        .to_string();
        assert!(
            barrier.contains("377x slower than waitwise's Barrier"),
            "{barrier}"
        );
        assert!(barrier.contains("34.7 us vs 92 ns"), "{barrier}");
        let spin = Finding::SpinOversubscribed {
            workload: "barrier".into(),
            multiplier: 4,
            spin_ms: 5156.0,
            default_ms: 41.4,
        }
        .to_string();
        assert!(spin.contains("124.5x the time"), "{spin}");
        for text in [barrier, spin] {
            assert!(!text.contains("goal"), "{text}");
        }
    }

    #[test]
    fn missing_hardware_waits_name_their_fallback() {
        let text = Finding::HardwareWaitsMissing {
            mechanisms: vec!["umwait".into(), "mwaitx".into()],
            fallbacks: vec!["pause".into()],
        }
        .to_string();
        assert_eq!(
            text,
            "Not available on this CPU, so never run here: umwait, mwaitx; waitwise runs pause in their place."
        );
        // The probe of this machine: whatever it lacks is listed.
        let p = crate::probe::run().unwrap();
        let lacks = p.mechanisms.values().filter(|m| !m.available).count();
        match from_probe(&p).as_slice() {
            [Finding::HardwareWaitsMissing { mechanisms, .. }] => {
                assert_eq!(mechanisms.len(), lacks)
            }
            [] => assert_eq!(lacks, 0),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn noisy_share_counts_measured_rows_only() {
        let mut t = Table::new(
            "t",
            "T",
            vec![
                Column::new("name", None, ""),
                Column::new("x", Some("ns"), ""),
            ],
        );
        t.push_row(vec![Cell::text("a"), Cell::Number(1.0)], None);
        t.push_row(
            vec![Cell::text("b"), Cell::Number(1.0)],
            Some("noisy: median 95% CI wider than 20% of the median".into()),
        );
        t.push_row(
            vec![
                Cell::text("umwait"),
                Cell::missing("n/a: CPU lacks WAITPKG"),
            ],
            Some("n/a: CPU lacks WAITPKG".into()),
        );
        assert_eq!(
            noisy_rows(std::slice::from_ref(&t)),
            Some(Finding::NoisyRows {
                noisy: 1,
                measured: 2
            })
        );
        assert_eq!(noisy_rows(&[]), None);
        let text = noisy_rows(&[t]).unwrap().to_string();
        assert!(text.starts_with("1 of 2 measured rows (50%)"), "{text}");
        assert!(text.contains("with 8 runs or fewer"), "{text}");
    }
}
