//! The global pool, created on first use, and rayon's free functions on
//! it: [`join`], [`join_context`], [`scope`], [`scope_fifo`], [`spawn`], [`broadcast`],
//! [`spawn_broadcast`], [`current_num_threads`],
//! [`current_thread_index`].
//!
//! As rayon's, each free function runs on the pool whose worker calls it
//! (inside `pool.install(..)`, on `pool`), and on the global pool from
//! any other thread. The global pool has the default settings
//! ([`PoolBuilder::new`]: one worker per allowed CPU) and lives for the
//! rest of the process.

use super::broadcast::BroadcastContext;
use super::job::Job;
use super::join::FnContext;
use super::scope::Scope;
use super::scope_fifo::ScopeFifo;
use super::thread_pool::{Inner, PoolBuilder, ThreadPool};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// The global pool, built on first use.
static GLOBAL: OnceLock<ThreadPool> = OnceLock::new();

/// The global pool, built on the first call (with [`PoolBuilder::new`]'s
/// settings).
///
/// # Panics
///
/// If its worker threads cannot be started.
///
/// # Examples
/// ```
/// let pool = waitwise::pool::global();
/// assert!(pool.workers() >= 1);
/// assert_eq!(pool.install(|| 6 * 7), 42);
/// ```
pub fn global() -> &'static ThreadPool {
    GLOBAL.get_or_init(|| {
        PoolBuilder::new()
            .thread_name("waitwise-global")
            .build()
            .expect("the global pool's worker threads could not be started")
    })
}

/// The global pool's shared state.
fn global_inner() -> &'static Inner {
    &global().inner
}

/// [`ThreadPool::join`] on the current pool (module doc).
///
/// # Examples
/// ```
/// fn sum(v: &[u64]) -> u64 {
///     if v.len() < 1000 { return v.iter().sum(); }
///     let (l, r) = v.split_at(v.len() / 2);
///     let (a, b) = waitwise::pool::join(|| sum(l), || sum(r));
///     a + b
/// }
/// assert_eq!(sum(&(0..10_000).collect::<Vec<u64>>()), 49_995_000);
/// ```
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    Inner::with_current(global_inner, |pool| pool.join(a, b))
}

/// [`ThreadPool::join_context`] on the current pool (module doc).
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    Inner::with_current(global_inner, |pool| pool.join_context(a, b))
}

/// [`ThreadPool::scope`] on the current pool (module doc).
///
/// # Examples
/// ```
/// let mut v = [1, 2, 3];
/// waitwise::pool::scope(|s| {
///     for x in &mut v {
///         s.spawn(move || *x *= 2);
///     }
/// });
/// assert_eq!(v, [2, 4, 6]);
/// ```
pub fn scope<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    Inner::with_current(global_inner, |pool| pool.scope(f))
}

/// [`ThreadPool::scope_fifo`] on the current pool (module doc).
pub fn scope_fifo<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope ScopeFifo<'scope, 'env>) -> R,
{
    Inner::with_current(global_inner, |pool| pool.scope_fifo(f))
}

/// Runs `f` on the current pool (module doc), detached, as rayon's
/// `spawn`: a panic in it is reported by the panic hook only. For a
/// result, use [`ThreadPool::spawn`] and join its task.
///
/// # Examples
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// waitwise::pool::spawn(move || tx.send(7).unwrap());
/// assert_eq!(rx.recv().unwrap(), 7);
/// ```
pub fn spawn<F>(f: F)
where
    F: FnOnce() + Send + 'static,
{
    let job = Job::new(move || {
        // Detached: the panic hook has reported a panic.
        let _ = catch_unwind(AssertUnwindSafe(f));
    });
    Inner::with_current(global_inner, |pool| pool.submit(job));
}

/// [`ThreadPool::broadcast`] on the current pool (module doc).
///
/// # Examples
/// ```
/// let v = waitwise::pool::broadcast(|ctx| ctx.index());
/// assert_eq!(v, (0..waitwise::pool::current_num_threads()).collect::<Vec<_>>());
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    Inner::with_current(global_inner, |pool| pool.broadcast(op))
}

/// [`ThreadPool::spawn_broadcast`] on the current pool (module doc).
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    Inner::with_current(global_inner, |pool| pool.spawn_broadcast(op))
}

/// The number of workers of the current pool (module doc).
pub fn current_num_threads() -> usize {
    Inner::with_current(global_inner, Inner::num_workers)
}

/// The calling thread's number among its pool's workers; `None` on a
/// thread that is no pool's worker.
pub fn current_thread_index() -> Option<usize> {
    Inner::with_current(global_inner, Inner::current_index)
}
