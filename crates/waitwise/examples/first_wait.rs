//! What a process's first waits cost, and how well `B` is learned: a
//! benchmark of the two claims of `tests/first_wait.rs` (the first wait
//! calibrates nothing, and `B` is learned from the process's own
//! wake-ups), each case in fresh processes.
//!
//! Run: `cargo run --release -p waitwise --example first_wait [PROCESSES]`
//!
//! - **first waits**: in each of PROCESSES fresh processes (default 10),
//!   the 1st and the 10th `Event::wait_timeout(Duration::ZERO)`, contended
//!   `Mutex::lock` and 1 ms `Semaphore::acquire_timeout`; the medians over
//!   the processes and the ratio first / tenth.
//! - **learned B**: in each fresh process, 1000 futex hand-offs between two
//!   threads (each side asleep before it is woken), then the `B` learned
//!   from their wake-ups beside the `B` that `waitwise probe` measures,
//!   taken right after in the same process (so in the same hypervisor
//!   mode, which lasts tens of milliseconds); the spread of the learned
//!   values over the processes.
//!
//! A benchmark, not a test: it prints figures and asserts nothing.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use waitwise::policy::block_cost::{self, learned_block_cost, measure_block_cost};
use waitwise::semaphore::Semaphore;
use waitwise::{Event, Mutex, Policy, WaitOptions};

const CHILD: &str = "FIRST_WAIT_CHILD";
/// Hand-offs of the learned-B workload (two blocks each).
const HAND_OFFS: usize = 1000;

fn main() {
    match std::env::var(CHILD).as_deref() {
        Ok("first") => return child_first_waits(),
        Ok("learn") => return child_learned_b(),
        _ => {}
    }
    let processes: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("PROCESSES: a number"))
        .unwrap_or(10);
    let exe = std::env::current_exe().unwrap();
    let run = |mode: &str| -> Vec<Vec<f64>> {
        (0..processes)
            .map(|_| {
                let out = Command::new(&exe)
                    .env(CHILD, mode)
                    .env_remove("WAITWISE_BLOCK_NS")
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                String::from_utf8_lossy(&out.stdout)
                    .split_whitespace()
                    .map(|v| v.parse().unwrap())
                    .collect()
            })
            .collect()
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };

    println!("first waits, medians over {processes} fresh processes");
    println!(
        "{:<40} {:>12} {:>12} {:>8}",
        "wait", "1st", "10th", "1st/10th"
    );
    let rows = run("first");
    for (i, name) in [
        "Event::wait_timeout(0)",
        "Mutex::lock, contended",
        "Semaphore::acquire_timeout(1 ms)",
    ]
    .iter()
    .enumerate()
    {
        let first = median(rows.iter().map(|r| r[2 * i]).collect());
        let tenth = median(rows.iter().map(|r| r[2 * i + 1]).collect());
        println!(
            "{name:<40} {:>9.1} us {:>9.1} us {:>8.2}",
            first / 1e3,
            tenth / 1e3,
            first / tenth
        );
    }

    println!("\nlearned B after {HAND_OFFS} futex hand-offs, {processes} fresh processes");
    println!(
        "{:>8} {:>12} {:>12} {:>14} {:>8}",
        "process", "learned", "samples", "probe-measured", "ratio"
    );
    let rows = run("learn");
    for (i, r) in rows.iter().enumerate() {
        println!(
            "{:>8} {:>9.2} us {:>12} {:>11.2} us {:>8.2}",
            i + 1,
            r[0] / 1e3,
            r[1],
            r[2] / 1e3,
            r[0] / r[2]
        );
    }
    let learned: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    let (lo, hi) = learned
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let ratios: Vec<f64> = rows.iter().map(|r| r[0] / r[2]).collect();
    println!(
        "learned B: median {:.2} us, spread max/min {:.2}; learned/measured: median {:.2}",
        median(learned) / 1e3,
        hi / lo,
        median(ratios)
    );
}

/// ns of one call of `f`.
fn time(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64
}

/// Prints, for each kind of wait, the 1st and the 10th call's ns.
fn child_first_waits() {
    let mut out = Vec::new();
    // Event::wait_timeout(0) on an event nobody notifies.
    let ev = Event::new();
    let t: Vec<f64> = (0..10)
        .map(|_| {
            time(|| {
                let _ = ev.wait_timeout(Duration::ZERO);
            })
        })
        .collect();
    out.extend([t[0], t[9]]);
    // A contended lock: a holder keeps it 2 ms after the caller says it is
    // about to lock (long enough that the caller is surely waiting for it,
    // even on a loaded machine; counted from the announcement, so a holder
    // that ran first on the caller's CPU cannot release before the caller
    // even tries).
    let m = Arc::new(Mutex::new(0u64));
    let t: Vec<f64> = (0..10)
        .map(|_| {
            let held = Arc::new(AtomicBool::new(false));
            let locking = Arc::new(AtomicBool::new(false));
            let holder = {
                let (m, held, locking) = (m.clone(), held.clone(), locking.clone());
                std::thread::spawn(move || {
                    let mut g = m.lock();
                    held.store(true, Ordering::SeqCst);
                    while !locking.load(Ordering::SeqCst) {
                        std::hint::spin_loop();
                    }
                    let t = Instant::now();
                    while t.elapsed() < Duration::from_millis(2) {}
                    *g += 1;
                })
            };
            while !held.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            locking.store(true, Ordering::SeqCst);
            let ns = time(|| *m.lock() += 1);
            holder.join().unwrap();
            ns
        })
        .collect();
    out.extend([t[0], t[9]]);
    // A 1 ms timed acquire that times out.
    let s = Semaphore::new(0);
    let t: Vec<f64> = (0..10)
        .map(|_| {
            time(|| {
                let _ = s.acquire_timeout(Duration::from_millis(1));
            })
        })
        .collect();
    out.extend([t[0], t[9]]);
    println!(
        "{}",
        out.iter()
            .map(|v| format!("{v:.0}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
}

/// Prints the learned B, its samples, and the probe's measured B.
fn child_learned_b() {
    let opts = || WaitOptions::new().policy(Policy::always_block());
    let (ping, pong) = (
        Arc::new(Event::with_options(opts())),
        Arc::new(Event::with_options(opts())),
    );
    let partner = {
        let (ping, pong) = (ping.clone(), pong.clone());
        std::thread::spawn(move || {
            for _ in 0..HAND_OFFS {
                ping.wait();
                pong.notify();
            }
        })
    };
    for _ in 0..HAND_OFFS {
        ping.notify();
        pong.wait();
    }
    partner.join().unwrap();
    let learned = learned_block_cost().expect("wake-ups sampled");
    let samples = match learned.source {
        block_cost::BlockCostSource::Learned { samples } => samples,
        _ => 0,
    };
    let measured = measure_block_cost().expect("partner thread");
    println!("{:.0} {samples} {:.0}", learned.ns, measured.ns);
}
