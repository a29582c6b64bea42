//! `umwait`: UMONITOR the word's line, re-check the word, then UMWAIT until a
//! store to the line, an interrupt, the caller's TSC deadline, or the OS time
//! limit. UMWAIT can also end spuriously, so the loop re-arms and re-checks
//! every time (seed 000, section 2). Needs WAITPKG (CPUID 7.0 ECX bit 5).
//!
//! The monitored word must sit alone on its line (64 bytes; 128 where the CPU
//! prefetches adjacent lines), else stores to neighbours wake the waiter for
//! nothing and a store inside the same line but outside the "monitored
//! range" could be missed: [`crate::WaitWord`] is 128-byte aligned and padded.

use super::{hw_deadline, MechanismWait, WaitpkgState};
use waitwise_platform::arch;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// Waits until `word != current` or `deadline` passes.
///
/// Only called through [`super::Mechanism::wait_for_change`], which runs it
/// only when WAITPKG is usable and the TSC invariant.
#[inline]
pub fn wait(
    word: &AtomicU32,
    current: u32,
    deadline: Deadline,
    state: WaitpkgState,
) -> MechanismWait {
    debug_assert!(super::hw_wait_status(waitwise_platform::disable::HwWait::Umwait).is_ok());
    loop {
        let addr = word as *const AtomicU32 as *const u8;
        // SAFETY: dispatch runs this only when CPUID advertises WAITPKG and
        // WAITWISE_DISABLE allows it; `addr` is a live reference's address.
        unsafe { arch::umonitor(addr) };
        // Re-check after arming: a store between the last check and UMONITOR
        // would otherwise be missed. Acquire: a waiter that sees the new
        // value sees the writer's prior writes.
        let v = word.load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        let limit = match hw_deadline::in_tsc(deadline) {
            Ok(limit) => limit,
            Err(timed_out) => return timed_out,
        };
        let Some(tsc_deadline) = hw_deadline::waitpkg_deadline(arch::read_tsc(), limit) else {
            return MechanismWait::TimedOut;
        };
        // SAFETY: as above, WAITPKG is advertised and allowed. The return
        // value (CF: OS limit hit) needs no handling: the loop re-arms anyway.
        unsafe { arch::umwait(state.control(), tsc_deadline) };
    }
}
