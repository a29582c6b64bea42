//! Crowded waits: a condition variable's and an event's default waits,
//! which poll by `yield` once the wait's threads outnumber the CPUs
//! (`waitwise::policy::crowding`), against the same policy given
//! explicitly, which polls with PAUSE whatever the crowd.
//!
//! ```text
//! cargo run -p waitwise --release --example crowded_waits [-- --threads 8 --runs 5]
//! ```
//!
//! - *condvar turns*: `--threads` threads take 2000 turns each, in order,
//!   through a `waitwise::Mutex` and a `Condvar` (a thread waits until it
//!   is its turn, counts it and calls `notify_all`); seconds.
//! - *event queue*: one producer pushes 200,000 items onto a queue and
//!   calls `Event::notify` after each; `--threads` workers wait on the
//!   event and drain the queue; seconds.
//!
//! Medians of `--runs` interleaved runs (less is better), and the median
//! of the per-run ratios explicit / default. On a machine with more CPUs
//! than `--threads + 1`, both run the same policy (nothing is crowded).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use waitwise::condvar::Condvar;
use waitwise::{Event, Policy, WaitOptions};

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

const TURNS: usize = 2000;
const ITEMS: u64 = 200_000;

/// Seconds for `threads` threads to take [`TURNS`] turns each.
fn condvar_turns(cv: Condvar, threads: usize) -> f64 {
    let shared = Arc::new((waitwise::Mutex::new(0u64), cv));
    let t = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|id| {
            let shared = shared.clone();
            std::thread::spawn(move || {
                for _ in 0..TURNS {
                    let mut turn = shared.0.lock();
                    while *turn as usize % threads != id {
                        shared.1.wait(&mut turn);
                    }
                    *turn += 1;
                    shared.1.notify_all();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("turn taker");
    }
    assert_eq!(*shared.0.lock(), (threads * TURNS) as u64);
    t.elapsed().as_secs_f64()
}

/// The event queue's shared state.
struct Queue {
    items: parking_lot::Mutex<VecDeque<u64>>,
    event: Event,
    done: AtomicBool,
    sum: AtomicU64,
}

/// Seconds for `workers` workers to drain [`ITEMS`] items.
fn event_queue(event: Event, workers: usize) -> f64 {
    let q = Arc::new(Queue {
        items: parking_lot::Mutex::new(VecDeque::new()),
        event,
        done: AtomicBool::new(false),
        sum: AtomicU64::new(0),
    });
    let t = Instant::now();
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let q = q.clone();
            std::thread::spawn(move || loop {
                q.event.wait();
                while let Some(v) = q.items.lock().pop_front() {
                    // Relaxed: a total read after the joins.
                    q.sum.fetch_add(v, Ordering::Relaxed);
                }
                // Acquire: pairs with the producer's Release store, after
                // its last push.
                if q.done.load(Ordering::Acquire) && q.items.lock().is_empty() {
                    // Pass the end on to the next worker.
                    q.event.notify_all();
                    return;
                }
            })
        })
        .collect();
    for i in 0..ITEMS {
        q.items.lock().push_back(i);
        q.event.notify();
    }
    // Release: the pushes happen before a worker that sees `done`.
    q.done.store(true, Ordering::Release);
    q.event.notify_all();
    for h in handles {
        h.join().expect("worker");
    }
    // Relaxed: every worker was joined.
    assert_eq!(q.sum.load(Ordering::Relaxed), ITEMS * (ITEMS - 1) / 2);
    t.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = arg(&args, "--threads").unwrap_or(8);
    let runs: usize = arg::<usize>(&args, "--runs").unwrap_or(5).max(1);
    let cpus = waitwise::policy::crowding::allowed_cpus();
    let default = Policy::default_for(waitwise::SyncKind::ProducerConsumer);
    println!(
        "{threads} threads on {cpus} CPUs; default policy {} (yield-polling once the waiters and a notifier outnumber the CPUs) against {} given explicitly (PAUSE-polling); seconds, medians of {runs} interleaved runs",
        default.name(),
        default.name()
    );
    println!();
    println!("| workload | default | explicit | explicit / default (median of runs) |");
    println!("|---|---:|---:|---:|");
    let explicit = WaitOptions::new().policy(default);
    for workload in ["condvar turns", "event queue"] {
        let (mut d, mut e, mut r) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let (a, b) = if workload == "condvar turns" {
                (
                    condvar_turns(Condvar::new(), threads),
                    condvar_turns(Condvar::with_options(explicit), threads),
                )
            } else {
                (
                    event_queue(Event::new(), threads),
                    event_queue(Event::with_options(explicit), threads),
                )
            };
            d.push(a);
            e.push(b);
            r.push(b / a);
        }
        println!(
            "| {workload} | {:.3} s | {:.3} s | {:.2}x |",
            median(d),
            median(e),
            median(r)
        );
    }
}
