//! `B`, the cost of blocking on this machine: where a process starts from,
//! and how it learns the real one while it runs.
//!
//! **Definition.** `B` is the waiter's extra cost of one futex sleep/wake
//! cycle over a polling hand-off: the time from the notifier's store until
//! the waiter runs again, when the waiter was asleep in the kernel, minus the
//! same when it was polling. In Lim & Agarwal's model it is the fixed cost a
//! waiter pays for choosing to block (the unload/reload of the thread), and a
//! two-phase waiter polls for `alpha * B` before paying it.
//!
//! **No measurement inside a wait.** A process's `B` starts from an
//! explicit, documented source ([`starting_block_cost`], read once, in
//! microseconds, with no thread and no busy loop):
//!
//! 1. `WAITWISE_BLOCK_NS`, if set and valid;
//! 2. else this machine's profile, saved by `waitwise probe --save`
//!    ([`machine_profile`](super::machine_profile): a per-user cache file
//!    keyed by CPU model, kernel and hypervisor);
//! 3. else [`FALLBACK_BLOCK_NS`].
//!
//! Then it is **learned from the blocks the program really does**: a waker
//! stamps the clock before its `futex_wake`, the woken sleeper measures its
//! own wake-up, and the lower quartile of the last 64 such wake-ups
//! (`waitwise_platform::wake_latency`, which says why not the median) replaces the starting value once
//! there are 16 of them ([`block_cost`] says which is in force). On a
//! virtual machine, where a wake-up costs ~3 µs or ~20 µs depending on the
//! hypervisor's mode, the learned value follows the mode the program meets
//! instead of freezing one of them.
//!
//! **Measurement, for the tools.** [`measure_block_cost`] and
//! [`measure_block_cost_settled`] time hand-offs between two threads: first
//! by polling (PAUSE loop), then by futex sleep/wake with each side asleep
//! before it is woken. One round trip is two hand-offs, so
//! `B = (median futex round trip - fastest polling round trip) / 2`. When
//! polling round trips come out slower than futex ones, the two threads
//! shared one CPU (a busy machine) and `B = median futex round trip / 2`.
//! The `waitwise` tool and the benchmarks call [`settle_block_cost`], which
//! measures and then fixes `B` for the rest of the process (an experiment
//! wants one known `B`, not one that drifts with its own wake-ups).

use crate::env;
use std::sync::OnceLock;
use std::time::Duration;
#[cfg(not(loom))]
use std::time::Instant;
use waitwise_platform::once::ForkSafeOnce;

/// Wall-time budget of one calibration (tools only).
pub const CALIBRATION_BUDGET: Duration = Duration::from_millis(40);
/// Polling round trips measured (at most; the budget may cut them short).
pub const SPIN_ROUND_TRIPS: usize = 200;
/// Futex round trips measured (at most; the budget may cut them short).
pub const FUTEX_ROUND_TRIPS: usize = 40;
/// Round trips of each kind measured whatever the budget (the first is
/// dropped as a warm-up).
pub const MIN_ROUND_TRIPS: usize = 3;
/// `B` a process starts from when neither `WAITWISE_BLOCK_NS` nor a
/// machine profile gives one, until its own wake-ups teach it. Guessed: a
/// typical futex sleep/wake cost between a bare-metal machine (~2-5 µs)
/// and a virtual machine's slow wake-up mode (~20 µs).
pub const FALLBACK_BLOCK_NS: f64 = 10_000.0;
/// Smallest `B` accepted from a measurement. A sleep/wake cycle is at least
/// two context switches, over 1 µs on current hardware; a smaller figure
/// means the hand-offs did not really sleep (e.g. a loaded machine).
pub const MIN_MEASURED_BLOCK_NS: f64 = 1_000.0;

