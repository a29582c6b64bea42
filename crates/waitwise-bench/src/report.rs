//! `waitwise report`: run every experiment in one configuration and write a
//! directory a person can read:
//!
//! - `index.html`: one self-contained page: a summary (the machine, `B`, the
//!   default poll limits and the measured [`Finding`]s, each linked to its
//!   section), the machine description, then per experiment its tables,
//!   charts as inline SVG and the `waitwise` command that reproduces it;
//! - `results.json`: every number, with units (the experiments' serde
//!   results, keyed by section);
//! - one CSV per table.
//!
//! Each experiment is one [`Section`]; adding an experiment to the report is
//! adding one entry to the list built in [`run`]. A section may carry
//! findings ([`section_with_findings`]): the summary lists them in section
//! order.

use crate::claims;
use crate::experiments::{ExperimentOutput, RenderedChart};
use crate::export::{CsvExporter, Exporter, Table};
use crate::findings::{self, Finding};
use crate::html::{HtmlReport, LinkedRow};
use crate::probe::{self, Probe};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How big a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// Minutes on a small machine.
    Quick,
    /// Paper-sized.
    Full,
    /// Seconds, for tests.
    Tiny,
}

impl Size {
    /// The configuration of this size, from an experiment's three presets.
    pub fn pick<C>(self, quick: fn() -> C, full: fn() -> C, tiny: fn() -> C) -> C {
        match self {
            Size::Quick => quick(),
            Size::Full => full(),
            Size::Tiny => tiny(),
        }
    }
}

/// What to run and where to write.
#[derive(Clone, Debug)]
pub struct ReportConfig {
    /// Output directory (created if missing).
    pub out_dir: PathBuf,
    /// Run size.
    pub size: Size,
    /// The `waitwise` binary, for the sections that run part of their
    /// cells in a child process (`peers`: forced and learned `B`); `None`
    /// leaves those cells out, with a note.
    pub program: Option<PathBuf>,
}

/// One experiment's part of the report.
pub struct Section {
    /// Heading.
    pub title: String,
    /// Key in `results.json`.
    pub key: String,
    /// What the experiment is, in a paragraph.
    pub intro: String,
    /// The `waitwise` command that reproduces this section alone.
    pub command: String,
    /// Tables, charts, notes.
    pub output: Box<dyn ExperimentOutput>,
    /// The full result for `results.json`.
    pub json: serde_json::Value,
    /// Wall time it took, s.
    pub seconds: f64,
    /// What its result shows that belongs in the summary.
    pub findings: Vec<Finding>,
}

/// A finished section from an experiment result.
pub fn section<R: ExperimentOutput + Serialize + 'static>(
    title: &str,
    key: &str,
    intro: &str,
    command: &str,
    run: impl FnOnce() -> R,
) -> Section {
    section_with_findings(title, key, intro, command, run, |_| Vec::new())
}

/// Like [`section`], with the findings `detect` reads from the result.
pub fn section_with_findings<R: ExperimentOutput + Serialize + 'static>(
    title: &str,
    key: &str,
    intro: &str,
    command: &str,
    run: impl FnOnce() -> R,
    detect: impl FnOnce(&R) -> Vec<Finding>,
) -> Section {
    let t = Instant::now();
    let result = run();
    let seconds = t.elapsed().as_secs_f64();
    let findings = detect(&result);
    let json = serde_json::to_value(&result)
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }));
    Section {
        title: title.into(),
        key: key.into(),
        intro: intro.into(),
        command: command.into(),
        output: Box::new(result),
        json,
        seconds,
        findings,
    }
}

/// What was written.
#[derive(Clone, Debug)]
pub struct Written {
    /// `index.html`.
    pub index: PathBuf,
    /// `results.json`.
    pub results: PathBuf,
    /// The CSV files.
    pub csvs: Vec<PathBuf>,
}

/// Keys of the sections whose tables flag noisy rows: the share of their
/// measured rows flagged is a finding.
const NOISE_FLAGGED_SECTIONS: [&str; 5] = [
    "mechanisms",
    "wakeup_matrix",
    "barriers",
    "asymmetry",
    "oversub",
];

