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
//! - [`two_phase_wait`]: the hook through which an algorithm over a
//!   borrowed futex word (the TTAS lock, the semaphore) polls, then sleeps,
//!   as its front end says;
//! - the primitives built on it (table below), each waiting with the
//!   policy of its kind unless [`WaitOptions`] say otherwise;
//! - [`helper`] and [`pool`]: helper threads that run ahead of a worker,
//!   and a small thread pool, waiting with the primitives;
//! - [`helper`]: a worker and helper threads that precompute ahead of it,
//!   throttled through a policy (seed 000's speculative precomputation);
//! - [`probe`]: what this machine offers for waiting and what waiting costs
//!   here, as data (`waitwise probe` and the C ABI print it);
//! - [`env`](mod@env): the `WAITWISE_*` variables, read once per process
//!   by the one parser the `waitwise` tool and the interposer use too.
//!
//! # Primitives
//!
//! | primitive | what it is | like |
//! |---|---|---|
//! | [`Event`] | auto-reset event: `notify` releases one `wait`, and is kept if nobody waits | a binary semaphore |
//! | [`Mutex`] ([`mutex`]) | the default mutex: test-and-test-and-set, unfair, two-phase waits | `std::sync::Mutex`, `parking_lot::Mutex` |
//! | [`mutex::TicketMutex`], [`mutex::McsMutex`] | FIFO mutexes (ticket lock, MCS queue lock) | |
//! | [`RwLock`] | writer-preferring reader-writer lock | `std::sync::RwLock` |
//! | [`Condvar`] ([`condvar`]) | condition variable for the `lock_api` mutexes' guards | `std::sync::Condvar` |
//! | [`Semaphore`] ([`semaphore`]) | counting semaphore | POSIX `sem_t` |
//! | [`Barrier`] ([`barrier`]) | central counting barrier for `n` threads | `std::sync::Barrier` |
//! | [`barrier::PairBarrier`], [`barrier::TreeBarrier`], [`barrier::DisseminationBarrier`], [`barrier::TopologyBarrier`] | barriers for two threads, combining trees, dissemination, and trees that follow the CPU topology | |
//! | [`channel::bounded`] ([`channel`]) | bounded MPMC channel | `crossbeam_channel::bounded` |
//!
//! The mutexes are [`lock_api`] types (re-exported as [`lock_api`]), so
//! their guards, mapped guards and timed locks work as parking_lot's. The
//! constructors of [`Event`], [`Condvar`], [`Semaphore`], [`Barrier`] and
//! the mutexes are `const`: each can be a `static`.
//!
//! ```
//! use waitwise::{Barrier, Condvar, Event, Mutex, Semaphore};
//!
//! static COUNT: Mutex<u64> = Mutex::new(0);
//! static CHANGED: Condvar = Condvar::new();
//! static SLOTS: Semaphore = Semaphore::new(1);
//! static START: Barrier = Barrier::new(2);
//! static DONE: Event = Event::new();
//!
//! let worker = std::thread::spawn(|| {
//!     START.wait();
//!     SLOTS.acquire();
//!     *COUNT.lock() += 1;
//!     CHANGED.notify_all();
//!     SLOTS.release(1);
//!     DONE.notify();
//! });
//! START.wait();
//! let mut count = COUNT.lock();
//! CHANGED.wait_while(&mut count, |c| *c == 0);
//! assert_eq!(*count, 1);
//! drop(count);
//! DONE.wait();
//! worker.join().unwrap();
//! ```
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
mod cpu_note;
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
pub mod two_phase_wait;
pub mod wait_word;
mod woken_party;

pub use barrier::Barrier;
pub use condvar::Condvar;
pub use event::Event;
pub use lock_api;
pub use mechanism::Mechanism;
pub use mutex::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use options::WaitOptions;
pub use policy::{Policy, SyncKind};
pub use semaphore::Semaphore;
pub use wait_word::{SleepRules, WaitOutcome, WaitWord, WaitWordRef};
pub use waitwise_platform as platform;
pub use waitwise_platform::clock::Deadline;
