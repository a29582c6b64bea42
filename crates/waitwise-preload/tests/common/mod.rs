//! Shared by the interposer's integration tests: find the built
//! `libwaitwise_preload.so`, compile the C programs under `tests/c/` with
//! the system `cc` (and the C++ ones under `tests/cpp/`), and run programs
//! under `LD_PRELOAD`.

#![allow(dead_code)] // each test binary uses a different subset

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// The interposer built for this test run. `cargo test` builds the
/// library (cdylib + rlib) before the integration tests, into
/// `target/<profile>/deps/` next to this test binary; `cargo build` uplifts
/// it to `target/<profile>/`, which is the fallback.
pub fn preload_so() -> PathBuf {
    static SO: OnceLock<PathBuf> = OnceLock::new();
    SO.get_or_init(|| {
        let exe = std::env::current_exe().expect("test binary path");
        let deps = exe.parent().expect("test binary in target/<profile>/deps");
        let candidates = [
            deps.join("libwaitwise_preload.so"),
            deps.parent()
                .map(|p| p.join("libwaitwise_preload.so"))
                .unwrap_or_default(),
        ];
        candidates
            .iter()
            .find(|p| p.exists())
            .unwrap_or_else(|| {
                panic!(
                    "libwaitwise_preload.so not found at {candidates:?}: build it with \
                     `cargo build -p waitwise-preload`"
                )
            })
            .clone()
    })
    .clone()
}

/// Copies the interposer into `dir` (the shim and the implementation it
/// loads from beside itself) and returns the shim's path there.
pub fn copy_interposer_to(dir: &Path) -> PathBuf {
    let shim = preload_so();
    for file in ["libwaitwise_preload.so", "libwaitwise_interposer.so"] {
        std::fs::copy(shim.with_file_name(file), dir.join(file))
            .unwrap_or_else(|e| panic!("copy {file} to {}: {e}", dir.display()));
    }
    dir.join("libwaitwise_preload.so")
}

/// Where compiled C programs and scratch files go.
pub fn scratch_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("waitwise-preload");
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compiles `tests/c/<name>.c` (once per test binary) with the system C
/// compiler (`CC`, else `cc`), warnings as errors, and returns the
/// executable.
pub fn compile(name: &str) -> PathBuf {
    compile_with(name, &[])
}

/// [`compile`] with more compiler `flags` (a sanitizer's, say), into an
/// executable of its own.
pub fn compile_with(name: &str, flags: &[&str]) -> PathBuf {
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    build(&cc, &format!("c/{name}.c"), flags, &["-ldl"])
}

/// Compiles `tests/cpp/<name>.cpp` (once per test binary) as C++20 with
/// `cxx`, warnings as errors, and returns the executable.
pub fn compile_cpp(cxx: &Path, name: &str) -> PathBuf {
    build(
        cxx.as_os_str(),
        &format!("cpp/{name}.cpp"),
        &["-std=c++20"],
        &[],
    )
}

