//! How a default wait polls when the threads taking part in it outnumber
//! the CPUs this process may use: by `yield` (Lim & Agarwal's
//! switch-spinning) instead of PAUSE.
//!
//! A PAUSE poller holds its CPU. While the threads of a wait (the waiters
//! and the thread that will release them) fit on the CPUs, the releaser
//! runs on a CPU of its own and the release is one cache-line hand-off
//! away, which PAUSE notices within ~100 ns. Once they outnumber the CPUs,
//! the releaser most likely waits for the very CPU a poller holds: every
//! PAUSE poll then delays the release it waits for, by up to its whole
//! poll limit, and the wait ends in a block anyway. A `yield` poll hands
//! the CPU to a runnable thread at every poll, which is the releaser often
//! enough that the waits end polled. libgomp draws the same line for its
//! idle workers: it throttles their spinning once its threads outnumber
//! the available CPUs (`gomp_throttled_spin_count_var`).
//!
//! Beside CPU-bound processes a `yield` can hand the CPU to one of them for
//! its whole time slice: while the process's yields lose slices, a wait
//! that would poll by `yield` only by this rule blocks at once instead
//! ([`for_wait`], with the lost-slice memory of
//! [`crate::mechanism::yield_guard`]).
//!
//! # Crowded by the process's own threads
//!
//! The threads of one wait may fit on the CPUs while the process's other
//! threads do not: four pairs of threads handing an event back and forth
//! on 2 CPUs, each wait counting its waiter and one notifier. A PAUSE poll
//! would then hold a CPU that runnable threads want, and a default wait
//! that sees so ([`super::polling_holds_wanted_cpu`]) would block at once,
//! paying a futex sleep and a wake-up per hand-off. When the machine has
//! at least [`CROWDED_RUNNABLE_PER_CPU`] runnable threads per CPU and the
//! process itself used at least [`CROWDING_SHARE`] of its CPUs over the
//! last share interval ([`yield_guard::recent_process_share`]), most of
//! the threads that want a CPU are its own, the notifier likely among
//! them, and a `yield` poll hands the CPU to one of them instead: the
//! waits of the event and the condition variable, whose release needs a
//! notifier to run, then poll as crowded ones ([`for_notified_wait`]).
//! Four `Event` pairs on 2 CPUs make about twice the round trips so
//! (`waitwise peers --only event`, 8 threads). One pair whose threads
//! poll beside a single thread of another process keeps PAUSE: there a
//! yield would only slow the hand-off. Beside other busy processes the
//! process's share is lower and the waits block at once; a slice lost to
//! them anyway ends the yields for a quiet period
//! ([`yield_guard::lost_slice_recently`]). The verdict is taken with the
//! machine's load, at each read of the demand cache
//! ([`super::idle_extension`]), so a wait pays one load for it.
//!
//! Who counts as a thread of the wait is the primitive's: a barrier's
//! parties; a condition variable's waiters, or an event's registered
//! waiters, plus one notifier (sleeping waiters count too, so the rule
//! errs towards yielding). The semaphore counts its sleepers only, not its
//! pollers, and keeps its policy's mechanism. Policies given explicitly
//! (per object, in [`crate::WaitOptions`]) are used as given; only
//! defaults follow this rule. `cargo run -p waitwise --release --example
//! crowded_waits` runs a condition variable and an event with their
//! defaults against the same policy given explicitly.
//!
//! # Examples
//! ```
//! use waitwise::policy::crowding::{allowed_cpus, for_threads, poll_mechanism};
//! use waitwise::{Mechanism, Policy};
//!
//! assert_eq!(poll_mechanism(1), Mechanism::Pause);
//! assert_eq!(poll_mechanism(allowed_cpus() + 1), Mechanism::Yield);
//! let crowded = for_threads(Policy::adaptive(), allowed_cpus() + 1);
//! assert_eq!((crowded.name().as_str(), crowded.mechanism()), ("adapt/b", Mechanism::Yield));
//! ```

use super::Policy;
use crate::mechanism::{yield_guard, Mechanism};
use waitwise_platform::once::ForkSafeOnce;

/// Number of CPUs this process may run on (its affinity mask and cgroup
/// quota, [`waitwise_platform::affinity::process_cpu_count`]), read once:
/// the process's, also when the first caller is a worker pinned to fewer
/// CPUs. 1 when it cannot be read.
pub fn allowed_cpus() -> usize {
    static CPUS: ForkSafeOnce<usize> = ForkSafeOnce::new();
    *CPUS.get_or_init(waitwise_platform::affinity::process_cpu_count)
}

/// Whether `threads` threads outnumber the CPUs this process may use.
#[inline]
pub fn is_oversubscribed(threads: usize) -> bool {
    threads > allowed_cpus()
}

/// How a default wait of `threads` threads polls: PAUSE while they fit on
/// the allowed CPUs, `yield` once they outnumber them.
#[inline]
pub fn poll_mechanism(threads: usize) -> Mechanism {
    if is_oversubscribed(threads) {
        Mechanism::Yield
    } else {
        Mechanism::Pause
    }
}

