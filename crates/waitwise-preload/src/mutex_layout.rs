//! glibc's `pthread_mutex_t` (x86-64 `struct __pthread_mutex_s`, 40
//! bytes) as this library reads and writes it: its words, their meanings,
//! and the kinds in `__kind`.
//!
//! The fields keep glibc's offsets *and meanings*, so a glibc static
//! initializer is a valid unlocked mutex, and glibc's own code (its
//! condition variables, for a forwarded process-shared condvar waiting on
//! a native mutex) handles a native mutex correctly:
//!
//! ```text
//!  offset  glibc name  here
//!   0      __lock      state word: UNLOCKED 0 / LOCKED 1 / CONTENDED 2 (glibc's values)
//!   4      __count     recursion depth of a recursive mutex
//!   8      __owner     owner's thread id as glibc records it (recursive and
//!                      error-checking mutexes; see module thread_id)
//!  16      __kind      type: 0 normal, 1 recursive, 2 error-checking, 3 adaptive
//!                      (= normal); anything else: forwarded to glibc, or
//!                      destroyed (-1, as glibc marks it)
//! ```
//!
//! `PTHREAD_MUTEX_INITIALIZER` is all zeros (normal);
//! `PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP` and
//! `PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP` put 1 / 2 in `__kind`, so no
//! init call is needed. glibc's `pthread_mutex_init` marks a process-shared
//! or robust mutex with `PTHREAD_MUTEX_PSHARED_BIT` (128) and
//! robust / PI / PP ones with 16 / 32 / 64 in `__kind`: a forwarded mutex
//! is recognised by its `__kind` alone, on every call, with no extra mark.

use libc::pthread_mutex_t;
use std::sync::atomic::AtomicU32;

const _: () = assert!(std::mem::size_of::<pthread_mutex_t>() == 40);
const _: () = assert!(std::mem::align_of::<pthread_mutex_t>() >= 4);

/// Word index of `__lock`.
pub(crate) const LOCK: usize = 0;
/// Word index of `__count`.
pub(crate) const COUNT: usize = 1;
/// Word index of `__owner`.
pub(crate) const OWNER: usize = 2;
/// Word index of `__kind`.
pub(crate) const KIND: usize = 4;

/// `PTHREAD_MUTEX_NORMAL` (glibc's default, `PTHREAD_MUTEX_TIMED_NP`).
pub(crate) const KIND_NORMAL: u32 = 0;
/// `PTHREAD_MUTEX_RECURSIVE`.
pub(crate) const KIND_RECURSIVE: u32 = 1;
/// `PTHREAD_MUTEX_ERRORCHECK`.
pub(crate) const KIND_ERRORCHECK: u32 = 2;
/// `PTHREAD_MUTEX_ADAPTIVE_NP`: waits like a normal mutex here.
pub(crate) const KIND_ADAPTIVE: u32 = 3;
/// What glibc's `pthread_mutex_destroy` leaves in `__kind`.
pub(crate) const KIND_DESTROYED: u32 = u32::MAX;

/// The mutex as 32-bit words.
pub(crate) type Words = [AtomicU32; 10];

/// The words of `m`.
///
/// # Safety
///
/// `m` is non-null and points to a live `pthread_mutex_t` (40 bytes,
/// 4-aligned) for `'a`; it is only accessed atomically while shared.
#[inline(always)]
pub(crate) unsafe fn words<'a>(m: *mut pthread_mutex_t) -> &'a Words {
    // SAFETY: by the caller's contract; AtomicU32 has u32's layout.
    unsafe { &*(m as *const Words) }
}
