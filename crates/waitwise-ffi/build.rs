//! Gives `libwaitwise.so` its SONAME, `libwaitwise.so.<ABI_MAJOR>`, so a
//! program linked against it records the ABI it was built for (`NEEDED
//! libwaitwise.so.0`) and an installed library can be replaced by a newer
//! compatible one (`crates/waitwise-ffi/install.sh` lays out the
//! `.so.0 -> .so.VERSION` links).

/// The C ABI's major version: raised on every incompatible change of
/// `include/waitwise.h` (a removed or changed function, type or constant),
/// independently of the crate's version. Must equal
/// `WAITWISE_ABI_VERSION` in `src/version.rs` and the header
/// (`tests/version.rs` checks both).
const ABI_MAJOR: u32 = 0;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Only ELF linkers know `-soname` (macOS would want -install_name).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libwaitwise.so.{ABI_MAJOR}");
    }
}
