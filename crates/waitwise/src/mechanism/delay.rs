//! `delay-*`: poll loops whose body holds one long-latency operation, the
//! variants of the UltraSPARC T2 spin-loop study (seed 002): a spinning
//! thread slows its co-runners by taking issue/fetch slots, and a body that
//! stalls on a long-latency instruction gives those slots back (42% slowdown
//! down to 1.5% there), at the price of noticing the store later.
//!
//! The interference experiments compare these bodies against `spin` and
//! `pause`.

use super::MechanismWait;
use std::cell::RefCell;
use std::hint::black_box;
use waitwise_platform::clock::{cycle_clock, Deadline};
use waitwise_platform::shim::{AtomicU32, Ordering};

/// The long-latency operation in the loop body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum DelayKind {
    /// A dependent chain of 64-bit integer divisions.
    IntDiv,
    /// A dependent chain of floating-point divisions.
    FpDiv,
    /// A compare-and-swap on a line private to the waiting thread.
    PrivateCas,
    /// A load that misses the cache: one step of a pointer chase through a
    /// buffer larger than the last-level cache.
    CacheMiss,
}

/// Operations in one delay step. Guessed: 8 dependent divisions ≈ 100-300
/// cycles, about one PAUSE on recent Intel cores.
pub const OPS_PER_STEP: u32 = 8;

/// Size of the per-thread pointer-chase buffer (words). 4 Mi words = 32 MiB,
/// larger than the last-level cache of the machines this targets.
pub const CHASE_WORDS: usize = 4 << 20;

impl DelayKind {
    /// The mechanism name, e.g. `delay-intdiv`.
    pub fn mechanism_name(self) -> &'static str {
        match self {
            DelayKind::IntDiv => "delay-intdiv",
            DelayKind::FpDiv => "delay-fpdiv",
            DelayKind::PrivateCas => "delay-cas",
            DelayKind::CacheMiss => "delay-miss",
        }
    }
}

thread_local! {
    static CHASE: RefCell<Option<(Vec<usize>, usize)>> = const { RefCell::new(None) };
    static PRIVATE_LINE: std::sync::atomic::AtomicU64 = const { std::sync::atomic::AtomicU64::new(0) };
}

/// Runs one delay step of `kind`.
#[inline(never)]
pub fn delay(kind: DelayKind) {
    match kind {
        DelayKind::IntDiv => {
            let mut x: u64 = black_box(0xFFFF_FFFF_FFFF_FFFF);
            for _ in 0..OPS_PER_STEP {
                x = black_box(x / black_box(3)) | (1 << 63);
            }
            black_box(x);
        }
        DelayKind::FpDiv => {
            let mut x: f64 = black_box(1.0e300);
            for _ in 0..OPS_PER_STEP {
                x = black_box(x / black_box(1.000_001));
            }
            black_box(x);
        }
        DelayKind::PrivateCas => PRIVATE_LINE.with(|line| {
            use std::sync::atomic::Ordering as O;
            for _ in 0..OPS_PER_STEP {
                // Relaxed: the line is private; only the instruction's latency matters.
                let v = line.load(O::Relaxed);
                let _ =
                    black_box(line.compare_exchange(v, v.wrapping_add(1), O::Relaxed, O::Relaxed));
            }
        }),
        DelayKind::CacheMiss => CHASE.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (buf, pos) = guard.get_or_insert_with(|| (chase_cycle(CHASE_WORDS), 0));
            *pos = black_box(buf[*pos]);
        }),
    }
}

/// A single random cycle through `n` slots (Sattolo's algorithm), so each
/// load depends on the previous one and the prefetcher cannot guess it.
fn chase_cycle(n: usize) -> Vec<usize> {
    let mut next: Vec<usize> = (0..n).collect();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in (1..n).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let j = (seed % i as u64) as usize;
        next.swap(i, j);
    }
    next
}

/// Waits until `word != current` or `deadline` passes, one delay step
/// between polls; the clock is read after every step.
#[inline]
pub fn wait(word: &AtomicU32, current: u32, deadline: Deadline, kind: DelayKind) -> MechanismWait {
    let clock = cycle_clock();
    loop {
        // Acquire: a waiter that sees the new value sees the writer's prior writes.
        let v = word.load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        delay(kind);
        if deadline.passed_at(clock.now()) {
            return MechanismWait::TimedOut;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chase_is_one_cycle() {
        let n = 1000;
        let next = chase_cycle(n);
        let mut seen = vec![false; n];
        let mut p = 0;
        for _ in 0..n {
            assert!(!seen[p]);
            seen[p] = true;
            p = next[p];
        }
        assert_eq!(p, 0);
    }

    #[test]
    fn every_delay_kind_runs() {
        for k in [
            DelayKind::IntDiv,
            DelayKind::FpDiv,
            DelayKind::PrivateCas,
            DelayKind::CacheMiss,
        ] {
            delay(k);
        }
    }
}
