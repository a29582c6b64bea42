//! Mutex starvation benchmark: how long a thread can be passed over, and
//! how evenly the acquisitions are shared, for waitwise's mutexes against
//! parking_lot (`mutex/ttas.rs`, "Bounded unfairness").
//!
//! ```text
//! cargo run -p waitwise --release --example mutex_starvation [-- --threads 8 --ms 1000 --runs 3 --cs 0 --writers 2 --detail]
//! taskset -c 0,1 cargo run ...   # the targets' 2 CPUs on a larger machine
//! ```
//!
//! `--threads` threads each loop `lock; counter += 1; unlock` (a short
//! critical section; `--cs N` adds N spin-loop hints inside it, so that
//! waiters outlast their polling phase and sleep, where the mutex's
//! hand-offs act) for `--ms`. Each thread times every acquisition (the
//! cycle clock read before `lock` to the one after it: a TSC read where
//! the TSC is usable, a few ns, where `Instant::now` costs ~25 ns on a KVM
//! guest and took most of each iteration) and keeps its longest; the
//! figures per lock are the medians over `--runs` interleaved runs of:
//!
//! - *longest wait*: the longest single acquisition of any thread, ms;
//! - *least/most served*: the fewest acquisitions of one thread over the
//!   most (1 = perfectly even);
//! - *CPU time least/most*: the least CPU time one thread got
//!   (`CLOCK_THREAD_CPUTIME_ID`) over the most: the scheduler's share of
//!   the unevenness (with more threads than CPUs, the threads' CPU times
//!   differ by 10-40% within a second). A lock that serves its threads
//!   at one rate while they run gives each calls in proportion to its CPU
//!   time (1.5x the CPU time, about 1.5x the calls); serving the threads
//!   with less CPU time faster takes handing the lock to threads that are
//!   not running, the convoy that a FIFO lock pays in throughput;
//! - *per CPU-s*: least/most served for acquisitions per second of the
//!   thread's own CPU time: the lock's share of the unevenness, without
//!   the scheduler's;
//! - *within a CPU*: least/most served among the threads that ran mostly
//!   on the same CPU (each thread samples its CPU every 4096 calls), the
//!   lowest over the CPUs: threads spread over 2 CPUs mostly stay on one
//!   for the whole run, and two virtual CPUs can run at different speeds
//!   (a busy host), which weighs on all the threads of one CPU alike;
//!   the header gives the CPUs' speeds, measured before each round by a
//!   loop pinned to each CPU, all at once;
//! - *threads' CPU share*: the CPU time the threads got over the time
//!   the machine's CPUs had in the run (`CPUs x seconds`). A saturated
//!   lock's threads use every CPU, about 1.0; below that, the CPUs idled
//!   (the lock let its threads sleep), or the host or other processes
//!   took them. The runs whose threads got less than
//!   [`DISTURBED_BELOW`] of the CPUs are listed under the table, with the
//!   machine's split of the run from `/proc/stat` (idle, stolen by the
//!   hypervisor, and the rest: other processes and interrupts), so that an
//!   outlier can be told from the lock's own doing;
//! - *throughput*: acquisitions per second, all threads, Mops/s.
//!
//! `parking_lot again` is parking_lot measured a second time, as a
//! candidate of its own (an A/A control): its ratios to parking_lot show
//! how far one parking_lot run lands from another in the same invocation,
//! the distance within which another lock's ratio is a tie.
//!
//! `--detail` also prints every run's threads to stderr: acquisitions
//! (and their share of the most served thread's), CPU seconds, main CPU,
//! and the mean time of its calls that did not wait (how fast its CPU ran
//! them during the run), and the share of its CPU samples taken on its
//! main CPU (below 100%: the scheduler moved it).
//! `--profile` adds a run per round of the default `Mutex` recording its
//! wait profile, and prints how many acquisitions waited and how many of
//! those slept (the hand-offs of its bounded unfairness go to sleepers
//! only, so a benchmark whose waiters never sleep never hands off).
//!
//! The header also gives the `B` in force after the runs and its source:
//! unlike `mutex_bench`, this benchmark does not settle `B` first, so the
//! locks run with the `B` a program gets, learned from the process's own
//! wake-ups (`policy::block_cost`).
//!
//! Ratios are against parking_lot in the same run. The targets for
//! the default `Mutex` (8 threads, 2 CPUs, 1 s): longest wait at most 2x
//! parking_lot's, least/most served at least 0.8, throughput at or above
//! parking_lot's. The clock reads around every acquisition slow every lock
//! alike; the throughput here is not `mutex_bench`'s.
//!
//! The reader-writer locks (waitwise's, parking_lot's and std's) run the
//! same loop with readers and writers mixed: a quarter of the threads (at
//! least one; `--writers N` sets another count, leaving at least one
//! reader) take the write lock, the others the read lock, each with a
//! short critical section; the figures are kept per role (a reader
//! starved by writers, or a writer by readers or by other writers, shows
//! as that role's longest wait, least/most served and Mops/s).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use waitwise_platform::clock::cycle_clock;
use waitwise_platform::cpu_time::{describe_split, CpuSplit, CpuTicks};

