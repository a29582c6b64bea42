//! Hand-offs beside CPU-bound processes: threads taking turns through a
//! mutex and a condition variable, and threads looping on one mutex, for
//! waitwise, parking_lot and std, alone and beside busy-loop processes
//! (the lost-slice guard of yield polling, `waitwise::mechanism::yield_guard`).
//!
//! ```text
//! cargo run -p waitwise --release --example handoff_under_load [-- --threads 8 --turns 2000 --hogs N --runs 3]
//! ```
//!
//! - *turns*: `--threads` threads take `--turns` turns each, in order: a
//!   thread locks, waits on the condition variable until it is its turn,
//!   counts the turn and wakes all (every turn is a hand-off to one
//!   particular thread, which a waiter that loses its CPU delays); seconds.
//! - *loop*: `--threads` threads loop `lock; counter += 1; unlock` for
//!   1 s (throughput, which a waiter that yields its CPU may help);
//!   Mops/s.
//!
//! Each row runs alone and beside `--hogs` busy-loop processes (default:
//! one per CPU), started by this program (`--hog`, itself re-run) and
//! killed after the row; medians of `--runs` interleaved runs, ratios
//! against parking_lot in the same runs. waitwise runs twice: as it is,
//! and with its lost-slice guard turned off
//! (`yield_guard::set_enabled(false)`); the `trips` column counts how
//! often the guard tripped during the row's runs.

use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

/// `--hog`: a busy loop until killed.
fn hog() -> ! {
    let mut x = 0u64;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

/// Starts `n` busy-loop processes (this program with `--hog`).
fn start_hogs(n: usize) -> Vec<Child> {
    let exe = std::env::current_exe().expect("own path");
    let hogs = (0..n)
        .map(|_| {
            Command::new(&exe)
                .arg("--hog")
                .spawn()
                .expect("start a hog")
        })
        .collect();
    // Let them reach their loops.
    std::thread::sleep(Duration::from_millis(200));
    hogs
}

fn stop_hogs(hogs: Vec<Child>) {
    for mut h in hogs {
        let _ = h.kill();
        let _ = h.wait();
    }
}

/// A mutex and condition variable pair, as each library spells them.
trait Lib: Send + Sync + 'static {
    fn new() -> Self;
    /// Waits for turn `id` of `n`, takes it, wakes all.
    fn take_turn(&self, id: usize, n: usize);
    /// One `lock; counter += 1; unlock`.
    fn incr(&self);
    fn count(&self) -> u64;
}

/// A [`Lib`] for a library whose mutex locks without a `Result` and
/// whose condition variable waits on `&mut guard` (waitwise and
/// parking_lot alike).
macro_rules! guard_lib {
    ($name:ident, $mutex:ty, $condvar:ty) => {
        struct $name($mutex, $condvar);
        impl Lib for $name {
            fn new() -> Self {
                Self(<$mutex>::new(0), <$condvar>::new())
            }
            fn take_turn(&self, id: usize, n: usize) {
                let mut g = self.0.lock();
                while *g as usize % n != id {
                    self.1.wait(&mut g);
                }
                *g += 1;
                self.1.notify_all();
            }
            fn incr(&self) {
                *self.0.lock() += 1;
            }
            fn count(&self) -> u64 {
                *self.0.lock()
            }
        }
    };
}

guard_lib!(Waitwise, waitwise::Mutex<u64>, waitwise::condvar::Condvar);
guard_lib!(ParkingLot, parking_lot::Mutex<u64>, parking_lot::Condvar);

struct Std(std::sync::Mutex<u64>, std::sync::Condvar);
impl Lib for Std {
    fn new() -> Self {
        Self(std::sync::Mutex::new(0), std::sync::Condvar::new())
    }
    fn take_turn(&self, id: usize, n: usize) {
        let mut g = self.0.lock().unwrap();
        while *g as usize % n != id {
            g = self.1.wait(g).unwrap();
        }
        *g += 1;
        self.1.notify_all();
    }
    fn incr(&self) {
        *self.0.lock().unwrap() += 1;
    }
    fn count(&self) -> u64 {
        *self.0.lock().unwrap()
    }
}

