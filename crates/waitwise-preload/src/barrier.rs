//! `pthread_barrier_*`: a central barrier (arrival counter + generation
//! word), waiting two-phase on the generation word.
//!
//! # Layout (glibc x86-64 `pthread_barrier_t`, 32 bytes, 8-aligned)
//!
//! ```text
//!  word  here                                       glibc (struct pthread_barrier)
//!   0    GEN: episodes completed, the futex         in
//!   1    0 here                                     current_round
//!   2    COUNT: parties                             count
//!   3    SHARED: 0 here; glibc's init puts 1 for     shared
//!        a process-shared barrier: forwarded
//!   4    SLEEPERS: waiters in futex_wait            out
//!   5    PRESENT: threads inside pthread_barrier_wait
//!  6-7   STATE, one 64-bit word: arrivals in the current episode (low
//!        half) and the current episode's number (high half)
//! ```
//!
//! # Protocol
//!
//! waitwise's central barrier ([`waitwise::barrier::CentralBarrierRef`],
//! module `waitwise::barrier::central`, checked by the loom models in
//! `crates/waitwise/tests/loom_barrier.rs`) on `STATE` and on `GEN` with
//! its sleeper count `SLEEPERS`: one CAS on `STATE` counts an arrival and
//! tells it its episode; the last arrival opens the next episode, bumps
//! `GEN`, wakes the sleepers and gets `PTHREAD_BARRIER_SERIAL_THREAD`; the
//! others wait until `GEN` has passed their episode and get 0. More
//! threads than `count` may use the barrier (POSIX allows it): each
//! episode lets exactly `count` through.
//!
//! Waiters poll for `alpha * B` (the barrier kind's alpha), then block.
//! They poll with PAUSE while the barrier has no more parties than the
//! process has CPUs; with more, the thread being waited for may need the
//! very CPU a poller holds, so they poll by `yield`, which hands it over
//! (Lim & Agarwal's switch-spinning; `waitwise::policy::crowding`), unless
//! `WAITWISE_POLICY=spin` asked for spinning.
//!
//! # Memory ordering
//!
//! `STATE` and `GEN` follow the central barrier's argument (every thread
//! leaves having seen every thread's pre-barrier writes). `PRESENT` is
//! incremented before arriving and decremented (Release) as each thread's
//! last access; `pthread_barrier_destroy` waits (Acquire, asleep on
//! `PRESENT` with its `DESTROYING` bit set, woken by the last thread to
//! leave) until it is zero, because programs routinely destroy a barrier
//! as soon as the serial thread returns, while the others are still
//! waking. The increment is Relaxed: it is sequenced before the thread's
//! AcqRel arrival, so the last arrival, and whoever destroys the barrier
//! after the episode, sees it (or the thread's later decrement).
//!
//! `COUNT` and `SHARED` are Relaxed: written by init before the
//! barrier is shared (whatever shares it orders them) and fixed until
//! destroy; they guard no other data.

use crate::cleanup;
use crate::profile::{self, Kind};
use crate::real::{self, forward};
use libc::{pthread_barrier_t, pthread_barrierattr_t, EINVAL};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;
use waitwise::barrier::{CentralBarrierRef, EpisodeArrival};
use waitwise::platform::futex::{wake_address, Futex};
use waitwise::{Deadline, Policy, SleepRules, SyncKind, WaitWordRef};

const _: () = assert!(std::mem::size_of::<pthread_barrier_t>() == 32);
// STATE is a 64-bit atomic at byte 24.
const _: () = assert!(std::mem::align_of::<pthread_barrier_t>() >= 8);

const GEN: usize = 0;
const COUNT: usize = 2;
const SHARED: usize = 3;
const SLEEPERS: usize = 4;
const PRESENT: usize = 5;
/// `PRESENT`: a `pthread_barrier_destroy` sleeps until the count is zero,
/// and the last thread to leave wakes it.
const DESTROYING: u32 = 1 << 31;
/// Index of `STATE` in 64-bit words (bytes 24..32).
const STATE: usize = 3;

