//! [`Sender`] and [`Receiver`]: the two ends of a bounded channel, over a
//! shared [`Ring`].
//!
//! Every blocking operation first tries the lock-free ring, then re-tries a
//! few times with short spins ([`RETRIES_BEFORE_WAIT`]); only when the
//! ring stays full (send) or empty (receive) does it wait, with the
//! channel's policy, for the index it saw to move: poll the index for the policy's
//! limit, then prepare to park, re-try, and sleep ([`super::index`]). The
//! ring notifies parked waiters itself; a successful operation costs one
//! load of an event count when nobody parked. Under the default waiting
//! the poll is by `yield` while the channel's endpoints outnumber the
//! CPUs, and skipped while polling would hold a CPU that other runnable
//! threads want. A wait whose other side last waited on the same CPU
//! skips the re-tries' spins and polls by `yield` ([`super::waiting_cpus`]):
//! that side cannot run while it spins.
//!
//! # Disconnection
//!
//! The last [`Sender`] dropped, or the last [`Receiver`], marks the ring
//! disconnected and wakes every waiter. Receivers drain
//! what is left before they report [`RecvError`]; senders fail at once and
//! get their value back. The last receiver also drops the values left in
//! the ring, so their destructors run without waiting for the senders.
//! If one of those destructors panics, the panic propagates out of that
//! receiver's drop, once, and the values after it are leaked, as
//! crossbeam-channel's are: dropping them while the panic unwinds would
//! abort the process at the next destructor that panics.
//! An operation that fails because of the disconnection sees everything the
//! other side's threads did before they dropped their endpoints: the
//! endpoint counts gather it into the thread that drops the last one, and
//! the ring's mark bit carries it on (module `ring`, "Memory ordering").
//!
//! # Memory ordering
//!
//! The endpoint counts use `Relaxed` increments (a clone is made from a
//! live endpoint, so the count cannot be zero concurrently, as with `Arc`)
//! and `AcqRel` decrements: the thread that drops the last endpoint of a
//! side sees everything the others did before dropping theirs. The ring
//! orders everything else (see its docs).

use super::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
use super::lost_yields;
use super::ring::{Backoff, PopError, PushError, Ring};
use super::waiting_cpus::{Side, WaitingCpus};
use crate::mechanism::yield_guard;
use crate::options::WaitOptions;
use crate::policy::{crowding, Policy, SyncKind};
use crate::profile::{Profiler, WaitProfile};
use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{Arc, AtomicUsize, Ordering};

/// Re-tries that a blocking operation makes before it waits with the
/// policy: 7 rounds of 1, 2, ..., 64 spin hints, then 4 yields (the ring's
/// [`Backoff::snooze`]; crossbeam's `Backoff` has the same shape). Tuned
/// with `cargo run --release -p waitwise --example channel_bench -- 1000000 1`:
/// a peer that is running finishes its push or pop within the spins, so a
/// ping-pong over a one-slot channel does not pay the policy's wait set-up
/// for every value; when the peer shares our CPU, the yields hand it the
/// CPU at once. Without the yields a one-slot ping-pong falls far behind
/// crossbeam-channel whenever the two threads share a CPU; a few yields
/// bring it level or ahead, four a little more than two. After them the policy decides
/// how long to poll and when to block.
/// Under loom, none: the re-tries are the fast path's try operation
/// repeated, and each spin hint is a model-checked yield, which only
/// multiplies the interleavings to explore (past loom's branch limit).
const RETRIES_BEFORE_WAIT: u32 = if cfg!(loom) { 0 } else { 11 };

/// The re-tries' spin steps while more threads are runnable than the
/// machine has CPUs and other processes keep CPUs for whole slices
/// (`Shared::retry_spins`): 4, pauses of 32 to 256 ns (~0.5 µs in all)
/// instead of the backoff's 7 (~4 µs); the yields follow as ever. On such
/// a machine the peer is as likely to wait for a CPU as to run, and a
/// long spin burns the CPU it may need. Tuned with a one-producer channel
/// beside a busy loop on each CPU (fewer steps block more often, more
/// burn more CPU per message); std's `mpsc` spins ~1 µs.
const BUSY_RETRY_SPINS: u32 = 4;

