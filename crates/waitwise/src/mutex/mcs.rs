//! [`RawMcsMutex`]: the Mellor-Crummey & Scott queue lock, time-published
//! (MCS-TP, He, Scherer and Scott, HiPC 2005). Each waiter polls a
//! [`WaitWord`] in its own cache-line-aligned node (the natural home of
//! UMWAIT: the monitored line is written once, by the releaser handing
//! over), publishes a *beat* while it polls (`liveness.rs`) in its
//! predecessor's node, beside the link the releaser reads, and sleeps
//! after the policy's poll limit; a releaser hands the lock to the first
//! waiter in queue order that is running, passing over the waiters ahead of
//! it that sleep or were preempted, who rejoin at the tail.
//!
//! # State
//!
//! ```text
//!  tail: *const McsNode   0 = free; else the last node in the queue
//!  node.word:  WAITING => GRANTED or WAITING => PASSED_OVER, written once by a releaser
//!  node.next:  0 => successor's node, written once by the successor
//!  node.succ_beat:  the successor's liveness (polling at time T / asleep /
//!              patient, tagged with the successor's node), written by the successor
//! ```
//!
//! Transitions:
//! - lock: `tail: pred => me` (swap). `pred == 0`: held. Else link
//!   `pred.next = me` and wait for `me.word != WAITING`. `GRANTED`: held.
//!   `PASSED_OVER`: the node has left the queue; join again at the tail with
//!   a fresh node (patient after [`MAX_PASSES`](super::liveness::MAX_PASSES)
//!   passes).
//! - unlock: if `me.next == 0`, `tail: me => 0` (CAS) and done; if that
//!   fails a successor is between its swap and its link: wait for `me.next`.
//!   A successor that has not published a beat yet (it just arrived) or is
//!   patient is granted at once. Otherwise walk from the successor (at most
//!   [`MAX_WALK`] nodes, while links are in place) to the first node whose
//!   waiter is running (not [`passable`](super::liveness::Judge::passable));
//!   every node before it: `WAITING => PASSED_OVER`, then that node:
//!   `WAITING => GRANTED`, then wake the nodes written to that sleep. When
//!   the walk passes every node up to the tail, `tail: last => 0` (CAS)
//!   frees the lock before they are written `PASSED_OVER` (if that fails a
//!   node is joining behind `last`: it runs, and gets the lock). No running
//!   waiter within `MAX_WALK` nodes: grant the successor (FIFO).
//!
//! # Fairness
//!
//! FIFO among running waiters: the lock goes to the first waiter in queue
//! order that polls with a fresh beat. A waiter that sleeps, or was
//! preempted [`STALE_NS`](super::liveness::STALE_NS) or more before the
//! release, may be passed over while a running waiter stands behind it; it
//! rejoins at the tail, so it loses its place. A waiter passed over
//! `MAX_PASSES` times in one `lock` call queues as patient: a
//! release then hands it the lock (waking it) rather than pass it over
//! while it sleeps. A waiter passed over because it was preempted cannot
//! take the lock before the scheduler runs it again; when it runs it
//! rejoins and is served in order among the running waiters. So no waiter
//! starves while the scheduler runs every thread. The order is strict FIFO
//! while every waiter polls on a CPU of its own.
//!
//! A thread that handed the lock to a waiter queues for it again only
//! after a cool-down (`hand_off_cooldown.rs`, about half a `B`, at most
//! 10 µs), so that the new holder runs a batch of acquisitions from its
//! own cache instead of handing the lock back at each one. The queue order
//! is unchanged (the cooling thread has not queued yet); the cool-down
//! bounds how much later than at once it arrives.
//!
//! Cost (`liveness.rs`): a release reads the clock and one beat per node it
//! walks. A waiter's beat lives in its predecessor's node, on the line of
//! the `next` link that leads to the waiter, which the releaser reads
//! anyway: the common release (the successor just arrived, or polls)
//! reads one line, its own, before granting, where a beat in the waiter's
//! own node would cost a second cache miss on the hand-over's path. A
//! polling waiter stores its beat every µs (to its predecessor's line,
//! which only the predecessor's releaser reads); a passed-over sleeper
//! costs its release a `futex_wake`.
//!
//! A waiter may store a beat after its predecessor's release, into a node
//! already recycled for another acquisition; the beat is tagged with the
//! waiter's node ([`beat_tag`]), and a beat whose tag is not the
//! successor's counts as running (`liveness.rs`), so a late beat can at
//! worst make the next releaser grant a sleeper (a wake-up) rather than
//! pass it over.
//!
//! # Where the node lives (and why that is sound)
//!
//! lock_api 0.5 hands each acquisition's state to `unlock` (its `Guard`
//! associated type), so the holder's node travels in the guard
//! ([`McsGuard`]) rather than in the lock. Nodes come from a per-thread
//! free list and are **never deallocated** (a thread's list moves to a
//! global list when it exits): after a hand-over (or pass-over) store, the
//! releaser still reads the node's sleeper count to decide whether to
//! `futex_wake`, and by then the waiter may have run, unlocked (or
//! rejoined) and recycled its node. With nodes immortal that late read is
//! of valid memory, and at worst causes one spurious wake-up of the node's
//! next user (every wait re-checks its condition). A passed-over node is
//! free as soon as its waiter sees `PASSED_OVER`: the releaser read every
//! `next` and beat of its walk before writing it, and the nodes after it
//! are reached from the new holder's node, never through it. Memory held:
//! one node per lock a thread holds or waits for at once, per thread ever
//! alive at once.
//!
//! # Memory ordering
//!
//! The `tail` swap is `AcqRel`: Release publishes the new node's
//! initialization to the successor that reads it through `tail`; Acquire
//! pairs with the releasing CAS of an unlock that emptied the queue (the
//! hand-over of an empty queue). `next` is stored `Release` / loaded
//! `Acquire` so the releaser sees the successor's initialized node before
//! writing into it (else the successor's `WAITING` could land after it).
//! `GRANTED` and `PASSED_OVER` are stored `SeqCst`, the write half of the
//! [`WaitWord`] sleeper protocol, and read `Acquire` by the waiter: the
//! hand-over of the critical section. Beats are `Relaxed` hints
//! (`liveness.rs`).

