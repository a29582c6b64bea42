//! [`ThreadPool`]: the workers, their deques, submission and the worker
//! loop. Idle workers wait through the [`idle`](super::idle) protocol;
//! [`Scope`](super::Scope) and [`Task`](super::Task) are the front ends.
//!
//! A job ([`job`](super::job)) is two words of data and a function: a
//! small closure travels inside it, with no allocation, and the job itself
//! travels in registers to the deque.
//!
//! # Where a task waits
//!
//! Each worker owns a LIFO deque (crossbeam-deque's `Worker`); the others
//! steal from its far end. Work submitted from outside the pool goes to a
//! shared injector. A worker looks for work in its own deque first (newest
//! first), then in the injector (taking a batch), then steals from the
//! other workers, starting after itself.
//!
//! # How a task reaches a worker
//!
//! From *outside the pool*, a submitter first tries to hand the task
//! straight to an idle worker on a core of its own (or an extra worker),
//! then to an idle SMT sibling when the [gate](super::gate) is open: one
//! claim and one store, and a futex wake only if the worker sleeps. When
//! no worker is idle, the task goes to the injector, and the submitter
//! looks once more for an idle worker to wake (the Dekker re-check of the
//! idle protocol, with a `SeqCst` fence after the push).
//!
//! From *a worker* (a task that spawns, a scope run through `install`, a
//! `join`), the task goes to the worker's own deque with no atomic
//! read-modify-write and no `SeqCst` fence, and the worker wakes one idle
//! worker to steal it if the idle set shows one. Without a fence that look
//! can miss a worker going idle at the same instant; the task still runs,
//! because a worker pops its own deque before it waits for anything or
//! goes idle: such a miss costs parallelism, never progress (rayon makes
//! the same trade).
//!
//! # Work for one worker
//!
//! Each worker also has an inbox (a FIFO injector of its own) for jobs
//! that must run on that worker, a broadcast's
//! ([`broadcast`](super::broadcast)). A worker takes from its inbox right
//! after its own deque, also while parked, and nobody else takes from it.
//! The sender pushes, fences, and wakes that worker if it is idle; the
//! worker's idle re-check looks at its inbox after a fence: the same
//! Dekker pattern as the injector's (below, "Memory ordering").
//!
//! # Progress
//!
//! Every worker empties its own deque, the injector and the other deques
//! it can see before it goes idle (and searches them a little longer,
//! [`SEARCH_NS`]), and a worker waiting for a task of its own
//! ([`Scope`](super::Scope), [`Task::join`](super::Task::join),
//! [`ThreadPool::join`]) runs such work while it waits, searching for more
//! as long as the pool's policy polls, before it sleeps. Workers on cores
//! of their own take shared work whenever they are idle, so a queued task
//! always runs, also while the gate keeps every sibling parked (a parked
//! sibling still empties its own deque).
//!
//! # Waiting outside the pool
//!
//! A thread outside the pool that waits for work it submitted (`install`,
//! a scope, a task's `join`) runs none of it: it only holds a CPU while it
//! polls, and while the pool's workers fill the CPUs that is a CPU they
//! need. By default it waits with the producer-consumer default,
//! `adapt/b`, which learns from this pool's waits how long the work takes:
//! work that outlasts the block cost (a fork-join tree of tens of µs)
//! teaches it to block at once, as rayon's submitter does; short work
//! keeps its polling. Once the workers outnumber the CPUs it polls by
//! `yield` for the static limit (`ln(e-1) · B`): an `adapt/b` that polls
//! by `yield` there cost 3-4% of the throughput of 8 workers on 2 CPUs
//! (`waitwise peers --only pool`). A policy given to the pool
//! ([`PoolBuilder::policy`]) is used for both.
//!
//! Such a waiter counts as one more thread beside the workers when the
//! default waits choose how to poll ([`OUTSIDE_WAITER`]): with as many
//! workers as CPUs, the idle workers and the waiter outside poll by
//! `yield`. Polling with PAUSE there, each held a CPU the other needed:
//! the submitter, woken at a tree's end, handed the next tree to a worker
//! whose CPU it then held while it polled, and an idle worker kept the
//! CPU the woken submitter wanted (on 2 CPUs, fork-join trees of ~100 ns
//! leaves on 2 workers went from behind rayon's rate to ahead of it). The
//! price: work of a µs or less submitted from outside waits for `yield`s,
//! a few µs more from `install` to its return than PAUSE polls took. The
//! polling loops of a worker waiting for its own work keep spinning while
//! the workers alone fit.
//!
//! # A busy machine
//!
//! While other programs want the CPUs (more threads runnable than the
//! machine has CPUs, most of them not this process's), the default idle
//! wait blocks at once or after a short poll: a PAUSE poll would hold a
//! CPU that another thread wants, and `yield` polls stop while yields
//! lose slices to the busy programs. A worker that sleeps there costs
//! every submission a futex wake-up, and those wake-ups are dear while
//! the CPUs are busy: beside two busy loops on 2 CPUs, fork-join trees
//! submitted one after another spent 2-5x rayon's CPU time per tree,
//! most of it in the submitter's and the workers' futex calls. So a worker of a pool under the default
//! waiting first searches by yielding ([`Inner::search_by_yield`]): up to
//! [`BUSY_YIELD_ROUNDS`] yields, each followed by a look for work, as
//! rayon's workers search before they get sleepy, for as long as its
//! yields come back quickly ([`CpuDemand::of_yield`]): nothing else on
//! its CPU wanted the time. A worker that stays runnable takes a
//! submission from the injector at its next look, with no system call on
//! either side. The first yield that comes back late (a busy program had
//! the CPU) ends the search and the worker goes idle as before: a worker
//! on a loaded CPU sleeps and is woken with the scheduler's preference for
//! a woken thread, where a worker that went on yielding would give the
//! busy program a whole slice at every round. Where the process itself
//! used most of its CPUs lately (its own threads are most of those that
//! want one), or the machine is not busy, the search is skipped.
//!
//! # Memory ordering
//!
//! The deques and the injector order their own hand-over of a job
//! (crossbeam-deque's `Release` publication and `Acquire` take). Around
//! them: an injection and an idle worker's re-check are the Dekker pattern
//! of the [`idle`](super::idle) protocol, closed by a `SeqCst` fence on
//! each side (after the push; after the worker's `SeqCst` mark, before it
//! reads the deques); a push from a worker reads the idle set `Relaxed`,
//! a hint whose miss costs parallelism only (above); the shutdown flag is
//! stored and read `SeqCst`, in the same re-check.

