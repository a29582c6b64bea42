//! Stress tests of the TTAS lock (`mutex/ttas.rs`, the default mutex):
//! mutual exclusion checked with a non-atomic counter at 2, 3, 4 and 8
//! threads (more threads than a small machine's CPUs), at least 100,000
//! lock/unlock operations per case; timed acquisitions time out on time;
//! the CPU turns (`mutex/cpu_turns.rs`); and the hand-off ([`hand_off`]).
//! Validation only; timing is for `examples/mutex_bench.rs`.
#![cfg(not(loom))]

#[macro_use]
mod common;

use common::locks::timed;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;
use waitwise::mutex::RawTtasMutex;
use waitwise::{Policy, WaitOptions};

/// Serializes the tests that crowd the CPUs with many threads (the
/// hand-off's) and the turn tests, which need threads of two CPUs to
/// contend: run side by side in one process, the first keep the second
/// from ever seeing a turn kept.
fn crowding_alone() -> std::sync::MutexGuard<'static, ()> {
    static CROWDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    CROWDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The first two CPUs this process may run on (fewer where fewer are
/// allowed or the mask cannot be read), for the tests that pin a thread to
/// each.
fn two_allowed_cpus() -> Vec<usize> {
    waitwise::platform::affinity::allowed_cpus()
        .unwrap_or_default()
        .into_iter()
        .take(2)
        .collect()
}

exclusion_table! {
    ttas_default: RawTtasMutex::new;
    ttas_always_block: || RawTtasMutex::with_options(WaitOptions::new().policy(Policy::always_block()));
    ttas_always_spin_with_timeout: || RawTtasMutex::with_options(
        WaitOptions::new().policy(Policy::always_spin_with_timeout(Duration::from_micros(50))));
}

#[test]
fn ttas_timeouts() {
    timed(RawTtasMutex::new);
    timed(|| RawTtasMutex::with_options(WaitOptions::new().policy(Policy::always_block())));
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
    let _alone = crowding_alone();
    use waitwise::platform::affinity::set_current_thread_affinity;
    const THREADS: usize = 8;
    const PER_THREAD: u64 = 200_000;
    let pair = two_allowed_cpus();
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

/// Two threads, pinned one to each of two CPUs where two are allowed, then
/// four (more threads than a small machine's CPUs), take the default
/// mutex back to back through critical sections of 200 spin-loop hints
/// (a µs or more), so that its turns hold through the paced stall and the
/// waiter out of turn sleeps through them on the hint (`cpu_turns.rs`,
/// "Sleeping through a turn"); untimed, and with `try_lock_for` deadlines
/// shorter than a turn: exclusion, every untimed acquisition made, and no
/// hang (a waiter whose wake-up came late or never probes the lock after
/// its stall).
#[test]
fn ttas_two_threads_sleeping_through_slow_turns() {
    let _alone = crowding_alone();
    use waitwise::platform::affinity::set_current_thread_affinity;
    const PER_THREAD: u64 = 20_000;
    let pair = two_allowed_cpus();
    for (threads, timed) in [(2usize, false), (2, true), (4, false)] {
        let m = Arc::new(lock_api::Mutex::<RawTtasMutex, u64>::new(0));
        let start = Arc::new(Barrier::new(threads));
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (m, start, pair) = (m.clone(), start.clone(), pair.clone());
                std::thread::spawn(move || {
                    if let Some(&cpu) = pair.get(i % pair.len().max(1)) {
                        set_current_thread_affinity(&[cpu]).expect("pin to an allowed CPU");
                    }
                    start.wait();
                    let mut acquired = 0u64;
                    for _ in 0..PER_THREAD {
                        let guard = if timed && i % 2 == 1 {
                            m.try_lock_for(Duration::from_micros(30))
                        } else {
                            Some(m.lock())
                        };
                        let Some(mut g) = guard else { continue };
                        // Read, then write: a racing thread would lose updates.
                        let v = *g;
                        for _ in 0..200 {
                            std::hint::spin_loop();
                        }
                        *g = v + 1;
                        drop(g);
                        acquired += 1;
                    }
                    acquired
                })
            })
            .collect();
        let acquired: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        for (i, &n) in acquired.iter().enumerate() {
            if !(timed && i % 2 == 1) {
                assert_eq!(n, PER_THREAD, "thread {i} made every acquisition");
            }
        }
        let total: u64 = acquired.iter().sum();
        assert_eq!(*m.lock(), total, "lost updates: two holders at once");
        assert!(!m.is_locked());
    }
}

