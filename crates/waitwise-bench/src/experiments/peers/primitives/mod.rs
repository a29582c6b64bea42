//! The workloads of `waitwise peers`, one primitive per file; each file
//! lists its contenders (waitwise first, then its peers) and runs one of
//! them at one operating point for a fixed time.
//!
//! | primitive | file | waitwise | peers |
//! |---|---|---|---|
//! | mutex | [`mutex`] | `waitwise::Mutex` | `parking_lot::Mutex`, `std::sync::Mutex` |
//! | rwlock | [`rwlock`] | `waitwise::RwLock` | `parking_lot::RwLock`, `std::sync::RwLock` |
//! | condvar | [`condvar`] | `waitwise::Condvar` + `waitwise::Mutex` | parking_lot's, std's |
//! | channel | [`channel`] | `waitwise::channel::bounded` | `crossbeam_channel::bounded`, `std::sync::mpsc::sync_channel` |
//! | barrier | [`barrier`] | `waitwise::barrier::Barrier` | `std::sync::Barrier`, `pthread_barrier_wait`, a spin barrier |
//! | event | [`event`] | `waitwise::Event` | a spin hand-off, a futex hand-off |
//! | pool | [`pool`] | `waitwise::pool::ThreadPool` | rayon |

pub mod barrier;
pub mod channel;
pub mod condvar;
pub mod event;
pub mod mutex;
pub mod pool;
pub mod rwlock;

use super::grid::{Point, Primitive};
use super::hints::HintRate;
use super::wait_log::{RunLog, ThreadLog};
use crate::contender::Family;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// How long a run lasts and how busy work converts to hints.
#[derive(Clone, Copy, Debug)]
pub struct RunSettings {
    /// Each contender's run time in a round.
    pub run: Duration,
    /// The spin-loop hint rate.
    pub hints: HintRate,
}

impl RunSettings {
    /// Hints of the point's critical section (0 when it has none).
    pub fn cs_hints(&self, p: &Point) -> u32 {
        self.hints.hints_for(p.cs_ns.unwrap_or(0))
    }

    /// Hints of the point's gap (0 when it has none).
    pub fn gap_hints(&self, p: &Point) -> u32 {
        self.hints.hints_for(p.gap_ns.unwrap_or(0))
    }
}

/// A contender of one primitive.
#[derive(Clone, Copy, Debug)]
pub struct Contender {
    /// Its name in tables.
    pub name: &'static str,
    /// waitwise, a peer, or a baseline (the spin hand-offs).
    pub family: Family,
}

/// The contenders of `primitive`: waitwise's first, then its peers.
pub fn contenders(primitive: Primitive) -> &'static [Contender] {
    match primitive {
        Primitive::Mutex => &mutex::CONTENDERS,
        Primitive::RwLock => &rwlock::CONTENDERS,
        Primitive::Condvar => &condvar::CONTENDERS,
        Primitive::Channel => &channel::CONTENDERS,
        Primitive::Barrier => &barrier::CONTENDERS,
        Primitive::Event => &event::CONTENDERS,
        Primitive::Pool => &pool::CONTENDERS,
    }
}

/// Runs contender `which` of `primitive` at `point`.
pub fn run(primitive: Primitive, which: usize, point: &Point, s: &RunSettings) -> RunLog {
    match primitive {
        Primitive::Mutex => mutex::run(which, point, s),
        Primitive::RwLock => rwlock::run(which, point, s),
        Primitive::Condvar => condvar::run(which, point, s),
        Primitive::Channel => channel::run(which, point, s),
        Primitive::Barrier => barrier::run(which, point, s),
        Primitive::Event => event::run(which, point, s),
        Primitive::Pool => pool::run(which, point, s),
    }
}

/// Runs `body(i)` on `n` fresh threads released together from a gate;
/// the wall time runs from the gate to the last thread's end.
pub fn run_threads(n: usize, body: impl Fn(usize) -> ThreadLog + Sync) -> RunLog {
    let gate = Barrier::new(n + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (gate, body) = (&gate, &body);
                s.spawn(move || {
                    gate.wait();
                    body(i)
                })
            })
            .collect();
        gate.wait();
        let start = Instant::now();
        let threads = handles
            .into_iter()
            .map(|h| h.join().expect("a peers workload thread panicked"))
            .collect();
        RunLog {
            threads,
            wall: start.elapsed(),
        }
    })
}
