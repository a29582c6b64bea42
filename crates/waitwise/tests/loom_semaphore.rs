//! Loom models of `Semaphore`: mutual exclusion with one permit, and no
//! lost wake-up on release. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_semaphore`
//! (a few seconds on 2 cores).
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use waitwise::semaphore::Semaphore;
use waitwise::{Policy, WaitOptions};
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
