//! The lost-slice guard of `yield` polling: while `sched_yield` keeps
//! handing this process's waiters' CPUs away for whole scheduler slices,
//! waits that would poll by yielding skip their polling phase and block.
//!
//! # Why
//!
//! Polling by yielding (switch-spinning) bets that a yield hands the CPU
//! to a thread that soon gives it back: another waiter, or a lock holder
//! that releases. A thread that neither blocks nor yields, such as a
//! CPU-bound process sharing the machine, keeps the CPU for its whole
//! slice (milliseconds under CFS and EEVDF), and a yielding waiter whose
//! lock was released, or whose condition came true, meanwhile waits that
//! long to notice. Where that waiter is the next step of a chain (threads
//! taking turns through a mutex and a condition variable), every step
//! loses a slice: 8 threads taking 16,000 turns ran 0.6 s alone and 10 s
//! beside two busy loops on a 2-CPU machine, while glibc's mutex, which
//! sleeps at once and is woken with the scheduler's preference for a
//! woken thread, ran 0.8-0.9 s in both. A waiter that sleeps instead is
//! woken and runs at once.
//!
//! # The signal
//!
//! A wait that polls by yielding and finds what it waited for after a
//! yield that kept it off the CPU for at least [`LOST_SLICE_NS`] lost a
//! slice: it ended up to that much late ([`wait_ended_after_yield`], which
//! the engine's polling loop calls with the length of the yield before
//! the change, timed by the yielding mechanism's clock reads; the
//! interposer's reader-writer lock times its own yields). A long yield
//! after which the waiter still waits cost it nothing it could have had.
//! When [`LOSSES_TO_TRIP`] losses fall within [`LOSS_WINDOW_NS`] *and* the
//! process used less than [`LOW_SHARE`] of its CPUs since the last look
//! (its CPU time, over at least [`SHARE_INTERVAL_NS`]), the guard trips:
//! for [`QUIET_NS`] from then on [`yielding_loses_slices`] is true, and a
//! wait whose polling mechanism is `yield` blocks at once
//! ([`PollBudget::polls`](crate::policy::PollBudget) says no polling phase;
//! the interposer's reader-writer lock asks the same). After the quiet
//! period yielding is tried again, and the guard trips again within a few
//! slices if the load is still there.
//!
//! # Whose threads
//!
//! A lost slice says only that *some* thread kept the CPU. When it was
//! one of this process's, the program used that slice: 8 threads looping
//! on one `Mutex` on 2 CPUs lose slices to each other, most often to the
//! thread that holds the lock, and yielding is what lets that thread run
//! on (blocking at once cost that loop half its throughput). So the guard
//! also asks whether the process is the one using the CPUs: beside busy
//! loops, threads looping on one mutex use a good share of the CPUs
//! (now and then none, when the busy loops have every CPU at once, which
//! the 20 ms interval averages out), threads taking turns through a mutex
//! and a condition variable a small one. With no other load neither trips
//! the guard (the process uses its CPUs); beside busy loops the guard
//! trips for the turn-taking threads, which then finish in a fraction of
//! the time, and not for the mutex loop, which keeps its throughput
//! (`examples/handoff_under_load` measures both). Tripping when it should not costs a
//! quiet period of blocking at once, which every wait supports (`/b/0` is
//! a valid policy everywhere); it never costs a wake-up or correctness.
//!
//! # Slices lost to other processes
//!
//! Some yields help no lock holder: a default wait that polls by `yield`
//! only because its threads outnumber the CPUs
//! ([`crate::policy::crowding`]), and a channel operation's last re-tries.
//! For them one lost slice is evidence enough, when the process used less
//! than [`SHARED_SHARE`] of its CPUs over the last share interval, so that
//! other processes had at least as much: [`yield_lost_slice_at`] records
//! it, and for [`QUIET_NS`] after the last such loss
//! [`lost_slice_recently`] is true and those yields are skipped (the
//! crowded waits block at once, the re-tries block sooner). Each loss
//! costs those waits at most one slice per quiet period while the load
//! lasts; 8 threads of one program taking turns on 2 CPUs use all of
//! them, and their losses are not recorded. The share here comes from a
//! sampler of its own, so that neither measure moves the other's
//! intervals; each sampler's looks are claimed one at a time, so that no
//! thread sets its CPU time against another's interval.
//!
//! # Memory ordering
//!
//! All Relaxed: the words are a hint that publishes no memory. Racing
//! reports may lose a loss or trip the guard one report late; a waiter
//! that reads a stale state polls or blocks once more than it would have.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use waitwise_platform::clock::cycle_clock;

