//! Loom models of the pool's idle/wake protocol (`waitwise::pool::idle`)
//! inside the pool's shape (`ThreadPool`: per-worker deques, an injector
//! for work from outside, the Dekker fences): a task injected while a
//! worker goes idle is never stranded, a task pushed on a worker's own
//! deque runs exactly once whether an idle worker steals it or its owner
//! pops it back, a claimed worker always gets its payload, a worker still
//! busy with a payload is not claimed again, and shutdown reaches an idle
//! worker; and of the join wait (`waitwise::pool::join_wait`): an owner
//! waiting for its join's other half, or for its scope's tasks, is always
//! woken, also when owners outside the pool share one word.
//!
//! The deques are modelled by locked `VecDeque`s with their lengths
//! published as crossbeam-deque publishes its indices (`Release` stores,
//! `Acquire` loads), so that the model relies on the pool's own fences,
//! not on the locks, for the Dekker pattern.
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_pool`
//! (seconds to a minute on 2 cores).
#![cfg(loom)]

use loom::sync::Mutex;
use loom::thread;
use std::collections::VecDeque;
use waitwise::pool::idle::{Idle, Wake};
use waitwise::pool::join_wait::{JoinWords, DONE};
use waitwise::Policy;
use waitwise_platform::shim::{fence, Arc, AtomicBool, AtomicU32, AtomicUsize, Ordering};

/// A deque: the items under a lock, and their count published as
/// crossbeam-deque publishes its indices.
struct Deque {
    items: Mutex<VecDeque<usize>>,
    len: AtomicUsize,
}

impl Deque {
    fn new() -> Self {
        Self {
            items: Mutex::new(VecDeque::new()),
            len: AtomicUsize::new(0),
        }
    }

    fn push(&self, t: usize) {
        let mut q = self.items.lock().unwrap();
        q.push_back(t);
        // Release: crossbeam's store of the back index.
        self.len.store(q.len(), Ordering::Release);
    }

    /// The owner's end (LIFO) or a thief's (FIFO).
    fn take(&self, newest: bool) -> Option<usize> {
        let mut q = self.items.lock().unwrap();
        let t = if newest { q.pop_back() } else { q.pop_front() };
        self.len.store(q.len(), Ordering::Release);
        t
    }

    fn is_empty(&self) -> bool {
        self.len.load(Ordering::Acquire) == 0
    }
}

/// `ThreadPool`'s shape in small.
struct Pool {
    injector: Deque,
    locals: Vec<Deque>,
    shutdown: AtomicBool,
    idle: Idle<usize>,
    /// Runs of each task id.
    ran: Vec<AtomicUsize>,
}

impl Pool {
    fn new(workers: usize, tasks: usize) -> Self {
        Self {
            injector: Deque::new(),
            locals: (0..workers).map(|_| Deque::new()).collect(),
            shutdown: AtomicBool::new(false),
            idle: Idle::new(workers),
            ran: (0..tasks).map(|_| AtomicUsize::new(0)).collect(),
        }
    }

    fn n(&self) -> usize {
        self.locals.len()
    }

    /// `Inner::wake_a_thief`.
    fn wake_a_thief(&self) {
        if self.idle.any_idle_in(0..self.n()) {
            self.idle.wake_one_to_look(0..self.n());
        }
    }

    /// `Inner::inject`: hand to an idle worker, else the injector, a
    /// fence, and a look for an idle worker.
    fn inject(&self, t: usize) {
        let t = match self.idle.hand_to_idle(0..self.n(), t) {
            Ok(_) => return,
            Err(t) => t,
        };
        self.injector.push(t);
        fence(Ordering::SeqCst);
        self.wake_a_thief();
    }

    /// `Inner::push_local`: no fence.
    fn push_local(&self, me: usize, t: usize) {
        self.locals[me].push(t);
        self.wake_a_thief();
    }

    /// `Inner::find_work`.
    fn find_work(&self, me: usize) -> Option<usize> {
        if let Some(t) = self.locals[me].take(true) {
            return Some(t);
        }
        if let Some(t) = self.injector.take(false) {
            return Some(t);
        }
        (1..self.n()).find_map(|k| self.locals[(me + k) % self.n()].take(false))
    }

    /// `Inner::has_shared_work`.
    fn has_shared_work(&self) -> bool {
        fence(Ordering::SeqCst);
        !self.injector.is_empty() || self.locals.iter().any(|d| !d.is_empty())
    }

    fn run(&self, t: usize) {
        self.ran[t].fetch_add(1, Ordering::SeqCst);
    }

    fn ran_once(&self) -> bool {
        self.ran.iter().all(|r| r.load(Ordering::SeqCst) == 1)
    }

    /// `Inner::worker_main`, until `stop()` holds after a look.
    fn worker(&self, me: usize, stop: impl Fn(&Self) -> bool) {
        loop {
            while let Some(t) = self.find_work(me) {
                self.run(t);
            }
            if stop(self) {
                return;
            }
            let recheck = || self.shutdown.load(Ordering::SeqCst) || self.has_shared_work();
            match self.idle.idle_wait(me, &Policy::always_block(), recheck) {
                Wake::Payload(t) => {
                    self.run(t);
                    self.idle.mark_busy(me);
                }
                Wake::Look => {}
            }
        }
    }

    fn shut_down(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
        self.idle.wake_all_to_look();
    }
}

fn all_ran(p: &Pool) -> bool {
    p.ran_once()
}

fn shut(p: &Pool) -> bool {
    p.shutdown.load(Ordering::SeqCst)
}

#[test]
fn a_task_injected_while_the_worker_goes_idle_runs() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1, 1));
        let p = pool.clone();
        let submitter = thread::spawn(move || p.inject(0));
        pool.worker(0, all_ran);
        submitter.join().unwrap();
    });
}

/// The second task meets the worker still busy with the first one's
/// payload (its idle bit still set): it must not be handed over again.
#[test]
fn two_tasks_in_a_row_reach_one_worker() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1, 2));
        let p = pool.clone();
        let submitter = thread::spawn(move || {
            p.inject(0);
            p.inject(1);
        });
        pool.worker(0, all_ran);
        submitter.join().unwrap();
        assert!(pool.ran_once());
    });
}

#[test]
fn two_submitters_one_worker_both_tasks_run() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1, 2));
        let subs: Vec<_> = (0..2)
            .map(|t| {
                let p = pool.clone();
                thread::spawn(move || p.inject(t))
            })
            .collect();
        pool.worker(0, all_ran);
        for s in subs {
            s.join().unwrap();
        }
    });
}

#[test]
fn one_submitter_two_workers_tasks_run_once() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(2, 2));
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let p = pool.clone();
                thread::spawn(move || p.worker(i, shut))
            })
            .collect();
        pool.inject(0);
        pool.inject(1);
        while !pool.ran.iter().all(|r| r.load(Ordering::SeqCst) > 0) {
            thread::yield_now();
        }
        pool.shut_down();
        for w in workers {
            w.join().unwrap();
        }
        assert!(pool.ran_once());
    });
}

/// `join`'s shape: worker 0 pushes a task on its own deque (no fence)
/// while worker 1 goes idle, then pops it back unless worker 1 stole it.
/// Either way it runs exactly once, and worker 0 never waits on a task
/// that nobody will run.
#[test]
fn a_local_push_runs_once_stolen_or_popped_back() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(2, 1));
        let p = pool.clone();
        let thief = thread::spawn(move || p.worker(1, shut));
        pool.push_local(0, 0);
        if let Some(t) = pool.locals[0].take(true) {
            pool.run(t);
        }
        // Stolen: worker 1 runs it (join waits here, on its join word).
        while pool.ran[0].load(Ordering::SeqCst) == 0 {
            thread::yield_now();
        }
        pool.shut_down();
        thief.join().unwrap();
        assert!(pool.ran_once());
    });
}

#[test]
fn shutdown_reaches_an_idle_worker() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1, 0));
        let p = pool.clone();
        let w = thread::spawn(move || p.worker(0, shut));
        pool.shut_down();
        w.join().unwrap();
    });
}

/// The worker's re-check finds work while a submitter claims it: the
/// worker must wait for the claimer's payload rather than lose it.
#[test]
fn a_claim_racing_the_recheck_still_delivers_its_payload() {
    loom::model(|| {
        let pool = Arc::new(Pool::new(1, 2));
        // Work already queued: the worker's re-check will see it.
        pool.injector.push(0);
        let p = pool.clone();
        // Hands over a second task if the worker is idle, else queues.
        let claimer = thread::spawn(move || p.inject(1));
        // One idle step straight away (not popping first), as a worker
        // that found the queue empty just before the push.
        match pool
            .idle
            .idle_wait(0, &Policy::always_block(), || pool.has_shared_work())
        {
            Wake::Payload(t) => {
                pool.run(t);
                pool.idle.mark_busy(0);
            }
            Wake::Look => {}
        }
        claimer.join().unwrap();
        while let Some(t) = pool.find_work(0) {
            pool.run(t);
        }
        assert!(pool.ran_once());
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
        words.wait(0, &done, DONE, &Policy::always_block(), || false);
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
        words.wait(1, &done, DONE, &Policy::always_block(), || false);
        runner.join().unwrap();
    });
}

/// A scope's shape: two tasks count the pending word down to 0 (the
/// closure's own count already given back) and the last one signals the
/// owner, a thread outside the pool.
#[test]
fn a_scope_owner_is_woken_when_its_last_task_finishes() {
    loom::model(|| {
        let words = Arc::new(JoinWords::new(1));
        let pending = Arc::new(AtomicU32::new(2));
        let outside = words.outside();
        let runners: Vec<_> = (0..2)
            .map(|_| {
                let (w, p) = (words.clone(), pending.clone());
                thread::spawn(move || {
                    if p.fetch_sub(1, Ordering::SeqCst) == 1 {
                        w.signal(outside);
                    }
                })
            })
            .collect();
        words.wait(outside, &pending, 0, &Policy::always_block(), || false);
        for r in runners {
            r.join().unwrap();
        }
    });
}

/// Two owners outside the pool share one word: each wakes for the other's
/// signal, and neither misses its own.
#[test]
fn owners_outside_the_pool_share_a_word() {
    loom::model(|| {
        let words = Arc::new(JoinWords::new(1));
        let outside = words.outside();
        let flags: Vec<_> = (0..2).map(|_| Arc::new(AtomicU32::new(0))).collect();
        let runner = {
            let (w, f) = (words.clone(), flags.clone());
            thread::spawn(move || {
                for f in &f {
                    f.store(DONE, Ordering::SeqCst);
                    w.signal(outside);
                }
            })
        };
        let other = {
            let (w, f) = (words.clone(), flags[1].clone());
            thread::spawn(move || w.wait(outside, &f, DONE, &Policy::always_block(), || false))
        };
        words.wait(outside, &flags[0], DONE, &Policy::always_block(), || false);
        other.join().unwrap();
        runner.join().unwrap();
    });
}
