//! More programs nobody here wrote, under the interposer: GNU `sort
//! --parallel`, SQLite's multi-threaded sorter, a JVM running
//! `java.util.concurrent` (its threads park on pthread mutexes and
//! condition variables), Node.js (libuv's thread pool and worker
//! threads), Perl's ithreads (`threads::shared`'s locks and condition
//! variables), Tcl's event loop (timers and file events, through its
//! notifier thread), git's threaded grep, repack and clone, and a C++ program
//! of the standard library's waits (libstdc++ on the pthread functions,
//! `tests/cpp/stdlib_waits.cpp`).
//! Each must give the result it gives natively, and write a
//! `WAITWISE_PROFILE` that parses and holds the waits of its threads.
//!
//! `sort` comes with coreutils, and its test runs with the others of
//! `cargo test --workspace`. The other programs must be installed
//! (`apt-get install -y sqlite3 default-jdk-headless nodejs perl tcl g++ git`), so
//! their tests are ignored there and run with `cargo test -p waitwise-preload
//! --test runtimes_and_tools -- --ignored`; `.ci/run` installs the
//! programs and runs them. Each run is given a generous
//! limit as a hang detector, never as a performance bound.

mod common;

use common::{
    compile_cpp, installed, native, preloaded, read_profile, run_ok_within, scratch_dir,
    total_waits,
};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A run still going after this is reported as a hang.
const HANG_LIMIT: Duration = Duration::from_secs(300);

/// A program from `PATH`, or a failure saying how to install it.
fn program(name: &str) -> PathBuf {
    installed(name, "sqlite3 default-jdk-headless nodejs perl tcl")
}

/// A file of this test's own in the scratch directory (named per process:
/// test binaries may run at once).
fn scratch_file(name: &str) -> PathBuf {
    scratch_dir().join(format!("runtimes-{}-{name}", std::process::id()))
}

/// Runs `cmd` under the interposer with a profile; returns its stdout
/// and the profile's objects.
fn run_profiled(mut cmd: Command, tag: &str) -> (String, Vec<serde_json::Value>) {
    let profile = scratch_file(&format!("{tag}.profile.json"));
    let _ = std::fs::remove_file(&profile);
    cmd.env("WAITWISE_PROFILE", &profile);
    let out = run_ok_within(&mut cmd, HANG_LIMIT);
    let objects = read_profile(&profile);
    let _ = std::fs::remove_file(&profile);
    (String::from_utf8_lossy(&out.stdout).into_owned(), objects)
}

/// `command` preloaded (with a profile) and natively must print the same;
/// the preloaded run must have recorded waits.
fn same_output_as_natively(what: &str, args: &[&std::ffi::OsStr]) {
    let exe = program(what);
    let mut pre = preloaded(&exe);
    let mut nat = native(&exe);
    pre.args(args);
    nat.args(args);
    let (pre_out, objects) = run_profiled(pre, what);
    let nat_out = String::from_utf8_lossy(&run_ok_within(&mut nat, HANG_LIMIT).stdout).into_owned();
    assert_eq!(
        pre_out, nat_out,
        "{what}: output differs under the interposer"
    );
    assert!(
        total_waits(&objects) > 0,
        "{what}: its threads recorded no waits: {objects:?}"
    );
}

#[test]
fn sort_parallel_sorts_as_natively() {
    let input = scratch_file("numbers.txt");
    {
        let mut out = BufWriter::new(std::fs::File::create(&input).expect("create input"));
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..1_000_000 {
            // LCG (Knuth's MMIX constants): reproducible, no dependency.
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            writeln!(out, "{}", x >> 40).expect("write input");
        }
        out.flush().expect("flush input");
    }
    // The input fits the buffer: sort sorts it in memory on 4 threads,
    // which merge their parts through a shared queue (a mutex and a
    // condition variable).
    let args = ["-n", "--parallel=4", "-S", "64M"].map(std::ffi::OsStr::new);
    let mut args = args.to_vec();
    args.push(input.as_os_str());
    same_output_as_natively("sort", &args);
    let _ = std::fs::remove_file(input);
}

