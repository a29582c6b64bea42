//! The interposed functions by name, for `libwaitwise_preload.so`.
//!
//! The object a program preloads is a small C shim (`shim/preload.c`)
//! that decides at load whether the process waits with waitwise at all,
//! and loads this library (`libwaitwise_interposer.so`) only when it does:
//! a program that imports none of the pthread functions starts as fast as
//! without the interposer. The shim then binds each of its entry points to
//! the function [`waitwise_interposer_function`] returns for the name.
//!
//! This library still defines the functions under their own names too, so
//! preloaded by itself it interposes as before.

use std::ffi::{c_char, c_void, CStr};

use crate::{barrier, c11, cond, mutex, rwlock, sem, spin};

/// The implementation of the interposed function `name`, or null if
/// `name` is not one.
///
/// # Safety
///
/// `name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn waitwise_interposer_function(name: *const c_char) -> *const c_void {
    if name.is_null() {
        return std::ptr::null();
    }
    // SAFETY: a NUL-terminated string, by the caller's contract.
    let name = unsafe { CStr::from_ptr(name) };
    match name.to_bytes() {
        b"__pthread_mutex_destroy" => mutex::__pthread_mutex_destroy as *const c_void,
        b"__pthread_mutex_init" => mutex::__pthread_mutex_init as *const c_void,
        b"__pthread_mutex_lock" => mutex::__pthread_mutex_lock as *const c_void,
        b"__pthread_mutex_trylock" => mutex::__pthread_mutex_trylock as *const c_void,
        b"__pthread_mutex_unlock" => mutex::__pthread_mutex_unlock as *const c_void,
        b"__pthread_rwlock_destroy" => rwlock::__pthread_rwlock_destroy as *const c_void,
        b"__pthread_rwlock_init" => rwlock::__pthread_rwlock_init as *const c_void,
        b"__pthread_rwlock_rdlock" => rwlock::__pthread_rwlock_rdlock as *const c_void,
        b"__pthread_rwlock_tryrdlock" => rwlock::__pthread_rwlock_tryrdlock as *const c_void,
        b"__pthread_rwlock_trywrlock" => rwlock::__pthread_rwlock_trywrlock as *const c_void,
        b"__pthread_rwlock_unlock" => rwlock::__pthread_rwlock_unlock as *const c_void,
        b"__pthread_rwlock_wrlock" => rwlock::__pthread_rwlock_wrlock as *const c_void,
        b"cnd_broadcast" => c11::cnd_broadcast as *const c_void,
        b"cnd_destroy" => c11::cnd_destroy as *const c_void,
        b"cnd_init" => c11::cnd_init as *const c_void,
        b"cnd_signal" => c11::cnd_signal as *const c_void,
        b"cnd_timedwait" => c11::cnd_timedwait as *const c_void,
        b"cnd_wait" => c11::cnd_wait as *const c_void,
        b"mtx_destroy" => c11::mtx_destroy as *const c_void,
        b"mtx_init" => c11::mtx_init as *const c_void,
        b"mtx_lock" => c11::mtx_lock as *const c_void,
        b"mtx_timedlock" => c11::mtx_timedlock as *const c_void,
        b"mtx_trylock" => c11::mtx_trylock as *const c_void,
        b"mtx_unlock" => c11::mtx_unlock as *const c_void,
        b"pthread_barrier_destroy" => barrier::pthread_barrier_destroy as *const c_void,
        b"pthread_barrier_init" => barrier::pthread_barrier_init as *const c_void,
        b"pthread_barrier_wait" => barrier::pthread_barrier_wait as *const c_void,
        b"pthread_cond_broadcast" => cond::pthread_cond_broadcast as *const c_void,
        b"pthread_cond_clockwait" => cond::pthread_cond_clockwait as *const c_void,
        b"pthread_cond_destroy" => cond::pthread_cond_destroy as *const c_void,
        b"pthread_cond_init" => cond::pthread_cond_init as *const c_void,
        b"pthread_cond_signal" => cond::pthread_cond_signal as *const c_void,
        b"pthread_cond_timedwait" => cond::pthread_cond_timedwait as *const c_void,
        b"pthread_cond_wait" => cond::pthread_cond_wait as *const c_void,
        b"pthread_mutex_clocklock" => mutex::pthread_mutex_clocklock as *const c_void,
        b"pthread_mutex_destroy" => mutex::pthread_mutex_destroy as *const c_void,
        b"pthread_mutex_init" => mutex::pthread_mutex_init as *const c_void,
        b"pthread_mutex_lock" => mutex::pthread_mutex_lock as *const c_void,
        b"pthread_mutex_timedlock" => mutex::pthread_mutex_timedlock as *const c_void,
        b"pthread_mutex_trylock" => mutex::pthread_mutex_trylock as *const c_void,
        b"pthread_mutex_unlock" => mutex::pthread_mutex_unlock as *const c_void,
        b"pthread_rwlock_clockrdlock" => rwlock::pthread_rwlock_clockrdlock as *const c_void,
        b"pthread_rwlock_clockwrlock" => rwlock::pthread_rwlock_clockwrlock as *const c_void,
        b"pthread_rwlock_destroy" => rwlock::pthread_rwlock_destroy as *const c_void,
        b"pthread_rwlock_init" => rwlock::pthread_rwlock_init as *const c_void,
        b"pthread_rwlock_rdlock" => rwlock::pthread_rwlock_rdlock as *const c_void,
        b"pthread_rwlock_timedrdlock" => rwlock::pthread_rwlock_timedrdlock as *const c_void,
        b"pthread_rwlock_timedwrlock" => rwlock::pthread_rwlock_timedwrlock as *const c_void,
        b"pthread_rwlock_tryrdlock" => rwlock::pthread_rwlock_tryrdlock as *const c_void,
        b"pthread_rwlock_trywrlock" => rwlock::pthread_rwlock_trywrlock as *const c_void,
        b"pthread_rwlock_unlock" => rwlock::pthread_rwlock_unlock as *const c_void,
        b"pthread_rwlock_wrlock" => rwlock::pthread_rwlock_wrlock as *const c_void,
        b"pthread_spin_destroy" => spin::pthread_spin_destroy as *const c_void,
        b"pthread_spin_init" => spin::pthread_spin_init as *const c_void,
        b"pthread_spin_lock" => spin::pthread_spin_lock as *const c_void,
        b"pthread_spin_trylock" => spin::pthread_spin_trylock as *const c_void,
        b"pthread_spin_unlock" => spin::pthread_spin_unlock as *const c_void,
        b"sem_clockwait" => sem::sem_clockwait as *const c_void,
        b"sem_destroy" => sem::sem_destroy as *const c_void,
        b"sem_getvalue" => sem::sem_getvalue as *const c_void,
        b"sem_init" => sem::sem_init as *const c_void,
        b"sem_post" => sem::sem_post as *const c_void,
        b"sem_timedwait" => sem::sem_timedwait as *const c_void,
        b"sem_trywait" => sem::sem_trywait as *const c_void,
        b"sem_wait" => sem::sem_wait as *const c_void,
        _ => std::ptr::null(),
    }
}
