//! One futex API (Linux private futexes), the only place that makes the
//! `futex(2)` system call.
//!
//! [`Futex`] is a 32-bit word plus the operations the kernel offers on it:
//!
//! - [`Futex::wait`]: sleep while the word equals `expected`, optionally until a
//!   timeout. `EINTR` is retried inside (against an absolute deadline, so a
//!   signal storm cannot stretch the timeout); `EAGAIN` (the word no longer
//!   equals `expected`) and `ETIMEDOUT` are mapped to [`FutexWait`] values.
//! - [`Futex::wait_interruptible`]: the same, but a signal handler that
//!   interrupts the sleep ends it ([`Interrupted`]), for callers that must
//!   report `EINTR` as POSIX says (the interposer's `sem_wait`).
//! - [`Futex::wake`] / [`Futex::wake_all`]: wake one / every sleeper.
//! - [`wait_bitset`] / [`wake_bitset`]: the same on a word given by its
//!   address, for sleepers that wait for different events on one word (a
//!   reader-writer lock's readers and writers): a wake reaches only the
//!   sleepers whose bit set shares a bit with its own.
//!
//! Every wake and every kernel wake-up feeds [`crate::wake_latency`], which
//! learns the cost of a sleep/wake cycle from the program's own wake-ups.
//!
//! Under `--cfg loom` the word is a loom atomic and sleeping is a loom
//! `Mutex` + `Condvar`, which gives exactly the futex guarantee that matters
//! for correctness: a waiter that checked the word before a change and a waker
//! that wakes after the change cannot miss each other.

use crate::shim::AtomicU32;
use std::time::Duration;

/// Why [`Futex::wait`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FutexWait {
    /// Woken by a wake call, or spuriously: the caller must re-check the word.
    Woken,
    /// The word did not equal `expected` when the kernel looked (`EAGAIN`).
    ValueChanged,
    /// The timeout passed (`ETIMEDOUT`).
    TimedOut,
}

/// A [`Futex::wait_interruptible`] that a signal handler ended (`EINTR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted;

/// What a signal handler that interrupts a [`Futex::wait_cancellable`]
/// does to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnSignal {
    /// Sleep again (against the same deadline), as [`Futex::wait`].
    Retry,
    /// End the wait with [`Interrupted`], as [`Futex::wait_interruptible`].
    Return,
}

/// Whether one futex sleep is a cancellation point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(loom, allow(dead_code))]
enum Cancellable {
    No,
    Yes,
}

/// The system calls a sleeper may be unwound out of, declared `C-unwind`
/// so that no caller is compiled as if they could not unwind (a signal
/// handler that calls `pthread_exit`, or a cancellation, ends a sleeping
/// thread with a forced unwind that starts in the kernel's signal frame).
#[cfg(not(loom))]
mod sys {
    use super::Cancellable;
    use std::ffi::{c_int, c_long};

    /// glibc's `PTHREAD_CANCEL_DEFERRED` (the libc crate lacks it).
    const PTHREAD_CANCEL_DEFERRED: c_int = 0;
    /// glibc's `PTHREAD_CANCEL_ASYNCHRONOUS`.
    const PTHREAD_CANCEL_ASYNCHRONOUS: c_int = 1;

    extern "C-unwind" {
        fn syscall(num: c_long, ...) -> c_long;
        fn pthread_setcanceltype(kind: c_int, old: *mut c_int) -> c_int;
    }

