//! Loom models of the TTAS lock (`mutex/ttas.rs`): mutual exclusion,
//! publication (every acquisition, fast, slow, `try` or timed, sees the
//! previous holders' writes: loom checks the `UnsafeCell` accesses) and no
//! lost wake-up in any interleaving, for `RawTtasMutex` and for the
//! algorithm's view over a borrowed word (`TtasLockRef`, the code the
//! interposer's `pthread_mutex_t` runs) with a front end's own `LockWait`
//! (a `TwoPhaseWait`) whose polling phase is the engine's `poll_until`,
//! one look at the word under loom: the `ttas_view_*` models reach the polling phase's race
//! (see `UNLOCKED`, lose the CAS, back off, look again), which
//! `RawTtasMutex` skips under loom. The raw lock's own methods are tested
//! (lock_api's traits need `const INIT`, which loom's atomics cannot give).
//! The hand-off models are in [`hand_off`].
//!
//! Limits: the polling phases are otherwise not modelled (the lock makes
//! one test-and-set probe instead). The platform's loom futex wakes one
//! sleeper on `wake(1)` (the first to sleep), so a lost single wake-up is
//! observable: without the "owed wake-up" rule
//! `ttas_three_threads_no_lost_wakeup` deadlocks. A timed futex wait never
//! sleeps under loom (it times out at once), so a timed waiter that is
//! woken and then gives up (the `pay_wake_on_give_up` path) is not reached
//! here; `stress_ttas.rs` covers it with real futexes.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_ttas`.
#![cfg(loom)]

mod loom_common;

use loom::thread;
use loom_common::locks::*;
use loom_common::model_reaching_both;
use waitwise::mutex::{set_model_cpu, LockWait, RawTtasMutex, TtasLockRef};
use waitwise::two_phase_wait::TwoPhaseWait;
use waitwise::wait_word::poll_until;
use waitwise::{Deadline, Mechanism};
use waitwise_platform::futex::Futex;
use waitwise_platform::shim::Arc;

/// A TTAS lock word that lives outside any lock type, driven through
/// [`TtasLockRef`] as the interposer drives `pthread_mutex_t`'s `__lock`.
struct BorrowedTtas {
    word: Futex,
}

/// A front end's [`LockWait`]: a polling phase every round, the engine's
/// `poll_until` (one look at the word under loom), and the default futex
/// sleep.
struct PollingWait;

impl TwoPhaseWait for PollingWait {
    fn start_polling(&mut self, _deadline: Deadline) -> bool {
        true
    }

    fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool {
        !poll_until(futex, Mechanism::Pause, Deadline::NEVER, ready).timed_out()
    }
}

impl LockWait for PollingWait {}

impl BorrowedTtas {
    fn new() -> Self {
        Self {
            word: Futex::new(0),
        }
    }

    fn view(&self) -> TtasLockRef<'_> {
        TtasLockRef::new(&self.word)
    }
}

impl RawLock for BorrowedTtas {
    type Guard = ();

    fn acquire(&self) {
        let lock = self.view();
        if !lock.try_lock() {
            let out = lock.lock_contended(&mut PollingWait, Deadline::NEVER);
            assert!(out.acquired());
        }
    }

    fn try_acquire(&self) -> Option<()> {
        self.view().try_lock().then_some(())
    }

    fn acquire_until(&self, deadline: Deadline) -> Option<()> {
        let lock = self.view();
        (lock.try_lock() || lock.lock_contended(&mut PollingWait, deadline).acquired())
            .then_some(())
    }

    unsafe fn release(&self, (): ()) {
        assert!(self.view().unlock(), "released a lock that was not held");
    }
}

#[test]
fn ttas_two_threads_exclusive() {
    loom::model(|| increment_in_two_threads(RawTtasMutex::with_options(blocking())));
}

