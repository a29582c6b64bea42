//! The C library stays a library: `waitwise-ffi` depends on the library
//! layers (platform, core) and never on the tools on top, so linking
//! `libwaitwise` does not pull in the measurement crate, its plotting and
//! statistics crates, the model, or the contenders it measures against.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Crates that must not be among `waitwise-ffi`'s normal dependencies,
/// direct or indirect, each with the reason.
const FORBIDDEN: &[(&str, &str)] = &[
    (
        "waitwise-bench",
        "the measurement tools are a layer above the C ABI",
    ),
    ("plotters", "charts belong to the measurement tools"),
    ("parking_lot", "a contender the benchmarks measure against"),
    (
        "waitwise-model",
        "the cost model is a tool, not a library layer",
    ),
];

/// The names of every crate in `cargo tree -p waitwise-ffi -e normal`.
fn normal_dependencies() -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let mut cmd = Command::new(cargo);
    cmd.args([
        "tree",
        "-p",
        "waitwise-ffi",
        "-e",
        "normal",
        "--prefix",
        "none",
    ])
    .arg("--manifest-path")
    .arg(&manifest);
    let out = cmd.output().expect("run cargo tree");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).expect("cargo tree prints UTF-8");
    // Each line is `name vX.Y.Z [(path)] [(*)]`.
    tree.lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn ffi_does_not_depend_on_the_tools() {
    let deps = normal_dependencies();
    assert!(
        deps.contains("waitwise"),
        "cargo tree lists the core crate: {deps:?}"
    );
    for (name, why) in FORBIDDEN {
        assert!(
            !deps.contains(*name),
            "waitwise-ffi depends on {name} ({why}); dependencies: {deps:?}"
        );
    }
}
