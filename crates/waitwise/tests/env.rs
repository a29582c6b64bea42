//! The `WAITWISE_*` variables as the library sees them ([`waitwise::env`]):
//! `WAITWISE_PROFILE=1` turns profiling on, and a rejected value prints one
//! line on stderr however often the library looks at it, and its default
//! is used.
//!
//! The environment is read once per process, so each scenario runs in a
//! fresh process: this test binary runs itself with `ENV_SCENARIO` and the
//! variables set, and only that test selected.
#![cfg(not(loom))]

use std::process::{Command, Output};
use std::time::Duration;
use waitwise::env::{self, PolicyChoice, Profiling, Variable};
use waitwise::policy::{starting_block_cost, BlockCostSource};
use waitwise::profile::profiling_from_env;
use waitwise::{Event, Mechanism, Policy, SyncKind, WaitOptions};

const SCENARIO: &str = "ENV_SCENARIO";

/// Every variable this module sets, removed from the parent's environment
/// for a clean start.
const VARIABLES: [&str; 5] = [
    "WAITWISE_POLICY",
    "WAITWISE_ALPHA",
    "WAITWISE_BLOCK_NS",
    "WAITWISE_DISABLE",
    "WAITWISE_PROFILE",
];

/// Runs `test_name` in a fresh process of this binary with `vars` set, and
/// checks that it passed there; returns its output.
fn in_fresh_process(test_name: &str, vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(SCENARIO, "1");
    for var in VARIABLES {
        cmd.env_remove(var);
    }
    let out = cmd.envs(vars.iter().copied()).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{test_name} in a fresh process:\n{text}"
    );
    assert!(
        text.contains("1 passed"),
        "{test_name} did not run:\n{text}"
    );
    out
}

fn child() -> bool {
    std::env::var_os(SCENARIO).is_some()
}

/// One notified wait on an `Event` built with default options.
fn one_wait() -> Event {
    let event = Event::with_options(WaitOptions::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(1));
            event.notify();
        });
        event.wait();
    });
    event
}

#[test]
fn profile_one_turns_profiling_on() {
    if !child() {
        let out = in_fresh_process(
            "profile_one_turns_profiling_on",
            &[("WAITWISE_PROFILE", "1")],
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    assert_eq!(env::profiling(), &Profiling::On);
    assert!(profiling_from_env());
    assert!(WaitOptions::new().profiler().is_enabled());
    let profile = one_wait().wait_profile().expect("profiled by default");
    assert_eq!(profile.total_waits, 1);
    // No file: the library records, the interposer writes.
    assert!(!std::path::Path::new("1").exists());
}

#[test]
fn profile_zero_is_off_and_a_path_is_on() {
    if !child() {
        for value in ["0", "", "some/path-%p.json"] {
            in_fresh_process(
                "profile_zero_is_off_and_a_path_is_on",
                &[("WAITWISE_PROFILE", value)],
            );
        }
        return;
    }
    let value = std::env::var("WAITWISE_PROFILE").unwrap();
    let on = !(value.is_empty() || value == "0");
    assert_eq!(profiling_from_env(), on, "{value:?}");
    assert_eq!(one_wait().wait_profile().is_some(), on, "{value:?}");
}

#[test]
fn bad_values_print_one_line_each_and_keep_the_defaults() {
    let vars = [
        ("WAITWISE_POLICY", "fastest"),
        ("WAITWISE_ALPHA", "-3"),
        ("WAITWISE_BLOCK_NS", "lots"),
        ("WAITWISE_DISABLE", "foo"),
    ];
    if !child() {
        let out = in_fresh_process(
            "bad_values_print_one_line_each_and_keep_the_defaults",
            &vars,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        for (var, value) in vars {
            let lines: Vec<&str> = err.lines().filter(|l| l.contains(var)).collect();
            assert_eq!(lines.len(), 1, "one line for {var}:\n{err}");
            assert!(
                lines[0].starts_with(&format!("waitwise: {var}={value:?} rejected")),
                "{err}"
            );
            assert!(lines[0].contains("using the default"), "{err}");
        }
        assert_eq!(err.lines().count(), vars.len(), "{err}");
        return;
    }
    // Every path that reads the environment, twice.
    for _ in 0..2 {
        assert_eq!(env::policy(), PolicyChoice::TwoPhase);
        assert_eq!(
            Policy::for_kind(SyncKind::Mutex),
            Policy::fixed_alpha(SyncKind::Mutex)
        );
        assert_ne!(starting_block_cost().source, BlockCostSource::Environment);
        assert!(env::disabled().is_empty());
        let _ = Mechanism::Tpause.effective();
        assert!(!profiling_from_env());
        one_wait();
    }
    let rejected: Vec<Variable> = env::errors().iter().map(|e| e.variable).collect();
    assert_eq!(
        rejected,
        [
            Variable::Policy,
            Variable::Alpha,
            Variable::BlockNs,
            Variable::Disable
        ]
    );
}
