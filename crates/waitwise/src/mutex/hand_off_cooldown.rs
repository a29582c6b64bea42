//! The queue locks' hand-off cool-down: a thread that handed its lock to a
//! waiter waits a while before it queues for the same lock again, so that
//! the new holder runs a batch of acquisitions alone.
//!
//! # Why
//!
//! A FIFO queue lock ([`RawMcsMutex`](super::RawMcsMutex),
//! [`RawTicketMutex`](super::RawTicketMutex)) contended by two running
//! threads alternates: the releaser queues again at once, behind the
//! waiter it just handed the lock to, and that waiter's release hands it
//! back. Every acquisition is then a hand-off between CPUs: the holder's
//! store and the waiter's miss on the line it polls, a few hundred ns,
//! against a few ns for an acquisition from the holder's own cache. The
//! lock runs at the hand-off rate whatever the critical section, and an
//! unfair lock (the default [`Mutex`](super::Mutex)), whose holder takes
//! the lock again from its cache, runs an order of magnitude faster.
//!
//! # How
//!
//! A release that hands the lock to a waiter ([`handed_off`]) notes, in a
//! thread-local, the lock and when; the same thread's next `lock` of that
//! lock ([`wait_out`]) first waits until [`cooldown_ns`] have passed since
//! then (polling the clock with the platform's spin hint; no shared memory
//! is touched). Meanwhile the new holder takes the lock again and again
//! from its own cache, unqueued for: a batch. Then the cooled thread
//! queues as usual and is served in FIFO order. This is concurrency
//! restriction (Dice, "Malthusian Locks", EuroSys 2017: fewer threads
//! circulating over a lock at once, more acquisitions per hand-off) in its
//! simplest form, bounded by time rather than by a culled set, and close
//! to lock cohorting (Dice, Marathe and Shavit, PPoPP 2012) with the
//! holder's thread as the cohort.
//!
//! # What it costs, and the bound
//!
//! - The queue order is unchanged: a cooling thread has not queued yet,
//!   and every queued waiter is served in the lock's order. A thread that
//!   handed off reaches the queue at most [`cooldown_ns`] later than it
//!   would have, then waits there as any arrival does: no starvation, and
//!   the unfairness it adds is bounded by that time per hand-off.
//! - The cooling thread polls (with PAUSE) for at most [`cooldown_ns`];
//!   a thread that comes back to the lock after that (a program that works
//!   between its critical sections) does not wait at all.
//! - A contended release reads the clock once and writes the thread-local;
//!   every `lock` reads the thread-local (one TLS load and a compare).
//!   `try_lock` never waits: it does not queue either.
//! - Only the last lock handed off is remembered: a thread that hands off
//!   two locks in turn cools down only for the second.
//!
//! The cool-down is [`COOLDOWN_IN_B`] times the process's block cost `B`
//! ([`block_ns`](crate::policy::block_ns)), within [`MIN_COOLDOWN_NS`] and
//! [`MAX_COOLDOWN_NS`]: a thread held back costs the program less than
//! one of its blocks, and a batch lasts many hand-offs (a hand-off is a
//! few hundred ns, `B` several µs).
//!
//! Under loom there is no time: the cool-down never waits, and the locks'
//! models explore their queue protocols unchanged. The thread-local is
//! touched by its own thread only, so there is no concurrent state here to
//! model.

// Under loom nothing waits: the rule's items are unused there.
#![cfg_attr(loom, allow(dead_code))]

#[cfg(not(loom))]
use std::cell::Cell;
#[cfg(not(loom))]
use waitwise_platform::clock::cycle_clock;
#[cfg(not(loom))]
use waitwise_platform::shim::spin_hint;

/// The cool-down in units of the process's `B`. Chosen with `mutex_bench`
/// (the MCS lock against the default `Mutex` at 2 and 4 threads): any
/// cool-down of a fraction of `B` lifts the FIFO lock's throughput many
/// times over none, longer ones a little more. Half a `B` is the scale of
/// a two-phase waiter's polling phase (`alpha = ln(e-1) ~ 0.54` for a lock):
/// a cooling thread polls no longer than a waiter would.
pub const COOLDOWN_IN_B: f64 = 0.5;

/// The least cool-down, ns: a batch lasts several hand-offs even where a
/// block is cheap.
pub const MIN_COOLDOWN_NS: f64 = 1_000.0;

/// The longest cool-down, ns: where a block is dear (a loaded VM), a
/// thread is not held back longer than this.
pub const MAX_COOLDOWN_NS: f64 = 10_000.0;

/// The cool-down for a process whose `B` is `block_ns` (a NaN gives the
/// least). Pure, so the rule is testable.
pub fn cooldown_for(block_ns: f64) -> f64 {
    let ns = block_ns * COOLDOWN_IN_B;
    if ns.is_nan() {
        MIN_COOLDOWN_NS
    } else {
        ns.clamp(MIN_COOLDOWN_NS, MAX_COOLDOWN_NS)
    }
}

