//! [`ScopeFifo`]: a [`Scope`] whose tasks start in the order they were
//! spawned, as rayon's `scope_fifo` and `spawn_fifo`.
//!
//! The pool's deques are LIFO: a worker runs its newest job first. A FIFO
//! scope keeps its tasks in a FIFO queue of its own, in the caller's
//! frame, and pushes for each task a *runner* to the pool in its place:
//! a runner takes the oldest task in the queue and runs it. Runners are
//! interchangeable, so whichever runs first starts the oldest task, and
//! the tasks start in spawn order on whatever workers run the runners
//! (rayon keeps one FIFO per worker; with one worker both give the same
//! order).
//!
//! # Lifetime of the queue
//!
//! A runner touches the queue only while a counted task of the scope is
//! in it: every task is pushed before its runner is submitted, and each
//! runner takes one task, so a runner always finds one (the queue is a
//! crossbeam injector, whose `steal` reports `Empty` only when it is) and
//! the scope, which waits for its tasks, is still alive. After the task
//! it took has run (its last act counts it out of the scope), the runner
//! touches nothing.

use super::job::Job;
use super::scope::Scope;
use super::thread_pool::{Inner, ThreadPool};
use crossbeam_deque::{Injector, Steal};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A scope whose tasks start in spawn order; see [`ThreadPool::scope_fifo`].
#[derive(Debug)]
pub struct ScopeFifo<'scope, 'env: 'scope> {
    scope: Scope<'scope, 'env>,
    /// Tasks spawned and not yet started, oldest first.
    queue: Injector<Job>,
}

/// A pointer to a FIFO scope's queue that a runner carries.
struct QueuePtr(*const Injector<Job>);

// SAFETY: the injector is Sync; the pointer is read only while the queue
// lives (module doc, "Lifetime of the queue").
unsafe impl Send for QueuePtr {}

impl<'scope, 'env> ScopeFifo<'scope, 'env> {
    /// Runs `f` on a worker, after the tasks spawned before it in this
    /// scope have started; [`ThreadPool::scope_fifo`] returns after it
    /// finished. A panic in `f` is resumed in the scope's caller.
    pub fn spawn_fifo<F>(&'scope self, f: F)
    where
        F: FnOnce() + Send + 'scope,
    {
        self.queue.push(self.scope.task(f));
        let queue = QueuePtr(&self.queue);
        let runner = move || {
            let queue = queue;
            // SAFETY: a counted task is in the queue, so the scope (and
            // the queue) lives (module doc).
            let queue = unsafe { &*queue.0 };
            let task = loop {
                match queue.steal() {
                    Steal::Success(task) => break task,
                    Steal::Retry => {}
                    Steal::Empty => unreachable!("a FIFO scope's runner found no task"),
                }
            };
            task.run();
        };
        // SAFETY: the runner borrows the queue, which lives as long as the
        // scope's tasks are counted; it touches it before running the task
        // it took, whose end is the last the scope waits for that the
        // runner could precede (module doc).
        let runner = unsafe { Job::erase(runner) };
        self.scope.pool.submit(runner);
    }
}

impl ThreadPool {
    /// As [`ThreadPool::scope`], with tasks spawned by
    /// [`ScopeFifo::spawn_fifo`] starting in spawn order.
    ///
    /// # Examples
    /// ```
    /// let pool = waitwise::pool::ThreadPool::new(1).unwrap();
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.install(|| {
    ///     pool.scope_fifo(|s| {
    ///         for i in 0..5 {
    ///             let order = &order;
    ///             s.spawn_fifo(move || order.lock().unwrap().push(i));
    ///         }
    ///     })
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3, 4]);
    /// ```
    pub fn scope_fifo<'env, F, R>(&self, f: F) -> R
    where
        F: for<'scope> FnOnce(&'scope ScopeFifo<'scope, 'env>) -> R,
    {
        self.inner.scope_fifo(f)
    }
}

impl Inner {
    /// [`ThreadPool::scope_fifo`] on this pool (also the free
    /// [`scope_fifo`](super::scope_fifo) on the calling worker's pool).
    pub(crate) fn scope_fifo<'env, F, R>(&self, f: F) -> R
    where
        F: for<'scope> FnOnce(&'scope ScopeFifo<'scope, 'env>) -> R,
    {
        let scope = ScopeFifo {
            scope: Scope::new(self),
            queue: Injector::new(),
        };
        let result = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        scope.scope.finish(result)
    }
}
