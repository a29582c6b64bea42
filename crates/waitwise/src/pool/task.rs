//! [`Task`]: the handle of a task started with [`ThreadPool::spawn`].
//!
//! The task's result goes into a slot shared through an [`Arc`], then the
//! task stores 1 into the handle's finished flag (`SeqCst`: the waker's
//! write of the [`WaitWordRef`] protocol, releasing the result to the
//! joiner's `Acquire` load of 1) and wakes the joiner if it sleeps. The
//! slot needs no lock: the task writes it before that store, the joiner
//! reads it after seeing 1, and nobody else touches it.

use super::job::Job;
use super::thread_pool::ThreadPool;
use crate::wait_word::WaitWordRef;
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::Result as ThreadResult;
use waitwise_platform::futex::Futex;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// The result slot and the finished flag.
#[derive(Debug)]
struct TaskState<T> {
    /// 0 while running, 1 when `result` holds the outcome. A bare futex
    /// word and its sleeper count ([`WaitWordRef`]) rather than a
    /// [`WaitWord`](crate::WaitWord): nothing monitors it, so it needs no
    /// line of its own, and the task's one allocation stays unaligned.
    done: Futex,
    sleepers: AtomicU32,
    /// Written once by the task before `done` becomes 1; read by the
    /// joiner after it saw 1.
    result: UnsafeCell<Option<ThreadResult<T>>>,
}

// SAFETY: `result` is written by the task alone, then read by the joiner
// alone, ordered by the `done` store and load (module doc); a `T: Send`
// result moves between threads that way and is never shared.
unsafe impl<T: Send> Sync for TaskState<T> {}

impl<T> TaskState<T> {
    /// The finished flag with its sleeper count.
    fn word(&self) -> WaitWordRef<'_> {
        WaitWordRef::new(&self.done, &self.sleepers)
    }
}

/// A task running on a [`ThreadPool`]; [`Task::join`] waits for its
/// result. Dropping the handle detaches the task: it still runs, and a
/// panic in it is then reported only by the panic hook.
#[derive(Debug)]
#[must_use = "a dropped Task runs detached; join it to get its result"]
pub struct Task<'p, T> {
    pool: &'p ThreadPool,
    state: Arc<TaskState<T>>,
}

impl<T> Task<'_, T> {
    /// Waits for the task and returns its result. A worker calling this
    /// runs queued tasks while it waits.
    ///
    /// # Panics
    ///
    /// Resumes the task's panic, if it panicked.
    pub fn join(self) -> T {
        self.pool.inner.wait_helping(self.state.word(), |v| v == 1);
        // SAFETY: `done` is 1 (the wait's Acquire load saw it): the task
        // wrote the result and will not touch it again.
        let result =
            unsafe { (*self.state.result.get()).take() }.expect("a finished task left its result");
        match result {
            Ok(v) => v,
            Err(payload) => resume_unwind(payload),
        }
    }

    /// Whether the task has finished.
    pub fn is_finished(&self) -> bool {
        // Acquire: pairs with the task's SeqCst store of 1.
        self.state.done.value().load(Ordering::Acquire) == 1
    }
}

impl ThreadPool {
    /// Runs `f` on a worker; [`Task::join`] returns its result (or
    /// resumes its panic).
    pub fn spawn<F, T>(&self, f: F) -> Task<'_, T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let state = Arc::new(TaskState {
            done: Futex::new(0),
            sleepers: AtomicU32::new(0),
            result: UnsafeCell::new(None),
        });
        let shared = state.clone();
        self.inner.submit(Job::new(move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            // SAFETY: only this task writes the slot, before `done` is 1.
            unsafe { *shared.result.get() = Some(r) };
            shared.done.value().store(1, Ordering::SeqCst);
            shared.word().wake_all();
        }));
        Task { pool: self, state }
    }
}
