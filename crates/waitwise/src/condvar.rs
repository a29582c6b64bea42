//! The condition variable's sequence algorithm, written once as
//! [`CondSeqRef`] (a view over borrowed words), and [`Condvar`], the
//! condition variable for `lock_api` mutex guards, on top of it. The C ABI's
//! `waitwise_condvar_t` is a [`Condvar`]; the interposer's
//! `pthread_cond_t` runs [`CondSeqRef`] over three words of glibc's
//! layout.
//!
//! # Words
//!
//! ```text
//!  SEQ       number of notifies so far, wrapping; the futex waiters sleep on
//!  SLEEPERS  waiters registered as (about to be) asleep on SEQ (WaitWordRef)
//!  WAITERS   bits 30..0: threads between enter and leave
//!            bit 31 DESTROYING: a destroyer sleeps on WAITERS until the
//!            count is zero
//! ```
//!
//! Transitions (the caller's mutex `M` guards the condition):
//! - enter (holding `M`): `WAITERS += 1`, read `SEQ` into a [`WaitTicket`].
//! - wait (after unlocking `M`): poll, then sleep on `SEQ`
//!   ([`WaitWordRef`]), until `SEQ` differs from the ticket, the kernel
//!   wakes the waiter, or the deadline passes. The words are not written.
//! - leave (before re-locking `M`): `WAITERS -= 1`; the waiter whose
//!   decrement leaves `DESTROYING` alone wakes the destroyer. A waiter that
//!   is unwound instead (a cancellation) first wakes one sleeper, passing on
//!   a wake-up it may have been handed.
//! - notify_one / notify_all: if `WAITERS` is zero, nothing; else
//!   `SEQ => SEQ + 1`, then wake one / every sleeper if any is registered
//!   (no system call otherwise).
//! - destroy: `WAITERS |= DESTROYING`, sleep until it reads `DESTROYING`
//!   (a notified waiter may still be on its way out when POSIX already
//!   allows the destroy), then clear it.
//!
//! # Spurious wake-ups
//!
//! Allowed, as with every condition variable: a notify releases every thread
//! that is still *polling* (they all see the new `SEQ`), not only one; a
//! waiter that sleeps returns after its first kernel wake-up even if `SEQ`
//! has not moved since it read it; and a waiter returns if 2^32 notifies
//! happen between its read and its sleep only by luck. The second is what
//! keeps `notify_one` from being lost: the kernel wakes real-time waiters by
//! priority, not arrival, so the one it wakes for a notify may be a waiter
//! that entered after that notify's increment; if it slept again, no waiter
//! would return for the notify while an earlier one still slept. For the
//! same reason a wake-up ends the wait as a wake-up also when the deadline
//! has passed by then (a timeout reported for it would drop the notify).
//! Wait in a loop on the condition, or use [`Condvar::wait_while`]. No
//! wake-up is ever lost: a notify that follows a state change made under
//! the mutex always sees the waiter in `WAITERS` and changes `SEQ` after the
//! waiter read it (see below).
//!
//! # One mutex at a time
//!
//! [`Condvar`] panics when a thread waits with a mutex while another is in
//! a wait with a different one, as parking_lot's does ("attempted to use a
//! condition variable with more than one mutex"), instead of letting the
//! two wait for notifies made under the other mutex. It keeps the address
//! of the mutex that the last thread to enter the wait alone used, and a
//! thread entering beside others compares its own with it: one load per
//! wait, and a store only when the mutex changes (`Condvar::check_mutex`).
//! [`CondSeqRef`] does not check (its callers bring their own mutex).
//!
//! # Crowded waits
//!
//! A waiter of the default policy polls with PAUSE while the waiters
//! (counted as each enters, [`WaitTicket::waiters`]) and one notifier fit
//! on the CPUs the process may use, and by `yield` once they outnumber
//! them ([`crate::policy::crowding`]): the notifier most likely needs the
//! CPU a PAUSE poller would hold, and every waiter that a `notify_all`
//! releases goes on to contend for the mutex. Sleeping waiters are counted
//! too, so the rule errs towards yielding (a yield poll notices a notify
//! within one `sched_yield`, a PAUSE poll within ~100 ns). It polls by
//! `yield` too while they fit but the process's own threads crowd the
//! CPUs: more runnable threads than CPUs, and the process uses at least
//! three quarters of its CPUs. While the process's yields lose whole
//! slices to threads that keep the CPU, such a waiter blocks at once
//! ([`crate::policy::crowding::for_notified_wait`]). A policy given in
//! [`WaitOptions`] is used as given. The front ends decide; the
//! algorithm ([`CondSeqRef::wait`]) polls as the policy it is handed says.
//! `cargo run -p waitwise --release --example crowded_waits` measures the
//! default against the same policy given explicitly (8 threads taking
//! turns, each turn a `notify_all`); the interposer's `bench/run.sh` has
//! the same turns against glibc.
//!
//! # Memory ordering
//!
//! The mutex orders everything but the sleep/wake hand-shake, so `WAITERS`
//! and the waiter's `SEQ` read are `Relaxed`: a notifier that changed the
//! condition under the mutex after the waiter unlocked it acquired the
//! mutex after the waiter's increment and read, so (coherence) its load of
//! `WAITERS` sees the waiter counted until the waiter leaves, and its
//! increment of `SEQ` comes after the waiter's read, which cannot see it.
//! `SEQ` carries no data; the condition itself is published by the mutex.
//! The increment is `SeqCst`: it is the write half of [`WaitWordRef`]'s
//! sleeper protocol (a store-buffering pattern with the sleeper count), and
//! it is an RMW, not a store, because concurrent notifies must each move
//! `SEQ` on. The exceptions, for destroy: leaving is `Release` and the
//! destroyer's reads of `WAITERS` are `Acquire`, so a waiter's accesses to
//! the object happen before the destroy returns; after its decrement a
//! waiter uses only the address of `WAITERS` (for the wake-up).

