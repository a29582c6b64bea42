//! `waitwise_semaphore_t`: [`waitwise_core::semaphore::Semaphore`], a
//! counting semaphore (the algorithm of `waitwise_core::semaphore::SemaphoreRef`,
//! as the interposer's `sem_t`), with POSIX `sem_*` return conventions.

use crate::error::{boundary, destroy, object, store_new, Error, WAITWISE_OK};
use crate::policy::waitwise_policy_t;
use crate::timeout;
use std::ffi::c_int;
use waitwise_core::semaphore::Semaphore;

/// The largest value a semaphore holds (`INT_MAX`, like `SEM_VALUE_MAX`,
/// so that `waitwise_semaphore_getvalue` can report it in an `int`).
pub const WAITWISE_SEM_VALUE_MAX: u32 = 2147483647;
const _: () = assert!(WAITWISE_SEM_VALUE_MAX == Semaphore::MAX_PERMITS);

/// The object behind `waitwise_semaphore_t *`.
#[derive(Debug)]
pub struct WaitwiseSemaphore(Semaphore);

/// Creates a semaphore holding `value` permits with the default policy in
/// `*out`. `WAITWISE_EINVAL` if `value > WAITWISE_SEM_VALUE_MAX`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_semaphore_new(
    out: *mut *mut WaitwiseSemaphore,
    value: u32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        waitwise_semaphore_new_with_policy(out, value, crate::policy::waitwise_policy_default())
    }
}

/// Creates a semaphore holding `value` permits waiting with `policy` in
/// `*out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_semaphore_new_with_policy(
    out: *mut *mut WaitwiseSemaphore,
    value: u32,
    policy: waitwise_policy_t,
) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe {
            store_new(out, || {
                if value > WAITWISE_SEM_VALUE_MAX {
                    return Err(Error::Invalid);
                }
                let options = policy.options()?;
                Ok(WaitwiseSemaphore(Semaphore::with_options(value, options)))
            })
        }
    })
}

/// Takes a permit, waiting as long as it takes.
///
/// # Safety
///
/// `semaphore` is NULL or a live semaphore.
#[no_mangle]
pub unsafe extern "C" fn waitwise_semaphore_wait(semaphore: *mut WaitwiseSemaphore) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { object(semaphore) }?.0.acquire();
        Ok(WAITWISE_OK)
    })
}

/// Takes a permit if one is available now: `0`, or `WAITWISE_EAGAIN`.
///
/// # Safety
///
/// `semaphore` is NULL or a live semaphore.
#[no_mangle]
pub unsafe extern "C" fn waitwise_semaphore_trywait(semaphore: *mut WaitwiseSemaphore) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        if unsafe { object(semaphore) }?.0.try_acquire() {
            Ok(WAITWISE_OK)
        } else {
            Err(Error::WouldBlock)
        }
    })
}

/// Takes a permit, waiting at most `timeout_ns`: `0`, or
/// `WAITWISE_ETIMEDOUT`.
///
/// # Safety
///
/// `semaphore` is NULL or a live semaphore.
#[no_mangle]
pub unsafe extern "C" fn waitwise_semaphore_timedwait_ns(
    semaphore: *mut WaitwiseSemaphore,
    timeout_ns: u64,
) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        let semaphore = unsafe { object(semaphore) }?;
        if semaphore.0.acquire_timeout(timeout::from_ns(timeout_ns)) {
            Ok(WAITWISE_OK)
        } else {
            Err(Error::TimedOut)
        }
    })
}

/// Returns one permit, waking a waiter if one sleeps. `WAITWISE_EOVERFLOW`
/// (and nothing changes) if the value is `WAITWISE_SEM_VALUE_MAX` already.
///
/// # Safety
///
/// `semaphore` is NULL or a live semaphore.
#[no_mangle]
pub unsafe extern "C" fn waitwise_semaphore_post(semaphore: *mut WaitwiseSemaphore) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        let semaphore = unsafe { object(semaphore) }?;
        if semaphore.0.release_counted(1) == 0 {
            return Err(Error::Overflow);
        }
        Ok(WAITWISE_OK)
    })
}

/// Stores the number of available permits (a snapshot) in `*value`.
///
/// # Safety
///
/// `semaphore` is NULL or a live semaphore; `value` is NULL or valid for
/// writing one `int`.
#[no_mangle]
pub unsafe extern "C" fn waitwise_semaphore_getvalue(
    semaphore: *mut WaitwiseSemaphore,
    value: *mut c_int,
) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        let semaphore = unsafe { object(semaphore) }?;
        if value.is_null() {
            return Err(Error::Invalid);
        }
        let now = semaphore.0.available();
        // SAFETY: non-NULL and writable by the caller's contract; at most
        // WAITWISE_SEM_VALUE_MAX, so within `int`.
        unsafe { value.write(now as c_int) };
        Ok(WAITWISE_OK)
    })
}

/// Frees the semaphore.
///
/// # Safety
///
/// `semaphore` is NULL or a live semaphore that no thread uses (or waits
/// on) now or later.
#[no_mangle]
pub unsafe extern "C" fn waitwise_semaphore_destroy(semaphore: *mut WaitwiseSemaphore) -> c_int {
    // SAFETY: forwarded contract.
    boundary(|| unsafe { destroy(semaphore) })
}