    /// `FUTEX_WAIT_BITSET` with `bitset` on the private futex at `word`
    /// while it equals `expected`, until the absolute `CLOCK_MONOTONIC`
    /// time `*deadline` (null: no limit); the raw result (0, or -1 with
    /// `errno`).
    ///
    /// A cancellable sleep runs with asynchronous cancellation enabled for
    /// the system call alone, the way glibc makes its own blocking calls
    /// cancellation points: `pthread_setcanceltype` acts at once on a
    /// request already pending, and one that arrives during the sleep
    /// interrupts it. This function holds no value with a destructor, so it
    /// has no landing pads: an asynchronous unwind that starts at any of
    /// its instructions passes through it (Rust's personality would abort
    /// one that lands between the call sites of a function with landing
    /// pads).
    ///
    /// # Safety
    ///
    /// `word` is a valid, aligned u32 for the whole call; `deadline` is
    /// null or points at a live timespec.
    #[inline(never)]
    pub unsafe fn futex_wait(
        word: *mut u32,
        expected: u32,
        deadline: *const libc::timespec,
        cancellable: Cancellable,
        bitset: u32,
    ) -> c_long {
        let mut old = PTHREAD_CANCEL_DEFERRED;
        if cancellable == Cancellable::Yes {
            // The once-per-process lookup, before the window opens.
            crate::cancel::prepare();
            // SAFETY: `old` is writable; switching the calling thread's
            // cancellation type has no other precondition.
            unsafe { pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &mut old) };
        }
        // SAFETY: by the caller's contract. With FUTEX_WAIT_BITSET the
        // timeout is an absolute CLOCK_MONOTONIC time.
        let rc = unsafe {
            syscall(
                libc::SYS_futex,
                word,
                libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG,
                expected,
                deadline,
                std::ptr::null::<u32>(),
                bitset,
            )
        };
        if cancellable == Cancellable::Yes {
            // Keep the system call's errno across the type switch.
            // SAFETY: errno's slot is the calling thread's.
            let errno = unsafe { *libc::__errno_location() };
            // SAFETY: restoring the type saved above.
            unsafe { pthread_setcanceltype(old, std::ptr::null_mut()) };
            if old == PTHREAD_CANCEL_DEFERRED {
                // A cancel sent while the window was open must land before
                // the thread goes on (glibc's __pthread_disable_asynccancel).
                crate::cancel::finish_asynchronous_window();
            }
            // SAFETY: as above.
            unsafe { *libc::__errno_location() = errno };
        }
        rc
    }
}

/// A futex word. Threads sleep on it with [`Futex::wait`] and are woken by
/// [`Futex::wake`] / [`Futex::wake_all`]; the value itself is an ordinary
/// atomic reached through [`Futex::value`].
#[derive(Debug)]
#[cfg_attr(not(loom), repr(transparent))]
pub struct Futex {
    value: AtomicU32,
    #[cfg(loom)]
    sleep_lock: loom::sync::Mutex<()>,
    #[cfg(loom)]
    sleep_cv: loom::sync::Condvar,
}

impl Futex {
    /// A futex word holding `value`.
    #[cfg(not(loom))]
    pub const fn new(value: u32) -> Self {
        Self {
            value: AtomicU32::new(value),
        }
    }

    /// A futex word holding `value`.
    #[cfg(loom)]
    pub fn new(value: u32) -> Self {
        Self {
            value: AtomicU32::new(value),
            sleep_lock: loom::sync::Mutex::new(()),
            sleep_cv: loom::sync::Condvar::new(),
        }
    }

    /// Views an existing atomic word (e.g. one inside a C library's object)
    /// as a futex.
    #[cfg(not(loom))]
    #[inline(always)]
    pub fn from_atomic(word: &AtomicU32) -> &Futex {
        // SAFETY: without loom, `Futex` is `repr(transparent)` over
        // `AtomicU32`, so the layouts are identical and the lifetime is kept.
        unsafe { &*(word as *const AtomicU32 as *const Futex) }
    }

    /// The word itself.
    #[inline(always)]
    pub fn value(&self) -> &AtomicU32 {
        &self.value
    }

    /// Sleeps while the word equals `expected`, at most `timeout` (`None`:
    /// no limit; a timeout too large to represent is treated as `None`).
    ///
    /// Returns [`FutexWait::Woken`] also for spurious wake-ups: the caller
    /// always re-checks its condition.
    #[cfg(not(loom))]
    pub fn wait(&self, expected: u32, timeout: Option<Duration>) -> FutexWait {
        let deadline = timeout.and_then(monotonic_deadline);
        loop {
            if let Ok(woke) = self.wait_once(expected, deadline.as_ref(), Cancellable::No) {
                return woke;
            }
        }
    }

    /// Like [`Futex::wait`], but a signal handler that interrupts the sleep
    /// ends it with [`Interrupted`] instead of sleeping again. The kernel
    /// decides, as for glibc's semaphores: an untimed wait is restarted
    /// after a handler installed with `SA_RESTART`, a timed one never is.
    #[cfg(not(loom))]
    pub fn wait_interruptible(
        &self,
        expected: u32,
        timeout: Option<Duration>,
    ) -> Result<FutexWait, Interrupted> {
        let deadline = timeout.and_then(monotonic_deadline);
        self.wait_once(expected, deadline.as_ref(), Cancellable::No)
    }

