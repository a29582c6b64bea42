//! A reader-writer lock whose whole state is one 64-bit word, its low half
//! a futex: [`RwWordRef`], a view over a borrowed `AtomicU64`, the
//! algorithm of the interposer's `pthread_rwlock_t` (the word is glibc's
//! `__readers` and `__writers`), reader-preferring or writer-preferring
//! ([`RwKind`]). The front end brings its waiting as an [`RwWait`] (a
//! [`TwoPhaseWait`] on the word, [`RwStateWord`], with a sleep in a queue)
//! and its wake-ups as an [`RwWake`] (the waker half of the same protocol,
//! which unlocks take alone).
//!
//! # State word
//!
//! Bit 0 is the lowest; on a little-endian machine the futex half, bits
//! 0-31, is the 32-bit word at the state's own address.
//!
//! ```text
//!  bits 0-27   R: read locks held (at most MAX_READERS = 2^28 - 1, glibc's
//!              limit too; one more is refused)
//!  bit  28     WRITE_LOCKED
//!  bit  29     WRITERS_WAIT: W > 0 (in the futex half for the readers of a
//!              writer-preferring lock, whom waiting writers keep out)
//!  bit  30     READERS_MAY_SLEEP: a reader may sleep on the futex
//!  bit  31     WRITERS_MAY_SLEEP: a writer may sleep on the futex
//!  bits 32-63  W: writers waiting for the lock (polling or sleeping)
//! ```
//!
//! A fresh lock's word is 0: unlocked, nobody waiting.
//!
//! # Protocol
//!
//! - read lock: `R => R + 1` (one CAS) while not `WRITE_LOCKED` and, for a
//!   writer-preferring lock, no `WRITERS_WAIT`. A reader-preferring lock
//!   lets a reader in while only readers hold it, even if writers wait, so
//!   a thread may take a read lock it already holds without deadlock.
//! - write lock: `R = 0, !WRITE_LOCKED => WRITE_LOCKED` (one CAS).
//! - read unlock: `R => R - 1`; the last reader clears `WRITERS_MAY_SLEEP`
//!   and, if it was set and `W > 0`, wakes one writer.
//! - write unlock: clears `WRITE_LOCKED`; wakes every reader (clearing
//!   `READERS_MAY_SLEEP`) if one may sleep and readers may now enter
//!   (reader-preferring, or `W = 0`), and one writer (clearing
//!   `WRITERS_MAY_SLEEP`) if one may sleep and `W > 0`.
//! - a waiting reader polls (the front end's polling phase), then sets
//!   `READERS_MAY_SLEEP` and sleeps while the futex half is unchanged.
//! - a waiting writer counts itself in `W` (setting `WRITERS_WAIT`), polls,
//!   then sets `WRITERS_MAY_SLEEP` and sleeps while the futex half is
//!   unchanged; woken, it polls again. Taking the lock takes it out of `W`
//!   in the same CAS. A writer that was woken owes the other sleepers a
//!   wake-up (the unlock cleared `WRITERS_MAY_SLEEP` and woke only it), as
//!   in waitwise's TTAS mutex: it takes the lock with `WRITERS_MAY_SLEEP`
//!   set while other writers wait, so that its unlock wakes the next.
//! - a writer that gives up (its deadline passed, or the thread is
//!   unwound: [`WaitingWriter::abandon`]) leaves `W`, wakes the readers
//!   that it alone kept out (the last waiting writer of a
//!   writer-preferring lock), and pays a wake-up it may owe: one writer
//!   woken if the lock is free, else `WRITERS_MAY_SLEEP` set for the
//!   holder's unlock.
//!
//! Readers and writers sleep on the same word in different queues
//! ([`RwQueue`]; the interposer uses futex bit sets,
//! `FUTEX_WAIT_BITSET`), so a writer's wake-up goes to a writer and a
//! readers' wake-up to every reader. Whether to wake comes from the value
//! the unlocking CAS replaced: an unlock never reads or writes the lock
//! after the CAS that lets a waiter go (that waiter may destroy the lock
//! and free its memory at once); only the address goes to
//! [`RwWake::wake`], which hands it to the kernel, harmless on freed
//! memory (as for the semaphore). With nobody waiting, lock and unlock are
//! one CAS each and no system call; with writers that only poll (`W > 0`,
//! nobody asleep), none either.
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
//! A contended reader or writer waits until the deadline it is given,
//! through the front end's [`RwWait`], a [`TwoPhaseWait`] over the state
//! word viewed as an [`RwStateWord`] (polls see an [`RwState`], sleeps
//! compare the futex half): its polling phases (how long, on which clock,
//! with which mechanism; one before the first try and one after each
//! sleep that ends in a wake-up), and its sleeps on the futex half, each in
//! a queue ([`RwWait::sleep_in`], which may be a cancellation point, or end
//! in an unwind). Before each sleep the algorithm asks
//! [`RwWait::expired`] whether the wait is over (by default: the deadline
//! has passed). The interposer polls by yielding for the mutex kind's
//! `alpha * B` and sleeps with `FUTEX_WAIT_BITSET`.
//!
//! # Unwinding
//!
//! A waiting writer's registrations (its count in `W`, a wake-up it may
//! owe) must be given back when its thread is unwound out of the wait (a
//! glibc cancellation, a signal handler's `pthread_exit`): the front end
//! runs [`WaitingWriter::abandon`] from a cleanup routine registered for
//! the span of [`WaitingWriter::wait`], which leaves `W` and pays the
//! wake-up, as a timed-out writer does (without it a dead writer would
//! keep a writer-preferring lock closed to readers for good, or a consumed
//! wake-up would leave the other writers asleep on a free lock). Whether
//! it is in `W` is kept in the [`WaitingWriter`], updated next to each
//! CAS, always on the side of giving back too little: an unwind that lands
//! exactly between the CAS and that update (a few instructions) leaves the
//! count behind rather than taking someone else's. A waiting reader
//! registers nothing that needs undoing (a stale `READERS_MAY_SLEEP` costs
//! one needless wake-up call) and is never handed a wake-up meant for
//! someone else (readers are woken all at once), so it needs no cleanup.
//! The waiting paths hold no value with a destructor (an unwind that a
//! signal handler starts may start at any instruction, and Rust aborts one
//! that starts between the call sites of a function with landing pads).
//!
//! # Memory ordering
//!
//! Taking the lock (either mode) is an Acquire CAS, every unlock a Release
//! CAS: a writer's critical section happens before the next holder's, and
//! each reader's before the next writer's (every reader's Release
//! decrement heads a release sequence that the later RMWs on the word
//! continue, so the writer's Acquire CAS synchronizes with all of them).
//! The waiters' announcements (`W`, the may-sleep bits) and a writer's
//! giving up are Relaxed RMWs: they publish no data, and the wake-up
//! protocol rests on the word's single modification order (a CAS compares
//! against the value it read, so an announcement made from a value that a
//! waker had already replaced fails and is redone) plus the kernel's own
//! check of the futex half, not on ordering with other locations. Loads
//! that only seed a CAS or decide when to try one, snapshots, and failed
//! CASes are Relaxed: the successful CAS is what orders. These orderings
//! hold everywhere in this file; the code comments only name them.

