//! Helpers shared by the stress tests. Each `tests/*.rs` file is its own
//! crate and uses only some of them.
#![allow(dead_code)]

#[macro_use]
pub mod locks;
pub mod owner_aware;

use std::fmt::Display;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use waitwise::barrier::Barrier;
use waitwise::Policy;

/// The policies the `*_per_policy` stress tests run under: blocking,
/// spinning with a 1 ms timeout, randomized, and a two-phase wait that
/// yields.
pub fn stress_policies() -> [Policy; 4] {
    [
        Policy::always_block(),
        Policy::always_spin_with_timeout(Duration::from_millis(1)),
        Policy::randomized(),
        Policy::two_phase(0.54).with_mechanism(waitwise::Mechanism::Yield),
    ]
}

/// The policies the timeout tests run under: the producer/consumer
/// default, blocking only and spinning only.
pub fn timeout_policies() -> [Policy; 3] {
    [
        Policy::for_kind(waitwise::SyncKind::ProducerConsumer),
        Policy::always_block(),
        Policy::always_spin(),
    ]
}

/// How far past its timeout a timed-out wait may return: scheduling on a
/// loaded 2-CPU guest.
pub const SLACK: Duration = Duration::from_millis(200);

/// Runs `wait(timeout)`, which must assert that its wait timed out, for
/// timeouts of 0, 1 and 20 ms, and checks that each took at least
/// `timeout` and less than `timeout + SLACK`; `what` names the wait in
/// the failure message.
pub fn assert_timeouts_bounded(what: impl Display, mut wait: impl FnMut(Duration)) {
    for timeout in [
        Duration::ZERO,
        Duration::from_millis(1),
        Duration::from_millis(20),
    ] {
        let t = Instant::now();
        wait(timeout);
        let took = t.elapsed();
        assert!(
            took >= timeout && took < timeout + SLACK,
            "{what}: {timeout:?} took {took:?}"
        );
    }
}

/// Runs `threads` threads through `episodes` double episodes of
/// `barrier` (built for `threads` parties): every thread passes every
/// episode, and the counter each episode's threads add to is exact at the
/// next one.
pub fn assert_barrier_passes_every_episode(barrier: &Barrier, threads: usize, episodes: u32) {
    let arrivals = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                for e in 0..u64::from(episodes) {
                    arrivals.fetch_add(1, Ordering::SeqCst);
                    barrier.wait();
                    assert!(arrivals.load(Ordering::SeqCst) >= (e + 1) * threads as u64);
                    barrier.wait();
                }
            });
        }
    });
    assert_eq!(
        arrivals.load(Ordering::SeqCst),
        u64::from(episodes) * threads as u64
    );
}
