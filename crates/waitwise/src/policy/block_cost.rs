//! `B`, the cost of blocking, measured on this machine.
//!
//! **Definition.** `B` is the waiter's extra cost of one futex sleep/wake
//! cycle over a polling hand-off: the time from the notifier's store until
//! the waiter runs again, when the waiter was asleep in the kernel, minus the
//! same when it was polling. In Lim & Agarwal's model it is the fixed cost a
//! waiter pays for choosing to block (the unload/reload of the thread), and a
//! two-phase waiter polls for `alpha * B` before paying it.
//!
//! **Measurement.** Two threads hand a token back and forth, first by polling
//! (PAUSE loop), then by futex sleep/wake with each side asleep before it is
//! woken. One round trip is two hand-offs, so
//! `B = (median futex round trip - fastest polling round trip) / 2`. The
//! polling figure is the minimum because a polling round trip is slower than
//! its best only when a partner was descheduled (a busy machine). When
//! polling round trips come out slower than futex ones, the two threads
//! shared one CPU (a busy machine) and `B = median futex round trip / 2`.
//! It runs once per process, lazily, on the first two-phase wait, within
//! [`CALIBRATION_BUDGET`]; the result is cached. `WAITWISE_BLOCK_NS`
//! overrides it (a rejected value is reported and the measurement kept).
//!
//! **When to measure.** On a virtual machine, waking a thread whose CPU went
//! idle costs far more than waking one on a busy CPU (the idle vCPU halted
//! through the hypervisor: ~20 µs against ~3 µs on the project's 2-vCPU
//! guest). Measured lazily in the middle of a busy workload, `B` comes out
//! low. Programs that can should call [`block_cost`] once at start-up, before
//! their threads get busy (the `waitwise` tool and its benchmarks do), or set
//! `WAITWISE_BLOCK_NS`.
//!
//! **Modes.** On the same guest the wake-up cost also switches between
//! modes lasting tens of milliseconds (~4 µs and ~35 µs one way), so one
//! 40 ms calibration may see either. [`settle_block_cost`] spends a few
//! hundred milliseconds on several spaced calibrations and keeps their
//! mean; the `waitwise` tool does that before its experiments.

use super::env;
use serde::Serialize;
use std::sync::OnceLock;
use std::time::Duration;
#[cfg(not(loom))]
use std::time::Instant;

/// Wall-time budget of the calibration (the bound is 50 ms).
pub const CALIBRATION_BUDGET: Duration = Duration::from_millis(40);
/// Polling round trips measured (at most; the budget may cut them short).
pub const SPIN_ROUND_TRIPS: usize = 200;
/// Futex round trips measured (at most; the budget may cut them short).
pub const FUTEX_ROUND_TRIPS: usize = 40;
/// `B` used when the measurement cannot run (a thread cannot be spawned) or
/// under loom. Guessed: a typical bare-metal futex sleep/wake cost.
pub const FALLBACK_BLOCK_NS: f64 = 10_000.0;
/// Smallest `B` accepted from a measurement. A sleep/wake cycle is at least
/// two context switches, over 1 µs on current hardware; a smaller figure
/// means the hand-offs did not really sleep (e.g. a loaded machine).
pub const MIN_MEASURED_BLOCK_NS: f64 = 1_000.0;

/// Where `B` came from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum BlockCostSource {
    /// Measured in this process.
    Measured {
        /// Median futex round trip, ns.
        futex_round_trip_ns: f64,
        /// Fastest polling round trip, ns.
        spin_round_trip_ns: f64,
    },
    /// From `WAITWISE_BLOCK_NS`.
    Environment,
    /// [`FALLBACK_BLOCK_NS`]: the measurement could not run.
    Fallback,
}

/// The block cost `B` and its origin.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BlockCost {
    /// `B` in nanoseconds.
    pub ns: f64,
    /// Where it came from.
    #[serde(flatten)]
    pub source: BlockCostSource,
}

/// The process's `B`, once known.
static BLOCK_COST: OnceLock<BlockCost> = OnceLock::new();

/// The process's block cost `B`: from `WAITWISE_BLOCK_NS` if set and valid,
/// else measured once (lazily, under 50 ms) and cached.
#[inline]
pub fn block_cost() -> BlockCost {
    *BLOCK_COST.get_or_init(init_block_cost)
}

