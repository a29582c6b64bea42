//! Waiting mechanisms: *how* a thread waits for a 32-bit word to change.
//!
//! Every mechanism has the same shape: [`Mechanism::wait_for_change`] returns
//! when the word no longer holds `current` ([`MechanismWait::Changed`]) or the
//! deadline passes ([`MechanismWait::TimedOut`]). Each is named in reports by
//! a short stable name ([`Mechanism::name`]).
//!
//! | name | what the waiter does | clock read every |
//! |---|---|---|
//! | `spin` | plain load loop, no PAUSE (seed 000's spin-loops are `pause`) | [`spin::CLOCK_CHECK_INTERVAL`] polls |
//! | `pause` | load + PAUSE | [`pause::CLOCK_CHECK_INTERVAL`] polls |
//! | `backoff` | exponentially growing PAUSE batches, capped | every batch |
//! | `yield` | `sched_yield()` between polls; none while yields lose whole slices ([`yield_guard`]) | every poll |
//! | `block` | futex sleep | the kernel's timer |
//! | `umwait`, `umwait-c01` | UMONITOR + UMWAIT (C0.2 / C0.1) with a TSC deadline | every wake-up |
//! | `tpause` | TPAUSE for a short slice between polls | every slice |
//! | `mwaitx` | MONITORX + MWAITX with its timer | every wake-up |
//! | `delay-*` | a poll loop whose body is a long-latency operation ([`delay`]) | every poll |
//!
//! Hardware waits run only when CPUID advertises them and `WAITWISE_DISABLE`
//! does not name them; otherwise [`Mechanism::effective`] follows the
//! documented fallback chain `umwait -> tpause -> pause`, `mwaitx -> pause`,
//! and [`Mechanism::availability`] says why.

pub mod backoff;
pub mod block;
pub mod delay;
pub mod hw_deadline;
pub mod mwaitx;
pub mod pause;
pub mod spin;
pub mod tpause;
pub mod umwait;
pub mod yield_guard;
pub mod yielding;

pub use delay::DelayKind;

use std::fmt;
use std::str::FromStr;
use waitwise_platform::clock::Deadline;
use waitwise_platform::disable::{self, DisabledSet, HwWait};
use waitwise_platform::futex::Futex;
use waitwise_platform::once::ForkSafeOnce;

/// Why [`Mechanism::wait_for_change`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MechanismWait {
    /// The word changed; this is the value seen.
    Changed(u32),
    /// The deadline passed with the word unchanged.
    TimedOut,
}

/// Which C0 sub-state UMWAIT/TPAUSE request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum WaitpkgState {
    /// C0.1: lighter, faster wake-up.
    C01,
    /// C0.2: deeper, saves more power, slower wake-up (may be disabled by the OS).
    C02,
}

impl WaitpkgState {
    /// The control operand of UMWAIT/TPAUSE.
    pub fn control(self) -> u32 {
        match self {
            WaitpkgState::C01 => waitwise_platform::arch::WAITPKG_C01,
            WaitpkgState::C02 => waitwise_platform::arch::WAITPKG_C02,
        }
    }
}

/// A way of waiting for a word to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// Plain load loop without PAUSE.
    Spin,
    /// Load loop with PAUSE.
    Pause,
    /// Exponentially growing PAUSE batches with a cap.
    Backoff,
    /// `sched_yield()` between polls (switch-spinning, Lim & Agarwal's `Ss`).
    Yield,
    /// Futex sleep.
    Block,
    /// UMONITOR + UMWAIT in the given C0 sub-state.
    Umwait(WaitpkgState),
    /// TPAUSE slices between polls.
    Tpause,
    /// MONITORX + MWAITX.
    Mwaitx,
    /// A poll loop whose body is a long-latency operation.
    Delay(DelayKind),
}

/// Whether a mechanism runs as asked on this CPU, and what runs instead.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Availability {
    /// Runs as asked.
    pub available: bool,
    /// The mechanism that runs instead (its stable name), when not available.
    pub fallback: Option<&'static str>,
    /// Why not, in words ("CPU lacks WAITPKG", "disabled by WAITWISE_DISABLE").
    pub reason: Option<String>,
}

