//! `WAITWISE_DISABLE=umwait,tpause,mwaitx`: switch hardware waits off so
//! the fallbacks run even on a CPU that has the instructions.
//!
//! The variable is read once per process ([`disabled`]). Its syntax: a comma
//! separated list of [`HwWait::name`]s or `all`, case-insensitive, spaces
//! around names ignored, empty entries skipped; unset or empty disables
//! nothing. Any other name is an error ([`DisableError`]): this layer then
//! disables nothing, and `waitwise::env`, which reads every `WAITWISE_*`
//! variable for the library, the tool and the interposer, prints it once.
//!
//! [`hw_wait_usable`] is the one question the mechanism layer asks: does
//! the CPU advertise the instruction and does the variable leave it on?
//!
//! # Examples
//!
//! ```
//! use waitwise_platform::disable::{DisabledSet, HwWait};
//!
//! let set = DisabledSet::parse(" UMWAIT, tpause ").unwrap();
//! assert!(set.contains(HwWait::Umwait) && set.contains(HwWait::Tpause));
//! assert!(!set.contains(HwWait::Mwaitx));
//! assert!(DisabledSet::parse("umwiat").is_err());
//! ```

use crate::once::ForkSafeOnce;

use crate::features::{self, CpuFeatures};

/// The environment variable this module reads.
pub const ENV_VAR: &str = "WAITWISE_DISABLE";

/// A hardware wait that `WAITWISE_DISABLE` can switch off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum HwWait {
    /// UMONITOR + UMWAIT (WAITPKG).
    Umwait,
    /// TPAUSE (WAITPKG).
    Tpause,
    /// MONITORX + MWAITX (AMD MONITORX).
    Mwaitx,
}

impl HwWait {
    /// Every hardware wait, in the order the names are documented.
    pub const ALL: [HwWait; 3] = [HwWait::Umwait, HwWait::Tpause, HwWait::Mwaitx];

    /// The lower-case name used in `WAITWISE_DISABLE` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            HwWait::Umwait => "umwait",
            HwWait::Tpause => "tpause",
            HwWait::Mwaitx => "mwaitx",
        }
    }

    /// This wait's bit in a [`DisabledSet`].
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`HwWait`]s, as one byte. Bit `1 << (w as u8)` is `w`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DisabledSet(u8);

/// `WAITWISE_DISABLE` could not be understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DisableError {
    /// A list entry is not a hardware wait name.
    #[error(
        "WAITWISE_DISABLE: unknown hardware wait {token:?}; \
         expected a comma-separated list of umwait, tpause, mwaitx or all"
    )]
    UnknownName {
        /// The entry as written (trimmed).
        token: String,
    },
    /// The variable is set but is not valid Unicode.
    #[error("WAITWISE_DISABLE is not valid Unicode: {value:?}")]
    NotUnicode {
        /// The value, lossily converted.
        value: String,
    },
}

impl DisabledSet {
    /// Nothing disabled.
    pub const EMPTY: DisabledSet = DisabledSet(0);
    /// Every hardware wait disabled.
    pub const ALL: DisabledSet =
        DisabledSet(HwWait::Umwait.bit() | HwWait::Tpause.bit() | HwWait::Mwaitx.bit());

    /// Whether `w` is in the set.
    #[inline]
    pub fn contains(self, w: HwWait) -> bool {
        self.0 & w.bit() != 0
    }

