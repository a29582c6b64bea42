//! Bounded multi-producer multi-consumer channels whose waits follow the
//! producer-consumer policy.
//!
//! [`bounded`] makes a ring buffer of `cap` slots and its two ends. Sends
//! wait while it is full, receives while it is empty; both have `try_`
//! (never wait) and timed variants. The channel disconnects when every
//! [`Sender`] or every [`Receiver`] is gone: receivers drain what is left
//! and then get [`RecvError`]; senders get their value back in the error.
//! Every value sent is received exactly once, in send order per sender.
//!
//! # Layout
//!
//! - `ring.rs`: the ring (Vyukov's bounded queue with a stamp per slot),
//!   which is also the SPSC fast path: with one producer and one consumer
//!   an operation is one uncontended CAS plus two stamp accesses, and
//!   neither side reads the other's index unless the ring looks full or
//!   empty. Its `head` and `tail` are what waiters wait on: a receiver
//!   waits for `tail` to move, a sender for `head`;
//! - `index.rs`: such an index: a position [`WaitWord`](crate::WaitWord)
//!   that waiters poll, plus an event count they park on, so a polling
//!   peer costs the other side nothing and a sleeping one a single system
//!   call per sleep;
//! - `endpoints.rs`: [`Sender`], [`Receiver`], their waits and
//!   disconnection;
//! - `select.rs`: [`Select`], a wait on several receives and sends at once, and
//!   `selectors.rs`, the selectors an index signals besides its sleepers;
//! - `waiting_cpus.rs`: whether a waiter shares its CPU with the other
//!   side, which then makes it yield instead of spinning;
//! - `error.rs`: the error types; `cell.rs`: the loom-aware slot cell.
//!
//! # Capacity
//!
//! A channel has at least one slot. `cap == 0` is rejected: in crossbeam
//! and std's `sync_channel` it means a rendezvous channel, where a send
//! waits until a receiver takes the value, and waitwise does not offer
//! one; quietly giving such a program a slot would change when its sends
//! return. [`try_bounded`] reports `0`, and capacities beyond
//! [`max_capacity`] (which cannot be indexed), as a [`CapacityError`];
//! [`bounded`] panics with the same message.
//!
//! # Examples
//! ```
//! use waitwise::channel;
//!
//! let (tx, rx) = channel::bounded(64);
//! let producers: Vec<_> = (0..2)
//!     .map(|p| {
//!         let tx = tx.clone();
//!         std::thread::spawn(move || {
//!             for i in 0..1000 {
//!                 tx.send(p * 1000 + i).unwrap();
//!             }
//!         })
//!     })
//!     .collect();
//! drop(tx);
//! let mut got: Vec<u32> = rx.iter().collect();
//! for p in producers {
//!     p.join().unwrap();
//! }
//! got.sort_unstable();
//! assert_eq!(got, (0..2000).collect::<Vec<_>>());
//! ```

mod cell;
mod endpoints;
mod error;
mod index;
mod lost_yields;
mod ring;
mod select;
mod selectors;
mod waiting_cpus;

pub use endpoints::{IntoIter, Iter, Receiver, Sender, TryIter};
pub use error::{
    CapacityError, RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError,
    TrySendError,
};
pub use select::{Select, SelectTimeoutError, SelectedOperation, TrySelectError};

use crate::options::WaitOptions;

/// The largest capacity of a channel of `T`: 2^28 (32-bit positions need
/// four spare high bits), or less if the slots would not fit in
/// `isize::MAX` bytes.
pub fn max_capacity<T>() -> usize {
    ring::max_capacity::<T>()
}