use super::gate::{UtilizationGate, SEED_004_PAIR_THROUGHPUT};
use super::idle::{Idle, Wake};
use super::job::Job;
use super::join_wait::JoinWords;
use super::placement::{place, Tier, WorkerPlace};
use crate::policy::idle_extension::{self, CpuDemand};
use crate::policy::{crowding, Policy, PollBudget, SyncKind};
use crate::wait_word::WaitWordRef;
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use std::cell::Cell;
use std::io;
use std::mem::{align_of, size_of};
use std::ops::Range;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::AtomicU32;

/// A job handed to an idle worker's mailbox.
#[derive(Debug)]
pub(crate) struct Mail {
    job: Job,
    /// Handed to an SMT sibling: work a sibling took ([`super::gate`]),
    /// timed when run.
    spill: bool,
}

/// How long a worker keeps trying to steal after it found no work and
/// before it marks itself idle ([`Inner::search`]). Guessed: long enough
/// to catch the next of a stream of short tasks another worker pushes
/// (one every ~0.1 µs to a few µs), short against the idle policy's
/// polling (up to `2B` under `adapt/b`, several µs to tens of µs); set in
/// time, not in rounds, so that a sweep over many workers' deques does
/// not lengthen it.
const SEARCH_NS: u64 = 5_000;