/// `--cs`: spin-loop hints inside every critical section. Relaxed: set
/// before the threads start (`spawn` orders it).
static CS: AtomicU32 = AtomicU32::new(0);

/// `--detail`: every run's threads on stderr (acquisitions, CPU seconds,
/// main CPU). Relaxed: set before the threads start.
static DETAIL: AtomicBool = AtomicBool::new(false);

/// `--writers`: writer threads of the reader-writer runs (0: a quarter of
/// the threads, at least one). Relaxed: set before the threads start.
static WRITERS: AtomicU32 = AtomicU32::new(0);

/// The writer threads of a reader-writer run of `threads` threads.
fn rw_writers(threads: usize) -> usize {
    match WRITERS.load(Ordering::Relaxed) as usize {
        0 => (threads / 4).max(1),
        n => n.min(threads.saturating_sub(1)).max(1),
    }
}

/// A lock protecting a `u64`.
trait BenchLock: Send + Sync + 'static {
    fn new() -> Self;
    /// Adds one, `cs` spin-loop hints inside the critical section.
    fn incr(&self, cs: u32);
    fn get(&self) -> u64;
}

impl<R: lock_api::RawMutex + Send + Sync + 'static> BenchLock for lock_api::Mutex<R, u64> {
    fn new() -> Self {
        lock_api::Mutex::new(0)
    }
    #[inline]
    fn incr(&self, cs: u32) {
        let mut g = self.lock();
        spin(cs);
        *g += 1;
    }
    fn get(&self) -> u64 {
        *self.lock()
    }
}

/// A reader-writer lock protecting a `u64`.
trait BenchRwLock: Send + Sync + 'static {
    fn new() -> Self;
    /// Reads, `cs` spin-loop hints inside the critical section.
    fn read(&self, cs: u32) -> u64;
    /// Adds one, `cs` spin-loop hints inside the critical section.
    fn incr(&self, cs: u32);
}

impl<R: lock_api::RawRwLock + Send + Sync + 'static> BenchRwLock for lock_api::RwLock<R, u64> {
    fn new() -> Self {
        lock_api::RwLock::new(0)
    }
    #[inline]
    fn read(&self, cs: u32) -> u64 {
        let g = self.read();
        spin(cs);
        *g
    }
    #[inline]
    fn incr(&self, cs: u32) {
        let mut g = self.write();
        spin(cs);
        *g += 1;
    }
}

/// std's lock, the one a Rust user has without a dependency.
impl BenchRwLock for std::sync::RwLock<u64> {
    fn new() -> Self {
        std::sync::RwLock::new(0)
    }
    #[inline]
    fn read(&self, cs: u32) -> u64 {
        let g = std::sync::RwLock::read(self).unwrap_or_else(|e| e.into_inner());
        spin(cs);
        *g
    }
    #[inline]
    fn incr(&self, cs: u32) {
        let mut g = self.write().unwrap_or_else(|e| e.into_inner());
        spin(cs);
        *g += 1;
    }
}

