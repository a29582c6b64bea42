//! Loom models of `Condvar`: no interleaving loses a wake-up (also with
//! two `notify_one`s for two waiters, and with a timed waiter giving up),
//! and every wait returns holding the mutex. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_condvar`
//! (a few seconds on 2 cores).
#![cfg(loom)]

mod loom_common;

use loom_common::model_reaching_both;

use lock_api::{GuardSend, RawMutex};
use loom::thread;
use std::time::Duration;
use waitwise::condvar::Condvar;
use waitwise::{Deadline, Policy, WaitOptions, WaitWord};
use waitwise_platform::shim::{Arc, Ordering};

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

/// A flag, the mutex guarding it and a condition variable for it.
type SharedFlag = Arc<(Mutex<bool>, Condvar)>;

fn shared_flag() -> SharedFlag {
    Arc::new((mutex(false), condvar()))
}

/// Spawns a producer that sets the flag and notifies one waiter.
fn spawn_set_and_notify_one(shared: &SharedFlag) -> thread::JoinHandle<()> {
    let s2 = shared.clone();
    thread::spawn(move || {
        *s2.0.lock() = true;
        s2.1.notify_one();
    })
}

#[test]
fn flag_then_notify_one_is_never_lost() {
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
        shared.1.notify_all();
        for w in waiters {
            w.join().unwrap();
        }
    });
}

#[test]
fn timed_wait_sees_the_flag_or_times_out_with_the_lock_held() {
    loom::model(|| {
        let shared = shared_flag();
        let producer = spawn_set_and_notify_one(&shared);
        let mut g = shared.0.lock();
        // Under loom any timed futex wait may time out at once. The timeout
        // is far off so that the real clock never decides a branch.
        let res = shared
            .1
            .wait_while_timeout(&mut g, Duration::from_secs(3600), |flag| !*flag);
        assert!(res.timed_out() != *g);
        assert!(shared.0.is_locked());
        drop(g);
        producer.join().unwrap();
    });
}

/// Far enough that the real clock never decides a branch (a slow iteration
/// would take another path and break loom's replay); under loom a timed
/// futex wait times out at once, which is what explores the give-up paths.
const FAR: Duration = Duration::from_secs(3600);

/// Two waiters wait for a count to become non-zero and each takes one;
/// the producer adds two, one at a time, each with its own `notify_one`.
/// Each notify must reach a waiter that still waits (not one already woken
/// or one still polling), else the second waiter sleeps through it.
#[test]
fn two_notify_ones_release_two_waiters() {
    loom::model(|| {
        let shared = Arc::new((mutex(0u32), condvar()));
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
            shared.1.notify_one();
        }
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*shared.0.lock(), 0);
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
                let res = s.1.wait_while_timeout(&mut g, FAR, |flag| !*flag);
                assert!(res.timed_out() != *g);
                res.timed_out()
            })
        };
        *shared.0.lock() = true;
        shared.1.notify_one();
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
        let shared = Arc::new((mutex(Cell::new(0)), condvar()));
        let producer = {
            let s = shared.clone();
            thread::spawn(move || {
                {
                    let g = s.0.lock();
                    g.set(g.get() + 1);
                }
                s.1.notify_one();
            })
        };
        let mut g = shared.0.lock();
        let res = shared.1.wait_while_timeout(&mut g, FAR, |c| c.get() == 0);
        // Written under the mutex by both sides: a race unless the wait
        // returned holding it.
        let v = g.get();
        g.set(v + 10);
        assert_eq!(res.timed_out(), v == 0);
        drop(g);
        producer.join().unwrap();
        assert_eq!(shared.0.lock().get(), 11);
        res.timed_out()
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
