//! Pool benchmark: `waitwise::pool::ThreadPool` against rayon and against
//! spawning scoped threads.
//!
//! ```text
//! cargo run -p waitwise --release --example pool_bench [-- --samples 2000 --tasks 200000 --idle-ms 1000 --quantile 0.5 --workers N --no-pin --only latency|throughput|idle]
//! ```
//!
//! - *latency of a tiny task*, one way, submit to the task's first
//!   instruction, on the cycle clock (median of `--samples`, or the
//!   `--quantile` asked for): to an idle
//!   worker that polls (pool policy `s//inf`) against a spin hand-off (a
//!   thread polling a word with PAUSE, the fastest a store can travel),
//!   both sent 2 µs after the previous sample ended, and
//!   to a parked worker (pool policy `/b/0`, idle 200 µs so it sleeps)
//!   against a futex hand-off (a thread asleep on a `WaitWord`, woken by a
//!   store and `futex_wake`); rayon's and a scoped thread's for scale. The
//!   submitter runs on the highest allowed CPU, the receiving worker on the
//!   lowest; each figure and its baseline are measured in alternating
//!   rounds;
//! - *throughput of short tasks*: `--tasks` tasks of ~0 and ~1 µs spawned in
//!   a scope, and a `join` tree with as many leaves, on one worker per
//!   allowed CPU; rayon's in paired rounds (the median of 9 rounds of one
//!   run each, and of the rounds' ratios) and scoped threads' (one thread
//!   per task, a hundredth of the tasks, best of 3) in the same run;
//! - *CPU burned while idle*: the process's user + system time
//!   (`getrusage`) over `--idle-ms` while an idle pool (default policy)
//!   waits, in % of one CPU.
//!
//! Ratios are against the baselines measured in the same run (`< 1` is
//! better for latency, `> 1` for throughput). The machine should be quiet:
//! on a loaded one every figure is noisy.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use waitwise::pool::ThreadPool;
use waitwise::{Deadline, Policy, WaitWord};
use waitwise_platform::affinity::{allowed_cpus, pin_current_thread, set_current_thread_affinity};
use waitwise_platform::clock::cycle_clock;

struct Args {
    samples: usize,
    tasks: usize,
    idle_ms: u64,
    workers: Option<usize>,
    pin: bool,
    only: Option<String>,
}

fn parse_args() -> Args {
    let mut a = Args {
        samples: 2000,
        tasks: 200_000,
        idle_ms: 1000,
        workers: None,
        pin: true,
        only: None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let val = |i: usize| -> u64 {
            argv.get(i + 1)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{} needs a whole number", argv[i]))
        };
        match argv[i].as_str() {
            "--samples" => a.samples = val(i) as usize,
            "--tasks" => a.tasks = val(i) as usize,
            "--idle-ms" => a.idle_ms = val(i),
            "--workers" => a.workers = Some((val(i) as usize).max(1)),
            "--no-pin" => {
                a.pin = false;
                i += 1;
                continue;
            }
            "--only" => {
                let v = argv.get(i + 1).cloned().unwrap_or_default();
                assert!(
                    ["latency", "throughput", "idle"].contains(&v.as_str()),
                    "--only takes latency, throughput or idle"
                );
                a.only = Some(v);
            }
            "--quantile" => {
                let q: f64 = argv
                    .get(i + 1)
                    .and_then(|v| v.parse().ok())
                    .filter(|q| (0.0..=1.0).contains(q))
                    .unwrap_or_else(|| panic!("--quantile needs a number in [0, 1]"));
                QUANTILE.set(q).expect("--quantile given once");
            }
            other => panic!(
                "unknown option {other} (known: --samples N --tasks N --idle-ms MS --quantile Q --workers N --no-pin --only SECTION)"
            ),
        }
        i += 2;
    }
    a
}

fn now() -> u64 {
    cycle_clock().now()
}

fn ns(ticks: u64) -> f64 {
    cycle_clock().ticks_to_ns(ticks)
}

