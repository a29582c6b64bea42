//! The interposer's configuration, read once when the object is loaded
//! ([`load`]) through waitwise's one environment parser
//! ([`waitwise::env`]) and kept in atomics, so a wait reads two relaxed
//! words and never calls `getenv` or allocates.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `WAITWISE_POLICY` | `two-phase`, `spin`, `block` or `randomized` ([`PolicyChoice`]) | `two-phase` |
//! | `WAITWISE_ALPHA` | `alpha` of the two-phase policy, every kind, in `[0, 100]` | per kind: mutex/cond/sem `ln(e-1)`, barrier `(sqrt 5 - 1)/2` |
//!
//! A rejected value prints one line on stderr (printed by
//! [`waitwise::env`], once per process, for every `WAITWISE_*` variable)
//! and the default is used; the program runs on.
//!
//! `B` is waitwise's ([`waitwise::policy::block_ns`]): it starts from
//! `WAITWISE_BLOCK_NS`, else the machine profile that `waitwise probe
//! --save` wrote, else the documented default (read at load,
//! [`crate::first_wait`]), and is then learned from the
//! program's own futex wake-ups. Nothing is measured on a wait path.
//!
//! # Memory ordering
//!
//! Every access is Relaxed. [`load`] runs once, in the load-time
//! constructor, before `main` and so before any thread the program creates:
//! thread creation orders its stores before every later read. Each word is
//! a value on its own, publishing no other memory.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Duration;
use waitwise::policy::{crowding, randomized, SyncKind};
use waitwise::{Mechanism, Policy};

pub use waitwise::env::PolicyChoice;

/// Under `WAITWISE_POLICY=spin`, a waiter still blocks after polling this
/// long: the deadlock avoidance Lim & Agarwal's `s//inf` runs need when
/// threads outnumber CPUs (a poller may hold the CPU its waker needs; a
/// pure spin then loses whole time slices per hand-off). Guessed: a fraction
/// of a scheduler time slice, far above any useful poll.
pub const SPIN_TIMEOUT: Duration = Duration::from_millis(1);

static POLICY: AtomicU8 = AtomicU8::new(PolicyChoice::TwoPhase as u8);
/// `WAITWISE_ALPHA` as f64 bits; `NO_ALPHA` when unset or rejected.
static ALPHA_BITS: AtomicU64 = AtomicU64::new(NO_ALPHA);
const NO_ALPHA: u64 = u64::MAX; // a NaN: never a valid alpha

/// Reads every `WAITWISE_*` variable once ([`waitwise::env::settings`],
/// which prints one line per rejected value), and keeps the policy and
/// `alpha`. The starting `B` is read at load too ([`crate::first_wait`]).
///
/// Its stores are Relaxed: this runs before any other thread exists, and
/// thread creation orders them before every read (module doc).
pub fn load() {
    let env = waitwise::env::settings();
    // Relaxed: before any other thread exists (module doc).
    POLICY.store(env.policy as u8, Ordering::Relaxed);
    if let Some(alpha) = env.alpha {
        // Relaxed: before any other thread exists (module doc).
        ALPHA_BITS.store(alpha.to_bits(), Ordering::Relaxed);
    }
}

/// The configured policy family.
#[inline]
pub fn choice() -> PolicyChoice {
    // Relaxed: written once before any other thread existed (module doc).
    PolicyChoice::from_u8(POLICY.load(Ordering::Relaxed))
}

/// `B` in ns: learned from this process's wake-ups, else the starting one.
#[inline]
pub fn block_ns() -> u64 {
    waitwise::policy::block_ns() as u64
}

/// `alpha` for `kind`: `WAITWISE_ALPHA` if given, else the kind's default.
#[inline]
pub fn alpha(kind: SyncKind) -> f64 {
    // Relaxed: written once before any other thread existed (module doc).
    let bits = ALPHA_BITS.load(Ordering::Relaxed);
    if bits == NO_ALPHA {
        kind.default_alpha()
    } else {
        f64::from_bits(bits)
    }
}

