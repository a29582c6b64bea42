//! Loom models of the reader-writer lock's one algorithm, `RwWordRef` (one
//! 64-bit state word whose low half is the futex; the interposer's
//! `pthread_rwlock_t`), with its waiters' sleeps modelled as two wait
//! queues on a loom mutex (the futex bit sets: readers are woken all at
//! once, writers one at a time, so a lost single wake-up is a deadlock
//! loom finds): writers exclude each other and readers, and publish their
//! writes; a write unlock wakes sleeping readers, a read unlock a sleeping
//! writer; a writer-preferring lock keeps new readers out while a writer
//! waits (a reader-preferring one lets them in); a timed-out writer gives
//! up its wait without stranding the readers it kept out; a woken writer
//! that times out passes its wake-up on. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_rw_word`
//! (a few seconds once built).
#![cfg(loom)]

use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use loom::sync::{Condvar, Mutex};
use loom::thread;
use std::time::Duration;
use waitwise::mutex::{
    ReadOutcome, RwKind, RwQueue, RwState, RwStateWord, RwWait, RwWake, RwWordRef, TryRead,
    WaitingWriter,
};
use waitwise::two_phase_wait::TwoPhaseWait;
use waitwise::Deadline;
use waitwise_platform::futex::FutexWait;
use waitwise_platform::shim::Arc;

/// The lock's word, its sleepers' queues, and data it protects.
struct Shared {
    word: AtomicU64,
    kind: RwKind,
    /// The futex: a sleeper compares the word's low half under `sleep`
    /// and waits on its queue's condition variable, which a waker
    /// notifies under `sleep` after its change of the word.
    sleep: Mutex<()>,
    readers: Condvar,
    writers: Condvar,
    /// Written by writers (Relaxed: the lock must order them).
    a: AtomicU32,
    b: AtomicU32,
    /// Set by a waiter's polling phase, which a writer enters only once it
    /// is counted in `W`.
    polled: AtomicBool,
}

impl Shared {
    fn new(kind: RwKind) -> Arc<Self> {
        Arc::new(Self {
            word: AtomicU64::new(0),
            kind,
            sleep: Mutex::new(()),
            readers: Condvar::new(),
            writers: Condvar::new(),
            a: AtomicU32::new(0),
            b: AtomicU32::new(0),
            polled: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> RwWordRef<'_> {
        RwWordRef::new(&self.word, self.kind)
    }

    /// A write critical section: both words one more.
    fn write_both(&self) {
        let v = self.a.load(Ordering::Relaxed);
        self.a.store(v + 1, Ordering::Relaxed);
        self.b.store(v + 1, Ordering::Relaxed);
    }

    /// A read critical section: the two words agree (no writer inside).
    fn read_both(&self) -> u32 {
        let a = self.a.load(Ordering::Relaxed);
        assert_eq!(
            a,
            self.b.load(Ordering::Relaxed),
            "a reader saw a writer inside"
        );
        a
    }

    fn write_lock(&self, deadline: Timeout) -> bool {
        self.lock().try_write()
            || WaitingWriter::new(self.lock()).wait(&mut self.waiter(deadline), Deadline::NEVER)
    }

    fn read_lock(&self, deadline: Timeout) -> bool {
        match self.lock().try_read() {
            TryRead::Taken => true,
            TryRead::Overflow => unreachable!(),
            TryRead::Busy(_) => match self
                .lock()
                .read_contended(&mut self.waiter(deadline), Deadline::NEVER)
            {
                ReadOutcome::Taken => true,
                ReadOutcome::TimedOut => false,
                ReadOutcome::Overflow => unreachable!(),
            },
        }
    }

    fn write_unlock(&self) {
        self.lock().write_unlock(self);
    }

    fn read_unlock(&self) {
        self.lock().read_unlock(self.lock().state(), self).unwrap();
    }

    fn waiter(&self, timeout: Timeout) -> LoomWait<'_> {
        LoomWait {
            shared: self,
            timeout,
            expired: false,
        }
    }

    /// Waits until a waiter has entered its polling phase.
    fn until_polled(&self) {
        while !self.polled.load(Ordering::SeqCst) {
            thread::yield_now();
        }
    }
}

impl RwWake for Shared {
    fn wake(&self, _word: *const AtomicU64, queue: RwQueue) {
        let _g = self.sleep.lock().unwrap();
        match queue {
            RwQueue::Readers => self.readers.notify_all(),
            RwQueue::Writers => self.writers.notify_one(),
        }
    }
}

/// When a waiter's wait is over (the algorithm's own deadline is never:
/// the model ends the wait itself, through [`RwWait::expired`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timeout {
    Never,
    /// At its first sleep: the sleep times out at once (as the platform's
    /// loom futex does for every timed wait).
    AtFirstSleep,
    /// Right after its first sleep that ends in a wake-up.
    AfterWoken,
}

