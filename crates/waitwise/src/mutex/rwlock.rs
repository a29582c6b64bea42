//! [`RawRwLock`]: a writer-preferring reader-writer lock on one state
//! word, with a readers' turn after each write that readers waited for,
//! and upgradable reads, whose waiters poll the state and sleep on a wake
//! epoch beside it.
//!
//! # State word
//!
//! ```text
//!  bit  31     WRITE_LOCKED     a writer holds the lock
//!  bit  30     READ_TURN        readers may enter although writers wait
//!  bit  29     READERS_WAITING  a reader waits because of a writer
//!  bits 28..26 writers starving (3 bits, at most MAX_WRITERS_STARVING),
//!              counted among the waiting writers as well
//!  bits 25..17 writers waiting (9 bits, at most MAX_WRITERS_WAITING)
//!  bit  16     SLEEPING         a waiter may sleep on the wake epoch
//!  bit  15     UPGRADABLE       an upgradable reader holds the lock,
//!                               counted among the readers as well
//!  bits 14..0  readers holding (15 bits, at most MAX_READERS)
//! ```
//!
//! Writer-preferring: a reader does not enter while a writer holds *or
//! waits for* the lock, so a stream of readers cannot starve writers (a
//! thread that takes a read lock twice can deadlock with a waiting writer,
//! as with std's `RwLock`). Writers that queue behind each other cannot
//! starve the readers either: a write unlock that finds `READERS_WAITING`
//! while writers wait sets `READ_TURN`, which lets readers in ahead of the
//! waiting writers until the first of them leaves, and keeps the writers
//! out until then or until the readers' grace has passed with none of
//! them in (below). A waiting reader thus gets in after the writer that
//! holds the lock when it starts waiting, or at the next turn if it does
//! not run during that one (it sets `READERS_WAITING` again); a waiting
//! writer waits for at most the readers of one turn, which close it as
//! soon as one of them leaves. Among writers the lock is unfair within a
//! bound (below, "Bounded unfairness among writers").
//!
//! A write unlock with no writer waiting keeps no turn: the lock is free
//! to whoever takes it first. A lone writer that locks again at once
//! (no work between its writes) usually wins that race against a waiting
//! reader, which sees the release a cache-line transfer later, so such a
//! writer can hold the readers off for long stretches, as parking_lot's
//! writers can. A turn kept at such a release would make each of the
//! writer's acquisitions wait for a reader to run: on a busy machine,
//! where that reader is often preempted, the writer's grace (by `yield`)
//! would then cost it whole scheduler slices.
//!
//! Transitions (each one CAS or RMW on the word):
//! - read lock: `!WRITE_LOCKED && (writers_waiting == 0 || READ_TURN) =>
//!   readers + 1`; otherwise set `READERS_WAITING` and wait for that
//!   condition, or for a write unlock to take the request (the bit
//!   cleared), then set it again: a reader that did not run during its
//!   turn, polling or asleep, asks for the next one.
//! - read unlock: `readers - 1`, clearing `READ_TURN`; if it was the last
//!   reader (or the lock was full), also clear `SLEEPING` and, if it was
//!   set, wake the sleepers.
//! - write lock: `readers == 0 && !WRITE_LOCKED && !READ_TURN &&
//!   writers_starving == 0 => WRITE_LOCKED` (a barging `try` included);
//!   otherwise register (`writers_waiting + 1`), wait for `readers == 0
//!   && !WRITE_LOCKED` (and `writers_starving == 0` unless starving), then
//!   `writers_waiting - 1 | WRITE_LOCKED` (and `writers_starving - 1` if
//!   starving) in one CAS. If `READ_TURN`
//!   is still set then, no reader has entered: the writer polls for
//!   [`READ_TURN_GRACE_B`] times `B` (yielding, which runs a woken reader
//!   on this CPU) for a reader to enter, then takes the lock, clearing
//!   `READ_TURN` in the same CAS (a turn nobody uses ends: the reader that
//!   asked for it may have timed out). No grace when the waiting readers
//!   were preempted (below, "A turn for a reader that does not run"). A
//!   timed-out writer unregisters,
//!   clearing `SLEEPING`, and wakes the sleepers if it was set (readers it
//!   held back may now enter).
//! - write unlock: `- WRITE_LOCKED`, and `READERS_WAITING => READ_TURN` if
//!   writers wait (the bit is cleared either way), `SLEEPING` cleared;
//!   wake the sleepers if it was set (below, "Who sleeps").
//! - downgrade: the write unlock with `readers + 1` in the same CAS (the
//!   writer now holds a read lock; no writer gets in between).
//! - recursive read lock (for a thread that may hold a read lock
//!   already): `!WRITE_LOCKED => readers + 1`, ignoring waiting writers
//!   and turns (a writer waiting for this thread's first read lock would
//!   otherwise wait forever); it waits only for the write unlock, which
//!   wakes the sleepers.
//! - upgradable read lock, its unlock and the upgrade: below,
//!   "Upgradable reads".
//! - a waiter about to sleep: `=> | SLEEPING` (unless set already), then
//!   sleep on the wake epoch.
//! - a waiting writer beaten to the lock by writers in
//!   [`HAND_OFF_AFTER_LOST_ROUNDS`] rounds: `writers_starving + 1` (below).
//!
//! # Upgradable reads
//!
//! An upgradable reader is a reader that may later become the writer
//! without letting another writer in between (lock_api's
//! `RawRwLockUpgrade`). It holds `UPGRADABLE` and is counted in `readers`
//! as well, so everything that waits for the readers (writers need
//! `readers == 0`) waits for it too, and plain readers enter beside it as
//! beside any reader. `UPGRADABLE` admits one: a second upgradable reader
//! waits, as two of them could otherwise each wait for the other to leave
//! in order to upgrade.
//!
//! - upgradable read lock: `readable && !UPGRADABLE => readers + 1 |
//!   UPGRADABLE`; kept out by a writer, it asks for a turn as a reader does;
//!   kept out by `UPGRADABLE` alone, it waits for that bit to clear.
//! - upgradable unlock: `readers - 1`, `UPGRADABLE` and `READ_TURN`
//!   cleared (the first reader out ends a turn); `SLEEPING` cleared and
//!   the sleepers woken if it was set (another upgradable reader may wait
//!   for the bit, a writer for the last reader).
//! - upgrade: the upgradable reader counts itself as a waiting writer
//!   (`writers_waiting + 1`: new readers keep out, as from any waiting
//!   writer, except during a readers' turn that was already granted), waits
//!   for `readers == 1` (itself), then `readers - 1 - UPGRADABLE -
//!   WRITER_WAITING | WRITE_LOCKED`, ending a readers' turn, in one CAS. It
//!   ignores `writers_starving`: a starving writer waits for the upgrader's
//!   read lock to go, so the upgrader must not wait for it. A read unlock
//!   that leaves the upgrader alone (`readers == 2` with `UPGRADABLE`)
//!   wakes the sleepers, as the last read unlock does. A timed-out upgrade
//!   leaves the count as a timed-out writer does, and keeps its upgradable
//!   read lock. With the count full it waits uncounted (readers may still
//!   enter then) until the count has room or the readers are gone.
//! - downgrade of an upgradable read to a plain read: `- UPGRADABLE`,
//!   waking the sleepers if `SLEEPING` was set (another upgradable reader
//!   may enter).
//! - downgrade of the write lock to an upgradable read: the write unlock
//!   with `readers + 1 | UPGRADABLE` in the same CAS.
//!
//! # Bounded unfairness among writers
//!
//! A running writer takes a released lock before a woken one gets a CPU,
//! as with the mutex, which keeps the lock busy and lets one waiting writer
//! lose race after race. Its bound: a waiting writer counts the rounds it
//! loses to another writer (it saw the lock free for it, or came back from
//! a kernel wake-up, and found it write-locked with no writer starving),
//! and after [`HAND_OFF_AFTER_LOST_ROUNDS`] of them counts itself in
//! `writers_starving`. While that count is above zero, only a starving
//! writer may take the write lock: barging writers and waiting writers
//! that do not starve keep out (readers keep their turns). A round counts
//! as lost only on a word whose count is zero, so while the count stays
//! above zero no writer starts starving but one that lost its last round
//! before the count rose: once a writer starves, the writers ahead of it
//! are at most the others that were waiting when the count rose from zero,
//! each served once, and each write may be followed by one readers' turn.
//! Then the count is zero and the lock is unfair again.
//!
//! The lock is left free, while a starving writer is not running, until it
//! runs (a wake-up latency, `B`, if it slept). So that a lock saturated by
//! writers does not pay that at almost every write, a writer may start
//! starving only when the mutex's pace ([`HandOffPace`],
//! [`hand_off_interval_ns`]) has passed since a starving writer was last
//! served: a waiting writer is passed over for at most about that
//! interval, then the writers already waiting, before it has the lock.
//!
//! # A turn for a reader that does not run
//!
//! A readers' turn keeps the writers out until a reader enters, or for the
//! grace, which is the time a reader woken by the write unlock needs to
//! run. A reader preempted while it polls needs the scheduler instead (up
//! to a time slice), and the writers yielding through the grace meanwhile
//! keep the lock idle. So waiting readers publish a beat, as the FIFO
//! locks' waiters do (`liveness.rs`): one word for all of them, stored by
//! each polling reader every [`BEAT_NS`](super::liveness::BEAT_NS) and by
//! a reader about to sleep. A writer that finds an unused turn skips the
//! grace when the last beat is a poll older than
//! [`STALE_NS`](super::liveness::STALE_NS): the last reader to beat was
//! preempted, and no reader has polled or slept since. The turn ends
//! unused; the reader asks again when it runs, and a reader that polls
//! gets in at the next write unlock, which grants its turn while it runs
//! (its beat fresh, the grace waits for it). A reader that sleeps keeps
//! the grace. A reader that polls by yielding is off its CPU at almost
//! every turn and could miss them all; so a reader that has missed
//! [`MAX_PASSES`](super::liveness::MAX_PASSES) turns in one acquisition
//! publishes itself *patient*, and a patient beat always keeps the grace,
//! as in the FIFO locks. A skip therefore costs a reader at most that many
//! turns while it is the last to beat. Cost: a clock read and a store per
//! µs of a reader's polling, a cache line away from the state word, and
//! one load when a turn is unused. A reader polls to its limit only,
//! without the idle extension (`policy/idle_extension.rs`), which would
//! not beat.
//!
//! # Who sleeps
//!
//! Waiters poll the state word (the policy's mechanism, `backoff` by
//! default) and then sleep, but not on the state word: it changes at every
//! acquisition and release, so a futex sleep on it would be refused again
//! and again (`EAGAIN`) while the lock is busy, and a sleeper count beside
//! it would stay above zero through that loop, making almost every release
//! a `futex_wake` for nobody (with 7 writers and 1 reader on 2 CPUs, 3.8
//! million wake calls in 2 s, 565 of which woke anyone). Instead a waiter
//! sets `SLEEPING` in the state (a CAS that also re-checks its condition)
//! and sleeps on the *wake epoch*, a second word that only wakers change.
//! Every change that may let a sleeper in clears `SLEEPING` in its own CAS
//! and, if it was set, advances the epoch and wakes every sleeper: a write
//! unlock; the last read unlock (writers wait for it), one that leaves
//! room in a full lock, or one that leaves an upgradable reader alone (it
//! may wait to upgrade); an upgradable unlock and the downgrade of an
//! upgradable read (another upgradable reader may wait); a writer or an
//! upgrader giving up (readers it held back, writers its starving kept
//! out). Nothing else can make a waiter's condition true: taking the
//! lock, registering, starving, asking for a turn and upgrading only keep
//! others out. (An upgrade turns the wait of an upgradable reader that
//! waited for `UPGRADABLE` into "ask for a turn" without waking it; asking
//! would not let it in before the write unlock, which wakes it.) A woken
//! thread that must wait again sets `SLEEPING` again. So a release makes a
//! system call only when someone went to sleep since the last wake-up,
//! and a sleeper wakes only at a change that may concern it.
//!
//! Readers and writers sleep on the same epoch, so a wake-up wakes all of
//! them and those that still cannot enter sleep again: a herd, but only of
//! threads that were already blocked, and releasing every waiting reader
//! at once is what a write unlock must do anyway.
//!
//! One writer waits uncounted: one that finds `writers_waiting` full
//! ([`MAX_WRITERS_WAITING`], thousands of writers waiting at once) and
//! cannot take the lock waits until the count has room or the lock may be
//! taken, then tries again. The count drops only by a writer giving up
//! (which wakes) or taking the lock, whose write unlock then wakes; it is
//! woken at most one critical section late.
//!
//! A waiter that times out leaves `SLEEPING` set if it set it: the next
//! release wakes nobody, one system call.
//!
//! # One polling phase per acquisition
//!
//! A waiting reader's wait ends at every write unlock, which takes its
//! request (`READERS_WAITING`): the reader tries the lock, asks again and
//! waits again. A writer that locks again at once wins most of those
//! races, so if each of those waits began a polling phase of its own, the
//! reader would poll for as long as such a writer runs, never reaching
//! its sleep, and keep its CPU busy where a reader that sleeps leaves it
//! idle. So the waits of one read acquisition (plain, upgradable,
//! recursive, or an upgrade) share one polling phase, which starts at the
//! first wait that polls; only a kernel wake-up starts the next. A
//! writer's rounds each poll afresh: the rounds it loses to other writers
//! are bounded by its starving ("Bounded unfairness among writers").
//!
//! # Turns between CPUs
//!
//! Two threads on two CPUs that take the lock back to back, a writer and a
//! reader, or two writers, hand it from CPU to CPU at almost every
//! acquisition: the waiter polls the word and catches each release, and
//! the word's line and the value's cross between the CPUs every time,
//! where one thread alone on the lock would run its acquisitions from its
//! own cache. Beside busy processes the same race makes every acquisition
//! a contended one. So the lock keeps the mutex's turns between CPUs
//! (`cpu_turns.rs`), started by contention instead of by long runs
//! ([`TurnStart::WhenContended`]): once half of a holder's acquisitions
//! in its bookkeeping interval were contended
//! ([`CONTENDED_TO_START`](super::CONTENDED_TO_START)) while another CPU
//! waits, the lock is kept for the holder's CPU for a turn
//! ([`TURN_TARGET_NS`](super::TURN_TARGET_NS) at the lock's pace, or
//! [`SLEEPING_TURN_TARGET_NS`](super::SLEEPING_TURN_TARGET_NS) while the
//! lock's threads fit on the CPUs and the waiters out of turn sleep
//! through it), then for the next waiting CPU's. A holder that locks
//! again at once through long critical sections is rarely contended, and
//! its waiter starves instead: while the lock's threads fit on the CPUs,
//! a waiter about to sleep in the lock's protocol starts turns too, the
//! first one its CPU's (`cpu_turns.rs`, "Starving waiters").
//!
//! What the turns change is only who *tries*, as in the mutex:
//! - a read, upgradable or write lock whose CPU's turn it is not skips
//!   the fast path;
//! - a contended acquisition first registers its CPU as waiting and, out
//!   of turn, waits for its CPU's turn ([`CpuTurns::wait_for_turn`]:
//!   asleep on the hint while the lock's threads fit on the CPUs, woken
//!   by the holder in time for the turn, else yielding between looks at
//!   it; never longer than the hint stands still for a stall, nor past
//!   the deadline) *before* it joins the word's protocol: a writer
//!   counted as waiting keeps every new reader out, those of the CPU in
//!   turn included, and a reader asking for a readers' turn would end the
//!   writers' run at the next write unlock;
//! - every release (read, upgradable, write, downgrade) does the turns'
//!   bookkeeping before its CAS, as the mutex's unlock does.
//!
//! Once in the protocol a waiter races as without turns, so turns never
//! decide who gets the lock, only when threads of another CPU start to
//! ask (a reader woken from a sleep in the protocol in another CPU's turn
//! asks again only in its own, while the waiters out of turn sleep);
//! `try_*` and recursive reads ignore them. Readers that hold the
//! lock together on several CPUs release it on each in turn: their runs
//! on one CPU are short, their acquisitions uncontended, and no turn
//! starts; if one does, concurrent read unlocks may do the bookkeeping
//! at once, which only makes the hint less exact (all of it is `Relaxed`
//! hints, `cpu_turns.rs`, "Memory ordering"). Cost without contention:
//! a load of the hint in each lock, of the hint and the waiting CPUs in
//! each unlock. The hint shares its line with the reader beat, a line
//! away from the words.
//!
//! # Memory ordering
//!
//! Every successful acquisition is a `SeqCst` RMW (it includes Acquire,
//! pairing with the Release of the last unlock), every release a `SeqCst`
//! RMW. Failed CASes carry no data and are `Relaxed`, as are
//! the loads that seed a CAS loop: a stale value only fails the CAS (whose
//! failure returns the current one) or, in a `try_*`, reports a lock that
//! was held a moment ago.
//!
//! Sleeping needs no more: a sleeper reads the epoch, then sets `SLEEPING`
//! by an RMW on the state; a waker's RMW that clears it reads that RMW's
//! value (one modification order), so the waker's epoch advance, after
//! its RMW, happens after the sleeper's epoch read. The kernel compares
//! the epoch before sleeping: either the advance came first and the sleep
//! is refused, or the sleeper is queued and the wake finds it. A waker
//! that clears `SLEEPING` after a sleeper set it again wakes that sleep
//! too. The epoch advance is `Release` and the sleeper's read `Acquire`,
//! so a sleeper that sees the new epoch sees the state it announces.
//!
//! # The first guess
//!
//! The fast paths (`try_lock_shared`, `try_lock_exclusive` and both
//! unlocks) start their CAS loop from a guess of the word's usual value
//! (free; this thread the only holder) instead of a load: where another
//! CPU touched the line last, a load fetches it shared and the CAS then
//! fetches it again to own it, two transfers where a CAS alone makes one
//! (a wrong guess fails, returning the current value, with the line now
//! owned here, and the next CAS usually succeeds locally). parking_lot's
//! RwLock starts its write lock and write unlock from the same guesses
//! (and releases a read lock with one `fetch_sub`). The guess only picks
//! the first expected value: every transition is still one successful CAS
//! from the value it was computed from.

