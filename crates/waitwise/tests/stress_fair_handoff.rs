//! Stress tests of the TTAS lock's hand-off (`mutex/ttas.rs`, "Bounded
//! unfairness"): waiters that ask for a hand-off at once, after one lost
//! round, or never, mixed, at 2, 3, 4 and 8 threads (more threads than
//! this machine's CPUs), with and without deadlines, with every request
//! for a hand-off granted, paced, or refused. Checked: mutual
//! exclusion (a non-atomic counter loses no update), no lost wake-up (every
//! case finishes), and a word back at 0 (unlocked, nobody counted as
//! starving) at the end. Validation only; timing is for
//! `examples/mutex_starvation.rs`.
#![cfg(not(loom))]

use std::cell::UnsafeCell;
use std::sync::{Arc, Barrier};
use std::time::Duration;
use waitwise::mutex::{HandOffPace, LockWait, PolicyLockWait, TtasLockRef};
use waitwise::platform::clock::cycle_clock;
use waitwise::platform::futex::Futex;
use waitwise::{Deadline, Mechanism, Policy};

/// Lock/unlock operations per case, over all threads.
const TOTAL_OPS: u64 = 100_000;
/// Thread counts of every case.
const THREADS: [u64; 4] = [2, 3, 4, 8];

/// How a waiter of a case waits.
#[derive(Clone, Copy, Debug)]
enum Waiter {
    /// Sleeps at once and asks for a hand-off at its first sleep.
    AsksAtOnce,
    /// Yield-polls for 2 us, asks after one lost round.
    PollsThenAsks,
    /// Yield-polls for 2 us, never asks (as the interposer's waiters).
    NeverAsks,
}

impl Waiter {
    fn lock_wait(self) -> PolicyLockWait {
        let polling =
            Policy::poll_then_block(Duration::from_micros(2)).with_mechanism(Mechanism::Yield);
        match self {
            Waiter::AsksAtOnce => {
                PolicyLockWait::new(&Policy::always_block()).asking_hand_off_after(0)
            }
            Waiter::PollsThenAsks => PolicyLockWait::new(&polling).asking_hand_off_after(1),
            Waiter::NeverAsks => PolicyLockWait::new(&polling),
        }
    }
}

/// A word and the counter it protects.
struct Counted {
    word: Futex,
    count: UnsafeCell<u64>,
    pace: HandOffPace,
}

// SAFETY: `count` is accessed only with the lock held.
unsafe impl Sync for Counted {}

/// Thread `i` waits as `kinds[i % kinds.len()]`; with `timed`, every
/// fourth acquisition gives up after 50 us (and retries until it gets
/// the lock, so the count is exact).
fn case(threads: u64, kinds: &[Waiter], timed: bool) {
    case_releasing(threads, kinds, timed, Release::Unpaced);
}

/// How the releases of a case answer a request for a hand-off.
#[derive(Clone, Copy, Debug)]
enum Release {
    /// Every request granted (`TtasLockRef::unlock`).
    Unpaced,
    /// At most one hand-off per this many ns (a `HandOffPace`).
    Paced(u64),
    /// Every request refused.
    RefuseAll,
}

