//! The C library's own functions, for the objects waitwise forwards
//! (process-shared, robust, priority-inheritance/protect).
//!
//! Each is looked up on first use with `dlsym(RTLD_NEXT, name)`, i.e. in the
//! objects loaded after this one, which is the C library, or, for the
//! condition-variable functions that glibc exports under two versions,
//! `dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2")`: plain `dlsym` may hand back
//! the 2.2.5 compatibility version, which expects another object layout.
//!
//! Lookups happen only on forwarded objects, never on the native hot path:
//! `dlsym` may allocate, and an allocator that locks a `pthread_mutex_t`
//! would re-enter this library.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Attribute getters and the C library's `_np` helpers the libc crate does
/// not declare.
mod sys {
    use std::ffi::c_int;
    extern "C" {
        pub fn pthread_mutexattr_gettype(
            attr: *const libc::pthread_mutexattr_t,
            kind: *mut c_int,
        ) -> c_int;
        pub fn pthread_mutexattr_getrobust(
            attr: *const libc::pthread_mutexattr_t,
            robust: *mut c_int,
        ) -> c_int;
        pub fn pthread_mutexattr_getprotocol(
            attr: *const libc::pthread_mutexattr_t,
            protocol: *mut c_int,
        ) -> c_int;
        pub fn pthread_condattr_getpshared(
            attr: *const libc::pthread_condattr_t,
            pshared: *mut c_int,
        ) -> c_int;
        pub fn pthread_barrierattr_getpshared(
            attr: *const libc::pthread_barrierattr_t,
            pshared: *mut c_int,
        ) -> c_int;
    }
}
pub use sys::*;

/// glibc's version of its current condition-variable ABI.
const COND_VERSION: &CStr = c"GLIBC_2.3.2";

/// One C library function, resolved on first use.
pub struct RealFn {
    name: &'static CStr,
    version: Option<&'static CStr>,
    ptr: AtomicPtr<c_void>,
}

impl RealFn {
    /// `name` (at `version`, or the default version when `None`), resolved
    /// on first use.
    pub(crate) const fn new(name: &'static CStr, version: Option<&'static CStr>) -> Self {
        Self {
            name,
            version,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The function's address (never null: a missing function aborts with
    /// a message, since the caller's object cannot work without it).
    #[inline]
    pub fn get(&self) -> *mut c_void {
        // Relaxed: the pointer is to code, which needs no publication; two
        // threads resolving at once store the same value.
        let p = self.ptr.load(Ordering::Relaxed);
        if p.is_null() {
            self.resolve()
        } else {
            p
        }
    }

    #[cold]
    fn resolve(&self) -> *mut c_void {
        // SAFETY: name and version are NUL-terminated; RTLD_NEXT is a valid
        // pseudo-handle inside a shared object.
        let p = unsafe {
            match self.version {
                Some(v) => libc::dlvsym(
                    libc::RTLD_NEXT,
                    self.name.as_ptr(),
                    v.as_ptr() as *const c_char,
                ),
                None => libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()),
            }
        };
        if p.is_null() {
            eprintln!(
                "waitwise: cannot find the C library's {:?} to forward to; aborting",
                self.name
            );
            std::process::abort();
        }
        // Relaxed: as in `get`, code needs no publication, and racing
        // resolvers store the same address.
        self.ptr.store(p, Ordering::Relaxed);
        p
    }
}

macro_rules! real_fns {
    ($( $(#[$doc:meta])* $id:ident = $name:literal $(@ $ver:expr)? ; )*) => {
        $( $(#[$doc])* pub static $id: RealFn = RealFn::new($name, real_fns!(@v $($ver)?)); )*
    };
    (@v) => { None };
    (@v $ver:expr) => { Some($ver) };
}

real_fns! {
    /// `pthread_mutex_init`
    MUTEX_INIT = c"pthread_mutex_init";
    /// `pthread_mutex_destroy`
    MUTEX_DESTROY = c"pthread_mutex_destroy";
    /// `pthread_mutex_lock`
    MUTEX_LOCK = c"pthread_mutex_lock";
    /// `pthread_mutex_trylock`
    MUTEX_TRYLOCK = c"pthread_mutex_trylock";
    /// `pthread_mutex_timedlock`
    MUTEX_TIMEDLOCK = c"pthread_mutex_timedlock";
    /// `pthread_mutex_clocklock`
    MUTEX_CLOCKLOCK = c"pthread_mutex_clocklock";
    /// `pthread_mutex_unlock`
    MUTEX_UNLOCK = c"pthread_mutex_unlock";
    /// `pthread_cond_init@GLIBC_2.3.2`
    COND_INIT = c"pthread_cond_init" @ COND_VERSION;
    /// `pthread_cond_destroy@GLIBC_2.3.2`
    COND_DESTROY = c"pthread_cond_destroy" @ COND_VERSION;
    /// `pthread_cond_wait@GLIBC_2.3.2`
    COND_WAIT = c"pthread_cond_wait" @ COND_VERSION;
    /// `pthread_cond_timedwait@GLIBC_2.3.2`
    COND_TIMEDWAIT = c"pthread_cond_timedwait" @ COND_VERSION;
    /// `pthread_cond_clockwait` (one version)
    COND_CLOCKWAIT = c"pthread_cond_clockwait";
    /// `pthread_cond_signal@GLIBC_2.3.2`
    COND_SIGNAL = c"pthread_cond_signal" @ COND_VERSION;
    /// `pthread_cond_broadcast@GLIBC_2.3.2`
    COND_BROADCAST = c"pthread_cond_broadcast" @ COND_VERSION;
    /// `pthread_barrier_init`
    BARRIER_INIT = c"pthread_barrier_init";
    /// `pthread_barrier_destroy`
    BARRIER_DESTROY = c"pthread_barrier_destroy";
    /// `pthread_barrier_wait`
    BARRIER_WAIT = c"pthread_barrier_wait";
    /// `sem_init`
    SEM_INIT = c"sem_init";
    /// `sem_destroy`
    SEM_DESTROY = c"sem_destroy";
    /// `sem_wait`
    SEM_WAIT = c"sem_wait";
    /// `sem_trywait`
    SEM_TRYWAIT = c"sem_trywait";
    /// `sem_timedwait`
    SEM_TIMEDWAIT = c"sem_timedwait";
    /// `sem_clockwait` (glibc 2.30)
    SEM_CLOCKWAIT = c"sem_clockwait";
    /// `sem_post`
    SEM_POST = c"sem_post";
    /// `sem_getvalue`
    SEM_GETVALUE = c"sem_getvalue";
}

/// Calls a forwarded function: `forward!(MUTEX_LOCK, fn(*mut T) -> c_int)(m)`.
macro_rules! forward {
    ($f:path, fn($($arg:ty),* $(,)?) -> $ret:ty) => {{
        let p = $f.get();
        // SAFETY: `p` is the C library's definition of the function named
        // by `$f` (resolved by name and version), whose C prototype is the
        // one given here.
        #[allow(unused_unsafe)]
        let f = unsafe {
            std::mem::transmute::<*mut std::ffi::c_void, unsafe extern "C" fn($($arg),*) -> $ret>(p)
        };
        f
    }};
}
pub(crate) use forward;

/// Sets `errno` (for the `sem_*` functions, which report errors that way).
#[inline]
pub fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}
