//! [`RawTicketMutex`]: a FIFO ticket lock whose waiters wait on per-slot
//! [`WaitWord`]s, so a release wakes the next ticket's holder and not every
//! waiter.
//!
//! # State
//!
//! ```text
//!  next            tickets handed out (wrapping u32)
//!  serving         the ticket that holds the lock (a WaitWord: timed
//!                  attempts wait on it)
//!  slots[t % SLOTS] == t  once ticket t is served; ticket t's holder
//!                  waits on this word only
//! ```
//!
//! The lock is free when `next == serving`. Transitions:
//! - lock: `t = next++`; if `serving == t`, held. Else wait until
//!   `slots[t % SLOTS] == t` (the waiter polls its own slot's line, which is
//!   written once per `SLOTS` releases, so waiters do not hammer the hot
//!   word: Lim & Agarwal section 6.3).
//! - unlock(t): `serving = t + 1`; if a ticket `t + 1` was taken
//!   (`next != t + 1`), advance `slots[(t + 1) % SLOTS]` to `t + 1` (never
//!   back: a late release must not undo a later one) and wake that
//!   slot's sleepers. Only the waiters whose tickets share the slot wake
//!   (one, with at most `SLOTS` waiters).
//! - try_lock / timed: `next: serving => serving + 1` with one CAS (taking
//!   the ticket being served); a timed attempt does **not** queue (a ticket,
//!   once taken, must be served), it waits for `serving` to change and tries
//!   again, so it may be overtaken by queued waiters.
//!
//! # Waiting: polling while the queue moves
//!
//! A queued waiter's wait is the sum of the critical sections and hand-offs
//! ahead of it, so a poll limit counted from the start of the wait puts
//! waiters far back in the queue to sleep while the lock is moving well;
//! then every hand-off reaches a sleeper and waits for its wake-up, the
//! waiter behind waits longer than its limit and sleeps too, and the lock
//! convoys. Here the policy's poll limit counts from the last hand-off the
//! waiter saw: `serving` is the holders' heartbeat (it advances at every
//! hand-off, at no cost to the holder), and a waiter stops polling only
//! when no hand-off happened for a whole poll limit, i.e. when the holder,
//! or the ticket being handed to, is not running (or runs a long critical
//! section). Cost: the waiter reads `serving` at each poll (a line that
//! changes once per hand-off). And an unlock that hands the lock to ticket
//! `t + 1` also wakes the sleepers of ticket `t + 2`'s slot (a pre-wake:
//! a system call only when one sleeps there), so that the next holder is
//! awake by its turn; a pre-woken waiter polls again, and sleeps again if
//! the queue stalls.
//!
//! # Memory ordering
//!
//! `serving`/`slot` stores are the releases and the waiter's loads of them
//! the acquires of the lock. Whether the unlocker must write the slot is a
//! store-buffering decision: the unlocker writes `serving` then reads
//! `next`, a new waiter writes `next` then reads `serving`; all four are
//! `SeqCst` so at least one sees the other (else the waiter would sleep on a
//! slot nobody writes). Taking a ticket is otherwise unordered.

use super::waiting::LockWaits;
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
use waitwise_platform::shim::{AtomicU32, Ordering};

/// Per-slot wait words. Guessed: 4 slots (512 bytes) give every waiter its
/// own word with up to 4 waiters (this machine class has 2-8 CPUs); with
/// more, waiters `SLOTS` tickets apart share a word and one extra wake-up
/// per release is the cost. One slot under loom, so the models reach slot
/// sharing with three threads.
pub const SLOTS: usize = if cfg!(loom) { 1 } else { 4 };

/// Whether ticket `a` comes after ticket `b` (wrapping; tickets in use
/// are far less than 2^31 apart).
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

/// A FIFO ticket lock: threads acquire in the order they called `lock`.
///
/// Fair and starvation-free, at a cost when threads outnumber CPUs: the
/// next ticket's holder may be descheduled while the lock is free (a
/// convoy), which is why [`Mutex`](super::Mutex) is the unfair
/// [`RawTtasMutex`](super::RawTtasMutex). Timed attempts do not queue.
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
    next: AtomicU32,
    waits: LockWaits,
}

