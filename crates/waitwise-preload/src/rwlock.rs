//! `pthread_rwlock_*`: a reader-writer lock whose whole state is one 64-bit
//! word inside the caller's `pthread_rwlock_t`, the futex its low half,
//! with two-phase waiting; reader-preferring or writer-preferring as
//! `pthread_rwlockattr_setkind_np` asks.
//!
//! # Layout (glibc x86-64 `pthread_rwlock_t`, 56 bytes, 8-aligned)
//!
//! ```text
//!  offset  glibc name              here
//!   0      __readers \             STATE, one 64-bit word ("Algorithm"); its low
//!   4      __writers /             half, at offset 0, is the futex word
//!   8      __wrphase_futex         0, unused
//!  12      __writers_futex         0, unused
//!  16      __pad3, __pad4          0, unused
//!  24      __cur_writer            the write holder's thread id as glibc records it
//!                                  (module thread_id), 0 when none
//!                                  (glibc's meaning)
//!  28      __shared                0; glibc's init puts 1 there for a
//!                                  process-shared lock: forwarded
//!  32      __rwelision .. __pad2   0, unused
//!  48      __flags                 the kind, glibc's values and meaning:
//!                                  0 PREFER_READER_NP, 1 PREFER_WRITER_NP
//!                                  (both reader-preferring, as in glibc),
//!                                  2 PREFER_WRITER_NONRECURSIVE_NP
//!                                  (writer-preferring)
//! ```
//!
//! `PTHREAD_RWLOCK_INITIALIZER` is all zeros: an unlocked reader-preferring
//! lock. `PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP` is all zeros
//! but for 2 in `__flags`: an unlocked writer-preferring lock. Neither needs
//! an init call. glibc's `pthread_rwlock_init` of a process-shared lock
//! (forwarded) stores 1 in `__shared` and nothing ever clears it (checked
//! on glibc 2.36: it survives locking, unlocking and destroy); a native lock
//! keeps 0 there for life, so every call tells the two apart by that word.
//!
//! # Algorithm
//!
//! `STATE` is the state word of waitwise's reader-writer lock,
//! [`RwWordRef`] (module `waitwise::mutex::rw_word`, checked by the loom
//! models in `crates/waitwise/tests/loom_rw_word.rs`): read locks held, a
//! write-locked bit, waiting writers and may-sleep bits in one 64-bit word
//! whose low half is the futex. Its protocol, its wake-up rules (an unlock
//! never touches the lock after the CAS that lets a waiter go, only its
//! address reaches the kernel) and its memory orderings are documented
//! there. `__flags` gives it its kind ([`RwKind`]). What is here is the
//! layout, the forwarding of glibc's process-shared locks, POSIX's error
//! semantics (`EDEADLK` from `__cur_writer`, `EAGAIN`, `ETIMEDOUT`,
//! `EPERM`), and how a waiter polls, sleeps and wakes ([`BitsetRwWait`],
//! the algorithm's `RwWait`, a `TwoPhaseWait` on the state word, and
//! [`FutexBitsets`], its `RwWake`).
//!
//! # Waiting
//!
//! Readers and writers poll for `crate::config::poll_limit_ns(SyncKind::Mutex)`:
//! both wait for a lock holder's critical section to end (a writer's, or
//! for a writer the readers' ones), the wait the mutex kind's `alpha`
//! models, not a producer's next item. They poll by yielding
//! (`sched_yield` between looks at the word, as the mutex does): a waiter
//! neither pulls the word's cache line from the holders nor keeps its CPU
//! from a preempted holder; while yields lose whole scheduler slices to
//! other processes' busy threads, they skip polling and sleep at once
//! (`waitwise::mechanism::yield_guard`, which their yields also report
//! to). They sleep with `FUTEX_WAIT_BITSET` on the
//! futex half, readers and writers with different bit sets, so a writer's
//! wake-up goes to a writer and a readers' wake-up to every reader; the
//! timeout is an absolute `CLOCK_MONOTONIC` time. With `WAITWISE_PROFILE`
//! on, every contended rdlock and wrlock is one wait of the lock's `rwlock`
//! histogram (timed out or not; a waiter that glibc unwinds records
//! nothing).
//!
//! # Starvation
//!
//! Each kind keeps glibc's preference, and with it glibc's starvation:
//!
//! - **Reader-preferring kinds (0 and 1, the default)**: a new reader
//!   enters while the lock is read-locked, even with writers waiting, so a
//!   steady stream of readers can keep a writer out indefinitely. This is
//!   not bounded here, on purpose: POSIX lets a thread that holds a read
//!   lock take it again, and glibc's reader-preferring kinds promise that
//!   this second read lock does not deadlock behind a waiting writer.
//!   Any bound on writer starvation makes a new reader wait for a waiting
//!   writer at some point, and a reader that already holds the lock would
//!   then wait for a writer that waits for it: a deadlock in a correct
//!   program (test `rwlock_reader_preferring_recursive_read_lock_does_not_deadlock`).
//! - **`PREFER_WRITER_NONRECURSIVE_NP` (2)** is the opt-in for a bound on
//!   writer starvation, glibc's own: a new reader waits while a writer
//!   waits, so readers drain and the writer enters (test
//!   `rwlock_writer_preferring_kind_holds_new_readers_back`). Recursive
//!   read locking is what the program gives up for it, as in glibc.
//!
//! waitwise's own [`waitwise::RwLock`] owes no such promise and
//! bounds both kinds of starvation with a readers' turn.
//!
//! # Unwinding
//!
//! The lock functions are not cancellation points, but glibc may unwind a
//! thread blocked in one (its signal handler calls `pthread_exit`, or it is
//! cancelled asynchronously). A waiting writer registers a cleanup routine
//! with glibc ([`crate::cleanup`]) for the span of its wait that runs
//! [`WaitingWriter::abandon`]: it leaves `W` and pays a wake-up it may
//! owe, as a timed-out writer does. A waiting reader registers nothing
//! that needs undoing (see the algorithm's docs). The waiting paths hold
//! no value with a destructor (see the crate doc), and the futex system
//! call and `sched_yield` are declared `C-unwind`.
//!
//! # Memory ordering
//!
//! `STATE`'s orderings are the algorithm's. `__cur_writer` is written only
//! by the write holder, inside its critical section (cleared before its
//! Release CAS), and read by other threads only to compare against their
//! own id, which they can find there only while they hold the write lock:
//! Relaxed, as the mutex's `__owner`. `__flags` and `__shared` are Relaxed
//! too: init (or a static initializer) writes them before the lock is
//! shared, whatever shares it orders them, and they stay fixed for the
//! lock's life; they guard no other data.

