//! The lock-free bounded ring buffer under the channel: Vyukov's bounded
//! MPMC queue with a sequence stamp per slot (the design of
//! crossbeam-channel's array flavor), without any waiting. The channel adds
//! waiting on top ([`super::signal`]).
//!
//! # Why this is also the SPSC fast path
//!
//! With one producer and one consumer, a push is one uncontended CAS on
//! `tail` (a cache line only the producer writes), a stamp load and a stamp
//! store in the slot; a pop is the same on `head`. Neither side reads the
//! other's index unless the ring looks full (push) or empty (pop). A
//! specialised single-producer path detected from clone counts cannot go
//! further safely: `Sender` is `Sync`, so one sender may be used from many
//! threads at once, and the one `SeqCst` read-modify-write per operation is
//! needed anyway for the waiters' store-buffering check (see
//! [`super::signal`]).
//!
//! # Positions and stamps
//!
//! ```text
//!  head, tail:  | lap (multiples of one_lap) | mark_bit (tail only) | index < cap |
//!  one_lap = 2 * mark_bit,  mark_bit = (cap + 1).next_power_of_two()
//! ```
//!
//! `tail` is the next position to push, `head` the next to pop; moving past
//! index `cap - 1` goes to index 0 of the next lap. `mark_bit` set in
//! `tail` means disconnected: no more pushes.
//!
//! Slot `i`'s stamp says what the slot waits for:
//! - `stamp == p` (position `p` has index `i`): empty, free for the push
//!   at `p`;
//! - `stamp == p + 1`: full, holding the value for the pop at `p`.
//!
//! Transitions:
//! - push at `tail` when `stamp == tail`: CAS `tail => tail + 1` (next lap
//!   after the last index), write the value, `stamp => tail + 1`.
//! - pop at `head` when `stamp == head + 1`: CAS `head => head + 1`, read the
//!   value, `stamp => head + one_lap` (free for the push one lap later).
//! - disconnect: `tail => tail | mark_bit` (one `fetch_or`; later pushes
//!   fail, pops drain what is left).
//!
//! # Memory ordering
//!
//! The stamp hands a slot from a push to a pop and back: each side stores
//! the stamp with `Release` after touching the value, and loads it with
//! `Acquire` before touching it, so the write of a value happens before its
//! read, and the read before the next lap's write. Index CASes are `SeqCst`
//! and the full/empty checks put a `SeqCst` fence before loading the other
//! index: together with the waiters' `SeqCst` registration and the waker's
//! `SeqCst` check, this is the store-buffering pattern that keeps a waiter
//! from sleeping on a ring that just changed (see [`super::signal`]). Plain
//! index loads are `Relaxed`: a stale index only fails a CAS or a stamp
//! comparison, and the loop reloads it.

use super::cell::UnsafeCell;
use std::mem::MaybeUninit;
use waitwise_platform::shim::{fence, AtomicUsize, Ordering};

/// Spin rounds that double the number of spin hints before [`Backoff`]
/// starts yielding the CPU: 2^6 = 64 hints (~1-4 µs with PAUSE). Guessed,
/// the value crossbeam's `Backoff` uses; it only bounds how long a thread
/// spins on an operation another thread has half finished.
const SPIN_LIMIT: u32 = 6;

/// Exponential spinning for the retry loops of [`Ring`], yielding the CPU
/// once spinning is long enough (a half-finished push or pop by a thread
/// that the scheduler preempted).
struct Backoff {
    step: u32,
}

impl Backoff {
    #[inline]
    fn new() -> Self {
        Self { step: 0 }
    }

    /// After a failed CAS: a short spin, never a yield (the winner has
    /// already moved on).
    #[inline]
    fn spin(&mut self) {
        for _ in 0..1u32 << self.step.min(SPIN_LIMIT) {
            waitwise_platform::shim::spin_hint();
        }
        if self.step <= SPIN_LIMIT {
            self.step += 1;
        }
    }