/// A yield that kept its caller off the CPU at least this long lost a
/// scheduler slice, ns. Guessed between the two kinds of yield: one to
/// other waiters gives the CPU back within microseconds, one to a busy
/// loop takes its whole slice (milliseconds).
pub const LOST_SLICE_NS: u64 = 1_000_000;

/// How many lost slices within [`LOSS_WINDOW_NS`] trip the guard.
pub const LOSSES_TO_TRIP: usize = 4;

/// The window in which [`LOSSES_TO_TRIP`] lost slices trip the guard, ns.
pub const LOSS_WINDOW_NS: u64 = 10_000_000;

/// How long a tripped guard keeps yield-polling waits from polling, ns.
/// Guessed: with the load still there, the guard trips again after
/// [`LOSSES_TO_TRIP`] lost slices and one share interval (15-20 ms), under
/// a tenth of this; 1 s ran the turn-taking no faster and carried its
/// blocking into a mutex loop that followed.
pub const QUIET_NS: u64 = 250_000_000;

/// The guard's state: the times of the last lost slices and the end of the
/// quiet period, on the cycle clock (module docs).
#[derive(Debug)]
pub struct YieldGuard {
    /// The last `LOSSES_TO_TRIP - 1` losses, ticks (0: none), a ring.
    losses: [AtomicU64; LOSSES_TO_TRIP - 1],
    /// The next ring slot to write.
    next: AtomicU32,
    /// When the quiet period ends, ticks; 0 when not tripped.
    quiet_until: AtomicU64,
    /// How many times the guard tripped.
    trips: AtomicU64,
}

impl YieldGuard {
    /// A guard that has seen no loss.
    pub const fn new() -> Self {
        Self {
            losses: [const { AtomicU64::new(0) }; LOSSES_TO_TRIP - 1],
            next: AtomicU32::new(0),
            quiet_until: AtomicU64::new(0),
            trips: AtomicU64::new(0),
        }
    }

    /// A yield lost a slice at `now` (ticks): records it, and returns
    /// whether it is the `LOSSES_TO_TRIP`-th loss within `window` (ticks).
    pub fn record_loss(&self, now: u64, window: u64) -> bool {
        // Relaxed: a hint (module docs).
        let slot = self.next.fetch_add(1, Ordering::Relaxed) as usize % self.losses.len();
        // The slot written over holds the oldest of the last losses.
        let oldest = self.losses[slot].swap(now, Ordering::Relaxed);
        oldest != 0 && now.saturating_sub(oldest) <= window
    }