/// Compiles `tests/<source>` with `compiler` (`-O2 -g -Wall -Wextra
/// -Werror -pthread`, `flags` before the source, `libs` after it), once
/// per test binary.
///
/// Compiles run one at a time under a lock: tests of one binary run on
/// parallel threads, and two that compiled the same program at once raced
/// on its temporary file (one's rename found it gone, the other exec'd the
/// program while the second compiler still held it open: `ETXTBSY`).
fn build(compiler: &std::ffi::OsStr, source: &str, flags: &[&str], libs: &[&str]) -> PathBuf {
    static COMPILED: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut compiled = COMPILED
        .get_or_init(Default::default)
        .lock()
        // A test that panicked while compiling leaves the map as it was.
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // One executable per source and flags.
    let key = format!("{source} {}", flags.join(" "));
    if let Some(exe) = compiled.get(&key) {
        return exe.clone();
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(source);
    let stem = src
        .file_stem()
        .expect("a source file name")
        .to_string_lossy();
    let tag: String = flags
        .concat()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let exe = scratch_dir().join(format!("{stem}{tag}-{}", std::process::id()));
    let tmp = exe.with_extension("tmp");
    let out = Command::new(compiler)
        .args(flags)
        .args(["-O2", "-g", "-Wall", "-Wextra", "-Werror", "-pthread", "-o"])
        .arg(&tmp)
        .arg(&src)
        .args(libs)
        .output()
        .unwrap_or_else(|e| panic!("run the compiler {compiler:?}: {e}"));
    assert!(
        out.status.success(),
        "{compiler:?} failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&tmp, &exe).expect("move compiled program");
    compiled.insert(key, exe.clone());
    exe
}

/// A command for `program` running under the interposer.
pub fn preloaded(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("LD_PRELOAD", preload_so());
    // Tests set these explicitly where they matter.
    for var in [
        "WAITWISE_POLICY",
        "WAITWISE_ALPHA",
        "WAITWISE_BLOCK_NS",
        "WAITWISE_DISABLE",
        "WAITWISE_PROFILE",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `cmd`, asserting success; returns its output.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Reads and parses a `WAITWISE_PROFILE` file, checking its shape; returns
/// the `objects` array.
pub fn read_profile(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("profile {} not written: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("profile {} is not JSON: {e}\n{text}", path.display()));
    let objects = json["objects"]
        .as_array()
        .unwrap_or_else(|| panic!("no \"objects\" array in {text}"))
        .clone();
    for o in &objects {
        let kind = o["kind"].as_str().expect("kind");
        assert!(
            ["mutex", "rwlock", "cond", "barrier", "sem", "spin"].contains(&kind),
            "{o}"
        );
        assert!(o["address"].as_str().is_some(), "{o}");
        let buckets = o["buckets"].as_array().expect("buckets");
        let sum: u64 = buckets.iter().map(|b| b.as_u64().expect("count")).sum();
        assert_eq!(Some(sum), o["total_waits"].as_u64(), "{o}");
        assert!(o["blocks"].as_u64().expect("blocks") <= sum, "{o}");
    }
    // The model's reader accepts it too.
    waitwise_model::fit::WaitProfile::from_json(&text).expect("waitwise model reads the profile");
    objects
}

/// Total waits recorded over profile objects (as [`read_profile`] returns
/// them, or any selection of them).
pub fn total_waits<'a>(objects: impl IntoIterator<Item = &'a serde_json::Value>) -> u64 {
    objects
        .into_iter()
        .map(|o| o["total_waits"].as_u64().expect("total_waits"))
        .sum()
}

/// A command for `program` running without the interposer (on glibc's own
/// functions): the same environment as [`preloaded`] less `LD_PRELOAD`.
pub fn native(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = preloaded(program);
    cmd.env_remove("LD_PRELOAD");
    cmd
}

/// Runs `cmd` with its output captured; a run still going after `limit` is
/// killed and reported (a hang detector: set it well above the normal run
/// time, never as a performance bound). Returns the output, success or not.
pub fn run_within(cmd: &mut Command, limit: std::time::Duration) -> Output {
    try_run_within(cmd, limit).unwrap_or_else(|hang| panic!("{hang}"))
}

/// [`run_within`], returning a hang (the command, the limit and what it
/// printed) as an error instead of failing.
pub fn try_run_within(cmd: &mut Command, limit: std::time::Duration) -> Result<Output, String> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    // Drained on threads: a child filling a pipe must not stall.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let out = stdout.join().unwrap_or_default();
            let err = stderr.join().unwrap_or_default();
            return Err(format!(
                "{cmd:?} hung: killed after {limit:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&err)
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Ok(Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    })
}

/// [`run_within`], asserting success.
pub fn run_ok_within(cmd: &mut Command, limit: std::time::Duration) -> Output {
    let out = run_within(cmd, limit);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A program from `PATH`, or a failure that names it and says how to
/// install it (`install`: the packages, for `apt-get install -y`).
pub fn installed(name: &str, install: &str) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "`{name}` is not installed: run `apt-get install -y {install}` (as root) \
                 to run the tests that need it"
            )
        })
}

/// Makes a FIFO (named pipe) at `path`, mode 0600.
pub fn make_fifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("a path without NUL");
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(
        rc,
        0,
        "mkfifo {}: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
}
