//! [`Job`]: a unit of work in a worker's deque, the injector or a mailbox:
//! two words of data and a function, with no allocation for a small
//! closure.
//!
//! A job is two words of data and the function that runs (or drops) what
//! they hold:
//!
//! - a closure of at most [`INLINE_WORDS`] words (and at most their
//!   alignment), stored in the data itself: most spawned and scoped
//!   closures with their bookkeeping (a closure that captures one word,
//!   beside the pool's own word for the task's state);
//! - a larger closure, boxed: the data holds the box's pointer;
//! - a [`JobRef`], a pointer into a submitter's stack frame and the
//!   function that runs it ([`ThreadPool::join`](super::ThreadPool::join)'s
//!   other half).
//!
//! Small jobs keep the deques small: a scope of many short tasks holds
//! them all at once in one worker's deque, whose buffer grows and shrinks
//! with it.
//!
//! # Passed in registers
//!
//! The data is one two-word integer ([`Data`]), not an array of words, so
//! that a job is a pair of scalars, which rustc passes and returns in
//! registers: a `join` builds its job and pushes it at once, and the job
//! reaches the deque's buffer as one word-sized store per word. An array
//! would make the job an aggregate, passed by reference and copied into
//! the buffer (crossbeam-deque's volatile write) with a 16-byte load that
//! spans two word-sized stores the caller has just made. A load that
//! needs two stores still in the store buffer is not forwarded from it:
//! it waits until both reach the cache (a store-to-load forwarding stall),
//! several nanoseconds on every `join` and every push from a worker, a
//! large part of an empty `join`'s cost (`pool_bench`'s join tree of empty
//! tasks measures it). On 64-bit targets the data's 16-byte alignment
//! makes a job four words long, the last one padding.

use std::mem::{align_of, size_of, ManuallyDrop, MaybeUninit};

/// Machine words a closure may take to travel inside its job. Two: a
/// spawned or scoped task's closure of one word beside the task's one
/// word of state.
pub(crate) const INLINE_WORDS: usize = 2;

/// The job's data: an integer of [`INLINE_WORDS`] words (module doc,
/// "Passed in registers").
#[cfg(target_pointer_width = "64")]
type Data = MaybeUninit<u128>;
/// The job's data: an integer of [`INLINE_WORDS`] words (module doc,
/// "Passed in registers").
#[cfg(target_pointer_width = "32")]
type Data = MaybeUninit<u64>;

const _: () = assert!(size_of::<Data>() == INLINE_WORDS * size_of::<usize>());

/// What the job's function is asked to do with its data.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    /// Move the closure out and call it.
    Run,
    /// Drop the closure without calling it.
    Drop,
}

/// A job whose data lives in its submitter's stack frame: a pointer and
/// the function that runs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobRef {
    pub(crate) ptr: *const (),
    pub(crate) exec: unsafe fn(*const ()),
}

/// A unit of work: a closure stored inline or boxed, or a [`JobRef`].
pub(crate) struct Job {
    data: Data,
    /// Runs or drops what `data` holds, as the type it was made from.
    call: unsafe fn(*mut Data, Action),
}

// SAFETY: a Job is only made from a `Send` closure (Job::erase) or a
// JobRef, whose contract (Job::stack) makes it safe to run elsewhere.
unsafe impl Send for Job {}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").finish_non_exhaustive()
    }
}

/// Runs or drops the `F` in `d`.
///
/// # Safety
///
/// `d` holds an `F` (Job::store), used once.
unsafe fn call<F: FnOnce()>(d: *mut Data, action: Action) {
    let f = d.cast::<F>();
    match action {
        // SAFETY: by the contract above.
        Action::Run => unsafe { f.read()() },
        // SAFETY: by the contract above.
        Action::Drop => unsafe { f.drop_in_place() },
    }
}

/// Runs the [`JobRef`] in `d`; dropping one does nothing (its frame waits
/// for it, and it is never dropped unrun: Job::stack).
///
/// # Safety
///
/// `d` holds a JobRef (Job::stack), used once.
unsafe fn call_stack(d: *mut Data, action: Action) {
    if action == Action::Run {
        // SAFETY: by the contract above and Job::stack's.
        unsafe {
            let r = d.cast::<JobRef>().read();
            (r.exec)(r.ptr)
        }
    }
}

