//! The bounded ring buffer under the channel: Vyukov's bounded MPMC queue
//! with a sequence stamp per slot (the design of crossbeam-channel's array
//! flavor), whose two indices are [`Index`]es, so that the ring is also
//! what waiters wait on.
//!
//! # Waiting on the indices themselves
//!
//! A receiver that finds the ring empty saw `head == tail == t`; until
//! `tail` moves past `t`, the ring stays empty for it. So it polls the
//! `tail` position until it differs from `t`, and then parks on `tail`'s
//! event count ([`super::index`]). A push, whose CAS on `tail` is the
//! change, then calls [`Index::notify`]: one load of the event count, and a
//! system call only for the first push after a receiver parked. Senders
//! wait on `head` the same way. Pollers see the index change itself, so a
//! polling peer costs the other side nothing. Disconnection sets a mark bit
//! in `tail` (which moves the position receivers poll) and notifies both
//! indices; a sender sees the mark when it re-tries after preparing to park.
//!
//! # Why this is also the SPSC fast path
//!
//! With one producer and one consumer, a push is one uncontended CAS on
//! `tail` (a line only the producer writes), a stamp load and a stamp
//! store in the slot, and a load of `tail`'s event count; a pop is the
//! same on `head`. Neither side reads the other's index unless the ring
//! looks full (push) or empty (pop). A specialised single-producer path
//! detected from clone counts cannot go further safely: `Sender` is `Sync`,
//! so one sender may be used from many threads at once, and the `SeqCst`
//! read-modify-write on the index is needed anyway for the parking
//! protocol's store-buffering check.
//!
//! # Positions and stamps
//!
//! ```text
//!  head, tail (u32):  | lap (multiples of one_lap) | mark_bit (tail only) | index < cap |
//!  one_lap = 2 * mark_bit,  mark_bit = (cap + 1).next_power_of_two()
//! ```
//!
//! `tail` is the next position to push, `head` the next to pop; moving past
//! index `cap - 1` goes to index 0 of the next lap (laps wrap around 2^32:
//! `one_lap` divides it). `mark_bit` set in `tail` means disconnected: no
//! more pushes. Positions are 32 bits because futex words are; the
//! capacity is therefore at most 2^28 (four spare high bits).
//!
//! Slot `i`'s stamp says what the slot waits for:
//! - `stamp == p` (position `p` has index `i`): empty, free for the push
//!   at `p`;
//! - `stamp == p + 1`: full, holding the value for the pop at `p`.
//!
//! Transitions:
//! - push at `tail` when `stamp == tail`: CAS `tail => next(tail)`, write
//!   the value, `stamp => tail + 1`, notify parked receivers, if any.
//! - pop at `head` when `stamp == head + 1`: CAS `head => next(head)`, read
//!   the value, `stamp => head + one_lap` (free for the push one lap later),
//!   notify parked senders, if any.
//! - disconnect: `tail => tail | mark_bit` (one `fetch_or`; later pushes
//!   fail, pops drain what is left), notify both indices.
//!
//! # Memory ordering
//!
//! The stamp hands a slot from a push to a pop and back: each side stores
//! the stamp with `Release` after touching the value, and loads it with
//! `Acquire` before touching it, so the write of a value happens before its
//! read, and the read before the next lap's write. Index CASes and the
//! disconnect `fetch_or` are `SeqCst`: they are the write half of the
//! [`Index`] parking protocol (a waiter prepares to park, then re-tries; the
//! changer writes the index, then reads the event count).
//! Plain index loads are `Relaxed` when a stale value only fails a CAS or a
//! stamp comparison and the loop reloads it, and `Acquire` when the other
//! side's index decides full or empty (so the value read is at least as new
//! as the stamp that sent us there).
//!
//! Disconnection is ordered too: whatever a side did before its last
//! endpoint was dropped (the endpoint counts gather it into the dropping
//! thread) happens before every operation that fails because of it. A pop
//! sees the mark bit through its `Acquire` load of `tail`; a push sees it in
//! `tail` values it read `Relaxed`, and so takes an `Acquire` fence before
//! it returns [`PushError::Disconnected`]. Without that fence, a sender
//! could fail on the receivers' drop and still read the values they stored
//! before it (the loom models
//! `a_failed_send_into_a_free_slot_carries_the_receivers_writes` and
//! `a_failed_blocked_send_carries_the_receivers_writes` find it).

use super::cell::UnsafeCell;
use super::index::Index;
#[cfg(doc)]
use crate::wait_word::WaitWord;
use std::mem::MaybeUninit;
use waitwise_platform::shim::{fence, AtomicU32, Ordering};

