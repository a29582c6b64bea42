//! [`ThreadPool`]: the workers, their queue, submission and the worker
//! loop. Idle workers wait through the [`idle`](super::idle) protocol;
//! [`Scope`](super::Scope) and [`Task`](super::Task) are the front ends.
//!
//! # How a task reaches a worker
//!
//! A submitter first tries to hand the task straight to an idle worker on
//! a core of its own (or an extra worker), then to an idle SMT sibling
//! when the [gate](super::gate) is open: one claim and one store, and a
//! futex wake only if the worker sleeps. When no worker is idle, the task
//! goes to the shared FIFO queue, and the submitter looks once more for an
//! idle worker to wake (the Dekker re-check of the idle protocol).
//!
//! # Progress
//!
//! Every thread that finishes a task takes queued tasks until the queue is
//! empty before it waits for anything, and a worker waiting for a task of
//! its own ([`Scope`](super::Scope), [`Task::join`](super::Task::join))
//! runs queued tasks while it waits, newest first (so helping nests about
//! as deep as the caller's joins, as rayon's LIFO local deques keep it). Workers on cores of their own take
//! queued work whenever they are idle, so a queued task always runs, also
//! while the gate keeps every sibling parked.

use super::gate::{UtilizationGate, SEED_004_PAIR_THROUGHPUT};
use super::idle::{Idle, Wake};
use super::join_wait::JoinWords;
use super::placement::{place, Tier, WorkerPlace};
use crate::policy::{Policy, SyncKind};
use crate::wait_word::WaitWordRef;
use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::AtomicU32;

/// A job whose data lives in its submitter's stack frame
/// ([`ThreadPool::join`]'s other half): a pointer and the function that
/// runs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobRef {
    pub(crate) ptr: *const (),
    pub(crate) exec: unsafe fn(*const ()),
}

// SAFETY: a JobRef is only made for data that is `Send` and outlives the
// job (ThreadPool::join's StackJob, whose frame waits for it).
unsafe impl Send for JobRef {}

/// What a job runs.
pub(crate) enum Work {
    /// A boxed closure (spawn, scope).
    Boxed(Box<dyn FnOnce() + Send + 'static>),
    /// A job in its submitter's frame.
    Stack(JobRef),
}

/// A unit of work in the queue or a mailbox.
pub(crate) struct Job {
    work: Work,
    /// Submitted when no worker on a core of its own was idle: the work an
    /// SMT sibling would take ([`super::gate`]). Timed when run.
    spill: bool,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("spill", &self.spill).finish()
    }
}

/// What the workers share.
#[derive(Debug)]
pub(crate) struct Inner {
    queue: crate::Mutex<VecDeque<Job>>,
    /// The queue's length, stored under the queue lock. SeqCst: the
    /// publication and re-check of the idle protocol's Dekker pattern.
    queued: AtomicUsize,
    /// Set once, by the pool's drop. SeqCst: read in the same re-check.
    shutdown: AtomicBool,
    idle: Idle<Job>,
    places: Vec<WorkerPlace>,
    cores: Range<usize>,
    siblings: Range<usize>,
    extras: Range<usize>,
    policy: Policy,
    gate: UtilizationGate,
    /// Per worker, the event count it sleeps on while its `join`'s other
    /// half runs elsewhere.
    join_words: JoinWords,
}

thread_local! {
    /// The pool whose worker the current thread is (null if none).
    static CURRENT: Cell<*const Inner> = const { Cell::new(std::ptr::null()) };
    /// The current thread's worker number in that pool.
    static CURRENT_INDEX: Cell<usize> = const { Cell::new(0) };
}

/// Now, in ns on the cycle clock (the gate's clock).
fn now_ns() -> u64 {
    let c = cycle_clock();
    c.ticks_to_ns(c.now()) as u64
}

impl Inner {
    /// Whether the calling thread is one of this pool's workers.
    pub(crate) fn is_current_worker(&self) -> bool {
        CURRENT.with(|c| std::ptr::eq(c.get(), self))
    }

    /// Runs `f` on a worker.
    pub(crate) fn submit(&self, f: Box<dyn FnOnce() + Send + 'static>) {
        self.submit_work(Work::Boxed(f));
    }

