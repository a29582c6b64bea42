//! Reading a small file that must be a regular file (a saved profile): the
//! open never blocks, so a FIFO with no writer, or a device, at the path
//! cannot stop the caller, which may run before a program's `main`. And
//! whether a directory exists, asked without allocating, for the same
//! caller.

use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The text of the regular file at `path`.
///
/// Opened with `O_NONBLOCK` (a FIFO with no writer opens at once instead
/// of waiting for one) and checked with `fstat` before anything is read.
/// Errors: those of `open` and `read`, and [`io::ErrorKind::InvalidInput`]
/// ("not a regular file") for anything but a regular file.
pub fn read_regular(path: &Path) -> io::Result<String> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// Whether the path made of `parts`, joined as they are, is a directory
/// (`stat`, links followed), asked without allocating: the path is put
/// together in a buffer on the stack. `None` when it is longer than
/// [`SHORT_PATH_MAX`] bytes or holds a NUL.
pub fn is_directory(parts: &[&[u8]]) -> Option<bool> {
    let mut path = [0u8; SHORT_PATH_MAX + 1];
    let mut len = 0;
    for part in parts {
        if part.contains(&0) {
            return None;
        }
        path.get_mut(len..len + part.len())?.copy_from_slice(part);
        len += part.len();
    }
    // The NUL: `path` is zeroed, and `len` <= SHORT_PATH_MAX.
    if len > SHORT_PATH_MAX {
        return None;
    }
    // SAFETY: `stat` is plain data, filled by the call before it is read.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `path` holds a NUL-terminated string; `st` is a live,
    // writable stat.
    let found = unsafe { libc::stat(path.as_ptr().cast(), &mut st) } == 0;
    Some(found && st.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

/// The longest path [`is_directory`] puts together (its buffer is one byte
/// more, for the NUL).
pub const SHORT_PATH_MAX: usize = 1023;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read() {
        let path = std::env::temp_dir().join(format!("waitwise-file-{}", std::process::id()));
        std::fs::write(&path, "block_ns=1\n").unwrap();
        assert_eq!(read_regular(&path).unwrap(), "block_ns=1\n");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_device_is_refused_without_reading() {
        let e = read_regular(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
    }

    #[test]
    fn a_directory_is_found_from_its_parts() {
        assert_eq!(is_directory(&[b"/", b"tmp"]), Some(true));
        assert_eq!(is_directory(&[b"/dev/", b"null"]), Some(false));
        assert_eq!(is_directory(&[b"/no/such/", b"directory"]), Some(false));
        assert_eq!(is_directory(&[b"/tmp\0"]), None);
        let long = [b'a'; SHORT_PATH_MAX + 1];
        assert_eq!(is_directory(&[b"/", &long[2..]]), Some(false));
        assert_eq!(is_directory(&[b"/", &long]), None);
    }
}