use crate::profile::{self, Kind};
use crate::real::RealFn;
use crate::{cleanup, config, time};
use libc::{
    pthread_rwlock_t, pthread_rwlockattr_t, timespec, EAGAIN, EBUSY, EDEADLK, EINVAL, EPERM,
    ETIMEDOUT,
};
use std::ffi::{c_int, c_void};
use std::mem::{align_of, offset_of, size_of};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;
use waitwise::mechanism::{yield_guard, yielding};
use waitwise::mutex::{
    ReadOutcome, RwKind, RwQueue, RwState, RwStateWord, RwWait, RwWake, RwWordRef, TryRead,
    WaitingWriter,
};
use waitwise::platform::futex::{wait_bitset, wake_bitset, FutexWait, Interrupted};
use waitwise::two_phase_wait::TwoPhaseWait;
use waitwise::{Deadline, SyncKind};

/// The C library function used here that the libc crate lacks.
mod sys {
    use std::ffi::c_int;

    extern "C" {
        pub fn pthread_rwlockattr_getpshared(
            attr: *const libc::pthread_rwlockattr_t,
            pshared: *mut c_int,
        ) -> c_int;
    }
}

/// The rwlock's fields as this module uses them (module doc, "Layout").
/// Every field is atomic: a forwarded lock's words change under glibc's
/// own atomics while a reference to this view exists.
#[repr(C)]
struct Lock {
    /// `__readers` and `__writers`: STATE.
    state: AtomicU64,
    /// `__wrphase_futex`, `__writers_futex`, `__pad3`, `__pad4`: unused.
    _glibc_futexes: [AtomicU32; 4],
    /// `__cur_writer`.
    cur_writer: AtomicU32,
    /// `__shared`.
    shared: AtomicU32,
    /// `__rwelision`, `__pad1`, `__pad2`: unused.
    _glibc_elision: [AtomicU32; 4],
    /// `__flags`.
    flags: AtomicU32,
    /// Tail padding of glibc's struct.
    _tail: AtomicU32,
}

