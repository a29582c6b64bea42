//! `waitwise profile PROFILE.json`: aggregate a recorded wait-time profile
//! per object kind and recommend `alpha` for each (Lim & Agarwal Appendix A
//! fits, via `waitwise_model::fit`).
//!
//! Accepted files (the loader is shared with `waitwise model fit`):
//! * one `waitwise::profile::WaitProfile` object (`{"kind", "buckets", ...}`);
//! * an array of them;
//! * `{"objects": [...]}`, as the `LD_PRELOAD` interposer writes it, with
//!   extra fields (`address`, ...) ignored and an optional `block_cost_ns`.

use super::output::{OutputArgs, Printout};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use waitwise::policy::SyncKind;
use waitwise_bench::export::{Cell, Column, Table};
use waitwise_model::fit::{self, FitResult, ObjectProfile, WaitProfile};

/// Options of `waitwise profile`.
#[derive(clap::Args, Debug)]
pub struct ProfileArgs {
    /// The profile file (JSON): one WaitProfile, an array of them, or
    /// `{"objects": [...]}`.
    pub profile: PathBuf,
    /// Block cost B in ns for the per-profile best alpha (default: the
    /// file's `block_cost_ns`, else this machine's starting B).
    #[arg(long, value_parser = positive_f64)]
    pub block_ns: Option<f64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// A loaded profile file.
#[derive(Debug, Clone)]
pub struct LoadedProfile {
    /// The objects, in file order.
    pub profile: WaitProfile,
    /// `blocks` of each object (0 when the file has none), in file order.
    pub blocks: Vec<u64>,
}

/// Parses a number `> 0` and finite (clap value parser).
pub fn positive_f64(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err("must be a finite number > 0".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Reads and parses a profile file; every failure names the file.
pub fn load(path: &Path) -> anyhow::Result<LoadedProfile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read profile {}", path.display()))?;
    let profile = WaitProfile::from_json(&text)
        .with_context(|| format!("{} is not a wait profile", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let list = match &value {
        serde_json::Value::Array(a) => a.clone(),
        v => match v.get("objects").and_then(|o| o.as_array()) {
            Some(a) => a.clone(),
            None => vec![v.clone()],
        },
    };
    let blocks = list
        .iter()
        .map(|o| {
            o.get("blocks")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        })
        .collect();
    Ok(LoadedProfile { profile, blocks })
}

/// The block cost to use: the flag, else the one the file records, else
/// this machine's starting `B` (`WAITWISE_BLOCK_NS`, the machine profile or
/// the default). Never a fresh measurement, so every command reading the
/// same file uses the same `B`.
pub fn block_cost_ns(flag: Option<f64>, profile: &WaitProfile) -> (f64, String) {
    match (
        flag,
        profile.block_cost_ns.filter(|b| b.is_finite() && *b > 0.0),
    ) {
        (Some(b), _) => (b, "--block-ns".into()),
        (None, Some(b)) => (b, "profile file".into()),
        (None, None) => {
            let start = waitwise::policy::starting_block_cost();
            (
                start.ns,
                format!("this machine's starting B ({})", start.source.name()),
            )
        }
    }
}

/// The kind a recorded kind name waits as: waitwise's own names
/// ([`SyncKind::name`]), and the object types the interposer records
/// (`waitwise-preload`'s profile docs), each waiting with the alpha of the
/// kind it models: condition variables and semaphores a producer's next
/// item, read-write locks a holder's critical section. Unknown names (and
/// `spin`, see [`NEVER_SLEEPS`]): [`SyncKind::Unknown`].
pub fn sync_kind_of(kind: &str) -> SyncKind {
    match kind {
        "cond" | "sem" => SyncKind::ProducerConsumer,
        "rwlock" => SyncKind::Mutex,
        _ => SyncKind::ALL
            .into_iter()
            .find(|k| k.name() == kind)
            .unwrap_or(SyncKind::Unknown),
    }
}

/// Recorded kinds whose waits never sleep, so that no alpha applies to
/// them: the interposer's `pthread_spinlock_t` polls with PAUSE, then
/// yields, and never blocks.
pub const NEVER_SLEEPS: [&str; 1] = ["spin"];

/// The static default alpha waitwise uses for a recorded kind name, and
/// the kind it comes from; `None` for a kind that never sleeps.
pub fn static_alpha(kind: &str) -> Option<(SyncKind, f64)> {
    if NEVER_SLEEPS.contains(&kind) {
        return None;
    }
    let k = sync_kind_of(kind);
    Some((k, k.default_alpha()))
}

/// A static alpha's cell: the number, or why there is none.
pub fn static_alpha_cell(kind: &str) -> Cell {
    Cell::number_or_missing(static_alpha(kind).map(|(_, a)| a), "never sleeps")
}

/// One kind's aggregate.
#[derive(Debug, Clone, Serialize)]
pub struct KindSummary {
    /// Kind as recorded (`unknown` when empty).
    pub kind: String,
    /// Objects of this kind in the file.
    pub objects: usize,
    /// Waits that blocked (sum of the objects' `blocks`).
    pub blocks: u64,
    /// waitwise's static default alpha for this kind (`None`: its waits
    /// never sleep, no alpha applies).
    pub static_alpha: Option<f64>,
    /// The fit of the summed histogram.
    pub fit: FitResult,
}

/// What `waitwise profile --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileReport {
    /// The file read.
    pub file: String,
    /// Block cost used, ns.
    pub block_cost_ns: f64,
    /// Where it came from.
    pub block_cost_source: String,
    /// One entry per kind, sorted by name.
    pub kinds: Vec<KindSummary>,
}

/// Sums the histograms of `profile` per kind and fits each sum.
pub fn aggregate(loaded: &LoadedProfile, block_ns: f64) -> anyhow::Result<Vec<KindSummary>> {
    let mut groups: BTreeMap<String, (ObjectProfile, usize, u64)> = BTreeMap::new();
    for (i, o) in loaded.profile.objects.iter().enumerate() {
        let kind = if o.kind.trim().is_empty() {
            "unknown".to_string()
        } else {
            o.kind.trim().to_string()
        };
        let entry = groups.entry(kind.clone()).or_insert_with(|| {
            (
                ObjectProfile {
                    kind: kind.clone(),
                    name: None,
                    buckets: Vec::new(),
                    convention: o.convention,
                },
                0,
                0,
            )
        });
        if entry.0.convention != o.convention {
            anyhow::bail!(
                "objects of kind {kind:?} use different bucket conventions; cannot sum them"
            );
        }
        if o.buckets.len() > entry.0.buckets.len() {
            entry.0.buckets.resize(o.buckets.len(), 0);
        }
        for (sum, c) in entry.0.buckets.iter_mut().zip(&o.buckets) {
            *sum = sum.saturating_add(*c);
        }
        entry.1 += 1;
        entry.2 = entry
            .2
            .saturating_add(loaded.blocks.get(i).copied().unwrap_or(0));
    }
    groups
        .into_values()
        .map(|(object, objects, blocks)| {
            let fit = fit::fit_object(&object, Some(block_ns))
                .with_context(|| format!("cannot fit the {} histogram", object.kind))?;
            Ok(KindSummary {
                static_alpha: static_alpha(&object.kind).map(|(_, a)| a),
                kind: object.kind,
                objects,
                blocks,
                fit,
            })
        })
        .collect()
}

/// A figure of a histogram: its value, or "no waits" when the histogram is
/// empty (tables of `profile` and `model fit`).
pub fn no_waits_or(v: Option<f64>) -> Cell {
    Cell::number_or_missing(v, "no waits")
}

/// The columns that set a recommended alpha beside waitwise's static
/// default and the alpha best on the histogram itself (tables of `profile`
/// and `model fit`).
pub fn static_and_profile_alpha_columns() -> [Column; 2] {
    [
        Column::new(
            "static_alpha",
            None,
            "waitwise's static default for the kind",
        ),
        Column::new(
            "profile_alpha",
            None,
            "alpha minimizing the expected cost on this histogram",
        ),
    ]
}

fn table(report: &ProfileReport) -> Table {
    let mut columns = vec![
        Column::new("kind", None, "object kind"),
        Column::new("objects", Some("count"), "objects of this kind"),
        Column::new("waits", Some("count"), "waits recorded"),
        Column::new("blocked", Some("pct"), "waits that slept in the kernel"),
        Column::new(
            "mean_wait",
            Some("ns"),
            "mean wait (histogram, uniform within buckets)",
        ),
        Column::new(
            "best_model",
            None,
            "model with the smaller Kolmogorov-Smirnov distance",
        ),
        Column::new("ks", None, "its Kolmogorov-Smirnov distance"),
        Column::new(
            "alpha",
            None,
            "recommended alpha (minimax for the fitted family)",
        ),
    ];
    columns.extend(static_and_profile_alpha_columns());
    columns.extend([
        Column::new(
            "profile_factor",
            Some("ratio"),
            "its competitive factor on the histogram",
        ),
        Column::new(
            "alpha_factor",
            Some("ratio"),
            "the recommended alpha's factor on the histogram",
        ),
    ]);
    let mut t = Table::new(
        "profile",
        format!(
            "Wait profile {} per kind, B = {:.0} ns ({})",
            report.file, report.block_cost_ns, report.block_cost_source
        ),
        columns,
    );
    for k in &report.kinds {
        let f = &k.fit;
        let ks = match f.best_model {
            Some(fit::FittedModel::Exponential) => f.exponential.as_ref().map(|e| e.ks_distance),
            Some(fit::FittedModel::Uniform) => f.uniform.as_ref().map(|u| u.ks_distance),
            None => None,
        };
        let blocked = (f.total_waits > 0).then(|| 100.0 * k.blocks as f64 / f.total_waits as f64);
        t.push_row(
            vec![
                Cell::text(&k.kind),
                Cell::Integer(k.objects as i64),
                Cell::Integer(i64::try_from(f.total_waits).unwrap_or(i64::MAX)),
                no_waits_or(blocked),
                no_waits_or((f.total_waits > 0).then_some(f.mean_ns)),
                f.best_model.map_or(Cell::missing("no waits"), |m| {
                    Cell::text(format!("{m:?}").to_lowercase())
                }),
                no_waits_or(ks),
                if f.recommends {
                    Cell::Number(f.recommended_alpha)
                } else {
                    Cell::missing("no recommendation")
                },
                static_alpha_cell(&k.kind),
                no_waits_or(f.profile_alpha.as_ref().map(|p| p.alpha)),
                no_waits_or(f.profile_alpha.as_ref().map(|p| p.factor)),
                no_waits_or(f.profile_alpha.as_ref().map(|p| p.recommended_factor)),
            ],
            Some(f.reason.clone()),
        );
    }
    t
}

/// Reads the profile, aggregates per kind and prints the recommendations.
pub fn run(args: &ProfileArgs) -> anyhow::Result<()> {
    let loaded = load(&args.profile)?;
    let (b, source) = block_cost_ns(args.block_ns, &loaded.profile);
    let kinds = aggregate(&loaded, b).with_context(|| format!("in {}", args.profile.display()))?;
    let report = ProfileReport {
        file: args.profile.display().to_string(),
        block_cost_ns: b,
        block_cost_source: source.to_string(),
        kinds,
    };
    let t = table(&report);
    let printout = if report.kinds.is_empty() {
        Printout::new(&report, vec![t])
            .text_tables(Vec::new())
            .notes(vec![format!("{}: no objects recorded", report.file)])
    } else {
        let notes = report
            .kinds
            .iter()
            .filter(|k| k.fit.total_waits > 0)
            .filter_map(|k| match k.static_alpha {
                None => Some(format!(
                    "{}: these waits never sleep (they poll with PAUSE, then yield), so no alpha applies to them.",
                    k.kind
                )),
                Some(_) if !k.fit.recommends => Some(format!(
                    "{}: no recommendation: {}.",
                    k.kind, k.fit.reason
                )),
                Some(a) if (k.fit.recommended_alpha - a).abs() > 0.01 => Some(format!(
                    "{}: the profile suggests alpha {:.3} instead of the static {:.3} (set it per object with WaitOptions::policy, or WAITWISE_ALPHA for all).",
                    k.kind, k.fit.recommended_alpha, a
                )),
                Some(_) => None,
            })
            .collect();
        Printout::new(&report, vec![t]).notes(notes)
    };
    printout.emit(&args.output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interposer_kinds_get_the_alpha_they_wait_with() {
        use waitwise::policy::{ALPHA_EXPONENTIAL, ALPHA_UNIFORM};
        // The interposer's condition variables and semaphores wait as
        // producer-consumer, its rwlocks as mutexes (waitwise-preload's
        // cond.rs, sem.rs, rwlock.rs); its spin locks never sleep.
        let pc = Some((SyncKind::ProducerConsumer, ALPHA_EXPONENTIAL));
        assert_eq!(static_alpha("cond"), pc);
        assert_eq!(static_alpha("sem"), pc);
        assert_eq!(static_alpha("producer-consumer"), pc);
        let mutex = Some((SyncKind::Mutex, ALPHA_EXPONENTIAL));
        assert_eq!(static_alpha("rwlock"), mutex);
        assert_eq!(static_alpha("mutex"), mutex);
        assert_eq!(
            static_alpha("barrier"),
            Some((SyncKind::Barrier, ALPHA_UNIFORM))
        );
        assert_eq!(static_alpha("spin"), None);
        assert_eq!(
            static_alpha("no such kind").map(|k| k.0),
            Some(SyncKind::Unknown)
        );
    }

    #[test]
    fn aggregates_per_kind() {
        let json = r#"{"objects": [
            {"kind": "mutex", "address": "0x1", "buckets": [0, 0, 5, 20, 40, 20, 5], "total_waits": 90, "blocks": 3},
            {"kind": "mutex", "address": "0x2", "buckets": [0, 0, 5, 20, 40, 20, 5, 1], "total_waits": 91, "blocks": 4},
            {"kind": "barrier", "buckets": [], "total_waits": 0, "blocks": 0}
        ]}"#;
        let profile = WaitProfile::from_json(json).unwrap();
        let loaded = LoadedProfile {
            profile,
            blocks: vec![3, 4, 0],
        };
        let kinds = aggregate(&loaded, 1000.0).unwrap();
        assert_eq!(kinds.len(), 2);
        assert_eq!(kinds[0].kind, "barrier");
        assert_eq!(kinds[1].objects, 2);
        assert_eq!(kinds[1].blocks, 7);
        assert_eq!(kinds[1].fit.total_waits, 181);
    }

    #[test]
    fn positive_numbers_only() {
        assert!(positive_f64("2.5").is_ok());
        for bad in ["0", "-1", "nan", "inf", "x"] {
            assert!(positive_f64(bad).is_err(), "{bad}");
        }
    }
}