    /// The calling worker's number, when the caller is one of this pool's
    /// workers.
    pub(crate) fn current_worker_index(&self) -> Option<usize> {
        self.is_current_worker()
            .then(|| CURRENT_INDEX.with(Cell::get))
    }

    /// Takes the queued stack job `r` back, if no worker took it yet.
    pub(crate) fn take_back(&self, r: JobRef) -> bool {
        if self.queued.load(Ordering::SeqCst) == 0 {
            return false;
        }
        let mut q = self.queue.lock();
        let at = q
            .iter()
            .rposition(|j| matches!(j.work, Work::Stack(x) if x.ptr == r.ptr));
        if let Some(i) = at {
            q.remove(i);
            self.queued.store(q.len(), Ordering::SeqCst);
        }
        at.is_some()
    }

    /// A stack job of worker `owner` finished (its flag is DONE): wake
    /// the owner ([`JoinWords::signal`]).
    pub(crate) fn signal_stack_job(&self, owner: usize) {
        self.join_words.signal(owner);
    }

    /// Worker `me` waits until `done` holds DONE, running queued tasks
    /// meanwhile ([`JoinWords::wait`]).
    pub(crate) fn wait_for_stack_job(&self, me: usize, done: &AtomicU32) {
        self.join_words
            .wait(me, done, &self.policy, || match self.pop_newest() {
                Some(job) => {
                    self.run(job);
                    true
                }
                None => false,
            });
    }

    /// Runs `work` on a worker.
    pub(crate) fn submit_work(&self, work: Work) {
        let job = Job { work, spill: false };
        let job = match self.idle.hand_to_idle(self.cores.clone(), job) {
            Ok(_) => return,
            Err(job) => job,
        };
        let job = match self.idle.hand_to_idle(self.extras.clone(), job) {
            Ok(_) => return,
            Err(job) => job,
        };
        let mut job = job;
        if !self.siblings.is_empty() {
            job.spill = true;
            if self.gate.is_open(now_ns()) {
                job = match self.idle.hand_to_idle(self.siblings.clone(), job) {
                    Ok(_) => return,
                    Err(job) => job,
                };
            }
        }
        self.push(job);
        // The Dekker re-check: a worker that went idle after our claims
        // failed has either seen `queued` or is seen here.
        if self.idle.wake_one_to_look(self.cores.clone()).is_none()
            && self.idle.wake_one_to_look(self.extras.clone()).is_none()
            && !self.siblings.is_empty()
            && self.gate.is_open(now_ns())
        {
            self.idle.wake_one_to_look(self.siblings.clone());
        }
    }

    fn push(&self, job: Job) {
        let mut q = self.queue.lock();
        q.push_back(job);
        self.queued.store(q.len(), Ordering::SeqCst);
    }

    /// The oldest queued task, if any.
    pub(crate) fn pop(&self) -> Option<Job> {
        if self.queued.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let mut q = self.queue.lock();
        let job = q.pop_front();
        self.queued.store(q.len(), Ordering::SeqCst);
        job
    }

    /// The newest queued task, if any: what a waiting worker helps with,
    /// most likely the task it waits for (a `join`'s other half), and a
    /// small one, so that helping nests about as deep as the joins do.
    fn pop_newest(&self) -> Option<Job> {
        if self.queued.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let mut q = self.queue.lock();
        let job = q.pop_back();
        self.queued.store(q.len(), Ordering::SeqCst);
        job
    }

    /// Runs a job on the calling thread (spill jobs timed for the gate).
    pub(crate) fn run(&self, job: Job) {
        let run = || match job.work {
            Work::Boxed(f) => f(),
            // SAFETY: a stack job's data outlives it (JobRef's contract),
            // and this runs it once: it left the queue or mailbox for us.
            Work::Stack(r) => unsafe { (r.exec)(r.ptr) },
        };
        if job.spill {
            let t0 = now_ns();
            run();
            let t1 = now_ns();
            self.gate.record(t1.saturating_sub(t0), t1);
        } else {
            run();
        }
    }

    /// Waits until `ready(word)`; a worker of this pool runs queued tasks
    /// meanwhile (module doc, "Progress").
    pub(crate) fn wait_helping(&self, word: WaitWordRef<'_>, ready: impl Fn(u32) -> bool) {
        if self.is_current_worker() {
            while !ready(word.value().load(Ordering::SeqCst)) {
                match self.pop_newest() {
                    Some(job) => self.run(job),
                    None => break,
                }
            }
        }
        word.wait_until(&self.policy, Deadline::NEVER, ready);
    }

