//! The library's version and SONAME agree everywhere they are written:
//! the crate's version (`Cargo.toml`), the constants of `src/version.rs`
//! and what `waitwise_version()` returns, the macros of
//! `include/waitwise.h`, and the SONAME that `build.rs` gives
//! `libwaitwise.so` (read from its ELF dynamic section, and with
//! `readelf -d` too where readelf is installed).

mod common;
use common::built_library;
use std::ffi::CStr;
use std::path::Path;
use std::process::Command;
use waitwise::version::{
    waitwise_version, waitwise_version_number, WAITWISE_ABI_VERSION, WAITWISE_VERSION_MAJOR,
    WAITWISE_VERSION_MINOR, WAITWISE_VERSION_NUMBER, WAITWISE_VERSION_PATCH,
};

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn number(text: &str) -> u32 {
    text.parse()
        .unwrap_or_else(|_| panic!("`{text}` is not a number"))
}

/// The value of `#define NAME value` in the header.
fn header_define(name: &str) -> String {
    let path = Path::new(MANIFEST_DIR).join("include/waitwise.h");
    let header = std::fs::read_to_string(&path).expect("read include/waitwise.h");
    header
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#define "))
        .filter_map(|l| l.split_once(char::is_whitespace))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| panic!("no #define {name} in {}", path.display()))
}

#[test]
fn rust_constants_are_the_crate_version() {
    assert_eq!(
        WAITWISE_VERSION_MAJOR,
        number(env!("CARGO_PKG_VERSION_MAJOR"))
    );
    assert_eq!(
        WAITWISE_VERSION_MINOR,
        number(env!("CARGO_PKG_VERSION_MINOR"))
    );
    assert_eq!(
        WAITWISE_VERSION_PATCH,
        number(env!("CARGO_PKG_VERSION_PATCH"))
    );
    assert_eq!(
        WAITWISE_VERSION_NUMBER,
        WAITWISE_VERSION_MAJOR * 10000 + WAITWISE_VERSION_MINOR * 100 + WAITWISE_VERSION_PATCH
    );
    // SAFETY: waitwise_version returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(waitwise_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    assert_eq!(waitwise_version_number(), WAITWISE_VERSION_NUMBER);
}

#[test]
fn header_version_is_the_crate_version() {
    // The numeric macros equal the Rust constants (tests/header.rs checks
    // every numeric WAITWISE_* macro); the string is checked here.
    assert_eq!(
        header_define("WAITWISE_VERSION_STRING"),
        format!("\"{}\"", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        number(&header_define("WAITWISE_VERSION_MAJOR")),
        number(env!("CARGO_PKG_VERSION_MAJOR"))
    );
    assert_eq!(
        number(&header_define("WAITWISE_ABI_VERSION")),
        WAITWISE_ABI_VERSION
    );
}

#[test]
fn build_script_and_constant_name_the_same_abi_version() {
    let build =
        std::fs::read_to_string(Path::new(MANIFEST_DIR).join("build.rs")).expect("read build.rs");
    let line = build
        .lines()
        .find_map(|l| l.trim().strip_prefix("const ABI_MAJOR: u32 = "))
        .expect("`const ABI_MAJOR: u32 = N;` in build.rs");
    assert_eq!(number(line.trim_end_matches(';')), WAITWISE_ABI_VERSION);
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// `DT_SONAME` of a little-endian ELF64 shared object, read from its
/// `SHT_DYNAMIC` section and the string table that section links to.
fn elf_soname(elf: &[u8]) -> Option<String> {
    const SHT_DYNAMIC: u32 = 6;
    const DT_NULL: u64 = 0;
    const DT_SONAME: u64 = 14;
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    assert_eq!((elf[4], elf[5]), (2, 1), "not little-endian ELF64");
    let shoff = u64_at(elf, 0x28) as usize;
    let shentsize = u16_at(elf, 0x3a) as usize;
    let shnum = u16_at(elf, 0x3c) as usize;
    let section = |i: usize| &elf[shoff + i * shentsize..shoff + (i + 1) * shentsize];
    let dynamic = (0..shnum)
        .map(section)
        .find(|s| u32_at(s, 4) == SHT_DYNAMIC)?;
    let strtab = section(u32_at(dynamic, 40) as usize);
    let str_at = u64_at(strtab, 24) as usize;
    let (off, size) = (u64_at(dynamic, 24) as usize, u64_at(dynamic, 32) as usize);
    for entry in elf[off..off + size].chunks_exact(16) {
        match u64_at(entry, 0) {
            DT_NULL => break,
            DT_SONAME => {
                let name = &elf[str_at + u64_at(entry, 8) as usize..];
                let end = name.iter().position(|&c| c == 0)?;
                return Some(String::from_utf8_lossy(&name[..end]).into_owned());
            }
            _ => {}
        }
    }
    None
}

#[test]
#[cfg(all(
    target_os = "linux",
    target_pointer_width = "64",
    target_endian = "little"
))]
fn shared_library_has_the_soname() {
    let lib = built_library("libwaitwise.so");
    let want = format!("libwaitwise.so.{WAITWISE_ABI_VERSION}");
    let elf = std::fs::read(&lib).expect("read libwaitwise.so");
    assert_eq!(
        elf_soname(&elf).as_deref(),
        Some(want.as_str()),
        "{}",
        lib.display()
    );
    match Command::new("readelf").arg("-d").arg(&lib).output() {
        Ok(out) => {
            assert!(out.status.success(), "readelf -d {} failed", lib.display());
            let text = String::from_utf8_lossy(&out.stdout);
            let line = format!("Library soname: [{want}]");
            assert!(text.contains(&line), "no `{line}` in readelf -d:\n{text}");
        }
        Err(e) => eprintln!("readelf not found ({e}): checked the ELF dynamic section only"),
    }
}
