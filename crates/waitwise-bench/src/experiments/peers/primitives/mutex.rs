//! The mutex workload: every thread loops `lock; critical section;
//! unlock; gap` until the run's end, timing each `lock`.

use super::super::grid::Point;
use super::super::hints::spin;
use super::super::wait_log::{RunLog, ThreadLog};
use super::{run_threads, Contender, RunSettings};
use crate::contender::Family;

/// waitwise's `Mutex`, then its peers.
pub const CONTENDERS: [Contender; 3] = [
    Contender {
        name: "waitwise::Mutex",
        family: Family::Waitwise,
    },
    Contender {
        name: "parking_lot::Mutex",
        family: Family::Peer,
    },
    Contender {
        name: "std::sync::Mutex",
        family: Family::Peer,
    },
];

/// A lock around a counter, with its acquisition timed.
trait CountingLock: Send + Sync {
    /// Takes the lock (timed into `log`), spins `cs` hints and adds one.
    fn add_one(&self, log: &mut ThreadLog, cs: u32);
}

impl<R: waitwise::lock_api::RawMutex + Send + Sync> CountingLock
    for waitwise::lock_api::Mutex<R, u64>
{
    fn add_one(&self, log: &mut ThreadLog, cs: u32) {
        let mut guard = log.timed(|| self.lock());
        spin(cs);
        *guard += 1;
    }
}

impl CountingLock for std::sync::Mutex<u64> {
    fn add_one(&self, log: &mut ThreadLog, cs: u32) {
        let mut guard = log.timed(|| self.lock().unwrap_or_else(|e| e.into_inner()));
        spin(cs);
        *guard += 1;
    }
}

/// Runs contender `which` at `p`.
pub fn run(which: usize, p: &Point, s: &RunSettings) -> RunLog {
    match which {
        0 => run_with(&waitwise::Mutex::new(0), p, s),
        1 => run_with(&parking_lot::Mutex::new(0), p, s),
        _ => run_with(&std::sync::Mutex::new(0), p, s),
    }
}

fn run_with(lock: &impl CountingLock, p: &Point, s: &RunSettings) -> RunLog {
    let (cs, gap) = (s.cs_hints(p), s.gap_hints(p));
    run_threads(p.threads, |_| {
        let mut log = ThreadLog::start(true, s.run);
        while log.running() {
            lock.add_one(&mut log, cs);
            log.ops += 1;
            spin(gap);
        }
        log
    })
}
