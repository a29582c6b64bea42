//! Loom models of the mutexes and the reader-writer lock: mutual exclusion,
//! publication (every acquisition, fast, slow, `try` or timed, sees the
//! previous holders' writes: loom checks the `UnsafeCell` accesses) and no
//! lost wake-up in any interleaving. The raw locks' own methods are tested
//! (lock_api's traits need `const INIT`, which loom's atomics cannot give).
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_mutex`
//! (about 6 s of model checking on 2 cores, plus the build).
//!
//! The TTAS algorithm is modelled twice: through `RawTtasMutex`, and
//! through its view over a borrowed word (`TtasLockRef`, the code the
//! interposer's `pthread_mutex_t` runs) with a front end's own `LockWait`
//! whose polling phase is the engine's `poll_until`, one look at the word
//! under loom: the `ttas_view_*` models reach the polling phase's race
//! (see `UNLOCKED`, lose the CAS, back off, look again), which
//! `RawTtasMutex` skips under loom.
//!
//! Limits: the polling phases are otherwise not modelled (`WaitWord` and
//! the locks skip them under loom; the TTAS lock makes one test-and-set
//! probe instead). The platform's loom futex wakes one sleeper on `wake(1)` (the
//! first to sleep), so a lost single wake-up is observable: without the
//! TTAS "owed wake-up" rule `ttas_three_threads_no_lost_wakeup` deadlocks.
//! A timed futex wait never sleeps under loom (it times out at once), so a
//! timed waiter that is woken and then gives up (the TTAS
//! `pay_wake_on_give_up` path) is not reached here; `stress_mutex.rs`
//! covers it with real futexes.
#![cfg(loom)]

mod loom_common;

use loom_common::model_reaching_both;

use loom::cell::UnsafeCell;
use loom::thread;
use waitwise::mutex::{
    set_model_cpu, LockWait, McsGuard, RawMcsMutex, RawRwLock, RawTicketMutex, RawTtasMutex,
    TicketGuard, TtasLockRef, MAX_WRITERS_WAITING,
};
use waitwise::wait_word::poll_until;
use waitwise::{Deadline, Mechanism, Policy, WaitOptions};
use waitwise_platform::futex::Futex;
use waitwise_platform::shim::Arc;

fn blocking() -> WaitOptions {
    WaitOptions::new().policy(Policy::always_block())
}

/// A counter that loom checks for unsynchronized access.
struct Shared<L> {
    lock: L,
    count: UnsafeCell<u32>,
}

// SAFETY: `count` is only accessed with `lock` held (and loom checks it).
unsafe impl<L: Sync> Sync for Shared<L> {}

fn shared<L>(lock: L) -> Arc<Shared<L>> {
    Arc::new(Shared {
        lock,
        count: UnsafeCell::new(0),
    })
}

/// The mutexes' own lock and unlock, so that the models can share bodies.
trait RawLock: Send + Sync + 'static {
    /// What `release` takes back: the acquisition.
    type Guard;

    fn acquire(&self) -> Self::Guard;

    /// One attempt that never waits.
    fn try_acquire(&self) -> Option<Self::Guard>;

    /// An attempt that gives up at `deadline` (`try_acquire` for the MCS
    /// lock, which has no timed acquisition).
    fn acquire_until(&self, deadline: Deadline) -> Option<Self::Guard>;

    /// # Safety
    ///
    /// `guard` is this thread's current acquisition of `self`.
    unsafe fn release(&self, guard: Self::Guard);
}

impl RawLock for RawTtasMutex {
    type Guard = ();

    fn acquire(&self) {
        self.lock();
    }

    fn try_acquire(&self) -> Option<()> {
        self.try_lock().then_some(())
    }

    fn acquire_until(&self, deadline: Deadline) -> Option<()> {
        self.try_lock_until(deadline).then_some(())
    }

    unsafe fn release(&self, (): ()) {
        // SAFETY: locked by this thread (the caller's contract).
        unsafe { self.unlock() };
    }
}

/// A TTAS lock word that lives outside any lock type, driven through
/// [`TtasLockRef`] as the interposer drives `pthread_mutex_t`'s `__lock`.
struct BorrowedTtas {
    word: Futex,
}

/// A front end's [`LockWait`]: a polling phase every round, the engine's
/// `poll_until` (one look at the word under loom), and the default futex
/// sleep.
struct PollingWait;

impl LockWait for PollingWait {
    fn start_polling(&mut self, _deadline: Deadline) -> bool {
        true
    }

    fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool {
        !poll_until(futex, Mechanism::Pause, Deadline::NEVER, ready).timed_out()
    }
}

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

impl RawLock for RawTicketMutex {
    type Guard = TicketGuard;

    fn acquire(&self) -> TicketGuard {
        self.lock()
    }

    fn try_acquire(&self) -> Option<TicketGuard> {
        self.try_lock()
    }

    fn acquire_until(&self, deadline: Deadline) -> Option<TicketGuard> {
        self.try_lock_until(deadline)
    }

    unsafe fn release(&self, guard: TicketGuard) {
        // SAFETY: `guard` is this acquisition (the caller's contract).
        unsafe { self.unlock(guard) };
    }
}

impl RawLock for RawMcsMutex {
    type Guard = McsGuard;

    fn acquire(&self) -> McsGuard {
        self.lock()
    }

    fn try_acquire(&self) -> Option<McsGuard> {
        self.try_lock()
    }

    fn acquire_until(&self, _deadline: Deadline) -> Option<McsGuard> {
        self.try_lock()
    }

    unsafe fn release(&self, guard: McsGuard) {
        // SAFETY: `guard` is this acquisition (the caller's contract).
        unsafe { self.unlock(guard) };
    }
}

/// Runs `f` with `l` held.
fn locked<L: RawLock>(l: &L, f: impl FnOnce()) {
    let g = l.acquire();
    f();
    // SAFETY: `g` is this acquisition.
    unsafe { l.release(g) };
}

/// Spawns a thread that takes `m` once and releases it.
fn spawn_locker<L: RawLock>(m: &Arc<L>) -> thread::JoinHandle<()> {
    let m = m.clone();
    thread::spawn(move || locked(&*m, || {}))
}

fn increment_in_two_threads<L: RawLock>(lock: L) {
    let s = shared(lock);
    let s2 = s.clone();
    let t = thread::spawn(move || {
        // SAFETY: the closure runs with the lock held.
        locked(&s2.lock, || s2.count.with_mut(|c| unsafe { *c += 1 }));
    });
    // SAFETY: the closure runs with the lock held.
    locked(&s.lock, || s.count.with_mut(|c| unsafe { *c += 1 }));
    t.join().unwrap();
    // SAFETY: the closure runs with the lock held.
    locked(&s.lock, || assert_eq!(s.count.with(|c| unsafe { *c }), 2));
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

#[test]
fn ticket_two_threads_exclusive() {
    loom::model(|| increment_in_two_threads(RawTicketMutex::with_options(blocking())));
}

#[test]
fn ticket_timed_attempt_and_queue() {
    loom::model(|| {
        let m = Arc::new(RawTicketMutex::with_options(blocking()));
        let g = m.lock();
        let t = spawn_locker(&m);
        assert!(m
            .try_lock_until(Deadline::after(std::time::Duration::ZERO))
            .is_none());
        // SAFETY: `g` is this acquisition.
        unsafe { m.unlock(g) };
        t.join().unwrap();
        assert!(!m.is_locked());
    });
}

/// Two tickets queued behind a holder: the release to the first also
/// pre-wakes the second (one shared slot under loom), which must go back
/// to sleep rather than take the lock; neither is stranded.
#[test]
fn ticket_three_threads_queue_with_pre_wake() {
    loom::model(|| {
        let m = Arc::new(RawTicketMutex::with_options(blocking()));
        let g = m.lock();
        let hs: Vec<_> = (0..2).map(|_| spawn_locker(&m)).collect();
        // SAFETY: `g` is this acquisition.
        unsafe { m.unlock(g) };
        for h in hs {
            h.join().unwrap();
        }
        assert!(!m.is_locked());
    });
}

#[test]
fn mcs_two_threads_exclusive() {
    loom::model(|| increment_in_two_threads(RawMcsMutex::with_options(blocking())));
}

#[test]
fn mcs_three_threads_queue() {
    loom::model(|| {
        let m = Arc::new(RawMcsMutex::with_options(blocking()));
        let hs: Vec<_> = (0..2).map(|_| spawn_locker(&m)).collect();
        if let Some(g) = m.try_lock() {
            // SAFETY: `g` is this acquisition.
            unsafe { m.unlock(g) };
        }
        for h in hs {
            h.join().unwrap();
        }
        assert!(!m.is_locked());
    });
}

/// Adds one to the count under the write lock.
fn write_increment(s: &Shared<RawRwLock>) {
    assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
    // SAFETY: write-locked just above: no other access.
    s.count.with_mut(|c| unsafe { *c += 1 });
    // SAFETY: write-locked above.
    unsafe { s.lock.unlock_exclusive() };
}

/// Reads the count under the read lock.
fn read_count(s: &Shared<RawRwLock>) -> u32 {
    assert!(s.lock.lock_shared_until(Deadline::NEVER));
    // SAFETY: read-locked just above: only reads run concurrently.
    let v = s.count.with(|c| unsafe { *c });
    // SAFETY: read-locked above.
    unsafe { s.lock.unlock_shared() };
    v
}

#[test]
fn rwlock_writer_excludes_reader() {
    loom::model(|| {
        let s = shared(RawRwLock::with_options(blocking()));
        let s2 = s.clone();
        let reader = thread::spawn(move || {
            let v = read_count(&s2);
            assert!(v == 0 || v == 1);
        });
        write_increment(&s);
        reader.join().unwrap();
    });
}

/// A writer writes twice while a reader waits: the first write unlock
/// wakes the sleeping reader, and the second may come before the woken
/// reader runs, with `SLEEPING` cleared by the first, and skips its
/// wake-up. The reader, back on a write-locked word, sets `SLEEPING` again
/// before it sleeps, so the second unlock sees it: no lost wake-up in any
/// interleaving (loom reports a deadlock).
#[test]
fn rwlock_writer_relocks_before_a_woken_reader_runs() {
    loom::model(|| {
        let s = rwlock();
        let s2 = s.clone();
        let reader = thread::spawn(move || assert!(read_count(&s2) <= 2));
        write_increment(&s);
        write_increment(&s);
        reader.join().unwrap();
        assert_eq!(read_count(&s), 2);
    });
}

/// More writers wait than the lock counts (`MAX_WRITERS_WAITING`, 2 under
/// loom): the third waits uncounted until the count has room or the lock
/// may be taken. Every writer gets in; none sleeps forever (loom reports
/// a deadlock).
#[test]
fn rwlock_writers_beyond_the_count_wait_uncounted() {
    assert_eq!(MAX_WRITERS_WAITING, 2);
    loom::model(|| {
        let s = rwlock();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let writers: Vec<_> = (0..3)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || write_increment(&s))
            })
            .collect();
        // SAFETY: write-locked above by this thread.
        unsafe { s.lock.unlock_exclusive() };
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(read_count(&s), 3);
    });
}

/// A writer re-takes the lock by barging tries while another writer
/// waits: the waiter, woken to a write-locked word, has lost a round (one
/// starves it under loom) and starves; a barging try then fails on a free
/// lock. Every write counted, the lock free at the end, no lost wake-up
/// (loom reports a deadlock); some executions reach a starving writer and
/// some do not.
#[test]
fn rwlock_beaten_writer_starves_and_keeps_barging_writers_out() {
    model_reaching_both("a starving writer", || {
        let s = rwlock();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let s2 = s.clone();
        let waiter = thread::spawn(move || write_increment(&s2));
        let mut holding = true;
        let mut starving_seen = false;
        for _ in 0..2 {
            // SAFETY: write-locked by this thread (above, or by the
            // barging try of the last round).
            unsafe { s.lock.unlock_exclusive() };
            holding = s.lock.try_lock_exclusive();
            if !holding {
                starving_seen = format!("{:?}", s.lock).contains("writers_starving: 1");
                break;
            }
        }
        if holding {
            // SAFETY: the last barging try took the write lock.
            unsafe { s.lock.unlock_exclusive() };
        }
        waiter.join().unwrap();
        assert_eq!(read_count(&s), 1);
        assert!(!s.lock.is_locked());
        starving_seen
    });
}

/// Two readers wait behind a writer: the second to sleep may find
/// `SLEEPING` set by the first and sleep without setting it; the one write
/// unlock that clears it must wake both (a lost reader is a deadlock).
#[test]
fn rwlock_two_readers_sleep_behind_one_write() {
    loom::model(|| {
        let s = shared(RawRwLock::with_options(blocking()));
        assert!(s.lock.try_lock_exclusive());
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || read_count(&s))
            })
            .collect();
        // SAFETY: write-locked above, by this thread.
        s.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: this thread holds the write lock.
        unsafe { s.lock.unlock_exclusive() };
        for r in readers {
            assert_eq!(r.join().unwrap(), 1);
        }
        assert!(!s.lock.is_locked());
    });
}

#[test]
fn rwlock_two_writers_and_a_reader() {
    loom::model(|| {
        let s = shared(RawRwLock::with_options(blocking()));
        let writer = {
            let s = s.clone();
            thread::spawn(move || write_increment(&s))
        };
        let reader = {
            let s = s.clone();
            thread::spawn(move || {
                read_count(&s);
            })
        };
        write_increment(&s);
        writer.join().unwrap();
        reader.join().unwrap();
        // SAFETY: both threads are joined: no other access.
        assert_eq!(s.count.with(|c| unsafe { *c }), 2);
        assert!(!s.lock.is_locked());
    });
}

/// A release that runs late (preempted after reading `next`) must not strand
/// a later waiter: with one slot under loom, ticket 1's release and ticket
/// 2's waiter share the slot that a late release for ticket 1 still wakes.
#[test]
fn ticket_late_release_does_not_strand_a_later_waiter() {
    // The interleaving needs four preemptions (found by loom before the fix
    // with this bound; the default of 2 misses it).
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(4);
    model.check(|| {
        let m = Arc::new(RawTicketMutex::with_options(blocking()));
        let g = m.lock();
        let others: Vec<_> = (0..2).map(|_| spawn_locker(&m)).collect();
        // SAFETY: `g` is this acquisition.
        unsafe { m.unlock(g) };
        for t in others {
            t.join().unwrap();
        }
        assert!(!m.is_locked());
    });
}

/// Far enough that the real clock never decides a branch (a slow iteration
/// would take another path and break loom's replay); under loom a timed
/// futex wait times out at once, which is what explores the give-up paths.
const FAR: std::time::Duration = std::time::Duration::from_secs(3600);

/// Adds one to the count; the caller holds the lock (loom reports the
/// access if it races, i.e. if the acquisition did not synchronize with
/// the last release).
fn bump<L>(s: &Shared<L>) {
    // SAFETY: the caller holds the lock; loom checks it.
    s.count.with_mut(|c| unsafe { *c += 1 });
}

/// The count, read with the lock held (by the caller).
fn count<L>(s: &Shared<L>) -> u32 {
    // SAFETY: the caller holds the lock; loom checks it.
    s.count.with(|c| unsafe { *c })
}

/// Spawns a thread that makes one attempt with `attempt` and, if it got
/// the lock, bumps the count and releases it; joins to whether it got it.
fn spawn_attempt<L: RawLock>(
    s: &Arc<Shared<L>>,
    attempt: fn(&L) -> Option<L::Guard>,
) -> thread::JoinHandle<bool> {
    let s = s.clone();
    thread::spawn(move || match attempt(&s.lock) {
        Some(g) => {
            bump(&s);
            // SAFETY: `g` is this acquisition.
            unsafe { s.lock.release(g) };
            true
        }
        None => false,
    })
}

/// A `try_lock` racing a `lock`: whichever order they take, each sees the
/// other's write (both sides write the cell, so a fast path that acquired
/// without synchronizing, or a release that published nothing, is a race).
/// The attempt is the spawned thread (see `model_reaching_both`).
fn try_lock_races_a_locker<L: RawLock>(new: fn() -> L) {
    model_reaching_both("try_lock got the lock", move || {
        let s = shared(new());
        let attempt = spawn_attempt(&s, L::try_acquire);
        locked(&s.lock, || bump(&s));
        let got = attempt.join().unwrap();
        locked(&s.lock, || assert_eq!(count(&s), 1 + u32::from(got)));
        got
    });
}

/// A timed attempt (far deadline) against a held lock with a blocking
/// locker queued: the attempt's slow path and give-up path must neither
/// strand the locker nor acquire without seeing the holders' writes.
fn timed_attempt_races_a_holder_and_a_sleeper<L: RawLock>(new: fn() -> L) {
    model_reaching_both("timed attempt got the lock", move || {
        let s = shared(new());
        let g = s.lock.acquire();
        let sleeper = {
            let s = s.clone();
            thread::spawn(move || locked(&s.lock, || bump(&s)))
        };
        let timed = spawn_attempt(&s, |l| l.acquire_until(Deadline::after(FAR)));
        bump(&s);
        // SAFETY: `g` is this acquisition.
        unsafe { s.lock.release(g) };
        sleeper.join().unwrap();
        let got = timed.join().unwrap();
        locked(&s.lock, || assert_eq!(count(&s), 2 + u32::from(got)));
        got
    });
}

fn ttas() -> RawTtasMutex {
    RawTtasMutex::with_options(blocking())
}

fn ticket() -> RawTicketMutex {
    RawTicketMutex::with_options(blocking())
}

fn mcs() -> RawMcsMutex {
    RawMcsMutex::with_options(blocking())
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
fn ticket_try_lock_races_a_locker() {
    try_lock_races_a_locker(ticket);
}

#[test]
fn mcs_try_lock_races_a_locker() {
    try_lock_races_a_locker(mcs);
}

#[test]
fn ttas_timed_attempt_races_a_holder_and_a_sleeper() {
    timed_attempt_races_a_holder_and_a_sleeper(ttas);
}

#[test]
fn ticket_timed_attempt_races_a_holder_and_a_sleeper() {
    timed_attempt_races_a_holder_and_a_sleeper(ticket);
}

#[test]
fn mcs_try_lock_races_a_holder_and_a_sleeper() {
    // No timed acquisition: `acquire_until` is `try_lock` here.
    timed_attempt_races_a_holder_and_a_sleeper(mcs);
}

fn rwlock() -> Arc<Shared<RawRwLock>> {
    shared(RawRwLock::with_options(blocking()))
}

/// The try paths of the reader-writer lock against a writer: a read that
/// gets in sees the writer's write or precedes it, a write that gets in is
/// ordered with the writer's either way (loom checks the cell).
#[test]
fn rwlock_try_paths_race_a_writer() {
    model_reaching_both("try_lock_exclusive got the lock", || {
        let s = rwlock();
        let t = {
            let s = s.clone();
            thread::spawn(move || {
                if s.lock.try_lock_shared() {
                    assert!(count(&s) <= 1);
                    // SAFETY: read-locked just above.
                    unsafe { s.lock.unlock_shared() };
                }
                let wrote = s.lock.try_lock_exclusive();
                if wrote {
                    bump(&s);
                    // SAFETY: write-locked just above.
                    unsafe { s.lock.unlock_exclusive() };
                }
                wrote
            })
        };
        write_increment(&s);
        let wrote = t.join().unwrap();
        assert_eq!(read_count(&s), 1 + u32::from(wrote));
        wrote
    });
}

/// Two readers leave in either order before a writer enters: the writer
/// must come after both reads (the second reader's exit continues the
/// first one's release through the word), else its write races one.
#[test]
fn rwlock_writer_after_two_readers() {
    loom::model(|| {
        let s = rwlock();
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || assert!(read_count(&s) <= 1))
            })
            .collect();
        write_increment(&s);
        for r in readers {
            r.join().unwrap();
        }
        assert_eq!(read_count(&s), 1);
    });
}

/// A writer that registers as waiting holds new readers back; when it
/// gives up it must let them in. Here the thread that holds a read lock is
/// also the timed writer (its attempt can only time out, at once under
/// loom), which keeps the model at two threads: a reader that checks while
/// the writer is registered sleeps, and only the give-up's wake-up can
/// reach it (the read unlock that follows sees no waiting writer).
#[test]
fn rwlock_timed_out_writer_wakes_the_readers_it_held_back() {
    loom::model(|| {
        let s = rwlock();
        assert!(s.lock.lock_shared_until(Deadline::NEVER));
        let reader = {
            let s = s.clone();
            thread::spawn(move || read_count(&s))
        };
        assert!(!s.lock.lock_exclusive_until(Deadline::after(FAR)));
        // SAFETY: read-locked above.
        unsafe { s.lock.unlock_shared() };
        assert_eq!(reader.join().unwrap(), 0);
        assert!(!s.lock.is_locked());
    });
}

/// Timed readers and writers against a held write lock: each either gives
/// up having changed nothing, or gets in after the holder's write.
#[test]
fn rwlock_timed_attempts_race_a_writer() {
    model_reaching_both("timed writer got the lock", || {
        let s = rwlock();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let reader = {
            let s = s.clone();
            thread::spawn(move || {
                if s.lock.lock_shared_until(Deadline::after(FAR)) {
                    let v = count(&s);
                    // SAFETY: read-locked just above.
                    unsafe { s.lock.unlock_shared() };
                    assert!(v >= 1);
                }
            })
        };
        let writer = {
            let s = s.clone();
            thread::spawn(move || {
                let got = s.lock.lock_exclusive_until(Deadline::after(FAR));
                if got {
                    bump(&s);
                    // SAFETY: write-locked just above.
                    unsafe { s.lock.unlock_exclusive() };
                }
                got
            })
        };
        bump(&s);
        // SAFETY: write-locked above.
        unsafe { s.lock.unlock_exclusive() };
        reader.join().unwrap();
        let got = writer.join().unwrap();
        assert_eq!(read_count(&s), 1 + u32::from(got));
        assert!(!s.lock.is_locked());
        got
    });
}
