//! [`RawMcsMutex`]: the Mellor-Crummey & Scott queue lock. Each waiter
//! polls a [`WaitWord`] in its own cache-line-aligned node (the natural home
//! of UMWAIT: the monitored line is written exactly once, by the
//! predecessor handing over), and a waiter that blocked is woken by its
//! predecessor.
//!
//! # State
//!
//! ```text
//!  tail: *const McsNode   0 = free; else the last node in the queue
//!  node.word:  WAITING (0) => GRANTED (1), written once by the predecessor
//!  node.next:  0 => successor's node, written once by the successor
//! ```
//!
//! Transitions:
//! - lock: `tail: pred => me` (swap). `pred == 0`: held. Else link
//!   `pred.next = me` and wait for `me.word == GRANTED`.
//! - unlock: if `me.next == 0`, `tail: me => 0` (CAS) and done; if that
//!   fails a successor is between its swap and its link: wait for `me.next`.
//!   Then `succ.word: WAITING => GRANTED` and wake it if it sleeps.
//!
//! # Where the node lives (and why that is sound)
//!
//! lock_api 0.5 hands each acquisition's state to `unlock` (its `Guard`
//! associated type), so the holder's node travels in the guard
//! ([`McsGuard`]) rather than in the lock. Nodes come from a per-thread
//! free list and are **never deallocated** (a thread's list moves to a
//! global list when it exits): after the hand-over store, the releaser still
//! reads the successor's sleeper count to decide whether to `futex_wake`,
//! and by then the successor may have run, unlocked and recycled its node.
//! With nodes immortal that late read is of valid memory, and at worst
//! causes one spurious wake-up of the node's next user (every wait
//! re-checks its condition). Memory held: one node per lock a thread holds
//! or waits for at once, per thread ever alive at once.
//!
//! # Memory ordering
//!
//! The `tail` swap is `AcqRel`: Release publishes the new node's
//! initialization to the successor that reads it through `tail`; Acquire
//! pairs with the releasing CAS of an unlock that emptied the queue (the
//! hand-over of an empty queue). `next` is stored `Release` / loaded
//! `Acquire` so the releaser sees the successor's initialized node before
//! writing `GRANTED` into it (else the successor's `WAITING` could land
//! after it). `GRANTED` is stored `SeqCst`, the write half of the
//! [`WaitWord`] sleeper protocol, and read `Acquire` by the waiter: the
//! hand-over of the critical section.

use super::waiting::LockWaits;
use crate::loom_const::const_unless_loom;
use crate::mechanism::{Mechanism, WaitpkgState};
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::wait_word::WaitWord;
use std::marker::PhantomData;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{spin_hint, yield_now, AtomicUsize, Ordering};

/// Waiting for the hand-over.
const WAITING: u32 = 0;
/// The predecessor handed the lock over.
const GRANTED: u32 = 1;

/// How long to poll `next` (with PAUSE) before yielding while a successor
/// links itself in, ns: a time, not a poll count (a PAUSE costs a few to
/// ~140 cycles depending on the core). Guessed: the successor is between
/// two instructions unless it was preempted, and then only yielding helps.
const LINK_SPIN_NS: u64 = 1_000;

/// A queue node: its own [`WaitWord`] line, and the successor link.
#[derive(Debug)]
struct McsNode {
    word: WaitWord,
    next: AtomicUsize,
}

impl McsNode {
    fn new() -> Self {
        Self {
            word: WaitWord::new(WAITING),
            next: AtomicUsize::new(0),
        }
    }
}

/// The node of a held [`RawMcsMutex`] (its lock_api guard state).
///
/// Dropping or forgetting it without `unlock` leaves the lock held forever
/// and the node leaked, nothing worse. Not `Send`:
///
/// ```compile_fail,E0277
/// fn send<T: Send>(_: T) {}
/// let m = waitwise::mutex::McsMutex::new(0);
/// send(m.lock());
/// ```
#[derive(Debug)]
pub struct McsGuard {
    node: &'static McsNode,
    /// Not `Send`: the thread that locked unlocks (and takes its node back
    /// to its own free list), as with std's and parking_lot's guards.
    not_send: PhantomData<*const ()>,
}

/// Node free lists: per thread, spilling into a global list at thread exit.
#[cfg(not(loom))]
mod pool {
    use super::McsNode;
    use std::cell::RefCell;
    use std::sync::Mutex;

    /// Nodes of threads that exited.
    static GLOBAL: Mutex<Vec<&'static McsNode>> = Mutex::new(Vec::new());

