//! `adapt/b`'s idle-CPU extension: a wait that reached its poll limit
//! keeps polling while no other thread wants its CPU, for at most
//! [`EXTENSION_CAP_NS`].
//!
//! # Why
//!
//! The poll limit of `adapt/b` stays in `[0, 2B]` (in switch-spinning
//! time for a wait that polls by yielding: `adaptive`, "Polling by
//! yielding"), and mostly far below `B` once long waits have been seen,
//! because its bound counts a poll as costing its time. That is the cost
//! when another thread could use the CPU. When nobody else wants it, a
//! poll costs no other thread anything, and a waiter that polls is woken
//! in ~100 ns instead of a futex wake-up's tens of µs: the static policies
//! that poll long (`s//inf`, `s/b/1`) win exactly there, in loops whose
//! threads fit on the CPUs. A waiter that sleeps there also leaves its
//! CPU empty, and a scheduler that places a woken thread beside its waker
//! (as a virtualized guest's does when its idle CPUs look preempted)
//! fills the other CPU again only with threads that sleep there, while
//! the runnable ones queue on one CPU behind a lock's holder.
//!
//! # The signal
//!
//! Whether the waiter's own CPU has other work: the extension yields
//! before each slice and times the yield on the cycle clock
//! ([`CpuDemand::of_yield`]). A yield that returns within
//! [`QUICK_YIELD_NS`] found the run queue empty, or gave the CPU only to
//! threads that gave it straight back (other waiters polling by
//! yielding): nothing on this CPU wanted its time, and polling on costs
//! nobody. A thread that does work on the CPU keeps it for its slice,
//! hundreds of µs to ms, and the yield returns late. The signal is per
//! CPU, sees every process and the hypervisor's steal alike (both make the
//! yield late), and costs only the yield the extension makes anyway. It
//! says the CPU was wanted after the fact, at most one slice late.
//!
//! Not chosen: the machine's runnable threads against its CPUs
//! ([`cpu_demand`], from `/proc/loadavg`; an `adapt/b` wait that polls by
//! yielding still takes that count, when it begins, as its
//! switch-spinning efficiency, [`runnable_per_cpu`]). It is
//! machine-wide, and misses what the extension is for on a guest whose
//! scheduler places a woken thread beside its waker: two CPUs, three
//! threads runnable on one behind a lock's holder and the other CPU idle,
//! count as busy, and the poller on the idle CPU would sleep. The
//! thread's involuntary context switches (`getrusage`) count a switch to
//! another poller as a want. [`force_demand`] pins the answer (tests,
//! experiments).
//!
//! # The extension (per wait)
//!
//! [`Extension::after_yield`] answers, each time the polling phase ran out
//! and the waiter yielded:
//! poll `SLICE_NS` more ([`Advice::Poll`]) while the signal says
//! [`CpuDemand::Idle`] and the wait has been extended less than
//! [`EXTENSION_CAP_NS`], else block ([`Advice::Block`]). A long wait
//! therefore still blocks, and a program whose threads all wait burns at
//! most the cap per wait. The engine runs the slices with the policy's own
//! mechanism and a `sched_yield` before each (`crate::wait_word`), in the
//! waits that run a whole polling phase through it: [`crate::WaitWord`]
//! and [`crate::WaitWordRef`] (events, barriers, condition variables), the
//! RwLock's writers, the [`Semaphore`](crate::semaphore::Semaphore) and
//! the TTAS mutex (the default [`crate::Mutex`]). The ticket and MCS
//! locks, the RwLock's readers, the channel and the pool poll to their
//! limit only.
//!
//! # The bound, per regime
//!
//! Lim & Agarwal's two-phase cost model, with a poll costing its time
//! only while a runnable thread could have used the CPU (otherwise the
//! CPU idles anyway):
//!
//! - **Contended** (the signal says [`CpuDemand::Busy`] or
//!   [`CpuDemand::Unknown`] when the limit is reached): no extension; the
//!   wait is `adapt/b`'s as before, within
//!   [`WORST_CASE_FACTOR`](super::adaptive::WORST_CASE_FACTOR) of the
//!   off-line optimum `min(t, B)` (the model crate's property test).
//! - **Idle** (the signal says [`CpuDemand::Idle`]): the extension's polls
//!   cost nothing, and it either ends the wait while polling (cost: the
//!   polls before the limit, less than without the extension, which would
//!   have blocked and paid `B`) or blocks as it would have at the limit.
//!   Per wait its cost is at most the contended cost, so the bound holds,
//!   and a wait shorter than its limit plus the cap costs only its polls
//!   before the limit.
//! - **A misjudged extension** (the CPU became wanted while the waiter
//!   polled): a thread that became runnable on the poller's CPU during a
//!   slice gets the CPU at the next yield, at most [`SLICE_NS`] later,
//!   and the late yield ends the extension. A thread that worked less
//!   than [`QUICK_YIELD_NS`] during a yield, and so was judged no work,
//!   waits at most one slice more when it wants the CPU again. So on any
//!   wait sequence,
//!   `cost <= WORST_CASE_FACTOR * OPT + SLICE_NS * m`, `m` the number of
//!   extended waits the signal misjudged (an additive term per such
//!   wait, no multiplicative one).
//!
//! # The cache on the wait path
//!
//! The machine-wide count ([`cpu_demand`]) also decides whether a default
//! wait polls at all
//! ([`polling_holds_wanted_cpu`](super::polling_holds_wanted_cpu)): it
//! blocks at once while more threads are runnable than CPUs are online.
//! The count is cached for the process and read again when older than
//! [`SIGNAL_MAX_AGE_NS`]; a read is a system call of about a microsecond.
//! The first wait of each period that made that read as it started would
//! notice its release that much late: with short waits back to back (two
//! threads meeting at a barrier every microsecond), a few waits in a
//! hundred, their tail. So the read is left to waits that are long
//! already:
//!
//! - a wait that starts takes the cached answer however old
//!   ([`demand_at_wait_start`]), unless it says [`CpuDemand::Busy`] and
//!   is stale: that one is read again first, since acting on it means
//!   blocking, which costs more than the read;
//! - a wait that has polled to its limit, or is about to sleep, reads a
//!   stale answer again ([`refresh_stale_demand`]) for the waits after it.
//!
//! A stale answer other than `Busy` lets waits poll to their limits, which
//! is what the policy does without the rule and what its bound counts at
//! full cost (`adaptive`, "The bound"). The first of them that lasts past
//! its limit, or sleeps, reads the machine again; while every wait ends
//! sooner, nobody waits long enough for polling to keep a runnable thread
//! from a CPU for long.
//!
//! # Memory ordering
//!
//! The cache ([`DemandCache`]) is two words, each a self-contained number
//! read and written `Relaxed`: the answer is a hint that publishes no
//! memory. Claiming a refresh is one `Relaxed` CAS on the stamp, so that
//! one thread per period reads the file; a reader that loses, or reads
//! while the winner reads, uses the previous answer (stale by one read).