use crate::loom_const::const_unless_loom;
use crate::options::{LazyWaiting, WaitOptions};
use crate::policy::{Policy, SyncKind};
use crate::profile::WaitProfile;
use crate::wait_word::{SleepRules, WaitOutcome, WaitWord, WaitWordRef};
use lock_api::{MutexGuard, RawMutex};
use std::fmt;
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::Futex;
use waitwise_platform::shim::{AtomicUsize, Ordering};

/// `WAITERS`: a destroyer sleeps on the word until the count is zero; the
/// waiter whose decrement leaves this bit alone wakes it.
const DESTROYING: u32 = 1 << 31;

/// What a waiter read when it entered ([`CondSeqRef::enter`]): the `SEQ`
/// it waits to see move on. Give it to [`CondSeqRef::wait`], then leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a waiter that entered must wait with its ticket, then leave"]
pub struct WaitTicket {
    seq: u32,
    waiters: u32,
}

impl WaitTicket {
    /// The threads in the wait (entered and not yet left) when this one
    /// entered, itself included: a snapshot, for choosing how to poll (a
    /// default wait polls by `yield` once the waiters and a notifier
    /// outnumber the CPUs, [`crate::policy::crowding`]).
    pub fn waiters(self) -> u32 {
        self.waiters
    }
}

/// The condition variable's sequence algorithm over borrowed words (module
/// docs: words, transitions, ordering): the one copy, for [`Condvar`] and
/// for front ends whose words live elsewhere (the interposer's
/// `pthread_cond_t`). The caller brings the mutex: it enters holding it,
/// waits and leaves without it, and re-locks it after leaving. Every
/// waiter, notifier and destroyer of the words must go through this view.
///
/// # Examples
/// ```
/// use std::sync::atomic::AtomicU32;
/// use waitwise::condvar::CondSeqRef;
/// use waitwise::platform::futex::Futex;
/// use waitwise::{Deadline, Policy, WaitWordRef};
///
/// let (seq, sleepers, waiters) = (Futex::new(0), AtomicU32::new(0), Futex::new(0));
/// let cv = CondSeqRef::new(WaitWordRef::new(&seq, &sleepers), &waiters);
/// assert!(!cv.notify_one()); // no waiter: nothing to do
/// let lock = std::sync::Mutex::new(());
/// let guard = lock.lock().unwrap();
/// let ticket = cv.enter(); // under the mutex
/// drop(guard);
/// let soon = Deadline::after(std::time::Duration::from_millis(1));
/// assert!(cv.wait(ticket, &Policy::always_block(), soon, Default::default()).timed_out());
/// cv.leave();
/// let _guard = lock.lock().unwrap();
/// cv.wait_for_waiters_to_leave(); // what a destroy does
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CondSeqRef<'a> {
    /// `SEQ` and `SLEEPERS`.
    seq: WaitWordRef<'a>,
    /// `WAITERS`, a futex for the destroyer's sleep.
    waiters: &'a Futex,
}

impl<'a> CondSeqRef<'a> {
    /// A view over `seq` (`SEQ` with its sleeper count) and `waiters`. A
    /// condition variable's words all start at zero.
    #[inline(always)]
    pub fn new(seq: WaitWordRef<'a>, waiters: &'a Futex) -> Self {
        Self { seq, waiters }
    }

    /// Enters a wait, holding the mutex: counts the waiter in `WAITERS`
    /// and reads `SEQ`. Unlock the mutex next, then [`CondSeqRef::wait`].
    ///
    /// Inlined always (also unoptimized): a front end that undoes the
    /// count from a cleanup routine marks the step right after it, and the
    /// fewer instructions in between, the smaller the window an
    /// asynchronous unwind can leak it in.
    #[inline(always)]
    pub fn enter(self) -> WaitTicket {
        // WAITERS += 1. Relaxed, and the SEQ read too: ordered by the mutex
        // (module doc, "Memory ordering").
        let before = self.waiters.value().fetch_add(1, Ordering::Relaxed);
        WaitTicket {
            seq: self.seq.value().load(Ordering::Relaxed),
            waiters: entered(before),
        }
    }

    /// Waits, without the mutex, for a notify after `ticket` was taken:
    /// polls and sleeps as `policy` says until `SEQ` moves on
    /// ([`WaitOutcome::Ready`]), the kernel wakes the waiter
    /// ([`WaitOutcome::Woken`]) or `deadline` passes
    /// ([`WaitOutcome::TimedOut`]). Either of the first two may be
    /// spurious. `rules` may make the sleep a cancellation point or
    /// interruptible; a kernel wake-up always ends it
    /// (`return_when_woken`, module docs). Then [`CondSeqRef::leave`].
    #[inline]
    pub fn wait(
        self,
        ticket: WaitTicket,
        policy: &Policy,
        deadline: Deadline,
        rules: SleepRules,
    ) -> WaitOutcome {
        let rules = SleepRules {
            return_when_woken: true,
            ..rules
        };
        self.seq
            .wait_with(policy, deadline, |seq| seq != ticket.seq, rules)
    }

