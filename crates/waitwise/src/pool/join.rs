//! [`ThreadPool::join`] without an allocation: the other half's closure
//! and result live in the caller's frame (a `StackJob`), which does not
//! return before the half ran.
//!
//! The caller, always a worker (from outside the pool `join` runs through
//! [`ThreadPool::install`]), pushes `b` on its own deque (waking an idle
//! worker to steal it, if there is one), runs `a`, then pops its deque:
//! everything pushed above `b` while `a` ran and not stolen is run on the
//! way, and `b` itself, when no worker stole it, is run inline. When `b`
//! was stolen, the caller runs other work while it waits, and sleeps on
//! its own join word, an event count in the pool, when there is none.
//! The worker that ran `b` sets the job's `done` flag as its last touch
//! of the frame, then bumps
//! the owner's event count and wakes it: the wake-up touches only the pool,
//! which outlives every worker, never the frame the owner may have left.
//!
//! The wait and the wake-up, with their memory ordering, are
//! [`join_wait`](super::join_wait) (and its loom model).

use super::job::{Job, JobRef};
use super::join_wait::DONE;
use super::thread_pool::{Inner, ThreadPool};
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::thread::Result as ThreadResult;
use waitwise_platform::shim::{AtomicU32, Ordering};

/// `join`'s other half, in the caller's frame.
struct StackJob<B, RB> {
    func: UnsafeCell<Option<B>>,
    result: UnsafeCell<Option<ThreadResult<RB>>>,
    /// 0 until `result` holds the outcome, then 1.
    done: AtomicU32,
    /// The worker whose frame this is.
    owner: usize,
    pool: *const Inner,
}

impl<B: FnOnce() -> RB + Send, RB: Send> StackJob<B, RB> {
    /// Runs the job from another worker.
    ///
    /// # Safety
    ///
    /// `this` points to a live `StackJob<B, RB>` whose owner waits for
    /// `done` (it cannot take the job back: it left the queue for us), and
    /// this is its only run.
    unsafe fn execute(this: *const ()) {
        // SAFETY: by the contract above.
        let job = unsafe { &*(this as *const Self) };
        // SAFETY: nobody else touches `func` or `result` until `done` is 1.
        let f = unsafe { (*job.func.get()).take() }.expect("a stack job runs once");
        let r = catch_unwind(AssertUnwindSafe(f));
        // SAFETY: as above.
        unsafe { *job.result.get() = Some(r) };
        let (owner, pool) = (job.owner, job.pool);
        // The last touch of the frame: the owner may return right after.
        job.done.store(DONE, Ordering::SeqCst);
        // SAFETY: the pool's shared state outlives its workers, one of
        // which runs this.
        unsafe { &*pool }.signal_owner(owner);
    }
}

impl ThreadPool {
    /// Runs `a` and `b`, `b` possibly on another worker, and returns both
    /// results. Called from outside the pool it runs through
    /// [`install`](ThreadPool::install). Neither half is allocated: `b`
    /// waits in the calling worker's deque as a pointer into this call's
    /// frame, and runs on the calling worker when no other worker stole it
    /// by the time `a` finished. A panic in either is resumed here after both finished
    /// (`a`'s first).
    ///
    /// # Examples
    /// ```
    /// let pool = waitwise::pool::ThreadPool::new(2).unwrap();
    /// fn sum(pool: &waitwise::pool::ThreadPool, v: &[u64]) -> u64 {
    ///     if v.len() < 1000 { return v.iter().sum(); }
    ///     let (l, r) = v.split_at(v.len() / 2);
    ///     let (a, b) = pool.join(|| sum(pool, l), || sum(pool, r));
    ///     a + b
    /// }
    /// let v: Vec<u64> = (0..10_000).collect();
    /// assert_eq!(sum(&pool, &v), 49_995_000);
    /// ```
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.inner.join(a, b)
    }
}