/// The most yields of an idle worker's search on a busy machine (module
/// doc, "A busy machine"): rayon's rounds before its workers get sleepy.
const BUSY_YIELD_ROUNDS: u32 = 32;

/// The thread outside the pool that waits for the work it submitted
/// (`install`, a scope, a task's `join`), counted beside the workers when
/// the idle workers' and the waiter's default waits choose how to poll
/// (module doc, "Waiting outside the pool").
const OUTSIDE_WAITER: usize = 1;

/// What the workers share.
#[derive(Debug)]
pub(crate) struct Inner {
    /// Work submitted from outside the pool and not handed to an idle
    /// worker.
    injector: Injector<Job>,
    /// The far ends of the workers' deques, in worker order.
    stealers: Box<[Stealer<Job>]>,
    /// Set once, by the pool's drop. SeqCst: read in the idle re-check.
    shutdown: AtomicBool,
    idle: Idle<Mail>,
    places: Vec<WorkerPlace>,
    cores: Range<usize>,
    siblings: Range<usize>,
    extras: Range<usize>,
    policy: Policy,
    /// How a thread outside the pool waits for the work it submitted
    /// (`install`, `scope`, a task's `join`): the pool's policy when one
    /// was given; by default `adapt/b`, whose limit follows how long this
    /// pool's work takes, while the workers fit on the CPUs (polling by
    /// `yield` once the waiter beside them does not), and the static
    /// limit by `yield` once they outnumber them (module doc, "Waiting
    /// outside the pool").
    outside_policy: Policy,
    /// Whether the workers outnumber the CPUs the process may use under
    /// the default waiting: their polling loops then yield instead of
    /// spinning ([`Inner::pause`]). An explicit policy is followed as given.
    crowded: bool,
    /// Whether the pool waits the default way (no policy was given): only
    /// then does an idle worker search by yielding on a busy machine
    /// ([`Inner::searches_by_yield`]).
    default_waiting: bool,
    gate: UtilizationGate,
    /// Per worker, the event count it sleeps on while its `join`'s other
    /// half runs elsewhere.
    join_words: JoinWords,
    /// Per worker, jobs that must run on it (module doc, "Work for one
    /// worker").
    inboxes: Box<[Injector<Job>]>,
}

/// A worker thread's own state, on its stack for the thread's life.
pub(crate) struct WorkerCtx {
    pool: *const Inner,
    index: usize,
    deque: Worker<Job>,
}

impl WorkerCtx {
    /// The worker's number.
    pub(crate) fn index(&self) -> usize {
        self.index
    }
}

thread_local! {
    /// The current thread's worker state (null if it is no worker).
    static CURRENT: Cell<*const WorkerCtx> = const { Cell::new(std::ptr::null()) };
}

/// Now, in ns on the cycle clock (the gate's clock).
fn now_ns() -> u64 {
    let c = cycle_clock();
    c.ticks_to_ns(c.now()) as u64
}

impl Inner {
    /// The calling thread's worker state, when it is one of this pool's
    /// workers.
    #[inline]
    pub(crate) fn current(&self) -> Option<&WorkerCtx> {
        let p = CURRENT.with(Cell::get);
        // SAFETY: CURRENT is non-null only on a worker thread, while its
        // WorkerCtx lives on that thread's stack (set and cleared around
        // worker_main); the reference does not leave this thread's call.
        let ctx = unsafe { p.as_ref() }?;
        std::ptr::eq(ctx.pool, self).then_some(ctx)
    }

    /// Whether the calling thread is one of this pool's workers.
    pub(crate) fn is_current_worker(&self) -> bool {
        self.current().is_some()
    }