    /// A wait that is a POSIX cancellation point: like [`Futex::wait`]
    /// (`on_signal: Retry`) or [`Futex::wait_interruptible`] (`Return`), but
    /// a deferred cancellation request, pending or arriving while the thread
    /// sleeps, ends the thread there (see [`crate::cancel`]). The forced
    /// unwind passes through the caller's frames, whose guards must undo
    /// what the waiter had registered; a wake-up the sleeper was given just
    /// before the cancellation is consumed, and the caller's guard must pass
    /// it on.
    #[cfg(not(loom))]
    pub fn wait_cancellable(
        &self,
        expected: u32,
        timeout: Option<Duration>,
        on_signal: OnSignal,
    ) -> Result<FutexWait, Interrupted> {
        let deadline = timeout.and_then(monotonic_deadline);
        loop {
            match self.wait_once(expected, deadline.as_ref(), Cancellable::Yes) {
                Err(Interrupted) if on_signal == OnSignal::Retry => {}
                r => return r,
            }
        }
    }

    /// One sleep until the absolute `CLOCK_MONOTONIC` time `deadline`
    /// (`None`: no limit), woken by any wake.
    #[cfg(not(loom))]
    fn wait_once(
        &self,
        expected: u32,
        deadline: Option<&libc::timespec>,
        cancellable: Cancellable,
    ) -> Result<FutexWait, Interrupted> {
        // SAFETY: `self.value` is a valid, aligned u32 for the whole call.
        unsafe {
            wait_once_at(
                self.value.as_ptr(),
                expected,
                deadline,
                cancellable,
                libc::FUTEX_BITSET_MATCH_ANY as u32,
            )
        }
    }

    /// Loom model of `wait`: sleeps on a condition variable while the word
    /// equals `expected`. A timed wait may time out at once (any timeout is a
    /// legal interleaving), which lets loom explore the timeout paths.
    #[cfg(loom)]
    pub fn wait(&self, expected: u32, timeout: Option<Duration>) -> FutexWait {
        use crate::shim::Ordering;
        let guard = self.sleep_lock.lock().unwrap();
        if self.value.load(Ordering::SeqCst) != expected {
            return FutexWait::ValueChanged;
        }
        if timeout.is_some() {
            return FutexWait::TimedOut;
        }
        drop(self.sleep_cv.wait(guard).unwrap());
        FutexWait::Woken
    }

    /// Loom model of `wait_cancellable`: no signals or cancellation under
    /// loom.
    #[cfg(loom)]
    pub fn wait_cancellable(
        &self,
        expected: u32,
        timeout: Option<Duration>,
        _on_signal: OnSignal,
    ) -> Result<FutexWait, Interrupted> {
        Ok(self.wait(expected, timeout))
    }

    /// Loom model of `wait_interruptible`: no signals under loom.
    #[cfg(loom)]
    pub fn wait_interruptible(
        &self,
        expected: u32,
        timeout: Option<Duration>,
    ) -> Result<FutexWait, Interrupted> {
        Ok(self.wait(expected, timeout))
    }

    /// Wakes at most `count` threads sleeping on this word; returns how many
    /// were woken.
    #[cfg(not(loom))]
    pub fn wake(&self, count: u32) -> usize {
        wake_address(self.value.as_ptr(), count)
    }

    /// Loom model of `wake`: wakes one sleeper for `count == 1` (so a lost
    /// single wake-up is a deadlock loom can find), every sleeper otherwise
    /// (waking more than `count` is only a spurious wake-up: sleepers
    /// re-check the word).
    #[cfg(loom)]
    pub fn wake(&self, count: u32) -> usize {
        let _guard = self.sleep_lock.lock().unwrap();
        if count == 1 {
            self.sleep_cv.notify_one();
        } else {
            self.sleep_cv.notify_all();
        }
        0
    }

    /// Wakes one sleeper; returns whether one was woken.
    #[inline]
    pub fn wake_one(&self) -> bool {
        self.wake(1) > 0
    }

    /// Wakes every sleeper; returns how many were woken.
    #[inline]
    pub fn wake_all(&self) -> usize {
        self.wake(u32::MAX)
    }
}

