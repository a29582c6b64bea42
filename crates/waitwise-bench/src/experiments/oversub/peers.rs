//! The pthread peers of the oversubscription loops, through libc: a
//! counting semaphore on `pthread_mutex_t` + `pthread_cond_t` (the
//! producer-consumer link) and a plain `pthread_mutex_t`. The barrier peer
//! is [`crate::contender::barrier::pthread`].

use std::cell::UnsafeCell;

/// A counting semaphore: a count under a pthread mutex, waited for on a
/// pthread condvar (`pthread_cond_wait`/`pthread_cond_signal`).
pub struct PthreadSemaphore {
    // Boxed: pthread objects must not move after first use.
    inner: Box<SemInner>,
}

struct SemInner {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    cond: UnsafeCell<libc::pthread_cond_t>,
    count: UnsafeCell<u64>,
}

// SAFETY: the pthread objects are made for use from many threads, and
// `count` is only touched with `mutex` held.
unsafe impl Send for PthreadSemaphore {}
// SAFETY: as above.
unsafe impl Sync for PthreadSemaphore {}

impl PthreadSemaphore {
    /// No permits, default attributes.
    pub fn new() -> Self {
        Self {
            inner: Box::new(SemInner {
                mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
                cond: UnsafeCell::new(libc::PTHREAD_COND_INITIALIZER),
                count: UnsafeCell::new(0),
            }),
        }
    }

    /// Takes one permit, waiting on the condvar while there is none.
    pub fn acquire(&self) {
        let i = &*self.inner;
        // SAFETY: statically initialized objects in a Box that outlives the
        // call; `count` is read and written only between lock and unlock.
        unsafe {
            libc::pthread_mutex_lock(i.mutex.get());
            while *i.count.get() == 0 {
                libc::pthread_cond_wait(i.cond.get(), i.mutex.get());
            }
            *i.count.get() -= 1;
            libc::pthread_mutex_unlock(i.mutex.get());
        }
    }

    /// Adds one permit and signals one waiter.
    pub fn release(&self) {
        let i = &*self.inner;
        // SAFETY: as in `acquire`.
        unsafe {
            libc::pthread_mutex_lock(i.mutex.get());
            *i.count.get() += 1;
            libc::pthread_cond_signal(i.cond.get());
            libc::pthread_mutex_unlock(i.mutex.get());
        }
    }
}

impl Default for PthreadSemaphore {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PthreadSemaphore {
    fn drop(&mut self) {
        // SAFETY: no thread uses the objects any more (we own them).
        unsafe {
            libc::pthread_cond_destroy(self.inner.cond.get());
            libc::pthread_mutex_destroy(self.inner.mutex.get());
        }
    }
}

/// A default (`PTHREAD_MUTEX_NORMAL`, non-spinning) pthread mutex.
pub struct PthreadMutex {
    // Boxed: a pthread mutex must not move after first use.
    inner: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made for use from many threads.
unsafe impl Send for PthreadMutex {}
// SAFETY: as above.
unsafe impl Sync for PthreadMutex {}

impl PthreadMutex {
    /// Unlocked, default attributes.
    pub fn new() -> Self {
        Self {
            inner: Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER)),
        }
    }

    /// Runs `f` with the mutex held.
    pub fn with_lock<R>(&self, f: impl FnOnce() -> R) -> R {
        // SAFETY: statically initialized, boxed, alive while `self` is.
        unsafe { libc::pthread_mutex_lock(self.inner.get()) };
        let r = f();
        // SAFETY: locked just above by this thread.
        unsafe { libc::pthread_mutex_unlock(self.inner.get()) };
        r
    }
}

impl Default for PthreadMutex {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: unlocked and unused (we own it).
        unsafe { libc::pthread_mutex_destroy(self.inner.get()) };
    }
}
