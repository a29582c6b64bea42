//! [`RawFairMutex`]: parking_lot's raw fair mutex, as waitwise's FIFO
//! ticket lock behind `lock_api` 0.4's traits.

use crate::timeout;
use std::cell::UnsafeCell;
use std::time::{Duration, Instant};
use waitwise::mutex::{RawTicketMutex, TicketGuard};

/// The raw mutex behind [`FairMutex`](crate::FairMutex): waitwise's
/// ticket lock ([`RawTicketMutex`]), FIFO among running waiters.
///
/// The ticket lock's unlock takes the holder's ticket, and `lock_api`
/// 0.4's takes nothing, so the holder keeps its ticket here, in `held`,
/// from its lock to its unlock.
///
/// # Examples
/// ```
/// use parking_lot::lock_api::RawMutex as _;
///
/// let raw = parking_lot::RawFairMutex::INIT;
/// raw.lock();
/// assert!(raw.is_locked());
/// // SAFETY: locked just above.
/// unsafe { raw.unlock() };
/// ```
pub struct RawFairMutex {
    lock: RawTicketMutex,
    /// The holder's ticket: written by a thread that just took the lock,
    /// taken by the holder's unlock; nobody else touches it.
    held: UnsafeCell<Option<TicketGuard>>,
}

// SAFETY: `held` is accessed only by the thread that holds `lock`, between
// its acquisition (which acquires) and its release (which releases), so
// the accesses of successive holders are ordered by the lock. A
// `TicketGuard` is a ticket number; it is `!Send` so that lock_api's
// guards are, and moving the number to another thread's unlock (with
// `send_guard`) hands over nothing else.
unsafe impl Sync for RawFairMutex {}
// SAFETY: as above; the value owns nothing tied to a thread.
unsafe impl Send for RawFairMutex {}
// Unwind safe, as parking_lot's raw locks: `held` is written whole by a
// thread that just took the lock and taken whole by its unlock; a panic
// cannot leave it half changed for another thread to see.
impl std::panic::RefUnwindSafe for RawFairMutex {}
impl std::panic::UnwindSafe for RawFairMutex {}

impl RawFairMutex {
    /// Keeps the ticket of the lock just taken.
    #[inline]
    fn keep(&self, guard: TicketGuard) {
        // SAFETY: this thread holds the lock just taken: only it touches
        // `held` (the `Sync` impl's argument).
        unsafe { *self.held.get() = Some(guard) };
    }
}

// SAFETY: `RawTicketMutex` is a mutex; this type takes the ticket its
// unlock needs from `held`, which the holder filled.
unsafe impl lock_api::RawMutex for RawFairMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawFairMutex {
        lock: RawTicketMutex::new(),
        held: UnsafeCell::new(None),
    };
    type GuardMarker = crate::GuardMarker;

    #[inline]
    fn lock(&self) {
        self.keep(self.lock.lock());
    }

    #[inline]
    fn try_lock(&self) -> bool {
        self.lock.try_lock().map(|g| self.keep(g)).is_some()
    }

    #[inline]
    unsafe fn unlock(&self) {
        // SAFETY: the caller holds the lock (the trait's contract): only
        // it touches `held`, which its lock filled.
        let guard = unsafe { (*self.held.get()).take() };
        let guard = guard.expect("unlock of an unlocked FairMutex");
        // SAFETY: the caller holds the lock with this ticket.
        unsafe { self.lock.unlock(guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.lock.is_locked()
    }
}

// SAFETY: every unlock of the ticket lock is fair (FIFO among running
// waiters).
unsafe impl lock_api::RawMutexFair for RawFairMutex {
    #[inline]
    unsafe fn unlock_fair(&self) {
        // SAFETY: forwarded from the caller.
        unsafe { lock_api::RawMutex::unlock(self) }
    }
}

// SAFETY: timed attempts acquire only through the ticket lock's own timed
// attempt, keeping the ticket as `lock` does.
unsafe impl lock_api::RawMutexTimed for RawFairMutex {
    type Duration = Duration;
    type Instant = Instant;

    #[inline]
    fn try_lock_for(&self, timeout: Duration) -> bool {
        self.lock
            .try_lock_until(timeout::after(timeout))
            .map(|g| self.keep(g))
            .is_some()
    }

    #[inline]
    fn try_lock_until(&self, timeout: Instant) -> bool {
        self.lock
            .try_lock_until(timeout::at(timeout))
            .map(|g| self.keep(g))
            .is_some()
    }
}
