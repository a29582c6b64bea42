//! # waitwise-platform
//!
//! The bottom layer of waitwise and the only code that touches `libc` or inline
//! assembly. Everything above it (mechanisms, policies, primitives, tools) calls
//! the neutral names exported here.
//!
//! | module | what it gives |
//! |---|---|
//! | [`cpuid`] | raw CPUID access behind a trait, so decoding is testable on recorded registers |
//! | [`cpu_string`] | CPUID's text (vendor, brand string) kept inline, so that detection never allocates |
//! | [`features`] | decoded CPU features (vendor, WAITPKG, MONITORX, invariant TSC, TSC frequency), detected once |
//! | [`disable`] | `WAITWISE_DISABLE=umwait,tpause,mwaitx`: force the fallbacks |
//! | [`topology`] | CPUs, cores, packages, NUMA nodes and SMT siblings parsed from sysfs |
//! | [`affinity`] | pinning the calling thread to a CPU |
//! | [`cgroup_quota`] | the CPU limit of the process's cgroup quota, read without allocating |
//! | [`clock`] | the cycle clock (TSC with fences, or `Instant`), its overhead and ns conversion |
//! | [`futex`] | one futex API: wait with optional timeout, wake one, wake all |
//! | [`arch`] | tiny `#[inline]` wrappers over PAUSE, UMONITOR/UMWAIT/TPAUSE, MONITORX/MWAITX, RDTSC(P) |
//! | [`thread`] | yielding and the calling thread's CPU time |
//! | [`pause_time`] | pausing for a time (never a PAUSE count), and the PAUSE cost measured per CPU |
//! | [`once`] | a lazily computed value that a `fork()` at any moment cannot leave half done |
//! | [`machine`] | which machine this is (CPU model, kernel, hypervisor), for keying measurements |
//! | [`mod@file`] | reading a small regular file without blocking on a FIFO or device at its path; whether a directory exists, asked without allocating |
//! | [`c_env`] | the environment read through the C library, without allocating |
//! | [`wake_latency`] | the wake-up latency of futex sleeps, learned from the program's own wake-ups (`B`) |
//! | [`runnable`] | how many threads want a CPU right now, machine-wide (`/proc/loadavg`), against the CPUs online |
//! | [`cancel`] | POSIX thread cancellation at the waits that are cancellation points |
//! | [`shim`] | atomics and spin hints routed through one place so `loom` can replace them |
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod affinity;
pub mod arch;
pub mod c_env;
pub mod cancel;
pub mod cgroup_quota;
pub mod clock;
pub mod cpu_string;
pub mod cpu_time;
pub mod cpuid;
pub mod disable;
pub mod features;
pub mod file;
pub mod futex;
pub mod machine;
pub mod once;
pub mod pause_time;
pub mod runnable;
pub mod shim;
pub mod thread;
pub mod topology;
#[cfg(not(loom))]
pub mod wake_latency;
