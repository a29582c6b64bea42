//! Counting semaphores: the algorithm once, as [`SemaphoreRef`], a view
//! over two borrowed words, and [`Semaphore`] on top of it. The C ABI's
//! `waitwise_semaphore_t` is a [`Semaphore`]; the interposer runs
//! [`SemaphoreRef`] on the words of glibc's `sem_t`.
//!
//! # Words
//!
//! ```text
//!  value     bits 30..0  permits available now, <= MAX_PERMITS (2^31 - 1)
//!            bit  31     MAY_SLEEP: a waiter may sleep on the futex; a
//!                        release that replaces a value with this bit wakes
//!  sleepers  waiters in the blocking phase (counted before they sleep,
//!            uncounted after)
//! ```
//!
//! `value` is the futex; waiters sleep while it reads exactly
//! [`MAY_SLEEP`] (no permit, the bit set).
//!
//! # Protocol (musl's)
//!
//! - acquire: `n | bit => n - 1 | bit` for `n > 0` (one CAS; the bit
//!   stays).
//! - sleep: a waiter that found `n = 0` counts itself in `sleepers`, sets
//!   `0 => MAY_SLEEP`, and sleeps while the word is `MAY_SLEEP`; awake, it
//!   leaves `sleepers` and tries to acquire again.
//! - release(k): reads `sleepers` *before* its increment, then
//!   `v => v + k`, keeping `MAY_SLEEP` when more than `k` wait and clearing
//!   it otherwise; it wakes when the old value had `MAY_SLEEP`: `k`
//!   sleepers when the bit stays (the next release wakes the next ones),
//!   all of them when it is gone (no later release would wake a sleeper
//!   left behind, and one that counted itself after the read must wake to
//!   set the bit again).
//! - a release into a full count ([`SemaphoreRef::MAX_PERMITS`]) adds
//!   what fits and reports it; with nothing to add, it writes the word
//!   back unchanged ("Memory ordering") and wakes nobody.
//!
//! No lost wake-up: a waiter sleeps only while the word is `MAY_SLEEP`
//! (the kernel compares atomically), so a release after that changes the
//! word from a value with the bit and wakes; a release before it changed
//! the word, and the sleep returns at once. Only a release clears the bit,
//! and it then wakes every sleeper. `sleepers` decides only between one
//! and all, and either wrong reading of it is safe: too low, the release
//! clears the bit and wakes all; too high, it keeps the bit and the next
//! release wakes again (a system call that finds nobody, at worst).
//!
//! Whether to wake comes from the value the increment replaced, so a
//! release never reads the semaphore after the increment that lets a
//! waiter go: that waiter may take the permit, destroy the semaphore and
//! free its memory at once (glibc bug 12674's pattern, which POSIX allows
//! for `sem_t`). The wake-up system call still names the address, which
//! is harmless on freed memory (the kernel finds no sleeper there).
//!
//! There is no FIFO order: a newcomer may take a permit before a sleeper
//! that was woken for it; the sleeper then sleeps again, and the
//! newcomer's own release wakes it.
//!
//! # Memory ordering
//!
//! The words' orderings are the same everywhere, so they are stated here
//! once; the code comments only the exceptions. Every change of `value` is
//! a read-modify-write, so the word has one modification order, which
//! decides every wake-up (with the kernel's atomic comparison); no
//! ordering between `value` and `sleepers` is needed (the count is advice,
//! above). So:
//! - a successful acquire is `Acquire` and a release `Release`: what the
//!   releasing thread wrote before is visible to the thread that takes its
//!   permit (through the word's release sequence, which the other
//!   read-modify-writes continue);
//! - setting `MAY_SLEEP`, every access to `sleepers`, failed CASes and the
//!   loads that seed a CAS loop are `Relaxed`: they publish nothing.
//!
//! A release into a full count changes nothing, but it still writes the
//! word (a CAS of the value to itself) rather than returning after its
//! load. A release that only looked would publish none of its writes: an
//! acquire that follows it in the word's order (the count then ends one
//! below the maximum, not at it) could miss them (the loom model
//! `a_release_into_a_saturated_count_still_publishes` finds it). As a
//! write, the saturated release either comes before that acquire in the
//! word's modification order, which then synchronizes with it, or after,
//! in which case its CAS fails and it adds a permit after all.
//!
//! # Waiting
//!
//! The front end hands its waiting in as a [`SemaphoreWait`]: a
//! [`TwoPhaseWait`] (its polling phase, its clock and mechanism) whose
//! sleep is counted among the sleepers (a cancellation point, a signal
//! that ends the wait, a cleanup when the thread is unwound).
//! [`Semaphore`] waits with [`PolicyWait`]; the interposer's `sem_wait`
//! with its own.

