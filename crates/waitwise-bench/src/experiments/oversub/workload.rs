//! The three loops of the oversubscription experiment (Lim & Agarwal's
//! producer-consumer, barrier and mutual-exclusion benchmarks, reduced to
//! their synchronization pattern), each built for one waiting choice.
//!
//! - **producer-consumer**: a ring of `T` threads. Each iteration thread
//!   `i` works, hands a token to thread `i + 1` (`release` on its link)
//!   and takes the token from thread `i - 1` (`acquire` on its own link):
//!   a 1-D pipeline like Jacobi's neighbour exchange. Links are counting
//!   semaphores, since a producer may run ahead of its consumer.
//! - **barrier**: each iteration every thread works a pseudo-random amount
//!   (uniform in `[W/2, 3W/2]`, the same sequence for every waiting
//!   choice), then waits at one barrier.
//! - **mutex**: each iteration a thread takes one lock, works `C` inside,
//!   releases, and works `W` outside. The counter updated inside is
//!   checked at the end (a lost update would mean a broken lock).

use super::peers::{PthreadMutex, PthreadSemaphore};
use crate::contender::barrier::pthread::PthreadBarrier;
use crate::contender::barrier::{waitwise_barrier, BarrierContender};
use crate::kernel::MatMul;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use waitwise::mutex::RawTtasMutex;
use waitwise::semaphore::Semaphore;
use waitwise::{Policy, SyncKind, WaitOptions};

/// The number of CPUs the mutex loop's iterations are sized for (see
/// [`Workload::iterations`]): a 2-CPU machine, where a quick `oversub`
/// takes about a minute and a half.
pub const MUTEX_REFERENCE_CPUS: usize = 2;

/// Which loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// The token ring.
    ProducerConsumer,
    /// Work, then a barrier.
    Barrier,
    /// Lock, work, unlock, work.
    Mutex,
}

impl Workload {
    /// All three, in report order.
    pub const ALL: [Workload; 3] = [
        Workload::ProducerConsumer,
        Workload::Barrier,
        Workload::Mutex,
    ];

    /// Stable name for tables and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Workload::ProducerConsumer => "producer-consumer",
            Workload::Barrier => "barrier",
            Workload::Mutex => "mutex",
        }
    }

    /// The synchronization kind whose `alpha` applies.
    pub const fn kind(self) -> SyncKind {
        match self {
            Workload::ProducerConsumer => SyncKind::ProducerConsumer,
            Workload::Barrier => SyncKind::Barrier,
            Workload::Mutex => SyncKind::Mutex,
        }
    }

    /// Iterations per thread relative to [`Config::iterations`]: a mutex
    /// iteration waits for at most one critical section (a few µs) where
    /// the other loops may wait a scheduler time slice under `s//inf`, so
    /// the mutex loop runs 4x as many to get a run of comparable length
    /// (at 1x its 15 ms runs were noise-bound).
    ///
    /// [`Config::iterations`]: super::Config::iterations
    pub const fn iteration_scale(self) -> u64 {
        match self {
            Workload::Mutex => 4,
            _ => 1,
        }
    }

    /// Iterations per thread at matched load (one thread per CPU), relative
    /// to the oversubscribed runs': a matched producer-consumer or barrier
    /// iteration waits only for the other threads' work, so at the quick
    /// preset's 400 iterations a run lasts a few ms, shorter than the
    /// host's scheduling of a VM's vCPUs varies, and the ratio of two
    /// policies' runs is too noisy to judge a few percent (five times the
    /// iterations narrow the 95% intervals several times). The mutex loop's
    /// runs are long enough already ([`Workload::iteration_scale`]).
    pub const fn matched_iteration_scale(self) -> u64 {
        match self {
            Workload::Mutex => 1,
            _ => 5,
        }
    }

    /// Iterations per thread of a run with `multiplier` threads per CPU on
    /// `cpus` CPUs, for `base` configured iterations.
    ///
    /// The mutex loop's critical sections run one at a time, so once the
    /// lock saturates a run lasts about `threads x iterations x C`: its
    /// iterations are sized for [`MUTEX_REFERENCE_CPUS`] CPUs and shrink in
    /// proportion on larger machines (at least one), so that a run lasts as
    /// long there as on the reference machine instead of growing with the
    /// thread count. The other loops run in parallel, and their length does
    /// not depend on the number of CPUs.
    pub const fn iterations(self, base: u64, multiplier: usize, cpus: usize) -> u64 {
        let matched = if multiplier == 1 {
            self.matched_iteration_scale()
        } else {
            1
        };
        let n = base * self.iteration_scale() * matched;
        match self {
            Workload::Mutex if cpus > MUTEX_REFERENCE_CPUS => {
                let scaled = n * MUTEX_REFERENCE_CPUS as u64 / cpus as u64;
                if scaled == 0 {
                    1
                } else {
                    scaled
                }
            }
            _ => n,
        }
    }

    /// Measured runs per cell, relative to [`Config::runs`]: the mutex's
    /// waiting choices differ by a few percent in the matched runs (its
    /// waits are a small part of the loop: `/b/0`'s ~300 blocks cost ~8% of
    /// an 80 ms run), under one run's noise, so it gets twice the runs.
    ///
    /// [`Config::runs`]: super::Config::runs
    pub const fn run_scale(self) -> usize {
        match self {
            Workload::Mutex => 2,
            _ => 1,
        }
    }

    /// The pthread peer's name.
    pub const fn pthread_name(self) -> &'static str {
        match self {
            Workload::ProducerConsumer => "pthread_cond",
            Workload::Barrier => "pthread_barrier",
            Workload::Mutex => "pthread_mutex",
        }
    }
}

