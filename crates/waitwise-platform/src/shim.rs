//! One place through which atomics, spin hints and thread yields are routed, so
//! that a `--cfg loom` build swaps them for loom's model-checked versions
//! (the crossbeam `primitive` module / tokio `loom` module pattern).
//!
//! Code above the platform layer imports `AtomicU32` & co. from here, never
//! from `std::sync::atomic` directly.

#[cfg(not(loom))]
pub use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Hint to the CPU that the caller is busy-waiting (PAUSE on x86). Under loom,
/// a yield so the model checker explores other threads.
#[inline(always)]
pub fn spin_hint() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Give up the CPU to another runnable thread (`sched_yield`); under loom, a
/// model-checked yield.
#[inline]
pub fn yield_now() {
    #[cfg(not(loom))]
    crate::thread::sched_yield();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// `Arc` that loom can track.
#[cfg(not(loom))]
pub use std::sync::Arc;

/// `Arc` that loom can track.
#[cfg(loom)]
pub use loom::sync::Arc;