#[test]
fn ttas_three_threads_no_lost_wakeup() {
    // Two sleepers and one release chain: the woken one owes the other
    // its wake-up.
    loom::model(|| {
        let m = Arc::new(RawTtasMutex::with_options(blocking()));
        let hs: Vec<_> = (0..2).map(|_| spawn_locker(&m)).collect();
        locked(&*m, || {});
        for h in hs {
            h.join().unwrap();
        }
        assert!(!m.is_locked());
    });
}

#[test]
fn ttas_timed_out_waiter_does_not_strand_sleeper() {
    // Under loom a timed futex wait may time out at once: explore a waiter
    // that gives up while another sleeps. The deadline is far off so that
    // the real clock never decides a branch (a slow iteration would take
    // another path and break loom's replay); the loom futex's timeout does.
    loom::model(|| {
        let m = Arc::new(RawTtasMutex::with_options(blocking()));
        m.lock();
        let sleeper = spawn_locker(&m);
        let m2 = m.clone();
        let timed = thread::spawn(move || {
            if m2.try_lock_until(Deadline::after(std::time::Duration::from_secs(3600))) {
                // SAFETY: acquired just above.
                unsafe { m2.unlock() };
            }
        });
        // SAFETY: locked above by this thread.
        unsafe { m.unlock() };
        sleeper.join().unwrap();
        timed.join().unwrap();
        assert!(!m.is_locked());
    });
}

/// Threads on two model CPUs lock twice each (turns of 2 releases, kept
/// at every release under loom, `cpu_turns.rs`): mutual exclusion, no
/// lost wake-up, and executions where a release kept a turn (a thread of
/// the other CPU waited) as well as executions where none did.
#[test]
fn ttas_turns_between_model_cpus() {
    model_reaching_both("a release kept a turn", || {
        let s = shared(RawTtasMutex::with_options(blocking()));
        let s2 = s.clone();
        let t = thread::spawn(move || {
            set_model_cpu(1);
            let mut kept = false;
            for _ in 0..2 {
                // SAFETY: the closure runs with the lock held.
                locked(&s2.lock, || s2.count.with_mut(|c| unsafe { *c += 1 }));
                kept |= s2.lock.turns().kept();
            }
            kept
        });
        set_model_cpu(0);
        let mut kept = false;
        for _ in 0..2 {
            // SAFETY: the closure runs with the lock held.
            locked(&s.lock, || s.count.with_mut(|c| unsafe { *c += 1 }));
            kept |= s.lock.turns().kept();
        }
        kept |= t.join().unwrap();
        // SAFETY: the closure runs with the lock held.
        locked(&s.lock, || assert_eq!(s.count.with(|c| unsafe { *c }), 4));
        assert!(!s.lock.is_locked());
        kept
    });
}

/// Three threads, two of them on one model CPU, with the turns: the
/// release of the thread on model CPU 0 keeps a turn for its CPU while the
/// others wait or sleep, so that an arrival of CPU 1 finds a turn kept for
/// another CPU; no lost wake-up, and the lock ends free.
#[test]
fn ttas_turns_three_threads_no_lost_wakeup() {
    loom::model(|| {
        let m = Arc::new(RawTtasMutex::with_options(blocking()));
        let hs: Vec<_> = [1, 1]
            .into_iter()
            .map(|cpu| {
                let m = m.clone();
                thread::spawn(move || {
                    set_model_cpu(cpu);
                    locked(&*m, || {});
                })
            })
            .collect();
        locked(&*m, || {});
        for h in hs {
            h.join().unwrap();
        }
        assert!(!m.is_locked());
    });
}

#[test]
fn ttas_view_two_threads_exclusive() {
    loom::model(|| increment_in_two_threads(BorrowedTtas::new()));
}

#[test]
fn ttas_view_three_threads_no_lost_wakeup() {
    loom::model(|| {
        let m = Arc::new(BorrowedTtas::new());
        let hs: Vec<_> = (0..2).map(|_| spawn_locker(&m)).collect();
        locked(&*m, || {});
        for h in hs {
            h.join().unwrap();
        }
        assert!(!m.view().is_locked());
    });
}

