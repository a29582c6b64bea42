//! What a program that never waits pays for the interposer at start-up:
//! no library beyond the C library and the loader is loaded with it.
//! Timing is a benchmark's business (`crates/waitwise-preload/bench`), not
//! a test's.

mod common;

use common::preload_so;
use std::process::Command;

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
