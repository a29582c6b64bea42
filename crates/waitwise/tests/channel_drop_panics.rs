//! Dropping a channel whose values' destructors panic: the first panic
//! propagates out of the drop of the last receiver, once, and the values
//! still in the channel are leaked, as crossbeam-channel's array flavor
//! does. Dropping them while that panic unwinds would abort the process
//! (a second panic during unwinding), so this file runs alone: an abort
//! ends this test binary, not the others.
#![cfg(not(loom))]

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use waitwise::channel;

/// A value whose destructor counts its run, then panics.
struct PanicsOnDrop(Arc<AtomicUsize>);

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        // Relaxed: read after the catch on the same thread.
        self.0.fetch_add(1, Ordering::Relaxed);
        panic!("PanicsOnDrop");
    }
}

/// A channel of capacity 4 holding three `PanicsOnDrop` values.
fn three_panicking_values() -> (
    channel::Sender<PanicsOnDrop>,
    channel::Receiver<PanicsOnDrop>,
    Arc<AtomicUsize>,
) {
    let drops = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = channel::bounded(4);
    for _ in 0..3 {
        assert!(tx.try_send(PanicsOnDrop(drops.clone())).is_ok());
    }
    (tx, rx, drops)
}

/// Runs `f`, which must panic once with `PanicsOnDrop`'s message.
fn panics_once(f: impl FnOnce()) {
    let caught = panic::catch_unwind(AssertUnwindSafe(f));
    let payload = caught.expect_err("a destructor panicked: the drop must too");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"PanicsOnDrop"));
}

#[test]
fn dropping_the_last_receiver_leaks_the_rest_like_crossbeam_array_drop() {
    let (tx, rx, drops) = three_panicking_values();
    drop(tx);
    panics_once(|| drop(rx));
    // The first destructor ran and panicked; the other two values leaked.
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}

#[test]
fn dropping_the_receiver_before_the_sender_panics_once_and_the_sender_drops_quietly() {
    let (tx, rx, drops) = three_panicking_values();
    panics_once(|| drop(rx));
    assert!(tx.is_disconnected());
    drop(tx); // frees the ring: nothing left in it to drop
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}

#[test]
fn dropping_an_into_iter_over_panicking_values_panics_once() {
    let (tx, rx, drops) = three_panicking_values();
    drop(tx);
    let iter = rx.into_iter();
    panics_once(|| drop(iter));
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}

#[test]
fn a_panicking_value_received_and_dropped_leaves_the_channel_usable() {
    let (tx, rx, drops) = three_panicking_values();
    panics_once(|| drop(rx.recv().unwrap()));
    assert_eq!(rx.len(), 2);
    let [a, b] = [rx.recv().unwrap(), rx.recv().unwrap()];
    std::mem::forget((a, b));
    drop((tx, rx));
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}
