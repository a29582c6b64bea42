//! Waiting algorithms and their Lim & Agarwal names.
//!
//! Lim & Agarwal (1993, section 3.3) name a waiting algorithm
//! `<phase1>/<phase2>/<cost limit>`: `s` spins, `Ss` switch-spins, `b` blocks, and the
//! limit is `alpha`, the polling cost limit as a multiple of the block cost `B`
//! (`L_poll = alpha * B`). A component that does not matter is left out:
//!
//! | name | algorithm | variant |
//! |---|---|---|
//! | `s//inf` | always spin | [`WaitingAlgorithm::AlwaysSpin`] |
//! | `/b/0` | always block | [`WaitingAlgorithm::AlwaysBlock`] |
//! | `s/b/0.54` | spin up to `0.54 B`, then block | [`WaitingAlgorithm::TwoPhase`] |
//! | `Ss/b/0.54` | switch-spin up to cost `0.54 B` (length `0.54 beta B`), then block | [`WaitingAlgorithm::SwitchSpinTwoPhase`] |
//! | `Ss//inf` | always switch-spin | `SwitchSpinTwoPhase { alpha: inf, .. }` |
//! | `rand/b` | Karlin et al.'s randomized two-phase | [`WaitingAlgorithm::Randomized`] |
//! | `adapt/b` | per object, the cheapest of a menu of bounded laws on its recent waits | [`WaitingAlgorithm::Adaptive`] |
//!
//! `rand/b` and `adapt/b` are our names (the paper has none for them).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{self, ModelError, Result};

/// `alpha = ln(e - 1) ~= 0.5413`: the optimal static polling limit for exponentially
/// distributed wait times. Derived: Lim & Agarwal 1993, Theorem 3 (competitive factor
/// at most `e/(e-1)` for every arrival rate).
pub const ALPHA_EXPONENTIAL: f64 = 0.541_324_854_612_918_1;

/// `alpha = (sqrt(5) - 1)/2 ~= 0.6180`: the optimal static polling limit for wait times
/// uniform on `[0, U]`. Derived: Lim & Agarwal 1993, Theorem 4 / Appendix B
/// (competitive factor at most the golden ratio for every `U`, and no other alpha does
/// as well).
pub const ALPHA_UNIFORM: f64 = 0.618_033_988_749_894_8;

/// `e/(e-1) ~= 1.582`: the best competitive factor any on-line algorithm can reach
/// against a weak adversary (Karlin et al. 1991), reached by [`ALPHA_EXPONENTIAL`] for
/// exponential waits (Theorem 3) and by the randomized policy for every wait.
pub const E_OVER_E_MINUS_1: f64 = 1.581_976_706_869_326_4;

/// `(sqrt(5) + 1)/2 ~= 1.618`: the golden ratio, the best static competitive factor for
/// uniform waits (Theorem 4).
pub const GOLDEN_RATIO: f64 = 1.618_033_988_749_895;

/// Switch-spinning efficiency assumed when a name like `Ss/b/1` is parsed without one.
/// Derived: Lim & Agarwal section 2 show `beta ~= N`, the number of hardware contexts,
/// when waits are long; Alewife (their machine) has `N = 4`.
pub const DEFAULT_SWITCH_SPIN_BETA: f64 = 4.0;

