//! `waitwise_policy_t`: a waiting policy as a small value type.
//!
//! A policy is two fields, passed and returned by value: C code copies it
//! freely and never frees it. The constructors never fail; a policy that
//! does not make sense (an unknown kind, a negative or non-finite alpha) is
//! rejected with `WAITWISE_EINVAL` by the `*_new_with_policy` call that
//! receives it, so the error reaches the caller once, where it can act.

use crate::error::Error;
use std::ffi::c_double;
use waitwise_core::{Policy, WaitOptions};

/// The object's own default policy: the two-phase policy of its kind
/// (`WAITWISE_ALPHA` may override alpha). `alpha` is ignored.
pub const WAITWISE_POLICY_DEFAULT: u32 = 0;
/// Two-phase `s/b/alpha`: poll for `alpha * B`, then block (`B` = the block
/// cost measured on this machine).
pub const WAITWISE_POLICY_TWO_PHASE: u32 = 1;
/// `s//inf`: poll, never block. `alpha` is ignored.
pub const WAITWISE_POLICY_SPIN: u32 = 2;
/// `/b/0`: block at once. `alpha` is ignored.
pub const WAITWISE_POLICY_BLOCK: u32 = 3;
/// `rand/b`: poll for a limit drawn per wait on `[0, B]`, then block.
/// `alpha` is ignored.
pub const WAITWISE_POLICY_RANDOMIZED: u32 = 4;
/// `adapt/b`: each object polls for a limit drawn per wait from the
/// poll-limit law that cost least on its recent waits, then blocks (within
/// 32.5 times the off-line optimum on any wait sequence). `alpha` is
/// ignored.
pub const WAITWISE_POLICY_ADAPTIVE: u32 = 5;

/// `waitwise_policy_t`: which policy, and its parameter.
///
/// `#[repr(C)]`, 16 bytes: `uint32_t kind` at 0, `double alpha` at 8
/// (`include/waitwise.h` asserts the same).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(non_camel_case_types)]
pub struct waitwise_policy_t {
    /// One of the `WAITWISE_POLICY_*` kinds.
    pub kind: u32,
    /// The poll limit in units of `B`, for `WAITWISE_POLICY_TWO_PHASE`.
    pub alpha: c_double,
}

impl waitwise_policy_t {
    const fn of(kind: u32) -> Self {
        Self { kind, alpha: 0.0 }
    }

    /// The object options this policy asks for: `Ok(WaitOptions::new())`
    /// keeps the object's default.
    pub fn options(self) -> Result<WaitOptions, Error> {
        let policy = match self.kind {
            WAITWISE_POLICY_DEFAULT => return Ok(WaitOptions::new()),
            WAITWISE_POLICY_TWO_PHASE if self.alpha.is_finite() && self.alpha >= 0.0 => {
                Policy::two_phase(self.alpha)
            }
            WAITWISE_POLICY_SPIN => Policy::always_spin(),
            WAITWISE_POLICY_BLOCK => Policy::always_block(),
            WAITWISE_POLICY_RANDOMIZED => Policy::randomized(),
            WAITWISE_POLICY_ADAPTIVE => Policy::adaptive(),
            _ => return Err(Error::Invalid),
        };
        Ok(WaitOptions::new().policy(policy))
    }
}

/// The object's own default policy.
#[no_mangle]
pub extern "C" fn waitwise_policy_default() -> waitwise_policy_t {
    waitwise_policy_t::of(WAITWISE_POLICY_DEFAULT)
}

/// Two-phase: poll for `alpha * B`, then block. `alpha` must be finite and
/// `>= 0` (checked when the policy is used).
#[no_mangle]
pub extern "C" fn waitwise_policy_two_phase(alpha: c_double) -> waitwise_policy_t {
    waitwise_policy_t {
        kind: WAITWISE_POLICY_TWO_PHASE,
        alpha,
    }
}

/// Always poll, never block.
#[no_mangle]
pub extern "C" fn waitwise_policy_spin() -> waitwise_policy_t {
    waitwise_policy_t::of(WAITWISE_POLICY_SPIN)
}

/// Always block at once.
#[no_mangle]
pub extern "C" fn waitwise_policy_block() -> waitwise_policy_t {
    waitwise_policy_t::of(WAITWISE_POLICY_BLOCK)
}

/// Randomized two-phase.
#[no_mangle]
pub extern "C" fn waitwise_policy_randomized() -> waitwise_policy_t {
    waitwise_policy_t::of(WAITWISE_POLICY_RANDOMIZED)
}

/// Adaptive two-phase (`adapt/b`).
#[no_mangle]
pub extern "C" fn waitwise_policy_adaptive() -> waitwise_policy_t {
    waitwise_policy_t::of(WAITWISE_POLICY_ADAPTIVE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use waitwise_core::SyncKind;

    #[test]
    fn layout_matches_the_header() {
        assert_eq!(std::mem::size_of::<waitwise_policy_t>(), 16);
        assert_eq!(std::mem::offset_of!(waitwise_policy_t, alpha), 8);
    }

    #[test]
    fn kinds_map_to_core_policies() {
        let name = |p: waitwise_policy_t| {
            p.options()
                .unwrap()
                .resolve_policy(SyncKind::Unknown)
                .name()
        };
        assert_eq!(name(waitwise_policy_two_phase(0.5)), "s/b/0.5");
        assert_eq!(name(waitwise_policy_spin()), "s//inf");
        assert_eq!(name(waitwise_policy_block()), "/b/0");
        assert_eq!(name(waitwise_policy_randomized()), "rand/b");
        assert_eq!(name(waitwise_policy_adaptive()), "adapt/b");
        assert_eq!(
            waitwise_policy_default().options().unwrap(),
            WaitOptions::new()
        );
    }

    #[test]
    fn nonsense_is_rejected() {
        for bad in [
            waitwise_policy_two_phase(-1.0),
            waitwise_policy_two_phase(f64::NAN),
            waitwise_policy_two_phase(f64::INFINITY),
            waitwise_policy_t {
                kind: 99,
                alpha: 0.0,
            },
        ] {
            assert_eq!(bad.options(), Err(Error::Invalid), "{bad:?}");
        }
    }
}
