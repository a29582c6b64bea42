//! Stress tests for `channel::bounded`: every value is delivered exactly
//! once, in send order per producer, for SPSC and MPMC, blocking, `try_`
//! and timed operations; disconnection drains; nothing leaks. Validation
//! only; timing is for `examples/channel_bench.rs`.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use waitwise::channel::{
    self, Receiver, RecvTimeoutError, SendTimeoutError, Sender, TryRecvError, TrySendError,
};
use waitwise::WaitOptions;

mod common;

/// How the producers and consumers call the channel.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// `send` / `recv`.
    Blocking,
    /// `try_send` / `try_recv` in a yield loop.
    Try,
    /// `send_timeout` / `recv_timeout` with short timeouts, retried.
    Timed,
}

fn send(tx: &Sender<(u32, u32)>, mut v: (u32, u32), mode: Mode) {
    match mode {
        Mode::Blocking => tx.send(v).unwrap(),
        Mode::Try => loop {
            match tx.try_send(v) {
                Ok(()) => return,
                Err(TrySendError::Full(back)) => v = back,
                Err(TrySendError::Disconnected(_)) => panic!("receivers gone"),
            }
            std::thread::yield_now();
        },
        Mode::Timed => loop {
            match tx.send_timeout(v, Duration::from_micros(20)) {
                Ok(()) => return,
                Err(SendTimeoutError::Timeout(back)) => v = back,
                Err(SendTimeoutError::Disconnected(_)) => panic!("receivers gone"),
            }
        },
    }
}

/// `None` once the channel is drained and disconnected.
fn recv(rx: &Receiver<(u32, u32)>, mode: Mode) -> Option<(u32, u32)> {
    match mode {
        Mode::Blocking => rx.recv().ok(),
        Mode::Try => loop {
            match rx.try_recv() {
                Ok(v) => return Some(v),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => std::thread::yield_now(),
            }
        },
        Mode::Timed => loop {
            match rx.recv_timeout(Duration::from_micros(20)) {
                Ok(v) => return Some(v),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) => {}
            }
        },
    }
}

/// `producers` send `total / producers` values `(producer, seq)` each;
/// `consumers` receive until disconnected. Checks: each value received
/// exactly once; each consumer sees each producer's values in send order
/// (so with one consumer, in send order overall).
fn run(
    producers: usize,
    consumers: usize,
    cap: usize,
    total: usize,
    mode: Mode,
    options: WaitOptions,
) {
    let per_producer = (total / producers) as u32;
    let (tx, rx) = channel::bounded_with_options(cap, options).unwrap();
    let senders: Vec<_> = (0..producers as u32)
        .map(|p| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for seq in 0..per_producer {
                    send(&tx, (p, seq), mode);
                }
            })
        })
        .collect();
    drop(tx);
    let receivers: Vec<_> = (0..consumers)
        .map(|_| {
            let rx = rx.clone();
            std::thread::spawn(move || {
                let mut last = vec![None::<u32>; producers];
                let mut got = Vec::new();
                while let Some((p, seq)) = recv(&rx, mode) {
                    let prev = last[p as usize].replace(seq);
                    assert!(
                        prev.is_none_or(|prev| prev < seq),
                        "producer {p}: {prev:?} then {seq}"
                    );
                    got.push((p, seq));
                }
                got
            })
        })
        .collect();
    drop(rx);
    for s in senders {
        s.join().unwrap();
    }
    let mut seen = vec![vec![false; per_producer as usize]; producers];
    let mut count = 0;
    for r in receivers {
        for (p, seq) in r.join().unwrap() {
            let slot = &mut seen[p as usize][seq as usize];
            assert!(!*slot, "({p}, {seq}) delivered twice");
            *slot = true;
            count += 1;
        }
    }
    assert_eq!(count, producers * per_producer as usize, "values lost");
}

/// (producers, consumers, capacity): 2, 3, 4 and 8 threads on 2 CPUs.
const TABLE: [(usize, usize, usize); 10] = [
    (1, 1, 1),
    (1, 1, 64),
    (1, 1, 1024),
    (2, 1, 4),
    (1, 2, 4),
    (2, 2, 1),
    (2, 2, 64),
    (3, 1, 16),
    (4, 4, 8),
    (2, 6, 1024),
];

