//! The condition-variable workload: producer/consumer pairs (half the
//! threads each, at least one pair) hand a counter through a one-slot
//! mailbox, a mutex and a condvar: the producer waits while the slot is
//! full, fills it and notifies; the consumer waits while it is empty,
//! empties it and notifies. The producer works `gap` between items. Each
//! side's whole step (lock, wait, hand-off, notify) is timed; the
//! throughput counts items consumed.

use super::super::grid::Point;
use super::super::hints::spin;
use super::super::wait_log::{RunLog, ThreadLog};
use super::{run_threads, Contender, RunSettings};
use crate::contender::Family;

/// waitwise's `Condvar` (with waitwise's `Mutex`), then its peers.
pub const CONTENDERS: [Contender; 3] = [
    Contender {
        name: "waitwise::Condvar",
        family: Family::Waitwise,
    },
    Contender {
        name: "parking_lot::Condvar",
        family: Family::Peer,
    },
    Contender {
        name: "std::sync::Condvar",
        family: Family::Peer,
    },
];

/// The mailbox behind the mutex.
#[derive(Default)]
struct Slot {
    full: bool,
    stop: bool,
    value: u64,
}

/// A one-slot mailbox on a mutex and a condvar.
trait Mailbox: Send + Sync + Default {
    /// Waits while the slot is full, then fills it (or marks the end).
    fn put(&self, value: u64, stop: bool);
    /// Waits while the slot is empty, then empties it; `None` at the end.
    fn take(&self) -> Option<u64>;
}

/// Fills or empties `slot`: the part every mailbox shares.
fn fill(slot: &mut Slot, value: u64, stop: bool) {
    slot.full = true;
    slot.stop = stop;
    slot.value = value;
}

fn empty(slot: &mut Slot) -> Option<u64> {
    slot.full = false;
    (!slot.stop).then_some(slot.value)
}

/// A mailbox on a `lock_api`-style mutex (whose `lock` returns the guard)
/// and a condvar whose `wait_while` takes the guard by `&mut`: waitwise's
/// and parking_lot's, the same code on two pairs of types.
macro_rules! lock_api_mailbox {
    ($name:ident, $mutex:ty, $condvar:ty) => {
        #[derive(Default)]
        struct $name($mutex, $condvar);

        impl Mailbox for $name {
            fn put(&self, value: u64, stop: bool) {
                let mut g = self.0.lock();
                self.1.wait_while(&mut g, |s| s.full);
                fill(&mut g, value, stop);
                drop(g);
                self.1.notify_one();
            }
            fn take(&self) -> Option<u64> {
                let mut g = self.0.lock();
                self.1.wait_while(&mut g, |s| !s.full);
                let v = empty(&mut g);
                drop(g);
                self.1.notify_one();
                v
            }
        }
    };
}

lock_api_mailbox!(WaitwiseBox, waitwise::Mutex<Slot>, waitwise::Condvar);
lock_api_mailbox!(
    ParkingLotBox,
    parking_lot::Mutex<Slot>,
    parking_lot::Condvar
);

#[derive(Default)]
struct StdBox(std::sync::Mutex<Slot>, std::sync::Condvar);

impl Mailbox for StdBox {
    fn put(&self, value: u64, stop: bool) {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut g = self
            .1
            .wait_while(g, |s| s.full)
            .unwrap_or_else(|e| e.into_inner());
        fill(&mut g, value, stop);
        drop(g);
        self.1.notify_one();
    }
    fn take(&self) -> Option<u64> {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut g = self
            .1
            .wait_while(g, |s| !s.full)
            .unwrap_or_else(|e| e.into_inner());
        let v = empty(&mut g);
        drop(g);
        self.1.notify_one();
        v
    }
}

/// Runs contender `which` at `p`.
pub fn run(which: usize, p: &Point, s: &RunSettings) -> RunLog {
    match which {
        0 => run_with::<WaitwiseBox>(p, s),
        1 => run_with::<ParkingLotBox>(p, s),
        _ => run_with::<StdBox>(p, s),
    }
}

fn run_with<M: Mailbox>(p: &Point, s: &RunSettings) -> RunLog {
    let pairs = (p.threads / 2).max(1);
    let boxes: Vec<M> = (0..pairs).map(|_| M::default()).collect();
    let gap = s.gap_hints(p);
    run_threads(2 * pairs, |i| {
        let mailbox = &boxes[i / 2];
        if i % 2 == 0 {
            let mut log = ThreadLog::start(false, s.run);
            let mut value = 0;
            while log.running() {
                spin(gap);
                log.timed(|| mailbox.put(value, false));
                value += 1;
            }
            mailbox.put(value, true);
            log
        } else {
            let mut log = ThreadLog::start(true, s.run);
            while log.timed(|| mailbox.take()).is_some() {
                log.ops += 1;
            }
            log
        }
    })
}