    /// Leaves the wait (before re-locking the mutex): the waiter's last
    /// access to the words but for the address of a wake-up that a waiting
    /// destroyer asked for (a wake on memory the destroyer may already have
    /// freed is harmless: the kernel finds no sleeper there).
    ///
    /// Inlined always, as [`CondSeqRef::enter`].
    #[inline(always)]
    pub fn leave(self) {
        // WAITERS -= 1. Release: the waiter's last access to the object
        // (module doc); a destroyer reads it with Acquire.
        let previous = self.waiters.value().fetch_sub(1, Ordering::Release);
        self.left(previous);
    }

    /// [`CondSeqRef::enter`], marking `step = mark` right after the count
    /// changes, for a front end whose cleanup routine undoes the count when
    /// the thread is unwound (a signal handler's `pthread_exit` may end it
    /// at any instruction). Where the platform has
    /// [`add_then_mark`](waitwise_platform::arch::add_then_mark)'s gap, a
    /// routine that calls
    /// [`complete_interrupted_mark`](waitwise_platform::cancel::complete_interrupted_mark)
    /// first never finds the count changed and the mark not: the count
    /// and the mark change as one step.
    #[inline(always)]
    pub fn enter_marking(self, step: &std::sync::atomic::AtomicU8, mark: u8) -> WaitTicket {
        // WAITERS += 1, then the mark (SeqCst RMW: stronger than enter's
        // Relaxed, which suffices).
        let before = add_then_mark(self.waiters, 1, step, mark);
        WaitTicket {
            // Relaxed: ordered by the mutex (module doc).
            seq: self.seq.value().load(Ordering::Relaxed),
            waiters: entered(before),
        }
    }

    /// [`CondSeqRef::leave`], marking `step = mark` right after the count
    /// changes (see [`CondSeqRef::enter_marking`]). A waiter unwound after
    /// the mark has left, and may owe a waiting destroyer its wake-up: its
    /// cleanup routine calls [`CondSeqRef::wake_destroyer`].
    #[inline(always)]
    pub fn leave_marking(self, step: &std::sync::atomic::AtomicU8, mark: u8) {
        // WAITERS -= 1, then the mark (SeqCst RMW: stronger than leave's
        // Release, which suffices).
        let previous = add_then_mark(self.waiters, u32::MAX, step, mark);
        self.left(previous);
    }

    /// After the decrement that read `previous`: the last waiter out wakes
    /// the destroyer.
    #[inline(always)]
    fn left(self, previous: u32) {
        if previous == DESTROYING | 1 {
            self.wake_destroyer();
        }
    }

    /// Wakes a destroyer that waits for the waiters to leave, if any (a
    /// system call; harmless when none waits, also on memory the destroyer
    /// has freed since: the kernel finds no sleeper there). Never unwinds.
    #[inline]
    pub fn wake_destroyer(self) {
        #[cfg(not(loom))]
        waitwise_platform::futex::wake_address(
            self.waiters.value().as_ptr().cast_const(),
            u32::MAX,
        );
        // Loom's models keep every object alive until they end.
        #[cfg(loom)]
        self.waiters.wake(u32::MAX);
    }

    /// Leaves the wait of a waiter that is being unwound out of it (a
    /// cancellation, a signal handler's `pthread_exit`): wakes one sleeper
    /// first, since the kernel may have handed this waiter a notify's
    /// wake-up just before (a spurious wake-up for the other at worst),
    /// then [`CondSeqRef::leave`]. Never unwinds.
    #[inline]
    pub fn leave_passing_on_wake(self) {
        self.seq.wake_one();
        self.leave();
    }

    /// Whether any thread is between enter and leave (a snapshot; exact
    /// for a caller that holds the mutex, or notifies after a critical
    /// section, as far as the waiters it must wake are concerned).
    #[inline]
    pub fn has_waiters(self) -> bool {
        self.waiters() != 0
    }

    /// The threads between enter and leave (a snapshot, exact as
    /// [`CondSeqRef::has_waiters`]).
    #[inline]
    pub fn waiters(self) -> u32 {
        // Relaxed: ordered by the mutex (module doc, "Memory ordering").
        self.waiters.value().load(Ordering::Relaxed) & !DESTROYING
    }

    /// Wakes one waiter (and, spuriously, any still polling). Returns
    /// whether a `futex_wake` system call was made.
    #[inline]
    pub fn notify_one(self) -> bool {
        self.notify(false).1
    }

    /// Wakes every waiter. Returns whether a `futex_wake` system call was
    /// made.
    #[inline]
    pub fn notify_all(self) -> bool {
        self.notify(true).1
    }

    /// The notify itself: the threads in the wait and, if any, `SEQ + 1`
    /// and a wake of one or all sleepers. Returns those threads and
    /// whether a `futex_wake` system call was made.
    #[inline]
    fn notify(self, all: bool) -> (u32, bool) {
        let waiting = self.waiters();
        if waiting == 0 {
            return (0, false);
        }
        let seq = self.bump();
        let woke = if all { seq.wake_all() } else { seq.wake_one() };
        (waiting, woke)
    }