/// The retry loops' backoff: [`Backoff::spin`] after a failed CAS,
/// [`Backoff::snooze`] while another thread finishes a half-done push or
/// pop (it yields once spinning is long enough: that thread may have been
/// preempted).
pub(crate) use crate::mechanism::backoff::Backoff;

/// One slot: its stamp and its (maybe uninitialised) value.
struct Slot<T> {
    /// See the module docs: `p` = free for the push at `p`, `p + 1` = full.
    stamp: AtomicU32,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// Why a push failed; the value comes back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PushError<T> {
    /// Every slot is full; the `u32` is the `head` seen (wait for it to
    /// move on [`Ring::head`]).
    Full(T, u32),
    /// The ring is disconnected.
    Disconnected(T),
}

/// Why a pop failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PopError {
    /// No value, not disconnected; the `u32` is the `tail` seen (wait for
    /// it to move on [`Ring::tail`]).
    Empty(u32),
    /// No value, and disconnected: none will come.
    Disconnected,
}

/// The largest capacity for values of type `T`: 32-bit positions need four
/// spare high bits (mark bit, lap bit, and rounding to a power of two), and
/// the slot array must fit in `isize::MAX` bytes.
pub(crate) fn max_capacity<T>() -> usize {
    let by_positions = 1usize << (u32::BITS - 4);
    let by_bytes = isize::MAX as usize / std::mem::size_of::<Slot<T>>();
    by_positions.min(by_bytes)
}