const _: () = assert!(size_of::<Lock>() == 56);
const _: () = assert!(size_of::<pthread_rwlock_t>() == 56);
// STATE is a 64-bit atomic at offset 0.
const _: () = assert!(align_of::<pthread_rwlock_t>() >= 8);
const _: () = assert!(align_of::<Lock>() == 8);
const _: () = assert!(offset_of!(Lock, cur_writer) == 24);
const _: () = assert!(offset_of!(Lock, shared) == 28);
const _: () = assert!(offset_of!(Lock, flags) == 48);
// The futex word is STATE's low half, at offset 0.
const _: () = assert!(cfg!(target_endian = "little"));

/// # Safety
///
/// `rw` is non-null and points to a live `pthread_rwlock_t` for `'a`,
/// only accessed atomically while shared.
#[inline(always)]
unsafe fn lock<'a>(rw: *mut pthread_rwlock_t) -> &'a Lock {
    // SAFETY: by the caller's contract; the sizes, offsets and alignment
    // agree (asserted above), and atomics have their integers' layouts.
    unsafe { &*(rw as *const Lock) }
}

/// Whether `rw` is a lock glibc set up (process-shared): forwarded.
///
/// # Safety
///
/// As [`lock`].
#[inline(always)]
unsafe fn forwarded(rw: *mut pthread_rwlock_t) -> bool {
    // SAFETY: caller's contract.
    let l = unsafe { lock(rw) };
    // Relaxed: fixed for the lock's life (module doc, "Memory ordering").
    l.shared.load(Ordering::Relaxed) != 0
}

/// `__flags` of a writer-preferring lock (`PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP`).
const KIND_WRITER_NONRECURSIVE: u32 = 2;

/// The futex bit set readers sleep with.
const READERS: u32 = 1;
/// The futex bit set writers sleep with.
const WRITERS: u32 = 2;

/// The lock's kind, from `__flags`.
#[inline(always)]
fn kind(l: &Lock) -> RwKind {
    // Relaxed: fixed for the lock's life (module doc, "Memory ordering").
    if l.flags.load(Ordering::Relaxed) == KIND_WRITER_NONRECURSIVE {
        RwKind::WriterPreferring
    } else {
        RwKind::ReaderPreferring
    }
}

/// The algorithm over a native lock's `STATE`.
#[inline(always)]
fn view(l: &Lock) -> RwWordRef<'_> {
    RwWordRef::new(&l.state, kind(l))
}

/// The address of the futex half (STATE's low half) of the state word at
/// `word`.
#[inline(always)]
fn futex_word(word: *const AtomicU64) -> *const u32 {
    word as *const u32
}

// ---------------------------------------------------------------------
// The C library's own functions, for forwarded (process-shared) locks.

