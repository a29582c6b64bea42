//! `waitwise_mutex_t`: the default waitwise mutex
//! ([`RawTtasMutex`]) with an owner, so misuse is reported, not undefined.
//!
//! C locks and unlocks without guards, and `RawTtasMutex::unlock` may only
//! be called by the holder. The wrapper [`OwnedRawMutex`] keeps the holding
//! thread's id next to the lock: `unlock` by any other thread is
//! `WAITWISE_EPERM`, a second `lock` by the holder (a self-deadlock) is
//! `WAITWISE_EDEADLK`, and `destroy` of a held mutex is `WAITWISE_EBUSY`.
//! [`OwnedRawMutex`] is itself a [`lock_api::RawMutex`], so the condition
//! variable's guard-based wait runs on it and keeps the owner right while it
//! unlocks and re-locks.
//!
//! # Memory ordering
//!
//! `owner` is `Relaxed` throughout. It is written only by the holder (its
//! id after acquiring, `NO_OWNER` before releasing) and only ever compared
//! with the *reader's own* id. A thread reads its own id there only if it
//! wrote it itself and has not yet overwritten it: coherence makes a thread
//! see its own latest write to a location, or a later one. So the check
//! "do I hold it?" is exact without any ordering; the lock word's own
//! Acquire/Release orders the critical sections.

use crate::error::{boundary, destroy, object, store_new, Error, Status, WAITWISE_OK};
use crate::policy::waitwise_policy_t;
use crate::timeout;
use std::cell::Cell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use waitwise_core::mutex::RawTtasMutex;
use waitwise_core::{Deadline, WaitOptions};

/// `owner` of a free mutex. Thread ids start at 1.
const NO_OWNER: usize = 0;

/// The next thread id to hand out.
static NEXT_THREAD_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// This thread's id, `NO_OWNER` until first asked for. A const-initialized
    /// `Cell` has no destructor, so it is readable even while the thread
    /// exits.
    static THREAD_ID: Cell<usize> = const { Cell::new(NO_OWNER) };
}

/// A process-unique id of the calling thread (never reused, never
/// `NO_OWNER`).
#[inline]
fn current_thread() -> usize {
    THREAD_ID.with(|id| match id.get() {
        NO_OWNER => {
            // Relaxed: only uniqueness matters, which the RMW gives.
            let new = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed);
            id.set(new);
            new
        }
        known => known,
    })
}

/// [`RawTtasMutex`] plus the id of the thread that holds it.
#[derive(Debug)]
pub struct OwnedRawMutex {
    raw: RawTtasMutex,
    /// The holder's [`current_thread`] id, or `NO_OWNER` (see the module's
    /// memory-ordering paragraph).
    owner: AtomicUsize,
}

impl OwnedRawMutex {
    fn with_options(options: WaitOptions) -> Self {
        Self {
            raw: RawTtasMutex::with_options(options),
            owner: AtomicUsize::new(NO_OWNER),
        }
    }

    /// Whether the calling thread holds the lock.
    #[inline]
    fn held_by_me(&self) -> bool {
        // Relaxed: compared with our own id, which we can read there only
        // while we hold the lock (module doc, "Memory ordering").
        self.owner.load(Ordering::Relaxed) == current_thread()
    }

    /// Records the calling thread as the holder; call right after acquiring.
    #[inline]
    fn acquired(&self) {
        // Relaxed: written only by the holder; others only compare it with
        // their own id (module doc, "Memory ordering").
        self.owner.store(current_thread(), Ordering::Relaxed);
    }
}

