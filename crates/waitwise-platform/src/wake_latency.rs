//! The wake-up latency of futex sleeps, learned from the program's own
//! wake-ups: how long a sleeper takes to run again after a waker asked the
//! kernel to wake it. This is the block cost `B` of the waiting policies
//! (the time a blocked waiter loses against a polling one), measured where
//! the program really blocks instead of once in a calibration: on a
//! virtual machine it follows the hypervisor's wake-up modes.
//!
//! **Sampling.** A waker stamps the cycle clock into a small table, at a
//! slot chosen by the futex's address, just before its `futex_wake`
//! ([`waking`]). A sleeper notes the clock before it sleeps and, when the
//! kernel wakes it, reads the slot of its own address ([`woken`]): if the
//! stamp is for its address and was made after it fell asleep, the
//! difference is one sample. Samples over [`MAX_SAMPLE_NS`] are dropped.
//!
//! At most one sample is taken per [`MIN_SAMPLE_INTERVAL_NS`] in the
//! process: a program that wakes threads hundreds of thousands of times a
//! second would otherwise make every wake-up write the window's count, one
//! cache line that all its CPUs then pass around. The interval is far
//! shorter than a hypervisor's wake-up mode lasts (tens of ms), so the
//! window still follows a change of mode within a few ms of wake-ups.
//!
//! **Estimate.** The last [`WINDOW`] samples are kept; every
//! [`PUBLISH_EVERY`] samples the thread that recorded the last one takes
//! their lower quartile and publishes it. [`estimate`] returns it once
//! [`MIN_SAMPLES`] were taken.
//!
//! Why the lower quartile and not the median: a sample is the wake-up
//! cost only when the woken sleeper found a CPU to run on; one that then
//! waited for a CPU measured the run queue too, which a polling waiter
//! would have paid as well (it holds a CPU another thread needs). In a
//! program with more runnable threads than CPUs most wake-ups wait: pigz
//! with 4 threads on 2 CPUs gave samples whose median was 2.4x their lower
//! quartile (23 µs against 9.8 µs), and 6x under real-time scheduling,
//! while a program that does not oversubscribe gives a tight distribution
//! (a Python thread pool: lower quartile 2.8 µs, median 2.9 µs). A
//! quantile stays robust to the occasional wrong pairing, as the median is.
//!
//! Every wait that computes a poll limit reads the estimate, so the
//! published quartile has a cache line of its own, written once per
//! [`PUBLISH_EVERY`] samples: a read of it does not miss because another
//! CPU recorded a sample.
//!
//! # Memory ordering
//!
//! Every access here is `Relaxed`: the table and the window hold
//! statistics, not synchronization. A stamp and its address may come from
//! two different wakers (a torn pair), and a sample may be overwritten
//! while the quartile is taken; either costs one wrong sample, which the
//! quartile ignores.

use crate::clock::cycle_clock;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Slots in the stamp table (a power of two). Chosen: more than the
/// futex words a program usually wakes at once, so two rarely share one.
const SLOTS: usize = 64;
/// Samples kept for the quartile. Chosen: enough for a quartile that one
/// hypervisor mode dominates, few enough to follow a mode change within a
/// few dozen wake-ups.
pub const WINDOW: usize = 64;
/// A new quartile every this many samples.
pub const PUBLISH_EVERY: u64 = 16;
/// Samples needed before [`estimate`] answers.
pub const MIN_SAMPLES: u64 = 16;
/// Longest sample kept, in ns. Chosen: 1 ms is far above any wake-up cost
/// (a few µs to a few tens of µs) and below a scheduler time slice.
pub const MAX_SAMPLE_NS: u64 = 1_000_000;
/// Shortest time between two samples of the process, in ns. Chosen: a
/// window of [`WINDOW`] samples then spans at least 1.3 ms, well within a
/// hypervisor's wake-up mode, and recording costs a busy program at most
/// 50,000 writes of the shared count a second.
pub const MIN_SAMPLE_INTERVAL_NS: u64 = 20_000;
// The first quartile is published at the `PUBLISH_EVERY`th sample, which
// `estimate_ns` relies on for its minimum.
const _: () = assert!(PUBLISH_EVERY >= MIN_SAMPLES);

