//! `waitwise model`: the cost model of Lim & Agarwal 1993 made executable.
//!
//! | subcommand | what it prints |
//! |---|---|
//! | `curves --dist exponential\|uniform [--svg FILE]` | Figure 2 / 3: competitive factor against `lambda*beta*B` / `U/(beta*B)`, one curve per alpha and the randomized policy |
//! | `alpha --dist MODEL` / `alpha --all` | the minimax alpha and its worst-case factor (`--json`: exactly `{"alpha", "worst_case_factor"}`) |
//! | `fit PROFILE.json [--block-ns B]` | exponential and uniform fits per object (Appendix A) and the alpha they recommend |
//! | `calibrate [--full]` | the model checked against this machine (`waitwise_bench::experiments::calibration`) |

use super::output::{emit, OutputArgs, Printout};
use super::paths::{check_writable_dir, check_writable_file};
use super::preset::preset;
use super::profile::{
    block_cost_ns, load, no_waits_or, positive_f64, static_alpha_cell,
    static_and_profile_alpha_columns,
};
use super::stdout::{errln, outln};
use anyhow::Context;
use serde::Serialize;
use std::path::PathBuf;
use waitwise_bench::experiments::calibration::{
    run as run_calibration, Config as CalibrationConfig,
};
use waitwise_bench::experiments::model_figures::{
    alpha_table, alpha_table_view, curves_svg, curves_table, kind_of, model_name,
};
use waitwise_bench::experiments::ExperimentOutput;
use waitwise_bench::export::{Cell, Column, Table};
use waitwise_model::algorithm::{format_alpha, ALPHA_EXPONENTIAL};
use waitwise_model::curves::{figure, CurveDistribution};
use waitwise_model::fit::{self, FitResult};
use waitwise_model::minimax::{optimal_alpha, worst_case, AlphaResult, MinimaxModel};

/// In the text table of `model curves`, one row per this many points (the
/// curves have 25 points per decade; `--csv` and `--json` give all of them).
const TEXT_ROW_STRIDE: usize = 5;

/// Largest `M` of `--dist barrier:M` (measured: the search takes about 2 ms
/// per participant in a release build, so about 2 s at the limit).
const MAX_BARRIER_PARTICIPANTS: u32 = 1024;
/// Largest `M` of `--dist mutex:M[:LOAD]` (measured: about 50 ms per
/// requester when the adversary picks the load, so about 3 s at the limit).
const MAX_MUTEX_REQUESTERS: u32 = 64;
/// Largest `R` of `--dist erlang:R` (measured: about 2 ms per order, so
/// about 2 s at the limit).
const MAX_ERLANG_ORDER: u32 = 1000;

/// Options of `waitwise model`.
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// What to compute.
    #[command(subcommand)]
    pub command: ModelCommand,
}

impl ModelArgs {
    /// Whether this subcommand measures the machine (`calibrate`).
    pub fn measures(&self) -> bool {
        matches!(self.command, ModelCommand::Calibrate(_))
    }
}

/// The `waitwise model` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum ModelCommand {
    /// Competitive factor per alpha against the wait scale (Lim & Agarwal
    /// 1993, Figures 2 and 3).
    Curves(CurvesArgs),
    /// The alpha minimizing the worst-case competitive factor of a wait-time model.
    Alpha(AlphaArgs),
    /// Fit exponential and uniform models to a recorded wait profile and
    /// recommend alpha (Lim & Agarwal 1993, Appendix A).
    Fit(FitArgs),
    /// Measured competitive factors on this machine vs the model's
    /// predictions (Lim & Agarwal 1993, section 4).
    Calibrate(CalibrateArgs),
}

/// Wait-time family of a figure.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveDist {
    /// Figure 2: exponential waits, x = lambda*beta*B.
    Exponential,
    /// Figure 3: uniform waits, x = U/(beta*B).
    Uniform,
}

