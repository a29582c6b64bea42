//! Race detectors that would not see the interposer's lock operations, and
//! the one-line warning that says so at load.
//!
//! A race detector learns the happens-before order of a program from its
//! synchronization calls, by wrapping the C library's `pthread_*`
//! functions. Two ways of wrapping miss the interposer's:
//!
//! - ThreadSanitizer's runtime as a shared object (gcc's `libtsan.so`,
//!   loaded as the program's dependency): its interceptors are found after
//!   the preloaded interposer's definitions, so the program's calls never
//!   reach them, and every access made under a lock is reported as a data
//!   race. Preloading the runtime first (`LD_PRELOAD=libtsan.so.2:...`)
//!   puts its interceptors in front; they then call the interposer as the
//!   next definition. A runtime linked into the executable (clang's, or
//!   gcc's `-static-libtsan`) comes first anyway.
//! - Valgrind's Helgrind and DRD wrap the functions of the C library by its
//!   soname, and the interposer's carry another: nothing can put theirs in
//!   front, so the warning says to run them without the interposer.
//!   Memcheck tracks no synchronization and runs unchanged.
//!
//! The checks run once, at load, never on a wait path: a walk over the
//! loaded objects' names and, only when a ThreadSanitizer runtime is among
//! them, three `dlsym` and at most three `dladdr` lookups. (A `dlsym` that
//! finds nothing allocates its error message, and with it sets up `malloc`
//! in a program that may never allocate.)

use libc::{c_char, c_int, c_void, dl_phdr_info, size_t};
use std::ffi::CStr;

/// The warning for a ThreadSanitizer runtime behind the interposer.
pub const TSAN_BEHIND: &str =
    "waitwise: ThreadSanitizer's runtime is loaded after the interposer, \
     so it sees none of the program's lock operations and will report false data races; \
     preload it first: LD_PRELOAD=libtsan.so.2:libwaitwise_preload.so";

/// The warning for Helgrind or DRD (`tool`).
pub fn valgrind_tool_warning(tool: &str) -> String {
    format!(
        "waitwise: Valgrind's {tool} wraps only the C library's pthread functions and sees none \
         of the interposer's lock operations, so it will report false data races; run it \
         without LD_PRELOAD=libwaitwise_preload.so"
    )
}

/// Prints a warning for each race detector in the process that cannot see
/// the interposer's lock operations (module docs).
pub fn warn_if_hidden() {
    let loaded = loaded_race_detectors();
    if loaded.tsan_object && tsan_behind() {
        eprintln!("{TSAN_BEHIND}");
    }
    if let Some(tool) = loaded.valgrind_tool {
        eprintln!("{}", valgrind_tool_warning(tool));
    }
}

/// The race detectors found among the loaded objects' names.
#[derive(Default)]
struct LoadedRaceDetectors {
    /// A ThreadSanitizer runtime loaded as a shared object (gcc's
    /// `libtsan.so`, clang's `libclang_rt.tsan*.so`).
    tsan_object: bool,
    /// Helgrind or DRD, by its preloaded object.
    valgrind_tool: Option<&'static str>,
}

/// Whether a ThreadSanitizer runtime is loaded and the program's
/// `pthread_mutex_lock` is the interposer's, not its interceptor.
fn tsan_behind() -> bool {
    // SAFETY: dlsym with RTLD_DEFAULT and NUL-terminated names only reads
    // the loaded objects' symbol tables.
    let (tsan, first) = unsafe {
        (
            libc::dlsym(libc::RTLD_DEFAULT, c"__tsan_init".as_ptr()),
            libc::dlsym(libc::RTLD_DEFAULT, c"pthread_mutex_lock".as_ptr()),
        )
    };
    // Compared by the object that defines it: within this object, the
    // address of its own exported `pthread_mutex_lock` is the one the
    // dynamic linker bound, the interceptor's when that comes first, so
    // the object is told by a function nobody else can define.
    let this_object = tsan_behind as *const c_void;
    // Loaded by the shim (`libwaitwise_preload.so`, module
    // `entry_points`), the first definition to look for is the shim's.
    // SAFETY: as above.
    let shim = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"waitwise_preload_shim".as_ptr()) };
    let ours = |object: *mut c_void| {
        object == object_base(this_object) || (!shim.is_null() && object == object_base(shim))
    };
    !tsan.is_null() && !first.is_null() && ours(object_base(first))
}

/// The load address of the object that holds `addr` (`dladdr`), or null.
fn object_base(addr: *const c_void) -> *mut c_void {
    // SAFETY: all-zero bytes are a valid Dl_info (null pointers), which
    // dladdr fills in.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the loaded objects' tables and writes `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 {
        return std::ptr::null_mut();
    }
    info.dli_fbase
}

/// Walks the loaded objects' names.
fn loaded_race_detectors() -> LoadedRaceDetectors {
    let mut found = LoadedRaceDetectors::default();
    // SAFETY: the callback matches dl_iterate_phdr's signature and only
    // reads the names it is handed; `found` outlives the call.
    unsafe {
        libc::dl_iterate_phdr(Some(visit), (&mut found as *mut LoadedRaceDetectors).cast());
    }
    found
}

/// `dl_iterate_phdr`'s callback: records a ThreadSanitizer runtime, and
/// Helgrind or DRD by the name of its preloaded object
/// (`vgpreload_helgrind-amd64-linux.so`).
unsafe extern "C" fn visit(info: *mut dl_phdr_info, _size: size_t, data: *mut c_void) -> c_int {
    // SAFETY: dl_iterate_phdr hands a valid info for the call's duration,
    // and `data` is the `LoadedRaceDetectors` loaded_race_detectors passed.
    let (name, found) = unsafe {
        let name: *const c_char = (*info).dlpi_name;
        (name, &mut *data.cast::<LoadedRaceDetectors>())
    };
    if name.is_null() {
        return 0;
    }
    // SAFETY: a loaded object's name is a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(name) }.to_bytes();
    let contains = |needle: &[u8]| name.windows(needle.len()).any(|w| w == needle);
    if contains(b"libtsan") || contains(b"clang_rt.tsan") {
        found.tsan_object = true;
    }
    if contains(b"vgpreload_helgrind") {
        found.valgrind_tool = Some("Helgrind");
    } else if contains(b"vgpreload_drd") {
        found.valgrind_tool = Some("DRD");
    }
    0
}