/// `n` spin-loop hints: the longer critical section of `--cs`.
#[inline]
fn spin(n: u32) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}

/// One thread's loop: its calls, the longest one, and the CPU time it got.
#[derive(Clone, Copy, Debug)]
struct PerThread {
    calls: u64,
    longest: Duration,
    cpu_secs: f64,
    /// The CPU the thread was seen on most (sampled every
    /// [`CPU_SAMPLE_EVERY`] calls).
    main_cpu: usize,
    /// The share of the CPU samples taken on `main_cpu`.
    on_main_cpu: f64,
    /// The mean time of the calls shorter than [`FAST_CALL`] (that did not
    /// wait), ns: how fast the thread's CPU ran them.
    fast_call_ns: f64,
}

/// A run whose threads got less than this share of the machine's CPU time
/// is listed as disturbed.
const DISTURBED_BELOW: f64 = 0.9;

/// The span of one run: its seconds, and what the machine's CPUs did.
#[derive(Clone, Copy, Debug)]
struct Window {
    secs: f64,
    machine: Option<CpuSplit>,
}

/// A call shorter than this did not wait (a wait takes at least a yield,
/// hundreds of ns); the mean of such calls shows how fast a CPU ran.
const FAST_CALL: Duration = Duration::from_nanos(200);

/// A thread samples the CPU it runs on once per this many calls (a
/// `sched_getcpu`, tens of ns, amortized to nothing).
const CPU_SAMPLE_EVERY: u64 = 4096;

/// How long [`cpu_speed_least_over_most`] counts, before each round of
/// runs.
const CPU_SPEED_PROBE: Duration = Duration::from_millis(200);

/// CPUs told apart by the sampling (a larger index counts modulo this).
const CPU_SLOTS: usize = 64;

/// The CPU the calling thread runs on now (0 where unknown).
fn current_cpu() -> usize {
    waitwise_platform::affinity::current_cpu().unwrap_or(0) % CPU_SLOTS
}

/// How fast the CPUs run a plain loop at the same time: one thread pinned
/// to each allowed CPU counts for `dur`; the fewest counts over the most
/// (`None` with fewer than two CPUs or when pinning fails). Two virtual
/// CPUs of one guest can run apart when the host is busy, and every thread
/// that sits on the slower one is served less by any lock.
fn cpu_speed_least_over_most(dur: Duration) -> Option<f64> {
    let cpus = waitwise_platform::affinity::allowed_cpus().ok()?;
    if cpus.len() < 2 {
        return None;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(cpus.len() + 1));
    let hs: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            let (stop, start) = (stop.clone(), start.clone());
            std::thread::spawn(move || {
                let pinned = waitwise_platform::affinity::pin_current_thread(cpu).is_ok();
                start.wait();
                let mut n = 0u64;
                // Relaxed: the flag only ends the loop.
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..1000 {
                        n = black_box(n + 1);
                    }
                }
                pinned.then_some(n as f64)
            })
        })
        .collect();
    start.wait();
    std::thread::sleep(dur);
    // Relaxed: see the load; `join` returns the counts.
    stop.store(true, Ordering::Relaxed);
    let counts: Option<Vec<f64>> = hs.into_iter().map(|h| h.join().ok().flatten()).collect();
    Some(least_over_most(counts?.into_iter()))
}

/// The calling thread's CPU time so far, seconds.
fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The smallest value over the largest (1 = all equal).
fn least_over_most(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let most = values.clone().fold(0.0, f64::max);
    let least = values.fold(f64::INFINITY, f64::min);
    if most > 0.0 {
        least / most
    } else {
        0.0
    }
}

