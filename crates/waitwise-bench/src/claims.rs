//! The seed papers' claims, each judged on this machine: the table the
//! report opens with.
//!
//! A [`Claim`] is a sentence from a paper, what this run measured for it
//! and a [`Verdict`]: it holds, it does not hold, it cannot run on this
//! machine (and why), or this run did not measure it. Verdicts come from
//! the [`Finding`]s the experiments report and from the probe (a claim
//! about SMT siblings or hardware waits cannot run where the CPU has
//! none); the thresholds that decide "holds" are named constants below,
//! each stating the paper's claim it tests.

use std::fmt;

use crate::findings::Finding;
use crate::probe::Probe;

/// Two-phase waiting's short wake-up over spinning's, at most, for "wakes
/// almost as fast as spinning".
const TWO_PHASE_WAKEUP_AT_MOST: f64 = 2.0;
/// The CPU share two-phase waiting may burn over a long wait, at most
/// (percent), for "frees the CPU".
const TWO_PHASE_LONG_CPU_AT_MOST_PCT: f64 = 5.0;
/// pthread's barrier episode over waitwise's, at least, for "a blocking
/// barrier costs several times a spinning one".
const BARRIER_PTHREAD_AT_LEAST: f64 = 2.0;
/// Always-spin's runtime over the default's with more threads than CPUs,
/// at least, for "spinning degrades".
const SPIN_OVERSUBSCRIBED_AT_LEAST: f64 = 1.5;
/// Share of decided policy pairs in the model's order, at least, for "the
/// model predicts the order".
const MODEL_ORDER_AT_LEAST: f64 = 0.8;
/// A sibling's slowdown under a spinning co-runner, at least (time
/// factor), for "spinning slows the sibling".
const SIBLING_SLOWDOWN_AT_LEAST: f64 = 1.05;
/// A hardware wait's wake-up over spinning's, at most, for "almost as fast
/// as spinning".
const HARDWARE_WAKEUP_AT_MOST: f64 = 1.5;
/// An SMT pair's throughput over one thread, within this of seed 004's
/// 1.33, for "about 1.33x".
const SMT_PAIR_WITHIN: f64 = 0.15;

/// What this run says of a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Measured, and it holds here.
    Holds,
    /// Measured, and it does not hold here.
    DoesNotHold,
    /// This machine lacks what the claim needs (the reason).
    CannotRunHere(String),
    /// This run did not measure it (the reason).
    NotMeasured(String),
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Holds => f.write_str("holds"),
            Verdict::DoesNotHold => f.write_str("does not hold"),
            Verdict::CannotRunHere(why) => write!(f, "cannot run here: {why}"),
            Verdict::NotMeasured(why) => write!(f, "not measured: {why}"),
        }
    }
}

/// One claim of a seed paper, judged here.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// The claim, in a sentence.
    pub claim: &'static str,
    /// The paper and where in it.
    pub paper: &'static str,
    /// What was measured here, briefly (empty when nothing was).
    pub measured: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The report section holding the evidence.
    pub section: &'static str,
}

/// Every claim, judged from `findings` (all sections') and the probe.
pub fn judge(probe: &Probe, findings: &[Finding]) -> Vec<Claim> {
    let hardware = HardwareWaits::of(probe);
    let smt = !probe.topology.smt_siblings.is_empty();
    vec![
        two_phase(findings),
        pause_loop(findings),
        sibling_slowdown(findings, smt),
        hardware_wakeup(findings, &hardware),
        barrier(findings),
        oversubscribed(findings),
        model_order(findings),
        cpu_distance(probe),
        smt_pair(findings, smt),
        helpers(findings),
    ]
}

/// The hardware waits this CPU has, for the claims that need one.
struct HardwareWaits {
    /// Why none runs here, when none does.
    missing: Option<String>,
}

impl HardwareWaits {
    fn of(probe: &Probe) -> HardwareWaits {
        let any = probe.features.waitpkg || probe.features.monitorx;
        HardwareWaits {
            missing: (!any).then(|| "the CPU has neither WAITPKG nor MONITORX".to_owned()),
        }
    }
}

