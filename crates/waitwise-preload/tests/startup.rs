//! What a program that never waits pays for the interposer at start-up:
//! no library beyond the C library and the loader is loaded with it.
//! Timing is a benchmark's business (`crates/waitwise-preload/bench`), not
//! a test's.

mod common;

use common::preload_so;
use std::process::Command;

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

/// The modules mapped into `cat` (which prints its own maps) started under
/// the interposer with `env`'s variables set.
fn maps_under_interposer(env: &[(&str, &str)]) -> Option<String> {
    let out = Command::new("cat")
        .arg("/proc/self/maps")
        .env("LD_PRELOAD", preload_so())
        .envs(env.iter().copied())
        .output()
        .ok()?;
    assert!(out.status.success(), "cat failed: {out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_profiled_process_loads_the_unwinder_before_main_and_an_unprofiled_one_does_not() {
    // A call site's capture runs right after a wait, often with the lock
    // waited for held; when that lock is the allocator's, the unwinder's
    // first load (which allocates) would lock it again. So profiling loads
    // the unwinder before `main`, on the only thread.
    let dir = std::env::temp_dir().join(format!("waitwise-startup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let profile = dir.join("profile.json");
    let Some(profiled) =
        maps_under_interposer(&[("WAITWISE_PROFILE", profile.to_str().expect("utf-8 path"))])
    else {
        eprintln!("skipped: cat cannot run here");
        return;
    };
    let plain = maps_under_interposer(&[("WAITWISE_PROFILE", "0")]).expect("cat ran once");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        profiled.contains("libgcc_s"),
        "profiled, libgcc_s is not mapped:\n{profiled}"
    );
    assert!(
        !plain.contains("libgcc_s"),
        "unprofiled, libgcc_s is mapped:\n{plain}"
    );
}