struct LoomWait<'a> {
    shared: &'a Shared,
    timeout: Timeout,
    expired: bool,
}

impl RwWake for LoomWait<'_> {
    fn wake(&self, word: *const AtomicU64, queue: RwQueue) {
        self.shared.wake(word, queue);
    }
}

impl TwoPhaseWait<RwStateWord> for LoomWait<'_> {
    /// No polling phase (the models explore the blocking protocol, where
    /// wake-ups can be lost); it only says the waiter got here.
    fn start_polling(&mut self, _deadline: Deadline) -> bool {
        self.shared.polled.store(true, Ordering::SeqCst);
        false
    }

    /// Never called: no polling phase starts.
    fn poll(&mut self, _word: &RwStateWord, _ready: impl FnMut(RwState) -> bool) -> bool {
        false
    }
}

impl RwWait for LoomWait<'_> {
    /// The model's timeouts, at the points [`Timeout`] names.
    fn expired(&mut self, _deadline: Deadline) -> bool {
        self.expired
    }

    fn sleep_in(
        &mut self,
        word: &RwStateWord,
        expected: u32,
        _timeout: Option<Duration>,
        queue: RwQueue,
    ) -> FutexWait {
        let s = self.shared;
        let g = s.sleep.lock().unwrap();
        if word.value().load(Ordering::SeqCst) as u32 != expected {
            return FutexWait::ValueChanged;
        }
        if self.timeout == Timeout::AtFirstSleep {
            self.expired = true;
            return FutexWait::TimedOut;
        }
        let cv = match queue {
            RwQueue::Readers => &s.readers,
            RwQueue::Writers => &s.writers,
        };
        drop(cv.wait(g).unwrap());
        if self.timeout == Timeout::AfterWoken {
            self.expired = true;
        }
        FutexWait::Woken
    }
}

const KINDS: [RwKind; 2] = [RwKind::ReaderPreferring, RwKind::WriterPreferring];

fn spawn(s: &Arc<Shared>, f: impl FnOnce(&Shared) + Send + 'static) -> thread::JoinHandle<()> {
    let s = s.clone();
    thread::spawn(move || f(&s))
}

#[test]
fn writers_exclude_each_other_and_publish() {
    for kind in KINDS {
        loom::model(move || {
            let s = Shared::new(kind);
            let t = spawn(&s, |s| {
                assert!(s.write_lock(Timeout::Never));
                s.write_both();
                s.write_unlock();
            });
            assert!(s.write_lock(Timeout::Never));
            s.write_both();
            s.write_unlock();
            t.join().unwrap();
            assert_eq!(s.read_both(), 2);
            assert!(!s.lock().state().is_busy());
        });
    }
}

#[test]
fn a_reader_and_a_writer_exclude_each_other() {
    for kind in KINDS {
        loom::model(move || {
            let s = Shared::new(kind);
            let t = spawn(&s, |s| {
                assert!(s.write_lock(Timeout::Never));
                s.write_both();
                s.write_unlock();
            });
            assert!(s.read_lock(Timeout::Never));
            let seen = s.read_both();
            s.read_unlock();
            t.join().unwrap();
            assert!(seen <= 1);
            assert!(!s.lock().state().is_busy());
        });
    }
}