use crate::two_phase_wait::{TwoPhaseWait, WaitWord};
use std::cell::Cell;
use std::sync::atomic::compiler_fence;
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::FutexWait;
use waitwise_platform::shim::{AtomicU64, Ordering};

/// `R`'s bits.
const R_MASK: u64 = (1 << 28) - 1;
/// Write-locked.
const WRITE_LOCKED: u64 = 1 << 28;
/// `W > 0`.
const WRITERS_WAIT: u64 = 1 << 29;
/// A reader may sleep on the futex half.
const READERS_MAY_SLEEP: u64 = 1 << 30;
/// A writer may sleep on the futex half.
const WRITERS_MAY_SLEEP: u64 = 1 << 31;
/// One writer in `W`.
const W_ONE: u64 = 1 << 32;

/// Which waiters the lock lets in first when both wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwKind {
    /// A reader enters while only readers hold the lock, even when writers
    /// wait (glibc's default, `PTHREAD_RWLOCK_PREFER_READER_NP`): a thread
    /// may take a read lock it already holds, and writers may starve.
    ReaderPreferring,
    /// Waiting writers keep new readers out
    /// (`PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP`): a thread that
    /// takes a read lock it already holds may deadlock behind a writer.
    WriterPreferring,
}

/// A snapshot of the state word (module docs, "State word").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RwState(u64);

impl RwState {
    /// The state `bits` hold (for a front end's [`TwoPhaseWait::poll`]).
    #[inline(always)]
    pub const fn from_bits(bits: u64) -> Self {
        Self(bits)
    }

    /// The raw word.
    #[inline(always)]
    pub fn bits(self) -> u64 {
        self.0
    }

    /// `R`: read locks held.
    #[inline(always)]
    pub fn readers(self) -> u64 {
        self.0 & R_MASK
    }

    /// Whether a writer holds the lock.
    #[inline(always)]
    pub fn write_locked(self) -> bool {
        self.0 & WRITE_LOCKED != 0
    }

