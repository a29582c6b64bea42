//! Deferred cancellation: `pthread_cond_wait`,
//! `pthread_cond_timedwait`, `pthread_cond_clockwait`, `sem_wait`,
//! `sem_timedwait` and `sem_clockwait` are cancellation points (POSIX);
//! mutex and spin locks, rwlock locks and `pthread_barrier_wait` are not.
//! The program `tests/c/cancel.c` checks (see its comment):
//!
//! - a thread blocked in a cancellation-point wait is cancelled, and for a
//!   condvar its cleanup handler runs holding the mutex;
//! - a pending cancel (requested while disabled, then re-enabled) is acted
//!   on when the thread reaches such a wait;
//! - a thread pool shuts down by cancelling its idle workers;
//! - the wake-up a cancelled waiter may have received is not lost: the
//!   other waiter still gets the token;
//! - a cancel sent to a thread blocked in a lock or a barrier stays pending
//!   until its next cancellation point.
//!
//! Each mode runs without the interposer (glibc must pass it: the program
//! is right), then under `LD_PRELOAD` with a couple of policies.

mod common;

use common::{compile, native, preloaded, run_ok_within};
use std::time::Duration;

/// Hang detector for one run (the program's own watchdog fires at 120 s,
/// and it reports an ignored cancel after 10 s).
const LIMIT: Duration = Duration::from_secs(150);

fn check(args: &[&str], policies: &[&str]) {
    check_with_native_args(args, args, policies);
}

/// Runs `cancel native_args` without the interposer and `cancel args`
/// under it with each policy; each must print `want`.
fn check_with_native_args(args: &[&str], native_args: &[&str], policies: &[&str]) {
    let exe = compile("cancel");
    let want = match args[0] {
        "pool" => "pool: ok".to_string(),
        "lost-wake" => format!("lost-wake {}: ok", args[1]),
        _ => format!("{} {}: ok", args[0], args[1]),
    };
    let out = run_ok_within(native(&exe).args(native_args), LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&want), "without the interposer: {stdout}");
    for &policy in policies {
        let out = run_ok_within(
            preloaded(&exe).args(args).env("WAITWISE_POLICY", policy),
            LIMIT,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&want), "under {policy}: {stdout}");
    }
}

const TWO: [&str; 2] = ["two-phase", "block"];
const THREE: [&str; 3] = ["two-phase", "block", "spin"];

macro_rules! wait_tests {
    ($mode:literal, $($name:ident: $wait:literal,)*) => {
        $(#[test] fn $name() { super::check(&[$mode, $wait], &super::TWO); })*
    };
}

/// A thread blocked in the wait is cancelled.
mod blocked {
    wait_tests! { "blocked",
        cond_wait: "cond-wait",
        cond_timedwait: "cond-timedwait",
        cond_clockwait: "cond-clockwait",
        sem_wait: "sem-wait",
        sem_timedwait: "sem-timedwait",
        sem_clockwait: "sem-clockwait",
    }
}

/// A cancel pending before the call is acted on at the wait.
mod pending {
    wait_tests! { "pending",
        cond_wait: "cond-wait",
        cond_timedwait: "cond-timedwait",
        cond_clockwait: "cond-clockwait",
        sem_wait: "sem-wait",
        sem_timedwait: "sem-timedwait",
        sem_clockwait: "sem-clockwait",
    }
}

/// Not cancellation points: the cancel waits for `pthread_testcancel`.
mod not_a_cancellation_point {
    wait_tests! { "not-a-point",
        mutex_lock: "mutex-lock",
        mutex_timedlock: "mutex-timedlock",
        mutex_clocklock: "mutex-clocklock",
        spin_lock: "spin-lock",
        barrier_wait: "barrier-wait",
        rwlock_rdlock: "rwlock-rdlock",
        rwlock_wrlock: "rwlock-wrlock",
    }
}

#[test]
fn thread_pool_shuts_down_by_cancelling_idle_workers() {
    check(&["pool"], &THREE);
}

/// Also the regression test of a cancel that lands late: `pthread_cancel`
/// marks the request, then sends `SIGCANCEL`; a waiter that left its
/// asynchronous window in between must wait for the signal
/// (`cancel::finish_asynchronous_window`), or glibc's handler later
/// overwrites the thread's result with `PTHREAD_CANCELED` although it took
/// the token and returned.
#[test]
fn cancelled_cond_waiter_does_not_swallow_a_signal() {
    check(&["lost-wake", "cond", "200"], &THREE);
}

#[test]
fn cancelled_sem_waiter_does_not_swallow_a_post() {
    // glibc 2.36 does lose some of these wake-ups (a waiter woken by the
    // post and then cancelled before it takes the token; glibc bug 12683),
    // so its run only counts them; the interposer must lose none.
    check_with_native_args(
        &["lost-wake", "sem", "200"],
        &["lost-wake", "sem", "100", "tolerate"],
        &THREE,
    );
}