    fn worker_main(&self, i: usize) {
        let tier = self.places[i].tier;
        loop {
            while let Some(job) = self.pop() {
                self.run(job);
            }
            if self.shutdown.load(Ordering::SeqCst) {
                return;
            }
            let (policy, takes_queued) = if tier == Tier::Sibling && !self.gate.is_open(now_ns()) {
                // Parked: blocked, and not looking at queued work.
                (Policy::always_block(), false)
            } else {
                (self.policy, true)
            };
            let recheck = || {
                self.shutdown.load(Ordering::SeqCst)
                    || (takes_queued && self.queued.load(Ordering::SeqCst) > 0)
            };
            match self.idle.idle_wait(i, &policy, recheck) {
                Wake::Payload(job) => self.run(job),
                Wake::Look => {}
            }
        }
    }
}

/// A small pool of worker threads for helper/worker jobs and short tasks:
/// [`spawn`](ThreadPool::spawn) a task and [`join`](super::Task::join)
/// it, run borrowed closures in a [`scope`](ThreadPool::scope), or
/// [`join`](ThreadPool::join) two closures.
///
/// Idle workers wait through the pool's [`Policy`] (by default the
/// producer-consumer two-phase policy: poll for `ln(e-1) · B`, then
/// block), so a task submitted to a worker that is still polling reaches
/// it with one store, and an idle pool soon burns no CPU. Workers are
/// pinned one per core first and to SMT siblings last
/// ([`placement`](super::placement)); siblings stay parked while the work
/// they would take is below the SMT threshold ([`gate`](super::gate)).
///
/// Dropping the pool runs the tasks still queued, then joins the workers.
///
/// # Examples
/// ```
/// use waitwise::pool::ThreadPool;
///
/// let pool = ThreadPool::new(2).unwrap();
/// let t = pool.spawn(|| 6 * 7);
/// assert_eq!(t.join(), 42);
///
/// let mut data = vec![1, 2, 3, 4];
/// pool.scope(|s| {
///     for x in &mut data {
///         s.spawn(move || *x *= 10);
///     }
/// });
/// assert_eq!(data, [10, 20, 30, 40]);
///
/// let (a, b) = pool.join(|| 1 + 1, || "two");
/// assert_eq!((a, b), (2, "two"));
/// ```
#[derive(Debug)]
pub struct ThreadPool {
    pub(crate) inner: Arc<Inner>,
    threads: Vec<JoinHandle<()>>,
}

/// Settings of a [`ThreadPool`].
#[derive(Clone, Debug)]
pub struct PoolBuilder {
    workers: Option<usize>,
    policy: Option<Policy>,
    pin: bool,
    pair_throughput: f64,
    name: String,
    places: Option<Vec<WorkerPlace>>,
}

impl Default for PoolBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl PoolBuilder {
    /// Defaults: one worker per allowed CPU, the producer-consumer
    /// policy, pinned, seed 004's SMT throughput.
    pub fn new() -> Self {
        Self {
            workers: None,
            policy: None,
            pin: true,
            pair_throughput: SEED_004_PAIR_THROUGHPUT,
            name: "waitwise-pool".into(),
            places: None,
        }
    }

    /// Number of workers (at least 1). More than the allowed CPUs makes
    /// the rest [`Tier::Extra`] workers, unpinned.
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// How idle workers, and callers of `join` and `scope`, wait.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Whether to pin workers to their CPUs (default `true`). Pinning that
    /// fails (a CPU removed from the mask since) leaves the worker
    /// unpinned.
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// The throughput of an SMT core with both threads running, normed to
    /// one thread alone, as measured on this machine (default: seed 004's
    /// 1.33). Sets the gate's threshold `2 / T2 - 1`.
    pub fn smt_pair_throughput(mut self, t2: f64) -> Self {
        self.pair_throughput = t2;
        self
    }

    /// The workers' thread-name prefix (the worker number is appended).
    pub fn thread_name(mut self, prefix: impl Into<String>) -> Self {
        self.name = prefix.into();
        self
    }

