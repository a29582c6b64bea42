//! More programs nobody here wrote, under the interposer: GNU `sort
//! --parallel`, SQLite's multi-threaded sorter, a JVM running
//! `java.util.concurrent` (its threads park on pthread mutexes and
//! condition variables), Node.js (libuv's thread pool and worker
//! threads), Perl's ithreads (`threads::shared`'s locks and condition
//! variables), Ruby's threads (its VM lock, mutexes, condition variables
//! and queues), OCaml 4's systhreads (its master lock, mutexes, conditions
//! and event channels), GHC's threaded runtime (bound threads, STM, safe
//! foreign calls and its collector's stops), Tcl's event loop (timers and file events, through its
//! notifier thread), headless Chromium (a browser's processes and their
//! thread pools), git's threaded grep, repack and clone, and a C++ program
//! of the standard library's waits (libstdc++ on the pthread functions,
//! `tests/cpp/stdlib_waits.cpp`), and ffmpeg (x264's and x265's encoder
//! threads, filter threads, frame-threaded decoders).
//! Each must give the result it gives natively, and write a
//! `WAITWISE_PROFILE` that parses and holds the waits of its threads.
//! Valgrind runs a program under the interposer too: its race detectors,
//! which cannot see the interposer's lock operations, must be warned
//! about, and its memcheck must run clean.
//!
//! `sort` comes with coreutils, and its test runs with the others of
//! `cargo test --workspace`. The other programs must be installed
//! (`apt-get install -y sqlite3 default-jdk-headless nodejs perl tcl ruby
//! ocaml-nox ghc chromium g++ git valgrind ffmpeg`), so
//! their tests are ignored there and run with `cargo test -p waitwise-preload
//! --test runtimes_and_tools -- --ignored`; `.ci/run` installs the
//! programs and runs them. Each run is given a generous
//! limit as a hang detector, never as a performance bound.

mod common;

use common::{
    compile, compile_cpp, installed, native, preloaded, read_profile, run_ok_within, run_within,
    scratch_dir, total_waits,
};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A run still going after this is reported as a hang.
const HANG_LIMIT: Duration = Duration::from_secs(300);