/// The latency statistic: the median, or the `--quantile` asked for (a low
/// one, such as 0.1, shows the uncontended path on a busy machine).
static QUANTILE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    let q = *QUANTILE.get_or_init(|| 0.5);
    if q != 0.5 {
        return v[((n - 1) as f64 * q).round() as usize];
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The CPUs this process may use, read once before `main` pins itself.
fn allowed() -> &'static [usize] {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ALLOWED.get_or_init(|| allowed_cpus().unwrap_or_default())
}

/// The receiving CPU (lowest allowed) and the submitting one (highest).
fn cpus() -> (usize, usize) {
    let a = allowed();
    (
        a.first().copied().unwrap_or(0),
        a.last().copied().unwrap_or(0),
    )
}

/// Runs `f` with the calling thread pinned to the submitting CPU, then
/// gives it back every allowed CPU (threads and pools are started outside,
/// so that they do not inherit the pin).
fn on_submit_cpu<R>(f: impl FnOnce() -> R) -> R {
    let _ = pin_current_thread(cpus().1);
    let r = f();
    let _ = set_current_thread_affinity(allowed());
    r
}

/// One-way latency of a store to a thread polling with PAUSE.
fn spin_handoff(samples: usize) -> Vec<f64> {
    let (rx, _) = cpus();
    let word = Arc::new(AtomicU64::new(0));
    let w = word.clone();
    let receiver = std::thread::spawn(move || {
        let _ = pin_current_thread(rx);
        let mut lat = Vec::with_capacity(samples);
        for _ in 0..samples {
            let t0 = loop {
                let v = w.load(Ordering::Acquire);
                if v != 0 {
                    break v;
                }
                std::hint::spin_loop();
            };
            lat.push(ns(now().saturating_sub(t0)));
            w.store(0, Ordering::Release);
        }
        lat
    });
    on_submit_cpu(|| {
        for _ in 0..samples {
            while word.load(Ordering::Acquire) != 0 {
                std::hint::spin_loop();
            }
            spin_for(SPIN_GAP);
            word.store(now(), Ordering::Release);
        }
    });
    receiver.join().unwrap()
}

/// One-way latency of a store + futex wake to a thread asleep on a
/// `WaitWord`.
fn futex_handoff(samples: usize) -> Vec<f64> {
    let (rx, _) = cpus();
    let word = Arc::new(WaitWord::new(0));
    let stamp = Arc::new(AtomicU64::new(0));
    let ack = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let (w, s, a) = (word.clone(), stamp.clone(), ack.clone());
    let receiver = std::thread::spawn(move || {
        let _ = pin_current_thread(rx);
        let mut lat = Vec::with_capacity(samples);
        for k in 1..=samples as u32 {
            w.wait_until(&Policy::always_block(), Deadline::NEVER, |v| v == k);
            lat.push(ns(now().saturating_sub(s.load(Ordering::Acquire))));
            a.store(k, Ordering::Release);
        }
        lat
    });
    on_submit_cpu(|| {
        for k in 1..=samples as u32 {
            // The previous sample recorded, and the receiver asleep again.
            while ack.load(Ordering::Acquire) != k - 1 || !word.has_sleepers() {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_micros(200));
            stamp.store(now(), Ordering::Release);
            word.value().store(k, Ordering::SeqCst);
            word.wake_one();
        }
    });
    receiver.join().unwrap()
}

/// One-way latency of a tiny task to the single worker of a pool waiting
/// with `policy`, after `settle` of idleness.
fn pool_latency(samples: usize, policy: Policy, settle: Duration) -> Vec<f64> {
    let pool = ThreadPool::builder()
        .workers(1)
        .policy(policy)
        .build()
        .unwrap();
    let mut lat = Vec::with_capacity(samples);
    on_submit_cpu(|| {
        for _ in 0..samples {
            while !pool.all_idle() {
                std::hint::spin_loop();
            }
            settle_for(settle);
            let t0 = now();
            let t = pool.spawn(move || now().saturating_sub(t0));
            lat.push(ns(t.join()));
        }
    });
    lat
}

