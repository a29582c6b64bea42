//! The one error type of the model crate.
//!
//! Every constructor and entry point that takes user input validates it and
//! returns [`ModelError`] instead of panicking (STYLE.md rule 22).

use thiserror::Error;

/// What was wrong with the input handed to the model.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ModelError {
    /// A numeric parameter is outside its domain (for example `lambda <= 0`).
    #[error("invalid parameter {name} = {value}: must be {requirement}")]
    InvalidParameter {
        /// The parameter's name as written in Lim & Agarwal (`lambda`, `alpha`, ...).
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// The domain it must lie in, in words.
        requirement: &'static str,
    },
    /// A waiting-algorithm name could not be parsed.
    #[error("cannot parse waiting algorithm {name:?}: {reason}")]
    ParseAlgorithm {
        /// The text that was given.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A wait-time histogram holds no waits at all.
    #[error("the wait-time histogram records no waits")]
    EmptyHistogram,
    /// A wait-time histogram has more buckets than 64-bit nanosecond waits can fill.
    #[error("the wait-time histogram has {found} buckets; at most {max} are supported")]
    TooManyBuckets {
        /// Number of buckets given.
        found: usize,
        /// The limit.
        max: usize,
    },
    /// A simulator configuration is inconsistent.
    #[error("invalid simulator configuration: {0}")]
    InvalidConfig(String),
    /// A wait profile could not be decoded.
    #[error("invalid wait profile: {0}")]
    Profile(String),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, ModelError>;

/// `Ok(value)` when `value > 0` and finite.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ModelError::InvalidParameter {
            name,
            value,
            requirement: "finite and > 0",
        })
    }
}

/// `Ok(value)` when `value >= 0` (infinity allowed: "poll forever").
pub(crate) fn non_negative_or_inf(name: &'static str, value: f64) -> Result<f64> {
    if value >= 0.0 {
        Ok(value)
    } else {
        Err(ModelError::InvalidParameter {
            name,
            value,
            requirement: ">= 0 (inf allowed)",
        })
    }
}

/// `Ok(value)` when `value >= 1` and finite (switch-spin efficiency beta).
pub(crate) fn at_least_one(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 1.0 {
        Ok(value)
    } else {
        Err(ModelError::InvalidParameter {
            name,
            value,
            requirement: "finite and >= 1",
        })
    }
}

/// `Ok(value)` when `value >= min` (integer counts such as Erlang order or participants).
pub(crate) fn count_at_least(name: &'static str, value: u32, min: u32) -> Result<u32> {
    if value >= min {
        Ok(value)
    } else {
        Err(ModelError::InvalidParameter {
            name,
            value: f64::from(value),
            requirement: if min <= 1 {
                "an integer >= 1"
            } else {
                "an integer >= 2"
            },
        })
    }
}