    /// Runs `f` with the pool whose worker the calling thread is, or, on
    /// a thread that is no pool's worker, with `otherwise`'s (the free
    /// functions of [`super::global`]).
    pub(crate) fn with_current<R>(
        otherwise: impl FnOnce() -> &'static Inner,
        f: impl FnOnce(&Inner) -> R,
    ) -> R {
        let p = CURRENT.with(Cell::get);
        // SAFETY: CURRENT is non-null only on a worker thread, while its
        // WorkerCtx lives on that thread's stack; the reference does not
        // leave this call.
        match unsafe { p.as_ref() } {
            // SAFETY: a worker's pool outlives the worker, which is running
            // this call.
            Some(ctx) => f(unsafe { &*ctx.pool }),
            None => f(otherwise()),
        }
    }

    /// Who waits for work that the calling thread submits here and must
    /// wait for (a scope's tasks): a worker of this pool or of another one
    /// waits as that worker, in its own pool, running that pool's work
    /// meanwhile (so that a share of a broadcast sent to it there still
    /// runs); any other thread as this pool's outside owner. Returns the
    /// waiter's pool and its owner number there.
    pub(crate) fn waiter(&self) -> (*const Inner, usize) {
        let p = CURRENT.with(Cell::get);
        // SAFETY: CURRENT is non-null only on a worker thread, while its
        // WorkerCtx lives on that thread's stack; the reference does not
        // leave this call.
        match unsafe { p.as_ref() } {
            Some(ctx) => (ctx.pool, ctx.index),
            None => (self, self.outside_owner()),
        }
    }

    /// The number of workers.
    pub(crate) fn num_workers(&self) -> usize {
        self.inboxes.len()
    }

    /// The calling thread's number among this pool's workers.
    pub(crate) fn current_index(&self) -> Option<usize> {
        self.current().map(WorkerCtx::index)
    }

    /// Runs `job` on worker `i` (module doc, "Work for one worker"): into
    /// its inbox, then a wake-up if it is idle.
    pub(crate) fn send_to(&self, i: usize, job: Job) {
        self.inboxes[i].push(job);
        // The Dekker pattern, as in `inject`: the push, this fence, then
        // the look at worker i's idle bit; the worker sets its bit, fences,
        // then looks at its inbox (`has_mail`).
        fence(Ordering::SeqCst);
        self.idle.wake_one_to_look(i..i + 1);
        // A worker waiting for work of its own (a join, a scope) runs its
        // inbox while it waits: wake it if it sleeps (`JoinWords::wait`
        // reads its count before it looks).
        self.join_words.signal(i);
    }

    /// A job from worker `me`'s inbox.
    fn take_mail(&self, me: &WorkerCtx) -> Option<Job> {
        let inbox = &self.inboxes[me.index];
        loop {
            match inbox.steal() {
                Steal::Success(job) => return Some(job),
                Steal::Empty => return None,
                Steal::Retry => {}
            }
        }
    }

    /// Whether worker `me`'s inbox holds a job (the idle re-check).
    fn has_mail(&self, me: &WorkerCtx) -> bool {
        // The Dekker read after the caller set its idle bit (`send_to`).
        fence(Ordering::SeqCst);
        !self.inboxes[me.index].is_empty()
    }

    /// Runs `job` on a worker: from a worker, through its own deque; from
    /// outside, handed to an idle worker or through the injector (module
    /// doc, "How a task reaches a worker").
    pub(crate) fn submit(&self, job: Job) {
        match self.current() {
            Some(me) => self.push_local(me, job),
            None => self.inject(job),
        }
    }

    /// Pushes `job` on worker `me`'s deque and wakes an idle worker to
    /// steal it, if the idle set shows one. A worker running a payload
    /// handed to it still has its idle bit set ([`Idle::mark_busy`]); its
    /// first push clears it, so that its later pushes, and other workers',
    /// do not try to claim it. Inlined into `join`, which is generic and
    /// built in the caller's crate: the job stays in registers.
    #[inline]
    pub(crate) fn push_local(&self, me: &WorkerCtx, job: Job) {
        me.deque.push(job);
        if self.idle.any_idle() {
            self.idle.mark_busy(me.index);
            self.wake_a_thief();
        }
    }

