//! Stress tests for the mutexes and the reader-writer lock: mutual exclusion
//! checked with a non-atomic counter, at 2, 3, 4 and 8 threads (more threads
//! than this machine's CPUs), at least 100,000 lock/unlock operations per
//! case; timed acquisitions time out on time. Validation only; timing is for
//! `examples/mutex_bench.rs`.
#![cfg(not(loom))]

use lock_api::{RawMutex, RawMutexTimed};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use waitwise::mutex::{RawMcsMutex, RawRwLock, RawTicketMutex, RawTtasMutex, RwLock};
use waitwise::{Policy, WaitOptions};

/// Lock/unlock operations per case, over all threads.
const TOTAL_OPS: u64 = 100_000;
/// Thread counts of every case.
const THREADS: [u64; 4] = [2, 3, 4, 8];
/// Scheduling slack allowed past a timeout (a loaded 2-CPU VM).
const SLACK: Duration = Duration::from_millis(250);

/// `threads` threads increment a `u64` inside `lock_api::Mutex<R, u64>`
/// (an `UnsafeCell`: a lost update means two threads were inside at once).
fn exclusion<R: RawMutex + Send + Sync + 'static>(make: fn() -> R, threads: u64) {
    let per_thread = TOTAL_OPS.div_ceil(threads);
    let m = Arc::new(lock_api::Mutex::<R, u64>::from_raw(make(), 0));
    let start = Arc::new(Barrier::new(threads as usize));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (m, start) = (m.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for i in 0..per_thread {
                    let mut g = m.lock();
                    // Read, then write: a racing thread would lose updates.
                    let v = *g;
                    if i % 64 == 0 {
                        std::hint::spin_loop();
                    }
                    *g = v + 1;
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock(), per_thread * threads);
}

macro_rules! exclusion_table {
    ($($name:ident: $make:expr;)*) => {$(
        #[test]
        fn $name() {
            for t in THREADS {
                exclusion($make, t);
            }
        }
    )*};
}

exclusion_table! {
    ttas_default: RawTtasMutex::new;
    ttas_always_block: || RawTtasMutex::with_options(WaitOptions::new().policy(Policy::always_block()));
    ttas_always_spin_with_timeout: || RawTtasMutex::with_options(
        WaitOptions::new().policy(Policy::always_spin_with_timeout(Duration::from_micros(50))));
    ticket_default: RawTicketMutex::new;
    ticket_always_block: || RawTicketMutex::with_options(WaitOptions::new().policy(Policy::always_block()));
    // Polls of 1 us: waiters sleep whenever the queue stalls, and unlocks
    // pre-wake them (the ticket lock's sleep / pre-wake / poll-again loop).
    ticket_short_polls: || RawTicketMutex::with_options(
        WaitOptions::new().policy(Policy::poll_then_block(Duration::from_micros(1))));
    ticket_adaptive: || RawTicketMutex::with_options(WaitOptions::new().policy(Policy::adaptive()));
    mcs_default: RawMcsMutex::new;
    mcs_always_block: || RawMcsMutex::with_options(WaitOptions::new().policy(Policy::always_block()));
}

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

