//! Thread ids for the barriers whose parties have places:
//! [`TreeBarrier`](super::TreeBarrier),
//! [`DisseminationBarrier`](super::DisseminationBarrier) and
//! [`TopologyBarrier`](super::TopologyBarrier).
//!
//! A thread waits through a *handle* that owns one id in `0..parties`. Ids
//! are claimed, not passed to `wait`, so two threads cannot wait under the
//! same id by mistake: [`Claims::claim`] refuses an id whose handle is alive,
//! and dropping the handle gives the id back. Handles borrow their barrier,
//! so the barrier outlives every waiter.
//!
//! # Memory ordering
//!
//! Claiming is an `Acquire` swap and giving back a `Release` store: a thread
//! that claims an id sees what the previous holder of the id wrote (the
//! dissemination barrier keeps an episode counter per id). A swap and not a
//! CAS because the flag has only two values: swapping in `true` both takes a
//! free id and leaves a taken one taken.

use waitwise_platform::shim::{AtomicBool, Ordering};
use waitwise_platform::topology::MAX_CPU;

/// Most parties a handle-based barrier takes; larger requests are clamped
/// (and ids beyond it are [`HandleError::OutOfRange`]). One per CPU number
/// the platform layer accepts: a program with more threads than any
/// machine has CPUs does not need a scalable barrier, and the per-id state
/// (up to 17 cache lines per id for the dissemination barrier) must stay
/// allocatable.
pub const MAX_HANDLE_PARTIES: usize = MAX_CPU + 1;

/// Why a barrier handle could not be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HandleError {
    /// The id is not below the barrier's number of parties.
    #[error("thread id {id} is out of range: the barrier has {parties} parties")]
    OutOfRange {
        /// The id asked for.
        id: usize,
        /// The barrier's number of parties.
        parties: usize,
    },
    /// Another live handle holds the id.
    #[error("thread id {id} is already held by a live handle")]
    InUse {
        /// The id asked for.
        id: usize,
    },
}

/// One flag per id: whether a live handle holds it.
#[derive(Debug)]
pub(crate) struct Claims {
    taken: Box<[AtomicBool]>,
}

impl Claims {
    /// `parties` free ids.
    pub(crate) fn new(parties: usize) -> Self {
        Self {
            taken: (0..parties).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    /// Takes `id`.
    pub(crate) fn claim(&self, id: usize) -> Result<(), HandleError> {
        let parties = self.taken.len();
        let flag = self
            .taken
            .get(id)
            .ok_or(HandleError::OutOfRange { id, parties })?;
        // free => taken (Acquire: see the previous holder's writes).
        if flag.swap(true, Ordering::Acquire) {
            return Err(HandleError::InUse { id });
        }
        Ok(())
    }

    /// Takes every id, or none if one is in use.
    pub(crate) fn claim_all(&self) -> Result<(), HandleError> {
        for id in 0..self.taken.len() {
            if let Err(e) = self.claim(id) {
                (0..id).for_each(|held| self.release(held));
                return Err(e);
            }
        }
        Ok(())
    }

    /// Gives `id` back (only its holder calls this).
    pub(crate) fn release(&self, id: usize) {
        // taken => free (Release: the next holder sees this holder's writes).
        self.taken[id].store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn claims_are_exclusive_and_returned() {
        let c = Claims::new(2);
        assert_eq!(c.claim(0), Ok(()));
        assert_eq!(c.claim(0), Err(HandleError::InUse { id: 0 }));
        assert_eq!(
            c.claim(2),
            Err(HandleError::OutOfRange { id: 2, parties: 2 })
        );
        assert_eq!(c.claim_all(), Err(HandleError::InUse { id: 0 }));
        assert_eq!(c.claim(1), Ok(()), "claim_all gave back what it took");
        c.release(0);
        c.release(1);
        assert_eq!(c.claim_all(), Ok(()));
    }
}
