//! The report of `waitwise run --profile`: every object the program's
//! processes waited on, most total wait time first, each with its named
//! call site ([`super::call_sites`]), its wait statistics, the law its
//! waits fit and the policy the model recommends for it
//! (`waitwise_model::fit`), with the saving the model predicts over
//! waitwise's static default.

use super::call_sites::{NamedFrame, RawFrame, Symbolizer};
use crate::commands::profile::static_alpha;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::Path;
use waitwise_model::distribution::BucketConvention;
use waitwise_model::fit::{self, FittedModel, ObjectProfile};
use waitwise_model::{cost, WaitDistribution, WaitingAlgorithm};

/// One object as the interposer's profile file holds it.
#[derive(Debug, Clone, Deserialize)]
struct RawObject {
    kind: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    buckets: Vec<u64>,
    #[serde(default)]
    total_waits: u64,
    #[serde(default)]
    blocks: u64,
    #[serde(default)]
    total_ns: u64,
    #[serde(default)]
    max_ns: u64,
    #[serde(default)]
    call_site: Vec<RawFrame>,
    #[serde(default)]
    acquisitions: Option<u64>,
    #[serde(default)]
    owner_changes: Option<u64>,
    #[serde(default)]
    hold_ns: Option<u64>,
}

/// One profile file.
#[derive(Debug, Clone, Deserialize)]
struct RawProfile {
    #[serde(default)]
    objects: Vec<RawObject>,
    #[serde(default)]
    block_cost_ns: Option<f64>,
}

/// One object of the report.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectReport {
    /// `mutex`, `cond`, `barrier`, `sem`, `spin` or `rwlock`.
    pub kind: String,
    /// The object's address in its process, `0x...` (`other`: objects
    /// pooled when the interposer's table was full).
    pub address: String,
    /// The process that recorded it.
    pub pid: u32,
    /// The program's frames at the object's first wait, innermost first.
    pub call_site: Vec<NamedFrame>,
    /// Waits: calls that could not complete at once.
    pub waits: u64,
    /// Waits that slept in the kernel at least once.
    pub blocked_waits: u64,
    /// `blocked_waits / waits`.
    pub blocked_share: f64,
    /// The waits' durations summed, ns.
    pub total_wait_ns: u64,
    /// `total_wait_ns / waits`, ns.
    pub average_wait_ns: f64,
    /// The upper end of the log2 bucket holding the 99th percentile, ns.
    pub p99_wait_ns: f64,
    /// The longest wait, ns.
    pub longest_wait_ns: u64,
    /// Mutexes: acquisitions from the first wait on.
    pub acquisitions: Option<u64>,
    /// Mutexes: acquisitions by another thread than the previous holder,
    /// from the first wait on.
    pub owner_changes: Option<u64>,
    /// Mutexes: the time held from the first wait on, summed, ns.
    pub hold_ns: Option<u64>,
    /// The law the waits fit better: `exponential` or `uniform`.
    pub law: Option<String>,
    /// The policy the model recommends (`s/b/alpha`, Lim & Agarwal's
    /// notation: poll `alpha * B`, then block).
    pub recommended_policy: String,
    /// Its poll limit, `alpha * B`, ns.
    pub recommended_poll_ns: f64,
    /// The expected waiting cost the recommended alpha saves over
    /// waitwise's static default for the kind, as a share of the
    /// default's cost (0 when the model finds none, or no alpha applies).
    pub predicted_saving: f64,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct WaitReport {
    /// The block cost `B` the fits used, ns.
    pub block_cost_ns: f64,
    /// Every object waited on, most total wait time first.
    pub objects: Vec<ObjectReport>,
}

impl WaitReport {
    /// Reads every `profile-*.json` in `raw_dir` (one per process that
    /// waited) and builds the report.
    ///
    /// # Errors
    /// A file cannot be read or parsed.
    pub fn read(raw_dir: &Path) -> anyhow::Result<Self> {
        let mut profiles = Vec::new();
        let entries = std::fs::read_dir(raw_dir)
            .with_context(|| format!("cannot read {}", raw_dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            let Some(pid) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("profile-"))
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let profile: RawProfile = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a waitwise profile", path.display()))?;
            profiles.push((pid, profile));
        }
        Ok(Self::from_profiles(profiles))
    }

    fn from_profiles(profiles: Vec<(u32, RawProfile)>) -> Self {
        let block_cost_ns = profiles
            .iter()
            .filter_map(|(_, p)| p.block_cost_ns)
            .find(|b| b.is_finite() && *b > 0.0)
            .unwrap_or_else(|| waitwise::policy::starting_block_cost().ns);
        let mut symbolizer = Symbolizer::default();
        let mut objects: Vec<ObjectReport> = profiles
            .into_iter()
            .flat_map(|(pid, p)| p.objects.into_iter().map(move |o| (pid, o)))
            .filter(|(_, o)| o.total_waits > 0)
            .map(|(pid, o)| object_report(pid, o, block_cost_ns, &mut symbolizer))
            .collect();
        objects.sort_by_key(|o| std::cmp::Reverse(o.total_wait_ns));
        Self {
            block_cost_ns,
            objects,
        }
    }
}

