//! Barrier episode cost: waitwise's barriers against a pure-spin
//! sense-reversing barrier, `pthread_barrier_wait` and `std::sync::Barrier`,
//! at 2 threads (one per CPU on a 2-CPU machine) and 4 threads
//! (oversubscribed).
//!
//! ```text
//! cargo run -p waitwise --release --example barrier_bench
//! ```
//!
//! Each cell runs about [`BUDGET`] of episodes (calibrated from a short
//! run), [`RUNS`] times, interleaved with the other cells, and reports the
//! best and the median ns per episode. The last lines print the ratios
//! the barrier goals are judged by, twice: from the best figures, and as the median over
//! rounds of the ratio within a round. The second is the one to trust on a
//! VM: there a host's load switches every implementation between a fast
//! and a slow mode for tens to hundreds of milliseconds (a pure spin
//! barrier measured 23 and 236 ns per episode a second apart), and a round
//! of short interleaved runs mostly sees one mode. `-- quick` runs only the
//! cells those ratios need (and the explicit `s/b/0.62`, the default's
//! policy at 2 threads without its wake-chain breaking); `-- rounds` also
//! prints every round's figure. Other processes on the machine distort every
//! figure: run it on an idle machine.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use waitwise::barrier::{Barrier, DisseminationBarrier, PairBarrier, TopologyBarrier, TreeBarrier};
use waitwise::{Mechanism, Policy, WaitOptions};

/// Wall time each measured run aims at: short, so that the runs of one
/// round see the same mode of the machine.
const BUDGET: Duration = Duration::from_millis(30);
/// Runs per cell.
const RUNS: usize = 21;
/// Episodes of the first calibration run.
const CALIBRATION_EPISODES: usize = 20;
/// A calibration run at least this long sets the episode count.
const CALIBRATION_MIN: Duration = Duration::from_millis(10);
/// Most episodes a run does.
const MAX_EPISODES: usize = 2_000_000;

/// A barrier under test: `run_thread(tid, episodes)` is one thread's loop.
trait Bench: Sync {
    fn run_thread(&self, tid: usize, episodes: usize);
}

/// The textbook sense-reversing spin barrier (Mellor-Crummey & Scott 1991,
/// fig. 6 without the lock): a counter, a global sense, a local sense.
///
/// Orderings: the `count` decrements are an AcqRel RMW chain, so the last
/// arrival has seen every arrival's earlier writes; its Release store of
/// `sense` passes them, and its Relaxed reset of `count`, to the waiters'
/// Acquire loads, so each thread's next decrement sees the reset.
struct SpinBarrier {
    count: AtomicUsize,
    sense: AtomicBool,
    n: usize,
}

impl Bench for SpinBarrier {
    fn run_thread(&self, _tid: usize, episodes: usize) {
        // Acquire: more than needed; the sense left by the previous run is
        // ordered by this thread's spawn after that run's join, and no
        // episode of this run ends before every thread has read it.
        let mut local = !self.sense.load(Ordering::Acquire);
        for _ in 0..episodes {
            // AcqRel / Relaxed / Release: see the type's doc.
            if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.count.store(self.n, Ordering::Relaxed);
                self.sense.store(local, Ordering::Release);
            } else {
                // Acquire: pairs with the last arrival's Release store.
                while self.sense.load(Ordering::Acquire) != local {
                    std::hint::spin_loop();
                }
            }
            local = !local;
        }
    }
}

/// `pthread_barrier_t` from glibc.
struct PthreadBarrier(UnsafeCell<libc::pthread_barrier_t>);

// SAFETY: pthread barriers are made to be waited on from many threads at
// once; the cell only hands its address to pthread functions.
unsafe impl Sync for PthreadBarrier {}

impl PthreadBarrier {
    fn new(n: usize) -> Box<Self> {
        // SAFETY: an all-zero pthread_barrier_t is valid storage for init.
        let b = Box::new(Self(UnsafeCell::new(unsafe { std::mem::zeroed() })));
        // SAFETY: the barrier is boxed (its address never changes) and not
        // yet shared; a null attribute pointer asks for the defaults.
        let rc = unsafe { libc::pthread_barrier_init(b.0.get(), std::ptr::null(), n as u32) };
        assert_eq!(rc, 0, "pthread_barrier_init");
        b
    }
}

impl Drop for PthreadBarrier {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, and no thread waits any more (the
        // scoped threads that used it have joined).
        unsafe { libc::pthread_barrier_destroy(self.0.get()) };
    }
}

impl Bench for PthreadBarrier {
    fn run_thread(&self, _tid: usize, episodes: usize) {
        for _ in 0..episodes {
            // SAFETY: initialized in `new`, alive while `self` is borrowed.
            unsafe { libc::pthread_barrier_wait(self.0.get()) };
        }
    }
}