    struct Local(Vec<&'static McsNode>);

    impl Drop for Local {
        fn drop(&mut self) {
            if let Ok(mut g) = GLOBAL.lock() {
                g.append(&mut self.0);
            }
        }
    }

    thread_local! {
        static LOCAL: RefCell<Local> = const { RefCell::new(Local(Vec::new())) };
    }

    /// A node not in any queue (initialized by the caller).
    #[inline]
    pub(super) fn alloc() -> &'static McsNode {
        LOCAL
            .try_with(|l| l.borrow_mut().0.pop())
            .ok()
            .flatten()
            .unwrap_or_else(alloc_slow)
    }

    #[cold]
    fn alloc_slow() -> &'static McsNode {
        let spilled = GLOBAL.lock().ok().and_then(|mut g| g.pop());
        spilled.unwrap_or_else(|| Box::leak(Box::new(McsNode::new())))
    }

    /// Returns a node that left its queue.
    #[inline]
    pub(super) fn free(node: &'static McsNode) {
        if LOCAL.try_with(|l| l.borrow_mut().0.push(node)).is_err() {
            // This thread's list is gone (thread exit): spill.
            if let Ok(mut g) = GLOBAL.lock() {
                g.push(node);
            }
        }
    }
}

/// Under loom every acquisition gets a fresh leaked node: loom objects
/// cannot outlive one model execution, so none is reused.
#[cfg(loom)]
mod pool {
    use super::McsNode;

    pub(super) fn alloc() -> &'static McsNode {
        Box::leak(Box::new(McsNode::new()))
    }

    pub(super) fn free(_node: &'static McsNode) {}
}

/// The MCS queue lock: FIFO, and each waiter polls only its own cache line,
/// so a release costs one cache-line transfer however many wait (no
/// collapse under contention: Lim & Agarwal section 6.3).
///
/// Waiters poll with UMWAIT (C0.1) where the CPU has WAITPKG, else along its
/// fallback chain (`tpause`, `pause`), for the mutex policy's `alpha * B`,
/// then sleep until the predecessor wakes them. Like the ticket lock it
/// convoys when threads outnumber CPUs. There is no timed acquisition (a
/// queued node cannot leave the queue without the abortable-MCS protocol);
/// `try_lock` is supported.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use waitwise::mutex::McsMutex;
///
/// let m = Arc::new(McsMutex::new(0u32));
/// let hs: Vec<_> = (0..3)
///     .map(|_| {
///         let m = m.clone();
///         std::thread::spawn(move || for _ in 0..500 { *m.lock() += 1 })
///     })
///     .collect();
/// for h in hs {
///     h.join().unwrap();
/// }
/// assert_eq!(*m.lock(), 1500);
/// let g = m.lock();
/// assert!(m.try_lock().is_none());
/// drop(g);
/// ```
pub struct RawMcsMutex {
    /// Address of the last queued node, 0 when free.
    tail: AtomicUsize,
    waits: LockWaits,
}

#[inline]
fn addr(node: &'static McsNode) -> usize {
    node as *const McsNode as usize
}

/// # Safety
///
/// `a` must be the address of a pool node (`addr` of an `alloc` result).
#[inline]
unsafe fn node_at(a: usize) -> &'static McsNode {
    debug_assert!(a != 0);
    // SAFETY: pool nodes are leaked boxes, never freed: valid for 'static.
    unsafe { &*(a as *const McsNode) }
}

impl RawMcsMutex {
    const_unless_loom! {
        /// An unlocked MCS lock with the default mutex policy.
        pub fn new() -> Self {
            Self::with_options(WaitOptions::new())
        }

        /// An unlocked MCS lock waiting as `options` say.
        pub fn with_options(options: WaitOptions) -> Self {
            Self {
                tail: AtomicUsize::new(0),
                waits: LockWaits::new(options, Mechanism::Umwait(WaitpkgState::C01)),
            }
        }
    }

