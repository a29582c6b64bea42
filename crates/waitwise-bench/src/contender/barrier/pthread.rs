//! `pthread_barrier_wait` through libc (glibc's NPTL barrier, the seeds'
//! *pthreads* row).

use super::BarrierContender;
use std::cell::UnsafeCell;

/// A `pthread_barrier_t` with default attributes.
pub struct PthreadBarrier {
    // Boxed: a pthread barrier must not move after init.
    inner: Box<UnsafeCell<libc::pthread_barrier_t>>,
}

// SAFETY: pthread barriers are made to be waited on from many threads at
// once; the cell only hands its address to pthread functions.
unsafe impl Send for PthreadBarrier {}
// SAFETY: as above.
unsafe impl Sync for PthreadBarrier {}

impl PthreadBarrier {
    /// For `n` threads (`0` acts as 1: pthread rejects a count of 0).
    pub fn new(n: usize) -> Self {
        // SAFETY: an all-zero pthread_barrier_t is valid storage for init.
        let inner = Box::new(UnsafeCell::new(unsafe { std::mem::zeroed() }));
        let count = u32::try_from(n.max(1)).unwrap_or(u32::MAX);
        // SAFETY: the storage is boxed (its address never changes) and not
        // yet shared; a null attribute pointer asks for the defaults.
        let rc = unsafe { libc::pthread_barrier_init(inner.get(), std::ptr::null(), count) };
        assert_eq!(rc, 0, "pthread_barrier_init failed: {rc}");
        Self { inner }
    }
}

impl BarrierContender for PthreadBarrier {
    fn wait(&self, _thread_index: usize) -> bool {
        // SAFETY: initialized in `new`, alive while `self` is borrowed.
        let rc = unsafe { libc::pthread_barrier_wait(self.inner.get()) };
        debug_assert!(
            rc == 0 || rc == libc::PTHREAD_BARRIER_SERIAL_THREAD,
            "pthread_barrier_wait: {rc}"
        );
        rc == libc::PTHREAD_BARRIER_SERIAL_THREAD
    }
}

impl Drop for PthreadBarrier {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`; no thread waits any more (we own it).
        unsafe { libc::pthread_barrier_destroy(self.inner.get()) };
    }
}