/// A channel of `cap` slots, waiting with the producer-consumer policy.
///
/// # Panics
///
/// If `cap == 0` (a rendezvous channel, not offered: see the [module
/// docs](self)) or `cap > max_capacity::<T>()`; use [`try_bounded`] to get
/// an error instead.
///
/// # Examples
/// ```
/// let (tx, rx) = waitwise::channel::bounded(1);
/// assert_eq!(tx.capacity(), 1);
/// tx.send("hi").unwrap();
/// assert_eq!(rx.recv(), Ok("hi"));
/// ```
///
/// ```should_panic
/// // Panics: "channel capacity 0 is not supported ..."
/// let _ = waitwise::channel::bounded::<u8>(0);
/// ```
pub fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    match try_bounded(cap) {
        Ok(pair) => pair,
        Err(e) => panic!("waitwise::channel::bounded: {e}"),
    }
}

/// A channel of `cap` slots, or an error if `cap` is 0 or too large.
///
/// # Examples
/// ```
/// use waitwise::channel;
///
/// assert!(channel::try_bounded::<u64>(usize::MAX).is_err());
/// assert!(channel::try_bounded::<u64>(0).is_err());
/// let (tx, _rx) = channel::try_bounded::<u64>(8).unwrap();
/// assert_eq!(tx.capacity(), 8);
/// ```
pub fn try_bounded<T>(cap: usize) -> Result<(Sender<T>, Receiver<T>), CapacityError> {
    bounded_with_options(cap, WaitOptions::new())
}