/// The state both ends share.
struct Shared<T> {
    ring: Ring<T>,
    /// Live `Sender`s.
    senders: AtomicUsize,
    /// Live `Receiver`s.
    receivers: AtomicUsize,
    policy: Policy,
    /// Whether `policy` is the default (none was given in the options).
    default_waiting: bool,
    profiler: Profiler,
    /// The CPUs the two sides last started a wait on
    /// ([`super::waiting_cpus`]).
    waiting_cpus: WaitingCpus,
}

/// Builds the two ends of a channel with `cap` slots (already checked).
pub(super) fn pair<T>(cap: usize, options: WaitOptions) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        ring: Ring::new(cap),
        senders: AtomicUsize::new(1),
        receivers: AtomicUsize::new(1),
        // The static s/b/0.54 unless the options name one: the channel
        // waits through hooks of its own, which do not learn, so adapt/b
        // would only draw like rand/b here (policy::kind, "The defaults").
        policy: options
            .policy_override()
            .unwrap_or_else(|| Policy::for_kind(SyncKind::ProducerConsumer)),
        default_waiting: options.policy_override().is_none(),
        profiler: options.profiler(),
        waiting_cpus: WaitingCpus::new(),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

impl<T> Shared<T> {
    /// Whether a blocking operation that found no room or no value skips
    /// its polling phase and sleeps after its re-tries: the default
    /// waiting, while polling would hold a CPU that other runnable threads
    /// want ([`crate::policy::holds_wanted_cpu`]). Explicit policies poll
    /// as told.
    #[inline]
    fn waits_at_once(&self, policy: &Policy) -> bool {
        self.default_waiting && crate::policy::holds_wanted_cpu(policy.mechanism())
    }

    /// The policy a blocking operation polls with: the default waiting
    /// polls by `yield` while the channel's endpoints outnumber the CPUs
    /// the process may use (each is a thread as a rule, and a PAUSE poller
    /// would hold a CPU the thread it waits for needs; [`crowding`], as the
    /// condition variable and the event). Explicit policies as given.
    /// A wait whose peer last waited on this CPU (`peer_beside`) polls by
    /// `yield` as a crowded one does ([`super::waiting_cpus`]).
    #[inline]
    fn polling_policy(&self, peer_beside: bool) -> Policy {
        if !self.default_waiting {
            return self.policy;
        }
        if peer_beside {
            return crowding::for_wait_beside_its_releaser(self.policy);
        }
        // Relaxed: a count read as a hint (an endpoint cloned or dropped
        // meanwhile changes only how this wait polls).
        let endpoints =
            self.senders.load(Ordering::Relaxed) + self.receivers.load(Ordering::Relaxed);
        crowding::for_wait(self.policy, endpoints)
    }

    /// How many of the re-tries' pauses may spin: none while the other
    /// side last waited on this CPU (`peer_beside`, [`super::waiting_cpus`]:
    /// it cannot run while this thread spins); [`BUSY_RETRY_SPINS`]
    /// while polling would hold a CPU that another runnable thread wants
    /// and yields lose slices to other processes
    /// ([`yield_guard::lost_slice_recently`]); else all the backoff's (a
    /// machine crowded by the program's own threads keeps them: the peer
    /// it waits for is one of them).
    #[inline]
    fn retry_spins(&self, peer_beside: bool) -> u32 {
        if peer_beside {
            return 0;
        }
        // The memory first: one relaxed load while no loss is recent, so
        // that an operation on a quiet machine reads no demand signal.
        if yield_guard::lost_slice_recently() && self.waits_at_once(&self.policy) {
            BUSY_RETRY_SPINS
        } else {
            u32::MAX
        }
    }

    /// One re-try's pause: a spin while spinning is due (the backoff's
    /// first `spins` steps at most), then a yield, timed
    /// ([`lost_yields`]). `false` when the re-tries should stop instead: a
    /// recent yield lost the CPU for a whole slice.
    #[inline]
    fn retry_pause(backoff: &mut Backoff, spins: u32) -> bool {
        if backoff.is_spinning() && backoff.rounds() >= spins {
            backoff.stop_spinning();
        }
        if !backoff.is_spinning() && !lost_yields::may_yield() {
            return false;
        }
        backoff.snooze_with(lost_yields::timed_yield);
        true
    }

