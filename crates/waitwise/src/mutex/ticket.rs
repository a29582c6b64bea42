//! [`RawTicketMutex`]: a ticket lock whose waiters poll the served ticket
//! and sleep on per-slot [`WaitWord`]s, so a release wakes the next
//! ticket's holder and not every sleeper, and whose releases skip waiters
//! that are not running (time-published, as the MCS lock: `liveness.rs`),
//! who take a new ticket.
//!
//! # State
//!
//! ```text
//!  next            tickets handed out (wrapping u32)
//!  serving         the ticket that holds the lock, or the next one to serve
//!                  when the lock is free; only ever advances (a WaitWord:
//!                  polling waiters and timed attempts wait on it)
//!  slots[t % SLOTS]  where ticket t's waiter sleeps; the value is only a
//!                  futex epoch (a release changes it before waking)
//!  beats[t % BEATS]  ticket t's waiter's beat (tag t), `liveness.rs`
//! ```
//!
//! The lock is free when `next == serving`. Transitions:
//! - lock: `t = next++`; if `serving == t`, held. Else wait until
//!   `serving` reaches `t` or passes it (decided): polling `serving`, then
//!   asleep on `slots[t % SLOTS]`; `serving == t` means served, a later
//!   ticket means skipped: take a new ticket (patient after
//!   [`MAX_PASSES`](super::liveness::MAX_PASSES) skips).
//! - unlock(t): choose the next owner `c` among the tickets taken, `t + 1
//!   ..next` (at most [`WINDOW`] of them): the first
//!   whose waiter runs, or has not published a beat, or is patient; `next`
//!   itself (nobody: free the lock) when every taken ticket in the window
//!   is skipped; the ticket after the window (`t + 1 + WINDOW`, taken)
//!   when every ticket in it is skipped and more are taken.
//!   `serving = c`; wake the sleepers of `c`'s slot (if `c` was taken:
//!   when `c == next`, after re-reading `next`) and of the skipped
//!   tickets' slots; pre-wake `slots[c + 1]`. A slot is written only when
//!   someone sleeps on it, so a release to a polling waiter writes
//!   `serving` alone.
//! - try_lock / timed: `next: serving => serving + 1` with one CAS (taking
//!   the ticket being served); a timed attempt does **not** queue (a ticket,
//!   once taken, must be decided), it waits for `serving` to change and
//!   tries again, so it may be overtaken by queued waiters.
//!
//! # Fairness
//!
//! FIFO among running waiters: tickets are served in order except that a
//! release skips the waiters ahead of the first running one that sleep or
//! were preempted [`STALE_NS`](super::liveness::STALE_NS) or more before
//! (and frees the lock when all of them do); a skipped waiter takes a new
//! ticket, at the back. A waiter skipped `MAX_PASSES` times in one `lock`
//! call queues as patient: a release then hands it the lock
//! (waking it) rather than pass it over while it sleeps. A waiter skipped
//! because it was preempted cannot take the lock before the scheduler runs
//! it again; when it runs it takes a new ticket and is served in order
//! among the running waiters. So no waiter starves while the scheduler runs
//! every thread. The order is strict FIFO while every waiter polls on a CPU
//! of its own.
//!
//! A thread that handed the lock to a waiter takes its next ticket only
//! after a cool-down (`hand_off_cooldown.rs`, about half a `B`, at most
//! 10 µs), so that the new holder runs a batch of acquisitions from its
//! own cache instead of handing the lock back at each one. The ticket
//! order is unchanged (the cooling thread holds no ticket yet); the
//! cool-down bounds how much later than at once it takes one.
//!
//! Cost (`liveness.rs`): a release reads the clock and the beats of the
//! tickets it considers (one or two lines); a polling waiter stores its
//! beat every µs; a skipped sleeper costs its release a `futex_wake`.
//!
//! # Waiting: polling while the queue moves
//!
//! A queued waiter's wait is the sum of the critical sections and hand-offs
//! ahead of it, so a poll limit counted from the start of the wait puts
//! waiters far back in the queue to sleep while the lock is moving well.
//! Here the policy's poll limit counts from the last hand-off the waiter
//! saw: `serving` is the holders' heartbeat (it advances at every
//! hand-off, at no cost to the holder), and a waiter stops polling only
//! when no hand-off happened for a whole poll limit. Cost: every polling
//! waiter reads `serving`, the line each release writes (one transfer per
//! hand-off to each poller; Lim & Agarwal's section 6.3 has pollers spin
//! on lines of their own instead, which saves transfers with many pollers
//! but costs each hand-off a second line, the slot: a lock here has at
//! most a few pollers, as many as there are CPUs). And an
//! unlock that hands the lock to ticket `c` also wakes the sleepers of
//! ticket `c + 1`'s slot (a pre-wake: a system call only when one sleeps
//! there), so that the next holder is awake by its turn; a pre-woken
//! waiter polls again, and sleeps again if the queue stalls.
//!
//! # Memory ordering
//!
//! The `serving` store is the release of the lock and the waiter's load of
//! it the acquire. Two store-buffering pairs, all four accesses of each
//! `SeqCst`, so that at least one side sees the other:
//! - a sleeper registers on its slot, then reads `serving`; a release
//!   writes `serving`, then reads the slot's sleeper count (and if
//!   non-zero, changes the slot's value and wakes it). Else a sleeper could
//!   sleep through its own turn;
//! - when the release frees the lock (`c == next` as read), the unlocker
//!   writes `serving` then reads `next`, a new waiter writes `next` then
//!   reads `serving`. Else a waiter that missed `serving` could sleep on a
//!   slot that the release does not wake.
//!
//! Taking a ticket is otherwise unordered. Beats are `Relaxed` hints
//! (`liveness.rs`).