/// Whether `mechanism` keeps its CPU while it polls (spinning, PAUSE,
/// backoff, the hardware waits), so that crowding makes it `yield`.
/// `yield` gives the CPU away already; `block` does not poll.
#[inline]
pub fn holds_cpu(mechanism: Mechanism) -> bool {
    !matches!(mechanism, Mechanism::Yield | Mechanism::Block)
}

/// `policy` for a wait of `threads` threads: the same poll limit, polling
/// by `yield` when the threads outnumber the CPUs and `policy` would hold
/// its CPU while polling; else `policy` as it is. For a choice made once
/// (a pool's, when it is built); a wait deciding for itself asks
/// [`for_wait`].
#[inline]
pub fn for_threads(policy: Policy, threads: usize) -> Policy {
    if holds_cpu(policy.mechanism()) && is_oversubscribed(threads) {
        crowded(policy, false)
    } else {
        policy
    }
}

/// `policy` for one wait of `threads` threads that starts now:
/// [`for_threads`], except that where that polls by `yield`, the wait
/// blocks at once while the process's yields lose whole scheduler slices
/// ([`yield_guard::lost_slice_recently`]). Such a yield hands the CPU to a
/// thread that keeps it for its slice, most often one outside the
/// process, and the waiter notices its release a slice late, where a
/// sleeper is woken and runs at once. One relaxed load more than
/// [`for_threads`] when the threads outnumber the CPUs.
#[inline]
pub fn for_wait(policy: Policy, threads: usize) -> Policy {
    if holds_cpu(policy.mechanism()) && is_oversubscribed(threads) {
        crowded(policy, yield_guard::lost_slice_recently())
    } else {
        policy
    }
}

/// [`for_wait`] for a wait whose releaser is a thread that must run to
/// release it (a notifier): also crowded while its threads fit on the
/// CPUs but the machine has at least [`CROWDED_RUNNABLE_PER_CPU`]
/// runnable threads per CPU and this process used at least
/// [`CROWDING_SHARE`] of its CPUs over the last share interval
/// ([`crowded_by_own_threads`]), so that most of the threads that want a
/// CPU are likely the process's own, the notifier among them (module docs, "Crowded by the process's own threads"). The
/// event and the condition variable wait so.
#[inline]
pub fn for_notified_wait(policy: Policy, threads: usize) -> Policy {
    let mechanism = policy.mechanism();
    if holds_cpu(mechanism) && (is_oversubscribed(threads) || own_threads_want_cpus(mechanism)) {
        crowded(policy, yield_guard::lost_slice_recently())
    } else {
        policy
    }
}

/// `policy` for a wait whose releaser last ran on the waiter's own CPU
/// (as the event and the channel note it): that thread cannot run while
/// the waiter holds
/// the CPU, so a policy that would hold it polls by `yield` instead, or
/// blocks at once while the process's yields lose whole slices
/// ([`crowded`]); other policies as they are.
#[inline]
pub fn for_wait_beside_its_releaser(policy: Policy) -> Policy {
    if holds_cpu(policy.mechanism()) {
        crowded(policy, yield_guard::lost_slice_recently())
    } else {
        policy
    }
}

/// Whether a poll with `mechanism` would hold a CPU that another runnable
/// thread wants ([`super::holds_wanted_cpu`]) while the process's own
/// threads crowd the CPUs ([`crowded_by_own_threads`]).
/// The verdict is the demand cache's, kept at its last read
/// ([`super::idle_extension::own_threads_crowd_cpus`]), and is read
/// first: while it says no, as on a machine the threads fit, the wait
/// pays one load for the rule and no look at the machine's demand.
#[inline]
fn own_threads_want_cpus(mechanism: Mechanism) -> bool {
    #[cfg(not(loom))]
    {
        super::idle_extension::own_threads_crowd_cpus() && super::holds_wanted_cpu(mechanism)
    }
    #[cfg(loom)]
    {
        let _ = mechanism;
        false
    }
}

/// The machine's runnable threads per CPU from which its CPUs count as
/// crowded ([`crowded_by_own_threads`]): two. Four pairs of threads handing
/// events back and forth on 2 CPUs keep about 4 per CPU runnable; one
/// pair on 2 CPUs, polling, with one thread of another process runnable
/// beside it, 1.5, and its waits poll best with PAUSE.
pub const CROWDED_RUNNABLE_PER_CPU: f64 = 2.0;

/// The share of its CPUs from which a process counts as the one that
/// crowds them ([`crowded_by_own_threads`]): three quarters. Beside a busy
/// loop on each of 2 CPUs, one pair of threads handing an event back and
/// forth gets at most half of them, four pairs about four fifths; alone,
/// four pairs use all of them. Guessed between those.
pub const CROWDING_SHARE: f64 = 0.75;

/// Whether the CPUs are crowded by the process's own threads (pure): the
/// machine had at least [`CROWDED_RUNNABLE_PER_CPU`] runnable threads per
/// CPU at its last reading (`runnable_per_cpu`) and the process used at
/// least [`CROWDING_SHARE`] of its CPUs over the last share interval
/// (`process_share`); `None`: not known.
pub fn crowded_by_own_threads(runnable_per_cpu: Option<f64>, process_share: Option<f64>) -> bool {
    runnable_per_cpu.is_some_and(|r| r >= CROWDED_RUNNABLE_PER_CPU)
        && process_share.is_some_and(|share| share >= CROWDING_SHARE)
}