// SAFETY: mutual exclusion is `RawTtasMutex`'s; `owner` is bookkeeping
// that never decides whether the lock is taken. The guard is `GuardNoSend`:
// an acquisition belongs to the thread recorded in `owner`.
unsafe impl lock_api::RawMutex for OwnedRawMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self {
        raw: RawTtasMutex::new(),
        owner: AtomicUsize::new(NO_OWNER),
    };
    type Guard = lock_api::GuardNoSend;

    #[inline]
    fn lock(&self) -> Self::Guard {
        self.raw.lock();
        self.acquired();
        lock_api::GuardNoSend::new()
    }

    #[inline]
    fn try_lock(&self) -> Option<Self::Guard> {
        self.raw.try_lock().then(|| {
            self.acquired();
            lock_api::GuardNoSend::new()
        })
    }

    #[inline]
    unsafe fn unlock(&self, _guard: Self::Guard) {
        // Relaxed: the holder's last write, before the lock word's Release
        // (module doc, "Memory ordering").
        self.owner.store(NO_OWNER, Ordering::Relaxed);
        // SAFETY: the guard stands for this thread's acquisition.
        unsafe { self.raw.unlock() }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.raw.is_locked()
    }
}

/// The object behind `waitwise_mutex_t *`: a `lock_api` mutex over no data,
/// so that [`crate::condvar`] can make the guard its wait needs.
pub type WaitwiseMutex = lock_api::Mutex<OwnedRawMutex, ()>;

/// The raw lock of a mutex handle.
#[inline]
pub(crate) fn raw(mutex: &WaitwiseMutex) -> &OwnedRawMutex {
    // SAFETY: only used to lock and unlock through `OwnedRawMutex`, whose
    // owner checks keep those calls paired; the `()` data has no borrows.
    unsafe { mutex.raw() }
}

/// The calling thread's acquisition of `mutex` as a guard, for
/// [`crate::condvar`]; `Error::NotOwner` unless the calling thread holds
/// it. The caller must not drop the guard (it would unlock): wrap it in
/// `ManuallyDrop`.
#[inline]
pub(crate) fn held_guard(
    mutex: &WaitwiseMutex,
) -> Result<lock_api::MutexGuard<'_, OwnedRawMutex, ()>, Error> {
    if !raw(mutex).held_by_me() {
        return Err(Error::NotOwner);
    }
    // SAFETY: this thread holds the lock (checked just above) and C code
    // holds no guard; the data is `()`, so there is no reference to alias.
    Ok(unsafe { mutex.make_guard_unchecked(lock_api::GuardNoSend::new()) })
}

/// Creates an unlocked mutex with the default policy in `*out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_mutex_new(out: *mut *mut WaitwiseMutex) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { waitwise_mutex_new_with_policy(out, crate::policy::waitwise_policy_default()) }
}

/// Creates an unlocked mutex waiting with `policy` in `*out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_mutex_new_with_policy(
    out: *mut *mut WaitwiseMutex,
    policy: waitwise_policy_t,
) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe {
            store_new(out, || {
                let raw = OwnedRawMutex::with_options(policy.options()?);
                Ok(lock_api::Mutex::from_raw(raw, ()))
            })
        }
    })
}

/// Acquires `mutex` until `deadline`: the shared body of lock and timedlock.
fn lock_until(mutex: *mut WaitwiseMutex, deadline: Deadline) -> Status {
    // SAFETY: the callers pass their caller's handle, under the same
    // contract.
    let raw = raw(unsafe { object(mutex) }?);
    if raw.held_by_me() {
        return Err(Error::Deadlock);
    }
    if raw.raw.try_lock_until(deadline) {
        raw.acquired();
        Ok(WAITWISE_OK)
    } else {
        Err(Error::TimedOut)
    }
}

/// Acquires the mutex, waiting as long as it takes. `WAITWISE_EDEADLK` if
/// the calling thread holds it already.
///
/// # Safety
///
/// `mutex` is NULL or a live mutex.
#[no_mangle]
pub unsafe extern "C" fn waitwise_mutex_lock(mutex: *mut WaitwiseMutex) -> c_int {
    boundary(|| lock_until(mutex, Deadline::NEVER))
}

/// Acquires the mutex if it is free: `0`, or `WAITWISE_EBUSY` (also when
/// the calling thread holds it).
///
/// # Safety
///
/// `mutex` is NULL or a live mutex.
#[no_mangle]
pub unsafe extern "C" fn waitwise_mutex_trylock(mutex: *mut WaitwiseMutex) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        let raw = raw(unsafe { object(mutex) }?);
        if raw.raw.try_lock() {
            raw.acquired();
            Ok(WAITWISE_OK)
        } else {
            Err(Error::Busy)
        }
    })
}

