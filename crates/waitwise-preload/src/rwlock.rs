//! `pthread_rwlock_*`: a reader-writer lock whose whole state is one 64-bit
//! word inside the caller's `pthread_rwlock_t`, the futex its low half,
//! with two-phase waiting; reader-preferring or writer-preferring as
//! `pthread_rwlockattr_setkind_np` asks.
//!
//! # Layout (glibc x86-64 `pthread_rwlock_t`, 56 bytes, 8-aligned)
//!
//! ```text
//!  offset  glibc name              here
//!   0      __readers \             STATE, one 64-bit word (below); its low
//!   4      __writers /             half, at offset 0, is the futex word
//!   8      __wrphase_futex         0, unused
//!  12      __writers_futex         0, unused
//!  16      __pad3, __pad4          0, unused
//!  24      __cur_writer            the write holder's thread id, 0 when none
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
//! `STATE` (bit 0 is the lowest of the word at offset 0):
//!
//! ```text
//!  bits 0-27   R: read locks held (at most MAX_READERS = 2^28 - 1, glibc's
//!              limit too; one more is EAGAIN)
//!  bit  28     WRITE_LOCKED
//!  bit  29     WRITERS_WAIT: W > 0 (in the futex half for the readers of a
//!              writer-preferring lock, whom waiting writers keep out)
//!  bit  30     READERS_MAY_SLEEP: a reader may sleep on the futex
//!  bit  31     WRITERS_MAY_SLEEP: a writer may sleep on the futex
//!  bits 32-63  W: writers waiting for the lock (polling or sleeping)
//! ```
//!
//! # Protocol
//!
//! - read lock: `R => R + 1` (one CAS) while not `WRITE_LOCKED` and, for a
//!   writer-preferring lock, no `WRITERS_WAIT`. A reader-preferring lock
//!   lets a reader in while only readers hold it, even if writers wait, so
//!   a thread may take a read lock it already holds without deadlock.
//! - write lock: `R = 0, !WRITE_LOCKED => WRITE_LOCKED` (one CAS); then
//!   `__cur_writer` = the caller's thread id.
//! - read unlock: `R => R - 1`; the last reader clears `WRITERS_MAY_SLEEP`
//!   and, if it was set and `W > 0`, wakes one writer.
//! - write unlock: clears `WRITE_LOCKED`; wakes every reader (clearing
//!   `READERS_MAY_SLEEP`) if one may sleep and readers may now enter
//!   (reader-preferring, or `W = 0`), and one writer (clearing
//!   `WRITERS_MAY_SLEEP`) if one may sleep and `W > 0`.
//! - a waiting reader polls (`alpha * B`, see "Waiting"), then sets
//!   `READERS_MAY_SLEEP` and sleeps while the futex half is unchanged.
//! - a waiting writer counts itself in `W` (setting `WRITERS_WAIT`), polls,
//!   then sets `WRITERS_MAY_SLEEP` and sleeps while the futex half is
//!   unchanged; woken, it polls again. Taking the lock takes it out of `W`
//!   in the same CAS. A writer that was woken owes the other sleepers a
//!   wake-up (the unlock cleared `WRITERS_MAY_SLEEP` and woke only it), as
//!   in waitwise's TTAS mutex: it takes the lock with `WRITERS_MAY_SLEEP`
//!   set while other writers wait, so that its unlock wakes the next.
//! - a writer that gives up (its deadline passed, or glibc unwinds it)
//!   leaves `W`, wakes the readers that it alone kept out (the last waiting
//!   writer of a writer-preferring lock), and pays a wake-up it may owe:
//!   one writer woken if the lock is free, else `WRITERS_MAY_SLEEP` set for
//!   the holder's unlock.
//!
//! Readers and writers sleep on the same word with different futex bit
//! sets (`FUTEX_WAIT_BITSET`), so a writer's wake-up goes to a writer and a
//! readers' wake-up to every reader. Whether to wake comes from the value
//! the unlocking CAS replaced: an unlock never reads or writes the lock
//! after the CAS that lets a waiter go (that waiter may destroy the lock
//! and free its memory at once); only the address goes to the kernel with
//! the wake-up, which is harmless on freed memory (as in [`crate::sem`]).
//! With nobody waiting, lock and unlock are one CAS each and no system
//! call; with writers that only poll (`W > 0`, nobody asleep), none either.
//!
//! No lost wake-up: a waiter sleeps only while the futex half equals a value
//! carrying its may-sleep bit (the kernel compares atomically). Every change
//! that may let a waiter in (`R` to 0, `WRITE_LOCKED` or `WRITERS_WAIT`
//! cleared) is a CAS on that word, which sees the bit and wakes (the bit
//! cleared in the same CAS). Once a waker has cleared the bit, the word
//! cannot come back to the value the waiter sleeps on unless some waiter
//! sets the bit again, and that setting is seen by the next waker: every
//! sleeper is either woken or covered by a bit that a later waker sees.
//! Readers are woken all at once; a woken writer passes the wake-up on
//! (above), and `W = 0` means no writer sleeps, so a stale
//! `WRITERS_MAY_SLEEP` is cleared without a wake-up.
//!
//! Known limit: a writer behind a stream of overlapping readers of a
//! reader-preferring lock (which starves it by that kind's definition) may
//! find its sleeps refused often (the futex half changes with every
//! reader), each refusal a system call.
//!
//! # Waiting
//!
//! Readers and writers poll for `crate::config::poll_limit_ns(SyncKind::Mutex)`:
//! both wait for a lock holder's critical section to end (a writer's, or
//! for a writer the readers' ones), the wait the mutex kind's `alpha`
//! models, not a producer's next item. They poll by yielding
//! (`sched_yield` between looks at the word, as the mutex does): a waiter
//! neither pulls the word's cache line from the holders nor keeps its CPU
//! from a preempted holder. Waits are not profiled yet
//! ([`crate::profile::Kind`] has no rwlock kind).
//!
//! # Unwinding
//!
//! The lock functions are not cancellation points, but glibc may unwind a
//! thread blocked in one (its signal handler calls `pthread_exit`, or it is
//! cancelled asynchronously). A waiting writer registers a cleanup routine
//! with glibc ([`crate::cleanup`]) for the span of its wait that leaves `W`
//! and pays a wake-up it may owe, as a timed-out writer does (without it a
//! dead writer would keep a writer-preferring lock closed to readers for
//! good, or a consumed wake-up would leave the other writers asleep on a
//! free lock). Whether it is in `W` is kept in the waiter's frame, updated
//! next to each CAS, always on the side of giving back too little: an
//! unwind that lands exactly between the CAS and that update (a few
//! instructions) leaves the count behind rather than taking someone else's.
//! A waiting reader registers nothing that needs undoing (a stale
//! `READERS_MAY_SLEEP` costs one needless wake-up call) and is never handed
//! a wake-up meant for someone else (readers are woken all at once), so it
//! needs no cleanup. The waiting paths hold no value with a destructor (see
//! the crate doc), and the futex system call and `sched_yield` are declared
//! `C-unwind`.
//!
//! # Memory ordering
//!
//! Taking the lock (either mode) is an Acquire CAS, every unlock a Release
//! CAS: a writer's critical section happens before the next holder's, and
//! each reader's before the next writer's (every reader's Release
//! decrement heads a release sequence that the later RMWs on `STATE`
//! continue, so the writer's Acquire CAS synchronizes with all of them).
//! The waiters' announcements (`W`, the may-sleep bits) and a writer's
//! giving up are Relaxed RMWs: they publish no data, and the wake-up
//! protocol rests on `STATE`'s single modification order (a CAS compares
//! against the value it read, so an announcement made from a value that a
//! waker had already replaced fails and is redone) plus the kernel's own
//! check of the futex half, not on ordering with other locations. Loads
//! that only seed a CAS, and failed CASes, are Relaxed: the successful CAS
//! is what orders.
//!
//! `__cur_writer` is written only by the write holder, inside its critical
//! section (cleared before its Release CAS), and read by other threads only
//! to compare against their own id, which they can find there only while
//! they hold the write lock: Relaxed, as the mutex's `__owner`. `__flags`
//! and `__shared` are Relaxed too: init (or a static initializer) writes
//! them before the lock is shared, whatever shares it orders them, and they
//! stay fixed for the lock's life; they guard no other data. `destroy`'s
//! look at `STATE` is Relaxed: `EBUSY` is a best-effort diagnostic, as for
//! the mutex.