/// A waiting algorithm: what a thread does while its synchronization condition is false.
///
/// Costs are in the same unit as the block cost `B` given to the cost functions.
///
/// # Examples
/// ```
/// use waitwise_model::algorithm::{WaitingAlgorithm, ALPHA_EXPONENTIAL};
/// let a = WaitingAlgorithm::two_phase(ALPHA_EXPONENTIAL).unwrap();
/// assert_eq!(a.name(), "s/b/0.541");
/// let b: WaitingAlgorithm = "Ss/b/0.62".parse().unwrap();
/// assert_eq!(b.name(), "Ss/b/0.62");
/// assert!("s/b/-1".parse::<WaitingAlgorithm>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WaitingAlgorithm {
    /// `s//inf`: spin until the condition holds. `timeout` (same unit as `B`) is the
    /// deadlock-avoidance limit after which the thread blocks anyway (Lim & Agarwal used
    /// 50,000 cycles, 100 B); the cost model treats a timeout `T` as `s/b/(T/B)`.
    AlwaysSpin {
        /// Spin at most this long, then block; `None` spins forever.
        timeout: Option<f64>,
    },
    /// `/b/0`: block at once, paying `B`.
    AlwaysBlock,
    /// `s/b/alpha`: spin until the polling cost reaches `alpha * B`, then block.
    TwoPhase {
        /// Polling limit as a multiple of `B` (`>= 0`; `inf` is always-spin).
        alpha: f64,
    },
    /// `Ss/b/alpha`: switch-spin (polling costs `t / beta` for a wait of length `t`) until
    /// the polling cost reaches `alpha * B`, i.e. for at most `alpha * beta * B`, then block.
    SwitchSpinTwoPhase {
        /// Polling cost limit as a multiple of `B` (`>= 0`; `inf` is always-switch-spin).
        alpha: f64,
        /// Switch-spinning efficiency over spinning (`>= 1`; 1 is plain spinning).
        beta: f64,
    },
    /// `rand/b`: Karlin et al.'s randomized two-phase algorithm; each wait draws its
    /// polling limit from the density `e^(x/B) / (B (e - 1))` on `[0, B]`, then spins.
    Randomized,
    /// `adapt/b`: the adaptive policy ([`crate::adaptive`]). Its cost depends on the
    /// waits before; the stateless cost functions ([`crate::cost`]) give its stationary
    /// limit (the cheapest arm of its menu for the law), and
    /// [`crate::adaptive::sequence_cost`] the exact cost of a sequence.
    Adaptive,
}

impl WaitingAlgorithm {
    /// `s//inf` with an optional deadlock timeout (`> 0`).
    pub fn always_spin(timeout: Option<f64>) -> Result<Self> {
        if let Some(t) = timeout {
            error::positive("timeout", t)?;
        }
        Ok(Self::AlwaysSpin { timeout })
    }

    /// `s/b/alpha` (`alpha >= 0`, `inf` allowed).
    pub fn two_phase(alpha: f64) -> Result<Self> {
        Ok(Self::TwoPhase {
            alpha: error::non_negative_or_inf("alpha", alpha)?,
        })
    }

    /// `Ss/b/alpha` (`alpha >= 0`, `inf` allowed; `beta >= 1`).
    pub fn switch_spin_two_phase(alpha: f64, beta: f64) -> Result<Self> {
        Ok(Self::SwitchSpinTwoPhase {
            alpha: error::non_negative_or_inf("alpha", alpha)?,
            beta: error::at_least_one("beta", beta)?,
        })
    }

    /// Checks the parameters of a value built directly (or deserialized).
    pub fn validate(&self) -> Result<()> {
        match *self {
            Self::AlwaysSpin { timeout } => Self::always_spin(timeout).map(drop),
            Self::AlwaysBlock | Self::Randomized | Self::Adaptive => Ok(()),
            Self::TwoPhase { alpha } => Self::two_phase(alpha).map(drop),
            Self::SwitchSpinTwoPhase { alpha, beta } => {
                Self::switch_spin_two_phase(alpha, beta).map(drop)
            }
        }
    }

    /// Switch-spinning efficiency of the polling phase (1 unless switch-spinning).
    pub fn beta(&self) -> f64 {
        match *self {
            Self::SwitchSpinTwoPhase { beta, .. } => beta,
            _ => 1.0,
        }
    }

