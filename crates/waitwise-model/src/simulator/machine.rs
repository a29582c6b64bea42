//! The machine: processors, their hardware contexts, and the threads' waiting states.
//!
//! A processor's `C` hardware contexts share its pipeline. We model the fine-grained
//! interleaving of block multithreading (Alewife switches contexts on every remote miss,
//! every few dozen cycles) as *processor sharing*: every job of the processor (a thread's
//! compute segment, an unload, a reload) progresses at rate `1 / W`, where `W` is the
//! total weight of what competes for the processor. Runnable threads that are not loaded
//! wait in the processor's ready queue for a free context. Threads never migrate (thread
//! `i` lives on processor `i mod P`), as in Alewife's statically partitioned benchmarks.
//!
//! Waiting mechanisms and their costs (Lim & Agarwal section 2):
//! * **poll** (spin `s` with `beta = 1`, switch-spin `Ss` with efficiency `beta`): the
//!   thread keeps its context and competes for the processor with weight `1 / beta`; the
//!   processor time it takes while other jobs are runnable is its waiting cost (an
//!   otherwise idle processor polls for free). Plain spinning taking a full share, rather
//!   than freezing the co-resident contexts, is how spin loops behave on SMT cores (cf.
//!   the UltraSPARC T2 spin-loop slides in `shared/seeds`); our choice.
//! * **block**: unload (a job of `B/2`, then the context is free), and when woken wait
//!   in the ready queue for a context and reload (a job of `B/2`).
//! * A woken poller notices at its next poll: a job of one context-switch cost.

use std::collections::VecDeque;

use crate::rng::Rng;

/// Work a processor executes on behalf of one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Task {
    /// The thread's next compute segment.
    Run(u32),
    /// A woken poller notices and re-checks its condition.
    Resume(u32),
    /// Saving a blocking thread's state (`B/2`).
    Unload(u32),
    /// Restoring a thread into a free context (`B/2`).
    Load(u32),
}

/// A task and the processor time it still needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job {
    pub(crate) task: Task,
    pub(crate) remaining: f64,
}

/// Where a thread is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ThreadState {
    /// Loaded, with a job on its processor.
    Active,
    /// Loaded and polling.
    Polling,
    /// Being unloaded; `woken` if the condition fired meanwhile.
    Unloading { woken: bool },
    /// Unloaded, waiting for a wake.
    Blocked,
    /// Runnable but unloaded: in the ready queue, or being loaded.
    Ready,
    /// All iterations done.
    Done,
}

/// One thread.
pub(crate) struct Thread {
    /// Home processor.
    pub(crate) proc: u32,
    pub(crate) state: ThreadState,
    /// Incremented whenever a polling phase starts or ends, so stale polling-limit events
    /// are ignored.
    pub(crate) epoch: u32,
    /// Whether the pending polling limit is the deadlock timeout.
    pub(crate) limit_is_timeout: bool,
    /// Never ran yet (an unmatched thread waiting for its first context).
    pub(crate) fresh: bool,
    /// This thread's own random stream (work times), so runs of different algorithms see
    /// the same work.
    pub(crate) rng: Rng,
}

impl Thread {
    /// Waiting while loaded (so a lock can be handed over without a reload).
    pub(crate) fn is_polling(&self) -> bool {
        self.state == ThreadState::Polling
    }
}

/// One processor.
pub(crate) struct Processor {
    /// Contexts not holding a thread.
    pub(crate) free_contexts: u32,
    /// Runnable threads waiting for a context.
    pub(crate) ready: VecDeque<u32>,
    /// Jobs progressing in parallel, weight 1 each.
    pub(crate) jobs: Vec<Job>,
    /// Threads polling on this processor.
    pub(crate) pollers: u32,
    /// Weight of one poller, `1 / beta`.
    pub(crate) poll_weight: f64,
    /// Time up to which `jobs[..].remaining` is current.
    pub(crate) last_update: f64,
    /// Incremented at every reschedule; older `JobDone` events are stale.
    pub(crate) epoch: u64,
    /// Sharing changed during the current event; completion event to be re-armed.
    pub(crate) dirty: bool,
}

impl Processor {
    pub(crate) fn new(contexts: u32, beta: f64) -> Self {
        Self {
            free_contexts: contexts,
            ready: VecDeque::new(),
            jobs: Vec::with_capacity(contexts as usize + 1),
            pollers: 0,
            poll_weight: 1.0 / beta,
            last_update: 0.0,
            epoch: 0,
            dirty: false,
        }
    }

    fn total_weight(&self) -> f64 {
        self.jobs.len() as f64 + f64::from(self.pollers) * self.poll_weight
    }

    /// Brings every job's remaining work up to `now`; returns the processor time the
    /// pollers took from runnable jobs in the interval (their waiting cost).
    pub(crate) fn advance(&mut self, now: f64) -> f64 {
        let dt = now - self.last_update;
        self.last_update = now;
        if dt <= 0.0 || self.jobs.is_empty() {
            return 0.0;
        }
        let share = dt / self.total_weight();
        for job in &mut self.jobs {
            job.remaining -= share;
        }
        share * f64::from(self.pollers) * self.poll_weight
    }

    /// When the first job finishes, at the current sharing.
    pub(crate) fn next_completion(&self, now: f64) -> Option<f64> {
        let min = self
            .jobs
            .iter()
            .map(|j| j.remaining)
            .fold(f64::INFINITY, f64::min);
        min.is_finite()
            .then(|| now + min.max(0.0) * self.total_weight())
    }

    /// Removes and returns the job closest to completion.
    pub(crate) fn pop_finished(&mut self) -> Option<Job> {
        let i = (0..self.jobs.len())
            .min_by(|&a, &b| self.jobs[a].remaining.total_cmp(&self.jobs[b].remaining))?;
        Some(self.jobs.swap_remove(i))
    }
}
