//! `waitwise run`: a program run under the interposer keeps its standard
//! input, output and exit status, and `--profile` names the function and
//! `file:line` where its threads waited most. The C program is
//! `crates/waitwise-preload/tests/c/wait_sites.c`, built here with `-g`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The interposer built for the `waitwise` binary's profile: the newer of
/// the one `cargo build` puts beside the binary and the one `cargo test -p
/// waitwise-preload` leaves in `deps/`; built first if there is neither.
fn preload_so() -> PathBuf {
    static SO: OnceLock<PathBuf> = OnceLock::new();
    SO.get_or_init(|| {
        let dir = Path::new(env!("CARGO_BIN_EXE_waitwise")).parent().unwrap();
        let newest = [
            dir.join("libwaitwise_preload.so"),
            dir.join("deps/libwaitwise_preload.so"),
        ]
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max();
        if let Some((_, so)) = newest {
            return so;
        }
        let so = dir.join("libwaitwise_preload.so");
        {
            let profile = dir.file_name().unwrap().to_string_lossy().into_owned();
            let mut build = Command::new(env!("CARGO"));
            build.args(["build", "-p", "waitwise-preload"]);
            if profile == "release" {
                build.arg("--release");
            }
            let status = build.status().expect("run cargo build");
            assert!(
                status.success() && so.exists(),
                "cannot build {}",
                so.display()
            );
        }
        so
    })
    .clone()
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-run");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The source of the waiting program.
fn wait_sites_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../waitwise-preload/tests/c/wait_sites.c")
}

/// `wait_sites.c` built with `-g` (once per test binary).
fn wait_sites() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let exe = scratch().join(format!("wait_sites-{}", std::process::id()));
        let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
        let status = Command::new(cc)
            .args(["-O2", "-g", "-pthread", "-o"])
            .arg(&exe)
            .arg(wait_sites_source())
            .status()
            .expect("run cc");
        assert!(status.success(), "cc failed");
        exe
    })
    .clone()
}

fn waitwise_run(args: &[&str], program: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_waitwise"));
    c.arg("run")
        .arg("--preload")
        .arg(preload_so())
        .args(args)
        .arg("--")
        .args(program);
    c
}

/// The line of `wait_sites.c` that holds `needle`.
fn line_of(needle: &str) -> u32 {
    let source = std::fs::read_to_string(wait_sites_source()).unwrap();
    let index = source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in wait_sites.c"));
    index as u32 + 1
}

/// Runs `wait_sites KIND` with `--profile` and checks that the object
/// waited on most is named by `function` at the line of `call`.
fn names_the_call_site(kind: &str, function: &str, call: &str) {
    let out_dir = scratch().join(format!("profile-{kind}-{}", std::process::id()));
    let exe = wait_sites();
    let out = waitwise_run(
        &["--profile", "--out", out_dir.to_str().unwrap()],
        &[exe.as_os_str(), kind.as_ref()],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("done {kind}\n")
    );
    let site = format!("{function} (wait_sites.c:{})", line_of(call));
    let first_row = err
        .lines()
        .skip_while(|l| !l.starts_with("call_site"))
        .nth(1)
        .unwrap_or_else(|| panic!("no table row: {err}"));
    assert!(first_row.starts_with(&site), "expected {site} first: {err}");

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("waits.json")).unwrap()).unwrap();
    let first = &json["objects"][0];
    assert_eq!(first["kind"], kind, "{first}");
    assert_eq!(first["call_site"][0]["function"], function, "{first}");
    assert_eq!(first["call_site"][0]["line"], line_of(call), "{first}");
    if kind == "mutex" {
        // mutrace's figures: the mutex passed between threads while held.
        assert!(first["owner_changes"].as_u64().unwrap() > 0, "{first}");
        assert!(first["hold_ns"].as_u64().unwrap() > 0, "{first}");
    }
    let folded = std::fs::read_to_string(out_dir.join("waits.folded")).unwrap();
    assert!(
        folded
            .lines()
            .next()
            .unwrap()
            .contains(&format!(";{function};{kind}_")),
        "{folded}"
    );
    let html = std::fs::read_to_string(out_dir.join("waits.html")).unwrap();
    assert!(html.contains(function), "{html}");
}

#[test]
fn a_contended_mutex_is_named_by_its_function_and_line() {
    names_the_call_site("mutex", "contend_on_mutex", "pthread_mutex_lock(&lock)");
}

