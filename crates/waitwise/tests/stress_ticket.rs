//! Stress tests of the ticket lock (`mutex/ticket.rs`): mutual exclusion
//! checked with a non-atomic counter at 2, 3, 4 and 8 threads, at least
//! 100,000 lock/unlock operations per case; timed acquisitions time out on
//! time; and its owner awareness ([`owner_aware`]). Validation only;
//! timing is for `examples/mutex_bench.rs`.
#![cfg(not(loom))]

#[macro_use]
mod common;

use common::locks::timed;
use std::time::Duration;
use waitwise::mutex::RawTicketMutex;
use waitwise::{Policy, WaitOptions};

exclusion_table! {
    ticket_default: RawTicketMutex::new;
    ticket_always_block: || RawTicketMutex::with_options(WaitOptions::new().policy(Policy::always_block()));
    // Polls of 1 us: waiters sleep whenever the queue stalls, and unlocks
    // pre-wake them (the ticket lock's sleep / pre-wake / poll-again loop).
    ticket_short_polls: || RawTicketMutex::with_options(
        WaitOptions::new().policy(Policy::poll_then_block(Duration::from_micros(1))));
    ticket_adaptive: || RawTicketMutex::with_options(WaitOptions::new().policy(Policy::adaptive()));
}

#[test]
fn ticket_timeouts() {
    timed(RawTicketMutex::new);
}

/// Owner awareness (`mutex/liveness.rs`): releases pass over sleeping or
/// preempted waiters, which rejoin; cases are the table of
/// `common/owner_aware.rs`.
mod owner_aware {
    use super::common::owner_aware::*;
    use waitwise::mutex::RawTicketMutex;

    #[test]
    fn ticket_default() {
        table(RawTicketMutex::new);
    }

    #[test]
    fn ticket_short_polls() {
        table(|| RawTicketMutex::with_options(short_polls()));
    }

    #[test]
    fn ticket_always_block() {
        table(|| RawTicketMutex::with_options(blocking()));
    }

    /// Waiters never sleep: only preempted (stale) waiters are skipped.

    #[test]
    fn ticket_always_spin() {
        table(|| RawTicketMutex::with_options(spinning()));
    }
}
