//! Environment overrides read once per process, validated, never trusted:
//! a malformed value is rejected with a message naming the variable, and the
//! default is kept.
//!
//! | variable | meaning | accepted |
//! |---|---|---|
//! | `WAITWISE_ALPHA` | `alpha` for every two-phase policy built from a kind | a finite number in `[0, 100]` |
//! | `WAITWISE_BLOCK_NS` | the block cost `B`, skipping calibration | an integer in `1..=1_000_000_000` ns |
//! | `WAITWISE_DISABLE` | hardware waits to skip | see `waitwise_platform::disable` |

use waitwise_platform::once::ForkSafeOnce;

/// A rejected environment override.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{variable}={value:?} rejected: {reason}; using the default")]
pub struct EnvError {
    /// The variable's name.
    pub variable: &'static str,
    /// Its value as found.
    pub value: String,
    /// What was wrong.
    pub reason: String,
}

/// Largest accepted `WAITWISE_ALPHA`.
pub const MAX_ALPHA: f64 = 100.0;
/// Largest accepted `WAITWISE_BLOCK_NS` (one second).
pub const MAX_BLOCK_NS: u64 = 1_000_000_000;

/// Parses a `WAITWISE_ALPHA` value.
pub fn parse_alpha(value: &str) -> Result<f64, EnvError> {
    let err = |reason: &str| EnvError {
        variable: "WAITWISE_ALPHA",
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let alpha: f64 = value.trim().parse().map_err(|_| err("not a number"))?;
    if !alpha.is_finite() || !(0.0..=MAX_ALPHA).contains(&alpha) {
        return Err(err("must be a finite number between 0 and 100"));
    }
    Ok(alpha)
}

/// Parses a `WAITWISE_BLOCK_NS` value.
pub fn parse_block_ns(value: &str) -> Result<u64, EnvError> {
    let err = |reason: &str| EnvError {
        variable: "WAITWISE_BLOCK_NS",
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let ns: u64 = value
        .trim()
        .parse()
        .map_err(|_| err("not a whole number of nanoseconds"))?;
    if ns == 0 || ns > MAX_BLOCK_NS {
        return Err(err("must be between 1 and 1000000000 ns"));
    }
    Ok(ns)
}

fn read<T: Copy>(
    name: &'static str,
    parse: fn(&str) -> Result<T, EnvError>,
) -> Option<Result<T, EnvError>> {
    let raw = std::env::var_os(name)?;
    Some(match raw.to_str() {
        Some(s) => parse(s),
        None => Err(EnvError {
            variable: name,
            value: raw.to_string_lossy().into_owned(),
            reason: "not UTF-8".into(),
        }),
    })
}

fn warn_once(r: Option<Result<f64, EnvError>>) -> Option<Result<f64, EnvError>> {
    if let Some(Err(e)) = &r {
        eprintln!("waitwise: {e}");
    }
    r
}

/// `WAITWISE_ALPHA`, read once: `None` when unset, the error when rejected
/// (also printed once to stderr).
pub fn alpha_override() -> Option<&'static Result<f64, EnvError>> {
    static V: ForkSafeOnce<Option<Result<f64, EnvError>>> = ForkSafeOnce::new();
    V.get_or_init(|| warn_once(read("WAITWISE_ALPHA", parse_alpha)))
        .as_ref()
}

/// `WAITWISE_BLOCK_NS`, read once: `None` when unset, the error when rejected
/// (also printed once to stderr).
pub fn block_ns_override() -> Option<&'static Result<u64, EnvError>> {
    static V: ForkSafeOnce<Option<Result<u64, EnvError>>> = ForkSafeOnce::new();
    V.get_or_init(|| {
        let r = read("WAITWISE_BLOCK_NS", parse_block_ns);
        if let Some(Err(e)) = &r {
            eprintln!("waitwise: {e}");
        }
        r
    })
    .as_ref()
}

/// Every rejected override of this process (for `waitwise probe` and
/// applications that want to refuse to start on a typo).
pub fn errors() -> Vec<String> {
    let mut out = Vec::new();
    if let Some(Err(e)) = alpha_override() {
        out.push(e.to_string());
    }
    if let Some(Err(e)) = block_ns_override() {
        out.push(e.to_string());
    }
    if let Err(e) = waitwise_platform::disable::disabled() {
        out.push(e.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_values() {
        assert_eq!(parse_alpha("0.5"), Ok(0.5));
        assert_eq!(parse_alpha(" 1 "), Ok(1.0));
        assert_eq!(parse_alpha("0"), Ok(0.0));
        for bad in ["", "x", "-1", "NaN", "inf", "1e9"] {
            let e = parse_alpha(bad).unwrap_err();
            assert_eq!(e.variable, "WAITWISE_ALPHA");
            assert!(e.to_string().contains("WAITWISE_ALPHA"), "{e}");
        }
    }

    #[test]
    fn block_ns_values() {
        assert_eq!(parse_block_ns("40000"), Ok(40_000));
        for bad in ["", "0", "-5", "1.5", "abc", "99999999999"] {
            let e = parse_block_ns(bad).unwrap_err();
            assert!(e.to_string().contains("WAITWISE_BLOCK_NS"), "{e}");
        }
    }
}
