//! [`Condvar`]: parking_lot's condition variable, on waitwise's
//! [`Condvar`](waitwise::Condvar), for [`MutexGuard`]s.

use crate::mutex::MutexGuard;
use crate::timeout;
use std::fmt;
use std::ops::DerefMut;
use std::time::{Duration, Instant};
use waitwise::Deadline;

/// Whether a timed wait on a [`Condvar`] ended because its timeout passed.
#[derive(Debug, PartialEq, Eq, Copy, Clone)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// Whether the wait timed out.
    #[inline]
    pub fn timed_out(self) -> bool {
        self.0
    }
}

/// A condition variable for [`Mutex`](crate::Mutex)es: parking_lot's
/// `Condvar`, on waitwise's [`Condvar`](waitwise::Condvar) (waiters poll
/// briefly, then sleep on a sequence word; a notify with nobody waiting
/// costs one load).
///
/// As parking_lot's: waits may wake spuriously, `notify_one` returns
/// whether a thread was waiting and `notify_all` how many, and waiting
/// with two mutexes at once panics.
///
/// # Examples
/// ```
/// use parking_lot::{Condvar, Mutex};
///
/// let (m, cv) = (Mutex::new(false), Condvar::new());
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         *m.lock() = true;
///         cv.notify_one();
///     });
///     let mut ready = m.lock();
///     cv.wait_while(&mut ready, |ready| !*ready);
///     assert!(*ready);
/// });
/// ```
pub struct Condvar(waitwise::Condvar);

impl Condvar {
    /// A condition variable with nobody waiting.
    #[inline]
    pub const fn new() -> Condvar {
        Condvar(waitwise::Condvar::new())
    }

    /// Wakes one waiting thread; returns whether a thread was waiting.
    #[inline]
    pub fn notify_one(&self) -> bool {
        self.0.notify_one()
    }

    /// Wakes every waiting thread; returns how many were waiting.
    #[inline]
    pub fn notify_all(&self) -> usize {
        self.0.notify_all()
    }

    /// Unlocks the guard's mutex, waits for a notify, and locks it again.
    #[inline]
    pub fn wait<T: ?Sized>(&self, mutex_guard: &mut MutexGuard<'_, T>) {
        self.wait_until_internal(mutex_guard, Deadline::NEVER);
    }

    /// As [`Condvar::wait`], giving up at `timeout`.
    #[inline]
    pub fn wait_until<T: ?Sized>(
        &self,
        mutex_guard: &mut MutexGuard<'_, T>,
        timeout: Instant,
    ) -> WaitTimeoutResult {
        self.wait_until_internal(mutex_guard, timeout::at(timeout))
    }

    /// As [`Condvar::wait`], giving up after `timeout`.
    #[inline]
    pub fn wait_for<T: ?Sized>(
        &self,
        mutex_guard: &mut MutexGuard<'_, T>,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        self.wait_until_internal(mutex_guard, timeout::after(timeout))
    }

    /// Waits while `condition` holds for the protected data.
    #[inline]
    pub fn wait_while<T, F>(&self, mutex_guard: &mut MutexGuard<'_, T>, condition: F)
    where
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        self.wait_while_until_internal(mutex_guard, condition, Deadline::NEVER);
    }

    /// Waits while `condition` holds, giving up at `timeout` (with the
    /// condition not checked again after the wait that timed out, as
    /// parking_lot).
    #[inline]
    pub fn wait_while_until<T, F>(
        &self,
        mutex_guard: &mut MutexGuard<'_, T>,
        condition: F,
        timeout: Instant,
    ) -> WaitTimeoutResult
    where
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        self.wait_while_until_internal(mutex_guard, condition, timeout::at(timeout))
    }

    /// Waits while `condition` holds, giving up after `timeout`.
    #[inline]
    pub fn wait_while_for<T: ?Sized, F>(
        &self,
        mutex_guard: &mut MutexGuard<'_, T>,
        condition: F,
        timeout: Duration,
    ) -> WaitTimeoutResult
    where
        F: FnMut(&mut T) -> bool,
    {
        self.wait_while_until_internal(mutex_guard, condition, timeout::after(timeout))
    }

    fn wait_until_internal<T: ?Sized>(
        &self,
        mutex_guard: &mut MutexGuard<'_, T>,
        deadline: Deadline,
    ) -> WaitTimeoutResult {
        let mutex = (MutexGuard::mutex(mutex_guard) as *const crate::Mutex<T>)
            .cast::<()>()
            .addr();
        let out = self.0.wait_with_unlock(mutex, deadline, |wait| {
            MutexGuard::unlocked(mutex_guard, wait);
        });
        WaitTimeoutResult(out.timed_out())
    }

    fn wait_while_until_internal<T, F>(
        &self,
        mutex_guard: &mut MutexGuard<'_, T>,
        mut condition: F,
        deadline: Deadline,
    ) -> WaitTimeoutResult
    where
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        let mut result = WaitTimeoutResult(false);
        while !result.timed_out() && condition(mutex_guard.deref_mut()) {
            result = self.wait_until_internal(mutex_guard, deadline);
        }
        result
    }
}

impl Default for Condvar {
    #[inline]
    fn default() -> Condvar {
        Condvar::new()
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Condvar { .. }")
    }
}
