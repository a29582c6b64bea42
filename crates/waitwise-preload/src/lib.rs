//! # waitwise-preload
//!
//! `libwaitwise_interposer.so`: run an unmodified pthread program on
//! waitwise.
//!
//! ```text
//! LD_PRELOAD=target/release/libwaitwise_preload.so program args...
//! ```
//!
//! The object a program preloads, `libwaitwise_preload.so`, is a small C
//! shim (`shim/preload.c`, built by `build.rs`): it defines the functions
//! as jumps, and loads this library and binds them to it ([`entry_points`])
//! only in a process that imports any of them at start-up or asks for
//! `WAITWISE_STATS` or `WAITWISE_PROFILE`; any other process runs on the C
//! library's functions and loads nothing more.
//!
//! This library defines `pthread_mutex_*`, `pthread_cond_*`,
//! `pthread_barrier_*`, `pthread_rwlock_*`, `pthread_spin_*`, `sem_*` and
//! C11's `mtx_*` and `cnd_*`; preloaded itself, its
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
//! | [`mutex_layout`] | glibc's `pthread_mutex_t` words and kinds |
//! | [`cond`] | `pthread_cond_t`: a sequence word, no internal mutex |
//! | [`barrier`] | `pthread_barrier_t`: waitwise's central barrier (arrival counter + completed-episodes word) |
//! | [`sem`] | `sem_t`: counter word with a may-sleep bit |
//! | [`rwlock`] | `pthread_rwlock_t`: waitwise's one-word reader-writer lock ([`waitwise::mutex::RwWordRef`]), reader-preferring or writer-preferring |
//! | [`spin`] | `pthread_spinlock_t`: test-and-test-and-set ([`waitwise::mutex::SpinLockRef`]) |
//! | [`c11`] | C11's `mtx_t` and `cnd_t`: the pthread mutex and condition variable above |
//! | [`entry_points`] | the functions by name, for the shim that loads this library |
//! | [`config`] | `WAITWISE_POLICY`, `WAITWISE_ALPHA`, read once at load by [`waitwise::env`] |
//! | [`profile`] | `WAITWISE_PROFILE=PATH` (or `1`): per-object wait histograms and call sites written at exit |
//! | [`stats`] | `WAITWISE_STATS=1`: one line of totals at exit |
//! | [`modules`] | the loaded modules, to name a call site's frames by file and offset |
//! | [`first_wait`] | what a contended wait needs: set up at load, except the CPU's features (by the first wait) |
//! | [`late_bound`] | libgcc_s's and libm's functions, bound on first call (no load-time dependency) |
//! | [`real`] | the C library's own functions, for forwarded objects |
//! | [`time`] | absolute `timespec` deadlines |
//! | [`cleanup`] | undoing a waiter's registrations when glibc unwinds it |
//! | [`static_tls`] | this library's thread-locals in the static TLS block, also when loaded with `dlopen` |
//! | [`race_detectors`] | the warning at load when ThreadSanitizer, Helgrind or DRD cannot see the interposer's lock operations |
//!
//! # Unwinding
//!
//! Every entry point that can block is `extern "C-unwind"`: glibc's forced
//! unwinds (`pthread_exit` from a signal handler, cancellation) must pass
//! through a blocked waiter's frames to the thread's cleanup handlers. On
//! the way, cleanup routines registered with glibc ([`cleanup`]) undo what
//! the waiter had registered (waiter and sleeper counts, a barrier
//! arrival) and pass on a wake-up it may have consumed, so the object keeps
//! working after the thread is gone.
//!
//! Nothing here catches an unwind (a `catch_unwind` swallows the forced
//! unwind, which glibc answers with "FATAL: exception not rethrown"), and
//! the waiting paths hold no value with a destructor: Rust's personality
//! routine aborts an unwind that starts at an instruction between the call
//! sites of a function with landing pads, which a signal handler's
//! `pthread_exit` can do at any instruction. A Rust panic (a bug in
//! waitwise) never unwinds into C: the panic hook installed at load time
//! prints it and aborts the process.
#![deny(unsafe_op_in_unsafe_fn)]
// The C functions' contracts are POSIX's.
#![allow(clippy::missing_safety_doc)]
// The Rust items are internals (the product is the C symbols): their docs are
// read with `cargo doc --document-private-items`, so they link private items.
#![allow(rustdoc::private_intra_doc_links)]

pub mod barrier;
pub mod c11;
pub mod cleanup;
pub mod cond;
pub mod config;
pub mod entry_points;
pub mod first_wait;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub mod late_bound;
pub mod modules;
pub mod mutex;
pub mod mutex_layout;
pub mod profile;
pub mod race_detectors;
pub mod real;
pub mod rwlock;
pub mod sem;
pub mod spin;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub mod static_tls;
pub mod stats;
pub mod thread_id;
pub mod time;

/// Every panic in this object aborts the process: an unwind must not
/// reach the C program's frames, and a half-updated object must not be
/// used again. The hook is this object's own (it links its own copy of
/// Rust's standard library), so a Rust program that runs under the
/// interposer keeps its hook.
fn abort_on_every_panic() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("waitwise: internal error in the interposer: {info}; aborting");
        std::process::abort();
    }));
}

/// Load-time initialization: read the environment once, before `main` (the
/// shim loads this library from its constructor, or from the first call of
/// a library constructor that the loader runs before the shim's). Reading
/// it here, not on first
/// use, keeps `getenv` and allocation off every lock path; so does setting
/// up here what a contended wait needs ([`first_wait::at_load`]).
extern "C" fn on_load() {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    std::hint::black_box(static_tls::anchor());
    abort_on_every_panic();
    // The process's CPU mask, read now by the only thread (one system
    // call, no file): a first wait on another thread inside a sandbox
    // may not ask for the main thread's (module `first_wait`).
    waitwise_platform::affinity::remember_process_cpus();
    config::load();
    // What a contended wait needs and may not set up inside a wait (it
    // allocates): module `first_wait`.
    first_wait::at_load();
    // Before the profile: WAITWISE_STATS alone has it record the waits.
    stats::load();
    profile::load(stats::on());
    thread_id::check_layout();
    race_detectors::warn_if_hidden();
    // sem_post is async-signal-safe (POSIX): a signal handler may post a
    // forwarded semaphore (process-shared, or a named one from sem_open)
    // before anything else did, and must not reach `dlsym`, which is not
    // (it takes the loader's lock and may allocate).
    let _ = real::SEM_POST.get();
}

/// At exit (`exit` or return from `main`; not `_exit`): write the profile.
extern "C" fn on_unload() {
    profile::write_at_exit();
    stats::print_at_exit();
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;

#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;
