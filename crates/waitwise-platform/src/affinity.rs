//! Pinning the calling thread to CPUs (`sched_setaffinity(2)`).
//!
//! Every function here acts on the **calling thread** only (pid 0 in the
//! syscalls), never on the process, except [`process_cpus`] and
//! [`process_cpu_count`], which read the main thread's mask. Pinning
//! narrows that thread's allowed set, and [`allowed_cpus`] reports the
//! *current* mask, so a thread that wants to move freely again must
//! capture the mask before pinning and hand it back to
//! [`set_current_thread_affinity`]:
//!
//! ```
//! use waitwise_platform::affinity::{allowed_cpus, pin_current_thread, set_current_thread_affinity};
//!
//! std::thread::spawn(|| {
//!     let before = allowed_cpus().unwrap();
//!     pin_current_thread(before[0]).unwrap();
//!     assert_eq!(allowed_cpus().unwrap(), [before[0]]);
//!     set_current_thread_affinity(&before).unwrap();
//!     assert_eq!(allowed_cpus().unwrap(), before);
//! })
//! .join()
//! .unwrap();
//! ```
//!
//! Masks are fixed-size `cpu_set_t`s, so CPUs numbered [`CPU_SETSIZE`] or
//! higher cannot be named (and on a kernel configured for more CPUs than
//! that, [`allowed_cpus`] fails with `EINVAL`).
//!
//! On targets other than Linux every call returns [`AffinityError::Unsupported`].

use std::io;

/// One more than the largest CPU number a mask can hold (`libc::CPU_SETSIZE`).
#[cfg(target_os = "linux")]
pub const CPU_SETSIZE: usize = libc::CPU_SETSIZE as usize;
/// One more than the largest CPU number a mask can hold (no masks here).
#[cfg(not(target_os = "linux"))]
pub const CPU_SETSIZE: usize = 0;

/// Reading or changing the calling thread's affinity failed.
#[derive(Debug, thiserror::Error)]
pub enum AffinityError {
    /// The CPU number does not fit in a `cpu_set_t`.
    #[error("CPU {cpu} is out of range: affinity masks hold CPUs 0..{CPU_SETSIZE}")]
    OutOfRange {
        /// The requested CPU.
        cpu: usize,
    },
    /// The CPU is not in the calling thread's current mask.
    #[error("CPU {cpu} is not in this thread's allowed CPUs {allowed:?}")]
    NotAllowed {
        /// The requested CPU.
        cpu: usize,
        /// The thread's allowed CPUs when the request was made.
        allowed: Vec<usize>,
    },
    /// An empty CPU list was given to [`set_current_thread_affinity`].
    #[error("cannot restrict a thread to an empty set of CPUs")]
    Empty,
    /// `sched_getaffinity` failed.
    #[error("sched_getaffinity failed: {source}")]
    Get {
        /// The OS error.
        source: io::Error,
    },
    /// `sched_setaffinity` failed for this mask.
    #[error("sched_setaffinity to CPUs {cpus:?} failed: {source}")]
    Os {
        /// The CPUs asked for.
        cpus: Vec<usize>,
        /// The OS error.
        source: io::Error,
    },
    /// This target has no thread affinity.
    #[error("thread affinity is not supported on this target")]
    Unsupported,
}

/// The CPUs the calling thread may run on, ascending.
///
/// This is the thread's *current* mask: after [`pin_current_thread`] it is
/// just the pinned CPU.
pub fn allowed_cpus() -> Result<Vec<usize>, AffinityError> {
    imp::allowed_cpus()
}

/// The CPUs of the process's main thread (`sched_getaffinity` on the
/// process id): the process's own set, which a worker thread that pinned
/// itself no longer shows in [`allowed_cpus`]. Fails where the main thread
/// has exited or the target has no affinity.
pub fn process_cpus() -> Result<Vec<usize>, AffinityError> {
    imp::process_cpus()
}

/// Keeps the calling thread's mask as the process's, for [`process_cpus`]
/// and [`process_cpus_count`] to answer from without asking the kernel
/// for the main thread's mask by its id. Call it from the main thread
/// while it is the only one (an `LD_PRELOAD` library's constructor):
/// the mask is then the process's, as it was at that moment. Later
/// changes of the main thread's mask are not seen.
///
/// Why: a sandbox may forbid `sched_getaffinity` on any thread but the
/// caller (Chromium's seccomp policy kills a renderer that asks for its
/// main thread's mask from another thread), and a waiting library asks
/// from whichever thread waits first.
pub fn remember_process_cpus() {
    imp::remember_process_cpus()
}

/// How many CPUs the process's main thread may run on: the length of
/// [`process_cpus`], counted without allocating (for paths that must hold
/// no value with a destructor). `None` where [`process_cpus`] fails.
pub fn process_cpus_count() -> Option<usize> {
    imp::process_cpus_count()
}

