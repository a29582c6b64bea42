//! What the C ABI's integration tests share: where the built library is.

use std::path::{Path, PathBuf};

/// `target/<profile>/`, where the built libraries are.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    // target/<profile>/deps/TEST-HASH -> target/<profile>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lies in target/<profile>/deps/")
        .to_path_buf()
}

/// The built library `name`, or a panic that says how to build it.
/// `cargo test` leaves it in `target/<profile>/deps/` (built as this
/// package's library, before the tests); `cargo build` in `target/<profile>/`.
pub fn built_library(name: &str) -> PathBuf {
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