use waitwise_platform::shim::{AtomicU32, AtomicU64, Ordering};

/// Longest extension of one wait, ns: KVM guest halt polling's cap
/// (`guest_halt_poll_ns`, 200 µs), the same trade (poll an idle CPU
/// rather than pay a wake-up) made by a peer. Guessed for waitwise.
pub const EXTENSION_CAP_NS: u64 = 200_000;

/// One slice of extended polling, ns, after which the poller yields and
/// looks at the signal again. Guessed: short against the cap and a
/// scheduler's wake-up granularity, long against a `sched_yield` (~1 µs)
/// so that yielding costs a few % of a CPU that idles anyway.
pub const SLICE_NS: u64 = 10_000;

/// A `sched_yield` shorter than this, ns, ran no work on the CPU (module
/// docs, "The signal"). Measured with 8 threads on a lock, the yields of
/// the extension in a log2 histogram: a yield to an empty run queue, or to
/// another waiter that yields straight back, takes a few µs; a thread that
/// works keeps the CPU until it waits itself or for its slice, tens of µs
/// or more. With the line at the fastest of those, waiters that share a
/// CPU judge each other busy and sleep, and the runnable threads gather on
/// one CPU; a line above the waiters' yields spreads them.
pub const QUICK_YIELD_NS: u64 = 8_000;

