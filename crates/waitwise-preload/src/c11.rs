//! C11's `<threads.h>` mutexes and condition variables, `mtx_*` and
//! `cnd_*`, on the interposer's pthread objects.
//!
//! glibc implements each of them as a call of its internal
//! `__pthread_mutex_*`/`__pthread_cond_*` entry point, which a preloaded
//! object cannot interpose; defining the C11 functions themselves routes a
//! C11 program's waits through [`mutex`](crate::mutex) and
//! [`cond`](crate::cond) as a pthread program's. The objects are glibc's
//! own layouts: `mtx_t` is a `pthread_mutex_t` and `cnd_t` a
//! `pthread_cond_t` (the same size, unions of the same `__size` array), so
//! each function does what glibc's does (`nptl/mtx_*.c`, `nptl/cnd_*.c`)
//! with the interposer's pthread function and maps its error as glibc's
//! `thrd_err_map`: 0 to `thrd_success`, `EBUSY` to `thrd_busy`, `ENOMEM` to
//! `thrd_nomem`, `ETIMEDOUT` to `thrd_timedout`, anything else to
//! `thrd_error`.
//!
//! `call_once` and the `thrd_*` functions stay glibc's: they wait on no
//! object of the interposer's.

use crate::cond::{
    pthread_cond_broadcast, pthread_cond_clockwait, pthread_cond_destroy, pthread_cond_init,
    pthread_cond_signal, pthread_cond_wait,
};
use crate::mutex::{
    pthread_mutex_destroy, pthread_mutex_init, pthread_mutex_lock, pthread_mutex_timedlock,
    pthread_mutex_trylock, pthread_mutex_unlock,
};
use libc::{c_int, pthread_cond_t, pthread_mutex_t, timespec, EBUSY, ENOMEM, ETIMEDOUT};

/// C11's `mtx_t`: glibc's is a union of `pthread_mutex_t`'s size and
/// alignment, and glibc's `mtx_*` use it as a `pthread_mutex_t`.
pub type MtxT = pthread_mutex_t;
/// C11's `cnd_t`: as [`MtxT`], a `pthread_cond_t`.
pub type CndT = pthread_cond_t;

/// `thrd_success`.
pub const THRD_SUCCESS: c_int = 0;
/// `thrd_busy`.
pub const THRD_BUSY: c_int = 1;
/// `thrd_error`.
pub const THRD_ERROR: c_int = 2;
/// `thrd_nomem`.
pub const THRD_NOMEM: c_int = 3;
/// `thrd_timedout`.
pub const THRD_TIMEDOUT: c_int = 4;

/// `mtx_plain`.
pub const MTX_PLAIN: c_int = 0;
/// `mtx_recursive` (or-ed with `mtx_plain` or `mtx_timed`).
pub const MTX_RECURSIVE: c_int = 1;
/// `mtx_timed`.
pub const MTX_TIMED: c_int = 2;

/// glibc's `thrd_err_map`: a pthread error number as a `thrd_*` result.
#[inline]
pub fn thrd_result(err: c_int) -> c_int {
    match err {
        0 => THRD_SUCCESS,
        EBUSY => THRD_BUSY,
        ENOMEM => THRD_NOMEM,
        ETIMEDOUT => THRD_TIMEDOUT,
        _ => THRD_ERROR,
    }
}

/// `mtx_init`: `mtx_plain | mtx_recursive` and `mtx_timed | mtx_recursive`
/// make a recursive mutex, any other type a normal one (C11 makes no
/// difference between plain and timed). glibc 2.36 does the same: it
/// accepts a type that is none of the four and makes a normal mutex, so a
/// program that passes one runs as it does natively.
#[no_mangle]
pub unsafe extern "C-unwind" fn mtx_init(m: *mut MtxT, kind: c_int) -> c_int {
    let pthread_kind = if kind == MTX_PLAIN | MTX_RECURSIVE || kind == MTX_TIMED | MTX_RECURSIVE {
        libc::PTHREAD_MUTEX_RECURSIVE
    } else {
        libc::PTHREAD_MUTEX_NORMAL
    };
    // SAFETY: all-zero bytes are a valid value of the plain C union, and
    // `pthread_mutexattr_init` initializes it before any read.
    let mut attr: libc::pthread_mutexattr_t = unsafe { std::mem::zeroed() };
    // SAFETY: `attr` is a local the calls initialize and read (glibc's
    // attribute functions, which the interposer leaves to glibc); `m` is
    // the caller's mutex (C11's contract).
    unsafe {
        libc::pthread_mutexattr_init(&mut attr);
        libc::pthread_mutexattr_settype(&mut attr, pthread_kind);
        let err = pthread_mutex_init(m, &attr);
        libc::pthread_mutexattr_destroy(&mut attr);
        thrd_result(err)
    }
}

