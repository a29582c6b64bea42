//! `pthread_mutex_*`: waitwise's TTAS lock
//! ([`waitwise::mutex::TtasLockRef`], the algorithm of `RawTtasMutex`) on
//! the `__lock` word of the caller's `pthread_mutex_t`, with two-phase
//! waiting. What is here is the mapping onto glibc's layout, the mutex
//! kinds and POSIX's error semantics, and how a waiter polls and sleeps
//! ([`PassingOnLockWait`]).
//!
//! The layout of glibc's `pthread_mutex_t` and its kinds are in
//! [`crate::mutex_layout`].
//!
//! # Lock word
//!
//! `__lock` holds the TTAS lock's three states, which are glibc's values
//! (`UNLOCKED` 0, `LOCKED` 1, `CONTENDED` 2); its transitions, the "owes a
//! wake-up" rule and the timed give-up are [`TtasLockRef`]'s (module
//! `waitwise::mutex::ttas`, checked by the loom models in
//! `crates/waitwise/tests/loom_ttas.rs`). Waiters poll with `yield` for
//! the configured `alpha * B` (the engine's polling phase, as
//! `waitwise::Mutex`, including its lost-slice guard: while yields lose
//! whole slices to other processes' busy threads they do not poll), then
//! sleep on the futex.
//!
//! A sleeper that glibc unwinds (its signal handler calls `pthread_exit`,
//! or it is cancelled asynchronously; the lock is not a cancellation point)
//! may have been handed the unlock's wake-up just before: its cleanup
//! routine wakes one more sleeper, so the others are not left asleep on an
//! unlocked word. A normal mutex's unlock also clears `__owner` if glibc's
//! internal re-lock (a forwarded condvar's) set it.
//!
//! # Memory ordering
//!
//! The lock word's orderings are [`TtasLockRef`]'s. `__owner` and
//! `__count` are written only by the holder, inside the critical section,
//! and read by others only to compare against their own id (which they
//! never see unless they hold the lock): Relaxed.
//!
//! `__kind` is Relaxed too: `pthread_mutex_init` (or a static initializer)
//! writes it before the mutex is shared, so whatever shares the mutex
//! orders it before other threads' reads, and it stays fixed until
//! `pthread_mutex_destroy`, after which POSIX allows no use; it guards no
//! other data. `destroy`'s look at `__lock` is Relaxed as well: `EBUSY` is a
//! best-effort diagnostic, since a caller may destroy only a mutex it knows,
//! by its own synchronization (a join, its own lock and unlock), to be
//! unused.

use crate::mutex_layout::{
    words, Words, COUNT, KIND, KIND_ADAPTIVE, KIND_DESTROYED, KIND_ERRORCHECK, KIND_NORMAL,
    KIND_RECURSIVE, LOCK, OWNER,
};
use crate::profile::{self, Kind};
use crate::real::{self, forward};
use crate::time;
use libc::{pthread_mutex_t, pthread_mutexattr_t, timespec, EBUSY, EDEADLK, EINVAL, EPERM};
use std::ffi::c_int;
use std::sync::atomic::Ordering;
use std::time::Duration;
use waitwise::mutex::{LockWait, TtasLockRef};
use waitwise::platform::futex::{Futex, FutexWait};
use waitwise::two_phase_wait::{PolicyWait, TwoPhaseWait};
use waitwise::{Deadline, Mechanism, Policy, SyncKind};

/// The TTAS lock on `__lock`.
#[inline(always)]
fn lock_word(w: &Words) -> TtasLockRef<'_> {
    TtasLockRef::new(Futex::from_atomic(&w[LOCK]))
}

/// Whether `kind` names a mutex waitwise runs (not forwarded or destroyed).
#[inline(always)]
fn is_native(kind: u32) -> bool {
    kind <= KIND_ADAPTIVE
}

