//! `waitwise_barrier_t`: [`waitwise_core::barrier::Barrier`], a reusable
//! barrier for `n` threads (no timed wait: see the core barrier docs).
//!
//! At most `n` threads may be inside `waitwise_barrier_wait` at once (the
//! core barrier's rule). Unlike a `pthread_barrier_t`, which lets any
//! number of threads take turns, more is a caller error: some of them may
//! be released early.

use crate::error::{boundary, destroy, object, store_new, Error};
use crate::policy::waitwise_policy_t;
use std::ffi::c_int;
use waitwise_core::barrier::Barrier;

/// What `waitwise_barrier_wait` returns to exactly one thread per episode
/// (`-1`, like glibc's `PTHREAD_BARRIER_SERIAL_THREAD`: it cannot be
/// mistaken for a `WAITWISE_E*` code, which are all positive).
pub const WAITWISE_BARRIER_SERIAL_THREAD: c_int = -1;

/// The object behind `waitwise_barrier_t *`.
#[derive(Debug)]
pub struct WaitwiseBarrier(Barrier);

/// Creates a barrier for `n` threads with the default policy in `*out`.
/// `WAITWISE_EINVAL` if `n == 0`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_barrier_new(out: *mut *mut WaitwiseBarrier, n: u32) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { waitwise_barrier_new_with_policy(out, n, crate::policy::waitwise_policy_default()) }
}

/// Creates a barrier for `n` threads waiting with `policy` in `*out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_barrier_new_with_policy(
    out: *mut *mut WaitwiseBarrier,
    n: u32,
    policy: waitwise_policy_t,
) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe {
            store_new(out, || {
                if n == 0 {
                    return Err(Error::Invalid);
                }
                let options = policy.options()?;
                Ok(WaitwiseBarrier(Barrier::with_options(n as usize, options)))
            })
        }
    })
}

/// Waits until `n` threads have arrived in this episode. Returns
/// `WAITWISE_BARRIER_SERIAL_THREAD` to exactly one of them, `0` to the
/// others, and a positive `WAITWISE_E*` code on error. At most `n` threads
/// may wait at once (module doc).
///
/// # Safety
///
/// `barrier` is NULL or a live barrier.
#[no_mangle]
pub unsafe extern "C" fn waitwise_barrier_wait(barrier: *mut WaitwiseBarrier) -> c_int {
    boundary(|| {
        // SAFETY: forwarded contract.
        let leader = unsafe { object(barrier) }?.0.wait().is_leader();
        Ok(if leader {
            WAITWISE_BARRIER_SERIAL_THREAD
        } else {
            0
        })
    })
}

/// Frees the barrier.
///
/// # Safety
///
/// `barrier` is NULL or a live barrier that no thread uses (or waits in)
/// now or later.
#[no_mangle]
pub unsafe extern "C" fn waitwise_barrier_destroy(barrier: *mut WaitwiseBarrier) -> c_int {
    // SAFETY: forwarded contract.
    boundary(|| unsafe { destroy(barrier) })
}
