//! Where the scheduler runs a thread woken from a futex sleep: on the
//! CPU it slept on, or beside the thread that woke it.
//!
//! Linux puts a woken thread on an idle CPU near the one it last ran on,
//! as a rule. Some guests put it on its waker's CPU while another CPU
//! idles: a guest whose idle vCPUs look preempted, or one told to pack
//! threads onto few vCPUs. Two threads that hand work back and forth and
//! sometimes sleep then share one CPU, each running only when the other
//! waits, until the load balancer moves one away (on a 2-vCPU guest here,
//! 1-35 ms later). A primitive's hand-offs in that time cost a context
//! switch instead of a cache-line transfer, and a futex round trip
//! measured then is one CPU's switch, not a wake-up across CPUs. The probe
//! reports how often a wake-up lands beside its waker, so that a report
//! can say why.
//!
//! The measurement: two threads of the probe's own, the waker pinned to
//! one allowed CPU and the sleeper started on another, then allowed on
//! every CPU before it sleeps on a futex. Both sleep [`IDLE_BEFORE_WAKE`]
//! (every CPU may idle), then the waker wakes the sleeper, which notes
//! where it runs. A wake-up counts when the sleeper slept on another CPU
//! than its waker's; it is "beside" when it then runs on the waker's.

use crate::cpu_note::{current_cpu, UNKNOWN};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use waitwise_platform::affinity;
use waitwise_platform::futex::Futex;

/// Wake-ups tried.
pub const WAKE_UPS: u32 = 16;

/// How long both threads sleep before each wake-up: long enough for an
/// idle vCPU to halt (a KVM guest polls ~0.2 ms at most before it does).
pub const IDLE_BEFORE_WAKE: Duration = Duration::from_millis(2);

/// How the wake-ups landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct WakePlacement {
    /// Wake-ups of a thread that slept on another CPU than its waker's.
    pub counted: u32,
    /// Of those, the ones after which it ran on its waker's CPU.
    pub beside_waker: u32,
}

impl WakePlacement {
    /// Whether most counted wake-ups landed beside the waker.
    pub fn packs(&self) -> bool {
        self.counted > 0 && 2 * self.beside_waker > self.counted
    }
}

/// Measures the placement of [`WAKE_UPS`] wake-ups; `None` where the
/// process may run on one CPU only, or its threads cannot be pinned, or
/// their CPU cannot be read.
pub fn measure() -> Option<WakePlacement> {
    let allowed = affinity::allowed_cpus()
        .ok()
        .filter(|cpus| cpus.len() >= 2)?;
    let (waker_cpu, sleeper_cpu) = (allowed[0], allowed[1]);
    // The word counts wake-ups; the sleeper notes its CPU before each
    // sleep and after each wake-up. The notes are Relaxed: each is read
    // milliseconds after it was made (`before`), or once it shows a value
    // (`after`), and a stale one would miscount one wake-up, nothing more.
    let word = Futex::new(0);
    let (before, after) = (AtomicU32::new(UNKNOWN), AtomicU32::new(UNKNOWN));
    let pinned = |cpus: &[usize]| affinity::set_current_thread_affinity(cpus).is_ok();
    std::thread::scope(|s| {
        let sleeper = s.spawn(|| {
            let mut ok = true;
            for round in 0..WAKE_UPS {
                // Runs on its own CPU, then may run anywhere once woken.
                ok &= pinned(&[sleeper_cpu]) && pinned(&allowed);
                before.store(current_cpu(), Ordering::Relaxed);
                // Acquire, and the waker's Release store: the round counter
                // pairs as a futex word's value does; the notes beside it
                // are hints (above).
                while word.value().load(Ordering::Acquire) == round {
                    word.wait(round, Some(Duration::from_secs(1)));
                }
                after.store(current_cpu(), Ordering::Relaxed);
            }
            ok
        });
        let waker = s.spawn(|| {
            let mut placement = WakePlacement {
                counted: 0,
                beside_waker: 0,
            };
            let ok = pinned(&[waker_cpu]);
            for round in 0..WAKE_UPS {
                std::thread::sleep(IDLE_BEFORE_WAKE);
                let slept_on = before.load(Ordering::Relaxed);
                let waker = current_cpu();
                // Release: pairs with the sleeper's Acquire load (above).
                word.value().store(round + 1, Ordering::Release);
                word.wake(1);
                let woke_on = loop {
                    match after.swap(UNKNOWN, Ordering::Relaxed) {
                        UNKNOWN => std::thread::yield_now(),
                        cpu => break cpu,
                    }
                };
                if slept_on != UNKNOWN && waker != UNKNOWN && slept_on != waker {
                    placement.counted += 1;
                    placement.beside_waker += u32::from(woke_on == waker);
                }
            }
            ok.then_some(placement)
        });
        let sleeper_ok = sleeper.join().unwrap_or(false);
        let placement = waker.join().ok().flatten();
        placement.filter(|p| sleeper_ok && p.counted > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_wake_ups_beside_the_waker_is_packing() {
        let p = |counted, beside_waker| WakePlacement {
            counted,
            beside_waker,
        };
        assert!(p(16, 9).packs());
        assert!(!p(16, 8).packs(), "half is not most");
        assert!(!p(0, 0).packs(), "nothing counted");
    }

    #[test]
    fn every_counted_wake_up_is_placed_somewhere() {
        // Whatever the scheduler does, the count is consistent and the
        // measurement ends.
        if let Some(placement) = measure() {
            assert!(placement.counted <= WAKE_UPS);
            assert!(placement.beside_waker <= placement.counted);
        }
    }
}
