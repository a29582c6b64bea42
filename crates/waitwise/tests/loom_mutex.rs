//! Loom models of the mutexes and the reader-writer lock: mutual exclusion
//! and no lost wake-up in any interleaving. The raw locks' own methods are
//! tested (lock_api's traits need `const INIT`, which loom's atomics cannot
//! give). Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_mutex`
//! (about 1.5 s of model checking on 2 cores, plus the build).
//!
//! Limits: the polling phases are not modelled (`WaitWord` and the locks
//! skip them under loom; the TTAS lock makes one test-and-set probe
//! instead), and the platform's loom futex wakes *every* sleeper on
//! `wake(1)`, so a lost *single* wake-up (the TTAS "owed wake-up" rule) is
//! not observable here; `stress_mutex.rs` covers it with real futexes.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::thread;
use waitwise::mutex::{
    McsGuard, RawMcsMutex, RawRwLock, RawTicketMutex, RawTtasMutex, TicketGuard,
};
use waitwise::{Deadline, Policy, WaitOptions};
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

    unsafe fn release(&self, (): ()) {
        // SAFETY: locked by this thread (the caller's contract).
        unsafe { self.unlock() };
    }
}

impl RawLock for RawTicketMutex {
    type Guard = TicketGuard;

    fn acquire(&self) -> TicketGuard {
        self.lock()
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

/// A release that runs late (preempted after reading `next`) must not move
/// a slot back: with one slot under loom, the late write for ticket 1 could
/// land after ticket 1's own release wrote ticket 2, stranding its waiter.
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