/// The 32-bit words 0..6; bytes 24..32 are `STATE`, only ever accessed as
/// one 64-bit atomic ([`state`]).
type Words = [AtomicU32; 6];

/// # Safety
///
/// `b` points to a live `pthread_barrier_t` for `'a`.
#[inline(always)]
unsafe fn words<'a>(b: *mut pthread_barrier_t) -> &'a Words {
    // SAFETY: by the caller's contract; AtomicU32 has u32's layout and the
    // 24 bytes lie inside the 32-byte object.
    unsafe { &*(b as *const Words) }
}

/// # Safety
///
/// `b` points to a live `pthread_barrier_t` for `'a`.
#[inline(always)]
unsafe fn state<'a>(b: *mut pthread_barrier_t) -> &'a AtomicU64 {
    // SAFETY: by the caller's contract; bytes 24..32 of the 32-byte object,
    // 8-aligned because the object is (asserted above), and never accessed
    // with another size.
    unsafe { AtomicU64::from_ptr((b as *mut u64).add(STATE)) }
}

/// The central barrier on `b`'s words.
///
/// # Safety
///
/// `b` points to a live `pthread_barrier_t` for `'a`.
#[inline(always)]
unsafe fn view<'a>(b: *mut pthread_barrier_t) -> CentralBarrierRef<'a> {
    // SAFETY: by the caller's contract.
    let (w, st) = unsafe { (words(b), state(b)) };
    CentralBarrierRef::new(
        st,
        WaitWordRef::new(Futex::from_atomic(&w[GEN]), &w[SLEEPERS]),
    )
}

/// `pthread_barrier_init`: `EINVAL` for a count of 0 or of `INT_MAX` and
/// above (glibc's limit); process-shared barriers are forwarded.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_barrier_init(
    b: *mut pthread_barrier_t,
    attr: *const pthread_barrierattr_t,
    count: u32,
) -> c_int {
    if b.is_null() || count == 0 || count >= i32::MAX as u32 {
        return EINVAL;
    }
    let mut pshared = libc::PTHREAD_PROCESS_PRIVATE;
    if !attr.is_null() {
        // SAFETY: an initialized attribute object (POSIX).
        unsafe { real::pthread_barrierattr_getpshared(attr, &mut pshared) };
    }
    if pshared != libc::PTHREAD_PROCESS_PRIVATE {
        // SAFETY: forwarding the caller's valid arguments.
        return unsafe {
            forward!(
                real::BARRIER_INIT,
                fn(*mut pthread_barrier_t, *const pthread_barrierattr_t, u32) -> c_int
            )(b, attr, count)
        };
    }
    // SAFETY: a writable pthread_barrier_t, not in use yet.
    unsafe { b.write_bytes(0, 1) };
    // SAFETY: as above.
    let w = unsafe { words(b) };
    // Relaxed: not shared yet; whatever shares the barrier orders these
    // stores before other threads' reads.
    w[COUNT].store(count, Ordering::Relaxed);
    0
}

/// `pthread_barrier_destroy`: waits until the threads of the last episode
/// have left.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_barrier_destroy(b: *mut pthread_barrier_t) -> c_int {
    if b.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(b) };
    // Relaxed: SHARED is fixed from init to destroy (module doc).
    if w[SHARED].load(Ordering::Relaxed) != 0 {
        // SAFETY: a glibc barrier; forwarding the caller's argument.
        return unsafe { forward!(real::BARRIER_DESTROY, fn(*mut pthread_barrier_t) -> c_int)(b) };
    }
    // A snapshot: a best-effort EBUSY (destroying a barrier mid-episode is
    // the caller's error); the PRESENT wait below orders the waiters'
    // accesses.
    // SAFETY: caller's contract.
    if unsafe { view(b) }.arrivals() != 0 {
        return libc::EBUSY; // an episode is under way
    }
    // Ask the last thread to leave for a wake-up. Acquire: pairs with each
    // waiter's last (Release) access.
    let mut v = w[PRESENT].fetch_or(DESTROYING, Ordering::Acquire) | DESTROYING;
    while v != DESTROYING {
        Futex::from_atomic(&w[PRESENT]).wait(v, None);
        // Acquire: as above.
        v = w[PRESENT].load(Ordering::Acquire);
    }
    // Relaxed: nobody uses the barrier any more (POSIX), until an init.
    w[PRESENT].store(0, Ordering::Relaxed);
    0
}

