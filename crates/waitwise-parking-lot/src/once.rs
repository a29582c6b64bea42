//! [`Once`]: parking_lot's one-time initialization, on a waitwise mutex
//! and a state byte.
//!
//! # State
//!
//! ```text
//!  NEW          no closure has run
//!  IN_PROGRESS  a closure runs (its thread holds `running`)
//!  POISONED     a closure panicked; `call_once` panics, `call_once_force`
//!               runs another
//!  DONE         a closure returned: nothing more runs
//! ```
//!
//! Transitions, all but the fast path's read under the mutex `running`:
//! `NEW | POISONED => IN_PROGRESS` before the closure, `IN_PROGRESS =>
//! DONE` after it returns, `IN_PROGRESS => POISONED` when it unwinds. A
//! caller that finds the state not `DONE` locks `running` and looks again,
//! so threads that arrive while a closure runs wait for it on the mutex
//! (polling, then sleeping, as any waitwise mutex waiter) and return when
//! it is `DONE`.
//!
//! # Memory ordering
//!
//! `DONE` is stored `Release` and read `Acquire` on the fast path, so a
//! caller that returns without the mutex sees what the closure wrote.
//! Every other access is under `running`, which orders it, and is
//! `Relaxed`; [`Once::state`] reads `Acquire`, so that a `Done` it
//! reports publishes the closure's writes as the fast path does.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use waitwise::mutex::RawTtasMutex;

/// No closure has run.
const NEW: u8 = 0;
/// A closure runs, its thread holding `running`.
const IN_PROGRESS: u8 = 1;
/// A closure panicked.
const POISONED: u8 = 2;
/// A closure returned.
const DONE: u8 = 3;

/// The state of a [`Once`], as the closure of
/// [`Once::call_once_force`] and [`Once::state`] see it.
#[derive(Copy, Clone, Eq, PartialEq, Debug)]
pub enum OnceState {
    /// No closure has run yet.
    New,
    /// A closure ran and panicked.
    Poisoned,
    /// A thread is running a closure.
    InProgress,
    /// A closure returned.
    Done,
}

impl OnceState {
    /// Whether a closure panicked (and none has returned since).
    #[inline]
    pub fn poisoned(self) -> bool {
        matches!(self, OnceState::Poisoned)
    }

    /// Whether a closure returned.
    #[inline]
    pub fn done(self) -> bool {
        matches!(self, OnceState::Done)
    }
}

/// Runs one closure once, however many threads call it: parking_lot's
/// `Once`.
///
/// # Examples
/// ```
/// use parking_lot::Once;
///
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// static INIT: Once = Once::new();
/// static RUNS: AtomicU32 = AtomicU32::new(0);
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| INIT.call_once(|| drop(RUNS.fetch_add(1, Ordering::Relaxed))));
///     }
/// });
/// assert_eq!(RUNS.load(Ordering::Relaxed), 1);
/// assert!(INIT.state().done());
/// ```
pub struct Once {
    /// `NEW`, `IN_PROGRESS`, `POISONED` or `DONE` (module doc).
    state: AtomicU8,
    /// Held by the thread that runs a closure; the others wait on it.
    /// A raw lock (no data), so that `Once` is `RefUnwindSafe` as
    /// parking_lot's.
    running: RawTtasMutex,
}

impl Once {
    /// A `Once` whose closure has not run.
    #[inline]
    pub const fn new() -> Once {
        Once {
            state: AtomicU8::new(NEW),
            running: RawTtasMutex::new(),
        }
    }

    /// The state now (a snapshot).
    #[inline]
    pub fn state(&self) -> OnceState {
        // Acquire: a `Done` read here publishes the closure's writes.
        match self.state.load(Ordering::Acquire) {
            NEW => OnceState::New,
            IN_PROGRESS => OnceState::InProgress,
            POISONED => OnceState::Poisoned,
            DONE => OnceState::Done,
            s => unreachable!("Once state {s}"),
        }
    }

    /// Runs `f` if no closure has returned yet, else nothing; returns when
    /// a closure (this one or another thread's) has returned.
    ///
    /// # Panics
    ///
    /// If a closure panicked before (the `Once` is poisoned), and when
    /// `f` panics (which poisons it).
    #[inline]
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        // Acquire: pairs with the Release store of DONE.
        if self.state.load(Ordering::Acquire) == DONE {
            return;
        }
        let mut f = Some(f);
        self.call_once_slow(false, &mut |_| (f.take().expect("called once"))());
    }

    /// As [`Once::call_once`], but runs `f` also when a closure panicked
    /// before, telling it so through its [`OnceState`].
    #[inline]
    pub fn call_once_force<F: FnOnce(OnceState)>(&self, f: F) {
        // Acquire: pairs with the Release store of DONE.
        if self.state.load(Ordering::Acquire) == DONE {
            return;
        }
        let mut f = Some(f);
        self.call_once_slow(true, &mut |state| (f.take().expect("called once"))(state));
    }

    #[cold]
    fn call_once_slow(&self, ignore_poison: bool, f: &mut dyn FnMut(OnceState)) {
        self.running.lock();
        /// Unlocks `running` when the slow path returns or unwinds.
        struct Unlock<'a>(&'a RawTtasMutex);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                // SAFETY: `call_once_slow` locked it before making this
                // guard, and only this guard unlocks it.
                unsafe { self.0.unlock() }
            }
        }
        let _running = Unlock(&self.running);
        // Relaxed: under `running` (module doc, "Memory ordering").
        let state = match self.state.load(Ordering::Relaxed) {
            DONE => return,
            POISONED if !ignore_poison => panic!("Once instance has previously been poisoned"),
            POISONED => OnceState::Poisoned,
            NEW => OnceState::New,
            s => unreachable!("Once state {s} under its mutex"),
        };
        // NEW | POISONED => IN_PROGRESS. Relaxed: under `running`.
        self.state.store(IN_PROGRESS, Ordering::Relaxed);
        /// Poisons the `Once` if the closure unwinds.
        struct PoisonOnUnwind<'a>(&'a AtomicU8);
        impl Drop for PoisonOnUnwind<'_> {
            fn drop(&mut self) {
                // IN_PROGRESS => POISONED. Relaxed: under `running`, which
                // unwinding releases after this.
                self.0.store(POISONED, Ordering::Relaxed);
            }
        }
        let poison = PoisonOnUnwind(&self.state);
        f(state);
        std::mem::forget(poison);
        // IN_PROGRESS => DONE. Release: publishes the closure's writes to
        // the fast path.
        self.state.store(DONE, Ordering::Release);
    }
}

impl Default for Once {
    #[inline]
    fn default() -> Once {
        Once::new()
    }
}

impl fmt::Debug for Once {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Once")
            .field("state", &self.state())
            .finish()
    }
}
