//! Forced unwinding out of every interposed wait: a thread
//! blocked in a wait is ended by `pthread_exit()` from a signal handler, or
//! by `pthread_cancel` with asynchronous cancellation enabled. The program
//! `tests/c/unwind.c` checks that the process lives on, the thread's
//! cleanup handler runs, `pthread_join` gets its exit value, and the object
//! keeps working for the other threads (see the program's comment).
//!
//! Each mode runs without the interposer first (glibc passing the same
//! program shows the program is right), then under `LD_PRELOAD` with three
//! policies. Two modes accept a weaker outcome from glibc only, because
//! glibc leaves an unwound waiter registered:
//!
//! - `barrier-wait`: glibc still counts the dead thread's arrival (one
//!   fresh thread fewer completes the episode) and its
//!   `pthread_barrier_destroy` would wait forever for it to leave; the
//!   interposer must undo the arrival;
//! - `rwlock-rdlock`: glibc still counts the dead reader, so the lock can
//!   never be write-locked again; the interposer must not.

mod common;

use common::{compile, native, preloaded, run_ok_within, try_run_within};
use std::time::Duration;

/// Hang detector for one run (the program's own watchdog fires at 60 s;
/// a run takes about 0.1-0.3 s).
const LIMIT: Duration = Duration::from_secs(90);

/// Policies the preloaded runs use: polling first, blocking at once,
/// polling for up to 1 ms.
const POLICIES: [&str; 3] = ["two-phase", "block", "spin"];

/// What glibc may print that the interposer must not.
const GLIBC_ONLY: [&str; 2] = [
    "barrier: the unwound waiter's arrival still counted",
    "rwlock: the unwound reader still counts as holding the lock",
];

fn check(variant: &str, mode: &str) {
    let exe = compile("unwind");
    let ok_line = format!("{variant} {mode}: ok");

    let out = run_ok_within(native(&exe).args([variant, mode]), LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&ok_line),
        "without the interposer: {stdout}"
    );

    for policy in POLICIES {
        let out = run_ok_within(
            preloaded(&exe)
                .args([variant, mode])
                .env("WAITWISE_POLICY", policy),
            LIMIT,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&ok_line), "under {policy}: {stdout}");
        for weaker in GLIBC_ONLY {
            assert!(
                !stdout.contains(weaker),
                "{variant} {mode} under {policy}: the interposer left the unwound waiter \
                 registered: {weaker}"
            );
        }
        if mode == "barrier-wait" {
            assert!(
                stdout.contains("barrier: the unwound waiter's arrival was undone"),
                "under {policy}: {stdout}"
            );
        }
    }
}

macro_rules! unwind_tests {
    ($($name:ident: $mode:literal,)*) => {
        /// Ended by `pthread_exit(value)` from a `SIGUSR1` handler.
        mod signal_handler_pthread_exit {
            $(#[test] fn $name() { super::check("signal", $mode); })*
        }
        /// Ended by `pthread_cancel` with `PTHREAD_CANCEL_ASYNCHRONOUS`.
        mod asynchronous_cancel {
            $(#[test] fn $name() { super::check("async", $mode); })*
        }
    };
}

unwind_tests! {
    mutex_lock: "mutex-lock",
    mutex_timedlock: "mutex-timedlock",
    mutex_clocklock: "mutex-clocklock",
    cond_wait: "cond-wait",
    cond_timedwait: "cond-timedwait",
    cond_clockwait: "cond-clockwait",
    sem_wait: "sem-wait",
    sem_timedwait: "sem-timedwait",
    sem_clockwait: "sem-clockwait",
    barrier_wait: "barrier-wait",
    spin_lock: "spin-lock",
    rwlock_rdlock: "rwlock-rdlock",
    rwlock_wrlock: "rwlock-wrlock",
}

/// `pthread_exit` from a signal handler that interrupts a thread at any
/// instruction of a wait, not only while it sleeps: `tests/c/exit_anywhere.c`
/// loops on 2 µs timed waits (much of the time in the wait's own code
/// between system calls) and is ended after a random delay, 3000 times.
/// The unwind must pass through every frame (a frame with landing pads
/// interrupted between its call sites would abort the process), and the
/// object must still work and be destroyed afterwards.
///
/// The native run (glibc's own objects) is the program's reference: its
/// output is checked when it finishes, but a looper that never ends there
/// is glibc's, not the interposer's, and is reported on stderr only.
/// `exit_anywhere cond 1000` hung in 3 of 30 native runs on the
/// development machine, either past the program's 10 s join ("the looper
/// ignored pthread_exit") or past [`LIMIT`]: gdb showed the looper's
/// unwind (`__condvar_cleanup_waiting`) waiting for the condition
/// variable's internal lock (`__condvar_acquire_lock`), which only an
/// earlier looper, ended while it held that lock, can have left held
/// (nothing else touches the condition variable until the end).
fn exit_anywhere(mode: &str) {
    let exe = compile("exit_anywhere");
    let want = format!("exit-anywhere {mode}: ok");
    match try_run_within(native(&exe).args([mode, "1000"]), LIMIT) {
        Ok(out) if !out.status.success() && glibc_kept_a_looper(&out) => eprintln!(
            "glibc's own objects kept a looper (not the interposer's): {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Ok(out) => {
            assert!(
                out.status.success(),
                "native run failed ({}): {out:?}",
                out.status
            );
            assert!(String::from_utf8_lossy(&out.stdout).contains(&want));
        }
        Err(hang) => eprintln!("glibc's own objects hung (not the interposer's): {hang}"),
    }
    for policy in POLICIES {
        let out = run_ok_within(
            preloaded(&exe)
                .args([mode, "3000"])
                .env("WAITWISE_POLICY", policy),
            LIMIT,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&want), "under {policy}: {stdout}");
    }
}

/// Whether a failed run of `exit_anywhere` failed because a looper never
/// ended (the program's join timed out), not for a wrong result.
fn glibc_kept_a_looper(out: &std::process::Output) -> bool {
    String::from_utf8_lossy(&out.stderr).contains("the looper ignored pthread_exit")
}

/// Also the case of a signal that lands right after the waiter count's
/// increment (where a locked instruction makes interrupts likely), before
/// the mark that tells the cleanup routine to give the count back: it made
/// `pthread_cond_destroy` wait forever.
#[test]
fn exit_from_a_signal_handler_anywhere_in_a_cond_wait() {
    exit_anywhere("cond");
}

#[test]
fn exit_from_a_signal_handler_anywhere_in_a_sem_wait() {
    exit_anywhere("sem");
}

#[test]
fn exit_from_a_signal_handler_anywhere_in_a_mutex_wait() {
    exit_anywhere("mutex");
}
