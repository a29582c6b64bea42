//! Mutexes and a reader-writer lock on the waiting engine.
//!
//! Each lock is a raw lock implementing [`lock_api::RawMutex`] (or
//! [`lock_api::RawRwLock`]), so the familiar `lock_api` wrappers give the
//! usual API: `lock()` returns a guard that unlocks on drop, also when the
//! critical section panics (no poisoning).
//!
//! | type | raw lock | file | order | timed |
//! |---|---|---|---|---|
//! | [`Mutex`] | [`RawDefault`] = [`RawTtasMutex`] | `ttas.rs`, `cpu_turns.rs` | unfair, bounded: hand-off to a waiter that asks; turns between CPUs | yes |
//! | [`TtasMutex`] | [`RawTtasMutex`] | `ttas.rs`, `cpu_turns.rs` | unfair, bounded: hand-off to a waiter that asks; turns between CPUs | yes |
//! | [`TicketMutex`] | [`RawTicketMutex`] | `ticket.rs`, `hand_off_cooldown.rs` | FIFO among running waiters; a releaser that handed off queues again after a cool-down | yes (does not queue) |
//! | [`McsMutex`] | [`RawMcsMutex`] | `mcs.rs`, `hand_off_cooldown.rs` | FIFO among running waiters; a releaser that handed off queues again after a cool-down | no (`try_lock` only) |
//! | [`RwLock`] | [`RawRwLock`] | `rwlock.rs`, `cpu_turns.rs` | writer-preferring; waiting readers get a turn after each write while writers wait (a lone writer that locks again at once can hold them off); among writers unfair, bounded: a writer beaten in rounds starves the barging ones out; turns between CPUs; upgradable reads | yes |
//!
//! The TTAS algorithm itself is [`TtasLockRef`], a view over a borrowed
//! futex word that waits through the caller's [`LockWait`] (a
//! [`TwoPhaseWait`](crate::two_phase_wait::TwoPhaseWait)):
//! [`RawTtasMutex`] is one front end, the `LD_PRELOAD` interposer's
//! `pthread_mutex_t` another. The interposer's `pthread_spinlock_t` is a
//! [`SpinLockRef`] (`spin.rs`), a lock that polls and never sleeps, and
//! its `pthread_rwlock_t` an [`RwWordRef`] (`rw_word.rs`), a
//! reader-writer lock in one 64-bit word.
//!
//! Every lock waits through a [`Policy`](crate::Policy) of
//! [`SyncKind::Mutex`](crate::SyncKind::Mutex) (`s/b/ln(e-1)`: poll for
//! `0.54 B`, then sleep on the futex) unless built with
//! [`WaitOptions`](crate::WaitOptions), and records a wait-time profile when
//! asked to. Customized locks are built from the raw lock:
//!
//! ```
//! use waitwise::mutex::{RawTtasMutex, TtasMutex};
//! use waitwise::{Policy, WaitOptions};
//!
//! let raw = RawTtasMutex::with_options(
//!     WaitOptions::new().policy(Policy::always_block()).profile(true),
//! );
//! let m: TtasMutex<u32> = lock_api::Mutex::from_raw(raw, 1);
//! *m.lock() += 1;
//! assert_eq!(*m.lock(), 2);
//! ```
//!
//! # Which one is `waitwise::Mutex`, and why
//!
//! [`Mutex`] is the test-and-test-and-set lock [`RawTtasMutex`] with the
//! three-state word (`UNLOCKED`/`LOCKED`/`CONTENDED`): a one-CAS lock and a
//! one-swap unlock that makes no system call unless a thread sleeps, waiters
//! polling for `alpha * B` before they sleep, and a woken waiter re-polling
//! instead of marking the lock contended at once. It is unfair, and that is
//! what a throughput-bound mutex wants: the holder's cache keeps the lock
//! line across many acquisitions, and when threads outnumber CPUs no lock
//! hand-over waits for a descheduled thread. The FIFO locks pay for their
//! order: every contended release hands the lock to another thread (a
//! cache-line transfer), and they hand it only to a waiter that runs,
//! passing over sleeping and preempted ones (`liveness.rs`). Its
//! unfairness is bounded: a waiter beaten to the lock in
//! [`HAND_OFF_AFTER_LOST_ROUNDS`] rounds asks for a hand-off, and the
//! releases from then on hand the lock to the longest sleeper until that
//! waiter has it, after fewer hand-offs than there are waiters, paced at
//! one per [`HAND_OFF_PACE_IN_B`] `B` (at most per
//! [`HAND_OFF_PACE_MAX_NS`]) so that a lock saturated by many
//! waiters does not hand off at every release (`ttas.rs`, "Bounded
//! unfairness"); the interposer's waiters never ask, so its
//! `pthread_mutex_t` keeps glibc's three values. Waiters that win within
//! their polling phase never ask: between them, turns between the CPUs,
//! ended by count (`cpu_turns.rs`), keep a slower CPU's threads from being
//! passed over.
//!
//! Its waiters poll by *switch-spinning* (Lim & Agarwal's switch-spin with
//! `sched_yield` as the switch): one look at the word per yield, for the
//! limit `adapt/b` learns from the lock's own waits (the mutex kind's
//! default, `policy/kind.rs`, "The defaults"; the FIFO locks and the
//! reader-writer lock poll for the static `alpha * B`). A waiter that polls
//! the word in a PAUSE loop, even with exponential backoff, keeps pulling
//! the line away from the holder and wins races it should lose; each stolen
//! acquisition moves the line twice more: in `examples/mutex_bench`,
//! PAUSE polling with backoff falls behind parking_lot's throughput, while
//! a parking_lot-style "PAUSE batches, then yields" and yield-polling for
//! `alpha * B` are ahead of it. With yields the waiter also hands its CPU to a
//! preempted holder when threads outnumber CPUs. The price is hand-over
//! latency: a waiter notices a release one yield (~0.3-1 µs) late, which a
//! short critical section under contention does not feel. A yield to a
//! thread that keeps its CPU for a whole slice (another process's busy
//! loop) makes that milliseconds; while yields lose such slices and the
//! process itself uses little CPU, waits that poll by yielding block at
//! once instead ([`yield_guard`](crate::mechanism::yield_guard)).
//!
//! How it compares is measured, not stated here: `cargo run -p waitwise
//! --release --example mutex_bench` prints the uncontended time of a
//! lock+unlock and the contended throughput (N threads looping `lock;
//! counter += 1; unlock`) of every lock beside parking_lot, `std` and
//! `pthread_mutex`, with ratios to parking_lot, `pthread_mutex` and the
//! default `Mutex` measured in the same run, and `--example mutex_starvation` the longest wait and the least
//! and most served threads under oversubscription. A FIFO lock whose
//! releaser queues again at once alternates between two running threads:
//! one cache-line hand-off per acquisition (`mutex_bench` prints its time,
//! and `spin-ticket`, a bare ticket spin lock), far below an unfair lock
//! whose holder re-acquires from its own cache. The ticket and MCS locks
//! avoid that with a hand-off cool-down (`hand_off_cooldown.rs`): a thread
//! that handed the lock to a waiter waits about half a `B` before it
//! queues for it again, so the new holder runs a batch alone; the queue
//! order itself stays FIFO among running waiters.
//!
//! # Unwind safety
//!
//! A panic in a critical section unlocks the lock (the guard's drop) and
//! poisons nothing, as with parking_lot. The raw locks are `UnwindSafe`
//! and `RefUnwindSafe`; [`Mutex<T>`], [`RwLock<T>`] and the FIFO mutexes
//! are `UnwindSafe` when `T` is, but not `RefUnwindSafe`, as parking_lot's
//! and unlike std's: their data's `UnsafeCell` lies inside `lock_api`'s
//! type, and only `lock_api` could declare it. A raw lock that is
//! `RefUnwindSafe` does not make the wrapper so (the `UnsafeCell<T>`
//! field is not), and no other crate may add the impl: `RefUnwindSafe`
//! is an auto trait, and an explicit impl of an auto trait is allowed
//! only in the crate that defines the type (E0321), so neither waitwise
//! nor the parking_lot drop-in can write `impl RefUnwindSafe for
//! lock_api::Mutex<RawTtasMutex, T>`. Wrapper types of waitwise's own
//! could, at the price of every `lock_api` interface (guards that
//! `lock_api` code and [`Condvar`](crate::Condvar) accept, the aliases
//! parking_lot's users name), so they stay aliases. (std declares it because
//! it poisons: a thread that sees the data a panic left half changed is
//! told so. Here the data stays as the panic left it.) A closure given
//! to `catch_unwind` that borrows one states that it accepts this:
//!
//! ```
//! use std::panic::{catch_unwind, AssertUnwindSafe};
//!
//! let m = waitwise::Mutex::new(vec![1]);
//! let r = catch_unwind(AssertUnwindSafe(|| {
//!     m.lock().push(2);
//!     panic!("after the push");
//! }));
//! assert!(r.is_err());
//! assert_eq!(*m.lock(), [1, 2]); // unlocked, not poisoned
//! ```
//!
//! # Loom
//!
//! `lock_api` needs `const INIT`, and loom's atomics are not `const`: under
//! `--cfg loom` the raw locks are plain types with `new()`,
//! `lock`/`try_lock`/`unlock` methods (the same code the trait impls call),
//! and the `lock_api` trait impls are compiled out; the aliases below still
//! name the types but cannot be constructed there.