    #[inline]
    fn send_deadline(&self, value: T, deadline: Deadline) -> Result<(), SendTimeoutError<T>> {
        match self.ring.try_push(value) {
            Ok(()) => Ok(()),
            Err(PushError::Disconnected(v)) => Err(SendTimeoutError::Disconnected(v)),
            Err(PushError::Full(v, head)) => self.send_contended(v, head, deadline),
        }
    }

    #[cold]
    // RETRIES_BEFORE_WAIT is 0 under loom: the retry loop is skipped there.
    #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))]
    fn send_contended(
        &self,
        mut value: T,
        mut head: u32,
        deadline: Deadline,
    ) -> Result<(), SendTimeoutError<T>> {
        let start = self.profiler.start();
        let mut backoff = Backoff::new();
        let peer_beside = self.waiting_cpus.peer_on_my_cpu(Side::Sender);
        let spins = self.retry_spins(peer_beside);
        while backoff.rounds() < RETRIES_BEFORE_WAIT && !deadline.has_passed() {
            if !Self::retry_pause(&mut backoff, spins) {
                break;
            }
            (value, head) = match self.ring.try_push(value) {
                Ok(()) => {
                    self.profiler.finish(start, false);
                    return Ok(());
                }
                Err(PushError::Disconnected(v)) => {
                    self.profiler.finish(start, false);
                    return Err(SendTimeoutError::Disconnected(v));
                }
                Err(PushError::Full(v, head)) => (v, head),
            };
        }
        // Read once the re-tries failed: an operation they complete
        // pays nothing for it.
        let policy = self.polling_policy(peer_beside);
        let at_once = self.waits_at_once(&policy);
        let (mut blocked, mut timed_out) = (false, false);
        let index = self.ring.head();
        let result = loop {
            if timed_out || deadline.has_passed() {
                break Err(SendTimeoutError::Timeout(value));
            }
            // POLLING: until a pop moves `head`, for the policy's limit.
            if at_once || index.poll(&policy, deadline, head).timed_out() {
                // PARKING: announce, re-try, then sleep.
                let key = index.prepare();
                value = match self.ring.try_push(value) {
                    Ok(()) => break Ok(()),
                    Err(PushError::Disconnected(v)) => {
                        break Err(SendTimeoutError::Disconnected(v))
                    }
                    Err(PushError::Full(v, _)) => v,
                };
                let out = index.sleep(key, deadline);
                blocked |= out.blocked();
                // Re-try even when timed out: a slot may have freed with the
                // deadline, and a woken sleeper must not waste its wake-up.
                timed_out = out.timed_out();
            }
            (value, head) = match self.ring.try_push(value) {
                Ok(()) => break Ok(()),
                Err(PushError::Disconnected(v)) => break Err(SendTimeoutError::Disconnected(v)),
                Err(PushError::Full(v, head)) => (v, head),
            };
        };
        self.profiler.finish(start, blocked);
        result
    }

