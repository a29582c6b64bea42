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

// An atomic add followed by a one-byte store that a signal may interrupt
// between the two at one instruction only, so that a cleanup routine can
// tell (see `add_then_mark`).
//
// `waitwise_add_then_mark(word: rdi, delta: esi, step: rdx, mark: cl)`:
// `LOCK XADD` (baseline x86-64), then `MOV byte [step], cl`, returning the
// word's previous value in `eax`. The label `waitwise_add_then_mark_added`
// is the address of the store: a thread interrupted with that
// instruction pointer has added but not marked. A leaf without stack
// frame: its CFI is the default one (return address at the CFA - 8), so
// an unwind passes through it.
core::arch::global_asm!(
    ".pushsection .text.waitwise_add_then_mark,\"ax\",@progbits",
    ".p2align 4",
    ".hidden waitwise_add_then_mark",
    ".hidden waitwise_add_then_mark_added",
    ".globl waitwise_add_then_mark",
    ".globl waitwise_add_then_mark_added",
    ".type waitwise_add_then_mark,@function",
    "waitwise_add_then_mark:",
    ".cfi_startproc",
    "lock xadd dword ptr [rdi], esi",
    "waitwise_add_then_mark_added:",
    "mov byte ptr [rdx], cl",
    "mov eax, esi",
    "ret",
    ".cfi_endproc",
    ".size waitwise_add_then_mark, . - waitwise_add_then_mark",
    ".popsection",
);

extern "sysv64" {
    fn waitwise_add_then_mark(
        word: *const core::sync::atomic::AtomicU32,
        delta: u32,
        step: *const core::sync::atomic::AtomicU8,
        mark: u8,
    ) -> u32;
    static waitwise_add_then_mark_added: u8;
}

/// `word += delta` (wrapping, sequentially consistent: a locked RMW), then
/// `step = mark` (a plain store, for this thread's cleanup routine); returns
/// the word's previous value. A signal handler that interrupts the call
/// finds it either before the add, or between the add and the store with
/// the instruction pointer [`add_then_mark_gap`] exactly (then the mark
/// stands in the registers [`ADD_THEN_MARK_STEP_REGISTER`] and
/// [`ADD_THEN_MARK_MARK_REGISTER`]), or after the store.
#[inline(always)]
pub fn add_then_mark(
    word: &core::sync::atomic::AtomicU32,
    delta: u32,
    step: &core::sync::atomic::AtomicU8,
    mark: u8,
) -> u32 {
    // SAFETY: both pointers come from live references; the function only
    // does the locked add on `word` and the byte store to `step` (an
    // atomic's memory, stored to as a plain byte, which an `AtomicU8` permits
    // since x86-64 byte stores are atomic).
    unsafe { waitwise_add_then_mark(word, delta, step, mark) }
}

/// The instruction pointer of a thread interrupted in [`add_then_mark`]
/// after its add and before its mark.
#[inline]
pub fn add_then_mark_gap() -> usize {
    // Only the label's address is taken, never its contents.
    core::ptr::addr_of!(waitwise_add_then_mark_added) as usize
}

/// DWARF number of the register that holds [`add_then_mark`]'s `step`
/// pointer at [`add_then_mark_gap`] (RDX).
pub const ADD_THEN_MARK_STEP_REGISTER: i32 = 1;
/// DWARF number of the register whose low byte holds [`add_then_mark`]'s
/// `mark` at [`add_then_mark_gap`] (RCX).
pub const ADD_THEN_MARK_MARK_REGISTER: i32 = 2;