/// One run's figures.
#[derive(Clone, Copy, Debug)]
struct Figures {
    longest_wait_ms: f64,
    least_over_most: f64,
    /// The threads' CPU times, least over most.
    cpu_time_least_over_most: f64,
    per_cpu_least_over_most: f64,
    /// Least/most served among threads that ran mostly on the same CPU,
    /// the lowest over the CPUs that ran two or more (NaN when none did).
    within_cpu_least_over_most: f64,
    mops: f64,
    /// The threads' CPU time over the machine's (`CPUs x seconds`).
    cpu_share: f64,
    machine: Option<CpuSplit>,
}

/// `threads` threads call `op(lock, thread index, cs)` in a loop for
/// `dur`; per thread, the calls made and the longest one, and the seconds
/// measured.
fn contend<L: Send + Sync + 'static>(
    lock: &Arc<L>,
    threads: usize,
    dur: Duration,
    op: impl Fn(&L, usize, u32) + Copy + Send + 'static,
) -> (Vec<PerThread>, Window) {
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(threads + 1));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (lock, stop, start) = (lock.clone(), stop.clone(), start.clone());
            std::thread::spawn(move || {
                let cs = CS.load(Ordering::Relaxed);
                start.wait();
                let mut n = 0u64;
                let clock = cycle_clock();
                let mut longest = 0u64;
                let mut seen_on = [0u32; CPU_SLOTS];
                let fast_limit = FAST_CALL.as_nanos() as u64;
                let (mut fast_sum, mut fast_n) = (0u64, 0u64);
                // Relaxed: the flag only ends the loop; results come back
                // through `join`.
                while !stop.load(Ordering::Relaxed) {
                    let t = clock.now();
                    op(black_box(&*lock), i, cs);
                    let took = clock.now().saturating_sub(t);
                    longest = longest.max(took);
                    if took < fast_limit {
                        fast_sum += took;
                        fast_n += 1;
                    }
                    if n.is_multiple_of(CPU_SAMPLE_EVERY) {
                        seen_on[current_cpu()] += 1;
                    }
                    n += 1;
                }
                let main_cpu = (0..CPU_SLOTS).max_by_key(|&c| seen_on[c]).unwrap_or(0);
                let samples: u32 = seen_on.iter().sum();
                PerThread {
                    calls: n,
                    longest: Duration::from_nanos(longest),
                    cpu_secs: thread_cpu_secs(),
                    main_cpu,
                    on_main_cpu: f64::from(seen_on[main_cpu]) / f64::from(samples.max(1)),
                    fast_call_ns: fast_sum as f64 / fast_n.max(1) as f64,
                }
            })
        })
        .collect();
    start.wait();
    let t = Instant::now();
    let before = CpuTicks::now();
    std::thread::sleep(dur);
    // Relaxed: see the load; `join` orders the results.
    stop.store(true, Ordering::Relaxed);
    let per: Vec<PerThread> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    let machine = CpuSplit::between(before, CpuTicks::now());
    let secs = t.elapsed().as_secs_f64();
    (per, Window { secs, machine })
}

/// `threads` threads contend for `dur`; per thread, acquisitions and the
/// longest one.
fn run<L: BenchLock>(threads: usize, dur: Duration) -> Figures {
    let lock = Arc::new(L::new());
    let (per, window) = contend(&lock, threads, dur, |l: &L, _, cs| l.incr(cs));
    let total: u64 = per.iter().map(|p| p.calls).sum();
    assert_eq!(lock.get(), total, "mutual exclusion violated");
    if DETAIL.load(Ordering::Relaxed) {
        print_detail(std::any::type_name::<L>(), &per);
    }
    figures(&per, window)
}

/// `--profile`: the default `Mutex`'s policy, its wait profile recorded.
type ProfiledMutex = lock_api::Mutex<waitwise::mutex::RawTtasMutex, u64>;

/// One `--profile` run: all acquisitions, the ones that waited, and the
/// ones among those that slept.
#[derive(Clone, Copy, Debug)]
struct WaitCounts {
    acquisitions: u64,
    waited: u64,
    slept: u64,
}

