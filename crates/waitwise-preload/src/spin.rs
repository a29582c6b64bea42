//! `pthread_spin_*`: a test-and-test-and-set spinlock in the caller's
//! 4-byte `pthread_spinlock_t` (0 free, 1 held; glibc's values).
//!
//! A spinlock never sleeps, by definition; while the lock is held the
//! waiter polls with PAUSE and, after [`YIELD_AFTER_NS`] of it, yields the
//! CPU between polls so that a preempted holder can run (a plain spinlock
//! would burn its whole time slice). The same code works between processes,
//! so process-shared spinlocks are native too.
//!
//! # Memory ordering
//!
//! Acquire exchange to take, Release store to give back; the polling loads
//! carry no data (Relaxed).

use crate::profile::{self, Kind};
use libc::{pthread_spinlock_t, EBUSY, EINVAL};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU32, Ordering};

const _: () = assert!(std::mem::size_of::<pthread_spinlock_t>() == 4);

/// Poll with PAUSE this long before yielding between polls. Guessed: about
/// a futex sleep/wake cycle, past which the holder is likely preempted.
pub const YIELD_AFTER_NS: u64 = 10_000;

const FREE: u32 = 0;
const HELD: u32 = 1;

/// # Safety
///
/// `l` points to a live `pthread_spinlock_t` for `'a`.
#[inline(always)]
unsafe fn word<'a>(l: *mut pthread_spinlock_t) -> &'a AtomicU32 {
    // SAFETY: by the caller's contract; a 4-byte, 4-aligned int.
    unsafe { AtomicU32::from_ptr(l as *mut u32) }
}

/// `pthread_spin_init` (either `pshared` value: the lock is a plain word).
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_spin_init(
    l: *mut pthread_spinlock_t,
    _pshared: c_int,
) -> c_int {
    if l.is_null() {
        return EINVAL;
    }
    // Relaxed: init runs before the lock is shared; whatever shares it
    // orders this store before other threads' accesses.
    // SAFETY: caller's contract.
    unsafe { word(l) }.store(FREE, Ordering::Relaxed);
    0
}

/// `pthread_spin_destroy`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_spin_destroy(l: *mut pthread_spinlock_t) -> c_int {
    if l.is_null() {
        return EINVAL;
    }
    0
}

/// `pthread_spin_lock`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_spin_lock(l: *mut pthread_spinlock_t) -> c_int {
    if l.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { word(l) };
    // FREE => HELD. Acquire: pairs with the unlock's Release.
    if w.swap(HELD, Ordering::Acquire) == FREE {
        return 0;
    }
    lock_contended(w, l);
    0
}

#[cold]
fn lock_contended(w: &AtomicU32, l: *mut pthread_spinlock_t) {
    let start = profile::start();
    let yield_at = crate::poll::end_after(YIELD_AFTER_NS);
    let mut polls = 0u32;
    loop {
        // Relaxed: a hint; the swap acquires.
        while w.load(Ordering::Relaxed) != FREE {
            polls = polls.wrapping_add(1);
            // Read the clock every 64 polls only.
            if polls & 63 == 0 && crate::poll::monotonic_ns() >= yield_at {
                waitwise::platform::thread::sched_yield();
            } else {
                std::hint::spin_loop();
            }
        }
        if w.swap(HELD, Ordering::Acquire) == FREE {
            break;
        }
    }
    profile::finish(start, Kind::Spin, l, false);
}

/// `pthread_spin_trylock`: `EBUSY` when held.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_spin_trylock(l: *mut pthread_spinlock_t) -> c_int {
    if l.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { word(l) };
    // Relaxed load first: a held lock costs no exclusive line transfer.
    if w.load(Ordering::Relaxed) == FREE && w.swap(HELD, Ordering::Acquire) == FREE {
        0
    } else {
        EBUSY
    }
}

/// `pthread_spin_unlock`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_spin_unlock(l: *mut pthread_spinlock_t) -> c_int {
    if l.is_null() {
        return EINVAL;
    }
    // HELD => FREE. Release: publishes the critical section.
    // SAFETY: caller's contract.
    unsafe { word(l) }.store(FREE, Ordering::Release);
    0
}
