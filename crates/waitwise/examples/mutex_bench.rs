//! Mutex benchmark: waitwise's mutexes against parking_lot, `pthread_mutex`
//! and `std::sync::Mutex`.
//!
//! ```text
//! cargo run -p waitwise --release --example mutex_bench [-- --ms 300 --runs 5 --threads 2,4]
//! cargo run -p waitwise --release --example mutex_bench -- --ms 300 --runs 3 --threads 2,4,8 \
//!     --only waitwise::Mutex,TicketMutex,McsMutex,spin-ticket
//! ```
//!
//! - *uncontended*: one thread, lock + unlock in a loop (ns per pair, best
//!   of `--runs`: the least disturbed run);
//! - *contended*: N threads each loop `lock; counter += 1; unlock` for a
//!   fixed time (a short critical section); throughput in Mops/s summed over
//!   threads, median of `--runs` runs. The counter is checked against the
//!   threads' own counts (mutual exclusion). Runs in which the process got
//!   less than 0.9 of the CPUs' time (`CPUs x seconds`) are listed under
//!   the table with the machine's split of the run (idle, stolen by the
//!   hypervisor, others), so that an outlying ratio can be traced to the
//!   machine or to the lock.
//!
//! Ratios are against parking_lot and `pthread_mutex` measured in the same
//! run (`> 1` is better for throughput, `< 1` for latency).
//!
//! `parking_lot again`, always measured, is parking_lot a second time, as
//! a candidate of its own (an A/A control): its ratios to parking_lot are
//! the noise of the medians in that run, so another lock's ratio within
//! the same distance of 1.00 is a tie, not a win or a loss.
//!
//! Two references bound what a FIFO lock can reach here: `spin-ticket`, a
//! bare ticket spin lock (no policy, no sleep, no skipping: every contended
//! acquisition goes to the next ticket's thread), and the one-way
//! cache-line hand-off time (two threads passing a token on one line, half
//! the round trip of the fastest of 50 batches), whose inverse is the most
//! strictly alternating hand-offs one lock can make per second. The
//! waitwise ticket and MCS locks exceed it by batching: a releaser that
//! handed off waits a cool-down before it queues again
//! (`src/mutex/hand_off_cooldown.rs`).

use std::cell::UnsafeCell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use waitwise_platform::cpu_time::{describe_split, process_cpu_secs, CpuSplit, CpuTicks};

/// The A/A control's name: parking_lot measured a second time.
const CONTROL: &str = "parking_lot again";

/// A contended run in which the process got less than this share of the
/// CPUs' time is listed as disturbed.
const DISTURBED_BELOW: f64 = 0.9;

/// One contended run: its throughput, and what the machine did meanwhile.
#[derive(Clone, Copy, Debug)]
struct Contended {
    mops: f64,
    /// The process's CPU time over the CPUs' time in the run.
    cpu_share: f64,
    machine: Option<CpuSplit>,
}

/// A lock protecting a `u64`, as the benchmark needs it.
trait BenchLock: Send + Sync + 'static {
    fn new() -> Self;
    fn incr(&self);
    fn get(&self) -> u64;
}

impl<R: lock_api::RawMutex + Send + Sync + 'static> BenchLock for lock_api::Mutex<R, u64> {
    fn new() -> Self {
        lock_api::Mutex::new(0)
    }
    #[inline]
    fn incr(&self) {
        *self.lock() += 1;
    }
    fn get(&self) -> u64 {
        *self.lock()
    }
}

struct StdMutex(std::sync::Mutex<u64>);

impl BenchLock for StdMutex {
    fn new() -> Self {
        Self(std::sync::Mutex::new(0))
    }
    #[inline]
    fn incr(&self) {
        *self.0.lock().unwrap() += 1;
    }
    fn get(&self) -> u64 {
        *self.0.lock().unwrap()
    }
}

/// `pthread_mutex_t` (default attributes) around a counter.
struct PthreadMutex {
    m: Box<UnsafeCell<libc::pthread_mutex_t>>,
    v: UnsafeCell<u64>,
}

