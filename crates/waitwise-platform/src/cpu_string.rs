//! [`CpuString`]: text that CPUID spells out in registers (the vendor's
//! 12 bytes, the 48-byte brand string), kept inline.
//!
//! The CPU's features are detected by the first wait that needs them, and
//! that wait may run with the allocator's own lock held (an allocator's
//! locks are pthread mutexes, which the interposer implements): detection
//! must not allocate, so its text lives in a fixed array, not a `String`.

use std::fmt;
use std::ops::Deref;

/// At most `N` bytes of ASCII text, stored inline.
///
/// ```
/// use waitwise_platform::cpu_string::CpuString;
/// let s = CpuString::<12>::new("AuthenticAMD");
/// assert_eq!(s, "AuthenticAMD");
/// assert_eq!(CpuString::<4>::new("too long"), "too ");
/// assert!(CpuString::<12>::default().is_empty());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpuString<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> CpuString<N> {
    /// The first `N` bytes of `text`, shortened further to a character
    /// boundary.
    pub fn new(text: &str) -> Self {
        let mut len = text.len().min(N);
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0; N];
        bytes[..len].copy_from_slice(&text.as_bytes()[..len]);
        Self { bytes, len }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // `new` copies whole characters of a `&str`: valid UTF-8.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl<const N: usize> Default for CpuString<N> {
    fn default() -> Self {
        Self {
            bytes: [0; N],
            len: 0,
        }
    }
}

impl<const N: usize> Deref for CpuString<N> {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl<const N: usize> From<&str> for CpuString<N> {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl<const N: usize> PartialEq<str> for CpuString<N> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl<const N: usize> PartialEq<&str> for CpuString<N> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl<const N: usize> fmt::Debug for CpuString<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<const N: usize> fmt::Display for CpuString<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl<const N: usize> serde::Serialize for CpuString<N> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_whole_characters_when_shortened() {
        assert_eq!(CpuString::<2>::new("aé"), "a");
        assert_eq!(CpuString::<3>::new("aé"), "aé");
    }
}
