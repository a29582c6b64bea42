//! Loom models of `channel::bounded`: values arrive once and in order,
//! blocked senders and receivers are woken by the other side and by
//! disconnection. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p waitwise --release --test loom_channel`
//! (several seconds on 2 cores).
#![cfg(loom)]

use loom::thread;
use waitwise::channel::{self, Receiver, RecvError, SendError, Sender};
use waitwise::{Policy, WaitOptions};

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