/// `ns` in the unit that reads best.
fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "none (never blocks)".into()
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The hardware waits that run here, or why none does.
fn hardware_waits(p: &Probe) -> String {
    let hardware = ["umwait", "tpause", "mwaitx"];
    let available: Vec<&str> = hardware
        .iter()
        .copied()
        .filter(|m| p.mechanisms.get(m).is_some_and(|i| i.available))
        .collect();
    if available.is_empty() {
        "not available on this CPU (no WAITPKG, no MONITORX): waitwise polls with PAUSE instead"
            .into()
    } else {
        available.join(", ")
    }
}

/// The first screen's facts: machine, SMT, hardware waits, `B` with its
/// stability, load, run.
fn summary_facts(p: &Probe, size: Size, seconds: f64) -> Vec<(String, String)> {
    let t = &p.topology;
    let smt = if t.smt_siblings.is_empty() {
        "no SMT siblings".to_string()
    } else {
        format!("{} sets of siblings", t.smt_siblings.len())
    };
    let mut facts = vec![
        (
            "Machine".into(),
            format!(
                "{} ({}), {} CPUs, {} cores, {} packages",
                p.cpu.model, p.cpu.vendor, t.cpus, t.cores, t.packages
            ),
        ),
        ("SMT".into(), smt),
        ("Hardware waits".into(), hardware_waits(p)),
        (
            "B (cost of blocking)".into(),
            format!(
                "{} in force ({}); measured now: {}",
                fmt_ns(p.costs.block_ns),
                p.costs.block_source,
                probe::block_measured_text(&p.costs)
            ),
        ),
    ];
    let st = &p.costs.block_stability;
    if st.machine_busy() {
        facts.push((
            "Load".into(),
            format!(
                "busy: {} other threads wanted a CPU on {} CPUs when the probe ran; figures are those of a busy machine",
                st.other_runnable_threads.unwrap_or(0),
                st.cpus
            ),
        ));
    }
    facts.push((
        "Run".into(),
        format!("{size:?} configuration, {seconds:.0} s of experiments"),
    ));
    facts
}

/// A link to section `key` labelled with its title, when the page has it.
fn link(sections: &[Section], key: &str) -> Option<(String, String)> {
    match key {
        "machine" => Some(("machine".into(), "Machine".into())),
        _ => sections
            .iter()
            .find(|s| s.key == key)
            .map(|s| (key.to_string(), s.title.clone())),
    }
}

/// The first screen's recommendation: per synchronization kind the policy
/// and poll limit, the default lock and barrier, hardware waits, helper
/// threads and SMT placement, each linked to its evidence.
fn recommendations(p: &Probe, sections: &[Section], findings: &[Finding]) -> Vec<LinkedRow> {
    let mut rows: Vec<LinkedRow> = p
        .policy
        .names
        .iter()
        .map(|(kind, name)| {
            let limit = p.policy.poll_limit_ns.get(kind).copied();
            (
                vec![
                    format!("{kind} waits"),
                    format!("{name}, L_poll {}", limit.map_or("?".into(), fmt_ns)),
                ],
                link(sections, "calibration"),
            )
        })
        .collect();
    rows.push((
        vec![
            "waitwise::Mutex".into(),
            waitwise::mutex::RawTtasMutex::new().policy().describe(),
        ],
        link(sections, "peers"),
    ));
    rows.push((
        vec![
            "Barrier".into(),
            format!(
                "{} while the threads fit on the CPUs, {} beyond",
                waitwise::barrier::default_policy(1).describe(),
                waitwise::barrier::default_policy(usize::MAX).describe()
            ),
        ],
        link(sections, "barriers"),
    ));
    rows.push((
        vec!["Hardware waits".into(), hardware_waits(p)],
        link(sections, "machine"),
    ));
    let helpers = match claims::helpers_pay(findings) {
        Some(true) => "pay here: use helper threads for prefetching work",
        Some(false) => "do not pay here: no helper speed-up above 1 within its interval",
        None => "not measured in this run",
    };
    rows.push((
        vec!["Helper threads".into(), helpers.into()],
        link(sections, "helpers"),
    ));
    let smt = if p.topology.smt_siblings.is_empty() {
        "nothing to place: no SMT siblings".to_string()
    } else {
        "one thread per core first, siblings last and parked while their work's utilization is below 0.5".into()
    };
    rows.push((
        vec!["SMT placement".into(), smt],
        link(sections, "interference"),
    ));
    rows
}

