//! waitwise's own barriers: [`Barrier`] (default waiting or an explicit
//! policy) and [`PairBarrier`], with their wait profiles for the block
//! counts.

use super::BarrierContender;
use waitwise::barrier::{Barrier, PairBarrier};
use waitwise::{Policy, WaitOptions};

fn options(policy: Option<Policy>, profile: bool) -> WaitOptions {
    let o = WaitOptions::new().profile(profile);
    match policy {
        Some(p) => o.policy(p),
        None => o,
    }
}

/// The central counter [`Barrier`].
pub struct Central(Barrier);

impl Central {
    /// For `n` threads, under `policy` (`None`: the default waiting).
    pub fn new(n: usize, policy: Option<Policy>, profile: bool) -> Self {
        Self(Barrier::with_options(n, options(policy, profile)))
    }
}

impl BarrierContender for Central {
    fn wait(&self, _thread_index: usize) -> bool {
        self.0.wait().is_leader()
    }
    fn blocks(&self) -> Option<u64> {
        self.0.wait_profile().map(|p| p.blocks)
    }
}

/// The two-party [`PairBarrier`] with its default waiting.
pub struct Pair(PairBarrier);

impl Pair {
    /// A fresh pair barrier.
    pub fn new(profile: bool) -> Self {
        Self(PairBarrier::with_options(options(None, profile)))
    }
}

impl BarrierContender for Pair {
    fn wait(&self, _thread_index: usize) -> bool {
        self.0.wait().is_leader()
    }
    fn blocks(&self) -> Option<u64> {
        self.0.wait_profile().map(|p| p.blocks)
    }
}
