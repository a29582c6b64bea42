//! The measurement of one cell ([`measure`]): a producer releases a
//! consumer through one [`Event`] per policy and per reference, cycle after
//! cycle, and the consumer records each wait's CPU time, length and
//! wake-up.

use super::accounting::median;
use super::cells::CellWaits;
use super::sample::{Measured, Sample};
use super::tracked_cost::TrackedBlockCost;
use crate::harness_wait::spin_until;
use crate::placement::{pin, PairPlacement};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use waitwise::policy::Policy;
use waitwise::{Event, WaitOptions};
use waitwise_platform::clock::{cycle_clock, CycleClock};
use waitwise_platform::thread::thread_cpu_time;

/// A wait that has not been released after this long means the producer is
/// gone: the cell is abandoned (never hangs the run).
pub(super) const WAIT_TIMEOUT: Duration = Duration::from_secs(2);

/// Rounds measured per cell even when the time budget has run out, so that
/// every cell has a figure. Guessed: enough for a mean within ~30%.
pub(super) const MIN_ROUNDS: usize = 10;

/// The producer yields once per this many polls while it waits for the
/// consumer's next step. Guessed: rare against a step's hand-off, often
/// enough that a consumer descheduled on the producer's CPU runs soon.
const HARNESS_YIELD_EVERY: u32 = 4096;

/// Round number that tells the producer to stop.
pub(super) const STOP: u64 = u64::MAX;

/// Runs the hand-offs of one (law, scale) group: cycle after cycle, one
/// wait under each of `policies` (each on its own [`Event`]) with the
/// cycle's wait (its drawn wait in units of the `B` the cell's references
/// cost lately: [`TrackedBlockCost`]), then one reference `/b/0` wait of the
/// same length, which measures what a block costs (its kernel CPU and its
/// wake-up latency) in the same stretch of time and for sleeps as long. On
/// a VM both grow with the sleep, so references of another length
/// misprice the cell's blocks (references floored at a few `B` overprice
/// the brief blocks of `rand/b` at small U/B). Then one `s//inf`
/// wait released at once, which measures the fixed CPU of a hand-off (the
/// wait call and the cache misses that carry the notify; a cold event
/// every time, like the cells'). The first `warmup` cycles are dropped.
/// Stops early (after `warmup + MIN_ROUNDS` cycles) when `deadline`
/// passes. Returns one [`Measured`] per policy, then the block reference's,
/// then the hand-off reference's.
pub(super) fn measure(
    policies: &[Policy],
    waits: &CellWaits,
    warmup: usize,
    placement: &PairPlacement,
    deadline: Instant,
) -> Vec<Measured> {
    // New events: each `adapt/b` one starts with no history (its summary
    // is its own), as the model's learner does (`summarize`).
    let events: Vec<Event> = policies
        .iter()
        .chain([&Policy::always_block(), &Policy::always_spin()])
        .map(|&p| Event::with_options(WaitOptions::new().policy(p).profile(true)))
        .collect();
    let k = events.len();
    let shared = Shared::default();
    std::thread::scope(|s| {
        let producer = s.spawn(|| {
            pin(placement.worker_cpu);
            produce(&shared, &events, waits.drawn_ns.len() * k)
        });
        // The consumer runs in its own thread too: pinning the caller would
        // leave it (and every thread it spawns later) stuck on one CPU.
        let consumer = s.spawn(|| {
            pin(placement.waiter_cpu);
            let mut consumer = Consumer::new(&events, policies, waits);
            let lost_producer = consumer.run(&shared, warmup, deadline);
            // Release, as for the step numbers; STOP itself carries no data.
            shared.ready.store(STOP, Ordering::Release);
            (consumer.raw, lost_producer)
        });
        let (raw, mut lost_producer) = consumer.join().unwrap_or_else(|_| (Vec::new(), true));
        // A consumer that panicked never sent STOP. Release, as for the
        // step numbers; STOP carries no data.
        shared.ready.store(STOP, Ordering::Release);
        let notified = producer.join().unwrap_or_else(|_| {
            lost_producer = true;
            Vec::new()
        });
        samples_of(&raw, &notified, k, warmup, lost_producer)
    })
}

/// The words the producer and the consumer of a cell share.
#[derive(Default)]
struct Shared {
    /// The step the consumer waits in, plus one (0: none yet); [`STOP`]
    /// ends the producer.
    ready: AtomicU64,
    /// The consumer's cycle-clock stamp before the step's wait.
    start_stamp: AtomicU64,
    /// The step's wait, cycle-clock ticks.
    wait_ticks: AtomicU64,
    /// The producer's cycle-clock stamp before its latest notify.
    notify_stamp: AtomicU64,
}