/// The verdict of a measured claim.
fn holds(yes: bool) -> Verdict {
    if yes {
        Verdict::Holds
    } else {
        Verdict::DoesNotHold
    }
}

/// A claim this run did not measure: the section did not run or its rows
/// were empty.
fn not_measured(
    claim: &'static str,
    paper: &'static str,
    section: &'static str,
    why: &str,
) -> Claim {
    Claim {
        claim,
        paper,
        measured: String::new(),
        verdict: Verdict::NotMeasured(why.to_owned()),
        section,
    }
}

/// A claim this machine lacks what it needs for (the reason).
fn cannot_run_here(
    claim: &'static str,
    paper: &'static str,
    section: &'static str,
    why: &str,
) -> Claim {
    Claim {
        claim,
        paper,
        measured: String::new(),
        verdict: Verdict::CannotRunHere(why.to_owned()),
        section,
    }
}

fn two_phase(findings: &[Finding]) -> Claim {
    let (claim, paper, section) = (
        "Two-phase waiting (poll alpha*B, then block) wakes almost as fast as spinning and frees the CPU on a long wait",
        "Lim & Agarwal 1993; Anastopoulos & Koziris 2008",
        "mechanisms",
    );
    findings
        .iter()
        .find_map(|f| match f {
            Finding::TwoPhaseWaiting {
                short_wakeup_ns,
                spin_short_wakeup_ns,
                long_cpu_pct,
                long_wait_ms,
                ..
            } => {
                let ratio = short_wakeup_ns / spin_short_wakeup_ns;
                Some(Claim {
                    claim,
                    paper,
                    measured: format!(
                        "wake-up {ratio:.2}x spinning's; {long_cpu_pct:.2}% of a CPU over {long_wait_ms} ms"
                    ),
                    verdict: holds(
                        ratio <= TWO_PHASE_WAKEUP_AT_MOST
                            && *long_cpu_pct <= TWO_PHASE_LONG_CPU_AT_MOST_PCT,
                    ),
                    section,
                })
            }
            _ => None,
        })
        .unwrap_or_else(|| not_measured(claim, paper, section, "no wake-up rows in this run"))
}

fn pause_loop(findings: &[Finding]) -> Claim {
    let (claim, paper, section) = (
        "A long-latency instruction in the spin loop costs the waiter responsiveness",
        "UltraSPARC T2 spin-loop study",
        "mechanisms",
    );
    findings
        .iter()
        .find_map(|f| match f {
            Finding::PauseVsPlainLoop { ratio, low, high } => Some(Claim {
                claim,
                paper,
                measured: format!(
                    "PAUSE loop wakes in {ratio:.2}x the plain loop's time (95% CI {low:.2}-{high:.2})"
                ),
                verdict: holds(*low > 1.0),
                section,
            }),
            _ => None,
        })
        .unwrap_or_else(|| not_measured(claim, paper, section, "no PAUSE row in this run"))
}

fn sibling_slowdown(findings: &[Finding], smt: bool) -> Claim {
    let (claim, paper, section) = (
        "A thread spinning on an SMT sibling slows the active thread; a hardware or blocking wait does not",
        "Anastopoulos & Koziris 2008; UltraSPARC T2 spin-loop study",
        "interference",
    );
    if !smt {
        return cannot_run_here(claim, paper, section, "no SMT siblings");
    }
    findings
        .iter()
        .find_map(|f| match f {
            Finding::SiblingSlowdown {
                spin_factor,
                best,
                best_factor,
            } => Some(Claim {
                claim,
                paper,
                measured: format!(
                    "spinning: {:+.0}%; {best}: {:+.0}%",
                    100.0 * (spin_factor - 1.0),
                    100.0 * (best_factor - 1.0)
                ),
                verdict: holds(
                    *spin_factor >= SIBLING_SLOWDOWN_AT_LEAST && best_factor < spin_factor,
                ),
                section,
            }),
            _ => None,
        })
        .unwrap_or_else(|| not_measured(claim, paper, section, "no sibling placement measured"))
}