/// `threads` threads contend for `dur` on a default `Mutex` that records
/// its waits.
fn run_profiled(threads: usize, dur: Duration) -> WaitCounts {
    let raw =
        waitwise::mutex::RawTtasMutex::with_options(waitwise::WaitOptions::new().profile(true));
    let lock = Arc::new(ProfiledMutex::from_raw(raw, 0));
    let (per, _) = contend(&lock, threads, dur, |l: &ProfiledMutex, _, cs| l.incr(cs));
    // SAFETY: the raw lock is only read for its profile; it is not locked
    // or unlocked through this reference.
    let profile = unsafe { lock.raw() }
        .wait_profile()
        .expect("profiling is on");
    WaitCounts {
        acquisitions: per.iter().map(|p| p.calls).sum(),
        waited: profile.total_waits,
        slept: profile.blocks,
    }
}

/// One run's threads, most served first, on stderr (`--detail`).
fn print_detail(name: &str, per: &[PerThread]) {
    let mut per = per.to_vec();
    per.sort_by_key(|p| std::cmp::Reverse(p.calls));
    let most = per.first().map_or(1, |p| p.calls.max(1)) as f64;
    eprintln!(
        "{name}: calls (of the most), CPU s, main CPU (share of the samples there), mean ns of the calls that did not wait"
    );
    for p in &per {
        eprintln!(
            "  {:>10} {:.2} {:.3} cpu{} ({:.0}%) {:.1}",
            p.calls,
            p.calls as f64 / most,
            p.cpu_secs,
            p.main_cpu,
            p.on_main_cpu * 100.0,
            p.fast_call_ns
        );
    }
}

/// The figures of one role (readers or writers) from its threads'
/// acquisition counts and longest waits, over the run's `window`.
fn figures(per: &[PerThread], window: Window) -> Figures {
    let total: u64 = per.iter().map(|p| p.calls).sum();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let cpu_secs: f64 = per.iter().map(|p| p.cpu_secs).sum();
    Figures {
        longest_wait_ms: per
            .iter()
            .map(|p| p.longest.as_secs_f64() * 1e3)
            .fold(0.0, f64::max),
        least_over_most: least_over_most(per.iter().map(|p| p.calls as f64)),
        cpu_time_least_over_most: least_over_most(per.iter().map(|p| p.cpu_secs)),
        per_cpu_least_over_most: least_over_most(
            per.iter().map(|p| p.calls as f64 / p.cpu_secs.max(1e-9)),
        ),
        within_cpu_least_over_most: within_cpu_least_over_most(per),
        mops: total as f64 / window.secs / 1e6,
        cpu_share: cpu_secs / (cpus * window.secs),
        machine: window.machine,
    }
}

/// Least/most served among the threads that ran mostly on one CPU, the
/// lowest over the CPUs that two or more threads ran on (NaN when none):
/// the unevenness of threads the machine ran alike. Two virtual CPUs can
/// run at different speeds (a busy host), which weighs on every thread of
/// one of them and shows in the all-threads ratio, not in this one.
fn within_cpu_least_over_most(per: &[PerThread]) -> f64 {
    (0..CPU_SLOTS)
        .filter_map(|cpu| {
            let calls: Vec<f64> = per
                .iter()
                .filter(|p| p.main_cpu == cpu)
                .map(|p| p.calls as f64)
                .collect();
            (calls.len() >= 2).then(|| least_over_most(calls.iter().copied()))
        })
        .fold(f64::NAN, f64::min)
}

/// `threads` threads, a quarter of them (at least one) writers, contend
/// for `dur`; the readers' and the writers' figures.
fn run_rw<L: BenchRwLock>(threads: usize, dur: Duration) -> [Figures; 2] {
    let writers = rw_writers(threads);
    let lock = Arc::new(L::new());
    // The first `writers` threads write.
    let (per, window) = contend(&lock, threads, dur, move |l: &L, i, cs| {
        if i < writers {
            l.incr(cs);
        } else {
            black_box(l.read(cs));
        }
    });
    let written: u64 = per[..writers].iter().map(|p| p.calls).sum();
    assert_eq!(lock.read(0), written, "a write was lost");
    [
        figures(&per[writers..], window),
        figures(&per[..writers], window),
    ]
}