    /// Wakes one idle worker to look for work, cores and extras first,
    /// siblings when the gate is open; returns at once when the idle set
    /// (one load per 64 workers) shows none.
    fn wake_a_thief(&self) {
        if !self.idle.any_idle() {
            return;
        }
        if self.idle.wake_one_to_look(self.cores.clone()).is_none()
            && self.idle.wake_one_to_look(self.extras.clone()).is_none()
            && !self.siblings.is_empty()
            && self.gate.is_open(now_ns())
        {
            self.idle.wake_one_to_look(self.siblings.clone());
        }
    }

    /// Work from outside the pool: an idle worker, else the injector.
    fn inject(&self, job: Job) {
        let mail = Mail { job, spill: false };
        let mail = match self.idle.hand_to_idle(self.cores.clone(), mail) {
            Ok(_) => return,
            Err(mail) => mail,
        };
        let mut mail = match self.idle.hand_to_idle(self.extras.clone(), mail) {
            Ok(_) => return,
            Err(mail) => mail,
        };
        if !self.siblings.is_empty() && self.gate.is_open(now_ns()) {
            mail.spill = true;
            mail = match self.idle.hand_to_idle(self.siblings.clone(), mail) {
                Ok(_) => return,
                Err(mail) => mail,
            };
        }
        self.injector.push(mail.job);
        // The Dekker pattern of the idle protocol: the push, then this
        // fence, then the look at the idle set; a worker going idle sets
        // its bit, fences, then looks at the injector. One of the two sees
        // the other's write.
        fence(Ordering::SeqCst);
        self.wake_a_thief();
    }

    /// The next job for worker `me`: its own newest, else the oldest in
    /// its inbox, else (when `take_shared`) a batch from the injector,
    /// else one stolen from another worker.
    fn find_work(&self, me: &WorkerCtx, take_shared: bool) -> Option<Job> {
        if let Some(job) = me.deque.pop() {
            return Some(job);
        }
        if let Some(job) = self.take_mail(me) {
            return Some(job);
        }
        if take_shared {
            self.steal(me)
        } else {
            None
        }
    }

