//! `WAITWISE_STATS=1`: one line on stderr at exit that says the
//! interposer is active and what it saw.

mod common;

use common::{compile, preload_so};
use std::process::Command;

fn stats_line(program: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .env("LD_PRELOAD", preload_so())
        .env("WAITWISE_STATS", "1")
        .output()
        .expect("run the program");
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("waitwise: pid"))
        .collect();
    assert_eq!(lines.len(), 1, "one stats line expected: {err}");
    lines[0].to_string()
}

#[test]
fn an_unthreaded_program_reports_no_waits() {
    let line = stats_line(std::path::Path::new("/bin/true"), &[]);
    assert!(line.contains("0 objects waited on, 0 waits"), "{line}");
}

#[test]
fn a_contended_barrier_is_counted() {
    // Every arrival but the last of each round waits: 3 threads of 4 over
    // 2000 rounds.
    let line = stats_line(&compile("wait_sites"), &["barrier"]);
    assert!(line.contains("1 objects waited on"), "{line}");
    let waits: u64 = line
        .split(", ")
        .find_map(|part| part.strip_suffix(" waits")?.parse().ok())
        .unwrap_or_else(|| panic!("no wait count in {line}"));
    assert!(waits >= 3 * 2000, "{line}");
}

#[test]
fn without_the_variable_nothing_is_printed() {
    let out = Command::new("/bin/true")
        .env("LD_PRELOAD", preload_so())
        .env_remove("WAITWISE_STATS")
        .output()
        .unwrap();
    assert!(out.stderr.is_empty(), "{out:?}");
}