/// Where `B` came from.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case", tag = "source"))]
pub enum BlockCostSource {
    /// Measured in this process by a tool, and fixed.
    Measured {
        /// Median futex round trip, ns.
        futex_round_trip_ns: f64,
        /// Fastest polling round trip, ns.
        spin_round_trip_ns: f64,
    },
    /// From `WAITWISE_BLOCK_NS`.
    Environment,
    /// From this machine's profile (`waitwise probe --save`).
    MachineProfile {
        /// The file it was read from.
        path: String,
    },
    /// [`FALLBACK_BLOCK_NS`]: no other source.
    Fallback,
    /// Learned from this process's own wake-ups: their lower quartile.
    Learned {
        /// Wake-ups sampled so far.
        samples: u64,
    },
}

impl BlockCostSource {
    /// A one-word name (`measured`, `environment`, `machine_profile`,
    /// `fallback`, `learned`), for tables and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            BlockCostSource::Measured { .. } => "measured",
            BlockCostSource::Environment => "environment",
            BlockCostSource::MachineProfile { .. } => "machine_profile",
            BlockCostSource::Fallback => "fallback",
            BlockCostSource::Learned { .. } => "learned",
        }
    }
}

/// The block cost `B` and its origin.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BlockCost {
    /// `B` in nanoseconds.
    pub ns: f64,
    /// Where it came from.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub source: BlockCostSource,
}

/// The process's starting `B`, once read.
static STARTING: ForkSafeOnce<BlockCost> = ForkSafeOnce::new();
/// `B` fixed by a tool ([`settle_block_cost`], [`fix_block_cost`]): no
/// learning then.
static FIXED: OnceLock<BlockCost> = OnceLock::new();

/// The `B` a process starts from (see the module doc): read once, in
/// microseconds; never a measurement.
pub fn starting_block_cost() -> &'static BlockCost {
    STARTING.get_or_init(read_starting_block_cost)
}

#[cold]
fn read_starting_block_cost() -> BlockCost {
    if let Some(ns) = env::block_ns_override() {
        return BlockCost {
            ns: ns as f64,
            source: BlockCostSource::Environment,
        };
    }
    if !cfg!(loom) {
        if let Some((ns, path)) = super::machine_profile::load() {
            return BlockCost {
                ns: ns as f64,
                source: BlockCostSource::MachineProfile {
                    path: path.display().to_string(),
                },
            };
        }
    }
    BlockCost {
        ns: FALLBACK_BLOCK_NS,
        source: BlockCostSource::Fallback,
    }
}

/// `B` learned from this process's wake-ups so far, once there are enough
/// (`None` under loom, where nothing sleeps for real).
pub fn learned_block_cost() -> Option<BlockCost> {
    #[cfg(not(loom))]
    {
        let w = waitwise_platform::wake_latency::estimate()?;
        Some(BlockCost {
            ns: learned_from(w.ns),
            source: BlockCostSource::Learned { samples: w.samples },
        })
    }
    #[cfg(loom)]
    None
}

/// The learned `B` in ns (floored and capped as a measured one): a plain
/// number, so the wait path that reads it holds no value with a
/// destructor, read with one load of a line that recording samples does
/// not write (`wake_latency`).
#[inline]
fn learned_ns() -> Option<f64> {
    #[cfg(not(loom))]
    {
        waitwise_platform::wake_latency::estimate_ns().map(learned_from)
    }
    #[cfg(loom)]
    None
}

/// A learned wake-up latency as a `B`: floored and capped as a measured one.
#[cfg(not(loom))]
#[inline]
fn learned_from(ns: u64) -> f64 {
    (ns as f64).clamp(MIN_MEASURED_BLOCK_NS, env::MAX_BLOCK_NS as f64)
}

/// The `B` in force: fixed by a tool, else learned, else the starting one.
pub fn block_cost() -> BlockCost {
    if let Some(b) = FIXED.get() {
        return b.clone();
    }
    learned_block_cost().unwrap_or_else(|| starting_block_cost().clone())
}

/// `B` in nanoseconds (see [`block_cost`]); what every wait's poll limit is
/// computed from: an atomic load or two, no allocation.
#[inline]
pub fn block_ns() -> f64 {
    if let Some(b) = FIXED.get() {
        return b.ns;
    }
    learned_ns().unwrap_or_else(|| starting_block_cost().ns)
}