/// Whether the mutex attributes ask for something forwarded to glibc:
/// process-shared, robust, or a priority protocol. `Ok(kind)` is the
/// native type.
///
/// # Safety
///
/// `attr` is null or a valid initialized attribute object.
unsafe fn native_kind(attr: *const pthread_mutexattr_t) -> Result<u32, ()> {
    if attr.is_null() {
        return Ok(KIND_NORMAL);
    }
    let (mut kind, mut pshared, mut robust, mut protocol) = (0, 0, 0, 0);
    // SAFETY: `attr` is valid by contract; outputs are writable locals.
    unsafe {
        real::pthread_mutexattr_gettype(attr, &mut kind);
        libc::pthread_mutexattr_getpshared(attr, &mut pshared);
        real::pthread_mutexattr_getrobust(attr, &mut robust);
        real::pthread_mutexattr_getprotocol(attr, &mut protocol);
    }
    if pshared != libc::PTHREAD_PROCESS_PRIVATE
        || robust != 0
        || protocol != libc::PTHREAD_PRIO_NONE
    {
        return Err(());
    }
    Ok(u32::try_from(kind)
        .unwrap_or(KIND_NORMAL)
        .min(KIND_ADAPTIVE))
}

/// `pthread_mutex_init`: native unless the attributes ask for what waitwise
/// forwards.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_mutex_init(
    m: *mut pthread_mutex_t,
    attr: *const pthread_mutexattr_t,
) -> c_int {
    if m.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract (POSIX): `attr` null or initialized.
    match unsafe { native_kind(attr) } {
        Ok(kind) => {
            // SAFETY: `m` is a writable pthread_mutex_t; not in use yet.
            unsafe { m.write_bytes(0, 1) };
            // SAFETY: as above.
            let w = unsafe { words(m) };
            // Relaxed: not shared yet; whatever shares the mutex orders
            // this store before other threads' reads.
            w[KIND].store(kind, Ordering::Relaxed);
            0
        }
        // SAFETY: forwarding the caller's valid arguments.
        Err(()) => unsafe {
            forward!(
                real::MUTEX_INIT,
                fn(*mut pthread_mutex_t, *const pthread_mutexattr_t) -> c_int
            )(m, attr)
        },
    }
}

/// `pthread_mutex_destroy`: `EBUSY` while locked.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_mutex_destroy(m: *mut pthread_mutex_t) -> c_int {
    if m.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(m) };
    // Relaxed: __kind is fixed while the mutex may be used (module doc,
    // "Memory ordering").
    let kind = w[KIND].load(Ordering::Relaxed);
    if !is_native(kind) {
        if kind == KIND_DESTROYED {
            return EINVAL;
        }
        // SAFETY: a glibc mutex; forwarding the caller's argument.
        return unsafe { forward!(real::MUTEX_DESTROY, fn(*mut pthread_mutex_t) -> c_int)(m) };
    }
    // A snapshot: a best-effort EBUSY, and no use may follow the destroy
    // (module doc, "Memory ordering").
    if lock_word(w).is_locked() {
        return EBUSY;
    }
    w[KIND].store(KIND_DESTROYED, Ordering::Relaxed);
    0
}

/// `pthread_mutex_lock`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_mutex_lock(m: *mut pthread_mutex_t) -> c_int {
    if m.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(m) };
    // Relaxed: __kind is fixed while the mutex is in use and guards no data
    // (module doc, "Memory ordering").
    let kind = w[KIND].load(Ordering::Relaxed);
    if kind == KIND_NORMAL || kind == KIND_ADAPTIVE {
        if !lock_word(w).try_lock() {
            lock_contended(w, Deadline::NEVER, m);
        }
        profile::acquired(m);
        return 0;
    }
    // SAFETY: as above.
    unsafe { lock_other(m, kind, None) }
}

/// `pthread_mutex_trylock`: `EBUSY` when held (also by the caller, unless
/// recursive).
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_mutex_trylock(m: *mut pthread_mutex_t) -> c_int {
    if m.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(m) };
    // Relaxed: __kind is fixed while the mutex is in use and guards no data
    // (module doc, "Memory ordering").
    let kind = w[KIND].load(Ordering::Relaxed);
    match kind {
        KIND_NORMAL | KIND_ADAPTIVE => {
            if lock_word(w).try_lock() {
                profile::acquired(m);
                0
            } else {
                EBUSY
            }
        }
        KIND_RECURSIVE | KIND_ERRORCHECK => {
            let me = crate::thread_id::current();
            // Relaxed: only the holder writes __owner and its unlock clears it,
            // so we find our own id there only while we hold the lock; a stale
            // value is another id, never ours (module doc).
            if kind == KIND_RECURSIVE && w[OWNER].load(Ordering::Relaxed) == me {
                return recurse(w);
            }
            if lock_word(w).try_lock() {
                set_owner(w, me);
                profile::acquired(m);
                0
            } else {
                EBUSY
            }
        }
        KIND_DESTROYED => EINVAL,
        // SAFETY: a glibc mutex; forwarding the caller's argument.
        _ => unsafe { forward!(real::MUTEX_TRYLOCK, fn(*mut pthread_mutex_t) -> c_int)(m) },
    }
}