mod cpu_turns;
mod hand_off_cooldown;
mod hand_off_pace;
mod liveness;
mod mcs;
mod rw_word;
mod rwlock;
mod spin;
mod ticket;
mod ttas;
mod waiting;

pub use crate::mechanism::backoff::BACKOFF_CAP_SHIFT;
#[cfg(loom)]
pub use cpu_turns::set_model_cpu;
pub use cpu_turns::{
    crowded_for_turns, least_turn_for, turn_ending, turn_stall_for, turn_target_ns, wakes_before,
    CpuTurns, HolderCpu, TurnFor, TurnStart, BOOKKEEPING_EVERY, CONTENDED_TO_START,
    ENDING_BOOKKEEPINGS, FAST_RELEASE_NS, MAX_START_PAUSE, MAX_TURN_ACQUISITIONS,
    PACED_STALL_MAX_NS, RUN_CHANGES, SLEEPING_TURN_TARGET_NS, SLOW_TURN_ACQUISITIONS,
    STARVING_TURNS, TURN_ACQUISITIONS, TURN_ACQUISITIONS_ALONE, TURN_STALL_ALONE_NS,
    TURN_STALL_CROWDED_NS, TURN_TARGET_NS, TURN_WAKE_LEAD_MIN_NS,
};
pub use hand_off_pace::{
    hand_off_interval_ns, HandOffPace, HAND_OFF_PACE_IN_B, HAND_OFF_PACE_MAX_NS,
};
pub use mcs::{McsGuard, RawMcsMutex};
pub use rw_word::{
    NotReadLocked, ReadOutcome, RwKind, RwQueue, RwState, RwStateWord, RwWait, RwWake, RwWordRef,
    TryRead, WaitingWriter,
};
pub use rwlock::{RawRwLock, MAX_READERS, MAX_WRITERS_STARVING, MAX_WRITERS_WAITING};
pub use spin::SpinLockRef;
pub use ticket::{RawTicketMutex, TicketGuard, SLOTS as TICKET_SLOTS};
pub use ttas::{
    AskingForHandOff, LockOutcome, LockWait, RawTtasMutex, TtasLockRef, HAND_OFF_AFTER_LOST_ROUNDS,
};

