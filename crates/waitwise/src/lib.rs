//! # waitwise
//!
//! Thread waiting done well. Every synchronization ends in a wait, and how a
//! thread waits decides latency, CPU burn and interference with its
//! neighbours. waitwise separates the questions and answers each with
//! measurements taken on the machine at hand:
//!
//! - [`mechanism`]: *how* to wait for a word to change (spin, PAUSE,
//!   backoff, yield, futex block, UMWAIT/TPAUSE/MWAITX where CPUID says so);
//! - [`policy`]: *when* to stop polling and block (`s//inf`, `/b/0`,
//!   two-phase `s/b/alpha` with `L_poll = alpha * B` and `B` measured here,
//!   randomized);
//! - [`WaitWord`]: the engine that runs a policy on a futex word, and lets
//!   wakers skip the system call when nobody sleeps;
//! - primitives built on it: [`Event`];
//! - [`helper`]: a worker and helper threads that precompute ahead of it,
//!   throttled through a policy (seed 000's speculative precomputation);
//! - [`probe`]: what this machine offers for waiting and what waiting costs
//!   here, as data (`waitwise probe` and the C ABI print it);
//! - [`env`](mod@env): the `WAITWISE_*` variables, read once per process
//!   by the one parser the `waitwise` tool and the interposer use too.
//!
//! The `serde` feature (off by default) makes the data types serializable:
//! profiles, the probe, block costs, mechanisms and kinds.
//!
//! The platform layer (`waitwise_platform`, re-exported as [`platform`]) is
//! the only code that touches libc or inline assembly.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod barrier;
pub mod channel;
pub mod condvar;
pub mod env;
pub mod event;
pub mod helper;
mod loom_const;
pub mod mechanism;
pub mod mutex;
pub mod options;
pub mod policy;
pub mod pool;
// The probe measures the real machine; loom models have nothing to measure.
#[cfg(not(loom))]
pub mod probe;
pub mod profile;
pub mod semaphore;
pub mod wait_word;

pub use event::Event;
pub use mechanism::Mechanism;
pub use mutex::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use options::WaitOptions;
pub use policy::{Policy, SyncKind};
pub use wait_word::{SleepRules, WaitOutcome, WaitWord, WaitWordRef};
pub use waitwise_platform as platform;
pub use waitwise_platform::clock::Deadline;
