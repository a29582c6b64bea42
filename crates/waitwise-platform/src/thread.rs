//! Per-thread facts from the kernel: the calling thread's CPU time and the CPU
//! it runs on.

use std::time::Duration;

/// CPU time consumed by the calling thread so far (`CLOCK_THREAD_CPUTIME_ID`).
///
/// Used to measure what a waiting strategy burns: a spinning waiter's CPU time
/// grows with wall time, a blocked one's does not.
pub fn thread_cpu_time() -> Duration {
    clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time consumed by the whole process so far (`CLOCK_PROCESS_CPUTIME_ID`).
pub fn process_cpu_time() -> Duration {
    clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn clock_gettime(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock ids used here are
    // always supported on Linux, so the call cannot fail except with EFAULT,
    // which a stack reference rules out.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    debug_assert_eq!(rc, 0, "clock_gettime({clock}) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The CPU the calling thread is running on right now (`sched_getcpu`), or
/// `None` if the kernel cannot say.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only reads kernel state.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// `sched_yield()`: the real system call, even under loom (measurement code
/// uses it to time a yield).
///
/// Declared `C-unwind`: a signal handler that runs during the call may end
/// the thread with a forced unwind (`pthread_exit`, asynchronous
/// cancellation), which must pass through the waiter's frames (see
/// [`crate::cancel`]).
#[inline]
pub fn sched_yield() {
    // SAFETY: sched_yield has no preconditions; on Linux it always succeeds.
    unsafe {
        sys::sched_yield();
    }
}

/// C functions a waiting thread may be unwound out of.
mod sys {
    extern "C-unwind" {
        pub fn sched_yield() -> std::ffi::c_int;
    }
}
