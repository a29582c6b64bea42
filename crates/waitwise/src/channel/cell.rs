//! The ring's slot cell: `std::cell::UnsafeCell` normally, loom's
//! `UnsafeCell` under `--cfg loom` so the model checker sees every access
//! to a slot and reports unsynchronized ones as data races.
//!
//! Both expose loom's closure API: `with_mut(|ptr| ...)` hands out the raw
//! pointer for the duration of the closure.

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `std::cell::UnsafeCell` with loom's access API.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// A cell holding `value`.
    #[inline(always)]
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a raw pointer to the contents; dereferencing it follows
    /// the usual `UnsafeCell` rules, which the caller upholds.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