/// The cached signal is read again when older than this, ns (by the
/// waits that module docs, "The cache on the wait path", name): at ~1 µs
/// a read, at most ~1% of one CPU per process however many threads wait.
/// Guessed.
pub const SIGNAL_MAX_AGE_NS: u64 = 100_000;

/// What the idle-CPU signal says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuDemand {
    /// Every runnable thread of the machine has a CPU (polling is free).
    Idle,
    /// More threads are runnable than CPUs are online.
    Busy,
    /// Not known (no `/proc`, or not read yet): treated as busy.
    Unknown,
}

impl CpuDemand {
    const fn encode(self) -> u32 {
        match self {
            CpuDemand::Unknown => 0,
            CpuDemand::Idle => 1,
            CpuDemand::Busy => 2,
        }
    }

    const fn decode(word: u32) -> Self {
        match word {
            1 => CpuDemand::Idle,
            2 => CpuDemand::Busy,
            _ => CpuDemand::Unknown,
        }
    }

    /// The demand on a thread's own CPU from how long its `sched_yield`
    /// took: [`CpuDemand::Idle`] under [`QUICK_YIELD_NS`].
    pub fn of_yield(yield_ns: u64) -> Self {
        if yield_ns < QUICK_YIELD_NS {
            CpuDemand::Idle
        } else {
            CpuDemand::Busy
        }
    }

    /// The demand of `runnable` threads (`None`: not known) on `cpus`.
    pub fn of(runnable: Option<u32>, cpus: u32) -> Self {
        match runnable {
            Some(n) if waitwise_platform::runnable::fits(n, cpus) => CpuDemand::Idle,
            Some(_) => CpuDemand::Busy,
            None => CpuDemand::Unknown,
        }
    }
}

/// What a wait whose polling phase ran out does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// Poll this many ns more, then ask again.
    Poll {
        /// ns.
        ns: u64,
    },
    /// Block.
    Block,
}

/// The extension's decision (pure): poll one more slice, cut to the cap,
/// while `demand` is [`CpuDemand::Idle`] and `extended_ns` is under the
/// cap; else block.
#[inline]
pub fn advise(demand: CpuDemand, extended_ns: u64) -> Advice {
    if demand == CpuDemand::Idle && extended_ns < EXTENSION_CAP_NS {
        Advice::Poll {
            ns: SLICE_NS.min(EXTENSION_CAP_NS - extended_ns),
        }
    } else {
        Advice::Block
    }
}

/// One wait's extension: how far it has been extended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extension {
    extended_ns: u64,
}

impl Extension {
    /// A wait not extended yet.
    pub const fn new() -> Self {
        Self { extended_ns: 0 }
    }

    /// How far this wait has been extended, ns.
    pub fn extended_ns(&self) -> u64 {
        self.extended_ns
    }

    /// The next step with `demand` (pure): [`advise`], counting the slice
    /// it grants as spent.
    #[inline]
    pub fn next_with(&mut self, demand: CpuDemand) -> Advice {
        let advice = advise(demand, self.extended_ns);
        if let Advice::Poll { ns } = advice {
            self.extended_ns += ns;
        }
        advice
    }

    /// The next step after a yield that took `yield_ns`:
    /// [`Extension::next_with`] the demand on the waiter's own CPU
    /// ([`CpuDemand::of_yield`]), unless [`force_demand`] pinned one.
    #[cfg(not(loom))]
    #[inline]
    pub fn after_yield(&mut self, yield_ns: u64) -> Advice {
        let demand = forced_demand().unwrap_or(CpuDemand::of_yield(yield_ns));
        self.next_with(demand)
    }
}

/// The cached signal: the answer and when it was read (module docs,
/// "Memory ordering").
#[derive(Debug)]
pub struct DemandCache {
    /// Clock ticks of the last claimed read; 0: never read.
    stamp: AtomicU64,
    /// The last answer, [`CpuDemand::encode`]d.
    demand: AtomicU32,
}