/// How many CPUs the process may run on, for decisions that hold for the
/// whole process (whether a group of threads outnumbers the CPUs): what
/// `std::thread::available_parallelism` answers (the calling thread's
/// mask, at most the cgroup's CPU quota, [`crate::cgroup_quota`]), unless
/// the calling thread has been narrowed below the main thread's mask
/// ([`process_cpus`]: a pinned worker asking first). Then the main
/// thread's CPUs, or the quota where it is below even the caller's mask.
/// A quota between the two masks is not seen there. At least 1.
///
/// On Linux it allocates nothing on any path and calls no pthread
/// function, so that a wait may call it (the wait may be for the
/// allocator's own lock); `available_parallelism` allocates.
pub fn process_cpu_count() -> usize {
    imp::process_cpu_count()
}

/// Restrict the calling thread to `cpu`.
///
/// Fails without changing anything if `cpu` is not below [`CPU_SETSIZE`]
/// ([`AffinityError::OutOfRange`]) or not among [`allowed_cpus`]
/// ([`AffinityError::NotAllowed`]: a cpuset or an earlier pin excludes it),
/// and with [`AffinityError::Os`] if the kernel refuses.
pub fn pin_current_thread(cpu: usize) -> Result<(), AffinityError> {
    if cpu >= CPU_SETSIZE {
        return Err(AffinityError::OutOfRange { cpu });
    }
    let allowed = allowed_cpus()?;
    if allowed.binary_search(&cpu).is_err() {
        return Err(AffinityError::NotAllowed { cpu, allowed });
    }
    imp::set_affinity(&[cpu])
}

/// Restrict the calling thread to `cpus` (in any order; duplicates are
/// fine), for example to restore a mask captured with [`allowed_cpus`].
///
/// Unlike [`pin_current_thread`] this does not check against the current
/// mask, which may be narrower than the one being restored; the kernel
/// checks against the cpuset instead ([`AffinityError::Os`] with `EINVAL`
/// if none of `cpus` is usable).
pub fn set_current_thread_affinity(cpus: &[usize]) -> Result<(), AffinityError> {
    if let Some(&cpu) = cpus.iter().find(|&&c| c >= CPU_SETSIZE) {
        return Err(AffinityError::OutOfRange { cpu });
    }
    if cpus.is_empty() {
        return Err(AffinityError::Empty);
    }
    imp::set_affinity(cpus)
}

/// The CPU the calling thread is running on right now (`sched_getcpu(3)`);
/// `None` where unknown. Stale as soon as it returns unless the thread is
/// pinned.
pub fn current_cpu() -> Option<usize> {
    imp::current_cpu()
}

#[cfg(target_os = "linux")]
mod imp {
    use super::AffinityError;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::{io, mem};

    pub(super) fn allowed_cpus() -> Result<Vec<usize>, AffinityError> {
        cpus_of(0)
    }

    /// `cpu_set_t` in 64-bit words.
    const MASK_WORDS: usize = mem::size_of::<libc::cpu_set_t>() / 8;
    const _: () = assert!(mem::size_of::<libc::cpu_set_t>().is_multiple_of(8));

    /// The mask [`remember_process_cpus`] kept, word by word; meaningful
    /// once [`REMEMBERED`] is set. Relaxed: published by `REMEMBERED`.
    static REMEMBERED_MASK: [AtomicU64; MASK_WORDS] = [const { AtomicU64::new(0) }; MASK_WORDS];
    /// Whether [`REMEMBERED_MASK`] holds the process's mask. Release when
    /// set, Acquire when read: the words are written before.
    static REMEMBERED: AtomicBool = AtomicBool::new(false);

    pub(super) fn remember_process_cpus() {
        let Ok(set) = mask_of(0) else { return };
        // SAFETY: `cpu_set_t` is a plain bit array of MASK_WORDS words.
        let words: [u64; MASK_WORDS] = unsafe { mem::transmute_copy(&set) };
        for (slot, word) in REMEMBERED_MASK.iter().zip(words) {
            slot.store(word, Ordering::Relaxed);
        }
        REMEMBERED.store(true, Ordering::Release);
    }

    /// The process's mask: the remembered one, else the main thread's
    /// (`sched_getaffinity` on the process id).
    fn process_mask() -> Result<libc::cpu_set_t, AffinityError> {
        process_mask_raw().ok_or_else(get_error)
    }

    /// [`process_mask`] without its error: `None`, with `errno` set,
    /// where the kernel refuses. Allocates nothing.
    fn process_mask_raw() -> Option<libc::cpu_set_t> {
        if REMEMBERED.load(Ordering::Acquire) {
            let words: [u64; MASK_WORDS] =
                std::array::from_fn(|i| REMEMBERED_MASK[i].load(Ordering::Relaxed));
            // SAFETY: any bit pattern is a valid `cpu_set_t`.
            return Some(unsafe { mem::transmute_copy(&words) });
        }
        // SAFETY: `getpid` takes no arguments and cannot fail.
        mask_of_raw(unsafe { libc::getpid() })
    }

