//! Loom models of the condition variable's sequence algorithm,
//! `waitwise::condvar::CondSeqRef`, the one copy that `Condvar`, the C ABI
//! and the interposer's `pthread_cond_t` run: driven here as the front ends
//! drive it (enter holding the mutex, unlock, wait, leave, re-lock), over
//! three words as the interposer keeps them. No interleaving loses a
//! wake-up (one waiter, two waiters with two `notify_one`s, a broadcast, a
//! timed waiter giving up, a waiter unwound after its wake-up), every wait
//! returns holding the mutex, and a destroy returns only after the notified
//! waiter's last access; one model drives `Condvar` itself. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_condvar`
//! (well under a second of model time on 2 cores, plus the build).
#![cfg(loom)]

mod loom_common;

use loom_common::model_reaching_both;

use lock_api::{GuardSend, RawMutex};
use loom::thread;
use std::time::Duration;
use waitwise::condvar::{CondSeqRef, Condvar};
use waitwise::platform::futex::Futex;
use waitwise::{Deadline, Policy, SleepRules, WaitOptions, WaitWord, WaitWordRef};
use waitwise_platform::shim::{Arc, AtomicU32, Ordering};

/// A small blocking lock on a `WaitWord` (0 = unlocked, 1 = locked), so
/// loom sees the mutex too and waiters sleep instead of spinning (a spin
/// lock blows loom's branch limit with three threads). Loom atomics are not
/// `const`: build it with `Mutex::from_raw`.
struct RawWordLock(WaitWord);

// SAFETY: the CAS 0 => 1 gives mutual exclusion, with Acquire on lock and
// Release (SeqCst) on unlock.
unsafe impl RawMutex for RawWordLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = panic!("loom atomics are not const: use Mutex::from_raw");
    type Guard = GuardSend;

    fn lock(&self) -> GuardSend {
        loop {
            if let Some(g) = self.try_lock() {
                return g;
            }
            self.0
                .wait_until(&Policy::always_block(), Deadline::NEVER, |v| v == 0);
        }
    }

    fn try_lock(&self) -> Option<GuardSend> {
        // Acquire: pairs with the SeqCst (release) store in `unlock`.
        // Failure Relaxed: a failed try takes nothing.
        self.0
            .value()
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then(GuardSend::new)
    }

    unsafe fn unlock(&self, _guard: GuardSend) {
        self.0.value().store(0, Ordering::SeqCst);
        self.0.wake_one();
    }

    fn is_locked(&self) -> bool {
        // Relaxed: a snapshot that publishes nothing.
        self.0.value().load(Ordering::Relaxed) == 1
    }
}

type Mutex<T> = lock_api::Mutex<RawWordLock, T>;
type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawWordLock, T>;

fn mutex<T>(v: T) -> Mutex<T> {
    Mutex::from_raw(RawWordLock(WaitWord::new(0)), v)
}

fn condvar() -> Condvar {
    Condvar::with_options(
        WaitOptions::new()
            .policy(Policy::always_block())
            .profile(false),
    )
}

/// Far enough that the real clock never decides a branch (a slow iteration
/// would take another path and break loom's replay); under loom a timed
/// futex wait times out at once, which is what explores the give-up paths.
const FAR: Duration = Duration::from_secs(3600);

/// A condition variable's words, as the interposer keeps them inside a
/// `pthread_cond_t` (`SEQ`, `SLEEPERS`, `WAITERS`), and the waits of a
/// front end over them.
struct CondWords {
    seq: Futex,
    sleepers: AtomicU32,
    waiters: Futex,
}

impl CondWords {
    fn new() -> Self {
        Self {
            seq: Futex::new(0),
            sleepers: AtomicU32::new(0),
            waiters: Futex::new(0),
        }
    }