/// Fixes the process's `B` to `b` for the rest of its life (no learning),
/// unless one is fixed already. Returns the `B` in force.
pub fn fix_block_cost(b: BlockCost) -> BlockCost {
    FIXED.get_or_init(|| b).clone()
}

/// Fixes the process's `B` for an experiment: `WAITWISE_BLOCK_NS` if set,
/// else [`measure_block_cost_settled`]`(repeats, pause)`, unless a `B` is
/// fixed already (then that one is kept). For programs that can spend
/// `repeats x (40 ms + pause)` at start-up for a steady, known `B`, like
/// the `waitwise` tool's experiments. Returns the `B` in force.
#[cfg(not(loom))]
pub fn settle_block_cost(repeats: usize, pause: Duration) -> BlockCost {
    if let Some(b) = FIXED.get() {
        return b.clone();
    }
    if let Some(ns) = env::block_ns_override() {
        return fix_block_cost(BlockCost {
            ns: ns as f64,
            source: BlockCostSource::Environment,
        });
    }
    match measure_block_cost_settled(repeats, pause) {
        Some(b) => fix_block_cost(b),
        None => block_cost(),
    }
}

/// `B` from `repeats` calibrations of [`CALIBRATION_BUDGET`] spaced by
/// `pause`: the mean of their futex round-trip medians, less the fastest
/// polling round trip of all, halved.
///
/// Why: on a virtual machine the cost of waking a sleeping thread switches
/// between modes that last tens of milliseconds (the host's idle handling
/// of the vCPU; the modes' wake-ups can differ tenfold), so one 40 ms
/// calibration lands in either mode and `B` differs as much between
/// processes.
/// Spread over `repeats` windows the mean weighs the modes as a waiter
/// meets them: the expected cost of a block, which is what the model's `B`
/// is.
///
/// A calibration whose polling round trip is not well under half its futex
/// one ran with both threads on one CPU (another process or the host held
/// the other), which measures a time slice, not a wake-up: it is dropped
/// and another is run, up to `repeats` more times. Once, every calibration
/// of a run measured polling round trips of 53 µs against futex ones of
/// 55 µs, and `B` fell to its floor of 1 µs. If none is clean, all count.
#[cfg(not(loom))]
pub fn measure_block_cost_settled(repeats: usize, pause: Duration) -> Option<BlockCost> {
    let repeats = repeats.max(1);
    let mut clean = Vec::with_capacity(repeats);
    let mut shared_cpu = Vec::new();
    for i in 0..2 * repeats {
        if clean.len() == repeats {
            break;
        }
        if i > 0 {
            std::thread::sleep(pause);
        }
        let m = round_trips::measure(CALIBRATION_BUDGET)?;
        if m.spin_ns < m.futex_ns / 2.0 {
            clean.push(m);
        } else {
            shared_cpu.push(m);
        }
    }
    let used = if clean.is_empty() {
        &shared_cpu
    } else {
        &clean
    };
    let futex: Vec<f64> = used.iter().map(|m| m.futex_ns).collect();
    let spin = used.iter().map(|m| m.spin_ns).fold(f64::INFINITY, f64::min);
    let futex_ns = futex.iter().sum::<f64>() / futex.len() as f64;
    Some(cost_from_round_trips(round_trips::RoundTrips {
        spin_ns: spin,
        futex_ns,
        cpus: used.first().and_then(|m| m.cpus),
    }))
}

/// Measures `B` now (the probe calls this to report a fresh figure; policies
/// use the cached [`block_cost`]). `None` if the partner thread could not be
/// spawned.
#[cfg(not(loom))]
pub fn measure_block_cost() -> Option<BlockCost> {
    round_trips::measure(CALIBRATION_BUDGET).map(cost_from_round_trips)
}

/// `B = (futex round trip - polling round trip) / 2`, floored.
#[cfg(not(loom))]
pub fn cost_from_round_trips(m: round_trips::RoundTrips) -> BlockCost {
    // A polling round trip slower than a futex one means the two threads
    // shared a CPU (the machine is busy): polling could not hand off at all,
    // and the whole futex hand-off is the cost of blocking.
    let polling_ns = if m.spin_ns < m.futex_ns {
        m.spin_ns
    } else {
        0.0
    };
    let ns = ((m.futex_ns - polling_ns) / 2.0).max(MIN_MEASURED_BLOCK_NS);
    BlockCost {
        ns,
        source: BlockCostSource::Measured {
            futex_round_trip_ns: m.futex_ns,
            spin_round_trip_ns: m.spin_ns,
        },
    }
}