use super::hand_off_cooldown;
use super::liveness::{self, Judge};
use super::waiting::LockWaiting;
#[cfg(not(loom))]
use super::waiting::{deadline_after, deadline_at};
use crate::loom_const::const_unless_loom;
use crate::mechanism::Mechanism;
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::wait_word::{SleepRules, WaitOutcome, WaitWord};
use std::marker::PhantomData;
#[cfg(not(loom))]
use std::time::{Duration, Instant};
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{AtomicU32, AtomicU64, Ordering};

/// Per-slot wait words. Guessed: 8 slots (1 KiB) give every waiter its own
/// word with up to 8 waiters (this machine class has 2-8 CPUs); with more,
/// waiters `SLOTS` tickets apart share a word and one extra wake-up per
/// release is the cost. One slot under loom, so the models reach slot
/// sharing with three threads.
pub const SLOTS: usize = if cfg!(loom) { 1 } else { 8 };

/// Beats, one per ticket modulo `BEATS`. Guessed: 64 (512 bytes) so that
/// waiters share a beat only beyond 64 of them: a beat of another ticket
/// counts as running, and a preempted waiter whose beat a running one
/// overwrote would get the lock and stop it for a scheduler time slice.
/// One under loom, as the slots.
const BEATS: usize = if cfg!(loom) { 1 } else { 64 };

/// The most tickets a release considers for the next owner. Guessed: 16,
/// twice the CPUs of this machine class' largest member, so that one
/// running waiter is found among a 4x-oversubscribed 2-CPU machine's
/// threads (each ticket considered is one load from the beats' lines); 2
/// under loom, so the models reach a skip.
const WINDOW: usize = if cfg!(loom) { 2 } else { 16 };

/// Whether ticket `a` comes after ticket `b` (wrapping; tickets in use
/// are far less than 2^31 apart). A skipped ticket stays in use until its
/// waiter runs and reads `serving`: a waiter skipped and then kept off
/// its CPU while 2^31 more tickets are served (about 20 s of acquisitions
/// at 100 million a second, e.g. a thread stopped under a debugger) would
/// read the lock's progress as behind its ticket, and could take the lock
/// when the count came round to its ticket again. The 32-bit futex word
/// that `serving` is sets this limit.
#[inline]
fn is_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Under loom only: a `SeqCst` fence between the store-buffering write and
/// read (loom models `SeqCst` accesses as `AcqRel`).
#[inline(always)]
fn dekker_fence() {
    #[cfg(loom)]
    waitwise_platform::shim::fence(Ordering::SeqCst);
}

