//! A pure-spin sense-reversing barrier (Mellor-Crummey & Scott 1991, the
//! seed's *spin-loops*): a counter and a global sense, PAUSE-polled
//! forever. The baseline for speed with one CPU per thread, and what
//! polling costs when threads outnumber CPUs.

use super::BarrierContender;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The barrier. The local sense is the global sense read on arrival: it
/// cannot flip before this thread's own arrival is counted, so no
/// per-thread state is needed.
pub struct SpinBarrier {
    /// Arrivals still missing in this episode.
    count: AtomicUsize,
    /// Flipped by the last arrival: releases the episode.
    sense: AtomicBool,
    n: usize,
}

impl SpinBarrier {
    /// For `n` threads (`0` acts as 1).
    pub fn new(n: usize) -> Self {
        let n = n.max(1);
        Self {
            count: AtomicUsize::new(n),
            sense: AtomicBool::new(false),
            n,
        }
    }
}

impl BarrierContender for SpinBarrier {
    fn wait(&self, _thread_index: usize) -> bool {
        // Acquire: pairs with the previous release, so the counter reset
        // that preceded it is visible before our fetch_sub.
        let sense = self.sense.load(Ordering::Acquire);
        // AcqRel: the last arrival acquires every arrival's writes and
        // publishes them with its sense store.
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Reset before the release: nobody arrives for the next episode
            // before seeing the flipped sense.
            self.count.store(self.n, Ordering::Relaxed);
            self.sense.store(!sense, Ordering::Release);
            return true;
        }
        while self.sense.load(Ordering::Acquire) == sense {
            std::hint::spin_loop();
        }
        false
    }
}