use crate::loom_const::const_unless_loom;
use crate::options::{LazyWaiting, WaitOptions};
use crate::policy::{Policy, SyncKind};
use crate::profile::WaitProfile;
use crate::two_phase_wait::{PolicyWait, TwoPhaseWait};
use std::fmt;
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::{Futex, FutexWait, Interrupted};
use waitwise_platform::shim::{AtomicU32, Ordering};

/// `value`: a waiter may sleep on the word; a release that replaces a
/// value with this bit wakes. With no permit, the value sleepers sleep on.
pub const MAY_SLEEP: u32 = 1 << 31;
/// `value`: the permit count's bits.
const PERMITS_MASK: u32 = MAY_SLEEP - 1;

/// The permits in a `value`.
#[inline(always)]
fn permits(v: u32) -> u32 {
    v & PERMITS_MASK
}

/// What a contended acquisition of a [`SemaphoreRef`] asks of its front
/// end beyond a [`TwoPhaseWait`] (its polling phase and its futex sleep,
/// as [`LockWait`](crate::mutex::LockWait) for the TTAS lock): a sleep
/// counted among the semaphore's sleepers, which may end on a signal and
/// must give its registration back when the thread is unwound.
/// [`PolicyWait`] takes the default; the interposer's sleep is a
/// cancellation point that a signal ends.
pub trait SemaphoreWait: TwoPhaseWait {
    /// Sleeps on `sem.futex()` while it holds [`MAY_SLEEP`], at most
    /// `timeout`, with [`Futex::wait`]'s results, or [`Interrupted`] when
    /// a signal handler ends the sleep and the front end reports that.
    ///
    /// The waiter is counted in `sem`'s sleepers for the whole call. A
    /// sleep that can end in an unwind (a cancellation, a signal handler's
    /// `pthread_exit`) must call [`SemaphoreRef::abandon_sleep`] on the
    /// way out, from a cleanup handler rather than a drop guard (an unwind
    /// that a signal handler starts at any instruction aborts in a frame
    /// with landing pads). The default ([`Futex::wait`], with that cleanup
    /// registered; not [`TwoPhaseWait::sleep`], which an implementor may
    /// replace by code that panics) does.
    #[inline]
    fn sleep_counted(
        &mut self,
        sem: SemaphoreRef<'_>,
        timeout: Option<Duration>,
    ) -> Result<FutexWait, Interrupted> {
        #[cfg(not(loom))]
        {
            let sleep = || Ok(sem.futex().wait(MAY_SLEEP, timeout));
            // SAFETY: `abandon_unwound_sleep` takes the view it is given,
            // alive in this frame, and never unwinds; the futex wait does
            // not panic.
            unsafe {
                waitwise_platform::cancel::on_forced_unwind(&sem, abandon_unwound_sleep, sleep)
            }
        }
        #[cfg(loom)]
        Ok(sem.futex().wait(MAY_SLEEP, timeout))
    }
}

/// The engine's wait sleeps with [`Futex::wait`], the cleanup registered.
impl SemaphoreWait for PolicyWait {}