/// The crowded form of `policy` (pure): the same poll limit, polling by
/// `yield`, or with the `block` mechanism (no polling phase) when
/// `yields_lose_slices`.
#[inline]
pub fn crowded(policy: Policy, yields_lose_slices: bool) -> Policy {
    policy.with_mechanism(if yields_lose_slices {
        Mechanism::Block
    } else {
        Mechanism::Yield
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_that_fit_keep_the_policy() {
        let p = Policy::two_phase(0.5);
        assert_eq!(for_threads(p, 1), p);
        assert_eq!(for_threads(p, allowed_cpus()), p);
        assert_eq!(poll_mechanism(allowed_cpus()), Mechanism::Pause);
    }

    #[test]
    fn threads_that_outnumber_the_cpus_poll_by_yield() {
        let n = allowed_cpus() + 1;
        for p in [
            Policy::two_phase(0.5),
            Policy::adaptive(),
            Policy::randomized(),
        ] {
            let crowded = for_threads(p, n);
            assert_eq!(crowded.mechanism(), Mechanism::Yield);
            assert_eq!(crowded.limit(), p.limit(), "the poll limit is kept");
        }
        let spin = Policy::always_spin().with_mechanism(Mechanism::Spin);
        assert_eq!(for_threads(spin, n).mechanism(), Mechanism::Yield);
    }

    #[test]
    fn crowded_waits_block_at_once_while_yields_lose_slices() {
        for p in [Policy::adaptive(), Policy::two_phase(0.5)] {
            let losing = crowded(p, true);
            assert_eq!(losing.mechanism(), Mechanism::Block);
            assert!(!losing.poll_budget().polls(), "no polling phase");
            assert_eq!(crowded(p, false).mechanism(), Mechanism::Yield);
        }
    }

    #[test]
    fn a_wait_beside_its_releaser_gives_up_the_cpu_whatever_the_thread_count() {
        for p in [Policy::adaptive(), Policy::two_phase(0.5)] {
            let beside = for_wait_beside_its_releaser(p).mechanism();
            assert!(!holds_cpu(beside), "{beside:?}");
            assert_eq!(for_wait_beside_its_releaser(p).limit(), p.limit());
        }
        let yielding = Policy::adaptive().with_mechanism(Mechanism::Yield);
        assert_eq!(for_wait_beside_its_releaser(yielding), yielding);
        let blocking = Policy::always_block();
        assert_eq!(for_wait_beside_its_releaser(blocking), blocking);
    }

    #[test]
    fn a_wait_that_fits_keeps_its_policy_whatever_the_losses() {
        let p = Policy::adaptive();
        assert_eq!(for_wait(p, allowed_cpus()), p);
        let crowded_now = for_wait(p, allowed_cpus() + 1).mechanism();
        assert!(!holds_cpu(crowded_now), "{crowded_now:?}");
    }

    #[test]
    fn own_threads_crowd_the_cpus_when_many_run_and_most_are_the_process_s() {
        let crowded = Some(CROWDED_RUNNABLE_PER_CPU);
        let most = Some(CROWDING_SHARE);
        assert!(crowded_by_own_threads(crowded, most));
        assert!(crowded_by_own_threads(Some(4.0), Some(1.0)));
        assert!(!crowded_by_own_threads(None, most), "load not known");
        assert!(!crowded_by_own_threads(crowded, None), "share not known");
        assert!(
            !crowded_by_own_threads(Some(1.5), Some(1.0)),
            "one pair beside one other thread"
        );
        assert!(
            !crowded_by_own_threads(Some(4.0), Some(0.5)),
            "beside as many busy loops"
        );
    }

    #[test]
    fn a_notified_wait_that_outnumbers_the_cpus_is_crowded_and_yield_is_kept() {
        let n = allowed_cpus() + 1;
        let crowded_now = for_notified_wait(Policy::adaptive(), n).mechanism();
        assert!(!holds_cpu(crowded_now), "{crowded_now:?}");
        let yielding = Policy::adaptive().with_mechanism(Mechanism::Yield);
        assert_eq!(for_notified_wait(yielding, 1), yielding);
        assert_eq!(
            for_notified_wait(Policy::always_block(), n),
            Policy::always_block()
        );
    }

    #[test]
    fn yield_and_block_are_left_alone() {
        let n = allowed_cpus() + 1;
        let block = Policy::always_block();
        assert_eq!(for_threads(block, n), block);
        let blocking_mechanism = Policy::two_phase(0.5).with_mechanism(Mechanism::Block);
        assert_eq!(for_threads(blocking_mechanism, n), blocking_mechanism);
        let yielding = Policy::two_phase(0.5).with_mechanism(Mechanism::Yield);
        assert_eq!(for_threads(yielding, n), yielding);
    }

    #[test]
    fn at_least_one_cpu() {
        assert!(allowed_cpus() >= 1);
        assert!(!is_oversubscribed(0));
    }
}
