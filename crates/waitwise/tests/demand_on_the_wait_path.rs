//! The machine's demand as the wait paths read it
//! (`waitwise::policy::idle_extension`, "The cache on the wait path"): a
//! wait that starts acts on the cached answer, and a wait that lasts
//! reads a stale one again for the waits after it. In a process of its
//! own: the cache is the process's.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use waitwise::policy::idle_extension::{demand_at_wait_start, CpuDemand, SIGNAL_MAX_AGE_NS};
use waitwise::Event;

#[test]
fn a_wait_that_lasts_reads_the_machine_again_for_the_waits_after_it() {
    // One busy loop more than the CPUs keeps more threads runnable than
    // the machine has CPUs, whatever else runs.
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let stop = AtomicBool::new(false);
    let demand = std::thread::scope(|s| {
        for _ in 0..=cpus {
            s.spawn(|| {
                // Relaxed: a stop flag, read until it flips.
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        // Whatever the cache holds is stale now.
        std::thread::sleep(Duration::from_nanos(10 * SIGNAL_MAX_AGE_NS));
        // A wait nobody ends polls to its limit and sleeps to its deadline:
        // it reads the machine on the way.
        let notified = Event::new().wait_timeout(Duration::from_millis(5));
        let demand = demand_at_wait_start();
        stop.store(true, Ordering::Relaxed);
        assert!(!notified);
        demand
    });
    assert_eq!(demand, CpuDemand::Busy);
}