/// Stress tests of the TTAS lock's hand-off (`mutex/ttas.rs`, "Bounded
/// unfairness"): waiters that ask for a hand-off at once, after one lost
/// round, or never, mixed, at 2, 3, 4 and 8 threads (more threads than
/// this machine's CPUs), with and without deadlines, with every request
/// for a hand-off granted, paced, or refused. Checked: mutual
/// exclusion (a non-atomic counter loses no update), no lost wake-up (every
/// case finishes), and a word back at 0 (unlocked, nobody counted as
/// starving) at the end. Validation only; timing is for
/// `examples/mutex_starvation.rs`.
mod hand_off {
    use std::cell::UnsafeCell;
    use std::sync::{Arc, Barrier};
    use std::time::Duration;
    use waitwise::mutex::{AskingForHandOff, HandOffPace, LockOutcome, LockWait, TtasLockRef};
    use waitwise::platform::clock::cycle_clock;
    use waitwise::platform::futex::Futex;
    use waitwise::two_phase_wait::{PolicyWait, TwoPhaseWait};
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
        /// Its polling phase and sleep.
        fn polling(self) -> PolicyWait {
            match self {
                Waiter::AsksAtOnce => PolicyWait::new(&Policy::always_block()),
                Waiter::PollsThenAsks | Waiter::NeverAsks => PolicyWait::new(
                    &Policy::poll_then_block(Duration::from_micros(2))
                        .with_mechanism(Mechanism::Yield),
                ),
            }
        }

        /// After how many lost rounds it asks for a hand-off.
        fn hand_off_after(self) -> Option<u32> {
            match self {
                Waiter::AsksAtOnce => Some(0),
                Waiter::PollsThenAsks => Some(1),
                Waiter::NeverAsks => None,
            }
        }

        /// `lock.lock_contended`, waiting as this waiter does.
        fn lock_contended(self, lock: TtasLockRef<'_>, deadline: Deadline) -> LockOutcome {
            match self.hand_off_after() {
                Some(n) => {
                    lock.lock_contended(&mut AskingForHandOff::new(self.polling(), n), deadline)
                }
                None => lock.lock_contended(&mut self.polling(), deadline),
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
                            if kind.lock_contended(lock, deadline).acquired() {
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
                            Release::Paced(interval) => lock
                                .unlock_paced(|| shared.pace.allows(cycle_clock().now(), interval)),
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
                let _alone = super::crowding_alone();
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
        let _alone = super::crowding_alone();
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

    impl TwoPhaseWait for OwnFrontEnd {
        fn start_polling(&mut self, _deadline: Deadline) -> bool {
            false
        }

        fn poll(&mut self, _futex: &Futex, _ready: impl FnMut(u32) -> bool) -> bool {
            unreachable!("no polling phase")
        }
    }

    impl LockWait for OwnFrontEnd {
        fn hand_off_after(&self) -> Option<u32> {
            Some(0)
        }
    }

    /// The default `Mutex` (whose waiters ask after
    /// `HAND_OFF_AFTER_LOST_ROUNDS` lost rounds) with more threads than CPUs,
    /// and a front end of its own that asks at once.
    #[test]
    fn default_mutex_under_oversubscription() {
        let _alone = super::crowding_alone();
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
}

/// Two threads, pinned one to each of two CPUs where two are allowed, take
/// the default mutex back to back through critical sections of ~100
/// spin-loop hints, so that most contended acquisitions end in the early
/// or backed-off looks (`mutex/ttas.rs`, "Early looks"), among them
/// `try_lock_for` with deadlines shorter than those looks; then a third,
/// unpinned thread joins them (more threads than a 2-CPU machine's CPUs,
/// where the looks stop). Checked: mutual exclusion (a non-atomic
/// counter), every untimed acquisition served, a timed one that failed
/// returned, and the lock free at the end.
#[test]
fn ttas_holders_that_take_the_lock_back_at_once() {
    let _alone = crowding_alone();
    use waitwise::platform::affinity::set_current_thread_affinity;
    const PER_THREAD: u64 = 100_000;
    let cpus = two_allowed_cpus();
    for threads in [2usize, 3] {
        let m = Arc::new(lock_api::Mutex::<RawTtasMutex, u64>::new(0));
        let start = Arc::new(Barrier::new(threads));
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (m, start, cpus) = (m.clone(), start.clone(), cpus.clone());
                std::thread::spawn(move || {
                    if let (true, Some(&cpu)) = (i < 2, cpus.get(i)) {
                        set_current_thread_affinity(&[cpu]).expect("pin to an allowed CPU");
                    }
                    start.wait();
                    let (mut untimed, mut timed_out) = (0u64, 0u64);
                    for j in 0..PER_THREAD {
                        let guard = if j % 8 == 0 {
                            m.try_lock_for(Duration::from_nanos(500 + (j % 3) * 2_000))
                        } else {
                            untimed += 1;
                            Some(m.lock())
                        };
                        let Some(mut g) = guard else {
                            timed_out += 1;
                            continue;
                        };
                        // Read, then write: a racing thread would lose updates.
                        let v = *g;
                        for _ in 0..100 {
                            std::hint::spin_loop();
                        }
                        *g = v + 1;
                    }
                    (PER_THREAD - timed_out, untimed)
                })
            })
            .collect();
        let (mut acquired, mut untimed) = (0u64, 0u64);
        for h in hs {
            let (a, u) = h.join().unwrap();
            assert!(a >= u, "every untimed acquisition returns a guard");
            acquired += a;
            untimed += u;
        }
        assert!(untimed == threads as u64 * PER_THREAD * 7 / 8);
        assert_eq!(
            *m.lock(),
            acquired,
            "lost updates: two holders at once ({threads} threads)"
        );
        assert!(!m.is_locked());
    }
}