// Each is the default version, found with `dlsym(RTLD_NEXT)`: the only
// one for every rwlock function (glibc exports each at `GLIBC_2.2.5` and
// `GLIBC_2.34` at one address, and the `__pthread_rwlock_*` names at
// `GLIBC_2.2.5` only).
static REAL_INIT: RealFn = RealFn::new(c"pthread_rwlock_init", None);
static REAL_DESTROY: RealFn = RealFn::new(c"pthread_rwlock_destroy", None);
static REAL_RDLOCK: RealFn = RealFn::new(c"pthread_rwlock_rdlock", None);
static REAL_WRLOCK: RealFn = RealFn::new(c"pthread_rwlock_wrlock", None);
static REAL_TRYRDLOCK: RealFn = RealFn::new(c"pthread_rwlock_tryrdlock", None);
static REAL_TRYWRLOCK: RealFn = RealFn::new(c"pthread_rwlock_trywrlock", None);
static REAL_TIMEDRDLOCK: RealFn = RealFn::new(c"pthread_rwlock_timedrdlock", None);
static REAL_TIMEDWRLOCK: RealFn = RealFn::new(c"pthread_rwlock_timedwrlock", None);
static REAL_CLOCKRDLOCK: RealFn = RealFn::new(c"pthread_rwlock_clockrdlock", None);
static REAL_CLOCKWRLOCK: RealFn = RealFn::new(c"pthread_rwlock_clockwrlock", None);
static REAL_UNLOCK: RealFn = RealFn::new(c"pthread_rwlock_unlock", None);

/// The C library's `$f` as a function of the given C prototype, declared
/// `C-unwind`: glibc may unwind a thread blocked in its lock functions.
macro_rules! glibc {
    ($f:ident, fn($($arg:ty),* $(,)?)) => {{
        let p = $f.get();
        // SAFETY: `p` is the C library's definition of the function `$f`
        // names, whose C prototype is the one given here.
        unsafe {
            std::mem::transmute::<*mut c_void, unsafe extern "C-unwind" fn($($arg),*) -> c_int>(p)
        }
    }};
}

// ---------------------------------------------------------------------
// Futex operations on the futex half, with bit sets (only the address
// reaches the kernel for a wake, so the lock may already be freed: the
// algorithm's docs, "Protocol").

/// Sleeps on the futex half of the state word `word` while it equals
/// `expected`, until woken for `bitset` or at most `timeout` (the
/// platform's [`wait_bitset`], which holds no value with a destructor: an
/// unwind may start in it). A sleep a signal handler interrupts did not
/// happen: [`FutexWait::ValueChanged`].
#[inline(never)]
fn sleep(word: &RwStateWord, expected: u32, bitset: u32, timeout: Option<Duration>) -> FutexWait {
    // SAFETY: the futex half is a valid, aligned u32 of a live lock for the
    // whole call.
    match unsafe { wait_bitset(futex_word(word.value()), expected, timeout, bitset) } {
        Ok(slept) => slept,
        Err(Interrupted) => FutexWait::ValueChanged,
    }
}

/// The algorithm's wake-ups as futex bit sets: every reader, or one
/// writer.
struct FutexBitsets;

impl RwWake for FutexBitsets {
    #[inline]
    fn wake(&self, word: *const AtomicU64, queue: RwQueue) {
        let (count, bitset) = match queue {
            RwQueue::Readers => (u32::MAX, READERS),
            RwQueue::Writers => (1, WRITERS),
        };
        wake_bitset(futex_word(word), count, bitset);
    }
}

// ---------------------------------------------------------------------
// Waiting.

/// How a contended rdlock or wrlock waits (module doc, "Waiting"):
/// yield-polling for the configured limit, then `FUTEX_WAIT_BITSET`
/// sleeps in the queue's bit set. The algorithm owns the deadline. No
/// destructor: a forced unwind may pass through its owner's frame.
struct BitsetRwWait {
    /// When the current polling phase ends.
    poll_end: Deadline,
    /// Whether the waiter slept in the kernel at least once (woken or timed
    /// out), for the profile.
    slept: bool,
}

impl BitsetRwWait {
    fn new() -> Self {
        Self {
            poll_end: Deadline::NEVER,
            slept: false,
        }
    }
}

impl RwWake for BitsetRwWait {
    #[inline]
    fn wake(&self, word: *const AtomicU64, queue: RwQueue) {
        FutexBitsets.wake(word, queue);
    }
}

impl TwoPhaseWait<RwStateWord> for BitsetRwWait {
    /// At most the configured poll limit (`alpha * B`, the mutex kind's
    /// `alpha`; module doc), none while yields lose slices.
    #[inline]
    fn start_polling(&mut self, deadline: Deadline) -> bool {
        let limit = deadline.cap_ns(config::poll_limit_ns(SyncKind::Mutex));
        if limit == 0 || yield_guard::yielding_loses_slices() {
            return false;
        }
        self.poll_end = Deadline::after(Duration::from_nanos(limit));
        true
    }

