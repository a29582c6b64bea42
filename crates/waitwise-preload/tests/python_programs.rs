//! Python's threading under the interposer. CPython's locks are
//! POSIX semaphores, and a lock acquire with a timeout is `sem_clockwait`
//! (glibc 2.30+); its GIL is a mutex and a condvar with timed waits. Each
//! script in `tests/py/` runs without the interposer and under it (three
//! policies); both runs must exit 0 and print the same lines (the scripts
//! print only deterministic results, no timings); `multiprocessing_sync.py`
//! takes its named semaphores (`sem_open`, process-shared) between
//! processes. CPython's own regression
//! tests of its threading, and of asyncio and `sched`, run under the
//! interposer too ([`cpython_threading_regression_tests`],
//! [`cpython_asyncio_and_sched_regression_tests`]).
//!
//! Needs `python3` on `PATH`, so these tests are ignored by `cargo test
//! --workspace` (which needs only Rust and a C compiler) and run with
//! `cargo test -p waitwise-preload --test python_programs -- --ignored`
//! (`.ci/run` does), where a missing `python3` is a failure.

mod common;

use common::{native, preloaded, run_within};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// Hang detector for one run (each script takes well under a second).
const LIMIT: Duration = Duration::from_secs(60);

const POLICIES: [&str; 3] = ["two-phase", "block", "spin"];

/// The Python interpreter itself: `sys.executable` of `python3` from
/// `PATH` (which may be a wrapper script, such as pyenv's shim, that
/// should not run under the interposer), or None if there is none.
fn python() -> Option<&'static Path> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = native("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output();
            match out {
                Ok(out) if out.status.success() => {
                    let exe = String::from_utf8_lossy(&out.stdout).trim().to_string();
                    (!exe.is_empty()).then(|| PathBuf::from(exe))
                }
                _ => None,
            }
        })
        .as_deref()
}

