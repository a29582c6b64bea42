//! `tpause`: poll, then TPAUSE for a short slice, repeat. TPAUSE cannot notice
//! a store before its timeout, so it is only a timed pause between polls,
//! never the wake-up mechanism: the slice bounds the extra wake-up latency.
//! Needs WAITPKG (CPUID 7.0 ECX bit 5).

use super::{hw_deadline, MechanismWait, WaitpkgState};
use waitwise_platform::arch;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{AtomicU32, Ordering};

/// Length of one TPAUSE slice. Guessed: 1 µs keeps the added wake-up latency
/// near a futex wake's cost while cutting the poll rate ~100x against PAUSE.
pub const TPAUSE_SLICE_NS: u64 = 1_000;

/// Waits until `word != current` or `deadline` passes.
///
/// Only called through [`super::Mechanism::wait_for_change`], which runs it
/// only when WAITPKG is usable and the TSC invariant.
#[inline]
pub fn wait(word: &AtomicU32, current: u32, deadline: Deadline) -> MechanismWait {
    debug_assert!(super::hw_wait_status(waitwise_platform::disable::HwWait::Tpause).is_ok());
    let slice = hw_deadline::ns_in_tsc_ticks(TPAUSE_SLICE_NS, cycle_clock().tsc_hz());
    loop {
        // Acquire: a waiter that sees the new value sees the writer's prior writes.
        let v = word.load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        let limit = match hw_deadline::in_tsc(deadline) {
            Ok(limit) => limit,
            Err(timed_out) => return timed_out,
        };
        let Some(end) = hw_deadline::slice_deadline(arch::read_tsc(), slice, limit) else {
            return MechanismWait::TimedOut;
        };
        // SAFETY: dispatch runs this only when CPUID advertises WAITPKG and
        // WAITWISE_DISABLE allows it. CF (OS limit) needs no handling.
        unsafe { arch::tpause(WaitpkgState::C01.control(), end) };
    }
}
