//! The `WAITWISE_*` environment variables: one parser for the library, the
//! `waitwise` tool and the LD_PRELOAD interposer.
//!
//! Every variable is read once per process, all of them together, on the
//! first call of [`settings`] or one of the accessors built on it (the
//! `parse_*` functions read nothing). A value that is not
//! accepted prints exactly one line on stderr, naming the variable, the
//! value, what is accepted and the default used instead; the default is
//! then used and the program runs on. [`errors`] lists the rejected values
//! again (`waitwise probe` reports them as `env_errors`), for programs that
//! want to refuse to start on a typo.
//!
//! | variable | meaning | accepted | default |
//! |---|---|---|---|
//! | `WAITWISE_POLICY` | the interposer's policy family ([`PolicyChoice`]); the library's objects take theirs from their builders | `two-phase`, `spin`, `block`, `randomized` | `two-phase` |
//! | `WAITWISE_ALPHA` | `alpha` for every two-phase policy built from a kind | a finite number in `[0, 100]` | each kind's own ([`SyncKind::default_alpha`](crate::SyncKind::default_alpha)) |
//! | `WAITWISE_BLOCK_NS` | the `B` a process starts from | whole ns in `1..=1_000_000_000` | the machine profile, else the built-in `B` ([`starting_block_cost`](crate::policy::starting_block_cost)) |
//! | `WAITWISE_DISABLE` | hardware waits to skip | a comma-separated list of `umwait`, `tpause`, `mwaitx` or `all` ([`waitwise_platform::disable`]) | nothing disabled |
//! | `WAITWISE_PROFILE` | wait-time profiling ([`Profiling`]) | unset, empty or `0`: off; `1`: on; anything else: on, and the interposer's profile path | off |
//!
//! A variable set to a value that is not UTF-8 is rejected, except
//! `WAITWISE_PROFILE`, whose value may be any path.
//!
//! The platform layer, below this crate, reads `WAITWISE_DISABLE` on its
//! own to decide whether a hardware wait may run
//! ([`waitwise_platform::disable`]); both parse it with
//! [`DisabledSet::parse`], so both reach the same set, and only this module
//! prints.
//!
//! # Examples
//!
//! ```
//! use waitwise::env::{self, PolicyChoice, Profiling};
//!
//! assert_eq!(env::parse_policy(" spin "), Ok(PolicyChoice::Spin));
//! assert_eq!(env::parse_alpha("0.5"), Ok(0.5));
//! let e = env::parse_block_ns("lots").unwrap_err().to_string();
//! assert!(e.contains("WAITWISE_BLOCK_NS") && e.contains("\"lots\"") && e.contains("default"));
//! assert_eq!(env::parse_profiling("0".as_ref()), Profiling::Off);
//! assert_eq!(env::parse_profiling("1".as_ref()), Profiling::On);
//! ```

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use waitwise_platform::disable::{self, DisableError, DisabledSet};
use waitwise_platform::once::ForkSafeOnce;

/// Largest accepted `WAITWISE_ALPHA`. Guessed: far past any useful alpha
/// (the kinds' defaults are below 1), small enough that `alpha * B` stays
/// under two minutes at the largest `B`.
pub const MAX_ALPHA: f64 = 100.0;
/// Largest accepted `WAITWISE_BLOCK_NS` (one second). Guessed: orders of
/// magnitude above any futex wake-up cost.
pub const MAX_BLOCK_NS: u64 = 1_000_000_000;

/// A variable this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variable {
    /// `WAITWISE_POLICY`
    Policy,
    /// `WAITWISE_ALPHA`
    Alpha,
    /// `WAITWISE_BLOCK_NS`
    BlockNs,
    /// `WAITWISE_DISABLE`
    Disable,
    /// `WAITWISE_PROFILE`
    Profile,
}

impl Variable {
    /// Every variable, in the order of the module's table.
    pub const ALL: [Variable; 5] = [
        Variable::Policy,
        Variable::Alpha,
        Variable::BlockNs,
        Variable::Disable,
        Variable::Profile,
    ];