struct Stamp {
    address: AtomicUsize,
    at: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)] // an array initializer
const EMPTY_STAMP: Stamp = Stamp {
    address: AtomicUsize::new(0),
    at: AtomicU64::new(0),
};
static STAMPS: [Stamp; SLOTS] = [EMPTY_STAMP; SLOTS];

#[allow(clippy::declare_interior_mutable_const)] // an array initializer
const NO_SAMPLE: AtomicU32 = AtomicU32::new(0);
static SAMPLES: [AtomicU32; WINDOW] = [NO_SAMPLE; WINDOW];

/// What recording writes: the samples taken so far and the clock reading
/// of the last one (module doc: the interval between samples).
#[repr(C, align(64))]
struct Recording {
    count: AtomicU64,
    last_at: AtomicU64,
}
static RECORDING: Recording = Recording {
    count: AtomicU64::new(0),
    last_at: AtomicU64::new(0),
};

/// The published quartile, ns (0 before the first), on a cache line of its
/// own (module doc).
#[repr(align(64))]
struct Published(AtomicU64);
static QUARTILE_NS: Published = Published(AtomicU64::new(0));

/// What the program's wake-ups taught so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeLatency {
    /// The lower quartile of the last [`WINDOW`] samples, ns.
    pub ns: u64,
    /// Samples taken in this process (including those no longer in the
    /// window).
    pub samples: u64,
}

#[inline]
fn slot(address: usize) -> &'static Stamp {
    // Futex words are 4-byte aligned and usually on their own cache
    // lines: drop the low bits, then mix.
    let h = (address >> 2).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize);
    &STAMPS[h >> (usize::BITS - SLOTS.trailing_zeros())]
}

/// A waker is about to wake sleepers on the futex at `address`.
#[inline]
pub fn waking(address: *const u32) {
    let s = slot(address as usize);
    s.at.store(cycle_clock().now(), Relaxed);
    s.address.store(address as usize, Relaxed);
}

/// The clock reading a sleeper takes before it sleeps, for [`woken`].
#[inline]
pub fn falling_asleep() -> u64 {
    cycle_clock().now()
}

/// A sleeper on the futex at `address` that fell asleep at `since` (from
/// [`falling_asleep`]) was woken by the kernel: records one sample if a
/// waker stamped this address after that.
#[inline]
pub fn woken(address: *const u32, since: u64) {
    let s = slot(address as usize);
    if s.address.load(Relaxed) != address as usize {
        return;
    }
    let at = s.at.load(Relaxed);
    let now = cycle_clock().now();
    if at >= since && now > at && now - at <= MAX_SAMPLE_NS && sample_due(now) {
        record(now - at);
    }
}

/// Whether a sample may be taken at `now`: none was in the last
/// [`MIN_SAMPLE_INTERVAL_NS`]. Marks `now` as the last when it may (two
/// threads that both pass record two samples, which costs nothing).
#[inline]
fn sample_due(now: u64) -> bool {
    if !interval_passed(RECORDING.last_at.load(Relaxed), now) {
        return false;
    }
    RECORDING.last_at.store(now, Relaxed);
    true
}

/// Whether a sample at `now` is [`MIN_SAMPLE_INTERVAL_NS`] or more after
/// the last one, at `last`.
#[inline]
fn interval_passed(last: u64, now: u64) -> bool {
    now.saturating_sub(last) >= MIN_SAMPLE_INTERVAL_NS
}

