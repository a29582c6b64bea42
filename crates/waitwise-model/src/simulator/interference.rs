//! What a polling thread costs the threads that share its processor: the
//! *sibling slowdown factor* of a waiting mechanism, the time an active
//! thread takes with a co-runner polling beside it over its time alone.
//!
//! The simulator shares a processor among its jobs and pollers
//! (`machine.rs`, processor sharing): with one job beside one poller of
//! weight `w` the job runs at `1 / (1 + w)`, so a poller whose mechanism
//! slows a neighbour by the factor `f` has weight `w = f - 1`
//! ([`poll_weight`]). [`MachineConfig::poll_slowdown`] holds `f` for the
//! polling mechanism of every run; [`FULL_SHARE_SLOWDOWN`] (a poller takes
//! a full share, `w = 1`) is the default and Lim & Agarwal's model.
//!
//! The factors per mechanism come from the seeds ([`SiblingSlowdowns::seed_defaults`])
//! or from a file `waitwise interference --json` wrote on a real SMT
//! machine ([`SiblingSlowdowns::from_interference_json`]).
//!
//! [`MachineConfig::poll_slowdown`]: super::MachineConfig::poll_slowdown

use crate::error::{ModelError, Result};
use std::collections::BTreeMap;

/// A poller taking a full share of its processor: a neighbour runs at half
/// speed (factor 2). The simulator's default, Lim & Agarwal's model.
pub const FULL_SHARE_SLOWDOWN: f64 = 2.0;

/// The weight of a poller whose mechanism slows a neighbour by `slowdown`,
/// for a switch-spin efficiency `beta` (1 for plain spinning): `(f - 1) /
/// beta`, never below 0.
///
/// ```
/// use waitwise_model::simulator::interference::poll_weight;
/// assert_eq!(poll_weight(2.0, 1.0), 1.0);
/// assert!((poll_weight(1.42, 1.0) - 0.42).abs() < 1e-12);
/// assert_eq!(poll_weight(1.0, 4.0), 0.0);
/// ```
pub fn poll_weight(slowdown: f64, beta: f64) -> f64 {
    ((slowdown - 1.0) / beta).max(0.0)
}

/// Sibling slowdown factors by mechanism name (waitwise's stable names).
#[derive(Clone, Debug, PartialEq)]
pub struct SiblingSlowdowns {
    factors: BTreeMap<String, f64>,
    /// Where the factors come from, in words.
    pub source: String,
}

impl SiblingSlowdowns {
    /// The seeds' figures for an active thread beside an SMT sibling that
    /// waits:
    ///
    /// | mechanism | factor | source |
    /// |---|---|---|
    /// | `spin` | 1.42 | seed 002: Linux's spin loop, 42% average slowdown (UltraSPARC T2) |
    /// | `pause`, `backoff` | 1.19 | seed 000, Table 1: PAUSE spin-loops slow the worker 19% more than blocking or MWAIT (`backoff`: guessed as `pause`) |
    /// | `yield` | 1.19 | guessed as `pause`: the loop stays on the sibling between system calls |
    /// | `delay-*` | 1.015 | seed 002: 1.5% with a long-latency instruction in the loop (the slides give the L2-miss variant's; the others guessed alike) |
    /// | `block`, `umwait`, `umwait-c01`, `tpause`, `mwaitx` | 1.0 | seed 000: a parked thread (HALT, MWAIT, futex) leaves the core to its sibling (seed 004 likewise) |
    pub fn seed_defaults() -> Self {
        let mut factors = BTreeMap::new();
        for (m, f) in [
            ("spin", 1.42),
            ("pause", 1.19),
            ("backoff", 1.19),
            ("yield", 1.19),
            ("block", 1.0),
            ("umwait", 1.0),
            ("umwait-c01", 1.0),
            ("tpause", 1.0),
            ("mwaitx", 1.0),
            ("delay-intdiv", 1.015),
            ("delay-fpdiv", 1.015),
            ("delay-cas", 1.015),
            ("delay-miss", 1.015),
        ] {
            factors.insert(m.to_string(), f);
        }
        Self {
            factors,
            source: "seeds 000 and 002".into(),
        }
    }

    /// The factors in a `waitwise interference --json` result (its
    /// `sibling_slowdown_factors`: `[[name, factor], ...]`, measured on an
    /// SMT sibling). Mechanisms it lacks keep no factor.
    ///
    /// # Errors
    /// Text that is not such a JSON object, or a factor that is not a
    /// finite number of at least 1.
    pub fn from_interference_json(text: &str) -> Result<Self> {
        #[derive(serde::Deserialize)]
        struct File {
            sibling_slowdown_factors: Vec<(String, f64)>,
        }
        let bad = |why: String| ModelError::InvalidConfig(why);
        let f: File = serde_json::from_str(text)
            .map_err(|e| bad(format!("not a `waitwise interference --json` result: {e}")))?;
        if f.sibling_slowdown_factors.is_empty() {
            return Err(bad(
                "the interference result has no sibling slowdown factors (it was measured without an SMT sibling)"
                    .into(),
            ));
        }
        let mut factors = BTreeMap::new();
        for (m, x) in f.sibling_slowdown_factors {
            if !(x.is_finite() && x >= 1.0) {
                return Err(bad(format!(
                    "sibling slowdown factor of {m} is {x}: must be a finite number >= 1"
                )));
            }
            factors.insert(m, x);
        }
        Ok(Self {
            factors,
            source: "waitwise interference".into(),
        })
    }

    /// The factor of `mechanism`, if known.
    pub fn factor(&self, mechanism: &str) -> Option<f64> {
        self.factors.get(mechanism).copied()
    }

    /// The mechanisms with a factor.
    pub fn mechanisms(&self) -> impl Iterator<Item = &str> {
        self.factors.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_defaults_order_the_mechanisms_as_the_seeds_do() {
        let s = SiblingSlowdowns::seed_defaults();
        let f = |m| s.factor(m).unwrap();
        assert!(f("spin") > f("pause"));
        assert!(f("pause") > f("delay-miss"));
        assert!(f("delay-miss") > f("block"));
        assert_eq!(f("block"), 1.0);
        assert_eq!(s.factor("warp"), None);
        assert_eq!(s.mechanisms().count(), 13);
    }

    #[test]
    fn reads_the_interference_json() {
        let text = r#"{"config": {}, "sibling_slowdown_factors": [["spin", 1.6], ["block", 1.0]]}"#;
        let s = SiblingSlowdowns::from_interference_json(text).unwrap();
        assert_eq!(s.factor("spin"), Some(1.6));
        assert_eq!(s.factor("pause"), None);
        assert!(SiblingSlowdowns::from_interference_json("{}").is_err());
        assert!(
            SiblingSlowdowns::from_interference_json(r#"{"sibling_slowdown_factors": []}"#)
                .is_err()
        );
        assert!(SiblingSlowdowns::from_interference_json(
            r#"{"sibling_slowdown_factors": [["spin", 0.5]]}"#
        )
        .is_err());
    }
}