    /// The variable's name.
    pub const fn name(self) -> &'static str {
        match self {
            Variable::Policy => "WAITWISE_POLICY",
            Variable::Alpha => "WAITWISE_ALPHA",
            Variable::BlockNs => "WAITWISE_BLOCK_NS",
            Variable::Disable => disable::ENV_VAR,
            Variable::Profile => "WAITWISE_PROFILE",
        }
    }

    /// The values it accepts, as a rejection message states them.
    pub const fn accepted(self) -> &'static str {
        match self {
            Variable::Policy => "two-phase, spin, block or randomized",
            Variable::Alpha => "a finite number in [0, 100]",
            Variable::BlockNs => "whole nanoseconds in 1..=1000000000",
            Variable::Disable => "a comma-separated list of umwait, tpause, mwaitx or all",
            Variable::Profile => "any value (0 off, 1 on, else a path)",
        }
    }

    /// What is used when the variable is unset or rejected.
    pub const fn default_text(self) -> &'static str {
        match self {
            Variable::Policy => "two-phase",
            Variable::Alpha => "each kind's own alpha",
            Variable::BlockNs => "the machine profile's B, else the built-in one",
            Variable::Disable => "nothing disabled",
            Variable::Profile => "off",
        }
    }
}

impl fmt::Display for Variable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is wrong with a rejected value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The value is not UTF-8.
    NotUtf8,
    /// Not a number (`WAITWISE_ALPHA`, `WAITWISE_BLOCK_NS`).
    NotANumber,
    /// A number outside the accepted range.
    OutOfRange,
    /// A name that is not one of the accepted ones (the entry as written).
    UnknownName(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotUtf8 => f.write_str("not UTF-8"),
            Problem::NotANumber => f.write_str("not a number"),
            Problem::OutOfRange => f.write_str("out of range"),
            Problem::UnknownName(name) => write!(f, "unknown name {name:?}"),
        }
    }
}

/// A rejected environment variable. Its `Display` is the one line printed
/// on stderr (after `waitwise: `).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{variable}={value:?} rejected ({problem}): expected {accepted}; using the default, {default}",
    accepted = variable.accepted(),
    default = variable.default_text()
)]
pub struct EnvError {
    /// The variable.
    pub variable: Variable,
    /// Its value as found (lossily converted when not UTF-8).
    pub value: String,
    /// What is wrong with it.
    pub problem: Problem,
}

impl EnvError {
    fn new(variable: Variable, value: &str, problem: Problem) -> Self {
        Self {
            variable,
            value: value.to_string(),
            problem,
        }
    }
}

/// The policy family `WAITWISE_POLICY` names. The interposer waits with
/// it; the library's objects take their policy from their builders, so
/// there the variable is only checked and reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PolicyChoice {
    /// `two-phase`: `s/b/alpha`, poll for `alpha * B`, then block.
    #[default]
    TwoPhase = 0,
    /// `spin`: `s//inf`, poll until the wait ends (the interposer still
    /// blocks after a guard time).
    Spin = 1,
    /// `block`: `/b/0`, block at once.
    Block = 2,
    /// `randomized`: `rand/b`, poll for a limit drawn per wait on `[0, B]`.
    Randomized = 3,
}

impl PolicyChoice {
    /// Every choice, in the order of its `u8` values.
    pub const ALL: [PolicyChoice; 4] = [
        PolicyChoice::TwoPhase,
        PolicyChoice::Spin,
        PolicyChoice::Block,
        PolicyChoice::Randomized,
    ];

    /// The name `WAITWISE_POLICY` takes.
    pub const fn name(self) -> &'static str {
        match self {
            PolicyChoice::TwoPhase => "two-phase",
            PolicyChoice::Spin => "spin",
            PolicyChoice::Block => "block",
            PolicyChoice::Randomized => "randomized",
        }
    }

    /// The choice whose `as u8` is `v`; `TwoPhase` for any other value.
    pub const fn from_u8(v: u8) -> Self {
        match v {
            1 => PolicyChoice::Spin,
            2 => PolicyChoice::Block,
            3 => PolicyChoice::Randomized,
            _ => PolicyChoice::TwoPhase,
        }
    }
}

/// What `WAITWISE_PROFILE` asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Profiling {
    /// Unset, empty or `0`.
    #[default]
    Off,
    /// `1`: every object records a wait-time histogram; the interposer
    /// writes them to `waitwise-profile-%p.json` in the working directory.
    On,
    /// Any other value: on, and the interposer writes the histograms to
    /// this path (`%p` becomes the process id). The library records the
    /// same histograms and writes no file.
    To(PathBuf),
}

impl Profiling {
    /// Whether profiling is on.
    pub fn is_on(&self) -> bool {
        !matches!(self, Profiling::Off)
    }