/// `pthread_mutex_timedlock`: waits until `abstime` on `CLOCK_REALTIME`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_mutex_timedlock(
    m: *mut pthread_mutex_t,
    abstime: *const timespec,
) -> c_int {
    // SAFETY: caller's contract.
    unsafe { timed_lock(m, libc::CLOCK_REALTIME, abstime, false) }
}

/// `pthread_mutex_clocklock` (glibc 2.30): waits until `abstime` on `clock`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_mutex_clocklock(
    m: *mut pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const timespec,
) -> c_int {
    // SAFETY: caller's contract.
    unsafe { timed_lock(m, clock, abstime, true) }
}

/// # Safety
///
/// `m` null or a live mutex; `abstime` null or readable.
unsafe fn timed_lock(
    m: *mut pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const timespec,
    clocklock: bool,
) -> c_int {
    if m.is_null() || !time::supported_clock(clock) {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(m) };
    // Relaxed: __kind is fixed while the mutex is in use and guards no data
    // (module doc, "Memory ordering").
    let kind = w[KIND].load(Ordering::Relaxed);
    if !is_native(kind) && kind != KIND_DESTROYED {
        // SAFETY: a glibc mutex; forwarding the caller's arguments.
        return unsafe {
            if clocklock {
                forward!(
                    real::MUTEX_CLOCKLOCK,
                    fn(*mut pthread_mutex_t, libc::clockid_t, *const timespec) -> c_int
                )(m, clock, abstime)
            } else {
                forward!(
                    real::MUTEX_TIMEDLOCK,
                    fn(*mut pthread_mutex_t, *const timespec) -> c_int
                )(m, abstime)
            }
        };
    }
    // SAFETY: as above.
    unsafe { lock_other(m, kind, Some((clock, abstime))) }
}

/// Every lock but the untimed normal one: recursive, error-checking,
/// timed, destroyed and forwarded mutexes.
///
/// # Safety
///
/// `m` is a live mutex; `timeout`'s pointer null or readable.
#[cold]
unsafe fn lock_other(
    m: *mut pthread_mutex_t,
    kind: u32,
    timeout: Option<(libc::clockid_t, *const timespec)>,
) -> c_int {
    // SAFETY: caller's contract.
    let w = unsafe { words(m) };
    if !is_native(kind) {
        if kind == KIND_DESTROYED {
            return EINVAL;
        }
        // SAFETY: a glibc mutex; forwarding the caller's argument.
        return unsafe { forward!(real::MUTEX_LOCK, fn(*mut pthread_mutex_t) -> c_int)(m) };
    }
    let me = if kind == KIND_RECURSIVE || kind == KIND_ERRORCHECK {
        let me = crate::thread_id::current();
        // Relaxed: only the holder writes __owner and its unlock clears it,
        // so we find our own id there only while we hold the lock; a stale
        // value is another id, never ours (module doc).
        if w[OWNER].load(Ordering::Relaxed) == me {
            return if kind == KIND_RECURSIVE {
                recurse(w)
            } else {
                EDEADLK
            };
        }
        Some(me)
    } else {
        None
    };
    if !lock_word(w).try_lock() {
        let deadline = match timeout {
            None => Deadline::NEVER,
            // SAFETY: caller's contract; validated only now that the lock
            // must be waited for (POSIX allows either; glibc does so).
            Some((clock, abstime)) => match unsafe { time::mutex_deadline(clock, abstime) } {
                Ok(d) => d,
                Err(e) => return e,
            },
        };
        if !lock_contended(w, deadline, m) {
            return libc::ETIMEDOUT;
        }
    }
    if let Some(me) = me {
        set_owner(w, me);
    }
    profile::acquired(m);
    0
}