    fn view(&self) -> CondSeqRef<'_> {
        CondSeqRef::new(WaitWordRef::new(&self.seq, &self.sleepers), &self.waiters)
    }

    /// One wait, in the front ends' order: enter holding the mutex, unlock,
    /// wait, leave, re-lock. Returns whether it timed out.
    fn wait<T>(&self, guard: &mut MutexGuard<'_, T>, deadline: Deadline) -> bool {
        let cv = self.view();
        let ticket = cv.enter();
        lock_api::MutexGuard::unlocked(guard, || {
            let out = cv.wait(
                ticket,
                &Policy::always_block(),
                deadline,
                SleepRules::default(),
            );
            cv.leave();
            out.timed_out()
        })
    }

    /// Waits while `condition` holds.
    fn wait_while<T>(&self, guard: &mut MutexGuard<'_, T>, mut condition: impl FnMut(&T) -> bool) {
        while condition(guard) {
            self.wait(guard, Deadline::NEVER);
        }
    }

    /// Waits while `condition` holds, until `FAR`; returns whether it still
    /// held when the wait gave up (at once under loom).
    fn wait_while_timed<T>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        mut condition: impl FnMut(&T) -> bool,
    ) -> bool {
        let deadline = Deadline::after(FAR);
        while condition(guard) {
            if self.wait(guard, deadline) {
                return condition(guard);
            }
        }
        false
    }
}

/// A flag, the mutex guarding it and a condition variable's words.
type SharedFlag = Arc<(Mutex<bool>, CondWords)>;

fn shared_flag() -> SharedFlag {
    Arc::new((mutex(false), CondWords::new()))
}

/// Spawns a producer that sets the flag and notifies one waiter.
fn spawn_set_and_notify_one(shared: &SharedFlag) -> thread::JoinHandle<()> {
    let s2 = shared.clone();
    thread::spawn(move || {
        *s2.0.lock() = true;
        s2.1.view().notify_one();
    })
}

#[test]
fn notify_one_wakes_the_waiter() {
    loom::model(|| {
        let shared = shared_flag();
        let producer = spawn_set_and_notify_one(&shared);
        let mut g = shared.0.lock();
        shared.1.wait_while(&mut g, |flag| !*flag);
        assert!(*g);
        drop(g);
        producer.join().unwrap();
    });
}

/// Two waiters wait for a count to become non-zero and each takes one;
/// the producer adds two, one at a time, each with its own `notify_one`.
/// Each notify must reach a waiter that still waits (not one already woken
/// or one not yet asleep), else the second waiter sleeps through it.
#[test]
fn two_notify_ones_release_two_waiters() {
    loom::model(|| {
        let shared = Arc::new((mutex(0u32), CondWords::new()));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let s = shared.clone();
                thread::spawn(move || {
                    let mut g = s.0.lock();
                    s.1.wait_while(&mut g, |count| *count == 0);
                    *g -= 1;
                })
            })
            .collect();
        for _ in 0..2 {
            *shared.0.lock() += 1;
            shared.1.view().notify_one();
        }
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*shared.0.lock(), 0);
    });
}

#[test]
fn notify_all_releases_two_waiters() {
    loom::model(|| {
        let shared = shared_flag();
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let s = shared.clone();
                thread::spawn(move || {
                    let mut g = s.0.lock();
                    s.1.wait_while(&mut g, |flag| !*flag);
                })
            })
            .collect();
        *shared.0.lock() = true;
        shared.1.view().notify_all();
        for w in waiters {
            w.join().unwrap();
        }
    });
}

/// A timed waiter that gives up (at once, under loom) must not swallow the
/// one `notify_one` that a sleeping waiter needs.
#[test]
fn a_timed_waiter_giving_up_does_not_swallow_a_notify_one() {
    model_reaching_both("timed waiter timed out", || {
        let shared = shared_flag();
        let sleeper = {
            let s = shared.clone();
            thread::spawn(move || {
                let mut g = s.0.lock();
                s.1.wait_while(&mut g, |flag| !*flag);
            })
        };
        let timed = {
            let s = shared.clone();
            thread::spawn(move || {
                let mut g = s.0.lock();
                let timed_out = s.1.wait_while_timed(&mut g, |flag| !*flag);
                assert!(timed_out != *g);
                timed_out
            })
        };
        *shared.0.lock() = true;
        shared.1.view().notify_one();
        sleeper.join().unwrap();
        timed.join().unwrap()
    });
}

