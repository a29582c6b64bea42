//! The calling thread's id as glibc records it: the `tid` field of the
//! thread's descriptor (`struct pthread`), which glibc stores in a mutex's
//! `__owner` and a rwlock's `__cur_writer`, and which this library stores
//! there too.
//!
//! That field is usually the kernel's id (`gettid`), but not always: a
//! process made by a raw `clone` system call (not glibc's `fork`) keeps
//! its parent's value until someone corrects it. Programs read the field
//! back through a lock. Chromium's zygote clones each renderer and utility
//! process into a new PID namespace, locks a recursive mutex in the child,
//! compares `__owner` with `gettid` and, when they differ, corrects
//! glibc's field. Were `gettid` stored there instead, the comparison would
//! pass and glibc's field stay stale: glibc then asks the kernel about that
//! stale id (`pthread_getschedparam`, from Abseil's mutex; `pthread_getattr_np`),
//! and Chromium's sandbox kills the process for a system call about
//! another thread.
//!
//! So [`current`] reads glibc's own field: one load from the descriptor,
//! no system call and no cached copy to go stale. The field's offset is
//! glibc's internal layout, which its ABI does not promise; [`check_layout`]
//! (at load) compares it with what glibc itself stores in a recursive
//! mutex it locks, and if they differ, every call asks glibc that way
//! instead (two uncontended atomic operations).

use crate::mutex_layout::{words, KIND, KIND_RECURSIVE, OWNER};
use crate::real::{self, forward};
use libc::{c_int, pthread_mutex_t};
use std::sync::atomic::{AtomicBool, Ordering};

/// Offset of `tid` in glibc's `struct pthread`: after the thread control
/// block's header (`tcbhead_t`, 704 bytes on x86-64; at most 24 pointers
/// elsewhere, padded to that) and the two-pointer `list` link.
#[cfg(target_arch = "x86_64")]
const DESCRIPTOR_TID_OFFSET: usize = 704 + 2 * std::mem::size_of::<usize>();
#[cfg(not(target_arch = "x86_64"))]
const DESCRIPTOR_TID_OFFSET: usize = (24 + 2) * std::mem::size_of::<usize>();

/// Whether the descriptor's field at [`DESCRIPTOR_TID_OFFSET`] is the one
/// glibc stores as a lock's owner (checked at load; assumed until then,
/// so a lock taken before the check costs no `dlsym`).
static DESCRIPTOR_READABLE: AtomicBool = AtomicBool::new(true);

/// The calling thread's id as glibc records it in the locks it holds.
#[inline]
pub(crate) fn current() -> u32 {
    // Relaxed: set once at load, before the program's own code runs; a
    // thread that saw the old value read the same field glibc would have
    // on every layout this library was checked on.
    if DESCRIPTOR_READABLE.load(Ordering::Relaxed) {
        from_descriptor()
    } else {
        owner_glibc_records()
    }
}

/// The `tid` field of the calling thread's descriptor.
#[inline(always)]
fn from_descriptor() -> u32 {
    // SAFETY: pthread_self has no preconditions.
    let descriptor = unsafe { libc::pthread_self() } as *const u8;
    // SAFETY: glibc's pthread_self is the address of the calling thread's
    // `struct pthread`, which lives as long as the thread and is far
    // larger than the offset (it holds the thread's first 32 key slots
    // after it); the field is a 4-byte-aligned pid_t written only by the kernel (at
    // clone), by glibc's fork, or by this thread itself.
    unsafe { descriptor.add(DESCRIPTOR_TID_OFFSET).cast::<u32>().read() }
}

/// Compares the descriptor's field with the owner glibc records for a
/// recursive mutex it locks, and keeps to asking glibc if they differ.
/// Called once, at load.
pub(crate) fn check_layout() {
    if from_descriptor() != owner_glibc_records() {
        // Relaxed: see `current`.
        DESCRIPTOR_READABLE.store(false, Ordering::Relaxed);
    }
}

/// The owner glibc records for a recursive mutex it locks: the calling
/// thread's id as glibc knows it ([`current`]). Locks and unlocks
/// a mutex of its own through the C library.
pub(crate) fn owner_glibc_records() -> u32 {
    // SAFETY: all zeros is a valid (normal, unlocked) glibc mutex.
    let mut m: pthread_mutex_t = unsafe { std::mem::zeroed() };
    {
        // SAFETY: `m` is a live mutex that only this frame uses.
        let w = unsafe { words(&mut m) };
        // Relaxed: `m` is not shared.
        w[KIND].store(KIND_RECURSIVE, Ordering::Relaxed);
    }
    // SAFETY: the C library's lock and unlock on a valid recursive mutex
    // that no other thread can see; a recursive lock cannot deadlock here.
    unsafe {
        forward!(real::MUTEX_LOCK, fn(*mut pthread_mutex_t) -> c_int)(&mut m);
    }
    // SAFETY: as above; the mutex is held.
    let owner = unsafe { words(&mut m) }[OWNER].load(Ordering::Relaxed);
    // SAFETY: as above; this thread holds the mutex.
    unsafe {
        forward!(real::MUTEX_UNLOCK, fn(*mut pthread_mutex_t) -> c_int)(&mut m);
    }
    owner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_descriptor_holds_the_id_glibc_stores_as_owner_in_every_thread() {
        check_layout();
        assert!(
            DESCRIPTOR_READABLE.load(Ordering::Relaxed),
            "glibc's layout changed"
        );
        let here = current();
        // SAFETY: gettid has no preconditions.
        assert_eq!(here, unsafe { libc::gettid() } as u32);
        let there = std::thread::spawn(|| {
            assert_eq!(current(), owner_glibc_records());
            current()
        })
        .join()
        .unwrap();
        assert_ne!(here, there);
    }
}