/// Acquires the mutex, waiting at most `timeout_ns`: `0`,
/// `WAITWISE_ETIMEDOUT`, or `WAITWISE_EDEADLK` if the calling thread holds
/// it already.
///
/// # Safety
///
/// `mutex` is NULL or a live mutex.
#[no_mangle]
pub unsafe extern "C" fn waitwise_mutex_timedlock_ns(
    mutex: *mut WaitwiseMutex,
    timeout_ns: u64,
) -> c_int {
    boundary(|| lock_until(mutex, Deadline::after(timeout::from_ns(timeout_ns))))
}

/// Releases the mutex. `WAITWISE_EPERM` if the calling thread does not hold
/// it (nothing changes then).
///
/// # Safety
///
/// `mutex` is NULL or a live mutex.
#[no_mangle]
pub unsafe extern "C" fn waitwise_mutex_unlock(mutex: *mut WaitwiseMutex) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        let raw = raw(unsafe { object(mutex) }?);
        if !raw.held_by_me() {
            return Err(Error::NotOwner);
        }
        // SAFETY: the calling thread holds the lock (checked above).
        unsafe { lock_api::RawMutex::unlock(raw, lock_api::GuardNoSend::new()) };
        Ok(WAITWISE_OK)
    })
}

/// Frees the mutex. `WAITWISE_EBUSY` (and nothing freed) if it is held.
///
/// # Safety
///
/// `mutex` is NULL or a live mutex that no thread uses now or later.
#[no_mangle]
pub unsafe extern "C" fn waitwise_mutex_destroy(mutex: *mut WaitwiseMutex) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        if raw(unsafe { object(mutex) }?).raw.is_locked() {
            return Err(Error::Busy);
        }
        // SAFETY: forwarded contract.
        unsafe { destroy(mutex) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::*;
    use std::ptr;

    #[test]
    fn thread_ids_are_distinct_and_stable() {
        let here = current_thread();
        assert_ne!(here, NO_OWNER);
        assert_eq!(here, current_thread());
        let there = std::thread::spawn(current_thread).join().unwrap();
        assert_ne!(here, there);
    }

    #[test]
    fn misuse_is_reported() {
        // SAFETY: `m` comes from waitwise_mutex_new and stays live until its
        // one successful destroy, after the other thread is joined; the null
        // pointers are part of the tested contract (EINVAL, never read).
        unsafe {
            let mut m = ptr::null_mut();
            assert_eq!(waitwise_mutex_new(&mut m), WAITWISE_OK);
            assert_eq!(waitwise_mutex_unlock(m), WAITWISE_EPERM);
            assert_eq!(waitwise_mutex_lock(m), WAITWISE_OK);
            assert_eq!(waitwise_mutex_lock(m), WAITWISE_EDEADLK);
            assert_eq!(waitwise_mutex_trylock(m), WAITWISE_EBUSY);
            assert_eq!(waitwise_mutex_destroy(m), WAITWISE_EBUSY);
            let addr = m as usize;
            let other = std::thread::spawn(move || {
                let m = addr as *mut WaitwiseMutex;
                (
                    waitwise_mutex_unlock(m),
                    waitwise_mutex_timedlock_ns(m, 1_000_000),
                )
            });
            assert_eq!(other.join().unwrap(), (WAITWISE_EPERM, WAITWISE_ETIMEDOUT));
            assert_eq!(waitwise_mutex_unlock(m), WAITWISE_OK);
            assert_eq!(waitwise_mutex_unlock(m), WAITWISE_EPERM);
            assert_eq!(waitwise_mutex_destroy(m), WAITWISE_OK);
            assert_eq!(waitwise_mutex_lock(ptr::null_mut()), WAITWISE_EINVAL);
            assert_eq!(waitwise_mutex_new(ptr::null_mut()), WAITWISE_EINVAL);
        }
    }
}
