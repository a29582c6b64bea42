//! The discrete-event core: a binary-heap event queue and the event handlers.
//!
//! Two kinds of event drive everything: a processor's earliest job finishing, and a
//! polling thread's limit expiring. Events made stale by a later change carry an old
//! epoch and are skipped (not counted). Ties are broken by insertion order, so a run is a pure
//! function of its [`SimConfig`] (seeded streams: one per thread for work times, one for
//! lock choice, one for the randomized policy's limits).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::adaptive::{self, Learner};
use crate::algorithm::WaitingAlgorithm;
use crate::randomized;
use crate::rng::Rng;

use super::config::SimConfig;
use super::machine::{Job, Processor, Task, Thread, ThreadState};
use super::report::SimReport;
use super::workload::{Step, Workload};

#[derive(Debug, Clone, Copy)]
enum EventKind {
    /// The processor's earliest job finishes (if `epoch` is still current).
    JobDone { proc: u32, epoch: u64 },
    /// The polling phase number `epoch` of `thread` reached its limit.
    PollLimit { thread: u32, epoch: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Event {
    time: f64,
    seq: u64,
    kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    /// Reversed, so the max-heap pops the earliest event (then the first scheduled).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then(other.seq.cmp(&self.seq))
    }
}

/// Min-heap of timed events.
struct EventQueue {
    heap: BinaryHeap<Event>,
    seq: u64,
}

impl EventQueue {
    fn push(&mut self, time: f64, kind: EventKind) {
        self.seq += 1;
        self.heap.push(Event {
            time,
            seq: self.seq,
            kind,
        });
    }
}

/// One simulation in progress.
pub(crate) struct Sim<'a> {
    cfg: &'a SimConfig,
    now: f64,
    queue: EventQueue,
    procs: Vec<Processor>,
    threads: Vec<Thread>,
    workload: Workload,
    policy_rng: Rng,
    sync_rng: Rng,
    finished: u32,
    events: u64,
    /// Processors whose completion event must be re-armed.
    dirty: Vec<u32>,
    /// Threads being woken (spare buffer swapped with the workload's).
    wake_buffer: Vec<u32>,
    wait_cycles: f64,
    blocks: u64,
    timeouts: u64,
    waits: u64,
    /// `adapt/b`'s summary: one for the workload (its waits are all on the
    /// workload's synchronization objects, which share it).
    learner: Learner,
    /// When each thread's current wait began, cycles (for `adapt/b`).
    wait_started: Vec<f64>,
    /// The `adapt/b` arm each thread's current wait runs.
    wait_arm: Vec<usize>,
}

impl<'a> Sim<'a> {
    /// Sets up the machine: thread `i` on processor `i mod P`; the first `C` threads of
    /// each processor loaded and about to run, the rest in its ready queue.
    pub(crate) fn new(cfg: &'a SimConfig) -> Self {
        let p = cfg.machine.processors;
        let beta = cfg.algorithm.beta();
        let procs = (0..p)
            // A poller's weight (f - 1) / beta, as Processor::new's 1 / beta'.
            .map(|_| {
                let w = super::interference::poll_weight(cfg.machine.poll_slowdown, beta);
                Processor::new(cfg.machine.contexts, 1.0 / w)
            })
            .collect();
        let threads = (0..cfg.threads)
            .map(|i| Thread {
                proc: i % p,
                state: ThreadState::Ready,
                epoch: 0,
                limit_is_timeout: false,
                fresh: true,
                rng: Rng::stream(cfg.seed, u64::from(i)),
            })
            .collect();
        Self {
            cfg,
            now: 0.0,
            queue: EventQueue {
                heap: BinaryHeap::with_capacity(4 * cfg.threads as usize),
                seq: 0,
            },
            procs,
            threads,
            workload: Workload::new(&cfg.workload, cfg.threads),
            policy_rng: Rng::stream(cfg.seed, u64::MAX),
            sync_rng: Rng::stream(cfg.seed, u64::MAX - 1),
            finished: 0,
            events: 0,
            dirty: Vec::new(),
            wake_buffer: Vec::new(),
            wait_cycles: 0.0,
            blocks: 0,
            timeouts: 0,
            waits: 0,
            learner: Learner::new(),
            wait_started: vec![0.0; cfg.threads as usize],
            wait_arm: vec![adaptive::START_ARM; cfg.threads as usize],
        }
    }