    /// Where the interposer writes the profile, before `%p` is replaced:
    /// `None` when off.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Profiling::Off => None,
            Profiling::On => Some(Path::new(DEFAULT_PROFILE_FILE)),
            Profiling::To(path) => Some(path),
        }
    }
}

/// The interposer's profile file under `WAITWISE_PROFILE=1`, relative to
/// the working directory; `%p` becomes the process id.
pub const DEFAULT_PROFILE_FILE: &str = "waitwise-profile-%p.json";

/// Parses a `WAITWISE_POLICY` value (spaces around it ignored).
pub fn parse_policy(value: &str) -> Result<PolicyChoice, EnvError> {
    let name = value.trim();
    PolicyChoice::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| {
            EnvError::new(
                Variable::Policy,
                value,
                Problem::UnknownName(name.to_string()),
            )
        })
}

/// Parses a `WAITWISE_ALPHA` value.
pub fn parse_alpha(value: &str) -> Result<f64, EnvError> {
    let err = |problem| EnvError::new(Variable::Alpha, value, problem);
    let alpha: f64 = value.trim().parse().map_err(|_| err(Problem::NotANumber))?;
    if !alpha.is_finite() || !(0.0..=MAX_ALPHA).contains(&alpha) {
        return Err(err(Problem::OutOfRange));
    }
    Ok(alpha)
}

/// Parses a `WAITWISE_BLOCK_NS` value.
pub fn parse_block_ns(value: &str) -> Result<u64, EnvError> {
    let err = |problem| EnvError::new(Variable::BlockNs, value, problem);
    let digits = value.trim();
    let ns: u64 = digits.parse().map_err(|_| {
        // u64's parse fails on too many digits as on a letter.
        let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        err(if all_digits {
            Problem::OutOfRange
        } else {
            Problem::NotANumber
        })
    })?;
    if ns == 0 || ns > MAX_BLOCK_NS {
        return Err(err(Problem::OutOfRange));
    }
    Ok(ns)
}

/// Parses a `WAITWISE_DISABLE` value with [`DisabledSet::parse`], the
/// parse the platform layer makes when it decides whether a hardware wait
/// may run ([`disable::hw_wait_usable`]).
pub fn parse_disable(value: &str) -> Result<DisabledSet, EnvError> {
    DisabledSet::parse(value).map_err(|e| {
        let problem = match e {
            DisableError::UnknownName { token } => Problem::UnknownName(token),
            DisableError::NotUnicode { .. } => Problem::NotUtf8,
        };
        EnvError::new(Variable::Disable, value, problem)
    })
}

/// Parses a `WAITWISE_PROFILE` value; every value is accepted.
pub fn parse_profiling(value: &OsStr) -> Profiling {
    if value.is_empty() || value == "0" {
        Profiling::Off
    } else if value == "1" {
        Profiling::On
    } else {
        Profiling::To(PathBuf::from(value))
    }
}

/// Every variable as this process read it: a rejected value is the
/// default here, and its error is in `errors`.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// `WAITWISE_POLICY`.
    pub policy: PolicyChoice,
    /// `WAITWISE_ALPHA`: `None` when unset or rejected.
    pub alpha: Option<f64>,
    /// `WAITWISE_BLOCK_NS`: `None` when unset or rejected.
    pub block_ns: Option<u64>,
    /// `WAITWISE_DISABLE`.
    pub disabled: DisabledSet,
    /// `WAITWISE_PROFILE`.
    pub profiling: Profiling,
    /// The rejected values, in [`Variable::ALL`] order.
    pub errors: Vec<EnvError>,
}

impl Settings {
    /// Reads every variable through `var` (`std::env::var_os` for the
    /// process, a table in tests); prints nothing.
    pub fn read_with(var: impl Fn(&str) -> Option<OsString>) -> Self {
        let mut errors = Vec::new();
        let policy = parse_var(&var, Variable::Policy, parse_policy, &mut errors);
        let alpha = parse_var(&var, Variable::Alpha, parse_alpha, &mut errors);
        let block_ns = parse_var(&var, Variable::BlockNs, parse_block_ns, &mut errors);
        let disabled = parse_var(&var, Variable::Disable, parse_disable, &mut errors);
        let profiling = var(Variable::Profile.name()).map(|v| parse_profiling(&v));
        Settings {
            policy: policy.unwrap_or_default(),
            alpha,
            block_ns,
            disabled: disabled.unwrap_or_default(),
            profiling: profiling.unwrap_or_default(),
            errors,
        }
    }
}

