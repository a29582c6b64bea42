//! Loom models of `Condvar`: no interleaving loses a wake-up. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_condvar`
//! (a few seconds on 2 cores).
#![cfg(loom)]

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
