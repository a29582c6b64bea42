//! Real multi-threaded programs from Debian under the interposer: compress
//! and decompress a generated 64 MiB file with `pigz -p 4`, `xz -T4` and
//! `zstd -T4`; the round trip must be byte-identical and the
//! `WAITWISE_PROFILE` file must be written and parse.
//!
//! The tools must be installed (`apt-get install -y pigz xz-utils zstd`),
//! so these tests are ignored by `cargo test --workspace` (which needs only
//! Rust and a C compiler) and run with
//! `cargo test -p waitwise-preload --test real_programs -- --ignored`;
//! `.ci/run` installs the tools and runs them. `xz` runs at preset `-1`: the default `-6` takes
//! about a minute for 64 MiB on two cores, and the threading under test is
//! the same (smaller blocks mean more hand-offs, if anything).

mod common;

use common::{installed, preloaded, read_profile, run_ok, scratch_dir};
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

/// Size of the generated input.
const INPUT_BYTES: usize = 64 << 20;

/// A tool from `PATH`, or a failure saying how to install it.
fn tool(name: &str) -> PathBuf {
    installed(name, "pigz xz-utils zstd")
}

/// The generated input: 64 MiB of log-like lines (compressible about 8:1,
/// like real text), deterministic, generated once and kept in the
/// target's scratch directory.
fn input() -> &'static Path {
    static INPUT: OnceLock<PathBuf> = OnceLock::new();
    INPUT.get_or_init(|| {
        let path = scratch_dir().join("input-64MiB.log");
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == INPUT_BYTES as u64) {
            return path; // deterministic: an earlier run's file is the same
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut out = BufWriter::new(File::create(&tmp).expect("create input"));
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let levels = ["INFO", "INFO", "INFO", "WARN", "DEBUG"];
        let mut written = 0;
        let mut i = 0u64;
        while written < INPUT_BYTES {
            // LCG (Knuth's MMIX constants): reproducible, no dependency.
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let line = format!(
                "2024-05-{:02} {:02}:{:02}:{:02}.{:03} {} worker-{} request id={} status={} bytes={}\n",
                1 + i / 8_640_000 % 28,
                i / 360_000 % 24,
                i / 6_000 % 60,
                i / 100 % 60,
                i % 1000,
                levels[(x >> 33) as usize % levels.len()],
                (x >> 40) % 8,
                i,
                match (x >> 50) % 10 {
                    0 => 404,
                    _ => 200,
                },
                (x >> 20) % 5000
            );
            let take = line.len().min(INPUT_BYTES - written);
            out.write_all(&line.as_bytes()[..take]).expect("write input");
            written += take;
            i += 1;
        }
        out.flush().expect("flush input");
        std::fs::rename(&tmp, &path).expect("move input in place");
        path
    })
}

/// Whether two files have the same bytes (streamed: 64 MiB each).
fn same_bytes(a: &Path, b: &Path) -> bool {
    let (mut fa, mut fb) = (File::open(a).unwrap(), File::open(b).unwrap());
    if fa.metadata().unwrap().len() != fb.metadata().unwrap().len() {
        return false;
    }
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut ba).unwrap();
        if n == 0 {
            return true;
        }
        fb.read_exact(&mut bb[..n]).unwrap();
        if ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// `tool compress_args < input > packed`, `tool decompress_args < packed >
/// unpacked`, both preloaded and profiled; checks the round trip and the
/// compression's profile.
fn round_trip(name: &str, compress: &[&str], decompress: &[&str]) {
    let exe = tool(name);
    let dir = scratch_dir();
    let tag = format!("{name}-{}", std::process::id());
    let packed = dir.join(format!("{tag}.packed"));
    let unpacked = dir.join(format!("{tag}.unpacked"));
    let profile = dir.join(format!("{tag}.profile.json"));
    let _ = std::fs::remove_file(&profile);
    for (args, from, to) in [
        (compress, input(), packed.as_path()),
        (decompress, packed.as_path(), unpacked.as_path()),
    ] {
        let mut cmd = preloaded(&exe);
        cmd.args(args)
            .stdin(Stdio::from(File::open(from).unwrap()))
            .stdout(Stdio::from(File::create(to).unwrap()));
        if args == compress {
            cmd.env("WAITWISE_PROFILE", &profile);
        }
        run_ok(&mut cmd);
    }
    assert!(
        same_bytes(input(), &unpacked),
        "{name}: round trip differs from the input"
    );
    let objects = read_profile(&profile);
    assert!(
        !objects.is_empty(),
        "{name}: a 4-thread compression recorded no waits"
    );
    for f in [packed, unpacked, profile] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
#[ignore = "needs pigz, xz and zstd: cargo test -p waitwise-preload --test real_programs -- --ignored"]
fn pigz_round_trip() {
    round_trip("pigz", &["-p", "4", "-c"], &["-d", "-p", "4", "-c"]);
}

#[test]
#[ignore = "needs pigz, xz and zstd: cargo test -p waitwise-preload --test real_programs -- --ignored"]
fn xz_round_trip() {
    round_trip("xz", &["-T4", "-1", "-c"], &["-d", "-T4", "-c"]);
}

#[test]
#[ignore = "needs pigz, xz and zstd: cargo test -p waitwise-preload --test real_programs -- --ignored"]
fn zstd_round_trip() {
    round_trip("zstd", &["-T4", "-q", "-c"], &["-d", "-q", "-c"]);
}
