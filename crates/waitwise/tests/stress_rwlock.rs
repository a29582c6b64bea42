//! Stress tests of the reader-writer lock (`mutex/rwlock.rs`): writers
//! and readers at 2, 3, 4 and 8 threads, exclusion checked on a pair a
//! writer updates (a reader never sees its halves differ), readers that
//! share, more waiting writers than the lock counts, timed waiters while
//! the lock keeps turns between CPUs, a writer and a reader whose waiter
//! out of turn sleeps through the turns; its readers' turn
//! ([`readers_turn`]) and its starving writers ([`starving_writers`]).
//! Validation only; timing is for `examples/mutex_starvation.rs`.
#![cfg(not(loom))]

#[macro_use]
mod common;

use common::locks::{THREADS, TOTAL_OPS};
use std::sync::Arc;
use std::time::Duration;
use waitwise::mutex::{RawRwLock, RwLock};
use waitwise::{Policy, WaitOptions};

/// Writers increment both halves of a pair; readers check they are equal
/// (a torn pair means a reader overlapped a writer).
fn rwlock_case(threads: u64, policy: Option<Policy>) {
    let raw = match policy {
        Some(p) => RawRwLock::with_options(WaitOptions::new().policy(p)),
        None => RawRwLock::new(),
    };
    let lock = Arc::new(RwLock::from_raw(raw, (0u64, 0u64)));
    let writers = (threads / 2).max(1);
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let lock = lock.clone();
            std::thread::spawn(move || {
                for _ in 0..per_thread {
                    if i < writers {
                        let mut g = lock.write();
                        let a = g.0;
                        g.0 = a + 1;
                        std::hint::spin_loop();
                        g.1 += 1;
                    } else {
                        let g = lock.read();
                        assert_eq!(g.0, g.1, "reader saw a writer's half-done update");
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let g = lock.read();
    assert_eq!(*g, (writers * per_thread, writers * per_thread));
}

#[test]
fn rwlock_default() {
    for t in THREADS {
        rwlock_case(t, None);
    }
}

#[test]
fn rwlock_always_block() {
    for t in THREADS {
        rwlock_case(t, Some(Policy::always_block()));
    }
}

/// One thread's back-to-back acquisitions of `lock`, `per_thread` of
/// them: a writer's that update the pair, or a reader's that check it;
/// `within` a deadline each if `timed`. Returns the writes whose guard
/// was granted.
fn back_to_back(
    lock: &RwLock<(u64, u64)>,
    writer: bool,
    timed: bool,
    per_thread: u64,
    within: Duration,
) -> u64 {
    back_to_back_holding(lock, writer, timed, per_thread, within, 1)
}

/// [`back_to_back`], each critical section `hints` spin-loop hints long.
fn back_to_back_holding(
    lock: &RwLock<(u64, u64)>,
    writer: bool,
    timed: bool,
    per_thread: u64,
    within: Duration,
    hints: u32,
) -> u64 {
    let mut wrote = 0u64;
    for _ in 0..per_thread {
        if writer {
            let g = if timed {
                lock.try_write_for(within)
            } else {
                Some(lock.write())
            };
            if let Some(mut g) = g {
                g.0 += 1;
                for _ in 0..hints {
                    std::hint::spin_loop();
                }
                g.1 += 1;
                wrote += 1;
            }
        } else {
            let g = if timed {
                lock.try_read_for(within)
            } else {
                Some(lock.read())
            };
            if let Some(g) = g {
                assert_eq!(g.0, g.1, "reader saw a writer's half-done update");
                for _ in 1..hints {
                    std::hint::spin_loop();
                }
                assert_eq!(g.0, g.1, "a writer entered beside a reader");
            }
        }
    }
    wrote
}

/// Back-to-back writers and readers, half of them timed with deadlines
/// shorter than a turn, on a lock that keeps turns between CPUs
/// (`cpu_turns.rs`) once its acquisitions are contended: exclusion, every
/// write that returned a guard counted, timed waiters that give up when
/// a turn outlasts their deadline, and no hang.
#[test]
fn rwlock_cpu_turns_with_timed_waiters() {
    let lock = Arc::new(RwLock::new((0u64, 0u64)));
    let per_thread = TOTAL_OPS.div_ceil(4);
    let hs: Vec<_> = (0..4u64)
        .map(|i| {
            let lock = lock.clone();
            std::thread::spawn(move || {
                let (writer, timed) = (i % 2 == 0, i >= 2);
                back_to_back(&lock, writer, timed, per_thread, Duration::from_micros(20))
            })
        })
        .collect();
    let wrote: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(wrote >= per_thread, "the untimed writer wrote every time");
    assert_eq!(*lock.read(), (wrote, wrote));
    assert!(!lock.is_locked());
}

/// A writer and a reader that fit on the CPUs, back to back, so that the
/// lock keeps turns between CPUs and the waiter out of turn sleeps
/// through them on the hint (`cpu_turns.rs`, "Sleeping through a turn"),
/// untimed and with deadlines shorter than a turn: exclusion, every write
/// that returned a guard counted, and no hang (a waiter whose wake-up
/// came late or never probes the lock after its stall).
#[test]
fn rwlock_two_threads_sleeping_through_turns() {
    for timed in [false, true] {
        let lock = Arc::new(RwLock::new((0u64, 0u64)));
        let per_thread = TOTAL_OPS.div_ceil(2);
        let hs: Vec<_> = (0..2u64)
            .map(|i| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    back_to_back(&lock, i == 0, timed, per_thread, Duration::from_micros(30))
                })
            })
            .collect();
        let wrote: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        if !timed {
            assert_eq!(wrote, per_thread);
        }
        assert_eq!(*lock.read(), (wrote, wrote));
        assert!(!lock.is_locked());
    }
}

/// Writers and readers back to back through critical sections of 200
/// spin-loop hints (a µs or more), which a writer that locks again at once
/// holds almost all the time:
/// its waiters starve, sleep in the lock's protocol and start turns
/// (`cpu_turns.rs`, "Starving waiters"). A writer and a reader that fit
/// on the CPUs, untimed and with deadlines shorter than a turn, then two
/// writers and two readers, more threads than CPUs: exclusion, every
/// write that returned a guard counted, every untimed reader served, and
/// no hang (a starving reader that sleeps on in another CPU's turn is
/// woken for its own, or probes the lock after the stall).
#[test]
fn rwlock_starving_waiters_beside_a_writer_that_locks_again_at_once() {
    for (threads, timed) in [(2u64, false), (2, true), (4, false)] {
        let lock = Arc::new(RwLock::new((0u64, 0u64)));
        let per_thread = (TOTAL_OPS / 16).div_ceil(threads);
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    let within = Duration::from_micros(50);
                    back_to_back_holding(&lock, i % 2 == 0, timed, per_thread, within, 200)
                })
            })
            .collect();
        let wrote: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        if !timed {
            assert_eq!(wrote, per_thread * threads.div_ceil(2));
        }
        assert_eq!(*lock.read(), (wrote, wrote));
        assert!(!lock.is_locked());
    }
}