#[test]
fn exactly_once_blocking() {
    for (p, c, cap) in TABLE {
        run(p, c, cap, 200_000, Mode::Blocking, WaitOptions::new());
    }
}

#[test]
fn exactly_once_try() {
    for (p, c, cap) in TABLE {
        run(p, c, cap, 100_000, Mode::Try, WaitOptions::new());
    }
}

#[test]
fn exactly_once_timed() {
    for (p, c, cap) in TABLE {
        run(p, c, cap, 100_000, Mode::Timed, WaitOptions::new());
    }
}

#[test]
fn exactly_once_per_policy() {
    // Blocking waits cost tens of µs on a VM: fewer values
    // than `exactly_once_blocking`.
    let total = 100_000;
    for policy in common::stress_policies() {
        for (p, c, cap) in [(1, 1, 1), (2, 2, 4), (4, 4, 64)] {
            run(
                p,
                c,
                cap,
                total,
                Mode::Blocking,
                WaitOptions::new().policy(policy),
            );
        }
    }
}

/// Counts drops of the values it makes.
struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A producer and a consumer pinned to one CPU (where the process may
/// pin): each side's waits find the other on its own CPU and yield instead
/// of spinning (module `channel::waiting_cpus`); every value still arrives
/// once, in order, through a one-slot and a 16-slot channel, also with
/// several producers on that CPU.
#[test]
fn a_producer_and_consumer_on_one_cpu_deliver_every_value_in_order() {
    let cpu = waitwise::platform::affinity::current_cpu().unwrap_or(0);
    let pin = move || {
        let _ = waitwise::platform::affinity::pin_current_thread(cpu);
    };
    for (cap, producers) in [(1, 1), (16, 1), (16, 3)] {
        let (tx, rx) = channel::bounded::<(u32, u32)>(cap);
        let per_producer = 20_000u32;
        std::thread::scope(|s| {
            for p in 0..producers {
                let tx = tx.clone();
                s.spawn(move || {
                    pin();
                    for i in 0..per_producer {
                        tx.send((p, i)).unwrap();
                    }
                });
            }
            drop(tx);
            s.spawn(move || {
                pin();
                let mut next = vec![0u32; producers as usize];
                while let Ok((p, i)) = rx.recv() {
                    assert_eq!(i, next[p as usize], "producer {p}'s values out of order");
                    next[p as usize] += 1;
                }
                assert!(next.iter().all(|&n| n == per_producer), "{next:?}");
            });
        });
    }
}

#[test]
fn disconnect_mid_stream_leaks_nothing() {
    for threads in [2, 3, 4, 8] {
        let made = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = channel::bounded::<Counted>(16);
        let producers = threads / 2;
        let senders: Vec<_> = (0..producers)
            .map(|_| {
                let (tx, made, dropped) = (tx.clone(), made.clone(), dropped.clone());
                std::thread::spawn(move || loop {
                    made.fetch_add(1, Ordering::SeqCst);
                    if tx.send(Counted(dropped.clone())).is_err() {
                        return; // the value came back in the error and was dropped
                    }
                })
            })
            .collect();
        drop(tx);
        let receivers: Vec<_> = (0..threads - producers)
            .map(|_| {
                let rx = rx.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        drop(rx.recv().unwrap());
                    }
                })
            })
            .collect();
        drop(rx);
        for r in receivers {
            r.join().unwrap();
        }
        for s in senders {
            s.join().unwrap();
        }
        assert_eq!(dropped.load(Ordering::SeqCst), made.load(Ordering::SeqCst));
    }
}

#[test]
fn timeouts_report_and_respect_their_bounds() {
    for policy in common::timeout_policies() {
        let (tx, rx) =
            channel::bounded_with_options::<u8>(1, WaitOptions::new().policy(policy)).unwrap();
        common::assert_timeouts_bounded(format!("{policy}: recv"), |timeout| {
            assert_eq!(rx.recv_timeout(timeout), Err(RecvTimeoutError::Timeout));
        });
        tx.send(1).unwrap();
        common::assert_timeouts_bounded(format!("{policy}: send"), |timeout| {
            assert_eq!(
                tx.send_timeout(2, timeout),
                Err(SendTimeoutError::Timeout(2))
            );
        });
    }
}