use super::cpu_turns::{
    cpu_slot, note_contended, refresh_cpu_slot, CpuTurns, HolderCpu, TurnFor, TurnStart,
};
#[cfg(not(loom))]
use super::hand_off_pace::hand_off_interval_ns;
use super::hand_off_pace::HandOffPace;
use super::liveness::{self, Judge};
use super::ttas::HAND_OFF_AFTER_LOST_ROUNDS;
use super::waiting::LockWaiting;
#[cfg(not(loom))]
use super::waiting::{deadline_after, deadline_at};
use crate::loom_const::const_unless_loom;
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::wait_word::{poll_phase, WaitOutcome};
use std::time::Duration;
#[cfg(not(loom))]
use std::time::Instant;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::{Futex, FutexWait};
use waitwise_platform::shim::{AtomicU64, Ordering};

/// Set while a writer holds the lock.
const WRITE_LOCKED: u32 = 1 << 31;
/// Readers may enter although writers wait; writers keep out.
const READ_TURN: u32 = 1 << 30;
/// A reader waits because a writer holds or waits for the lock.
const READERS_WAITING: u32 = 1 << 29;
/// A waiter may sleep on the wake epoch (module doc, "Who sleeps").
const SLEEPING: u32 = 1 << 16;
/// An upgradable reader holds the lock (counted among the readers too;
/// module doc, "Upgradable reads").
const UPGRADABLE: u32 = 1 << 15;
/// One starving writer (module doc, "Bounded unfairness among writers").
const WRITER_STARVING: u32 = 1 << 26;
/// One waiting writer.
const WRITER_WAITING: u32 = 1 << 17;
/// One reader.
const READER: u32 = 1;
const READERS_MASK: u32 = UPGRADABLE - 1;
const WAITING_MASK: u32 = WRITER_STARVING - WRITER_WAITING;
const STARVING_MASK: u32 = READERS_WAITING - WRITER_STARVING;
/// Most readers holding the lock at once.
pub const MAX_READERS: u32 = READERS_MASK - 1;
/// Most writers counted as waiting at once; more wait uncounted until the
/// count drops (module doc, "Who sleeps"). At least 2 for that wait's
/// wake-up; 2 under loom, so that the models reach it.
pub const MAX_WRITERS_WAITING: u32 = if cfg!(loom) {
    2
} else {
    (WAITING_MASK / WRITER_WAITING) - 1
};
/// Most writers counted as starving at once; a writer that would be one
/// more stays an ordinary waiting writer (module doc, "Bounded unfairness
/// among writers").
pub const MAX_WRITERS_STARVING: u32 = STARVING_MASK / WRITER_STARVING;
// The uncounted writers' wake-up needs a writer still counted after one
// takes the lock (module doc, "Who sleeps").
const _: () = assert!(MAX_WRITERS_WAITING >= 2);