#[test]
fn rwlock_readers_share() {
    let lock = Arc::new(RwLock::new(0u32));
    let r = lock.read();
    let l2 = lock.clone();
    // Another reader enters while we hold a read lock; a writer cannot.
    std::thread::spawn(move || {
        assert!(l2.try_read().is_some());
        assert!(l2.try_write_for(Duration::from_millis(10)).is_none());
    })
    .join()
    .unwrap();
    drop(r);
    assert!(lock.try_write_for(Duration::ZERO).is_some());
}

/// More writers wait at once than the lock counts (`MAX_WRITERS_WAITING`):
/// the rest wait uncounted, some of them with a timeout, and a few
/// readers wait among them. Every writer that did not time out writes,
/// and nobody hangs.
#[test]
fn rwlock_more_waiting_writers_than_the_count() {
    use waitwise::mutex::MAX_WRITERS_WAITING;
    let writers = MAX_WRITERS_WAITING as usize + 200;
    let lock = Arc::new(RwLock::new(0u64));
    let held = lock.write();
    let hs: Vec<_> = (0..writers + 8)
        .map(|i| {
            let lock = lock.clone();
            std::thread::Builder::new()
                .stack_size(64 << 10)
                .spawn(move || {
                    if i >= writers {
                        let _ = *lock.read();
                        0
                    } else if i % 16 == 0 {
                        lock.try_write_for(Duration::from_millis(1))
                            .map_or(0, |mut g| {
                                *g += 1;
                                1
                            })
                    } else {
                        *lock.write() += 1;
                        1
                    }
                })
                .expect("spawn a thread")
        })
        .collect();
    // Let most of them start waiting (not needed for the assertions).
    std::thread::sleep(Duration::from_millis(200));
    drop(held);
    let wrote: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(wrote >= (writers - writers.div_ceil(16)) as u64);
    assert_eq!(*lock.read(), wrote);
}

