//! `mwaitx`: MONITORX the word's line, re-check the word, then MWAITX with its
//! timer (a *relative* TSC count) until a store to the line, an interrupt or
//! the timer. Spurious exits are re-checked and re-armed. Needs MONITORX
//! (CPUID 0x8000_0001 ECX bit 29, AMD).

use super::{hw_deadline, MechanismWait};
use waitwise_platform::arch;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// Waits until `word != current` or `deadline` passes.
///
/// Only called through [`super::Mechanism::wait_for_change`], which runs it
/// only when MONITORX is usable and the TSC invariant.
#[inline]
pub fn wait(word: &AtomicU32, current: u32, deadline: Deadline) -> MechanismWait {
    debug_assert!(super::hw_wait_status(waitwise_platform::disable::HwWait::Mwaitx).is_ok());
    loop {
        let addr = word as *const AtomicU32 as *const u8;
        // SAFETY: dispatch runs this only when CPUID advertises MONITORX and
        // WAITWISE_DISABLE allows it; `addr` is a live reference's address.
        unsafe { arch::monitorx(addr) };
        // Re-check after arming: a store between the last check and
        // MONITORX would otherwise be missed. Acquire: a waiter that sees
        // the new value sees the writer's prior writes.
        let v = word.load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        let limit = match hw_deadline::in_tsc(deadline) {
            Ok(limit) => limit,
            Err(timed_out) => return timed_out,
        };
        let Some(timer) = hw_deadline::mwaitx_timer(arch::read_tsc(), limit) else {
            return MechanismWait::TimedOut;
        };
        // SAFETY: as above.
        unsafe { arch::mwaitx(timer) };
    }
}
