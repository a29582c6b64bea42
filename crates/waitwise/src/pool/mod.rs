//! A small pool of worker threads for helper/worker jobs and short tasks:
//! [`ThreadPool::spawn`], [`ThreadPool::scope`], [`ThreadPool::join`],
//! [`ThreadPool::scope_fifo`], [`ThreadPool::broadcast`]; and rayon's
//! free functions ([`join`], [`scope`], [`spawn`], ...) on the calling
//! worker's pool or the [`global`] one.
//!
//! | file | what it holds |
//! |---|---|
//! | [`idle`] | how an idle worker waits and how a submitter claims it with one CAS and wakes it with one store |
//! | [`join_wait`] | how an owner waits for work of its own run elsewhere (a `join`'s other half, a scope's tasks): a word in the frame, an event count in the pool |
//! | [`placement`] | one worker per core first, SMT siblings last, extras unpinned |
//! | [`gate`] | seed 004's parking rule: the SMT threshold `2 / T2 - 1` and the measured utilization |
//! | `job` | a unit of work, two words of data and a function, passed in registers: a small closure stored inline, a boxed one, or a pointer into a `join`'s frame |
//! | `thread_pool` | the workers, their deques and the injector, submission, the worker loop |
//! | `scope`, `join`, `task` | the front ends: borrowing scopes and `install`, allocation-free `join`, task handles |
//! | `scope_fifo`, `broadcast` | a scope whose tasks start in spawn order; one run of a closure on every worker (through each worker's inbox) |
//! | `global` | the global pool, built on first use, and the free functions |
//!
//! Under `--cfg loom` only the idle and join-wait protocols (and the pure
//! placement and gate code) are built: the loom model `tests/loom_pool.rs` checks it.

#[cfg(not(loom))]
mod broadcast;
pub mod gate;
#[cfg(not(loom))]
mod global;
pub mod idle;
#[cfg(not(loom))]
mod job;
#[cfg(not(loom))]
mod join;
pub mod join_wait;
pub mod placement;
#[cfg(not(loom))]
mod scope;
#[cfg(not(loom))]
mod scope_fifo;
#[cfg(not(loom))]
mod task;
#[cfg(not(loom))]
mod thread_pool;

#[cfg(not(loom))]
pub use broadcast::BroadcastContext;
#[cfg(not(loom))]
pub use global::{
    broadcast, current_num_threads, current_thread_index, global, join, join_context, scope,
    scope_fifo, spawn, spawn_broadcast,
};
#[cfg(not(loom))]
pub use join::FnContext;
pub use placement::{Tier, WorkerPlace};
#[cfg(not(loom))]
pub use scope::Scope;
#[cfg(not(loom))]
pub use scope_fifo::ScopeFifo;
#[cfg(not(loom))]
pub use task::Task;
#[cfg(not(loom))]
pub use thread_pool::{PoolBuilder, ThreadPool};
