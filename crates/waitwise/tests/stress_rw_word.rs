//! Stress test for the one-word reader-writer lock (`RwWordRef`, the
//! interposer's `pthread_rwlock_*`) on real futex sleeps: readers and
//! writers of both kinds at 2 to 8 threads (more than this machine's
//! CPUs), untimed and with short deadlines (timed-out writers give up
//! their wait), checked with a pair that writers change together and
//! readers must see equal. Validation only.
#![cfg(not(loom))]

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Duration;
use waitwise::mutex::{
    ReadOutcome, RwKind, RwQueue, RwState, RwStateWord, RwWait, RwWake, RwWordRef, TryRead,
    WaitingWriter,
};
use waitwise::platform::futex::wake_address;
use waitwise::two_phase_wait::TwoPhaseWait;
use waitwise::Deadline;

/// Wake-ups with plain futex calls (no bit sets): every sleeper, readers
/// and writers alike. Waking more than the algorithm asks is a spurious
/// wake-up, which it tolerates; waking fewer would not be.
struct WakeAll;

impl RwWake for WakeAll {
    fn wake(&self, word: *const AtomicU64, _queue: RwQueue) {
        wake_address(word as *const u32, u32::MAX);
    }
}

/// A wait: a few yields of polling, then the word's own futex sleeps, in
/// no particular queue (the defaults of [`RwWait`]).
struct Wait;

impl RwWake for Wait {
    fn wake(&self, word: *const AtomicU64, queue: RwQueue) {
        WakeAll.wake(word, queue);
    }
}

impl TwoPhaseWait<RwStateWord> for Wait {
    fn start_polling(&mut self, _deadline: Deadline) -> bool {
        true
    }

    fn poll(&mut self, word: &RwStateWord, mut ready: impl FnMut(RwState) -> bool) -> bool {
        for _ in 0..4 {
            // Relaxed: the poll only decides when to try the CAS, which is
            // what acquires.
            if ready(RwState::from_bits(word.value().load(Ordering::Relaxed))) {
                return true;
            }
            std::thread::yield_now();
        }
        false
    }
}

impl RwWait for Wait {}

struct Guarded {
    word: AtomicU64,
    pair: UnsafeCell<(u64, u64)>,
}

// SAFETY: `pair` is written only under the write lock and read only under
// a read lock.
unsafe impl Sync for Guarded {}

/// Every this many critical sections a holder yields its CPU while it
/// holds the lock, so that the others find it held and wait (on 2 CPUs
/// the threads would otherwise mostly run one after the other).
const YIELD_EVERY: u64 = 8;

/// Yields while holding, every [`YIELD_EVERY`]-th time.
fn hold(i: u64) {
    if i.is_multiple_of(YIELD_EVERY) {
        std::thread::yield_now();
    }
}

/// One case: `threads` threads, every third a reader (at least one), the
/// others writers, `ops` acquisitions each; writers wait at most
/// `timeout` (`None`: untimed).
fn case(kind: RwKind, threads: usize, ops: u64, timeout: Option<Duration>) {
    let g = Guarded {
        word: AtomicU64::new(0),
        pair: UnsafeCell::new((0, 0)),
    };
    let start = Barrier::new(threads);
    let writes = AtomicU64::new(0);
    let (g, start, writes) = (&g, &start, &writes);
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let lock = RwWordRef::new(&g.word, kind);
                start.wait();
                for i in 0..ops {
                    if t % 3 == 0 {
                        let taken = match lock.try_read() {
                            TryRead::Taken => true,
                            TryRead::Busy(_) => {
                                lock.read_contended(&mut Wait, Deadline::NEVER)
                                    == ReadOutcome::Taken
                            }
                            TryRead::Overflow => false,
                        };
                        assert!(taken);
                        // SAFETY: a read lock is held.
                        let (a, b) = unsafe { *g.pair.get() };
                        assert_eq!(a, b, "a reader overlapped a writer");
                        hold(i);
                        lock.read_unlock(lock.state(), &WakeAll).unwrap();
                    } else {
                        let deadline = Deadline::after_opt(timeout);
                        if lock.try_write() || WaitingWriter::new(lock).wait(&mut Wait, deadline) {
                            // SAFETY: the write lock is held.
                            let pair = unsafe { &mut *g.pair.get() };
                            pair.0 += 1;
                            hold(i);
                            pair.1 += 1;
                            writes.fetch_add(1, Ordering::Relaxed);
                            lock.write_unlock(&WakeAll);
                        }
                    }
                }
            });
        }
    });
    let n = writes.load(Ordering::Relaxed);
    // SAFETY: every thread has finished.
    assert_eq!(unsafe { *g.pair.get() }, (n, n));
    let state = RwWordRef::new(&g.word, kind).state();
    assert!(!state.is_busy(), "{kind:?}: left {state:?}");
}

/// (threads, acquisitions per thread, writers' timeout).
const CASES: [(usize, u64, Option<Duration>); 6] = [
    (2, 10_000, None),
    (3, 5_000, None),
    (4, 5_000, None),
    (8, 2_000, None),
    (4, 5_000, Some(Duration::from_micros(20))),
    (8, 2_000, Some(Duration::from_micros(200))),
];

#[test]
fn reader_preferring_lock_excludes() {
    for (threads, ops, timeout) in CASES {
        case(RwKind::ReaderPreferring, threads, ops, timeout);
    }
}

#[test]
fn writer_preferring_lock_excludes() {
    for (threads, ops, timeout) in CASES {
        case(RwKind::WriterPreferring, threads, ops, timeout);
    }
}