/// A ticket lock, FIFO among running waiters: threads acquire in the order
/// they called `lock`, except that a release skips waiters that sleep or
/// were preempted when a running one stands behind them (they take a new
/// ticket; module docs, "Fairness"), so that the lock never waits for a
/// descheduled thread while another could take it.
///
/// Every contended acquisition still hands the lock to another thread (a
/// cache-line transfer), which is why [`Mutex`](super::Mutex) is the
/// unfair [`RawTtasMutex`](super::RawTtasMutex). Timed attempts do not
/// queue.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use waitwise::mutex::TicketMutex;
///
/// let log = Arc::new(TicketMutex::new(Vec::new()));
/// let t = {
///     let log = log.clone();
///     std::thread::spawn(move || log.lock().push(1))
/// };
/// t.join().unwrap();
/// log.lock().push(2);
/// assert_eq!(*log.lock(), vec![1, 2]);
/// assert!(log.try_lock_for(std::time::Duration::ZERO).is_some());
/// ```
pub struct RawTicketMutex {
    serving: WaitWord,
    slots: [WaitWord; SLOTS],
    beats: Beats,
    next: AtomicU32,
    waits: LockWaiting,
}

/// The waiters' beats, on lines of their own: a release reads 16
/// consecutive tickets' beats with one or two cache misses.
#[repr(align(128))]
struct Beats([AtomicU64; BEATS]);

/// How a queued waiter's wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Turn {
    /// `serving` reached its ticket: it holds the lock.
    Served,
    /// A release skipped its ticket: it must take a new one.
    Skipped,
}

/// The ticket held by a [`RawTicketMutex`] acquisition. Not `Send`: the
/// thread that locked unlocks, as with std's and parking_lot's guards.
/// `Sync`, as theirs: a shared `TicketGuard` gives access to nothing (the
/// ticket is private and only `unlock`, which takes the guard by value,
/// reads it), so a [`TicketMutexGuard`](super::TicketMutexGuard) is `Sync`
/// whenever the data is.
///
/// ```compile_fail,E0277
/// fn send<T: Send>(_: T) {}
/// let m = waitwise::mutex::TicketMutex::new(0);
/// send(m.lock());
/// ```
#[derive(Debug)]
pub struct TicketGuard {
    ticket: u32,
    /// `!Send + Sync` (lock_api's `GuardNoSend` is `Sync`).
    not_send: PhantomData<lock_api::GuardNoSend>,
}

impl RawTicketMutex {
    const_unless_loom! {
        /// An unlocked ticket lock with the default mutex policy.
        pub fn new() -> Self {
            Self::with_options(WaitOptions::new())
        }
    }

    // Two bodies, not `const_unless_loom!`: `SLOTS` differs under loom, and
    // the `const` one must spell its words out (`array::from_fn` is not
    // `const`).
    /// An unlocked ticket lock waiting as `options` say.
    #[cfg(not(loom))]
    pub const fn with_options(options: WaitOptions) -> Self {
        Self {
            serving: WaitWord::new(0),
            slots: [const { WaitWord::new(0) }; SLOTS],
            beats: Beats([const { AtomicU64::new(0) }; BEATS]),
            next: AtomicU32::new(0),
            waits: LockWaiting::new(options, Mechanism::Pause),
        }
    }

    /// An unlocked ticket lock waiting as `options` say.
    #[cfg(loom)]
    pub fn with_options(options: WaitOptions) -> Self {
        Self {
            serving: WaitWord::new(0),
            slots: std::array::from_fn(|_| WaitWord::new(0)),
            beats: Beats(std::array::from_fn(|_| AtomicU64::new(0))),
            next: AtomicU32::new(0),
            waits: LockWaiting::new(options, Mechanism::Pause),
        }
    }

    // SLOTS is 1 under loom: every ticket shares the one slot there.
    #[cfg_attr(loom, allow(clippy::modulo_one))]
    fn slot(&self, ticket: u32) -> &WaitWord {
        &self.slots[ticket as usize % SLOTS]
    }

    #[cfg_attr(loom, allow(clippy::modulo_one))]
    fn beat(&self, ticket: u32) -> &AtomicU64 {
        &self.beats.0[ticket as usize % BEATS]
    }

    /// Wakes `ticket`'s sleepers after a release decided about it (served
    /// or skipped), if any sleep on its slot: the slot's value changes first
    /// so that a sleeper between its re-check and its futex sleep does not
    /// sleep on (the futex compares the value). A slot nobody sleeps on is
    /// only read, so a release to a polling waiter costs no write to it.
    fn wake_decided(&self, ticket: u32) {
        let slot = self.slot(ticket);
        // SeqCst: the read half of the store-buffering pair with a sleeper
        // (it registers, then reads `serving`; we stored `serving`, then
        // read its registration; module docs, "Memory ordering").
        if slot.has_sleepers() {
            // SeqCst: the write half of the WaitWord sleeper protocol.
            slot.value().fetch_add(1, Ordering::SeqCst);
            slot.wake_all();
        }
    }