/// Stress tests of the reader-writer lock's readers' turn
/// (`mutex/rwlock.rs`): readers and writers mixed at 2, 3, 4 and 8
/// threads (more threads than this machine's CPUs), holders that now and
/// then leave their CPU inside the critical section (so that readers wait
/// behind writers and ask for turns), and timed readers and writers that
/// give up (leaving turns nobody takes). Checked: exclusion (a writer
/// updates two halves, readers never see them differ), no lost update, no
/// lost wake-up and no turn that keeps writers out for good (every case
/// finishes), the lock free at the end; and readers that never sleep,
/// that sleep at once, or that poll and then sleep get their turns between
/// two writers that keep the lock busy (counted in writes, not time).
/// Validation only; timing is for `examples/mutex_starvation.rs`.
mod readers_turn {
    use std::sync::{Arc, Barrier};
    use std::time::Duration;
    use waitwise::mutex::{RawRwLock, RwLock};
    use waitwise::{Policy, WaitOptions};

    /// Acquisitions per case, over all threads.
    const TOTAL_OPS: u64 = 60_000;
    /// Thread counts of every case.
    const THREADS: [u64; 4] = [2, 3, 4, 8];

    /// `threads` threads, a quarter of them (at least one) writers; with
    /// `timed`, every fourth acquisition gives up after 20 us and retries.
    fn case(threads: u64, raw: fn() -> RawRwLock, timed: bool) {
        let lock = Arc::new(RwLock::from_raw(raw(), (0u64, 0u64)));
        let writers = (threads / 4).max(1);
        let per_thread = TOTAL_OPS.div_ceil(threads);
        let start = Arc::new(Barrier::new(threads as usize));
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (lock, start) = (lock.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    for n in 0..per_thread {
                        let give_up = timed && n % 4 == 0;
                        if i < writers {
                            let mut g = loop {
                                if !give_up {
                                    break lock.write();
                                }
                                if let Some(g) = lock.try_write_for(Duration::from_micros(20)) {
                                    break g;
                                }
                            };
                            let a = g.0;
                            g.0 = a + 1;
                            if n % 32 == 0 {
                                std::thread::yield_now();
                            }
                            g.1 += 1;
                        } else {
                            let g = loop {
                                if !give_up {
                                    break lock.read();
                                }
                                if let Some(g) = lock.try_read_for(Duration::from_micros(20)) {
                                    break g;
                                }
                            };
                            if n % 64 == 0 {
                                std::thread::yield_now();
                            }
                            assert_eq!(g.0, g.1, "a reader saw a writer's half-done update");
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*lock.read(), (writers * per_thread, writers * per_thread));
        assert!(!lock.is_locked());
        assert!(
            lock.try_write().is_some(),
            "no turn is left keeping writers out"
        );
    }

    fn default_lock() -> RawRwLock {
        RawRwLock::new()
    }

    fn blocking_lock() -> RawRwLock {
        RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()))
    }

