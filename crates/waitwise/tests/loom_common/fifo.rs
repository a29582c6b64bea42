//! Loom models of the time-published FIFO locks (`mutex/liveness.rs`;
//! `mutex/mcs.rs` and `mutex/ticket.rs`, "Fairness"), the same models for
//! both: a release passes over waiters that published their sleep, hands
//! the lock to a running waiter behind them or, when none is, frees it
//! (MCS: `tail: last => 0`; ticket: `serving = next`, with the
//! store-buffering check of a ticket taken meanwhile); passed-over waiters
//! rejoin (MCS: at the tail; ticket: with a new ticket), patient after
//! `MAX_PASSES` (1 under loom) passes, and a patient sleeper is never
//! passed over. Under loom the ticket lock has two slots, so the third
//! ticket shares the first one's slot and beat. Checked in every
//! interleaving: mutual exclusion and publication (loom checks the
//! `UnsafeCell` accesses), no lost wake-up (a stranded sleeper is a
//! deadlock loom reports), and a free lock once everybody is done.
//!
//! Under loom a waiter publishes its sleep and sleeps at once (the models
//! use `/b/0` and loom skips polling), and a waiter that has not published
//! counts as running, so a release that finds one sleeper and one
//! newcomer behind it passes the sleeper over.
//!
//!
//! `fifo_models!(module, Lock)` writes the models for `Lock` in `module`.

// Only the ticket and MCS models use it.
#[allow(unused_macros)]
macro_rules! fifo_models {
    ($module:ident, $Lock:ty) => {
        mod $module {
            use loom::cell::UnsafeCell;
            use loom::thread;
            use waitwise::{Policy, WaitOptions};
            use waitwise_platform::shim::Arc;

            /// The lock and a counter that loom checks for unsynchronized access.
            struct Shared {
                lock: $Lock,
                count: UnsafeCell<u32>,
            }

            // SAFETY: `count` is only accessed with `lock` held (and loom checks it).
            unsafe impl Sync for Shared {}

            fn shared() -> Arc<Shared> {
                Arc::new(Shared {
                    lock: <$Lock>::with_options(WaitOptions::new().policy(Policy::always_block())),
                    count: UnsafeCell::new(0),
                })
            }

            /// Takes the lock once and adds one to the count.
            fn increment(s: &Shared) {
                let g = s.lock.lock();
                // SAFETY: the lock is held.
                s.count.with_mut(|c| unsafe { *c += 1 });
                // SAFETY: `g` is this acquisition.
                unsafe { s.lock.unlock(g) };
            }

            fn spawn_incrementer(s: &Arc<Shared>) -> thread::JoinHandle<()> {
                let s = s.clone();
                thread::spawn(move || increment(&s))
            }

            /// The count, read with the lock held; the lock is then free.
            fn final_count(s: &Shared) -> u32 {
                let g = s.lock.lock();
                // SAFETY: the lock is held.
                let n = s.count.with(|c| unsafe { *c });
                // SAFETY: `g` is this acquisition.
                unsafe { s.lock.unlock(g) };
                assert!(!s.lock.is_locked());
                n
            }

            /// Two waiters queue behind a holder; the release may find the first
            /// asleep and the second not yet published (running), pass the first over
            /// and grant the second; the first rejoins (patient) and is served.
            #[test]
            fn sleeper_passed_over_for_a_running_waiter() {
                loom::model(|| {
                    let s = shared();
                    let g = s.lock.lock();
                    let hs: Vec<_> = (0..2).map(|_| spawn_incrementer(&s)).collect();
                    // SAFETY: `g` is this acquisition.
                    unsafe { s.lock.unlock(g) };
                    for h in hs {
                        h.join().unwrap();
                    }
                    assert_eq!(final_count(&s), 2);
                });
            }

            /// One waiter queues behind a holder and sleeps: the release passes it over
            /// and frees the lock (or hands it to the waiter, when it had not published
            /// its sleep yet), the holder takes the lock again, and the passed-over
            /// waiter rejoins as patient and is handed the lock asleep.
            #[test]
            fn lone_sleeper_passed_over_frees_the_lock() {
                loom::model(|| {
                    let s = shared();
                    let g = s.lock.lock();
                    let h = spawn_incrementer(&s);
                    // SAFETY: `g` is this acquisition.
                    unsafe { s.lock.unlock(g) };
                    increment(&s);
                    h.join().unwrap();
                    assert_eq!(final_count(&s), 2);
                });
            }

            /// A release that passes everybody over races a newcomer joining: either
            /// sees the other (MCS: the `tail` CAS fails and the newcomer gets the
            /// lock; ticket: the release serves the newcomer's slot, or the newcomer
            /// sees `serving`), or the newcomer finds the lock free (its `try_lock`
            /// succeeds, or its wait ends at once).
            #[test]
            fn pass_over_races_a_newcomer() {
                loom::model(|| {
                    let s = shared();
                    let g = s.lock.lock();
                    let h = spawn_incrementer(&s);
                    let late = {
                        let s = s.clone();
                        thread::spawn(move || {
                            if let Some(g) = s.lock.try_lock() {
                                // SAFETY: the lock is held.
                                s.count.with_mut(|c| unsafe { *c += 1 });
                                // SAFETY: `g` is this acquisition.
                                unsafe { s.lock.unlock(g) };
                                1
                            } else {
                                increment(&s);
                                1
                            }
                        })
                    };
                    // SAFETY: `g` is this acquisition.
                    unsafe { s.lock.unlock(g) };
                    h.join().unwrap();
                    let n = late.join().unwrap();
                    assert_eq!(final_count(&s), 1 + n);
                });
            }
        }
    };
}