// SAFETY: the counter is only touched with the pthread mutex held; the mutex
// is boxed so it never moves after initialization.
unsafe impl Sync for PthreadMutex {}
// SAFETY: as above; a pthread mutex may be used from any thread.
unsafe impl Send for PthreadMutex {}

impl BenchLock for PthreadMutex {
    fn new() -> Self {
        Self {
            m: Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER)),
            v: UnsafeCell::new(0),
        }
    }
    #[inline]
    fn incr(&self) {
        // SAFETY: the mutex is initialized and pinned in its box; the counter
        // is accessed only between lock and unlock.
        unsafe {
            libc::pthread_mutex_lock(self.m.get());
            *self.v.get() += 1;
            libc::pthread_mutex_unlock(self.m.get());
        }
    }
    fn get(&self) -> u64 {
        // SAFETY: as in `incr`.
        unsafe {
            libc::pthread_mutex_lock(self.m.get());
            let v = *self.v.get();
            libc::pthread_mutex_unlock(self.m.get());
            v
        }
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: unlocked and no longer shared (we have `&mut self`).
        unsafe {
            libc::pthread_mutex_destroy(self.m.get());
        }
    }
}

/// A bare FIFO ticket spin lock around a counter: the FIFO ceiling (no
/// policy, no sleep, no skipping; waiters spin with PAUSE on `serving`).
struct SpinTicket {
    next: CacheLine<AtomicU32>,
    serving: CacheLine<AtomicU32>,
    v: UnsafeCell<u64>,
}

#[repr(align(128))]
struct CacheLine<T>(T);

// SAFETY: the counter is only touched with the ticket lock held.
unsafe impl Sync for SpinTicket {}

impl BenchLock for SpinTicket {
    fn new() -> Self {
        Self {
            next: CacheLine(AtomicU32::new(0)),
            serving: CacheLine(AtomicU32::new(0)),
            v: UnsafeCell::new(0),
        }
    }
    #[inline]
    fn incr(&self) {
        // Relaxed: the ticket orders nothing; the Acquire load of `serving`
        // takes the lock.
        let t = self.next.0.fetch_add(1, Ordering::Relaxed);
        while self.serving.0.load(Ordering::Acquire) != t {
            std::hint::spin_loop();
        }
        // SAFETY: ticket `t` is served: the lock is held.
        unsafe { *self.v.get() += 1 };
        // Release: publishes the critical section to the next ticket.
        self.serving.0.store(t.wrapping_add(1), Ordering::Release);
    }
    fn get(&self) -> u64 {
        let t = self.next.0.fetch_add(1, Ordering::Relaxed);
        while self.serving.0.load(Ordering::Acquire) != t {
            std::hint::spin_loop();
        }
        // SAFETY: as in `incr`.
        let v = unsafe { *self.v.get() };
        self.serving.0.store(t.wrapping_add(1), Ordering::Release);
        v
    }
}

/// The one-way cache-line hand-off time, ns: two threads pass a token on
/// one line (each waits for the other's value with PAUSE, then writes its
/// own), half the mean round trip of the fastest of `rounds` batches of
/// 1,000 (the least disturbed: a preempted thread stretches its batch,
/// and the ceiling is what the hardware allows).
fn one_way_handoff_ns(rounds: usize) -> f64 {
    const TRIPS: u32 = 1_000;
    let mut per_trip = Vec::new();
    for _ in 0..rounds {
        let token = Arc::new(CacheLine(AtomicU32::new(0)));
        let peer = {
            let token = token.clone();
            std::thread::spawn(move || {
                for i in 0..TRIPS {
                    // Acquire/Release: a token pass, as a lock hand-off.
                    while token.0.load(Ordering::Acquire) != 2 * i + 1 {
                        std::hint::spin_loop();
                    }
                    token.0.store(2 * i + 2, Ordering::Release);
                }
            })
        };
        let t = Instant::now();
        for i in 0..TRIPS {
            token.0.store(2 * i + 1, Ordering::Release);
            while token.0.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
        }
        per_trip.push(t.elapsed().as_nanos() as f64 / f64::from(TRIPS));
        peer.join().unwrap();
    }
    per_trip.into_iter().fold(f64::INFINITY, f64::min) / 2.0
}

