//! Link options of `libwaitwise_preload.so`, which every process started
//! under `LD_PRELOAD` maps before `main`.
fn main() {
    // Three loadable segments instead of four (the read-only data in the executable one): the
    // loader maps and protects fewer regions in every process.
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-rosegment");
}