/// One-way latency of a tiny task to a one-thread rayon pool, after
/// `settle` of idleness.
fn rayon_latency(samples: usize, settle: Duration) -> Vec<f64> {
    let (rx, _) = cpus();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .start_handler(move |_| {
            let _ = pin_current_thread(rx);
        })
        .build()
        .unwrap();
    let out = Arc::new(AtomicU64::new(u64::MAX));
    let mut lat = Vec::with_capacity(samples);
    on_submit_cpu(|| {
        for _ in 0..samples {
            settle_for(settle);
            out.store(u64::MAX, Ordering::Relaxed);
            let o = out.clone();
            let t0 = now();
            pool.spawn(move || o.store(now().saturating_sub(t0), Ordering::Release));
            let d = loop {
                let v = out.load(Ordering::Acquire);
                if v != u64::MAX {
                    break v;
                }
                std::hint::spin_loop();
            };
            lat.push(ns(d));
        }
    });
    lat
}

/// One-way latency from `spawn` to a new scoped thread's first instruction.
fn scoped_thread_latency(samples: usize) -> f64 {
    let mut lat = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t0 = now();
        let d = std::thread::scope(|s| s.spawn(move || now().saturating_sub(t0)).join().unwrap());
        lat.push(ns(d));
    }
    median(&mut lat)
}

/// Idles the submitter for `d` before a sample: spinning below 100 µs
/// (the spin hand-off's 2 µs gap, so that the receiver has been polling
/// for a while, as there), sleeping above.
fn settle_for(d: Duration) {
    if d >= Duration::from_micros(100) {
        std::thread::sleep(d);
    } else if !d.is_zero() {
        spin_for(d);
    }
}

fn spin_for(d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// About `iters` ns of dependent arithmetic (a step is a dependent
/// multiply-add, about a nanosecond on current cores). The `black_box` on
/// each step keeps the compiler from collapsing the recurrence into a
/// fraction of that.
#[inline(never)]
fn work(iters: u64) -> u64 {
    let mut x = black_box(1u64);
    for i in 0..iters {
        x = black_box(x.wrapping_mul(6364136223846793005)).wrapping_add(i);
    }
    black_box(x)
}

/// Tasks per second over one run of `tasks` tasks.
fn rate_once(tasks: usize, run: &mut impl FnMut()) -> f64 {
    let t = Instant::now();
    run();
    tasks as f64 / t.elapsed().as_secs_f64()
}

/// Tasks per second over `tasks` tasks, best of 3 runs.
fn rate(tasks: usize, mut run: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| rate_once(tasks, &mut run))
        .fold(0.0, f64::max)
}

/// Rounds of the waitwise-against-rayon throughput comparison.
const THROUGHPUT_ROUNDS: usize = 9;

/// waitwise's and rayon's rates over `tasks` tasks and their ratio:
/// [`THROUGHPUT_ROUNDS`] rounds, each one run of both (in turn first, so
/// neither always meets the other's leftovers), the median of each
/// pool's rates and of the rounds' ratios. A run of empty tasks lasts a
/// few milliseconds, so one run of each (or the best of a few) follows
/// whatever the VM did in that instant; the median of paired rounds does not.
fn paired_rates(tasks: usize, mut ww: impl FnMut(), mut ry: impl FnMut()) -> (f64, f64, f64) {
    let (mut wr, mut rr, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..THROUGHPUT_ROUNDS {
        let (w, r) = if round % 2 == 0 {
            let w = rate_once(tasks, &mut ww);
            (w, rate_once(tasks, &mut ry))
        } else {
            let r = rate_once(tasks, &mut ry);
            (rate_once(tasks, &mut ww), r)
        };
        wr.push(w);
        rr.push(r);
        ratio.push(w / r);
    }
    (median(&mut wr), median(&mut rr), median(&mut ratio))
}

fn pool_join_tree(pool: &ThreadPool, leaves: usize, iters: u64) -> u64 {
    if leaves <= 1 {
        return work(iters);
    }
    let h = leaves / 2;
    let (a, b) = pool.join(
        || pool_join_tree(pool, h, iters),
        || pool_join_tree(pool, leaves - h, iters),
    );
    a ^ b
}

fn rayon_join_tree(leaves: usize, iters: u64) -> u64 {
    if leaves <= 1 {
        return work(iters);
    }
    let h = leaves / 2;
    let (a, b) = rayon::join(
        || rayon_join_tree(h, iters),
        || rayon_join_tree(leaves - h, iters),
    );
    a ^ b
}

/// Process CPU time (user + system) from `getrusage(RUSAGE_SELF)`.
fn process_cpu() -> Duration {
    // SAFETY: an all-zero `rusage` is a valid value to be overwritten.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a live, writable `rusage`; RUSAGE_SELF is always valid.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage failed");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// % of one CPU the process burns over `ms` while the caller sleeps.
fn idle_cpu_percent(ms: u64) -> f64 {
    let c0 = process_cpu();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(ms));
    let cpu = process_cpu() - c0;
    100.0 * cpu.as_secs_f64() / t0.elapsed().as_secs_f64()
}

/// Waits (at most 500 ms) until the cycle clock reads the TSC: it reads
/// `CLOCK_MONOTONIC` until it has learned the TSC's rate, about 100 ms
/// after its first use, and every latency here must be stamped on one
/// source (a receiver's clock read is part of what it measures).
fn settle_clock() -> &'static str {
    let t = Instant::now();
    while cycle_clock().tsc_hz().is_none() && t.elapsed() < Duration::from_millis(500) {
        let _ = cycle_clock().now();
        std::thread::sleep(Duration::from_millis(5));
    }
    if cycle_clock().tsc_hz().is_some() {
        "TSC"
    } else {
        "CLOCK_MONOTONIC"
    }
}