use super::hand_off_cooldown;
use super::liveness::{self, Judge};
use super::waiting::LockWaiting;
use crate::loom_const::const_unless_loom;
use crate::mechanism::{Mechanism, WaitpkgState};
use crate::options::WaitOptions;
use crate::policy::Policy;
use crate::profile::WaitProfile;
use crate::wait_word::{SleepRules, WaitWord};
use std::marker::PhantomData;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{spin_hint, yield_now, AtomicU64, AtomicUsize, Ordering};

/// Waiting for the hand-over.
const WAITING: u32 = 0;
/// A releaser handed the lock over.
const GRANTED: u32 = 1;
/// A releaser passed the waiter over: the node left the queue.
const PASSED_OVER: u32 = 2;

/// Most nodes a releaser walks looking for a running waiter. Guessed:
/// enough to find the one running waiter among the threads of an 8-CPU
/// machine oversubscribed 4 times; each node walked is a cache miss, paid
/// only while the nodes walked sleep or were preempted.
const MAX_WALK: usize = 32;

/// How long to poll `next` (with PAUSE) before yielding while a successor
/// links itself in, ns: a time, not a poll count (a PAUSE costs a few to
/// ~140 cycles depending on the core). Guessed: the successor is between
/// two instructions unless it was preempted, and then only yielding helps.
const LINK_SPIN_NS: u64 = 1_000;

/// A queue node: its own [`WaitWord`] line, then the successor link and
/// the successor's beat on the next line (both read by this node's
/// releaser, both written by the successor).
#[derive(Debug)]
struct McsNode {
    word: WaitWord,
    next: AtomicUsize,
    succ_beat: AtomicU64,
}