struct RwCandidate {
    name: &'static str,
    run: fn(usize, Duration) -> [Figures; 2],
}

fn rw_candidate<L: BenchRwLock>(name: &'static str) -> RwCandidate {
    RwCandidate {
        name,
        run: run_rw::<L>,
    }
}

struct Candidate {
    name: &'static str,
    run: fn(usize, Duration) -> Figures,
}

fn candidate<L: BenchLock>(name: &'static str) -> Candidate {
    Candidate {
        name,
        run: run::<L>,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = arg(&args, "--threads").unwrap_or(8);
    let dur = Duration::from_millis(arg(&args, "--ms").unwrap_or(1000));
    let runs: usize = arg::<usize>(&args, "--runs").unwrap_or(3).max(1);
    let cs: u32 = arg(&args, "--cs").unwrap_or(0);
    CS.store(cs, Ordering::Relaxed);
    WRITERS.store(arg(&args, "--writers").unwrap_or(0), Ordering::Relaxed);
    DETAIL.store(args.iter().any(|a| a == "--detail"), Ordering::Relaxed);
    let profile = args.iter().any(|a| a == "--profile");

    type Pl = lock_api::Mutex<parking_lot::RawMutex, u64>;
    let mut cands = vec![
        candidate::<waitwise::mutex::Mutex<u64>>("waitwise::Mutex"),
        candidate::<waitwise::mutex::TicketMutex<u64>>("TicketMutex"),
        candidate::<waitwise::mutex::McsMutex<u64>>("McsMutex"),
    ];
    // The A/A control, then parking_lot last: the ratios' base.
    cands.push(candidate::<Pl>("parking_lot again"));
    cands.push(candidate::<Pl>("parking_lot"));
    // Interleaved runs (run 1 of each, then run 2 of each, ...): machine
    // drift hits all alike.
    let mut figs: Vec<Vec<Figures>> = vec![Vec::new(); cands.len()];
    let mut speeds = Vec::new();
    let mut profiled = Vec::new();
    for _ in 0..runs {
        speeds.extend(cpu_speed_least_over_most(CPU_SPEED_PROBE));
        for (i, c) in cands.iter().enumerate() {
            figs[i].push((c.run)(threads, dur));
        }
        if profile {
            profiled.push(run_profiled(threads, dur));
        }
    }
    let med = |i: usize, f: fn(&Figures) -> f64| median(figs[i].iter().map(f).collect());
    let pl = cands.len() - 1;
    let (pl_wait, pl_mops) = (med(pl, |f| f.longest_wait_ms), med(pl, |f| f.mops));
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "{threads} threads on {cpus} CPUs, {} ms per run, {cs} spin-loop hints in the critical section, medians of {runs} interleaved runs",
        dur.as_millis()
    );
    // Not settled before the runs (`mutex_bench` does): the locks run with
    // the `B` a program gets, learned from the process's own wake-ups.
    let b = waitwise::policy::block_cost();
    println!(
        "B after the runs = {:.0} ns ({}): the host's wake-up mode shows in it, and the default Mutex's polling limits, turn stalls and hand-off pace follow it",
        b.ns,
        b.source.name()
    );
    if !speeds.is_empty() {
        let lo = speeds.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "CPU speeds before each round (a loop pinned to each CPU, all at once, {} ms): slowest/fastest median {:.2}, least {lo:.2}",
            CPU_SPEED_PROBE.as_millis(),
            median(speeds),
        );
    }
    println!();
    println!("| mutex | longest wait ms | vs parking_lot | least/most served | CPU time least/most | per CPU-s | within a CPU | threads' CPU share | Mops/s | vs parking_lot |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (i, c) in cands.iter().enumerate() {
        let wait = med(i, |f| f.longest_wait_ms);
        let mops = med(i, |f| f.mops);
        println!(
            "| {} | {wait:.2} | {:.2}x | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {mops:.2} | {:.2}x |",
            c.name,
            wait / pl_wait,
            med(i, |f| f.least_over_most),
            med(i, |f| f.cpu_time_least_over_most),
            med(i, |f| f.per_cpu_least_over_most),
            med(i, |f| f.within_cpu_least_over_most),
            med(i, |f| f.cpu_share),
            mops / pl_mops
        );
    }
    print_disturbed(&cands, &figs);

    if !profiled.is_empty() {
        println!("\nwaitwise::Mutex recording its waits (--profile), one line per run:");
        for c in &profiled {
            println!(
                "  {} acquisitions, {} waited ({:.2}%), {} of those slept ({:.2}%)",
                c.acquisitions,
                c.waited,
                100.0 * c.waited as f64 / c.acquisitions.max(1) as f64,
                c.slept,
                100.0 * c.slept as f64 / c.waited.max(1) as f64,
            );
        }
    }

    rw_table(threads, dur, runs);
}