/// A bounded lock-free MPMC ring buffer (see the module docs).
pub(crate) struct Ring<T> {
    /// Next position to pop; senders wait on it (a [`WaitWord`] is alone
    /// on its cache lines, so the indices do not share one).
    head: Index,
    /// Next position to push, with `mark_bit` once disconnected; receivers
    /// wait on it.
    tail: Index,
    slots: Box<[Slot<T>]>,
    cap: usize,
    mark_bit: u32,
    one_lap: u32,
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
        let mark_bit = (cap as u32 + 1).next_power_of_two();
        let slots = (0..cap as u32)
            .map(|i| Slot {
                stamp: AtomicU32::new(i),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        Self {
            head: Index::new(),
            tail: Index::new(),
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
    fn next(&self, pos: u32) -> u32 {
        let index = pos & (self.mark_bit - 1);
        if (index as usize) + 1 < self.cap {
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
        let mut tail = self.tail.value().load(Ordering::Relaxed);
        loop {
            if tail & self.mark_bit != 0 {
                // The mark was read Relaxed (the first guess, a failed CAS
                // or a reload), and this return acts on it: without the
                // Acquire fence the failed push would not see what the
                // disconnecting side wrote before its `fetch_or` (a
                // Release: the read value is it or a later mark in its
                // release sequence). Receivers get the same from their
                // Acquire load of `tail` (module doc, "Memory ordering").
                fence(Ordering::Acquire);
                return Err(PushError::Disconnected(value));
            }
            let slot = &self.slots[(tail & (self.mark_bit - 1)) as usize];
            // Acquire: pairs with the pop's Release stamp store, so its read
            // of the old value happens before our write.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == tail {
                // Empty slot for this position: claim it.
                // tail => next(tail) (failure Relaxed: the value seen only
                // starts the next round, which re-validates it)
                match self.tail.value().compare_exchange_weak(
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
                        // A parked receiver waits for `tail` to move.
                        self.tail.notify();
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
                // Acquire: at least as new as the stamp we saw.
                let head = self.head.value().load(Ordering::Acquire);
                if head.wrapping_add(self.one_lap) == tail {
                    return Err(PushError::Full(value, head));
                }
                backoff.spin();
                // Relaxed: a new guess, validated by the stamp and the CAS.
                tail = self.tail.value().load(Ordering::Relaxed);
            } else {
                // Another push claimed this position and has not finished,
                // or `tail` is stale: wait for it to move on. Relaxed: a new
                // guess, validated by the stamp and the CAS.
                backoff.snooze();
                tail = self.tail.value().load(Ordering::Relaxed);
            }
        }
    }

    /// Pops the oldest value, or says why there is none.
    #[inline]
    pub(crate) fn try_pop(&self) -> Result<T, PopError> {
        let mut backoff = Backoff::new();
        // Relaxed: a first guess, validated by the stamp and the CAS.
        let mut head = self.head.value().load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[(head & (self.mark_bit - 1)) as usize];
            // Acquire: pairs with the push's Release stamp store, so the
            // value is initialised before we read it.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == head + 1 {
                // Full slot for this position: claim it.
                // head => next(head) (failure Relaxed: the value seen only
                // starts the next round, which re-validates it)
                match self.head.value().compare_exchange_weak(
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
                        // A parked sender waits for `head` to move.
                        self.head.notify();
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
                // Acquire: at least as new as the stamp we saw.
                let tail = self.tail.value().load(Ordering::Acquire);
                if tail & !self.mark_bit == head {
                    return Err(if tail & self.mark_bit != 0 {
                        PopError::Disconnected
                    } else {
                        PopError::Empty(tail)
                    });
                }
                backoff.snooze();
                // Relaxed: a new guess, validated by the stamp and the CAS.
                head = self.head.value().load(Ordering::Relaxed);
            } else {
                // Another pop took this position and has not finished, or
                // `head` is stale. Relaxed: a new guess, validated by the
                // stamp and the CAS.
                backoff.snooze();
                head = self.head.value().load(Ordering::Relaxed);
            }
        }
    }

    /// The index senders wait on (a pop moves it).
    #[inline(always)]
    pub(crate) fn head(&self) -> &Index {
        &self.head
    }

    /// The index receivers wait on (a push or the disconnection moves it).
    #[inline(always)]
    pub(crate) fn tail(&self) -> &Index {
        &self.tail
    }

    /// Marks the ring disconnected and notifies every parked waiter;
    /// returns whether this call did it.
    pub(crate) fn disconnect(&self) -> bool {
        // tail => tail | mark_bit (SeqCst: the parking protocol's write)
        let tail = self.tail.value().fetch_or(self.mark_bit, Ordering::SeqCst);
        self.tail.notify();
        self.head.notify();
        tail & self.mark_bit == 0
    }

    /// Pops and drops every value left; call it after [`Ring::disconnect`]
    /// (pushes fail from then on, so it ends). When a value's destructor
    /// panics, the values after it are popped and leaked instead, and the
    /// panic goes on: dropping them while it unwinds would abort the
    /// process at the next destructor that panics (crossbeam-channel's
    /// array flavor leaks them too).
    pub(crate) fn drop_remaining(&self) {
        /// Pops and forgets what is left when dropped, which happens only
        /// while a destructor's panic unwinds.
        struct LeakRest<'a, T>(&'a Ring<T>);
        impl<T> Drop for LeakRest<'_, T> {
            fn drop(&mut self) {
                while let Ok(value) = self.0.try_pop() {
                    std::mem::forget(value);
                }
            }
        }
        let leak_rest = LeakRest(self);
        while let Ok(value) = self.try_pop() {
            drop(value);
        }
        std::mem::forget(leak_rest);
    }

    /// Whether the ring is disconnected.
    #[inline]
    pub(crate) fn is_disconnected(&self) -> bool {
        // SeqCst: a snapshot consistent with the index CASes.
        self.tail.value().load(Ordering::SeqCst) & self.mark_bit != 0
    }

    /// Number of values between `head` and `tail` (mark bit cleared).
    fn len_between(&self, head: u32, tail: u32) -> usize {
        let hix = (head & (self.mark_bit - 1)) as usize;
        let tix = (tail & (self.mark_bit - 1)) as usize;
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
            let tail = self.tail.value().load(Ordering::SeqCst);
            let head = self.head.value().load(Ordering::SeqCst);
            if self.tail.value().load(Ordering::SeqCst) == tail {
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
        let head = self.head.value().load(Ordering::Relaxed);
        let tail = self.tail.value().load(Ordering::Relaxed);
        let first = (head & (self.mark_bit - 1)) as usize;
        // A destructor that panics ends the loop: the values after it are
        // leaked (the slots are `MaybeUninit`), as in `drop_remaining`. The
        // channel's last receiver empties the ring with `drop_remaining`,
        // so this loop finds values only in a ring used on its own.
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
                assert!(matches!(ring.try_push(999), Err(PushError::Full(999, _))));
                for i in 0..cap {
                    assert_eq!(ring.try_pop(), Ok(round * 100 + i));
                }
                assert!(matches!(ring.try_pop(), Err(PopError::Empty(_))));
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
        assert_eq!(max_capacity::<u8>(), 1 << 28);
        assert_eq!(
            max_capacity::<[u8; 1 << 40]>(),
            isize::MAX as usize / std::mem::size_of::<Slot<[u8; 1 << 40]>>()
        );
    }
}