    /// `W`: writers waiting (polling or sleeping).
    #[inline(always)]
    pub fn waiting_writers(self) -> u64 {
        self.0 >> 32
    }

    /// Neither read- nor write-locked: a writer may take it.
    #[inline(always)]
    pub fn is_free(self) -> bool {
        self.0 & (R_MASK | WRITE_LOCKED) == 0
    }

    /// Held in either mode, or a writer waits to take it (what a destroy
    /// calls busy).
    #[inline(always)]
    pub fn is_busy(self) -> bool {
        !self.is_free() || self.waiting_writers() != 0
    }

    /// A reader of a lock of `kind` may take it (its count permitting).
    #[inline(always)]
    pub fn readable(self, kind: RwKind) -> bool {
        let writers_keep_out = kind == RwKind::WriterPreferring && self.0 & WRITERS_WAIT != 0;
        !self.write_locked() && !writers_keep_out
    }

    /// The futex half: what a sleeper compares.
    #[inline(always)]
    pub fn futex_half(self) -> u32 {
        self.0 as u32
    }
}

/// The sleepers a wake-up is for: readers and writers sleep on the same
/// futex half in different queues (the interposer's futex bit sets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwQueue {
    /// Waiting readers: woken all at once.
    Readers,
    /// Waiting writers: woken one at a time.
    Writers,
}

/// The state word of an [`RwWordRef`] as the word a [`TwoPhaseWait`]
/// waits on ([`WaitWord`]): a poll sees an [`RwState`], a sleep compares
/// the futex half (its low 32 bits, at its own address on a little-endian
/// machine). No `Futex` may view that half (it would be a second atomic,
/// of another size, on the same address): only the kernel is handed it,
/// by [`RwStateWord::futex_half`].
#[derive(Debug)]
#[repr(transparent)]
pub struct RwStateWord(AtomicU64);

impl RwStateWord {
    /// Views `word` as a waited word.
    #[inline(always)]
    pub fn from_atomic(word: &AtomicU64) -> &Self {
        // SAFETY: `RwStateWord` is `repr(transparent)` over `AtomicU64`:
        // the layouts are identical and the lifetime is kept.
        unsafe { &*(word as *const AtomicU64 as *const Self) }
    }

    /// The whole word.
    #[inline(always)]
    pub fn value(&self) -> &AtomicU64 {
        &self.0
    }

    /// The futex half's address, for the kernel (never for a Rust
    /// access). Not under loom, whose atomics have no such address.
    #[cfg(not(loom))]
    #[inline(always)]
    pub fn futex_half(&self) -> *const u32 {
        const _: () = assert!(cfg!(target_endian = "little"));
        self.0.as_ptr() as *const u32
    }
}

impl WaitWord for RwStateWord {
    type Value = RwState;

    /// A sleep in no particular queue (`FUTEX_WAIT_BITSET` with every bit
    /// set), which every wake-up of the word ends. A signal handler that
    /// interrupts it ends it as a spurious wake-up.
    #[cfg(not(loom))]
    #[inline]
    fn wait(&self, expected: u32, timeout: Option<Duration>) -> FutexWait {
        // SAFETY: the futex half is a valid, aligned u32 of the word, live
        // for the whole call; only the kernel reads it.
        match unsafe {
            waitwise_platform::futex::wait_bitset(self.futex_half(), expected, timeout, u32::MAX)
        } {
            Ok(slept) => slept,
            Err(waitwise_platform::futex::Interrupted) => FutexWait::Woken,
        }
    }

    /// Loom cannot model the futex half (no atomic of its own: see
    /// [`RwStateWord`]): a changed half refuses, a timed sleep times out at once (as the
    /// platform's loom futex), an untimed one is a spurious wake-up after
    /// a yield. The loom models sleep in their own queues instead.
    #[cfg(loom)]
    fn wait(&self, expected: u32, timeout: Option<Duration>) -> FutexWait {
        // SeqCst: the model's one look at the word, as the loom futex's.
        if self.0.load(Ordering::SeqCst) as u32 != expected {
            return FutexWait::ValueChanged;
        }
        if timeout.is_some() {
            return FutexWait::TimedOut;
        }
        waitwise_platform::shim::yield_now();
        FutexWait::Woken
    }
}

