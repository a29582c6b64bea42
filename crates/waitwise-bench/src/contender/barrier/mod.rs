//! Barrier contenders for the `barriers`, `asymmetry` and `oversub`
//! experiments: every implementation behind one call,
//! [`BarrierContender::wait`], so the harness measures them all alike. One
//! implementation per file.
//!
//! | contender | file |
//! |---|---|
//! | waitwise [`Barrier`](waitwise::barrier::Barrier) and [`PairBarrier`](waitwise::barrier::PairBarrier), default or under a policy | [`waitwise_barrier`] |
//! | `pthread_barrier_wait` through libc | [`pthread`] |
//! | `std::sync::Barrier` | [`std_barrier`] |
//! | a pure-spin sense-reversing barrier (the seed's *spin-loops*) | [`spin`] |

pub mod pthread;
pub mod spin;
pub mod std_barrier;
pub mod waitwise_barrier;

use super::Family;
use std::sync::Arc;
use std::time::Duration;
use waitwise::mechanism::Mechanism;
use waitwise::policy::{block_ns, Policy, PollLimit};

/// `s//inf`'s deadlock-avoidance timeout, in units of the block cost `B`.
/// Derived: Lim & Agarwal (section 6) cap `Ss//inf` polling at 50,000
/// cycles with `B` = 500 cycles, that is `100 B`.
pub const SPIN_TIMEOUT_IN_B: f64 = 100.0;

/// Bounds of [`spin_timeout`].
///
/// The lower bound, 2 ms, is about one scheduler time slice (the EEVDF base
/// slice is 0.75 ms times 1 + log2(CPUs); a pure-spin barrier with twice
/// as many threads as CPUs takes a few slices an episode). Lim &
/// Agarwal's `s//inf` ran under non-preemptive scheduling and spun until
/// its timeout; under a preemptive scheduler, a timeout shorter than a time
/// slice ends the polling before preemption would, and `s//inf` becomes a
/// two-phase policy with a long poll. That happens when `B` comes out
/// small (a calibration that catches a hypervisor's fast wake-up mode
/// measures a fraction of the usual `B`): the timeout would be a fraction
/// of a slice, and `s//inf` would no longer show what spinning until the
/// timeout costs in unmatched runs. The paper notes the same dependence:
/// `s//inf` runs "arbitrarily slowly, depending on the deadlock timeout
/// interval". The upper bound, 5 ms, is just above the time slice too, so a
/// run with a mis-measured, 10x too large `B` still cannot stall for long.
pub const SPIN_TIMEOUT_BOUNDS: (Duration, Duration) =
    (Duration::from_millis(2), Duration::from_millis(5));

/// The `s//inf` policy of the barrier and oversubscription experiments:
/// poll, and block only after [`spin_timeout`] (so unmatched runs cannot
/// deadlock, as in Lim & Agarwal).
pub fn spin_policy() -> Policy {
    Policy::always_spin_with_timeout(spin_timeout())
}

/// [`spin_policy`]'s timeout on this machine: [`SPIN_TIMEOUT_IN_B`] `* B`,
/// clamped to [`SPIN_TIMEOUT_BOUNDS`].
pub fn spin_timeout() -> Duration {
    let t = Duration::from_nanos((SPIN_TIMEOUT_IN_B * block_ns()) as u64);
    t.clamp(SPIN_TIMEOUT_BOUNDS.0, SPIN_TIMEOUT_BOUNDS.1)
}

/// How [`spin_timeout`] is chosen, for report notes: `100 B, clamped to
/// 2-5 ms`.
pub fn spin_timeout_rule() -> String {
    format!(
        "{SPIN_TIMEOUT_IN_B:.0} B, clamped to {}-{} ms",
        SPIN_TIMEOUT_BOUNDS.0.as_secs_f64() * 1e3,
        SPIN_TIMEOUT_BOUNDS.1.as_secs_f64() * 1e3
    )
}

/// A policy's row label: its Lim & Agarwal name, with `s//inf`'s timeout
/// in µs (`s//inf (350us timeout)`) rather than whole ms.
pub fn policy_label(policy: &Policy) -> String {
    match policy.limit() {
        PollLimit::Forever { timeout: Some(_) } if *policy == spin_policy() => {
            format!("s//inf ({}us timeout)", spin_timeout().as_micros())
        }
        _ => policy.name(),
    }
}

/// A barrier for a fixed number of threads. Thread `i` of the run calls
/// `wait(i)`; `i` is below the number of parties.
pub trait BarrierContender: Send + Sync {
    /// Blocks until every party has arrived in this episode; `true` for
    /// exactly one party per episode (the leader).
    fn wait(&self, thread_index: usize) -> bool;
    /// Waits that slept in the kernel so far (from the wait profile);
    /// `None` where the implementation cannot say (peers).
    fn blocks(&self) -> Option<u64> {
        None
    }
}

/// How many parties an implementation supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parties {
    /// Any number.
    Any,
    /// Exactly two (`PairBarrier`).
    Two,
}

type Make = Box<dyn Fn(usize, bool) -> Arc<dyn BarrierContender>>;

/// A barrier implementation to run.
pub struct BarrierSpec {
    /// Row name in reports.
    pub name: String,
    /// waitwise, peer or baseline.
    pub family: Family,
    /// The waitwise policy, when one was given explicitly.
    pub policy: Option<Policy>,
    /// Which party counts it supports.
    pub parties: Parties,
    make: Make,
}

