//! The cycle clock: a cheap monotonic nanosecond count for deadlines and
//! stamps, read from the time-stamp counter once its rate is known, from
//! `CLOCK_MONOTONIC` until then.
//!
//! **No calibration on a wait path.** The clock starts on
//! `CLOCK_MONOTONIC` (the vDSO, no system call), with one paired reading
//! of both clocks. On the first read at least [`LEARN_AFTER`] later it
//! asks the CPU (once): with an invariant TSC whose rate CPUID states
//! (leaves `0x15`/`0x16`, or the hypervisor's timing leaf `0x4000_0010`)
//! it takes that rate; where CPUID does not state it (AMD, most VMs) it
//! divides the TSC ticks by the nanoseconds that passed between the two
//! paired readings; without an invariant TSC it stays on the monotonic
//! clock. It never busy-waits. The switch keeps the count continuous (the
//! TSC is anchored at that moment's monotonic time), so deadlines taken
//! before it stay valid.
//!
//! The count is in nanoseconds whatever it reads ("ticks" in this API are
//! nanoseconds), so nothing stored ever changes unit. Start stamps use
//! `LFENCE; RDTSC` and end stamps `RDTSCP; LFENCE` so the measured region
//! cannot leak out of the stamps. The read overhead is measured, when a
//! tool asks for it, as seed 004 (Poenaru 2017, section 4.1) does: read the
//! clock 1001 times back to back and take the median of the 1000
//! differences.

use crate::arch;
use crate::features;
use crate::once::ForkSafeOnce;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long the clock reads `CLOCK_MONOTONIC` before it learns the TSC's
/// rate from two readings of both clocks this far apart. Chosen: with
/// paired readings taken within 2 µs of each other, 100 ms gives a rate
/// error under 2e-5, and a program that waits for less never needs it.
pub const LEARN_AFTER: Duration = Duration::from_millis(100);

/// A paired reading of both clocks whose two monotonic reads lie further
/// apart than this was interrupted, and is taken again. Chosen.
const PAIR_TOLERANCE_NS: u64 = 2_000;

/// Rates outside this range are a broken TSC (or a migration between
/// hosts), not a rate: the clock stays on `CLOCK_MONOTONIC`.
const PLAUSIBLE_HZ: std::ops::RangeInclusive<u64> = 100_000_000..=20_000_000_000;

/// Number of back-to-back reads used to measure the read overhead (seed 004).
pub const OVERHEAD_READS: usize = 1001;

/// What the cycle clock reads.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case", tag = "kind"))]
pub enum ClockSource {
    /// The time-stamp counter, ticking at `hz` per second.
    Tsc {
        /// TSC ticks per second.
        hz: u64,
        /// Whether `hz` came from CPUID (else learned from the monotonic
        /// clock while the program ran).
        from_cpuid: bool,
    },
    /// `CLOCK_MONOTONIC` (no invariant TSC, or its rate not learned yet).
    Monotonic,
}

/// The TSC's scale, once known. `state` says whether the other fields are
/// valid; they are written once, before the Release store of `READY`.
#[derive(Debug)]
struct TscScale {
    state: AtomicU32,
    hz: AtomicU64,
    from_cpuid: AtomicBool,
    /// TSC value at the anchor.
    base_tsc: AtomicU64,
    /// Clock nanoseconds at the anchor.
    base_ns: AtomicU64,
    /// Nanoseconds per TSC tick, 32.32 fixed point.
    ns_per_tick_q32: AtomicU64,
}

/// The TSC's rate is not known; the clock will learn it.
const LEARNING: u32 = 0;
/// A thread is writing the scale.
const WRITING: u32 = 1;
/// The scale is valid; the clock reads the TSC.
const READY: u32 = 2;
/// The clock stays on `CLOCK_MONOTONIC`.
const NEVER: u32 = 3;