/// Wakes at most `count` threads sleeping on the private futex at `word`;
/// returns how many were woken.
///
/// The word need not be live memory any more: a waker whose change to the
/// word let a waiter go may find the object freed by then (the waiter
/// destroyed it), and only the address reaches the kernel, which finds no
/// sleeper there. Objects whose waker must not read the word after its
/// change (a semaphore's post, the last waiter leaving a condvar that is
/// being destroyed) wake through this.
#[cfg(not(loom))]
// The pointer is never dereferenced in user space: only the kernel sees
// the address, and it reads nothing there for a wake.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn wake_address(word: *const u32, count: u32) -> usize {
    let count = i32::try_from(count).unwrap_or(i32::MAX);
    crate::wake_latency::waking(word);
    // SAFETY: FUTEX_WAKE reads no user memory: the kernel only hashes the
    // address (a private futex) and wakes the sleepers queued on it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            count,
        )
    };
    debug_assert!(rc >= 0, "futex wake failed: errno {}", errno());
    usize::try_from(rc).unwrap_or(0)
}

/// One `FUTEX_WAIT_BITSET` with `bitset` on the private futex at `word`
/// until the absolute `CLOCK_MONOTONIC` time `deadline` (`None`: no
/// limit), with `errno` mapped to [`FutexWait`] or [`Interrupted`].
///
/// # Safety
///
/// `word` is a valid, aligned u32 for the whole call.
#[cfg(not(loom))]
unsafe fn wait_once_at(
    word: *mut u32,
    expected: u32,
    deadline: Option<&libc::timespec>,
    cancellable: Cancellable,
    bitset: u32,
) -> Result<FutexWait, Interrupted> {
    let ts_ptr = deadline.map_or(std::ptr::null(), |ts| ts as *const libc::timespec);
    let since = crate::wake_latency::falling_asleep();
    // SAFETY: `word` by the caller's contract; `ts_ptr` is null or points
    // at a live timespec.
    let rc = unsafe { sys::futex_wait(word, expected, ts_ptr, cancellable, bitset) };
    if rc == 0 {
        crate::wake_latency::woken(word, since);
        return Ok(FutexWait::Woken);
    }
    match errno() {
        libc::EINTR => Err(Interrupted),
        libc::EAGAIN => Ok(FutexWait::ValueChanged),
        libc::ETIMEDOUT => Ok(FutexWait::TimedOut),
        other => {
            // EFAULT/EINVAL/ENOSYS would be a bug in this module or its
            // caller: the address is live and the arguments are fixed.
            debug_assert!(false, "futex wait failed: errno {other}");
            Ok(FutexWait::Woken)
        }
    }
}

/// Sleeps on the private futex at `word` while it equals `expected`, at
/// most `timeout` (`None`: no limit), until a [`wake_bitset`] whose bit set
/// shares a bit with `bitset` wakes it. One sleep, as
/// [`Futex::wait_interruptible`]: a signal handler that interrupts it ends
/// it with [`Interrupted`], and [`FutexWait::Woken`] may be spurious, so
/// the caller re-checks its condition. Not a cancellation point.
///
/// For objects whose sleepers wait for different events on one word, and
/// whose word is not a [`Futex`] (the low half of a 64-bit state word): a
/// wake for one set leaves the other sets' sleepers asleep. `bitset` is not
/// 0 (the kernel refuses an empty set). The call holds no value with a
/// destructor, and the system call is declared `C-unwind`: a forced unwind
/// may start in it.
///
/// # Safety
///
/// `word` points at a valid, 4-aligned u32 that stays live for the whole
/// call; the kernel reads it, nothing else does here.
#[cfg(not(loom))]
pub unsafe fn wait_bitset(
    word: *const u32,
    expected: u32,
    timeout: Option<Duration>,
    bitset: u32,
) -> Result<FutexWait, Interrupted> {
    debug_assert!(bitset != 0, "an empty futex bit set");
    let deadline = timeout.and_then(monotonic_deadline);
    // SAFETY: by the caller's contract; the kernel only reads the word.
    unsafe {
        wait_once_at(
            word.cast_mut(),
            expected,
            deadline.as_ref(),
            Cancellable::No,
            bitset,
        )
    }
}