/// How waits wait.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Waiting {
    /// A waitwise object under this policy exactly.
    Policy(Policy),
    /// A waitwise object built without a policy: its own default.
    Default,
    /// A waitwise object under `adapt/b`, polling with the mechanism its
    /// own default polls with (`adaptive_as_default`): the default of the
    /// kinds that default to `adapt/b`, what the others would do if it
    /// were theirs.
    AdaptiveAsDefault,
    /// A waitwise object under its kind's static `s/b/alpha(kind)`,
    /// polling with the mechanism its own default polls with
    /// (`static_as_default`).
    StaticAsDefault,
    /// The pthread peer.
    Pthread,
}

/// The polling mechanism `workload`'s object uses by default with
/// `threads` threads: the semaphore's PAUSE, the barrier's PAUSE while the
/// threads fit on the CPUs and `yield` when they outnumber them, the
/// mutex's `yield`.
fn default_mechanism(workload: Workload, threads: usize) -> waitwise::Mechanism {
    match workload {
        Workload::ProducerConsumer => Policy::for_kind(SyncKind::ProducerConsumer).mechanism(),
        Workload::Barrier => waitwise::barrier::poll_mechanism(threads),
        Workload::Mutex => RawTtasMutex::new().policy().mechanism(),
    }
}

/// `adapt/b` with the polling mechanism `workload`'s object uses by
/// default with `threads` threads.
pub fn adaptive_as_default(workload: Workload, threads: usize) -> Policy {
    Policy::adaptive().with_mechanism(default_mechanism(workload, threads))
}

/// The kind's static `s/b/alpha(kind)` with the polling mechanism
/// `workload`'s object uses by default with `threads` threads (the
/// barrier: `s/b/0.62` or `Ss/b/0.62`).
pub fn static_as_default(workload: Workload, threads: usize) -> Policy {
    Policy::for_kind(workload.kind()).with_mechanism(default_mechanism(workload, threads))
}

/// A thread's work: `units` runs of the unit matrix multiply, counted.
pub struct Work {
    kernel: MatMul,
    /// Units done so far.
    pub units: u64,
    sum: f64,
}

impl Work {
    /// Work on `n x n` multiplies.
    pub fn new(n: usize) -> Self {
        Self {
            kernel: MatMul::new(n),
            units: 0,
            sum: 0.0,
        }
    }

    /// Does `units` units.
    #[inline]
    pub fn run(&mut self, units: u32) {
        self.sum += self.kernel.run_units(units);
        self.units += u64::from(units);
    }

    /// Keeps the results alive (call once at the end).
    pub fn finish(&self) {
        std::hint::black_box(self.sum);
    }
}

/// Sizes of one loop's work, in units.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Work per iteration `W` (the mean, for the barrier).
    pub work: u32,
    /// Work inside the lock `C` (mutex loop).
    pub critical: u32,
}