/// What the consumer records of one wait, before the producer's stamps
/// are joined to it.
#[derive(Clone, Copy)]
struct RawWait {
    /// [`Sample::poll_cap_ns`].
    poll_cap_ns: Option<f64>,
    /// Cycle-clock stamp after the wait returned.
    woke: u64,
    /// The wait asked of the producer, ns.
    drawn_ns: f64,
    /// [`Sample::wait_b_ns`].
    wait_b_ns: f64,
    /// Thread CPU time across the wait, ns.
    cpu_ns: f64,
    /// Whether the wait blocked.
    blocked: bool,
}

/// Waits until the consumer publishes a step other than `seen` and
/// returns it; polls, yielding once per [`HARNESS_YIELD_EVERY`] polls so
/// a shared CPU is not held.
fn next_step(shared: &Shared, seen: u64) -> u64 {
    let mut r = seen;
    spin_until(HARNESS_YIELD_EVERY, || {
        // Acquire: pairs with the consumer's Release of the step number,
        // so its start stamp is visible.
        r = shared.ready.load(Ordering::Acquire);
        r != seen
    });
    r
}

/// The producer: for each step, waits the step's wait from the
/// consumer's start stamp, then notifies the step's event. Returns, per
/// step, the wait that happened (ns) and the stamp before the notify.
fn produce(shared: &Shared, events: &[Event], steps: usize) -> Vec<(f64, u64)> {
    let clock = cycle_clock();
    let k = events.len();
    let mut notified_at = Vec::with_capacity(steps);
    let mut seen = 0u64;
    loop {
        let r = next_step(shared, seen);
        if r == STOP {
            return notified_at;
        }
        seen = r;
        let step = (r - 1) as usize;
        // Relaxed: the Acquire load of `ready` ordered this step's stamp
        // before it, and the consumer writes the next stamp only after our
        // notify below.
        let start = shared.start_stamp.load(Ordering::Relaxed);
        // Relaxed: as the start stamp.
        let target = start + shared.wait_ticks.load(Ordering::Relaxed);
        while clock.now() < target {
            std::hint::spin_loop();
        }
        let n = clock.now();
        // Release: the consumer reads the stamp after the wake-up this
        // notify causes (and checks it is this step's).
        shared.notify_stamp.store(n, Ordering::Release);
        events[step % k].notify();
        notified_at.push((clock.ticks_to_ns(n.saturating_sub(start)), n));
    }
}

/// The consumer's state across a cell's cycles.
struct Consumer<'a> {
    clock: &'static CycleClock,
    events: &'a [Event],
    waits: &'a CellWaits<'a>,
    /// Whether event `j` draws its poll limits from what it learned
    /// (`adapt/b`).
    learns: Vec<bool>,
    /// Each event's profiled blocks before its latest wait.
    blocks_before: Vec<u64>,
    /// `adapt/b`'s longest limit for each event's next wait, read after
    /// its previous one (the summary's line is warm then; reading it
    /// before the wait would warm it for the wait).
    next_cap: Vec<Option<f64>>,
    /// One tracked `B` per law (`phase` is below this).
    tracked: Vec<TrackedBlockCost>,
    /// Every wait, step by step.
    raw: Vec<RawWait>,
}

impl<'a> Consumer<'a> {
    fn new(events: &'a [Event], policies: &[Policy], waits: &'a CellWaits<'a>) -> Self {
        let learns: Vec<bool> = (0..events.len())
            .map(|j| policies.get(j).is_some_and(|p| p.name() == "adapt/b"))
            .collect();
        let mut consumer = Self {
            clock: cycle_clock(),
            events,
            waits,
            learns,
            blocks_before: events
                .iter()
                .map(|e| e.wait_profile().map_or(0, |p| p.blocks))
                .collect(),
            next_cap: Vec::new(),
            tracked: (0..waits.drawn_b_ns.len().max(1))
                .map(|p| TrackedBlockCost::new(waits.drawn_b(p), waits.least_b_ns, waits.most_b_ns))
                .collect(),
            raw: Vec::with_capacity(waits.drawn_ns.len() * events.len()),
        };
        consumer.next_cap = (0..events.len()).map(|j| consumer.poll_cap(j)).collect();
        consumer
    }

    /// Event `j`'s longest poll limit for its next wait, when it learns.
    fn poll_cap(&self, j: usize) -> Option<f64> {
        self.learns[j].then(|| {
            self.events[j]
                .adaptive_summary()
                .longest_poll_limit_ns(waitwise::policy::block_ns())
        })
    }