impl Bench for std::sync::Barrier {
    fn run_thread(&self, _tid: usize, episodes: usize) {
        for _ in 0..episodes {
            self.wait();
        }
    }
}

impl Bench for Barrier {
    fn run_thread(&self, _tid: usize, episodes: usize) {
        for _ in 0..episodes {
            self.wait();
        }
    }
}

impl Bench for PairBarrier {
    fn run_thread(&self, _tid: usize, episodes: usize) {
        for _ in 0..episodes {
            self.wait();
        }
    }
}

impl Bench for TreeBarrier {
    fn run_thread(&self, tid: usize, episodes: usize) {
        let h = self.handle(tid).expect("one handle per thread");
        for _ in 0..episodes {
            h.wait();
        }
    }
}

impl Bench for DisseminationBarrier {
    fn run_thread(&self, tid: usize, episodes: usize) {
        let h = self.handle(tid).expect("one handle per thread");
        for _ in 0..episodes {
            h.wait();
        }
    }
}

impl Bench for TopologyBarrier {
    fn run_thread(&self, tid: usize, episodes: usize) {
        let h = self.handle(tid).expect("one handle per thread");
        for _ in 0..episodes {
            h.wait();
        }
    }
}

/// Wall time of `episodes` episodes on `threads` threads: from the first
/// thread's start to the last one's end, stamped by the threads themselves
/// (a main thread stamping after the start gate may wake late from it, a
/// futex wake-up of tens of µs on a VM, and time a short run as ~0).
fn time_run(bench: &dyn Bench, threads: usize, episodes: usize) -> Duration {
    let start = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|tid| {
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    let t0 = Instant::now();
                    bench.run_thread(tid, episodes);
                    (t0, Instant::now())
                })
            })
            .collect();
        let spans: Vec<(Instant, Instant)> = workers
            .into_iter()
            .map(|w| w.join().expect("bench thread panicked"))
            .collect();
        let first = spans
            .iter()
            .map(|s| s.0)
            .min()
            .expect("at least one thread");
        let last = spans
            .iter()
            .map(|s| s.1)
            .max()
            .expect("at least one thread");
        last - first
    })
}

/// Episodes that make one run of `bench` last about [`BUDGET`]: after a
/// warm-up run, grows a trial run until it lasts [`CALIBRATION_MIN`], then
/// scales. (Without the warm-up, one-time costs of a first wait, such as
/// the cycle clock's calibration, once timed 20 episodes at 10 ms and left
/// runs of 57 episodes, too short for anything but start-up.)
fn calibrate(bench: &dyn Bench, threads: usize) -> usize {
    time_run(bench, threads, CALIBRATION_EPISODES);
    let mut episodes = CALIBRATION_EPISODES;
    loop {
        let t = time_run(bench, threads, episodes);
        if t >= CALIBRATION_MIN || episodes >= MAX_EPISODES {
            let per = t.as_secs_f64() / episodes as f64;
            return ((BUDGET.as_secs_f64() / per) as usize)
                .clamp(CALIBRATION_EPISODES, MAX_EPISODES);
        }
        episodes *= 4;
    }
}

/// ns per episode of every case on `threads` threads, [`RUNS`] rounds with
/// the cases interleaved (so interference from other processes spreads
/// over all of them): per case, one sample per round.
fn measure(cases: &[(String, Box<dyn Bench>)], threads: usize) -> Vec<Vec<f64>> {
    let episodes: Vec<usize> = cases
        .iter()
        .map(|(_, b)| calibrate(b.as_ref(), threads))
        .collect();
    let mut samples = vec![Vec::with_capacity(RUNS); cases.len()];
    for _ in 0..RUNS {
        for (i, (_, bench)) in cases.iter().enumerate() {
            let t = time_run(bench.as_ref(), threads, episodes[i]);
            samples[i].push(t.as_nanos() as f64 / episodes[i] as f64);
        }
    }
    samples
}

/// The median of `v` (upper median for an even count); NaN when empty.
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The smallest of `v`; NaN when empty.
fn best(v: &[f64]) -> f64 {
    v.iter().copied().reduce(f64::min).unwrap_or(f64::NAN)
}

/// Cells `quick` keeps.
const QUICK: [&str; 4] = [SPIN, PTHREAD, DEFAULT, TWO_PHASE];
const SPIN: &str = "spin (sense-reversing, s//inf)";
const PTHREAD: &str = "pthread_barrier_wait";
const DEFAULT: &str = "waitwise Barrier (default)";
const TWO_PHASE: &str = "waitwise Barrier s/b/0.62";