    /// Yields between looks at the state word ([`yielding::poll`]). No
    /// landing pads (as [`sleep`]).
    #[inline(never)]
    fn poll(&mut self, word: &RwStateWord, mut ready: impl FnMut(RwState) -> bool) -> bool {
        // Relaxed: the poll only decides when to try the CAS, which is
        // what acquires.
        let load = || word.value().load(Ordering::Relaxed);
        let seen = load();
        ready(RwState::from_bits(seen))
            || yielding::poll(load, seen, self.poll_end, |bits| {
                ready(RwState::from_bits(bits))
            })
    }
}

impl RwWait for BitsetRwWait {
    #[inline]
    fn sleep_in(
        &mut self,
        word: &RwStateWord,
        expected: u32,
        timeout: Option<Duration>,
        queue: RwQueue,
    ) -> FutexWait {
        let bitset = match queue {
            RwQueue::Readers => READERS,
            RwQueue::Writers => WRITERS,
        };
        let slept = sleep(word, expected, bitset, timeout);
        self.slept |= slept != FutexWait::ValueChanged;
        slept
    }
}

// ---------------------------------------------------------------------
// Read locks.

/// The body of the read locks: fast path, then `EDEADLK`, the deadline
/// (`deadline()` is called only when the lock must be waited for, so a
/// bad `abstime` is reported only then), and the wait.
///
/// # Safety
///
/// `rw` is a live native lock.
#[inline]
unsafe fn rdlock(
    rw: *mut pthread_rwlock_t,
    deadline: impl FnOnce() -> Result<Deadline, c_int>,
) -> c_int {
    // SAFETY: caller's contract.
    let l = unsafe { lock(rw) };
    match view(l).try_read() {
        TryRead::Taken => 0,
        TryRead::Overflow => EAGAIN,
        TryRead::Busy(s) => read_contended(l, s, deadline),
    }
}

#[cold]
fn read_contended(
    l: &Lock,
    seen: RwState,
    deadline: impl FnOnce() -> Result<Deadline, c_int>,
) -> c_int {
    // Relaxed: __cur_writer holds our id only while we hold the write lock
    // (module doc, "Memory ordering").
    if seen.write_locked() && l.cur_writer.load(Ordering::Relaxed) == crate::thread_id::current() {
        return EDEADLK;
    }
    let deadline = match deadline() {
        Ok(d) => d,
        Err(e) => return e,
    };
    crate::first_wait::prepare();
    let start = profile::start();
    let mut wait = BitsetRwWait::new();
    let outcome = view(l).read_contended(&mut wait, deadline);
    profile::finish(start, Kind::Rwlock, l, wait.slept);
    match outcome {
        ReadOutcome::Taken => 0,
        ReadOutcome::Overflow => EAGAIN,
        ReadOutcome::TimedOut => ETIMEDOUT,
    }
}

// ---------------------------------------------------------------------
// Write locks.

