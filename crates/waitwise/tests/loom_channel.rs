//! Loom models of `channel::bounded`: values arrive once and in order,
//! blocked senders and receivers are woken by the other side and by
//! disconnection, and a value received, or an error caused by the other
//! side's drop, carries the writes made before the send or the drop. Run
//! with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_channel`
//! (several seconds on 2 cores).
#![cfg(loom)]

use loom::thread;
use std::time::Duration;
use waitwise::channel::{
    self, Receiver, RecvError, RecvTimeoutError, SendError, SendTimeoutError, Sender, TryRecvError,
    TrySendError,
};
use waitwise::{Policy, WaitOptions};
use waitwise_platform::shim::{Arc, AtomicU32, Ordering};

fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    channel::bounded_with_options(
        cap,
        WaitOptions::new()
            .policy(Policy::always_block())
            .profile(false),
    )
    .unwrap()
}

#[test]
fn spsc_full_channel_blocks_and_delivers_in_order() {
    loom::model(|| {
        let (tx, rx) = bounded(1);
        let producer = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap(); // waits for the first to be received
        });
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(rx.recv(), Ok(2));
        assert_eq!(rx.recv(), Err(RecvError)); // the producer dropped tx
        producer.join().unwrap();
    });
}

#[test]
fn dropping_the_last_sender_wakes_the_receiver() {
    loom::model(|| {
        let (tx, rx) = bounded::<u8>(1);
        let dropper = thread::spawn(move || drop(tx));
        assert_eq!(rx.recv(), Err(RecvError));
        dropper.join().unwrap();
    });
}

#[test]
fn dropping_the_receiver_wakes_a_blocked_sender() {
    loom::model(|| {
        let (tx, rx) = bounded(1);
        tx.send(1).unwrap();
        let dropper = thread::spawn(move || drop(rx));
        assert_eq!(tx.send(2), Err(SendError(2)));
        dropper.join().unwrap();
    });
}

#[test]
fn two_producers_one_consumer_exactly_once() {
    loom::model(|| {
        let (tx, rx) = bounded(1);
        let tx2 = tx.clone();
        let p1 = thread::spawn(move || tx.send(1).unwrap());
        let p2 = thread::spawn(move || tx2.send(2).unwrap());
        let mut got = [rx.recv().unwrap(), rx.recv().unwrap()];
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
        assert_eq!(rx.recv(), Err(RecvError));
        p1.join().unwrap();
        p2.join().unwrap();
    });
}

#[test]
fn one_producer_two_consumers_exactly_once() {
    loom::model(|| {
        let (tx, rx) = bounded(2);
        let rx2 = rx.clone();
        let c = thread::spawn(move || rx2.recv().ok());
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        drop(tx);
        let mine = rx.recv().ok();
        let theirs = c.join().unwrap();
        let mut got = [mine, theirs];
        got.sort_unstable();
        assert_eq!(got, [Some(1), Some(2)]);
    });
}

#[test]
fn leftover_values_are_dropped() {
    loom::model(|| {
        let value = loom::sync::Arc::new(());
        let (tx, rx) = bounded(2);
        let v2 = value.clone();
        let producer = thread::spawn(move || {
            let _ = tx.send(v2);
        });
        drop(rx);
        producer.join().unwrap();
        assert_eq!(loom::sync::Arc::strong_count(&value), 1);
    });
}

// Happens-before through the channel: every model below writes a Relaxed
// loom atomic before a send, a drop or a wait, and reads it after the
// matching receive, error or wake-up, so only the channel can order the
// two (loom reports a stale read as an assertion failure).

/// A far deadline: under loom a timed futex wait times out at once (any
/// timeout is a legal interleaving), so the real clock never decides.
const FAR: Duration = Duration::from_secs(3600);

#[test]
fn a_received_value_carries_the_senders_writes() {
    loom::model(|| {
        let (tx, rx) = bounded(1);
        let data = Arc::new(AtomicU32::new(0));
        let data2 = data.clone();
        let producer = thread::spawn(move || {
            for k in 1..=2 {
                // Relaxed: only the channel may order it (see above).
                data2.store(k, Ordering::Relaxed);
                tx.send(k).unwrap(); // the second waits for the first's recv
            }
        });
        for k in 1..=2 {
            assert_eq!(rx.recv(), Ok(k));
            // Relaxed: see above.
            assert!(data.load(Ordering::Relaxed) >= k);
        }
        producer.join().unwrap();
    });
}

#[test]
fn recv_error_carries_every_senders_writes() {
    loom::model(|| {
        let (tx, rx) = bounded::<u8>(1);
        let data = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
        let senders: Vec<_> = [tx.clone(), tx]
            .into_iter()
            .enumerate()
            .map(|(i, tx)| {
                let data = data.clone();
                thread::spawn(move || {
                    // Relaxed: see above.
                    data[i].store(1, Ordering::Relaxed);
                    drop(tx);
                })
            })
            .collect();
        assert_eq!(rx.recv(), Err(RecvError));
        for d in data.iter() {
            // Relaxed: see above.
            assert_eq!(d.load(Ordering::Relaxed), 1);
        }
        for s in senders {
            s.join().unwrap();
        }
    });
}

