//! Stress test of `Select` (`channel/select.rs`, `channel/selectors.rs`):
//! 3 channels of capacity 1 and 4, producers sending on them and
//! selectors (and one plain receiver) taking from all of them at once, at
//! 2 + 2, 3 + 3 and 4 + 4 threads (more than this machine's CPUs), with
//! the default policy and one that always sleeps; and producers that
//! select where to send among full channels. Checked: every value is
//! received exactly once, disconnection ends every selector, no lost
//! wake-up (every case finishes). Validation only.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, Ordering};
use waitwise::channel::{bounded_with_options, Receiver, Select};
use waitwise::{Policy, WaitOptions};

/// Values per producer.
const PER_PRODUCER: u64 = 5_000;

fn case(producers: u64, consumers: usize, cap: usize, options: fn() -> WaitOptions) {
    let chans: Vec<_> = (0..3)
        .map(|_| bounded_with_options::<u64>(cap, options()).unwrap())
        .collect();
    let rxs: Vec<Receiver<u64>> = chans.iter().map(|(_, rx)| rx.clone()).collect();
    let (sum, count) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for p in 0..producers {
            let tx = chans[(p % 3) as usize].0.clone();
            s.spawn(move || {
                for i in 0..PER_PRODUCER {
                    tx.send(p * PER_PRODUCER + i).unwrap();
                }
            });
        }
        for c in 0..consumers {
            let (rxs, sum, count) = (&rxs, &sum, &count);
            s.spawn(move || {
                if c == 0 {
                    // One plain receiver on the first channel, beside the
                    // selectors.
                    for v in rxs[0].iter() {
                        sum.fetch_add(v, Ordering::Relaxed);
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    return;
                }
                let mut open = [true; 3];
                while open.iter().any(|&o| o) {
                    let mut sel = Select::new();
                    let mut ops = [usize::MAX; 3];
                    for (k, rx) in rxs.iter().enumerate() {
                        if open[k] {
                            ops[k] = sel.recv(rx);
                        }
                    }
                    let op = sel.select();
                    let k = ops.iter().position(|&o| o == op.index()).unwrap();
                    match op.recv(&rxs[k]) {
                        Ok(v) => {
                            sum.fetch_add(v, Ordering::Relaxed);
                            count.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => open[k] = false,
                    }
                }
            });
        }
        drop(chans);
    });
    let n = producers * PER_PRODUCER;
    assert_eq!(count.load(Ordering::Relaxed), n);
    assert_eq!(sum.load(Ordering::Relaxed), n * (n - 1) / 2);
}

#[test]
fn selectors_and_a_receiver_take_every_value_once() {
    for (threads, cap) in [(2, 1), (3, 4), (4, 1)] {
        case(threads, threads as usize, cap, WaitOptions::new);
    }
}

#[test]
fn selectors_take_every_value_once_when_waiters_sleep() {
    for (threads, cap) in [(2, 1), (3, 4), (4, 1)] {
        case(threads, threads as usize, cap, || {
            WaitOptions::new().policy(Policy::always_block())
        });
    }
}

/// Producers select among 3 channels of one slot each to send; plain
/// receivers drain them.
fn selecting_senders(threads: u64, options: fn() -> WaitOptions) {
    let chans: Vec<_> = (0..3)
        .map(|_| bounded_with_options::<u64>(1, options()).unwrap())
        .collect();
    let (sum, count) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for p in 0..threads {
            let txs: Vec<_> = chans.iter().map(|(tx, _)| tx.clone()).collect();
            s.spawn(move || {
                for i in 0..PER_PRODUCER {
                    let mut sel = Select::new();
                    let ops: Vec<usize> = txs.iter().map(|tx| sel.send(tx)).collect();
                    let op = sel.select();
                    let k = ops.iter().position(|&o| o == op.index()).unwrap();
                    op.send(&txs[k], p * PER_PRODUCER + i).unwrap();
                }
            });
        }
        for (_, rx) in &chans {
            let rx = rx.clone();
            let (sum, count) = (&sum, &count);
            s.spawn(move || {
                for v in rx.iter() {
                    sum.fetch_add(v, Ordering::Relaxed);
                    count.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        drop(chans);
    });
    let n = threads * PER_PRODUCER;
    assert_eq!(count.load(Ordering::Relaxed), n);
    assert_eq!(sum.load(Ordering::Relaxed), n * (n - 1) / 2);
}

#[test]
fn selecting_senders_deliver_every_value_once() {
    for threads in [2, 3, 5] {
        selecting_senders(threads, WaitOptions::new);
        selecting_senders(threads, || {
            WaitOptions::new().policy(Policy::always_block())
        });
    }
}
