//! Loom models of a worker's inbox (`pool/thread_pool.rs`, "Work for one
//! worker"; used by `pool/broadcast.rs`): a job sent to one worker runs
//! on it whether the worker is going idle (the idle protocol's Dekker
//! re-check, `waitwise::pool::idle`) or waiting for work of its own and
//! asleep on its join word (`waitwise::pool::join_wait`, whose wait reads
//! the count before it looks for work). A lost wake-up is a deadlock
//! that loom reports.
//!
//! The inbox is modelled as `loom_pool.rs` models a deque: the items
//! under a lock, their count published `Release`/`Acquire`, so that the
//! model relies on the pool's fences, not on the lock.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_pool_inbox`
//! (seconds on 2 cores).
#![cfg(loom)]

use loom::sync::Mutex;
use loom::thread;
use std::collections::VecDeque;
use waitwise::pool::idle::{Idle, Wake};
use waitwise::pool::join_wait::{JoinWords, DONE};
use waitwise::Policy;
use waitwise_platform::shim::{fence, Arc, AtomicU32, AtomicUsize, Ordering};

/// A worker's inbox: the jobs under a lock, their count published as
/// crossbeam's injector publishes its indices.
struct Inbox {
    items: Mutex<VecDeque<usize>>,
    len: AtomicUsize,
}

impl Inbox {
    fn new() -> Self {
        Self {
            items: Mutex::new(VecDeque::new()),
            len: AtomicUsize::new(0),
        }
    }

    fn push(&self, t: usize) {
        let mut q = self.items.lock().unwrap();
        q.push_back(t);
        // Release: the injector's store of its tail.
        self.len.store(q.len(), Ordering::Release);
    }

    fn take(&self) -> Option<usize> {
        let mut q = self.items.lock().unwrap();
        let t = q.pop_front();
        self.len.store(q.len(), Ordering::Release);
        t
    }

    fn is_empty(&self) -> bool {
        self.len.load(Ordering::Acquire) == 0
    }
}

/// One worker's shape: its inbox, the idle protocol and the join words.
struct Worker {
    inbox: Inbox,
    idle: Idle<usize>,
    words: JoinWords,
    /// The share's run (also the flag the join waits for in the second
    /// model).
    ran: AtomicU32,
}

impl Worker {
    fn new() -> Self {
        Self {
            inbox: Inbox::new(),
            idle: Idle::new(1),
            words: JoinWords::new(1),
            ran: AtomicU32::new(0),
        }
    }

    /// `Inner::send_to`: push, fence, wake the worker if idle, signal its
    /// join word.
    fn send(&self, t: usize) {
        self.inbox.push(t);
        fence(Ordering::SeqCst);
        self.idle.wake_one_to_look(0..1);
        self.words.signal(0);
    }

    /// Runs a job from the inbox, if any (`take_mail` and `run`).
    fn help(&self) -> bool {
        match self.inbox.take() {
            Some(_) => {
                self.ran.store(DONE, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// `Inner::has_mail`.
    fn has_mail(&self) -> bool {
        fence(Ordering::SeqCst);
        !self.inbox.is_empty()
    }
}

/// The worker finds nothing and goes idle while the share is sent: the
/// re-check or the wake-up brings it back, and it runs the share.
#[test]
fn a_share_sent_while_its_worker_goes_idle_runs() {
    loom::model(|| {
        let w = Arc::new(Worker::new());
        let sender = {
            let w = w.clone();
            thread::spawn(move || w.send(0))
        };
        loop {
            if w.help() {
                break;
            }
            match w
                .idle
                .idle_wait(0, &Policy::always_block(), || w.has_mail())
            {
                Wake::Payload(_) => unreachable!("nothing is handed over"),
                Wake::Look => {}
            }
        }
        sender.join().unwrap();
    });
}

/// The worker waits for work of its own (here: for the share itself to
/// have run, as a join waits for a half that broadcasts), looking at its
/// inbox between sleeps on its join word: the signal that follows the
/// share's push ends the sleep.
#[test]
fn a_share_sent_to_a_joining_worker_runs() {
    loom::model(|| {
        let w = Arc::new(Worker::new());
        let sender = {
            let w = w.clone();
            thread::spawn(move || w.send(0))
        };
        w.words
            .wait(0, &w.ran, DONE, &Policy::always_block(), || w.help());
        sender.join().unwrap();
    });
}
