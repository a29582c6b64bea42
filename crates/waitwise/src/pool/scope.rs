//! [`Scope`]: tasks that borrow from the caller's stack, and
//! [`ThreadPool::install`] built on it. The shape of `std::thread::scope`:
//! every task spawned in the scope has finished when
//! [`ThreadPool::scope`] returns, so a task may borrow anything that
//! outlives the call.
//!
//! # Completion
//!
//! The scope's state lives in the caller's frame: a count of the tasks not
//! yet finished plus one for the scope's closure, and the first panic. A
//! finishing task reads the owner's number, then decrements the count,
//! its last touch of the frame; the task that brings it to 0 wakes the
//! owner through the pool's join words
//! ([`join_wait`](super::join_wait)): a worker's own word, or the word of
//! the owners outside the pool. The wake-up never touches the frame the
//! returning caller may have left, and a spawn costs no reference count:
//! one increment and one decrement of the pending count. The decrement is
//! `SeqCst` (the runner's write of the join-wait protocol; it also
//! releases the task's writes to the caller, whose `Acquire` load of 0
//! makes them visible).

use super::job::Job;
use super::thread_pool::{Inner, ThreadPool};
use std::any::Any;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Mutex;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// What the scope's tasks share with the caller, in the caller's frame.
#[derive(Debug)]
pub(super) struct ScopeState {
    /// Tasks not yet finished, plus one for the scope's closure.
    pending: AtomicU32,
    /// The first panic of a task, resumed in the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// The owner's number in the waiter's pool's join words.
    owner: usize,
    /// The waiter's pool ([`Inner::waiter`]): the scope's pool, or the
    /// pool of the worker that opened the scope; it outlives every task
    /// of the scope.
    pool: *const Inner,
    /// The waiter is a worker of another pool than the scope's (its
    /// tasks hold that pool while they signal it).
    waiter_elsewhere: bool,
}

// SAFETY: `pool` points to the pool's shared state, which is Sync; the
// other fields are Sync and Send.
unsafe impl Sync for ScopeState {}
// SAFETY: as above.
unsafe impl Send for ScopeState {}

/// A pointer to a scope's state that a task carries.
struct StatePtr(*const ScopeState);

// SAFETY: ScopeState is Sync, and the pointer is only read while the
// state lives (ScopeState::finish_one).
unsafe impl Send for StatePtr {}

impl ScopeState {
    /// One task (or the closure) finished: count down, wake the owner
    /// at 0.
    ///
    /// # Safety
    ///
    /// `this` points to a live state whose count includes the caller's
    /// task; it may be freed as soon as the decrement is done.
    unsafe fn finish_one(this: *const ScopeState) {
        // SAFETY: live until our decrement (contract above).
        let (owner, pool, elsewhere) =
            unsafe { ((*this).owner, (*this).pool, (*this).waiter_elsewhere) };
        // A waiter in another pool may return once it sees the count at
        // 0, and its pool be dropped, before our signal below: hold that
        // pool until then.
        let _keep = elsewhere.then(|| {
            // SAFETY: `pool` came from `Arc::as_ptr` of the waiting
            // worker's pool, which lives while it waits, and it waits
            // until our decrement below.
            unsafe {
                std::sync::Arc::increment_strong_count(pool);
                std::sync::Arc::from_raw(pool)
            }
        });
        // SAFETY: as above; the decrement is the last touch, as in
        // `Arc`'s drop.
        if unsafe { &(*this).pending }.fetch_sub(1, Ordering::SeqCst) == 1 {
            // SAFETY: the pool outlives its workers, an owner outside the
            // pool holds it for the whole scope, and a waiter's pool
            // elsewhere is held by `_keep`.
            unsafe { &*pool }.signal_owner(owner);
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
    pub(super) pool: &'scope Inner,
    state: ScopeState,
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
        self.pool.submit(self.task(f));
    }

    /// `f` as a task of this scope, counted in it: it records its panic
    /// and counts itself out when it has run. Run it once, on any thread.
    pub(super) fn task<F>(&'scope self, f: F) -> Job
    where
        F: FnOnce() + Send + 'scope,
    {
        let prev = self.state.pending.fetch_add(1, Ordering::SeqCst);
        assert!(
            prev < u32::MAX,
            "more than 2^32 - 1 tasks pending in one scope"
        );
        let state = StatePtr(&self.state);
        let job = move || {
            let state = state;
            if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
                // SAFETY: the state lives until our finish_one below.
                let mut first = unsafe { &(*state.0).panic }
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(payload);
            }
            // SAFETY: our task is counted in the live state.
            unsafe { ScopeState::finish_one(state.0) };
        };
        // SAFETY: the job borrows only what lives for 'scope (the state
        // among it), and `ThreadPool::scope` does not return (nor unwind)
        // before `pending` reached 0, which the job's last act above makes
        // it do after `f` and everything it borrowed were consumed.
        unsafe { Job::erase(job) }
    }

    /// A scope on `pool` with no task yet, owned by the calling thread,
    /// which waits for its tasks as [`Inner::waiter`] says.
    pub(super) fn new(pool: &'scope Inner) -> Self {
        let (waiter, owner) = pool.waiter();
        Scope {
            pool,
            state: ScopeState {
                pending: AtomicU32::new(1),
                panic: Mutex::new(None),
                owner,
                pool: waiter,
                waiter_elsewhere: !std::ptr::eq(waiter, pool),
            },
            _scope: PhantomData,
            _env: PhantomData,
        }
    }

    /// The end of a scope whose closure returned `result`: counts the
    /// closure out, waits for every task (a worker runs other work
    /// meanwhile), then returns the result or resumes the first panic.
    pub(super) fn finish<R>(&self, result: std::thread::Result<R>) -> R {
        // SAFETY: the closure's count is in the live state.
        unsafe { ScopeState::finish_one(&self.state) };
        // A worker (of this pool or another) runs its pool's work
        // meanwhile. Acquire (the first look): pairs with the tasks'
        // SeqCst decrements.
        // SAFETY: the waiter's pool is this pool or the pool of the
        // calling worker, which outlives the worker.
        let waiter = unsafe { &*self.state.pool };
        waiter.wait_for_owned(&self.state.pending, 0);
        let task_panic = self
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
        self.inner.scope(f)
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
        self.inner.install(f)
    }
}

impl Inner {
    /// [`ThreadPool::scope`] on this pool (also the free
    /// [`scope`](super::scope) on the calling worker's pool).
    pub(crate) fn scope<'env, F, R>(&self, f: F) -> R
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
    {
        let scope = Scope::new(self);
        let result = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        scope.finish(result)
    }

    /// [`ThreadPool::install`] on this pool.
    pub(crate) fn install<F, R>(&self, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        if self.is_current_worker() {
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