#[test]
#[ignore = "needs sqlite3: cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn sqlite_threaded_sorter_answers_as_natively() {
    // A fresh database per run; the sort of a million rows with four
    // sorter threads (`PRAGMA threads`).
    let sql = "PRAGMA threads = 4; PRAGMA cache_size = 200; CREATE TABLE t(a, b); \
               WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) \
               INSERT INTO t SELECT (x * 7919) % 1000003, x FROM c; \
               CREATE INDEX i ON t(a); \
               SELECT count(*), sum(a), min(b), max(b) FROM (SELECT a, b FROM t ORDER BY b DESC, a);";
    let exe = program("sqlite3");
    let mut outputs = Vec::new();
    for preload in [true, false] {
        let db = scratch_file(if preload { "pre.db" } else { "native.db" });
        let _ = std::fs::remove_file(&db);
        let mut cmd = if preload {
            preloaded(&exe)
        } else {
            native(&exe)
        };
        cmd.arg(&db).arg(sql);
        if preload {
            let (out, objects) = run_profiled(cmd, "sqlite3");
            assert!(
                total_waits(&objects) > 0,
                "sqlite3's sorter threads recorded no waits: {objects:?}"
            );
            outputs.push(out);
        } else {
            outputs.push(
                String::from_utf8_lossy(&run_ok_within(&mut cmd, HANG_LIMIT).stdout).into_owned(),
            );
        }
        let _ = std::fs::remove_file(db);
    }
    assert_eq!(
        outputs[0], outputs[1],
        "sqlite3: answer differs under the interposer"
    );
    // `PRAGMA threads` prints the limit it set.
    assert_eq!(outputs[0].trim(), "4\n1000000|500000523754|1|1000000");
}

#[test]
#[ignore = "needs a JDK (java 11 or later): cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn jvm_concurrency_utilities_and_monitors() {
    // `java File.java` compiles and runs a single source file (JDK 11+).
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/Waits.java");
    let mut cmd = preloaded(program("java"));
    cmd.arg("-Xmx256m").arg(&source);
    let (out, objects) = run_profiled(cmd, "java");
    assert!(out.ends_with("done\n"), "java did not finish:\n{out}");
    assert!(
        total_waits(&objects) > 0,
        "the JVM recorded no waits: {objects:?}"
    );
}

#[test]
#[ignore = "needs nodejs: cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn node_thread_pool_and_worker_threads() {
    script_checks_itself("node", "tests/node/waits.js");
}

#[test]
#[ignore = "needs perl (with its threads module): cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn perl_ithreads_queues_semaphores_and_timed_waits() {
    script_checks_itself("perl", "tests/perl/waits.pl");
}

#[test]
#[ignore = "needs tclsh (Tcl 8.6, threaded): cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn tcl_event_loop_timers_and_file_events() {
    // A threaded Tcl's main thread waits for its timers and file events on
    // a pthread condition variable (timed for `after`) that its notifier
    // thread signals when a pipe becomes readable.
    script_checks_itself("tclsh", "tests/tcl/events.tcl");
}