#[test]
fn a_condition_variable_is_named_by_its_function_and_line() {
    names_the_call_site("cond", "wait_for_turn", "pthread_cond_wait(&ready");
}

#[test]
fn a_barrier_is_named_by_its_function_and_line() {
    names_the_call_site("barrier", "meet_at_barrier", "pthread_barrier_wait(&step)");
}

#[test]
fn a_semaphore_is_named_by_its_function_and_line() {
    names_the_call_site("sem", "take_token", "sem_wait(&tokens)");
}

#[test]
fn every_process_of_the_program_is_reported() {
    let out_dir = scratch().join(format!("profile-two-{}", std::process::id()));
    let exe = wait_sites();
    let script = format!("{0} mutex && {0} barrier", exe.display());
    let out = waitwise_run(
        &["--profile", "--out", out_dir.to_str().unwrap()],
        &["sh".as_ref(), "-c".as_ref(), script.as_ref()],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("waits.json")).unwrap()).unwrap();
    let objects = json["objects"].as_array().unwrap();
    let pid_of = |kind: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {json}"))["pid"]
            .as_u64()
    };
    assert_ne!(pid_of("mutex"), pid_of("barrier"));
}

fn run_sh(script: &str) -> Output {
    waitwise_run(&[], &["sh".as_ref(), "-c".as_ref(), script.as_ref()])
        .output()
        .unwrap()
}

#[test]
fn the_programs_exit_status_is_passed_on() {
    assert_eq!(run_sh("exit 0").status.code(), Some(0));
    assert_eq!(run_sh("exit 7").status.code(), Some(7));
}

#[test]
fn a_program_killed_by_a_signal_gives_128_plus_the_signal() {
    assert_eq!(run_sh("kill -TERM $$").status.code(), Some(128 + 15));
}

#[test]
fn a_sigterm_to_waitwise_reaches_the_program() {
    use std::io::BufRead;
    let mut child = waitwise_run(
        &[],
        // Ends by itself after a while if the signal never comes, rather
        // than outliving a failed test.
        &[
            "sh".as_ref(),
            "-c".as_ref(),
            "trap 'exit 3' TERM; echo ready; i=0; \
             while [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; exit 9"
                .as_ref(),
        ],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    // SAFETY: kill has no memory preconditions.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    assert_eq!(child.wait().unwrap().code(), Some(3));
}

#[test]
fn standard_input_and_output_reach_the_program() {
    let mut child = waitwise_run(&[], &["cat".as_ref()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"through waitwise\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, b"through waitwise\n");
}

#[test]
fn the_program_runs_under_the_interposer_with_the_policy_asked_for() {
    let out = waitwise_run(
        &["--policy", "block"],
        &[
            "sh".as_ref(),
            "-c".as_ref(),
            "echo $LD_PRELOAD; echo $WAITWISE_POLICY".as_ref(),
        ],
    )
    .env("LD_PRELOAD", "")
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    assert!(
        lines.next().unwrap().ends_with("libwaitwise_preload.so"),
        "{stdout}"
    );
    assert_eq!(lines.next(), Some("block"));
}

#[test]
fn a_missing_interposer_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_waitwise"))
        .args([
            "run",
            "--preload",
            "/nonexistent/libwaitwise_preload.so",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no such file") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn a_program_that_changes_its_user_is_reported() {
    // A server started as root often goes on as `nobody` (memcached -u):
    // its profile must still be written. Only root can change user.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("skipped: needs root and setpriv");
        return;
    }
    let out_dir = scratch().join(format!("profile-nobody-{}", std::process::id()));
    let exe = wait_sites();
    // A checkout in a directory only its owner may enter (a `mktemp -d`)
    // keeps `nobody` from the program and the interposer alike.
    let reachable = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "test",
            "-r",
        ])
        .arg(preload_so())
        .args(["-a", "-x"])
        .arg(&exe)
        .status()
        .is_ok_and(|s| s.success());
    if !reachable {
        eprintln!("skipped: user 65534 cannot reach the build");
        return;
    }
    let out = waitwise_run(
        &["--profile", "--out", out_dir.to_str().unwrap()],
        &[
            "setpriv".as_ref(),
            "--reuid=65534".as_ref(),
            "--regid=65534".as_ref(),
            "--clear-groups".as_ref(),
            exe.as_os_str(),
            "mutex".as_ref(),
        ],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("cannot write the profile"), "{err}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("waits.json")).unwrap()).unwrap();
    assert!(
        json["objects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["kind"] == "mutex"),
        "{json}"
    );
}