/// The cycle-clock reading of the last waker's stamp for the futex at
/// `address` ([`waking`]: taken just before its `futex_wake`, after the
/// store that released the sleepers), or `None` when the stamp's slot now
/// holds another address. A sleeper woken on `address` reads when it was
/// released, which its own clock after the wake-up overstates by the
/// wake-up latency (the adaptive policy learns wait lengths this way). The
/// caller checks that the stamp is not older than its wait: a later waker
/// of the same address, or a torn pair, may have replaced it.
#[inline]
pub fn last_waking(address: *const u32) -> Option<u64> {
    let s = slot(address as usize);
    let at = s.at.load(Relaxed);
    (s.address.load(Relaxed) == address as usize).then_some(at)
}

/// Adds one sample (ns) to the window and publishes a new quartile every
/// [`PUBLISH_EVERY`] samples.
pub fn record(ns: u64) {
    let i = RECORDING.count.fetch_add(1, Relaxed);
    SAMPLES[(i % WINDOW as u64) as usize].store(ns.min(u64::from(u32::MAX)) as u32, Relaxed);
    let n = i + 1;
    if n.is_multiple_of(PUBLISH_EVERY) {
        let kept = n.min(WINDOW as u64) as usize;
        let mut window = [0u32; WINDOW];
        for (w, s) in window.iter_mut().zip(SAMPLES.iter()).take(kept) {
            *w = s.load(Relaxed);
        }
        let window = &mut window[..kept];
        window.sort_unstable();
        QUARTILE_NS.0.store(u64::from(window[kept / 4]), Relaxed);
    }
}

/// The learned wake-up latency, once [`MIN_SAMPLES`] were taken.
#[inline]
pub fn estimate() -> Option<WakeLatency> {
    let ns = estimate_ns()?;
    Some(WakeLatency {
        ns,
        samples: RECORDING.count.load(Relaxed),
    })
}

/// The learned wake-up latency in ns, as [`estimate`] without the sample
/// count: the one load every wait's poll limit makes, of a line written
/// only when a quartile is published.
#[inline]
pub fn estimate_ns() -> Option<u64> {
    // Non-zero only once published, at the `PUBLISH_EVERY`th sample or
    // later (at least `MIN_SAMPLES`); a sample is never 0 ns.
    let ns = QUARTILE_NS.0.load(Relaxed);
    (ns != 0).then_some(ns)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn samples_come_at_most_one_per_interval() {
        assert!(interval_passed(0, MIN_SAMPLE_INTERVAL_NS));
        assert!(!interval_passed(5_000, 5_000 + MIN_SAMPLE_INTERVAL_NS - 1));
        assert!(interval_passed(5_000, 5_000 + MIN_SAMPLE_INTERVAL_NS));
        // A clock reading before the last sample's (another thread's,
        // taken later) is no new interval.
        assert!(!interval_passed(5_000, 4_000));
    }

    #[test]
    fn the_published_estimate_has_a_cache_line_of_its_own() {
        assert!(std::mem::align_of::<Published>() >= 64);
        assert!(std::mem::size_of::<Published>() >= 64);
        assert!(std::mem::align_of::<Recording>() >= 64);
    }

    /// What is a sample and what is not; real futex wake-ups that teach
    /// the latency are `futex::tests::wake_ups_teach_the_wake_latency`.
    #[test]
    fn only_a_wake_of_the_same_address_after_the_sleep_is_a_sample() {
        // A stamp for another address, or one older than the sleep, is
        // not a sample of this sleep.
        let (a, b) = (Box::new(0u32), Box::new(0u32));
        let before = RECORDING.count.load(Relaxed);
        let since = falling_asleep();
        waking(&*a);
        woken(&*b, since);
        let stale_since = cycle_clock().now() + 1_000_000_000;
        woken(&*a, stale_since);
        assert_eq!(RECORDING.count.load(Relaxed), before);
        // The stamp reads back for its address (unless a concurrent test's
        // wake took the slot in between), not before the wait began.
        let before_stamp = cycle_clock().now();
        waking(&*a);
        if let Some(at) = last_waking(&*a) {
            assert!(at >= before_stamp && at <= cycle_clock().now());
        }
    }
}
