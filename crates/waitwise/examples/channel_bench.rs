//! Channel throughput: `waitwise::channel::bounded` against
//! `crossbeam_channel::bounded` with the same capacity, SPSC (one producer
//! thread, one consumer thread) for capacities 1, 64 and 1024, plus an MPMC
//! row for reference.
//!
//! Run: `cargo run --release -p waitwise --example channel_bench [messages]`
//!
//! Each cell is the median of `REPEATS` runs, alternating the two channels
//! so both see the same machine state; the ratio is waitwise / crossbeam
//! (above 1: waitwise is faster).

use std::time::{Duration, Instant};

/// Runs per cell; the median is reported. Guessed: enough to shrug off one
/// descheduled run on a 2-CPU guest.
const REPEATS: usize = 7;

/// The two channels under one interface.
trait Channel {
    const NAME: &'static str;
    type Tx: Send + Clone + 'static;
    type Rx: Send + Clone + 'static;
    fn bounded(cap: usize) -> (Self::Tx, Self::Rx);
    fn send(tx: &Self::Tx, v: u64);
    fn recv(rx: &Self::Rx) -> Option<u64>;
}

/// The waitwise channel's settings: the default policy, or the one named
/// by `CHANNEL_BENCH_POLICY` (e.g. `Ss/b/0.54`, `/b/0`).
fn options() -> waitwise::WaitOptions {
    let opts = waitwise::WaitOptions::new().profile(false);
    match std::env::var("CHANNEL_BENCH_POLICY") {
        Ok(name) if !name.is_empty() => opts.policy(
            name.parse()
                .expect("CHANNEL_BENCH_POLICY: not a policy name"),
        ),
        _ => opts,
    }
}

struct Waitwise;
impl Channel for Waitwise {
    const NAME: &'static str = "waitwise";
    type Tx = waitwise::channel::Sender<u64>;
    type Rx = waitwise::channel::Receiver<u64>;
    fn bounded(cap: usize) -> (Self::Tx, Self::Rx) {
        waitwise::channel::bounded_with_options(cap, options()).unwrap()
    }
    #[inline]
    fn send(tx: &Self::Tx, v: u64) {
        tx.send(v).unwrap();
    }
    #[inline]
    fn recv(rx: &Self::Rx) -> Option<u64> {
        rx.recv().ok()
    }
}

struct Crossbeam;
impl Channel for Crossbeam {
    const NAME: &'static str = "crossbeam";
    type Tx = crossbeam_channel::Sender<u64>;
    type Rx = crossbeam_channel::Receiver<u64>;
    fn bounded(cap: usize) -> (Self::Tx, Self::Rx) {
        crossbeam_channel::bounded(cap)
    }
    #[inline]
    fn send(tx: &Self::Tx, v: u64) {
        tx.send(v).unwrap();
    }
    #[inline]
    fn recv(rx: &Self::Rx) -> Option<u64> {
        rx.recv().ok()
    }
}

/// Moves `messages` values through a channel of `cap` slots with
/// `producers` and `consumers` threads; returns the elapsed time.
fn run<C: Channel>(cap: usize, producers: usize, consumers: usize, messages: u64) -> Duration {
    let (tx, rx) = C::bounded(cap);
    let per = messages / producers as u64;
    let start = Instant::now();
    let ps: Vec<_> = (0..producers)
        .map(|_| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in 0..per {
                    C::send(&tx, i);
                }
            })
        })
        .collect();
    drop(tx);
    let cs: Vec<_> = (0..consumers)
        .map(|_| {
            let rx = rx.clone();
            std::thread::spawn(move || {
                let (mut n, mut sum) = (0u64, 0u64);
                while let Some(v) = C::recv(&rx) {
                    n += 1;
                    sum = sum.wrapping_add(v);
                }
                (n, sum)
            })
        })
        .collect();
    drop(rx);
    for p in ps {
        p.join().unwrap();
    }
    let (mut n, mut sum) = (0, 0u64);
    for c in cs {
        let (cn, cs) = c.join().unwrap();
        n += cn;
        sum = sum.wrapping_add(cs);
    }
    let elapsed = start.elapsed();
    assert_eq!(n, per * producers as u64, "{}: lost values", C::NAME);
    assert_eq!(
        sum,
        producers as u64 * (per * (per - 1) / 2),
        "{}: wrong values",
        C::NAME
    );
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    // Measure B before any benchmark thread runs, over several spaced
    // calibrations as the `waitwise` tool does (see `policy::block_cost`).
    let _ =
        waitwise::policy::block_cost::settle_block_cost(8, std::time::Duration::from_millis(10));
    let messages: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let cost = waitwise::policy::block_cost();
    let policy = options().resolve_policy(waitwise::SyncKind::ProducerConsumer);
    println!(
        "{messages} u64 messages per run, median of {REPEATS} runs; waitwise policy {policy}, B = {:.0} ns ({:?})",
        cost.ns, cost.source
    );
    println!("| case | cap | waitwise Mmsg/s | crossbeam Mmsg/s | ratio |");
    println!("|---|---:|---:|---:|---:|");
    let cases: [(&str, usize, usize, usize); 5] = [
        ("SPSC", 1, 1, 1),
        ("SPSC", 64, 1, 1),
        ("SPSC", 1024, 1, 1),
        ("MPMC 2x2", 64, 2, 2),
        ("MPMC 4x4", 64, 4, 4),
    ];
    // Optional second argument: only the cases with this capacity.
    let only_cap: Option<usize> = std::env::args().nth(2).and_then(|s| s.parse().ok());
    let cases: Vec<_> = cases
        .into_iter()
        .filter(|c| only_cap.is_none_or(|cap| c.1 == cap))
        .collect();
    for &(name, cap, producers, consumers) in &cases {
        // Warm-up (thread creation, page faults, B measurement).
        run::<Waitwise>(cap, producers, consumers, messages / 10);
        run::<Crossbeam>(cap, producers, consumers, messages / 10);
        let (mut ww, mut cb) = (Vec::new(), Vec::new());
        for _ in 0..REPEATS {
            ww.push(run::<Waitwise>(cap, producers, consumers, messages));
            cb.push(run::<Crossbeam>(cap, producers, consumers, messages));
        }
        let rate = |d: Duration| messages as f64 / d.as_secs_f64() / 1e6;
        let (w, c) = (rate(median(ww)), rate(median(cb)));
        println!("| {name} | {cap} | {w:.2} | {c:.2} | {:.2} |", w / c);
    }
    if std::env::var_os("CHANNEL_BENCH_PROFILE").is_some() {
        for &(name, cap, producers, consumers) in &cases {
            let opts = options().profile(true);
            let (tx, rx) = waitwise::channel::bounded_with_options::<u64>(cap, opts).unwrap();
            let per = messages / producers as u64;
            std::thread::scope(|s| {
                for _ in 0..producers {
                    let tx = tx.clone();
                    s.spawn(move || (0..per).for_each(|i| tx.send(i).unwrap()));
                }
                drop(tx);
                for _ in 0..consumers {
                    let rx = rx.clone();
                    s.spawn(move || while rx.recv().is_ok() {});
                }
            });
            let p = rx.wait_profile().unwrap();
            println!(
                "profile {name} cap {cap}: {} waits, {} blocked, per message {:.3} / {:.3}",
                p.total_waits,
                p.blocks,
                p.total_waits as f64 / messages as f64,
                p.blocks as f64 / messages as f64
            );
        }
    }
}
