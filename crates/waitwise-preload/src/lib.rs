//! # waitwise-preload
//!
//! `libwaitwise_preload.so`: run an unmodified pthread program on waitwise.
//!
//! ```text
//! LD_PRELOAD=target/release/libwaitwise_preload.so program args...
//! ```
//!
//! The object defines `pthread_mutex_*`, `pthread_cond_*`,
//! `pthread_barrier_*`, `pthread_spin_*` and `sem_*`; preloaded, its
//! definitions come first in the dynamic linker's search order and the
//! program's references (versioned or not) bind to them. Every object keeps
//! its state inside the caller's pthread object (no table on the hot path),
//! waits with the configured waitwise policy ([`config`]), and a waker
//! makes the `futex_wake` system call only when a waiter sleeps.
//!
//! What waitwise does not implement is forwarded to the C library's own
//! implementation ([`real`]), decided at `*_init` time from the attributes
//! and remembered in the object itself: process-shared mutexes, condition
//! variables, barriers and semaphores, robust mutexes, and
//! priority-inheritance / priority-protect mutexes.
//!
//! | module | object |
//! |---|---|
//! | [`mutex`] | `pthread_mutex_t`: three-state futex lock, normal / recursive / error-checking |
//! | [`cond`] | `pthread_cond_t`: a sequence word, no internal mutex |
//! | [`barrier`] | `pthread_barrier_t`: central counter + generation word |
//! | [`sem`] | `sem_t`: counter word |
//! | [`spin`] | `pthread_spinlock_t`: test-and-test-and-set |
//! | [`config`] | `WAITWISE_POLICY`, `WAITWISE_ALPHA`, `WAITWISE_BLOCK_NS`, read once at load |
//! | [`profile`] | `WAITWISE_PROFILE=PATH`: per-object wait histograms written at exit |
//! | [`real`] | the C library's own functions, for forwarded objects |
//! | [`poll`] | the polling phase of every wait |
//! | [`time`] | absolute `timespec` deadlines |
//!
//! Nothing unwinds across the C ABI: every entry point runs under
//! `ffi_guard`, which turns a panic into an error code.
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(clippy::missing_safety_doc)] // the C functions' contracts are POSIX's

pub mod barrier;
pub mod cond;
pub mod config;
pub mod mutex;
pub mod poll;
pub mod profile;
pub mod real;
pub mod sem;
pub mod spin;
pub mod time;

use std::ffi::c_int;

/// Runs an entry point's body; a panic (a bug in waitwise) becomes `err`
/// instead of unwinding into C. Free when nothing panics.
#[inline(always)]
pub(crate) fn ffi_guard(err: c_int, body: impl FnOnce() -> c_int) -> c_int {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(err)
}

/// Load-time initialization: read the environment once, before `main` and
/// before any of the program's constructors (a preloaded object is
/// initialized right after the C library). Reading it here, not on first
/// use, keeps `getenv` and allocation off every lock path.
extern "C" fn on_load() {
    config::load();
    profile::load();
    mutex::register_fork_handler();
}

/// At exit (`exit` or return from `main`; not `_exit`): write the profile.
extern "C" fn on_unload() {
    profile::write_at_exit();
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;

#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;