/// Rounds lost to other writers after which a waiting writer starves
/// (module doc, "Bounded unfairness among writers"): the mutex's
/// [`HAND_OFF_AFTER_LOST_ROUNDS`]; 1 under loom, so that the models reach
/// it.
const STARVING_AFTER_LOST_ROUNDS: u32 = if cfg!(loom) {
    1
} else {
    HAND_OFF_AFTER_LOST_ROUNDS
};

/// How long a writer that finds an unused `READ_TURN` on a free lock lets
/// the readers take it, in units of `B` (the cost of a futex wake-up, which
/// is what the woken readers need to run): 10, guessed: a grace of a few
/// `B` ends most graced turns before a woken reader runs, and a longer one
/// keeps writers out longer for turns nobody takes
/// (`tests/stress_rwlock.rs`, `readers_turn`, exercises it).
pub const READ_TURN_GRACE_B: u64 = 10;

#[inline]
fn readers(s: u32) -> u32 {
    s & READERS_MASK
}

#[inline]
fn writers_waiting(s: u32) -> u32 {
    (s & WAITING_MASK) / WRITER_WAITING
}

/// Writers that asked for the lock ahead of barging writers (counted in
/// `writers_waiting` as well).
#[inline]
fn writers_starving(s: u32) -> u32 {
    (s & STARVING_MASK) / WRITER_STARVING
}