impl DemandCache {
    crate::loom_const::const_unless_loom! {
        /// A cache that has read nothing ([`CpuDemand::Unknown`]).
        pub fn new() -> Self {
            Self {
                stamp: AtomicU64::new(0),
                demand: AtomicU32::new(0),
            }
        }
    }

    /// The answer at clock reading `now`: the cached one if it was read
    /// less than `max_age` ticks ago, else the caller claims the refresh
    /// (one CAS on the stamp), runs `read` and stores its answer. A caller
    /// that loses the claim gets the previous answer. A clock reading
    /// before the stamp (another clock source, another CPU's TSC) counts
    /// as stale.
    #[inline]
    pub fn get(&self, now: u64, max_age: u64, read: impl FnOnce() -> CpuDemand) -> CpuDemand {
        // Relaxed throughout (module docs, "Memory ordering").
        let stamp = self.stamp.load(Ordering::Relaxed);
        if stamp != 0 && now.wrapping_sub(stamp) < max_age {
            return CpuDemand::decode(self.demand.load(Ordering::Relaxed));
        }
        let claim = now.max(1);
        if self
            .stamp
            .compare_exchange(stamp, claim, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            let d = read();
            self.demand.store(d.encode(), Ordering::Relaxed);
            d
        } else {
            CpuDemand::decode(self.demand.load(Ordering::Relaxed))
        }
    }

    /// The answer a wait acts on as it starts ([`demand_at_wait_start`]),
    /// at clock reading `now`: the one stored last however old, unless
    /// that says [`CpuDemand::Busy`], which is [`DemandCache::get`] (read
    /// again when stale). Only a `Busy` answer makes a wait skip polling,
    /// and such a wait blocks, which costs more than the read; any other
    /// lets it poll to its limit, as it would without the signal.
    #[inline]
    pub fn at_wait_start(
        &self,
        now: u64,
        max_age: u64,
        read: impl FnOnce() -> CpuDemand,
    ) -> CpuDemand {
        match self.last() {
            CpuDemand::Busy => self.get(now, max_age, read),
            other => other,
        }
    }

    /// The answer stored last, without reading anything.
    pub fn last(&self) -> CpuDemand {
        CpuDemand::decode(self.demand.load(Ordering::Relaxed))
    }
}

impl Default for DemandCache {
    fn default() -> Self {
        Self::new()
    }
}

/// The process's cache.
#[cfg(not(loom))]
static CACHE: DemandCache = DemandCache::new();

/// An answer pinned by [`force_demand`]: [`CpuDemand::encode`]d plus one,
/// 0 when none.
#[cfg(not(loom))]
static FORCED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Whether every runnable thread of the machine has a CPU now: the cached
/// signal, refreshed from `/proc/loadavg` when older than
/// [`SIGNAL_MAX_AGE_NS`] (module docs), or the answer [`force_demand`]
/// pinned.
#[cfg(not(loom))]
#[inline]
pub fn cpu_demand() -> CpuDemand {
    // Relaxed: a number on its own.
    match FORCED.load(std::sync::atomic::Ordering::Relaxed) {
        0 => cached_demand(),
        f => CpuDemand::decode(f - 1),
    }
}

/// What a wait that is starting takes the signal to be: the answer
/// [`force_demand`] pinned, else the cache's without reading the machine
/// unless it says [`CpuDemand::Busy`] and is stale
/// ([`DemandCache::at_wait_start`]; module docs, "The cache on the wait
/// path"). The wait paths' test of whether to poll at all
/// ([`polling_holds_wanted_cpu`](super::polling_holds_wanted_cpu) with
/// this demand).
#[cfg(not(loom))]
#[inline]
pub fn demand_at_wait_start() -> CpuDemand {
    // Relaxed: a number on its own.
    match FORCED.load(std::sync::atomic::Ordering::Relaxed) {
        0 => {
            let clock = waitwise_platform::clock::cycle_clock();
            CACHE.at_wait_start(
                clock.now(),
                clock.ns_to_ticks(SIGNAL_MAX_AGE_NS),
                read_demand,
            )
        }
        f => CpuDemand::decode(f - 1),
    }
}

