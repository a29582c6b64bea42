//! `pthread_cond_wait`/`pthread_cond_signal` through libc, the seeds'
//! "pthreads" row.

use super::WaitPair;
use std::cell::UnsafeCell;

/// A flag under a pthread mutex, signalled through a pthread condvar.
pub struct PthreadCondPair {
    // Boxed: pthread objects must not move after first use.
    inner: Box<Inner>,
}

struct Inner {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    cond: UnsafeCell<libc::pthread_cond_t>,
    flag: UnsafeCell<bool>,
}

// SAFETY: the pthread objects are designed for use from many threads, and
// `flag` is only touched with `mutex` held.
unsafe impl Send for PthreadCondPair {}
// SAFETY: as above.
unsafe impl Sync for PthreadCondPair {}

impl PthreadCondPair {
    /// Unsignalled, default attributes.
    pub fn new() -> Self {
        Self {
            inner: Box::new(Inner {
                mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
                cond: UnsafeCell::new(libc::PTHREAD_COND_INITIALIZER),
                flag: UnsafeCell::new(false),
            }),
        }
    }
}

impl Default for PthreadCondPair {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitPair for PthreadCondPair {
    fn wait(&self) {
        let i = &*self.inner;
        // SAFETY: the objects were statically initialized, live in a Box
        // that outlives every call, and `flag` is read/written only between
        // lock and unlock.
        unsafe {
            libc::pthread_mutex_lock(i.mutex.get());
            while !*i.flag.get() {
                libc::pthread_cond_wait(i.cond.get(), i.mutex.get());
            }
            *i.flag.get() = false;
            libc::pthread_mutex_unlock(i.mutex.get());
        }
    }
    fn notify(&self) {
        let i = &*self.inner;
        // SAFETY: as in `wait`.
        unsafe {
            libc::pthread_mutex_lock(i.mutex.get());
            *i.flag.get() = true;
            libc::pthread_cond_signal(i.cond.get());
            libc::pthread_mutex_unlock(i.mutex.get());
        }
    }
}

impl Drop for PthreadCondPair {
    fn drop(&mut self) {
        // SAFETY: no thread uses the objects any more (we own them).
        unsafe {
            libc::pthread_cond_destroy(self.inner.cond.get());
            libc::pthread_mutex_destroy(self.inner.mutex.get());
        }
    }
}
