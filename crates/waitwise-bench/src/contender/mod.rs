//! Contenders for the condition-wait/notify experiments: one waiter, one
//! notifier, the same two calls for every implementation, so the harness
//! measures them all alike. One implementation per file.
//!
//! | contender | file |
//! |---|---|
//! | waitwise `Event` under a policy/mechanism | [`event`] |
//! | `pthread_cond_wait`/`pthread_cond_signal` through libc | [`pthread_cond`] |
//! | `std::sync::Condvar` | [`std_condvar`] |
//! | `parking_lot::Condvar` | [`parking_lot_condvar`] |
//! | `std::thread::park`/`unpark` | [`park`] |
//! | a futex word: sleep at once, wake only a sleeper | [`futex`] |
//! | one atomic store to a spun-on flag (the baseline) | [`store`] |

pub mod barrier;
pub mod event;
pub mod futex;
pub mod park;
pub mod parking_lot_condvar;
pub mod pthread_cond;
pub mod std_condvar;
pub mod store;

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use waitwise::mechanism::{Mechanism, WaitpkgState};
use waitwise::policy::Policy;

/// A one-shot wait/notify pair: `notify` releases exactly one `wait`, and a
/// notify that comes first is remembered (auto-reset).
pub trait WaitPair: Send + Sync {
    /// Blocks until notified; consumes the notification.
    fn wait(&self);
    /// Releases the waiter (or leaves the notification pending).
    fn notify(&self);
    /// Called once on the waiter's thread before the first `wait`
    /// (park/unpark needs the waiter's handle).
    fn register_waiter(&self) {}
}

/// Who wrote the implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// waitwise itself.
    Waitwise,
    /// A peer library or the C library.
    Peer,
    /// A reference point, not a usable primitive.
    Baseline,
}

impl Family {
    /// `"waitwise"`, `"peer"` or `"baseline"`: the family column of the
    /// result tables (the same name as in the JSON results).
    pub fn name(self) -> &'static str {
        match self {
            Family::Waitwise => "waitwise",
            Family::Peer => "peer",
            Family::Baseline => "baseline",
        }
    }
}

/// A contender to run, or to report as not available here.
pub struct Contender {
    /// Row name in reports.
    pub name: String,
    /// waitwise or peer.
    pub family: Family,
    /// `Err(reason)`: listed as "n/a: reason" and never run.
    pub availability: Result<(), String>,
    /// The policy, for waitwise contenders.
    pub policy: Option<Policy>,
    make: Box<dyn Fn() -> Arc<dyn WaitPair>>,
}

impl Contender {
    /// A fresh pair for one run.
    pub fn make(&self) -> Arc<dyn WaitPair> {
        (self.make)()
    }

    fn waitwise(name: String, policy: Policy) -> Self {
        let availability = match policy.mechanism().availability() {
            a if a.available => Ok(()),
            a => Err(a.reason.unwrap_or_else(|| "not available".into())),
        };
        Contender {
            name,
            family: Family::Waitwise,
            availability,
            policy: Some(policy),
            make: Box::new(move || Arc::new(event::EventPair::new(policy))),
        }
    }

    fn peer(name: &str, make: impl Fn() -> Arc<dyn WaitPair> + 'static) -> Self {
        Contender {
            name: name.into(),
            family: Family::Peer,
            availability: Ok(()),
            policy: None,
            make: Box::new(make),
        }
    }
}

/// Polling mechanisms shown as always-poll (`s//inf`) rows, by name.
pub const POLL_MECHANISMS: [Mechanism; 12] = [
    Mechanism::Spin,
    Mechanism::Pause,
    Mechanism::Backoff,
    Mechanism::Yield,
    Mechanism::Umwait(WaitpkgState::C02),
    Mechanism::Umwait(WaitpkgState::C01),
    Mechanism::Tpause,
    Mechanism::Mwaitx,
    Mechanism::Delay(waitwise::mechanism::DelayKind::IntDiv),
    Mechanism::Delay(waitwise::mechanism::DelayKind::FpDiv),
    Mechanism::Delay(waitwise::mechanism::DelayKind::PrivateCas),
    Mechanism::Delay(waitwise::mechanism::DelayKind::CacheMiss),
];