/// A fast monotonic nanosecond counter (see the module doc).
#[derive(Debug)]
pub struct CycleClock {
    /// `CLOCK_MONOTONIC` at creation, ns.
    epoch_ns: u64,
    scale: TscScale,
    /// The first paired reading (TSC, clock ns) the rate is learned from.
    learn_from: (u64, u64),
    /// Median read cost in ns, measured when first asked; 0 until then.
    read_overhead_ns: AtomicU64,
}

/// `clock_gettime`, declared as a function that may unwind: a signal
/// handler that calls `pthread_exit` may interrupt it (inside the vDSO),
/// and the forced unwind must find a call-site entry for the call in the
/// caller's frame (a call to a function declared `extern "C"`, which Rust
/// takes never to unwind, gets none, and the unwind would abort there).
mod sys {
    extern "C-unwind" {
        pub fn clock_gettime(clock: libc::clockid_t, ts: *mut libc::timespec) -> libc::c_int;
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds (a vDSO call that a forced unwind may
/// pass through).
#[inline(always)]
pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is writable; CLOCK_MONOTONIC always exists.
    unsafe { sys::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The process's cycle clock, set up on first use (one paired reading of
/// both clocks: about a microsecond, no calibration, no CPUID).
#[inline]
pub fn cycle_clock() -> &'static CycleClock {
    static CLOCK: ForkSafeOnce<CycleClock> = ForkSafeOnce::new();
    CLOCK.get_or_init(CycleClock::detect)
}

impl CycleClock {
    /// The process's clock starts on `CLOCK_MONOTONIC` without asking the
    /// CPU anything (a CPUID instruction traps to the hypervisor on a
    /// virtual machine: microseconds each, a hundred for the whole feature
    /// set); what the CPU offers is read when the TSC's rate is learned.
    #[cold]
    fn detect() -> Self {
        Self::monotonic(arch::HAS_HW_WAIT_INSTRUCTIONS)
    }

    /// A clock on `CLOCK_MONOTONIC`, which learns the TSC's rate if `learn`.
    fn monotonic(learn: bool) -> Self {
        let mut clock = Self {
            epoch_ns: monotonic_raw_ns(),
            scale: TscScale {
                state: AtomicU32::new(if learn { LEARNING } else { NEVER }),
                hz: AtomicU64::new(0),
                from_cpuid: AtomicBool::new(false),
                base_tsc: AtomicU64::new(0),
                base_ns: AtomicU64::new(0),
                ns_per_tick_q32: AtomicU64::new(0),
            },
            learn_from: (0, 0),
            read_overhead_ns: AtomicU64::new(0),
        };
        if learn {
            clock.learn_from = clock.paired_reading();
        }
        clock
    }

    /// A clock over an explicit source, fixed for its life (tests and
    /// tools that want `Monotonic`, or a given TSC rate, on purpose).
    pub fn with_source(source: ClockSource) -> Self {
        let clock = Self::monotonic(false);
        if let ClockSource::Tsc { hz, from_cpuid } = source {
            let (tsc, ns) = clock.paired_reading();
            clock.publish(hz, from_cpuid, tsc, ns);
        }
        clock
    }

    /// Installs the TSC scale `hz` anchored at (`tsc`, `ns`), if it is
    /// plausible; else the clock stays on `CLOCK_MONOTONIC` for good.
    fn publish(&self, hz: u64, from_cpuid: bool, tsc: u64, ns: u64) {
        let s = &self.scale;
        // Relaxed stores: published by the Release store of READY below.
        if PLAUSIBLE_HZ.contains(&hz) {
            s.hz.store(hz, Ordering::Relaxed);
            s.from_cpuid.store(from_cpuid, Ordering::Relaxed);
            s.base_tsc.store(tsc, Ordering::Relaxed);
            s.base_ns.store(ns, Ordering::Relaxed);
            s.ns_per_tick_q32.store(
                ((1_000_000_000u128 << 32) / u128::from(hz)) as u64,
                Ordering::Relaxed,
            );
            s.state.store(READY, Ordering::Release);
        } else {
            s.state.store(NEVER, Ordering::Release);
        }
    }

    /// Nanoseconds of `CLOCK_MONOTONIC` since this clock was created.
    #[inline]
    fn monotonic_ns(&self) -> u64 {
        monotonic_raw_ns().saturating_sub(self.epoch_ns)
    }

    /// The TSC and the monotonic nanoseconds read back to back, retried
    /// (a few times) while something interrupted the pair.
    fn paired_reading(&self) -> (u64, u64) {
        let mut best = (0, 0, u64::MAX);
        for _ in 0..8 {
            let a = self.monotonic_ns();
            let tsc = arch::read_tsc_start();
            let b = self.monotonic_ns();
            if b - a < best.2 {
                best = (tsc, a + (b - a) / 2, b - a);
            }
            if b - a <= PAIR_TOLERANCE_NS {
                break;
            }
        }
        (best.0, best.1)
    }

    /// Learns the TSC's rate from the first paired reading and this one,
    /// once the monotonic clock reached `ns` (at least [`LEARN_AFTER`]
    /// after the first). One thread does it; the others read on.
    #[cold]
    #[inline(never)]
    fn learn(&self) {
        // Acquire: a claim made by another thread of this process is seen
        // with the rest of the scale once it reads READY (below, in now()).
        if self
            .scale
            .state
            .compare_exchange(LEARNING, WRITING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let f = features::cpu();
        let (tsc1, ns1) = self.paired_reading();
        if !f.invariant_tsc {
            // A TSC whose rate changes with power states is no clock.
            self.scale.state.store(NEVER, Ordering::Release);
            return;
        }
        if let Some(hz) = f.tsc_hz {
            return self.publish(hz, true, tsc1, ns1);
        }
        let (tsc0, ns0) = self.learn_from;
        let hz = if tsc1 > tsc0 && ns1 > ns0 {
            (u128::from(tsc1 - tsc0) * 1_000_000_000 / u128::from(ns1 - ns0)) as u64
        } else {
            0
        };
        self.publish(hz, false, tsc1, ns1);
    }

    /// The scale, when the clock reads the TSC.
    #[inline(always)]
    fn scale(&self) -> Option<(u64, u64, u64)> {
        let s = &self.scale;
        // Acquire: pairs with the Release store of READY in `publish`.
        if s.state.load(Ordering::Acquire) == READY {
            // Relaxed: written before READY was published, never again.
            Some((
                s.base_tsc.load(Ordering::Relaxed),
                s.base_ns.load(Ordering::Relaxed),
                s.ns_per_tick_q32.load(Ordering::Relaxed),
            ))
        } else {
            None
        }
    }

    #[inline(always)]
    fn tsc_to_ns(tsc: u64, (base_tsc, base_ns, q32): (u64, u64, u64)) -> u64 {
        // A TSC read on another CPU may lag the anchor by a few ticks.
        let delta = tsc.saturating_sub(base_tsc);
        base_ns + ((u128::from(delta) * u128::from(q32)) >> 32) as u64
    }

    /// The monotonic reading, learning the TSC's rate when it is time.
    #[inline(always)]
    fn monotonic_now(&self) -> u64 {
        let ns = self.monotonic_ns();
        // Relaxed: only decides whether to try; `learn` claims with a CAS.
        if ns >= self.learn_from.1 + LEARN_AFTER.as_nanos() as u64
            && self.scale.state.load(Ordering::Relaxed) == LEARNING
        {
            self.learn();
        }
        ns
    }

    /// What this clock reads now (the TSC's rate may be learned later).
    pub fn source(&self) -> ClockSource {
        if self.scale().is_some() {
            ClockSource::Tsc {
                // Relaxed: written before READY was published.
                hz: self.scale.hz.load(Ordering::Relaxed),
                from_cpuid: self.scale.from_cpuid.load(Ordering::Relaxed),
            }
        } else {
            ClockSource::Monotonic
        }
    }

    /// The TSC's rate in Hz, once known.
    pub fn tsc_hz(&self) -> Option<u64> {
        match self.source() {
            ClockSource::Tsc { hz, .. } => Some(hz),
            ClockSource::Monotonic => None,
        }
    }

    /// Ticks per second: the clock counts nanoseconds.
    pub fn hz(&self) -> u64 {
        1_000_000_000
    }

    /// A start stamp (fenced so earlier work cannot leak past it).
    #[inline(always)]
    pub fn start(&self) -> u64 {
        match self.scale() {
            Some(scale) => Self::tsc_to_ns(arch::read_tsc_start(), scale),
            None => self.monotonic_now(),
        }
    }

    /// An end stamp (fenced so measured work cannot leak past it).
    #[inline(always)]
    pub fn end(&self) -> u64 {
        match self.scale() {
            Some(scale) => Self::tsc_to_ns(arch::read_tsc_end(), scale),
            None => self.monotonic_now(),
        }
    }

    /// The cheapest read (no fences), for deadline checks in poll loops.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self.scale() {
            Some(scale) => Self::tsc_to_ns(arch::read_tsc(), scale),
            None => self.monotonic_now(),
        }
    }

    /// The TSC value at clock time `ns` (for the hardware waits, whose
    /// deadlines are TSC values), or `None` while the rate is unknown.
    #[inline]
    pub fn tsc_at(&self, ns: u64) -> Option<u64> {
        let (base_tsc, base_ns, _) = self.scale()?;
        // Relaxed: written before READY was published.
        let hz = self.scale.hz.load(Ordering::Relaxed);
        let ticks = u128::from(ns.saturating_sub(base_ns)) * u128::from(hz) / 1_000_000_000;
        Some(base_tsc.saturating_add(u64::try_from(ticks).unwrap_or(u64::MAX)))
    }

    /// The median cost of one clock read, in ticks (= ns; seed 004's
    /// method, measured on the first call).
    pub fn read_overhead_ticks(&self) -> u64 {
        // Relaxed: a cached measurement; two threads measuring at once
        // store equally valid figures.
        let cached = self.read_overhead_ns.load(Ordering::Relaxed);
        if cached != 0 {
            return cached - 1;
        }
        let measured = self.measure_read_overhead();
        self.read_overhead_ns.store(measured + 1, Ordering::Relaxed);
        measured
    }

    /// The median cost of one clock read, in nanoseconds.
    pub fn read_overhead_ns(&self) -> f64 {
        self.read_overhead_ticks() as f64
    }

    /// `ticks` in nanoseconds (the identity: ticks are nanoseconds).
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> f64 {
        ticks as f64
    }

    /// `ticks` as a `Duration`.
    #[inline]
    pub fn ticks_to_duration(&self, ticks: u64) -> Duration {
        Duration::from_nanos(ticks)
    }

    /// `ns` nanoseconds in ticks (the identity).
    #[inline]
    pub fn ns_to_ticks(&self, ns: u64) -> u64 {
        ns
    }

    /// `d` in ticks, saturating at `u64::MAX`.
    #[inline]
    pub fn duration_to_ticks(&self, d: Duration) -> u64 {
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    }

    /// The tick count `d` from now, or `None` when that does not fit in 64
    /// bits (a deadline centuries away is no deadline).
    #[inline]
    pub fn deadline_after(&self, d: Duration) -> Option<u64> {
        let ticks = self.duration_to_ticks(d);
        if ticks == u64::MAX {
            return None;
        }
        self.now().checked_add(ticks)
    }

    fn measure_read_overhead(&self) -> u64 {
        let mut stamps = [0u64; OVERHEAD_READS];
        for s in stamps.iter_mut() {
            *s = self.start();
        }
        let mut diffs: Vec<u64> = stamps
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .collect();
        diffs.sort_unstable();
        diffs[diffs.len() / 2]
    }
}

/// A point in time on the [`cycle_clock`], or never.
///
/// Waits take a `Deadline` rather than a `Duration` so that a wait made of
/// several steps (poll, then block, then re-check) keeps one end time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    ticks: Option<u64>,
}

impl Deadline {
    /// No deadline: wait until the condition holds.
    pub const NEVER: Deadline = Deadline { ticks: None };