    /// Places the workers as given instead of by this machine's topology
    /// (one worker per entry, ordered `Core`, `Sibling`, `Extra`), for
    /// tests of the sibling gate on machines without SMT.
    #[doc(hidden)]
    pub fn with_places(mut self, places: Vec<WorkerPlace>) -> Self {
        self.places = Some(places);
        self
    }

    /// Starts the workers. Fails if asked for 0 workers or if a thread
    /// cannot be spawned.
    pub fn build(self) -> io::Result<ThreadPool> {
        let allowed = waitwise_platform::affinity::allowed_cpus().unwrap_or_default();
        let n = match (&self.places, self.workers) {
            (Some(p), _) => p.len(),
            (None, w) => w.unwrap_or(allowed.len().max(1)),
        };
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a pool needs at least one worker",
            ));
        }
        let places = match self.places {
            Some(p) => {
                let mut sorted = p.clone();
                sorted.sort_by_key(|w| w.tier as u8);
                if sorted != p || p[0].tier == Tier::Sibling {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "places must be ordered Core, Sibling, Extra, with a Core before any Sibling",
                    ));
                }
                p
            }
            None => {
                let topology = waitwise_platform::topology::Topology::current().ok();
                place(n, topology.as_ref(), &allowed)
            }
        };
        let count = |t: Tier| places.iter().filter(|p| p.tier == t).count();
        let (c, s) = (count(Tier::Core), count(Tier::Sibling));
        let inner = Arc::new(Inner {
            queue: crate::Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            idle: Idle::new(n),
            cores: 0..c,
            siblings: c..c + s,
            extras: c + s..n,
            places,
            policy: self
                .policy
                .unwrap_or_else(|| Policy::for_kind(SyncKind::ProducerConsumer)),
            gate: UtilizationGate::new(self.pair_throughput, now_ns()),
            join_words: JoinWords::new(n),
        });
        let mut pool = ThreadPool {
            inner,
            threads: Vec::with_capacity(n),
        };
        for i in 0..n {
            let inner = pool.inner.clone();
            let cpu = if self.pin {
                pool.inner.places[i].cpu
            } else {
                None
            };
            let t = std::thread::Builder::new()
                .name(format!("{}-{i}", self.name))
                .spawn(move || {
                    if let Some(cpu) = cpu {
                        let _ = waitwise_platform::affinity::pin_current_thread(cpu);
                    }
                    CURRENT.with(|c| c.set(Arc::as_ptr(&inner)));
                    CURRENT_INDEX.with(|c| c.set(i));
                    inner.worker_main(i);
                    CURRENT.with(|c| c.set(std::ptr::null()));
                })?;
            pool.threads.push(t);
        }
        Ok(pool)
    }
}

impl ThreadPool {
    /// A pool of `n` workers with the default settings.
    pub fn new(n: usize) -> io::Result<Self> {
        PoolBuilder::new().workers(n).build()
    }

    /// The settings builder.
    pub fn builder() -> PoolBuilder {
        PoolBuilder::new()
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.inner.places.len()
    }

    /// Where each worker runs, in worker order.
    pub fn placement(&self) -> &[WorkerPlace] {
        &self.inner.places
    }

    /// The policy idle workers wait with.
    pub fn policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// The SMT gate's threshold `u*` (module [`gate`](super::gate)).
    pub fn sibling_threshold(&self) -> f64 {
        self.inner.gate.threshold()
    }

    /// Whether any worker waits idle now (a snapshot, for tests and
    /// benchmarks that wait for an idle pool).
    pub fn any_idle(&self) -> bool {
        self.inner.idle.any_idle_in(0..self.workers())
    }

    /// Whether every worker waits idle now (a snapshot).
    pub fn all_idle(&self) -> bool {
        (0..self.workers()).all(|i| self.inner.idle.any_idle_in(i..i + 1))
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        // SeqCst: the shutdown flag is read in the idle re-check (Dekker).
        self.inner.shutdown.store(true, Ordering::SeqCst);
        self.inner.idle.wake_all_to_look();
        let me = self.inner.is_current_worker();
        for t in self.threads.drain(..) {
            // A worker dropping its own pool (from a task) cannot join
            // itself; its thread ends when the task returns.
            if me && t.thread().id() == std::thread::current().id() {
                continue;
            }
            let _ = t.join();
        }
    }
}