/// The raw lock behind [`Mutex`]: [`RawTtasMutex`] (see the module docs
/// for why).
pub type RawDefault = RawTtasMutex;

/// waitwise's default mutex: `lock_api::Mutex` on [`RawDefault`].
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use waitwise::mutex::Mutex;
///
/// let m = Arc::new(Mutex::new(0u64));
/// let hs: Vec<_> = (0..4)
///     .map(|_| {
///         let m = m.clone();
///         std::thread::spawn(move || for _ in 0..1000 { *m.lock() += 1 })
///     })
///     .collect();
/// for h in hs {
///     h.join().unwrap();
/// }
/// assert_eq!(*m.lock(), 4000);
/// assert!(m.try_lock_for(std::time::Duration::ZERO).is_some());
/// ```
pub type Mutex<T> = lock_api::Mutex<RawDefault, T>;
/// The guard of [`Mutex`]: unlocks on drop.
///
/// Not `Send`, as std's and parking_lot's guards: the thread that locked
/// unlocks. Sharing it (`Sync`) is allowed when `T: Sync`.
///
/// ```compile_fail,E0277
/// let m = waitwise::Mutex::new(0);
/// let guard = m.lock();
/// std::thread::scope(|s| {
///     s.spawn(move || drop(guard)); // error: `MutexGuard` is not `Send`
/// });
/// ```
pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawDefault, T>;