/// The cleanup handler of a sleep that a forced unwind leaves:
/// [`SemaphoreRef::abandon_sleep`] on the view `sem` points at.
///
/// # Safety
///
/// `sem` points at a live [`SemaphoreRef`].
#[cfg(not(loom))]
pub unsafe extern "C" fn abandon_unwound_sleep(sem: *mut std::ffi::c_void) {
    // SAFETY: caller's contract.
    unsafe { *(sem as *const SemaphoreRef<'_>) }.abandon_sleep();
}

/// How [`SemaphoreRef::acquire_contended`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireOutcome {
    /// The caller took a permit.
    Acquired {
        /// Whether the waiter slept in the kernel at least once.
        blocked: bool,
    },
    /// The deadline passed first; no permit was taken.
    TimedOut {
        /// Whether the waiter slept in the kernel at least once.
        blocked: bool,
    },
    /// A signal handler ended the sleep (the front end's
    /// [`SemaphoreWait::sleep_counted`] reported [`Interrupted`]) and no
    /// permit was there to take.
    Interrupted,
}

impl AcquireOutcome {
    /// Whether the caller took a permit.
    #[inline]
    pub fn acquired(self) -> bool {
        matches!(self, AcquireOutcome::Acquired { .. })
    }

    /// Whether the waiter slept in the kernel at least once.
    #[inline]
    pub fn blocked(self) -> bool {
        match self {
            AcquireOutcome::Acquired { blocked } | AcquireOutcome::TimedOut { blocked } => blocked,
            AcquireOutcome::Interrupted => true,
        }
    }
}

/// The counting semaphore over borrowed words (module docs: words,
/// protocol, ordering): the one copy of the algorithm, for [`Semaphore`]
/// and for front ends whose words live elsewhere (the interposer's
/// `sem_t`). Every thread that uses the words must go through this view.
///
/// # Examples
/// ```
/// use waitwise::platform::futex::Futex;
/// use waitwise::semaphore::SemaphoreRef;
/// use waitwise::two_phase_wait::PolicyWait;
/// use waitwise::{Deadline, Policy};
/// use std::sync::atomic::AtomicU32;
///
/// let (value, sleepers) = (Futex::new(1), AtomicU32::new(0));
/// let sem = SemaphoreRef::new(&value, &sleepers);
/// assert!(sem.try_acquire());
/// assert!(!sem.try_acquire());
/// let mut wait = PolicyWait::new(&Policy::always_block());
/// let now = Deadline::after(std::time::Duration::ZERO);
/// assert!(!sem.acquire_contended(&mut wait, now).acquired());
/// assert_eq!(sem.release(1), 1);
/// assert_eq!(sem.available(), 1);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SemaphoreRef<'a> {
    value: &'a Futex,
    sleepers: &'a AtomicU32,
}

impl<'a> SemaphoreRef<'a> {
    /// Most permits the words hold (`SEM_VALUE_MAX` on glibc): the count
    /// has 31 bits, the 32nd is [`MAY_SLEEP`].
    pub const MAX_PERMITS: u32 = PERMITS_MASK;

    /// A view over `value` (permits and [`MAY_SLEEP`]; the futex) and its
    /// sleeper count `sleepers`. A fresh semaphore holds its permit count
    /// (at most [`SemaphoreRef::MAX_PERMITS`]) in `value` and 0 in
    /// `sleepers`.
    #[inline(always)]
    pub fn new(value: &'a Futex, sleepers: &'a AtomicU32) -> Self {
        Self { value, sleepers }
    }