fn object_report(pid: u32, o: RawObject, b: f64, symbolizer: &mut Symbolizer) -> ObjectReport {
    let waits = o.total_waits;
    let fitted = fit::fit_object(
        &ObjectProfile {
            kind: o.kind.clone(),
            name: None,
            buckets: o.buckets.clone(),
            convention: BucketConvention::Log2,
        },
        Some(b),
    )
    .ok();
    let recommended_alpha = fitted.as_ref().map_or(0.0, |f| f.recommended_alpha);
    ObjectReport {
        call_site: o.call_site.iter().map(|f| symbolizer.name(f)).collect(),
        waits,
        blocked_waits: o.blocks,
        blocked_share: ratio(o.blocks as f64, waits as f64),
        total_wait_ns: o.total_ns,
        average_wait_ns: ratio(o.total_ns as f64, waits as f64),
        p99_wait_ns: percentile_upper_bound(&o.buckets, 0.99),
        longest_wait_ns: o.max_ns,
        acquisitions: o.acquisitions,
        owner_changes: o.owner_changes,
        hold_ns: o.hold_ns,
        law: fitted.as_ref().and_then(|f| f.best_model).map(|m| {
            match m {
                FittedModel::Exponential => "exponential",
                FittedModel::Uniform => "uniform",
            }
            .to_string()
        }),
        recommended_policy: fitted
            .as_ref()
            .map_or_else(String::new, |f| f.recommended_algorithm.clone()),
        recommended_poll_ns: recommended_alpha * b,
        predicted_saving: predicted_saving(&o.kind, &o.buckets, recommended_alpha, b),
        kind: o.kind,
        address: o.address,
        pid,
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// The upper end (ns) of the log2 bucket that holds quantile `q` of the
/// waits; 0 without waits.
pub fn percentile_upper_bound(buckets: &[u64], q: f64) -> f64 {
    let total: u64 = buckets.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let rank = (q * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (i, &count) in buckets.iter().enumerate() {
        seen += count;
        if seen >= rank {
            return BucketConvention::Log2.bounds(i).1;
        }
    }
    BucketConvention::Log2
        .bounds(buckets.len().saturating_sub(1))
        .1
}

/// `1 - cost(recommended) / cost(static default)` on the object's own
/// histogram (Lim & Agarwal's expected cost of two-phase waiting), never
/// below 0; 0 for a kind no alpha applies to.
fn predicted_saving(kind: &str, buckets: &[u64], recommended: f64, b: f64) -> f64 {
    let Some((_, default_alpha)) = static_alpha(kind) else {
        return 0.0;
    };
    let Ok(dist) = WaitDistribution::empirical(buckets, BucketConvention::Log2) else {
        return 0.0;
    };
    let cost_of = |alpha: f64| cost::expected_cost(&WaitingAlgorithm::TwoPhase { alpha }, &dist, b);
    match (cost_of(default_alpha), cost_of(recommended)) {
        (Ok(default), Ok(rec)) if default > 0.0 => (1.0 - rec / default).max(0.0),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_99th_percentile_is_the_upper_end_of_its_bucket() {
        // 99 waits in [2^10, 2^11) ns, 1 in [2^20, 2^21).
        let mut buckets = vec![0; 32];
        buckets[10] = 99;
        buckets[20] = 1;
        assert_eq!(percentile_upper_bound(&buckets, 0.99), 2048.0);
        assert_eq!(percentile_upper_bound(&buckets, 1.0), 2f64.powi(21));
        assert_eq!(percentile_upper_bound(&[], 0.99), 0.0);
    }

    #[test]
    fn objects_are_ordered_by_total_wait_time() {
        let object = |kind: &str, total_ns| RawObject {
            kind: kind.into(),
            address: "0x1".into(),
            buckets: vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4],
            total_waits: 4,
            blocks: 1,
            total_ns,
            max_ns: 2000,
            call_site: Vec::new(),
            acquisitions: None,
            owner_changes: None,
            hold_ns: None,
        };
        let report = WaitReport::from_profiles(vec![(
            7,
            RawProfile {
                objects: vec![object("cond", 10), object("mutex", 5000)],
                block_cost_ns: Some(10_000.0),
            },
        )]);
        assert_eq!(report.objects[0].kind, "mutex");
        assert_eq!(report.objects[1].kind, "cond");
        assert_eq!(report.objects[0].pid, 7);
        assert_eq!(report.objects[0].blocked_share, 0.25);
        assert_eq!(report.objects[0].average_wait_ns, 1250.0);
        assert!(report.objects[0].law.is_some());
    }
}