    /// `SEQ => SEQ + 1`. SeqCst: the Dekker write before the sleeper check
    /// (module doc).
    #[inline]
    fn bump(self) -> WaitWordRef<'a> {
        self.seq.value().fetch_add(1, Ordering::SeqCst);
        self.seq
    }

    /// What a destroy does: waits (asleep) until every thread that entered
    /// has left, then leaves the words as new. Call it when no thread
    /// enters any more (POSIX: destroying a condvar that threads wait on
    /// is undefined, but ones already notified may still be leaving).
    pub fn wait_for_waiters_to_leave(self) {
        let word = self.waiters.value();
        // WAITERS |= DESTROYING. Acquire: pairs with the waiters' Release
        // decrements; after this no waiter touches the words.
        let mut v = word.fetch_or(DESTROYING, Ordering::Acquire) | DESTROYING;
        while v != DESTROYING {
            self.waiters.wait(v, None);
            // Acquire: as above.
            v = word.load(Ordering::Acquire);
        }
        // DESTROYING => 0. Relaxed: nobody uses the words any more, until
        // whatever shares them again orders this store.
        word.store(0, Ordering::Relaxed);
    }
}

/// The waiters in the wait once one more entered, from `WAITERS` before
/// it did.
#[inline(always)]
fn entered(before: u32) -> u32 {
    (before & !DESTROYING).wrapping_add(1)
}

/// `waiters += delta`, then `step = mark`; returns the previous count. One
/// step for a signal handler where the platform can tell
/// ([`waitwise_platform::arch::add_then_mark`]).
#[inline(always)]
fn add_then_mark(waiters: &Futex, delta: u32, step: &std::sync::atomic::AtomicU8, mark: u8) -> u32 {
    #[cfg(not(loom))]
    return waitwise_platform::arch::add_then_mark(waiters.value(), delta, step, mark);
    #[cfg(loom)]
    {
        let previous = waiters.value().fetch_add(delta, Ordering::SeqCst);
        // Relaxed: the mark is this thread's own (its cleanup routine).
        step.store(mark, std::sync::atomic::Ordering::Relaxed);
        previous
    }
}

/// How a timed wait on a [`Condvar`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitTimeoutResult {
    /// Woken before the timeout: by a notify, or spuriously.
    Woken,
    /// The timeout passed (for `wait_while_timeout`: with the condition
    /// still true).
    TimedOut,
}

impl WaitTimeoutResult {
    /// Whether the wait ended because the timeout passed.
    pub fn timed_out(self) -> bool {
        self == WaitTimeoutResult::TimedOut
    }
}

/// A condition variable: block until another thread changes shared state
/// under a mutex and notifies.
///
/// Use it when threads wait for a condition on data that a mutex protects
/// (a queue becoming non-empty, a flag set). For a one-shot signal without a
/// mutex, [`crate::Event`] is cheaper.
///
/// Waits may wake spuriously (see the [module docs](self)): check the
/// condition in a loop, or use [`Condvar::wait_while`].
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use waitwise::condvar::Condvar;
///
/// let pair = Arc::new((parking_lot::Mutex::new(false), Condvar::new()));
/// let pair2 = pair.clone();
/// let producer = std::thread::spawn(move || {
///     let (lock, cv) = &*pair2;
///     *lock.lock() = true;
///     cv.notify_one();
/// });
/// let (lock, cv) = &*pair;
/// let mut ready = lock.lock();
/// cv.wait_while(&mut ready, |ready| !*ready);
/// assert!(*ready);
/// drop(ready);
/// producer.join().unwrap();
/// ```
///
/// `new` is `const`, so a condition variable can be a `static` (beside a
/// static mutex):
/// ```
/// use waitwise::{condvar::Condvar, Mutex};
///
/// static QUEUE: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// static NON_EMPTY: Condvar = Condvar::new();
/// let consumer = std::thread::spawn(|| {
///     let mut q = QUEUE.lock();
///     NON_EMPTY.wait_while(&mut q, |q| q.is_empty());
///     q.pop()
/// });
/// QUEUE.lock().push(7);
/// NON_EMPTY.notify_one();
/// assert_eq!(consumer.join().unwrap(), Some(7));
/// ```
pub struct Condvar {
    /// `SEQ` and `SLEEPERS` (module docs), on a cache line of their own.
    seq: WaitWord,
    /// `WAITERS` (module docs).
    waiters: Futex,
    /// The address of the mutex that the threads in the wait use, as the
    /// last one to enter it alone recorded it (0 before the first wait):
    /// [`Condvar::check_mutex`].
    mutex: AtomicUsize,
    waits: LazyWaiting,
}

impl Condvar {
    const_unless_loom! {
        /// A condition variable waiting with the producer-consumer kind's
        /// default policy ([`Policy::default_for`]: `adapt/b`, or
        /// `s/b/ALPHA` when `WAITWISE_ALPHA` is set), polling by `yield`
        /// in a wait whose waiters and a notifier outnumber the CPUs
        /// (module docs, "Crowded waits"), profiling as `WAITWISE_PROFILE`
        /// says (both read on the first wait).
        pub fn new() -> Self {
            Self::with_options(WaitOptions::new())
        }

        /// A condition variable with explicit waiting settings.
        ///
        /// # Examples
        /// ```
        /// use waitwise::{condvar::Condvar, Policy, WaitOptions};
        ///
        /// let cv = Condvar::with_options(WaitOptions::new().policy(Policy::always_block()));
        /// assert_eq!(cv.policy().name(), "/b/0");
        /// ```
        pub fn with_options(options: WaitOptions) -> Self {
            Self {
                seq: WaitWord::new(0),
                waiters: Futex::new(0),
                mutex: AtomicUsize::new(0),
                waits: LazyWaiting::new(options, SyncKind::ProducerConsumer),
            }
        }
    }

