//! PAUSE in time: delays measured on the clock instead of counted in
//! PAUSEs, and the cost of one PAUSE measured per CPU at run time.
//!
//! A PAUSE costs about 10 cycles on Intel cores before Skylake, up to 140
//! from Skylake on, a few on AMD Zen, and differs between the core types of
//! a hybrid CPU. Runtimes that counted PAUSEs broke when it changed (.NET
//! measured 14-17 against 125-150 cycles per PAUSE; RocksDB assumed 200
//! PAUSEs ≈ 1 µs where they took 8.6 µs). So every spin budget in waitwise
//! is a time: [`pause_for_ns`] pauses until the clock says the time has
//! passed, whatever a PAUSE costs on the CPU it runs on. The cost itself is
//! reported, not used: [`pause_ns_here`] and [`pause_ns_per_cpu`] measure it
//! (for `waitwise probe` and the interference lab), never inside a wait.

use crate::clock::cycle_clock;

/// PAUSEs timed per batch by [`pause_ns_here`]. Guessed: 2,000 PAUSEs are
/// 10 µs-100 µs, long enough to swamp two clock reads (~20 ns).
pub const PAUSES_PER_BATCH: u32 = 2_000;

/// Batches per measurement; the least disturbed (shortest) one counts.
pub const BATCHES: usize = 7;

/// Spins with PAUSE until `ns` nanoseconds have passed on the cycle clock
/// (at least one PAUSE). The clock is read after every PAUSE: a TSC read
/// stays inside the core, so it costs the waiter a few cycles and the
/// others nothing. Under loom, one spin hint (a model-checked yield): the
/// models explore interleavings, not timing.
#[inline]
pub fn pause_for_ns(ns: u64) {
    crate::shim::spin_hint();
    #[cfg(not(loom))]
    {
        let clock = cycle_clock();
        let end = clock.now().saturating_add(clock.ns_to_ticks(ns));
        while clock.now() < end {
            crate::shim::spin_hint();
        }
    }
    #[cfg(loom)]
    let _ = ns;
}

/// The cost of one PAUSE on the CPU the caller runs on, ns: the shortest
/// of [`BATCHES`] batches of [`PAUSES_PER_BATCH`], over the count. A
/// thread that migrates meanwhile measures a mix; pin it first
/// ([`pause_ns_per_cpu`] does).
pub fn pause_ns_here() -> f64 {
    let clock = cycle_clock();
    (0..BATCHES)
        .map(|_| {
            let t0 = clock.start();
            for _ in 0..PAUSES_PER_BATCH {
                std::hint::spin_loop();
            }
            let t1 = clock.end();
            clock.ticks_to_ns(t1.saturating_sub(t0)) / f64::from(PAUSES_PER_BATCH)
        })
        .fold(f64::INFINITY, f64::min)
}

/// One CPU's PAUSE cost.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CpuPauseCost {
    /// The CPU.
    pub cpu: usize,
    /// One PAUSE there, ns; `None` if the thread could not be pinned there.
    pub pause_ns: Option<f64>,
}

/// [`pause_ns_here`] on each of `cpus`, from a new thread pinned to each
/// in turn (the caller's own affinity is left alone).
pub fn pause_ns_per_cpu(cpus: &[usize]) -> Vec<CpuPauseCost> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let before = crate::affinity::allowed_cpus().ok();
            let out = cpus
                .iter()
                .map(|&cpu| {
                    // Back to the full mask first: a pin narrows it.
                    if let Some(mask) = &before {
                        let _ = crate::affinity::set_current_thread_affinity(mask);
                    }
                    CpuPauseCost {
                        cpu,
                        pause_ns: crate::affinity::pin_current_thread(cpu)
                            .ok()
                            .map(|()| pause_ns_here()),
                    }
                })
                .collect();
            out
        })
        .join()
        .expect("the measuring thread does not panic")
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn pause_for_lasts_at_least_the_time() {
        let t = Instant::now();
        pause_for_ns(200_000);
        assert!(t.elapsed() >= Duration::from_micros(200));
        pause_for_ns(0);
    }

    #[test]
    fn a_pause_costs_a_positive_finite_time_on_every_allowed_cpu() {
        let here = pause_ns_here();
        assert!(here.is_finite() && here > 0.0, "{here}");
        let cpus = crate::affinity::allowed_cpus().unwrap();
        let per = pause_ns_per_cpu(&cpus);
        assert_eq!(per.len(), cpus.len());
        for c in per {
            let ns = c.pause_ns.expect("an allowed CPU can be pinned");
            assert!(ns.is_finite() && ns > 0.0, "{c:?}");
        }
        // A CPU that is not allowed (or does not exist) is reported, not fatal.
        let bad = pause_ns_per_cpu(&[usize::MAX / 2]);
        assert_eq!(bad[0].pause_ns, None);
    }
}