    /// Add `w` to the set.
    pub fn insert(&mut self, w: HwWait) {
        self.0 |= w.bit();
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The members, in [`HwWait::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = HwWait> {
        HwWait::ALL.into_iter().filter(move |&w| self.contains(w))
    }

    /// Parse a `WAITWISE_DISABLE` value (syntax in the [module docs](self)).
    ///
    /// ```
    /// use waitwise_platform::disable::DisabledSet;
    /// assert_eq!(DisabledSet::parse("").unwrap(), DisabledSet::EMPTY);
    /// assert_eq!(DisabledSet::parse("All").unwrap(), DisabledSet::ALL);
    /// let err = DisabledSet::parse("umwait,pause").unwrap_err().to_string();
    /// assert!(err.contains("WAITWISE_DISABLE") && err.contains("\"pause\""));
    /// ```
    pub fn parse(s: &str) -> Result<DisabledSet, DisableError> {
        let mut set = DisabledSet::EMPTY;
        for token in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if token.eq_ignore_ascii_case("all") {
                set = DisabledSet::ALL;
                continue;
            }
            let w = HwWait::ALL
                .into_iter()
                .find(|w| token.eq_ignore_ascii_case(w.name()))
                .ok_or_else(|| DisableError::UnknownName {
                    token: token.to_owned(),
                })?;
            set.insert(w);
        }
        Ok(set)
    }
}

/// Serialized as the list of names, e.g. `["umwait","mwaitx"]`.
#[cfg(feature = "serde")]
impl serde::Serialize for DisabledSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(HwWait::name))
    }
}

/// The hardware waits `WAITWISE_DISABLE` switches off, read once per
/// process; unset means none. A malformed value is returned as the same
/// error on every call, so a tool can report it wherever it likes.
pub fn disabled() -> Result<DisabledSet, DisableError> {
    disabled_cached().clone()
}

/// The cached parse of the variable.
#[inline]
fn disabled_cached() -> &'static Result<DisabledSet, DisableError> {
    static DISABLED: ForkSafeOnce<Result<DisabledSet, DisableError>> = ForkSafeOnce::new();
    DISABLED.get_or_init(read_env)
}

/// The slow path of [`disabled`]: read and parse the variable.
#[cold]
#[inline(never)]
fn read_env() -> Result<DisabledSet, DisableError> {
    match std::env::var_os(ENV_VAR) {
        None => Ok(DisabledSet::EMPTY),
        Some(v) => match v.to_str() {
            Some(s) => DisabledSet::parse(s),
            None => Err(DisableError::NotUnicode {
                value: v.to_string_lossy().into_owned(),
            }),
        },
    }
}

/// Whether CPU features `f` advertise `w`: UMWAIT and TPAUSE need WAITPKG,
/// MWAITX needs MONITORX. Pure.
pub fn hw_wait_advertised(w: HwWait, f: &CpuFeatures) -> bool {
    match w {
        HwWait::Umwait | HwWait::Tpause => f.waitpkg,
        HwWait::Mwaitx => f.monitorx,
    }
}

/// Whether `w` may run given features `f` and disabled set `off`. Pure; the
/// decision [`hw_wait_usable`] makes for this machine.
pub fn hw_wait_usable_with(w: HwWait, f: &CpuFeatures, off: DisabledSet) -> bool {
    hw_wait_advertised(w, f) && !off.contains(w)
}

/// Whether the instruction may be executed here: [`features::cpu`]
/// advertises it and `WAITWISE_DISABLE` does not name it.
///
/// A malformed `WAITWISE_DISABLE` counts as disabling nothing here, so the
/// wait layer never fails on it; `waitwise::env` reports the error. Cheap
/// after the first call (one atomic load).
#[inline]
pub fn hw_wait_usable(w: HwWait) -> bool {
    static USABLE: ForkSafeOnce<DisabledSet> = ForkSafeOnce::new();
    USABLE.get_or_init(usable_set).contains(w)
}

