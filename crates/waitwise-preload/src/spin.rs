//! `pthread_spin_*`: waitwise's test-and-test-and-set spin lock
//! ([`SpinLockRef`], module `waitwise::mutex::spin`, checked by the loom
//! models in `crates/waitwise/tests/loom_spin.rs`) in the caller's 4-byte
//! `pthread_spinlock_t`, with glibc's x86-64 values (1 free, anything
//! else held): a process-shared lock can be shared with a process that
//! runs glibc's own `pthread_spin_*`.
//!
//! A spin lock never sleeps, by definition; while the lock is held the
//! waiter polls with PAUSE and, after 10 µs of it, yields the CPU between
//! polls so that a preempted holder can run. The same code works between
//! processes, so process-shared spin locks are native too. What is here is
//! the layout, POSIX's error values and the wait profile.

use crate::profile::{self, Kind};
use libc::{pthread_spinlock_t, EBUSY, EINVAL};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU32, Ordering};
use waitwise::mutex::SpinLockRef;

const _: () = assert!(std::mem::size_of::<pthread_spinlock_t>() == 4);

/// # Safety
///
/// `l` points to a live `pthread_spinlock_t` for `'a`.
#[inline(always)]
unsafe fn word<'a>(l: *mut pthread_spinlock_t) -> &'a AtomicU32 {
    // SAFETY: by the caller's contract; a 4-byte, 4-aligned int.
    unsafe { AtomicU32::from_ptr(l as *mut u32) }
}

/// The algorithm over `l`'s word.
///
/// # Safety
///
/// As [`word`].
#[inline(always)]
unsafe fn spin_lock<'a>(l: *mut pthread_spinlock_t) -> SpinLockRef<'a> {
    // SAFETY: caller's contract.
    SpinLockRef::new(unsafe { word(l) })
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
    unsafe { word(l) }.store(SpinLockRef::FREE, Ordering::Relaxed);
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
    let lock = unsafe { spin_lock(l) };
    if !lock.try_swap() {
        crate::first_wait::prepare();
        let start = profile::start();
        lock.lock_contended();
        profile::finish(start, Kind::Spin, l, false);
    }
    0
}

/// `pthread_spin_trylock`: `EBUSY` when held.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_spin_trylock(l: *mut pthread_spinlock_t) -> c_int {
    if l.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { spin_lock(l) }.try_lock() {
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
    // SAFETY: caller's contract.
    unsafe { spin_lock(l) }.unlock();
    0
}
