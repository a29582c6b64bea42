//! `waitwise_probe_json`: the machine probe (`waitwise probe --json`) as a
//! C string, and `waitwise_string_free` to give it back.
//!
//! Ownership: the string is allocated by waitwise and must be freed with
//! `waitwise_string_free` (not `free`: the allocators may differ).

use crate::error::{boundary, Error, WAITWISE_OK};
use std::ffi::{c_char, c_int, CString};

/// Runs the probe (well under 5 s) and stores its JSON object, with the
/// same keys as `waitwise probe --json`, NUL-terminated, in `*out`.
/// `WAITWISE_EIO` if the probe failed (`*out` is NULL then).
///
/// # Safety
///
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn waitwise_probe_json(out: *mut *mut c_char) -> c_int {
    boundary(|| {
        if out.is_null() {
            return Err(Error::Invalid);
        }
        // SAFETY: non-NULL and writable by the caller's contract. NULL first,
        // so that every error (a panic included) leaves `*out` defined.
        unsafe { out.write(std::ptr::null_mut()) };
        let probe = waitwise_core::probe::run().map_err(|_| Error::Io)?;
        let json = serde_json::to_string(&probe).map_err(|_| Error::Internal)?;
        // JSON text escapes control characters, so it holds no NUL byte.
        let json = CString::new(json).map_err(|_| Error::Internal)?;
        // SAFETY: as above.
        unsafe { out.write(json.into_raw()) };
        Ok(WAITWISE_OK)
    })
}

/// Frees a string that waitwise returned. NULL is a no-op.
///
/// # Safety
///
/// `s` is NULL, or a string from `waitwise_probe_json` not freed before.
#[no_mangle]
pub unsafe extern "C" fn waitwise_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: `s` came from `CString::into_raw`, by the contract. Dropping
        // a `CString` cannot panic.
        drop(unsafe { CString::from_raw(s) });
    }
}