    /// Trips the guard at `now` until `now + quiet` (ticks both).
    pub fn trip(&self, now: u64, quiet: u64) {
        // Relaxed: a hint (module docs).
        self.quiet_until
            .store(now.saturating_add(quiet).max(1), Ordering::Relaxed);
        self.trips.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the guard is tripped at `now` (ticks). A quiet period that
    /// has ended is cleared, so that later calls make no clock read.
    #[inline]
    pub fn is_quiet_at(&self, now: impl FnOnce() -> u64) -> bool {
        // Relaxed: a hint (module docs).
        let until = self.quiet_until.load(Ordering::Relaxed);
        if until == 0 {
            return false;
        }
        if now() < until {
            return true;
        }
        // Failure Relaxed too: a guard that tripped again meanwhile keeps
        // its new end.
        let _ = self
            .quiet_until
            .compare_exchange(until, 0, Ordering::Relaxed, Ordering::Relaxed);
        false
    }

    /// How many times the guard tripped.
    pub fn trips(&self) -> u64 {
        // Relaxed: a count on its own.
        self.trips.load(Ordering::Relaxed)
    }
}

impl Default for YieldGuard {
    fn default() -> Self {
        Self::new()
    }
}

/// The process's guard.
static GUARD: YieldGuard = YieldGuard::new();

/// Reports a wait that polled by yielding and found what it waited for
/// after a yield that kept it off the CPU for `took_ns`: the wait lost a
/// slice when that is at least [`LOST_SLICE_NS`] (it ended late by up to
/// that much). A long yield after which the waiter still waits cost it
/// nothing it could have had, and is not reported. Nothing under loom (the
/// models explore protocols, not timing).
#[inline]
pub fn wait_ended_after_yield(took_ns: u64) {
    if !cfg!(loom) && took_ns >= LOST_SLICE_NS {
        lost_slice();
    }
}

/// Whether the process's guard may trip (on unless [`set_enabled`] says
/// otherwise).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the process's guard on or off (off: it never trips, and a quiet
/// period under way ends), for measurements that compare the two.
pub fn set_enabled(on: bool) {
    // Relaxed: a hint (module docs).
    ENABLED.store(on, Ordering::Relaxed);
    if !on {
        GUARD.quiet_until.store(0, Ordering::Relaxed);
    }
}

#[cold]
#[inline(never)]
fn lost_slice() {
    let clock = cycle_clock();
    let now = clock.now();
    yield_lost_slice_at(now);
    // Relaxed: a hint (module docs).
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    if GUARD.record_loss(now, clock.ns_to_ticks(LOSS_WINDOW_NS)) && SHARE.is_low(now) {
        GUARD.trip(now, clock.ns_to_ticks(QUIET_NS));
    }
}

/// The process's CPU share below which lost slices trip the guard: the
/// fraction of the CPUs the process may use that its threads used since
/// the last look (module docs, "Whose threads"). Guessed between the two
/// cases of the module docs, beside busy loops: threads looping on one
/// `Mutex` use more of the CPUs, threads taking turns through a mutex and
/// a condition variable less.
pub const LOW_SHARE: f64 = 0.15;

/// The shortest interval over which the share is measured, ns: over a few
/// ms a program whose threads all wait at once (both CPUs taken by the
/// busy loops) shows a share near 0 whatever it does the rest of the
/// time. A loss less than this after the last look is decided on the
/// losses alone: not tripped.
pub const SHARE_INTERVAL_NS: u64 = 20_000_000;

/// Whether `cpu_ns` of process CPU time over `wall_ns` is a share of
/// `cpus` below [`LOW_SHARE`] (pure, so the rule is testable).
pub fn share_is_low(cpu_ns: u64, wall_ns: u64, cpus: usize) -> bool {
    share_of(cpu_ns, wall_ns, cpus) < LOW_SHARE
}

/// The share of `cpus` CPUs that `cpu_ns` of process CPU time over
/// `wall_ns` is (pure); 1 when no time passed.
pub fn share_of(cpu_ns: u64, wall_ns: u64, cpus: usize) -> f64 {
    if wall_ns == 0 {
        return 1.0;
    }
    cpu_ns as f64 / (wall_ns as f64 * cpus.max(1) as f64)
}

/// No share measured yet ([`ShareSampler::last`]).
const NO_SHARE: u32 = u32::MAX;

/// The process's CPU share since the last look: the last look's cycle
/// clock and process CPU time, and the process's CPU count.
struct ShareSampler {
    /// When the last look was, ticks (0: never).
    at: AtomicU64,
    /// The process CPU time then, ns.
    cpu_ns: AtomicU64,
    /// The process's CPUs, counted at the first look (0 until then).
    cpus: AtomicU32,
    /// The share the last look found, in thousandths ([`NO_SHARE`]: none).
    last: AtomicU32,
}

impl ShareSampler {
    const fn new() -> Self {
        Self {
            at: AtomicU64::new(0),
            cpu_ns: AtomicU64::new(0),
            cpus: AtomicU32::new(0),
            last: AtomicU32::new(NO_SHARE),
        }
    }