fn ttas() -> RawTtasMutex {
    RawTtasMutex::with_options(blocking())
}

#[test]
fn ttas_try_lock_races_a_locker() {
    try_lock_races_a_locker(ttas);
}

#[test]
fn ttas_view_try_lock_races_a_locker() {
    try_lock_races_a_locker(BorrowedTtas::new);
}

#[test]
fn ttas_view_timed_attempt_races_a_holder_and_a_sleeper() {
    timed_attempt_races_a_holder_and_a_sleeper(BorrowedTtas::new);
}

#[test]
fn ttas_timed_attempt_races_a_holder_and_a_sleeper() {
    timed_attempt_races_a_holder_and_a_sleeper(ttas);
}

/// The hand-off (`mutex/ttas.rs`, "Bounded unfairness").
/// Loom models of the TTAS lock's hand-off (`mutex/ttas.rs`, "Bounded
/// unfairness"): waiters that ask for a hand-off count themselves in the
/// word's `STARVING` bits, an unlock then hands the lock to a woken
/// sleeper (`HANDED_OFF`) instead of releasing it, and takes it back when
/// nobody took it. Checked in every interleaving: mutual exclusion and
/// publication (loom checks the `UnsafeCell` accesses), no lost wake-up
/// (a stranded sleeper is a deadlock loom reports), and a word back at 0
/// (unlocked, `STARVING` empty) once everybody is done.
///
/// The lock is driven through `TtasLockRef` with front ends of its own
/// whose waiters ask for a hand-off at their first sleep (or after one lost
/// round), so that the small models reach the hand-off; `RawTtasMutex`
/// asks after `HAND_OFF_AFTER_LOST_ROUNDS` lost rounds, more than these
/// models' two or three threads lose. Loom's futex wakes the first sleeper
/// on `wake(1)` but reports no count, so every hand-off here also takes
/// the lock back (`HANDED_OFF => UNLOCKED`) unless the woken thread ran
/// first: both orders are explored. The paced models release through
/// `TtasLockRef::unlock_paced`, refusing some or all requests (as
/// `RawTtasMutex`'s `HandOffPace` refuses those within its interval).
///
mod hand_off {
    use crate::loom_common::model_reaching_both;
    use loom::cell::UnsafeCell;
    use loom::thread;
    use std::time::Duration;
    use waitwise::mutex::{LockWait, TtasLockRef};
    use waitwise::two_phase_wait::TwoPhaseWait;
    use waitwise::wait_word::poll_until;
    use waitwise::{Deadline, Mechanism};
    use waitwise_platform::futex::{Futex, FutexWait};
    use waitwise_platform::shim::{Arc, AtomicBool, Ordering};

    /// A lock word, a counter it protects, and whether a sleeper was seen
    /// coming back to a handed-off word.
    struct Shared {
        word: Futex,
        count: UnsafeCell<u32>,
        handed_off_seen: AtomicBool,
        pace: Pace,
        /// For `Pace::Alternate`: whether the next asked hand-off is allowed.
        allow_next: AtomicBool,
    }

    /// How the releases of a model answer a waiter's request for a hand-off
    /// (`TtasLockRef::unlock_paced`; `RawTtasMutex` asks its `HandOffPace`).
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Pace {
        /// Every request is granted (`TtasLockRef::unlock`).
        Unpaced,
        /// Refused, granted, refused, ... in the order the releases ask.
        Alternate,
        /// Every request is refused: releases release and wake as if nobody
        /// asked, and `STARVING` drains only as the starving waiters acquire.
        RefuseAll,
    }

    // SAFETY: `count` is only accessed with the lock held (loom checks it).
    unsafe impl Sync for Shared {}

    impl Shared {
        fn new() -> Arc<Self> {
            Self::paced(Pace::Unpaced)
        }