    #[inline]
    fn recv_deadline(&self, deadline: Deadline) -> Result<T, RecvTimeoutError> {
        match self.ring.try_pop() {
            Ok(v) => Ok(v),
            Err(PopError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            Err(PopError::Empty(tail)) => self.recv_contended(tail, deadline),
        }
    }

    #[cold]
    // RETRIES_BEFORE_WAIT is 0 under loom: the retry loop is skipped there.
    #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))]
    fn recv_contended(&self, mut tail: u32, deadline: Deadline) -> Result<T, RecvTimeoutError> {
        let start = self.profiler.start();
        let mut backoff = Backoff::new();
        let peer_beside = self.waiting_cpus.peer_on_my_cpu(Side::Receiver);
        let spins = self.retry_spins(peer_beside);
        while backoff.rounds() < RETRIES_BEFORE_WAIT && !deadline.has_passed() {
            if !Self::retry_pause(&mut backoff, spins) {
                break;
            }
            tail = match self.ring.try_pop() {
                Ok(v) => {
                    self.profiler.finish(start, false);
                    return Ok(v);
                }
                Err(PopError::Disconnected) => {
                    self.profiler.finish(start, false);
                    return Err(RecvTimeoutError::Disconnected);
                }
                Err(PopError::Empty(tail)) => tail,
            };
        }
        // As in `send_contended`.
        let policy = self.polling_policy(peer_beside);
        let at_once = self.waits_at_once(&policy);
        let (mut blocked, mut timed_out) = (false, false);
        let index = self.ring.tail();
        let result = loop {
            if timed_out || deadline.has_passed() {
                break Err(RecvTimeoutError::Timeout);
            }
            // POLLING: until a push (or the disconnection) moves `tail`.
            if at_once || index.poll(&policy, deadline, tail).timed_out() {
                // PARKING: announce, re-try, then sleep.
                let key = index.prepare();
                match self.ring.try_pop() {
                    Ok(v) => break Ok(v),
                    Err(PopError::Disconnected) => break Err(RecvTimeoutError::Disconnected),
                    Err(PopError::Empty(_)) => {}
                }
                let out = index.sleep(key, deadline);
                blocked |= out.blocked();
                // Re-try even when timed out (see `send_contended`).
                timed_out = out.timed_out();
            }
            tail = match self.ring.try_pop() {
                Ok(v) => break Ok(v),
                Err(PopError::Disconnected) => break Err(RecvTimeoutError::Disconnected),
                Err(PopError::Empty(tail)) => tail,
            };
        };
        self.profiler.finish(start, blocked);
        result
    }
}

/// The sending end of a bounded channel. Clone it for more producers; the
/// channel disconnects when the last clone is dropped.
///
/// `Send` and `Sync` when `T: Send`: values move between threads, they are
/// never shared. `UnwindSafe` and `RefUnwindSafe` for every `T`, as
/// crossbeam-channel's and std's: a panic never leaves the channel half
/// changed.
///
/// # Examples
/// ```
/// use waitwise::channel::{self, TrySendError};
///
/// let (tx, rx) = channel::bounded(1);
/// tx.send(1).unwrap();
/// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
/// assert_eq!(rx.recv(), Ok(1));
/// ```
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving end of a bounded channel. Clone it for more consumers
/// (each value goes to exactly one of them); the channel disconnects when
/// the last clone is dropped.
///
/// `Send` and `Sync` when `T: Send`; `UnwindSafe` and `RefUnwindSafe`, as
/// [`Sender`].
///
/// # Examples
/// ```
/// use waitwise::channel::{self, RecvError};
///
/// let (tx, rx) = channel::bounded(4);
/// std::thread::spawn(move || {
///     for i in 0..10 {
///         tx.send(i).unwrap();
///     }
/// });
/// let got: Vec<i32> = rx.iter().collect();
/// assert_eq!(got, (0..10).collect::<Vec<_>>());
/// assert_eq!(rx.recv(), Err(RecvError));
/// ```
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Sender<T> {
    /// Sends `value`, waiting while the channel is full. Fails, giving the
    /// value back, when every receiver is gone.
    #[inline]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.shared
            .send_deadline(value, Deadline::NEVER)
            .map_err(|e| SendError(e.into_inner()))
    }

    /// The channel's `head` index, which a [`Select`](super::Select)
    /// waits on for room.
    pub(super) fn head_index(&self) -> &super::index::Index {
        self.shared.ring.head()
    }

    /// The channel's identity, as [`Receiver`]'s.
    pub(super) fn channel_id(&self) -> *const () {
        Arc::as_ptr(&self.shared).cast()
    }

    /// Sends `value` if a slot is free now; never waits.
    #[inline]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        match self.shared.ring.try_push(value) {
            Ok(()) => Ok(()),
            Err(PushError::Full(v, _)) => Err(TrySendError::Full(v)),
            Err(PushError::Disconnected(v)) => Err(TrySendError::Disconnected(v)),
        }
    }

    /// Sends `value`, waiting at most `timeout` for a free slot.
    /// `Duration::ZERO` is [`Sender::try_send`]; `Duration::MAX` waits
    /// forever.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::channel::{self, SendTimeoutError};
    ///
    /// let (tx, _rx) = channel::bounded(1);
    /// tx.send('a').unwrap();
    /// assert_eq!(tx.send_timeout('b', Duration::from_millis(1)), Err(SendTimeoutError::Timeout('b')));
    /// ```
    #[inline]
    pub fn send_timeout(&self, value: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        self.shared.send_deadline(value, Deadline::after(timeout))
    }

    /// Sends `value`, waiting until `deadline` at most for a free slot.
    #[inline]
    pub fn send_deadline(&self, value: T, deadline: Deadline) -> Result<(), SendTimeoutError<T>> {
        self.shared.send_deadline(value, deadline)
    }

    /// Whether every receiver is gone (sends will fail).
    pub fn is_disconnected(&self) -> bool {
        self.shared.ring.is_disconnected()
    }
}