fn main() {
    // Measure B before any benchmark thread runs, over several spaced
    // calibrations as the `waitwise` tool does (see `policy::block_cost`).
    let _ =
        waitwise::policy::block_cost::settle_block_cost(8, std::time::Duration::from_millis(10));
    let quick = std::env::args().any(|a| a == "quick");
    let show_rounds = std::env::args().any(|a| a == "rounds");
    println!(
        "allowed CPUs: {}, block cost B = {:.0} ns, default barrier policy for 2 / 4 threads: {} / {}",
        waitwise::barrier::allowed_cpus(),
        waitwise::policy::block_ns(),
        waitwise::barrier::default_policy(2),
        waitwise::barrier::default_policy(4),
    );
    println!(
        "{:<34} {:>7} {:>12} {:>12}",
        "implementation", "threads", "best ns/ep", "median ns/ep"
    );
    let mut results = Vec::new();
    for threads in [2usize, 4] {
        let cpus: Vec<usize> = (0..threads)
            .map(|i| i % waitwise::barrier::allowed_cpus())
            .collect();
        let topo = waitwise::platform::topology::Topology::current().ok();
        let with = |p: Policy| WaitOptions::new().policy(p);
        let mut cases: Vec<(String, Box<dyn Bench>)> = vec![
            (
                SPIN.into(),
                Box::new(SpinBarrier {
                    count: AtomicUsize::new(threads),
                    sense: AtomicBool::new(false),
                    n: threads,
                }),
            ),
            (PTHREAD.into(), PthreadBarrier::new(threads)),
            (
                "std::sync::Barrier".into(),
                Box::new(std::sync::Barrier::new(threads)),
            ),
            (
                "waitwise Barrier (default)".into(),
                Box::new(Barrier::new(threads)),
            ),
            (
                "waitwise Barrier /b/0".into(),
                Box::new(Barrier::with_options(threads, with(Policy::always_block()))),
            ),
            (
                TWO_PHASE.into(),
                Box::new(Barrier::with_options(
                    threads,
                    with(Policy::two_phase(0.62)),
                )),
            ),
            (
                "waitwise Barrier s//inf".into(),
                Box::new(Barrier::with_options(threads, with(Policy::always_spin()))),
            ),
            (
                "waitwise Barrier Ss/b/0.62".into(),
                Box::new(Barrier::with_options(
                    threads,
                    with(Policy::two_phase(0.62).with_mechanism(Mechanism::Yield)),
                )),
            ),
            (
                "waitwise TreeBarrier k=2".into(),
                Box::new(TreeBarrier::new(threads, 2)),
            ),
            (
                "waitwise DisseminationBarrier".into(),
                Box::new(DisseminationBarrier::new(threads)),
            ),
        ];
        if threads == 2 {
            cases.push(("waitwise PairBarrier".into(), Box::new(PairBarrier::new())));
        }
        if let Some(b) = topo.and_then(|t| TopologyBarrier::new(&t, &cpus).ok()) {
            cases.push(("waitwise TopologyBarrier".into(), Box::new(b)));
        }
        if quick {
            cases.retain(|(name, _)| QUICK.contains(&name.as_str()));
        }
        for ((name, _), samples) in cases.iter().zip(measure(&cases, threads)) {
            println!(
                "{name:<34} {threads:>7} {:>12.0} {:>12.0}",
                best(&samples),
                median(&samples)
            );
            if show_rounds {
                let rounds: Vec<u64> = samples.iter().map(|&x| x as u64).collect();
                println!("  every round: {rounds:?}");
            }
            results.push((name.clone(), threads, samples));
        }
    }
    let get = |name: &str, threads: usize| -> &[f64] {
        results
            .iter()
            .find(|(n, t, _)| n == name && *t == threads)
            .map_or(&[], |r| &r.2)
    };
    // (ratio of the best figures, median over rounds of the round's ratio)
    let ratio = |a: &str, b: &str, threads: usize| {
        let (a, b) = (get(a, threads), get(b, threads));
        let per_round: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
        (best(a) / best(b), median(&per_round))
    };
    let fmt = |(of_best, of_rounds): (f64, f64)| {
        format!("{of_rounds:.2} by round ({of_best:.2} of the best)")
    };
    println!();
    println!(
        "2 threads: Barrier / spin = {} (goal <= 1.3); pthread / Barrier = {} (goal >= 5)",
        fmt(ratio(DEFAULT, SPIN, 2)),
        fmt(ratio(PTHREAD, DEFAULT, 2)),
    );
    println!(
        "4 threads: Barrier / pthread = {} (goal <= 1.5); spin = {:.0} ns/episode",
        fmt(ratio(DEFAULT, PTHREAD, 4)),
        median(get(SPIN, 4)),
    );
}
