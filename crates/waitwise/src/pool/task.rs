//! [`Task`]: the handle of a task started with [`ThreadPool::spawn`].
//!
//! The task's result goes into a slot shared through an [`Arc`], then the
//! task stores 1 into the handle's [`WaitWord`] (`SeqCst`: the waker's
//! write of its protocol, releasing the result to the joiner's `Acquire`
//! load of 1) and wakes the joiner if it sleeps.

use super::thread_pool::{ThreadPool, Work};
use crate::wait_word::WaitWordRef;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
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
    result: Mutex<Option<ThreadResult<T>>>,
}

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
        let result = self
            .state
            .result
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .expect("a finished task left its result");
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
            result: Mutex::new(None),
        });
        let shared = state.clone();
        self.inner.submit_work(Work::new(move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            *shared.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            shared.done.value().store(1, Ordering::SeqCst);
            shared.word().wake_all();
        }));
        Task { pool: self, state }
    }
}