impl<T> Receiver<T> {
    /// Receives the oldest value, waiting while the channel is empty. Fails
    /// only when the channel is empty and every sender is gone: values sent
    /// before the last sender was dropped are all received first.
    #[inline]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.shared
            .recv_deadline(Deadline::NEVER)
            .map_err(|_| RecvError)
    }

    /// The channel's `tail` index, which a [`Select`](super::Select)
    /// waits on.
    pub(super) fn tail_index(&self) -> &super::index::Index {
        self.shared.ring.tail()
    }

    /// The channel's identity (the shared state's address), which a
    /// [`Select`](super::Select) checks a completing receiver against.
    pub(super) fn channel_id(&self) -> *const () {
        Arc::as_ptr(&self.shared).cast()
    }

    /// Receives a value if one is there now; never waits.
    #[inline]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        match self.shared.ring.try_pop() {
            Ok(v) => Ok(v),
            Err(PopError::Empty(_)) => Err(TryRecvError::Empty),
            Err(PopError::Disconnected) => Err(TryRecvError::Disconnected),
        }
    }

    /// Receives a value, waiting at most `timeout`. `Duration::ZERO` is
    /// [`Receiver::try_recv`]; `Duration::MAX` waits forever.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use waitwise::channel::{self, RecvTimeoutError};
    ///
    /// let (tx, rx) = channel::bounded::<u8>(1);
    /// assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Err(RecvTimeoutError::Timeout));
    /// drop(tx);
    /// assert_eq!(rx.recv_timeout(Duration::MAX), Err(RecvTimeoutError::Disconnected));
    /// ```
    #[inline]
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.shared.recv_deadline(Deadline::after(timeout))
    }

    /// Receives a value, waiting until `deadline` at most.
    #[inline]
    pub fn recv_deadline(&self, deadline: Deadline) -> Result<T, RecvTimeoutError> {
        self.shared.recv_deadline(deadline)
    }

    /// A blocking iterator over received values; it ends when the channel
    /// is empty and every sender is gone.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { rx: self }
    }

    /// An iterator over the values in the channel now: it never waits, and
    /// ends at the first [`Receiver::try_recv`] that finds none.
    ///
    /// # Examples
    /// ```
    /// let (tx, rx) = waitwise::channel::bounded(4);
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2]);
    /// assert_eq!(rx.try_iter().next(), None); // empty, and tx still lives
    /// ```
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { rx: self }
    }

    /// Whether every sender is gone (once the channel is empty, receives
    /// will fail).
    pub fn is_disconnected(&self) -> bool {
        self.shared.ring.is_disconnected()
    }
}

/// The read-only views of the channel that both ends give alike: they look
/// at the one [`Shared`] state.
macro_rules! channel_snapshots {
    ($($end:ident),*) => {$(
        impl<T> $end<T> {
            /// Number of values in the channel (a snapshot).
            pub fn len(&self) -> usize {
                self.shared.ring.len()
            }

            /// Whether the channel is empty (a snapshot).
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Whether the channel is full (a snapshot).
            pub fn is_full(&self) -> bool {
                self.len() == self.capacity()
            }

            /// Number of slots.
            pub fn capacity(&self) -> usize {
                self.shared.ring.capacity()
            }

            /// The channel's wait-time histogram so far, shared by both ends
            /// (`None` when profiling is off).
            pub fn wait_profile(&self) -> Option<WaitProfile> {
                self.shared
                    .profiler
                    .snapshot(SyncKind::ProducerConsumer.name())
            }
        }
    )*};
}

channel_snapshots!(Sender, Receiver);

/// Blocking iterator over a [`Receiver`]'s values ([`Receiver::iter`]).
#[derive(Debug)]
pub struct Iter<'a, T> {
    rx: &'a Receiver<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// Non-blocking iterator over a [`Receiver`]'s values