    /// While another thread finishes its operation: spin, then yield.
    #[inline]
    fn snooze(&mut self) {
        if self.step <= SPIN_LIMIT {
            for _ in 0..1u32 << self.step {
                waitwise_platform::shim::spin_hint();
            }
            self.step += 1;
        } else {
            waitwise_platform::shim::yield_now();
        }
    }
}

/// Aligns a field to its own pair of cache lines, so the producer's and the
/// consumer's indices do not share one.
#[repr(align(128))]
#[derive(Debug)]
struct CachePadded<T>(T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

/// One slot: its stamp and its (maybe uninitialised) value.
struct Slot<T> {
    /// See the module docs: `p` = free for the push at `p`, `p + 1` = full.
    stamp: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// Why a push failed; the value comes back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PushError<T> {
    /// Every slot is full.
    Full(T),
    /// The ring is disconnected.
    Disconnected(T),
}

/// Why a pop failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PopError {
    /// No value, not disconnected.
    Empty,
    /// No value, and disconnected: none will come.
    Disconnected,
}

/// The largest capacity for values of type `T`: positions need four spare
/// high bits (mark bit, lap bit, and rounding to a power of two), and the
/// slot array must fit in `isize::MAX` bytes.
pub(crate) fn max_capacity<T>() -> usize {
    let by_positions = 1usize << (usize::BITS - 4);
    let by_bytes = isize::MAX as usize / std::mem::size_of::<Slot<T>>();
    by_positions.min(by_bytes)
}

/// A bounded lock-free MPMC ring buffer (see the module docs).
pub(crate) struct Ring<T> {
    /// Next position to pop.
    head: CachePadded<AtomicUsize>,
    /// Next position to push, with `mark_bit` once disconnected.
    tail: CachePadded<AtomicUsize>,
    slots: Box<[Slot<T>]>,
    cap: usize,
    mark_bit: usize,
    one_lap: usize,
}

