//! `fork()` during a process's first timed waits: anything those
//! waits initialize lazily (a clock calibration, a `Once`) may be half done
//! at the fork, and the child, which has only the forking thread, must not
//! wait for it forever. `tests/c/fork.c` runs hundreds of fresh processes
//! that fork at a random moment (0-20 ms after starting threads that make
//! timed waits and threads that block); each child makes timed waits,
//! locks a mutex, signals a condvar and meets a thread at a barrier, and
//! must exit within 5 s (a hang detector: it takes about a millisecond).
//!
//! The seeds are fixed (iteration i uses seed FIRST + i), so a failure
//! names a seed to rerun with `fork one SEED`.

mod common;

use common::{compile, native, preloaded, run_ok_within};
use std::time::Duration;

/// Hang detector for a whole run (the program reports a hung child after
/// 5 s and a hung process after 30 s itself).
const LIMIT: Duration = Duration::from_secs(180);

fn fork_iterations(preload: Option<&str>, iterations: u32, first_seed: u32) {
    let exe = compile("fork");
    let (iterations, first_seed) = (iterations.to_string(), first_seed.to_string());
    let mut cmd = match preload {
        Some(policy) => {
            let mut cmd = preloaded(&exe);
            cmd.env("WAITWISE_POLICY", policy);
            cmd
        }
        None => native(&exe),
    };
    let out = run_ok_within(cmd.args([&iterations, &first_seed]), LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("fork: {iterations} iterations ok")),
        "{stdout}"
    );
}

#[test]
fn glibc_children_forked_during_first_timed_waits_run() {
    fork_iterations(None, 150, 1);
}

#[test]
fn children_forked_during_first_timed_waits_run() {
    fork_iterations(Some("two-phase"), 300, 1);
}

#[test]
fn children_forked_during_first_timed_waits_run_spin_policy() {
    fork_iterations(Some("spin"), 100, 1001);
}
