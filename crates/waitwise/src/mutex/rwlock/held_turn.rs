//! The hold of a readers' turn whose write unlock woke sleeping readers
//! (the lock's module doc, "A turn that woke sleepers").
//!
//! One word: the cycle-clock tick of the last write unlock that granted a
//! turn and woke sleepers, with its lowest bit set once a read unlock kept
//! that turn open ("used"); 0 after a grant that woke nobody. Every access
//! is `Relaxed`: the word is a hint that only decides *when* a reader
//! clears `READ_TURN` and how long a writer lets a free lock's turn stand,
//! never what the state word allows; a stale or lost store only ends a
//! turn earlier or later. Under loom the turn is never held (no clock):
//! the models explore the protocol, whose states a hold does not change
//! (`READ_TURN` with any number of readers is reachable without it).

// Under loom a turn is never held: the clock-based half is unused there.
#![cfg_attr(loom, allow(dead_code))]

#[cfg(not(loom))]
use super::TURN_HOLD_B;
#[cfg(not(loom))]
use waitwise_platform::clock::cycle_clock;
use waitwise_platform::shim::AtomicU64;
#[cfg(not(loom))]
use waitwise_platform::shim::Ordering;

/// The "used" mark in the word's lowest bit.
const USED: u64 = 1;

/// When the last turn that woke sleepers was granted (module docs).
#[derive(Debug)]
pub(super) struct HeldTurn(AtomicU64);

impl HeldTurn {
    crate::loom_const::const_unless_loom! {
        /// No turn held.
        pub(super) fn new() -> Self {
            Self(AtomicU64::new(0))
        }
    }

    /// A write unlock granted a readers' turn: it holds from now if the
    /// unlock woke sleepers (`woke`); a grant that woke nobody clears the
    /// word, so that its turn, unused, keeps a writer's full grace.
    #[inline]
    pub(super) fn granted(&self, woke: bool) {
        #[cfg(not(loom))]
        {
            // Relaxed: a hint (module docs).
            if woke {
                self.0.store(cycle_clock().now() & !USED, Ordering::Relaxed);
            } else if self.0.load(Ordering::Relaxed) != 0 {
                self.0.store(0, Ordering::Relaxed);
            }
        }
        #[cfg(loom)]
        let _ = woke;
    }

    /// A reader leaving during a turn: whether the turn stays open (it woke
    /// sleepers less than [`TURN_HOLD_B`] `B` ago), marking it used. The
    /// clock is read only while a turn that woke sleepers may be held.
    #[inline]
    pub(super) fn keeps_open(&self) -> bool {
        #[cfg(not(loom))]
        {
            // Relaxed: a hint (module docs).
            let at = self.0.load(Ordering::Relaxed);
            if at == 0 {
                return false;
            }
            let clock = cycle_clock();
            if !holds(at, clock.now(), clock.ns_to_ticks(hold_ns())) {
                return false;
            }
            if at & USED == 0 {
                self.0.store(at | USED, Ordering::Relaxed);
            }
            true
        }
        #[cfg(loom)]
        false
    }

    /// For a writer that finds the lock free in a turn: the tick at which
    /// its grace ends if readers used the turn and left it open (the end
    /// of the hold, which may have passed); `None` for a turn nobody has
    /// used, which keeps the writer's full grace.
    #[inline]
    pub(super) fn used_until(&self) -> Option<u64> {
        #[cfg(not(loom))]
        {
            // Relaxed: a hint (module docs).
            let at = self.0.load(Ordering::Relaxed);
            used_hold_end(at, cycle_clock().ns_to_ticks(hold_ns()))
        }
        #[cfg(loom)]
        None
    }
}

#[cfg(all(test, not(loom)))]
impl HeldTurn {
    /// The word as it stands (tests of the lock).
    pub(super) fn word(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Sets the word: a grant at tick `at`, not used yet (tests of the
    /// lock, which pick a hold that cannot end, or one long over).
    pub(super) fn set_granted_at(&self, at: u64) {
        self.0.store(at & !USED, Ordering::Relaxed);
    }
}

/// The hold in ns: [`TURN_HOLD_B`] times the process's `B`.
#[cfg(not(loom))]
#[inline]
fn hold_ns() -> u64 {
    (TURN_HOLD_B * crate::policy::block_ns()) as u64
}

/// Whether a turn granted at tick `at` (its "used" bit ignored) still
/// holds at tick `now`, for a hold of `hold` ticks.
#[inline]
fn holds(at: u64, now: u64, hold: u64) -> bool {
    now.saturating_sub(at & !USED) < hold
}

/// The end of the hold of a turn whose word is `at`, if readers used it.
#[inline]
fn used_hold_end(at: u64, hold: u64) -> Option<u64> {
    (at & USED != 0).then(|| (at & !USED).saturating_add(hold))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_turn_holds_for_its_hold_from_its_grant() {
        assert!(holds(1_000, 1_000, 50));
        assert!(holds(1_000, 1_049, 50));
        assert!(!holds(1_000, 1_050, 50));
        // The used mark does not move the grant.
        assert!(!holds(1_000 | USED, 1_050, 50));
        // A clock read before the grant's (another CPU's) still holds.
        assert!(holds(1_000, 900, 50));
    }

    #[test]
    fn only_a_used_turn_shortens_a_writers_grace() {
        assert_eq!(used_hold_end(1_000, 50), None);
        assert_eq!(used_hold_end(1_000 | USED, 50), Some(1_050));
        assert_eq!(used_hold_end(0, 50), None);
    }

    #[test]
    fn a_grant_that_woke_sleepers_holds_and_one_that_did_not_clears() {
        let turn = HeldTurn::new();
        assert!(!turn.keeps_open(), "no grant yet");
        turn.granted(true);
        assert_eq!(turn.used_until(), None, "not used yet");
        // Within the hold (at least MIN_MEASURED_BLOCK_NS, 1 µs; a test
        // preempted for longer sees it end, which it also accepts).
        if turn.keeps_open() {
            assert!(turn.used_until().is_some(), "a kept turn is used");
        }
        turn.granted(false);
        assert!(!turn.keeps_open());
        assert_eq!(turn.used_until(), None);
    }
}