/// How the front end wakes sleepers of an [`RwWordRef`]: the waker half of
/// the protocol whose waiting half is [`RwWait`]. Unlocks take it alone
/// (an unlocking thread does not wait); every [`RwWait`] is one too, for
/// the wake-ups a waiter that gives up pays.
pub trait RwWake {
    /// Wakes every sleeper of `queue` ([`RwQueue::Readers`]) or one
    /// ([`RwQueue::Writers`]) on the futex half of the lock at `word`.
    ///
    /// Only the address may be used (handed to the kernel): the lock may
    /// already be freed (module docs, "Protocol"). Never panics.
    fn wake(&self, word: *const AtomicU64, queue: RwQueue);
}

/// How a contended reader or writer of an [`RwWordRef`] waits: a
/// [`TwoPhaseWait`] on the state word ([`RwStateWord`]) whose sleeps go to
/// a queue, with the front end's say on when the wait is over (as
/// [`LockWait`](super::LockWait) extends it for the TTAS lock). Its
/// polling phases and sleeps hold no value with a destructor: a forced
/// unwind may start in them (module docs, "Unwinding"). The waker half is
/// the [`RwWake`] it extends.
pub trait RwWait: TwoPhaseWait<RwStateWord> + RwWake {
    /// Sleeps in `queue` on `word`'s futex half while it equals `expected`,
    /// at most `timeout`, with [`TwoPhaseWait::sleep`]'s results (the
    /// algorithm sleeps only through this). The default is that sleep, in
    /// no particular queue: every wake-up ends it, which the algorithm
    /// takes as a spurious one when it was meant for the other queue.
    #[inline]
    fn sleep_in(
        &mut self,
        word: &RwStateWord,
        expected: u32,
        timeout: Option<Duration>,
        queue: RwQueue,
    ) -> FutexWait {
        let _ = queue;
        self.sleep(word, expected, timeout)
    }

    /// Whether the wait ends now (asked before each sleep, and before a
    /// writer counts itself in `W`): by default, whether `deadline` (the
    /// algorithm's) has passed. A front end may end it at a point of its
    /// choosing (the loom models time out there).
    #[inline]
    fn expired(&mut self, deadline: Deadline) -> bool {
        deadline.has_passed()
    }
}

/// Why [`RwWordRef::try_read`] took no read lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TryRead {
    /// The caller holds a read lock.
    Taken,
    /// Write-locked, or writers wait on a writer-preferring lock; the
    /// state seen.
    Busy(RwState),
    /// `R` is at [`RwWordRef::MAX_READERS`].
    Overflow,
}

/// How [`RwWordRef::read_contended`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The caller holds a read lock.
    Taken,
    /// `R` is at [`RwWordRef::MAX_READERS`] (POSIX's `EAGAIN`).
    Overflow,
    /// The deadline passed first.
    TimedOut,
}

/// [`RwWordRef::read_unlock`] on a lock that holds no read lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotReadLocked;

/// The reader-writer lock over a borrowed state word (module docs: bits,
/// protocol, ordering): the one copy of the algorithm, for front ends
/// whose word lives elsewhere (the interposer's `pthread_rwlock_t`).
/// Every thread that uses the word must go through this view, with the
/// same kind.
///
/// # Examples
/// ```
/// use std::sync::atomic::AtomicU64;
/// use waitwise::mutex::{RwKind, RwQueue, RwWake, RwWordRef, TryRead};
///
/// /// Nobody sleeps in this example: wake-ups find nobody.
/// struct NoSleepers;
/// impl RwWake for NoSleepers {
///     fn wake(&self, _word: *const AtomicU64, _queue: RwQueue) {}
/// }
///
/// let word = AtomicU64::new(0);
/// let lock = RwWordRef::new(&word, RwKind::WriterPreferring);
/// assert_eq!(lock.try_read(), TryRead::Taken);
/// assert_eq!(lock.try_read(), TryRead::Taken);
/// assert!(!lock.try_write());
/// lock.read_unlock(lock.state(), &NoSleepers).unwrap();
/// lock.read_unlock(lock.state(), &NoSleepers).unwrap();
/// assert!(lock.try_write());
/// assert!(matches!(lock.try_read(), TryRead::Busy(s) if s.write_locked()));
/// lock.write_unlock(&NoSleepers);
/// assert!(!lock.state().is_busy());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RwWordRef<'a> {
    word: &'a AtomicU64,
    kind: RwKind,
}

impl<'a> RwWordRef<'a> {
    /// The most read locks held at once; one more is refused
    /// ([`TryRead::Overflow`]).
    pub const MAX_READERS: u64 = R_MASK;

    /// A view over `word` (0: a fresh, unlocked lock) of kind `kind`.
    #[inline(always)]
    pub fn new(word: &'a AtomicU64, kind: RwKind) -> Self {
        Self { word, kind }
    }

