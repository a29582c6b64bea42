//! What a program that never waits pays for the interposer at start-up:
//! no library beyond the C library and the loader is loaded with it, its
//! constructor looks at no file but the saved machine profile's folder
//! (the cgroup and `/proc` files are read by the first contended wait),
//! and it allocates nothing (the C library's heap is not set up for it).
//! Timing is a benchmark's business (`crates/waitwise-preload/bench`), not
//! a test's.

mod common;

use common::preload_so;
use std::path::Path;
use std::process::Command;

/// The paths `strace` saw `/bin/true` look at under the interposer, with
/// `cache` as its `XDG_CACHE_HOME`; `None` when `strace` cannot run here.
fn opened_paths(cache: &Path) -> Option<Vec<String>> {
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
        .env("XDG_CACHE_HOME", cache)
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
fn an_unthreaded_program_under_the_interposer_looks_at_no_file_but_the_machine_profiles() {
    let cache = common::scratch_dir().join("startup-cache");
    let Some(paths) = opened_paths(&cache) else {
        eprintln!("skipped: strace cannot run here");
        return;
    };
    let so = preload_so();
    for path in &paths {
        let loader_reads = path == so.to_str().unwrap()
            || path.starts_with("/etc/ld.so")
            || path.contains("libc.so.6");
        let machine_profile = Path::new(path).starts_with(&cache);
        assert!(
            loader_reads || machine_profile,
            "the interposer made /bin/true look at {path:?}; every path: {paths:#?}"
        );
    }
}

/// The `brk` calls that grew the heap while `/bin/true` ran under the
/// interposer with `env` added; `None` when `strace` cannot run here.
fn heap_growth(env: &[(&str, &str)]) -> Option<Vec<String>> {
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=brk", "/bin/true"])
        .env("LD_PRELOAD", preload_so())
        .envs(env.iter().copied())
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stderr)
            .lines()
            // `brk(NULL)` asks where the heap ends; `brk(0x...)` moves it.
            .filter(|l| l.starts_with("brk(0x"))
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn an_unthreaded_program_under_the_interposer_sets_up_no_heap() {
    let cache = common::scratch_dir().join("startup-cache-heap");
    let cache = cache.to_str().unwrap();
    let Some(grown) = heap_growth(&[("XDG_CACHE_HOME", cache)]) else {
        eprintln!("skipped: strace cannot run here");
        return;
    };
    assert!(grown.is_empty(), "the heap grew at start-up: {grown:?}");
    // The check can see an allocation: a WAITWISE_* variable has the
    // constructor parse the environment, which allocates its values.
    let grown = heap_growth(&[("XDG_CACHE_HOME", cache), ("WAITWISE_POLICY", "spin")]).unwrap();
    assert!(!grown.is_empty(), "strace saw no heap growth at all");
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
