//! Loom models of the idle-CPU signal's cache
//! ([`waitwise::policy::idle_extension::DemandCache`]): waiters that reach
//! their poll limit at once ask the cache; at most one per period reads
//! the (costly) signal, the others use the previous answer, and every
//! answer seen is one that was read or the initial "unknown". Both words
//! are `Relaxed`, claimed with one CAS on the stamp. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_idle_extension`
//! (under a second).
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use waitwise::policy::idle_extension::{CpuDemand, DemandCache};
use waitwise_platform::shim::Arc;

const MAX_AGE: u64 = 100;

/// Two waiters at the same instant on a cache never read: exactly one
/// reads the signal; the other sees its answer or "unknown".
#[test]
fn one_read_per_period() {
    loom::model(|| {
        let cache = Arc::new(DemandCache::new());
        let reads = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (cache, reads) = (cache.clone(), reads.clone());
                thread::spawn(move || {
                    cache.get(1000, MAX_AGE, || {
                        reads.fetch_add(1, Ordering::Relaxed);
                        CpuDemand::Idle
                    })
                })
            })
            .collect();
        for h in handles {
            let d = h.join().unwrap();
            assert!(matches!(d, CpuDemand::Idle | CpuDemand::Unknown), "{d:?}");
        }
        assert_eq!(reads.load(Ordering::Relaxed), 1);
        assert_eq!(cache.last(), CpuDemand::Idle);
    });
}

/// A waiter in a later period refreshes while one of the first period
/// reads: at most two reads, every answer one that was read (or the
/// initial one), the last stored one of the two.
#[test]
fn refreshes_in_a_later_period_keep_answers_valid() {
    loom::model(|| {
        let cache = Arc::new(DemandCache::new());
        let reads = Arc::new(AtomicUsize::new(0));
        let periods = [(1000, CpuDemand::Idle), (2000, CpuDemand::Busy)];
        let handles: Vec<_> = periods
            .iter()
            .map(|&(now, answer)| {
                let (cache, reads) = (cache.clone(), reads.clone());
                thread::spawn(move || {
                    cache.get(now, MAX_AGE, || {
                        reads.fetch_add(1, Ordering::Relaxed);
                        answer
                    })
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let n = reads.load(Ordering::Relaxed);
        assert!((1..=2).contains(&n), "{n} reads");
        assert!(matches!(cache.last(), CpuDemand::Idle | CpuDemand::Busy));
    });
}