/// Every finding: the probe's and each section's, in section order.
fn all_findings(p: &Probe, sections: &[Section]) -> Vec<Finding> {
    let mut all: Vec<Finding> = sections.iter().flat_map(|s| s.findings.clone()).collect();
    all.extend(findings::from_probe(p));
    all
}

/// The share of noisy rows over the sections that flag them.
fn noise_finding(sections: &[Section]) -> Option<Finding> {
    let flagged: Vec<Table> = sections
        .iter()
        .filter(|s| NOISE_FLAGGED_SECTIONS.contains(&s.key.as_str()))
        .flat_map(|s| s.output.tables())
        .collect();
    findings::noisy_rows(&flagged)
}

/// `command_line` with the program named as a user types it (`waitwise`,
/// not `target/release/waitwise`).
fn as_typed(command_line: &str) -> String {
    match command_line.split_once(' ') {
        Some((program, rest)) => {
            let name = program.rsplit('/').next().unwrap_or(program);
            format!("{name} {rest}")
        }
        None => command_line
            .rsplit('/')
            .next()
            .unwrap_or(command_line)
            .into(),
    }
}

/// The first screen: the machine, the recommended configuration, the
/// papers' claims judged here, and the experiments' headlines (the peers'
/// heatmaps).
fn first_screen(
    page: &mut HtmlReport,
    config: &ReportConfig,
    probe: &Probe,
    sections: &[Section],
    command_line: &str,
) {
    let findings = all_findings(probe, sections);
    let seconds: f64 = sections.iter().map(|s| s.seconds).sum();
    page.paragraph(&format!(
        "Generated by `{command_line}`. Every figure was measured on this machine in this run. The evidence \
         behind each line is in the folded sections below the first screen: click a heading, or follow a link."
    ));
    page.section_with_id("This machine", "summary");
    page.facts(&summary_facts(probe, config.size, seconds));
    page.subsection("Recommended here");
    page.linked_table(
        "What waitwise uses on this machine",
        &["what", "recommended here"],
        &recommendations(probe, sections, &findings),
    );
    page.subsection("The papers' claims, measured here");
    let claims: Vec<LinkedRow> = claims::judge(probe, &findings)
        .into_iter()
        .map(|c| {
            let link = link(sections, c.section);
            (
                vec![
                    c.claim.to_string(),
                    c.paper.to_string(),
                    c.measured,
                    c.verdict.to_string(),
                ],
                link,
            )
        })
        .collect();
    page.linked_table(
        "Each claim of the seed papers, and what this run says of it",
        &["claim", "paper", "measured here", "verdict"],
        &claims,
    );
    for s in sections {
        let headline = s.output.headline();
        if headline.tables.is_empty() && headline.charts.is_empty() {
            continue;
        }
        page.subsection(&s.title);
        for t in &headline.tables {
            page.table(t);
        }
        for RenderedChart { caption, svg } in &headline.charts {
            page.svg_with_caption(svg, caption);
        }
    }
}

/// The evidence: one folded section per experiment, after the machine
/// description and how to read the tables. Returns the CSVs written.
fn evidence(
    page: &mut HtmlReport,
    dir: &Path,
    probe: &Probe,
    sections: &[Section],
) -> anyhow::Result<Vec<PathBuf>> {
    page.collapsed_section("How to read the tables", "reading");
    page.paragraph(
        "Timings are medians after dropping warm-up and the first and last 10% of rounds. Columns ending in \
         median_ci95 hold half the width of the 95% confidence interval of the median (order statistics, whatever \
         the distribution; the interval's ends are in results.json), and charts draw that interval as whiskers. A \
         row is flagged noisy when the interval is wider than 20% of the median; notes are numbered under each \
         table. Mechanisms this CPU lacks are listed once, never run.",
    );
    if let Some(noise) = noise_finding(sections) {
        page.paragraph(&noise.to_string());
    }
    page.collapsed_section("Machine", "machine");
    page.preformatted(&probe::to_text(probe));
    let machine_findings: Vec<(String, Option<(String, String)>)> = findings::from_probe(probe)
        .iter()
        .map(|f| (f.to_string(), None))
        .collect();
    page.findings(&machine_findings);
    let mut csvs = Vec::new();
    for s in sections {
        page.collapsed_section(&s.title, &s.key);
        page.paragraph(&s.intro);
        page.preformatted(&format!(
            "Reproduce: {}\n(took {:.1} s in this run)",
            s.command, s.seconds
        ));
        if !s.findings.is_empty() {
            let shown: Vec<(String, Option<(String, String)>)> =
                s.findings.iter().map(|f| (f.to_string(), None)).collect();
            page.findings(&shown);
        }
        for note in s.output.notes() {
            page.paragraph(&note);
        }
        for t in s.output.tables() {
            page.table(&t);
            csvs.push(write_csv(dir, &t)?);
        }
        let headline: Vec<String> = s
            .output
            .headline()
            .charts
            .into_iter()
            .map(|c| c.caption)
            .collect();
        for RenderedChart { caption, svg } in s.output.charts() {
            if !headline.contains(&caption) {
                page.svg_with_caption(&svg, &caption);
            }
        }
    }
    Ok(csvs)
}

