//! [`ForkSafeOnce`]: a lazily initialized value that a `fork()` at any
//! moment cannot leave half done.
//!
//! `std::sync::OnceLock` parks the threads that arrive while another one
//! runs the initializer, and wakes them when it finishes. A process that
//! forks meanwhile gives its child a copy of the "running" state but not
//! the thread that runs the initializer, so the child's first use waits
//! forever (seen with the cycle clock's 10 ms calibration: about one child
//! in four hung when the parent forked during its first timed wait).
//!
//! Here the "running" state names the process whose thread runs the
//! initializer (its pid, in the same 64-bit word). A thread that finds it
//! running in *another* process is in a forked child: nobody will finish
//! it, so the thread takes the initialization over and runs it itself.
//! Threads of the same process wait for the running one by yielding (the
//! initializers behind this type take microseconds to milliseconds, once
//! per process).
//!
//! # Memory ordering
//!
//! The initializer's writes are published by the Release store of `DONE`
//! and acquired by every Acquire load that sees it. Claiming the
//! initialization is an Acquire CAS (it takes over whatever a forked
//! parent left; there is nothing to acquire from another thread of this
//! process, since a claim succeeds only from `EMPTY` or a foreign pid).

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

/// No value, nobody initializing.
const EMPTY: u64 = 0;
/// The value is written and never changes again.
const DONE: u64 = 1;
/// A thread of the process whose pid is in the high half runs the
/// initializer (the low half is `RUNNING`).
const RUNNING: u64 = 2;

/// A value computed on first use, safe across `fork()` at any instant.
///
/// # Examples
///
/// ```
/// use waitwise_platform::once::ForkSafeOnce;
/// static ANSWER: ForkSafeOnce<u32> = ForkSafeOnce::new();
/// assert_eq!(*ANSWER.get_or_init(|| 42), 42);
/// assert_eq!(*ANSWER.get_or_init(|| 7), 42);
/// ```
pub struct ForkSafeOnce<T> {
    /// `EMPTY`, `DONE`, or `RUNNING | pid << 32`.
    state: AtomicU64,
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: the value is written once, by the one thread that claimed the
// initialization, before `DONE` is published; afterwards it is only read
// (shared references), so sharing needs `T: Sync`, and a value created on
// one thread and used on others needs `T: Send`.
unsafe impl<T: Send + Sync> Sync for ForkSafeOnce<T> {}

// As `std::sync::OnceLock`: an initializer that unwinds leaves the cell
// empty (the next caller runs its own), so a panic never exposes a value
// half written; a written value is reached only through `&T`.
impl<T: RefUnwindSafe + UnwindSafe> RefUnwindSafe for ForkSafeOnce<T> {}

impl<T> Default for ForkSafeOnce<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> ForkSafeOnce<T> {
    /// An empty cell.
    pub const fn new() -> Self {
        Self {
            state: AtomicU64::new(EMPTY),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// The value, computing it with `init` if no thread has yet.
    #[inline]
    pub fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        // Acquire: pairs with the Release store of DONE (module doc).
        if self.state.load(Ordering::Acquire) == DONE {
            // SAFETY: DONE is stored only after the value was written.
            return unsafe { (*self.value.get()).assume_init_ref() };
        }
        self.init_slow(init)
    }

    /// The value, if it has been computed.
    #[inline]
    pub fn get(&self) -> Option<&T> {
        // Acquire: as in `get_or_init`.
        (self.state.load(Ordering::Acquire) == DONE)
            // SAFETY: as in `get_or_init`.
            .then(|| unsafe { (*self.value.get()).assume_init_ref() })
    }

    #[cold]
    #[inline(never)]
    fn init_slow(&self, init: impl FnOnce() -> T) -> &T {
        let me = u64::from(std::process::id());
        let claim = RUNNING | (me << 32);
        let mut init = Some(init);
        loop {
            // Acquire: as in `get_or_init`.
            let s = self.state.load(Ordering::Acquire);
            if s == DONE {
                // SAFETY: as in `get_or_init`.
                return unsafe { (*self.value.get()).assume_init_ref() };
            }
            let inherited = s != EMPTY && (s >> 32) != me;
            if s == EMPTY || inherited {
                // EMPTY (or RUNNING in a parent process) => RUNNING here.
                // Acquire / Relaxed failure: module doc.
                if self
                    .state
                    .compare_exchange(s, claim, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                // Back to EMPTY if the initializer unwinds, so that the
                // next caller tries again instead of waiting forever.
                struct Reset<'a>(&'a AtomicU64);
                impl Drop for Reset<'_> {
                    fn drop(&mut self) {
                        // Release: nothing was written that others read.
                        self.0.store(EMPTY, Ordering::Release);
                    }
                }
                let reset = Reset(&self.state);
                let f = init.take().expect("claimed once per call");
                let v = f();
                // SAFETY: we hold the claim: no other thread reads or
                // writes the value until DONE is published.
                unsafe { (*self.value.get()).write(v) };
                std::mem::forget(reset);
                // RUNNING => DONE. Release: publishes the value.
                self.state.store(DONE, Ordering::Release);
                // SAFETY: just written.
                return unsafe { (*self.value.get()).assume_init_ref() };
            }
            // Another thread of this process is initializing.
            crate::thread::sched_yield();
        }
    }
}

impl<T> Drop for ForkSafeOnce<T> {
    fn drop(&mut self) {
        if *self.state.get_mut() == DONE {
            // SAFETY: DONE means the value was written; `&mut self` means
            // no reader remains.
            unsafe { self.value.get_mut().assume_init_drop() };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn initializes_once_under_contention() {
        let cell = Arc::new(ForkSafeOnce::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (cell, runs) = (cell.clone(), runs.clone());
                std::thread::spawn(move || {
                    *cell.get_or_init(|| {
                        runs.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        7u32
                    })
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), 7);
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_claim_left_by_another_process_is_taken_over() {
        // What a forked child finds when its parent forked mid-initialization:
        // RUNNING with the parent's pid, and no thread here to finish it.
        let cell = ForkSafeOnce::<u32>::new();
        let parent = u64::from(std::process::id()).wrapping_add(1) & 0xffff_ffff;
        cell.state.store(RUNNING | (parent << 32), Ordering::SeqCst);
        assert_eq!(*cell.get_or_init(|| 5), 5);
        assert_eq!(cell.get(), Some(&5));
    }

    #[test]
    fn a_panicking_initializer_leaves_it_empty() {
        let cell = ForkSafeOnce::<u32>::new();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            cell.get_or_init(|| panic!("initializer failed"));
        }));
        assert!(r.is_err());
        assert_eq!(cell.get(), None);
        assert_eq!(*cell.get_or_init(|| 3), 3);
    }

    #[test]
    fn is_unwind_safe_like_once_lock() {
        fn ref_unwind_safe<T: RefUnwindSafe + UnwindSafe>() {}
        ref_unwind_safe::<ForkSafeOnce<u32>>();
    }

    #[test]
    fn drops_its_value() {
        let cell = ForkSafeOnce::new();
        let v = Arc::new(());
        cell.get_or_init(|| v.clone());
        assert_eq!(Arc::strong_count(&v), 2);
        drop(cell);
        assert_eq!(Arc::strong_count(&v), 1);
    }
}