/// A mutex on [`RawTtasMutex`] (the same lock as [`Mutex`]).
pub type TtasMutex<T> = lock_api::Mutex<RawTtasMutex, T>;
/// The guard of [`TtasMutex`].
pub type TtasMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawTtasMutex, T>;

/// A FIFO mutex on [`RawTicketMutex`].
pub type TicketMutex<T> = lock_api::Mutex<RawTicketMutex, T>;
/// The guard of [`TicketMutex`].
pub type TicketMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawTicketMutex, T>;

/// A FIFO queue mutex on [`RawMcsMutex`].
pub type McsMutex<T> = lock_api::Mutex<RawMcsMutex, T>;
/// The guard of [`McsMutex`].
pub type McsMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawMcsMutex, T>;

/// A writer-preferring reader-writer lock on [`RawRwLock`], whose waiting
/// readers get a turn after each write while writers wait (queued
/// writers do not starve the readers, nor readers the writers; a lone
/// writer that locks again at once can hold the readers off, as
/// parking_lot's can), and whose writers beaten to the lock round after
/// round keep barging writers out until they have it (writers do not
/// starve each other either).
pub type RwLock<T> = lock_api::RwLock<RawRwLock, T>;
/// Shared guard of [`RwLock`]. Not `Send` (nor is the exclusive guard), as
/// std's and parking_lot's.
///
/// ```compile_fail,E0277
/// let l = waitwise::RwLock::new(0);
/// let guard = l.read();
/// std::thread::scope(|s| {
///     s.spawn(move || drop(guard)); // error: the guard is not `Send`
/// });
/// ```
pub type RwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawRwLock, T>;
/// Exclusive guard of [`RwLock`]. `RwLockWriteGuard::downgrade` turns it
/// into a read guard without letting a writer in between, and
/// `RwLockWriteGuard::downgrade_to_upgradable` into an upgradable one.
pub type RwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawRwLock, T>;
/// Upgradable read guard of [`RwLock`] (`RwLock::upgradable_read`): a
/// read lock that readers share but no writer and no other upgradable
/// reader, which `RwLockUpgradableReadGuard::upgrade` turns into the write
/// lock once the other readers have left, with no writer in between.
///
/// ```
/// use waitwise::mutex::{RwLock, RwLockUpgradableReadGuard};
///
/// let lock = RwLock::new(1);
/// let up = lock.upgradable_read();
/// assert_eq!(*lock.read(), 1); // readers still enter
/// assert!(lock.try_upgradable_read().is_none());
/// let mut w = RwLockUpgradableReadGuard::upgrade(up);
/// *w += 1;
/// drop(w);
/// assert_eq!(*lock.read(), 2);
/// ```
pub type RwLockUpgradableReadGuard<'a, T> = lock_api::RwLockUpgradableReadGuard<'a, RawRwLock, T>;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{Policy, WaitOptions};

    fn blocking() -> WaitOptions {
        WaitOptions::new().policy(Policy::always_block())
    }

    #[test]
    fn debug_shows_lock_state_not_words() {
        let m = Mutex::new(5);
        assert_eq!(format!("{m:?}"), "Mutex { data: 5 }");
        let g = m.lock();
        assert_eq!(format!("{m:?}"), "Mutex { data: <locked> }");
        drop(g);

        let t = RawTicketMutex::with_options(blocking());
        assert_eq!(
            format!("{t:?}"),
            "RawTicketMutex { locked: false, queue_len: 0, policy: /b/0 }"
        );
        let t = TicketMutex::from_raw(t, ());
        // SAFETY: only reads the raw lock's state.
        let raw = unsafe { t.raw() };
        let g = t.lock();
        assert!(format!("{raw:?}").contains("locked: true, queue_len: 1"));
        drop(g);

        let q = McsMutex::from_raw(RawMcsMutex::with_options(blocking()), ());
        // SAFETY: only reads the raw lock's state.
        let raw = unsafe { q.raw() };
        assert_eq!(
            format!("{raw:?}"),
            "RawMcsMutex { locked: false, policy: /b/0 }"
        );
        let g = q.lock();
        assert!(format!("{raw:?}").contains("locked: true"));
        drop(g);
    }

    #[test]
    fn rwlock_debug_shows_readers_and_writer() {
        let l = RwLock::from_raw(RawRwLock::with_options(blocking()), 0);
        // SAFETY: only reads the raw lock's state.
        let raw = unsafe { l.raw() };
        let r = l.read();
        assert_eq!(
            format!("{raw:?}"),
            "RawRwLock { write_locked: false, readers: 1, upgradable: false, writers_waiting: 0, writers_starving: 0, policy: /b/0 }"
        );
        drop(r);
        let w = l.write();
        assert!(format!("{raw:?}").contains("write_locked: true, readers: 0"));
        drop(w);
    }

    /// parking_lot's `rwlock::tests::test_rwlock_downgrade`.
    #[test]
    fn test_rwlock_downgrade_like_parking_lot() {
        let x = std::sync::Arc::new(RwLock::new(0));
        let mut handles = Vec::new();
        for _ in 0..8 {
            let x = x.clone();
            handles.push(std::thread::spawn(move || {
                for _ in 0..100 {
                    let mut writer = x.write();
                    *writer += 1;
                    let cur_val = *writer;
                    let reader = RwLockWriteGuard::downgrade(writer);
                    assert_eq!(cur_val, *reader);
                }
            }));
        }
        for handle in handles {
            handle.join().unwrap()
        }
        assert_eq!(*x.read(), 800);
    }

    /// parking_lot's `rwlock::tests::test_ruw_arc`: a writer, upgradable
    /// readers that upgrade, and readers; nobody sees a write half done.
    #[test]
    fn test_ruw_arc_like_parking_lot() {
        let arc = std::sync::Arc::new(RwLock::new(0));
        let arc2 = arc.clone();
        let writer = std::thread::spawn(move || {
            for _ in 0..10 {
                let mut lock = arc2.write();
                let tmp = *lock;
                *lock = -1;
                std::thread::yield_now();
                *lock = tmp + 1;
            }
        });
        let mut children = Vec::new();
        for _ in 0..5 {
            let arc3 = arc.clone();
            children.push(std::thread::spawn(move || {
                let lock = arc3.upgradable_read();
                let tmp = *lock;
                assert!(tmp >= 0);
                std::thread::yield_now();
                let mut lock = RwLockUpgradableReadGuard::upgrade(lock);
                assert_eq!(tmp, *lock);
                *lock = -1;
                std::thread::yield_now();
                *lock = tmp + 1;
            }));
        }
        for _ in 0..5 {
            let arc4 = arc.clone();
            children.push(std::thread::spawn(move || {
                let lock = arc4.read();
                assert!(*lock >= 0);
            }));
        }
        for r in children {
            r.join().unwrap();
        }
        writer.join().unwrap();
        assert_eq!(*arc.read(), 15);
    }

    /// parking_lot's `rwlock::tests::test_rwlock_try_upgrade`: an
    /// upgradable read enters beside a reader, not beside another
    /// upgradable reader or a writer.
    #[test]
    fn test_rwlock_try_upgrade_like_parking_lot() {
        let lock = RwLock::new(0isize);
        let read_guard = lock.read();
        assert!(lock.try_upgradable_read().is_some());
        drop(read_guard);
        let upgrade_guard = lock.upgradable_read();
        assert!(lock.try_upgradable_read().is_none());
        drop(upgrade_guard);
        let write_guard = lock.write();
        assert!(lock.try_upgradable_read().is_none());
        drop(write_guard);
    }

    /// The upgrade waits for the readers to leave and keeps new ones out;
    /// a timed upgrade that the readers outlast keeps the upgradable lock.
    #[test]
    fn an_upgrade_waits_for_readers_and_times_out_keeping_its_read() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::Duration;
        let l = RwLock::from_raw(RawRwLock::with_options(blocking()), 0);
        let r = l.read();
        let up = l.upgradable_read();
        let up = RwLockUpgradableReadGuard::try_upgrade_for(up, Duration::from_millis(5))
            .expect_err("a reader holds the lock");
        let up = RwLockUpgradableReadGuard::try_upgrade(up).expect_err("still");
        drop(r);
        let (entered, left) = (AtomicBool::new(false), AtomicBool::new(false));
        std::thread::scope(|s| {
            s.spawn(|| {
                let r = l.read(); // beside the upgradable reader
                entered.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(10));
                left.store(true, Ordering::SeqCst);
                drop(r);
            });
            while !entered.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            let mut w = RwLockUpgradableReadGuard::upgrade(up);
            assert!(left.load(Ordering::SeqCst), "upgraded beside a reader");
            *w = 7;
        });
        assert_eq!(*l.read(), 7);
        assert!(!l.is_locked());
    }

    #[test]
    fn upgradable_downgrades_both_ways() {
        let l = RwLock::new(1);
        let w = l.write();
        let up = RwLockWriteGuard::downgrade_to_upgradable(w);
        assert!(l.try_upgradable_read().is_none());
        assert_eq!(*l.read(), 1);
        let r = RwLockUpgradableReadGuard::downgrade(up);
        let up2 = l.try_upgradable_read().expect("the bit was dropped");
        drop(r);
        let w = RwLockUpgradableReadGuard::try_upgrade(up2).expect("alone");
        drop(w);
        assert!(!l.is_locked());
    }

    #[test]
    fn a_downgraded_guard_lets_a_waiting_reader_in() {
        let l = RwLock::from_raw(RawRwLock::with_options(blocking()), 0);
        let mut w = l.write();
        std::thread::scope(|s| {
            let reader = s.spawn(|| *l.read());
            *w = 5;
            let r = RwLockWriteGuard::downgrade(w);
            // The reader gets in while the downgraded guard is held.
            assert_eq!(reader.join().unwrap(), 5);
            assert_eq!(*r, 5);
        });
        assert!(!l.is_locked());
    }

    #[test]
    fn mutex_and_rwlock_have_const_new_and_default() {
        static M: Mutex<Vec<u8>> = Mutex::new(Vec::new());
        static L: RwLock<u32> = RwLock::new(0);
        M.lock().push(1);
        *L.write() += 1;
        assert_eq!((M.lock().len(), *L.read()), (1, 1));
        let d: Mutex<u32> = Mutex::default();
        let r: RwLock<u32> = RwLock::default();
        assert_eq!((*d.lock(), *r.read()), (0, 0));
    }
}