impl Mechanism {
    /// Every mechanism, in report order.
    pub const ALL: [Mechanism; 13] = [
        Mechanism::Spin,
        Mechanism::Pause,
        Mechanism::Backoff,
        Mechanism::Yield,
        Mechanism::Block,
        Mechanism::Umwait(WaitpkgState::C02),
        Mechanism::Umwait(WaitpkgState::C01),
        Mechanism::Tpause,
        Mechanism::Mwaitx,
        Mechanism::Delay(DelayKind::IntDiv),
        Mechanism::Delay(DelayKind::FpDiv),
        Mechanism::Delay(DelayKind::PrivateCas),
        Mechanism::Delay(DelayKind::CacheMiss),
    ];

    /// The short stable name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Spin => "spin",
            Mechanism::Pause => "pause",
            Mechanism::Backoff => "backoff",
            Mechanism::Yield => "yield",
            Mechanism::Block => "block",
            Mechanism::Umwait(WaitpkgState::C02) => "umwait",
            Mechanism::Umwait(WaitpkgState::C01) => "umwait-c01",
            Mechanism::Tpause => "tpause",
            Mechanism::Mwaitx => "mwaitx",
            Mechanism::Delay(kind) => kind.mechanism_name(),
        }
    }

    /// The hardware feature this mechanism needs, if any.
    pub fn requires(self) -> Option<HwWait> {
        match self {
            Mechanism::Umwait(_) => Some(HwWait::Umwait),
            Mechanism::Tpause => Some(HwWait::Tpause),
            Mechanism::Mwaitx => Some(HwWait::Mwaitx),
            _ => None,
        }
    }

    /// Whether this mechanism is a hardware-assisted wait.
    pub fn is_hardware(self) -> bool {
        self.requires().is_some()
    }

    /// The next mechanism in the fallback chain when this one cannot run:
    /// `umwait -> tpause -> pause`, `mwaitx -> pause`.
    pub fn fallback(self) -> Option<Mechanism> {
        match self {
            Mechanism::Umwait(_) => Some(Mechanism::Tpause),
            Mechanism::Tpause | Mechanism::Mwaitx => Some(Mechanism::Pause),
            _ => None,
        }
    }

    /// Whether this mechanism may run on this CPU in this process, and if
    /// not, why. Decided by `usable`, which reports for each hardware wait
    /// whether it may execute (injected so the dispatch logic is testable on
    /// any machine).
    pub fn availability_with(self, usable: impl Fn(HwWait) -> Result<(), String>) -> Availability {
        match self.requires() {
            None => Availability {
                available: true,
                fallback: None,
                reason: None,
            },
            Some(hw) => match usable(hw) {
                Ok(()) => Availability {
                    available: true,
                    fallback: None,
                    reason: None,
                },
                Err(reason) => Availability {
                    available: false,
                    fallback: Some(self.effective_with(&usable).name()),
                    reason: Some(reason),
                },
            },
        }
    }

    /// [`Mechanism::availability_with`] on this machine.
    pub fn availability(self) -> Availability {
        self.availability_with(hw_wait_status)
    }

    /// The mechanism that actually runs: this one if usable, else the first
    /// usable one along the fallback chain.
    pub fn effective_with(self, usable: impl Fn(HwWait) -> Result<(), String>) -> Mechanism {
        self.first_usable(|hw| usable(hw).is_ok())
    }

    /// The fallback chain's walk of [`Mechanism::effective_with`].
    fn first_usable(self, usable: impl Fn(HwWait) -> bool) -> Mechanism {
        let mut m = self;
        loop {
            match m.requires() {
                Some(hw) if !usable(hw) => match m.fallback() {
                    Some(next) => m = next,
                    None => return Mechanism::Pause,
                },
                _ => return m,
            }
        }
    }

    /// [`Mechanism::effective_with`] on this machine. Every wait asks (a
    /// policy's poll budget, each polling slice): the answer per hardware
    /// wait is decided once (`hw_wait_runs`).
    #[inline]
    pub fn effective(self) -> Mechanism {
        if self.requires().is_none() {
            return self;
        }
        self.first_usable(hw_wait_runs)
    }

    /// Waits until `futex` no longer holds `current`, or `deadline` passes.
    ///
    /// The word is read with `Acquire`: a caller that sees the new value also
    /// sees what the writer did before storing it. Hardware waits not usable
    /// here run their fallback (never an unadvertised instruction). `Block`
    /// sleeps on the futex without any sleeper bookkeeping: a waker must wake
    /// the futex; [`crate::WaitWord`] adds the protocol that lets wakers skip
    /// the system call.
    #[inline]
    pub fn wait_for_change(self, futex: &Futex, current: u32, deadline: Deadline) -> MechanismWait {
        let word = futex.value();
        match self.effective() {
            Mechanism::Spin => spin::wait(word, current, deadline),
            Mechanism::Pause => pause::wait(word, current, deadline),
            Mechanism::Backoff => backoff::wait(word, current, deadline),
            Mechanism::Yield => yielding::wait(word, current, deadline),
            Mechanism::Block => block::wait(futex, current, deadline),
            Mechanism::Umwait(state) => umwait::wait(word, current, deadline, state),
            Mechanism::Tpause => tpause::wait(word, current, deadline),
            Mechanism::Mwaitx => mwaitx::wait(word, current, deadline),
            Mechanism::Delay(kind) => delay::wait(word, current, deadline, kind),
        }
    }
}