/// The receiver writes, then drops the last `Receiver`; a sender that
/// learns of it from a failed send must see the write. `full`: the sender
/// finds the channel full and waits (woken by the disconnection), else it
/// sends into a free slot (`try_send`: `send` takes the same path there)
/// and fails or succeeds depending on the race.
fn send_error_carries_the_receivers_writes(full: bool) {
    loom::model(move || {
        let (tx, rx) = bounded(1);
        if full {
            tx.send(0).unwrap();
        }
        let data = Arc::new(AtomicU32::new(0));
        let data2 = data.clone();
        let dropper = thread::spawn(move || {
            // Relaxed: see above.
            data2.store(1, Ordering::Relaxed);
            drop(rx);
        });
        let failed = if full {
            assert_eq!(tx.send(1), Err(SendError(1)));
            true
        } else {
            match tx.try_send(1) {
                Ok(()) => false,
                Err(e) => {
                    assert!(e.is_disconnected());
                    true
                }
            }
        };
        if failed {
            // Relaxed: see above.
            assert_eq!(data.load(Ordering::Relaxed), 1);
        }
        dropper.join().unwrap();
    });
}

#[test]
fn a_failed_send_into_a_free_slot_carries_the_receivers_writes() {
    send_error_carries_the_receivers_writes(false);
}

#[test]
fn a_failed_blocked_send_carries_the_receivers_writes() {
    send_error_carries_the_receivers_writes(true);
}

/// `send_timeout` into a full channel and `recv_timeout` on an empty one,
/// with far deadlines: each may time out (see [`FAR`]) but never loses or
/// duplicates a value, and a value received carries its sender's writes.
#[test]
fn timed_waits_lose_and_duplicate_nothing() {
    loom::model(|| {
        let (tx, rx) = bounded(1);
        tx.send(1).unwrap();
        let data = Arc::new(AtomicU32::new(0));
        let data2 = data.clone();
        let producer = thread::spawn(move || {
            // Relaxed: see above.
            data2.store(2, Ordering::Relaxed);
            match tx.send_timeout(2, FAR) {
                Ok(()) => None,
                Err(SendTimeoutError::Timeout(v)) => Some(v),
                Err(e) => panic!("{e:?}"),
            }
        });
        let mut got = vec![rx.recv_timeout(FAR).unwrap()];
        match rx.recv_timeout(FAR) {
            Ok(v) => {
                // Relaxed: see above.
                assert_eq!(data.load(Ordering::Relaxed), 2);
                got.push(v);
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
        }
        let kept = producer.join().unwrap();
        got.extend(rx.try_recv().ok());
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        got.extend(kept);
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
    });
}

/// Two receivers, one value already sent, then the last sender dropped:
/// one receiver gets the value, the other (which may have parked, or lost
/// the race for the value after waking) must be released by the
/// disconnection. The value is sent before the receivers start: two
/// receivers spinning on a push half done (its index moved, its stamp not
/// yet) would yield to each other for ever under loom, which never has to
/// run the pusher (a model limit, not a wait the real scheduler allows).
#[test]
fn disconnect_releases_the_receiver_that_lost_the_value() {
    loom::model(|| {
        let (tx, rx) = bounded(1);
        tx.send(7).unwrap();
        let receivers: Vec<_> = [rx.clone(), rx]
            .into_iter()
            .map(|rx| thread::spawn(move || rx.recv().ok()))
            .collect();
        drop(tx);
        let mut got: Vec<_> = receivers.into_iter().map(|r| r.join().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, [None, Some(7)]);
    });
}

/// Two receivers blocked on an empty channel: dropping the last sender
/// wakes both (the event count's notify wakes every parked waiter).
#[test]
fn disconnect_releases_two_blocked_receivers() {
    loom::model(|| {
        let (tx, rx) = bounded::<u8>(1);
        let receivers: Vec<_> = [rx.clone(), rx]
            .into_iter()
            .map(|rx| thread::spawn(move || rx.recv()))
            .collect();
        drop(tx);
        for r in receivers {
            assert_eq!(r.join().unwrap(), Err(RecvError));
        }
    });
}

/// `try_recv` polled until the disconnection: every value exactly once,
/// then `Disconnected`, with the sender's writes before its drop visible.
#[test]
fn try_recv_drains_then_sees_the_disconnect_and_its_writes() {
    loom::model(|| {
        let (tx, rx) = bounded(1);
        let data = Arc::new(AtomicU32::new(0));
        let data2 = data.clone();
        let producer = thread::spawn(move || {
            let kept = tx.try_send(1).err().map(TrySendError::into_inner);
            // Relaxed: see above.
            data2.store(1, Ordering::Relaxed);
            kept
        });
        let mut got = Vec::new();
        loop {
            match rx.try_recv() {
                Ok(v) => got.push(v),
                Err(TryRecvError::Empty) => thread::yield_now(),
                Err(TryRecvError::Disconnected) => break,
            }
        }
        // Relaxed: see above.
        assert_eq!(data.load(Ordering::Relaxed), 1);
        assert_eq!(producer.join().unwrap(), None); // the slot was free
        assert_eq!(got, [1]);
    });
}
