//! What a program that never waits pays for the interposer at start-up.
//! A program that imports none of the interposed functions (`/bin/true`,
//! `cat`) gets the shim alone: no library beyond the C library and the
//! loader, no file looked at, nothing allocated, and a library it opens
//! later waits with the C library's functions. One that imports any gets
//! the implementation loaded before `main`. Timing is a benchmark's
//! business (`crates/waitwise-preload/bench`), not a test's.

mod common;

use common::{compile, compile_with, preload_so, preloaded, run_ok, scratch_dir};
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
    // The check can see an allocation: WAITWISE_STATS has the shim load
    // the implementation, which allocates.
    let grown = heap_growth(&[("XDG_CACHE_HOME", cache), ("WAITWISE_STATS", "1")]).unwrap();
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

/// Runs `program` under the interposer and returns its stdout's lines.
fn lines_of(cmd: &mut Command) -> Vec<String> {
    let out = run_ok(cmd);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_program_that_imports_no_pthread_function_never_loads_the_implementation() {
    let Some(maps) = maps_under_interposer(&[]) else {
        eprintln!("skipped: cat cannot run here");
        return;
    };
    assert!(
        maps.contains("libwaitwise_preload.so"),
        "the shim is not mapped:\n{maps}"
    );
    assert!(
        !maps.contains("libwaitwise_interposer.so"),
        "cat, which imports no pthread function, has the implementation mapped:\n{maps}"
    );
}

#[test]
fn a_program_that_imports_one_has_the_implementation_loaded_before_main() {
    let lines = lines_of(&mut preloaded(compile("imports_a_lock")));
    assert_eq!(lines, ["mapped"]);
}

#[test]
fn waitwise_stats_loads_the_implementation_into_any_program() {
    let maps = maps_under_interposer(&[("WAITWISE_STATS", "1")]).expect("cat runs");
    assert!(maps.contains("libwaitwise_interposer.so"), "{maps}");
    let maps = maps_under_interposer(&[("WAITWISE_STATS", "0")]).expect("cat runs");
    assert!(!maps.contains("libwaitwise_interposer.so"), "{maps}");
}

#[test]
fn a_library_opened_later_by_a_program_that_imports_none_waits_with_the_c_library() {
    // Its waits (a mutex, a condition variable's timed and untimed waits,
    // a semaphore) check their results: the C library's functions, at the
    // versions a program linked today binds, are what they reach.
    let library = compile_with("late_library", &["-shared", "-fPIC"]);
    let lines = lines_of(preloaded(compile("opens_late")).arg(&library));
    assert_eq!(lines, ["not mapped", "not mapped"]);
}

#[test]
fn without_its_implementation_the_shim_says_so_and_the_program_runs_on_the_c_library() {
    let dir = scratch_dir().join(format!("shim-alone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let shim = dir.join("libwaitwise_preload.so");
    std::fs::copy(preload_so(), &shim).unwrap();
    let out = run_ok(
        Command::new(compile("imports_a_lock"))
            .env("LD_PRELOAD", &shim)
            .env_remove("LD_LIBRARY_PATH"),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "not mapped");
    assert!(
        stderr.starts_with("waitwise: cannot load ")
            && stderr.contains("libwaitwise_interposer.so")
            && stderr.contains("the program waits with the C library's functions"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// jemalloc locks its arenas with `pthread_mutex_t`s: the allocations made
/// while the shim loads the implementation take them on the C library's
/// functions, and the program's later ones on waitwise's.
#[test]
fn a_program_on_jemalloc_loads_the_implementation_and_runs() {
    let Some(jemalloc) = [
        "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
        "/usr/lib64/libjemalloc.so.2",
    ]
    .into_iter()
    .map(Path::new)
    .find(|p| p.exists()) else {
        eprintln!("skipped: libjemalloc.so.2 is not installed");
        return;
    };
    let preload = format!("{}:{}", jemalloc.display(), preload_so().display());
    for args in [&["producer-consumer"][..], &["broadcast"][..]] {
        let out = run_ok(
            Command::new(compile("cond"))
                .args(args)
                .env("LD_PRELOAD", &preload)
                .env("WAITWISE_STATS", "1"),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("waitwise: pid "),
            "{args:?}: no stats line:\n{stderr}"
        );
    }
    let out = run_ok(Command::new(compile("imports_a_lock")).env("LD_PRELOAD", &preload));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "mapped");
}

#[test]
fn a_library_constructor_that_runs_before_the_shims_has_its_call_decided_and_bound() {
    // The program depends on the library, not on the preloaded shim, so the
    // library is initialized first; its lock call makes the decision.
    let library = compile_with("early_library", &["-shared", "-fPIC"]);
    let program = compile_with(
        "uses_early_library",
        &["-Wl,--no-as-needed", library.to_str().expect("utf-8 path")],
    );
    let lines = lines_of(&mut preloaded(program));
    assert_eq!(lines, ["mapped"]);
}

/// The implementation's thread-locals are in the static TLS block: a new
/// thread has them before it touches them, so no first access inside a
/// wait allocates (module `static_tls`; a wait for an allocator's lock
/// would re-enter the allocator).
#[test]
fn a_new_thread_has_the_implementations_tls_block_before_touching_it() {
    let lines = lines_of(&mut preloaded(compile("tls_block")));
    assert_eq!(lines, ["allocated"]);
}