/// Whether [`hw_wait_status`] is `Ok` for `hw`, decided once per process
/// (its inputs, the CPU's features and `WAITWISE_DISABLE`, do not change):
/// the wait path asks at every wait, and the status builds its reason as a
/// `String`, an allocation per wait on a CPU without the instruction.
#[inline]
fn hw_wait_runs(hw: HwWait) -> bool {
    if cfg!(loom) {
        return false;
    }
    // A DisabledSet used as a plain set, as `disable::hw_wait_usable` does.
    static RUNS: ForkSafeOnce<DisabledSet> = ForkSafeOnce::new();
    RUNS.get_or_init(|| {
        let mut runs = DisabledSet::EMPTY;
        for w in HwWait::ALL {
            if hw_wait_status(w).is_ok() {
                runs.insert(w);
            }
        }
        runs
    })
    .contains(hw)
}

/// Whether a hardware wait may execute here: `Ok` or the reason it may not.
pub fn hw_wait_status(hw: HwWait) -> Result<(), String> {
    if cfg!(loom) {
        return Err("not modelled under loom".into());
    }
    let feature = match hw {
        HwWait::Umwait | HwWait::Tpause => "WAITPKG",
        HwWait::Mwaitx => "MONITORX",
    };
    let f = waitwise_platform::features::cpu();
    if !disable::hw_wait_advertised(hw, f) {
        return Err(format!("CPU lacks {feature}"));
    }
    if crate::env::disabled().contains(hw) {
        return Err("disabled by WAITWISE_DISABLE".into());
    }
    if !f.invariant_tsc {
        return Err("no invariant TSC for its deadline".into());
    }
    debug_assert!(disable::hw_wait_usable(hw));
    Ok(())
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a mechanism.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown waiting mechanism `{0}` (known: spin, pause, backoff, yield, block, umwait, umwait-c01, tpause, mwaitx, delay-intdiv, delay-fpdiv, delay-cas, delay-miss)")]
pub struct UnknownMechanism(pub String);

impl FromStr for Mechanism {
    type Err = UnknownMechanism;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mechanism::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMechanism(s.to_string()))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Mechanism {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decided_effective_mechanism_is_the_status_chain_s() {
        for m in Mechanism::ALL {
            assert_eq!(m.effective(), m.effective_with(hw_wait_status), "{m}");
        }
        for hw in HwWait::ALL {
            assert_eq!(hw_wait_runs(hw), hw_wait_status(hw).is_ok(), "{hw:?}");
        }
    }

    fn none_usable(hw: HwWait) -> Result<(), String> {
        Err(match hw {
            HwWait::Mwaitx => "CPU lacks MONITORX".to_string(),
            _ => "CPU lacks WAITPKG".to_string(),
        })
    }

    fn intel_usable(hw: HwWait) -> Result<(), String> {
        match hw {
            HwWait::Mwaitx => Err("CPU lacks MONITORX".into()),
            _ => Ok(()),
        }
    }

    #[test]
    fn names_round_trip() {
        for m in Mechanism::ALL {
            assert_eq!(m.name().parse::<Mechanism>().unwrap(), m);
        }
        assert!("warp"
            .parse::<Mechanism>()
            .unwrap_err()
            .to_string()
            .contains("warp"));
    }

    #[test]
    fn fallback_chain_without_hardware_waits() {
        assert_eq!(
            Mechanism::Umwait(WaitpkgState::C02).effective_with(none_usable),
            Mechanism::Pause
        );
        assert_eq!(
            Mechanism::Tpause.effective_with(none_usable),
            Mechanism::Pause
        );
        assert_eq!(
            Mechanism::Mwaitx.effective_with(none_usable),
            Mechanism::Pause
        );
        assert_eq!(Mechanism::Spin.effective_with(none_usable), Mechanism::Spin);
        let a = Mechanism::Umwait(WaitpkgState::C01).availability_with(none_usable);
        assert!(!a.available);
        assert_eq!(a.fallback, Some("pause"));
        assert_eq!(a.reason.as_deref(), Some("CPU lacks WAITPKG"));
    }

    #[test]
    fn fallback_chain_on_intel_with_waitpkg() {
        assert_eq!(
            Mechanism::Umwait(WaitpkgState::C02).effective_with(intel_usable),
            Mechanism::Umwait(WaitpkgState::C02)
        );
        assert_eq!(
            Mechanism::Mwaitx.effective_with(intel_usable),
            Mechanism::Pause
        );
        assert!(Mechanism::Tpause.availability_with(intel_usable).available);
    }

    #[test]
    fn umwait_disabled_alone_falls_back_to_tpause() {
        let only_tpause = |hw: HwWait| match hw {
            HwWait::Tpause => Ok(()),
            _ => Err("disabled by WAITWISE_DISABLE".to_string()),
        };
        assert_eq!(
            Mechanism::Umwait(WaitpkgState::C02).effective_with(only_tpause),
            Mechanism::Tpause
        );
    }

    /// Each mechanism as dispatched here (a hardware wait runs for real
    /// where the CPU advertises it, else its fallback): it sees another
    /// thread's store, times out on an unchanged word, and returns at once
    /// for a deadline already past.
    #[test]
    fn every_mechanism_sees_a_store_and_honours_its_deadline() {
        use std::sync::atomic::Ordering;
        use std::time::Duration;
        for m in Mechanism::ALL {
            let futex = Futex::new(0);
            let passed = Deadline::after(Duration::ZERO);
            assert_eq!(
                m.wait_for_change(&futex, 0, passed),
                MechanismWait::TimedOut,
                "{m}"
            );
            let soon = Deadline::after(Duration::from_millis(2));
            assert_eq!(
                m.wait_for_change(&futex, 0, soon),
                MechanismWait::TimedOut,
                "{m}"
            );
            assert!(soon.has_passed(), "{m} returned before its deadline");
            assert_eq!(
                m.wait_for_change(&futex, 1, Deadline::NEVER),
                MechanismWait::Changed(0),
                "{m}"
            );
            std::thread::scope(|s| {
                let waiter = s.spawn(|| m.wait_for_change(&futex, 0, Deadline::NEVER));
                std::thread::sleep(Duration::from_millis(1));
                futex.value().store(7, Ordering::Release);
                futex.wake_all();
                assert_eq!(waiter.join().unwrap(), MechanismWait::Changed(7), "{m}");
            });
        }
    }

    #[test]
    fn this_machine_never_runs_an_unadvertised_instruction() {
        let f = waitwise_platform::features::cpu();
        for m in Mechanism::ALL {
            let eff = m.effective();
            if eff.requires() == Some(HwWait::Mwaitx) {
                assert!(f.monitorx);
            }
            if matches!(eff.requires(), Some(HwWait::Umwait | HwWait::Tpause)) {
                assert!(f.waitpkg);
            }
        }
    }
}