    /// Runs to completion (or deadlock, or the event limit) and reports.
    pub(crate) fn run(mut self) -> SimReport {
        for th in 0..self.cfg.threads {
            let p = self.threads[th as usize].proc as usize;
            if self.procs[p].free_contexts > 0 {
                self.procs[p].free_contexts -= 1;
                self.start_job(Task::Run(th));
            } else {
                self.procs[p].ready.push_back(th);
            }
        }
        self.flush();
        let mut runtime = 0.0;
        while self.finished < self.cfg.threads && self.events < self.cfg.max_events {
            let Some(event) = self.queue.heap.pop() else {
                break;
            };
            self.now = event.time;
            let live = match event.kind {
                EventKind::JobDone { proc, epoch } => self.procs[proc as usize].epoch == epoch,
                EventKind::PollLimit { thread, epoch } => {
                    let t = &self.threads[thread as usize];
                    t.epoch == epoch && t.is_polling()
                }
            };
            if !live {
                continue; // superseded by a later reschedule, or the wait already ended
            }
            self.events += 1;
            match event.kind {
                EventKind::JobDone { proc, .. } => self.job_done(proc),
                EventKind::PollLimit { thread, .. } => self.poll_limit(thread),
            }
            self.process_wakes();
            self.flush();
            if self.finished == self.cfg.threads {
                runtime = self.now;
            }
        }
        let completed = self.finished == self.cfg.threads;
        if !completed {
            runtime = self.now;
        }
        let capacity = f64::from(self.cfg.machine.processors) * runtime;
        SimReport {
            algorithm: self.cfg.algorithm.name(),
            workload: self.cfg.workload.kind.name().to_owned(),
            threads: self.cfg.threads,
            matched: self.cfg.is_matched(),
            completed,
            runtime_cycles: runtime,
            normalized_runtime: f64::NAN,
            waiting_overhead: if capacity > 0.0 {
                self.wait_cycles / capacity
            } else {
                0.0
            },
            blocks: self.blocks,
            timeouts: self.timeouts,
            waits: self.waits,
            sync_events: self.workload.sync_events,
            events: self.events,
        }
    }

    /// Brings processor `p` up to now, charging polling cost.
    fn advance(&mut self, p: u32) {
        self.wait_cycles += self.procs[p as usize].advance(self.now);
    }

    /// Notes that processor `p`'s sharing changed; its completion event is re-armed once,
    /// at the end of the current event (a barrier release touches a processor many times).
    fn reschedule(&mut self, p: u32) {
        let proc = &mut self.procs[p as usize];
        if !proc.dirty {
            proc.dirty = true;
            self.dirty.push(p);
        }
    }

    /// Re-arms the completion events of the processors touched by this event.
    fn flush(&mut self) {
        for i in 0..self.dirty.len() {
            let p = self.dirty[i];
            let proc = &mut self.procs[p as usize];
            proc.dirty = false;
            proc.epoch += 1;
            if let Some(t) = proc.next_completion(self.now) {
                let epoch = proc.epoch;
                self.queue.push(t, EventKind::JobDone { proc: p, epoch });
            }
        }
        self.dirty.clear();
    }

    /// Gives the thread of `task` a job on its processor.
    fn start_job(&mut self, task: Task) {
        let (Task::Run(th) | Task::Resume(th) | Task::Unload(th) | Task::Load(th)) = task;
        let m = &self.cfg.machine;
        let t = &mut self.threads[th as usize];
        let p = t.proc;
        let remaining = match task {
            Task::Run(_) => {
                t.state = ThreadState::Active;
                t.fresh = false;
                m.switch_cost + self.workload.next_segment(th, &mut t.rng)
            }
            Task::Resume(_) => {
                t.state = ThreadState::Active;
                m.switch_cost
            }
            Task::Unload(_) | Task::Load(_) => {
                self.wait_cycles += 0.5 * m.block_cost;
                0.5 * m.block_cost
            }
        };
        self.advance(p);
        self.procs[p as usize].jobs.push(Job { task, remaining });
        self.reschedule(p);
    }

    fn job_done(&mut self, p: u32) {
        self.advance(p);
        let Some(job) = self.procs[p as usize].pop_finished() else {
            return;
        };
        self.reschedule(p);
        match job.task {
            Task::Run(th) => {
                let threads = &self.threads;
                let step = self.workload.after_compute(th, &mut self.sync_rng, &|w| {
                    threads[w as usize].is_polling()
                });
                self.step(th, step);
            }
            Task::Resume(th) => {
                let step = self.workload.resume(th);
                self.step(th, step);
            }
            Task::Unload(th) => {
                self.blocks += 1;
                self.procs[p as usize].free_contexts += 1;
                let woken =
                    self.threads[th as usize].state == ThreadState::Unloading { woken: true };
                self.threads[th as usize].state = ThreadState::Blocked;
                if woken {
                    self.make_ready(th);
                }
                self.load_ready(p);
            }
            Task::Load(th) => {
                // A thread loaded for the first time starts computing; any other was
                // woken and re-checks its condition.
                let step = if self.threads[th as usize].fresh {
                    Step::Continue
                } else {
                    self.workload.resume(th)
                };
                self.step(th, step);
            }
        }
    }

    /// Acts on the workload's answer for loaded thread `th`.
    fn step(&mut self, th: u32, step: Step) {
        match step {
            Step::Continue => self.start_job(Task::Run(th)),
            Step::Finished => {
                let t = &mut self.threads[th as usize];
                t.state = ThreadState::Done;
                let p = t.proc;
                self.finished += 1;
                self.procs[p as usize].free_contexts += 1;
                self.load_ready(p);
            }
            Step::Wait => self.start_wait(th),
        }
    }

