//! [`Semaphore`]: a counting semaphore whose waits follow the
//! producer-consumer policy.
//!
//! # State word
//!
//! ```text
//!  bits 31..0: permits  permits available now, <= MAX_PERMITS
//! ```
//!
//! Transitions (each one CAS on the word):
//! - acquire, fast: `permits > 0  =>  permits - 1` and return.
//! - acquire, contended: wait on the [`WaitWord`] until `permits > 0`, then
//!   try the fast transition again (another thread may have taken the
//!   permit first: wait again).
//! - release(n): `permits  =>  min(permits + n, MAX_PERMITS)`, then wake `n`
//!   sleepers if any is registered on the [`WaitWord`]; no system call
//!   otherwise. Already saturated, the word is written back unchanged (see
//!   "Memory ordering") and nothing is woken.
//!
//! Waiters are not counted in the word: a release wakes sleepers through the
//! [`WaitWord`]'s own sleeper count, and polling waiters see the count rise.
//! Every release of `n` permits wakes up to `n` sleepers, and every woken
//! sleeper either takes a permit or finds that another thread took it, so
//! no permit is left unused while a thread sleeps. There is no FIFO order:
//! a newcomer may take a permit before a sleeper that was woken for it.
//!
//! # Memory ordering
//!
//! `release` changes the word with a `SeqCst` CAS: it is the write half of
//! the [`WaitWord`] sleeper protocol, and its release half makes the
//! releasing thread's writes visible to the thread that takes the permit.
//! The acquiring CAS is `Acquire` on success (pairs with that release) and
//! `Relaxed` on failure (the value seen is only a hint for the next try);
//! it needs no `SeqCst` because lowering the count never has to wake anyone.
//! It is a CAS and not a `fetch_sub` because the count must not go below
//! zero.
//!
//! A release into a saturated count (`MAX_PERMITS`) changes nothing, but it
//! still writes the word (a CAS of the value to itself) rather than
//! returning after its load. A release that only looked would publish none
//! of its writes: an acquire that follows it in the word's order (the count
//! then ends at `MAX_PERMITS - 1`, not `MAX_PERMITS`) could miss them (the
//! loom model `a_release_into_a_saturated_count_still_publishes` finds
//! it). As a write, the saturated release either comes before that acquire
//! in the word's modification order, which then synchronizes with it, or
//! after, in which case its CAS fails and it adds a permit after all.

use crate::options::WaitOptions;
use crate::policy::{Policy, SyncKind};
use crate::profile::{Profiler, WaitProfile};
use crate::wait_word::WaitWord;
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::Ordering;

/// A counting semaphore: at most `permits` threads get past
/// [`Semaphore::acquire`] until someone calls [`Semaphore::release`].
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
#[derive(Debug)]
pub struct Semaphore {
    /// The number of available permits (see the module docs).
    permits: WaitWord,
    policy: Policy,
    profiler: Profiler,
}

impl Semaphore {
    /// Most permits a semaphore holds; [`Semaphore::release`] saturates here.
    pub const MAX_PERMITS: u32 = u32::MAX;

    /// A semaphore with `permits` available, waiting with the
    /// producer-consumer policy (`s/b/ln(e-1)` unless `WAITWISE_ALPHA` says
    /// otherwise): a thread waiting for a permit waits for another thread to
    /// produce one, and such waits are near exponential.
    pub fn new(permits: u32) -> Self {
        Self::with_options(permits, WaitOptions::new())
    }