/// Every contender of `waitwise mechanisms`: each mechanism alone (always
/// poll, or block), each two-phase alpha, yield- and hardware-polling
/// two-phase, randomized, then the peers.
pub fn all() -> Vec<Contender> {
    let mut v = Vec::new();
    for m in POLL_MECHANISMS {
        v.push(Contender::waitwise(
            m.name().to_string(),
            Policy::always_spin().with_mechanism(m),
        ));
    }
    v.push(Contender::waitwise("block".into(), Policy::always_block()));
    for (label, policy) in two_phase_policies() {
        v.push(Contender::waitwise(label, policy));
    }
    v.push(Contender::peer("pthread_cond", || {
        Arc::new(pthread_cond::PthreadCondPair::new())
    }));
    v.push(Contender::peer("std::sync::Condvar", || {
        Arc::new(std_condvar::StdCondvarPair::new())
    }));
    v.push(Contender::peer("parking_lot::Condvar", || {
        Arc::new(parking_lot_condvar::ParkingLotPair::new())
    }));
    v.push(Contender::peer("std::thread::park", || {
        Arc::new(park::ParkPair::new())
    }));
    v.push(Contender {
        name: "atomic store".into(),
        family: Family::Baseline,
        availability: Ok(()),
        policy: None,
        make: Box::new(|| Arc::new(store::StorePair::new())),
    });
    v
}

/// The two-phase policies every experiment compares, with their row labels.
pub fn two_phase_policies() -> Vec<(String, Policy)> {
    let mut v: Vec<(String, Policy)> = [0.54, 0.62, 1.0]
        .into_iter()
        .map(Policy::two_phase)
        .chain([
            Policy::two_phase(waitwise::policy::ALPHA_EXPONENTIAL).with_mechanism(Mechanism::Yield),
            Policy::two_phase(waitwise::policy::ALPHA_EXPONENTIAL)
                .with_mechanism(Mechanism::Umwait(WaitpkgState::C02)),
            Policy::two_phase(waitwise::policy::ALPHA_EXPONENTIAL)
                .with_mechanism(Mechanism::Mwaitx),
            Policy::randomized(),
        ])
        .map(|p| (p.describe(), p))
        .collect();
    v.dedup_by(|a, b| a.0 == b.0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_available_contender_hands_off() {
        for c in all() {
            if c.availability.is_err() {
                continue;
            }
            // Ping-pong over two pairs, so no notify can merge with the next.
            let (ping, pong) = (c.make(), c.make());
            let (p2, q2) = (ping.clone(), pong.clone());
            let t = std::thread::spawn(move || {
                p2.register_waiter();
                for _ in 0..3 {
                    p2.wait();
                    q2.notify();
                }
            });
            pong.register_waiter();
            for _ in 0..3 {
                ping.notify();
                pong.wait();
            }
            t.join().unwrap();
        }
    }

    #[test]
    fn futex_pair_hands_off() {
        let (ping, pong) = (
            Arc::new(futex::FutexPair::new()),
            Arc::new(futex::FutexPair::new()),
        );
        let (p2, q2) = (ping.clone(), pong.clone());
        let t = std::thread::spawn(move || {
            for _ in 0..100 {
                p2.wait();
                q2.notify();
            }
        });
        for _ in 0..100 {
            ping.notify();
            pong.wait();
        }
        t.join().unwrap();
    }

    #[test]
    fn family_names_are_the_serialized_ones() {
        for f in [Family::Waitwise, Family::Peer, Family::Baseline] {
            assert_eq!(serde_json::to_value(f).unwrap(), f.name());
        }
    }

    #[test]
    fn hardware_rows_are_listed_even_when_unavailable() {
        let names: Vec<String> = all().into_iter().map(|c| c.name).collect();
        for n in [
            "umwait",
            "tpause",
            "mwaitx",
            "spin",
            "block",
            "pthread_cond",
        ] {
            assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
        }
    }
}
