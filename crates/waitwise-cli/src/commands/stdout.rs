//! Standard output for every command: [`outln!`] and [`write`] instead of
//! `println!`, which panics when a write fails.
//!
//! Each call writes its text and flushes, so a failure is seen at once and
//! becomes an error the command returns with `?`:
//! * the reader went away (`waitwise ... | head -1`: `EPIPE`): a
//!   [`StdoutClosed`], which `main` ends with quietly and exit status 0, as
//!   `cat` or `grep` end when killed by `SIGPIPE` without complaining;
//! * any other failure (`waitwise probe > /dev/full`: `ENOSPC`): an error
//!   naming standard output and the cause, printed once, exit status 1.
//!
//! Messages on stderr go through [`note`], which drops a failed write: there
//! is nowhere left to report it.

use std::io::{self, Write};

/// The reader of standard output closed it (broken pipe): nothing more can
/// be printed and nothing is wrong.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed by its reader")]
pub struct StdoutClosed;

/// Writes `text` to standard output and flushes it.
///
/// # Errors
/// [`StdoutClosed`] on a broken pipe; otherwise the I/O error, with
/// "cannot write to standard output" as context.
pub fn write(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to standard output")),
    }
}

/// A line on stderr (progress, "wrote FILE"); a failed write is dropped.
pub fn note(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr(), "{line}");
}

/// `println!` that returns `anyhow::Result<()>` instead of panicking: see
/// [`write`].
macro_rules! outln {
    () => {
        $crate::commands::stdout::write("\n")
    };
    ($($arg:tt)*) => {
        $crate::commands::stdout::write(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics: see [`note`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::commands::stdout::note(format_args!($($arg)*))
    };
}

pub(crate) use {errln, outln};
