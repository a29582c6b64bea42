//! Barriers: reusable, sense-reversing, no lock inside, every wait running
//! a [`Policy`](crate::Policy) on a [`WaitWord`](crate::WaitWord).
//!
//! | type | shape | thread ids | use it for |
//! |---|---|---|---|
//! | [`Barrier`] | one counter | none (like std) | the default; few threads |
//! | [`PairBarrier`] | one word, two parties | none | a worker and its helper thread (seed 000, section 4.3) |
//! | [`TreeBarrier`] | combining tree, fan-in `k` | [`TreeHandle`] | many threads |
//! | [`DisseminationBarrier`] | `log2 n` rounds of pairwise flags | [`DisseminationHandle`] | many threads, no shared counter |
//! | [`TopologyBarrier`] | tree along SMT siblings, cores, packages, NUMA nodes | [`TopologyHandle`] | pinned threads on a big machine |
//!
//! The central barrier's algorithm is [`CentralBarrierRef`], a view over
//! borrowed words: [`Barrier`] runs it on words of its own, the
//! `LD_PRELOAD` interposer inside glibc's `pthread_barrier_t`. For a
//! power-of-two number of parties [`Barrier`] counts on one futex word
//! instead, the last arrival's carry releasing the others (module
//! `carry`, the shape [`PairBarrier`] has for two).
//!
//! Every `wait` returns a [`BarrierWaitResult`] whose
//! [`is_leader`](BarrierWaitResult::is_leader) is true for exactly one
//! thread per episode.
//!
//! # Guarantees
//!
//! - No thread leaves episode `k` before all `n` threads have arrived in
//!   episode `k`, and no arrival at episode `k + 1` is counted in episode
//!   `k`: when a thread leaves episode `k`, every other thread is in episode
//!   `k` or `k + 1`.
//! - Everything a thread wrote before arriving is visible to every thread
//!   after it leaves (each type's memory-ordering paragraph says why).
//! - A barrier cannot be dropped while a thread waits in it: `wait` borrows
//!   the barrier (directly, or through a handle that borrows it), so the
//!   borrow checker rejects the drop. No `unsafe` is involved.
//! - No panics on odd sizes: `n == 0` acts as `n == 1` (like std);
//!   thread ids out of range or already held are a [`HandleError`].
//! - No timed wait: a thread that gave up would leave the others counting an
//!   arrival that never completes.
//!
//! # Policies
//!
//! By default a wait runs the barrier kind's two-phase policy, polling with
//! PAUSE while the parties fit on the CPUs the process may use (`s/b/0.62`)
//! and with `yield` when they outnumber them (`Ss/b/0.62`)
//! ([`default_policy`]; module `waiting` says why); the tree barriers
//! use a policy per level ([`TreePolicies`], [`TopologyPolicies`]). A
//! policy given in [`WaitOptions`](crate::WaitOptions) is used as given.
//! Profiling (`WaitOptions::profile` or `WAITWISE_PROFILE=1`) records every
//! wait into the barrier's `wait_profile()`.

mod carry;
mod central;
mod dissemination;
mod handle;
mod node;
mod pair;
mod topology;
mod tree;
mod waiting;
mod wake_chain;

pub use central::{Barrier, BarrierWaitResult, CentralBarrierRef, EpisodeArrival};
pub use dissemination::{DisseminationBarrier, DisseminationHandle};
pub use handle::{HandleError, MAX_HANDLE_PARTIES};
pub use pair::PairBarrier;
pub use topology::{
    Level, TopologyBarrier, TopologyBarrierError, TopologyHandle, TopologyNode, TopologyPolicies,
};
pub use tree::{TreeBarrier, TreeHandle, TreePolicies, MIN_FAN_IN};
pub use waiting::{allowed_cpus, default_policy, is_oversubscribed, poll_mechanism, INNER_ALPHA};