    /// The state word (its low half is the futex).
    #[inline(always)]
    pub fn word(self) -> &'a AtomicU64 {
        self.word
    }

    /// The state word as the word an [`RwWait`] polls and sleeps on.
    #[inline(always)]
    pub fn state_word(self) -> &'a RwStateWord {
        RwStateWord::from_atomic(self.word)
    }

    /// The lock's kind.
    #[inline(always)]
    pub fn kind(self) -> RwKind {
        self.kind
    }

    /// A snapshot of the state (it may change at once).
    #[inline]
    pub fn state(self) -> RwState {
        // Relaxed: a snapshot (module docs, "Memory ordering").
        RwState(self.word.load(Ordering::Relaxed))
    }

    /// One attempt at a read lock: `R => R + 1` while readable; never
    /// waits.
    #[inline]
    pub fn try_read(self) -> TryRead {
        let mut s = self.state();
        loop {
            if !s.readable(self.kind) {
                return TryRead::Busy(s);
            }
            if s.readers() == Self::MAX_READERS {
                return TryRead::Overflow;
            }
            // Acquire: pairs with the last write unlock's Release.
            match self.word.compare_exchange_weak(
                s.0,
                s.0 + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return TryRead::Taken,
                Err(now) => s = RwState(now),
            }
        }
    }

    /// A reader's wait, after [`RwWordRef::try_read`] found the lock busy:
    /// poll, then announce (`READERS_MAY_SLEEP`) and sleep until readable
    /// or the wait is over ([`RwWait::expired`], by default `deadline`).
    #[cold]
    pub fn read_contended(self, wait: &mut impl RwWait, deadline: Deadline) -> ReadOutcome {
        let kind = self.kind;
        let word = self.state_word();
        polling_phase(wait, word, deadline, |s| s.readable(kind));
        loop {
            let s = match self.try_read() {
                TryRead::Taken => return ReadOutcome::Taken,
                TryRead::Overflow => return ReadOutcome::Overflow,
                TryRead::Busy(s) => s,
            };
            if wait.expired(deadline) {
                return ReadOutcome::TimedOut;
            }
            let announced = RwState(s.0 | READERS_MAY_SLEEP);
            // Relaxed: an announcement; a failure means the word changed:
            // look again.
            if s.0 & READERS_MAY_SLEEP == 0
                && self
                    .word
                    .compare_exchange(s.0, announced.0, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            let timeout = deadline.remaining();
            let slept = wait.sleep_in(word, announced.futex_half(), timeout, RwQueue::Readers);
            if slept == FutexWait::Woken {
                // A writer that did not sleep may have taken it again:
                // poll before sleeping again (as the writers do).
                polling_phase(wait, word, deadline, |s| s.readable(kind));
            }
        }
    }

    /// Takes the lock for writing if it is free (whoever waits: a waiting
    /// writer may be overtaken, as with the mutex); never waits.
    #[inline]
    pub fn try_write(self) -> bool {
        let mut s = self.state();
        while s.is_free() {
            // Acquire: pairs with the last unlock's Release.
            match self.word.compare_exchange_weak(
                s.0,
                s.0 | WRITE_LOCKED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => s = RwState(now),
            }
        }
        false
    }

    /// Releases the write lock the caller holds. After the CAS that lets
    /// waiters go it reads nothing of the lock: only its address goes to
    /// `wake`.
    pub fn write_unlock(self, wake: &impl RwWake) {
        // Everything needed after the CAS is read before it.
        let (word, kind) = (self.address(), self.kind);
        let mut old = self.state();
        let (readers_go, writer_go) = loop {
            let writers = old.waiting_writers() > 0;
            let readers_go =
                old.0 & READERS_MAY_SLEEP != 0 && (kind == RwKind::ReaderPreferring || !writers);
            let writer_go = old.0 & WRITERS_MAY_SLEEP != 0 && writers;
            let mut new = old.0 & !(WRITE_LOCKED | WRITERS_MAY_SLEEP);
            if readers_go {
                new &= !READERS_MAY_SLEEP;
            }
            // Release: publishes the critical section.
            match self
                .word
                .compare_exchange_weak(old.0, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => break (readers_go, writer_go),
                Err(now) => old = RwState(now),
            }
        };
        if readers_go {
            wake.wake(word, RwQueue::Readers);
        }
        if writer_go {
            wake.wake(word, RwQueue::Writers);
        }
    }

    /// Releases one read lock, `seen` a first guess at the state (a recent
    /// [`RwWordRef::state`]); [`NotReadLocked`] if none is held. After the
    /// CAS it reads nothing of the lock, as [`RwWordRef::write_unlock`].
    pub fn read_unlock(self, seen: RwState, wake: &impl RwWake) -> Result<(), NotReadLocked> {
        let word = self.address();
        let mut old = seen;
        loop {
            if old.readers() == 0 {
                return Err(NotReadLocked);
            }
            let mut new = old.0 - 1;
            let last = old.readers() == 1;
            let writer_go = last && old.0 & WRITERS_MAY_SLEEP != 0 && old.waiting_writers() > 0;
            if last {
                new &= !WRITERS_MAY_SLEEP;
            }
            // Release: publishes the reader's critical section to the next
            // writer.
            match self
                .word
                .compare_exchange_weak(old.0, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    if writer_go {
                        wake.wake(word, RwQueue::Writers);
                    }
                    return Ok(());
                }
                Err(now) => old = RwState(now),
            }
        }
    }

    /// A waiting writer leaves without the lock (deadline passed, or its
    /// thread is unwound): out of `W`; wakes the readers that only waiting
    /// writers kept out of a writer-preferring lock; and, if it `owes` a
    /// wake-up (it may have consumed the one that was to let a writer in),
    /// wakes one writer if the lock is free, else sets `WRITERS_MAY_SLEEP`
    /// for the holder's unlock, when other writers wait.
    fn give_up(self, owes: bool, wake: &impl RwWake) {
        let word = self.address();
        let writer_preferring = self.kind == RwKind::WriterPreferring;
        let mut old = self.state();
        loop {
            let mut new = old.0 - W_ONE;
            let others = RwState(new).waiting_writers() > 0;
            if !others {
                // No writer waits, none sleeps: the bit is stale.
                new &= !(WRITERS_WAIT | WRITERS_MAY_SLEEP);
            }
            let readers_go = writer_preferring
                && !others
                && !old.write_locked()
                && old.0 & READERS_MAY_SLEEP != 0;
            if readers_go {
                new &= !READERS_MAY_SLEEP;
            }
            let writer_go = owes && others && RwState(new).is_free();
            if writer_go {
                new &= !WRITERS_MAY_SLEEP;
            } else if owes && others {
                new |= WRITERS_MAY_SLEEP;
            }
            // Relaxed: releases no data (module docs, "Memory ordering").
            match self
                .word
                .compare_exchange_weak(old.0, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    if readers_go {
                        wake.wake(word, RwQueue::Readers);
                    }
                    if writer_go {
                        wake.wake(word, RwQueue::Writers);
                    }
                    return;
                }
                Err(now) => old = RwState(now),
            }
        }
    }

    /// The word's address, for [`RwWake::wake`].
    #[inline(always)]
    fn address(self) -> *const AtomicU64 {
        self.word
    }
}

