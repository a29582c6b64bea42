//! What a contended wait needs and a program that never waits does not.
//!
//! Set up at load ([`at_load`], from the constructor, on the only thread)
//! is what may allocate or take the loader's lock, which nothing inside a
//! wait may do: the wait may be for the allocator's own lock (an
//! allocator's locks are pthread mutexes, which this object implements),
//! held by the thread itself or by one that waits for this set-up to
//! finish. That is the starting `B` (`WAITWISE_BLOCK_NS`, or the machine
//! profile's file: reading it allocates, but where no profile was ever
//! saved one `stat` without allocating finds that out) and where glibc
//! keeps a thread's cancellation state (a `dlsym`).
//!
//! Left to the first contended wait ([`prepare`]) is what allocates
//! nothing and calls nothing this object interposes, and costs every
//! process that never waits its page faults and system calls: the cycle
//! clock (a clock read and a process id); the CPU's features, a dozen
//! CPUID instructions, each a trap to the hypervisor on a virtual
//! machine; and the CPUs the process may run on, its affinity and its
//! cgroup's CPU quota (`/proc/self/cgroup`, which the kernel writes out
//! on each read, and the quota files under `/sys`), read with `open` and
//! `read` into buffers on the stack (about 3 KiB). The process's own mask
//! is remembered at load (`remember_process_cpus`): in a sandbox, the
//! waiting thread may not be allowed to ask for the main thread's.
//!
//! The initializers run code with landing pads (a `Once`'s reset guard),
//! and Rust's personality routine aborts an unwind that starts between
//! two call sites of such code, which a signal handler's `pthread_exit`
//! does if it interrupts one. [`prepare`] runs with every signal the
//! program can handle blocked (glibc keeps its own cancellation and set-id
//! signals open; asynchronous cancellation is not allowed in a wait
//! anyway), so no handler runs in it; the wait itself, where a handler may
//! end the thread, comes after. For the same reason it runs with
//! cancellation disabled: `open` is a cancellation point, and a
//! cancellation request that arrives after the wait's own cancellation
//! point and before the set-up reads the cgroup's files would otherwise be
//! acted on inside that `open`, a forced unwind through the initializers
//! that aborts the process (the semaphore waits of the `lost-wake`
//! cancellation test hit it about once in 30 runs). The request stays
//! pending and is acted on at the wait's sleep, which is a cancellation
//! point built for it.
//!
//! # Memory ordering
//!
//! `READY` is only a hint that spares later waits the call: every value
//! set up here lives behind its own once-initialized static, which orders
//! its own initialization, so its loads and its store are Relaxed.

use std::sync::atomic::{AtomicBool, Ordering};

static READY: AtomicBool = AtomicBool::new(false);

/// glibc's `PTHREAD_CANCEL_DISABLE` (`<pthread.h>`).
const PTHREAD_CANCEL_DISABLE: libc::c_int = 1;

extern "C-unwind" {
    /// Not in the `libc` crate for glibc targets. Not a cancellation
    /// point; `C-unwind` because re-enabling cancellation in a thread whose
    /// type is asynchronous acts on a pending request there.
    fn pthread_setcancelstate(state: libc::c_int, old: *mut libc::c_int) -> libc::c_int;
}

/// Signals raised by the thread's own instruction or system call, which
/// the set-up never blocks (see [`prepare_now`]).
const SYNCHRONOUS_SIGNALS: [libc::c_int; 6] = [
    libc::SIGSYS,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
];

/// Sets up what a contended wait reads and may not set up itself: from the
/// constructor, before any other thread exists.
pub fn at_load() {
    let _ = waitwise::policy::starting_block_cost();
    // The cancellation word's offset (a `dlsym`), read when a thread
    // leaves an asynchronous-cancellation window inside a wait.
    waitwise_platform::cancel::prepare();
}

/// Starts the cycle clock, detects the CPU's features and counts the CPUs
/// the process may run on, once per process. Call at the start of every
/// contended wait, before its policy and profile are read.
#[inline]
pub fn prepare() {
    // Relaxed: a hint (module doc).
    if !READY.load(Ordering::Relaxed) {
        prepare_now();
    }
}

#[cold]
fn prepare_now() {
    // SAFETY: sigset_t is plain data, filled by sigfillset before use;
    // `old` receives the mask pthread_sigmask replaces.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: both point to live sigset_t values; blocking signals in the
    // calling thread only defers their handlers until the mask is restored.
    //
    // The signals a fault or a system-call filter raises stay unblocked: the
    // kernel delivers them whatever the mask, and one delivered while
    // blocked runs its default action instead of the handler. A sandbox
    // that traps a system call made here (Chromium's renderers route file
    // opens through a SIGSYS handler) would kill the process.
    let blocked = unsafe {
        libc::sigfillset(&mut all);
        for sig in SYNCHRONOUS_SIGNALS {
            libc::sigdelset(&mut all, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old) == 0
    };
    let mut cancel_state = 0;
    // SAFETY: `cancel_state` receives the state this replaces; disabling
    // cancellation only defers a request to the next cancellation point.
    let cancel_disabled =
        unsafe { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mut cancel_state) } == 0;
    let _ = waitwise_platform::clock::cycle_clock();
    let _ = waitwise_platform::features::cpu();
    let _ = waitwise::policy::crowding::allowed_cpus();
    if cancel_disabled {
        let mut disabled = 0;
        // SAFETY: restores the state saved above (no wait is in an
        // asynchronous window here, so nothing is acted on).
        unsafe { pthread_setcancelstate(cancel_state, &mut disabled) };
    }
    if blocked {
        // SAFETY: restores the mask saved above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    }
    // Relaxed: a hint (module doc).
    READY.store(true, Ordering::Relaxed);
}