/// Under loom there are no real threads to time.
#[cfg(loom)]
pub fn measure_block_cost() -> Option<BlockCost> {
    None
}

/// Round-trip medians between two threads by polling and by futex.
#[cfg(not(loom))]
pub mod round_trips {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    use waitwise_platform::futex::Futex;

    /// Median round-trip times, ns.
    #[derive(Clone, Copy, Debug)]
    pub struct RoundTrips {
        /// Polling hand-offs (fastest).
        pub spin_ns: f64,
        /// Futex hand-offs, each side asleep before it is woken.
        pub futex_ns: f64,
        /// The CPUs the measuring thread and its partner ran on when the
        /// round trips started, where the kernel could say.
        pub cpus: Option<(usize, usize)>,
    }

    /// The CPUs the two threads of a measurement are pinned to: the first
    /// two this thread may use, so that a polling hand-off is one between
    /// two running threads. Left to the scheduler, the partner thread
    /// starts beside the thread that spawned it (a guest's scheduler
    /// places a woken thread on its waker's CPU while the other CPU looks
    /// preempted), and the two take turns on one CPU: a "polling" round
    /// trip then costs two yields, tens of µs. `None` with one CPU.
    pub fn pinned_cpus() -> Option<(usize, usize)> {
        match waitwise_platform::affinity::allowed_cpus().ok()?.as_slice() {
            [a, b, ..] => Some((*a, *b)),
            _ => None,
        }
    }

    /// Runs both hand-off kinds within `budget` and returns their medians,
    /// the two threads pinned to [`pinned_cpus`] where there are two (the
    /// driving side runs on a thread of its own, so the caller's affinity
    /// is left as it was).
    pub fn measure(budget: Duration) -> Option<RoundTrips> {
        let Some(cpus) = pinned_cpus() else {
            return measure_from(budget, None);
        };
        std::thread::Builder::new()
            .name("waitwise-calibrate".into())
            .spawn(move || measure_from(budget, Some(cpus)))
            .ok()?
            .join()
            .ok()?
    }

    /// Pins the calling thread to `cpu`; unpinned, the round trips are
    /// only slower.
    fn pin_to(cpu: Option<usize>) {
        if let Some(cpu) = cpu {
            let _ = waitwise_platform::affinity::pin_current_thread(cpu);
        }
    }

    const MODE_SPIN: u32 = 0;
    const MODE_FUTEX: u32 = 1;
    const MODE_STOP: u32 = 2;

    struct Shared {
        ping: Futex,
        pong: Futex,
        mode: AtomicU32,
        /// The partner's CPU once it is pinned, plus one (0: not known).
        partner_cpu: AtomicU32,
    }