/// One polling phase of `wait` on `word` until `ready`, if the front end
/// has one; the waiter tries the word after it either way.
#[inline(always)]
fn polling_phase(
    wait: &mut impl RwWait,
    word: &RwStateWord,
    deadline: Deadline,
    ready: impl FnMut(RwState) -> bool,
) {
    if wait.start_polling(deadline) {
        wait.poll(word, ready);
    }
}

/// A writer waiting for an [`RwWordRef`], as a cleanup routine sees it:
/// whether it is counted in `W` and whether it may owe a wake-up (module
/// docs, "Unwinding"). Holds no value with a destructor.
///
/// # Examples
/// ```
/// use std::sync::atomic::AtomicU64;
/// use waitwise::mutex::{RwKind, RwQueue, RwState, RwStateWord, RwWait, RwWake, RwWordRef, WaitingWriter};
/// use waitwise::two_phase_wait::TwoPhaseWait;
/// use waitwise::Deadline;
///
/// /// A wait with no polling phase, and nobody asleep.
/// struct NoPolling;
/// impl RwWake for NoPolling {
///     fn wake(&self, _word: *const AtomicU64, _queue: RwQueue) {}
/// }
/// impl TwoPhaseWait<RwStateWord> for NoPolling {
///     fn start_polling(&mut self, _deadline: Deadline) -> bool { false }
///     fn poll(&mut self, _word: &RwStateWord, _ready: impl FnMut(RwState) -> bool) -> bool {
///         false
///     }
/// }
/// impl RwWait for NoPolling {}
///
/// let word = AtomicU64::new(0);
/// let lock = RwWordRef::new(&word, RwKind::ReaderPreferring);
/// assert!(lock.try_write());
/// let writer = WaitingWriter::new(lock);
/// let past = Deadline::after(std::time::Duration::ZERO);
/// assert!(!writer.wait(&mut NoPolling, past)); // timed out
/// assert_eq!(lock.state().waiting_writers(), 0);
/// lock.write_unlock(&NoPolling);
/// assert!(writer.wait(&mut NoPolling, past)); // free: taken at once
/// ```
#[derive(Debug)]
pub struct WaitingWriter<'a> {
    lock: RwWordRef<'a>,
    /// Counted in `W`: a cleanup must leave it.
    in_w: Cell<bool>,
    /// May have been handed a wake-up it has not passed on yet (module
    /// docs, "Protocol"): from just before each sleep until the sleep ends
    /// without one, or the debt is paid.
    owes: Cell<bool>,
}