    /// Runs the cycles until the waits or the time run out (after
    /// `warmup + MIN_ROUNDS` cycles); returns whether a wait was not
    /// released (the producer is gone).
    fn run(&mut self, shared: &Shared, warmup: usize, deadline: Instant) -> bool {
        let waits = self.waits;
        for (r, &drawn) in waits.drawn_ns.iter().enumerate() {
            if r >= warmup + MIN_ROUNDS && Instant::now() > deadline {
                break;
            }
            let phase = waits.phase(r);
            let wait_b = self.tracked[phase].b();
            let cycle_wait = drawn * wait_b / waits.drawn_b(phase);
            let k = self.events.len();
            for j in 0..k {
                // The last event is the at-once reference; every other one
                // (the policies and the block reference) waits the cycle's
                // wait.
                let wait = if j + 1 == k { 0.0 } else { cycle_wait };
                if !self.wait_one(shared, r * k + j, wait, wait_b, phase) {
                    return true;
                }
            }
        }
        false
    }

    /// Step `step`'s wait, on event `step % k`, of `wait` ns (drawn in
    /// units of `wait_b` ns, law `phase`); false when it was not released.
    fn wait_one(
        &mut self,
        shared: &Shared,
        step: usize,
        wait: f64,
        wait_b: f64,
        phase: usize,
    ) -> bool {
        let clock = self.clock;
        let k = self.events.len();
        let j = step % k;
        let event = &self.events[j];
        let c0 = thread_cpu_time();
        let start = clock.now();
        // Relaxed (both): published by the Release store of `ready`.
        shared
            .wait_ticks
            .store(clock.ns_to_ticks(wait as u64), Ordering::Relaxed);
        shared.start_stamp.store(start, Ordering::Relaxed);
        // Release: publishes the start stamp and the wait with the step
        // number.
        shared.ready.store(step as u64 + 1, Ordering::Release);
        let notified = event.wait_timeout(WAIT_TIMEOUT);
        let woke = clock.now();
        let c1 = thread_cpu_time();
        if !notified {
            return false;
        }
        let next = self.poll_cap(j);
        let cap = std::mem::replace(&mut self.next_cap[j], next);
        let blocks = event.wait_profile().map_or(0, |p| p.blocks);
        let blocked = blocks > self.blocks_before[j];
        // Acquire: pairs with the producer's Release store before its
        // notify. A stamp from before this step's start is an earlier
        // step's: no sample.
        let notified_at = shared.notify_stamp.load(Ordering::Acquire);
        if notified_at >= start {
            let latency = clock.ticks_to_ns(woke.saturating_sub(notified_at));
            if j + 1 == k {
                self.tracked[phase].hand_off(latency);
            } else if j + 2 == k && blocked {
                self.tracked[phase].block(latency);
            }
        }
        self.raw.push(RawWait {
            poll_cap_ns: cap,
            woke,
            drawn_ns: wait,
            wait_b_ns: wait_b,
            cpu_ns: (c1 - c0).as_nanos() as f64,
            blocked,
        });
        self.blocks_before[j] = blocks;
        true
    }
}

/// The consumer's waits joined with the producer's stamps, one
/// [`Measured`] per event, the first `warmup` cycles dropped.
fn samples_of(
    raw: &[RawWait],
    notified: &[(f64, u64)],
    k: usize,
    warmup: usize,
    lost_producer: bool,
) -> Vec<Measured> {
    let clock = cycle_clock();
    let mut out: Vec<Measured> = (0..k)
        .map(|_| Measured {
            samples: Vec::new(),
            lost_producer,
        })
        .collect();
    for (step, (w, &(wait_ns, notified))) in raw.iter().zip(notified).enumerate() {
        if step / k >= warmup {
            out[step % k].samples.push(Sample {
                wait_ns,
                drawn_ns: w.drawn_ns,
                wait_b_ns: w.wait_b_ns,
                cpu_ns: w.cpu_ns,
                blocked: w.blocked,
                wake_latency_ns: clock.ticks_to_ns(w.woke.saturating_sub(notified)),
                phase: 0,
                poll_cap_ns: w.poll_cap_ns,
            });
        }
    }
    out
}

/// Median cost of two back-to-back `thread_cpu_time` reads' difference: what
/// the stamps around a wait add to its CPU time.
pub(super) fn cpu_clock_overhead_ns() -> f64 {
    let mut v: Vec<f64> = (0..201)
        .map(|_| {
            let a = thread_cpu_time();
            let b = thread_cpu_time();
            (b - a).as_nanos() as f64
        })
        .collect();
    median(&mut v)
}
