//! All inline assembly, one module per architecture; everything else calls the
//! neutral names re-exported here (the Concurrency Kit `ck_pr.h` pattern).
//!
//! The hardware-wait instructions (`umonitor`, `umwait`, `tpause`, `monitorx`,
//! `mwaitx`) are `unsafe fn`s: executing one the CPU did not advertise raises
//! `#UD` (SIGILL). Callers check [`crate::disable::hw_wait_usable`] first; the
//! mechanisms layer is the only caller.

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub use x86_64::*;

#[cfg(not(target_arch = "x86_64"))]
mod fallback;
#[cfg(not(target_arch = "x86_64"))]
pub use fallback::*;

/// Whether this build has the hardware-wait instructions at all (x86-64).
/// Whether the running CPU has them is a separate, runtime question.
pub const HAS_HW_WAIT_INSTRUCTIONS: bool = cfg!(target_arch = "x86_64");

/// UMWAIT/TPAUSE control value: the C0.2 state (deeper, slower to wake; the
/// OS may forbid it through `IA32_UMWAIT_CONTROL`, then C0.1 is used).
pub const WAITPKG_C02: u32 = 0;
/// UMWAIT/TPAUSE control value: the C0.1 state (lighter, faster to wake).
pub const WAITPKG_C01: u32 = 1;
