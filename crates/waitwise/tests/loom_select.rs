//! Loom models of `Select` (`channel/select.rs`, `channel/selectors.rs`),
//! receives and sends: a selector registers its word with each channel's
//! `tail` index (`head` for a send),
//! reads the word, announces itself, tries again and sleeps; a send or a
//! disconnection after the announcement signals the word. Checked in
//! every interleaving: the selector wakes and receives (a lost wake-up is
//! a deadlock loom reports), and every value is received exactly once.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_select`
//! (seconds on 2 cores).
#![cfg(loom)]

use loom::thread;
use waitwise::channel::{self, Receiver, Select, Sender};
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

/// Selects once over `a` and `b`; returns (index, value).
fn select_one(a: &Receiver<u32>, b: &Receiver<u32>) -> (usize, Option<u32>) {
    let mut sel = Select::new();
    let ia = sel.recv(a);
    let ib = sel.recv(b);
    let op = sel.select();
    let i = op.index();
    let v = if i == ia {
        op.recv(a).ok()
    } else {
        assert_eq!(i, ib);
        op.recv(b).ok()
    };
    (i, v)
}

/// A send on the second channel while the selector goes to sleep over
/// both: the selector receives it.
#[test]
fn a_send_while_the_selector_sleeps_wakes_it() {
    loom::model(|| {
        let (_tx1, rx1) = bounded::<u32>(1);
        let (tx2, rx2) = bounded::<u32>(1);
        let sender = thread::spawn(move || tx2.send(7).unwrap());
        assert_eq!(select_one(&rx1, &rx2), (1, Some(7)));
        sender.join().unwrap();
    });
}

/// The last sender of one channel goes away while the selector waits:
/// the selector wakes and reports the disconnection.
#[test]
fn a_disconnection_while_the_selector_sleeps_wakes_it() {
    loom::model(|| {
        let (tx1, rx1) = bounded::<u32>(1);
        let (_tx2, rx2) = bounded::<u32>(1);
        let dropper = thread::spawn(move || drop(tx1));
        assert_eq!(select_one(&rx1, &rx2), (0, None));
        dropper.join().unwrap();
    });
}

/// Sends on both channels race the selection and a plain receive on the
/// first channel: the two values are received once each, by one of the
/// two receivers each.
#[test]
fn a_selector_and_a_receiver_share_two_values() {
    loom::model(|| {
        let (tx1, rx1) = bounded::<u32>(1);
        let (tx2, rx2) = bounded::<u32>(1);
        let rx1b = rx1.clone();
        let sender = thread::spawn(move || {
            tx1.send(1).unwrap();
            tx2.send(2).unwrap();
        });
        let (_, v) = select_one(&rx1, &rx2);
        let v = v.expect("a value, not a disconnection");
        // The other value: from whichever channel still holds it.
        let w = if v == 1 {
            rx2.recv().unwrap()
        } else {
            rx1b.recv().unwrap()
        };
        assert_eq!(v + w, 3);
        sender.join().unwrap();
    });
}

/// A receive makes room in a full channel while a selector waits to send
/// on it: the selector wakes (the `head` index's notify signals it) and
/// sends.
#[test]
fn a_receive_while_the_selecting_sender_sleeps_wakes_it() {
    loom::model(|| {
        let (tx, rx) = bounded::<u32>(1);
        tx.send(1).unwrap();
        let receiver = thread::spawn(move || {
            assert_eq!(rx.recv(), Ok(1));
            rx.recv()
        });
        let mut sel = Select::new();
        let i = sel.send(&tx);
        let op = sel.select();
        assert_eq!(op.index(), i);
        op.send(&tx, 2).unwrap();
        assert_eq!(receiver.join().unwrap(), Ok(2));
    });
}