#[inline]
fn write_locked(s: u32) -> bool {
    s & WRITE_LOCKED != 0
}

#[inline]
fn read_turn(s: u32) -> bool {
    s & READ_TURN != 0
}

#[inline]
fn upgradable(s: u32) -> bool {
    s & UPGRADABLE != 0
}

/// A reader may enter: no writer holds the lock, none waits or it is the
/// readers' turn, and the count has room.
#[inline]
fn readable(s: u32) -> bool {
    !write_locked(s) && (writers_waiting(s) == 0 || read_turn(s)) && readers(s) < MAX_READERS
}

/// A recursive reader may enter: no writer holds the lock and the count
/// has room (waiting writers and turns do not count).
#[inline]
fn recursively_readable(s: u32) -> bool {
    !write_locked(s) && readers(s) < MAX_READERS
}

/// A waiting reader's wait ends: it may enter, or its request for a turn
/// was taken by a write unlock (`READERS_WAITING` clear) and it must ask
/// again (unless the lock is full, where it waits for room).
#[inline]
fn readable_or_unasked(s: u32) -> bool {
    readable(s) || (s & READERS_WAITING == 0 && readers(s) < MAX_READERS)
}

/// An upgradable reader may enter: a reader may, and no upgradable reader
/// holds the lock.
#[inline]
fn upgradable_readable(s: u32) -> bool {
    readable(s) && !upgradable(s)
}

/// A waiting upgradable reader's wait ends: it may enter, or (kept out by
/// a writer, not by another upgradable reader) its request for a turn was
/// taken, as [`readable_or_unasked`].
#[inline]
fn upgradable_readable_or_unasked(s: u32) -> bool {
    upgradable_readable(s) || (!readable(s) && s & READERS_WAITING == 0 && readers(s) < MAX_READERS)
}

/// An upgrader's wait ends: it is the only reader left.
#[inline]
fn alone_upgradable(s: u32) -> bool {
    readers(s) == 1 && upgradable(s) && !write_locked(s)
}

/// Nobody holds the lock (a waiting writer's wait ends here).
#[inline]
fn free(s: u32) -> bool {
    !write_locked(s) && readers(s) == 0
}

/// A writer that is not starving may enter: nobody holds the lock, it is
/// not the readers' turn, and no writer starves.
#[inline]
fn writable(s: u32) -> bool {
    free(s) && !read_turn(s) && writers_starving(s) == 0
}

/// A waiting writer's wait ends: nobody holds the lock and, unless this
/// writer is `starving` itself, no writer starves (a readers' turn is
/// dealt with after the wait).
#[inline]
fn free_for(s: u32, starving: bool) -> bool {
    free(s) && (starving || writers_starving(s) == 0)
}

/// A writer-preferring reader-writer lock with two-phase waiting (the mutex
/// policy, polling with backoff), behind [`crate::mutex::RwLock`].
///
/// # Examples
/// ```
/// use waitwise::mutex::RwLock;
///
/// let lock = RwLock::new(5);
/// {
///     let r1 = lock.read();
///     let r2 = lock.read();
///     assert_eq!(*r1 + *r2, 10);
///     assert!(lock.try_write().is_none());
/// }
/// *lock.write() += 1;
/// assert_eq!(*lock.read(), 6);
/// ```
#[repr(C)]
pub struct RawRwLock {
    /// Turns between CPUs (module doc, "Turns between CPUs"). First, with
    /// the reader beat, a cache line away from the words (checked below):
    /// the waiters out of turn look at it.
    turns: CpuTurns,
    /// The latest beat of a waiting reader (module doc, "A turn for a
    /// reader that does not run"). Beside the turns, a cache line away from
    /// the words (checked below): waiting readers store it every µs while
    /// they poll, writers read it only when a readers' turn is unused.
    reader_beat: AtomicU64,
    waits: LockWaiting,
    /// When a starving writer was last served (module doc, "Bounded
    /// unfairness among writers"); not consulted under loom.
    #[cfg_attr(loom, allow(dead_code))]
    pace: HandOffPace,
    /// The CPU of the last release while turns are considered
    /// (`cpu_turns.rs`), beside the words: the holder owns their line.
    holder_cpu: HolderCpu,
    /// Last: beside the value a `lock_api::RwLock` puts after it, so that
    /// the line an acquisition takes holds the value too, unless a line
    /// boundary falls between them (a lock whose value lies a line away
    /// moves two lines from core to core, not one).
    words: Words,
}

// The hints (the turns and the reader beat) and the words share no cache
// line (64 bytes) wherever the lock lies.
#[cfg(not(loom))]
const _: () = assert!(
    std::mem::offset_of!(RawRwLock, words)
        >= std::mem::offset_of!(RawRwLock, reader_beat) + std::mem::size_of::<AtomicU64>() + 63
);

/// The state word and the wake epoch, on one line (8 bytes, aligned to 8,
/// never straddle one): a release that wakes changes both.
#[repr(C, align(8))]
struct Words {
    /// The state (module doc, "State word"); polled, never slept on.
    state: Futex,
    /// The wake epoch: sleepers sleep on it, wakers advance it.
    wakes: Futex,
}

/// What a waiting reader publishes: the lock's reader beat, and whether
/// it is patient (module doc, "A turn for a reader that does not run").
#[derive(Clone, Copy)]
struct ReaderWait<'a> {
    beat: &'a AtomicU64,
    patient: bool,
}

/// The polling phase of one acquisition, which may wait several times:
/// when it started (cycle-clock ticks), `None` until a wait polls and
/// again after each kernel wake-up (module doc, "One polling phase per
/// acquisition").
#[derive(Default)]
struct PollPhase {
    started: Option<u64>,
}

impl PollPhase {
    /// The start of the phase, begun at `now()` if none is under way.
    fn started_at(&mut self, now: impl FnOnce() -> u64) -> u64 {
        *self.started.get_or_insert_with(now)
    }

    /// A wait that slept ends the phase: the next one polls afresh.
    fn after(&mut self, out: &WaitOutcome) {
        if out.blocked() {
            self.started = None;
        }
    }
}

impl RawRwLock {
    const_unless_loom! {
        /// An unlocked lock with the default mutex policy.
        pub fn new() -> Self {
            Self::with_options(WaitOptions::new())
        }

        /// An unlocked lock waiting as `options` say.
        pub fn with_options(options: WaitOptions) -> Self {
            Self {
                words: Words {
                    state: Futex::new(0),
                    wakes: Futex::new(0),
                },
                turns: CpuTurns::starting(TurnStart::WhenContended),
                reader_beat: AtomicU64::new(0),
                waits: LockWaiting::new(options, Mechanism::Backoff),
                pace: HandOffPace::new(),
                holder_cpu: HolderCpu::new(),
            }
        }
    }