/// The cleanup routine of a waiting writer that glibc unwinds
/// ([`WaitingWriter::abandon`]): leaves `W` and pays a wake-up it may owe,
/// as a timed-out writer does.
///
/// # Safety
///
/// `ctx` points at the live [`WaitingWriter`] of a wait of this thread.
unsafe extern "C" fn writer_unwound(ctx: *mut c_void) {
    // SAFETY: caller's contract.
    let w = unsafe { &*(ctx as *const WaitingWriter<'_>) };
    w.abandon(&FutexBitsets);
}

/// The body of the write locks: fast path, then `EDEADLK`, the deadline
/// (reported only when the lock must be waited for) and the wait.
///
/// # Safety
///
/// `rw` is a live native lock.
#[inline]
unsafe fn wrlock(
    rw: *mut pthread_rwlock_t,
    deadline: impl FnOnce() -> Result<Deadline, c_int>,
) -> c_int {
    // SAFETY: caller's contract.
    let l = unsafe { lock(rw) };
    if view(l).try_write() {
        set_writer(l, crate::thread_id::current());
        return 0;
    }
    write_contended(l, deadline)
}

/// Records the write holder (inside its critical section).
#[inline(always)]
fn set_writer(l: &Lock, me: u32) {
    // Relaxed: module doc, "Memory ordering".
    l.cur_writer.store(me, Ordering::Relaxed);
}

#[cold]
fn write_contended(l: &Lock, deadline: impl FnOnce() -> Result<Deadline, c_int>) -> c_int {
    let me = crate::thread_id::current();
    let rw = view(l);
    // Relaxed: __cur_writer holds our id only while we hold the write lock
    // (module doc, "Memory ordering"); the state is a guess.
    if rw.state().write_locked() && l.cur_writer.load(Ordering::Relaxed) == me {
        return EDEADLK;
    }
    let deadline = match deadline() {
        Ok(d) => d,
        Err(e) => return e,
    };
    crate::first_wait::prepare();
    let start = profile::start();
    let w = WaitingWriter::new(rw);
    let mut wait = BitsetRwWait::new();
    // SAFETY: `writer_unwound` takes this thread's live `w` (it outlives
    // the call) and never unwinds.
    let taken =
        unsafe { cleanup::on_forced_unwind(&w, writer_unwound, || w.wait(&mut wait, deadline)) };
    profile::finish(start, Kind::Rwlock, l, wait.slept);
    if taken {
        set_writer(l, me);
        0
    } else {
        ETIMEDOUT
    }
}

// ---------------------------------------------------------------------
// Unlock.

/// Releases the write lock the caller holds.
fn write_unlock(l: &Lock) -> c_int {
    // The kind is read before the unlocking CAS (the algorithm reads
    // nothing of the lock after it).
    let rw = view(l);
    // Relaxed: cleared inside the critical section, before the Release CAS.
    l.cur_writer.store(0, Ordering::Relaxed);
    rw.write_unlock(&FutexBitsets);
    0
}

// ---------------------------------------------------------------------
// The C functions.

/// `pthread_rwlock_init`: native with the attribute's kind, unless
/// process-shared (forwarded).
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_init(
    rw: *mut pthread_rwlock_t,
    attr: *const pthread_rwlockattr_t,
) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    let (mut pshared, mut kind) = (libc::PTHREAD_PROCESS_PRIVATE, 0);
    if !attr.is_null() {
        // SAFETY: `attr` is an initialized attribute object (POSIX); the
        // outputs are writable locals.
        unsafe {
            sys::pthread_rwlockattr_getpshared(attr, &mut pshared);
            libc::pthread_rwlockattr_getkind_np(attr, &mut kind);
        }
    }
    if pshared != libc::PTHREAD_PROCESS_PRIVATE {
        let f = glibc!(
            REAL_INIT,
            fn(*mut pthread_rwlock_t, *const pthread_rwlockattr_t)
        );
        // SAFETY: forwarding the caller's valid arguments.
        return unsafe { f(rw, attr) };
    }
    // SAFETY: a writable pthread_rwlock_t, not in use yet.
    unsafe { rw.write_bytes(0, 1) };
    // SAFETY: as above.
    let l = unsafe { lock(rw) };
    // Relaxed: not shared yet; whatever shares the lock orders this store
    // before other threads' reads. The kind is glibc's value (0, 1 or 2:
    // pthread_rwlockattr_setkind_np accepts no other).
    l.flags.store(kind as u32, Ordering::Relaxed);
    0
}

/// `pthread_rwlock_destroy`: 0, held or not, and the lock is left as it
/// is (glibc's result: destroying a held lock is undefined behaviour in
/// POSIX, and conformance tests expect glibc's 0).
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_destroy(rw: *mut pthread_rwlock_t) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(REAL_DESTROY, fn(*mut pthread_rwlock_t));
        // SAFETY: a glibc lock; forwarding the caller's argument.
        return unsafe { f(rw) };
    }
    0
}