/// Reads the signal again if the cached answer is older than
/// [`SIGNAL_MAX_AGE_NS`]: called by waits that have polled to their limit
/// or are about to sleep (module docs, "The cache on the wait path"). A
/// clock read and a load when the answer is fresh.
#[cfg(not(loom))]
#[inline]
pub fn refresh_stale_demand() {
    // Relaxed: a number on its own.
    if FORCED.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        let _ = cached_demand();
    }
}

/// The cache's answer, refreshed when older than [`SIGNAL_MAX_AGE_NS`]
/// (whatever [`force_demand`] pinned).
#[cfg(not(loom))]
#[inline]
fn cached_demand() -> CpuDemand {
    let clock = waitwise_platform::clock::cycle_clock();
    CACHE.get(
        clock.now(),
        clock.ns_to_ticks(SIGNAL_MAX_AGE_NS),
        read_demand,
    )
}

/// The machine's runnable threads per online CPU at the cache's last
/// read, in 1/256ths; 0 when never read or not known.
#[cfg(not(loom))]
static RUNNABLE_PER_CPU_X256: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Whether the CPUs were crowded by the process's own threads at the
/// cache's last read ([`super::crowding::crowded_by_own_threads`]).
#[cfg(not(loom))]
static OWN_THREADS_CROWD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the process used at least [`super::crowding::CROWDING_SHARE`]
/// of its CPUs over the share interval before the cache's last read.
#[cfg(not(loom))]
static PROCESS_USES_MOST_CPUS: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Reads the signal from the platform (and keeps the runnable threads per
/// CPU it saw, [`runnable_per_cpu`], whether the process's own threads
/// crowd the CPUs, [`own_threads_crowd_cpus`], and whether it uses most
/// of them, [`process_uses_most_cpus`]).
#[cfg(not(loom))]
#[cold]
fn read_demand() -> CpuDemand {
    use std::sync::atomic::Ordering::Relaxed;
    use waitwise_platform::runnable::{online_cpus, runnable_threads};
    let (runnable, cpus) = (runnable_threads(), online_cpus());
    let per_cpu = runnable.map_or(0, |r| (u64::from(r) * 256 / u64::from(cpus.max(1))) as u32);
    // Relaxed: numbers on their own, like the demand word.
    RUNNABLE_PER_CPU_X256.store(per_cpu, Relaxed);
    let share = crate::mechanism::yield_guard::recent_process_share();
    let crowd = super::crowding::crowded_by_own_threads(
        runnable.map(|r| f64::from(r) / f64::from(cpus.max(1))),
        share,
    );
    let most = share.is_some_and(|s| s >= super::crowding::CROWDING_SHARE);
    // Written only when they change: waits on every CPU read them.
    if OWN_THREADS_CROWD.load(Relaxed) != crowd {
        OWN_THREADS_CROWD.store(crowd, Relaxed);
    }
    if PROCESS_USES_MOST_CPUS.load(Relaxed) != most {
        PROCESS_USES_MOST_CPUS.store(most, Relaxed);
    }
    CpuDemand::of(runnable, cpus)
}

/// Whether the process's own threads crowded the CPUs at the demand
/// cache's last read ([`super::crowding::crowded_by_own_threads`]): one
/// load, as fresh as [`demand_at_wait_start`]'s answer. `false` while
/// [`force_demand`] pins the signal.
#[cfg(not(loom))]
#[inline]
pub fn own_threads_crowd_cpus() -> bool {
    // Relaxed: flags on their own.
    FORCED.load(std::sync::atomic::Ordering::Relaxed) == 0
        && OWN_THREADS_CROWD.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether the process used at least
/// [`CROWDING_SHARE`](super::crowding::CROWDING_SHARE) of its CPUs over
/// the share interval before the demand cache's last read: on a busy
/// machine, most of the threads that want a CPU are then likely its own.
/// One load. `false` while [`force_demand`] pins the signal.
#[cfg(not(loom))]
#[inline]
pub fn process_uses_most_cpus() -> bool {
    // Relaxed: flags on their own.
    FORCED.load(std::sync::atomic::Ordering::Relaxed) == 0
        && PROCESS_USES_MOST_CPUS.load(std::sync::atomic::Ordering::Relaxed)
}

/// The machine's runnable threads per online CPU, from the same cached
/// read as [`cpu_demand`] (refreshed by this call when stale); `None` when
/// not known, or while [`force_demand`] pins the signal (a pinned run
/// wants the machine's load out of the waits' decisions).
#[cfg(not(loom))]
#[inline]
pub fn runnable_per_cpu() -> Option<f64> {
    // Relaxed: numbers on their own.
    if FORCED.load(std::sync::atomic::Ordering::Relaxed) != 0
        || cached_demand() == CpuDemand::Unknown
    {
        return None;
    }
    match RUNNABLE_PER_CPU_X256.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        x => Some(f64::from(x) / 256.0),
    }
}

/// [`runnable_per_cpu`] as the cache's last read left it, however old,
/// without reading the machine again: for a lock's holder, which must not
/// spend the read's microseconds while others wait for it. `None` when
/// never read, not known, or while [`force_demand`] pins the signal.
#[cfg(not(loom))]
#[inline]
pub fn last_runnable_per_cpu() -> Option<f64> {
    // Relaxed: numbers on their own.
    if FORCED.load(std::sync::atomic::Ordering::Relaxed) != 0 {
        return None;
    }
    match RUNNABLE_PER_CPU_X256.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        x => Some(f64::from(x) / 256.0),
    }
}