/// The ticket held by a [`RawTicketMutex`] acquisition. Not `Send`: the
/// thread that locked unlocks, as with std's and parking_lot's guards.
///
/// ```compile_fail,E0277
/// fn send<T: Send>(_: T) {}
/// let m = waitwise::mutex::TicketMutex::new(0);
/// send(m.lock());
/// ```
#[derive(Debug)]
pub struct TicketGuard {
    ticket: u32,
    not_send: PhantomData<*const ()>,
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
            slots: [
                WaitWord::new(0),
                WaitWord::new(0),
                WaitWord::new(0),
                WaitWord::new(0),
            ],
            next: AtomicU32::new(0),
            waits: LockWaits::new(options, Mechanism::Pause),
        }
    }

    /// An unlocked ticket lock waiting as `options` say.
    #[cfg(loom)]
    pub fn with_options(options: WaitOptions) -> Self {
        Self {
            serving: WaitWord::new(0),
            slots: std::array::from_fn(|_| WaitWord::new(0)),
            next: AtomicU32::new(0),
            waits: LockWaits::new(options, Mechanism::Pause),
        }
    }

    // SLOTS is 1 under loom: every ticket shares the one slot there.
    #[cfg_attr(loom, allow(clippy::modulo_one))]
    fn slot(&self, ticket: u32) -> &WaitWord {
        &self.slots[ticket as usize % SLOTS]
    }

    /// Takes a ticket and waits for it to be served.
    #[inline]
    pub fn lock(&self) -> TicketGuard {
        // Taking a ticket orders nothing by itself (SeqCst only for the
        // store-buffering pair with `unlock`, see the module docs).
        let ticket = self.next.fetch_add(1, Ordering::SeqCst);
        dekker_fence();
        if self.serving.value().load(Ordering::SeqCst) != ticket {
            self.wait_for_turn(ticket);
        }
        TicketGuard {
            ticket,
            not_send: PhantomData,
        }
    }

    #[cold]
    fn wait_for_turn(&self, ticket: u32) {
        let policy = self.waits.policy();
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let slot = self.slot(ticket).as_ref();
        let served = move |v: u32| v == ticket;
        let (mut budget, learning) = policy.begin_wait(slot.value() as *const AtomicU32 as usize);
        let mut blocked = false;
        'wait: loop {
            // POLLING, the limit restarting at each hand-off seen (module
            // docs). Relaxed: `serving` is only a sign of progress here; the
            // slot's Acquire load takes the lock.
            let mut seen = self.serving.value().load(Ordering::Relaxed);
            while !cfg!(loom) && budget.polls() {
                let out = slot.poll_until(
                    budget.mechanism,
                    budget.poll_deadline(Deadline::NEVER),
                    |v| served(v) || self.serving.value().load(Ordering::Relaxed) != seen,
                );
                if served(out.value()) {
                    break 'wait; // WAITING => SERVED while polling
                }
                let now = self.serving.value().load(Ordering::Relaxed);
                if out.timed_out() && now == seen {
                    break; // no hand-off for a whole limit: sleep
                }
                seen = now;
            }
            // ASLEEP until served (WAITING => SERVED), or until a pre-wake.
            let out = slot.block_until(
                Deadline::NEVER,
                &mut |v| served(v),
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
        profiler.finish(start, blocked);
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

    /// Releases the lock to the next ticket.
    ///
    /// # Safety
    ///
    /// `guard` must come from an acquisition of this lock that was not
    /// released since.
    #[inline]
    pub unsafe fn unlock(&self, guard: TicketGuard) {
        let next = guard.ticket.wrapping_add(1);
        // SERVING t => SERVING t + 1. SeqCst: the release of the lock, and
        // the write half of the store-buffering pair with `lock` (and of the
        // WaitWord sleeper protocol for timed waiters).
        self.serving.value().store(next, Ordering::SeqCst);
        self.serving.wake_all();
        dekker_fence();
        if self.next.load(Ordering::SeqCst) != next {
            // Ticket `next` was taken: its holder may wait on its slot.
            // Advance the slot to `next` unless a later release already
            // wrote it. This release may run late: preempted after reading
            // `next`, while ticket `next` saw `serving` and ran, and SLOTS
            // more tickets passed. A plain store would then move the slot
            // back and strand the waiter of the later ticket sharing it.
            let slot = self.slot(next);
            let _ = slot
                .value()
                .fetch_update(Ordering::SeqCst, Ordering::Relaxed, |cur| {
                    is_after(next, cur).then_some(next)
                });
            slot.wake_all();
            // Pre-wake: ticket `next + 1`'s waiter, if it sleeps, wakes now
            // and polls while `next` holds the lock (module docs). Relaxed:
            // a hint; a pre-woken waiter re-checks its slot.
            let after = next.wrapping_add(1);
            if self.next.load(Ordering::Relaxed) != after {
                self.slot(after).wake_all();
            }
        }
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

// SAFETY: a thread holds the lock from the moment `serving` (or its slot)
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
