//! Loom models of the sleeper protocol ([`WaitWord`]) and [`Event`]: no
//! interleaving loses a wake-up. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_event`
//! (about a second on 2 cores).
#![cfg(loom)]

use loom::thread;
use std::time::Duration;
use waitwise::{Deadline, Event, Policy, WaitWord};
use waitwise_platform::shim::{Arc, Ordering};

#[test]
fn wait_word_store_then_wake_is_never_lost() {
    loom::model(|| {
        let w = Arc::new(WaitWord::new(0));
        let w2 = w.clone();
        let waker = thread::spawn(move || {
            w2.value().store(1, Ordering::SeqCst);
            w2.wake_one();
        });
        let out = w.wait_until(&Policy::always_block(), Deadline::NEVER, |v| v == 1);
        assert!(!out.timed_out());
        waker.join().unwrap();
    });
}

#[test]
fn notify_releases_a_waiter() {
    notify_releases_a_waiter_of(blocking);
}

/// The default waiting polls for a permit before it registers (module
/// `event`, "Polling before registering"): a notify that comes while the
/// waiter polls unregistered leaves a permit, which the poll or the
/// registration then takes.
#[test]
fn a_default_wait_polling_unregistered_loses_no_notify() {
    notify_releases_a_waiter_of(Event::new);
}

fn notify_releases_a_waiter_of(make: fn() -> Event) {
    loom::model(move || {
        let e = Arc::new(make());
        let e2 = e.clone();
        let notifier = thread::spawn(move || e2.notify());
        e.wait();
        notifier.join().unwrap();
        assert!(!e.is_signalled());
    });
}

#[test]
fn two_notifies_release_two_waiters() {
    two_notifies_release_two_waiters_of(|| Event::with_policy(Policy::two_phase(0.5)));
}

#[test]
fn two_default_waits_are_released_by_two_notifies() {
    two_notifies_release_two_waiters_of(Event::new);
}

fn two_notifies_release_two_waiters_of(make: fn() -> Event) {
    loom::model(move || {
        let e = Arc::new(make());
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let e = e.clone();
                thread::spawn(move || e.wait())
            })
            .collect();
        // Notify only once both are registered or have consumed, else the
        // two notifies may collapse into one signal (documented semantics).
        e.notify();
        while e.is_signalled() {
            thread::yield_now();
        }
        e.notify();
        for w in waiters {
            w.join().unwrap();
        }
    });
}

#[test]
fn notify_all_releases_registered_waiters() {
    loom::model(|| {
        let e = Arc::new(Event::with_policy(Policy::always_block()));
        let e2 = e.clone();
        let waiter = thread::spawn(move || e2.wait());
        e.notify_all();
        waiter.join().unwrap();
    });
}

#[test]
fn timed_out_wait_leaves_the_notify_pending() {
    loom::model(|| {
        let e = Arc::new(Event::with_policy(Policy::always_block()));
        let e2 = e.clone();
        let notifier = thread::spawn(move || e2.notify());
        // Under loom a timed futex wait may time out at once. The timeout is
        // far off so that the real clock never decides a branch (a slow
        // iteration would take another path and break loom's replay).
        let got = e.wait_timeout(Duration::from_secs(3600));
        notifier.join().unwrap();
        // Exactly one of: this wait consumed the notify, or it is still pending.
        assert_ne!(got, e.is_signalled());
    });
}

/// The producer's second notify finds the first one's signal pending and
/// collapses into it. The consumer must still see `item == 2` after it
/// consumes that signal, or it waits again for a notify that already
/// happened: a lost wake-up.
fn collapsed_notify_publishes(make: fn() -> Event, notify: fn(&Event)) {
    loom::model(move || {
        let e = Arc::new(make());
        let item = Arc::new(loom::sync::atomic::AtomicU32::new(0));
        let (e2, item2) = (e.clone(), item.clone());
        let producer = thread::spawn(move || {
            // Relaxed: the event's notify/wait must do the publishing.
            item2.store(1, Ordering::Relaxed);
            notify(&e2);
            item2.store(2, Ordering::Relaxed);
            notify(&e2);
        });
        // Relaxed: as above.
        while item.load(Ordering::Relaxed) != 2 {
            e.wait();
        }
        producer.join().unwrap();
    });
}

#[test]
fn a_notify_into_a_pending_signal_still_publishes_its_writes() {
    collapsed_notify_publishes(blocking, Event::notify);
}

#[test]
fn a_notify_all_into_a_pending_signal_still_publishes_its_writes() {
    collapsed_notify_publishes(blocking, Event::notify_all);
}

#[test]
fn a_notify_into_a_pending_signal_publishes_to_a_default_wait() {
    collapsed_notify_publishes(Event::new, Event::notify);
}

/// An event whose waits block at once.
fn blocking() -> Event {
    Event::with_policy(Policy::always_block())
}