    /// The futex word (for a [`SemaphoreWait::sleep_counted`]).
    #[inline(always)]
    pub fn futex(self) -> &'a Futex {
        self.value
    }

    /// Permits available now (a snapshot: it may change at once).
    #[inline]
    pub fn available(self) -> u32 {
        // Relaxed: a snapshot; it takes no permit, so it synchronizes with
        // no release.
        permits(self.value.value().load(Ordering::Relaxed))
    }

    /// Takes a permit if one is available now; never waits.
    #[inline]
    pub fn try_acquire(self) -> bool {
        let word = self.value.value();
        let mut v = word.load(Ordering::Relaxed);
        while permits(v) > 0 {
            // n | bit => n - 1 | bit
            match word.compare_exchange_weak(v, v - 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => v = now,
            }
        }
        false
    }

    /// The contended acquisition, after a failed
    /// [`SemaphoreRef::try_acquire`]: the front end's polling phase, then
    /// sleeps, until a permit is taken, `deadline` passes, or a signal
    /// ends a sleep (when `wait` reports it). A permit that is there is
    /// taken whatever ended the last sleep.
    ///
    /// Holds no value with a destructor: a forced unwind out of `wait`'s
    /// sleep passes through it (`wait` gives the registration back).
    pub fn acquire_contended(
        self,
        wait: &mut impl SemaphoreWait,
        deadline: Deadline,
    ) -> AcquireOutcome {
        if wait.start_polling(deadline) {
            wait.poll(self.value, |v| permits(v) > 0);
        }
        let mut blocked = false;
        loop {
            if self.try_acquire() {
                return AcquireOutcome::Acquired { blocked };
            }
            let timeout = deadline.remaining();
            if timeout == Some(Duration::ZERO) {
                return AcquireOutcome::TimedOut { blocked };
            }
            blocked = true;
            match self.sleep(wait, timeout) {
                Err(Interrupted) if self.try_acquire() => {
                    return AcquireOutcome::Acquired { blocked }
                }
                Err(Interrupted) => return AcquireOutcome::Interrupted,
                // The kernel's word on the timeout is final (it was
                // computed from `deadline`; loom's model says so at once).
                Ok(FutexWait::TimedOut) => {
                    return if self.try_acquire() {
                        AcquireOutcome::Acquired { blocked }
                    } else {
                        AcquireOutcome::TimedOut { blocked }
                    };
                }
                Ok(FutexWait::Woken | FutexWait::ValueChanged) => {}
            }
        }
    }

    /// The blocking phase, once: count in `sleepers`, `0 => MAY_SLEEP`,
    /// sleep through `wait` while the word is `MAY_SLEEP`, leave
    /// `sleepers`.
    #[inline]
    fn sleep(
        self,
        wait: &mut impl SemaphoreWait,
        timeout: Option<Duration>,
    ) -> Result<FutexWait, Interrupted> {
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        // 0 => MAY_SLEEP (a failure: a permit came, or the bit is set).
        let _ =
            self.value
                .value()
                .compare_exchange(0, MAY_SLEEP, Ordering::Relaxed, Ordering::Relaxed);
        let slept = wait.sleep_counted(self, timeout);
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        slept
    }

    /// The cleanup of a sleeper that leaves
    /// [`SemaphoreWait::sleep_counted`] by an unwind: it leaves `sleepers`
    /// and wakes another sleeper, in case a release had woken this one (the
    /// permit is still in the count: an abandoned wait takes none). Never
    /// panics.
    #[inline]
    pub fn abandon_sleep(self) {
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        self.value.wake(1);
    }

    /// Adds `n` permits, as many as fit under
    /// [`SemaphoreRef::MAX_PERMITS`], and wakes sleepers for them (module
    /// docs); returns how many were added (0: the count was full, and
    /// nothing changed). One CAS, plus a `futex_wake` system call only
    /// when a waiter may sleep.
    ///
    /// After the increment it reads nothing of the semaphore: only the
    /// word's address goes to the kernel, so a waiter that takes the
    /// permit may free the words at once.
    #[inline]
    pub fn release(self, n: u32) -> u32 {
        if n == 0 {
            // No permit released: no acquirer can take one of ours, so
            // there is nobody to publish to (the count orders nothing).
            return 0;
        }
        let word = self.value.value();
        let wake_at = WakeAddress::of(self.value);
        let mut v = word.load(Ordering::Relaxed);
        loop {
            let added = n.min(Self::MAX_PERMITS - permits(v));
            // Read before the increment, never after (module docs).
            let sleepers = self.sleepers.load(Ordering::Relaxed);
            let keep_bit = sleepers > added;
            // v => v + added (MAY_SLEEP kept or cleared); full, v => v:
            // written back, not only looked at (module docs, "Memory
            // ordering").
            let next = match (added, keep_bit) {
                (0, _) => v,
                (_, true) => v + added,
                (_, false) => (v + added) & PERMITS_MASK,
            };
            match word.compare_exchange_weak(v, next, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => {
                    if added > 0 && v & MAY_SLEEP != 0 {
                        wake_at.wake(if keep_bit { added } else { u32::MAX });
                    }
                    return added;
                }
                Err(now) => v = now,
            }
        }
    }
}

/// Where a release's wake-up goes, taken before its increment: the word's
/// address alone, so the wake reads nothing of a semaphore that a waiter
/// may have freed. Under loom, the model futex itself (the models never
/// free it).
#[derive(Clone, Copy)]
struct WakeAddress<'a> {
    #[cfg(not(loom))]
    word: *const u32,
    #[cfg(not(loom))]
    _futex: std::marker::PhantomData<&'a Futex>,
    #[cfg(loom)]
    futex: &'a Futex,
}

impl<'a> WakeAddress<'a> {
    #[inline(always)]
    fn of(futex: &'a Futex) -> Self {
        Self {
            #[cfg(not(loom))]
            word: futex.value().as_ptr(),
            #[cfg(not(loom))]
            _futex: std::marker::PhantomData,
            #[cfg(loom)]
            futex,
        }
    }