/// A thread leaves `PRESENT`: its last access to the barrier but for the
/// address of the wake-up a waiting `pthread_barrier_destroy` asked for
/// (harmless on memory the destroyer may have freed by then).
#[inline]
fn leave(w: &Words) {
    let word = w[PRESENT].as_ptr();
    // Release: this thread's last access to the barrier.
    if w[PRESENT].fetch_sub(1, Ordering::Release) == DESTROYING | 1 {
        wake_address(word, u32::MAX);
    }
}

/// `pthread_barrier_wait`: `PTHREAD_BARRIER_SERIAL_THREAD` to the last
/// arrival of each episode, 0 to the others.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_barrier_wait(b: *mut pthread_barrier_t) -> c_int {
    if b.is_null() {
        return EINVAL;
    }
    // SAFETY: caller's contract.
    let w = unsafe { words(b) };
    // Relaxed: SHARED and COUNT are fixed from init to destroy (module doc).
    if w[SHARED].load(Ordering::Relaxed) != 0 {
        // SAFETY: a glibc barrier; forwarding the caller's argument.
        return unsafe { forward!(real::BARRIER_WAIT, fn(*mut pthread_barrier_t) -> c_int)(b) };
    }
    let count = w[COUNT].load(Ordering::Relaxed);
    if count == 0 {
        return EINVAL; // destroyed or never initialized
    }
    // Relaxed: the AcqRel arrival below orders it before the last arrival
    // and any destroy after the episode (module doc).
    w[PRESENT].fetch_add(1, Ordering::Relaxed);
    // SAFETY: caller's contract.
    let barrier = unsafe { view(b) };
    let r = match barrier.arrive(count) {
        EpisodeArrival::Last { .. } => {
            barrier.complete();
            barrier.gen().wake_all();
            libc::PTHREAD_BARRIER_SERIAL_THREAD
        }
        EpisodeArrival::Wait { episode } => {
            crate::first_wait::prepare();
            // More parties than CPUs: poll by yield (module doc).
            let limit = crate::config::poll_limit_ns(SyncKind::Barrier);
            let policy = crate::config::wait_policy(
                Policy::poll_then_block(Duration::from_nanos(limit)),
                count as usize,
            );
            let start = profile::start();
            let arrival = Arrival { b, episode };
            // SAFETY: `unwound` takes an `Arrival` and never unwinds.
            let out = unsafe {
                cleanup::on_forced_unwind(&arrival, unwound, || {
                    let ready = |gen| CentralBarrierRef::has_completed(gen, episode);
                    barrier
                        .gen()
                        .wait_with(&policy, Deadline::NEVER, ready, SleepRules::default())
                })
            };
            profile::finish(start, Kind::Barrier, b, out.blocked());
            0
        }
    };
    leave(w);
    r
}

/// What [`unwound`] needs of a waiting arrival.
struct Arrival {
    b: *mut pthread_barrier_t,
    episode: u32,
}

/// The cleanup of a waiter that glibc unwinds (its signal handler called
/// `pthread_exit`, or it was cancelled asynchronously): if its episode is
/// still open, its arrival is taken back, so the episode waits for another
/// thread instead of completing one short; then it leaves `PRESENT`.
///
/// # Safety
///
/// `arrival` points at the live [`Arrival`] of a thread inside
/// `pthread_barrier_wait`.
unsafe extern "C" fn unwound(arrival: *mut std::ffi::c_void) {
    // SAFETY: caller's contract.
    let arrival = unsafe { &*(arrival as *const Arrival) };
    // SAFETY: the barrier stays alive while a thread waits on it (POSIX).
    let (w, barrier) = unsafe { (words(arrival.b), view(arrival.b)) };
    barrier.take_back(arrival.episode);
    leave(w);
}
