//! Python's threading under the interposer (issue 12). CPython's locks are
//! POSIX semaphores, and a lock acquire with a timeout is `sem_clockwait`
//! (glibc 2.30+); its GIL is a mutex and a condvar with timed waits. Each
//! script in `tests/py/` runs without the interposer and under it (three
//! policies); both runs must exit 0 and print the same lines (the scripts
//! print only deterministic results, no timings).
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
