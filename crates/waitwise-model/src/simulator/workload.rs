//! Synchronization objects of the simulated program: what happens at each sync point.
//!
//! The engine calls [`Workload::after_compute`] when a thread finishes a compute segment
//! and [`Workload::resume`] when a woken thread gets to run again; both answer with a
//! [`Step`] and leave the threads to wake in [`Workload::wakes`]. A wake only says "look
//! again": the woken thread re-checks its condition in `resume` (so a mutex waiter that
//! was woken while blocked retries the lock, futex-style).

use crate::distribution::WaitDistribution;
use crate::rng::Rng;

use super::config::{SyncKind, WorkloadConfig};

/// What a thread does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Condition satisfied: run the next compute segment.
    Continue,
    /// Condition not satisfied: wait (the engine applies the waiting algorithm).
    Wait,
    /// The thread has run all its iterations.
    Finished,
}

/// Barrier: a count and the list of waiters of the current episode.
struct Barrier {
    arrived: u32,
    generation: u64,
    /// Generation a waiting thread arrived in.
    arrived_in: Vec<u64>,
    waiters: Vec<u32>,
}

/// Ring of J-structure-like producer/consumer pairs.
struct ProducerConsumer {
    /// Iterations produced by each thread.
    produced: Vec<u32>,
    /// Threads waiting on each producer.
    waiting_on: Vec<Vec<u32>>,
}

/// Locks with FIFO waiter queues.
struct Mutexes {
    owner: Vec<Option<u32>>,
    queue: Vec<std::collections::VecDeque<u32>>,
    /// Lock each thread wants or holds.
    wants: Vec<u32>,
    /// Whether each thread is inside its critical section.
    in_critical: Vec<bool>,
}

enum Pattern {
    Barrier(Barrier),
    ProducerConsumer(ProducerConsumer),
    Mutex(Mutexes),
}

/// The program all threads run.
pub(crate) struct Workload {
    pattern: Pattern,
    work: WaitDistribution,
    critical_section: WaitDistribution,
    iterations: u32,
    /// Completed iterations per thread.
    done: Vec<u32>,
    /// Threads to wake after the last call.
    pub(crate) wakes: Vec<u32>,
    /// Synchronization operations so far.
    pub(crate) sync_events: u64,
}

impl Workload {
    pub(crate) fn new(cfg: &WorkloadConfig, threads: u32) -> Self {
        let n = threads as usize;
        let pattern = match cfg.kind {
            SyncKind::Barrier => Pattern::Barrier(Barrier {
                arrived: 0,
                generation: 0,
                arrived_in: vec![0; n],
                waiters: Vec::with_capacity(n),
            }),
            SyncKind::ProducerConsumer => Pattern::ProducerConsumer(ProducerConsumer {
                produced: vec![0; n],
                waiting_on: vec![Vec::new(); n],
            }),
            SyncKind::Mutex => Pattern::Mutex(Mutexes {
                owner: vec![None; cfg.locks as usize],
                queue: vec![std::collections::VecDeque::new(); cfg.locks as usize],
                wants: vec![0; n],
                in_critical: vec![false; n],
            }),
        };
        Self {
            pattern,
            work: cfg.work.clone(),
            critical_section: cfg.critical_section.clone(),
            iterations: cfg.iterations,
            done: vec![0; n],
            wakes: Vec::new(),
            sync_events: 0,
        }
    }

    /// Length of thread `th`'s next compute segment.
    pub(crate) fn next_segment(&self, th: u32, rng: &mut Rng) -> f64 {
        match &self.pattern {
            Pattern::Mutex(m) if m.in_critical[th as usize] => self.critical_section.sample(rng),
            _ => self.work.sample(rng),
        }
    }

    fn continue_or_finish(&self, th: u32) -> Step {
        if self.done[th as usize] >= self.iterations {
            Step::Finished
        } else {
            Step::Continue
        }
    }

    /// Thread `th` finished a compute segment; `polling(t)` tells whether thread `t` is
    /// waiting while loaded (so a lock can be handed to it without a reload).
    pub(crate) fn after_compute(
        &mut self,
        th: u32,
        rng: &mut Rng,
        polling: &dyn Fn(u32) -> bool,
    ) -> Step {
        let t = th as usize;
        let threads = self.done.len() as u32;
        match &mut self.pattern {
            Pattern::Barrier(b) => {
                self.sync_events += 1;
                self.done[t] += 1;
                b.arrived += 1;
                if b.arrived == threads {
                    b.arrived = 0;
                    b.generation += 1;
                    self.wakes.append(&mut b.waiters);
                    self.continue_or_finish(th)
                } else {
                    b.arrived_in[t] = b.generation;
                    b.waiters.push(th);
                    Step::Wait
                }
            }
            Pattern::ProducerConsumer(pc) => {
                self.sync_events += 1;
                self.done[t] += 1;
                pc.produced[t] = self.done[t];
                self.wakes.append(&mut pc.waiting_on[t]);
                self.resume(th)
            }
            Pattern::Mutex(m) => {
                self.sync_events += 1;
                if m.in_critical[t] {
                    // Release; hand the lock to the first waiter still loaded, else wake
                    // the first blocked waiter to retry.
                    m.in_critical[t] = false;
                    self.done[t] += 1;
                    let lock = m.wants[t] as usize;
                    m.owner[lock] = None;
                    if let Some(pos) = m.queue[lock].iter().position(|&w| polling(w)) {
                        let w = m.queue[lock].remove(pos).unwrap_or(th);
                        m.owner[lock] = Some(w);
                        self.wakes.push(w);
                    } else if let Some(w) = m.queue[lock].pop_front() {
                        self.wakes.push(w);
                    }
                    self.continue_or_finish(th)
                } else {
                    m.wants[t] = rng.below(m.owner.len() as u64) as u32;
                    self.resume(th)
                }
            }
        }
    }

    /// Thread `th` was woken (or is retrying): check its condition again.
    pub(crate) fn resume(&mut self, th: u32) -> Step {
        let t = th as usize;
        match &mut self.pattern {
            Pattern::Barrier(b) => {
                if b.generation > b.arrived_in[t] {
                    self.continue_or_finish(th)
                } else {
                    if !b.waiters.contains(&th) {
                        b.waiters.push(th);
                    }
                    Step::Wait
                }
            }
            Pattern::ProducerConsumer(pc) => {
                let n = pc.produced.len();
                let need = self.done[t];
                for neighbour in [(t + n - 1) % n, (t + 1) % n] {
                    if pc.produced[neighbour] < need {
                        pc.waiting_on[neighbour].push(th);
                        return Step::Wait;
                    }
                }
                self.sync_events += 2; // consumed both neighbours' values
                self.continue_or_finish(th)
            }
            Pattern::Mutex(m) => {
                let lock = m.wants[t] as usize;
                match m.owner[lock] {
                    Some(o) if o == th => {}
                    Some(_) => {
                        if !m.queue[lock].contains(&th) {
                            m.queue[lock].push_back(th);
                        }
                        return Step::Wait;
                    }
                    None => m.owner[lock] = Some(th),
                }
                m.in_critical[t] = true;
                Step::Continue
            }
        }
    }
}