#[test]
#[ignore = "needs git: cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn git_threaded_grep_repack_and_clone() {
    // git's threaded grep (a work queue on a mutex and condition
    // variables), pack-objects' threaded delta search (threads that steal
    // work under a mutex and wait on condition variables) and index-pack's
    // threads, over a repository of 3,000 generated files in two commits.
    let git = installed("git", "git");
    let repo = scratch_file("git-src");
    let _ = std::fs::remove_dir_all(&repo);
    // git in `dir`, preloaded or not, reading no configuration of the
    // machine or the user.
    let git_in = |dir: &Path, preload: bool| {
        let mut cmd = if preload {
            preloaded(&git)
        } else {
            native(&git)
        };
        cmd.current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", scratch_dir());
        cmd
    };
    let git_native = |args: &[&str], dir: &Path| {
        let mut cmd = git_in(dir, false);
        cmd.args(args);
        String::from_utf8_lossy(&run_ok_within(&mut cmd, HANG_LIMIT).stdout).into_owned()
    };
    std::fs::create_dir_all(&repo).expect("create the repository's directory");
    git_native(&["init", "-q"], &repo);
    let words = [
        "alpha", "beta", "gamma", "delta", "wait", "futex", "spin", "block", "mutex", "cond",
    ];
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for d in 0..30 {
        let dir = repo.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).expect("create a directory");
        for f in 0..100 {
            let mut text = String::new();
            for _ in 0..60 {
                // LCG (Knuth's MMIX constants): reproducible, no dependency.
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let line: Vec<&str> = (0..8)
                    .map(|k| words[((x >> (8 * k)) % 10) as usize])
                    .collect();
                text.push_str(&line.join(" "));
                text.push('\n');
            }
            std::fs::write(dir.join(format!("f{f}.txt")), text).expect("write a file");
        }
    }
    let commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q"];
    git_native(&["add", "-A"], &repo);
    git_native(&[&commit[..], &["-m", "one"]].concat(), &repo);
    for d in 0..30 {
        let path = repo.join(format!("d{d}/f7.txt"));
        let text = std::fs::read_to_string(&path).expect("read a file");
        std::fs::write(&path, text.replace("alpha", "ALPHA")).expect("write a file");
    }
    git_native(&[&commit[..], &["-a", "-m", "two"]].concat(), &repo);
    let objects = || git_native(&["rev-list", "--objects", "--all"], &repo);
    let before = objects();

    let grep = ["grep", "--threads=4", "-c", "futex spin"];
    let mut cmd = git_in(&repo, true);
    cmd.args(grep);
    let (grepped, grep_waits) = run_profiled(cmd, "git-grep");
    assert_eq!(
        grepped,
        git_native(&grep, &repo),
        "git grep differs under the interposer"
    );
    assert_eq!(grepped.lines().count(), 2_945, "{grepped}");

    let mut cmd = git_in(&repo, true);
    cmd.args([
        "-c",
        "pack.threads=4",
        "repack",
        "-adf",
        "--window=50",
        "-q",
    ]);
    let (_, repack_waits) = run_profiled(cmd, "git-repack");
    git_native(&["fsck", "--full"], &repo);
    assert_eq!(objects(), before, "the repacked repository lost objects");
    assert!(
        total_waits(&grep_waits) + total_waits(&repack_waits) > 0,
        "git's threads recorded no waits: {grep_waits:?} {repack_waits:?}"
    );

    let clone = scratch_file("git-clone");
    let _ = std::fs::remove_dir_all(&clone);
    let mut cmd = git_in(&scratch_dir(), true);
    cmd.args(["-c", "pack.threads=4", "clone", "-q", "--no-local"])
        .arg(&repo)
        .arg(&clone);
    run_profiled(cmd, "git-clone");
    git_native(&["fsck", "--full"], &clone);
    assert_eq!(
        git_native(&["rev-parse", "HEAD"], &clone),
        git_native(&["rev-parse", "HEAD"], &repo)
    );
    let _ = std::fs::remove_dir_all(&repo);
    let _ = std::fs::remove_dir_all(&clone);
}

#[test]
#[ignore = "needs g++ (C++20): cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn cpp_standard_library_waits_under_every_policy() {
    // libstdc++'s mutexes, timed mutexes (pthread_mutex_clocklock),
    // shared mutexes (pthread_rwlock_clock*), condition variables
    // (pthread_cond_clockwait), call_once, futures, and its atomic-wait
    // barrier, latch and semaphore beside them. The program checks itself
    // (timeouts as lower bounds only) and passes natively first.
    let exe = compile_cpp(&installed("g++", "g++"), "stdlib_waits");
    let native_out = run_ok_within(&mut native(&exe), HANG_LIMIT);
    assert!(
        native_out.stdout.ends_with(b"done\n"),
        "natively: {native_out:?}"
    );
    for policy in ["two-phase", "spin", "block", "randomized"] {
        let mut cmd = preloaded(&exe);
        cmd.env("WAITWISE_POLICY", policy);
        let (out, objects) = run_profiled(cmd, &format!("cpp-{policy}"));
        assert!(out.ends_with("done\n"), "under {policy}:\n{out}");
        for kind in ["mutex", "rwlock", "cond"] {
            let waits = total_waits(objects.iter().filter(|o| o["kind"] == kind));
            assert!(waits > 0, "under {policy}: no {kind} waits in {objects:?}");
        }
    }
}

/// Runs `script` (relative to this crate) with `interpreter` under the
/// interposer: the script checks itself and prints "done" last; its
/// threads' waits must be in the profile.
fn script_checks_itself(interpreter: &str, script: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let mut cmd = preloaded(program(interpreter));
    cmd.arg(&script);
    let (out, objects) = run_profiled(cmd, interpreter);
    assert!(
        out.ends_with("done\n"),
        "{interpreter} did not finish:\n{out}"
    );
    assert!(
        total_waits(&objects) > 0,
        "{interpreter}'s threads recorded no waits: {objects:?}"
    );
}