/// `mtx_lock`.
#[no_mangle]
pub unsafe extern "C-unwind" fn mtx_lock(m: *mut MtxT) -> c_int {
    // SAFETY: C11's contract is pthread_mutex_lock's.
    thrd_result(unsafe { pthread_mutex_lock(m) })
}

/// `mtx_trylock`: `thrd_busy` when held.
#[no_mangle]
pub unsafe extern "C-unwind" fn mtx_trylock(m: *mut MtxT) -> c_int {
    // SAFETY: C11's contract is pthread_mutex_trylock's.
    thrd_result(unsafe { pthread_mutex_trylock(m) })
}

/// `mtx_timedlock`: waits until `abstime` on `TIME_UTC`
/// (`CLOCK_REALTIME`).
#[no_mangle]
pub unsafe extern "C-unwind" fn mtx_timedlock(m: *mut MtxT, abstime: *const timespec) -> c_int {
    // SAFETY: C11's contract is pthread_mutex_timedlock's.
    thrd_result(unsafe { pthread_mutex_timedlock(m, abstime) })
}

/// `mtx_unlock`.
#[no_mangle]
pub unsafe extern "C-unwind" fn mtx_unlock(m: *mut MtxT) -> c_int {
    // SAFETY: C11's contract is pthread_mutex_unlock's.
    thrd_result(unsafe { pthread_mutex_unlock(m) })
}

/// `mtx_destroy` (no result: C11's returns nothing).
#[no_mangle]
pub unsafe extern "C-unwind" fn mtx_destroy(m: *mut MtxT) {
    // SAFETY: C11's contract is pthread_mutex_destroy's.
    unsafe { pthread_mutex_destroy(m) };
}

/// `cnd_init`: a condition variable on `CLOCK_REALTIME`, as
/// `cnd_timedwait`'s `TIME_UTC` deadlines are.
#[no_mangle]
pub unsafe extern "C-unwind" fn cnd_init(c: *mut CndT) -> c_int {
    // SAFETY: C11's contract is pthread_cond_init's; no attributes.
    thrd_result(unsafe { pthread_cond_init(c, std::ptr::null()) })
}

/// `cnd_signal`.
#[no_mangle]
pub unsafe extern "C-unwind" fn cnd_signal(c: *mut CndT) -> c_int {
    // SAFETY: C11's contract is pthread_cond_signal's.
    thrd_result(unsafe { pthread_cond_signal(c) })
}

/// `cnd_broadcast`.
#[no_mangle]
pub unsafe extern "C-unwind" fn cnd_broadcast(c: *mut CndT) -> c_int {
    // SAFETY: C11's contract is pthread_cond_broadcast's.
    thrd_result(unsafe { pthread_cond_broadcast(c) })
}

/// `cnd_wait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn cnd_wait(c: *mut CndT, m: *mut MtxT) -> c_int {
    // SAFETY: C11's contract is pthread_cond_wait's.
    thrd_result(unsafe { pthread_cond_wait(c, m) })
}

/// `cnd_timedwait`: waits until `abstime` on `TIME_UTC`
/// (`CLOCK_REALTIME`).
#[no_mangle]
pub unsafe extern "C-unwind" fn cnd_timedwait(
    c: *mut CndT,
    m: *mut MtxT,
    abstime: *const timespec,
) -> c_int {
    // SAFETY: C11's contract is pthread_cond_timedwait's, on TIME_UTC.
    thrd_result(unsafe { pthread_cond_clockwait(c, m, libc::CLOCK_REALTIME, abstime) })
}

/// `cnd_destroy` (no result: C11's returns nothing).
#[no_mangle]
pub unsafe extern "C-unwind" fn cnd_destroy(c: *mut CndT) {
    // SAFETY: C11's contract is pthread_cond_destroy's.
    unsafe { pthread_cond_destroy(c) };
}