use crate::{cleanup, config, poll, time};
use libc::{
    pthread_rwlock_t, pthread_rwlockattr_t, timespec, EAGAIN, EBUSY, EDEADLK, EINVAL, EPERM,
    ETIMEDOUT,
};
use std::cell::Cell;
use std::ffi::{c_int, c_long, c_void, CStr};
use std::mem::{align_of, offset_of, size_of};
use std::sync::atomic::{compiler_fence, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use waitwise::platform::thread::sched_yield;
use waitwise::{Deadline, SyncKind};

/// The C library functions used here that the libc crate lacks, or that a
/// waiter may be unwound out of.
mod sys {
    use std::ffi::{c_int, c_long};

    extern "C-unwind" {
        /// glibc's `syscall`, declared `C-unwind`: a thread asleep in the
        /// futex system call may be unwound out of it (module doc,
        /// "Unwinding").
        pub fn syscall(num: c_long, ...) -> c_long;
    }

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

/// `R`'s bits.
const R_MASK: u64 = (1 << 28) - 1;
/// The most read locks held at once; one more is `EAGAIN`.
const MAX_READERS: u64 = R_MASK;
const WRITE_LOCKED: u64 = 1 << 28;
const WRITERS_WAIT: u64 = 1 << 29;
const READERS_MAY_SLEEP: u64 = 1 << 30;
const WRITERS_MAY_SLEEP: u64 = 1 << 31;
/// One writer in `W`.
const W_ONE: u64 = 1 << 32;

/// `__flags` of a writer-preferring lock (`PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP`).
const KIND_WRITER_NONRECURSIVE: u32 = 2;

/// The futex bit set readers sleep with.
const READERS: u32 = 1;
/// The futex bit set writers sleep with.
const WRITERS: u32 = 2;

#[inline(always)]
fn readers(s: u64) -> u64 {
    s & R_MASK
}

#[inline(always)]
fn waiting_writers(s: u64) -> u64 {
    s >> 32
}

/// Neither read- nor write-locked: a writer may take it.
#[inline(always)]
fn free(s: u64) -> bool {
    s & (R_MASK | WRITE_LOCKED) == 0
}

/// A reader may take it (its count permitting).
#[inline(always)]
fn readable(s: u64, writer_preferring: bool) -> bool {
    s & WRITE_LOCKED == 0 && !(writer_preferring && s & WRITERS_WAIT != 0)
}

/// The futex half of `s`.
#[inline(always)]
fn futex_value(s: u64) -> u32 {
    s as u32
}

/// The lock's kind: whether it prefers writers.
#[inline(always)]
fn writer_preferring(l: &Lock) -> bool {
    // Relaxed: fixed for the lock's life (module doc, "Memory ordering").
    l.flags.load(Ordering::Relaxed) == KIND_WRITER_NONRECURSIVE
}

/// The address of the futex half (STATE's low half).
#[inline(always)]
fn futex_word(l: &Lock) -> *const u32 {
    l.state.as_ptr() as *const u32
}

// ---------------------------------------------------------------------
// The C library's own functions, for forwarded (process-shared) locks.

/// One C library function, found on first use with `dlsym(RTLD_NEXT)`:
/// the default version, which is the only one for every rwlock function
/// (glibc 2.36 exports each at `GLIBC_2.2.5` and `GLIBC_2.34` at one
/// address, and the `__pthread_rwlock_*` names at `GLIBC_2.2.5` only).
/// As `crate::real::RealFn`, whose constructor is private to its module.
struct Real {
    name: &'static CStr,
    ptr: AtomicPtr<c_void>,
}

impl Real {
    const fn new(name: &'static CStr) -> Self {
        Self {
            name,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The function's address (never null: a missing one aborts, since
    /// the caller's lock cannot work without it).
    #[inline]
    fn get(&self) -> *mut c_void {
        // Relaxed: the pointer is to code, which needs no publication; two
        // threads resolving at once store the same value.
        let p = self.ptr.load(Ordering::Relaxed);
        if p.is_null() {
            self.resolve()
        } else {
            p
        }
    }

    #[cold]
    fn resolve(&self) -> *mut c_void {
        // SAFETY: a NUL-terminated name; RTLD_NEXT is a valid
        // pseudo-handle inside a shared object.
        let p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
        if p.is_null() {
            eprintln!(
                "waitwise: cannot find the C library's {:?} to forward to; aborting",
                self.name
            );
            std::process::abort();
        }
        // Relaxed: as in `get`.
        self.ptr.store(p, Ordering::Relaxed);
        p
    }
}

static REAL_INIT: Real = Real::new(c"pthread_rwlock_init");
static REAL_DESTROY: Real = Real::new(c"pthread_rwlock_destroy");
static REAL_RDLOCK: Real = Real::new(c"pthread_rwlock_rdlock");
static REAL_WRLOCK: Real = Real::new(c"pthread_rwlock_wrlock");
static REAL_TRYRDLOCK: Real = Real::new(c"pthread_rwlock_tryrdlock");
static REAL_TRYWRLOCK: Real = Real::new(c"pthread_rwlock_trywrlock");
static REAL_TIMEDRDLOCK: Real = Real::new(c"pthread_rwlock_timedrdlock");
static REAL_TIMEDWRLOCK: Real = Real::new(c"pthread_rwlock_timedwrlock");
static REAL_CLOCKRDLOCK: Real = Real::new(c"pthread_rwlock_clockrdlock");
static REAL_CLOCKWRLOCK: Real = Real::new(c"pthread_rwlock_clockwrlock");
static REAL_UNLOCK: Real = Real::new(c"pthread_rwlock_unlock");

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
// Futex operations on the futex half, with bit sets.

/// How a sleep ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slept {
    /// Woken by a wake-up (or spuriously).
    Woken,
    /// Not asleep: the word had changed, or a signal handler ran.
    Refused,
    /// The deadline passed.
    TimedOut,
}

/// Sleeps on `l`'s futex half while it equals `expected`, until woken for
/// `bitset` or `deadline`. Holds no value with a destructor (no landing
/// pads: an unwind may start at any of its instructions).
#[inline(never)]
fn sleep(l: &Lock, expected: u32, bitset: u32, deadline: Deadline) -> Slept {
    let end = deadline.remaining().map(|left| {
        let ns = poll::monotonic_ns()
            .saturating_add(u64::try_from(left.as_nanos()).unwrap_or(u64::MAX))
            .min(i64::MAX as u64);
        timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as c_long,
        }
    });
    let end_ptr = end
        .as_ref()
        .map_or(std::ptr::null(), |ts| ts as *const timespec);
    // SAFETY: the futex half is a valid, aligned u32 of a live lock for the
    // whole call; `end_ptr` is null or points at a live timespec (with
    // FUTEX_WAIT_BITSET, an absolute CLOCK_MONOTONIC time).
    let rc = unsafe {
        sys::syscall(
            libc::SYS_futex,
            futex_word(l),
            libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG,
            expected,
            end_ptr,
            std::ptr::null::<u32>(),
            bitset,
        )
    };
    if rc == 0 {
        return Slept::Woken;
    }
    // SAFETY: errno's slot is the calling thread's.
    match unsafe { *libc::__errno_location() } {
        libc::ETIMEDOUT => Slept::TimedOut,
        _ => Slept::Refused, // EAGAIN, EINTR
    }
}

/// Wakes up to `count` sleepers of `bitset` on the futex at `word`. Only the
/// address reaches the kernel, so the lock may already be freed (module
/// doc, "Protocol").
fn wake(word: *const u32, count: c_int, bitset: u32) {
    // SAFETY: FUTEX_WAKE_BITSET reads no user memory: the kernel only
    // hashes the address (a private futex) and wakes sleepers queued on it.
    unsafe {
        sys::syscall(
            libc::SYS_futex,
            word,
            libc::FUTEX_WAKE_BITSET | libc::FUTEX_PRIVATE_FLAG,
            count,
            std::ptr::null::<timespec>(),
            std::ptr::null::<u32>(),
            bitset,
        )
    };
}

fn wake_readers(word: *const u32) {
    wake(word, c_int::MAX, READERS);
}

fn wake_writer(word: *const u32) {
    wake(word, 1, WRITERS);
}

// ---------------------------------------------------------------------
// Polling.

/// What a poller waits for.
#[derive(Clone, Copy)]
enum Want {
    Read { writer_preferring: bool },
    Write,
}

/// Polls STATE, yielding between looks, until `want` may succeed or the
/// `CLOCK_MONOTONIC` time `end_ns`. No landing pads (as [`sleep`]).
#[inline(never)]
fn poll_state(state: &AtomicU64, end_ns: u64, want: Want) {
    loop {
        // Relaxed: the poll only decides when to try the CAS, which is
        // what acquires.
        let s = state.load(Ordering::Relaxed);
        let ready = match want {
            Want::Read { writer_preferring } => readable(s, writer_preferring),
            Want::Write => free(s),
        };
        if ready {
            return;
        }
        sched_yield();
        if poll::monotonic_ns() >= end_ns {
            return;
        }
    }
}

/// The polling phase of a wait until `deadline`: at most the configured
/// poll limit (`alpha * B`, the mutex kind's `alpha`; module doc).
#[inline]
fn polling_phase(state: &AtomicU64, deadline: Deadline, want: Want) {
    let limit = deadline.cap_ns(config::poll_limit_ns(SyncKind::Mutex));
    if limit > 0 {
        poll_state(state, poll::end_after(limit), want);
    }
}

// ---------------------------------------------------------------------
// Read locks.

/// Why a read lock was not taken at once.
enum TryRead {
    Taken,
    /// Write-locked, or writers wait on a writer-preferring lock; the
    /// state seen.
    Busy(u64),
    /// `R` is at `MAX_READERS`.
    Overflow,
}

/// One attempt at a read lock: `R => R + 1` while readable.
#[inline(always)]
fn try_read(l: &Lock, writer_preferring: bool) -> TryRead {
    // Relaxed: a first guess for the CAS, which is what orders.
    let mut s = l.state.load(Ordering::Relaxed);
    loop {
        if !readable(s, writer_preferring) {
            return TryRead::Busy(s);
        }
        if readers(s) == MAX_READERS {
            return TryRead::Overflow;
        }
        // Acquire: pairs with the last write unlock's Release. Failure
        // Relaxed: the value is only the next guess.
        match l
            .state
            .compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => return TryRead::Taken,
            Err(now) => s = now,
        }
    }
}

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
    let writer_preferring = writer_preferring(l);
    match try_read(l, writer_preferring) {
        TryRead::Taken => 0,
        TryRead::Overflow => EAGAIN,
        TryRead::Busy(s) => read_contended(l, writer_preferring, s, deadline),
    }
}