/// The cool-down now, ns ([`cooldown_for`] the process's `B`).
pub fn cooldown_ns() -> f64 {
    cooldown_for(crate::policy::block_ns())
}

#[cfg(not(loom))]
thread_local! {
    /// The lock this thread last handed to a waiter (its address; 0:
    /// none) and when its cool-down ends, on the cycle clock.
    static LAST_HAND_OFF: Cell<(usize, u64)> = const { Cell::new((0, 0)) };
}

/// The calling thread just handed the lock at `lock` to a waiter: its next
/// [`wait_out`] of that lock waits out the cool-down.
#[inline]
pub fn handed_off(lock: usize) {
    #[cfg(not(loom))]
    {
        let until = cycle_clock().now().saturating_add(cooldown_ns() as u64);
        // A thread exiting has no cool-down to keep: try_with ignores it.
        let _ = LAST_HAND_OFF.try_with(|c| c.set((lock, until)));
    }
    #[cfg(loom)]
    let _ = lock;
}

/// Before queuing for the lock at `lock`: if the calling thread's last
/// hand-off was of this lock, waits until its cool-down ends (at once if
/// it has), and forgets it. Returns whether it waited (the cool-down had
/// not ended).
#[inline]
pub fn wait_out(lock: usize) -> bool {
    #[cfg(not(loom))]
    {
        let Ok((last, until)) = LAST_HAND_OFF.try_with(Cell::get) else {
            return false;
        };
        if last == lock {
            return wait_until(until);
        }
    }
    let _ = lock;
    false
}

/// Whether the calling thread's last hand-off, not yet waited out, was of
/// the lock at `lock` (for the locks' tests).
#[cfg(all(test, not(loom)))]
pub(super) fn noted(lock: usize) -> bool {
    LAST_HAND_OFF.with(Cell::get).0 == lock
}

/// Forgets the cool-down and polls the clock until `until`; whether it
/// had not passed yet.
#[cfg(not(loom))]
#[cold]
#[inline(never)]
fn wait_until(until: u64) -> bool {
    let _ = LAST_HAND_OFF.try_with(|c| c.set((0, 0)));
    let clock = cycle_clock();
    if clock.now() >= until {
        return false;
    }
    while clock.now() < until {
        // A few hints between clock reads would overshoot by their cost;
        // one is enough here (the clock read is the cheaper part).
        spin_hint();
    }
    true
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_cooldown_is_half_a_block_within_its_bounds() {
        assert_eq!(cooldown_for(6_000.0), 3_000.0);
        assert_eq!(cooldown_for(100.0), MIN_COOLDOWN_NS);
        assert_eq!(cooldown_for(1e9), MAX_COOLDOWN_NS);
        assert_eq!(cooldown_for(f64::NAN), MIN_COOLDOWN_NS);
        let now = cooldown_ns();
        assert!((MIN_COOLDOWN_NS..=MAX_COOLDOWN_NS).contains(&now));
    }

    #[test]
    fn a_thread_that_handed_off_waits_before_it_queues_again_once() {
        let lock = 0x1000;
        // The clock starts before the note: a thread preempted between the
        // note and the wait spends part of the cool-down before `wait_out`,
        // which then waits only for the rest.
        let start = Instant::now();
        handed_off(lock);
        let waited = wait_out(lock);
        let elapsed = start.elapsed().as_nanos() as f64;
        // A slow machine may have spent the cool-down already (then it
        // does not wait); a lower bound only when it did.
        if waited {
            assert!(elapsed >= 0.5 * MIN_COOLDOWN_NS, "{elapsed}");
        }
        // Forgotten: the next lock of it does not wait.
        assert!(!wait_out(lock));
    }

    #[test]
    fn the_cooldown_holds_back_only_the_lock_handed_off() {
        handed_off(0x1000);
        assert!(!wait_out(0x2000));
        // Still remembered for its own lock.
        let start = Instant::now();
        handed_off(0x1000);
        let waited = wait_out(0x1000);
        let elapsed = start.elapsed().as_nanos() as f64;
        if waited {
            // It waited out the end it noted, at least most of the
            // cool-down from before the note (the clock reads differ).
            assert!(elapsed >= 0.5 * MIN_COOLDOWN_NS, "{elapsed}");
        }
    }

    #[test]
    fn a_wait_out_forgets_the_note() {
        handed_off(0x4000);
        assert!(noted(0x4000));
        let _ = wait_out(0x4000);
        assert!(!noted(0x4000));
    }

    #[test]
    fn another_thread_does_not_see_the_cooldown() {
        handed_off(0x3000);
        let other = std::thread::spawn(|| wait_out(0x3000)).join().unwrap();
        assert!(!other);
        let _ = wait_out(0x3000);
    }
}