        fn paced(pace: Pace) -> Arc<Self> {
            Arc::new(Self {
                word: Futex::new(0),
                count: UnsafeCell::new(0),
                handed_off_seen: AtomicBool::new(false),
                pace,
                allow_next: AtomicBool::new(false),
            })
        }

        /// Releases the lock, answering a request for a hand-off as `pace`
        /// says; whether it was held.
        fn unlock(&self) -> bool {
            match self.pace {
                Pace::Unpaced => self.lock().unlock(),
                Pace::Alternate => self
                    .lock()
                    .unlock_paced(|| self.allow_next.fetch_xor(true, Ordering::SeqCst)),
                Pace::RefuseAll => self.lock().unlock_paced(|| false),
            }
        }

        fn lock(&self) -> TtasLockRef<'_> {
            TtasLockRef::new(&self.word)
        }

        /// Takes the lock (waiting as `wait` says, until `deadline`), bumps the
        /// count and releases it; whether it got the lock.
        fn bump(&self, mut wait: Asking<'_>, deadline: Deadline) -> bool {
            let lock = self.lock();
            if !lock.try_lock() && !lock.lock_contended(&mut wait, deadline).acquired() {
                return false;
            }
            // SAFETY: the lock is held; loom checks the access.
            self.count.with_mut(|c| unsafe { *c += 1 });
            assert!(self.unlock(), "released a lock that was not held");
            true
        }

        /// The count, once every thread is joined.
        fn count(&self) -> u32 {
            // SAFETY: every other thread is joined.
            self.count.with(|c| unsafe { *c })
        }