/// ns per uncontended lock + unlock (one run).
fn uncontended<L: BenchLock>() -> f64 {
    const ITERS: u64 = 2_000_000;
    let lock = L::new();
    let t = Instant::now();
    for _ in 0..ITERS {
        black_box(&lock).incr();
    }
    let ns = t.elapsed().as_nanos() as f64 / ITERS as f64;
    assert_eq!(lock.get(), ITERS);
    ns
}

/// Mops/s with `threads` threads hammering one lock for `dur` (one run).
fn contended<L: BenchLock>(threads: usize, dur: Duration) -> Contended {
    let lock = Arc::new(L::new());
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(threads + 1));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (lock, stop, start) = (lock.clone(), stop.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut n = 0u64;
                // Relaxed: the flag only ends the loop; the counts come back
                // through `join`.
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..64 {
                        lock.incr();
                    }
                    n += 64;
                }
                n
            })
        })
        .collect();
    start.wait();
    let t = Instant::now();
    let (cpu_before, ticks_before) = (process_cpu_secs(), CpuTicks::now());
    std::thread::sleep(dur);
    // Relaxed: see the load; `join` orders the results.
    stop.store(true, Ordering::Relaxed);
    let total: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    let secs = t.elapsed().as_secs_f64();
    let cpu_secs = process_cpu_secs() - cpu_before;
    let machine = CpuSplit::between(ticks_before, CpuTicks::now());
    assert_eq!(lock.get(), total, "mutual exclusion violated");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    Contended {
        mops: total as f64 / secs / 1e6,
        cpu_share: cpu_secs / (cpus * secs),
        machine,
    }
}

/// One lock under test: its name and one run of each measurement.
struct Candidate {
    name: &'static str,
    uncontended: fn() -> f64,
    contended: fn(usize, Duration) -> Contended,
}