/// Writes the report for already-run sections.
pub fn write(
    config: &ReportConfig,
    probe: &Probe,
    sections: &[Section],
    command_line: &str,
) -> anyhow::Result<Written> {
    let dir = &config.out_dir;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the report directory {}", dir.display()))?;
    let command_line = as_typed(command_line);
    let mut page = HtmlReport::new("waitwise report");
    first_screen(&mut page, config, probe, sections, &command_line);
    let csvs = evidence(&mut page, dir, probe, sections)?;
    page.collapsed_section("How to reproduce", "reproduce");
    let mut cmds = format!("{command_line}\n");
    for s in sections {
        cmds.push_str(&s.command);
        cmds.push('\n');
    }
    page.preformatted(&cmds);
    let index = dir.join("index.html");
    std::fs::write(&index, page.finish())
        .with_context(|| format!("writing {}", index.display()))?;
    let mut results: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    results.insert("probe".into(), serde_json::to_value(probe)?);
    for s in sections {
        results.insert(s.key.clone(), s.json.clone());
    }
    let results_path = dir.join("results.json");
    std::fs::write(&results_path, serde_json::to_string_pretty(&results)?)
        .with_context(|| format!("writing {}", results_path.display()))?;
    Ok(Written {
        index,
        results: results_path,
        csvs,
    })
}

fn write_csv(dir: &Path, t: &Table) -> anyhow::Result<PathBuf> {
    let path = dir.join(CsvExporter.file_name(t));
    let text = CsvExporter
        .export(t)
        .with_context(|| format!("exporting table {}", t.name))?;
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// ` --full` for a full run, else nothing: the sections' commands.
fn full_flag(size: Size) -> &'static str {
    if size == Size::Full {
        " --full"
    } else {
        ""
    }
}

/// The report's section of `experiments::mechanisms`.
fn mechanisms_section(config: &ReportConfig, default_policy: &str) -> Section {
    use crate::experiments::mechanisms::{run, Config};
    let full = full_flag(config.size);
    let cfg = config.size.pick(Config::quick, Config::full, Config::tiny);
    section_with_findings(
        "Condition wait / notify (Anastopoulos & Koziris 2008, Table 1)",
        "mechanisms",
        "A worker runs a floating-point kernel and then notifies a waiter waiting on another CPU (its SMT sibling \
         when there is one). T_work is the worker's time (interference), T_wakeup the time from notify to the \
         waiter running, T_call the time inside notify; the short table notifies inside the default poll limit, \
         the sleep table shows the CPU a long wait burns.",
        &format!("waitwise mechanisms{full}"),
        || run(&cfg),
        |r| findings::from_mechanisms(r, default_policy),
    )
}

/// The report's section of `experiments::wakeup_matrix`.
fn wakeup_matrix_section(config: &ReportConfig) -> Section {
    use crate::experiments::wakeup_matrix::{run, Config};
    let full = full_flag(config.size);
    let cfg = config.size.pick(Config::quick, Config::full, Config::tiny);
    section(
        "Wake-up latency between CPUs (Poenaru 2017, section 4.1)",
        "wakeup_matrix",
        "Wake-up latency for every ordered pair of CPUs, per mechanism. Normal setup: the waker and the woken \
         thread each take a timestamp, with roles alternated every round so clock offsets cancel. Reduced \
         setup: the waker takes both stamps around a wake-up and the woken thread's reply.",
        &format!("waitwise wakeup-matrix{full}"),
        || run(&cfg),
    )
}