    /// The static polling cost limit as a multiple of `block_cost`: `Some(alpha)` for the
    /// deterministic algorithms (`inf` for always-spin without timeout), `None` for
    /// [`WaitingAlgorithm::Randomized`] and [`WaitingAlgorithm::Adaptive`].
    pub fn alpha(&self, block_cost: f64) -> Option<f64> {
        match *self {
            Self::AlwaysSpin { timeout: None } => Some(f64::INFINITY),
            Self::AlwaysSpin { timeout: Some(t) } => Some(t / block_cost),
            Self::AlwaysBlock => Some(0.0),
            Self::TwoPhase { alpha } | Self::SwitchSpinTwoPhase { alpha, .. } => Some(alpha),
            Self::Randomized | Self::Adaptive => None,
        }
    }

    /// The Lim & Agarwal name (`s//inf`, `/b/0`, `s/b/0.54`, `Ss/b/0.54`, `rand/b`).
    ///
    /// Alpha is printed with at most 3 decimals, trailing zeros trimmed. Neither the spin
    /// timeout nor beta is part of the name (the paper's names omit them too).
    pub fn name(&self) -> String {
        match *self {
            Self::AlwaysSpin { .. } => "s//inf".to_owned(),
            Self::AlwaysBlock => "/b/0".to_owned(),
            Self::TwoPhase { alpha } => phase_name("s", alpha),
            Self::SwitchSpinTwoPhase { alpha, .. } => phase_name("Ss", alpha),
            Self::Randomized => "rand/b".to_owned(),
            Self::Adaptive => "adapt/b".to_owned(),
        }
    }
}

/// `s/b/alpha`, with the `//inf` and `/b/0` abbreviations at the extremes.
fn phase_name(phase1: &str, alpha: f64) -> String {
    if alpha.is_infinite() {
        format!("{phase1}//inf")
    } else if alpha == 0.0 {
        "/b/0".to_owned()
    } else {
        format!("{phase1}/b/{}", format_alpha(alpha))
    }
}