/// Wakes at most `count` threads sleeping on the private futex at `word`
/// whose bit set ([`wait_bitset`]) shares a bit with `bitset`; returns how
/// many were woken. `bitset` is not 0. As [`wake_address`], the word need
/// not be live memory any more.
#[cfg(not(loom))]
// The pointer is never dereferenced in user space: only the kernel sees
// the address, and it reads nothing there for a wake.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn wake_bitset(word: *const u32, count: u32, bitset: u32) -> usize {
    debug_assert!(bitset != 0, "an empty futex bit set");
    let count = i32::try_from(count).unwrap_or(i32::MAX);
    crate::wake_latency::waking(word);
    // SAFETY: FUTEX_WAKE_BITSET reads no user memory: the kernel only
    // hashes the address (a private futex) and wakes the sleepers queued
    // on it whose set shares a bit with `bitset`.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAKE_BITSET | libc::FUTEX_PRIVATE_FLAG,
            count,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            bitset,
        )
    };
    debug_assert!(rc >= 0, "futex wake failed: errno {}", errno());
    usize::try_from(rc).unwrap_or(0)
}

/// The calling thread's `errno`, read in place: an `io::Error` would be a
/// value with a destructor, whose landing pad in a wait's frame makes a
/// forced unwind that a signal handler starts there abort.
#[cfg(not(loom))]
#[inline(always)]
fn errno() -> i32 {
    // SAFETY: errno's slot is the calling thread's, always valid.
    unsafe { *libc::__errno_location() }
}

