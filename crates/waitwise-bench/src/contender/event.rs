//! waitwise's `Event` as a contender.

use super::WaitPair;
use waitwise::{Event, Policy};

/// An `Event` under one policy.
pub struct EventPair(Event);

impl EventPair {
    /// An event waiting with `policy`.
    pub fn new(policy: Policy) -> Self {
        Self(Event::with_policy(policy))
    }

    /// An event waiting as `Event::new()` does (its default policy).
    pub fn with_default_waiting() -> Self {
        Self(Event::new())
    }
}

impl WaitPair for EventPair {
    fn wait(&self) {
        self.0.wait();
    }
    fn notify(&self) {
        self.0.notify();
    }
}
