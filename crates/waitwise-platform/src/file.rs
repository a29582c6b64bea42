//! Reading a small file that must be a regular file (a saved profile): the
//! open never blocks, so a FIFO with no writer, or a device, at the path
//! cannot stop the caller, which may run before a program's `main`.

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
}
