//! The library's version, for C programs that check at run time that the
//! `libwaitwise.so` they loaded is the one their `waitwise.h` describes.
//!
//! `include/waitwise.h` carries the same numbers as macros
//! (`WAITWISE_VERSION_MAJOR` ...); `tests/version.rs` checks that the
//! constants here, the header's macros and the crate's version agree, and
//! that `WAITWISE_ABI_VERSION` is the major of the shared object's SONAME
//! (`libwaitwise.so.0`, set by `build.rs`).

use std::ffi::c_char;

/// The major version of the crate (`CARGO_PKG_VERSION_MAJOR`).
pub const WAITWISE_VERSION_MAJOR: u32 = 0;
/// The minor version.
pub const WAITWISE_VERSION_MINOR: u32 = 1;
/// The patch version.
pub const WAITWISE_VERSION_PATCH: u32 = 0;
/// `MAJOR * 10000 + MINOR * 100 + PATCH`: one number to compare.
pub const WAITWISE_VERSION_NUMBER: u32 = 100;
// The number keeps the parts apart only while minor and patch stay below
// 100.
const _: () = assert!(WAITWISE_VERSION_MINOR < 100 && WAITWISE_VERSION_PATCH < 100);

/// The C ABI's major version: the `N` of the SONAME `libwaitwise.so.N`,
/// raised on every incompatible change of the header.
pub const WAITWISE_ABI_VERSION: u32 = 0;

/// The crate's version, NUL-terminated.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The version of the loaded library, `"MAJOR.MINOR.PATCH"`: a static
/// string, never NULL, never to be freed. Compare it with the header's
/// `WAITWISE_VERSION_STRING` to detect a header/library mismatch.
#[no_mangle]
pub extern "C" fn waitwise_version() -> *const c_char {
    VERSION.as_ptr().cast()
}

/// The version of the loaded library as [`WAITWISE_VERSION_NUMBER`]
/// (`MAJOR * 10000 + MINOR * 100 + PATCH`).
#[no_mangle]
pub extern "C" fn waitwise_version_number() -> u32 {
    WAITWISE_VERSION_NUMBER
}
