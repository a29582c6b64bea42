//! Loom models of the counting semaphore's one algorithm,
//! `SemaphoreRef` (musl's protocol: a permit count with a may-sleep bit,
//! and a sleeper count), driven through `Semaphore` and directly over
//! borrowed words with single releases, as the interposer's `sem_post`
//! makes them: mutual exclusion with one permit, publication (whoever
//! takes a permit, by any path, sees the writes of the release it took it
//! from, saturated or not), no lost wake-up (two sleepers and one release
//! each, which exercises the bit's one-or-all wake rule; timed and barging
//! acquirers; a sleeper cancelled in its sleep, whose cleanup passes its
//! wake-up on). Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_semaphore`
//! (about 3 s on 2 cores once built).
#![cfg(loom)]

mod loom_common;

use loom_common::model_reaching_both;

use loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use loom::thread;
use std::time::Duration;
use waitwise::semaphore::{Semaphore, SemaphoreRef, SemaphoreWait, MAY_SLEEP};
use waitwise::two_phase_wait::{PolicyWait, TwoPhaseWait};
use waitwise::{Deadline, Policy, WaitOptions};
use waitwise_platform::futex::{Futex, FutexWait, Interrupted};
use waitwise_platform::shim::Arc;

fn semaphore(permits: u32) -> Semaphore {
    Semaphore::with_options(
        permits,
        WaitOptions::new()
            .policy(Policy::always_block())
            .profile(false),
    )
}

#[test]
fn one_permit_admits_one_holder() {
    loom::model(|| {
        let sem = Arc::new(semaphore(1));
        let inside = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let (sem, inside) = (sem.clone(), inside.clone());
                thread::spawn(move || {
                    sem.acquire();
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                    inside.fetch_sub(1, Ordering::SeqCst);
                    sem.release(1);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(sem.available(), 1);
    });
}

#[test]
fn release_wakes_a_blocked_acquirer() {
    loom::model(|| {
        let sem = Arc::new(semaphore(0));
        let s2 = sem.clone();
        let releaser = thread::spawn(move || s2.release(1));
        sem.acquire();
        releaser.join().unwrap();
        assert_eq!(sem.available(), 0);
    });
}

#[test]
fn release_two_wakes_two_acquirers() {
    loom::model(|| {
        let sem = Arc::new(semaphore(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let sem = sem.clone();
                thread::spawn(move || sem.acquire())
            })
            .collect();
        sem.release(2);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(sem.available(), 0);
    });
}

/// Far enough that the real clock never decides a branch (a slow iteration
/// would take another path and break loom's replay); under loom a timed
/// futex wait times out at once, which is what explores the give-up paths.
const FAR: Duration = Duration::from_secs(3600);

/// The producer (main thread) writes `item` (Relaxed: the semaphore must
/// publish it) and releases one permit; a consumer takes it with `take`
/// and, if it got it, must see the write. The consumer is the spawned
/// thread, so that its first load comes after the release in loom's first
/// execution and the other order is found by backtracking (see
/// `model_reaching_both`). Returns whether the consumer got the permit.
fn release_publishes(take: fn(&Semaphore) -> bool) -> bool {
    let sem = Arc::new(semaphore(0));
    let item = Arc::new(AtomicU32::new(0));
    let consumer = {
        let (sem, item) = (sem.clone(), item.clone());
        thread::spawn(move || {
            let got = take(&sem);
            if got {
                // Relaxed: the permit must be what orders the write.
                assert_eq!(item.load(Ordering::Relaxed), 1);
            }
            got
        })
    };
    // Relaxed: the release must be what publishes it.
    item.store(1, Ordering::Relaxed);
    sem.release(1);
    consumer.join().unwrap()
}

#[test]
fn acquire_sees_the_releasers_writes() {
    loom::model(|| {
        assert!(release_publishes(|s| {
            s.acquire();
            true
        }));
    });
}

#[test]
fn try_acquire_sees_the_releasers_writes() {
    model_reaching_both("try_acquire", || release_publishes(Semaphore::try_acquire));
}

#[test]
fn timed_acquire_sees_the_releasers_writes() {
    model_reaching_both("acquire_timeout", || {
        release_publishes(|s| s.acquire_timeout(FAR))
    });
}

/// A release into a saturated count changes nothing, but it must still
/// publish: when the final count shows that it came before the acquire
/// (`MAX - 1`: release, then acquire; the other order ends at `MAX`), the
/// acquirer must see the releaser's writes, as for any other release.
#[test]
fn a_release_into_a_saturated_count_still_publishes() {
    model_reaching_both("saturated release before the acquire", || {
        let sem = Arc::new(semaphore(Semaphore::MAX_PERMITS));
        let item = Arc::new(AtomicU32::new(0));
        let producer = {
            let (sem, item) = (sem.clone(), item.clone());
            thread::spawn(move || {
                item.store(1, Ordering::Relaxed);
                sem.release(1);
            })
        };
        sem.acquire();
        // Relaxed: the semaphore must be what orders the write.
        let seen = item.load(Ordering::Relaxed);
        producer.join().unwrap();
        let release_first = sem.available() == Semaphore::MAX_PERMITS - 1;
        if release_first {
            assert_eq!(seen, 1, "the release came first but published nothing");
        }
        release_first
    });
}

/// A timed acquirer that gives up (at once, under loom) must not take the
/// only wake-up away from a blocked acquirer; if it got the permit instead,
/// it gives it back, and that release must wake the sleeper.
#[test]
fn a_timed_acquirer_giving_up_does_not_strand_a_sleeper() {
    model_reaching_both("timed acquirer got the permit", || {
        let sem = Arc::new(semaphore(0));
        let sleeper = {
            let sem = sem.clone();
            thread::spawn(move || sem.acquire())
        };
        let timed = {
            let sem = sem.clone();
            thread::spawn(move || {
                let got = sem.acquire_timeout(FAR);
                if got {
                    sem.release(1);
                }
                got
            })
        };
        sem.release(1);
        sleeper.join().unwrap();
        let got = timed.join().unwrap();
        assert_eq!(sem.available(), 0);
        got
    });
}

/// A sleeper woken for a permit that a barging `try_acquire` takes first
/// sleeps again; the barger's release of that permit must wake it again.
#[test]
fn a_sleeper_robbed_by_a_barger_is_woken_by_the_next_release() {
    model_reaching_both("barger got the permit", || {
        let sem = Arc::new(semaphore(0));
        let sleeper = {
            let sem = sem.clone();
            thread::spawn(move || sem.acquire())
        };
        let barger = {
            let sem = sem.clone();
            thread::spawn(move || {
                let got = sem.try_acquire();
                if got {
                    sem.release(1);
                }
                got
            })
        };
        sem.release(1);
        sleeper.join().unwrap();
        let got = barger.join().unwrap();
        assert_eq!(sem.available(), 0);
        got
    });
}

/// A semaphore's two words kept outside any semaphore type, as the
/// interposer finds them inside glibc's `sem_t`.
struct Words {
    value: Futex,
    sleepers: AtomicU32,
}

impl Words {
    fn new(permits: u32) -> Arc<Self> {
        Arc::new(Self {
            value: Futex::new(permits),
            sleepers: AtomicU32::new(0),
        })
    }

    fn view(&self) -> SemaphoreRef<'_> {
        SemaphoreRef::new(&self.value, &self.sleepers)
    }

    /// `sem_wait`'s algorithm: the fast path, then the contended
    /// acquisition with no polling phase.
    fn acquire(&self) {
        let sem = self.view();
        if !sem.try_acquire() {
            let mut wait = PolicyWait::new(&Policy::always_block());
            assert!(sem.acquire_contended(&mut wait, Deadline::NEVER).acquired());
        }
    }
}

/// Two sleepers, two single releases (`sem_post`): each release keeps the
/// may-sleep bit and wakes one when it read two sleepers, or clears it
/// and wakes all; either way both sleepers must get a permit. Waking one
/// while clearing the bit strands the other (the rule's mutation fails
/// here).
#[test]
fn two_single_releases_wake_two_sleepers() {
    loom::model(|| {
        let words = Words::new(0);
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let words = words.clone();
                thread::spawn(move || words.acquire())
            })
            .collect();
        assert_eq!(words.view().release(1), 1);
        assert_eq!(words.view().release(1), 1);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(words.view().available(), 0);
        // Relaxed: every thread that touched it is joined.
        assert_eq!(words.sleepers.load(Ordering::Relaxed), 0);
    });
}

