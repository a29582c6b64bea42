//! The reader-writer lock workload: a quarter of the threads (at least
//! one) write, the others read; each loops `lock; critical section;
//! unlock; gap` until the run's end, timing each acquisition.

use super::super::grid::Point;
use super::super::hints::spin;
use super::super::wait_log::{RunLog, ThreadLog};
use super::{run_threads, Contender, RunSettings};
use crate::contender::Family;
use std::hint::black_box;

/// waitwise's `RwLock`, then its peers.
pub const CONTENDERS: [Contender; 3] = [
    Contender {
        name: "waitwise::RwLock",
        family: Family::Waitwise,
    },
    Contender {
        name: "parking_lot::RwLock",
        family: Family::Peer,
    },
    Contender {
        name: "std::sync::RwLock",
        family: Family::Peer,
    },
];

/// Writer threads among `threads`: a quarter, at least one.
pub fn writers(threads: usize) -> usize {
    (threads / 4).max(1)
}

/// A reader-writer lock around a counter, with its acquisitions timed.
trait CountingRwLock: Send + Sync {
    /// Takes the read lock (timed), spins `cs` hints, reads.
    fn read(&self, log: &mut ThreadLog, cs: u32);
    /// Takes the write lock (timed), spins `cs` hints, adds one.
    fn write(&self, log: &mut ThreadLog, cs: u32);
}

impl<R: waitwise::lock_api::RawRwLock + Send + Sync> CountingRwLock
    for waitwise::lock_api::RwLock<R, u64>
{
    fn read(&self, log: &mut ThreadLog, cs: u32) {
        let guard = log.timed(|| self.read());
        spin(cs);
        black_box(*guard);
    }
    fn write(&self, log: &mut ThreadLog, cs: u32) {
        let mut guard = log.timed(|| self.write());
        spin(cs);
        *guard += 1;
    }
}

impl CountingRwLock for std::sync::RwLock<u64> {
    fn read(&self, log: &mut ThreadLog, cs: u32) {
        let guard = log.timed(|| self.read().unwrap_or_else(|e| e.into_inner()));
        spin(cs);
        black_box(*guard);
    }
    fn write(&self, log: &mut ThreadLog, cs: u32) {
        let mut guard = log.timed(|| self.write().unwrap_or_else(|e| e.into_inner()));
        spin(cs);
        *guard += 1;
    }
}

/// Runs contender `which` at `p`.
pub fn run(which: usize, p: &Point, s: &RunSettings) -> RunLog {
    match which {
        0 => run_with(&waitwise::RwLock::new(0), p, s),
        1 => run_with(&parking_lot::RwLock::new(0), p, s),
        _ => run_with(&std::sync::RwLock::new(0), p, s),
    }
}

fn run_with(lock: &impl CountingRwLock, p: &Point, s: &RunSettings) -> RunLog {
    let (cs, gap) = (s.cs_hints(p), s.gap_hints(p));
    let writers = writers(p.threads);
    run_threads(p.threads, |i| {
        let mut log = ThreadLog::start(true, s.run);
        while log.running() {
            if i < writers {
                lock.write(&mut log, cs);
            } else {
                lock.read(&mut log, cs);
            }
            log.ops += 1;
            spin(gap);
        }
        log
    })
}