impl Job {
    /// `f` as a job: stored inline when it fits [`INLINE_WORDS`] words
    /// (and their alignment), else boxed.
    pub(crate) fn new<F: FnOnce() + Send + 'static>(f: F) -> Self {
        // SAFETY: F is 'static: it borrows nothing.
        unsafe { Self::erase(f) }
    }

    /// Like [`Job::new`] for a closure that borrows.
    ///
    /// # Safety
    ///
    /// Everything `f` borrows outlives the job's run (or drop).
    pub(crate) unsafe fn erase<'a, F: FnOnce() + Send + 'a>(f: F) -> Self {
        if Self::fits::<F>() {
            // SAFETY: F fits (checked); the caller's contract covers the
            // borrows.
            unsafe { Self::store(f) }
        } else {
            // SAFETY: a box is one word; as above.
            unsafe { Self::store(Box::new(f)) }
        }
    }

    /// The stack job `r`.
    ///
    /// # Safety
    ///
    /// `r.exec(r.ptr)` may be called once from any thread while the job
    /// lives, and the job is run, never dropped unrun.
    pub(crate) unsafe fn stack(r: JobRef) -> Self {
        const { assert!(size_of::<JobRef>() <= size_of::<Data>()) };
        let mut data = Data::uninit();
        // SAFETY: `data` is large and aligned enough for a JobRef.
        unsafe { data.as_mut_ptr().cast::<JobRef>().write(r) };
        Job {
            data,
            call: call_stack,
        }
    }

    /// Whether an `F` fits the data inline.
    const fn fits<F>() -> bool {
        size_of::<F>() <= size_of::<Data>() && align_of::<F>() <= align_of::<Data>()
    }

    /// Stores `f` inline.
    ///
    /// # Safety
    ///
    /// `F` fits, and everything `f` borrows outlives the job.
    unsafe fn store<F: FnOnce()>(f: F) -> Self {
        debug_assert!(Self::fits::<F>());
        let mut data = Data::uninit();
        // SAFETY: `data` is large and aligned enough for an F (contract).
        unsafe { data.as_mut_ptr().cast::<F>().write(f) };
        Job {
            data,
            call: call::<F>,
        }
    }

    /// Whether this is the stack job `r`. A `false` for `r` itself is
    /// possible (function addresses may differ between codegen units) and
    /// harmless: the caller then runs it as any other job. A `true` for
    /// another job is not: no other job holds `r`'s pointer into a live
    /// frame and its function.
    pub(crate) fn is(&self, r: JobRef) -> bool {
        let call_stack: unsafe fn(*mut Data, Action) = call_stack;
        std::ptr::fn_addr_eq(self.call, call_stack) && {
            // SAFETY: a job whose function is `call_stack` was made by
            // `stack` and holds a JobRef (a copy is read; it stays there).
            let mine = unsafe { self.data.as_ptr().cast::<JobRef>().read() };
            std::ptr::eq(mine.ptr, r.ptr) && std::ptr::fn_addr_eq(mine.exec, r.exec)
        }
    }

    /// Runs the job.
    pub(crate) fn run(self) {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `data` holds what `call` was made for, used once here
        // (ManuallyDrop keeps Drop from using it again).
        unsafe { (this.call)(&mut this.data, Action::Run) }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: `data` holds what `call` was made for, not yet used
        // (`run` forgets the job).
        unsafe { (self.call)(&mut self.data, Action::Drop) }
    }
}

// A job is two words of data and a function, padded to the data's
// alignment (the deques' element).
const _: () = assert!(size_of::<Job>() <= 4 * size_of::<usize>());

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn small_and_large_closures_run_once_and_drop_once() {
        let token = Arc::new(AtomicUsize::new(0));
        let small = {
            let t = token.clone();
            Job::new(move || {
                t.fetch_add(1, Ordering::Relaxed);
            })
        };
        let pad = [7u64; 6];
        let large = {
            let t = token.clone();
            Job::new(move || {
                t.fetch_add(pad[5] as usize, Ordering::Relaxed);
            })
        };
        assert_eq!(Arc::strong_count(&token), 3);
        small.run();
        large.run();
        assert_eq!(token.load(Ordering::Relaxed), 8);
        assert_eq!(Arc::strong_count(&token), 1);
        let dropped = {
            let t = token.clone();
            Job::new(move || drop(t))
        };
        drop(dropped);
        assert_eq!(Arc::strong_count(&token), 1);
    }

    #[test]
    fn a_stack_job_is_recognised_and_runs() {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        unsafe fn exec(p: *const ()) {
            RUNS.fetch_add(p as usize, Ordering::Relaxed);
        }
        let x = 0u8;
        let r = JobRef {
            ptr: &x as *const u8 as *const (),
            exec,
        };
        let other = JobRef {
            ptr: std::ptr::without_provenance::<()>(3),
            exec,
        };
        // SAFETY: `exec` may run anywhere, once.
        let job = unsafe { Job::stack(r) };
        assert!(job.is(r));
        assert!(!job.is(other));
        assert!(!Job::new(|| ()).is(r));
        let r2 = JobRef {
            ptr: other.ptr,
            exec,
        };
        // SAFETY: as above.
        let job2 = unsafe { Job::stack(r2) };
        drop(job);
        job2.run();
        assert_eq!(RUNS.load(Ordering::Relaxed), 3);
    }
}