/// Seconds for `threads` threads to take `turns` turns each.
fn turns<L: Lib>(threads: usize, turns: usize) -> f64 {
    let lib = Arc::new(L::new());
    let t = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|id| {
            let lib = lib.clone();
            std::thread::spawn(move || {
                for _ in 0..turns {
                    lib.take_turn(id, threads);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(lib.count(), (threads * turns) as u64, "turns lost");
    secs
}

/// Mops/s of `threads` threads looping on one mutex for 1 s.
fn mutex_loop<L: Lib>(threads: usize) -> f64 {
    let lib = Arc::new(L::new());
    let stop = Arc::new(AtomicBool::new(false));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (lib, stop) = (lib.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                // Relaxed: the flag only ends the loop; `join` orders the
                // counts.
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..64 {
                        lib.incr();
                    }
                    n += 64;
                }
                n
            })
        })
        .collect();
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    // Relaxed: see the load.
    stop.store(true, Ordering::Relaxed);
    let total: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(lib.count(), total, "mutual exclusion violated");
    total as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--hog") {
        hog();
    }
    let cpus = waitwise_platform::affinity::process_cpu_count();
    let threads: usize = arg(&args, "--threads").unwrap_or(8);
    let turns_each: usize = arg(&args, "--turns").unwrap_or(2000);
    let hogs: usize = arg(&args, "--hogs").unwrap_or(cpus);
    let runs: usize = arg::<usize>(&args, "--runs").unwrap_or(3).max(1);

    println!(
        "{threads} threads on {cpus} CPUs; turns: {turns_each} each, seconds (less is better); loop: 1 s, Mops/s (more is better); medians of {runs} interleaved runs"
    );
    println!();
    println!("| workload | beside | waitwise | waitwise, no guard | parking_lot | std | waitwise vs parking_lot | no guard vs parking_lot | guard trips |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for load in [0, hogs] {
        let procs = if load > 0 {
            start_hogs(load)
        } else {
            Vec::new()
        };
        let beside = if load > 0 {
            format!("{load} busy loops")
        } else {
            "nothing".to_string()
        };
        for workload in ["turns", "loop"] {
            let guard = waitwise::mechanism::yield_guard::set_enabled;
            let mut trips = 0;
            let mut figs = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
            for _ in 0..runs {
                let before = waitwise::mechanism::yield_guard::trips();
                if workload == "turns" {
                    figs[0].push(turns::<Waitwise>(threads, turns_each));
                    trips += waitwise::mechanism::yield_guard::trips() - before;
                    guard(false);
                    figs[1].push(turns::<Waitwise>(threads, turns_each));
                    guard(true);
                    figs[2].push(turns::<ParkingLot>(threads, turns_each));
                    figs[3].push(turns::<Std>(threads, turns_each));
                } else {
                    figs[0].push(mutex_loop::<Waitwise>(threads));
                    trips += waitwise::mechanism::yield_guard::trips() - before;
                    guard(false);
                    figs[1].push(mutex_loop::<Waitwise>(threads));
                    guard(true);
                    figs[2].push(mutex_loop::<ParkingLot>(threads));
                    figs[3].push(mutex_loop::<Std>(threads));
                }
            }
            let [w, off, p, s] = figs.map(median);
            // Both as "how many times parking_lot's speed".
            let (vs, off_vs) = if workload == "turns" {
                (p / w, p / off)
            } else {
                (w / p, off / p)
            };
            let unit = if workload == "turns" { "s" } else { "Mops/s" };
            println!(
                "| {workload} | {beside} | {w:.2} {unit} | {off:.2} {unit} | {p:.2} {unit} | {s:.2} {unit} | {vs:.2}x | {off_vs:.2}x | {trips} |"
            );
        }
        stop_hogs(procs);
    }
}
