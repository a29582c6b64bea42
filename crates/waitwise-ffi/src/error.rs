//! Return codes, and the one wrapper every `extern "C"` body runs in.
//!
//! Every function of the C ABI returns an `int`: `0` on success, or one of
//! the `WAITWISE_E*` codes below (the exceptions, `waitwise_barrier_wait`
//! and the policy constructors, say so). The codes have the values of the
//! Linux `errno` names they are spelled after, so a caller that maps them to
//! `errno` (an interposer) passes them on as they are. They are literals
//! here because `tests/header.rs` reads them from this file and compares
//! them with `include/waitwise.h`.
//!
//! Nothing unwinds across the boundary: [`boundary`] runs each body under
//! `catch_unwind` and turns a panic (an impossible state in the library,
//! never a user error) into [`WAITWISE_EINTERNAL`]. Only the functions that
//! cannot panic skip it: the policy constructors (they build a two-field
//! value), `waitwise_strerror` (a `match` on an integer) and
//! `waitwise_string_free` (dropping a `CString`). Should one of them panic
//! after all, Rust aborts the process at an `extern "C"` boundary rather
//! than unwind through it.

use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
pub const WAITWISE_OK: c_int = 0;
/// The caller does not hold the mutex it unlocks or waits with (`EPERM`).
pub const WAITWISE_EPERM: c_int = 1;
/// The probe could not read the machine's description (`EIO`).
pub const WAITWISE_EIO: c_int = 5;
/// No permit or notify available now (`EAGAIN`): `trywait` found none.
pub const WAITWISE_EAGAIN: c_int = 11;
/// The mutex is held (`EBUSY`): `trylock` failed, or `destroy` of a held
/// mutex.
pub const WAITWISE_EBUSY: c_int = 16;
/// A NULL pointer, or an argument out of range (`EINVAL`).
pub const WAITWISE_EINVAL: c_int = 22;
/// The calling thread already holds the mutex it locks (`EDEADLK`).
pub const WAITWISE_EDEADLK: c_int = 35;
/// A semaphore's value would pass `WAITWISE_SEM_VALUE_MAX` (`EOVERFLOW`).
pub const WAITWISE_EOVERFLOW: c_int = 75;
/// The timeout passed first (`ETIMEDOUT`).
pub const WAITWISE_ETIMEDOUT: c_int = 110;
/// A bug in waitwise: a panic was caught at the boundary
/// (`ENOTRECOVERABLE`). The object may be in any state.
pub const WAITWISE_EINTERNAL: c_int = 131;

/// Every failure a C call can report: one variant per `WAITWISE_E*` code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// [`WAITWISE_EPERM`].
    NotOwner,
    /// [`WAITWISE_EIO`].
    Io,
    /// [`WAITWISE_EAGAIN`].
    WouldBlock,
    /// [`WAITWISE_EBUSY`].
    Busy,
    /// [`WAITWISE_EINVAL`].
    Invalid,
    /// [`WAITWISE_EDEADLK`].
    Deadlock,
    /// [`WAITWISE_EOVERFLOW`].
    Overflow,
    /// [`WAITWISE_ETIMEDOUT`].
    TimedOut,
    /// [`WAITWISE_EINTERNAL`].
    Internal,
}

impl Error {
    /// The C return code.
    pub const fn code(self) -> c_int {
        match self {
            Error::NotOwner => WAITWISE_EPERM,
            Error::Io => WAITWISE_EIO,
            Error::WouldBlock => WAITWISE_EAGAIN,
            Error::Busy => WAITWISE_EBUSY,
            Error::Invalid => WAITWISE_EINVAL,
            Error::Deadlock => WAITWISE_EDEADLK,
            Error::Overflow => WAITWISE_EOVERFLOW,
            Error::TimedOut => WAITWISE_ETIMEDOUT,
            Error::Internal => WAITWISE_EINTERNAL,
        }
    }
}

/// What a body returns: a non-negative value (almost always
/// [`WAITWISE_OK`]) or an error.
pub type Status = Result<c_int, Error>;

/// Runs one `extern "C"` body: its `Ok` value or its error's code, and
/// [`WAITWISE_EINTERNAL`] if it panicked. Nothing unwinds past this.
#[inline]
pub fn boundary(body: impl FnOnce() -> Status) -> c_int {
    // AssertUnwindSafe: after a panic the caller only learns the code; the
    // objects it touched are documented as being in an unknown state.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(e)) => e.code(),
        Err(_) => WAITWISE_EINTERNAL,
    }
}