fn main() {
    let args = parse_args();
    let clock = settle_clock();
    let (rx, tx) = cpus();
    let n = args.workers.unwrap_or(allowed().len().max(1));
    let runs = |section: &str| args.only.as_deref().is_none_or(|o| o == section);
    println!(
        "pool benchmark: {} allowed CPUs, pools of {n} workers, worker on CPU {rx}, submitter on CPU {tx}, {} samples, clock {clock}",
        allowed().len(),
        args.samples
    );
    if rx == tx {
        println!("(one CPU: submitter and worker share it; latencies include a context switch)");
    }

    if runs("latency") {
        latency(&args);
    }
    if runs("throughput") {
        throughput(&args, n);
    }
    if runs("idle") {
        idle(&args, n);
    }
}

/// The submitter's pause before each polling sample (the spin hand-off's,
/// the polling pool's and rayon's right after a task): the receiver has
/// been polling for this long when the store comes.
const SPIN_GAP: Duration = Duration::from_micros(2);

/// Rounds in which each latency and its baseline alternate.
const ROUNDS: usize = 10;

/// The latency table.
fn latency(args: &Args) {
    println!("\n## Latency of a tiny task, one way (median ns)");
    let s = args.samples;
    // Each pool figure and its baseline are measured in alternating rounds,
    // so that both meet the same conditions (on a virtual machine the
    // host may move the two CPUs closer or further apart between runs).
    let mut spin = Vec::new();
    let mut polling = Vec::new();
    let mut rayon_hot = Vec::new();
    for _ in 0..ROUNDS {
        let n = s.div_ceil(ROUNDS);
        spin.extend(spin_handoff(n));
        polling.extend(pool_latency(n, Policy::always_spin(), SPIN_GAP));
        rayon_hot.extend(rayon_latency(n, SPIN_GAP));
    }
    let mut futex = Vec::new();
    let mut parked = Vec::new();
    let mut default_parked = Vec::new();
    let mut rayon_idle = Vec::new();
    for _ in 0..ROUNDS {
        let n = s.min(500).div_ceil(ROUNDS);
        futex.extend(futex_handoff(n));
        parked.extend(pool_latency(
            n,
            Policy::always_block(),
            Duration::from_micros(200),
        ));
        default_parked.extend(pool_latency(
            n,
            Policy::for_kind(waitwise::SyncKind::ProducerConsumer),
            Duration::from_millis(1),
        ));
        rayon_idle.extend(rayon_latency(n, Duration::from_millis(1)));
    }
    let [spin, polling, rayon_hot, futex, parked, default_parked, rayon_idle] = [
        spin,
        polling,
        rayon_hot,
        futex,
        parked,
        default_parked,
        rayon_idle,
    ]
    .map(|mut v| median(&mut v));
    let scoped = scoped_thread_latency(s.min(500));
    println!("| to | ns | ratio |");
    println!("|---|---:|---:|");
    println!("| spin hand-off (baseline) | {spin:.0} | 1.00 |");
    println!(
        "| waitwise pool, idle worker polling (s//inf) | {polling:.0} | {:.2}x spin |",
        polling / spin
    );
    println!("| futex hand-off (baseline) | {futex:.0} | 1.00 |");
    println!(
        "| waitwise pool, parked worker (/b/0, idle 200 µs) | {parked:.0} | {:.2}x futex |",
        parked / futex
    );
    println!(
        "| waitwise pool, default policy, idle 1 ms | {default_parked:.0} | {:.2}x futex |",
        default_parked / futex
    );
    println!(
        "| rayon, 2 µs after the previous task | {rayon_hot:.0} | {:.2}x spin |",
        rayon_hot / spin
    );
    println!(
        "| rayon, idle 1 ms | {rayon_idle:.0} | {:.2}x futex |",
        rayon_idle / futex
    );
    println!(
        "| new scoped thread | {scoped:.0} | {:.2}x futex |",
        scoped / futex
    );
}