/// The report's section of `experiments::barriers`.
fn barriers_section(config: &ReportConfig) -> Section {
    use crate::experiments::barriers::{run, Config};
    let full = full_flag(config.size);
    let cfg = config.size.pick(Config::quick, Config::full, Config::tiny);
    section_with_findings(
        "Barriers (Anastopoulos & Koziris 2008, Table 2)",
        "barriers",
        "A worker runs a floating-point kernel and then arrives at a barrier where a helper thread has been waiting \
         since the previous episode. T_work is the worker's time (interference), T_wakeup the time from the \
         worker's arrival to the helper leaving, T_call the worker's time inside wait. The episode table gives \
         the wall time of one episode with threads calling wait back to back, with one thread per CPU and with \
         twice as many threads as CPUs (time-budgeted runs).",
        &format!("waitwise barriers{full}"),
        || run(&cfg),
        findings::from_barriers,
    )
}

/// The report's section of `experiments::asymmetry`.
fn asymmetry_section(config: &ReportConfig) -> Section {
    use crate::experiments::asymmetry::{run, Config};
    let full = full_flag(config.size);
    let cfg = config.size.pick(Config::quick, Config::full, Config::tiny);
    section(
        "Barriers under workload asymmetry (Anastopoulos & Koziris 2008, Fig. 4)",
        "asymmetry",
        "Two threads loop with a barrier between iterations; the unit of work is a 10x10 floating-point matrix \
         multiply, the heavy thread does 10 units per iteration and the light thread 0 to 10. The total time of \
         the loop per barrier implementation and light load, and each implementation's speed-up over \
         pthread_barrier_wait.",
        &format!("waitwise asymmetry{full}"),
        || run(&cfg),
    )
}

/// The report's section of `experiments::interference`.
fn interference_section(config: &ReportConfig) -> Section {
    use crate::experiments::interference::{run, Config};
    let full = full_flag(config.size);
    let cfg = config.size.pick(Config::quick, Config::full, Config::tiny);
    section_with_findings(
        "What a waiting thread costs its neighbour (UltraSPARC T2 spin-loop study; Poenaru 2017)",
        "interference",
        "An active thread runs a kernel (integer chain, FP divide/multiply, streaming sweep, pointer chase, \
         10x10 matrix multiply) while a co-runner waits on an unchanging word with each mechanism, per \
         placement (SMT sibling, same CPU time-shared, another core, another package; n/a with the reason). \
         Slowdown against alone, the co-runner's CPU use and its wake-up latency when released; the charts \
         put slowdown against wake-up latency (the trade-off frontier). SMT throughput and park/resume per \
         mechanism where the machine has SMT.",
        &format!("waitwise interference{full}"),
        || run(&cfg),
        findings::from_interference,
    )
}

/// The report's section of `experiments::oversub`.
fn oversub_section(config: &ReportConfig) -> Section {
    use crate::experiments::oversub::{run, Config};
    let full = full_flag(config.size);
    let cfg = config.size.pick(Config::quick, Config::full, Config::tiny);
    section_with_findings(
        "Matched and unmatched runs (Lim & Agarwal 1993, Tables 2-5)",
        "oversub",
        "A producer-consumer ring, a barrier loop and a mutex loop, each with as many threads as CPUs (matched) \
         and with 2x and 4x as many (unmatched), under always-spin (with a deadlock-avoidance timeout), \
         always-block, two-phase and randomized waiting, the objects' defaults and the pthread peers. Runtime \
         is normalized to always-block (/b/0) as in the paper; blocks are waits that slept; waiting overhead \
         is CPU time beyond the useful work.",
        &format!("waitwise oversub{full}"),
        || run(&cfg),
        findings::from_oversub,
    )
}

