//! The environment read through the C library's `getenv`, without
//! allocating: for what runs before a program's `main` under the
//! interposer, in every process, where `std::env::var_os` would set up the
//! C library's heap (its copy of the value) in programs that may never
//! allocate.

use std::ffi::CStr;

/// Calls `f` with the value of `name` (`None` when unset), as the C
/// library holds it.
///
/// The value is read in place, so `f` should not keep it: a later
/// `setenv` of the same name replaces it. Changing the environment while
/// other threads read it is the writer's race, as for every C reader (and
/// `std::env::set_var` is `unsafe` for that reason).
pub fn with_var<R>(name: &CStr, f: impl FnOnce(Option<&[u8]>) -> R) -> R {
    // SAFETY: `name` is NUL-terminated; getenv returns null or a pointer
    // into the environment.
    let value = unsafe { libc::getenv(name.as_ptr()) };
    if value.is_null() {
        f(None)
    } else {
        // SAFETY: a non-null getenv result is a NUL-terminated string,
        // read here before anything in this thread can change it.
        f(Some(unsafe { CStr::from_ptr(value) }.to_bytes()))
    }
}

/// Whether the name of any variable starts with `prefix` (which holds no
/// `=`): one walk of the environment, allocating nothing.
pub fn any_named_with(prefix: &[u8]) -> bool {
    extern "C" {
        /// The C library's environment: null, or an array of pointers to
        /// `NAME=value` strings ending in a null pointer.
        static environ: *const *const libc::c_char;
    }
    // SAFETY: reading the pointer the C library keeps (a plain static);
    // the same race with a writer as in `with_var`.
    let mut entry = unsafe { environ };
    if entry.is_null() {
        return false;
    }
    // SAFETY: `entry` walks the array up to its null pointer; each string
    // is NUL-terminated, and the comparison stops at its first byte that
    // differs from `prefix`, so at its NUL at the latest.
    unsafe {
        while !(*entry).is_null() {
            let name = (*entry).cast::<u8>();
            if prefix.iter().enumerate().all(|(i, &b)| *name.add(i) == b) {
                return true;
            }
            entry = entry.add(1);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_std_reads() {
        let path = std::env::var_os("PATH").map(|v| v.into_encoded_bytes());
        assert_eq!(with_var(c"PATH", |v| v.map(<[u8]>::to_vec)), path);
        assert!(with_var(c"WAITWISE_C_ENV_NEVER_SET_BY_ANYONE", |v| v.is_none()));
    }

    #[test]
    fn finds_a_variable_by_the_start_of_its_name() {
        assert!(any_named_with(b"PAT"));
        assert!(!any_named_with(b"WAITWISE_C_ENV_NEVER_SET_BY_ANYONE"));
        assert!(any_named_with(b""));
    }
}