impl McsNode {
    fn new() -> Self {
        Self {
            word: WaitWord::new(WAITING),
            next: AtomicUsize::new(0),
            succ_beat: AtomicU64::new(0),
        }
    }
}

/// The tag of the beats `node`'s waiter publishes (`liveness.rs`): the
/// node's address, whose low 7 bits are zero (128-byte aligned), so that
/// a beat stored late into a recycled predecessor node is not read as
/// another waiter's. Never 0, so a new node's zeroed beat is nobody's.
#[inline]
fn beat_tag(node: &McsNode) -> u32 {
    ((addr_of(node) >> 7) as u32) | 1
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
///
/// `Sync`, as std's and parking_lot's guards: a shared `McsGuard` gives
/// access to nothing (the node is private and only `unlock`, which takes
/// the guard by value, uses it), so an
/// [`McsMutexGuard`](super::McsMutexGuard) is `Sync` whenever the data is.
#[derive(Debug)]
pub struct McsGuard {
    node: &'static McsNode,
    /// Not `Send`: the thread that locked unlocks (and takes its node back
    /// to its own free list), as with std's and parking_lot's guards.
    /// `Sync` (lock_api's `GuardNoSend` is `!Send + Sync`).
    not_send: PhantomData<lock_api::GuardNoSend>,
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

/// The MCS queue lock: FIFO among running waiters, and each waiter polls
/// only its own cache line, so a release costs one cache-line transfer
/// however many wait (no collapse under contention: Lim & Agarwal section
/// 6.3).
///
/// Waiters poll with UMWAIT (C0.1) where the CPU has WAITPKG, else along its
/// fallback chain (`tpause`, `pause`), for the mutex policy's `alpha * B`,
/// then sleep until a releaser wakes them. When threads outnumber CPUs a
/// release passes over waiters that sleep or were preempted and hands the
/// lock to a running one (module docs, "Fairness": a waiter is passed over
/// at most a few times per acquisition, then served in order). There is no
/// timed acquisition (a queued node cannot leave the queue without the
/// abortable-MCS protocol); `try_lock` is supported.
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
    waits: LockWaiting,
}

#[inline]
fn addr(node: &'static McsNode) -> usize {
    addr_of(node)
}

#[inline]
fn addr_of(node: &McsNode) -> usize {
    node as *const McsNode as usize
}

/// A releaser's choice (module docs, "Transitions"): the nodes it passes
/// over, in queue order, and the next owner, or none when every node up to
/// the tail is passed over (the lock is then freed if no node joins).
struct Choice {
    owner: Option<&'static McsNode>,
    passed: [Option<&'static McsNode>; MAX_WALK],
    n_passed: usize,
}

impl Choice {
    fn to(owner: &'static McsNode) -> Self {
        Choice {
            owner: Some(owner),
            passed: [None; MAX_WALK],
            n_passed: 0,
        }
    }

    /// Walks from `succ`, the successor of the releaser's node `releaser`,
    /// to the first waiter that runs. A successor that just arrived (no
    /// beat yet) or is patient gets the lock without a clock read.
    #[inline]
    fn walk(releaser: &McsNode, succ: &'static McsNode) -> Self {
        // Relaxed: a hint (`liveness.rs`); on the line of the link just read.
        if liveness::surely_not_passable(releaser.succ_beat.load(Ordering::Relaxed)) {
            return Self::to(succ);
        }
        Self::walk_contended(releaser, succ)
    }

    #[cold]
    fn walk_contended(releaser: &McsNode, succ: &'static McsNode) -> Self {
        let judge = Judge::now();
        let mut choice = Self::to(succ);
        let mut pred = releaser;
        let mut n = succ;
        for k in 0..MAX_WALK {
            // Relaxed: a hint (`liveness.rs`).
            let beat = pred.succ_beat.load(Ordering::Relaxed);
            if !judge.passable(beat, beat_tag(n)) {
                choice.owner = Some(n);
                choice.n_passed = k;
                return choice;
            }
            choice.passed[k] = Some(n);
            // Acquire: pairs with the next node's Release link, so its
            // initialization and first beat are visible.
            let next = n.next.load(Ordering::Acquire);
            if next == 0 {
                // Every node up to `n` (the tail, or a node whose successor
                // is linking) is passed over.
                choice.owner = None;
                choice.n_passed = k + 1;
                return choice;
            }
            pred = n;
            // SAFETY: `next` holds pool node addresses only.
            n = unsafe { node_at(next) };
        }
        // No running waiter in the walk: the successor, in order.
        Self::to(succ)
    }

    /// The nodes passed over, in queue order.
    fn passed(&self) -> impl Iterator<Item = &'static McsNode> + '_ {
        self.passed[..self.n_passed].iter().flatten().copied()
    }

    /// The last node passed over (the walk's end when there is no owner).
    fn last_passed(&self) -> &'static McsNode {
        self.passed[self.n_passed - 1].expect("a walk without owner passed a node")
    }
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
                waits: LockWaiting::new(options, Mechanism::Umwait(WaitpkgState::C01)),
            }
        }
    }

    /// A node not in any queue. Its successor's beat is set by the
    /// successor before it links (`wait_in_queue`): no releaser reads it
    /// before.
    fn fresh_node() -> &'static McsNode {
        let node = pool::alloc();
        // Relaxed: published by the Release half of the `tail` swap / CAS.
        node.next.store(0, Ordering::Relaxed);
        node.word.value().store(WAITING, Ordering::Relaxed);
        node
    }

    /// Joins the queue (after this thread's hand-off cool-down, module
    /// docs) and waits for the lock.
    #[inline]
    pub fn lock(&self) -> McsGuard {
        hand_off_cooldown::wait_out(self.addr());
        let node = Self::fresh_node();
        // tail: pred => me. AcqRel: Release publishes our node's
        // initialization to the successor that reads it through `tail`;
        // Acquire pairs with the Release CAS of an unlock that emptied the
        // queue (module doc, "Memory ordering").
        let pred = self.tail.swap(addr(node), Ordering::AcqRel);
        let node = if pred == 0 {
            node
        } else {
            // SAFETY: `tail` only ever holds pool node addresses.
            self.lock_contended(unsafe { node_at(pred) }, node)
        };
        McsGuard {
            node,
            not_send: PhantomData,
        }
    }

    /// Waits in the queue behind `pred`; when passed over, joins again at
    /// the tail with a fresh node. Returns the node that holds the lock.
    #[cold]
    fn lock_contended(
        &self,
        mut pred: &'static McsNode,
        mut node: &'static McsNode,
    ) -> &'static McsNode {
        let profiler = self.waits.profiler();
        let start = profiler.start();
        let mut blocked = false;
        let mut passes = 0;
        loop {
            let (outcome, slept) = self.wait_in_queue(pred, node, liveness::is_patient(passes));
            blocked |= slept;
            if outcome == GRANTED {
                break;
            }
            // PASSED_OVER: the node left the queue (module docs, "Where the
            // node lives": it is free now). Join again at the tail.
            pool::free(node);
            passes += 1;
            node = Self::fresh_node();
            // tail: pred => me, AcqRel as in `lock`.
            let p = self.tail.swap(addr(node), Ordering::AcqRel);
            if p == 0 {
                break;
            }
            // SAFETY: `tail` only ever holds pool node addresses.
            pred = unsafe { node_at(p) };
        }
        profiler.finish(start, blocked);
        node
    }

    /// Links `node` behind `pred` and waits until a releaser writes it:
    /// polls (beating into `pred`) for the policy's limit, then sleeps.
    /// Returns what was written (`GRANTED` or `PASSED_OVER`) and whether it
    /// slept.
    fn wait_in_queue(&self, pred: &McsNode, node: &McsNode, patient: bool) -> (u32, bool) {
        let policy = self.waits.policy();
        let beat = &pred.succ_beat;
        let tag = beat_tag(node);
        // Arrived, no beat yet (counts as running). Relaxed: a hint,
        // published by the Release link below.
        beat.store(liveness::arrived(patient), Ordering::Relaxed);
        // pred.next: 0 => me. Release: our node's initialization first.
        pred.next.store(addr_of(node), Ordering::Release);
        let word = node.word.as_ref();
        let mut decided = |v: u32| v != WAITING;
        let (budget, learning) = policy.begin_wait(word.value() as *const _ as usize);
        let mut blocked = false;
        let mut value = None;
        // POLLING: WAITING => GRANTED / PASSED_OVER, beating.
        if !cfg!(loom) && budget.polls() {
            // Relaxed: a hint (`liveness.rs`).
            beat.store(liveness::polling(tag, patient), Ordering::Relaxed);
            let out = liveness::poll_beating(
                word.futex(),
                budget.mechanism,
                budget.poll_deadline(Deadline::NEVER),
                beat,
                tag,
                patient,
                &mut decided,
            );
            if !out.timed_out() {
                value = Some(out.value());
            }
        }
        let value = match value {
            Some(v) => v,
            None => {
                // ASLEEP: published first, so releasers may pass us over.
                // Relaxed: a hint (`liveness.rs`).
                beat.store(liveness::asleep(tag, patient), Ordering::Relaxed);
                let out = word.block_until(Deadline::NEVER, &mut decided, SleepRules::default());
                blocked = out.blocked();
                out.value()
            }
        };
        if let Some(learning) = learning {
            learning.finish(blocked, false);
        }
        (value, blocked)
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
        let mut choice = Choice::walk(node, succ);
        if choice.owner.is_none() {
            let last = choice.last_passed();
            // tail: last => 0: every waiter is passed over, the lock is
            // free. Release: publishes the critical section to the next
            // `lock` whose swap reads the empty queue. Failure Relaxed: a
            // node is linking behind `last`; `wait_for_link` acquires it.
            if self
                .tail
                .compare_exchange(addr(last), 0, Ordering::Release, Ordering::Relaxed)
                .is_err()
            {
                // The node joining now runs: it gets the lock.
                // SAFETY: `next` holds pool node addresses only.
                choice.owner = Some(unsafe { node_at(Self::wait_for_link(last)) });
            }
        }
        for p in choice.passed() {
            // WAITING => PASSED_OVER, after the queue no longer ends at it.
            // SeqCst: the write half of the WaitWord sleeper protocol.
            p.word.value().store(PASSED_OVER, Ordering::SeqCst);
        }
        if let Some(owner) = choice.owner {
            // WAITING => GRANTED. SeqCst: the hand-over (release) and the
            // write half of the WaitWord sleeper protocol.
            owner.word.value().store(GRANTED, Ordering::SeqCst);
            // May read a node already recycled (module docs): harmless.
            owner.word.wake_one();
            hand_off_cooldown::handed_off(self.addr());
        }
        for p in choice.passed() {
            // A passed-over sleeper wakes to join again (same late read).
            p.word.wake_one();
        }
        pool::free(node);
    }

    /// This lock's address: what its hand-off cool-down is noted under.
    #[inline]
    fn addr(&self) -> usize {
        self as *const Self as usize
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn node() -> &'static McsNode {
        Box::leak(Box::new(McsNode::new()))
    }

    /// `releaser -> a -> b`; each waiter's beat lives in its predecessor's
    /// node, made by `beat` from the waiter's tag.
    fn queue(a_beat: impl Fn(u32) -> u64, b_beat: impl Fn(u32) -> u64) -> [&'static McsNode; 3] {
        let [releaser, a, b] = [node(), node(), node()];
        releaser.next.store(addr(a), Ordering::Relaxed);
        releaser
            .succ_beat
            .store(a_beat(beat_tag(a)), Ordering::Relaxed);
        a.next.store(addr(b), Ordering::Relaxed);
        a.succ_beat.store(b_beat(beat_tag(b)), Ordering::Relaxed);
        [releaser, a, b]
    }

    fn asleep(tag: u32) -> u64 {
        liveness::asleep(tag, false)
    }

    fn polling(tag: u32) -> u64 {
        liveness::polling(tag, false)
    }

    /// Tries at a release that finds its waiter running.
    const HAND_OFF_TRIES: usize = 10_000;

    #[test]
    fn a_release_to_a_waiter_notes_a_cooldown_and_an_uncontended_one_does_not() {
        // Waiters that never sleep, so that a release finds them running
        // (one preempted for long may still be passed over: retried).
        let lock = RawMcsMutex::with_options(WaitOptions::new().policy(Policy::always_spin()));
        let guard = lock.lock();
        // SAFETY: `guard` is this lock's, released once.
        unsafe { lock.unlock(guard) };
        assert!(!hand_off_cooldown::noted(lock.addr()));
        // Each try may lose its waiter to preemption on a loaded machine;
        // enough tries that a run which is only slow still succeeds.
        let handed_off = (0..HAND_OFF_TRIES).any(|_| {
            let guard = lock.lock();
            let holder_tail = lock.tail.load(Ordering::Relaxed);
            std::thread::scope(|s| {
                let waiter = s.spawn(|| {
                    let g = lock.lock();
                    // SAFETY: `g` is this lock's, released once.
                    unsafe { lock.unlock(g) };
                });
                // The waiter has queued once the tail moved past our node.
                while lock.tail.load(Ordering::Relaxed) == holder_tail {
                    std::thread::yield_now();
                }
                // SAFETY: `guard` is this lock's, released once.
                unsafe { lock.unlock(guard) };
                let noted = hand_off_cooldown::noted(lock.addr());
                waiter.join().unwrap();
                noted
            })
        });
        assert!(handed_off);
        // The next lock waits it out (or finds it over) and forgets it.
        let guard = lock.lock();
        assert!(!hand_off_cooldown::noted(lock.addr()));
        // SAFETY: `guard` is this lock's, released once.
        unsafe { lock.unlock(guard) };
    }

    #[test]
    fn a_sleeping_successor_is_passed_over_for_a_polling_one_behind_it() {
        let [releaser, a, b] = queue(asleep, polling);
        let choice = Choice::walk(releaser, a);
        assert!(std::ptr::eq(choice.owner.unwrap(), b));
        assert_eq!(choice.passed().count(), 1);
        assert!(std::ptr::eq(choice.last_passed(), a));
    }

    #[test]
    fn a_walk_that_passes_every_node_has_no_owner() {
        let [releaser, a, b] = queue(asleep, asleep);
        b.next.store(0, Ordering::Relaxed);
        let choice = Choice::walk(releaser, a);
        assert!(choice.owner.is_none());
        assert!(std::ptr::eq(choice.last_passed(), b));
        assert_eq!(choice.passed().count(), 2);
    }

    #[test]
    fn a_beat_tagged_for_another_node_counts_as_running() {
        // A late beat from the previous user of the releaser's node.
        let other = beat_tag(node());
        let [releaser, a, _] = queue(|_| asleep(other), polling);
        let choice = Choice::walk(releaser, a);
        assert!(std::ptr::eq(choice.owner.unwrap(), a));
        assert_eq!(choice.passed().count(), 0);
    }

    #[test]
    fn a_successor_that_just_arrived_or_sleeps_patient_is_granted() {
        for beat in [liveness::arrived(false), liveness::arrived(true)] {
            let [releaser, a, _] = queue(|_| beat, polling);
            assert!(std::ptr::eq(Choice::walk(releaser, a).owner.unwrap(), a));
        }
        let [releaser, a, _] = queue(|t| liveness::asleep(t, true), polling);
        assert!(std::ptr::eq(Choice::walk(releaser, a).owner.unwrap(), a));
    }

    #[test]
    fn tags_differ_between_nodes_and_are_never_zero() {
        let (a, b) = (node(), node());
        assert_ne!(beat_tag(a), beat_tag(b));
        assert_ne!(beat_tag(a), 0);
    }
}