/// The report's section of `experiments::calibration`.
fn calibration_section(config: &ReportConfig) -> Section {
    use crate::experiments::calibration::{run_in_model_regime, Config};
    let full = full_flag(config.size);
    let cfg = config.size.pick(Config::quick, Config::full, Config::tiny);
    section_with_findings(
        "The cost model checked against this machine (Lim & Agarwal 1993, section 4)",
        "calibration",
        "A producer releases a consumer after waits drawn from an exponential or uniform law spanning \
         0.1 to 10 times B; each policy's measured waiting cost (CPU burned polling plus blocks times B) over \
         the offline optimum is compared with the model's prediction using the measured B.",
        &format!("waitwise model calibrate{full}"),
        // As the command runs by default: the model's regime, with
        // adapt/b's idle extension off (the sections before run it
        // as programs do).
        || run_in_model_regime(&cfg),
        findings::from_calibration,
    )
}

/// The report's section of `experiments::peers`.
fn peers_section(config: &ReportConfig) -> Section {
    use crate::experiments::peers::{run, Config};
    let full = full_flag(config.size);
    let cfg = Config {
        program: config.program.clone(),
        ..config.size.pick(Config::quick, Config::full, Config::tiny)
    };
    section(
        "waitwise against its peers",
        "peers",
        "Each primitive against the libraries used instead of it (mutex, rwlock and condvar: parking_lot and \
         std; channel: crossbeam-channel and std::sync::mpsc; barrier: std, pthread and a spin barrier; event: a \
         spin and a futex hand-off; pool: rayon) over a grid of operating points: critical section, gap between \
         operations, threads per CPU, message size and capacity, the block cost B, a busy co-runner on every CPU. \
         Per cell, waitwise's figures over the best peer's (the one with the highest median throughput): \
         throughput with its 95% interval, p99 and longest wait, least/most served, CPU time per operation. \
         A forced B (block low or high) is forced in waitwise's policy only (WAITWISE_BLOCK_NS in a child \
         process): the machine's wake-ups still cost what they cost, so those cells show waitwise's waits built \
         on a B that is wrong for the machine, and the peers as they always run.",
        &format!("waitwise peers{full}"),
        || run(&cfg),
    )
}

/// The report's section of `helpers::experiment`.
fn helpers_section(config: &ReportConfig) -> Section {
    use crate::helpers::experiment::{run, Config};
    let full = full_flag(config.size);
    let cfg = config.size.pick(Config::quick, Config::full, Config::tiny);
    section_with_findings(
        "Helper threads (Anastopoulos & Koziris 2008, section 4.4; Anastopoulos 2009, part II)",
        "helpers",
        "Each application serially and with helper threads under each helper wait: SPR (speculative \
         precomputation: one helper a phase ahead prefetches what the worker will read) for sparse matrix-vector \
         multiply, blocked LU and blocked transitive closure, and Dijkstra with helpers speculatively relaxing \
         the next minimum vertices (atomic fetch-min in place of transactional memory). Speed-up is serial time \
         over helper time per run; interference is the worker's time with a helper that only waits over serial; \
         NAS BT is not ported.",
        &format!("waitwise helpers{full}"),
        || run(&cfg),
        findings::from_helpers,
    )
}

/// The model's section: its figures computed now.
fn model_section() -> anyhow::Result<Section> {
    eprintln!("[report] model figures");
    let figures = crate::experiments::model_figures::run()?;
    Ok(section(
        "Competitive analysis (Lim & Agarwal 1993, Figures 2-3, Theorems 3-4)",
        "model",
        "Competitive factor of each two-phase policy against the optimal offline algorithm, for exponential \
         and uniform wait times, and the alpha that minimizes the worst case per synchronization kind next to \
         the static defaults waitwise uses.",
        "waitwise model curves --dist exponential; waitwise model alpha --all",
        move || figures,
    ))
}

