//! How many threads want a CPU right now, machine-wide: the kernel's
//! instantaneous count of runnable tasks, against the CPUs online.
//!
//! The count is the numerator of the fourth field of `/proc/loadavg`
//! (`nr_running/nr_threads`, e.g. `3/412`): every task on a run queue,
//! running or waiting for a CPU, across all CPUs and processes, the
//! reading thread included. A thread that busy-polls is runnable and
//! counted, which is what a waiter that asks "would my polling keep
//! another thread from a CPU?" needs: when the count is at most the number
//! of CPUs online, every runnable thread, the poller among them, has a
//! CPU of its own.
//!
//! # Cost and when to call
//!
//! [`runnable_threads`] is one `pread` of the file at offset 0 on a
//! descriptor opened once and kept (`O_CLOEXEC`); the kernel formats the
//! line afresh on each read, summing the run queues of all online CPUs.
//! A read costs about a microsecond, more on a loaded machine
//! (`cargo run --release -p waitwise-platform --example runnable_cost`
//! prints it beside the other candidate signals). Callers on a wait path
//! read it rarely and cache the answer (`waitwise::policy::idle_extension`
//! reads it at most once per 100 µs per process, and not at the start of
//! a wait that can act on an older answer). It never allocates and takes
//! no lock; the first call opens the file (one more system call).
//!
//! # Limits
//!
//! The count is machine-wide, not per CPU: with threads pinned to CPUs, a
//! machine with fewer runnable threads than CPUs may still have two
//! runnable on one CPU. Callers that poll on the strength of it yield the
//! CPU now and then, so a thread runnable on the poller's own CPU gets it.
//! In a container the file shows the host's count and the host's CPUs
//! stay what [`online_cpus`] counts; a CPU quota is not seen. Where
//! `/proc` is not mounted, [`runnable_threads`] is `None`.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The descriptor of `/proc/loadavg`: [`NOT_OPENED`], [`UNAVAILABLE`] or
/// an open descriptor, kept for the life of the process.
static LOADAVG_FD: AtomicI32 = AtomicI32::new(NOT_OPENED);
/// No thread has tried to open the file yet.
const NOT_OPENED: i32 = -1;
/// Opening failed (no `/proc`): never tried again.
const UNAVAILABLE: i32 = -2;

/// CPUs online, once counted; 0 until then.
static ONLINE_CPUS: AtomicU32 = AtomicU32::new(0);

/// The number of runnable threads in a `/proc/loadavg` line: the
/// numerator of its fourth field (`0.52 0.58 0.59 3/412 12345` gives 3),
/// or `None` when the line does not have that shape.
///
/// # Examples
/// ```
/// use waitwise_platform::runnable::parse_runnable;
/// assert_eq!(parse_runnable(b"0.52 0.58 0.59 3/412 12345\n"), Some(3));
/// assert_eq!(parse_runnable(b"garbage"), None);
/// ```
pub fn parse_runnable(line: &[u8]) -> Option<u32> {
    let field = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .nth(3)?;
    let slash = field.iter().position(|&b| b == b'/')?;
    let (running, total) = (&field[..slash], &field[slash + 1..]);
    if total.is_empty() || !total.iter().all(u8::is_ascii_digit) {
        return None;
    }
    parse_u32(running)
}

/// A decimal `u32` of ASCII digits only (no sign, no spaces), `None` on
/// anything else or overflow.
fn parse_u32(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &d| {
        if d.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
        } else {
            None
        }
    })
}

/// The machine's runnable threads right now (the reader included), from
/// `/proc/loadavg`; `None` when the file cannot be read or parsed.
///
/// One `pread` (module docs: cost, when to call). Safe to call from any
/// thread at any time; no allocation, no lock.
pub fn runnable_threads() -> Option<u32> {
    let fd = loadavg_fd()?;
    let mut buf = [0u8; 128];
    // SAFETY: `fd` is a descriptor this module opened and never closes
    // (at most a losing opener closes its own, never the published one);
    // `buf` is a valid writable buffer of the length passed.
    let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    let n = usize::try_from(n).ok()?;
    parse_runnable(&buf[..n.min(buf.len())])
}

/// The kept descriptor of `/proc/loadavg`, opening it on first use.
fn loadavg_fd() -> Option<i32> {
    // Relaxed: the descriptor is a number the kernel owns; no memory is
    // published with it.
    match LOADAVG_FD.load(Ordering::Relaxed) {
        UNAVAILABLE => None,
        NOT_OPENED => open_loadavg(),
        fd => Some(fd),
    }
}

/// Opens `/proc/loadavg` and publishes the descriptor; a thread that
/// loses the race closes its own and uses the winner's.
#[cold]
fn open_loadavg() -> Option<i32> {
    // SAFETY: the path is a NUL-terminated literal; open has no other
    // preconditions.
    let fd = unsafe { libc::open(c"/proc/loadavg".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    let new = if fd >= 0 { fd } else { UNAVAILABLE };
    // Relaxed: see `loadavg_fd`.
    match LOADAVG_FD.compare_exchange(NOT_OPENED, new, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => (fd >= 0).then_some(fd),
        Err(winner) => {
            if fd >= 0 {
                // SAFETY: `fd` is ours, never published.
                unsafe { libc::close(fd) };
            }
            (winner >= 0).then_some(winner)
        }
    }
}

/// The CPUs online (`sysconf(_SC_NPROCESSORS_ONLN)`), counted once and
/// kept; at least 1.
pub fn online_cpus() -> u32 {
    // Relaxed: a number on its own; two first callers both count.
    match ONLINE_CPUS.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: sysconf has no preconditions.
            let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
            let n = u32::try_from(n).unwrap_or(1).max(1);
            ONLINE_CPUS.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// Whether `runnable` threads fit on `cpus` CPUs: each has a CPU of its own.
#[inline]
pub fn fits(runnable: u32, cpus: u32) -> bool {
    runnable <= cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_fourth_field() {
        assert_eq!(parse_runnable(b"0.00 0.01 0.05 1/128 4242\n"), Some(1));
        assert_eq!(parse_runnable(b"12.50 9.10 7.00 21/1570 99"), Some(21));
        assert_eq!(parse_runnable(b"  0.1  0.2 0.3\t4/5 6"), Some(4));
        assert_eq!(
            parse_runnable(b"0 0 0 4294967295/4294967295 1"),
            Some(u32::MAX)
        );
    }

    #[test]
    fn rejects_other_shapes() {
        for bad in [
            &b""[..],
            b"0.1 0.2 0.3",
            b"0.1 0.2 0.3 4 5",
            b"0.1 0.2 0.3 /5 6",
            b"0.1 0.2 0.3 4/ 6",
            b"0.1 0.2 0.3 -4/5 6",
            b"0.1 0.2 0.3 x/5 6",
            b"0.1 0.2 0.3 4294967296/5 6",
            b"0.1 0.2 0.3 4/5x 6",
        ] {
            assert_eq!(
                parse_runnable(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn fits_when_every_runnable_thread_has_a_cpu() {
        assert!(fits(2, 2));
        assert!(fits(0, 1));
        assert!(!fits(3, 2));
    }

    /// On Linux with `/proc`, the reader itself is runnable, so the count
    /// is at least 1; repeated reads keep working on the kept descriptor.
    #[test]
    fn reads_this_machine() {
        assert!(online_cpus() >= 1);
        if std::path::Path::new("/proc/loadavg").exists() {
            for _ in 0..3 {
                let n = runnable_threads().expect("readable /proc/loadavg");
                assert!(n >= 1, "{n}");
            }
        }
    }
}
