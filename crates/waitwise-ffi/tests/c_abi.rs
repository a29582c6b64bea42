//! Installs the library cargo just built under a scratch prefix with
//! `install.sh`, builds `tests/c/abi_test.c` with the system C compiler
//! against it, with the flags `pkg-config` gives (explicit flags where
//! pkg-config is not installed), and runs it: once linked with
//! `libwaitwise.so` (loaded through its SONAME link `libwaitwise.so.0`),
//! once with `libwaitwise.a`.
//!
//! The compiler is `$CC`, else `cc`. The library is looked up next to this
//! test binary: `target/<profile>/deps/c_abi-*` means `target/<profile>/`,
//! where cargo puts `libwaitwise.{so,a}` (it builds the crate's library
//! before its integration tests).

mod common;
use common::built_library;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Instant;

/// One C program at a time: its spinning policies want the CPUs to
/// themselves (cargo runs the tests of one binary in parallel).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The crate's `include/` (a link to the repository's `include/`, so that
/// the packaged crate has the header too).
fn include_dir() -> PathBuf {
    Path::new(MANIFEST_DIR).join("include")
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
/// plus `flags` (which say where the header and the library are).
fn compile(exe: &Path, flags: &[&str]) {
    let source = Path::new(MANIFEST_DIR).join("tests/c/abi_test.c");
    let mut cmd = Command::new(compiler());
    cmd.args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg(&source)
        .arg("-o")
        .arg(exe)
        .args(flags);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{}`: {e}", compiler()));
    assert!(out.status.success(), "{cmd:?} failed\n{}", show(&out));
}

/// Runs a built test program with `lib_dir` as `LD_LIBRARY_PATH`; returns
/// its stdout.
fn run(exe: &Path, lib_dir: &Path) -> String {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let start = Instant::now();
    let out = Command::new(exe)
        .env("LD_LIBRARY_PATH", lib_dir)
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

/// Installs the built library under a fresh `prefix` with `install.sh`,
/// as a user would: `libwaitwise.so.VERSION` with the `.so.0` and `.so`
/// links, the archive, the header and the pkg-config files.
fn install(prefix: &Path) {
    let _ = std::fs::remove_dir_all(prefix);
    let build_dir = built_library("libwaitwise.so")
        .parent()
        .expect("a library path has a parent")
        .to_path_buf();
    // The archive lies beside the shared object (both in deps/ after
    // `cargo test`, both in target/<profile>/ after `cargo build`).
    assert!(
        build_dir.join("libwaitwise.a").is_file(),
        "{}",
        build_dir.display()
    );
    let script = Path::new(MANIFEST_DIR).join("install.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(prefix)
        .arg(&build_dir)
        .output()
        .expect("run install.sh with bash");
    assert!(out.status.success(), "install.sh failed\n{}", show(&out));
}

/// `pkg-config` `args` for the `waitwise` package installed under
/// `prefix`, split into words; `None` when pkg-config is not installed.
fn pkg_config(prefix: &Path, args: &[&str]) -> Option<Vec<String>> {
    let out = Command::new("pkg-config")
        .args(args)
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "pkg-config {args:?} failed\n{}",
        show(&out)
    );
    Some(
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn c_program_runs_against_the_installed_shared_library() {
    let prefix = scratch("prefix-shared");
    install(&prefix);
    let lib_dir = prefix.join("lib");
    let include = prefix.join("include");
    let flags = pkg_config(&prefix, &["--cflags", "--libs", "waitwise"]).unwrap_or_else(|| {
        eprintln!("pkg-config not found: linking with explicit -I/-L flags");
        vec![
            format!("-I{}", include.display()),
            format!("-L{}", lib_dir.display()),
            "-lwaitwise".to_string(),
        ]
    });
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let exe = scratch("abi_test_shared");
    compile(&exe, &flags);
    // The program names the SONAME, and the loader resolves it to the
    // installed library through the `.so.0` link.
    let ldd = Command::new("ldd")
        .arg(&exe)
        .env("LD_LIBRARY_PATH", &lib_dir)
        .output();
    if let Ok(ldd) = ldd {
        let text = String::from_utf8_lossy(&ldd.stdout);
        let want = format!(
            "libwaitwise.so.0 => {}",
            lib_dir.join("libwaitwise.so.0").display()
        );
        assert!(text.contains(&want), "no `{want}` in:\n{text}");
    }
    let stdout = run(&exe, &lib_dir);
    for section in [
        "errors, policies: ok",
        "version: ok",
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
fn c_program_runs_against_the_installed_static_library() {
    let prefix = scratch("prefix-static");
    install(&prefix);
    let exe = scratch("abi_test_static");
    let flags =
        pkg_config(&prefix, &["--cflags", "--libs", "waitwise-static"]).unwrap_or_else(|| {
            eprintln!("pkg-config not found: linking with explicit flags");
            // The system libraries Rust's std needs (`rustc --print
            // native-static-libs` on linux-gnu), as waitwise-static.pc says.
            let mut flags = vec![
                format!("-I{}", prefix.join("include").display()),
                prefix.join("lib/libwaitwise.a").display().to_string(),
            ];
            flags.extend(
                [
                    "-lgcc_s",
                    "-lutil",
                    "-lrt",
                    "-lpthread",
                    "-lm",
                    "-ldl",
                    "-lc",
                ]
                .map(String::from),
            );
            flags
        });
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    compile(&exe, &flags);
    // No libwaitwise.so on the library path: the program stands alone.
    run(&exe, &scratch("no-libraries-here"));
}

/// The header alone compiles as strict C99 and as C++ (where a C++
/// compiler exists), with every warning an error.
#[test]
fn header_compiles_as_c99_and_cxx() {
    let include = include_dir();
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