/// While another thread holds the lock, `try_lock_for(timeout)` returns
/// `None` no sooner than `timeout` and within `timeout + SLACK`;
/// `Duration::ZERO` returns at once.
fn timed<R: RawMutexTimed<Duration = Duration, Instant = Instant> + Send + Sync + 'static>(
    make: fn() -> R,
) {
    let m = Arc::new(lock_api::Mutex::<R, u32>::from_raw(make(), 0));
    let held = Arc::new(Barrier::new(2));
    let release = Arc::new(AtomicBool::new(false));
    let holder = {
        let (m, held, release) = (m.clone(), held.clone(), release.clone());
        std::thread::spawn(move || {
            let g = m.lock();
            held.wait();
            // Acquire: pairs with the Release store below; the flag carries
            // no data, so Relaxed would do as well.
            while !release.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
            drop(g);
        })
    };
    held.wait();
    for timeout in [Duration::from_millis(20), Duration::from_millis(5)] {
        let t = Instant::now();
        assert!(m.try_lock_for(timeout).is_none());
        let took = t.elapsed();
        assert!(took >= timeout, "returned early: {took:?} < {timeout:?}");
        assert!(took < timeout + SLACK, "returned late: {took:?}");
        let t = Instant::now();
        assert!(m.try_lock_until(Instant::now() + timeout).is_none());
        assert!(t.elapsed() < timeout + SLACK);
    }
    let t = Instant::now();
    assert!(m.try_lock_for(Duration::ZERO).is_none());
    assert!(t.elapsed() < SLACK, "ZERO waited {:?}", t.elapsed());
    // Release: pairs with the holder's Acquire load (no data rides on it).
    release.store(true, Ordering::Release);
    holder.join().unwrap();
    // Free again: a timed attempt succeeds, and the lock still works.
    assert!(m.try_lock_for(Duration::from_millis(100)).is_some());
    *m.lock() += 1;
    assert_eq!(*m.lock(), 1);
}

#[test]
fn ttas_timeouts() {
    timed(RawTtasMutex::new);
    timed(|| RawTtasMutex::with_options(WaitOptions::new().policy(Policy::always_block())));
}

#[test]
fn ticket_timeouts() {
    timed(RawTicketMutex::new);
}

#[test]
fn timed_waiters_compete_with_lockers() {
    // Timed attempts interleaved with plain lock(): exclusion still holds
    // and timed-out waiters leave no wake-up debt behind (nobody hangs).
    let m = Arc::new(lock_api::Mutex::<RawTtasMutex, u64>::from_raw(
        RawTtasMutex::with_options(WaitOptions::new().policy(Policy::always_block())),
        0,
    ));
    let hs: Vec<_> = (0..4)
        .map(|i| {
            let m = m.clone();
            std::thread::spawn(move || {
                let mut done = 0u64;
                for _ in 0..20_000 {
                    if i % 2 == 0 {
                        *m.lock() += 1;
                        done += 1;
                    } else if let Some(mut g) = m.try_lock_for(Duration::from_micros(20)) {
                        *g += 1;
                        done += 1;
                    }
                }
                done
            })
        })
        .collect();
    let total: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(*m.lock(), total);
}

#[test]
fn guard_unlocks_on_panic() {
    let m = Arc::new(waitwise::mutex::Mutex::new(1));
    let m2 = m.clone();
    let r = std::thread::spawn(move || {
        let _g = m2.lock();
        panic!("inside the critical section");
    })
    .join();
    assert!(r.is_err());
    assert_eq!(*m.try_lock().expect("unlocked by the unwinding guard"), 1);
    let mcs = Arc::new(waitwise::mutex::McsMutex::new(1));
    let mcs2 = mcs.clone();
    assert!(std::thread::spawn(move || {
        let _g = mcs2.lock();
        panic!("inside");
    })
    .join()
    .is_err());
    assert!(mcs.try_lock().is_some());
}

#[test]
fn statics_and_profiles() {
    static M: waitwise::mutex::Mutex<u32> = waitwise::mutex::Mutex::new(0);
    *M.lock() += 1;
    assert_eq!(*M.lock(), 1);
    let raw = RawTtasMutex::with_options(WaitOptions::new().profile(true));
    let m = Arc::new(lock_api::Mutex::<RawTtasMutex, u64>::from_raw(raw, 0));
    // SAFETY: only reading the profile through the raw lock.
    let profile = || unsafe { m.raw() }.wait_profile().expect("profiling on");
    // A round records a wait only if the second thread reached the lock
    // while it was held; on a loaded machine it may start too late, so
    // rounds repeat until one wait is recorded (each round at most one).
    let mut rounds = 0;
    while profile().total_waits == 0 {
        rounds += 1;
        let g = m.lock();
        let m2 = m.clone();
        let h = std::thread::spawn(move || *m2.lock() += 1);
        std::thread::sleep(Duration::from_millis(5));
        drop(g);
        h.join().unwrap();
        assert!(
            profile().total_waits <= 1,
            "one contended acquisition, one wait"
        );
    }
    assert_eq!(*m.lock(), rounds);
    assert_eq!(profile().kind, "mutex");
}