    /// `timeout` from now on the cycle clock. A timeout too large to
    /// represent (`Duration::MAX`) is [`Deadline::NEVER`]: it cannot overflow.
    #[inline]
    pub fn after(timeout: Duration) -> Self {
        Self {
            ticks: cycle_clock().deadline_after(timeout),
        }
    }

    /// `timeout` from now, or never for `None`.
    #[inline]
    pub fn after_opt(timeout: Option<Duration>) -> Self {
        timeout.map_or(Self::NEVER, Self::after)
    }

    /// A deadline at an absolute tick count of the cycle clock.
    #[inline]
    pub const fn at_ticks(ticks: u64) -> Self {
        Self { ticks: Some(ticks) }
    }

    /// The absolute tick count, or `None` for never.
    #[inline]
    pub const fn ticks(self) -> Option<u64> {
        self.ticks
    }

    /// Whether this is [`Deadline::NEVER`].
    #[inline]
    pub const fn is_never(self) -> bool {
        self.ticks.is_none()
    }

    /// Whether the deadline lies at or before tick `now`.
    #[inline]
    pub fn passed_at(self, now: u64) -> bool {
        matches!(self.ticks, Some(t) if now >= t)
    }

    /// Whether the deadline has passed.
    #[inline]
    pub fn has_passed(self) -> bool {
        match self.ticks {
            None => false,
            Some(t) => cycle_clock().now() >= t,
        }
    }

