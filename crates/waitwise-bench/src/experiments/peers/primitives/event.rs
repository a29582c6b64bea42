//! The event workload: ping-pong pairs (half the threads each, at least
//! one pair) over two one-shot events: the initiator works `gap`,
//! notifies `ping` and waits on `pong`; the responder waits on `ping` and
//! notifies `pong`. Every wait is timed; the throughput counts round
//! trips. The initiator decides the end: it raises the stop flag and
//! notifies once more, and the responder leaves on that notification.

use super::super::grid::Point;
use super::super::hints::spin;
use super::super::wait_log::{RunLog, ThreadLog};
use super::{run_threads, Contender, RunSettings};
use crate::contender::event::EventPair;
use crate::contender::futex::FutexPair;
use crate::contender::store::StorePair;
use crate::contender::{Family, WaitPair};
use std::sync::atomic::{AtomicBool, Ordering};

/// waitwise's `Event` (default waiting), then a spin and a futex hand-off.
pub const CONTENDERS: [Contender; 3] = [
    Contender {
        name: "waitwise::Event",
        family: Family::Waitwise,
    },
    Contender {
        name: "spin hand-off",
        family: Family::Baseline,
    },
    Contender {
        name: "futex hand-off",
        family: Family::Peer,
    },
];

/// One event of contender `which`.
fn make(which: usize) -> Box<dyn WaitPair> {
    match which {
        0 => Box::new(EventPair::with_default_waiting()),
        1 => Box::new(StorePair::new()),
        _ => Box::new(FutexPair::new()),
    }
}

/// Both directions of one pair, and its stop flag.
struct Pair {
    ping: Box<dyn WaitPair>,
    pong: Box<dyn WaitPair>,
    stop: AtomicBool,
}

/// Runs contender `which` at `p`.
pub fn run(which: usize, p: &Point, s: &RunSettings) -> RunLog {
    let pairs: Vec<Pair> = (0..(p.threads / 2).max(1))
        .map(|_| Pair {
            ping: make(which),
            pong: make(which),
            stop: AtomicBool::new(false),
        })
        .collect();
    let gap = s.gap_hints(p);
    run_threads(2 * pairs.len(), |i| {
        let pair = &pairs[i / 2];
        if i % 2 == 0 {
            initiate(pair, gap, s)
        } else {
            respond(pair, s)
        }
    })
}

fn initiate(pair: &Pair, gap: u32, s: &RunSettings) -> ThreadLog {
    pair.pong.register_waiter();
    let mut log = ThreadLog::start(true, s.run);
    loop {
        spin(gap);
        log.tick();
        if !log.running() {
            // Relaxed: the notify/wait hand-off that follows orders it
            // before the responder's load.
            pair.stop.store(true, Ordering::Relaxed);
            pair.ping.notify();
            return log;
        }
        pair.ping.notify();
        log.timed(|| pair.pong.wait());
        log.ops += 1;
    }
}

fn respond(pair: &Pair, s: &RunSettings) -> ThreadLog {
    pair.ping.register_waiter();
    let mut log = ThreadLog::start(false, s.run);
    loop {
        log.timed(|| pair.ping.wait());
        // Relaxed: see `initiate`.
        if pair.stop.load(Ordering::Relaxed) {
            return log;
        }
        pair.pong.notify();
    }
}