/// Pins the answer of [`cpu_demand`] for the whole process (`None`: the
/// real signal again). For tests and experiments that must run the
/// extension, or keep it off, whatever the machine's load.
#[cfg(not(loom))]
pub fn force_demand(demand: Option<CpuDemand>) {
    let word = demand.map_or(0, |d| d.encode() + 1);
    FORCED.store(word, std::sync::atomic::Ordering::Relaxed);
}

/// The answer [`force_demand`] pinned, `None` when the signal is read
/// from the machine: what an experiment records of the regime it ran in,
/// and restores after pinning its own.
#[cfg(not(loom))]
pub fn forced_demand() -> Option<CpuDemand> {
    // Relaxed: a number on its own.
    match FORCED.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        f => Some(CpuDemand::decode(f - 1)),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn demand_of_counts() {
        assert_eq!(CpuDemand::of(Some(2), 2), CpuDemand::Idle);
        assert_eq!(CpuDemand::of(Some(1), 4), CpuDemand::Idle);
        assert_eq!(CpuDemand::of(Some(3), 2), CpuDemand::Busy);
        assert_eq!(CpuDemand::of(None, 2), CpuDemand::Unknown);
        for d in [CpuDemand::Idle, CpuDemand::Busy, CpuDemand::Unknown] {
            assert_eq!(CpuDemand::decode(d.encode()), d);
        }
    }

    #[test]
    fn demand_of_a_yield() {
        assert_eq!(CpuDemand::of_yield(0), CpuDemand::Idle);
        assert_eq!(CpuDemand::of_yield(QUICK_YIELD_NS - 1), CpuDemand::Idle);
        assert_eq!(CpuDemand::of_yield(QUICK_YIELD_NS), CpuDemand::Busy);
        assert_eq!(CpuDemand::of_yield(u64::MAX), CpuDemand::Busy);
    }

    #[test]
    fn polls_after_quick_yields_and_blocks_after_a_late_one() {
        let mut e = Extension::new();
        assert!(matches!(e.after_yield(300), Advice::Poll { ns: SLICE_NS }));
        assert_eq!(e.after_yield(2_000_000), Advice::Block);
        assert_eq!(e.extended_ns(), SLICE_NS);
    }

    #[test]
    fn a_pinned_demand_wins_over_the_yield() {
        force_demand(Some(CpuDemand::Busy));
        assert_eq!(Extension::new().after_yield(0), Advice::Block);
        force_demand(Some(CpuDemand::Idle));
        let far = Extension::new().after_yield(u64::MAX);
        force_demand(None);
        assert!(matches!(far, Advice::Poll { .. }));
    }

    #[test]
    fn polls_in_slices_while_idle_up_to_the_cap() {
        let mut e = Extension::new();
        let mut total = 0;
        while let Advice::Poll { ns } = e.next_with(CpuDemand::Idle) {
            assert!(ns > 0 && ns <= SLICE_NS);
            total += ns;
        }
        assert_eq!(total, EXTENSION_CAP_NS);
        assert_eq!(e.extended_ns(), EXTENSION_CAP_NS);
        assert_eq!(e.next_with(CpuDemand::Idle), Advice::Block);
    }

    #[test]
    fn blocks_unless_idle() {
        for d in [CpuDemand::Busy, CpuDemand::Unknown] {
            let mut e = Extension::new();
            assert_eq!(e.next_with(d), Advice::Block);
            assert_eq!(e.extended_ns(), 0);
        }
        // Busy part-way: block at once.
        let mut e = Extension::new();
        assert!(matches!(e.next_with(CpuDemand::Idle), Advice::Poll { .. }));
        assert_eq!(e.next_with(CpuDemand::Busy), Advice::Block);
        assert_eq!(
            advise(CpuDemand::Idle, EXTENSION_CAP_NS - 1),
            Advice::Poll { ns: 1 }
        );
    }

    #[test]
    fn a_starting_wait_reads_again_only_a_stale_busy_answer() {
        let never_read = DemandCache::new();
        assert_eq!(
            never_read.at_wait_start(1000, 100, || unreachable!("no read")),
            CpuDemand::Unknown
        );
        let idle = DemandCache::new();
        assert_eq!(idle.get(1000, 100, || CpuDemand::Idle), CpuDemand::Idle);
        // Stale, but not Busy: kept, unread.
        assert_eq!(
            idle.at_wait_start(5000, 100, || unreachable!("no read")),
            CpuDemand::Idle
        );
        let busy = DemandCache::new();
        assert_eq!(busy.get(1000, 100, || CpuDemand::Busy), CpuDemand::Busy);
        // Fresh and Busy: kept, unread.
        assert_eq!(
            busy.at_wait_start(1050, 100, || unreachable!("no read")),
            CpuDemand::Busy
        );
        // Stale and Busy: read again.
        let mut reads = 0;
        assert_eq!(
            busy.at_wait_start(5000, 100, || {
                reads += 1;
                CpuDemand::Idle
            }),
            CpuDemand::Idle
        );
        assert_eq!(reads, 1);
        assert_eq!(busy.last(), CpuDemand::Idle);
    }

    #[test]
    fn cache_reads_once_per_period() {
        let cache = DemandCache::new();
        let mut reads = 0;
        let mut read = |d| {
            reads += 1;
            d
        };
        assert_eq!(cache.last(), CpuDemand::Unknown);
        assert_eq!(
            cache.get(1000, 100, || read(CpuDemand::Idle)),
            CpuDemand::Idle
        );
        assert_eq!(
            cache.get(1050, 100, || read(CpuDemand::Busy)),
            CpuDemand::Idle
        );
        assert_eq!(
            cache.get(1100, 100, || read(CpuDemand::Busy)),
            CpuDemand::Busy
        );
        // A clock that went backwards counts as stale.
        assert_eq!(
            cache.get(10, 100, || read(CpuDemand::Idle)),
            CpuDemand::Idle
        );
        // A first reading at 0 still stores a stamp.
        let fresh = DemandCache::new();
        assert_eq!(fresh.get(0, 100, || read(CpuDemand::Busy)), CpuDemand::Busy);
        assert_eq!(fresh.get(5, 100, || read(CpuDemand::Idle)), CpuDemand::Busy);
        assert_eq!(reads, 4);
    }

    #[test]
    fn forced_demand_wins_and_the_real_one_is_valid() {
        // The real signal: any answer, no panic.
        let _ = cpu_demand();
        force_demand(Some(CpuDemand::Busy));
        assert_eq!(cpu_demand(), CpuDemand::Busy);
        assert_eq!(demand_at_wait_start(), CpuDemand::Busy);
        assert_eq!(forced_demand(), Some(CpuDemand::Busy));
        force_demand(None);
        assert_eq!(forced_demand(), None);
        let _ = cpu_demand();
        refresh_stale_demand();
        let _ = demand_at_wait_start();
    }
}