/// `policy` for a wait of `threads` threads: polling by `yield` when they
/// outnumber the CPUs, or blocking at once then while the process's
/// yields lose slices ([`crowding::for_wait`]), or the caller is a real-time thread
/// ([`realtime_thread`]), unless `WAITWISE_POLICY=spin` asked for
/// spinning.
#[inline]
pub fn wait_policy(policy: Policy, threads: usize) -> Policy {
    if choice() == PolicyChoice::Spin {
        policy
    } else if crowding::holds_cpu(policy.mechanism()) && realtime_thread() {
        policy.with_mechanism(Mechanism::Yield)
    } else {
        crowding::for_wait(policy, threads)
    }
}

thread_local! {
    /// [`realtime_thread`]'s cache: the answer in bit 0, the calls left
    /// before it is asked again in the bits above (0: ask now).
    static REALTIME: Cell<u32> = const { Cell::new(0) };
}

/// Calls between two looks at the thread's scheduling policy: a thread
/// whose policy changes (`pthread_setschedparam`, `sched_setscheduler`)
/// polls the old way for at most this many more contended waits.
/// Guessed: a system call of ~0.3 µs per 64 contended waits.
const REALTIME_RECHECK: u32 = 64;

/// Whether the calling thread runs under a real-time policy
/// (`SCHED_FIFO`, `SCHED_RR`): no thread of its own priority ever
/// preempts it, so a PAUSE poll keeps the CPU from the threads queued
/// behind it, the one it waits for perhaps among them, for the whole poll
/// limit; such threads poll by `yield`, which hands the CPU to the next
/// one of equal priority (and returns at once when none waits). Asked of
/// the kernel (`sched_getscheduler`) once per [`REALTIME_RECHECK`] calls.
#[inline]
pub fn realtime_thread() -> bool {
    REALTIME.with(|c| {
        let v = c.get();
        if v >= 2 {
            c.set(v - 2);
            return v & 1 != 0;
        }
        // SAFETY: sched_getscheduler(0) asks about the calling thread; no
        // preconditions.
        let policy = unsafe { libc::sched_getscheduler(0) };
        let rt = policy == libc::SCHED_FIFO || policy == libc::SCHED_RR;
        c.set((REALTIME_RECHECK - 1) << 1 | u32::from(rt));
        rt
    })
}

/// How long one wait on a `kind` object polls before blocking, in ns (0:
/// block at once), per the configured policy: `alpha * B` for two-phase,
/// a fresh draw on `[0, B]` for randomized, [`SPIN_TIMEOUT`] for spin.
/// `B` is read per wait (two relaxed loads): no wait ever measures it.
#[inline]
pub fn poll_limit_ns(kind: SyncKind) -> u64 {
    let b = block_ns();
    match choice() {
        PolicyChoice::Spin => SPIN_TIMEOUT.as_nanos() as u64,
        PolicyChoice::Block => 0,
        PolicyChoice::TwoPhase => (alpha(kind) * b as f64) as u64,
        PolicyChoice::Randomized => randomized::draw_poll_limit(b as f64) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_normal_thread_is_not_real_time_and_polls_as_the_policy_says() {
        std::thread::spawn(|| {
            assert!(!realtime_thread());
            assert!(!realtime_thread(), "the cached answer");
            let p = Policy::two_phase(0.5);
            assert_eq!(wait_policy(p, 1), p);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_real_time_thread_polls_by_yield() {
        std::thread::spawn(|| {
            let param = libc::sched_param { sched_priority: 1 };
            // SAFETY: `param` is a valid sched_param for the calling thread.
            if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
                eprintln!("skipped: SCHED_FIFO is refused here");
                return;
            }
            assert!(realtime_thread());
            let p = Policy::two_phase(0.5);
            assert_eq!(wait_policy(p, 1).mechanism(), Mechanism::Yield);
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: as above.
            assert_eq!(
                unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) },
                0
            );
            // The cache answers for REALTIME_RECHECK calls, then asks again.
            for _ in 0..REALTIME_RECHECK {
                realtime_thread();
            }
            assert!(!realtime_thread());
        })
        .join()
        .unwrap();
    }
}