    #[test]
    fn rwlock_turns_default() {
        for t in THREADS {
            case(t, default_lock, false);
        }
    }

    #[test]
    fn rwlock_turns_always_block() {
        for t in THREADS {
            case(t, blocking_lock, false);
        }
    }

    #[test]
    fn rwlock_turns_with_deadlines() {
        for t in THREADS {
            case(t, default_lock, true);
            case(t, blocking_lock, true);
        }
    }

    /// Readers in [`readers_finish_between_alternating_writers`].
    const POLLING_READERS: usize = 6;
    /// Reads each of them makes.
    const POLLED_READS: u64 = 2_000;
    /// The writes the two writers may make before those readers have their
    /// reads: the test fails beyond. A reader that runs gets in within a few
    /// writes; one that loses its CPU for a time slice misses the writes of
    /// that slice: all the readers had their reads within 70,000-410,000
    /// writes here. A reader that never asks again after a missed turn waits
    /// while the writers alternate, without end (the cap was reached in 0.3 s).
    const WRITES_BEFORE_STARVED: u64 = 20_000_000;
    /// Writes made before the readers start: both writers are under way.
    const WRITES_UNDER_WAY: u64 = 10_000;

    /// Two writers that alternate keep a writer waiting at almost every
    /// moment, so turns are what lets readers in; the readers poll (yielding)
    /// and never sleep, so no wake-up brings one back to ask for a turn, and
    /// with more threads than CPUs they miss turns. Each must ask again after
    /// every turn it misses.
    #[test]
    fn polling_readers_get_turns_between_alternating_writers() {
        let policy = Policy::always_spin().with_mechanism(waitwise::Mechanism::Yield);
        readers_finish_between_alternating_writers(RawRwLock::with_options(
            WaitOptions::new().policy(policy),
        ));
    }

    /// The same with readers that sleep at once: each write unlock that
    /// grants a turn wakes them, and a reader that finds the turn over when
    /// it runs asks for the next one before it sleeps again.
    #[test]
    fn sleeping_readers_get_turns_between_alternating_writers() {
        readers_finish_between_alternating_writers(RawRwLock::with_options(
            WaitOptions::new().policy(Policy::always_block()),
        ));
    }

    /// The same with the default waiting: readers poll, then sleep.
    #[test]
    fn default_readers_get_turns_between_alternating_writers() {
        readers_finish_between_alternating_writers(RawRwLock::new());
    }

    /// [`POLLING_READERS`] readers make [`POLLED_READS`] reads each on
    /// `raw` while two writers alternate; fails if the writers make
    /// [`WRITES_BEFORE_STARVED`] writes first, or if the free lock at the
    /// end does not take a write at once.
    fn readers_finish_between_alternating_writers(raw: RawRwLock) {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let lock = Arc::new(RwLock::from_raw(raw, 0u64));
        // Relaxed: a flag and a counter; the lock orders the data.
        let done = Arc::new(AtomicBool::new(false));
        let writes = Arc::new(AtomicU64::new(0));
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let (lock, done, writes) = (lock.clone(), done.clone(), writes.clone());
                std::thread::spawn(move || {
                    while !done.load(Ordering::Relaxed)
                        && writes.fetch_add(1, Ordering::Relaxed) < WRITES_BEFORE_STARVED
                    {
                        *lock.write() += 1;
                    }
                })
            })
            .collect();
        // Both writers under way before the first read.
        while writes.load(Ordering::Relaxed) < WRITES_UNDER_WAY {
            std::thread::yield_now();
        }
        let readers: Vec<_> = (0..POLLING_READERS)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    let mut last = 0;
                    for _ in 0..POLLED_READS {
                        let seen = *lock.read();
                        assert!(seen >= last, "a write was lost");
                        last = seen;
                    }
                })
            })
            .collect();
        for h in readers {
            h.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        for h in writers {
            h.join().unwrap();
        }
        let w = writes.load(Ordering::Relaxed);
        assert!(
            w < WRITES_BEFORE_STARVED,
            "the readers made {POLLED_READS} reads each only after {w} writes"
        );
        assert!(
            lock.try_write().is_some(),
            "no turn is left keeping writers out"
        );
    }
}

