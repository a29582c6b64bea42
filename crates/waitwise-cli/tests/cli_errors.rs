//! How `waitwise` ends when something is wrong, run as a user would: the
//! built binary, its exit status and its stderr (one message, never a
//! panic). Exit status: 0 success (also a reader closing stdout early), 1 a
//! failure while running, 2 a command line rejected before anything ran.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Exit status of a rejected command line.
const USAGE: i32 = 2;
/// Exit status of a failure while running.
const FAILED: i32 = 1;

fn waitwise(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_waitwise"));
    // A fixed B skips the measurement and keeps results deterministic.
    c.args(args).env("WAITWISE_BLOCK_NS", "2000");
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `args`, expects exit status `code` and no panic; returns stderr.
fn ends_with(code: i32, args: &[&str]) -> String {
    let o = waitwise(args).output().expect("run waitwise");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "waitwise {args:?}: {err}");
    assert!(
        !err.contains("panicked"),
        "waitwise {args:?} panicked: {err}"
    );
    err
}

/// Rejected before anything ran: status 2, a message with every `needle`,
/// no progress line of an experiment.
fn rejected(args: &[&str], needles: &[&str]) {
    let err = ends_with(USAGE, args);
    for n in needles {
        assert!(err.contains(n), "waitwise {args:?}: {n:?} not in {err}");
    }
    assert!(!err.contains("] 1/"), "waitwise {args:?} ran: {err}");
}

/// A fresh directory under the target tmp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_errors")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_closed_pipe_ends_quietly_with_success() {
    // `waitwise model curves --dist uniform --csv | head -1`, with the
    // reader gone before the first write: every write fails with EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    for args in [
        &["model", "curves", "--dist", "uniform", "--csv"][..],
        &["model", "curves", "--dist", "exponential"],
        &["probe", "--json"],
    ] {
        let o = waitwise(args)
            .stdout(writer.try_clone().unwrap())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} said something: {err}");
    }
}

#[test]
fn a_full_disk_is_one_message_and_status_1() {
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full");
    if full().is_err() {
        eprintln!("no /dev/full here: skipped");
        return;
    }
    for args in [
        &["probe"][..],
        &["model", "curves", "--dist", "uniform", "--csv"],
    ] {
        let o = waitwise(args)
            .stdout(Stdio::from(full().unwrap()))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(FAILED), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.contains("cannot write to standard output")
                && err.contains("No space left on device"),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn output_paths_are_checked_before_anything_runs() {
    let dir = scratch("paths");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let under_file = file.join("report");
    rejected(
        &["report", "--out", s(&under_file)],
        &["--out", "is not a directory"],
    );
    rejected(
        &["model", "calibrate", "--svg-dir", s(&under_file)],
        &["--svg-dir", "is not a directory"],
    );
    rejected(
        &["mechanisms", "--only", "spin", "--export-csv", s(&dir)],
        &["--export-csv", "is a directory"],
    );
    rejected(
        &[
            "barriers",
            "--export-json",
            s(&dir.join("no/such/dir/out.json")),
        ],
        &["--export-json", "does not exist"],
    );
    rejected(
        &["model", "curves", "--dist", "uniform", "--svg", s(&dir)],
        &["--svg", "is a directory"],
    );
    // Nothing was created on the way.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn sizes_that_would_run_for_minutes_are_refused_with_the_range() {
    rejected(
        &["model", "alpha", "--dist", "barrier:100000"],
        &["barrier:M", "2..=1024", "100000"],
    );
    rejected(
        &["model", "alpha", "--dist", "mutex:1000"],
        &["mutex:M", "2..=64", "1000"],
    );
    rejected(
        &["model", "alpha", "--dist", "erlang:100000"],
        &["erlang:R", "1..=1000"],
    );
}

#[test]
fn negative_numbers_are_read_and_refused_with_the_range() {
    for (args, range) in [
        (&["mechanisms", "--rounds", "-5"][..], "1..=100000"),
        (&["barriers", "--runs", "-1"], "1..=1000"),
        (&["wakeup-matrix", "--rounds", "-5"], "1..=1000000"),
        (&["simulate", "--processors", "-5"], "1..=16384"),
        (&["simulate", "--block-cost", "-1"], "> 0"),
        (&["oversub", "--work-us", "-5"], "(0, 1000000]"),
        (&["oversub", "--confirm-runs", "-1"], "0..=1000"),
        (&["model", "calibrate", "--rounds", "-5"], "1..=1000000"),
    ] {
        let err = ends_with(USAGE, args);
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
        assert!(err.contains(range), "{args:?}: {range:?} not in {err}");
    }
}

#[test]
fn an_only_filter_that_matches_nothing_is_an_error() {
    rejected(
        &["mechanisms", "--only", "spin", "--only", "no-such-thing"],
        &["\"no-such-thing\"", "matches no contender", "spin"],
    );
    rejected(
        &["barriers", "--only", "no-such-barrier"],
        &["matches no barrier implementation"],
    );
    rejected(
        &["asymmetry", "--only", "no-such-barrier"],
        &["matches no barrier implementation"],
    );
}

#[test]
fn help_names_the_papers_and_the_exit_status() {
    let o = waitwise(&["--help"]).output().unwrap();
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "Anastopoulos & Koziris 2008, Table 1",
        "Lim & Agarwal 1993, Tables 2-5",
        "Poenaru 2017",
        "Exit status",
    ] {
        assert!(help.contains(needle), "{needle:?} not in {help}");
    }
    assert!(!help.to_lowercase().contains("seed 0"), "{help}");
}

/// `oversub --idle-signal` and `model calibrate --idle-signal` take
/// `auto`, `idle` or `busy` only.
#[test]
fn an_unknown_idle_signal_is_refused_with_the_choices() {
    rejected(
        &["oversub", "--idle-signal", "sometimes"],
        &["--idle-signal", "auto", "idle", "busy"],
    );
    rejected(
        &["model", "calibrate", "--idle-signal", "sometimes"],
        &["--idle-signal", "auto", "idle", "busy"],
    );
}