    /// Takes a read lock if no writer holds or waits; never waits.
    #[inline]
    pub fn try_lock_shared(&self) -> bool {
        let w = self.words.state.value();
        // The first guess is the free lock, not a load (module doc, "The
        // first guess"); a CAS failure (Relaxed) gives the next one. The
        // SeqCst CAS acquires (module doc).
        let mut s = 0;
        while readable(s) {
            // readers + 1
            match w.compare_exchange_weak(s, s + READER, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Takes a read lock unless `deadline` passes first.
    #[inline]
    pub fn lock_shared_until(&self, deadline: Deadline) -> bool {
        self.in_turn(Self::try_lock_shared) || self.lock_shared_contended(deadline, false)
    }

    /// The fast path of a lock: `try_lock`, unless a turn is kept for
    /// another CPU (module doc, "Turns between CPUs").
    #[inline(always)]
    fn in_turn(&self, try_lock: impl FnOnce(&Self) -> bool) -> bool {
        self.turns.in_turn() && try_lock(self)
    }

    /// The start of a contended acquisition: in another CPU's turn, waits
    /// for this CPU's ([`CpuTurns::wait_for_turn`]) before the lock's own
    /// protocol, which a waiter out of turn would otherwise join (a writer
    /// registered as waiting keeps the readers of the CPU in turn out).
    #[inline]
    fn wait_for_turn(&self, deadline: Deadline) {
        note_contended();
        let slot = refresh_cpu_slot();
        // This CPU waits, as the holder's next bookkeeping will see.
        self.turns.register_waiting(slot);
        if self.turns.turn_for(slot) != TurnFor::Mine {
            self.turns.wait_for_turn(slot, deadline);
        }
    }

    /// A reader that slept in the lock's protocol and must wait on: in
    /// another CPU's turn, waits for its own CPU's before it asks again
    /// (module doc, "Turns between CPUs").
    fn rejoin_turns(&self, deadline: Deadline) {
        let slot = refresh_cpu_slot();
        if self.turns.turn_for(slot) != TurnFor::Mine && self.turns.sleeps_out_of_turn() {
            self.turns.wait_for_turn(slot, deadline);
        }
    }

    /// Takes a read lock if no writer holds the lock, although writers
    /// wait: for a thread that may hold a read lock already (lock_api's
    /// `RawRwLockRecursive`; module doc, "State word"). Never waits.
    #[inline]
    pub fn try_lock_shared_recursive(&self) -> bool {
        let w = self.words.state.value();
        // The first guess is the free lock; the SeqCst CAS acquires.
        let mut s = 0;
        while recursively_readable(s) {
            // readers + 1
            match w.compare_exchange_weak(s, s + READER, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Takes a read lock as [`RawRwLock::try_lock_shared_recursive`] does,
    /// waiting for the write unlock (or room) unless `deadline` passes
    /// first.
    pub fn lock_shared_recursive_until(&self, deadline: Deadline) -> bool {
        if self.try_lock_shared_recursive() {
            return true;
        }
        let policy = self.waits.policy();
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let mut blocked = false;
        let mut phase = PollPhase::default();
        let acquired = loop {
            // A write unlock and a read unlock from a full lock wake the
            // sleepers (module doc, "Who sleeps").
            let out = self.wait(
                &policy,
                deadline,
                recursively_readable,
                false,
                None,
                &mut phase,
            );
            blocked |= out.blocked();
            if self.try_lock_shared_recursive() {
                break true;
            }
            if out.timed_out() {
                break false;
            }
        };
        profiler.finish(start, blocked);
        acquired
    }

    /// Takes the upgradable read lock if a reader may enter and no
    /// upgradable reader holds the lock; never waits (module doc,
    /// "Upgradable reads").
    #[inline]
    pub fn try_lock_upgradable(&self) -> bool {
        let w = self.words.state.value();
        // The first guess is the free lock, as in `try_lock_shared`; the
        // SeqCst CAS acquires (module doc).
        let mut s = 0;
        while upgradable_readable(s) {
            // readers + 1 | UPGRADABLE
            match w.compare_exchange_weak(
                s,
                (s + READER) | UPGRADABLE,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Takes the upgradable read lock unless `deadline` passes first.
    #[inline]
    pub fn lock_upgradable_until(&self, deadline: Deadline) -> bool {
        self.in_turn(Self::try_lock_upgradable) || self.lock_shared_contended(deadline, true)
    }

    /// The wait of a reader, or of an upgradable reader when `upgradable`.
    #[cold]
    fn lock_shared_contended(&self, deadline: Deadline, upgradable: bool) -> bool {
        let ready = if upgradable {
            upgradable_readable_or_unasked
        } else {
            readable_or_unasked
        };
        let try_lock = |lock: &Self| {
            if upgradable {
                lock.try_lock_upgradable()
            } else {
                lock.try_lock_shared()
            }
        };
        let profiler = self.waits.profiler();
        let start = profiler.start();
        self.wait_for_turn(deadline);
        let policy = self.waits.policy();
        let mut blocked = false;
        // Turns this reader missed: patient after MAX_PASSES (module doc,
        // "A turn for a reader that does not run").
        let mut missed = 0;
        let mut phase = PollPhase::default();
        let mut slept = false;
        let acquired = loop {
            if slept {
                self.rejoin_turns(deadline);
            }
            self.announce_reader();
            // Back to announce when a write unlock took the request (it
            // clears READERS_WAITING): a reader that missed that turn, not
            // having run during it, asks for the next one.
            let beat = ReaderWait {
                beat: &self.reader_beat,
                patient: liveness::is_patient(missed),
            };
            let out = self.wait(&policy, deadline, ready, false, Some(beat), &mut phase);
            blocked |= out.blocked();
            slept = out.blocked();
            if try_lock(self) {
                break true;
            }
            if out.timed_out() {
                break false;
            }
            missed += 1;
        };
        profiler.finish(start, blocked);
        acquired
    }

    /// A reader kept out by a writer (holding or waiting) asks for a turn:
    /// `=> | READERS_WAITING`. Nothing when the lock is readable or full.
    /// SeqCst as every RMW on the word; a stale bit (its reader timed out
    /// or got in) costs one unused turn, which a writer ends.
    fn announce_reader(&self) {
        let w = self.words.state.value();
        // Relaxed load and CAS failure: guesses for the CAS.
        let mut s = w.load(Ordering::Relaxed);
        while !readable(s) && readers(s) < MAX_READERS && s & READERS_WAITING == 0 {
            match w.compare_exchange_weak(
                s,
                s | READERS_WAITING,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => s = now,
            }
        }
    }

    /// Releases a read lock.
    ///
    /// # Safety
    ///
    /// The caller holds a read lock on this lock, taken by `lock_shared*` /
    /// `try_lock_shared` and not released since.
    #[inline]
    pub unsafe fn unlock_shared(&self) {
        let w = self.words.state.value();
        // readers - 1, READ_TURN cleared: the first reader out ends the
        // turn. The first guess is this reader alone, not a load (module
        // doc, "The first guess"); a CAS failure (Relaxed) gives the next.
        // The last reader out wakes the sleepers (writers wait for it), and
        // so does a reader leaving a full lock (MAX_READERS: readers slept
        // for want of room) and one leaving an upgradable reader alone (it
        // may wait to upgrade), clearing SLEEPING in the same CAS.
        let wakes = |s: u32| {
            s & SLEEPING != 0
                && (readers(s) == 1
                    || readers(s) == MAX_READERS
                    || (readers(s) == 2 && upgradable(s)))
        };
        // While still holding: holders write the turns.
        let bookkept = self.turns.before_release(&self.holder_cpu);
        let mut s = READER;
        loop {
            debug_assert!(readers(s) > 0, "unlock_shared of an unread RwLock: {s:#x}");
            let mut next = (s - READER) & !READ_TURN;
            if wakes(s) {
                next &= !SLEEPING;
            }
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if wakes(s) {
            self.wake_sleepers();
        }
        if bookkept {
            self.turns.after_bookkeeping();
        }
    }

    /// Releases the upgradable read lock (module doc, "Upgradable reads").
    ///
    /// # Safety
    ///
    /// The caller holds the upgradable read lock of this lock, taken by
    /// `lock_upgradable*` / `try_lock_upgradable` (or a downgrade to it)
    /// and not released since.
    #[inline]
    pub unsafe fn unlock_upgradable(&self) {
        let w = self.words.state.value();
        // readers - 1, UPGRADABLE and READ_TURN cleared; SLEEPING cleared
        // and the sleepers woken if it was set (an upgradable reader may
        // wait for the bit, a writer for the last reader). The first guess
        // is this reader alone; a CAS failure (Relaxed) gives the next.
        // While still holding: holders write the turns.
        let bookkept = self.turns.before_release(&self.holder_cpu);
        let mut s = READER | UPGRADABLE;
        loop {
            debug_assert!(
                upgradable(s) && readers(s) > 0,
                "unlock_upgradable of an RwLock without an upgradable reader: {s:#x}"
            );
            let next = (s - READER) & !(UPGRADABLE | READ_TURN | SLEEPING);
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if s & SLEEPING != 0 {
            self.wake_sleepers();
        }
        if bookkept {
            self.turns.after_bookkeeping();
        }
    }

    /// Turns the upgradable read lock into a plain read lock: `-
    /// UPGRADABLE`, waking the sleepers if `SLEEPING` was set (another
    /// upgradable reader may enter now).
    ///
    /// # Safety
    ///
    /// The caller holds the upgradable read lock of this lock; afterwards
    /// it holds a read lock instead, which it releases with
    /// `unlock_shared`.
    #[inline]
    pub unsafe fn downgrade_upgradable(&self) {
        let w = self.words.state.value();
        // Relaxed load and CAS failure: guesses for the SeqCst CAS.
        let mut s = w.load(Ordering::Relaxed);
        loop {
            debug_assert!(upgradable(s), "not upgradable-locked: {s:#x}");
            let next = s & !(UPGRADABLE | SLEEPING);
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if s & SLEEPING != 0 {
            self.wake_sleepers();
        }
    }

    /// Turns the write lock into the upgradable read lock without letting
    /// a writer in between: the write unlock with this thread counted as
    /// the upgradable reader in the same CAS (waiting readers get in beside
    /// it, as after [`RawRwLock::downgrade`]).
    ///
    /// # Safety
    ///
    /// The caller holds the write lock of this lock; afterwards it holds
    /// the upgradable read lock instead.
    #[inline]
    pub unsafe fn downgrade_to_upgradable(&self) {
        self.release_write(READER | UPGRADABLE);
    }

    /// Turns the upgradable read lock into the write lock if no other
    /// reader holds the lock; never waits. Ignores starving writers
    /// (module doc, "Upgradable reads").
    ///
    /// # Safety
    ///
    /// The caller holds the upgradable read lock of this lock; on success
    /// it holds the write lock instead.
    #[inline]
    pub unsafe fn try_upgrade(&self) -> bool {
        let w = self.words.state.value();
        // The first guess is this reader alone; the SeqCst CAS acquires
        // the read unlocks before it (module doc).
        let mut s = READER | UPGRADABLE;
        while alone_upgradable(s) {
            // readers - 1 - UPGRADABLE | WRITE_LOCKED, ending a turn.
            let next = (s - READER - UPGRADABLE + WRITE_LOCKED) & !READ_TURN;
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Turns the upgradable read lock into the write lock once the other
    /// readers have left, unless `deadline` passes first (then the
    /// upgradable read lock is still held).
    ///
    /// # Safety
    ///
    /// As [`RawRwLock::try_upgrade`].
    #[inline]
    pub unsafe fn upgrade_until(&self, deadline: Deadline) -> bool {
        // SAFETY: forwarded from the caller.
        let upgraded = unsafe { self.try_upgrade() };
        upgraded || self.upgrade_contended(deadline)
    }

    /// The upgrader's wait: counted as a waiting writer (new readers keep
    /// out) until it is the only reader left (module doc, "Upgradable
    /// reads"). Called by the holder of the upgradable read lock.
    #[cold]
    fn upgrade_contended(&self, deadline: Deadline) -> bool {
        let policy = self.waits.policy();
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let w = self.words.state.value();
        let mut blocked = false;
        // Relaxed load and CAS failures: guesses for the SeqCst CASes.
        let mut s = w.load(Ordering::Relaxed);
        // Whether it counts itself in writers_waiting.
        let mut counted = false;
        let mut phase = PollPhase::default();
        let acquired = loop {
            debug_assert!(upgradable(s) && readers(s) > 0, "not upgradable: {s:#x}");
            let leave = if counted { WRITER_WAITING } else { 0 };
            let next = if alone_upgradable(s) {
                // readers - 1 - UPGRADABLE (- WRITER_WAITING) | WRITE_LOCKED,
                // ending a readers' turn.
                (s - READER - UPGRADABLE - leave + WRITE_LOCKED) & !READ_TURN
            } else if deadline.has_passed() {
                if !counted {
                    break false;
                }
                // Leave the count as a timed-out writer does: wake the
                // sleepers (readers it held back); the last waiting
                // writer leaving ends a turn.
                let next = (s - WRITER_WAITING) & !SLEEPING;
                if writers_waiting(next) == 0 {
                    next & !READ_TURN
                } else {
                    next
                }
            } else if !counted && writers_waiting(s) < MAX_WRITERS_WAITING {
                // Count in writers_waiting: new readers keep out.
                s + WRITER_WAITING
            } else {
                // Wait until alone (or, uncounted, until the count has
                // room).
                let out = self.wait(
                    &policy,
                    deadline,
                    |v| {
                        alone_upgradable(v)
                            || (!counted && writers_waiting(v) < MAX_WRITERS_WAITING)
                    },
                    false,
                    None,
                    &mut phase,
                );
                blocked |= out.blocked();
                s = out.value();
                continue;
            };
            // Failure Relaxed: the value is only the next guess.
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) if write_locked(next) => break true,
                Ok(_) if counted => {
                    // Left the count on timeout.
                    if s & SLEEPING != 0 {
                        self.wake_sleepers();
                    }
                    break false;
                }
                Ok(_) => {
                    counted = true;
                    s = next;
                }
                Err(now) => s = now,
            }
        };
        profiler.finish(start, blocked);
        acquired
    }

    /// Takes the write lock if nobody holds the lock; never waits.
    #[inline]
    pub fn try_lock_exclusive(&self) -> bool {
        // => WRITE_LOCKED while writable (waiting writers do not stop a
        // barging try; a readers' turn does).
        let w = self.words.state.value();
        // The first guess is the free lock, not a load (module doc, "The
        // first guess"); a CAS failure (Relaxed) gives the next one. The
        // SeqCst CAS acquires (module doc).
        let mut s = 0;
        while writable(s) {
            match w.compare_exchange_weak(s, s | WRITE_LOCKED, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Takes the write lock unless `deadline` passes first.
    #[inline]
    pub fn lock_exclusive_until(&self, deadline: Deadline) -> bool {
        self.in_turn(Self::try_lock_exclusive) || self.lock_exclusive_contended(deadline)
    }

    #[cold]
    fn lock_exclusive_contended(&self, deadline: Deadline) -> bool {
        let profiler = self.waits.profiler();
        let start = profiler.start();
        self.wait_for_turn(deadline);
        let policy = self.waits.policy();
        let w = self.words.state.value();
        // Register: writers_waiting + 1 (unless the lock turned free).
        // Relaxed load and CAS failures: guesses for the SeqCst CASes,
        // which order (module doc).
        let mut s = w.load(Ordering::Relaxed);
        let mut uncounted_blocked = false;
        let mut phase = PollPhase::default();
        loop {
            if writable(s) {
                match w.compare_exchange_weak(
                    s,
                    s | WRITE_LOCKED,
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        profiler.finish(start, uncounted_blocked);
                        return true;
                    }
                    Err(now) => s = now,
                }
                continue;
            }
            if writers_waiting(s) >= MAX_WRITERS_WAITING {
                // The count is full: wait uncounted until it has room or
                // the lock may be taken (module doc, "Who sleeps").
                let out = self.wait(
                    &policy,
                    deadline,
                    |v| writable(v) || writers_waiting(v) < MAX_WRITERS_WAITING,
                    false,
                    None,
                    &mut phase,
                );
                uncounted_blocked |= out.blocked();
                if out.timed_out() {
                    profiler.finish(start, uncounted_blocked);
                    return false;
                }
                s = out.value();
                continue;
            }
            // Failure Relaxed: the value is only the next guess.
            match w.compare_exchange_weak(
                s,
                s + WRITER_WAITING,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        let mut blocked = uncounted_blocked;
        // Counted in writers_starving (module doc, "Bounded unfairness
        // among writers").
        let mut starving = false;
        let mut lost_rounds = 0u32;
        let acquired = loop {
            // Back after each kernel wake-up, to count the rounds lost.
            let out = self.wait(
                &policy,
                deadline,
                |s| free_for(s, starving),
                true,
                None,
                // A round of its own: a writer's lost rounds are bounded
                // by its starving (module doc, "One polling phase per
                // acquisition").
                &mut PollPhase::default(),
            );
            blocked |= out.blocked();
            let mut s = out.value();
            if free_for(s, starving) && read_turn(s) {
                // A turn no reader has taken yet: give the readers a grace.
                s = self.read_turn_grace(deadline);
            }
            let leave = WRITER_WAITING + if starving { WRITER_STARVING } else { 0 };
            // writers_waiting - 1 (and writers_starving - 1 if counted
            // there) | WRITE_LOCKED while free for this writer (ending a
            // readers' turn nobody took); on timeout the counts alone.
            let done = loop {
                let (next, got) = if free_for(s, starving) {
                    ((s - leave + WRITE_LOCKED) & !READ_TURN, true)
                } else if out.timed_out() || deadline.has_passed() {
                    // The last waiting writer leaving ends a turn: readers
                    // may enter anyway. Leaving wakes the sleepers (readers
                    // it held back, writers its starving kept out).
                    let next = (s - leave) & !SLEEPING;
                    if writers_waiting(next) == 0 {
                        (next & !READ_TURN, false)
                    } else {
                        (next, false)
                    }
                } else {
                    break None;
                };
                // Failure Relaxed: the value is only the next guess.
                match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                    Ok(_) => break Some(got),
                    Err(now) => s = now,
                }
            };
            match done {
                Some(true) => {
                    if starving {
                        self.served_starving();
                    }
                    break true;
                }
                Some(false) => {
                    // Readers held back by our registration, and writers
                    // by our starving, may enter now.
                    if s & SLEEPING != 0 {
                        self.wake_sleepers();
                    }
                    break false;
                }
                None => {
                    // Beaten by a writer while none starved: a lost round
                    // (a readers' turn is bounded on its own, and a lock
                    // kept for starving writers is the bound at work).
                    let lost = write_locked(s) && writers_starving(s) == 0;
                    lost_rounds = lost_rounds.saturating_add(u32::from(lost));
                    if !starving && lost_rounds >= STARVING_AFTER_LOST_ROUNDS && self.may_starve() {
                        starving = self.join_starving();
                    }
                }
            }
        };
        profiler.finish(start, blocked);
        acquired
    }

    /// A waiting writer that lost [`STARVING_AFTER_LOST_ROUNDS`] rounds
    /// counts itself in `writers_starving` (`+ WRITER_STARVING`), unless
    /// the count is full; returns whether it did. Nobody needs waking: a
    /// starving writer only keeps others out.
    #[cold]
    fn join_starving(&self) -> bool {
        let w = self.words.state.value();
        // Relaxed load and CAS failure: guesses for the SeqCst CAS, which
        // orders as every RMW on the word.
        let mut s = w.load(Ordering::Relaxed);
        while writers_starving(s) < MAX_WRITERS_STARVING {
            debug_assert!(writers_starving(s) < writers_waiting(s));
            match w.compare_exchange_weak(
                s,
                s + WRITER_STARVING,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Whether a writer may start starving now: at most one starving
    /// writer is served per [`hand_off_interval_ns`] (module doc,
    /// "Bounded unfairness among writers"). Under loom, always.
    #[cold]
    fn may_starve(&self) -> bool {
        #[cfg(not(loom))]
        {
            self.pace.has_passed(
                waitwise_platform::clock::cycle_clock().now(),
                hand_off_interval_ns(crate::policy::block_cost::block_ns()),
            )
        }
        #[cfg(loom)]
        {
            true
        }
    }

    /// A starving writer took the lock: the pace counts from now. Called
    /// as the lock's holder.
    #[cold]
    fn served_starving(&self) {
        #[cfg(not(loom))]
        self.pace
            .mark(waitwise_platform::clock::cycle_clock().now());
    }

    /// Waits until `ready(state)` holds or `deadline` passes: polls the
    /// state word as `policy` says, then sleeps on the wake epoch, with
    /// `SLEEPING` set (module doc, "Who sleeps"). With `return_when_woken`,
    /// a kernel wake-up ends the wait ([`WaitOutcome::Woken`]). With a
    /// reader's `beat`, the waiter publishes it while it polls (every
    /// [`BEAT_NS`](liveness::BEAT_NS)) and before it sleeps.
    fn wait(
        &self,
        policy: &Policy,
        deadline: Deadline,
        mut ready: impl FnMut(u32) -> bool,
        return_when_woken: bool,
        beat: Option<ReaderWait<'_>>,
        phase: &mut PollPhase,
    ) -> WaitOutcome {
        let state = &self.words.state;
        // Acquire: pairs with the Release half of the last change.
        let v = state.value().load(Ordering::Acquire);
        if ready(v) {
            return WaitOutcome::Ready {
                value: v,
                blocked: false,
            };
        }
        // `adapt/b` learns from the wait (keyed by the state's address).
        let (budget, learning) = policy.begin_wait(state as *const Futex as usize);
        let mut out = WaitOutcome::TimedOut {
            value: v,
            blocked: false,
        };
        if !cfg!(loom) && budget.polls() {
            let started = phase.started_at(|| {
                learning
                    .as_ref()
                    .and_then(|l| l.start_ticks())
                    .unwrap_or_else(|| waitwise_platform::clock::cycle_clock().now())
            });
            out = if let Some(ReaderWait { beat, patient }) = beat {
                let end = budget.poll_deadline_from(started, deadline);
                // Relaxed (every beat store): a hint (`liveness.rs`).
                beat.store(liveness::polling(0, patient), Ordering::Relaxed);
                liveness::poll_beating(state, budget.mechanism, end, beat, 0, patient, &mut ready)
            } else {
                poll_phase(state, budget, Some(started), deadline, v, &mut ready)
            };
        }
        if out.timed_out() && !deadline.has_passed() {
            if let Some(ReaderWait { beat, patient }) = beat {
                // Relaxed: a hint (`liveness.rs`).
                beat.store(liveness::asleep(0, patient), Ordering::Relaxed);
            }
            // A waiter that polled through its phase in vain lets the
            // turns start (module doc, "Turns between CPUs").
            self.turns.register_starving(cpu_slot());
            out = self.sleep_until(deadline, &mut ready, return_when_woken);
        }
        if let Some(learning) = learning {
            learning.finish(out.blocked(), out.timed_out());
        }
        phase.after(&out);
        out
    }

    /// The blocking phase of [`wait`](Self::wait): set `SLEEPING` unless
    /// `ready` holds, sleep while the wake epoch is unchanged, re-check.
    fn sleep_until(
        &self,
        deadline: Deadline,
        ready: &mut impl FnMut(u32) -> bool,
        return_when_woken: bool,
    ) -> WaitOutcome {
        let Words { state, wakes } = &self.words;
        // A wait about to sleep may read the machine's demand for the
        // waits that start after it (`idle_extension`, "The cache on the
        // wait path").
        #[cfg(not(loom))]
        crate::policy::idle_extension::refresh_stale_demand();
        let mut blocked = false;
        loop {
            // The epoch first: a wake-up after it is read (which needs our
            // SLEEPING, below, or a later change) leaves the futex sleep at
            // once. Acquire: pairs with the waker's Release advance.
            let epoch = wakes.value().load(Ordering::Acquire);
            // Relaxed load and CAS failure: guesses for the CAS.
            let mut s = state.value().load(Ordering::Relaxed);
            while !ready(s) && s & SLEEPING == 0 {
                // => | SLEEPING. SeqCst as every RMW on the word; the waker
                // that clears it reads this RMW's value (module doc).
                match state.value().compare_exchange_weak(
                    s,
                    s | SLEEPING,
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => s |= SLEEPING,
                    Err(now) => s = now,
                }
            }
            if ready(s) {
                return WaitOutcome::Ready { value: s, blocked };
            }
            let timeout = deadline.remaining();
            if timeout == Some(Duration::ZERO) {
                return WaitOutcome::TimedOut { value: s, blocked };
            }
            let slept = wakes.wait(epoch, timeout);
            blocked = true;
            // Acquire: pairs with the Release half of the waking change.
            let s = state.value().load(Ordering::Acquire);
            if ready(s) {
                return WaitOutcome::Ready { value: s, blocked };
            }
            if slept == FutexWait::Woken && return_when_woken {
                return WaitOutcome::Woken { value: s };
            }
            if slept == FutexWait::TimedOut || deadline.has_passed() {
                return WaitOutcome::TimedOut { value: s, blocked };
            }
        }
    }

    /// Wakes every sleeper, after a change that cleared `SLEEPING`: advance
    /// the epoch, then `futex_wake`. Release: a sleeper that reads the new
    /// epoch sees the change before it (module doc, "Memory ordering").
    fn wake_sleepers(&self) {
        let wakes = &self.words.wakes;
        wakes.value().fetch_add(1, Ordering::Release);
        wakes.wake_all();
    }

    /// A waiting writer found the lock free in a readers' turn that no
    /// reader has taken: polls (yielding) for [`READ_TURN_GRACE_B`] times
    /// `B`, or until `deadline`, for a reader to take it; returns the word
    /// then. Under loom, one look.
    #[cold]
    fn read_turn_grace(&self, deadline: Deadline) -> u32 {
        // Relaxed: a hint (`liveness.rs`).
        let beat = self.reader_beat.load(Ordering::Relaxed);
        if Judge::now().preempted(beat, 0) {
            // The last reader to beat was preempted while polling, and no
            // reader has polled or slept since: none is on its way (module
            // doc, "A turn for a reader that does not run").
            return self.words.state.value().load(Ordering::Relaxed);
        }
        let grace = if cfg!(loom) {
            deadline
        } else {
            let ns = READ_TURN_GRACE_B as f64 * crate::policy::block_ns();
            deadline.min(Deadline::after(std::time::Duration::from_nanos(ns as u64)))
        };
        let out = crate::wait_word::poll_until(&self.words.state, Mechanism::Yield, grace, |s| {
            !free(s) || !read_turn(s)
        });
        out.value()
    }

    /// Releases the write lock.
    ///
    /// # Safety
    ///
    /// The caller holds the write lock of this lock.
    #[inline]
    pub unsafe fn unlock_exclusive(&self) {
        self.release_write(0);
    }

    /// Turns the write lock into a read lock without letting a writer in
    /// between (lock_api's `RwLockWriteGuard::downgrade`): the write
    /// unlock with this thread counted as a reader in the same CAS.
    /// Waiting readers get in beside it (ahead of waiting writers, with a
    /// readers' turn, as after a write unlock; if this thread is the first
    /// reader out, it ends the turn, as any first reader out does).
    ///
    /// # Safety
    ///
    /// The caller holds the write lock of this lock; afterwards it holds a
    /// read lock instead, which it releases with `unlock_shared`.
    #[inline]
    pub unsafe fn downgrade(&self) {
        self.release_write(READER);
    }

    /// The write unlock, adding `readers` (0 or [`READER`]) to the readers
    /// in the same CAS.
    #[inline]
    fn release_write(&self, readers_after: u32) {
        let w = self.words.state.value();
        // WRITE_LOCKED => readers_after (waiting-writer count kept; no
        // reader holds a write-locked lock, so the count has room);
        // READERS_WAITING => READ_TURN while writers wait (else readers may
        // enter anyway). The first guess is this writer alone, not a load
        // (module doc, "The first guess"); a CAS failure (Relaxed) gives
        // the next. The turns first, while still holding: holders write
        // them.
        let bookkept = self.turns.before_release(&self.holder_cpu);
        let mut s = WRITE_LOCKED;
        loop {
            debug_assert!(
                write_locked(s) && readers(s) == 0,
                "write unlock of an unwritten RwLock: {s:#x}"
            );
            let mut next = (s - WRITE_LOCKED + readers_after) & !SLEEPING;
            if next & READERS_WAITING != 0 {
                next &= !READERS_WAITING;
                if writers_waiting(next) > 0 {
                    next |= READ_TURN;
                }
            }
            match w.compare_exchange_weak(s, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if s & SLEEPING != 0 {
            self.wake_sleepers();
        }
        if bookkept {
            self.turns.after_bookkeeping();
        }
    }

    /// The turns between CPUs (module doc, "Turns between CPUs"), to see
    /// how they stand.
    #[inline]
    pub fn turns(&self) -> &CpuTurns {
        &self.turns
    }

    /// Whether anybody holds the lock (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        let s = self.words.state.value().load(Ordering::Relaxed);
        write_locked(s) || readers(s) > 0
    }

    /// Whether a writer holds the lock (a snapshot).
    #[inline]
    pub fn is_locked_exclusive(&self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        write_locked(self.words.state.value().load(Ordering::Relaxed))
    }

    /// The wait-time histogram, when profiling is on.
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.waits.profile()
    }

    /// The policy waits follow.
    pub fn policy(&self) -> Policy {
        self.waits.policy()
    }
}

impl Default for RawRwLock {
    fn default() -> Self {
        Self::new()
    }
}

/// The state a user can act on (a snapshot): write-locked or not, the
/// readers holding it, the writers waiting, and the policy.
impl std::fmt::Debug for RawRwLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Relaxed: a snapshot for display that orders nothing.
        let s = self.words.state.value().load(Ordering::Relaxed);
        f.debug_struct("RawRwLock")
            .field("write_locked", &write_locked(s))
            .field("readers", &readers(s))
            .field("upgradable", &upgradable(s))
            .field("writers_waiting", &writers_waiting(s))
            .field("writers_starving", &writers_starving(s))
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

// lock_api's traits, outside loom builds as before the split (the models
// drive the raw lock's own methods).
#[cfg(not(loom))]
mod lock_api_impls;

#[cfg(all(test, not(loom)))]
mod tests;