/// The unwind a cancellation starts in a sleeper, here a panic payload
/// that the sleeper's own thread catches.
struct Cancelled;

/// A [`SemaphoreWait`] whose sleep ends the thread's wait as a
/// cancellation does: after the futex sleep, whatever ended it, the
/// cleanup (`abandon_sleep`, what the interposer's glibc cleanup handler
/// runs) and an unwind through `acquire_contended`.
struct CancelledInTheSleep;

impl TwoPhaseWait for CancelledInTheSleep {
    fn start_polling(&mut self, _: Deadline) -> bool {
        false
    }

    fn poll(&mut self, _: &Futex, _: impl FnMut(u32) -> bool) -> bool {
        unreachable!("no polling phase was started")
    }
}

impl SemaphoreWait for CancelledInTheSleep {
    fn sleep_counted(
        &mut self,
        sem: SemaphoreRef<'_>,
        timeout: Option<Duration>,
    ) -> Result<FutexWait, Interrupted> {
        sem.futex().wait(MAY_SLEEP, timeout);
        sem.abandon_sleep();
        std::panic::resume_unwind(Box::new(Cancelled))
    }
}

/// A sleeper cancelled in its sleep may have been the one a release woke:
/// its cleanup passes the wake-up on, so the other sleeper gets the
/// permit. Without the pass-on, a release that read two sleepers keeps the
/// bit and wakes only the cancelled one, and the other sleeps forever. A
/// second release then ends the cancelled thread's sleep if it still
/// sleeps (a cancellation request would interrupt it); a permit it takes
/// before sleeping it gives back.
#[test]
fn a_cancelled_sleeper_passes_its_wake_up_on() {
    loom::model(|| {
        let words = Words::new(0);
        let cancelled = {
            let words = words.clone();
            thread::spawn(move || {
                let sem = words.view();
                let got = sem.try_acquire()
                    || match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        sem.acquire_contended(&mut CancelledInTheSleep, Deadline::NEVER)
                    })) {
                        Ok(out) => out.acquired(),
                        Err(payload) => {
                            assert!(payload.is::<Cancelled>());
                            false
                        }
                    };
                if got {
                    sem.release(1);
                }
            })
        };
        let sleeper = {
            let words = words.clone();
            thread::spawn(move || words.acquire())
        };
        assert_eq!(words.view().release(1), 1);
        sleeper.join().unwrap();
        assert_eq!(words.view().release(1), 1);
        cancelled.join().unwrap();
        assert_eq!(words.view().available(), 1);
        // Relaxed: every thread that touched it is joined.
        assert_eq!(words.sleepers.load(Ordering::Relaxed), 0);
    });
}