    /// Time left: `None` for never, `Some(ZERO)` once passed.
    #[inline]
    pub fn remaining(self) -> Option<Duration> {
        self.ticks.map(|t| {
            let clock = cycle_clock();
            clock.ticks_to_duration(t.saturating_sub(clock.now()))
        })
    }

    /// `ns`, cut to the time left (0 once passed): how long a step of a
    /// wait, such as its polling phase, may last within this deadline.
    #[inline]
    pub fn cap_ns(self, ns: u64) -> u64 {
        self.remaining().map_or(ns, |left| {
            ns.min(u64::try_from(left.as_nanos()).unwrap_or(u64::MAX))
        })
    }

    /// The earlier of two deadlines.
    #[inline]
    pub fn min(self, other: Deadline) -> Deadline {
        match (self.ticks, other.ticks) {
            (None, _) => other,
            (_, None) => self,
            (Some(a), Some(b)) => Deadline {
                ticks: Some(a.min(b)),
            },
        }
    }
}

/// Measures the TSC frequency against `CLOCK_MONOTONIC` by busy-waiting
/// for `window`: for tools that want a fresh figure now; the cycle clock
/// itself never calls it.
pub fn calibrate_tsc_hz(window: Duration) -> u64 {
    let t0 = Instant::now();
    let c0 = arch::read_tsc_start();
    while t0.elapsed() < window {
        std::hint::spin_loop();
    }
    let c1 = arch::read_tsc_end();
    let elapsed = t0.elapsed();
    let hz = (c1.wrapping_sub(c0)) as f64 / elapsed.as_secs_f64();
    hz.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_ns_is_the_time_left_at_most() {
        assert_eq!(Deadline::NEVER.cap_ns(5_000), 5_000);
        assert_eq!(
            Deadline::after(Duration::from_secs(3600)).cap_ns(5_000),
            5_000
        );
        assert!(Deadline::after(Duration::from_micros(2)).cap_ns(1_000_000) <= 2_000);
        assert_eq!(Deadline::after(Duration::ZERO).cap_ns(5_000), 0);
    }

    #[test]
    fn clock_advances_and_converts() {
        let c = cycle_clock();
        let a = c.start();
        std::thread::sleep(Duration::from_millis(5));
        let b = c.end();
        let ns = c.ticks_to_ns(b - a);
        assert!(ns >= 4.0e6, "5 ms sleep measured as {ns} ns");
        assert!(c.hz() > 0);
    }

    #[test]
    fn conversions_saturate() {
        let c = CycleClock::with_source(ClockSource::Tsc {
            hz: 3_000_000_000,
            from_cpuid: true,
        });
        assert_eq!(c.ns_to_ticks(1_000), 1_000);
        assert_eq!(c.duration_to_ticks(Duration::MAX), u64::MAX);
        assert_eq!(c.deadline_after(Duration::MAX), None);
        assert!(c.deadline_after(Duration::ZERO).is_some());
        assert_eq!(c.tsc_hz(), Some(3_000_000_000));
        // One microsecond apart on the clock is 3000 TSC ticks apart.
        let t = c.now();
        let (a, b) = (c.tsc_at(t).unwrap(), c.tsc_at(t + 1_000).unwrap());
        assert_eq!(b - a, 3_000);
        assert_eq!(c.tsc_at(u64::MAX).map(|v| v > a), Some(true));
    }

    #[test]
    fn an_implausible_rate_keeps_the_monotonic_clock() {
        let c = CycleClock::with_source(ClockSource::Tsc {
            hz: 5,
            from_cpuid: true,
        });
        assert_eq!(c.source(), ClockSource::Monotonic);
        assert_eq!(c.tsc_at(0), None);
    }

    /// Without a rate from CPUID the clock reads `CLOCK_MONOTONIC` at
    /// first, learns the rate from a reading [`LEARN_AFTER`] later without
    /// busy-waiting, and the count stays continuous across the switch.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_tsc_rate_is_learned_passively() {
        if !features::cpu().invariant_tsc {
            eprintln!("skipped: no invariant TSC on this CPU");
            return;
        }
        let c = CycleClock::monotonic(true);
        assert_eq!(c.source(), ClockSource::Monotonic);
        let before = c.now();
        std::thread::sleep(LEARN_AFTER + Duration::from_millis(5));
        let at_switch = c.now();
        assert!(at_switch >= before + LEARN_AFTER.as_nanos() as u64);
        let ClockSource::Tsc { hz, from_cpuid } = c.source() else {
            panic!("rate not learned: {:?}", c.source());
        };
        assert_eq!(from_cpuid, features::cpu().tsc_hz.is_some());
        let after = c.now();
        assert!(after >= at_switch, "{after} < {at_switch}");
        // The learned rate agrees with an explicit measurement (1%: the
        // two differ by reading jitter, far less than that).
        let measured = calibrate_tsc_hz(Duration::from_millis(20));
        let ratio = hz as f64 / measured as f64;
        assert!(
            (0.99..1.01).contains(&ratio),
            "learned {hz} Hz, measured {measured} Hz"
        );
        // Elapsed time agrees with the monotonic clock after the switch.
        let (t0, i0) = (c.now(), Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (t1, e) = (c.now(), i0.elapsed().as_nanos() as f64);
        let r = (t1 - t0) as f64 / e;
        assert!(
            (0.99..1.01).contains(&r),
            "TSC-derived {} ns vs {e} ns",
            t1 - t0
        );
    }

    #[test]
    fn monotonic_source_counts_nanoseconds() {
        let c = CycleClock::with_source(ClockSource::Monotonic);
        assert_eq!(c.hz(), 1_000_000_000);
        let a = c.now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(c.now() - a >= 2_000_000);
    }

    #[test]
    fn deadlines() {
        assert!(Deadline::after(Duration::MAX).is_never());
        assert!(!Deadline::NEVER.has_passed());
        assert_eq!(Deadline::NEVER.remaining(), None);
        let zero = Deadline::after(Duration::ZERO);
        assert!(zero.has_passed());
        assert_eq!(zero.remaining(), Some(Duration::ZERO));
        let later = Deadline::after(Duration::from_secs(10));
        assert!(!later.has_passed());
        assert_eq!(later.min(zero), zero);
        assert_eq!(Deadline::NEVER.min(zero), zero);
        assert!(Deadline::at_ticks(5).passed_at(5));
        assert!(!Deadline::at_ticks(5).passed_at(4));
    }

    #[test]
    fn read_overhead_is_small() {
        // Not a timing assertion: a read costing over 1 ms means the
        // measurement itself is broken.
        assert!(cycle_clock().read_overhead_ns() < 1e6);
    }
}
