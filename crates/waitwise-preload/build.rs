//! Builds the two objects of the interposer:
//!
//! - `libwaitwise_interposer.so`, this crate (its link options below);
//! - `libwaitwise_preload.so`, the object a program preloads: the C shim
//!   `shim/preload.c`, compiled here with the system C compiler (`CC`, else
//!   `cc`) and put beside the crate's own outputs, in `target/<profile>/`
//!   and `target/<profile>/deps/`, where the shim looks for the
//!   implementation and the tests and `waitwise run` look for the shim.
use std::path::{Path, PathBuf};
use std::process::Command;

const SHIM_SOURCE: &str = "shim/preload.c";
const SHIM_FILE: &str = "libwaitwise_preload.so";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={SHIM_SOURCE}");
    println!("cargo:rerun-if-env-changed=CC");
    // Three loadable segments instead of four (the read-only data in the executable one): the
    // loader maps and protects fewer regions in every process that loads it.
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-rosegment");
    // Its own functions' addresses are its own: the addresses it hands the
    // shim must not bind to the shim's entry points of the same names.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if target_os != "linux" || target_arch != "x86_64" {
        // The shim's entry points are x86-64 assembly.
        return;
    }
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let shim = out_dir.join(SHIM_FILE);
    compile_shim(&shim);
    // OUT_DIR is target/<profile>/build/<package>-<hash>/out.
    let profile_dir = out_dir
        .ancestors()
        .nth(3)
        .expect("OUT_DIR under target/<profile>/build/");
    for dir in [profile_dir.to_path_buf(), profile_dir.join("deps")] {
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        let to = dir.join(SHIM_FILE);
        // Replaced by a rename, so a process that has the old file mapped
        // keeps it intact.
        let partial = dir.join(format!("{SHIM_FILE}.partial"));
        std::fs::copy(&shim, &partial)
            .and_then(|_| std::fs::rename(&partial, &to))
            .unwrap_or_else(|e| panic!("copy {} to {}: {e}", shim.display(), to.display()));
    }
}

fn compile_shim(output: &Path) {
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let status = Command::new(&cc)
        .args([
            "-std=gnu11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-shared",
            "-fPIC",
            // Its few imports bound at their first call, not at load: a
            // process that never waits calls none of them.
            "-Wl,-z,lazy",
            // Code and read-only data in one segment: the page fault that
            // maps the constructor's code maps the names it compares too
            // (two segments instead of four; about 5 us less per process
            // start when page faults are slow).
            "-Wl,-z,noseparate-code",
            "-o",
        ])
        .arg(output)
        .arg(SHIM_SOURCE)
        // dlopen and dlsym are in libc from glibc 2.34 on, in libdl
        // before: only a glibc that needs libdl records it.
        .args(["-Wl,--as-needed", "-ldl"])
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run the C compiler {cc:?} to build {SHIM_FILE}: {e} \
                 (install gcc or clang, or set CC)"
            )
        });
    assert!(
        status.success(),
        "{cc:?} failed to compile {SHIM_SOURCE} ({status})"
    );
}
