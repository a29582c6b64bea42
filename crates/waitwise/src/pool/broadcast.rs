//! [`ThreadPool::broadcast`]: one run of a closure on every worker of the
//! pool, as rayon's `broadcast`, and [`ThreadPool::spawn_broadcast`], its
//! detached form.
//!
//! Each worker's share goes to that worker's inbox
//! ([`thread_pool`](super::ThreadPool), "Work for one worker"), so it
//! runs on that worker and no other: after the work the worker has at
//! hand (its own deque), before shared work. The shares of a `broadcast`
//! are tasks of a [`Scope`](super::Scope): the call returns when every
//! worker ran its share, and resumes the first panic. A worker that
//! broadcasts runs its own share while it waits, as it runs any work of
//! its own, so a broadcast from inside the pool does not wait for itself.

use super::job::Job;
use super::thread_pool::{Inner, ThreadPool};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// What a broadcast closure learns about where it runs.
#[derive(Debug)]
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    /// Neither `Send` nor `Sync`, as rayon's: it describes this thread.
    _marker: PhantomData<&'a mut dyn Fn()>,
}

impl BroadcastContext<'_> {
    /// The number of the worker running this share, `0..num_threads()`.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of workers, and of shares, in this broadcast.
    #[inline]
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

impl ThreadPool {
    /// Runs `op` once on every worker of the pool and returns the results
    /// in worker order. A panic in a share is resumed here after every
    /// share ran.
    ///
    /// # Examples
    /// ```
    /// let pool = waitwise::pool::ThreadPool::new(3).unwrap();
    /// let v = pool.broadcast(|ctx| ctx.index() * 10);
    /// assert_eq!(v, [0, 10, 20]);
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        self.inner.broadcast(op)
    }

    /// Starts `op` once on every worker and returns at once; the shares
    /// run detached (a panic in one is reported by the panic hook only).
    ///
    /// # Examples
    /// ```
    /// let pool = waitwise::pool::ThreadPool::new(2).unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn_broadcast(move |ctx| tx.send(ctx.index()).unwrap());
    /// let mut v: Vec<usize> = rx.iter().take(2).collect();
    /// v.sort();
    /// assert_eq!(v, [0, 1]);
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        self.inner.spawn_broadcast(op)
    }
}

impl Inner {
    /// [`ThreadPool::broadcast`] on this pool (also the free
    /// [`broadcast`](super::broadcast) on the calling worker's pool).
    pub(crate) fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        let n = self.num_workers();
        let results: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
        self.scope(|s| {
            for (index, slot) in results.iter().enumerate() {
                let op = &op;
                let task = s.task(move || {
                    let ctx = BroadcastContext {
                        index,
                        num_threads: n,
                        _marker: PhantomData,
                    };
                    let r = op(ctx);
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                });
                s.pool.send_to(index, task);
            }
        });
        results
            .into_iter()
            .map(|slot| {
                let r = slot.into_inner().unwrap_or_else(|e| e.into_inner());
                r.expect("every share ran")
            })
            .collect()
    }

    /// [`ThreadPool::spawn_broadcast`] on this pool.
    pub(crate) fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        let n = self.num_workers();
        let op = Arc::new(op);
        for index in 0..n {
            let op = op.clone();
            self.send_to(
                index,
                Job::new(move || {
                    let ctx = BroadcastContext {
                        index,
                        num_threads: n,
                        _marker: PhantomData,
                    };
                    // Detached: the panic hook has reported a panic.
                    let _ = catch_unwind(AssertUnwindSafe(|| op(ctx)));
                }),
            );
        }
    }
}