/// `variable` parsed with `parse`: `None` when unset or rejected; a
/// rejection (a value that is not UTF-8 included) goes to `errors`.
fn parse_var<T>(
    var: &impl Fn(&str) -> Option<OsString>,
    variable: Variable,
    parse: fn(&str) -> Result<T, EnvError>,
    errors: &mut Vec<EnvError>,
) -> Option<T> {
    let raw = var(variable.name())?;
    let parsed = match raw.to_str() {
        Some(s) => parse(s),
        None => Err(EnvError::new(
            variable,
            &raw.to_string_lossy(),
            Problem::NotUtf8,
        )),
    };
    parsed.map_err(|e| errors.push(e)).ok()
}

/// Every variable, read once per process; the first call prints one line
/// on stderr per rejected value.
pub fn settings() -> &'static Settings {
    static SETTINGS: ForkSafeOnce<Settings> = ForkSafeOnce::new();
    SETTINGS.get_or_init(read_and_report)
}

/// The slow path of [`settings`].
#[cold]
#[inline(never)]
fn read_and_report() -> Settings {
    // Most processes set none: one walk of the environment tells, before
    // the parser's code is paged in (the interposer reads this before
    // `main` in every process).
    if !waitwise_platform::c_env::any_named_with(b"WAITWISE_") {
        return Settings::default();
    }
    let settings = Settings::read_with(|name| std::env::var_os(name));
    for e in &settings.errors {
        eprintln!("waitwise: {e}");
    }
    settings
}

/// `WAITWISE_POLICY`, or `two-phase`.
pub fn policy() -> PolicyChoice {
    settings().policy
}

/// `WAITWISE_ALPHA` when set and accepted.
pub fn alpha_override() -> Option<f64> {
    settings().alpha
}

/// `WAITWISE_BLOCK_NS` when set and accepted.
pub fn block_ns_override() -> Option<u64> {
    settings().block_ns
}

/// The hardware waits `WAITWISE_DISABLE` switches off (none when unset or
/// rejected).
pub fn disabled() -> DisabledSet {
    settings().disabled
}

/// `WAITWISE_PROFILE`.
pub fn profiling() -> &'static Profiling {
    &settings().profiling
}