/// The throughput table, on pools of `n` workers.
fn throughput(args: &Args, n: usize) {
    println!(
        "\n## Throughput of short tasks ({} tasks, {n} workers; Mtasks/s, median of {THROUGHPUT_ROUNDS} paired rounds; ratio: median of the rounds' ratios; scoped threads: best of 3)",
        args.tasks
    );
    // Pinned one per CPU by default; `--no-pin` leaves the workers to the
    // scheduler, as rayon's threads are.
    let pool = ThreadPool::builder()
        .workers(n)
        .pin(args.pin)
        .build()
        .unwrap();
    let rayon_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap();
    println!("| tasks | waitwise | rayon | ratio | scoped threads |");
    println!("|---|---:|---:|---:|---:|");
    for (label, iters) in [("scope, empty", 0u64), ("scope, ~1 µs", 1000)] {
        let t = args.tasks;
        // From inside the pool, as rayon's scope runs its closure.
        let (ww, ry, ratio) = paired_rates(
            t,
            || {
                pool.install(|| {
                    pool.scope(|sc| {
                        for _ in 0..t {
                            sc.spawn(move || {
                                work(iters);
                            });
                        }
                    })
                })
            },
            || {
                rayon_pool.scope(|sc| {
                    for _ in 0..t {
                        sc.spawn(move |_| {
                            work(iters);
                        });
                    }
                })
            },
        );
        let few = (t / 100).max(1);
        let st = rate(few, || {
            std::thread::scope(|sc| {
                for _ in 0..few {
                    sc.spawn(move || work(iters));
                }
            })
        });
        println!(
            "| {label} | {:.3} | {:.3} | {ratio:.2}x | {:.3} |",
            ww / 1e6,
            ry / 1e6,
            st / 1e6
        );
    }
    for (label, iters) in [("join tree, empty", 0u64), ("join tree, ~1 µs", 1000)] {
        let t = args.tasks;
        let (ww, ry, ratio) = paired_rates(
            t,
            || {
                black_box(pool.install(|| pool_join_tree(&pool, t, iters)));
            },
            || {
                rayon_pool.install(|| black_box(rayon_join_tree(t, iters)));
            },
        );
        println!(
            "| {label} | {:.3} | {:.3} | {ratio:.2}x | - |",
            ww / 1e6,
            ry / 1e6,
        );
    }
    drop(pool);
    drop(rayon_pool);
}

/// The idle-CPU table, on pools of `n` workers.
fn idle(args: &Args, n: usize) {
    println!(
        "\n## CPU burned while idle (% of one CPU over {} ms)",
        args.idle_ms
    );
    println!("| pool | % CPU |");
    println!("|---|---:|");
    {
        let pool = ThreadPool::new(n).unwrap();
        pool.scope(|sc| {
            for _ in 0..n {
                sc.spawn(|| {
                    work(1000);
                });
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        println!(
            "| waitwise, {n} workers, default policy | {:.3} |",
            idle_cpu_percent(args.idle_ms)
        );
    }
    {
        let rayon_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        rayon_pool.install(|| rayon_join_tree(n, 1000));
        std::thread::sleep(Duration::from_millis(50));
        println!(
            "| rayon, {n} threads | {:.3} |",
            idle_cpu_percent(args.idle_ms)
        );
    }
}