/// One more level of a recursive mutex the caller holds.
#[inline]
fn recurse(w: &Words) -> c_int {
    // Relaxed: the caller holds the lock, and only the holder touches
    // __count (module doc, "Memory ordering").
    let c = w[COUNT].load(Ordering::Relaxed);
    if c == u32::MAX {
        return libc::EAGAIN;
    }
    w[COUNT].store(c + 1, Ordering::Relaxed);
    0
}

#[inline]
fn set_owner(w: &Words, me: u32) {
    // Relaxed: written by the new holder inside its critical section; the
    // lock word's Acquire/Release orders them for later holders, and other
    // threads only compare __owner with their own id (module doc).
    w[OWNER].store(me, Ordering::Relaxed);
    w[COUNT].store(1, Ordering::Relaxed);
}

/// `pthread_mutex_unlock`: `EPERM` for an error-checking or recursive
/// mutex the caller does not hold.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_mutex_unlock(m: *mut pthread_mutex_t) -> c_int {
    if m.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(m) };
    // Relaxed: __kind is fixed while the mutex is in use and guards no data
    // (module doc, "Memory ordering").
    let kind = w[KIND].load(Ordering::Relaxed);
    if kind == KIND_NORMAL || kind == KIND_ADAPTIVE {
        profile::releasing(m);
        clear_glibc_owner(w);
        // `false` (it was not locked) is the caller's error, which glibc
        // does not report for a normal mutex either.
        lock_word(w).unlock();
        return 0;
    }
    // SAFETY: as above.
    unsafe { unlock_other(m, kind) }
}

/// Clears `__owner` of a normal mutex if glibc's own code set it.
///
/// glibc's condition variables (a forwarded process-shared condvar used
/// with a native mutex) re-lock the mutex through glibc's internal path,
/// which asserts `__owner == 0` and then stores the caller's id there;
/// the program then unlocks through this library. Unless that unlock
/// clears the field, the next internal re-lock fails glibc's assertion
/// and aborts. A native lock never writes `__owner` of a normal mutex, so
/// the usual cost is one load of a word on the line the unlock writes
/// anyway.
#[inline(always)]
fn clear_glibc_owner(w: &Words) {
    // Relaxed: written and cleared only by a holder inside its critical
    // section; the release below orders the clear before the next holder.
    if w[OWNER].load(Ordering::Relaxed) != 0 {
        w[OWNER].store(0, Ordering::Relaxed);
    }
}

/// # Safety
///
/// `m` is a live mutex.
#[cold]
unsafe fn unlock_other(m: *mut pthread_mutex_t, kind: u32) -> c_int {
    // SAFETY: caller's contract.
    let w = unsafe { words(m) };
    match kind {
        KIND_RECURSIVE | KIND_ERRORCHECK => {
            // Relaxed: __owner equals our id only while we hold the lock
            // (module doc), and then __lock (a sanity check) and __count
            // are read and written only by us.
            if w[OWNER].load(Ordering::Relaxed) != crate::thread_id::current()
                || !lock_word(w).is_locked()
            {
                return EPERM;
            }
            let c = w[COUNT].load(Ordering::Relaxed);
            if kind == KIND_RECURSIVE && c > 1 {
                w[COUNT].store(c - 1, Ordering::Relaxed);
                return 0;
            }
            // Relaxed: cleared before the unlock's Release RMW, which
            // orders them before the next holder's accesses.
            profile::releasing(m);
            w[COUNT].store(0, Ordering::Relaxed);
            w[OWNER].store(0, Ordering::Relaxed);
            lock_word(w).unlock();
            0
        }
        KIND_DESTROYED => EINVAL,
        // SAFETY: a glibc mutex; forwarding the caller's argument.
        _ => unsafe { forward!(real::MUTEX_UNLOCK, fn(*mut pthread_mutex_t) -> c_int)(m) },
    }
}