/// Options of `waitwise model curves`.
#[derive(clap::Args, Debug)]
pub struct CurvesArgs {
    /// Wait-time family.
    #[arg(long, value_enum)]
    pub dist: CurveDist,
    /// Write the figure as SVG to this file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Options of `waitwise model alpha`.
#[derive(clap::Args, Debug)]
pub struct AlphaArgs {
    /// Wait-time model: exponential, uniform, erlang:R (R in 1..=1000),
    /// barrier[:M] (M in 2..=1024, default 64) or mutex[:M[:LOAD]] (M in
    /// 2..=64, default 16; LOAD > 0, default: the adversary picks it).
    #[arg(long, value_parser = parse_model, required_unless_present = "all", conflicts_with = "all")]
    pub dist: Option<MinimaxModel>,
    /// The table for every synchronization kind, model vs static default.
    #[arg(long)]
    pub all: bool,
    /// Print one JSON object: `{"alpha": .., "worst_case_factor": ..}` (with
    /// `--all`: an array of per-kind objects).
    #[arg(long)]
    pub json: bool,
}

/// Options of `waitwise model fit`.
#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// The profile file (JSON): one WaitProfile, an array of them, or
    /// `{"objects": [...]}` as the interposer writes it.
    pub profile: PathBuf,
    /// Block cost B in ns (default: the file's `block_cost_ns`, else this
    /// machine's starting B).
    #[arg(long, value_parser = positive_f64)]
    pub block_ns: Option<f64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Options of `waitwise model calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// More scales and rounds (minutes instead of under one).
    #[arg(long)]
    pub full: bool,
    /// Measured rounds per cell (default 300 quick, 3000 full).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub rounds: Option<u32>,
    /// Write the charts here as calibration_<dist>.svg.
    #[arg(long, value_name = "DIR")]
    pub svg_dir: Option<PathBuf>,
    /// `adapt/b`'s idle-CPU signal (`waitwise::policy::idle_extension`)
    /// for the run (noted on stderr). Default `busy`: no extension, the
    /// regime of the cost model, which charges every poll its CPU time;
    /// with `auto` or `idle` the extension's polls past the limit are
    /// charged on a quiet machine, and on a loaded one a poller that
    /// yielded its CPU is charged neither the time it did not run nor its
    /// late wake-up (factors under 1 were seen).
    #[arg(long, value_enum, default_value = "busy")]
    pub idle_signal: super::oversub::IdleSignalArg,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Parses `--dist` and bounds the sizes, whose search time grows with them
/// (see the `MAX_*` constants).
fn parse_model(s: &str) -> Result<MinimaxModel, String> {
    let model = s.parse::<MinimaxModel>().map_err(|e| e.to_string())?;
    let (what, value, max) = match model {
        MinimaxModel::Erlang { order } => ("erlang:R accepts R in 1", order, MAX_ERLANG_ORDER),
        MinimaxModel::BarrierMixture { participants } => (
            "barrier:M accepts M in 2",
            participants,
            MAX_BARRIER_PARTICIPANTS,
        ),
        MinimaxModel::Mm1mMutex { requesters, .. } => {
            ("mutex:M accepts M in 2", requesters, MAX_MUTEX_REQUESTERS)
        }
        MinimaxModel::Exponential | MinimaxModel::Uniform => return Ok(model),
    };
    if value > max {
        return Err(format!(
            "{what}..={max} (the search time grows with it), got {value}"
        ));
    }
    Ok(model)
}

/// Checks the output paths of the subcommand before anything runs.
///
/// # Errors
/// An SVG, export or chart path that cannot be written.
pub fn validate(args: &ModelArgs) -> anyhow::Result<()> {
    match &args.command {
        ModelCommand::Curves(a) => {
            if let Some(path) = &a.svg {
                check_writable_file("--svg", path)?;
            }
            a.output.validate()
        }
        ModelCommand::Alpha(_) => Ok(()),
        ModelCommand::Fit(a) => a.output.validate(),
        ModelCommand::Calibrate(a) => {
            if let Some(dir) = &a.svg_dir {
                check_writable_dir("--svg-dir", dir)?;
            }
            a.output.validate()
        }
    }
}

/// Runs the subcommand.
pub fn run(args: &ModelArgs) -> anyhow::Result<()> {
    match &args.command {
        ModelCommand::Curves(a) => curves(a),
        ModelCommand::Alpha(a) => alpha(a),
        ModelCommand::Fit(a) => fit_profile(a),
        ModelCommand::Calibrate(a) => calibrate(a),
    }
}

// ---------------------------------------------------------------- curves

fn curves(args: &CurvesArgs) -> anyhow::Result<()> {
    let dist = match args.dist {
        CurveDist::Exponential => CurveDistribution::Exponential,
        CurveDist::Uniform => CurveDistribution::Uniform,
    };
    let c = figure(dist);
    if let Some(path) = &args.svg {
        std::fs::write(path, curves_svg(&c)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        errln!("waitwise: wrote {}", path.display());
    }
    let rows = c.series.first().map_or(0, |s| s.points.len());
    let note = format!(
        "(every {TEXT_ROW_STRIDE}th of {rows} points; --csv or --json for all. x is {}.)",
        c.x_label
    );
    Printout::new(&c, vec![curves_table(&c, 1)])
        .text_tables(vec![curves_table(&c, TEXT_ROW_STRIDE)])
        .notes(vec![note])
        .emit(&args.output)
}

// ----------------------------------------------------------------- alpha

fn alpha(args: &AlphaArgs) -> anyhow::Result<()> {
    if args.all {
        let rows = alpha_table()?;
        let t = alpha_table_view(&rows);
        return Printout::new(&rows, vec![t]).emit(&OutputArgs::json_only(args.json));
    }
    let Some(model) = args.dist.as_ref() else {
        anyhow::bail!("give --dist MODEL or --all");
    };
    let r: AlphaResult = optimal_alpha(model)?;
    if args.json {
        return outln!("{}", serde_json::to_string_pretty(&r)?);
    }
    outln!(
        "{}: optimal alpha {:.4}, worst-case competitive factor {:.4} (s/b/{})",
        model_name(model),
        r.alpha,
        r.worst_case_factor,
        format_alpha(r.alpha)
    )?;
    if let Some(kind) = kind_of(model) {
        let a = kind.default_alpha();
        let w = worst_case(model, a)?;
        outln!("waitwise's static default for {kind}: alpha {a:.4}, worst-case factor {:.4} under this model", w.factor)?;
    }
    Ok(())
}

// ------------------------------------------------------------------- fit

/// What `waitwise model fit --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct FitReport {
    /// The file read.
    pub file: String,
    /// Block cost used, ns.
    pub block_cost_ns: f64,
    /// Where it came from.
    pub block_cost_source: String,
    /// One fit per object, in file order.
    pub objects: Vec<FitResult>,
}

fn fit_table(r: &FitReport) -> Table {
    let mut columns = vec![
        Column::new("object", None, "index in the file, and name if recorded"),
        Column::new("kind", None, "recorded kind"),
        Column::new("waits", Some("count"), "waits recorded"),
        Column::new("mean_wait", Some("ns"), "mean of the histogram"),
        Column::new(
            "exp_mean",
            Some("ns"),
            "1/lambda of the log-linear regression",
        ),
        Column::new("exp_r2", None, "r^2 of the regression"),
        Column::new("exp_ks", None, "Kolmogorov-Smirnov distance, exponential"),
        Column::new("uniform_u", Some("ns"), "fitted U"),
        Column::new("uniform_ks", None, "Kolmogorov-Smirnov distance, uniform"),
        Column::new("best", None, "better model"),
        Column::new("alpha", None, "recommended alpha"),
    ];
    columns.extend(static_and_profile_alpha_columns());
    let mut t = Table::new(
        "model_fit",
        format!(
            "Fits to {} (Lim & Agarwal Appendix A), B = {:.0} ns ({})",
            r.file, r.block_cost_ns, r.block_cost_source
        ),
        columns,
    );
    for (i, f) in r.objects.iter().enumerate() {
        let e = f.exponential.as_ref();
        let u = f.uniform.as_ref();
        let none = || Cell::missing("no waits");
        t.push_row(
            vec![
                Cell::text(match &f.name {
                    Some(n) => format!("{i} {n}"),
                    None => i.to_string(),
                }),
                Cell::text(if f.kind.is_empty() {
                    "unknown"
                } else {
                    &f.kind
                }),
                Cell::Integer(i64::try_from(f.total_waits).unwrap_or(i64::MAX)),
                no_waits_or((f.total_waits > 0).then_some(f.mean_ns)),
                no_waits_or(e.map(|e| e.mean_ns)),
                e.map_or_else(none, |e| {
                    e.r_squared
                        .map_or(Cell::missing("no regression"), Cell::Number)
                }),
                no_waits_or(e.map(|e| e.ks_distance)),
                no_waits_or(u.map(|u| u.upper_ns)),
                no_waits_or(u.map(|u| u.ks_distance)),
                f.best_model
                    .map_or_else(none, |m| Cell::text(format!("{m:?}").to_lowercase())),
                if f.recommends {
                    Cell::Number(f.recommended_alpha)
                } else {
                    Cell::missing("no recommendation")
                },
                static_alpha_cell(&f.kind),
                no_waits_or(f.profile_alpha.as_ref().map(|p| p.alpha)),
            ],
            Some(f.reason.clone()),
        );
    }
    t
}

fn fit_profile(args: &FitArgs) -> anyhow::Result<()> {
    let loaded = load(&args.profile)?;
    let (b, source) = block_cost_ns(args.block_ns, &loaded.profile);
    let objects = fit::fit_profile_with_block_cost(&loaded.profile, Some(b))
        .with_context(|| format!("cannot fit {}", args.profile.display()))?;
    let report = FitReport {
        file: args.profile.display().to_string(),
        block_cost_ns: b,
        block_cost_source: source,
        objects,
    };
    let t = fit_table(&report);
    let printout = if report.objects.is_empty() {
        Printout::new(&report, vec![t])
            .text_tables(Vec::new())
            .notes(vec![format!("{}: no objects recorded", report.file)])
    } else {
        Printout::new(&report, vec![t]).notes(vec![format!(
            "alpha: {:.4} (ln(e-1)) for exponential waits, {:.4} ((sqrt5-1)/2) for uniform waits or when neither model fits.",
            ALPHA_EXPONENTIAL,
            waitwise_model::ALPHA_UNIFORM
        )])
    };
    printout.emit(&args.output)
}

// ------------------------------------------------------------- calibrate

fn calibrate(args: &CalibrateArgs) -> anyhow::Result<()> {
    let mut cfg = preset(args.full, CalibrationConfig::quick, CalibrationConfig::full);
    if let Some(r) = args.rounds {
        cfg.rounds = r as usize;
    }
    super::oversub::pin_idle_signal(args.idle_signal, "model calibrate");
    let result = run_calibration(&cfg);
    if let Some(dir) = &args.svg_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for (chart, dist) in result.charts().iter().zip(&cfg.dists) {
            let path = dir.join(format!("calibration_{}.svg", dist.name()));
            std::fs::write(&path, &chart.svg)
                .with_context(|| format!("cannot write {}", path.display()))?;
            errln!("waitwise: wrote {}", path.display());
        }
    }
    emit(&result, &args.output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_static_defaults() {
        assert!(parse_model("mutex:16:1").is_ok());
        assert!(parse_model("normal").is_err());
        assert!(parse_model("barrier:1024").is_ok());
        let err = parse_model("barrier:100000").unwrap_err();
        assert!(err.contains("2..=1024") && err.contains("100000"), "{err}");
        assert!(parse_model("mutex:1000").unwrap_err().contains("2..=64"));
        assert!(parse_model("erlang:5000").unwrap_err().contains("1..=1000"));
    }
}