fn hardware_wakeup(findings: &[Finding], hardware: &HardwareWaits) -> Claim {
    let (claim, paper, section) = (
        "A MONITOR/MWAIT-style wait wakes almost as fast as spinning",
        "Anastopoulos & Koziris 2008; Poenaru 2017",
        "mechanisms",
    );
    if let Some(why) = &hardware.missing {
        return cannot_run_here(claim, paper, section, why);
    }
    findings
        .iter()
        .find_map(|f| match f {
            Finding::HardwareWaitWakeup { mechanism, ratio } => Some(Claim {
                claim,
                paper,
                measured: format!("{mechanism}: {ratio:.2}x spinning's wake-up"),
                verdict: holds(*ratio <= HARDWARE_WAKEUP_AT_MOST),
                section,
            }),
            _ => None,
        })
        .unwrap_or_else(|| not_measured(claim, paper, section, "no hardware-wait row in this run"))
}

fn barrier(findings: &[Finding]) -> Claim {
    let (claim, paper, section) = (
        "A blocking barrier costs several times a spinning one per episode when the threads fit on the CPUs",
        "Anastopoulos & Koziris 2008, Table 2",
        "barriers",
    );
    findings
        .iter()
        .find_map(|f| match f {
            Finding::BarrierVsPthread { threads, ratio, .. } => Some(Claim {
                claim,
                paper,
                measured: format!(
                    "pthread_barrier_wait {ratio:.1}x waitwise's Barrier, {threads} threads"
                ),
                verdict: holds(*ratio >= BARRIER_PTHREAD_AT_LEAST),
                section,
            }),
            _ => None,
        })
        .unwrap_or_else(|| not_measured(claim, paper, section, "no episode rows in this run"))
}

fn oversubscribed(findings: &[Finding]) -> Claim {
    let (claim, paper, section) = (
        "Always-spin degrades when threads outnumber processors; two-phase waiting does not",
        "Lim & Agarwal 1993, Tables 2-5",
        "oversub",
    );
    let worst: Vec<(&str, usize, f64)> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::SpinOversubscribed {
                workload,
                multiplier,
                spin_ms,
                default_ms,
            } => Some((workload.as_str(), *multiplier, spin_ms / default_ms)),
            _ => None,
        })
        .collect();
    if worst.is_empty() {
        return not_measured(claim, paper, section, "no oversubscribed runs in this run");
    }
    let measured = worst
        .iter()
        .map(|(w, m, r)| format!("{w} {r:.1}x at {m}x threads"))
        .collect::<Vec<_>>()
        .join("; ");
    Claim {
        claim,
        paper,
        measured: format!("always-spin over the default: {measured}"),
        verdict: holds(
            worst
                .iter()
                .all(|&(_, _, r)| r >= SPIN_OVERSUBSCRIBED_AT_LEAST),
        ),
        section,
    }
}

fn model_order(findings: &[Finding]) -> Claim {
    let (claim, paper, section) = (
        "The cost model predicts which waiting policy costs less",
        "Lim & Agarwal 1993, section 4",
        "calibration",
    );
    findings
        .iter()
        .find_map(|f| match f {
            Finding::ModelOrdering {
                concordant,
                decided,
                ..
            } => Some(Claim {
                claim,
                paper,
                measured: format!("{concordant} of {decided} policy pairs in the predicted order"),
                verdict: holds(*concordant as f64 >= MODEL_ORDER_AT_LEAST * *decided as f64),
                section,
            }),
            _ => None,
        })
        .unwrap_or_else(|| {
            not_measured(claim, paper, section, "no decided policy pairs in this run")
        })
}

fn cpu_distance(probe: &Probe) -> Claim {
    let t = &probe.topology;
    let (claim, paper, section) = (
        "Wake-up latency depends on where the two CPUs sit (SMT sibling, core, package)",
        "Poenaru 2017, section 4.1",
        "wakeup_matrix",
    );
    let levels = usize::from(!t.smt_siblings.is_empty()) + usize::from(t.packages > 1);
    let verdict = if levels == 0 {
        Verdict::CannotRunHere(format!(
            "{} CPUs in one package without SMT siblings: every pair sits alike",
            t.cpus
        ))
    } else {
        Verdict::NotMeasured("judged from the wake-up heatmaps by eye".into())
    };
    Claim {
        claim,
        paper,
        measured: String::new(),
        verdict,
        section,
    }
}