    fn fresh_node() -> &'static McsNode {
        let node = pool::alloc();
        // Relaxed: published by the Release half of the `tail` swap / CAS.
        node.next.store(0, Ordering::Relaxed);
        node.word.value().store(WAITING, Ordering::Relaxed);
        node
    }

    /// Joins the queue and waits for the lock.
    #[inline]
    pub fn lock(&self) -> McsGuard {
        let node = Self::fresh_node();
        // tail: pred => me. AcqRel: Release publishes our node's
        // initialization to the successor that reads it through `tail`;
        // Acquire pairs with the Release CAS of an unlock that emptied the
        // queue (module doc, "Memory ordering").
        let pred = self.tail.swap(addr(node), Ordering::AcqRel);
        if pred != 0 {
            // SAFETY: `tail` only ever holds pool node addresses.
            let pred = unsafe { node_at(pred) };
            self.wait_in_queue(pred, node);
        }
        McsGuard {
            node,
            not_send: PhantomData,
        }
    }

    #[cold]
    fn wait_in_queue(&self, pred: &'static McsNode, node: &'static McsNode) {
        let policy = self.waits.policy();
        let profiler = self.waits.profiler();
        let start = profiler.start();
        // pred.next: 0 => me. Release: our node's initialization first.
        pred.next.store(addr(node), Ordering::Release);
        // WAITING => GRANTED, written by the predecessor.
        let out = node
            .word
            .wait_until(&policy, Deadline::NEVER, |v| v == GRANTED);
        profiler.finish(start, out.blocked());
    }

    /// Acquires the lock if the queue is empty; never waits.
    #[inline]
    pub fn try_lock(&self) -> Option<McsGuard> {
        let node = Self::fresh_node();
        // tail: 0 => me. AcqRel as for the swap in `lock`. Failure Relaxed:
        // a failed try takes nothing and frees its unpublished node.
        match self
            .tail
            .compare_exchange(0, addr(node), Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(_) => Some(McsGuard {
                node,
                not_send: PhantomData,
            }),
            Err(_) => {
                pool::free(node);
                None
            }
        }
    }

    /// Hands the lock to the next node in the queue, or empties it.
    ///
    /// # Safety
    ///
    /// `guard` must come from an acquisition of this lock that was not
    /// released since.
    #[inline]
    pub unsafe fn unlock(&self, guard: McsGuard) {
        let node = guard.node;
        // Acquire: pairs with the successor's Release link.
        let mut next = node.next.load(Ordering::Acquire);
        if next == 0 {
            // tail: me => 0. Release: publishes the critical section to
            // the next `lock` whose swap reads the empty queue. Failure
            // Relaxed: a successor is linking; `wait_for_link` acquires it.
            if self
                .tail
                .compare_exchange(addr(node), 0, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                pool::free(node);
                return;
            }
            next = Self::wait_for_link(node);
        }
        // SAFETY: `next` holds pool node addresses only.
        let succ = unsafe { node_at(next) };
        // WAITING => GRANTED. SeqCst: the hand-over (release) and the write
        // half of the WaitWord sleeper protocol.
        succ.word.value().store(GRANTED, Ordering::SeqCst);
        // May read a node already recycled (see the module docs): harmless.
        succ.word.wake_one();
        pool::free(node);
    }

    /// A successor swapped itself into `tail` but has not linked yet.
    #[cold]
    fn wait_for_link(node: &McsNode) -> usize {
        let clock = cycle_clock();
        let spin_ticks = clock.ns_to_ticks(LINK_SPIN_NS);
        let mut yield_at = clock.now().saturating_add(spin_ticks);
        loop {
            // Acquire: pairs with the successor's Release link.
            let next = node.next.load(Ordering::Acquire);
            if next != 0 {
                return next;
            }
            let now = clock.now();
            if now >= yield_at {
                yield_now();
                yield_at = now.saturating_add(spin_ticks);
            } else {
                spin_hint();
            }
        }
    }

    /// Whether the lock is held (a snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        // Relaxed: a snapshot that orders nothing.
        self.tail.load(Ordering::Relaxed) != 0
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

impl Default for RawMcsMutex {
    fn default() -> Self {
        Self::new()
    }
}

/// The state a user can act on (a snapshot): held or not, and the policy
/// (the queue is a linked list of the waiters' nodes, not shown).
impl std::fmt::Debug for RawMcsMutex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawMcsMutex")
            .field("locked", &self.is_locked())
            .field("policy", &format_args!("{}", self.policy().name()))
            .finish()
    }
}

// SAFETY: a thread holds the lock from the moment its node is at the head of
// the queue (its swap found `tail == 0`, or its predecessor wrote GRANTED)
// until its unlock empties the queue or grants the successor; one head at a
// time. The guard is a reference to an immortal node, so forgetting it
// leaks only the lock, and moving or dropping the mutex leaves every node
// valid.
#[cfg(not(loom))]
unsafe impl lock_api::RawMutex for RawMcsMutex {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = McsGuard;

    #[inline]
    fn lock(&self) -> McsGuard {
        RawMcsMutex::lock(self)
    }

    #[inline]
    fn try_lock(&self) -> Option<McsGuard> {
        RawMcsMutex::try_lock(self)
    }

    #[inline]
    unsafe fn unlock(&self, guard: McsGuard) {
        // SAFETY: forwarded from the caller.
        unsafe { RawMcsMutex::unlock(self, guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        RawMcsMutex::is_locked(self)
    }
}