/// Eight threads, pinned half to each of two CPUs, take the default mutex
/// for a short critical section by `lock`, `try_lock_for` (20 µs) and
/// `try_lock`, so that the CPU turns (`mutex/cpu_turns.rs`) are kept,
/// moved and given while waiters give up and sleep: mutual exclusion,
/// every thread done, and, where two CPUs are allowed, turns kept.
#[test]
fn ttas_turns_between_pinned_cpus() {
    turns_between_cpus(None);
}

/// As [`ttas_turns_between_pinned_cpus`], but every thread moves itself to
/// the other CPU every 1000 iterations, so that threads wait and take the
/// lock with the CPU slot they saw before they moved: mutual exclusion and
/// every thread done.
#[test]
fn ttas_turns_with_threads_moving_between_cpus() {
    turns_between_cpus(Some(1000));
}

/// The threads of the two tests above; with `move_every`, each moves to
/// the other CPU of the pair after that many iterations.
fn turns_between_cpus(move_every: Option<u64>) {
    use waitwise::platform::affinity::{allowed_cpus, set_current_thread_affinity};
    const THREADS: usize = 8;
    const PER_THREAD: u64 = 200_000;
    let pair: Vec<usize> = allowed_cpus()
        .unwrap_or_default()
        .into_iter()
        .take(2)
        .collect();
    let m = Arc::new(lock_api::Mutex::<RawTtasMutex, u64>::new(0));
    let kept_seen = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(THREADS));
    let hs: Vec<_> = (0..THREADS)
        .map(|i| {
            let (m, kept_seen, start) = (m.clone(), kept_seen.clone(), start.clone());
            let pair = pair.clone();
            std::thread::spawn(move || {
                let pin = |k: usize| {
                    if let Some(&cpu) = pair.get(k % pair.len().max(1)) {
                        // Not `pin_current_thread`: it checks against the
                        // thread's own mask, which an earlier pin narrowed.
                        set_current_thread_affinity(&[cpu]).expect("pin to an allowed CPU");
                    }
                };
                pin(i);
                start.wait();
                let mut acquired = 0u64;
                for j in 0..PER_THREAD {
                    if let Some(n) = move_every.filter(|&n| j > 0 && j % n == 0) {
                        pin(i + (j / n) as usize);
                    }
                    let guard = match j % 16 {
                        0 => m.try_lock_for(Duration::from_micros(20)),
                        1 => m.try_lock(),
                        _ => Some(m.lock()),
                    };
                    let Some(mut g) = guard else { continue };
                    // Read, then write: a racing thread would lose updates.
                    let v = *g;
                    std::hint::spin_loop();
                    *g = v + 1;
                    drop(g);
                    acquired += 1;
                    // SAFETY: the raw mutex is only read (its turns), not
                    // locked or unlocked behind the `lock_api` wrapper.
                    if unsafe { m.raw() }.turns().kept() {
                        // Relaxed: a flag read after the joins.
                        kept_seen.store(true, Ordering::Relaxed);
                    }
                }
                acquired
            })
        })
        .collect();
    let acquired: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(acquired >= THREADS as u64 * PER_THREAD * 14 / 16);
    assert_eq!(*m.lock(), acquired, "lost updates: two holders at once");
    assert!(!m.is_locked());
    if pair.len() == 2 {
        assert!(
            kept_seen.load(Ordering::Relaxed),
            "threads of two CPUs contended, and no release kept a turn"
        );
    }
}
