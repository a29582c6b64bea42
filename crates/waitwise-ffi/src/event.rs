//! `waitwise_event_t`: [`waitwise_core::Event`], an auto-reset event (a
//! notify releases one waiter, and is kept if nobody waits yet).

use crate::error::{boundary, destroy, object, store_new, Error, WAITWISE_OK};
use crate::policy::waitwise_policy_t;
use crate::timeout;
use std::ffi::c_int;
use waitwise_core::Event;

/// The object behind `waitwise_event_t *`.
#[derive(Debug)]
pub struct WaitwiseEvent(Event);

/// Creates a non-signalled event with the default policy in `*out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_event_new(out: *mut *mut WaitwiseEvent) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { waitwise_event_new_with_policy(out, crate::policy::waitwise_policy_default()) }
}

/// Creates a non-signalled event waiting with `policy` in `*out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_event_new_with_policy(
    out: *mut *mut WaitwiseEvent,
    policy: waitwise_policy_t,
) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe {
            store_new(out, || {
                Ok(WaitwiseEvent(Event::with_options(policy.options()?)))
            })
        }
    })
}

/// Waits until notified; consumes the notify.
///
/// # Safety
///
/// `event` is NULL or a live event.
#[no_mangle]
pub unsafe extern "C" fn waitwise_event_wait(event: *mut WaitwiseEvent) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { object(event) }?.0.wait();
        Ok(WAITWISE_OK)
    })
}

/// Waits until notified or `timeout_ns` pass: `0` if notified,
/// `WAITWISE_ETIMEDOUT` if not. `0` ns only checks;
/// `WAITWISE_TIMEOUT_INFINITE` never times out.
///
/// # Safety
///
/// `event` is NULL or a live event.
#[no_mangle]
pub unsafe extern "C" fn waitwise_event_wait_timeout_ns(
    event: *mut WaitwiseEvent,
    timeout_ns: u64,
) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        let event = unsafe { object(event) }?;
        if event.0.wait_timeout(timeout::from_ns(timeout_ns)) {
            Ok(WAITWISE_OK)
        } else {
            Err(Error::TimedOut)
        }
    })
}

/// Releases one waiter, or signals the event if none waits.
///
/// # Safety
///
/// `event` is NULL or a live event.
#[no_mangle]
pub unsafe extern "C" fn waitwise_event_notify(event: *mut WaitwiseEvent) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { object(event) }?.0.notify();
        Ok(WAITWISE_OK)
    })
}

/// Releases every thread waiting now (or signals the event if none waits).
///
/// # Safety
///
/// `event` is NULL or a live event.
#[no_mangle]
pub unsafe extern "C" fn waitwise_event_notify_all(event: *mut WaitwiseEvent) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { object(event) }?.0.notify_all();
        Ok(WAITWISE_OK)
    })
}

/// Frees the event.
///
/// # Safety
///
/// `event` is NULL or a live event that no thread uses now or later.
#[no_mangle]
pub unsafe extern "C" fn waitwise_event_destroy(event: *mut WaitwiseEvent) -> c_int {
    // SAFETY: forwarded contract.
    boundary(|| unsafe { destroy(event) })
}
