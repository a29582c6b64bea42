//! The locks' models' shared pieces: a counter under a lock ([`Shared`]),
//! the locks' own lock and unlock behind one trait ([`RawLock`]), and the
//! model bodies every lock runs ([`try_lock_races_a_locker`],
//! [`timed_attempt_races_a_holder_and_a_sleeper`]).
// Each model file uses the pieces of its own lock.
#![allow(dead_code)]

use super::model_reaching_both;
use loom::cell::UnsafeCell;
use loom::thread;
use waitwise::mutex::{McsGuard, RawMcsMutex, RawTicketMutex, RawTtasMutex, TicketGuard};
use waitwise::{Deadline, Policy, WaitOptions};
use waitwise_platform::shim::Arc;

pub fn blocking() -> WaitOptions {
    WaitOptions::new().policy(Policy::always_block())
}

/// A counter that loom checks for unsynchronized access.
pub struct Shared<L> {
    pub lock: L,
    pub count: UnsafeCell<u32>,
}

// SAFETY: `count` is only accessed with `lock` held (and loom checks it).
unsafe impl<L: Sync> Sync for Shared<L> {}

pub fn shared<L>(lock: L) -> Arc<Shared<L>> {
    Arc::new(Shared {
        lock,
        count: UnsafeCell::new(0),
    })
}

/// The mutexes' own lock and unlock, so that the models can share bodies.
pub trait RawLock: Send + Sync + 'static {
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
pub fn locked<L: RawLock>(l: &L, f: impl FnOnce()) {
    let g = l.acquire();
    f();
    // SAFETY: `g` is this acquisition.
    unsafe { l.release(g) };
}

/// Spawns a thread that takes `m` once and releases it.
pub fn spawn_locker<L: RawLock>(m: &Arc<L>) -> thread::JoinHandle<()> {
    let m = m.clone();
    thread::spawn(move || locked(&*m, || {}))
}

pub fn increment_in_two_threads<L: RawLock>(lock: L) {
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

/// Far enough that the real clock never decides a branch (a slow iteration
/// would take another path and break loom's replay); under loom a timed
/// futex wait times out at once, which is what explores the give-up paths.
pub const FAR: std::time::Duration = std::time::Duration::from_secs(3600);

/// Adds one to the count; the caller holds the lock (loom reports the
/// access if it races, i.e. if the acquisition did not synchronize with
/// the last release).
pub fn bump<L>(s: &Shared<L>) {
    // SAFETY: the caller holds the lock; loom checks it.
    s.count.with_mut(|c| unsafe { *c += 1 });
}

/// The count, read with the lock held (by the caller).
pub fn count<L>(s: &Shared<L>) -> u32 {
    // SAFETY: the caller holds the lock; loom checks it.
    s.count.with(|c| unsafe { *c })
}

/// Spawns a thread that makes one attempt with `attempt` and, if it got
/// the lock, bumps the count and releases it; joins to whether it got it.
pub fn spawn_attempt<L: RawLock>(
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
pub fn try_lock_races_a_locker<L: RawLock>(new: fn() -> L) {
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
pub fn timed_attempt_races_a_holder_and_a_sleeper<L: RawLock>(new: fn() -> L) {
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