/// Fixes the process's `B` with a longer measurement than the lazy one:
/// [`measure_block_cost_settled`]`(repeats, pause)`, unless
/// `WAITWISE_BLOCK_NS` is set or `B` is already known (then that `B` is
/// kept). For programs that can spend `repeats x (40 ms + pause)` at
/// start-up for a steadier `B`, like the `waitwise` tool's experiments.
/// Returns the `B` in force.
#[cfg(not(loom))]
pub fn settle_block_cost(repeats: usize, pause: Duration) -> BlockCost {
    if BLOCK_COST.get().is_none() && !matches!(env::block_ns_override(), Some(Ok(_))) {
        if let Some(b) = measure_block_cost_settled(repeats, pause) {
            // A concurrent first use may have won; either way one B holds.
            let _ = BLOCK_COST.set(b);
        }
    }
    block_cost()
}

/// `B` from `repeats` calibrations of [`CALIBRATION_BUDGET`] spaced by
/// `pause`: the mean of their futex round-trip medians, less the fastest
/// polling round trip of all, halved.
///
/// Why: on a virtual machine the cost of waking a sleeping thread switches
/// between modes that last tens of milliseconds (on the project's 2-vCPU
/// guest, one-way wake-ups of ~4 µs and of ~35 µs, in runs of 5-30 ms,
/// presumably the host's idle handling of the vCPU), so one 40 ms
/// calibration lands in either mode and `B` differed 10x between processes.
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
    }))
}

/// `B` in nanoseconds (see [`block_cost`]).
#[inline]
pub fn block_ns() -> f64 {
    block_cost().ns
}

#[cold]
fn init_block_cost() -> BlockCost {
    if let Some(Ok(ns)) = env::block_ns_override() {
        return BlockCost {
            ns: *ns as f64,
            source: BlockCostSource::Environment,
        };
    }
    if cfg!(loom) {
        return BlockCost {
            ns: FALLBACK_BLOCK_NS,
            source: BlockCostSource::Fallback,
        };
    }
    measure_block_cost().unwrap_or(BlockCost {
        ns: FALLBACK_BLOCK_NS,
        source: BlockCostSource::Fallback,
    })
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
fn cost_from_round_trips(m: round_trips::RoundTrips) -> BlockCost {
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
    }

    const MODE_SPIN: u32 = 0;
    const MODE_FUTEX: u32 = 1;
    const MODE_STOP: u32 = 2;

    struct Shared {
        ping: Futex,
        pong: Futex,
        mode: AtomicU32,
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

    /// Runs both hand-off kinds within `budget` and returns their medians.
    pub fn measure(budget: Duration) -> Option<RoundTrips> {
        let shared = Arc::new(Shared {
            ping: Futex::new(0),
            pong: Futex::new(0),
            mode: AtomicU32::new(MODE_SPIN),
        });
        let partner = {
            let s = shared.clone();
            std::thread::Builder::new()
                .name("waitwise-calibrate".into())
                .spawn(move || {
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
        while spin.len() < SPIN_ROUND_TRIPS && start.elapsed() < budget / 4 {
            spin.push(round(false));
        }
        // Switch modes only between rounds: the partner reads the mode
        // before waiting for the next token. Release: with the token's
        // Release store after it, the partner's `now_mode` read sees it.
        shared.mode.store(MODE_FUTEX, Ordering::Release);
        let mut futex = Vec::with_capacity(FUTEX_ROUND_TRIPS);
        while futex.len() < FUTEX_ROUND_TRIPS && start.elapsed() < budget {
            futex.push(round(true));
        }
        // Release, both: the partner Acquire-loads the token, then reads
        // MODE_STOP and returns.
        shared.mode.store(MODE_STOP, Ordering::Release);
        token += 1;
        shared.ping.value().store(token, Ordering::Release);
        shared.ping.wake_one();
        partner.join().ok()?;
        // The first round of each kind includes thread start-up / mode switch.
        Some(RoundTrips {
            spin_ns: spin.iter().skip(1).copied().reduce(f64::min)?,
            futex_ns: median_skip_first(&mut futex)?,
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
    fn cached_cost_is_stable() {
        assert_eq!(block_cost(), block_cost());
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
            })
        );
    }

    #[test]
    fn round_trip_formula() {
        let b = cost_from_round_trips(round_trips::RoundTrips {
            spin_ns: 100.0,
            futex_ns: 40_100.0,
        });
        assert_eq!(b.ns, 20_000.0);
        // Polling slower than blocking: the machine is busy, all of it counts.
        let b = cost_from_round_trips(round_trips::RoundTrips {
            spin_ns: 50_000.0,
            futex_ns: 40_000.0,
        });
        assert_eq!(b.ns, 20_000.0);
        // Floored.
        let b = cost_from_round_trips(round_trips::RoundTrips {
            spin_ns: 100.0,
            futex_ns: 300.0,
        });
        assert_eq!(b.ns, MIN_MEASURED_BLOCK_NS);
    }

    #[test]
    fn settling_keeps_a_known_cost() {
        let before = block_cost();
        assert_eq!(settle_block_cost(1, Duration::ZERO), before);
    }
}
