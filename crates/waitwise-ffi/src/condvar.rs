//! `waitwise_condvar_t`: [`waitwise_core::condvar::Condvar`] over a
//! `waitwise_mutex_t`, so the sequence algorithm is
//! [`waitwise_core::condvar::CondSeqRef`], the one the interposer's
//! `pthread_cond_t` runs too. Waits may wake spuriously, as with every
//! condition variable: wait in a loop on the condition.

use crate::error::{boundary, destroy, object, store_new, Error, Status, WAITWISE_OK};
use crate::mutex::{held_guard, WaitwiseMutex};
use crate::policy::waitwise_policy_t;
use crate::timeout;
use std::ffi::c_int;
use std::mem::ManuallyDrop;
use waitwise_core::condvar::Condvar;
use waitwise_core::Deadline;

/// The object behind `waitwise_condvar_t *`.
#[derive(Debug)]
pub struct WaitwiseCondvar(Condvar);

/// Creates a condition variable with the default policy in `*out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_condvar_new(out: *mut *mut WaitwiseCondvar) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { waitwise_condvar_new_with_policy(out, crate::policy::waitwise_policy_default()) }
}

/// Creates a condition variable waiting with `policy` in `*out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_condvar_new_with_policy(
    out: *mut *mut WaitwiseCondvar,
    policy: waitwise_policy_t,
) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe {
            store_new(out, || {
                Ok(WaitwiseCondvar(Condvar::with_options(policy.options()?)))
            })
        }
    })
}

/// Unlocks `mutex`, waits for a notify or `deadline`, re-locks `mutex`.
fn wait_until(
    condvar: *mut WaitwiseCondvar,
    mutex: *mut WaitwiseMutex,
    deadline: Deadline,
) -> Status {
    // SAFETY: the callers pass their caller's handles, under the same
    // contract.
    let (condvar, mutex) = unsafe { (object(condvar)?, object(mutex)?) };
    // ManuallyDrop: the C caller keeps the lock after the call, also if the
    // wait panicked (the guard re-locks before any unwinding leaves it).
    let mut guard = ManuallyDrop::new(held_guard(mutex)?);
    if condvar.0.wait_deadline(&mut guard, deadline).timed_out() {
        Err(Error::TimedOut)
    } else {
        Ok(WAITWISE_OK)
    }
}

/// Atomically unlocks `mutex` and waits for a signal; re-locks `mutex`
/// before returning, whatever the result. `WAITWISE_EPERM` (without
/// waiting) if the calling thread does not hold `mutex`.
///
/// # Safety
///
/// `condvar` and `mutex` are each NULL or a live object.
#[no_mangle]
pub unsafe extern "C" fn waitwise_condvar_wait(
    condvar: *mut WaitwiseCondvar,
    mutex: *mut WaitwiseMutex,
) -> c_int {
    boundary(|| wait_until(condvar, mutex, Deadline::NEVER))
}

/// Like `waitwise_condvar_wait`, but gives up after `timeout_ns`:
/// `WAITWISE_ETIMEDOUT` then (with `mutex` locked again).
///
/// # Safety
///
/// `condvar` and `mutex` are each NULL or a live object.
#[no_mangle]
pub unsafe extern "C" fn waitwise_condvar_timedwait_ns(
    condvar: *mut WaitwiseCondvar,
    mutex: *mut WaitwiseMutex,
    timeout_ns: u64,
) -> c_int {
    boundary(|| {
        wait_until(
            condvar,
            mutex,
            Deadline::after(timeout::from_ns(timeout_ns)),
        )
    })
}

/// Wakes one waiting thread (maybe more). Holding the mutex is allowed,
/// not required.
///
/// # Safety
///
/// `condvar` is NULL or a live condition variable.
#[no_mangle]
pub unsafe extern "C" fn waitwise_condvar_signal(condvar: *mut WaitwiseCondvar) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { object(condvar) }?.0.notify_one();
        Ok(WAITWISE_OK)
    })
}

/// Wakes every waiting thread.
///
/// # Safety
///
/// `condvar` is NULL or a live condition variable.
#[no_mangle]
pub unsafe extern "C" fn waitwise_condvar_broadcast(condvar: *mut WaitwiseCondvar) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { object(condvar) }?.0.notify_all();
        Ok(WAITWISE_OK)
    })
}

/// Frees the condition variable.
///
/// # Safety
///
/// `condvar` is NULL or a live condition variable that no thread uses (or
/// waits on) now or later.
#[no_mangle]
pub unsafe extern "C" fn waitwise_condvar_destroy(condvar: *mut WaitwiseCondvar) -> c_int {
    // SAFETY: forwarded contract.
    boundary(|| unsafe { destroy(condvar) })
}