    /// The polling limit of the next wait, cycles (0: block at once), and whether it is
    /// the deadlock timeout standing in for an infinite limit.
    fn poll_limit_cycles(&mut self, th: u32) -> (f64, bool) {
        let b = self.cfg.machine.block_cost;
        let length = match self.cfg.algorithm {
            WaitingAlgorithm::AlwaysBlock => 0.0,
            WaitingAlgorithm::AlwaysSpin { timeout } => timeout.unwrap_or(f64::INFINITY),
            WaitingAlgorithm::TwoPhase { alpha } => alpha * b,
            // Polling phase *length* is alpha beta B for a polling *cost* of alpha B.
            WaitingAlgorithm::SwitchSpinTwoPhase { alpha, beta } => alpha * beta * b,
            WaitingAlgorithm::Randomized => randomized::sample_poll_limit(&mut self.policy_rng, b),
            WaitingAlgorithm::Adaptive => {
                let arm = self.learner.begin();
                self.wait_arm[th as usize] = arm;
                adaptive::sample_poll_limit(arm, &mut self.policy_rng, b)
            }
        };
        match (length.is_infinite(), self.cfg.deadlock_timeout) {
            (true, Some(t)) => (t, true),
            _ => (length, false),
        }
    }

    /// Loaded thread `th` must wait.
    fn start_wait(&mut self, th: u32) {
        self.waits += 1;
        self.wait_started[th as usize] = self.now;
        let (limit, is_timeout) = self.poll_limit_cycles(th);
        if limit <= 0.0 {
            self.threads[th as usize].state = ThreadState::Unloading { woken: false };
            self.start_job(Task::Unload(th));
            return;
        }
        let t = &mut self.threads[th as usize];
        let p = t.proc;
        t.state = ThreadState::Polling;
        t.epoch = t.epoch.wrapping_add(1);
        t.limit_is_timeout = is_timeout;
        if limit.is_finite() {
            let epoch = t.epoch;
            self.queue
                .push(self.now + limit, EventKind::PollLimit { thread: th, epoch });
        }
        self.advance(p);
        self.procs[p as usize].pollers += 1;
        self.reschedule(p);
    }

    /// Ends thread `th`'s polling phase now.
    fn stop_polling(&mut self, th: u32) {
        let t = &mut self.threads[th as usize];
        t.epoch = t.epoch.wrapping_add(1);
        let p = t.proc;
        self.advance(p);
        self.procs[p as usize].pollers -= 1;
        self.reschedule(p);
    }

    fn poll_limit(&mut self, th: u32) {
        if self.threads[th as usize].limit_is_timeout {
            self.timeouts += 1;
        }
        self.stop_polling(th);
        self.threads[th as usize].state = ThreadState::Unloading { woken: false };
        self.start_job(Task::Unload(th));
    }

    fn make_ready(&mut self, th: u32) {
        let t = &mut self.threads[th as usize];
        t.state = ThreadState::Ready;
        let p = t.proc;
        self.procs[p as usize].ready.push_back(th);
        self.load_ready(p);
    }

    /// Loads ready threads into free contexts.
    fn load_ready(&mut self, p: u32) {
        while self.procs[p as usize].free_contexts > 0 {
            let Some(th) = self.procs[p as usize].ready.pop_front() else {
                break;
            };
            self.procs[p as usize].free_contexts -= 1;
            self.start_job(Task::Load(th));
        }
    }

    fn process_wakes(&mut self) {
        while !self.workload.wakes.is_empty() {
            // Swap with a spare buffer: no allocation per event.
            std::mem::swap(&mut self.workload.wakes, &mut self.wake_buffer);
            for i in 0..self.wake_buffer.len() {
                self.wake(self.wake_buffer[i]);
            }
            self.wake_buffer.clear();
        }
    }

    fn wake(&mut self, th: u32) {
        let state = self.threads[th as usize].state;
        let first_wake = matches!(
            state,
            ThreadState::Polling | ThreadState::Unloading { woken: false } | ThreadState::Blocked
        );
        if first_wake && self.cfg.algorithm == WaitingAlgorithm::Adaptive {
            // The wait's condition holds now: its length is known exactly.
            let t = self.now - self.wait_started[th as usize];
            let arm = self.wait_arm[th as usize];
            self.learner.finish(arm, t, self.cfg.machine.block_cost);
        }
        match state {
            ThreadState::Polling => {
                self.stop_polling(th);
                self.start_job(Task::Resume(th));
            }
            ThreadState::Unloading { .. } => {
                self.threads[th as usize].state = ThreadState::Unloading { woken: true };
            }
            ThreadState::Blocked => self.make_ready(th),
            ThreadState::Active | ThreadState::Ready | ThreadState::Done => {}
        }
    }
}