/// `pthread_rwlock_rdlock`: `EDEADLK` if the caller holds the write lock,
/// `EAGAIN` at `MAX_READERS` read locks.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_rdlock(rw: *mut pthread_rwlock_t) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(REAL_RDLOCK, fn(*mut pthread_rwlock_t));
        // SAFETY: a glibc lock; forwarding the caller's argument.
        return unsafe { f(rw) };
    }
    // SAFETY: caller's contract.
    unsafe { rdlock(rw, || Ok(Deadline::NEVER)) }
}

/// `pthread_rwlock_tryrdlock`: `EBUSY` when a reader would have to wait.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_tryrdlock(rw: *mut pthread_rwlock_t) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(REAL_TRYRDLOCK, fn(*mut pthread_rwlock_t));
        // SAFETY: a glibc lock; forwarding the caller's argument.
        return unsafe { f(rw) };
    }
    // SAFETY: caller's contract.
    let l = unsafe { lock(rw) };
    match view(l).try_read() {
        TryRead::Taken => 0,
        TryRead::Busy(_) => EBUSY,
        TryRead::Overflow => EAGAIN,
    }
}

/// `pthread_rwlock_timedrdlock`: waits until `abstime` on `CLOCK_REALTIME`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_timedrdlock(
    rw: *mut pthread_rwlock_t,
    abstime: *const timespec,
) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(REAL_TIMEDRDLOCK, fn(*mut pthread_rwlock_t, *const timespec));
        // SAFETY: a glibc lock; forwarding the caller's arguments.
        return unsafe { f(rw, abstime) };
    }
    // SAFETY: caller's contract (for `abstime` too).
    unsafe { rdlock(rw, || time::deadline(libc::CLOCK_REALTIME, abstime)) }
}

/// `pthread_rwlock_clockrdlock` (glibc 2.30): waits until `abstime` on
/// `clock`; `EINVAL` for a clock other than `CLOCK_REALTIME` and
/// `CLOCK_MONOTONIC`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_clockrdlock(
    rw: *mut pthread_rwlock_t,
    clock: libc::clockid_t,
    abstime: *const timespec,
) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(
            REAL_CLOCKRDLOCK,
            fn(*mut pthread_rwlock_t, libc::clockid_t, *const timespec)
        );
        // SAFETY: a glibc lock; forwarding the caller's arguments.
        return unsafe { f(rw, clock, abstime) };
    }
    if !time::supported_clock(clock) {
        return EINVAL;
    }
    // SAFETY: caller's contract (for `abstime` too).
    unsafe { rdlock(rw, || time::deadline(clock, abstime)) }
}

/// `pthread_rwlock_wrlock`: `EDEADLK` if the caller holds the write lock.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_wrlock(rw: *mut pthread_rwlock_t) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(REAL_WRLOCK, fn(*mut pthread_rwlock_t));
        // SAFETY: a glibc lock; forwarding the caller's argument.
        return unsafe { f(rw) };
    }
    // SAFETY: caller's contract.
    unsafe { wrlock(rw, || Ok(Deadline::NEVER)) }
}

/// `pthread_rwlock_trywrlock`: `EBUSY` unless free (also when the caller
/// holds it).
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_trywrlock(rw: *mut pthread_rwlock_t) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(REAL_TRYWRLOCK, fn(*mut pthread_rwlock_t));
        // SAFETY: a glibc lock; forwarding the caller's argument.
        return unsafe { f(rw) };
    }
    // SAFETY: caller's contract.
    let l = unsafe { lock(rw) };
    if view(l).try_write() {
        set_writer(l, crate::thread_id::current());
        0
    } else {
        EBUSY
    }
}

/// `pthread_rwlock_timedwrlock`: waits until `abstime` on `CLOCK_REALTIME`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_timedwrlock(
    rw: *mut pthread_rwlock_t,
    abstime: *const timespec,
) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(REAL_TIMEDWRLOCK, fn(*mut pthread_rwlock_t, *const timespec));
        // SAFETY: a glibc lock; forwarding the caller's arguments.
        return unsafe { f(rw, abstime) };
    }
    // SAFETY: caller's contract (for `abstime` too).
    unsafe { wrlock(rw, || time::deadline(libc::CLOCK_REALTIME, abstime)) }
}