    pub(super) fn process_cpus() -> Result<Vec<usize>, AffinityError> {
        let set = process_mask()?;
        Ok((0..super::CPU_SETSIZE)
            // SAFETY: `cpu < CPU_SETSIZE`, so CPU_ISSET stays inside `set`.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect())
    }

    pub(super) fn process_cpus_count() -> Option<usize> {
        process_mask_raw().map(|set| count(&set))
    }

    /// How many CPUs `set` holds.
    fn count(set: &libc::cpu_set_t) -> usize {
        // SAFETY: CPU_COUNT reads only `set`, a valid `cpu_set_t`.
        let n = unsafe { libc::CPU_COUNT(set) };
        usize::try_from(n).unwrap_or(0)
    }

    pub(super) fn process_cpu_count() -> usize {
        let quota = crate::cgroup_quota::cpu_limit().unwrap_or(usize::MAX);
        let thread = mask_of_raw(0).map(|set| count(&set));
        // As `available_parallelism`: the calling thread's mask, else the
        // CPUs online (a mask of no CPU is a kernel's bug), at most the quota.
        let here = match thread.filter(|&n| n > 0) {
            Some(n) => n.min(quota),
            None => {
                // SAFETY: `sysconf` reads a system value; no memory of ours.
                let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
                usize::try_from(online).map_or(1, |n| n.min(quota)).max(1)
            }
        };
        let (Some(thread), Some(main)) = (thread, process_mask_raw().map(|set| count(&set))) else {
            return here;
        };
        if thread >= main {
            return here;
        }
        if here < thread {
            here
        } else {
            main.max(1)
        }
    }

    /// The mask of thread `tid` (0: the calling thread; the process id:
    /// the main thread).
    fn cpus_of(tid: libc::pid_t) -> Result<Vec<usize>, AffinityError> {
        let set = mask_of(tid)?;
        Ok((0..super::CPU_SETSIZE)
            // SAFETY: `cpu < CPU_SETSIZE`, so CPU_ISSET stays inside `set`.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect())
    }

    /// The affinity mask of thread `tid` (as [`cpus_of`]), without
    /// allocating on success.
    fn mask_of(tid: libc::pid_t) -> Result<libc::cpu_set_t, AffinityError> {
        mask_of_raw(tid).ok_or_else(get_error)
    }

    /// [`mask_of`] without its error: `None`, with `errno` set, where the
    /// kernel refuses. Allocates nothing.
    fn mask_of_raw(tid: libc::pid_t) -> Option<libc::cpu_set_t> {
        // SAFETY: `cpu_set_t` is a plain bit array; all-zero is a valid value.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        // SAFETY: `set` is a live, writable `cpu_set_t` and we pass its exact
        // size; a `tid` that names no thread makes the call fail, not write.
        let rc = unsafe { libc::sched_getaffinity(tid, mem::size_of_val(&set), &mut set) };
        (rc == 0).then_some(set)
    }

    /// The error of a `sched_getaffinity` that just failed (from `errno`).
    fn get_error() -> AffinityError {
        AffinityError::Get {
            source: io::Error::last_os_error(),
        }
    }

    /// Set the calling thread's mask to `cpus`; the caller has checked that
    /// every CPU is below `CPU_SETSIZE`.
    pub(super) fn set_affinity(cpus: &[usize]) -> Result<(), AffinityError> {
        // SAFETY: as in `allowed_cpus`.
        let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
        for &cpu in cpus {
            debug_assert!(cpu < super::CPU_SETSIZE);
            // SAFETY: `cpu < CPU_SETSIZE` (checked by every caller), so the
            // bit lies inside `set`.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        // SAFETY: `set` is a valid, initialised `cpu_set_t` of the size we
        // pass; pid 0 is the calling thread.
        let rc = unsafe { libc::sched_setaffinity(0, mem::size_of_val(&set), &set) };
        if rc != 0 {
            // Read errno before allocating.
            let source = io::Error::last_os_error();
            let mut cpus = cpus.to_vec();
            cpus.sort_unstable();
            cpus.dedup();
            return Err(AffinityError::Os { cpus, source });
        }
        Ok(())
    }

    pub(super) fn current_cpu() -> Option<usize> {
        // SAFETY: `sched_getcpu` takes no arguments and touches no memory of ours.
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok()
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::AffinityError;

    pub(super) fn allowed_cpus() -> Result<Vec<usize>, AffinityError> {
        Err(AffinityError::Unsupported)
    }

    pub(super) fn process_cpus() -> Result<Vec<usize>, AffinityError> {
        Err(AffinityError::Unsupported)
    }

    pub(super) fn process_cpus_count() -> Option<usize> {
        None
    }

    pub(super) fn process_cpu_count() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    pub(super) fn remember_process_cpus() {}

    pub(super) fn set_affinity(_cpus: &[usize]) -> Result<(), AffinityError> {
        Err(AffinityError::Unsupported)
    }

    pub(super) fn current_cpu() -> Option<usize> {
        None
    }
}
