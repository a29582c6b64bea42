//! Loom models of the pool's idle/wake protocol (`waitwise::pool::idle`):
//! a task published while a worker goes idle is never stranded, a claimed
//! worker always gets its payload, and shutdown reaches an idle worker;
//! and of the join wait (`waitwise::pool::join_wait`): an owner waiting
//! for its join's other half is always woken.
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_pool`
//! (a few seconds on 2 cores).
#![cfg(loom)]

use loom::sync::Mutex;
use loom::thread;
use std::collections::VecDeque;
use waitwise::pool::idle::{Idle, Wake};
use waitwise::pool::join_wait::{JoinWords, DONE};
use waitwise::Policy;
use waitwise_platform::shim::{Arc, AtomicBool, AtomicU32, AtomicUsize, Ordering};

/// The pool's shape in small: a queue with its SeqCst length, a shutdown
/// flag and the idle workers.
struct Pool {
    queue: Mutex<VecDeque<u32>>,
    queued: AtomicUsize,
    shutdown: AtomicBool,
    idle: Idle<u32>,
    ran: AtomicUsize,
}

impl Pool {
    fn new(workers: usize) -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            idle: Idle::new(workers),
            ran: AtomicUsize::new(0),
        }
    }

    /// `ThreadPool`'s submission: hand to an idle worker, else queue and
    /// wake one to look.
    fn submit(&self, task: u32) {
        let n = self.idle.len();
        let task = match self.idle.hand_to_idle(0..n, task) {
            Ok(_) => return,
            Err(t) => t,
        };
        {
            let mut q = self.queue.lock().unwrap();
            q.push_back(task);
            self.queued.store(q.len(), Ordering::SeqCst);
        }
        self.idle.wake_one_to_look(0..n);
    }

    fn pop(&self) -> Option<u32> {
        if self.queued.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let mut q = self.queue.lock().unwrap();
        let t = q.pop_front();
        self.queued.store(q.len(), Ordering::SeqCst);
        t
    }

    fn run(&self, _task: u32) {
        self.ran.fetch_add(1, Ordering::SeqCst);
    }

    /// `ThreadPool`'s worker loop, until `stop()` holds after a look.
    fn worker(&self, i: usize, policy: Policy, stop: impl Fn(&Self) -> bool) {
        loop {
            while let Some(t) = self.pop() {
                self.run(t);
            }
            if stop(self) {
                return;
            }
            let recheck =
                || self.shutdown.load(Ordering::SeqCst) || self.queued.load(Ordering::SeqCst) > 0;
            match self.idle.idle_wait(i, &policy, recheck) {
                Wake::Payload(t) => self.run(t),
                Wake::Look => {}
            }
        }
    }
}

fn all_ran(total: usize) -> impl Fn(&Pool) -> bool {
    move |p| p.ran.load(Ordering::SeqCst) == total
}

#[test]
fn a_task_submitted_while_the_worker_goes_idle_runs() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1));
        let p = pool.clone();
        let submitter = thread::spawn(move || p.submit(7));
        pool.worker(0, Policy::always_block(), all_ran(1));
        submitter.join().unwrap();
    });
}

#[test]
fn two_submitters_one_worker_both_tasks_run() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1));
        let subs: Vec<_> = (0..2)
            .map(|t| {
                let p = pool.clone();
                thread::spawn(move || p.submit(t))
            })
            .collect();
        pool.worker(0, Policy::always_block(), all_ran(2));
        for s in subs {
            s.join().unwrap();
        }
    });
}

#[test]
fn one_submitter_two_workers_tasks_run_once() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(2));
        let shut = |p: &Pool| p.shutdown.load(Ordering::SeqCst);
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let p = pool.clone();
                thread::spawn(move || p.worker(i, Policy::always_block(), shut))
            })
            .collect();
        pool.submit(1);
        pool.submit(2);
        while pool.ran.load(Ordering::SeqCst) < 2 {
            thread::yield_now();
        }
        pool.shutdown.store(true, Ordering::SeqCst);
        pool.idle.wake_all_to_look();
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(pool.ran.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn shutdown_reaches_an_idle_worker() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1));
        let p = pool.clone();
        let w = thread::spawn(move || {
            p.worker(0, Policy::always_block(), |p| {
                p.shutdown.load(Ordering::SeqCst)
            })
        });
        pool.shutdown.store(true, Ordering::SeqCst);
        pool.idle.wake_all_to_look();
        w.join().unwrap();
    });
}

/// The worker's re-check finds work while a submitter claims it: the
/// worker must wait for the claimer's payload rather than lose it.
#[test]
fn a_claim_racing_the_recheck_still_delivers_its_payload() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1));
        // Work already queued: the worker's re-check will see it.
        {
            let mut q = pool.queue.lock().unwrap();
            q.push_back(1);
            pool.queued.store(1, Ordering::SeqCst);
        }
        let p = pool.clone();
        let claimer = thread::spawn(move || {
            // Hands over a second task if the worker is idle, else queues.
            p.submit(2);
        });
        // One idle step straight away (not popping first), as a worker
        // that found the queue empty just before the push.
        match pool.idle.idle_wait(0, &Policy::always_block(), || {
            pool.queued.load(Ordering::SeqCst) > 0
        }) {
            Wake::Payload(t) => pool.run(t),
            Wake::Look => {}
        }
        claimer.join().unwrap();
        while let Some(t) = pool.pop() {
            pool.run(t);
        }
        assert_eq!(pool.ran.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_join_owner_is_woken_when_its_other_half_finishes() {
    loom::model(|| {
        let words = Arc::new(JoinWords::new(1));
        let done = Arc::new(AtomicU32::new(0));
        let (w, d) = (words.clone(), done.clone());
        let runner = thread::spawn(move || {
            d.store(DONE, Ordering::SeqCst);
            w.signal(0);
        });
        words.wait(0, &done, &Policy::always_block(), || false);
        assert_eq!(done.load(Ordering::SeqCst), DONE);
        runner.join().unwrap();
    });
}

/// A signal for another (earlier) job of the same owner arrives while it
/// waits: it wakes, finds its own flag unset, and sleeps again without
/// missing the signal that follows.
#[test]
fn a_stale_signal_does_not_hide_the_owners_own() {
    loom::model(|| {
        let words = Arc::new(JoinWords::new(2));
        let done = Arc::new(AtomicU32::new(0));
        let (w, d) = (words.clone(), done.clone());
        let runner = thread::spawn(move || {
            w.signal(1);
            d.store(DONE, Ordering::SeqCst);
            w.signal(1);
        });
        words.wait(1, &done, &Policy::always_block(), || false);
        runner.join().unwrap();
    });
}
