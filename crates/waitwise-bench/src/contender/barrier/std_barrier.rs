//! `std::sync::Barrier` (a mutex and a condvar on the futex).

use super::BarrierContender;

/// The std barrier.
pub struct StdBarrier(std::sync::Barrier);

impl StdBarrier {
    /// For `n` threads.
    pub fn new(n: usize) -> Self {
        Self(std::sync::Barrier::new(n))
    }
}

impl BarrierContender for StdBarrier {
    fn wait(&self, _thread_index: usize) -> bool {
        self.0.wait().is_leader()
    }
}
