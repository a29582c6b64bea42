//! [`Scope`]: tasks that borrow from the caller's stack, and
//! [`ThreadPool::install`] built on it. The shape of `std::thread::scope`:
//! every task spawned in the scope has finished when
//! [`ThreadPool::scope`] returns, so a task may borrow anything that
//! outlives the call.
//!
//! # Completion
//!
//! The scope's [`WaitWord`] counts the tasks not yet finished plus one for
//! the scope's own closure. A finishing task decrements it and, when it
//! reaches 0, wakes the caller. The count lives behind an [`Arc`] that each
//! task holds, so the last task's wake-up never touches memory the
//! returning caller has freed. The decrement is `SeqCst` (the waker's
//! write of the [`WaitWord`] protocol; it also releases the task's writes
//! to the caller, whose `Acquire` load of 0 makes them visible).

use super::thread_pool::{Inner, ThreadPool, Work};
use crate::wait_word::WaitWord;
use std::any::Any;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use waitwise_platform::shim::Ordering;

/// What the scope's tasks share with the caller.
#[derive(Debug)]
struct ScopeState {
    /// Tasks not yet finished, plus one for the scope's closure.
    pending: WaitWord,
    /// The first panic of a task, resumed in the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl ScopeState {
    /// One task (or the closure) finished: count down, wake the caller at 0.
    fn finish_one(&self) {
        if self.pending.value().fetch_sub(1, Ordering::SeqCst) == 1 {
            self.pending.wake_all();
        }
    }
}

/// A scope to spawn borrowing tasks in; see [`ThreadPool::scope`].
///
/// A task may borrow only what outlives the scope; the compiler refuses
/// a borrow of a local of the scope's closure:
///
/// ```compile_fail
/// let pool = waitwise::pool::ThreadPool::new(1).unwrap();
/// pool.scope(|s| {
///     let x = 5;
///     s.spawn(|| println!("{x}"));
/// });
/// ```
///
/// and the scope cannot escape its closure:
///
/// ```compile_fail
/// let pool = waitwise::pool::ThreadPool::new(1).unwrap();
/// let mut escaped = None;
/// pool.scope(|s| escaped = Some(s));
/// ```
#[derive(Debug)]
pub struct Scope<'scope, 'env: 'scope> {
    pool: &'scope Inner,
    state: Arc<ScopeState>,
    /// Invariant in `'scope` and `'env`, as `std::thread::Scope`.
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Runs `f` on a worker; [`ThreadPool::scope`] returns after it
    /// finished. A panic in `f` is resumed in the scope's caller (the
    /// first one, after every task finished).
    pub fn spawn<F>(&'scope self, f: F)
    where
        F: FnOnce() + Send + 'scope,
    {
        let prev = self.state.pending.value().fetch_add(1, Ordering::SeqCst);
        assert!(
            prev < u32::MAX,
            "more than 2^32 - 1 tasks pending in one scope"
        );
        let state = self.state.clone();
        let job = move || {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
                let mut first = state.panic.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(payload);
            }
            state.finish_one();
        };
        // SAFETY: the job borrows only what lives for 'scope, and
        // `ThreadPool::scope` does not return (nor unwind) before `pending`
        // reached 0, which the job's last act above makes it do after `f`
        // and everything it borrowed were consumed.
        let job = unsafe { Work::erase(job) };
        self.pool.submit_work(job);
    }
}

impl ThreadPool {
    /// Runs `f` with a [`Scope`] whose tasks may borrow from the caller;
    /// returns after every task spawned in it finished. A worker calling
    /// this runs queued tasks while it waits.
    ///
    /// # Panics
    ///
    /// If `f` or a task panicked, the panic is resumed here once every
    /// task finished (`f`'s first, else the first task's).
    ///
    /// # Examples
    /// ```
    /// let pool = waitwise::pool::ThreadPool::new(2).unwrap();
    /// let words = ["a", "bb", "ccc"];
    /// let total = std::sync::atomic::AtomicUsize::new(0);
    /// pool.scope(|s| {
    ///     for w in &words {
    ///         let total = &total;
    ///         s.spawn(move || { total.fetch_add(w.len(), std::sync::atomic::Ordering::Relaxed); });
    ///     }
    /// });
    /// assert_eq!(total.into_inner(), 6);
    /// ```
    pub fn scope<'env, F, R>(&self, f: F) -> R
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
    {
        let scope = Scope {
            pool: &self.inner,
            state: Arc::new(ScopeState {
                pending: WaitWord::new(1),
                panic: Mutex::new(None),
            }),
            _scope: PhantomData,
            _env: PhantomData,
        };
        let result = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        scope.state.finish_one();
        // Acquire (inside the engine's first look): pairs with the tasks'
        // SeqCst decrements.
        self.inner
            .wait_helping(scope.state.pending.as_ref(), |v| v == 0);
        let task_panic = scope
            .state
            .panic
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match result {
            Err(payload) => resume_unwind(payload),
            Ok(_) if task_panic.is_some() => resume_unwind(task_panic.unwrap()),
            Ok(r) => r,
        }
    }

    /// Runs `f` on a worker of this pool and returns its result (at once,
    /// on the calling thread, when that is a worker already), so that the
    /// tasks `f` spawns or joins are submitted from inside the pool, as
    /// rayon's `install` does. A panic in `f` is resumed here.
    ///
    /// # Examples
    /// ```
    /// let pool = waitwise::pool::ThreadPool::new(2).unwrap();
    /// let v: Vec<u64> = (1..=100).collect();
    /// let total = pool.install(|| {
    ///     let (a, b) = pool.join(|| v[..50].iter().sum::<u64>(), || v[50..].iter().sum::<u64>());
    ///     a + b
    /// });
    /// assert_eq!(total, 5050);
    /// ```
    pub fn install<F, R>(&self, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        if self.inner.is_current_worker() {
            return f();
        }
        let mut out = None;
        self.scope(|s| {
            let out = &mut out;
            s.spawn(move || *out = Some(f()));
        });
        out.expect("the scope ran f")
    }
}