/// What the notifier wrote under the mutex before notifying is what the
/// woken waiter reads: loom checks the accesses to the cell for races, so
/// a wait that returned without holding the mutex again (timed out or
/// woken) would be reported.
#[test]
fn a_woken_or_timed_out_waiter_reads_under_the_mutex() {
    model_reaching_both("waiter timed out", || {
        let shared = Arc::new((mutex(Cell::new(0)), CondWords::new()));
        let producer = {
            let s = shared.clone();
            thread::spawn(move || {
                {
                    let g = s.0.lock();
                    g.set(g.get() + 1);
                }
                s.1.view().notify_one();
            })
        };
        let mut g = shared.0.lock();
        let timed_out = shared.1.wait_while_timed(&mut g, |c| c.get() == 0);
        // Written under the mutex by both sides: a race unless the wait
        // returned holding it.
        let v = g.get();
        g.set(v + 10);
        assert_eq!(timed_out, v == 0);
        drop(g);
        producer.join().unwrap();
        assert_eq!(shared.0.lock().get(), 11);
        timed_out
    });
}

/// A waiter that is unwound right after its wait returned (a cancellation
/// that lands after the kernel handed it the notify's wake-up) leaves with
/// `leave_passing_on_wake`, as the interposer's cleanup does: the other
/// waiter must still be released by the one `notify_one` (with a plain
/// `leave` it is not).
#[test]
fn an_unwound_waiter_passes_its_wake_up_on() {
    loom::model(|| {
        let shared = shared_flag();
        let waiter = {
            let s = shared.clone();
            thread::spawn(move || {
                let mut g = s.0.lock();
                s.1.wait_while(&mut g, |flag| !*flag);
            })
        };
        let unwound = {
            let s = shared.clone();
            thread::spawn(move || {
                let mut g = s.0.lock();
                if !*g {
                    let cv = s.1.view();
                    let ticket = cv.enter();
                    lock_api::MutexGuard::unlocked(&mut g, || {
                        cv.wait(
                            ticket,
                            &Policy::always_block(),
                            Deadline::NEVER,
                            SleepRules::default(),
                        );
                        cv.leave_passing_on_wake();
                    });
                }
            })
        };
        *shared.0.lock() = true;
        shared.1.view().notify_one();
        waiter.join().unwrap();
        // The unwound waiter may still sleep, if the notify went to the
        // other one.
        shared.1.view().notify_all();
        unwound.join().unwrap();
    });
}

/// A destroy right after the broadcast (which POSIX allows) returns only
/// after the notified waiter's last access to the words: loom reports the
/// unsynchronized loads below if the waiter's `leave` (or its sleeper
/// count's release) may still run after them.
#[test]
fn destroy_returns_after_the_notified_waiter_left() {
    loom::model(|| {
        let shared = shared_flag();
        let waiter = {
            let s = shared.clone();
            thread::spawn(move || {
                let mut g = s.0.lock();
                s.1.wait_while(&mut g, |flag| !*flag);
            })
        };
        *shared.0.lock() = true;
        let words = &shared.1;
        words.view().notify_all();
        words.view().wait_for_waiters_to_leave();
        // SAFETY: loom's checked load: it panics if a write to the word
        // does not happen before it.
        let left = unsafe {
            (
                words.waiters.value().unsync_load(),
                words.sleepers.unsync_load(),
            )
        };
        assert_eq!(left, (0, 0));
        waiter.join().unwrap();
    });
}

/// `Condvar` over the same algorithm: its waits and notifies reach the
/// words as the front ends above do.
#[test]
fn condvar_flag_then_notify_one_is_never_lost() {
    loom::model(|| {
        let shared = Arc::new((mutex(false), condvar()));
        let producer = {
            let s2 = shared.clone();
            thread::spawn(move || {
                *s2.0.lock() = true;
                s2.1.notify_one();
            })
        };
        let mut g = shared.0.lock();
        let res = shared.1.wait_while_timeout(&mut g, FAR, |flag| !*flag);
        assert!(res.timed_out() != *g);
        drop(g);
        producer.join().unwrap();
    });
}

/// A cell whose accesses loom checks for races.
struct Cell(loom::cell::UnsafeCell<u32>);

impl Cell {
    fn new(v: u32) -> Self {
        Cell(loom::cell::UnsafeCell::new(v))
    }

    fn get(&self) -> u32 {
        // SAFETY: a plain read; loom reports it if it races with `set`.
        self.0.with(|p| unsafe { *p })
    }

    fn set(&self, v: u32) {
        // SAFETY: a plain write; loom reports it if it races.
        self.0.with_mut(|p| unsafe { *p = v })
    }
}