/// Runs the probe and every experiment at `config.size`, then writes the
/// report. Progress goes to stderr.
pub fn run(config: &ReportConfig, command_line: &str) -> anyhow::Result<Written> {
    eprintln!("[report] probe");
    let probe = probe::run()?;
    let default_policy = probe
        .policy
        .names
        .get("producer-consumer")
        .cloned()
        .unwrap_or_default();
    let mut sections = vec![
        mechanisms_section(config, &default_policy),
        wakeup_matrix_section(config),
        barriers_section(config),
        asymmetry_section(config),
        interference_section(config),
        oversub_section(config),
        calibration_section(config),
        peers_section(config),
        helpers_section(config),
    ];
    sections.push(model_section()?);
    write(config, &probe, &sections, command_line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{Cell, Column};

    /// An experiment result with one measured, noisy row and one row for a
    /// mechanism the CPU lacks.
    #[derive(Serialize)]
    struct Fake;

    impl ExperimentOutput for Fake {
        fn tables(&self) -> Vec<Table> {
            let columns = ["contender", "t_wakeup", "t_call", "waiter_cpu"]
                .iter()
                .map(|k| Column::new(*k, None, "doc"))
                .collect();
            let mut t = Table::new("fake", "Fake table", columns);
            t.push_row(
                vec![
                    Cell::text("spin"),
                    Cell::Number(80.0),
                    Cell::Number(40.0),
                    Cell::Number(99.0),
                ],
                Some(crate::experiments::table_parts::NOISY_NOTE.into()),
            );
            let na = || Cell::missing("n/a: CPU lacks WAITPKG");
            t.push_row(
                vec![Cell::text("umwait"), na(), na(), na()],
                Some("n/a: CPU lacks WAITPKG".into()),
            );
            vec![t]
        }
        fn charts(&self) -> Vec<RenderedChart> {
            Vec::new()
        }
        fn notes(&self) -> Vec<String> {
            Vec::new()
        }
    }

    #[test]
    fn page_opens_with_a_summary_of_linked_findings() {
        let dir = std::env::temp_dir().join(format!("waitwise-report-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let probe = probe::run().unwrap();
        let pause = Finding::PauseVsPlainLoop {
            ratio: 0.8,
            low: 0.7,
            high: 0.9,
        };
        let s = section_with_findings(
            "Condition wait / notify",
            "mechanisms",
            "intro",
            "waitwise mechanisms",
            || Fake,
            |_| vec![pause.clone()],
        );
        let config = ReportConfig {
            out_dir: dir.clone(),
            size: Size::Tiny,
            program: None,
        };
        let written = write(
            &config,
            &probe,
            &[s],
            "target/release/waitwise report --tiny",
        )
        .unwrap();
        let html = std::fs::read_to_string(&written.index).unwrap();
        let at = |text: &str| html.find(text).unwrap_or_else(|| panic!("no {text}"));
        // The first screen comes first, then the folded evidence.
        assert!(at("<section id=\"summary\">") < at("<section class=\"evidence\" id=\"machine\">"));
        assert!(
            at("<section class=\"evidence\" id=\"machine\">")
                < at("<section class=\"evidence\" id=\"mechanisms\">")
        );
        assert!(html.contains(
            "<details class=\"evidence\"><summary><h2>Condition wait / notify</h2></summary>"
        ));
        for fact in [
            "Machine",
            "Hardware waits",
            "B (cost of blocking)",
            "Recommended here",
            "producer-consumer waits",
            "The papers' claims, measured here",
        ] {
            at(fact);
        }
        // The claim the finding answers is judged and links to its
        // evidence, where the finding itself is written.
        at("PAUSE loop wakes in 0.80x the plain loop's time");
        at("<td class=\"fails\">does not hold</td><td><a href=\"#mechanisms\">Condition wait / notify</a></td>");
        assert!(at(&pause.to_string()) > at("id=\"mechanisms\""));
        at("1 of 1 measured rows (100%) are flagged noisy");
        // The n/a row reads once, in one cell across the figure columns.
        assert_eq!(html.matches("n/a: CPU lacks WAITPKG").count(), 1);
        at("colspan=\"3\"");
        // Notes are numbered footnotes, not a column.
        at("<ol class=\"notes\"><li>");
        assert!(!html.contains("class=\"note\""));
        // Commands as a user of the installed tool types them.
        at("Generated by <code>waitwise report --tiny</code>");
        at("Reproduce: waitwise mechanisms");
        assert!(!html.contains("cargo run") && !html.contains("goal"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn program_is_named_as_typed() {
        assert_eq!(
            as_typed("target/release/waitwise report"),
            "waitwise report"
        );
        assert_eq!(as_typed("waitwise"), "waitwise");
        assert_eq!(as_typed("/usr/bin/waitwise"), "waitwise");
    }
}