/// The runs whose threads got less than [`DISTURBED_BELOW`] of the
/// machine's CPU time, and where the rest went.
fn print_disturbed(cands: &[Candidate], figs: &[Vec<Figures>]) {
    let mut first = true;
    for (c, runs) in cands.iter().zip(figs) {
        for (run, f) in runs.iter().enumerate() {
            if f.cpu_share >= DISTURBED_BELOW {
                continue;
            }
            if first {
                println!(
                    "\nDisturbed runs (the threads got less than {DISTURBED_BELOW} of the CPUs' time):"
                );
                first = false;
            }
            let split = describe_split(f.machine, f.cpu_share);
            println!(
                "- run {}, {}: the threads had {:.0}% of the CPUs' time; {split}; least/most served {:.2}, longest wait {:.2} ms",
                run + 1,
                c.name,
                f.cpu_share * 100.0,
                f.least_over_most,
                f.longest_wait_ms
            );
        }
    }
}

/// The reader-writer locks' table: per role, medians of `runs`
/// interleaved runs.
fn rw_table(threads: usize, dur: Duration, runs: usize) {
    type PlRw = lock_api::RwLock<parking_lot::RawRwLock, u64>;
    let cands = [
        rw_candidate::<waitwise::mutex::RwLock<u64>>("waitwise::RwLock"),
        rw_candidate::<PlRw>("parking_lot::RwLock"),
        rw_candidate::<std::sync::RwLock<u64>>("std::sync::RwLock"),
    ];
    let mut figs: Vec<Vec<[Figures; 2]>> = vec![Vec::new(); cands.len()];
    for _ in 0..runs {
        for (i, c) in cands.iter().enumerate() {
            figs[i].push((c.run)(threads, dur));
        }
    }
    let med = |i: usize, role: usize, f: fn(&Figures) -> f64| {
        median(figs[i].iter().map(|r| f(&r[role])).collect())
    };
    let writers = rw_writers(threads);
    println!(
        "\n{} readers and {writers} writers, the same runs\n",
        threads - writers
    );
    println!("| rwlock | role | longest wait ms | least/most served | CPU time least/most | per CPU-s | Mops/s |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (i, c) in cands.iter().enumerate() {
        for (role, name) in [(0, "readers"), (1, "writers")] {
            println!(
                "| {} | {name} | {:.2} | {:.2} | {:.2} | {:.2} | {:.3} |",
                c.name,
                med(i, role, |f| f.longest_wait_ms),
                med(i, role, |f| f.least_over_most),
                med(i, role, |f| f.cpu_time_least_over_most),
                med(i, role, |f| f.per_cpu_least_over_most),
                med(i, role, |f| f.mops),
            );
        }
    }
}