/// A channel of `cap` slots with explicit waiting settings (policy,
/// profiling), or an error if `cap` is 0 or too large.
///
/// # Examples
/// ```
/// use waitwise::{channel, Policy, WaitOptions};
///
/// let opts = WaitOptions::new().policy(Policy::always_block()).profile(true);
/// let (tx, rx) = channel::bounded_with_options(2, opts).unwrap();
/// tx.send(5).unwrap();
/// assert_eq!(rx.recv(), Ok(5));
/// assert_eq!(rx.wait_profile().unwrap().total_waits, 0); // nothing waited
/// ```
pub fn bounded_with_options<T>(
    cap: usize,
    options: WaitOptions,
) -> Result<(Sender<T>, Receiver<T>), CapacityError> {
    let max = max_capacity::<T>();
    if cap == 0 || cap > max {
        return Err(CapacityError {
            requested: cap,
            max,
        });
    }
    Ok(endpoints::pair(cap, options))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn endpoints_are_send_and_sync_for_send_values() {
        assert_send_sync::<Sender<Vec<u8>>>();
        assert_send_sync::<Receiver<Vec<u8>>>();
        // Not Sync values are fine too: they are moved, never shared.
        assert_send_sync::<Sender<std::cell::Cell<u8>>>();
    }

    #[test]
    fn capacity_zero_and_too_large_are_errors() {
        let err = try_bounded::<u8>(0).unwrap_err();
        assert_eq!(err.requested, 0);
        assert!(err.to_string().contains("rendezvous"), "{err}");
        let err = try_bounded::<u8>(usize::MAX).unwrap_err();
        assert_eq!(err.requested, usize::MAX);
        assert!(err.to_string().contains("exceeds"));
        let (tx, _rx) = bounded::<u8>(1);
        assert_eq!(tx.capacity(), 1);
    }

    #[test]
    #[should_panic(expected = "channel capacity 0 is not supported")]
    fn bounded_zero_panics_with_the_reason() {
        let _ = bounded::<u8>(0);
    }

    #[test]
    fn receiver_iterates_by_value_and_without_waiting() {
        let (tx, rx) = bounded(4);
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), vec![1, 2]);
        // Empty with a live sender: try_iter ends at once.
        assert_eq!(rx.try_iter().next(), None);
        tx.send(3).unwrap();
        drop(tx);
        let mut by_value = rx.into_iter();
        assert_eq!(by_value.next(), Some(3));
        assert_eq!(by_value.next(), None);
    }

    #[test]
    fn debug_shows_fill_and_disconnection() {
        let (tx, rx) = bounded(3);
        tx.send(7u8).unwrap();
        assert_eq!(
            format!("{tx:?}"),
            "Sender { len: 1, capacity: 3, disconnected: false }"
        );
        drop(tx);
        assert_eq!(
            format!("{rx:?}"),
            "Receiver { len: 1, capacity: 3, disconnected: true }"
        );
    }

    #[test]
    fn recv_drains_before_reporting_disconnect() {
        let (tx, rx) = bounded(4);
        for i in 0..3 {
            tx.send(i).unwrap();
        }
        drop(tx);
        assert!(rx.is_disconnected());
        assert_eq!(rx.iter().collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(rx.recv(), Err(RecvError));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    }

    #[test]
    fn send_to_dropped_receivers_gives_the_value_back() {
        let (tx, rx) = bounded(4);
        let rx2 = rx.clone();
        drop(rx);
        tx.send(1).unwrap();
        drop(rx2);
        assert_eq!(tx.send(2), Err(SendError(2)));
        assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
        assert_eq!(
            tx.send_timeout(4, Duration::MAX),
            Err(SendTimeoutError::Disconnected(4))
        );
    }

    /// Counts drops, to check that nothing leaks or drops twice.
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn leftover_values_are_dropped_exactly_once() {
        for (cap, sent, received, drop_rx_first) in [
            (4, 3, 1, true),
            (4, 4, 0, false),
            (1, 1, 0, true),
            (3, 2, 2, false),
        ] {
            let drops = Arc::new(AtomicUsize::new(0));
            let (tx, rx) = bounded(cap);
            for _ in 0..sent {
                tx.send(Counted(drops.clone())).ok().unwrap();
            }
            for _ in 0..received {
                drop(rx.recv().unwrap());
            }
            assert_eq!(drops.load(Ordering::SeqCst), received);
            if drop_rx_first {
                drop(rx);
                // The last receiver drops the leftovers at once.
                assert_eq!(drops.load(Ordering::SeqCst), sent);
                drop(tx);
            } else {
                drop(tx);
                drop(rx);
            }
            assert_eq!(drops.load(Ordering::SeqCst), sent);
        }
    }

    #[test]
    fn disconnect_wakes_blocked_receivers_and_senders() {
        let opts = WaitOptions::new().policy(crate::Policy::always_block());
        let (tx, rx) = bounded_with_options::<u8>(1, opts).unwrap();
        let h = std::thread::spawn(move || rx.recv());
        std::thread::sleep(Duration::from_millis(5));
        drop(tx);
        assert_eq!(h.join().unwrap(), Err(RecvError));

        let (tx, rx) = bounded_with_options::<u8>(1, opts).unwrap();
        tx.send(1).unwrap();
        let h = std::thread::spawn(move || tx.send(2));
        std::thread::sleep(Duration::from_millis(5));
        drop(rx);
        assert_eq!(h.join().unwrap(), Err(SendError(2)));
    }

    #[test]
    fn zero_timeouts_return_at_once() {
        let (tx, rx) = bounded::<u8>(1);
        let t = Instant::now();
        assert_eq!(
            rx.recv_timeout(Duration::ZERO),
            Err(RecvTimeoutError::Timeout)
        );
        tx.send(1).unwrap();
        assert_eq!(
            tx.send_timeout(2, Duration::ZERO),
            Err(SendTimeoutError::Timeout(2))
        );
        assert!(t.elapsed() < Duration::from_millis(500));
        assert_eq!(rx.recv_timeout(Duration::ZERO), Ok(1));
    }

    #[test]
    fn len_tracks_contents() {
        let (tx, rx) = bounded(3);
        assert!(tx.is_empty());
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        assert_eq!(rx.len(), 2);
        tx.send(3).unwrap();
        assert!(rx.is_full());
        rx.recv().unwrap();
        assert_eq!(tx.len(), 2);
    }

    #[test]
    fn errors_debug_without_the_value() {
        struct NoDebug;
        let e = TrySendError::Full(NoDebug);
        assert_eq!(format!("{e:?}"), "Full(..)");
        assert_eq!(e.to_string(), "sending on a full channel");
        assert!(e.is_full());
        let _value: NoDebug = e.into_inner();
    }
}