fn candidate<L: BenchLock>(name: &'static str) -> Candidate {
    Candidate {
        name,
        uncontended: uncontended::<L>,
        contended: contended::<L>,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Row {
    name: &'static str,
    uncontended_ns: f64,
    mops: Vec<f64>,
    /// Per thread count, every run (in order).
    runs: Vec<Vec<Contended>>,
}

/// Runs every candidate `runs` times, interleaved (run 1 of each, then run
/// 2 of each, ...) so that drifts of the machine hit all alike; medians.
fn measure(cands: &[Candidate], threads: &[usize], dur: Duration, runs: usize) -> Vec<Row> {
    let mut unc = vec![Vec::new(); cands.len()];
    let mut con = vec![vec![Vec::new(); threads.len()]; cands.len()];
    for _ in 0..runs {
        for (i, c) in cands.iter().enumerate() {
            unc[i].push((c.uncontended)());
            for (j, &t) in threads.iter().enumerate() {
                con[i][j].push((c.contended)(t, dur));
            }
        }
    }
    cands
        .iter()
        .zip(unc.into_iter().zip(con))
        .map(|(c, (u, m))| Row {
            name: c.name,
            uncontended_ns: u.into_iter().fold(f64::INFINITY, f64::min),
            mops: m
                .iter()
                .map(|runs| median(runs.iter().map(|r| r.mops).collect()))
                .collect(),
            runs: m,
        })
        .collect()
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

fn main() {
    // Measure B before any benchmark thread runs, over several spaced
    // calibrations as the `waitwise` tool does (see `policy::block_cost`).
    let _ =
        waitwise::policy::block_cost::settle_block_cost(8, std::time::Duration::from_millis(10));
    let args: Vec<String> = std::env::args().collect();
    let dur = Duration::from_millis(arg(&args, "--ms").unwrap_or(300));
    let runs: usize = arg(&args, "--runs").unwrap_or(5);
    let threads: Vec<usize> = arg::<String>(&args, "--threads")
        .unwrap_or_else(|| "2,4".into())
        .split(',')
        .filter_map(|t| t.parse().ok())
        .collect();
    let only: Option<String> = arg(&args, "--only");

    // Calibrate B (the two-phase poll limit) before timing anything.
    let b = waitwise::policy::block_cost();

    type Pl = lock_api::Mutex<parking_lot::RawMutex, u64>;
    let all = [
        candidate::<waitwise::mutex::Mutex<u64>>("waitwise::Mutex"),
        candidate::<waitwise::mutex::TicketMutex<u64>>("TicketMutex"),
        candidate::<waitwise::mutex::McsMutex<u64>>("McsMutex"),
        candidate::<Pl>("parking_lot"),
        candidate::<Pl>(CONTROL),
        candidate::<PthreadMutex>("pthread"),
        candidate::<StdMutex>("std"),
        candidate::<SpinTicket>("spin-ticket"),
    ];
    let cands: Vec<Candidate> = all
        .into_iter()
        .filter(|c| {
            c.name == "parking_lot"
                || c.name == CONTROL
                || c.name == "pthread"
                || only
                    .as_deref()
                    .is_none_or(|o| o.split(',').any(|x| x == c.name))
        })
        .collect();
    let rows = measure(&cands, &threads, dur, runs);
    let pl = rows.iter().find(|r| r.name == "parking_lot").unwrap();
    let pt = rows.iter().find(|r| r.name == "pthread").unwrap();
    let (pl_u, pl_m, pt_u, pt_m) = (
        pl.uncontended_ns,
        pl.mops.clone(),
        pt.uncontended_ns,
        pt.mops.clone(),
    );
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let one_way = one_way_handoff_ns(50);
    println!(
        "B = {:.0} ns; waitwise::Mutex policy {}",
        b.ns,
        waitwise::mutex::RawTtasMutex::new().policy().describe()
    );
    println!(
        "one-way cache-line hand-off {one_way:.1} ns: at most {:.1} Mops/s of strictly alternating hand-offs",
        1e3 / one_way
    );
    println!(
        "{cpus} CPUs, contended: {} ms per run; medians of {runs} interleaved runs\n",
        dur.as_millis()
    );
    // The default mutex's throughput, when measured: the targets for the
    // FIFO locks are ratios to it.
    let def_m = rows
        .iter()
        .find(|r| r.name == "waitwise::Mutex")
        .map(|r| r.mops.clone());
    let mut header = "| mutex | uncontended ns | vs parking_lot | vs pthread |".to_string();
    let mut sep = "|---|---:|---:|---:|".to_string();
    for t in &threads {
        header += &format!(" {t} thr Mops/s | vs parking_lot | vs pthread |");
        sep += "---:|---:|---:|";
        if def_m.is_some() {
            header += " vs Mutex |";
            sep += "---:|";
        }
    }
    println!("{header}\n{sep}");
    for r in &rows {
        let mut line = format!(
            "| {} | {:.2} | {:.2}x | {:.2}x |",
            r.name,
            r.uncontended_ns,
            r.uncontended_ns / pl_u,
            r.uncontended_ns / pt_u
        );
        for (i, m) in r.mops.iter().enumerate() {
            line += &format!(" {:.1} | {:.2}x | {:.2}x |", m, m / pl_m[i], m / pt_m[i]);
            if let Some(d) = &def_m {
                line += &format!(" {:.2}x |", m / d[i]);
            }
        }
        println!("{line}");
    }
    print_disturbed(&rows, &threads);
}

/// The contended runs in which the process got less than
/// [`DISTURBED_BELOW`] of the CPUs' time, and where the rest went.
fn print_disturbed(rows: &[Row], threads: &[usize]) {
    let mut first = true;
    for r in rows {
        for (runs, t) in r.runs.iter().zip(threads) {
            for (k, run) in runs.iter().enumerate() {
                if run.cpu_share >= DISTURBED_BELOW {
                    continue;
                }
                if first {
                    println!(
                        "\nDisturbed runs (the process got less than {DISTURBED_BELOW} of the CPUs' time):"
                    );
                    first = false;
                }
                let split = describe_split(run.machine, run.cpu_share);
                println!(
                    "- {}, {t} threads, run {}: {:.1} Mops/s; the process had {:.0}% of the CPUs' time; {split}",
                    r.name,
                    k + 1,
                    run.mops,
                    run.cpu_share * 100.0
                );
            }
        }
    }
}