impl<'a> WaitingWriter<'a> {
    /// A writer about to wait for `lock`, not counted anywhere yet.
    #[inline]
    pub fn new(lock: RwWordRef<'a>) -> Self {
        Self {
            lock,
            in_w: Cell::new(false),
            owes: Cell::new(false),
        }
    }

    /// Sets a field [`WaitingWriter::abandon`] reads. The compiler fences
    /// keep the store on its side of the neighbouring CAS for a cleanup
    /// routine that runs from a signal handler at any instruction.
    #[inline(always)]
    fn record(cell: &Cell<bool>, value: bool) {
        compiler_fence(Ordering::SeqCst);
        cell.set(value);
        compiler_fence(Ordering::SeqCst);
    }

    /// The wait, after [`RwWordRef::try_write`] failed: count in `W`,
    /// poll, sleep; returns whether the lock was taken (else the wait was
    /// over, [`RwWait::expired`], by default `deadline`, and the writer
    /// left, its wake-ups paid).
    pub fn wait(&self, wait: &mut impl RwWait, deadline: Deadline) -> bool {
        let word = self.lock.word;
        let state_word = self.lock.state_word();
        let mut s = self.lock.state();
        loop {
            if s.is_free() {
                // Acquire: pairs with the last unlock's Release.
                match word.compare_exchange_weak(
                    s.0,
                    s.0 | WRITE_LOCKED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return true,
                    Err(now) => s = RwState(now),
                }
                continue;
            }
            if wait.expired(deadline) {
                return false; // a deadline already past: no need to count
            }
            // Count in W. Relaxed: an announcement. W cannot overflow: it
            // counts threads.
            match word.compare_exchange_weak(
                s.0,
                (s.0 + W_ONE) | WRITERS_WAIT,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = RwState(now),
            }
        }
        Self::record(&self.in_w, true);
        polling_phase(wait, state_word, deadline, RwState::is_free);
        loop {
            let s = self.lock.state();
            if s.is_free() {
                // Leave W in the CAS that takes the lock; a writer that owes
                // a wake-up keeps WRITERS_MAY_SLEEP for its unlock while
                // other writers wait.
                let owes = self.owes.get();
                Self::record(&self.in_w, false);
                let mut new = (s.0 | WRITE_LOCKED) - W_ONE;
                if RwState(new).waiting_writers() == 0 {
                    new &= !(WRITERS_WAIT | WRITERS_MAY_SLEEP);
                } else if owes {
                    new |= WRITERS_MAY_SLEEP;
                }
                // Acquire: pairs with the last unlock's Release.
                if word
                    .compare_exchange(s.0, new, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return true;
                }
                Self::record(&self.in_w, true);
                continue;
            }
            if wait.expired(deadline) {
                let owes = self.owes.get();
                Self::record(&self.in_w, false);
                self.lock.give_up(owes, wait);
                return false;
            }
            // Announce the sleep (this also pays a wake-up owed: the next
            // unlock sees the bit). Relaxed: an announcement; a failure
            // means the word changed: look again.
            let announced = RwState(s.0 | WRITERS_MAY_SLEEP);
            if s.0 & WRITERS_MAY_SLEEP == 0
                && word
                    .compare_exchange(s.0, announced.0, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            Self::record(&self.owes, true);
            let timeout = deadline.remaining();
            let slept = wait.sleep_in(
                state_word,
                announced.futex_half(),
                timeout,
                RwQueue::Writers,
            );
            if slept == FutexWait::Woken {
                // Woken: the lock was let go, but a writer that did not
                // sleep may have taken it again; poll before sleeping again
                // (as the mutex does). The wake-up is owed on.
                polling_phase(wait, state_word, deadline, RwState::is_free);
            } else {
                Self::record(&self.owes, false);
            }
        }
    }

    /// The cleanup of a writer unwound out of [`WaitingWriter::wait`]:
    /// leaves `W` and pays a wake-up it may owe, as a timed-out writer
    /// does; nothing if it was not counted. Never panics; to be run once,
    /// from a cleanup routine (not a drop guard: module docs, "Unwinding").
    pub fn abandon(&self, wake: &impl RwWake) {
        if self.in_w.get() {
            self.lock.give_up(self.owes.get(), wake);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Records the wake-ups; nobody sleeps.
    #[derive(Default)]
    struct Wakes(std::cell::RefCell<Vec<RwQueue>>);

    impl RwWake for Wakes {
        fn wake(&self, _word: *const AtomicU64, queue: RwQueue) {
            self.0.borrow_mut().push(queue);
        }
    }

    #[test]
    fn readers_share_writers_exclude() {
        let w = AtomicU64::new(0);
        let l = RwWordRef::new(&w, RwKind::ReaderPreferring);
        let wakes = Wakes::default();
        assert_eq!(l.try_read(), TryRead::Taken);
        assert_eq!(l.try_read(), TryRead::Taken);
        assert_eq!(l.state().readers(), 2);
        assert!(!l.try_write());
        l.read_unlock(l.state(), &wakes).unwrap();
        l.read_unlock(l.state(), &wakes).unwrap();
        assert_eq!(l.read_unlock(l.state(), &wakes), Err(NotReadLocked));
        assert!(l.try_write());
        assert!(l.state().write_locked());
        assert!(matches!(l.try_read(), TryRead::Busy(s) if s.write_locked()));
        l.write_unlock(&wakes);
        assert_eq!(l.state(), RwState(0));
        assert!(wakes.0.borrow().is_empty(), "nobody slept: no wake-up");
    }

    #[test]
    fn overflow_at_max_readers() {
        let w = AtomicU64::new(RwWordRef::MAX_READERS);
        let l = RwWordRef::new(&w, RwKind::ReaderPreferring);
        assert_eq!(l.try_read(), TryRead::Overflow);
    }

    #[test]
    fn waiting_writers_keep_readers_out_of_a_writer_preferring_lock() {
        let w = AtomicU64::new(1 | W_ONE | WRITERS_WAIT); // one reader, one writer waiting
        let wp = RwWordRef::new(&w, RwKind::WriterPreferring);
        assert!(matches!(wp.try_read(), TryRead::Busy(_)));
        let rp = RwWordRef::new(&w, RwKind::ReaderPreferring);
        assert_eq!(rp.try_read(), TryRead::Taken);
    }

    #[test]
    fn unlocks_wake_only_announced_sleepers() {
        let wakes = Wakes::default();
        // Write-locked, a reader and a writer announced, one writer waiting.
        let w = AtomicU64::new(
            WRITE_LOCKED | READERS_MAY_SLEEP | WRITERS_MAY_SLEEP | W_ONE | WRITERS_WAIT,
        );
        RwWordRef::new(&w, RwKind::WriterPreferring).write_unlock(&wakes);
        // Writer-preferring with a writer waiting: only the writer.
        assert_eq!(*wakes.0.borrow(), [RwQueue::Writers]);
        let w = AtomicU64::new(
            WRITE_LOCKED | READERS_MAY_SLEEP | WRITERS_MAY_SLEEP | W_ONE | WRITERS_WAIT,
        );
        wakes.0.borrow_mut().clear();
        RwWordRef::new(&w, RwKind::ReaderPreferring).write_unlock(&wakes);
        assert_eq!(*wakes.0.borrow(), [RwQueue::Readers, RwQueue::Writers]);
        // The last reader wakes an announced writer.
        let w = AtomicU64::new(1 | WRITERS_MAY_SLEEP | W_ONE | WRITERS_WAIT);
        wakes.0.borrow_mut().clear();
        let l = RwWordRef::new(&w, RwKind::ReaderPreferring);
        l.read_unlock(l.state(), &wakes).unwrap();
        assert_eq!(*wakes.0.borrow(), [RwQueue::Writers]);
        assert_eq!(l.state().bits(), W_ONE | WRITERS_WAIT);
    }

    #[test]
    fn an_abandoned_writer_leaves_w_and_wakes_the_readers_it_kept_out() {
        let wakes = Wakes::default();
        let w = AtomicU64::new(1 | READERS_MAY_SLEEP | W_ONE | WRITERS_WAIT);
        let l = RwWordRef::new(&w, RwKind::WriterPreferring);
        let writer = WaitingWriter::new(l);
        writer.abandon(&wakes); // not counted: nothing
        assert!(wakes.0.borrow().is_empty());
        WaitingWriter::record(&writer.in_w, true);
        writer.abandon(&wakes);
        assert_eq!(*wakes.0.borrow(), [RwQueue::Readers]);
        assert_eq!(l.state().bits(), 1);
    }
}