/// At most 3 decimals, trailing zeros (and a bare point) trimmed: `0.5413 -> "0.541"`.
pub fn format_alpha(alpha: f64) -> String {
    if alpha.is_infinite() {
        return "inf".to_owned();
    }
    let s = format!("{alpha:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

impl fmt::Display for WaitingAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for WaitingAlgorithm {
    type Err = ModelError;

    /// Parses `s//inf`, `Ss//inf`, `/b/0`, `s/b/ALPHA`, `Ss/b/ALPHA`, `rand/b`, `adapt/b`
    /// (`inf` or `∞` accepted for alpha). `Ss` names get [`DEFAULT_SWITCH_SPIN_BETA`].
    fn from_str(s: &str) -> Result<Self> {
        let bad = |reason| ModelError::ParseAlgorithm {
            name: s.to_owned(),
            reason,
        };
        let text = s.trim();
        if text == "rand/b" || text == "rand" {
            return Ok(Self::Randomized);
        }
        if text == "adapt/b" || text == "adapt" {
            return Ok(Self::Adaptive);
        }
        let parts: Vec<&str> = text.split('/').collect();
        let [phase1, phase2, limit] = parts[..] else {
            return Err(bad("expected <phase1>/<phase2>/<limit>, e.g. s/b/0.54"));
        };
        let alpha = match limit {
            "inf" | "∞" => f64::INFINITY,
            "" => return Err(bad("missing cost limit")),
            other => other
                .parse::<f64>()
                .map_err(|_| bad("cost limit is not a number"))?,
        };
        if alpha.is_nan() || alpha < 0.0 {
            return Err(bad("cost limit must be >= 0"));
        }
        match (phase1, phase2) {
            ("", "b") if alpha == 0.0 => Ok(Self::AlwaysBlock),
            ("", _) => Err(bad("only /b/0 may omit the polling phase")),
            ("s", "") if alpha.is_infinite() => Ok(Self::AlwaysSpin { timeout: None }),
            ("Ss", "") if alpha.is_infinite() => Ok(Self::SwitchSpinTwoPhase {
                alpha,
                beta: DEFAULT_SWITCH_SPIN_BETA,
            }),
            (_, "") => Err(bad(
                "only an infinite cost limit may omit the blocking phase",
            )),
            (_, p) if p != "b" => Err(bad("the second phase must be b (block)")),
            ("s", _) => Ok(Self::TwoPhase { alpha }),
            ("Ss", _) => Ok(Self::SwitchSpinTwoPhase {
                alpha,
                beta: DEFAULT_SWITCH_SPIN_BETA,
            }),
            _ => Err(bad("the first phase must be s (spin) or Ss (switch-spin)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_their_derivations() {
        let e = std::f64::consts::E;
        assert!((ALPHA_EXPONENTIAL - (e - 1.0).ln()).abs() < 1e-15);
        assert!((ALPHA_UNIFORM - (5f64.sqrt() - 1.0) / 2.0).abs() < 1e-15);
        assert!((E_OVER_E_MINUS_1 - e / (e - 1.0)).abs() < 1e-15);
        assert!((GOLDEN_RATIO - (5f64.sqrt() + 1.0) / 2.0).abs() < 1e-15);
    }

    #[test]
    fn names() {
        let cases = [
            (WaitingAlgorithm::AlwaysSpin { timeout: None }, "s//inf"),
            (
                WaitingAlgorithm::AlwaysSpin { timeout: Some(5.0) },
                "s//inf",
            ),
            (WaitingAlgorithm::AlwaysBlock, "/b/0"),
            (WaitingAlgorithm::TwoPhase { alpha: 0.54 }, "s/b/0.54"),
            (WaitingAlgorithm::TwoPhase { alpha: 1.0 }, "s/b/1"),
            (
                WaitingAlgorithm::TwoPhase {
                    alpha: ALPHA_UNIFORM,
                },
                "s/b/0.618",
            ),
            (WaitingAlgorithm::TwoPhase { alpha: 0.0 }, "/b/0"),
            (
                WaitingAlgorithm::SwitchSpinTwoPhase {
                    alpha: 0.54,
                    beta: 2.0,
                },
                "Ss/b/0.54",
            ),
            (
                WaitingAlgorithm::SwitchSpinTwoPhase {
                    alpha: f64::INFINITY,
                    beta: 2.0,
                },
                "Ss//inf",
            ),
            (WaitingAlgorithm::Randomized, "rand/b"),
            (WaitingAlgorithm::Adaptive, "adapt/b"),
        ];
        for (alg, name) in cases {
            assert_eq!(alg.name(), name);
        }
    }

    #[test]
    fn parse_round_trips_names() {
        for name in [
            "s//inf",
            "/b/0",
            "s/b/0.54",
            "s/b/2",
            "Ss/b/0.62",
            "Ss//inf",
            "rand/b",
            "adapt/b",
        ] {
            let alg: WaitingAlgorithm = name.parse().unwrap();
            assert_eq!(alg.name(), name);
        }
        assert_eq!(
            "s/b/∞".parse::<WaitingAlgorithm>().unwrap().alpha(1.0),
            Some(f64::INFINITY)
        );
    }

    #[test]
    fn parse_rejects_garbage() {
        for name in [
            "", "x", "s/b", "s/b/", "s/b/x", "s/b/-1", "q/b/1", "s/x/1", "/b/1", "s//1", "s/b/NaN",
        ] {
            assert!(name.parse::<WaitingAlgorithm>().is_err(), "{name}");
        }
    }

    #[test]
    fn constructors_validate() {
        assert!(WaitingAlgorithm::two_phase(-0.1).is_err());
        assert!(WaitingAlgorithm::two_phase(f64::NAN).is_err());
        assert!(WaitingAlgorithm::switch_spin_two_phase(1.0, 0.5).is_err());
        assert!(WaitingAlgorithm::always_spin(Some(0.0)).is_err());
        assert!(WaitingAlgorithm::TwoPhase { alpha: -1.0 }
            .validate()
            .is_err());
        assert!(WaitingAlgorithm::switch_spin_two_phase(f64::INFINITY, 4.0).is_ok());
    }
}