    /// A job from the injector or another worker's deque.
    fn steal(&self, me: &WorkerCtx) -> Option<Job> {
        let n = self.stealers.len();
        loop {
            let mut retry = false;
            match self.injector.steal_batch_and_pop(&me.deque) {
                Steal::Success(job) => return Some(job),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            for k in 1..n {
                match self.stealers[(me.index + k) % n].steal() {
                    Steal::Success(job) => return Some(job),
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Whether the injector or any deque holds work (the idle re-check).
    fn has_shared_work(&self) -> bool {
        // The Dekker read after the caller set its idle bit (see `inject`).
        fence(Ordering::SeqCst);
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// Work of `owner` (a worker's number, or [`Inner::outside_owner`])
    /// finished and wrote its frame's word for the last time: wake the
    /// owner ([`JoinWords::signal`]).
    pub(crate) fn signal_owner(&self, owner: usize) {
        self.join_words.signal(owner);
    }

    /// The owner number of threads outside the pool.
    pub(crate) fn outside_owner(&self) -> usize {
        self.join_words.outside()
    }

    /// The calling thread waits until `word` holds `target`: a worker
    /// runs other work meanwhile, and sleeps on its own join word; a
    /// thread outside the pool sleeps on the outside owners' word
    /// ([`JoinWords::wait`]).
    pub(crate) fn wait_for_owned(&self, word: &AtomicU32, target: u32) {
        match self.current() {
            Some(me) => self.wait_for_stack_job(me, word, target),
            None => self.join_words.wait(
                self.outside_owner(),
                word,
                target,
                &self.outside_policy,
                || false,
            ),
        }
    }

    /// Worker `me` waits until `word` holds `target`, running other work
    /// meanwhile ([`JoinWords::wait`]). Its polling phase, as long as the
    /// pool's policy polls, is a search: it looks at `word` and tries to
    /// steal, in turn, so that work the other workers push while it waits
    /// (the rest of its own job's subtree, often) is taken at once; then
    /// it sleeps on its join word.
    pub(crate) fn wait_for_stack_job(&self, me: &WorkerCtx, word: &AtomicU32, target: u32) {
        let budget = self.policy.poll_budget();
        let help = || {
            if let Some(job) = self.find_work(me, true) {
                self.run(job);
                return true;
            }
            if !self.polls_while_waiting(&budget) {
                return false;
            }
            let end = budget.poll_deadline(Deadline::NEVER);
            // Acquire: pairs with the runner's SeqCst write (JoinWords).
            while word.load(Ordering::Acquire) != target && !end.has_passed() {
                if let Some(job) = self.steal(me) {
                    self.run(job);
                    return true;
                }
                self.pause();
            }
            false
        };
        // The polling is done in `help`: the wait blocks at once.
        self.join_words
            .wait(me.index, word, target, &Policy::always_block(), help);
    }

    /// Pops worker `me`'s newest job (what `join` takes back).
    #[inline]
    pub(crate) fn pop_local(&self, me: &WorkerCtx) -> Option<Job> {
        me.deque.pop()
    }

    /// Runs a job taken from a deque or the injector. In a pool with SMT
    /// siblings every queued job is work a sibling would take (the spill,
    /// [`super::gate`]) and is timed for the gate.
    pub(crate) fn run(&self, job: Job) {
        self.run_timed(job, !self.siblings.is_empty());
    }

    /// Runs a job on the calling thread, timed for the gate if `spill`.
    fn run_timed(&self, job: Job, spill: bool) {
        if spill {
            let t0 = now_ns();
            job.run();
            let t1 = now_ns();
            self.gate.record(t1.saturating_sub(t0), t1);
        } else {
            job.run();
        }
    }

    /// Waits until `ready(word)`; a worker of this pool runs other work
    /// meanwhile (module doc, "Progress"), and, as long as the pool's
    /// policy polls, searches for more (looks at `word` and tries to
    /// steal, in turn) before it sleeps on `word`.
    pub(crate) fn wait_helping(&self, word: WaitWordRef<'_>, ready: impl Fn(u32) -> bool) {
        let Some(me) = self.current() else {
            word.wait_until(&self.policy, Deadline::NEVER, ready);
            return;
        };
        let budget = self.policy.poll_budget();
        // The polling phase's end, from the first look that found no work.
        let mut end = None;
        // Acquire: pairs with the waker's SeqCst change of the word.
        while !ready(word.value().load(Ordering::Acquire)) {
            if let Some(job) = self.find_work(me, true) {
                self.run(job);
                end = None;
                continue;
            }
            if !self.polls_while_waiting(&budget) {
                break;
            }
            if end
                .get_or_insert_with(|| budget.poll_deadline(Deadline::NEVER))
                .has_passed()
            {
                break;
            }
            self.pause();
        }
        // The polling is done above: block at once.
        word.wait_until(&Policy::always_block(), Deadline::NEVER, ready);
    }

    /// Looks for work a little longer before going idle: while a worker
    /// searches, its idle bit is clear, so a worker pushing short tasks
    /// does not claim and wake it for each one; it steals them by itself.
    fn search(&self, me: &WorkerCtx) -> Option<Job> {
        let end = Deadline::after(std::time::Duration::from_nanos(SEARCH_NS));
        loop {
            if let Some(job) = self.steal(me) {
                return Some(job);
            }
            if end.has_passed() {
                return None;
            }
            self.pause();
        }
    }

    /// Whether a worker waiting for its own work (a `join`'s other half,
    /// a scope's tasks) that found nothing to run polls before it sleeps:
    /// while the pool's policy polls, and not once the workers outnumber
    /// the CPUs, where the worker it waits for, or one with work to share,
    /// may need the CPU it would hold, even polling by yield (measured
    /// with `waitwise peers --only pool`, 8 workers on 2 CPUs).
    #[inline]
    fn polls_while_waiting(&self, budget: &PollBudget) -> bool {
        budget.polls() && !self.crowded
    }

    /// One pause of a polling loop (a search for work, a wait for a
    /// `join`'s other half): a spin hint while the workers fit on the CPUs
    /// the process may use; a yield once they outnumber them, as rayon's
    /// searching workers yield: a worker that spins holds a CPU that the
    /// worker it waits for, or one with work to share, may need.
    #[inline]
    fn pause(&self) {
        if self.crowded {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }

    /// Whether a worker about to go idle first searches by yielding
    /// (module doc, "A busy machine"): the pool waits the default way, and
    /// other programs want the CPUs. The machine's demand as a wait that
    /// starts takes it ([`idle_extension::demand_at_wait_start`]).
    #[inline]
    fn searches_by_yield(&self) -> bool {
        self.default_waiting
            && other_programs_want_cpus(
                idle_extension::demand_at_wait_start(),
                idle_extension::process_uses_most_cpus(),
            )
    }

    /// Up to [`BUSY_YIELD_ROUNDS`] times: a yield, then a look for work
    /// (worker `me`'s deque and inbox, the injector, the other deques).
    /// Ends without work at the first yield that came back late (another
    /// thread wanted this CPU) or at shutdown.
    fn search_by_yield(&self, me: &WorkerCtx) -> Option<Job> {
        let clock = cycle_clock();
        for _ in 0..BUSY_YIELD_ROUNDS {
            let before = clock.now();
            std::thread::yield_now();
            let took_ns = clock.ticks_to_ns(clock.now().saturating_sub(before)) as u64;
            if let Some(job) = self.find_work(me, true) {
                return Some(job);
            }
            // SeqCst: as in the idle re-check; a late look costs a round.
            if CpuDemand::of_yield(took_ns) == CpuDemand::Busy
                || self.shutdown.load(Ordering::SeqCst)
            {
                return None;
            }
        }
        None
    }

    fn worker_main(&self, me: &WorkerCtx) {
        let tier = self.places[me.index].tier;
        loop {
            let parked = tier == Tier::Sibling && !self.gate.is_open(now_ns());
            while let Some(job) = self.find_work(me, !parked) {
                self.run(job);
            }
            if !parked {
                if let Some(job) = self.search(me) {
                    self.run(job);
                    continue;
                }
                if self.searches_by_yield() {
                    if let Some(job) = self.search_by_yield(me) {
                        self.run(job);
                        continue;
                    }
                }
            }
            if self.shutdown.load(Ordering::SeqCst) {
                return;
            }
            let (policy, takes_shared) = if parked {
                // Parked: blocked, and not looking at shared work.
                (Policy::always_block(), false)
            } else {
                (self.policy, true)
            };
            let recheck = || {
                self.shutdown.load(Ordering::SeqCst)
                    || self.has_mail(me)
                    || (takes_shared && self.has_shared_work())
            };
            match self.idle.idle_wait(me.index, &policy, recheck) {
                Wake::Payload(mail) => {
                    self.run_timed(mail.job, mail.spill);
                    self.idle.mark_busy(me.index);
                }
                Wake::Look => {}
            }
        }
    }
}

/// Whether other programs want the CPUs: more threads are runnable than
/// the machine has CPUs (`demand`), and the process did not use most of
/// its CPUs lately (`own_load_is_most`), so most of those threads are not
/// its own.
fn other_programs_want_cpus(demand: CpuDemand, own_load_is_most: bool) -> bool {
    demand == CpuDemand::Busy && !own_load_is_most
}

/// A small pool of worker threads for helper/worker jobs and short tasks:
/// [`spawn`](ThreadPool::spawn) a task and [`join`](super::Task::join)
/// it, run borrowed closures in a [`scope`](ThreadPool::scope), or
/// [`join`](ThreadPool::join) two closures.
///
/// Idle workers wait through the pool's [`Policy`] (by default the
/// producer-consumer default, `adapt/b`: each worker's idle waits learn
/// how long they last and what a block costs it, and poll at most twice
/// that cost; polling by yield once the workers and one thread waiting
/// outside the pool outnumber the CPUs the process may use), so a task
/// submitted to a worker that is still polling reaches it with one store,
/// and an idle pool soon burns no CPU.
/// Workers are pinned one per core first and to SMT siblings last
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
        let deques: Vec<Worker<Job>> = (0..n).map(|_| Worker::new_lifo()).collect();
        // The default idle policy, the outside waiter's too while the
        // workers alone fit on the CPUs (comment below).
        let workers_crowd = crowding::is_oversubscribed(n);
        let idle = crowding::for_threads(
            Policy::default_for(SyncKind::ProducerConsumer),
            n + OUTSIDE_WAITER,
        );
        let inner = Arc::new(Inner {
            injector: Injector::new(),
            stealers: deques.iter().map(Worker::stealer).collect(),
            shutdown: AtomicBool::new(false),
            idle: Idle::new(n),
            cores: 0..c,
            siblings: c..c + s,
            extras: c + s..n,
            places,
            // The producer-consumer default (`adapt/b`), polling by yield
            // once the workers and a thread waiting outside outnumber the
            // CPUs (crowding, as the other primitives' defaults; module
            // doc, "Waiting outside the pool"); an explicit policy as
            // given. The outside waiter's: `adapt/b` as well, and the
            // static limit by yield once the workers alone outnumber the
            // CPUs.
            policy: self.policy.unwrap_or(idle),
            outside_policy: self.policy.unwrap_or_else(|| {
                if workers_crowd {
                    crowding::for_threads(Policy::for_kind(SyncKind::ProducerConsumer), n)
                } else {
                    idle
                }
            }),
            crowded: self.policy.is_none() && workers_crowd,
            default_waiting: self.policy.is_none(),
            gate: UtilizationGate::new(self.pair_throughput, now_ns()),
            join_words: JoinWords::new(n),
            inboxes: (0..n).map(|_| Injector::new()).collect(),
        });
        let mut pool = ThreadPool {
            inner,
            threads: Vec::with_capacity(n),
        };
        for (i, deque) in deques.into_iter().enumerate() {
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
                    let me = WorkerCtx {
                        pool: Arc::as_ptr(&inner),
                        index: i,
                        deque,
                    };
                    CURRENT.with(|c| c.set(&me));
                    inner.worker_main(&me);
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

    /// The policy a thread outside the pool waits with for work it
    /// submitted (module doc, "Waiting outside the pool").
    pub fn outside_policy(&self) -> &Policy {
        &self.inner.outside_policy
    }

    /// The SMT gate's threshold `u*` (module [`gate`](super::gate)).
    pub fn sibling_threshold(&self) -> f64 {
        self.inner.gate.threshold()
    }

    /// Whether any worker waits idle now (a snapshot, for tests and
    /// benchmarks that wait for an idle pool).
    pub fn any_idle(&self) -> bool {
        (0..self.workers()).any(|i| self.inner.idle.is_idle(i))
    }

    /// Whether every worker waits idle now (a snapshot).
    pub fn all_idle(&self) -> bool {
        (0..self.workers()).all(|i| self.inner.idle.is_idle(i))
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

// A handed-over job fits beside a worker's state word and sleeper count in
// one 64-byte line (super::idle::Slot: the mailbox follows their 8 bytes at
// its own alignment).
const _: () =
    assert!(8usize.next_multiple_of(align_of::<Option<Mail>>()) + size_of::<Option<Mail>>() <= 64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_programs_want_the_cpus_only_on_a_busy_machine_not_crowded_by_the_process() {
        assert!(other_programs_want_cpus(CpuDemand::Busy, false));
        assert!(!other_programs_want_cpus(CpuDemand::Busy, true));
        for own in [false, true] {
            assert!(!other_programs_want_cpus(CpuDemand::Idle, own));
            assert!(!other_programs_want_cpus(CpuDemand::Unknown, own));
        }
    }
}