        /// The whole word: 0 when unlocked with nobody counted in `STARVING`.
        fn word(&self) -> u32 {
            self.word.value().load(Ordering::SeqCst)
        }
    }

    /// A front end whose waiters ask for a hand-off after `after` lost rounds,
    /// with a polling phase (the engine's `poll_until`, one look under loom)
    /// when `polls`, and a sleep that records a handed-off word (state 3) found
    /// on waking.
    struct Asking<'a> {
        after: u32,
        polls: bool,
        seen: &'a AtomicBool,
    }

    impl TwoPhaseWait for Asking<'_> {
        fn start_polling(&mut self, _deadline: Deadline) -> bool {
            self.polls
        }

        fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool {
            !poll_until(futex, Mechanism::Pause, Deadline::NEVER, ready).timed_out()
        }

        fn sleep(&mut self, futex: &Futex, expected: u32, timeout: Option<Duration>) -> FutexWait {
            let slept = futex.wait(expected, timeout);
            if slept == FutexWait::Woken && futex.value().load(Ordering::SeqCst) & 3 == 3 {
                self.seen.store(true, Ordering::SeqCst);
            }
            slept
        }
    }

    impl LockWait for Asking<'_> {
        fn hand_off_after(&self) -> Option<u32> {
            Some(self.after)
        }
    }

    fn asking_at_once(s: &Shared) -> Asking<'_> {
        Asking {
            after: 0,
            polls: false,
            seen: &s.handed_off_seen,
        }
    }

    /// Spawns a thread that takes the lock once with an asking waiter.
    fn spawn_asking(s: &Arc<Shared>, after: u32, polls: bool) -> thread::JoinHandle<()> {
        let s = s.clone();
        thread::spawn(move || {
            let wait = Asking {
                after,
                polls,
                seen: &s.handed_off_seen,
            };
            assert!(s.bump(wait, Deadline::NEVER));
        })
    }

    /// Two asking threads: mutual exclusion, publication, word back at 0.
    #[test]
    fn handoff_two_asking_threads_exclusive() {
        loom::model(|| {
            let s = Shared::new();
            let t = spawn_asking(&s, 0, false);
            assert!(s.bump(asking_at_once(&s), Deadline::NEVER));
            t.join().unwrap();
            assert_eq!(s.count(), 2);
            assert_eq!(s.word(), 0);
        });
    }

    /// A holder and two asking sleepers: each release hands off or takes the
    /// lock back and wakes again; nobody is stranded, and some interleaving
    /// hands the lock to a sleeper that finds it `HANDED_OFF`.
    #[test]
    fn handoff_holder_and_two_asking_sleepers_no_lost_wakeup() {
        model_reaching_both("a sleeper woke to a handed-off lock", || {
            let s = Shared::new();
            assert!(s.lock().try_lock());
            let hs: Vec<_> = (0..2).map(|_| spawn_asking(&s, 0, false)).collect();
            assert!(s.lock().unlock());
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(s.count(), 2);
            assert_eq!(s.word(), 0);
            s.handed_off_seen.load(Ordering::SeqCst)
        });
    }

    /// An asking sleeper beside one that never asks (the interposer's kind of
    /// waiter) and one that polls first and asks after a lost round.
    #[test]
    fn handoff_mixed_waiters_no_lost_wakeup() {
        loom::model(|| {
            let s = Shared::new();
            assert!(s.lock().try_lock());
            let asking = spawn_asking(&s, 0, false);
            let polling = spawn_asking(&s, 1, true);
            // SAFETY: the lock is held; loom checks the access.
            s.count.with_mut(|c| unsafe { *c += 1 });
            assert!(s.lock().unlock());
            asking.join().unwrap();
            polling.join().unwrap();
            assert_eq!(s.count(), 3);
            assert_eq!(s.word(), 0);
        });
    }

    /// An asking waiter with a deadline (loom times its sleep out at once)
    /// beside an asking sleeper: giving up leaves `STARVING`, takes a free lock
    /// or pays a wake-up it owes, and never strands the sleeper.
    #[test]
    fn handoff_timed_out_asking_waiter_does_not_strand_a_sleeper() {
        model_reaching_both("the timed waiter got the lock", || {
            let s = Shared::new();
            assert!(s.lock().try_lock());
            let sleeper = spawn_asking(&s, 0, false);
            let timed = {
                let s = s.clone();
                thread::spawn(move || {
                    // Far enough that the real clock never decides a branch.
                    let far = Deadline::after(Duration::from_secs(3600));
                    s.bump(asking_at_once(&s), far)
                })
            };
            assert!(s.lock().unlock());
            sleeper.join().unwrap();
            let got = timed.join().unwrap();
            assert_eq!(s.count(), 1 + u32::from(got));
            assert_eq!(s.word(), 0);
            got
        });
    }

    /// A holder and two asking sleepers whose releases are paced: a refused
    /// request releases and wakes one sleeper with `STARVING` kept, a granted
    /// one hands off; nobody is stranded either way, and the word ends at 0.
    #[test]
    fn handoff_paced_releases_no_lost_wakeup() {
        for pace in [Pace::Alternate, Pace::RefuseAll] {
            loom::model(move || {
                let s = Shared::paced(pace);
                assert!(s.lock().try_lock());
                let hs: Vec<_> = (0..2).map(|_| spawn_asking(&s, 0, false)).collect();
                assert!(s.unlock());
                for h in hs {
                    h.join().unwrap();
                }
                assert_eq!(s.count(), 2);
                assert_eq!(s.word(), 0);
            });
        }
    }

    /// With every request refused, a sleeper never finds a handed-off word:
    /// the pace's refusal is a plain release.
    #[test]
    fn handoff_refused_never_hands_off() {
        loom::model(|| {
            let s = Shared::paced(Pace::RefuseAll);
            assert!(s.lock().try_lock());
            let t = spawn_asking(&s, 0, false);
            assert!(s.unlock());
            t.join().unwrap();
            assert_eq!(s.count(), 1);
            assert_eq!(s.word(), 0);
            assert!(!s.handed_off_seen.load(Ordering::SeqCst));
        });
    }
}