impl Inner {
    /// [`ThreadPool::join`] on this pool (also the free
    /// [`join`](super::join) on the calling worker's pool).
    pub(crate) fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let inner: &Inner = self;
        let Some(me) = inner.current() else {
            return self.install(|| self.join(a, b));
        };
        let job = StackJob {
            func: UnsafeCell::new(Some(b)),
            result: UnsafeCell::new(None),
            done: AtomicU32::new(0),
            owner: me.index(),
            pool: inner,
        };
        let r = JobRef {
            ptr: &job as *const StackJob<B, RB> as *const (),
            exec: StackJob::<B, RB>::execute,
        };
        // SAFETY: `job` outlives its run: this frame does not return
        // before `b` ran here or `done` is 1; it runs once (taken from the
        // deque once), and a stack job is never dropped unrun (every
        // queued job runs).
        inner.push_local(me, unsafe { Job::stack(r) });
        let ra = catch_unwind(AssertUnwindSafe(a));
        // Pop back to `b`: what `a` pushed above it and nobody stole runs
        // here first; `b` itself is on top then, unless it was stolen.
        let mut stolen = true;
        while let Some(j) = inner.pop_local(me) {
            if j.is(r) {
                // Ours: nothing to drop (a stack job owns nothing).
                std::mem::forget(j);
                stolen = false;
                break;
            }
            inner.run(j);
        }
        let rb = if !stolen {
            // Nobody took it: run it here.
            // SAFETY: it left the deque, so we are its only user.
            let f = unsafe { (*job.func.get()).take() }.expect("b not run yet");
            catch_unwind(AssertUnwindSafe(f))
        } else {
            // Another worker runs it (or ran it): `job` stays put until
            // `done` is 1, which is its runner's last touch.
            inner.wait_for_stack_job(me, &job.done, DONE);
            // SAFETY: `done` is 1 (Acquire), so the runner wrote the
            // result and will not touch the job again.
            unsafe { (*job.result.get()).take() }.expect("a finished stack job left its result")
        };
        match (ra, rb) {
            (Ok(ra), Ok(rb)) => (ra, rb),
            (Err(p), _) | (_, Err(p)) => resume_unwind(p),
        }
    }
}

/// Where a half of [`ThreadPool::join_context`] runs, as rayon's
/// `FnContext`.
#[derive(Debug)]
pub struct FnContext {
    migrated: bool,
    /// Neither `Send` nor `Sync`, as rayon's: it describes this thread.
    _marker: PhantomData<*mut ()>,
}

impl FnContext {
    fn new(migrated: bool) -> Self {
        Self {
            migrated,
            _marker: PhantomData,
        }
    }

    /// Whether this half runs on another thread than the one that called
    /// `join_context`: both halves of a call from outside the pool (they
    /// were injected), and a second half that another worker stole.
    #[inline]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

impl ThreadPool {
    /// As [`ThreadPool::join`], telling each half whether it migrated
    /// ([`FnContext::migrated`]), as rayon's `join_context`.
    ///
    /// # Examples
    /// ```
    /// let pool = waitwise::pool::ThreadPool::new(1).unwrap();
    /// let (a, b) = pool.install(|| pool.join_context(|a| a.migrated(), |b| b.migrated()));
    /// assert_eq!((a, b), (false, false)); // one worker: nothing is stolen
    /// ```
    pub fn join_context<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(FnContext) -> RA + Send,
        B: FnOnce(FnContext) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.inner.join_context(a, b)
    }
}

impl Inner {
    /// [`ThreadPool::join_context`] on this pool (also the free
    /// [`join_context`](super::join_context) on the calling worker's
    /// pool).
    pub(crate) fn join_context<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(FnContext) -> RA + Send,
        B: FnOnce(FnContext) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        // From outside the pool both halves are injected: migrated.
        let injected = !self.is_current_worker();
        if injected {
            return self.install(|| self.join_halves(a, b, true));
        }
        self.join_halves(a, b, false)
    }

    /// The join of the two halves from worker `owner`, `b` migrated when
    /// it runs on another worker.
    fn join_halves<A, B, RA, RB>(&self, a: A, b: B, injected: bool) -> (RA, RB)
    where
        A: FnOnce(FnContext) -> RA + Send,
        B: FnOnce(FnContext) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let owner = self.current_index();
        self.join(
            move || a(FnContext::new(injected)),
            move || {
                let stolen = self.current_index() != owner;
                b(FnContext::new(injected || stolen))
            },
        )
    }
}