/// One loop, shared by its threads.
pub trait Loop: Sync {
    /// Iteration `iter` of thread `tid`.
    fn iteration(&self, tid: usize, iter: u64, work: &mut Work);
    /// Waits that slept, from the wait profiles (`None` for pthread).
    fn blocks(&self) -> Option<u64>;
    /// Checks the loop's invariant after `iterations` per thread.
    fn check(&self, _iterations: u64) -> Result<(), String> {
        Ok(())
    }
}

fn options(policy: Option<Policy>) -> WaitOptions {
    let o = WaitOptions::new().profile(true);
    match policy {
        Some(p) => o.policy(p),
        None => o,
    }
}

/// Builds `workload` for `threads` threads waiting as `waiting` says.
pub fn build(workload: Workload, waiting: Waiting, threads: usize, sizes: Sizes) -> Box<dyn Loop> {
    let policy = match waiting {
        Waiting::Policy(p) => Some(p),
        Waiting::AdaptiveAsDefault => Some(adaptive_as_default(workload, threads)),
        Waiting::StaticAsDefault => Some(static_as_default(workload, threads)),
        Waiting::Default | Waiting::Pthread => None,
    };
    let pthread = waiting == Waiting::Pthread;
    match workload {
        Workload::ProducerConsumer => Box::new(Ring {
            links: (0..threads)
                .map(|_| {
                    if pthread {
                        Link::Pthread(PthreadSemaphore::new())
                    } else {
                        Link::Waitwise(Semaphore::with_options(0, options(policy)))
                    }
                })
                .collect(),
            work: sizes.work,
        }),
        Workload::Barrier => {
            let barrier: Box<dyn BarrierContender> = if pthread {
                Box::new(PthreadBarrier::new(threads))
            } else {
                Box::new(waitwise_barrier::Central::new(threads, policy, true))
            };
            Box::new(BarrierLoop {
                barrier,
                work: sizes.work,
            })
        }
        Workload::Mutex => Box::new(MutexLoop {
            lock: if pthread {
                Lock::Pthread(PthreadMutex::new())
            } else {
                Lock::Waitwise(RawTtasMutex::with_options(options(policy)))
            },
            counter: AtomicU64::new(0),
            threads,
            sizes,
        }),
    }
}

// The waitwise variant is large because its word is cache-padded, which
// is what keeps the links of a ring off each other's cache lines.
#[allow(clippy::large_enum_variant)]
enum Link {
    Waitwise(Semaphore),
    Pthread(PthreadSemaphore),
}

struct Ring {
    links: Vec<Link>,
    work: u32,
}

impl Loop for Ring {
    fn iteration(&self, tid: usize, _iter: u64, work: &mut Work) {
        work.run(self.work);
        match &self.links[(tid + 1) % self.links.len()] {
            Link::Waitwise(s) => s.release(1),
            Link::Pthread(s) => s.release(),
        }
        match &self.links[tid] {
            Link::Waitwise(s) => s.acquire(),
            Link::Pthread(s) => s.acquire(),
        }
    }

    fn blocks(&self) -> Option<u64> {
        self.links
            .iter()
            .map(|l| match l {
                Link::Waitwise(s) => s.wait_profile().map(|p| p.blocks),
                Link::Pthread(_) => None,
            })
            .sum()
    }
}

struct BarrierLoop {
    barrier: Box<dyn BarrierContender>,
    work: u32,
}

/// splitmix64: the same pseudo-random sequence for every waiting choice.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Thread `tid`'s work at barrier iteration `iter`: uniform in
/// `[W/2, W/2 + W]`.
pub fn barrier_units(work: u32, tid: usize, iter: u64) -> u32 {
    let spread = u64::from(work) + 1;
    work / 2 + (mix(((tid as u64) << 40) ^ iter) % spread) as u32
}

impl Loop for BarrierLoop {
    fn iteration(&self, tid: usize, iter: u64, work: &mut Work) {
        work.run(barrier_units(self.work, tid, iter));
        self.barrier.wait(tid);
    }

    fn blocks(&self) -> Option<u64> {
        self.barrier.blocks()
    }
}

// The waitwise variant is large because its word is cache-padded.
#[allow(clippy::large_enum_variant)]
enum Lock {
    Waitwise(RawTtasMutex),
    Pthread(PthreadMutex),
}