    /// Wakes up to `count` sleepers.
    #[inline]
    fn wake(self, count: u32) {
        #[cfg(not(loom))]
        waitwise_platform::futex::wake_address(self.word, count);
        #[cfg(loom)]
        self.futex.wake(count);
    }
}

/// The semaphore's words on a cache line of their own, as a
/// [`WaitWord`](crate::WaitWord)'s: hardware monitors see no false
/// wake-ups from neighbours.
#[repr(align(128))]
#[derive(Debug)]
struct SemaphoreWords {
    /// Permits and [`MAY_SLEEP`]; the futex.
    value: Futex,
    /// Waiters in the blocking phase.
    sleepers: AtomicU32,
}

/// A counting semaphore: at most `permits` threads get past
/// [`Semaphore::acquire`] until someone calls [`Semaphore::release`].
/// [`SemaphoreRef`] on words of its own, waiting with [`PolicyWait`].
///
/// Use it to bound how many threads use a resource at once (connections,
/// buffers, CPUs). Permits are not tied to threads: any thread may release.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use waitwise::semaphore::Semaphore;
///
/// let sem = Arc::new(Semaphore::new(1));
/// sem.acquire();
/// assert!(!sem.try_acquire());
/// let s2 = sem.clone();
/// let waiter = std::thread::spawn(move || { s2.acquire(); s2.release(1); });
/// sem.release(1);
/// waiter.join().unwrap();
/// assert_eq!(sem.available(), 1);
/// ```
///
/// The constructors are `const`, so a semaphore can be a `static`:
/// ```
/// use waitwise::semaphore::Semaphore;
///
/// static SLOTS: Semaphore = Semaphore::new(2);
/// SLOTS.acquire();
/// assert_eq!(SLOTS.available(), 1);
/// SLOTS.release(1);
/// ```
pub struct Semaphore {
    words: SemaphoreWords,
    waits: LazyWaiting,
}

impl Semaphore {
    /// Most permits a semaphore holds (2^31 - 1, `SEM_VALUE_MAX` on
    /// glibc); [`Semaphore::release`] saturates here.
    pub const MAX_PERMITS: u32 = SemaphoreRef::MAX_PERMITS;

    const_unless_loom! {
        /// A semaphore with `permits` available (at most
        /// [`Semaphore::MAX_PERMITS`]: more are cut to it), waiting with the
        /// producer-consumer policy (`s/b/ln(e-1)` unless `WAITWISE_ALPHA`
        /// says otherwise, read on the first wait): a thread waiting for a
        /// permit waits for another thread to produce one, and such waits
        /// are near exponential.
        pub fn new(permits: u32) -> Self {
            Self::with_options(permits, WaitOptions::new())
        }

        /// A semaphore with `permits` available (at most
        /// [`Semaphore::MAX_PERMITS`]) and explicit waiting settings.
        ///
        /// # Examples
        /// ```
        /// use waitwise::{semaphore::Semaphore, Policy, WaitOptions};
        ///
        /// let sem = Semaphore::with_options(2, WaitOptions::new().policy(Policy::always_block()));
        /// assert_eq!(sem.policy().name(), "/b/0");
        /// assert_eq!(sem.available(), 2);
        /// ```
        pub fn with_options(permits: u32, options: WaitOptions) -> Self {
            // `min`, spelled out: `Ord::min` is not `const`.
            let permits = if permits > Self::MAX_PERMITS {
                Self::MAX_PERMITS
            } else {
                permits
            };
            Self {
                words: SemaphoreWords {
                    value: Futex::new(permits),
                    sleepers: AtomicU32::new(0),
                },
                waits: LazyWaiting::new(options, SyncKind::ProducerConsumer),
            }
        }
    }

    /// The algorithm, over this semaphore's words.
    #[inline(always)]
    fn view(&self) -> SemaphoreRef<'_> {
        SemaphoreRef::new(&self.words.value, &self.words.sleepers)
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

    /// Permits available now (a snapshot: it may change at once).
    pub fn available(&self) -> u32 {
        self.view().available()
    }

    /// Takes a permit, waiting as long as it takes.
    #[inline]
    pub fn acquire(&self) {
        if !self.try_acquire() {
            let acquired = self.acquire_contended(Deadline::NEVER);
            debug_assert!(acquired);
        }
    }