/// `pthread_rwlock_clockwrlock` (glibc 2.30): waits until `abstime` on
/// `clock`; `EINVAL` for a clock other than `CLOCK_REALTIME` and
/// `CLOCK_MONOTONIC`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_clockwrlock(
    rw: *mut pthread_rwlock_t,
    clock: libc::clockid_t,
    abstime: *const timespec,
) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(
            REAL_CLOCKWRLOCK,
            fn(*mut pthread_rwlock_t, libc::clockid_t, *const timespec)
        );
        // SAFETY: a glibc lock; forwarding the caller's arguments.
        return unsafe { f(rw, clock, abstime) };
    }
    if !time::supported_clock(clock) {
        return EINVAL;
    }
    // SAFETY: caller's contract (for `abstime` too).
    unsafe { wrlock(rw, || time::deadline(clock, abstime)) }
}

/// `pthread_rwlock_unlock`: the write lock if the caller holds it (by
/// `__cur_writer`, as glibc decides), else one read lock; `EPERM` when the
/// lock is not held that way (glibc leaves that undefined; here the state
/// is never corrupted).
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_rwlock_unlock(rw: *mut pthread_rwlock_t) -> c_int {
    if rw.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    if unsafe { forwarded(rw) } {
        let f = glibc!(REAL_UNLOCK, fn(*mut pthread_rwlock_t));
        // SAFETY: a glibc lock; forwarding the caller's argument.
        return unsafe { f(rw) };
    }
    // SAFETY: caller's contract.
    let l = unsafe { lock(rw) };
    let word = view(l);
    // A first guess; a read holder never sees WRITE_LOCKED (no writer gets
    // in while it holds), and a write holder sees its own.
    let s = word.state();
    if s.write_locked() {
        // Relaxed: module doc, "Memory ordering".
        if l.cur_writer.load(Ordering::Relaxed) == crate::thread_id::current() {
            return write_unlock(l);
        }
        return EPERM;
    }
    match word.read_unlock(s, &FutexBitsets) {
        Ok(()) => 0,
        Err(_) => EPERM,
    }
}

// glibc's GLIBC_2.2.5 compatibility names, for programs linked against
// them.

/// `__pthread_rwlock_init`: [`pthread_rwlock_init`].
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_rwlock_init(
    rw: *mut pthread_rwlock_t,
    attr: *const pthread_rwlockattr_t,
) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { pthread_rwlock_init(rw, attr) }
}

/// `__pthread_rwlock_destroy`: [`pthread_rwlock_destroy`].
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_rwlock_destroy(rw: *mut pthread_rwlock_t) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { pthread_rwlock_destroy(rw) }
}

/// `__pthread_rwlock_rdlock`: [`pthread_rwlock_rdlock`].
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_rwlock_rdlock(rw: *mut pthread_rwlock_t) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { pthread_rwlock_rdlock(rw) }
}

/// `__pthread_rwlock_wrlock`: [`pthread_rwlock_wrlock`].
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_rwlock_wrlock(rw: *mut pthread_rwlock_t) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { pthread_rwlock_wrlock(rw) }
}

/// `__pthread_rwlock_tryrdlock`: [`pthread_rwlock_tryrdlock`].
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_rwlock_tryrdlock(rw: *mut pthread_rwlock_t) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { pthread_rwlock_tryrdlock(rw) }
}

/// `__pthread_rwlock_trywrlock`: [`pthread_rwlock_trywrlock`].
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_rwlock_trywrlock(rw: *mut pthread_rwlock_t) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { pthread_rwlock_trywrlock(rw) }
}

/// `__pthread_rwlock_unlock`: [`pthread_rwlock_unlock`].
#[no_mangle]
pub unsafe extern "C-unwind" fn __pthread_rwlock_unlock(rw: *mut pthread_rwlock_t) -> c_int {
    // SAFETY: caller's contract, passed on.
    unsafe { pthread_rwlock_unlock(rw) }
}