/// The contended acquisition, profiled. Returns whether the lock was taken
/// before `deadline`.
#[cold]
fn lock_contended(w: &Words, deadline: Deadline, m: *mut pthread_mutex_t) -> bool {
    crate::first_wait::prepare();
    let start = profile::start();
    let limit = Duration::from_nanos(crate::config::poll_limit_ns(SyncKind::Mutex));
    let mut wait = PassingOnLockWait {
        polling: PolicyWait::new(&Policy::poll_then_block(limit).with_mechanism(Mechanism::Yield)),
    };
    let out = lock_word(w).lock_contended(&mut wait, deadline);
    profile::finish(start, Kind::Mutex, m, out.blocked());
    out.acquired()
}

/// How a contended lock waits: the engine's polling phase, a
/// `sched_yield` between looks (as `waitwise::Mutex`) for the configured
/// limit; then a sleep with a cleanup handler that passes on a wake-up
/// when glibc unwinds the sleeper. No destructor: a forced unwind may pass
/// through its owner's frame (crate docs, "Unwinding").
struct PassingOnLockWait {
    /// The polling phase (its sleep is replaced by [`sleep_passing_on`]).
    polling: PolicyWait,
}

impl TwoPhaseWait for PassingOnLockWait {
    #[inline]
    fn start_polling(&mut self, deadline: Deadline) -> bool {
        self.polling.start_polling(deadline)
    }

    #[inline]
    fn poll(&mut self, futex: &Futex, ready: impl FnMut(u32) -> bool) -> bool {
        self.polling.poll(futex, ready)
    }

    #[inline]
    fn sleep(&mut self, futex: &Futex, expected: u32, timeout: Option<Duration>) -> FutexWait {
        sleep_passing_on(futex, expected, timeout)
    }
}

/// Never asks for a hand-off: a sleep that glibc unwinds does not return
/// to the algorithm, and the word keeps glibc's three values.
impl LockWait for PassingOnLockWait {}

/// Sleeps while the lock word holds `expected`. A thread that glibc
/// unwinds out of the sleep (a signal handler's `pthread_exit`,
/// asynchronous cancellation) may have been handed the release's wake-up
/// just before: it passes one on, so the remaining sleepers are not
/// stranded behind an unlocked word.
#[inline(never)]
fn sleep_passing_on(futex: &Futex, expected: u32, timeout: Option<Duration>) -> FutexWait {
    /// The cleanup: wake one sleeper (a spurious wake-up at worst).
    unsafe extern "C" fn pass_on_wake(futex: *mut std::ffi::c_void) {
        // SAFETY: the futex registered below, alive while its waiter is.
        unsafe { &*(futex as *const Futex) }.wake(1);
    }
    // SAFETY: `pass_on_wake` takes the futex it is given and never unwinds.
    unsafe {
        crate::cleanup::on_forced_unwind(futex, pass_on_wake, || futex.wait(expected, timeout))
    }
}

/// Unlocks `m` for a condition wait (the caller's `pthread_mutex_unlock`).
///
/// # Safety
///
/// `m` is a live mutex.
pub(crate) unsafe fn unlock(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: caller's contract.
    unsafe { pthread_mutex_unlock(m) }
}

/// Re-locks `m` after a condition wait.
///
/// # Safety
///
/// `m` is a live mutex.
pub(crate) unsafe fn lock(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: caller's contract.
    unsafe { pthread_mutex_lock(m) }
}

/// `__pthread_mutex_init@GLIBC_2.2.5`: glibc's old name, which programs
/// built against old libraries still reference.
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_mutex_init(
    m: *mut pthread_mutex_t,
    attr: *const pthread_mutexattr_t,
) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { pthread_mutex_init(m, attr) }
}

/// `__pthread_mutex_destroy@GLIBC_2.2.5`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_mutex_destroy(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    unsafe { pthread_mutex_destroy(m) }
}

/// `__pthread_mutex_lock@GLIBC_2.2.5`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_mutex_lock(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    unsafe { pthread_mutex_lock(m) }
}

/// `__pthread_mutex_trylock@GLIBC_2.2.5`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_mutex_trylock(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    unsafe { pthread_mutex_trylock(m) }
}

/// `__pthread_mutex_unlock@GLIBC_2.2.5`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_mutex_unlock(m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: the caller's argument, passed on.
    unsafe { pthread_mutex_unlock(m) }
}