    /// Takes a permit if one is available now; never waits.
    ///
    /// # Examples
    /// ```
    /// use waitwise::semaphore::Semaphore;
    ///
    /// let sem = Semaphore::new(1);
    /// assert!(sem.try_acquire());
    /// assert!(!sem.try_acquire());
    /// ```
    #[inline]
    pub fn try_acquire(&self) -> bool {
        self.view().try_acquire()
    }

    /// Takes a permit, waiting at most `timeout`; returns whether it got
    /// one. `Duration::ZERO` is [`Semaphore::try_acquire`];
    /// `Duration::MAX` waits forever.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::semaphore::Semaphore;
    ///
    /// let sem = Semaphore::new(0);
    /// assert!(!sem.acquire_timeout(Duration::from_millis(1)));
    /// sem.release(1);
    /// assert!(sem.acquire_timeout(Duration::ZERO));
    /// ```
    #[inline]
    pub fn acquire_timeout(&self, timeout: Duration) -> bool {
        self.try_acquire() || self.acquire_contended(Deadline::after(timeout))
    }

    /// Takes a permit, waiting until `deadline` at most; returns whether it
    /// got one.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::{semaphore::Semaphore, Deadline};
    ///
    /// let sem = Semaphore::new(1);
    /// assert!(sem.acquire_deadline(Deadline::after(Duration::ZERO)));
    /// // No permit left: gives up at the deadline.
    /// assert!(!sem.acquire_deadline(Deadline::after(Duration::from_millis(1))));
    /// sem.release(1);
    /// assert!(sem.acquire_timeout(Duration::from_secs(1)));
    /// ```
    #[inline]
    pub fn acquire_deadline(&self, deadline: Deadline) -> bool {
        self.try_acquire() || self.acquire_contended(deadline)
    }

    /// The contended acquisition, profiled; `true` if a permit was taken.
    #[cold]
    fn acquire_contended(&self, deadline: Deadline) -> bool {
        let profiler = self.waits.profiler();
        let start = profiler.start();
        // `adapt/b` learns from the wait: it reads this semaphore's summary
        // (keyed by the count word's address) and records the wait at the
        // end.
        let (budget, learning) = self
            .waits
            .policy()
            .begin_wait(self.view().futex() as *const Futex as usize);
        let mut wait = PolicyWait::with_budget(budget);
        let out = self.view().acquire_contended(&mut wait, deadline);
        if let Some(learning) = learning {
            learning.finish(out.blocked(), !out.acquired());
        }
        profiler.finish(start, out.blocked());
        out.acquired()
    }

    /// Returns `n` permits, waking waiting threads for them.
    ///
    /// The count saturates at [`Semaphore::MAX_PERMITS`]: permits beyond it
    /// are dropped rather than wrapping the count or panicking, so a buggy
    /// over-release cannot turn into "no permits". One CAS, plus a
    /// `futex_wake` system call only if a waiter may sleep in the kernel.
    ///
    /// # Examples
    /// ```
    /// use waitwise::semaphore::Semaphore;
    ///
    /// let sem = Semaphore::new(Semaphore::MAX_PERMITS - 1);
    /// sem.release(5);
    /// assert_eq!(sem.available(), Semaphore::MAX_PERMITS);
    /// ```
    #[inline]
    pub fn release(&self, n: u32) {
        self.view().release(n);
    }

    /// [`Semaphore::release`], returning how many permits were added:
    /// fewer than `n` only at saturation, 0 when the count was full
    /// already (and nothing changed), which a `sem_post` reports as
    /// `EOVERFLOW`.
    ///
    /// # Examples
    /// ```
    /// use waitwise::semaphore::Semaphore;
    ///
    /// let sem = Semaphore::new(Semaphore::MAX_PERMITS - 1);
    /// assert_eq!(sem.release_counted(5), 1);
    /// assert_eq!(sem.release_counted(1), 0);
    /// ```
    #[inline]
    pub fn release_counted(&self, n: u32) -> u32 {
        self.view().release(n)
    }
}