/// Runs `python -c code` or `python script` without and with the
/// interposer, and checks that the outputs agree.
fn same_output(what: &str, args: &[&std::ffi::OsStr]) {
    let Some(py) = python() else {
        panic!("{what}: python3 is not installed (not found on PATH)");
    };
    let reference = run_within(native(py).args(args), LIMIT);
    assert!(
        reference.status.success(),
        "{what} fails without the interposer ({}): the script is wrong\n{}",
        reference.status,
        String::from_utf8_lossy(&reference.stderr)
    );
    let want = String::from_utf8_lossy(&reference.stdout).into_owned();
    for policy in POLICIES {
        let out = run_within(
            preloaded(py).args(args).env("WAITWISE_POLICY", policy),
            LIMIT,
        );
        let got = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && got == want,
            "{what} under the interposer (WAITWISE_POLICY={policy}): {}\n\
             stdout:\n{got}\nexpected (without the interposer):\n{want}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn script(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(format!("{name}.py"));
    assert!(path.exists(), "{}", path.display());
    same_output(&format!("{name}.py"), &[path.as_os_str()]);
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn event_wait_with_timeout_one_liner() {
    // The report: this died with SIGABRT (rc 134) under the interposer.
    let code = "import threading; print(threading.Event().wait(0.2))";
    same_output(
        "threading.Event().wait(0.2)",
        &["-c".as_ref(), code.as_ref()],
    );
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn event_wait_timeout_and_set() {
    script("event");
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn lock_and_rlock_acquire_with_timeout() {
    script("lock");
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn condition_wait_for_with_timeout() {
    script("condition");
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn queue_producers_consumers_with_timeouts() {
    script("queue_pc");
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn thread_pool_executor() {
    script("futures");
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn semaphores_and_barrier_with_timeouts() {
    script("semaphore");
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn multiprocessing_between_processes_under_every_start_method() {
    // Named semaphores (sem_open: process-shared) between processes that
    // all run under the interposer, started by fork, spawn and a fork
    // server.
    script("multiprocessing_sync");
}

/// CPython's own regression tests of its threading (`python3 -m test`),
/// which nobody here wrote, under the interposer's default policy: threads,
/// locks with timeouts, `threading`'s conditions, events, barriers and
/// timers, queues, signals delivered to waiting threads, thread-local
/// data. Needs the interpreter's `test` package (pyenv and python.org
/// builds ship it; Debian's `python3` needs `libpython3.X-testsuite` for
/// its version 3.X, which `.ci/run` installs when it is missing).
///
/// Ignored: `test_import_from_another_thread`, which checks that
/// `threading` is not imported at start-up and fails without the
/// interposer too where a site hook imports it (pyenv's 3.11).
const CPYTHON_THREADING_SUITE: [&str; 5] = [
    "test_thread",
    "test_threading",
    "test_queue",
    "test_threadsignals",
    "test_threading_local",
];

/// CPython's regression tests of asyncio (its thread-pool executors,
/// `call_soon_threadsafe`, thread-safe futures, subprocess watchers),
/// `sched` (a scheduler shared between threads) and
/// `threadedtempfile`: about 2,400 tests, run as
/// [`CPYTHON_THREADING_SUITE`] is.
const CPYTHON_ASYNCIO_SUITE: [&str; 3] = ["test_asyncio", "test_sched", "test_threadedtempfile"];

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn cpython_threading_regression_tests() {
    regression_tests_pass(
        "threading",
        &CPYTHON_THREADING_SUITE,
        &["test_import_from_another_thread"],
    );
}

#[test]
#[ignore = "needs python3: cargo test -p waitwise-preload --test python_programs -- --ignored"]
fn cpython_asyncio_and_sched_regression_tests() {
    regression_tests_pass("asyncio and sched", &CPYTHON_ASYNCIO_SUITE, &[]);
}

/// Runs CPython's regression tests `suite` (less the tests `ignore`)
/// under the interposer's default policy; on a failure, runs them without
/// it too, to say whether the failure is ours. One suite at a time (the
/// tests of this binary run on parallel threads, and two suites at once
/// on 2 CPUs would time each other's waits).
fn regression_tests_pass(what: &str, suite: &[&str], ignore: &[&str]) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(py) = python() else {
        panic!("python3 is not installed (not found on PATH)");
    };
    let probe = run_within(
        native(py).args(["-c", "import test.libregrtest, test.test_threading"]),
        LIMIT,
    );
    assert!(
        probe.status.success(),
        "{} has no regression test package (`test`): install it (Debian: \
         apt-get install libpython3.X-testsuite, 3.X its version)\n{}",
        py.display(),
        String::from_utf8_lossy(&probe.stderr)
    );
    let args = |cmd: &mut std::process::Command| {
        use std::os::unix::process::CommandExt;
        cmd.args(["-m", "test"]).args(suite);
        for test in ignore {
            cmd.args(["--ignore", test]);
        }
        // The output of a failing test, in the failure message.
        cmd.arg("--verbose3");
        // SIGINT as a terminal would deliver it: a job that a
        // non-interactive shell starts in the background (`.ci/run &`)
        // inherits it ignored, CPython then installs no handler of its
        // own, and the tests of `_thread.interrupt_main` fail.
        // SAFETY: the closure runs in the child between fork and exec and
        // calls only `signal`, which is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
    };
    // Hang detector: each suite takes about a minute on 2 CPUs.
    let limit = Duration::from_secs(600);
    let mut cmd = preloaded(py);
    args(&mut cmd);
    let out = run_within(&mut cmd, limit);
    if !out.status.success() {
        // Whether it is ours: the same run without the interposer.
        let mut cmd = native(py);
        args(&mut cmd);
        let reference = run_within(&mut cmd, limit);
        panic!(
            "CPython's {what} tests fail under the interposer ({}); without it: {}\n\
             stdout under the interposer:\n{}\nstderr:\n{}",
            out.status,
            reference.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
