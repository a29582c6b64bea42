//! # waitwise's C ABI
//!
//! `libwaitwise.so` and `libwaitwise.a`, declared by `include/waitwise.h`
//! (checked against this crate by `tests/header.rs`). One file per object,
//! each a thin layer over the core crate (`waitwise_core` here):
//!
//! | file | C type | core type |
//! |---|---|---|
//! | `event.rs` | `waitwise_event_t` | [`waitwise_core::Event`] |
//! | `barrier.rs` | `waitwise_barrier_t` | [`waitwise_core::barrier::Barrier`] |
//! | `mutex.rs` | `waitwise_mutex_t` | [`waitwise_core::mutex::RawTtasMutex`] plus an owner |
//! | `condvar.rs` | `waitwise_condvar_t` | [`waitwise_core::condvar::Condvar`] |
//! | `semaphore.rs` | `waitwise_semaphore_t` | [`waitwise_core::semaphore::Semaphore`] |
//! | `policy.rs` | `waitwise_policy_t` (a value) | [`waitwise_core::Policy`] |
//! | `probe.rs` | `char *` JSON | [`waitwise_core::probe::Probe`] |
//! | `version.rs` | `const char *`, `uint32_t` | the crate's version |
//!
//! The shared object's SONAME is `libwaitwise.so.0` (`build.rs`);
//! `install.sh` installs the library, the header and a pkg-config file
//! (`waitwise.pc.in`) under a prefix.
//!
//! `error.rs` holds the return codes and [`error::boundary`], which every
//! `extern "C"` body runs in so that no panic unwinds into C.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod barrier;
pub mod condvar;
pub mod error;
pub mod event;
pub mod mutex;
pub mod policy;
pub mod probe;
pub mod semaphore;
pub mod timeout;
pub mod version;
