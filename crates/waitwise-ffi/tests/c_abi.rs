//! Builds `tests/c/abi_test.c` with the system C compiler against
//! `include/waitwise.h` and the library cargo just built, and runs it: once
//! linked with `libwaitwise.so`, once with `libwaitwise.a`.
//!
//! The compiler is `$CC`, else `cc`. The library is looked up next to this
//! test binary: `target/<profile>/deps/c_abi-*` means `target/<profile>/`,
//! where cargo puts `libwaitwise.{so,a}` (it builds the crate's library
//! before its integration tests).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Instant;

/// One C program at a time: its spinning policies want the CPUs to
/// themselves (cargo runs the tests of one binary in parallel).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The repository root (`include/` lives there).
fn repo_root() -> PathBuf {
    Path::new(MANIFEST_DIR).join("../..")
}

/// `target/<profile>/`, where the built libraries are.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    // target/<profile>/deps/c_abi-HASH -> target/<profile>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lies in target/<profile>/deps/")
        .to_path_buf()
}

/// The built library `name`, or a panic that says how to build it.
/// `cargo test` leaves it in `target/<profile>/deps/` (built as this
/// package's library, before the tests); `cargo build` in `target/<profile>/`.
fn built_library(name: &str) -> PathBuf {
    let deps = profile_dir().join("deps").join(name);
    let path = if deps.is_file() {
        deps
    } else {
        profile_dir().join(name)
    };
    assert!(
        path.is_file(),
        "{} does not exist: cargo builds it before this test when run as \
         `cargo test -p waitwise-ffi` (or --workspace); to build it alone: \
         `cargo build -p waitwise-ffi` (add --release for target/release)",
        path.display()
    );
    path
}

/// The directory holding the built `libwaitwise.so`.
fn library_dir() -> PathBuf {
    let lib = built_library("libwaitwise.so");
    lib.parent()
        .expect("a library path has a parent")
        .to_path_buf()
}

fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

fn show(out: &Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Compiles `tests/c/abi_test.c` to `exe` with `-Wall -Wextra -Werror`
/// plus `link_args`.
fn compile(exe: &Path, link_args: &[&str]) {
    let source = Path::new(MANIFEST_DIR).join("tests/c/abi_test.c");
    let include = repo_root().join("include");
    let mut cmd = Command::new(compiler());
    cmd.args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .arg("-o")
        .arg(exe)
        .args(link_args);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{}`: {e}", compiler()));
    assert!(out.status.success(), "{cmd:?} failed\n{}", show(&out));
}

/// Runs a built test program; returns its stdout.
fn run(exe: &Path) -> String {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let start = Instant::now();
    let out = Command::new(exe)
        .env("LD_LIBRARY_PATH", library_dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed\n{}",
        exe.display(),
        show(&out)
    );
    assert!(stdout.ends_with("all ok\n"), "{}", show(&out));
    eprintln!("{} ran in {:?}:\n{stdout}", exe.display(), start.elapsed());
    stdout
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("waitwise-ffi");
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir.join(name)
}

#[test]
fn c_program_runs_against_the_shared_library() {
    built_library("libwaitwise.so");
    let exe = scratch("abi_test_shared");
    let lib_dir = format!("-L{}", library_dir().display());
    compile(&exe, &[&lib_dir, "-lwaitwise"]);
    // The program must have resolved waitwise from the .so, not elsewhere.
    let ldd = Command::new("ldd")
        .arg(&exe)
        .env("LD_LIBRARY_PATH", library_dir())
        .output();
    if let Ok(ldd) = ldd {
        let text = String::from_utf8_lossy(&ldd.stdout);
        assert!(
            text.contains(&library_dir().join("libwaitwise.so").display().to_string()),
            "{text}"
        );
    }
    let stdout = run(&exe);
    for section in [
        "errors, policies: ok",
        "NULL handling: ok",
        "event: ok",
        "mutex: ok",
        "condvar: ok",
        "barrier: ok",
        "semaphore: ok",
        "probe: ok",
    ] {
        assert!(stdout.contains(section), "missing `{section}`:\n{stdout}");
    }
}

#[test]
fn c_program_runs_against_the_static_library() {
    let lib = built_library("libwaitwise.a");
    let exe = scratch("abi_test_static");
    let lib = lib.display().to_string();
    // The system libraries Rust's std needs (`rustc --print
    // native-static-libs` on linux-gnu).
    compile(
        &exe,
        &[
            &lib,
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ],
    );
    run(&exe);
}

/// The header alone compiles as strict C99 and as C++ (where a C++
/// compiler exists), with every warning an error.
#[test]
fn header_compiles_as_c99_and_cxx() {
    let include = repo_root().join("include");
    let probe = scratch("header_only.c");
    std::fs::write(
        &probe,
        "#include <waitwise.h>\nint main(void) { return 0; }\n",
    )
    .expect("write header probe");
    let mut c = Command::new(compiler());
    c.args([
        "-std=c99",
        "-pedantic",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-fsyntax-only",
        "-I",
    ])
    .arg(&include)
    .arg(&probe);
    let out = c.output().expect("run the C compiler");
    assert!(out.status.success(), "{c:?}\n{}", show(&out));

    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let mut cpp = Command::new(&cxx);
    cpp.args([
        "-x",
        "c++",
        "-std=c++11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-fsyntax-only",
        "-I",
    ])
    .arg(&include)
    .arg(&probe);
    match cpp.output() {
        Ok(out) => assert!(out.status.success(), "{cpp:?}\n{}", show(&out)),
        Err(e) => eprintln!("no C++ compiler `{cxx}` ({e}): C++ check skipped"),
    }
}
