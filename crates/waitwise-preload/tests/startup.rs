//! What a program that never waits pays for the interposer at start-up:
//! no library beyond the C library and the loader is loaded with it, and
//! its constructor opens no file (the machine profile, cgroup and `/proc`
//! files are read by the first contended wait). Timing is a benchmark's
//! business (`crates/waitwise-preload/bench`), not a test's.

mod common;

use common::preload_so;
use std::process::Command;

/// The paths `strace` saw `/bin/true` open under the interposer; `None`
/// when `strace` cannot run here.
fn opened_paths() -> Option<Vec<String>> {
    let log = common::scratch_dir().join(format!("startup-strace-{}.log", std::process::id()));
    let status = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=open,openat,openat2,stat,statx,newfstatat,readlink,access",
            "-o",
        ])
        .arg(&log)
        .arg("/bin/true")
        .env("LD_PRELOAD", preload_so())
        // cargo's library path would have the loader search its folders.
        .env_remove("LD_LIBRARY_PATH")
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let text = std::fs::read_to_string(&log).ok()?;
    let _ = std::fs::remove_file(&log);
    Some(
        text.lines()
            .filter_map(|l| l.split('"').nth(1).map(str::to_string))
            // `newfstatat(fd, "")`: the file just opened.
            .filter(|p| !p.is_empty())
            .collect(),
    )
}

#[test]
fn an_unthreaded_program_under_the_interposer_opens_no_file_of_its_own() {
    let Some(paths) = opened_paths() else {
        eprintln!("skipped: strace cannot run here");
        return;
    };
    let so = preload_so();
    for path in &paths {
        let loader_reads = path == so.to_str().unwrap()
            || path.starts_with("/etc/ld.so")
            || path.contains("libc.so.6");
        assert!(
            loader_reads,
            "the interposer made /bin/true look at {path:?}; every path: {paths:#?}"
        );
    }
}

#[test]
fn the_interposer_needs_no_library_beyond_libc_and_the_loader() {
    let Ok(out) = Command::new("readelf").arg("-d").arg(preload_so()).output() else {
        eprintln!("skipped: readelf cannot run here");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let needed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    assert!(!needed.is_empty(), "no NEEDED entries read: {text}");
    for lib in &needed {
        assert!(
            lib.starts_with("libc.so") || lib.starts_with("ld-linux"),
            "load-time dependency {lib}; all: {needed:?}"
        );
    }
}