/// The slow path of [`hw_wait_usable`]: the set of usable waits (stored in a
/// [`DisabledSet`] used as a plain set).
#[cold]
#[inline(never)]
fn usable_set() -> DisabledSet {
    let off = disabled_cached().clone().unwrap_or(DisabledSet::EMPTY);
    let mut usable = DisabledSet::EMPTY;
    for w in HwWait::ALL {
        if hw_wait_usable_with(w, features::cpu(), off) {
            usable.insert(w);
        }
    }
    usable
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::Vendor;

    fn features(waitpkg: bool, monitorx: bool) -> CpuFeatures {
        CpuFeatures {
            vendor: Vendor::Other(Default::default()),
            model: Default::default(),
            waitpkg,
            monitorx,
            invariant_tsc: true,
            tsc_hz: None,
            monitor_line_bytes: 64,
        }
    }

    fn set(ws: &[HwWait]) -> DisabledSet {
        let mut s = DisabledSet::EMPTY;
        ws.iter().for_each(|&w| s.insert(w));
        s
    }

    #[test]
    fn parse_accepts() {
        use HwWait::*;
        let cases: &[(&str, &[HwWait])] = &[
            ("", &[]),
            ("   ", &[]),
            (",,", &[]),
            ("umwait", &[Umwait]),
            ("TPAUSE", &[Tpause]),
            (" mwaitx ,umwait", &[Umwait, Mwaitx]),
            ("umwait,umwait", &[Umwait]),
            ("umwait,", &[Umwait]),
            ("all", &[Umwait, Tpause, Mwaitx]),
            ("ALL,umwait", &[Umwait, Tpause, Mwaitx]),
            ("umwait,tpause,mwaitx", &[Umwait, Tpause, Mwaitx]),
        ];
        for &(input, want) in cases {
            assert_eq!(DisabledSet::parse(input), Ok(set(want)), "input {input:?}");
        }
    }

    #[test]
    fn parse_rejects_unknown_names() {
        for (input, token) in [
            ("pause", "pause"),
            ("umwait, mwait", "mwait"),
            ("umwait tpause", "umwait tpause"),
            ("none", "none"),
        ] {
            let err = DisabledSet::parse(input).unwrap_err();
            assert_eq!(
                err,
                DisableError::UnknownName {
                    token: token.into()
                }
            );
            let msg = err.to_string();
            assert!(msg.contains(ENV_VAR), "{msg}");
            assert!(msg.contains(&format!("{token:?}")), "{msg}");
            for w in HwWait::ALL {
                assert!(msg.contains(w.name()), "{msg}");
            }
        }
    }

    #[test]
    fn names_and_all() {
        let names: Vec<_> = HwWait::ALL.iter().map(|w| w.name()).collect();
        assert_eq!(names, ["umwait", "tpause", "mwaitx"]);
        assert_eq!(DisabledSet::ALL.iter().collect::<Vec<_>>(), HwWait::ALL);
        assert!(DisabledSet::EMPTY.is_empty());
    }

    #[test]
    fn advertised_follows_features() {
        use HwWait::*;
        let none = features(false, false);
        let intel = features(true, false);
        let amd = features(false, true);
        for w in HwWait::ALL {
            assert!(!hw_wait_advertised(w, &none));
        }
        assert!(hw_wait_advertised(Umwait, &intel));
        assert!(hw_wait_advertised(Tpause, &intel));
        assert!(!hw_wait_advertised(Mwaitx, &intel));
        assert!(!hw_wait_advertised(Umwait, &amd));
        assert!(!hw_wait_advertised(Tpause, &amd));
        assert!(hw_wait_advertised(Mwaitx, &amd));
    }

    #[test]
    fn usable_needs_advertised_and_not_disabled() {
        use HwWait::*;
        let intel = features(true, false);
        let off = set(&[Umwait]);
        assert!(!hw_wait_usable_with(Umwait, &intel, off));
        assert!(hw_wait_usable_with(Tpause, &intel, off));
        assert!(!hw_wait_usable_with(Mwaitx, &intel, DisabledSet::EMPTY));
        assert!(!hw_wait_usable_with(Tpause, &intel, DisabledSet::ALL));
    }

    #[test]
    fn usable_here_agrees_with_the_pure_decision() {
        let off = disabled().unwrap_or(DisabledSet::EMPTY);
        for w in HwWait::ALL {
            assert_eq!(
                hw_wait_usable(w),
                hw_wait_usable_with(w, features::cpu(), off)
            );
        }
    }
}