// SAFETY: values are moved into and out of the ring, never shared by
// reference, so sending the ring (or sharing it, which lets other threads
// push and pop) needs only `T: Send`; the stamps make every slot access
// exclusive (see the module docs).
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    /// An empty ring with `cap` slots; `1 <= cap <= max_capacity::<T>()`
    /// (checked by the caller).
    pub(crate) fn new(cap: usize) -> Self {
        assert!(
            (1..=max_capacity::<T>()).contains(&cap),
            "waitwise::channel: ring capacity {cap} out of range"
        );
        let mark_bit = (cap + 1).next_power_of_two();
        let slots = (0..cap)
            .map(|i| Slot {
                stamp: AtomicUsize::new(i),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        Self {
            head: CachePadded(AtomicUsize::new(0)),
            tail: CachePadded(AtomicUsize::new(0)),
            slots,
            cap,
            mark_bit,
            one_lap: mark_bit * 2,
        }
    }

    /// Number of slots.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// The position after `pos` (same lap, or index 0 of the next lap).
    #[inline(always)]
    fn next(&self, pos: usize) -> usize {
        let index = pos & (self.mark_bit - 1);
        if index + 1 < self.cap {
            pos + 1
        } else {
            (pos & !(self.one_lap - 1)).wrapping_add(self.one_lap)
        }
    }

    /// Pushes `value`, or gives it back if the ring is full or disconnected.
    #[inline]
    pub(crate) fn try_push(&self, value: T) -> Result<(), PushError<T>> {
        let mut backoff = Backoff::new();
        // Relaxed: a first guess, validated by the stamp and the CAS.
        let mut tail = self.tail.load(Ordering::Relaxed);
        loop {
            if tail & self.mark_bit != 0 {
                return Err(PushError::Disconnected(value));
            }
            let slot = &self.slots[tail & (self.mark_bit - 1)];
            // Acquire: pairs with the pop's Release stamp store, so its read
            // of the old value happens before our write.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == tail {
                // Empty slot for this position: claim it.
                // tail => next(tail)
                match self.tail.compare_exchange_weak(
                    tail,
                    self.next(tail),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: the CAS made this thread the only one to
                        // own position `tail`; `stamp == tail` says the slot
                        // is empty and its last reader is done (Acquire
                        // above). Nobody touches the value until our stamp
                        // store below.
                        slot.value.with_mut(|p| unsafe { (*p).write(value) });
                        // stamp: tail => tail + 1 (full). Release: publishes
                        // the value to the pop that Acquire-loads the stamp.
                        slot.stamp.store(tail + 1, Ordering::Release);
                        return Ok(());
                    }
                    Err(now) => {
                        tail = now;
                        backoff.spin();
                    }
                }
            } else if stamp.wrapping_add(self.one_lap) == tail + 1 {
                // The slot still holds the value pushed one lap ago: the ring
                // is full, unless a pop is taking that value right now.
                // SeqCst fence: the waiters' store-buffering check.
                fence(Ordering::SeqCst);
                // Relaxed: ordered by the fence.
                let head = self.head.load(Ordering::Relaxed);
                if head.wrapping_add(self.one_lap) == tail {
                    // Full; but re-read the mark after the fence too (our
                    // `tail` predates it), or a sender could register, miss
                    // a concurrent disconnect, and wait for a slot forever.
                    if self.tail.load(Ordering::Relaxed) & self.mark_bit != 0 {
                        return Err(PushError::Disconnected(value));
                    }
                    return Err(PushError::Full(value));
                }
                backoff.spin();
                tail = self.tail.load(Ordering::Relaxed);
            } else {
                // Another push claimed this position and has not finished,
                // or `tail` is stale: wait for it to move on.
                backoff.snooze();
                tail = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Pops the oldest value, or says why there is none.
    #[inline]
    pub(crate) fn try_pop(&self) -> Result<T, PopError> {
        let mut backoff = Backoff::new();
        // Relaxed: a first guess, validated by the stamp and the CAS.
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[head & (self.mark_bit - 1)];
            // Acquire: pairs with the push's Release stamp store, so the
            // value is initialised before we read it.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == head + 1 {
                // Full slot for this position: claim it.
                // head => next(head)
                match self.head.compare_exchange_weak(
                    head,
                    self.next(head),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: the CAS made this thread the only one to
                        // own position `head`; `stamp == head + 1` says the
                        // push that wrote the value is done (Acquire above),
                        // so the value is initialised. Nobody touches it
                        // until our stamp store below, and it is read
                        // exactly once: ownership moves to the caller.
                        let value = slot.value.with_mut(|p| unsafe { (*p).assume_init_read() });
                        // stamp: head + 1 => head + one_lap (empty, for the
                        // next lap). Release: our read happens before the
                        // next push's write.
                        slot.stamp
                            .store(head.wrapping_add(self.one_lap), Ordering::Release);
                        return Ok(value);
                    }
                    Err(now) => {
                        head = now;
                        backoff.spin();
                    }
                }
            } else if stamp == head {
                // The slot is empty: the ring is empty, unless a push
                // claimed this position and is still writing.
                // SeqCst fence: the waiters' store-buffering check.
                fence(Ordering::SeqCst);
                // Relaxed: ordered by the fence.
                let tail = self.tail.load(Ordering::Relaxed);
                if tail & !self.mark_bit == head {
                    return Err(if tail & self.mark_bit != 0 {
                        PopError::Disconnected
                    } else {
                        PopError::Empty
                    });
                }
                backoff.snooze();
                head = self.head.load(Ordering::Relaxed);
            } else {
                // Another pop took this position and has not finished, or
                // `head` is stale.
                backoff.snooze();
                head = self.head.load(Ordering::Relaxed);
            }
        }
    }

    /// Marks the ring disconnected; returns whether this call did it.
    pub(crate) fn disconnect(&self) -> bool {
        // SeqCst: a write the waiters' store-buffering check must see,
        // like a push.
        let tail = self.tail.fetch_or(self.mark_bit, Ordering::SeqCst);
        tail & self.mark_bit == 0
    }

    /// Whether the ring is disconnected.
    pub(crate) fn is_disconnected(&self) -> bool {
        self.tail.load(Ordering::SeqCst) & self.mark_bit != 0
    }

    /// Number of values between `head` and `tail` (mark bit cleared).
    fn len_between(&self, head: usize, tail: usize) -> usize {
        let hix = head & (self.mark_bit - 1);
        let tix = tail & (self.mark_bit - 1);
        if hix < tix {
            tix - hix
        } else if hix > tix {
            self.cap - hix + tix
        } else if tail & !self.mark_bit == head {
            0
        } else {
            self.cap
        }
    }

    /// Number of values in the ring (a snapshot).
    pub(crate) fn len(&self) -> usize {
        loop {
            // SeqCst: a consistent snapshot of both indices; `tail` is
            // re-read to make sure `head` belongs to the same moment.
            let tail = self.tail.load(Ordering::SeqCst);
            let head = self.head.load(Ordering::SeqCst);
            if self.tail.load(Ordering::SeqCst) == tail {
                return self.len_between(head, tail);
            }
        }
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // Relaxed: `&mut self` means no other thread can touch the ring, and
        // whatever they did happened before the drop (the `Arc` that owned
        // the ring synchronised with them when its count reached zero).
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed);
        let first = head & (self.mark_bit - 1);
        for i in 0..self.len_between(head, tail) {
            let index = (first + i) % self.cap;
            // SAFETY: every position in [head, tail) was pushed and not
            // popped: its value is initialised and owned by the ring, and
            // `&mut self` rules out concurrent access. Each is dropped once.
            self.slots[index]
                .value
                .with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_full_empty_and_wrap_around() {
        for cap in [1, 2, 3, 5, 8] {
            let ring = Ring::new(cap);
            for round in 0..3 {
                for i in 0..cap {
                    ring.try_push(round * 100 + i).unwrap();
                }
                assert_eq!(ring.len(), cap);
                assert_eq!(ring.try_push(999), Err(PushError::Full(999)));
                for i in 0..cap {
                    assert_eq!(ring.try_pop(), Ok(round * 100 + i));
                }
                assert_eq!(ring.try_pop(), Err(PopError::Empty));
                assert_eq!(ring.len(), 0);
            }
        }
    }

    #[test]
    fn disconnect_drains_then_reports() {
        let ring = Ring::new(4);
        ring.try_push(1).unwrap();
        assert!(ring.disconnect());
        assert!(!ring.disconnect());
        assert_eq!(ring.try_push(2), Err(PushError::Disconnected(2)));
        assert_eq!(ring.try_pop(), Ok(1));
        assert_eq!(ring.try_pop(), Err(PopError::Disconnected));
    }

    #[test]
    fn drop_drops_what_is_left_once() {
        use std::rc::Rc;
        let token = Rc::new(());
        for (cap, pushed, popped) in [(3, 3, 1), (3, 2, 2), (4, 4, 0), (2, 0, 0)] {
            let ring = Ring::new(cap);
            // Move head and tail around the ring first.
            for _ in 0..cap + 1 {
                ring.try_push(token.clone()).ok().unwrap();
                drop(ring.try_pop().unwrap());
            }
            for _ in 0..pushed {
                ring.try_push(token.clone()).ok().unwrap();
            }
            for _ in 0..popped {
                drop(ring.try_pop().unwrap());
            }
            assert_eq!(Rc::strong_count(&token), 1 + pushed - popped);
            drop(ring);
            assert_eq!(Rc::strong_count(&token), 1);
        }
    }

    #[test]
    fn max_capacity_is_checked() {
        assert!(max_capacity::<u8>() >= 1 << 20);
        assert!(max_capacity::<[u8; 1 << 20]>() < max_capacity::<u8>());
    }
}