    /// Takes a ticket (after this thread's hand-off cool-down, module
    /// docs) and waits for it to be served.
    #[inline]
    pub fn lock(&self) -> TicketGuard {
        hand_off_cooldown::wait_out(self.addr());
        let ticket = self.take_ticket();
        // SeqCst: the read half of the store-buffering pair with `unlock`.
        let ticket = if self.serving.value().load(Ordering::SeqCst) == ticket {
            ticket
        } else {
            self.lock_contended(ticket)
        };
        TicketGuard {
            ticket,
            not_send: PhantomData,
        }
    }

    /// This lock's address: what its hand-off cool-down is noted under.
    #[inline]
    fn addr(&self) -> usize {
        self as *const Self as usize
    }

    /// `next++`. Taking a ticket orders nothing by itself (SeqCst only for
    /// the store-buffering pair with `unlock`, see the module docs).
    #[inline]
    fn take_ticket(&self) -> u32 {
        let ticket = self.next.fetch_add(1, Ordering::SeqCst);
        dekker_fence();
        ticket
    }

    /// Waits for `ticket`'s turn; when skipped, takes a new ticket. Returns
    /// the ticket served.
    #[cold]
    fn lock_contended(&self, mut ticket: u32) -> u32 {
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let mut blocked = false;
        let mut passes = 0;
        loop {
            let (turn, slept) = self.wait_for_turn(ticket, liveness::is_patient(passes));
            blocked |= slept;
            if turn == Turn::Served {
                break;
            }
            passes += 1;
            ticket = self.take_ticket();
            if self.serving.value().load(Ordering::SeqCst) == ticket {
                break;
            }
        }
        profiler.finish(start, blocked);
        ticket
    }