/// The state a user can act on (a snapshot): the permits available, the
/// threads asleep waiting for one, and the policy by name.
impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display that orders nothing.
        let sleepers = self.words.sleepers.load(Ordering::Relaxed);
        f.debug_struct("Semaphore")
            .field("available", &self.available())
            .field("sleepers", &sleepers)
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    /// A view over fresh words holding `value` and `sleepers`.
    fn words(value: u32, sleepers: u32) -> (Futex, AtomicU32) {
        (Futex::new(value), AtomicU32::new(sleepers))
    }

    #[test]
    fn const_new_static_and_debug() {
        static SEM: Semaphore = Semaphore::new(u32::MAX);
        assert_eq!(SEM.available(), Semaphore::MAX_PERMITS);
        assert_eq!(
            SEM.policy(),
            &Policy::default_for(SyncKind::ProducerConsumer)
        );
        let sem = Semaphore::with_options(3, WaitOptions::new().policy(Policy::always_block()));
        assert!(sem.try_acquire());
        assert_eq!(
            format!("{sem:?}"),
            "Semaphore { available: 2, sleepers: 0, policy: /b/0 }"
        );
    }

    #[test]
    fn release_without_waiters_makes_no_syscall() {
        let sem = Semaphore::new(0);
        assert_eq!(sem.release_counted(3), 3);
        // No MAY_SLEEP: nobody was told to sleep, so nobody was woken.
        assert_eq!(sem.words.value.value().load(Ordering::Relaxed), 3);
        assert_eq!(sem.available(), 3);
        assert_eq!(sem.release_counted(0), 0);
        assert_eq!(sem.available(), 3);
    }

    #[test]
    fn saturates_instead_of_overflowing() {
        let sem = Semaphore::new(u32::MAX);
        assert_eq!(sem.available(), Semaphore::MAX_PERMITS);
        assert_eq!(sem.release_counted(u32::MAX), 0);
        assert_eq!(sem.available(), Semaphore::MAX_PERMITS);
        assert!(sem.try_acquire());
        assert_eq!(sem.available(), Semaphore::MAX_PERMITS - 1);
        assert_eq!(sem.release_counted(2), 1);
    }

    #[test]
    fn the_bit_stays_when_more_sleep_than_a_release_wakes() {
        // Two sleepers, one permit: the bit stays, the next release wakes
        // the other.
        let (value, sleepers) = words(MAY_SLEEP, 2);
        let sem = SemaphoreRef::new(&value, &sleepers);
        assert_eq!(sem.release(1), 1);
        assert_eq!(value.value().load(Ordering::Relaxed), MAY_SLEEP | 1);
        // An acquire keeps it too.
        assert!(sem.try_acquire());
        assert_eq!(value.value().load(Ordering::Relaxed), MAY_SLEEP);
        // As many permits as sleepers: the bit goes (and all are woken).
        assert_eq!(sem.release(2), 2);
        assert_eq!(value.value().load(Ordering::Relaxed), 2);
        // One sleeper, one permit: likewise.
        let (value, sleepers) = words(MAY_SLEEP, 1);
        assert_eq!(SemaphoreRef::new(&value, &sleepers).release(1), 1);
        assert_eq!(value.value().load(Ordering::Relaxed), 1);
    }

    #[test]
    fn an_abandoned_sleep_gives_its_count_back() {
        let (value, sleepers) = words(MAY_SLEEP, 1);
        SemaphoreRef::new(&value, &sleepers).abandon_sleep();
        assert_eq!(sleepers.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn zero_timeout_returns_at_once() {
        let sem = Semaphore::with_options(0, WaitOptions::new().policy(Policy::always_block()));
        let t = Instant::now();
        assert!(!sem.acquire_timeout(Duration::ZERO));
        assert!(t.elapsed() < Duration::from_millis(500));
    }

    #[test]
    fn release_n_wakes_n_sleepers() {
        let sem = Arc::new(Semaphore::with_options(
            0,
            WaitOptions::new()
                .policy(Policy::always_block())
                .profile(true),
        ));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let sem = sem.clone();
                std::thread::spawn(move || sem.acquire())
            })
            .collect();
        std::thread::sleep(Duration::from_millis(5));
        sem.release(3);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(sem.available(), 0);
        assert_eq!(sem.wait_profile().unwrap().total_waits, 3);
        assert_eq!(sem.words.sleepers.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn one_release_at_a_time_wakes_every_sleeper_in_turn() {
        let sem = Arc::new(Semaphore::with_options(
            0,
            WaitOptions::new().policy(Policy::always_block()),
        ));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let sem = sem.clone();
                std::thread::spawn(move || sem.acquire())
            })
            .collect();
        while sem.words.sleepers.load(Ordering::Relaxed) < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        for _ in 0..3 {
            assert_eq!(sem.release_counted(1), 1);
        }
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(sem.available(), 0);
    }
}
