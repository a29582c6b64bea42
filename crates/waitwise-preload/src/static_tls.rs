//! This library's thread-local variables in the static TLS block, also when
//! the shim loads it with `dlopen`.
//!
//! # Why
//!
//! glibc gives a library loaded with `dlopen` dynamic TLS: each thread's
//! block is allocated with `malloc` by `__tls_get_addr` at the thread's first
//! access. This library's first access on a thread comes inside a contended
//! wait (the backoff's jitter, the yield timing, the profile's guard), and
//! the wait may be for a lock of the allocator itself: jemalloc's are
//! `pthread_mutex_t`s. The allocation then re-enters the allocator, which
//! waits again, and so on while the contention lasts. Varnish's cache
//! process (jemalloc, 16 threads starting at once) died at launch in 3 of 8
//! starts that way.
//!
//! A library preloaded at start-up gets its block in the static TLS area,
//! set up with each thread, and every access is allocation-free. glibc does
//! the same for a library loaded later that has an initial-exec TLS
//! relocation: it places that library's whole block in the static area's
//! reserve (the surplus; this block is under 200 bytes), initializes it for
//! every existing thread and sets it up with every new one, and
//! `__tls_get_addr` then finds it there. [`anchor`] is such a relocation:
//! an initial-exec access to a word of this library's own TLS. If the
//! reserve were exhausted, `dlopen` would fail and the shim would say so
//! and leave the process on the C library's functions.

use std::arch::global_asm;

// A word of this library's TLS and an initial-exec access to it: the GOT
// entry holds the word's offset from the thread pointer, filled by the
// loader with an `R_X86_64_TPOFF64` relocation, which needs static TLS.
global_asm!(
    ".pushsection .tbss.waitwise_static_tls_word,\"awT\",@nobits",
    ".p2align 3",
    "waitwise_static_tls_word:",
    ".zero 8",
    ".popsection",
    ".pushsection .text.waitwise_static_tls_anchor,\"ax\",@progbits",
    ".p2align 4",
    ".globl waitwise_static_tls_anchor",
    ".hidden waitwise_static_tls_anchor",
    ".type waitwise_static_tls_anchor,@function",
    "waitwise_static_tls_anchor:",
    "movq waitwise_static_tls_word@gottpoff(%rip), %rax",
    "ret",
    ".size waitwise_static_tls_anchor, .-waitwise_static_tls_anchor",
    ".popsection",
    options(att_syntax)
);

extern "C" {
    fn waitwise_static_tls_anchor() -> isize;
}

/// The anchor's offset from the thread pointer. Called once at load, which
/// keeps the anchor (and its relocation) from being discarded by the
/// linker.
pub fn anchor() -> isize {
    // SAFETY: the assembly above reads one GOT entry and returns it; it
    // touches no memory of the caller's and follows the C calling
    // convention (result in rax, nothing else clobbered).
    unsafe { waitwise_static_tls_anchor() }
}
