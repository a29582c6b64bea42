//! x86-64 instructions, each a tiny `#[inline]` function: one line on what it
//! does and which CPUID bit guards it.
//!
//! The hardware waits are written with raw encodings (`.byte`) so that the
//! assembler needs no target-feature flags; the comment beside each shows the
//! mnemonic.

use core::arch::asm;

/// PAUSE: spin-loop hint; de-pipelines the loop and frees SMT resources.
/// Baseline SSE2, always present on x86-64.
#[inline(always)]
pub fn pause() {
    // SAFETY: PAUSE has no architectural effect and is always available.
    unsafe { asm!("pause", options(nomem, nostack, preserves_flags)) };
}

/// LFENCE; RDTSC: a start stamp that earlier instructions cannot drift past.
/// RDTSC is baseline on x86-64 (CPUID 1 EDX bit 4).
#[inline(always)]
pub fn read_tsc_start() -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: LFENCE and RDTSC only read the time-stamp counter into EDX:EAX.
    unsafe {
        asm!("lfence", "rdtsc", out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags))
    };
    (u64::from(hi) << 32) | u64::from(lo)
}

/// RDTSCP; LFENCE: an end stamp taken after all earlier instructions retired,
/// that later instructions cannot move ahead of. RDTSCP is guarded by
/// CPUID 0x8000_0001 EDX bit 27, present on every x86-64 CPU since 2006 and
/// on this project's targets; the cycle clock only uses it when invariant TSC
/// is advertised (which implies it on all known CPUs).
#[inline(always)]
pub fn read_tsc_end() -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: RDTSCP reads the TSC into EDX:EAX and IA32_TSC_AUX into ECX
    // (clobbered); LFENCE only orders.
    unsafe {
        asm!("rdtscp", "lfence", out("eax") lo, out("edx") hi, out("ecx") _, options(nomem, nostack, preserves_flags))
    };
    (u64::from(hi) << 32) | u64::from(lo)
}

/// RDTSC without fences: cheapest read, for deadline checks in poll loops
/// where a few cycles of reordering do not matter.
#[inline(always)]
pub fn read_tsc() -> u64 {
    // SAFETY: RDTSC is baseline on x86-64 and only reads the counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// UMONITOR r64 (`F3 0F AE /6`): arm address monitoring of the line holding
/// `addr`. Guarded by WAITPKG (CPUID 7.0 ECX bit 5).
///
/// # Safety
/// The CPU must advertise WAITPKG (else `#UD`). `addr` may be any address the
/// process can read.
#[inline(always)]
pub unsafe fn umonitor(addr: *const u8) {
    // SAFETY: the caller guarantees WAITPKG; UMONITOR only arms a monitor.
    unsafe {
        // umonitor rax
        asm!(".byte 0xf3, 0x0f, 0xae, 0xf0", in("rax") addr, options(nostack, preserves_flags))
    };
}

/// UMWAIT r32 (`F2 0F AE /6`): sleep in C0.1/C0.2 (`control` bit 0: 1 = C0.1)
/// until a store to the monitored line, an interrupt, or the *absolute* TSC
/// `deadline` (EDX:EAX). Returns `true` when CF was set: the OS time limit
/// (`IA32_UMWAIT_CONTROL`) ended the wait early, and the caller re-arms.
/// Guarded by WAITPKG (CPUID 7.0 ECX bit 5).
///
/// # Safety
/// The CPU must advertise WAITPKG (else `#UD`).
#[inline(always)]
pub unsafe fn umwait(control: u32, deadline: u64) -> bool {
    let cf: u8;
    // SAFETY: the caller guarantees WAITPKG; UMWAIT reads ECX and EDX:EAX and
    // writes only RFLAGS.
    unsafe {
        // umwait ecx; setc cf
        asm!(
            ".byte 0xf2, 0x0f, 0xae, 0xf1",
            "setc {cf}",
            cf = out(reg_byte) cf,
            in("ecx") control,
            in("eax") deadline as u32,
            in("edx") (deadline >> 32) as u32,
            options(nostack),
        )
    };
    cf != 0
}

/// TPAUSE r32 (`66 0F AE /6`): pause in C0.1/C0.2 until the *absolute* TSC
/// `deadline` (EDX:EAX) or an interrupt; it does not notice stores, so it is
/// only a timed pause between polls. Returns `true` when CF was set (the OS
/// time limit ended it first). Guarded by WAITPKG (CPUID 7.0 ECX bit 5).
///
/// # Safety
/// The CPU must advertise WAITPKG (else `#UD`).
#[inline(always)]
pub unsafe fn tpause(control: u32, deadline: u64) -> bool {
    let cf: u8;
    // SAFETY: the caller guarantees WAITPKG; TPAUSE reads ECX and EDX:EAX and
    // writes only RFLAGS.
    unsafe {
        // tpause ecx; setc cf
        asm!(
            ".byte 0x66, 0x0f, 0xae, 0xf1",
            "setc {cf}",
            cf = out(reg_byte) cf,
            in("ecx") control,
            in("eax") deadline as u32,
            in("edx") (deadline >> 32) as u32,
            options(nomem, nostack),
        )
    };
    cf != 0
}

/// MONITORX (`0F 01 FA`): arm address monitoring of the line holding `addr`
/// (RAX), no extensions (ECX = 0) or hints (EDX = 0). Guarded by MONITORX
/// (CPUID 0x8000_0001 ECX bit 29).
///
/// # Safety
/// The CPU must advertise MONITORX (else `#UD`).
#[inline(always)]
pub unsafe fn monitorx(addr: *const u8) {
    // SAFETY: the caller guarantees MONITORX; it only arms a monitor.
    unsafe {
        // monitorx rax, ecx, edx
        asm!(
            ".byte 0x0f, 0x01, 0xfa",
            in("rax") addr,
            in("ecx") 0u32,
            in("edx") 0u32,
            options(nostack, preserves_flags),
        )
    };
}

/// MWAITX (`0F 01 FB`) with its timer: wait for a store to the monitored line,
/// an interrupt, or `timer_ticks` TSC ticks *relative* to now (EBX; ECX bit 1
/// enables the timer; EAX = 0xF0: no C-state beyond C0). Guarded by MONITORX
/// (CPUID 0x8000_0001 ECX bit 29).
///
/// EBX is reserved by LLVM and cannot be an asm operand, so the timer goes
/// through a scratch register swapped into RBX and back around the instruction.
///
/// # Safety
/// The CPU must advertise MONITORX (else `#UD`).
#[inline(always)]
pub unsafe fn mwaitx(timer_ticks: u32) {
    // SAFETY: the caller guarantees MONITORX; RBX is restored by the second
    // XCHG before the asm block ends, so the compiler never sees it change.
    unsafe {
        // xchg rbx, tmp; mwaitx eax, ecx, ebx; xchg rbx, tmp
        asm!(
            "xchg {tmp}, rbx",
            ".byte 0x0f, 0x01, 0xfb",
            "xchg {tmp}, rbx",
            tmp = inout(reg) u64::from(timer_ticks) => _,
            in("eax") 0xF0u32,
            in("ecx") 0b10u32,
            options(nostack, preserves_flags),
        )
    };
}