/// `now(CLOCK_MONOTONIC) + timeout`, or `None` when that overflows (wait
/// forever: a timeout of centuries is no timeout).
#[cfg(not(loom))]
fn monotonic_deadline(timeout: Duration) -> Option<libc::timespec> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let secs = libc::time_t::try_from(timeout.as_secs()).ok()?;
    let mut tv_sec = now.tv_sec.checked_add(secs)?;
    let mut tv_nsec = now.tv_nsec + timeout.subsec_nanos() as libc::c_long;
    if tv_nsec >= 1_000_000_000 {
        tv_nsec -= 1_000_000_000;
        tv_sec = tv_sec.checked_add(1)?;
    }
    Some(libc::timespec { tv_sec, tv_nsec })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::shim::Ordering;
    use std::os::unix::thread::JoinHandleExt;
    use std::sync::Arc;
    use std::time::Instant;

    extern "C" fn ignore_signal(_: libc::c_int) {}

    /// Runs `wait` on a new thread while this one sends it SIGUSR2 (a
    /// handler without `SA_RESTART` installed) every millisecond, until it
    /// returns.
    fn wait_under_signals<T: Send + 'static>(wait: impl FnOnce() -> T + Send + 'static) -> T {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask
        // is a valid argument; the handler does nothing, so it is
        // async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = ignore_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut()), 0);
        }
        let t = std::thread::spawn(wait);
        while !t.is_finished() {
            // SAFETY: the thread is alive (not finished, and not joined yet),
            // so its pthread_t is valid.
            unsafe { libc::pthread_kill(t.as_pthread_t(), libc::SIGUSR2) };
            std::thread::sleep(Duration::from_millis(1));
        }
        t.join().unwrap()
    }

    #[test]
    fn signals_end_only_an_interruptible_wait() {
        let f = Arc::new(Futex::new(0));
        let f2 = f.clone();
        let out =
            wait_under_signals(move || f2.wait_interruptible(0, Some(Duration::from_secs(3600))));
        assert_eq!(out, Err(Interrupted));
        let out = wait_under_signals(move || f.wait(0, Some(Duration::from_millis(30))));
        assert_eq!(out, FutexWait::TimedOut);
    }

    #[test]
    fn wait_on_changed_value_returns_at_once() {
        let f = Futex::new(1);
        assert_eq!(f.wait(0, None), FutexWait::ValueChanged);
    }

    #[test]
    fn wait_times_out() {
        let f = Futex::new(0);
        let start = Instant::now();
        assert_eq!(
            f.wait(0, Some(Duration::from_millis(20))),
            FutexWait::TimedOut
        );
        assert!(start.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn zero_and_huge_timeouts() {
        let f = Futex::new(0);
        assert_eq!(f.wait(0, Some(Duration::ZERO)), FutexWait::TimedOut);
        // Duration::MAX must not overflow: it means "no limit". Prove it by
        // waking the sleeper from another thread.
        let f = Arc::new(Futex::new(0));
        let f2 = f.clone();
        let t = std::thread::spawn(move || {
            while f2.value().load(Ordering::SeqCst) == 0 {
                f2.wait(0, Some(Duration::MAX));
            }
        });
        std::thread::sleep(Duration::from_millis(10));
        f.value().store(1, Ordering::SeqCst);
        f.wake_all();
        t.join().unwrap();
    }

    #[test]
    fn wake_without_sleepers_wakes_nobody() {
        let f = Futex::new(0);
        assert_eq!(f.wake(1), 0);
        assert!(!f.wake_one());
        assert_eq!(f.wake_all(), 0);
    }

    #[test]
    fn wake_releases_a_sleeper() {
        let f = Arc::new(Futex::new(0));
        let f2 = f.clone();
        let t = std::thread::spawn(move || {
            while f2.value().load(Ordering::SeqCst) == 0 {
                f2.wait(0, None);
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        f.value().store(1, Ordering::SeqCst);
        f.wake_one();
        t.join().unwrap();
    }

    /// A wake for one bit set leaves the sleepers of another asleep, and
    /// wakes those of its own.
    #[test]
    fn a_bitset_wake_reaches_only_its_own_set() {
        const READERS: u32 = 1;
        const WRITERS: u32 = 2;
        let f = Arc::new(Futex::new(0));
        let sleeper = |bitset: u32| {
            let f = f.clone();
            std::thread::spawn(move || {
                while f.value().load(Ordering::SeqCst) & bitset == 0 {
                    // SAFETY: the word lives in `f`, which this thread holds.
                    let _ = unsafe { wait_bitset(f.value().as_ptr(), 0, None, bitset) };
                }
            })
        };
        let (reader, writer) = (sleeper(READERS), sleeper(WRITERS));
        std::thread::sleep(Duration::from_millis(20));
        // A writers' wake with the word still 0: the reader sleeps on.
        f.value().store(0, Ordering::SeqCst);
        wake_bitset(f.value().as_ptr(), u32::MAX, WRITERS);
        std::thread::sleep(Duration::from_millis(20));
        assert!(!reader.is_finished());
        f.value().store(READERS | WRITERS, Ordering::SeqCst);
        wake_bitset(f.value().as_ptr(), u32::MAX, READERS);
        wake_bitset(f.value().as_ptr(), 1, WRITERS);
        reader.join().unwrap();
        writer.join().unwrap();
    }

    #[test]
    fn a_bitset_wait_times_out_and_sees_a_changed_word() {
        let f = Futex::new(1);
        // SAFETY: `f` lives across both calls.
        unsafe {
            assert_eq!(
                wait_bitset(f.value().as_ptr(), 0, None, 1),
                Ok(FutexWait::ValueChanged)
            );
            assert_eq!(
                wait_bitset(f.value().as_ptr(), 1, Some(Duration::from_millis(5)), 1),
                Ok(FutexWait::TimedOut)
            );
        }
    }

    /// Real futex wake-ups between two threads teach the wake-up latency
    /// ([`crate::wake_latency`]): a woken sleep is a sample, and after its
    /// minimum of samples there is an estimate below the sample cap. On a
    /// busy machine a round may give no sample (the sleeper ran late and
    /// never slept, or its wake-up took longer than the cap), so the
    /// rounds go on until the estimate is there, up to a bound that only a
    /// machine that never wakes a sleeper within the cap would reach.
    #[test]
    fn wake_ups_teach_the_wake_latency() {
        use crate::wake_latency::{estimate, MAX_SAMPLE_NS, MIN_SAMPLES};
        let f = Arc::new(Futex::new(0));
        for round in 1..=(64 * MIN_SAMPLES as u32) {
            if estimate().is_some_and(|l| l.samples >= MIN_SAMPLES) {
                break;
            }
            let f2 = f.clone();
            let sleeper = std::thread::spawn(move || {
                while f2.value().load(Ordering::Acquire) != round {
                    f2.wait(round - 1, None);
                }
            });
            std::thread::sleep(Duration::from_millis(1));
            f.value().store(round, Ordering::Release);
            f.wake(1);
            sleeper.join().unwrap();
        }
        let learned = estimate().expect("wake-ups were sampled");
        assert!(learned.samples >= MIN_SAMPLES);
        assert!(learned.ns > 0 && learned.ns <= MAX_SAMPLE_NS);
    }
}