/// A program from `PATH`, or a failure saying how to install it.
fn program(name: &str) -> PathBuf {
    installed(
        name,
        "sqlite3 default-jdk-headless nodejs perl tcl ruby ocaml-nox ghc",
    )
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
    let run = |preload: bool| {
        let db = scratch_file(if preload { "pre.db" } else { "native.db" });
        let _ = std::fs::remove_file(&db);
        let mut cmd = if preload {
            preloaded(&exe)
        } else {
            native(&exe)
        };
        cmd.arg(&db).arg(sql);
        let result = if preload {
            run_profiled(cmd, "sqlite3")
        } else {
            let out = run_ok_within(&mut cmd, HANG_LIMIT);
            (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                Vec::new(),
            )
        };
        let _ = std::fs::remove_file(db);
        result
    };
    let (native_out, _) = run(false);
    // The sorter's threads meet only on SQLite's own mutexes (its memory
    // statistics' and page cache's), and whether they ever find one taken
    // is up to the scheduler: a run on a busy machine may record no wait.
    // Such a run proves nothing about the waits, so another is made; each
    // must answer as natively.
    let mut waits = 0;
    for _ in 0..5 {
        let (out, objects) = run(true);
        assert_eq!(
            out, native_out,
            "sqlite3: answer differs under the interposer"
        );
        waits = total_waits(&objects);
        if waits > 0 {
            break;
        }
    }
    assert!(
        waits > 0,
        "sqlite3's sorter threads recorded no waits in 5 runs"
    );
    // `PRAGMA threads` prints the limit it set.
    assert_eq!(native_out.trim(), "4\n1000000|500000523754|1|1000000");
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
#[ignore = "needs ruby: cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn ruby_threads_queues_and_timed_waits() {
    // Every Ruby thread takes the VM's global lock to run; it, Mutex,
    // ConditionVariable and the queues are pthread mutexes and condition
    // variables inside the interpreter.
    script_checks_itself("ruby", "tests/ruby/waits.rb");
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
#[ignore = "needs OCaml 4.x (ocaml-nox): cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn ocaml_systhreads_master_lock_mutexes_conditions_and_events() {
    // OCaml 4's runtime lets one thread run OCaml code at a time: its
    // master lock, Mutex, Condition, Thread.join and the Event module's
    // channels are pthread mutexes and condition variables inside it.
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ocaml/waits.ml");
    let dir = scratch_file("ocaml");
    std::fs::create_dir_all(&dir).expect("create the OCaml build directory");
    std::fs::copy(&source, dir.join("waits.ml")).expect("copy waits.ml");
    let exe = dir.join("waits");
    let mut build = native(program("ocamlopt"));
    build
        .current_dir(&dir)
        .args([
            "-I",
            "+threads",
            "unix.cmxa",
            "threads.cmxa",
            "waits.ml",
            "-o",
        ])
        .arg(&exe);
    run_ok_within(&mut build, HANG_LIMIT);
    compiled_program_checks_itself(&exe, &[], "ocaml");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
#[ignore = "needs GHC (ghc): cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn ghc_threaded_runtime_bound_threads_stm_and_safe_calls() {
    // GHC's threaded runtime: OS threads sleep on pthread condition
    // variables to wait for a capability, for a bound thread's MVar, after
    // a safe foreign call and while the collector stops the capabilities.
    // Run on more capabilities than this machine has CPUs, and fewer.
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/haskell/Waits.hs");
    let dir = scratch_file("ghc");
    std::fs::create_dir_all(&dir).expect("create the GHC build directory");
    let exe = dir.join("waits");
    let mut build = native(program("ghc"));
    build
        .args(["-threaded", "-O0", "-rtsopts", "-outputdir"])
        .arg(&dir)
        .arg("-o")
        .arg(&exe)
        .arg(&source);
    run_ok_within(&mut build, HANG_LIMIT);
    for capabilities in ["+RTS -N4 -RTS", "+RTS -N2 -RTS"] {
        let args: Vec<&str> = capabilities.split(' ').collect();
        compiled_program_checks_itself(&exe, &args, "ghc");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
#[ignore = "needs chromium: cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn chromium_headless_renders_as_natively_under_every_policy() {
    // Headless Chromium is a browser process, a zygote and the renderer,
    // GPU (software raster) and network-service processes it starts, each
    // with a dozen threads whose task queues and thread pools wait on
    // pthread mutexes and condition variables (base::Lock,
    // base::ConditionVariable); its renderers run under a seccomp-bpf
    // sandbox, which kills a process for a system call its policy does not
    // allow. A page draws on a canvas and writes a checksum of the
    // canvas' pixels into its DOM; the dumped DOM and a screenshot must
    // come out byte for byte as natively, under every policy, with no
    // process killed by the sandbox, and every process's profile must parse.
    use std::os::unix::process::CommandExt;
    let exe = installed("chromium", "chromium");
    let ids = unprivileged_ids();
    // A directory the browser's user can reach (the build's scratch
    // directory may sit under one it cannot), holding the page, its
    // profile directories, the profiles and a copy of the interposer.
    let dir = std::env::temp_dir().join(format!("waitwise-chromium-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the browser's directory");
    let page = dir.join("page.html");
    std::fs::write(
        &page,
        r#"<html><body style="margin:0"><canvas id="c" width="400" height="300"></canvas>
<p id="out">not run</p><script>
const c = document.getElementById('c').getContext('2d');
for (let i = 0; i < 200; i++) {
  c.fillStyle = `hsl(${(i * 7) % 360}, 70%, 50%)`;
  c.fillRect((i * 37) % 360, (i * 53) % 260, 40, 40);
}
const px = c.getImageData(0, 0, 400, 300).data;
let sum = 0;
for (let k = 0; k < px.length; k++) sum = (sum * 31 + px[k]) % 1000000007;
document.getElementById('out').textContent = 'pixels ' + sum;
</script></body></html>"#,
    )
    .expect("write the page");
    let so = common::copy_interposer_to(&dir);
    std::os::unix::fs::chown(&dir, Some(ids.0), Some(ids.1)).expect("chown the directory");
    // One headless run as the browser's user, preloaded with `policy` or
    // native (`None`): what it prints (`--dump-dom`) or the screenshot it
    // takes; `Err` with its output when it fails.
    let run = |policy: Option<&str>, sandbox: bool, dump: bool| -> Result<Vec<u8>, String> {
        let tag = policy.unwrap_or("native");
        let shot = dir.join(format!("{tag}.png"));
        let mut cmd = native(&exe);
        cmd.uid(ids.0).gid(ids.1).env("HOME", &dir);
        if let Some(p) = policy {
            cmd.env("LD_PRELOAD", &so)
                .env("WAITWISE_POLICY", p)
                .env("WAITWISE_PROFILE", dir.join(format!("{tag}-%p.json")));
        }
        cmd.arg("--headless")
            .arg("--disable-gpu")
            .arg(format!("--user-data-dir={}", dir.join(tag).display()))
            .arg("--window-size=400,360");
        if !sandbox {
            cmd.arg("--no-sandbox");
        }
        if dump {
            cmd.arg("--dump-dom");
        } else {
            cmd.arg(format!("--screenshot={}", shot.display()));
        }
        cmd.arg(format!("file://{}", page.display()));
        let out = run_within(&mut cmd, HANG_LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            return Err(format!("{cmd:?} failed ({}):\n{stderr}", out.status));
        }
        // A child process the sandbox killed (the browser may still finish):
        // under the interposer, a system call the process would not make
        // natively, such as glibc asking about a stale thread id.
        if policy.is_some() && stderr.contains("seccomp-bpf failure") {
            return Err(format!(
                "{cmd:?}: the sandbox killed a child process:\n{stderr}"
            ));
        }
        if dump {
            Ok(out.stdout)
        } else {
            std::fs::read(&shot).map_err(|e| format!("chromium ({tag}) wrote no screenshot: {e}"))
        }
    };
    // The sandbox needs user namespaces (or its setuid helper); where the
    // machine refuses them natively, the runs go without it.
    let sandbox = match run(None, true, true) {
        Ok(_) => true,
        Err(why) => {
            eprintln!("chromium's sandbox does not start here, running without it: {why}");
            false
        }
    };
    let render = |policy: Option<&str>| -> (String, Vec<u8>) {
        let ok = |r: Result<Vec<u8>, String>| r.unwrap_or_else(|why| panic!("{why}"));
        let dom = String::from_utf8_lossy(&ok(run(policy, sandbox, true))).into_owned();
        (dom, ok(run(policy, sandbox, false)))
    };
    let (dom, png) = render(None);
    assert!(
        dom.contains("<p id=\"out\">pixels "),
        "the page's script did not run natively:\n{dom}"
    );
    for policy in ["two-phase", "spin", "block", "randomized"] {
        let (pre_dom, pre_png) = render(Some(policy));
        assert_eq!(
            pre_dom, dom,
            "{policy}: the DOM differs under the interposer"
        );
        assert!(
            pre_png == png,
            "{policy}: the screenshot differs under the interposer"
        );
        let mut profiles = 0;
        let mut waits = 0;
        for entry in std::fs::read_dir(&dir).expect("list the browser's directory") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with(&format!("{policy}-")) && name.ends_with(".json") {
                profiles += 1;
                waits += total_waits(&read_profile(&path));
            }
        }
        assert!(
            profiles >= 2,
            "{policy}: {profiles} process profiles, expected the browser's and its children's"
        );
        assert!(waits > 0, "{policy}: Chromium's threads recorded no waits");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The user and group that run the browser: `nobody` (65534) when this
/// test runs as root (Chromium's sandbox refuses root), else this
/// process's own.
fn unprivileged_ids() -> (u32, u32) {
    // SAFETY: geteuid and getegid take no arguments and cannot fail.
    unsafe {
        if libc::geteuid() != 0 {
            return (libc::geteuid(), libc::getegid());
        }
    }
    (65534, 65534)
}

#[test]
#[ignore = "needs valgrind: cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn valgrind_race_detectors_are_warned_about_and_memcheck_runs() {
    // Helgrind and DRD wrap the C library's pthread functions by its
    // soname and never see the interposer's, so the interposer says so at
    // load; Memcheck tracks no synchronization: no warning, and a program
    // of condition-variable waits runs clean under it.
    let valgrind = installed("valgrind", "valgrind");
    let binding = compile("binding");
    for (tool, name) in [("helgrind", "Helgrind"), ("drd", "DRD")] {
        let mut cmd = preloaded(&valgrind);
        cmd.args(["-q", &format!("--tool={tool}")]).arg(&binding);
        let out = run_within(&mut cmd, HANG_LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warnings: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("waitwise:"))
            .collect();
        assert!(
            warnings.len() == 1
                && warnings[0].contains(&format!("Valgrind's {name} wraps only"))
                && warnings[0].contains("without LD_PRELOAD"),
            "{tool}: expected the one warning, got {warnings:?}:\n{stderr}"
        );
    }
    let mut cmd = preloaded(&valgrind);
    cmd.args(["-q", "--error-exitcode=9"])
        .arg(compile("cond"))
        .arg("producer-consumer");
    let out = run_ok_within(&mut cmd, HANG_LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("waitwise:"),
        "memcheck: a warning:\n{stderr}"
    );
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

#[test]
#[ignore = "needs ffmpeg: cargo test -p waitwise-preload --test runtimes_and_tools -- --ignored"]
fn ffmpeg_encodes_and_decodes_as_natively_under_every_policy() {
    // x264's frame threads and x265's thread pools encode a generated clip
    // scaled on filter threads; ffmpeg's frame-threaded decoders decode it
    // (a frame's thread waits on condition variables for the progress of
    // the frames it refers to). x264 is deterministic for given settings,
    // so its file must be byte-identical to the native run's. x265 is not
    // (natively, under load, 2 of 16 runs wrote other bytes), so its file
    // must decode, under the interposer, to the frames it decodes to
    // natively: all of them, every frame's MD5 the same.
    let ffmpeg = installed("ffmpeg", "ffmpeg");
    let quiet = ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"];
    let source = [
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=640x360:rate=30:duration=4",
        "-filter_threads",
        "4",
        "-vf",
        "scale=480:270",
    ];
    // (name, encoder options, whether its output is deterministic)
    let codecs: [(&str, &[&str], bool); 2] = [
        (
            "h264",
            &["-c:v", "libx264", "-threads", "4", "-preset", "veryfast"],
            true,
        ),
        (
            "hevc",
            &[
                "-c:v",
                "libx265",
                "-x265-params",
                "log-level=error:pools=4:frame-threads=3",
                "-preset",
                "fast",
            ],
            false,
        ),
    ];
    let encode = |mut cmd: Command, codec: &[&str], file: &Path| {
        cmd.args(quiet).args(source).args(codec).arg(file);
        cmd
    };
    let decode = |mut cmd: Command, file: &Path| {
        cmd.args(quiet)
            .args(["-threads", "4", "-thread_type", "frame", "-i"])
            .arg(file)
            .args(["-f", "framemd5", "-"]);
        cmd
    };
    // The frames `file` decodes to natively, all 120 of them.
    let native_frames = |file: &Path, tag: &str| {
        let frames = String::from_utf8_lossy(
            &run_ok_within(&mut decode(native(&ffmpeg), file), HANG_LIMIT).stdout,
        )
        .into_owned();
        let count = frames.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(count, 120, "{tag}: natively decoded frames:\n{frames}");
        frames
    };
    for (name, codec, deterministic) in codecs {
        let native_file = scratch_file(&format!("ffmpeg-{name}.mp4"));
        run_ok_within(
            &mut encode(native(&ffmpeg), codec, &native_file),
            HANG_LIMIT,
        );
        let native_bytes = std::fs::read(&native_file).expect("the native encode");
        let native_decode = native_frames(&native_file, name);
        for policy in ["two-phase", "spin", "block", "randomized"] {
            let tag = format!("ffmpeg-{name}-{policy}");
            let file = scratch_file(&format!("{tag}.mp4"));
            let mut cmd = preloaded(&ffmpeg);
            cmd.env("WAITWISE_POLICY", policy);
            let (_, encoder) = run_profiled(encode(cmd, codec, &file), &tag);
            let expected = if deterministic {
                assert!(
                    std::fs::read(&file).expect("the encode") == native_bytes,
                    "{tag}: the encoded file differs from the native one"
                );
                native_decode.clone()
            } else {
                native_frames(&file, &tag)
            };
            let mut cmd = preloaded(&ffmpeg);
            cmd.env("WAITWISE_POLICY", policy);
            let (frames, decoder) = run_profiled(decode(cmd, &file), &format!("{tag}-decode"));
            assert_eq!(frames, expected, "{tag}: decoded frames differ");
            for (what, objects) in [("encoder", &encoder), ("decoder", &decoder)] {
                let waits = total_waits(objects.iter().filter(|o| o["kind"] == "cond"));
                assert!(
                    waits > 0,
                    "{tag}: the {what}'s threads recorded no cond waits"
                );
            }
            let _ = std::fs::remove_file(&file);
        }
        let _ = std::fs::remove_file(&native_file);
    }
}

/// Runs `exe` (built for this test) with `args` under the interposer: it
/// checks itself and prints "done" last; its threads' waits must be in
/// the profile.
fn compiled_program_checks_itself(exe: &Path, args: &[&str], tag: &str) {
    let mut cmd = preloaded(exe);
    cmd.args(args);
    let (out, objects) = run_profiled(cmd, tag);
    assert!(out.ends_with("done\n"), "{tag}: did not finish:\n{out}");
    for kind in ["mutex", "cond"] {
        let waits = total_waits(objects.iter().filter(|o| o["kind"] == kind));
        assert!(waits > 0, "{tag}: no {kind} waits in {objects:?}");
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