fn smt_pair(findings: &[Finding], smt: bool) -> Claim {
    let (claim, paper, section) = (
        "Two threads on SMT siblings give about 1.33x one thread's throughput",
        "Poenaru 2017",
        "interference",
    );
    if !smt {
        return cannot_run_here(claim, paper, section, "no SMT siblings");
    }
    findings
        .iter()
        .find_map(|f| match f {
            Finding::SmtPairThroughput { pair } => Some(Claim {
                claim,
                paper,
                measured: format!("{pair:.2}x"),
                verdict: holds((pair - 1.33).abs() <= SMT_PAIR_WITHIN),
                section,
            }),
            _ => None,
        })
        .unwrap_or_else(|| not_measured(claim, paper, section, "no SMT throughput rows"))
}

fn helpers(findings: &[Finding]) -> Claim {
    let (claim, paper, section) = (
        "Helper threads (speculative precomputation) speed up the worker",
        "Anastopoulos & Koziris 2008, 4.4; Anastopoulos 2009",
        "helpers",
    );
    findings
        .iter()
        .find_map(|f| match f {
            Finding::HelperSpeedup {
                workload,
                median,
                low,
                high,
                ..
            } => Some(Claim {
                claim,
                paper,
                measured: format!("best {median:.2}x ({workload}; 95% CI {low:.2}-{high:.2})"),
                verdict: holds(*low > 1.0),
                section,
            }),
            _ => None,
        })
        .unwrap_or_else(|| not_measured(claim, paper, section, "no helper rows in this run"))
}

/// Whether helper threads pay on this machine, from the helpers finding:
/// `Some(true)` when the best speed-up's interval lies above 1.
pub fn helpers_pay(findings: &[Finding]) -> Option<bool> {
    findings.iter().find_map(|f| match f {
        Finding::HelperSpeedup { low, .. } => Some(*low > 1.0),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe() -> Probe {
        crate::probe::run().unwrap()
    }

    #[test]
    fn every_claim_has_a_verdict_and_a_section() {
        let claims = judge(&probe(), &[]);
        assert_eq!(claims.len(), 10);
        for c in &claims {
            assert!(!c.section.is_empty() && !c.paper.is_empty());
            // Nothing measured: every verdict says why.
            assert!(
                matches!(
                    c.verdict,
                    Verdict::NotMeasured(_) | Verdict::CannotRunHere(_)
                ),
                "{c:?}"
            );
        }
    }

    #[test]
    fn measured_claims_hold_or_not_by_their_thresholds() {
        let findings = [
            Finding::BarrierVsPthread {
                threads: 2,
                waitwise_ns: 100.0,
                pthread_ns: 15_000.0,
                ratio: 150.0,
            },
            Finding::ModelOrdering {
                concordant: 5,
                decided: 10,
                cells: 4,
            },
            Finding::SpinOversubscribed {
                workload: "barrier".into(),
                multiplier: 4,
                spin_ms: 900.0,
                default_ms: 100.0,
            },
        ];
        let claims = judge(&probe(), &findings);
        let verdict = |section: &str| {
            claims
                .iter()
                .find(|c| c.section == section)
                .unwrap()
                .verdict
                .clone()
        };
        assert_eq!(verdict("barriers"), Verdict::Holds);
        assert_eq!(verdict("calibration"), Verdict::DoesNotHold);
        assert_eq!(verdict("oversub"), Verdict::Holds);
    }

    #[test]
    fn smt_claims_cannot_run_without_siblings() {
        let mut p = probe();
        p.topology.smt_siblings.clear();
        p.topology.packages = 1;
        p.features.waitpkg = false;
        p.features.monitorx = false;
        let claims = judge(&p, &[]);
        let cannot = claims
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::CannotRunHere(_)))
            .count();
        assert_eq!(cannot, 4, "{claims:#?}");
        assert_eq!(
            claims[3].verdict.to_string(),
            "cannot run here: the CPU has neither WAITPKG nor MONITORX"
        );
    }
}
