//! The channel workload: `threads - 1` producers (at least one) send
//! messages of `message_words` words into one bounded channel of
//! `capacity` slots, working `gap` between messages, until the run's end;
//! one consumer receives until every producer has hung up. Every `send`
//! and `recv` is timed; the throughput counts messages. One consumer,
//! because `std::sync::mpsc` has only one; waitwise and crossbeam would
//! take several.

use super::super::grid::Point;
use super::super::hints::spin;
use super::super::wait_log::{RunLog, ThreadLog};
use super::{run_threads, Contender, RunSettings};
use crate::contender::Family;
use std::hint::black_box;
use std::sync::Mutex;

/// waitwise's bounded channel, then its peers.
pub const CONTENDERS: [Contender; 3] = [
    Contender {
        name: "waitwise::channel",
        family: Family::Waitwise,
    },
    Contender {
        name: "crossbeam_channel",
        family: Family::Peer,
    },
    Contender {
        name: "std::sync::mpsc",
        family: Family::Peer,
    },
];

/// Message sizes the workload can run, in `u64` words (each is a type
/// `[u64; N]` compiled in).
pub const MESSAGE_WORDS: [usize; 4] = [1, 8, 32, 128];

/// A bounded channel implementation.
trait Flavor {
    /// The sending end.
    type Tx<M: Send>: Send + Clone;
    /// The receiving end.
    type Rx<M: Send>: Send;
    /// A channel of `cap` slots.
    fn bounded<M: Send>(cap: usize) -> (Self::Tx<M>, Self::Rx<M>);
    /// Sends, waiting while the channel is full.
    fn send<M: Send>(tx: &Self::Tx<M>, m: M);
    /// Receives, waiting while it is empty; `None` once every sender has
    /// hung up and the channel is drained.
    fn recv<M: Send>(rx: &Self::Rx<M>) -> Option<M>;
}

struct Waitwise;
impl Flavor for Waitwise {
    type Tx<M: Send> = waitwise::channel::Sender<M>;
    type Rx<M: Send> = waitwise::channel::Receiver<M>;
    fn bounded<M: Send>(cap: usize) -> (Self::Tx<M>, Self::Rx<M>) {
        waitwise::channel::bounded(cap)
    }
    fn send<M: Send>(tx: &Self::Tx<M>, m: M) {
        let _ = tx.send(m);
    }
    fn recv<M: Send>(rx: &Self::Rx<M>) -> Option<M> {
        rx.recv().ok()
    }
}

struct Crossbeam;
impl Flavor for Crossbeam {
    type Tx<M: Send> = crossbeam_channel::Sender<M>;
    type Rx<M: Send> = crossbeam_channel::Receiver<M>;
    fn bounded<M: Send>(cap: usize) -> (Self::Tx<M>, Self::Rx<M>) {
        crossbeam_channel::bounded(cap)
    }
    fn send<M: Send>(tx: &Self::Tx<M>, m: M) {
        let _ = tx.send(m);
    }
    fn recv<M: Send>(rx: &Self::Rx<M>) -> Option<M> {
        rx.recv().ok()
    }
}

struct Std;
impl Flavor for Std {
    type Tx<M: Send> = std::sync::mpsc::SyncSender<M>;
    type Rx<M: Send> = std::sync::mpsc::Receiver<M>;
    fn bounded<M: Send>(cap: usize) -> (Self::Tx<M>, Self::Rx<M>) {
        std::sync::mpsc::sync_channel(cap)
    }
    fn send<M: Send>(tx: &Self::Tx<M>, m: M) {
        let _ = tx.send(m);
    }
    fn recv<M: Send>(rx: &Self::Rx<M>) -> Option<M> {
        rx.recv().ok()
    }
}

/// Runs contender `which` at `p`.
pub fn run(which: usize, p: &Point, s: &RunSettings) -> RunLog {
    match which {
        0 => run_sized::<Waitwise>(p, s),
        1 => run_sized::<Crossbeam>(p, s),
        _ => run_sized::<Std>(p, s),
    }
}

/// [`run_with`] for the point's message size: the smallest of
/// [`MESSAGE_WORDS`] that holds it.
fn run_sized<F: Flavor>(p: &Point, s: &RunSettings) -> RunLog {
    match p.message_words.unwrap_or(1) {
        0..=1 => run_with::<F, 1>(p, s),
        2..=8 => run_with::<F, 8>(p, s),
        9..=32 => run_with::<F, 32>(p, s),
        _ => run_with::<F, 128>(p, s),
    }
}

fn run_with<F: Flavor, const N: usize>(p: &Point, s: &RunSettings) -> RunLog {
    let producers = p.threads.saturating_sub(1).max(1);
    let (tx, rx) = F::bounded::<[u64; N]>(p.capacity.unwrap_or(1).max(1));
    // One sending end per producer, taken by its thread; the last one
    // dropped hangs the channel up.
    let senders: Vec<Handed<F::Tx<[u64; N]>>> = (0..producers)
        .map(|_| Mutex::new(Some(tx.clone())))
        .collect();
    drop(tx);
    let receiver = Mutex::new(Some(rx));
    let gap = s.gap_hints(p);
    run_threads(producers + 1, |i| {
        if i < producers {
            let tx = take(&senders[i]);
            let mut log = ThreadLog::start(true, s.run);
            let mut m = [0u64; N];
            while log.running() {
                spin(gap);
                m[0] = log.ops;
                log.timed(|| F::send(&tx, m));
                log.ops += 1;
            }
            log
        } else {
            let rx = take(&receiver);
            let mut log = ThreadLog::start(false, s.run);
            while let Some(m) = log.timed(|| F::recv(&rx)) {
                black_box(m);
            }
            log
        }
    })
}

/// A channel end waiting for the thread it is for.
type Handed<T> = Mutex<Option<T>>;

/// The value in `slot`, taken once by the thread it is for.
fn take<T>(slot: &Handed<T>) -> T {
    slot.lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .expect("each end is taken by one thread")
}