    /// A semaphore with `permits` available and explicit waiting settings.
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
        Self {
            permits: WaitWord::new(permits),
            policy: options.resolve_policy(SyncKind::ProducerConsumer),
            profiler: options.profiler(),
        }
    }

    /// The policy waits follow.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The wait-time histogram so far (`None` when profiling is off).
    pub fn wait_profile(&self) -> Option<WaitProfile> {
        self.profiler.snapshot(SyncKind::ProducerConsumer.name())
    }

    /// Permits available now (a snapshot: it may change at once).
    pub fn available(&self) -> u32 {
        // Relaxed: a snapshot for reports; nothing is read on its strength.
        self.permits.value().load(Ordering::Relaxed)
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
        let word = self.permits.value();
        // Relaxed: only a first guess for the CAS, which validates it.
        let mut p = word.load(Ordering::Relaxed);
        while p > 0 {
            // permits > 0 => permits - 1 (Acquire: see the module docs).
            match word.compare_exchange_weak(p, p - 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => p = now,
            }
        }
        false
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
    #[inline]
    pub fn acquire_deadline(&self, deadline: Deadline) -> bool {
        self.try_acquire() || self.acquire_contended(deadline)
    }

    #[cold]
    fn acquire_contended(&self, deadline: Deadline) -> bool {
        let start = self.profiler.start();
        let mut blocked = false;
        let acquired = loop {
            if deadline.has_passed() {
                break self.try_acquire();
            }
            let out = self
                .permits
                .wait_until(&self.policy, deadline, |permits| permits > 0);
            blocked |= out.blocked();
            // Try even when timed out: a permit may have arrived with the
            // deadline, and a woken sleeper must not waste its wake-up.
            if self.try_acquire() {
                break true;
            }
            if out.timed_out() {
                break false;
            }
        };
        self.profiler.finish(start, blocked);
        acquired
    }

    /// Returns `n` permits, waking up to `n` waiting threads.
    ///
    /// The count saturates at [`Semaphore::MAX_PERMITS`]: permits beyond it
    /// are dropped rather than wrapping the count or panicking, so a buggy
    /// over-release cannot turn into "no permits". One CAS, plus a
    /// `futex_wake` system call only if a waiter sleeps in the kernel.
    ///
    /// # Examples
    /// ```
    /// use waitwise::semaphore::Semaphore;
    ///
    /// let sem = Semaphore::new(u32::MAX - 1);
    /// sem.release(5);
    /// assert_eq!(sem.available(), Semaphore::MAX_PERMITS);
    /// ```
    #[inline]
    pub fn release(&self, n: u32) {
        if n == 0 {
            // No permit released: no acquirer can take one of ours, so there
            // is nobody to publish to (the count orders nothing here).
            return;
        }
        let word = self.permits.value();
        // Relaxed: only a first guess for the CAS, which validates it.
        let mut p = word.load(Ordering::Relaxed);
        loop {
            // permits => min(permits + n, MAX_PERMITS) (failure Relaxed: the
            // value seen is only the next guess). Already saturated, the
            // count stays as it is, but still by a CAS that writes it back
            // rather than a return after the Relaxed load: a release that
            // only looked would publish nothing to an acquirer that comes
            // after it (module doc, "Memory ordering").
            let next = p.saturating_add(n);
            match word.compare_exchange_weak(p, next, Ordering::SeqCst, Ordering::Relaxed) {
                // Saturated: nothing changed, nobody to wake.
                Ok(_) if next == p => return,
                Ok(_) => break,
                Err(now) => p = now,
            }
        }
        if n == 1 {
            self.permits.wake_one();
        } else if self.permits.has_sleepers() {
            self.permits.futex().wake(n);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn release_without_waiters_makes_no_syscall() {
        let sem = Semaphore::new(0);
        sem.release(3);
        assert!(!sem.permits.has_sleepers());
        assert_eq!(sem.available(), 3);
        sem.release(0);
        assert_eq!(sem.available(), 3);
    }

    #[test]
    fn saturates_instead_of_overflowing() {
        let sem = Semaphore::new(Semaphore::MAX_PERMITS);
        sem.release(u32::MAX);
        assert_eq!(sem.available(), Semaphore::MAX_PERMITS);
        assert!(sem.try_acquire());
        assert_eq!(sem.available(), Semaphore::MAX_PERMITS - 1);
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
    }
}