#[test]
fn write_unlock_wakes_sleeping_readers() {
    for kind in KINDS {
        loom::model(move || {
            let s = Shared::new(kind);
            assert!(s.lock().try_write());
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    spawn(&s, |s| {
                        assert!(s.read_lock(Timeout::Never));
                        assert_eq!(s.read_both(), 1);
                        s.read_unlock();
                    })
                })
                .collect();
            s.write_both();
            s.write_unlock();
            for r in readers {
                r.join().unwrap();
            }
            assert!(!s.lock().state().is_busy());
        });
    }
}

#[test]
fn read_unlock_wakes_a_sleeping_writer() {
    for kind in KINDS {
        loom::model(move || {
            let s = Shared::new(kind);
            assert_eq!(s.lock().try_read(), TryRead::Taken);
            let writer = spawn(&s, |s| {
                assert!(s.write_lock(Timeout::Never));
                s.write_both();
                s.write_unlock();
            });
            assert_eq!(s.read_both(), 0);
            s.read_unlock();
            writer.join().unwrap();
            assert_eq!(s.read_both(), 1);
            assert!(!s.lock().state().is_busy());
        });
    }
}

#[test]
fn a_waiting_writer_keeps_new_readers_out_of_a_writer_preferring_lock_only() {
    for kind in KINDS {
        loom::model(move || {
            let s = Shared::new(kind);
            assert_eq!(s.lock().try_read(), TryRead::Taken);
            let writer = spawn(&s, |s| {
                assert!(s.write_lock(Timeout::Never));
                s.write_both();
                s.write_unlock();
            });
            // The writer is counted in W (it polls only then) and cannot
            // have the lock: this thread reads.
            s.until_polled();
            match (kind, s.lock().try_read()) {
                (RwKind::WriterPreferring, TryRead::Busy(st)) => assert!(st.waiting_writers() > 0),
                (RwKind::ReaderPreferring, TryRead::Taken) => s.read_unlock(),
                (kind, other) => panic!("{kind:?}: a new reader got {other:?}"),
            }
            s.read_unlock();
            writer.join().unwrap();
            assert!(!s.lock().state().is_busy());
        });
    }
}

#[test]
fn a_timed_out_writer_gives_up_without_stranding_readers() {
    loom::model(|| {
        let s = Shared::new(RwKind::WriterPreferring);
        assert_eq!(s.lock().try_read(), TryRead::Taken);
        let writer = spawn(&s, |s| {
            // This thread holds a read lock until the writer is done: it
            // can only time out.
            assert!(!s.write_lock(Timeout::AtFirstSleep));
        });
        let reader = spawn(&s, |s| {
            // Kept out while the writer waits; let in when it gives up.
            assert!(s.read_lock(Timeout::Never));
            s.read_unlock();
        });
        writer.join().unwrap();
        reader.join().unwrap();
        s.read_unlock();
        assert!(!s.lock().state().is_busy());
    });
}

#[test]
fn a_woken_writer_that_times_out_passes_its_wake_up_on() {
    loom::model(|| {
        let s = Shared::new(RwKind::ReaderPreferring);
        assert!(s.lock().try_write());
        let writers: Vec<_> = [Timeout::AfterWoken, Timeout::Never]
            .into_iter()
            .map(|timeout| {
                spawn(&s, move |s| {
                    if s.write_lock(timeout) {
                        s.write_both();
                        s.write_unlock();
                    } else {
                        assert!(timeout == Timeout::AfterWoken);
                    }
                })
            })
            .collect();
        // Let go and take it again at once: a writer woken by the first
        // unlock may find it taken, time out, and must pass its wake-up on
        // to the writer that sleeps on.
        s.write_unlock();
        assert!(s.write_lock(Timeout::Never));
        s.write_unlock();
        for w in writers {
            w.join().unwrap();
        }
        assert!(s.read_both() >= 1, "the untimed writer got the lock");
        assert!(!s.lock().state().is_busy());
    });
}