    /// Polls `f` until it differs from `old`; yields now and then so the
    /// hand-off completes even when both threads share one CPU.
    fn poll_change(f: &Futex, old: u32) -> u32 {
        let mut n = 0u32;
        loop {
            // Acquire: pairs with the partner's Release store of the token.
            let v = f.value().load(Ordering::Acquire);
            if v != old {
                return v;
            }
            n = n.wrapping_add(1);
            if n.is_multiple_of(1024) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    fn block_change(f: &Futex, old: u32) -> u32 {
        loop {
            // Acquire: pairs with the partner's Release store of the token.
            let v = f.value().load(Ordering::Acquire);
            if v != old {
                return v;
            }
            f.wait(old, None);
        }
    }

    /// [`measure`] from the calling thread and a partner, pinned to
    /// `cpus` (the calling thread's, the partner's) when given. The
    /// partner pins itself before the caller does: a thread starts with
    /// its spawner's CPUs, and one pinned already would leave it no other.
    fn measure_from(budget: Duration, cpus: Option<(usize, usize)>) -> Option<RoundTrips> {
        let shared = Arc::new(Shared {
            ping: Futex::new(0),
            pong: Futex::new(0),
            mode: AtomicU32::new(MODE_SPIN),
            partner_cpu: AtomicU32::new(0),
        });
        let partner = {
            let s = shared.clone();
            std::thread::Builder::new()
                .name("waitwise-calibrate".into())
                .spawn(move || {
                    pin_to(cpus.map(|c| c.1));
                    let cpu =
                        waitwise_platform::affinity::current_cpu().map_or(0, |c| c as u32 + 1);
                    // Relaxed: read after the first round trip, whose
                    // Release/Acquire pair orders it.
                    s.partner_cpu.store(cpu, Ordering::Relaxed);
                    let mut seen = 0;
                    loop {
                        // Acquire: pairs with the main thread's Release
                        // mode store. Only a hint of how to wait: a stale
                        // mode costs the first round after a switch, which
                        // is dropped; `now_mode` below is exact.
                        let mode = s.mode.load(Ordering::Acquire);
                        let v = if mode == MODE_FUTEX {
                            block_change(&s.ping, seen)
                        } else {
                            poll_change(&s.ping, seen)
                        };
                        seen = v;
                        // Read the mode again: the main thread switches it
                        // before sending the token, so this read (after the
                        // Acquire of the token) tells how it waits for pong.
                        let now_mode = s.mode.load(Ordering::Acquire);
                        if now_mode == MODE_STOP {
                            return;
                        }
                        // Release: the main thread's Acquire load sees the token.
                        s.pong.value().store(v, Ordering::Release);
                        if now_mode == MODE_FUTEX {
                            s.pong.wake_one();
                        }
                    }
                })
                .ok()?
        };
        pin_to(cpus.map(|c| c.0));
        let own_cpu = waitwise_platform::affinity::current_cpu();
        let start = Instant::now();
        let mut token = 0u32;
        let mut round = |futex: bool| -> f64 {
            token += 1;
            let t0 = Instant::now();
            // Release: the partner's Acquire load of the token also sees the
            // mode stored before it.
            shared.ping.value().store(token, Ordering::Release);
            if futex {
                shared.ping.wake_one();
                block_change(&shared.pong, token - 1);
            } else {
                poll_change(&shared.pong, token - 1);
            }
            t0.elapsed().as_nanos() as f64
        };
        let mut spin = Vec::with_capacity(SPIN_ROUND_TRIPS);
        // At least MIN_ROUND_TRIPS of each, however slow the machine: a
        // loaded machine gives a noisy figure, never none.
        while spin.len() < MIN_ROUND_TRIPS
            || (spin.len() < SPIN_ROUND_TRIPS && start.elapsed() < budget / 4)
        {
            spin.push(round(false));
        }
        // Switch modes only between rounds: the partner reads the mode
        // before waiting for the next token. Release: with the token's
        // Release store after it, the partner's `now_mode` read sees it.
        shared.mode.store(MODE_FUTEX, Ordering::Release);
        let mut futex = Vec::with_capacity(FUTEX_ROUND_TRIPS);
        while futex.len() < MIN_ROUND_TRIPS
            || (futex.len() < FUTEX_ROUND_TRIPS && start.elapsed() < budget)
        {
            futex.push(round(true));
        }
        // Release, both: the partner Acquire-loads the token, then reads
        // MODE_STOP and returns.
        shared.mode.store(MODE_STOP, Ordering::Release);
        token += 1;
        shared.ping.value().store(token, Ordering::Release);
        shared.ping.wake_one();
        partner.join().ok()?;
        // Relaxed: the partner stored it before its first pong, which the
        // rounds above acquired.
        let partner_cpu = shared.partner_cpu.load(Ordering::Relaxed).checked_sub(1);
        // The first round of each kind includes thread start-up / mode switch.
        Some(RoundTrips {
            spin_ns: spin.iter().skip(1).copied().reduce(f64::min)?,
            futex_ns: median_skip_first(&mut futex)?,
            cpus: own_cpu.zip(partner_cpu.map(|c| c as usize)),
        })
    }

    /// The median, leaving out the first sample (thread start-up or the mode
    /// switch).
    fn median_skip_first(v: &mut Vec<f64>) -> Option<f64> {
        if v.len() > 2 {
            v.remove(0);
        }
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn calibration_is_quick_and_positive() {
        let t = Instant::now();
        let b = measure_block_cost().expect("partner thread");
        // A sanity bound on the *code path* (not a performance test): the
        // loops are budgeted at 40 ms; seconds would mean a hang.
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(b.ns >= MIN_MEASURED_BLOCK_NS);
        match b.source {
            BlockCostSource::Measured {
                futex_round_trip_ns,
                spin_round_trip_ns,
            } => {
                assert!(futex_round_trip_ns > 0.0 && spin_round_trip_ns > 0.0);
            }
            other => panic!("expected a measurement, got {other:?}"),
        }
    }

    #[test]
    fn round_trips_pin_two_cpus_and_leave_the_callers_affinity() {
        let before = waitwise_platform::affinity::allowed_cpus().unwrap();
        match round_trips::pinned_cpus() {
            Some((a, b)) => {
                assert_ne!(a, b);
                assert!(before.contains(&a) && before.contains(&b));
            }
            None => assert!(before.len() < 2),
        }
        let m = round_trips::measure(Duration::from_millis(5)).expect("partner thread");
        if let (Some(pinned), Some(ran)) = (round_trips::pinned_cpus(), m.cpus) {
            assert_eq!(
                ran, pinned,
                "the two threads ran on the CPUs they were pinned to"
            );
        }
        assert_eq!(waitwise_platform::affinity::allowed_cpus().unwrap(), before);
    }

    #[test]
    fn the_starting_cost_is_read_once_and_never_measured() {
        let start = starting_block_cost();
        assert!(std::ptr::eq(start, starting_block_cost()));
        assert!(!matches!(
            start.source,
            BlockCostSource::Measured { .. } | BlockCostSource::Learned { .. }
        ));
        assert!(start.ns >= 1.0);
    }

    #[test]
    fn settled_cost_averages_round_trips() {
        let b = measure_block_cost_settled(3, Duration::from_millis(1)).expect("partner thread");
        assert!(b.ns >= MIN_MEASURED_BLOCK_NS);
        let BlockCostSource::Measured {
            futex_round_trip_ns,
            spin_round_trip_ns,
        } = b.source
        else {
            panic!("expected a measurement, got {:?}", b.source);
        };
        // B is derived from the averaged round trips by the one formula.
        assert_eq!(
            b,
            cost_from_round_trips(round_trips::RoundTrips {
                spin_ns: spin_round_trip_ns,
                futex_ns: futex_round_trip_ns,
                cpus: None,
            })
        );
    }

    #[test]
    fn round_trip_formula() {
        let b = cost_from_round_trips(round_trips::RoundTrips {
            spin_ns: 100.0,
            futex_ns: 40_100.0,
            cpus: None,
        });
        assert_eq!(b.ns, 20_000.0);
        // Polling slower than blocking: the machine is busy, all of it counts.
        let b = cost_from_round_trips(round_trips::RoundTrips {
            spin_ns: 50_000.0,
            futex_ns: 40_000.0,
            cpus: None,
        });
        assert_eq!(b.ns, 20_000.0);
        // Floored.
        let b = cost_from_round_trips(round_trips::RoundTrips {
            spin_ns: 100.0,
            futex_ns: 300.0,
            cpus: None,
        });
        assert_eq!(b.ns, MIN_MEASURED_BLOCK_NS);
    }

    #[test]
    fn settling_fixes_the_cost() {
        let fixed = settle_block_cost(1, Duration::ZERO);
        assert_eq!(settle_block_cost(1, Duration::ZERO), fixed);
        assert_eq!(block_cost(), fixed);
        assert_eq!(block_ns(), fixed.ns);
        assert_eq!(
            fix_block_cost(BlockCost {
                ns: 1.0,
                source: BlockCostSource::Fallback
            }),
            fixed
        );
    }
}