    /// Waits until a release decides about `ticket` (`serving` reaches or
    /// passes it), publishing the beat; returns the decision and whether it
    /// slept.
    fn wait_for_turn(&self, ticket: u32, patient: bool) -> (Turn, bool) {
        let policy = self.waits.policy();
        let serving = self.serving.as_ref();
        let slot = self.slot(ticket).as_ref();
        let beat = self.beat(ticket);
        // `serving` only advances: a value at or after `ticket` means decided.
        let decided = move |s: u32| !is_after(ticket, s);
        let (mut budget, learning) = policy.begin_wait(slot.value() as *const AtomicU32 as usize);
        let mut blocked = false;
        'wait: loop {
            // POLLING `serving`, the limit restarting at each hand-off seen
            // (module docs). Relaxed: the final Acquire load takes the lock.
            let mut seen = serving.value().load(Ordering::Relaxed);
            if decided(seen) {
                break; // decided before we polled (or while we were woken)
            }
            if !cfg!(loom) && budget.polls() {
                // Relaxed (every beat store): a hint (`liveness.rs`).
                beat.store(liveness::polling(ticket, patient), Ordering::Relaxed);
            }
            while !cfg!(loom) && budget.polls() {
                let out = liveness::poll_beating(
                    serving.futex(),
                    budget.mechanism,
                    budget.poll_deadline(Deadline::NEVER),
                    beat,
                    ticket,
                    patient,
                    |s| s != seen,
                );
                if decided(out.value()) {
                    break 'wait; // WAITING => decided while polling
                }
                if out.timed_out() && out.value() == seen {
                    break; // no hand-off for a whole limit: sleep
                }
                seen = out.value();
            }
            // ASLEEP on our slot until decided, or until a pre-wake.
            // Published first, so that releases may skip us.
            beat.store(liveness::asleep(ticket, patient), Ordering::Relaxed);
            let out = slot.block_until(
                Deadline::NEVER,
                // SeqCst: the read half of the store-buffering pair with
                // `wake_decided` (module docs, "Memory ordering"); the slot's
                // value itself says nothing about the turn.
                &mut |_| decided(serving.value().load(Ordering::SeqCst)),
                SleepRules {
                    return_when_woken: true,
                    ..SleepRules::default()
                },
            );
            blocked |= out.blocked();
            if let WaitOutcome::Ready { .. } = out {
                break;
            }
            // Woken (a pre-wake, or a slot shared with another ticket):
            // poll again with a fresh limit.
            budget = policy.poll_budget();
        }
        if let Some(learning) = learning {
            learning.finish(blocked, false);
        }
        // Acquire: pairs with the SeqCst (release) store of `serving` that
        // decided our ticket: `ticket` means served, a later one skipped.
        let turn = if serving.value().load(Ordering::Acquire) == ticket {
            Turn::Served
        } else {
            Turn::Skipped
        };
        (turn, blocked)
    }

    /// Acquires the lock if no ticket is being waited for; never waits.
    #[inline]
    pub fn try_lock(&self) -> Option<TicketGuard> {
        // Acquire: pairs with the Release half of the last unlock's store.
        let serving = self.serving.value().load(Ordering::Acquire);
        // next: serving => serving + 1 (take the ticket being served).
        self.next
            .compare_exchange(
                serving,
                serving.wrapping_add(1),
                Ordering::SeqCst,
                Ordering::Relaxed,
            )
            .ok()
            .map(|ticket| TicketGuard {
                ticket,
                not_send: PhantomData,
            })
    }

    /// Acquires the lock unless `deadline` passes first. Does not queue:
    /// between attempts it waits for the served ticket to change.
    pub fn try_lock_until(&self, deadline: Deadline) -> Option<TicketGuard> {
        if let Some(g) = self.try_lock() {
            return Some(g);
        }
        let policy = self.waits.policy();
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let mut blocked = false;
        let got = loop {
            // Relaxed: a hint of what to wait on; `try_lock` acquires.
            let seen = self.serving.value().load(Ordering::Relaxed);
            if let Some(g) = self.try_lock() {
                break Some(g);
            }
            let out = self.serving.wait_until(&policy, deadline, |v| v != seen);
            blocked |= out.blocked();
            if out.timed_out() {
                break self.try_lock();
            }
        };
        profiler.finish(start, blocked);
        got
    }

    /// Releases the lock to the next running ticket (module docs).
    ///
    /// # Safety
    ///
    /// `guard` must come from an acquisition of this lock that was not
    /// released since.
    #[inline]
    pub unsafe fn unlock(&self, guard: TicketGuard) {
        let first = guard.ticket.wrapping_add(1);
        // SeqCst: orders this read after our acquisition's; the tickets it
        // shows taken are certain, later ones are found below.
        let end = self.next.load(Ordering::SeqCst);
        let owner = self.choose(first, end);
        // SERVING t => SERVING owner. SeqCst: the release of the lock, and
        // the write half of the store-buffering pairs with a sleeper (see
        // `wake_decided`), with `lock` (module docs) and with the WaitWord
        // sleeper protocol of timed waiters.
        self.serving.value().store(owner, Ordering::SeqCst);
        self.serving.wake_all();
        // The owner's and the skipped tickets' sleepers wake (a polling
        // waiter sees `serving` itself). When the release freed the lock
        // (`owner == end` as read), ticket `owner` may have been taken
        // since: a store-buffering decision (module docs).
        let taken = owner != end || {
            dekker_fence();
            self.next.load(Ordering::SeqCst) != owner
        };
        if taken {
            self.wake_decided(owner);
        }
        let mut skipped = first;
        while skipped != owner {
            self.wake_decided(skipped);
            skipped = skipped.wrapping_add(1);
        }
        if taken {
            hand_off_cooldown::handed_off(self.addr());
            // Pre-wake: ticket `owner + 1`'s waiter, if it sleeps, wakes now
            // and polls while `owner` holds the lock (module docs). Relaxed:
            // a hint; a pre-woken waiter re-checks `serving`.
            let after = owner.wrapping_add(1);
            if self.next.load(Ordering::Relaxed) != after {
                self.slot(after).wake_all();
            }
        }
    }

    /// The next owner among the tickets `first..end` taken when the release
    /// began: the first whose waiter runs, `end` when every one (at most
    /// [`WINDOW`]) is skipped, the ticket after the window when every
    /// ticket in it is skipped. A first waiter that has not beaten yet (or is
    /// patient) is chosen without a clock read.
    #[inline]
    fn choose(&self, first: u32, end: u32) -> u32 {
        if end == first {
            return first;
        }
        // Relaxed: a hint (`liveness.rs`).
        let beat = self.beat(first).load(Ordering::Relaxed);
        if (beat >> 32) as u32 != first || liveness::surely_not_passable(beat) {
            return first;
        }
        self.choose_contended(first, end)
    }

    #[cold]
    fn choose_contended(&self, first: u32, end: u32) -> u32 {
        let judge = Judge::now();
        let mut t = first;
        for _ in 0..WINDOW {
            if t == end {
                return end; // every taken ticket skipped: free the lock
            }
            // Relaxed: a hint (`liveness.rs`).
            if !judge.passable(self.beat(t).load(Ordering::Relaxed), t) {
                return t;
            }
            t = t.wrapping_add(1);
        }
        t // the whole window skipped: the ticket after it
    }

    /// Whether the lock is held or waited for (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        self.next.load(Ordering::Relaxed) != self.serving.value().load(Ordering::Relaxed)
    }

    /// Threads holding or waiting for the lock (a snapshot).
    pub fn queue_len(&self) -> u32 {
        // Relaxed: a snapshot that orders nothing.
        self.next
            .load(Ordering::Relaxed)
            .wrapping_sub(self.serving.value().load(Ordering::Relaxed))
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

impl Default for RawTicketMutex {
    fn default() -> Self {
        Self::new()
    }
}

/// The state a user can act on (a snapshot): held or not, the threads
/// holding or waiting for it, and the policy.
impl std::fmt::Debug for RawTicketMutex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawTicketMutex")
            .field("locked", &self.is_locked())
            .field("queue_len", &self.queue_len())
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

// SAFETY: a thread holds the lock from the moment `serving`
// equals its ticket until its `unlock` advances `serving`; tickets are
// unique (fetch_add / CAS on `next`), so one thread at a time. The guard is
// the ticket number: forgetting it leaves the lock held, moving or dropping
// the mutex touches no memory the guard refers to.
#[cfg(not(loom))]
unsafe impl lock_api::RawMutex for RawTicketMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = TicketGuard;

    #[inline]
    fn lock(&self) -> TicketGuard {
        RawTicketMutex::lock(self)
    }

    #[inline]
    fn try_lock(&self) -> Option<TicketGuard> {
        RawTicketMutex::try_lock(self)
    }

    #[inline]
    unsafe fn unlock(&self, guard: TicketGuard) {
        // SAFETY: forwarded from the caller.
        unsafe { RawTicketMutex::unlock(self, guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        RawTicketMutex::is_locked(self)
    }
}

// SAFETY: timed attempts acquire only through `try_lock`'s CAS.
#[cfg(not(loom))]
unsafe impl lock_api::RawMutexTimed for RawTicketMutex {
    type Duration = Duration;
    type Instant = Instant;

    fn try_lock_for(&self, timeout: Duration) -> Option<TicketGuard> {
        RawTicketMutex::try_lock_until(self, deadline_after(timeout))
    }

    fn try_lock_until(&self, timeout: Instant) -> Option<TicketGuard> {
        RawTicketMutex::try_lock_until(self, deadline_at(timeout))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Tries at a release that finds its waiter running.
    const HAND_OFF_TRIES: usize = 10_000;

    #[test]
    fn a_release_to_a_waiter_notes_a_cooldown_and_an_uncontended_one_does_not() {
        // Waiters that never sleep, so that a release finds them running
        // (one preempted for long may still be skipped: retried).
        let lock = RawTicketMutex::with_options(WaitOptions::new().policy(Policy::always_spin()));
        let addr = lock.addr();
        let guard = lock.lock();
        // SAFETY: `guard` is this lock's, released once.
        unsafe { lock.unlock(guard) };
        assert!(!hand_off_cooldown::noted(addr));
        // Each try may lose its waiter to preemption on a loaded machine;
        // enough tries that a run which is only slow still succeeds.
        let handed_off = (0..HAND_OFF_TRIES).any(|_| {
            let guard = lock.lock();
            std::thread::scope(|s| {
                let waiter = s.spawn(|| {
                    let g = lock.lock();
                    // SAFETY: `g` is this lock's, released once.
                    unsafe { lock.unlock(g) };
                });
                // The waiter has queued once it took the ticket after ours.
                // Relaxed: a test's look, ordered by the join below.
                while lock.next.load(Ordering::Relaxed) == guard.ticket.wrapping_add(1) {
                    std::thread::yield_now();
                }
                // SAFETY: `guard` is this lock's, released once.
                unsafe { lock.unlock(guard) };
                let noted = hand_off_cooldown::noted(addr);
                waiter.join().unwrap();
                noted
            })
        });
        assert!(handed_off);
        // The next lock waits it out (or finds it over) and forgets it.
        let guard = lock.lock();
        assert!(!hand_off_cooldown::noted(addr));
        // SAFETY: `guard` is this lock's, released once.
        unsafe { lock.unlock(guard) };
    }
}