#[cold]
fn read_contended(
    l: &Lock,
    writer_preferring: bool,
    seen: u64,
    deadline: impl FnOnce() -> Result<Deadline, c_int>,
) -> c_int {
    // Relaxed: __cur_writer holds our id only while we hold the write lock
    // (module doc, "Memory ordering").
    if seen & WRITE_LOCKED != 0 && l.cur_writer.load(Ordering::Relaxed) == crate::mutex::tid() {
        return EDEADLK;
    }
    match deadline() {
        Ok(d) => wait_read(l, writer_preferring, d),
        Err(e) => e,
    }
}

/// A reader's wait: poll, then announce (`READERS_MAY_SLEEP`) and sleep
/// until readable; 0, `EAGAIN` or `ETIMEDOUT`.
fn wait_read(l: &Lock, writer_preferring: bool, deadline: Deadline) -> c_int {
    let want = Want::Read { writer_preferring };
    polling_phase(&l.state, deadline, want);
    loop {
        match try_read(l, writer_preferring) {
            TryRead::Taken => return 0,
            TryRead::Overflow => return EAGAIN,
            TryRead::Busy(s) => {
                if deadline.has_passed() {
                    return ETIMEDOUT;
                }
                let announced = s | READERS_MAY_SLEEP;
                // Relaxed: an announcement (module doc, "Memory ordering");
                // a failure means the word changed: look again.
                if s & READERS_MAY_SLEEP == 0
                    && l.state
                        .compare_exchange(s, announced, Ordering::Relaxed, Ordering::Relaxed)
                        .is_err()
                {
                    continue;
                }
                if sleep(l, futex_value(announced), READERS, deadline) == Slept::Woken {
                    // A writer that did not sleep may have taken it again:
                    // poll before sleeping again (as the writers do).
                    polling_phase(&l.state, deadline, want);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// Write locks.

/// A waiting writer, as its cleanup routine sees it.
struct WriterWait<'a> {
    lock: &'a Lock,
    writer_preferring: bool,
    /// Counted in `W`: the cleanup routine must leave it.
    in_w: Cell<bool>,
    /// May have been handed a wake-up it has not passed on yet (module
    /// doc, "Protocol"): from just before each sleep until the sleep ends
    /// without one, or the debt is paid.
    owes: Cell<bool>,
}

impl WriterWait<'_> {
    /// Sets a field the cleanup routine reads. The compiler fences keep
    /// the store on its side of the neighbouring CAS for the routine, which
    /// glibc may run from a signal handler at any instruction.
    #[inline(always)]
    fn record(cell: &Cell<bool>, value: bool) {
        compiler_fence(Ordering::SeqCst);
        cell.set(value);
        compiler_fence(Ordering::SeqCst);
    }

    /// The wait: count in `W`, poll, sleep; returns whether the lock was
    /// taken (else the deadline passed and the writer left).
    fn wait(&self, deadline: Deadline) -> bool {
        let state = &self.lock.state;
        // Relaxed: a first guess for the CASes below.
        let mut s = state.load(Ordering::Relaxed);
        loop {
            if free(s) {
                // Acquire: pairs with the last unlock's Release. Failure
                // Relaxed: the next guess.
                match state.compare_exchange_weak(
                    s,
                    s | WRITE_LOCKED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return true,
                    Err(now) => s = now,
                }
                continue;
            }
            if deadline.has_passed() {
                return false; // a deadline already past: no need to count
            }
            // Count in W. Relaxed: an announcement (module doc, "Memory
            // ordering"). W cannot overflow: it counts threads.
            match state.compare_exchange_weak(
                s,
                (s + W_ONE) | WRITERS_WAIT,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        Self::record(&self.in_w, true);
        polling_phase(state, deadline, Want::Write);
        loop {
            // Relaxed: a first guess for the CASes below.
            let s = state.load(Ordering::Relaxed);
            if free(s) {
                // Leave W in the CAS that takes the lock; a writer that owes
                // a wake-up keeps WRITERS_MAY_SLEEP for its unlock while
                // other writers wait.
                let owes = self.owes.get();
                Self::record(&self.in_w, false);
                let mut new = (s | WRITE_LOCKED) - W_ONE;
                if waiting_writers(new) == 0 {
                    new &= !(WRITERS_WAIT | WRITERS_MAY_SLEEP);
                } else if owes {
                    new |= WRITERS_MAY_SLEEP;
                }
                // Acquire: pairs with the last unlock's Release. Failure
                // Relaxed: look again.
                if state
                    .compare_exchange(s, new, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return true;
                }
                Self::record(&self.in_w, true);
                continue;
            }
            if deadline.has_passed() {
                let owes = self.owes.get();
                Self::record(&self.in_w, false);
                give_up(self.lock, self.writer_preferring, owes);
                return false;
            }
            // Announce the sleep (this also pays a wake-up owed: the next
            // unlock sees the bit). Relaxed: an announcement; a failure
            // means the word changed: look again.
            let announced = s | WRITERS_MAY_SLEEP;
            if s & WRITERS_MAY_SLEEP == 0
                && state
                    .compare_exchange(s, announced, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            Self::record(&self.owes, true);
            if sleep(self.lock, futex_value(announced), WRITERS, deadline) == Slept::Woken {
                // Woken: the lock was let go, but a writer that did not
                // sleep may have taken it again; poll before sleeping again
                // (as the mutex does). The wake-up is owed on.
                polling_phase(state, deadline, Want::Write);
            } else {
                Self::record(&self.owes, false);
            }
        }
    }
}

/// A waiting writer leaves without the lock (deadline passed, or glibc
/// unwinds it): out of `W`; wakes the readers that only waiting writers
/// kept out of a writer-preferring lock; and, if it `owes` a wake-up (it
/// may have consumed the one that was to let a writer in), wakes one
/// writer if the lock is free, else sets `WRITERS_MAY_SLEEP` for the
/// holder's unlock, when other writers wait.
fn give_up(l: &Lock, writer_preferring: bool, owes: bool) {
    let word = futex_word(l);
    // Relaxed: a first guess for the CAS.
    let mut old = l.state.load(Ordering::Relaxed);
    loop {
        let mut new = old - W_ONE;
        let others = waiting_writers(new) > 0;
        if !others {
            // No writer waits, none sleeps: the bit is stale.
            new &= !(WRITERS_WAIT | WRITERS_MAY_SLEEP);
        }
        let readers_go =
            writer_preferring && !others && old & WRITE_LOCKED == 0 && old & READERS_MAY_SLEEP != 0;
        if readers_go {
            new &= !READERS_MAY_SLEEP;
        }
        let writer_go = owes && others && free(new);
        if writer_go {
            new &= !WRITERS_MAY_SLEEP;
        } else if owes && others {
            new |= WRITERS_MAY_SLEEP;
        }
        // Relaxed: releases no data (module doc, "Memory ordering").
        match l
            .state
            .compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => {
                if readers_go {
                    wake_readers(word);
                }
                if writer_go {
                    wake_writer(word);
                }
                return;
            }
            Err(now) => old = now,
        }
    }
}

/// The cleanup routine of a waiting writer that glibc unwinds: leaves `W`
/// and pays a wake-up it may owe, as a timed-out writer does.
///
/// # Safety
///
/// `ctx` points at the live [`WriterWait`] of a wait of this thread.
unsafe extern "C" fn writer_unwound(ctx: *mut c_void) {
    // SAFETY: caller's contract.
    let w = unsafe { &*(ctx as *const WriterWait<'_>) };
    if w.in_w.get() {
        give_up(w.lock, w.writer_preferring, w.owes.get());
    }
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
    if try_write(l) {
        set_writer(l, crate::mutex::tid());
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

/// Takes the lock for writing if it is free (whoever waits: a waiting
/// writer may be overtaken, as with the mutex).
#[inline(always)]
fn try_write(l: &Lock) -> bool {
    // Relaxed: a first guess for the CAS.
    let mut s = l.state.load(Ordering::Relaxed);
    while free(s) {
        // Acquire: pairs with the last unlock's Release. Failure Relaxed:
        // the next guess.
        match l.state.compare_exchange_weak(
            s,
            s | WRITE_LOCKED,
            Ordering::Acquire,
            Ordering::Relaxed,
        ) {
            Ok(_) => return true,
            Err(now) => s = now,
        }
    }
    false
}

#[cold]
fn write_contended(l: &Lock, deadline: impl FnOnce() -> Result<Deadline, c_int>) -> c_int {
    let me = crate::mutex::tid();
    // Relaxed: __cur_writer holds our id only while we hold the write lock
    // (module doc, "Memory ordering"); STATE's load is a guess.
    if l.state.load(Ordering::Relaxed) & WRITE_LOCKED != 0
        && l.cur_writer.load(Ordering::Relaxed) == me
    {
        return EDEADLK;
    }
    let deadline = match deadline() {
        Ok(d) => d,
        Err(e) => return e,
    };
    let w = WriterWait {
        lock: l,
        writer_preferring: writer_preferring(l),
        in_w: Cell::new(false),
        owes: Cell::new(false),
    };
    // SAFETY: `writer_unwound` takes this thread's live `w` (it outlives
    // the call) and never unwinds.
    let taken = unsafe { cleanup::on_forced_unwind(&w, writer_unwound, || w.wait(deadline)) };
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
    // Everything needed after the CAS is read before it (module doc,
    // "Protocol").
    let writer_preferring = writer_preferring(l);
    let word = futex_word(l);
    // Relaxed: cleared inside the critical section, before the Release CAS.
    l.cur_writer.store(0, Ordering::Relaxed);
    // Relaxed: a first guess for the CAS.
    let mut old = l.state.load(Ordering::Relaxed);
    let (readers_go, writer_go) = loop {
        let writers = waiting_writers(old) > 0;
        let readers_go = old & READERS_MAY_SLEEP != 0 && (!writer_preferring || !writers);
        let writer_go = old & WRITERS_MAY_SLEEP != 0 && writers;
        let mut new = old & !(WRITE_LOCKED | WRITERS_MAY_SLEEP);
        if readers_go {
            new &= !READERS_MAY_SLEEP;
        }
        // Release: publishes the critical section. Failure Relaxed: the
        // next guess.
        match l
            .state
            .compare_exchange_weak(old, new, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => break (readers_go, writer_go),
            Err(now) => old = now,
        }
    };
    // The lock is not touched again: only its address goes to the kernel.
    if readers_go {
        wake_readers(word);
    }
    if writer_go {
        wake_writer(word);
    }
    0
}

/// Releases one read lock, `seen` a first guess at STATE. `EPERM` if none
/// is held.
fn read_unlock(l: &Lock, seen: u64) -> c_int {
    let word = futex_word(l);
    let mut old = seen;
    loop {
        if readers(old) == 0 {
            return EPERM;
        }
        let mut new = old - 1;
        let last = readers(old) == 1;
        let writer_go = last && old & WRITERS_MAY_SLEEP != 0 && waiting_writers(old) > 0;
        if last {
            new &= !WRITERS_MAY_SLEEP;
        }
        // Release: publishes the reader's critical section to the next
        // writer. Failure Relaxed: the next guess.
        match l
            .state
            .compare_exchange_weak(old, new, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => {
                // Only the address goes to the kernel.
                if writer_go {
                    wake_writer(word);
                }
                return 0;
            }
            Err(now) => old = now,
        }
    }
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

/// `pthread_rwlock_destroy`: `EBUSY` while held (or a writer is about to
/// take it), else 0.
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
    // SAFETY: caller's contract.
    let l = unsafe { lock(rw) };
    // Relaxed: a best-effort EBUSY (module doc, "Memory ordering").
    let s = l.state.load(Ordering::Relaxed);
    if readers(s) != 0 || s & WRITE_LOCKED != 0 || waiting_writers(s) != 0 {
        return EBUSY;
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
    match try_read(l, writer_preferring(l)) {
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
    if try_write(l) {
        set_writer(l, crate::mutex::tid());
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
    // Relaxed: a first guess; a read holder never sees WRITE_LOCKED (no
    // writer gets in while it holds), and a write holder sees its own.
    let s = l.state.load(Ordering::Relaxed);
    if s & WRITE_LOCKED != 0 {
        // Relaxed: module doc, "Memory ordering".
        if l.cur_writer.load(Ordering::Relaxed) == crate::mutex::tid() {
            return write_unlock(l);
        }
        return EPERM;
    }
    read_unlock(l, s)
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