    /// Whether the process used a low share of its CPUs since the last
    /// look, at least [`SHARE_INTERVAL_NS`] ago (else `false`, and no look
    /// is taken).
    fn is_low(&self, now: u64) -> bool {
        self.look(now).is_some_and(|share| share < LOW_SHARE)
    }

    /// The process's share of its CPUs over the last interval of at least
    /// [`SHARE_INTERVAL_NS`]: since the last look if that is as old (a new
    /// look), else what the last look found; `None` before the second
    /// look.
    fn recent(&self, now: u64) -> Option<f64> {
        self.look(now).or_else(|| {
            // Relaxed: a hint (module docs).
            let last = self.last.load(Ordering::Relaxed);
            (last != NO_SHARE).then(|| f64::from(last) / 1000.0)
        })
    }

    /// The share since the last look, at least [`SHARE_INTERVAL_NS`] ago
    /// (a new look), else `None` and no look is taken. One
    /// `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` per look. Looks are
    /// claimed one at a time: a thread that found the last look old but
    /// loses the claim to another takes none (`None`), since its CPU time
    /// would be set against the other's interval, a share near 0.
    fn look(&self, now: u64) -> Option<f64> {
        let clock = cycle_clock();
        // Relaxed throughout: a hint (module docs).
        let at = self.at.load(Ordering::Relaxed);
        let wall_ns = clock.ticks_to_ns(now.saturating_sub(at)) as u64;
        if at != 0 && wall_ns < SHARE_INTERVAL_NS {
            return None;
        }
        if self
            .at
            .compare_exchange(at, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        let cpu_ns = waitwise_platform::thread::process_cpu_time().as_nanos() as u64;
        let last_cpu_ns = self.cpu_ns.swap(cpu_ns, Ordering::Relaxed);
        if at == 0 {
            return None;
        }
        let mut cpus = self.cpus.load(Ordering::Relaxed);
        if cpus == 0 {
            // Counted without allocating: this runs inside waits, which an
            // unwind from a signal handler may cross (no destructors).
            cpus = waitwise_platform::affinity::process_cpus_count()
                .map_or_else(waitwise_platform::runnable::online_cpus, |n| n as u32)
                .max(1);
            self.cpus.store(cpus, Ordering::Relaxed);
        }
        let share = share_of(cpu_ns.saturating_sub(last_cpu_ns), wall_ns, cpus as usize);
        self.last.store(
            (share * 1000.0).min(f64::from(NO_SHARE - 1)) as u32,
            Ordering::Relaxed,
        );
        Some(share)
    }
}

/// The process's sampler for the guard's trips.
static SHARE: ShareSampler = ShareSampler::new();

/// Whether yields lose whole slices now (the guard tripped less than
/// [`QUIET_NS`] ago): a wait that would poll by yielding blocks at once.
/// One relaxed load while the guard is not tripped; never under loom.
#[inline]
pub fn yielding_loses_slices() -> bool {
    !cfg!(loom) && GUARD.is_quiet_at(|| cycle_clock().now())
}

/// How many times the process's guard tripped.
pub fn trips() -> u64 {
    GUARD.trips()
}

/// When a yield of this process last lost a slice, cycle-clock ticks (0:
/// none since the last look that found it old).
static LAST_LOSS_AT: AtomicU64 = AtomicU64::new(0);

/// Records a slice lost to another process at `now` (ticks), for
/// [`lost_slice_recently`].
#[inline]
pub fn note_lost_slice_at(now: u64) {
    // Relaxed: a hint (module docs).
    LAST_LOSS_AT.store(now.max(1), Ordering::Relaxed);
}

/// A yield of this process kept its caller off the CPU for a whole slice,
/// ending at `now` (ticks): the guard's reports and the channels' timed
/// re-try yields alike. Recorded for [`lost_slice_recently`] when the
/// process used less than [`SHARED_SHARE`] of its CPUs over the last
/// [`SHARE_INTERVAL_NS`] or more, so that other processes had the rest:
/// 8 threads taking turns on 2 CPUs lose slices to each other while the
/// process uses all of its CPUs, and their yields are what lets the next
/// one run.
#[cold]
pub fn yield_lost_slice_at(now: u64) {
    if LOSS_SHARE
        .recent(now)
        .is_some_and(|share| share < SHARED_SHARE)
    {
        note_lost_slice_at(now);
    }
}

/// The process's CPU share below which a lost slice counts as lost to
/// other processes ([`yield_lost_slice_at`]): they had at least half of
/// the CPUs the process may use. Beside a busy loop on each of 2 CPUs, a
/// condition-variable hand-off or a one-producer channel uses a quarter
/// of them; 8 threads of one process taking turns on 2 CPUs all of them.
pub const SHARED_SHARE: f64 = 0.5;

/// The process's share of its CPUs over the last interval of at least
/// [`SHARE_INTERVAL_NS`] (its CPU time over the wall time and its CPU
/// count), from a sampler of its own: a new look when the last one is
/// that old (one `clock_gettime` of the process's CPU time), else what it
/// found. `None` before two looks, and under loom.
pub fn recent_process_share() -> Option<f64> {
    if cfg!(loom) {
        return None;
    }
    RECENT_SHARE.recent(cycle_clock().now())
}

/// The sampler of [`recent_process_share`], apart from the others so
/// that its frequent looks change none of their intervals.
static RECENT_SHARE: ShareSampler = ShareSampler::new();

/// The process's sampler for [`yield_lost_slice_at`], apart from the
/// guard's so that neither changes the other's intervals.
static LOSS_SHARE: ShareSampler = ShareSampler::new();

/// Whether a yield of this process lost a slice to other processes less
/// than [`QUIET_NS`] ago ([`yield_lost_slice_at`]). The guard's trip waits
/// for more evidence because it stops the polling of lock waiters, whose
/// yields let the lock holder run; yields that have no such holder to
/// help consult this instead: the polls that a default wait makes by
/// `yield` only because its threads outnumber the CPUs
/// ([`crate::policy::crowding`]), and the channels' re-try yields. Each of
/// those loses a slice at most once per [`QUIET_NS`] while the load
/// lasts. One relaxed load while no loss is recent; never under loom.
#[inline]
pub fn lost_slice_recently() -> bool {
    if cfg!(loom) {
        return false;
    }
    // Relaxed: a hint (module docs).
    let lost_at = LAST_LOSS_AT.load(Ordering::Relaxed);
    if lost_at == 0 {
        return false;
    }
    let clock = cycle_clock();
    if is_recent(lost_at, clock.now(), clock.ns_to_ticks(QUIET_NS)) {
        return true;
    }
    // Failure Relaxed too: a loss recorded meanwhile keeps its time.
    let _ = LAST_LOSS_AT.compare_exchange(lost_at, 0, Ordering::Relaxed, Ordering::Relaxed);
    false
}

/// Whether a loss at `lost_at` (ticks; 0: none) is less than `quiet`
/// ticks before `now` (pure, so the rule is testable).
#[inline]
pub fn is_recent(lost_at: u64, now: u64, quiet: u64) -> bool {
    lost_at != 0 && now.saturating_sub(lost_at) < quiet
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: u64 = 100;
    const QUIET: u64 = 1000;

    #[test]
    fn losses_within_the_window_trip_the_guard_for_the_quiet_period() {
        let g = YieldGuard::new();
        for t in [10, 20, 30] {
            assert!(
                !g.record_loss(t, WINDOW),
                "{t}: fewer than LOSSES_TO_TRIP losses"
            );
        }
        assert!(g.record_loss(40, WINDOW));
        assert!(!g.is_quiet_at(|| 41), "not tripped yet");
        g.trip(40, QUIET);
        assert_eq!(g.trips(), 1);
        assert!(g.is_quiet_at(|| 41));
        assert!(g.is_quiet_at(|| 40 + QUIET - 1));
        assert!(!g.is_quiet_at(|| 40 + QUIET), "the quiet period ended");
        assert!(!g.is_quiet_at(|| panic!("an ended period reads no clock")));
    }

    #[test]
    fn losses_spread_wider_than_the_window_do_not_trip_it() {
        let g = YieldGuard::new();
        for i in 0..20u64 {
            assert!(!g.record_loss(1 + i * (WINDOW / 2), WINDOW));
        }
    }

    #[test]
    fn a_loss_is_recent_for_the_quiet_period() {
        assert!(!is_recent(0, 10, QUIET), "no loss");
        assert!(is_recent(10, 10, QUIET));
        assert!(is_recent(10, 10 + QUIET - 1, QUIET));
        assert!(!is_recent(10, 10 + QUIET, QUIET));
        assert!(is_recent(10, 5, QUIET), "a clock read before the loss");
    }

    #[test]
    fn the_share_is_the_cpu_time_over_the_cpus_wall_time() {
        assert_eq!(share_of(20_000_000, 10_000_000, 2), 1.0);
        assert_eq!(share_of(5_000_000, 10_000_000, 2), 0.25);
        assert_eq!(share_of(5_000_000, 10_000_000, 0), 0.5, "no CPU count: 1");
        assert_eq!(share_of(5, 0, 2), 1.0, "no time passed");
        const { assert!(0.25 < SHARED_SHARE && SHARED_SHARE < 1.0) };
    }

    #[test]
    fn a_sampler_gives_a_share_from_its_second_look_and_keeps_it() {
        let clock = cycle_clock();
        let s = ShareSampler::new();
        let t0 = clock.now();
        assert_eq!(s.recent(t0), None, "the first look gives no share");
        let soon = t0 + clock.ns_to_ticks(SHARE_INTERVAL_NS / 2);
        assert_eq!(s.recent(soon), None, "no look yet, nothing kept");
        let later = t0 + clock.ns_to_ticks(SHARE_INTERVAL_NS * 2);
        let share = s.recent(later).expect("a look over a whole interval");
        assert!(share >= 0.0);
        let kept = s.recent(later + 1).expect("kept until the next look");
        assert!((kept - share).abs() < 0.001, "{kept} {share}");
        assert!(!s.is_low(later + 2), "is_low takes fresh looks only");
    }

    #[test]
    fn the_share_is_low_when_the_process_used_little_of_its_cpus() {
        // 2 CPUs for 10 ms: 20 ms of CPU time is all of them.
        assert!(!share_is_low(20_000_000, 10_000_000, 2));
        assert!(!share_is_low(10_000_000, 10_000_000, 2));
        assert!(share_is_low(2_000_000, 10_000_000, 2));
        assert!(share_is_low(0, 10_000_000, 0), "no CPU count: 1");
    }

    #[test]
    fn a_guard_that_never_tripped_reads_no_clock() {
        let g = YieldGuard::new();
        assert!(!g.is_quiet_at(|| panic!("no clock read")));
    }

    #[test]
    fn short_yields_are_no_losses() {
        // The process's guard: a short yield records nothing (a lost one
        // is not reported here, so that other tests' waits keep polling).
        let before = trips();
        for _ in 0..LOSSES_TO_TRIP * 2 {
            wait_ended_after_yield(LOST_SLICE_NS - 1);
        }
        assert_eq!(trips(), before);
    }
}