    /// The sequence algorithm over this condition variable's words.
    #[inline(always)]
    fn cond_seq(&self) -> CondSeqRef<'_> {
        CondSeqRef::new(self.seq.as_ref(), &self.waiters)
    }

    /// The policy waits follow.
    pub fn policy(&self) -> &Policy {
        self.waits.policy()
    }

    /// The wait-time histogram so far (`None` when profiling is off).
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.waits
            .profiler()
            .snapshot(SyncKind::ProducerConsumer.name())
    }

    /// Unlocks the guard's mutex, waits for a notify, and locks it again.
    /// May wake spuriously.
    ///
    /// # Examples
    /// ```
    /// use std::sync::Arc;
    /// use waitwise::condvar::Condvar;
    ///
    /// let shared = Arc::new((parking_lot::Mutex::new(Vec::new()), Condvar::new()));
    /// let s2 = shared.clone();
    /// std::thread::spawn(move || {
    ///     s2.0.lock().push(7);
    ///     s2.1.notify_all();
    /// });
    /// let mut queue = shared.0.lock();
    /// while queue.is_empty() {
    ///     shared.1.wait(&mut queue);
    /// }
    /// assert_eq!(queue.pop(), Some(7));
    /// ```
    ///
    /// # Panics
    ///
    /// If another thread is in a wait on this condition variable with a
    /// different mutex (as parking_lot's; such a wait would never be
    /// notified under the right mutex). A thread is in the wait from its
    /// call until the call returns; the check may miss two such threads
    /// entering at the same instant. Every wait method checks.
    ///
    /// ```
    /// use std::panic::{catch_unwind, AssertUnwindSafe};
    /// use waitwise::{condvar::Condvar, Mutex};
    ///
    /// let (m1, m2, cv) = (Mutex::new(false), Mutex::new(()), Condvar::new());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let mut waiting = m1.lock();
    ///         *waiting = true;
    ///         cv.wait_while(&mut waiting, |waiting| *waiting);
    ///     });
    ///     while !*m1.lock() {} // the waiter is in its wait with `m1`
    ///     let misuse = catch_unwind(AssertUnwindSafe(|| cv.wait(&mut m2.lock())));
    ///     assert!(misuse.is_err());
    ///     *m1.lock() = false;
    ///     cv.notify_all();
    /// });
    /// ```
    pub fn wait<R: RawMutex, T: ?Sized>(&self, guard: &mut MutexGuard<'_, R, T>) {
        self.wait_deadline(guard, Deadline::NEVER);
    }

    /// Waits while `condition` holds for the protected data; returns with the
    /// mutex locked and the condition false.
    pub fn wait_while<R, T, F>(&self, guard: &mut MutexGuard<'_, R, T>, mut condition: F)
    where
        R: RawMutex,
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut **guard) {
            self.wait(guard);
        }
    }

    /// Like [`Condvar::wait`], but gives up after `timeout`.
    /// `Duration::ZERO` unlocks, re-locks and reports
    /// [`WaitTimeoutResult::TimedOut`] at once; `Duration::MAX` never times
    /// out.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::condvar::Condvar;
    ///
    /// let lock = parking_lot::Mutex::new(());
    /// let cv = Condvar::new();
    /// let mut guard = lock.lock();
    /// assert!(cv.wait_timeout(&mut guard, Duration::from_millis(1)).timed_out());
    /// ```
    pub fn wait_timeout<R: RawMutex, T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, R, T>,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        self.wait_deadline(guard, Deadline::after(timeout))
    }

    /// Like [`Condvar::wait`], but gives up at `deadline`.
    ///
    /// # Panics
    ///
    /// As [`Condvar::wait`], when used with two mutexes at once.
    pub fn wait_deadline<R: RawMutex, T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, R, T>,
        deadline: Deadline,
    ) -> WaitTimeoutResult {
        let mutex = (MutexGuard::mutex(guard) as *const lock_api::Mutex<R, T>)
            .cast::<()>()
            .addr();
        self.wait_with_unlock(mutex, deadline, |wait| {
            MutexGuard::unlocked(guard, wait);
        })
    }

    /// The wait for a mutex that is not a `lock_api` guard of this crate's
    /// `lock_api` (another version's guard, a raw lock): the caller holds
    /// the mutex whose address is `mutex`, and `unlocked` unlocks it, calls
    /// the wait it is handed once, and locks it again (as
    /// `MutexGuard::unlocked`). The wait methods above are this with a
    /// `lock_api` guard. If `unlocked` does not call the wait, the call
    /// returns at once as a spurious wake-up.
    ///
    /// # Examples
    /// ```
    /// use waitwise::{condvar::Condvar, Deadline};
    ///
    /// let lock = std::sync::Mutex::new(());
    /// let cv = Condvar::new();
    /// let mut guard = Some(lock.lock().unwrap());
    /// let soon = Deadline::after(std::time::Duration::from_millis(1));
    /// let out = cv.wait_with_unlock(&lock as *const _ as usize, soon, |wait| {
    ///     drop(guard.take());
    ///     wait();
    ///     guard = Some(lock.lock().unwrap());
    /// });
    /// assert!(out.timed_out());
    /// ```
    ///
    /// # Panics
    ///
    /// As [`Condvar::wait`], when used with two mutexes at once.
    pub fn wait_with_unlock(
        &self,
        mutex: usize,
        deadline: Deadline,
        unlocked: impl FnOnce(&mut dyn FnMut()),
    ) -> WaitTimeoutResult {
        let cond_seq = self.cond_seq();
        let ticket = cond_seq.enter();
        if !self.check_mutex(mutex, ticket) {
            cond_seq.leave();
            panic!("attempted to use a condition variable with more than one mutex");
        }
        let profiler = self.waits.profiler();
        let start = profiler.start();
        // The waiters and a notifier (crowding's threads of the wait).
        let policy = self.waits.policy_for_threads(ticket.waiters() as usize + 1);
        let mut out = None;
        unlocked(&mut || {
            if out.is_none() {
                let waited = cond_seq.wait(ticket, &policy, deadline, SleepRules::default());
                cond_seq.leave();
                out = Some(waited);
            }
        });
        let Some(out) = out else {
            // Not called: leave, and report a spurious wake-up.
            cond_seq.leave();
            return WaitTimeoutResult::Woken;
        };
        profiler.finish(start, out.blocked());
        if out.timed_out() {
            WaitTimeoutResult::TimedOut
        } else {
            WaitTimeoutResult::Woken
        }
    }

    /// Waits while `condition` holds, at most `timeout`. Returns
    /// [`WaitTimeoutResult::TimedOut`] only if the condition still holds
    /// when the time is up; the mutex is locked on return either way.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::condvar::Condvar;
    ///
    /// let lock = parking_lot::Mutex::new(3);
    /// let cv = Condvar::new();
    /// let mut n = lock.lock();
    /// // The condition is already false: no wait at all.
    /// assert!(!cv.wait_while_timeout(&mut n, Duration::ZERO, |n| *n == 0).timed_out());
    /// // Still true after the timeout:
    /// assert!(cv.wait_while_timeout(&mut n, Duration::from_millis(1), |n| *n == 3).timed_out());
    /// ```
    pub fn wait_while_timeout<R, T, F>(
        &self,
        guard: &mut MutexGuard<'_, R, T>,
        timeout: Duration,
        mut condition: F,
    ) -> WaitTimeoutResult
    where
        R: RawMutex,
        T: ?Sized,
        F: FnMut(&mut T) -> bool,
    {
        let deadline = Deadline::after(timeout);
        while condition(&mut **guard) {
            if deadline.has_passed() || self.wait_deadline(guard, deadline).timed_out() {
                // The wait's own verdict is final: check the condition once
                // more, then report.
                return if condition(&mut **guard) {
                    WaitTimeoutResult::TimedOut
                } else {
                    WaitTimeoutResult::Woken
                };
            }
        }
        WaitTimeoutResult::Woken
    }

    /// Whether `mutex` (an address) is the mutex of the threads in the
    /// wait that `ticket` entered; records it when this thread entered the
    /// wait alone. The check behind [`Condvar::wait`]'s panic.
    ///
    /// A thread counts as in the wait from its call until its wait
    /// returns, as POSIX binds a condition variable to a mutex, so a
    /// thread notified with one mutex and still on its way out also
    /// counts (parking_lot forgets a waiter once it is notified).
    ///
    /// No false alarm: threads of one mutex enter the wait one at a time
    /// under it, so each sees the address recorded by the one before, and
    /// the address changes only when a thread enters alone or when threads
    /// of two mutexes are in the wait at once. A misuse whose threads
    /// enter at the same time may go unseen (nothing orders them).
    ///
    /// Relaxed, both accesses: a diagnostic that orders nothing; between
    /// threads of one mutex, the mutex orders them (above).
    #[inline]
    fn check_mutex(&self, mutex: usize, ticket: WaitTicket) -> bool {
        let recorded = self.mutex.load(Ordering::Relaxed);
        if recorded == mutex {
            return true;
        }
        if ticket.waiters() == 1 {
            // Alone in the wait: what is recorded is an earlier wait's.
            self.mutex.store(mutex, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Wakes one waiting thread (and, spuriously, any that are still
    /// polling). Returns whether a thread was in the wait, as
    /// parking_lot's returns whether it woke one: then at least one
    /// returns from its wait (one whose timeout is already passing counts).
    /// Costs one load when no thread waits; else one atomic increment,
    /// plus a `futex_wake` system call only if a waiter sleeps in the
    /// kernel.
    ///
    /// # Examples
    /// ```
    /// let cv = waitwise::Condvar::new();
    /// assert!(!cv.notify_one()); // nobody waits
    /// ```
    #[inline]
    pub fn notify_one(&self) -> bool {
        self.cond_seq().notify(false).0 != 0
    }

    /// Wakes every waiting thread. Returns how many threads were in the
    /// wait, as parking_lot's returns how many it woke: each returns from
    /// its wait (one whose timeout is already passing counts). Costs one
    /// load when no thread waits; else one atomic increment, plus a
    /// `futex_wake` system call only if a waiter sleeps in the kernel.
    ///
    /// # Examples
    /// ```
    /// use waitwise::{Condvar, Mutex};
    ///
    /// let (m, cv) = (Mutex::new(false), Condvar::new());
    /// assert_eq!(cv.notify_all(), 0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..2 {
    ///         s.spawn(|| cv.wait_while(&mut m.lock(), |go| !*go));
    ///     }
    ///     loop {
    ///         // Waiters enter under the mutex: holding it, we see both
    ///         // in the wait or wait for them.
    ///         let mut go = m.lock();
    ///         if cv.waiters() == 2 {
    ///             *go = true;
    ///             assert_eq!(cv.notify_all(), 2);
    ///             break;
    ///         }
    ///     }
    /// });
    /// ```
    #[inline]
    pub fn notify_all(&self) -> usize {
        self.cond_seq().notify(true).0 as usize
    }

    /// The threads in a wait now (a snapshot; exact for a caller holding
    /// the mutex, as far as threads that wait for that holder's notify go).
    pub fn waiters(&self) -> u32 {
        self.cond_seq().waiters()
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Self::new()
    }
}

/// The state a user can act on (a snapshot): how many threads wait in it,
/// and the policy by name.
impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condvar")
            .field("waiters", &self.waiters())
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn const_new_static_and_debug() {
        static CV: Condvar = Condvar::new();
        CV.notify_all();
        assert_eq!(
            CV.policy(),
            &Policy::default_for(SyncKind::ProducerConsumer)
        );
        let cv = Condvar::with_options(WaitOptions::new().policy(Policy::always_block()));
        assert_eq!(format!("{cv:?}"), "Condvar { waiters: 0, policy: /b/0 }");
        let m = crate::Mutex::new(());
        let mut g = m.lock();
        assert!(cv.wait_timeout(&mut g, Duration::ZERO).timed_out());
        assert_eq!(format!("{cv:?}"), "Condvar { waiters: 0, policy: /b/0 }");
    }

    #[test]
    fn tickets_count_the_waiters_they_enter_with() {
        let cv = Condvar::new();
        let a = cv.cond_seq().enter();
        let b = cv.cond_seq().enter();
        assert_eq!((a.waiters(), b.waiters()), (1, 2));
        cv.cond_seq().leave();
        let step = std::sync::atomic::AtomicU8::new(0);
        let c = cv.cond_seq().enter_marking(&step, 1);
        assert_eq!(c.waiters(), 2, "one left, one more entered");
        cv.cond_seq().leave();
        cv.cond_seq().leave();
        assert!(!cv.cond_seq().has_waiters());
    }

    #[test]
    fn crowded_default_waits_poll_by_yield_and_explicit_ones_as_given() {
        use crate::policy::crowding::allowed_cpus;
        let cv = Condvar::new();
        let fits = cv.waits.policy_for_threads(allowed_cpus());
        assert_eq!(fits, *cv.policy(), "waiters and notifier fit: the default");
        let crowded = cv.waits.policy_for_threads(allowed_cpus() + 1);
        // Yield, or block while the process's yields lose slices.
        assert!(!crate::policy::crowding::holds_cpu(crowded.mechanism()));
        assert_eq!(crowded.limit(), cv.policy().limit());
        let explicit = Policy::two_phase(0.5);
        let cv = Condvar::with_options(WaitOptions::new().policy(explicit));
        assert_eq!(cv.waits.policy_for_threads(allowed_cpus() + 1), explicit);
    }

    /// parking_lot's `condvar::tests::two_mutexes`: a wait with a second
    /// mutex while a thread waits with the first panics (instead of
    /// waiting forever).
    #[test]
    #[should_panic(expected = "more than one mutex")]
    fn two_mutexes_panics_like_parking_lot() {
        let m = Arc::new(crate::Mutex::new(()));
        let m2 = m.clone();
        let m3 = Arc::new(crate::Mutex::new(()));
        let c = Arc::new(Condvar::new());
        let c2 = c.clone();

        // Lets the waiter go when the test panics.
        struct PanicGuard<'a>(&'a Condvar);
        impl Drop for PanicGuard<'_> {
            fn drop(&mut self) {
                self.0.notify_one();
            }
        }

        let (tx, rx) = std::sync::mpsc::channel();
        let g = m.lock();
        let _t = std::thread::spawn(move || {
            let mut g = m2.lock();
            tx.send(()).unwrap();
            c2.wait(&mut g);
        });
        drop(g);
        rx.recv().unwrap();
        let _g = m.lock();
        let _guard = PanicGuard(&c);
        c.wait(&mut m3.lock());
    }

    /// parking_lot's `condvar::tests::two_mutexes_disjoint`: a second
    /// mutex once the first one's waits have returned is fine.
    #[test]
    fn two_mutexes_disjoint_like_parking_lot() {
        let m = Arc::new(crate::Mutex::new(()));
        let m2 = m.clone();
        let m3 = Arc::new(crate::Mutex::new(()));
        let c = Arc::new(Condvar::new());
        let c2 = c.clone();

        let mut g = m.lock();
        let t = std::thread::spawn(move || {
            let _g = m2.lock();
            c2.notify_one();
        });
        c.wait(&mut g);
        drop(g);

        let _ = c.wait_timeout(&mut m3.lock(), Duration::from_millis(1));
        t.join().unwrap();
    }

    #[test]
    fn a_mutex_misuse_leaves_the_wait_and_the_mutex_usable() {
        let (m1, m2) = (crate::Mutex::new(false), crate::Mutex::new(()));
        let cv = Condvar::new();
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut waiting = m1.lock();
                *waiting = true;
                cv.wait_while(&mut waiting, |waiting| *waiting);
            });
            while !*m1.lock() {
                std::thread::yield_now();
            }
            let misuse = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                cv.wait(&mut m2.lock());
            }));
            assert!(misuse.is_err());
            // The panicking thread left the wait: one waiter is counted.
            assert_eq!(cv.waiters.value().load(Ordering::Relaxed), 1);
            assert!(!m2.is_locked());
            *m1.lock() = false;
            cv.notify_all();
        });
        // Once every wait returned, another mutex may be used.
        assert!(cv.wait_timeout(&mut m2.lock(), Duration::ZERO).timed_out());
    }

    /// parking_lot's `condvar::tests::notify_one_return_true`.
    #[test]
    fn notify_one_return_true_like_parking_lot() {
        let m = Arc::new(crate::Mutex::new(()));
        let m2 = m.clone();
        let c = Arc::new(Condvar::new());
        let c2 = c.clone();

        let mut g = m.lock();
        let t = std::thread::spawn(move || {
            let _g = m2.lock();
            assert!(c2.notify_one());
        });
        c.wait(&mut g);
        drop(g);
        t.join().unwrap();
    }

    /// parking_lot's `condvar::tests::notify_one_return_false`.
    #[test]
    fn notify_one_return_false_like_parking_lot() {
        let m = Arc::new(crate::Mutex::new(()));
        let c = Arc::new(Condvar::new());

        let t = std::thread::spawn(move || {
            let _g = m.lock();
            assert!(!c.notify_one());
        });
        t.join().unwrap();
    }

    /// parking_lot's `condvar::tests::notify_all_return`.
    #[test]
    fn notify_all_return_like_parking_lot() {
        const N: usize = 10;

        let data = Arc::new((crate::Mutex::new(0), Condvar::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..N {
            let data = data.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                let (lock, cond) = &*data;
                let mut cnt = lock.lock();
                *cnt += 1;
                if *cnt == N {
                    tx.send(()).unwrap();
                }
                while *cnt != 0 {
                    cond.wait(&mut cnt);
                }
                tx.send(()).unwrap();
            });
        }
        drop(tx);

        let (lock, cond) = &*data;
        rx.recv().unwrap();
        let mut cnt = lock.lock();
        *cnt = 0;
        assert_eq!(cond.notify_all(), N);
        drop(cnt);

        for _ in 0..N {
            rx.recv().unwrap();
        }

        assert_eq!(cond.notify_all(), 0);
    }

    #[test]
    fn notify_without_waiters_makes_no_syscall() {
        let cv = Condvar::new();
        assert!(!cv.notify_one());
        assert_eq!(cv.notify_all(), 0);
        assert!(!cv.seq.has_sleepers());
        // No waiter: the sequence did not even move.
        assert_eq!(cv.seq.value().load(Ordering::SeqCst), 0);
    }

    #[test]
    fn destroy_waits_for_a_notified_waiter_to_leave() {
        use std::sync::atomic::{AtomicBool, AtomicU32};
        use waitwise_platform::futex::Futex;
        let (seq, sleepers, waiters) = (Futex::new(0), AtomicU32::new(0), Futex::new(0));
        let cv = CondSeqRef::new(WaitWordRef::new(&seq, &sleepers), &waiters);
        let left = AtomicBool::new(false);
        std::thread::scope(|s| {
            let ticket = cv.enter();
            let left = &left;
            s.spawn(move || {
                let rules = SleepRules::default();
                let out = cv.wait(ticket, &Policy::always_block(), Deadline::NEVER, rules);
                assert!(!out.timed_out(), "{out:?}");
                std::thread::sleep(Duration::from_millis(20));
                left.store(true, Ordering::Relaxed);
                cv.leave();
            });
            while !WaitWordRef::new(&seq, &sleepers).has_sleepers() {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(cv.notify_all());
            cv.wait_for_waiters_to_leave();
            // Relaxed: the leave's Release and the destroy's Acquire order it.
            assert!(left.load(Ordering::Relaxed));
            assert!(!cv.has_waiters());
        });
    }

    #[test]
    fn zero_timeout_returns_at_once_with_the_lock_held() {
        let lock = parking_lot::Mutex::new(0);
        let cv = Condvar::with_options(WaitOptions::new().policy(Policy::always_block()));
        let mut g = lock.lock();
        let t = Instant::now();
        assert!(cv.wait_timeout(&mut g, Duration::ZERO).timed_out());
        assert!(t.elapsed() < Duration::from_millis(500));
        assert!(lock.is_locked());
        *g += 1;
    }

    #[test]
    fn sleeping_waiter_is_woken_for_every_policy() {
        for policy in [
            Policy::always_block(),
            Policy::always_spin(),
            Policy::for_kind(SyncKind::ProducerConsumer),
            Policy::default_for(SyncKind::ProducerConsumer),
        ] {
            let shared = Arc::new((
                parking_lot::Mutex::new(false),
                Condvar::with_options(WaitOptions::new().policy(policy)),
            ));
            let s2 = shared.clone();
            let h = std::thread::spawn(move || {
                let mut g = s2.0.lock();
                s2.1.wait_while(&mut g, |flag| !*flag);
            });
            std::thread::sleep(Duration::from_millis(2));
            *shared.0.lock() = true;
            shared.1.notify_one();
            h.join().unwrap();
        }
    }

    #[test]
    fn profiling_records_waits() {
        let lock = parking_lot::Mutex::new(());
        let cv = Condvar::with_options(WaitOptions::new().profile(true));
        let mut g = lock.lock();
        cv.wait_timeout(&mut g, Duration::from_micros(10));
        assert_eq!(cv.wait_profile().unwrap().total_waits, 1);
        assert!(Condvar::with_options(WaitOptions::new().profile(false))
            .wait_profile()
            .is_none());
    }
}