/// Stress test of the reader-writer lock's starving writers
/// (`mutex/rwlock.rs`, "Bounded unfairness among writers"): writers that
/// re-take the lock by barging tries as fast as they can, writers that
/// wait for it (some giving up after 20 us and retrying, so that starving
/// writers time out), and readers, on more threads than this machine has
/// CPUs. Checked: exclusion (a writer updates two halves, readers never see
/// them differ), no lost update, no lost wake-up (every waiting writer
/// finishes its acquisitions while the barging ones go on), and no
/// starving count left behind (the free lock takes a barging write at the
/// end). Validation only; timing is for `examples/mutex_starvation.rs`.
mod starving_writers {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Barrier};
    use std::time::Duration;
    use waitwise::mutex::{RawRwLock, RwLock};
    use waitwise::{Policy, WaitOptions};

    /// Acquisitions of each waiting writer.
    const WAITING_WRITES: u64 = 20_000;

    fn case(raw: fn() -> RawRwLock, barging: usize, waiting: usize, readers: usize) {
        let lock = Arc::new(RwLock::from_raw(raw(), (0u64, 0u64)));
        let done = Arc::new(AtomicBool::new(false));
        let barged = Arc::new(AtomicU64::new(0));
        let start = Arc::new(Barrier::new(barging + waiting + readers));
        let spawn = |f: Box<dyn FnOnce() + Send>| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                f()
            })
        };
        let update = |g: &mut (u64, u64)| {
            let a = g.0;
            g.0 = a + 1;
            g.1 += 1;
        };
        let mut others = Vec::new();
        for _ in 0..barging {
            let (lock, done, barged) = (lock.clone(), done.clone(), barged.clone());
            others.push(spawn(Box::new(move || {
                while !done.load(Ordering::Relaxed) {
                    if let Some(mut g) = lock.try_write() {
                        update(&mut g);
                        barged.fetch_add(1, Ordering::Relaxed);
                    } else {
                        std::hint::spin_loop();
                    }
                }
            })));
        }
        for _ in 0..readers {
            let (lock, done) = (lock.clone(), done.clone());
            others.push(spawn(Box::new(move || {
                while !done.load(Ordering::Relaxed) {
                    let g = lock.read();
                    assert_eq!(g.0, g.1, "a reader saw a writer's half-done update");
                }
            })));
        }
        let waiters: Vec<_> = (0..waiting)
            .map(|_| {
                let lock = lock.clone();
                spawn(Box::new(move || {
                    for n in 0..WAITING_WRITES {
                        let mut g = loop {
                            if n % 4 != 0 {
                                break lock.write();
                            }
                            if let Some(g) = lock.try_write_for(Duration::from_micros(20)) {
                                break g;
                            }
                        };
                        update(&mut g);
                    }
                }))
            })
            .collect();
        for h in waiters {
            h.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        for h in others {
            h.join().unwrap();
        }
        let writes = waiting as u64 * WAITING_WRITES + barged.load(Ordering::Relaxed);
        assert_eq!(*lock.read(), (writes, writes));
        assert!(!lock.is_locked());
        assert!(
            lock.try_write().is_some(),
            "no starving writer is left counted on the free lock"
        );
        // SAFETY: only reads the raw lock's state.
        let state = format!("{:?}", unsafe { lock.raw() });
        assert!(
            state.contains("writers_waiting: 0, writers_starving: 0"),
            "{state}"
        );
    }

    #[test]
    fn waiting_writers_finish_beside_barging_writers_default_policy() {
        case(RawRwLock::new, 3, 3, 2);
    }

    #[test]
    fn waiting_writers_finish_beside_barging_writers_always_block() {
        case(
            || RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block())),
            2,
            4,
            1,
        );
    }
}