struct MutexLoop {
    lock: Lock,
    counter: AtomicU64,
    threads: usize,
    sizes: Sizes,
}

impl MutexLoop {
    fn critical(&self, work: &mut Work) {
        work.run(self.sizes.critical);
        // A plain read-modify-write, not fetch_add: only the lock keeps it
        // exact. Relaxed: the lock orders it.
        let c = self.counter.load(Ordering::Relaxed);
        self.counter.store(c + 1, Ordering::Relaxed);
    }
}

impl Loop for MutexLoop {
    fn iteration(&self, _tid: usize, _iter: u64, work: &mut Work) {
        match &self.lock {
            Lock::Waitwise(m) => {
                m.lock();
                self.critical(work);
                // SAFETY: locked just above by this thread.
                unsafe { m.unlock() };
            }
            Lock::Pthread(m) => m.with_lock(|| self.critical(work)),
        }
        work.run(self.sizes.work);
    }

    fn blocks(&self) -> Option<u64> {
        match &self.lock {
            Lock::Waitwise(m) => m.wait_profile().map(|p| p.blocks).or(Some(0)),
            Lock::Pthread(_) => None,
        }
    }

    fn check(&self, iterations: u64) -> Result<(), String> {
        let want = iterations * self.threads as u64;
        // Relaxed: called after the loop threads were joined, which orders
        // every increment before this load.
        match self.counter.load(Ordering::Relaxed) {
            got if got == want => Ok(()),
            got => Err(format!(
                "mutex loop lost updates: counter {got}, expected {want}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrier_units_are_uniform_around_the_mean() {
        let v: Vec<u32> = (0..10_000)
            .map(|i| barrier_units(10, (i % 4) as usize, i))
            .collect();
        assert!(v.iter().all(|&u| (5..=15).contains(&u)));
        let mean = v.iter().map(|&u| f64::from(u)).sum::<f64>() / v.len() as f64;
        assert!((mean - 10.0).abs() < 0.3, "{mean}");
        assert_eq!(barrier_units(10, 1, 7), barrier_units(10, 1, 7));
    }

    #[test]
    fn matched_runs_of_the_short_loops_run_longer() {
        assert_eq!(Workload::ProducerConsumer.iterations(400, 1, 2), 2000);
        assert_eq!(Workload::Barrier.iterations(400, 1, 2), 2000);
        assert_eq!(Workload::ProducerConsumer.iterations(400, 2, 2), 400);
        assert_eq!(Workload::Barrier.iterations(400, 4, 2), 400);
        assert_eq!(Workload::Mutex.iterations(400, 1, 2), 1600);
        assert_eq!(Workload::Mutex.iterations(400, 4, 2), 1600);
    }

    #[test]
    fn the_mutex_loop_keeps_its_run_length_on_more_cpus() {
        // Sized for 2 CPUs; on 16 each thread does an eighth as many, so
        // threads x iterations (the serialized critical sections) stays.
        assert_eq!(Workload::Mutex.iterations(400, 1, 1), 1600);
        assert_eq!(Workload::Mutex.iterations(400, 1, 16), 200);
        assert_eq!(Workload::Mutex.iterations(400, 4, 16), 200);
        assert_eq!(Workload::Mutex.iterations(1, 1, 64), 1);
        // The parallel loops do not depend on the CPUs.
        assert_eq!(Workload::ProducerConsumer.iterations(400, 1, 16), 2000);
        assert_eq!(Workload::Barrier.iterations(400, 4, 16), 400);
    }

    #[test]
    fn adaptive_as_default_polls_like_each_default() {
        use waitwise::Mechanism;
        let cpus = waitwise::barrier::allowed_cpus();
        let pc = adaptive_as_default(Workload::ProducerConsumer, 2);
        assert_eq!(pc, Policy::adaptive());
        assert_eq!(
            adaptive_as_default(Workload::Barrier, cpus).mechanism(),
            Mechanism::Pause
        );
        assert_eq!(
            adaptive_as_default(Workload::Barrier, cpus + 1).mechanism(),
            Mechanism::Yield
        );
        let m = adaptive_as_default(Workload::Mutex, 2);
        assert_eq!(m.limit(), waitwise::policy::PollLimit::Adaptive);
        assert_eq!(m.mechanism(), RawTtasMutex::new().policy().mechanism());
    }
}