/// The object behind a handle, or [`Error::Invalid`] for NULL.
///
/// # Safety
///
/// A non-NULL `ptr` must come from the matching `waitwise_*_new` and not
/// have been destroyed; the object outlives `'a` (no thread destroys it
/// while another uses it, as the header says).
#[inline]
pub unsafe fn object<'a, T>(ptr: *mut T) -> Result<&'a T, Error> {
    // SAFETY: non-NULL pointers are live objects made by `Box::into_raw`,
    // by the caller's contract; objects are only shared (`&`), never `&mut`.
    unsafe { ptr.cast_const().as_ref() }.ok_or(Error::Invalid)
}

/// Stores a new object in `*out` (boxed; the handle owns it until its
/// `destroy`). `out == NULL` is [`Error::Invalid`], and then nothing leaks.
///
/// # Safety
///
/// A non-NULL `out` must be valid for one pointer-sized write.
#[inline]
pub unsafe fn store_new<T>(out: *mut *mut T, value: impl FnOnce() -> Result<T, Error>) -> Status {
    if out.is_null() {
        return Err(Error::Invalid);
    }
    let object = Box::into_raw(Box::new(value()?));
    // SAFETY: `out` is non-NULL and writable by the caller's contract.
    unsafe { out.write(object) };
    Ok(WAITWISE_OK)
}

/// Frees an object made by [`store_new`]. NULL is [`Error::Invalid`].
///
/// # Safety
///
/// A non-NULL `ptr` must come from the matching `waitwise_*_new`, not have
/// been destroyed, and no other thread may use it now or later.
#[inline]
pub unsafe fn destroy<T>(ptr: *mut T) -> Status {
    if ptr.is_null() {
        return Err(Error::Invalid);
    }
    // SAFETY: the caller hands back sole ownership of a `Box::into_raw`
    // pointer.
    drop(unsafe { Box::from_raw(ptr) });
    Ok(WAITWISE_OK)
}

/// A description of a `WAITWISE_E*` code (or of `0`), as a static
/// NUL-terminated string; never NULL. Unknown codes get
/// `"unknown waitwise error"`.
#[no_mangle]
pub extern "C" fn waitwise_strerror(code: c_int) -> *const c_char {
    let text: &'static [u8] = match code {
        WAITWISE_OK => b"success\0",
        WAITWISE_EPERM => b"the calling thread does not hold the mutex\0",
        WAITWISE_EIO => b"the machine's description could not be read\0",
        WAITWISE_EAGAIN => b"nothing available now\0",
        WAITWISE_EBUSY => b"the mutex is held\0",
        WAITWISE_EINVAL => b"invalid argument (NULL pointer or value out of range)\0",
        WAITWISE_EDEADLK => b"the calling thread already holds the mutex\0",
        WAITWISE_EOVERFLOW => b"the semaphore value would exceed WAITWISE_SEM_VALUE_MAX\0",
        WAITWISE_ETIMEDOUT => b"the timeout passed\0",
        WAITWISE_EINTERNAL => b"internal error in waitwise (a panic was caught)\0",
        _ => b"unknown waitwise error\0",
    };
    text.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn panics_become_internal_errors() {
        assert_eq!(boundary(|| panic!("boom")), WAITWISE_EINTERNAL);
        assert_eq!(boundary(|| Err(Error::TimedOut)), WAITWISE_ETIMEDOUT);
        assert_eq!(boundary(|| Ok(7)), 7);
    }

    #[test]
    fn every_code_has_its_own_text() {
        // SAFETY: waitwise_strerror returns a static NUL-terminated string.
        let unknown = unsafe { CStr::from_ptr(waitwise_strerror(-42)) };
        for e in [
            Error::NotOwner,
            Error::Io,
            Error::WouldBlock,
            Error::Busy,
            Error::Invalid,
            Error::Deadlock,
            Error::Overflow,
            Error::TimedOut,
            Error::Internal,
        ] {
            // SAFETY: as above, a static NUL-terminated string.
            let text = unsafe { CStr::from_ptr(waitwise_strerror(e.code())) };
            assert_ne!(text, unknown, "{e:?}");
        }
    }
}