impl BarrierSpec {
    /// A fresh barrier for `parties` threads; `profile` turns the wait
    /// profile on (waitwise only), for [`BarrierContender::blocks`].
    pub fn make(&self, parties: usize, profile: bool) -> Arc<dyn BarrierContender> {
        (self.make)(parties, profile)
    }

    /// Why it cannot run with `parties` threads, if it cannot.
    pub fn unsupported(&self, parties: usize) -> Option<String> {
        (self.parties == Parties::Two && parties != 2).then(|| "n/a: two parties only".to_string())
    }

    /// waitwise's `Barrier` with its default waiting (`s/b/0.62` while the
    /// parties fit on the CPUs, `Ss/b/0.62` when they outnumber them).
    pub fn barrier_default() -> Self {
        Self::waitwise("Barrier (default)".into(), None, Parties::Any, |n, p| {
            Arc::new(waitwise_barrier::Central::new(n, None, p))
        })
    }

    /// waitwise's `Barrier` under `policy` exactly.
    pub fn barrier_with(policy: Policy) -> Self {
        Self::waitwise(
            format!("Barrier {}", policy_label(&policy)),
            Some(policy),
            Parties::Any,
            move |n, p| Arc::new(waitwise_barrier::Central::new(n, Some(policy), p)),
        )
    }

    /// waitwise's `PairBarrier` with its default waiting.
    pub fn pair_default() -> Self {
        Self::waitwise(
            "PairBarrier (default)".into(),
            None,
            Parties::Two,
            |_, p| Arc::new(waitwise_barrier::Pair::new(p)),
        )
    }

    /// `pthread_barrier_wait`.
    pub fn pthread() -> Self {
        Self::other("pthread_barrier_wait", Family::Peer, |n, _| {
            Arc::new(pthread::PthreadBarrier::new(n))
        })
    }

    /// `std::sync::Barrier`.
    pub fn std() -> Self {
        Self::other("std::sync::Barrier", Family::Peer, |n, _| {
            Arc::new(std_barrier::StdBarrier::new(n))
        })
    }

    /// The pure-spin sense-reversing barrier.
    pub fn spin() -> Self {
        Self::other("spin (sense-reversing)", Family::Baseline, |n, _| {
            Arc::new(spin::SpinBarrier::new(n))
        })
    }

    fn waitwise(
        name: String,
        policy: Option<Policy>,
        parties: Parties,
        make: impl Fn(usize, bool) -> Arc<dyn BarrierContender> + 'static,
    ) -> Self {
        Self {
            name,
            family: Family::Waitwise,
            policy,
            parties,
            make: Box::new(make),
        }
    }

    fn other(
        name: &str,
        family: Family,
        make: impl Fn(usize, bool) -> Arc<dyn BarrierContender> + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            family,
            policy: None,
            parties: Parties::Any,
            make: Box::new(make),
        }
    }
}

/// The policies `Barrier` runs under in the `barriers` experiment:
/// `s//inf` (with timeout), `/b/0`, `s/b/0.62`, `s/b/1`, `rand/b`,
/// `Ss/b/0.62`.
pub fn barrier_policies() -> Vec<Policy> {
    vec![
        spin_policy(),
        Policy::always_block(),
        Policy::two_phase(waitwise::policy::ALPHA_UNIFORM),
        Policy::two_phase(1.0),
        Policy::randomized(),
        Policy::two_phase(waitwise::policy::ALPHA_UNIFORM).with_mechanism(Mechanism::Yield),
    ]
}

/// Every implementation of `waitwise barriers`: the default `Barrier`, it
/// under each of [`barrier_policies`], `PairBarrier`, then the peers and
/// the pure-spin baseline.
pub fn all() -> Vec<BarrierSpec> {
    let mut v = vec![BarrierSpec::barrier_default()];
    v.extend(
        barrier_policies()
            .into_iter()
            .map(BarrierSpec::barrier_with),
    );
    v.extend([
        BarrierSpec::pair_default(),
        BarrierSpec::pthread(),
        BarrierSpec::std(),
        BarrierSpec::spin(),
    ]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_timeout_rule_names_the_bounds() {
        assert_eq!(spin_timeout_rule(), "100 B, clamped to 2-5 ms");
        let t = spin_timeout();
        assert!(SPIN_TIMEOUT_BOUNDS.0 <= t && t <= SPIN_TIMEOUT_BOUNDS.1);
    }
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Every implementation keeps episodes apart and elects one leader per
    /// episode, at 2 and 3 threads.
    #[test]
    fn every_barrier_separates_episodes() {
        for spec in all() {
            for n in [2usize, 3] {
                if spec.unsupported(n).is_some() {
                    continue;
                }
                let b = spec.make(n, true);
                let (leaders, arrived) = (AtomicUsize::new(0), AtomicUsize::new(0));
                std::thread::scope(|s| {
                    for tid in 0..n {
                        let (b, leaders, arrived, name) = (&b, &leaders, &arrived, &spec.name);
                        s.spawn(move || {
                            for e in 0..50 {
                                arrived.fetch_add(1, Ordering::SeqCst);
                                if b.wait(tid) {
                                    leaders.fetch_add(1, Ordering::SeqCst);
                                }
                                assert!(arrived.load(Ordering::SeqCst) >= (e + 1) * n, "{name}");
                            }
                        });
                    }
                });
                assert_eq!(leaders.load(Ordering::SeqCst), 50, "{} n={n}", spec.name);
                if spec.family == Family::Waitwise {
                    assert!(b.blocks().is_some(), "{}", spec.name);
                }
            }
        }
    }
}