/// [`case`], releasing as `release` says.
fn case_releasing(threads: u64, kinds: &[Waiter], timed: bool, release: Release) {
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let shared = Arc::new(Counted {
        word: Futex::new(0),
        count: UnsafeCell::new(0),
        pace: HandOffPace::new(),
    });
    let start = Arc::new(Barrier::new(threads as usize));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (shared, start) = (shared.clone(), start.clone());
            let kind = kinds[i as usize % kinds.len()];
            std::thread::spawn(move || {
                let lock = TtasLockRef::new(&shared.word);
                start.wait();
                for n in 0..per_thread {
                    while !lock.try_lock() {
                        let deadline = if timed && n % 4 == 0 {
                            Deadline::after(Duration::from_micros(50))
                        } else {
                            Deadline::NEVER
                        };
                        if lock
                            .lock_contended(&mut kind.lock_wait(), deadline)
                            .acquired()
                        {
                            break;
                        }
                    }
                    // SAFETY: the lock is held: no other access.
                    let c = unsafe { &mut *shared.count.get() };
                    // Read, then write: a racing thread would lose updates.
                    let v = *c;
                    // Now and then the holder leaves its CPU: the others
                    // pile up, poll out and sleep, and ask.
                    if n % 64 == 0 {
                        std::thread::yield_now();
                    }
                    *c = v + 1;
                    let released = match release {
                        Release::Unpaced => lock.unlock(),
                        Release::Paced(interval) => {
                            lock.unlock_paced(|| shared.pace.allows(cycle_clock().now(), interval))
                        }
                        Release::RefuseAll => lock.unlock_paced(|| false),
                    };
                    assert!(released, "the lock was not held");
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    // SAFETY: every thread is joined.
    assert_eq!(unsafe { *shared.count.get() }, per_thread * threads);
    assert_eq!(
        shared
            .word
            .value()
            .load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the word is unlocked with nobody counted as starving"
    );
}

macro_rules! handoff_table {
    ($($name:ident: $kinds:expr, $timed:expr;)*) => {$(
        #[test]
        fn $name() {
            for t in THREADS {
                case(t, &$kinds, $timed);
            }
        }
    )*};
}

handoff_table! {
    asking_at_once: [Waiter::AsksAtOnce], false;
    polling_then_asking: [Waiter::PollsThenAsks], false;
    asking_beside_never_asking: [Waiter::AsksAtOnce, Waiter::NeverAsks, Waiter::PollsThenAsks], false;
    asking_with_deadlines: [Waiter::AsksAtOnce, Waiter::PollsThenAsks], true;
    mixed_with_deadlines: [Waiter::AsksAtOnce, Waiter::NeverAsks], true;
}

/// Releases that grant only some requests (one per 20 us, as
/// `RawTtasMutex`'s pace does at its own interval) or none: a refused
/// request is a plain release, and every case still finishes with the
/// word at 0.
#[test]
fn paced_and_refused_hand_offs() {
    let kinds = [Waiter::AsksAtOnce, Waiter::PollsThenAsks, Waiter::NeverAsks];
    for release in [Release::Paced(20_000), Release::RefuseAll] {
        for t in THREADS {
            case_releasing(t, &kinds, false, release);
            case_releasing(t, &kinds[..2], true, release);
        }
    }
}

/// A front end's own `LockWait` that asks at once (the trait's default
/// sleep).
struct OwnFrontEnd;

impl LockWait for OwnFrontEnd {
    fn start_polling(&mut self, _deadline: Deadline) -> bool {
        false
    }

    fn poll(&mut self, _futex: &Futex, _ready: impl FnMut(u32) -> bool) -> bool {
        unreachable!("no polling phase")
    }

    fn hand_off_after(&self) -> Option<u32> {
        Some(0)
    }
}

/// The default `Mutex` (whose waiters ask after
/// `HAND_OFF_AFTER_LOST_ROUNDS` lost rounds) with more threads than CPUs,
/// and a front end of its own that asks at once.
#[test]
fn default_mutex_under_oversubscription() {
    for threads in THREADS {
        let m = Arc::new(waitwise::Mutex::new(0u64));
        let per_thread = TOTAL_OPS.div_ceil(threads);
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..per_thread {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*m.lock(), per_thread * threads);
        assert!(!m.is_locked());
    }
    // And a view whose waiters ask at once, on a word of its own: each
    // takes the lock once and releases it.
    let word = Futex::new(0);
    let lock = TtasLockRef::new(&word);
    assert!(lock.try_lock());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                assert!(lock
                    .lock_contended(&mut OwnFrontEnd, Deadline::NEVER)
                    .acquired());
                assert!(lock.unlock());
            });
        }
        std::thread::sleep(Duration::from_millis(5));
        assert!(lock.unlock());
    });
    assert_eq!(word.value().load(std::sync::atomic::Ordering::SeqCst), 0);
}
