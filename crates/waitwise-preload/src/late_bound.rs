//! The functions this object takes from libgcc_s (the unwinder) and libm
//! (`log1p`), bound on their first call instead of at load, so that the
//! object needs no library a program that never waits does not need
//! itself: loading the two costs every process started under the
//! interposer about a tenth of a millisecond.
//!
//! Each function is defined here as a hidden symbol (the program and the
//! other libraries still bind to libgcc_s's and libm's own; only this
//! object's references reach these), so the static linker finds them in
//! this object and, linking with `--as-needed`, records no dependency on
//! either library. The definition is a trampoline: it jumps to the
//! address in its slot; an empty slot is filled first by [`resolve`],
//! which opens the library (`dlopen`; already loaded in any process that
//! unwinds, since glibc's `pthread_exit` and cancellation load libgcc_s
//! before they unwind) and looks the function up. The jump is a tail jump
//! and the slow path restores every argument register and the stack
//! before it, so the real function sees the caller's frame, as the
//! unwinder's `_Unwind_Resume` and `_Unwind_Backtrace` require.
//!
//! Who calls them: Rust's personality routine and landing pads when a
//! forced unwind (`pthread_exit`, cancellation) passes through a waiter's
//! frames, the standard library's backtraces, and the randomized policy's
//! draw (`log1p`).
//!
//! x86-64 only; elsewhere the object links the two libraries as usual.

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One late-bound function: its name, the library that defines it.
struct LateBound {
    name: &'static CStr,
    library: &'static CStr,
}

const LIBGCC_S: &CStr = c"libgcc_s.so.1";
const LIBM: &CStr = c"libm.so.6";

/// The functions, in the order of the trampolines' indexes below.
const FUNCTIONS: [LateBound; 13] = [
    LateBound {
        name: c"_Unwind_Backtrace",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_GetDataRelBase",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_GetGR",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_GetIP",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_GetIPInfo",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_GetLanguageSpecificData",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_GetRegionStart",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_GetTextRelBase",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_RaiseException",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_Resume",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_SetGR",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"_Unwind_SetIP",
        library: LIBGCC_S,
    },
    LateBound {
        name: c"log1p",
        library: LIBM,
    },
];

/// The bound addresses, 0 until the first call. Read by the trampolines
/// with a plain `mov`, which on x86-64 is an acquire load: it pairs with
/// the Release store in [`resolve`], so a thread that sees an address
/// also sees the library `dlopen` finished relocating.
static WAITWISE_LATE_BOUND_SLOTS: [AtomicUsize; 13] = [const { AtomicUsize::new(0) }; 13];

/// Binds function `index` of [`FUNCTIONS`] and returns its address. Called
/// by a trampoline's slow path; two threads may both bind the same
/// function, and store the same address. A library or function that
/// cannot be found ends the process with a message: the caller (an
/// unwinder on its way through a waiter, a policy's draw) has no way to
/// go on without it.
extern "C" fn resolve(index: usize) -> usize {
    let Some(f) = FUNCTIONS.get(index) else {
        fail(c"waitwise: late-bound function index out of range\n");
    };
    // SAFETY: both names are NUL-terminated strings; dlopen of a library
    // that is already loaded only counts a reference.
    let handle = unsafe { libc::dlopen(f.library.as_ptr(), libc::RTLD_NOW) };
    if handle.is_null() {
        fail(c"waitwise: cannot load libgcc_s.so.1 or libm.so.6 for a late-bound function\n");
    }
    // SAFETY: `handle` is a live handle, the name NUL-terminated.
    let address: *mut c_void = unsafe { libc::dlsym(handle, f.name.as_ptr()) };
    if address.is_null() {
        fail(c"waitwise: a late-bound function is missing from its library\n");
    }
    // Release: pairs with the trampolines' acquire `mov` (doc of the slots).
    WAITWISE_LATE_BOUND_SLOTS[index].store(address as usize, Ordering::Release);
    address as usize
}

/// Writes `message` to stderr and aborts, without allocating or unwinding.
fn fail(message: &CStr) -> ! {
    let bytes = message.to_bytes();
    // SAFETY: writes `bytes.len()` bytes from a live buffer to fd 2.
    unsafe { libc::write(2, bytes.as_ptr().cast::<c_void>(), bytes.len()) };
    std::process::abort()
}

/// One trampoline: `$name` jumps to slot `$index`, binding it first when
/// empty. The slow path saves the integer argument registers and `xmm0`
/// (`log1p`'s argument), keeps the stack 16-byte aligned for the call
/// (entry `rsp` is 8 mod 16; 6 pushes and 24 bytes make it 0), and
/// restores all of them before the jump.
macro_rules! trampoline {
    ($name:literal, $index:literal) => {
        std::arch::global_asm!(
            concat!(".globl ", $name),
            concat!(".hidden ", $name),
            concat!(".type ", $name, ",@function"),
            concat!($name, ":"),
            concat!("mov rax, qword ptr [rip + {slots} + 8 * ", $index, "]"),
            "test rax, rax",
            "jz 2f",
            "jmp rax",
            "2:",
            "push rdi",
            "push rsi",
            "push rdx",
            "push rcx",
            "push r8",
            "push r9",
            "sub rsp, 24",
            "movsd qword ptr [rsp], xmm0",
            concat!("mov edi, ", $index),
            "call {resolve}",
            "movsd xmm0, qword ptr [rsp]",
            "add rsp, 24",
            "pop r9",
            "pop r8",
            "pop rcx",
            "pop rdx",
            "pop rsi",
            "pop rdi",
            "jmp rax",
            concat!(".size ", $name, ", . - ", $name),
            slots = sym WAITWISE_LATE_BOUND_SLOTS,
            resolve = sym resolve,
        );
    };
}

trampoline!("_Unwind_Backtrace", 0);
trampoline!("_Unwind_GetDataRelBase", 1);
trampoline!("_Unwind_GetGR", 2);
trampoline!("_Unwind_GetIP", 3);
trampoline!("_Unwind_GetIPInfo", 4);
trampoline!("_Unwind_GetLanguageSpecificData", 5);
trampoline!("_Unwind_GetRegionStart", 6);
trampoline!("_Unwind_GetTextRelBase", 7);
trampoline!("_Unwind_RaiseException", 8);
trampoline!("_Unwind_Resume", 9);
trampoline!("_Unwind_SetGR", 10);
trampoline!("_Unwind_SetIP", 11);
trampoline!("log1p", 12);