/// ([`Receiver::try_iter`]).
#[derive(Debug)]
pub struct TryIter<'a, T> {
    rx: &'a Receiver<T>,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.try_recv().ok()
    }
}

/// Blocking iterator that owns a [`Receiver`] (`for v in rx`); it ends when
/// the channel is empty and every sender is gone, and drops the receiver
/// with itself.
#[derive(Debug)]
pub struct IntoIter<T> {
    rx: Receiver<T>,
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

/// `for v in rx`: the receiver moves into the loop (into a thread, say).
///
/// # Examples
/// ```
/// let (tx, rx) = waitwise::channel::bounded(2);
/// let consumer = std::thread::spawn(move || rx.into_iter().sum::<u32>());
/// for i in 1..=4 {
///     tx.send(i).unwrap();
/// }
/// drop(tx);
/// assert_eq!(consumer.join().unwrap(), 10);
/// ```
impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> IntoIter<T> {
        IntoIter { rx: self }
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        // Relaxed: see the module's memory-ordering paragraph.
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        // Relaxed: see the module's memory-ordering paragraph.
        self.shared.receivers.fetch_add(1, Ordering::Relaxed);
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        // AcqRel: see the module's memory-ordering paragraph.
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.ring.disconnect();
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // AcqRel: see the module's memory-ordering paragraph.
        if self.shared.receivers.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.ring.disconnect();
            // Nobody can receive any more: drop what is left now (leaking
            // the rest if a destructor panics; module docs).
            self.shared.ring.drop_remaining();
        }
    }
}

// Unwind safety, as crossbeam-channel's and std's channel ends: no
// operation runs user code while the ring is between states (a value
// moves in or out whole; the only user code is a value's destructor, run
// after it left the ring), so a panic caught around an endpoint's use
// leaves the channel consistent, whatever `T` is.
impl<T> UnwindSafe for Sender<T> {}
impl<T> RefUnwindSafe for Sender<T> {}
impl<T> UnwindSafe for Receiver<T> {}
impl<T> RefUnwindSafe for Receiver<T> {}

/// What a user can act on: how full the channel is and whether the other
/// side is gone (a snapshot). The values themselves are not shown (`T`
/// need not be `Debug`, and reading them would take them).
impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("disconnected", &self.is_disconnected())
            .finish()
    }
}

/// As [`Sender`]'s: length, capacity, whether every sender is gone.
impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("disconnected", &self.is_disconnected())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::options::WaitOptions;
    use crate::policy::{crowding, Policy};

    #[test]
    fn default_waits_poll_by_yield_once_the_endpoints_outnumber_the_cpus() {
        let (tx, rx) = super::pair::<u8>(1, WaitOptions::new());
        let alone = tx.shared.polling_policy(false).mechanism();
        assert!(crowding::holds_cpu(alone), "{alone:?}");
        let senders: Vec<_> = (0..crowding::allowed_cpus()).map(|_| tx.clone()).collect();
        // Yield, or block while the process's yields lose slices.
        let crowded = rx.shared.polling_policy(false).mechanism();
        assert!(!crowding::holds_cpu(crowded), "{crowded:?}");
        drop(senders);
        assert_eq!(tx.shared.polling_policy(false).mechanism(), alone);
    }

    #[test]
    fn an_explicit_policy_polls_as_given_however_many_endpoints() {
        let spin = Policy::always_spin();
        let (tx, _rx) = super::pair::<u8>(1, WaitOptions::new().policy(spin));
        let _senders: Vec<_> = (0..crowding::allowed_cpus()).map(|_| tx.clone()).collect();
        assert_eq!(tx.shared.polling_policy(false), spin);
        assert_eq!(tx.shared.polling_policy(true), spin);
    }

    #[test]
    fn a_wait_beside_its_peer_yields_instead_of_spinning() {
        let (tx, _rx) = super::pair::<u8>(1, WaitOptions::new());
        // Yield, or block while the process's yields lose slices.
        let beside = tx.shared.polling_policy(true).mechanism();
        assert!(!crowding::holds_cpu(beside), "{beside:?}");
        assert_eq!(tx.shared.retry_spins(true), 0);
        assert!(tx.shared.retry_spins(false) > 0);
    }
}