/// Every rejected value of this process, in [`Variable::ALL`] order (each
/// was printed once on stderr).
pub fn errors() -> &'static [EnvError] {
    &settings().errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(vars: &[(&str, &str)]) -> Settings {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        Settings::read_with(|name| map.get(name).cloned())
    }

    #[test]
    fn policy_values() {
        for p in PolicyChoice::ALL {
            assert_eq!(parse_policy(p.name()), Ok(p));
            assert_eq!(PolicyChoice::from_u8(p as u8), p);
        }
        assert_eq!(parse_policy(" block\n"), Ok(PolicyChoice::Block));
        for bad in ["", "fastest", "Spin", "two_phase"] {
            let e = parse_policy(bad).unwrap_err();
            assert_eq!(e.variable, Variable::Policy);
        }
    }

    #[test]
    fn alpha_values() {
        assert_eq!(parse_alpha("0.5"), Ok(0.5));
        assert_eq!(parse_alpha(" 1 "), Ok(1.0));
        assert_eq!(parse_alpha("0"), Ok(0.0));
        assert_eq!(parse_alpha("100"), Ok(100.0));
        for (bad, problem) in [
            ("", Problem::NotANumber),
            ("x", Problem::NotANumber),
            ("-1", Problem::OutOfRange),
            ("NaN", Problem::OutOfRange),
            ("inf", Problem::OutOfRange),
            ("1e9", Problem::OutOfRange),
        ] {
            let e = parse_alpha(bad).unwrap_err();
            assert_eq!(
                (e.variable, e.problem),
                (Variable::Alpha, problem),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn block_ns_values() {
        assert_eq!(parse_block_ns("40000"), Ok(40_000));
        assert_eq!(parse_block_ns("1000000000"), Ok(MAX_BLOCK_NS));
        for (bad, problem) in [
            ("", Problem::NotANumber),
            ("0", Problem::OutOfRange),
            ("-5", Problem::NotANumber),
            ("1.5", Problem::NotANumber),
            ("abc", Problem::NotANumber),
            ("99999999999", Problem::OutOfRange),
            ("99999999999999999999999", Problem::OutOfRange),
        ] {
            let e = parse_block_ns(bad).unwrap_err();
            assert_eq!(
                (e.variable, e.problem),
                (Variable::BlockNs, problem),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn disable_delegates_to_the_platform() {
        assert_eq!(parse_disable(" all "), Ok(DisabledSet::ALL));
        let e = parse_disable("umwait,warp").unwrap_err();
        assert_eq!(e.problem, Problem::UnknownName("warp".into()));
        assert_eq!(e.value, "umwait,warp");
    }

    #[test]
    fn profiling_values() {
        assert_eq!(parse_profiling("".as_ref()), Profiling::Off);
        assert_eq!(parse_profiling("0".as_ref()), Profiling::Off);
        assert_eq!(parse_profiling("1".as_ref()), Profiling::On);
        assert!(Profiling::On.is_on());
        assert_eq!(
            Profiling::On.file(),
            Some(Path::new("waitwise-profile-%p.json"))
        );
        let to = parse_profiling("/tmp/p-%p.json".as_ref());
        assert_eq!(to, Profiling::To("/tmp/p-%p.json".into()));
        assert!(to.is_on());
        assert_eq!(to.file(), Some(Path::new("/tmp/p-%p.json")));
        assert_eq!(Profiling::Off.file(), None);
    }

    /// Each message names the variable, the value, what is accepted and
    /// the default, on one line.
    #[test]
    fn every_message_names_variable_value_range_and_default() {
        let errors = [
            parse_policy("fastest").unwrap_err(),
            parse_alpha("lots").unwrap_err(),
            parse_block_ns("-3").unwrap_err(),
            parse_disable("warp").unwrap_err(),
        ];
        for e in errors {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg}");
            assert!(msg.starts_with(e.variable.name()), "{msg}");
            assert!(msg.contains(&format!("{:?}", e.value)), "{msg}");
            assert!(msg.contains(e.variable.accepted()), "{msg}");
            assert!(
                msg.ends_with(&format!("using the default, {}", e.variable.default_text())),
                "{msg}"
            );
        }
    }

    #[test]
    fn a_rejected_value_keeps_the_default_and_is_listed_once() {
        let s = read(&[
            ("WAITWISE_POLICY", "fastest"),
            ("WAITWISE_ALPHA", "-3"),
            ("WAITWISE_BLOCK_NS", "lots"),
            ("WAITWISE_DISABLE", "foo"),
            ("WAITWISE_PROFILE", "1"),
        ]);
        assert_eq!(s.policy, PolicyChoice::TwoPhase);
        assert_eq!(s.alpha, None);
        assert_eq!(s.block_ns, None);
        assert_eq!(s.disabled, DisabledSet::EMPTY);
        assert_eq!(s.profiling, Profiling::On);
        let vars: Vec<Variable> = s.errors.iter().map(|e| e.variable).collect();
        assert_eq!(
            vars,
            [
                Variable::Policy,
                Variable::Alpha,
                Variable::BlockNs,
                Variable::Disable
            ]
        );
    }

    #[test]
    fn accepted_values_are_used() {
        let s = read(&[
            ("WAITWISE_POLICY", "randomized"),
            ("WAITWISE_ALPHA", "0.25"),
            ("WAITWISE_BLOCK_NS", "12345"),
            ("WAITWISE_DISABLE", "tpause"),
            ("WAITWISE_PROFILE", "out-%p.json"),
        ]);
        assert_eq!(s.policy, PolicyChoice::Randomized);
        assert_eq!(s.alpha, Some(0.25));
        assert_eq!(s.block_ns, Some(12345));
        assert!(s.disabled.contains(disable::HwWait::Tpause));
        assert_eq!(s.profiling, Profiling::To("out-%p.json".into()));
        assert!(s.errors.is_empty());
        let unset = read(&[]);
        assert_eq!(unset.policy, PolicyChoice::TwoPhase);
        assert_eq!(unset.profiling, Profiling::Off);
        assert!(unset.errors.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_is_rejected_except_as_a_profile_path() {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(vec![b'p', 0xff]);
        let s =
            Settings::read_with(|name| Some(bad.clone()).filter(|_| name.starts_with("WAITWISE_")));
        assert_eq!(s.errors.len(), 4);
        assert!(s.errors.iter().all(|e| e.problem == Problem::NotUtf8));
        assert_eq!(s.profiling, Profiling::To(PathBuf::from(bad)));
    }
}
