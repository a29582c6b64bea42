//! The CPU limit that the process's cgroup sets with a CPU quota, read
//! without allocating and without calling pthread functions, so that a
//! wait may read it: the wait may be for the allocator's own lock.
//!
//! It reads what `std::thread::available_parallelism` reads, the way that
//! reads it:
//!
//! - `/proc/self/cgroup` names the process's cgroup: the line whose
//!   controller list is empty (`0::PATH`, cgroup v2), or the line whose
//!   controller list holds `cpu` (cgroup v1), which wins over a v2 line.
//! - cgroup v2: `cpu.max` (`QUOTA PERIOD`, or `max PERIOD` for no quota)
//!   in the cgroup's directory under `/sys/fs/cgroup` and in each parent up
//!   to `/sys/fs/cgroup` itself; nothing unless the cgroup's directory
//!   holds `cgroup.controllers`.
//! - cgroup v1: `cpu.cfs_quota_us` (`-1` for no quota) and
//!   `cpu.cfs_period_us` in the cgroup's directory under the `cpu`
//!   controller's mount and in each parent up to the mount itself. The
//!   mount is `/sys/fs/cgroup/cpu` or `/sys/fs/cgroup/cpu,cpuacct`, the
//!   first of them that holds the cgroup's directory, else the first
//!   `cgroup` mount with the `cpu` option in `/proc/self/mountinfo` whose
//!   root holds the cgroup (a bind mount of a subtree: its root is taken
//!   off the cgroup's path).
//!
//! A level's limit is its quota divided by its period, rounded down; the
//! limit is the least over the levels, and at least 1. A file that is
//! missing, not a regular file, unreadable, not UTF-8 or not as described
//! gives no limit for its level.
//!
//! Nothing here allocates: files are opened with `open` (`O_NONBLOCK`, so
//! a FIFO at the path cannot block, and read only if `fstat` finds a
//! regular file) and read with `read` into buffers on the stack; paths are
//! built in a 1024-byte buffer on the stack; `/proc/self/cgroup` and
//! `/proc/self/mountinfo` are streamed line by line through a buffer of
//! the same size (a partial line is carried over to the next read). A
//! line longer than that buffer is skipped (mountinfo's overlay lines can
//! be; the cgroup mounts' are short), and a path longer than it gives no
//! limit (a container's cgroup path is a few hundred bytes at most). About
//! 3 KiB of stack at most: this runs inside a thread's first contended
//! wait, on whatever stack the program gave that thread.
//!
//! Not covered (nor by std): a cgroup v2 hierarchy mounted anywhere but
//! `/sys/fs/cgroup`, and paths with spaces or control characters, which
//! `/proc` escapes and nothing here unescapes.

/// The size of the path and line buffers (module doc).
#[cfg(target_os = "linux")]
const BUFFER_BYTES: usize = 1024;

/// The number of CPUs the process's cgroup quota allows (module doc): the
/// least quota over the cgroup and its parents, divided by its period,
/// rounded down, at least 1. `None` where no quota is set or none can be
/// read. Allocates nothing.
pub fn cpu_limit() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        imp::quota_under(
            c"/proc/self/cgroup",
            std::path::Path::new("/sys/fs/cgroup"),
            c"/proc/self/mountinfo",
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::BUFFER_BYTES;
    use std::ffi::{CStr, OsStr};
    use std::io;
    use std::mem;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    /// Which cgroup hierarchy holds the process's CPU controller.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Version {
        V1,
        V2,
    }

    /// The quota's CPU count ([`super::cpu_limit`]) with the files read
    /// from elsewhere: `proc_cgroup` in place of `/proc/self/cgroup`,
    /// `sys_cgroup` of `/sys/fs/cgroup`, `mountinfo` of
    /// `/proc/self/mountinfo`.
    pub(super) fn quota_under(
        proc_cgroup: &CStr,
        sys_cgroup: &Path,
        mountinfo: &CStr,
    ) -> Option<usize> {
        let mut lines = [0u8; BUFFER_BYTES];
        let mut group = StackPath::new();
        let version = own_cgroup(proc_cgroup, &mut lines, &mut group)?;
        let quota = match version {
            Version::V2 => quota_v2(group.as_path(), sys_cgroup),
            Version::V1 => quota_v1(group.as_path(), sys_cgroup, mountinfo, &mut lines),
        }?;
        Some(quota.max(1))
    }

    /// Reads which cgroup holds the process's CPU controller from the
    /// `/proc/self/cgroup` at `path` into `group` (relative: without its
    /// leading `/`). `None` where the file cannot be read or names none.
    fn own_cgroup(path: &CStr, buf: &mut [u8], group: &mut StackPath) -> Option<Version> {
        let mut lines = Lines::open(path, buf)?;
        let mut found = None;
        while let Some(line) = lines.next_line() {
            let Line::Text(start, end) = line else {
                continue;
            };
            // `ID:CONTROLLERS:PATH`; the path may hold `:`.
            let mut fields = lines.text(start, end).splitn(3, |&b| b == b':');
            let version = match fields.nth(1) {
                Some(b"") => Version::V2,
                Some(list)
                    if std::str::from_utf8(list)
                        .is_ok_and(|l| l.split(',').any(|c| c == "cpu")) =>
                {
                    Version::V1
                }
                _ => continue,
            };
            // A v1 line names its controllers: it wins over the v2 line.
            if found.is_some() && version == Version::V2 {
                continue;
            }
            let Some(cgroup) = fields.next() else {
                continue;
            };
            group.truncate(0);
            if !group.push_bytes(cgroup.get(1..).unwrap_or_default()) {
                found = None;
                continue;
            }
            found = Some(version);
        }
        if lines.failed {
            return None;
        }
        found
    }

    /// The least `cpu.max` limit over `group` and its parents under the
    /// v2 hierarchy mounted at `mount`.
    fn quota_v2(group: &Path, mount: &Path) -> Option<usize> {
        let mut path = StackPath::new();
        if !path.push_bytes(mount.as_os_str().as_bytes()) {
            return None;
        }
        let mount_len = path.len;
        if !path.push_component(group.as_os_str().as_bytes()) {
            return None;
        }
        if !path.with_file(b"cgroup.controllers", exists)? {
            return None;
        }
        least_over_levels(&mut path, mount_len, cpu_max)
    }

    /// The limit of the `cpu.max` in the directory at `path`.
    fn cpu_max(path: &mut StackPath) -> Option<usize> {
        let mut buf = [0u8; 64];
        path.with_file(b"cpu.max", |file| {
            let text = read_text(file, &mut buf)?;
            let mut fields = text.lines().next()?.split(' ');
            let quota = fields.next()?.parse::<usize>().ok()?;
            let period = fields.next()?.parse::<usize>().ok()?;
            (period > 0).then(|| quota / period)
        })?
    }

    /// The least CFS limit over `group` and its parents under the v1
    /// `cpu` controller's mount (module doc).
    fn quota_v1(group: &Path, sys: &Path, mountinfo: &CStr, buf: &mut [u8]) -> Option<usize> {
        let mut path = StackPath::new();
        for controllers in [b"cpu".as_slice(), b"cpu,cpuacct"] {
            path.truncate(0);
            if !(path.push_bytes(sys.as_os_str().as_bytes()) && path.push_component(controllers)) {
                continue;
            }
            let mount_len = path.len;
            if path.push_component(group.as_os_str().as_bytes()) && exists(path.c_str()) {
                return least_over_levels(&mut path, mount_len, cfs_limit);
            }
        }
        let mount_len = cpu_mount_in(mountinfo, group, buf, &mut path)?;
        if !exists(path.c_str()) {
            return None;
        }
        least_over_levels(&mut path, mount_len, cfs_limit)
    }

    /// The limit of `cpu.cfs_quota_us` and `cpu.cfs_period_us` in the
    /// directory at `path`.
    fn cfs_limit(path: &mut StackPath) -> Option<usize> {
        let quota = path.with_file(b"cpu.cfs_quota_us", read_number)??;
        let period = path.with_file(b"cpu.cfs_period_us", read_number)??;
        (period > 0).then(|| quota / period)
    }

    /// The number that the file at `path` holds, with white space around it.
    fn read_number(path: &CStr) -> Option<usize> {
        let mut buf = [0u8; 64];
        read_text(path, &mut buf)?.trim().parse().ok()
    }

    /// Finds the v1 `cpu` controller's mount that holds `group` in the
    /// `/proc/self/mountinfo` at `mountinfo`, and writes the cgroup's
    /// directory under it to `path`: the mount point, then `group` less the
    /// mount's root. Returns the mount point's length in `path`.
    fn cpu_mount_in(
        mountinfo: &CStr,
        group: &Path,
        buf: &mut [u8],
        path: &mut StackPath,
    ) -> Option<usize> {
        let mut lines = Lines::open(mountinfo, buf)?;
        while let Some(line) = lines.next_line() {
            let Line::Text(start, end) = line else {
                continue;
            };
            // `ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [OPTIONAL...] -
            // FS_TYPE SOURCE SUPER_OPTIONS`. A line that is not UTF-8 or
            // has fewer fields ends the search, as in std.
            let line = std::str::from_utf8(lines.text(start, end)).ok()?.trim();
            let mut fields = line.split(' ');
            let root = fields.nth(3)?;
            let mount_point = fields.next()?;
            let super_options = fields.next_back()?;
            let fs_type = fields.nth_back(1)?;
            if fs_type != "cgroup" || !super_options.split(',').any(|o| o == "cpu") {
                continue;
            }
            let root = Path::new(root).strip_prefix("/").ok()?;
            // A bind mount of a subtree that does not hold the cgroup.
            let Ok(below) = group.strip_prefix(root) else {
                continue;
            };
            path.truncate(0);
            if !path.push_bytes(mount_point.as_bytes()) {
                return None;
            }
            let mount_len = path.len;
            if !path.push_component(below.as_os_str().as_bytes()) {
                return None;
            }
            return Some(mount_len);
        }
        None
    }

    /// The least of `level`'s limits over the directory at `path` and each
    /// of its parents that lies under the first `mount_len` bytes of
    /// `path` (the mount itself included). `None` where no level has one.
    fn least_over_levels(
        path: &mut StackPath,
        mount_len: usize,
        mut level: impl FnMut(&mut StackPath) -> Option<usize>,
    ) -> Option<usize> {
        let mut least: Option<usize> = None;
        while path.is_under(mount_len) {
            if let Some(limit) = level(path) {
                least = Some(least.map_or(limit, |l| l.min(limit)));
            }
            let Some(parent) = path.as_path().parent() else {
                break;
            };
            let parent_len = parent.as_os_str().len();
            path.truncate(parent_len);
        }
        least
    }

    /// A path in a fixed buffer, always NUL-terminated.
    pub(super) struct StackPath {
        bytes: [u8; BUFFER_BYTES],
        len: usize,
    }

    impl StackPath {
        pub(super) fn new() -> Self {
            Self {
                bytes: [0; BUFFER_BYTES],
                len: 0,
            }
        }

        /// Appends `part`. False, with nothing appended, where `part` holds
        /// a NUL or the path and its NUL would not fit.
        pub(super) fn push_bytes(&mut self, part: &[u8]) -> bool {
            let end = self.len + part.len();
            if end >= BUFFER_BYTES || part.contains(&0) {
                return false;
            }
            self.bytes[self.len..end].copy_from_slice(part);
            self.bytes[end] = 0;
            self.len = end;
            true
        }

        /// Appends `/` and `part` (`part` alone to an empty path or one
        /// that ends in `/`; nothing for an empty `part`). False, with
        /// nothing appended, where it would not fit.
        pub(super) fn push_component(&mut self, part: &[u8]) -> bool {
            if part.is_empty() {
                return true;
            }
            let len = self.len;
            let ok = (len == 0 || self.bytes[len - 1] == b'/' || self.push_bytes(b"/"))
                && self.push_bytes(part);
            if !ok {
                self.truncate(len);
            }
            ok
        }

        pub(super) fn truncate(&mut self, len: usize) {
            debug_assert!(len <= self.len);
            self.len = len;
            self.bytes[len] = 0;
        }

        fn as_path(&self) -> &Path {
            Path::new(OsStr::from_bytes(&self.bytes[..self.len]))
        }

        pub(super) fn c_str(&self) -> &CStr {
            // Every push keeps the NUL after the path and refuses NULs in it.
            CStr::from_bytes_until_nul(&self.bytes[..=self.len]).unwrap_or_default()
        }

        /// Whether the path lies under its first `prefix_len` bytes,
        /// component by component.
        fn is_under(&self, prefix_len: usize) -> bool {
            let prefix = Path::new(OsStr::from_bytes(&self.bytes[..prefix_len]));
            prefix_len <= self.len && self.as_path().starts_with(prefix)
        }

        /// `f` of the file `name` in the directory at this path; `None`
        /// where that path would not fit. The path is left as it was.
        fn with_file<R>(&mut self, name: &[u8], f: impl FnOnce(&CStr) -> R) -> Option<R> {
            let len = self.len;
            if !self.push_component(name) {
                return None;
            }
            let r = f(self.c_str());
            self.truncate(len);
            Some(r)
        }
    }

    /// Whether something is at `path` (`stat` succeeds; links followed).
    fn exists(path: &CStr) -> bool {
        // SAFETY: `stat` is plain data; all-zero is a valid value.
        let mut st: libc::stat = unsafe { mem::zeroed() };
        // SAFETY: `path` is NUL-terminated and `st` a live, writable `stat`.
        unsafe { libc::stat(path.as_ptr(), &mut st) == 0 }
    }

    /// An open file descriptor, closed on drop.
    struct Fd(libc::c_int);

    impl Drop for Fd {
        fn drop(&mut self) {
            // SAFETY: the descriptor is ours, open, and closed only here.
            unsafe { libc::close(self.0) };
        }
    }

    /// The regular file at `path`, opened for reading; `None` where it
    /// cannot be opened or is anything else.
    fn open_regular(path: &CStr) -> Option<Fd> {
        // SAFETY: `path` is NUL-terminated; the flags ask for no mode.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NONBLOCK,
            )
        };
        if fd < 0 {
            return None;
        }
        let fd = Fd(fd);
        // SAFETY: `stat` is plain data; all-zero is a valid value.
        let mut st: libc::stat = unsafe { mem::zeroed() };
        // SAFETY: `fd.0` is open and `st` a live, writable `stat`.
        if unsafe { libc::fstat(fd.0, &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG
        {
            return None;
        }
        Some(fd)
    }

    /// One `read` into `buf`, retried when a signal interrupts it: the
    /// count read (0 at the end), or `None` on an error.
    fn read_some(fd: &Fd, buf: &mut [u8]) -> Option<usize> {
        loop {
            // SAFETY: `buf` is live and writable for `buf.len()` bytes.
            let n = unsafe { libc::read(fd.0, buf.as_mut_ptr().cast(), buf.len()) };
            if let Ok(n) = usize::try_from(n) {
                return Some(n);
            }
            // An OS error: a code in the value, nothing allocated.
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return None;
            }
        }
    }

    /// The text of the regular file at `path`, read into `buf`; `None`
    /// where it cannot be read, is not UTF-8 or does not fit in `buf`.
    fn read_text<'b>(path: &CStr, buf: &'b mut [u8]) -> Option<&'b str> {
        let fd = open_regular(path)?;
        let mut len = 0;
        while len < buf.len() {
            match read_some(&fd, &mut buf[len..])? {
                0 => return std::str::from_utf8(&buf[..len]).ok(),
                n => len += n,
            }
        }
        if read_some(&fd, &mut [0u8; 1])? != 0 {
            return None;
        }
        std::str::from_utf8(&buf[..len]).ok()
    }

    /// One line from [`Lines::next_line`].
    #[derive(Debug, PartialEq, Eq)]
    pub(super) enum Line {
        /// The line (without its `\n`) lies at this range of the buffer,
        /// for [`Lines::text`].
        Text(usize, usize),
        /// The line did not fit in the buffer, and was skipped.
        TooLong,
    }

    /// A regular file read line by line through a caller's buffer.
    pub(super) struct Lines<'b> {
        fd: Fd,
        buf: &'b mut [u8],
        /// Where the unread text in `buf` starts and ends.
        start: usize,
        end: usize,
        /// Whether the file has been read to its end.
        eof: bool,
        /// Whether a `read` failed (the lines so far are all there are).
        pub(super) failed: bool,
        /// Whether the line in `buf` continues one that did not fit.
        skipping: bool,
    }

    impl<'b> Lines<'b> {
        pub(super) fn open(path: &CStr, buf: &'b mut [u8]) -> Option<Self> {
            Some(Self {
                fd: open_regular(path)?,
                buf,
                start: 0,
                end: 0,
                eof: false,
                failed: false,
                skipping: false,
            })
        }

        /// The next line; `None` at the end of the file or on an error
        /// ([`Lines::failed`]).
        pub(super) fn next_line(&mut self) -> Option<Line> {
            loop {
                let unread = &self.buf[self.start..self.end];
                if let Some(i) = unread.iter().position(|&b| b == b'\n') {
                    let (start, end) = (self.start, self.start + i);
                    self.start = end + 1;
                    return Some(self.line(start, end));
                }
                if self.eof {
                    if self.start == self.end && !self.skipping {
                        return None;
                    }
                    let (start, end) = (self.start, self.end);
                    self.start = end;
                    return Some(self.line(start, end));
                }
                // Carry the partial line over to the front, or drop it if
                // it fills the buffer already.
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                if self.end == self.buf.len() {
                    self.end = 0;
                    self.skipping = true;
                }
                match read_some(&self.fd, &mut self.buf[self.end..]) {
                    Some(0) => self.eof = true,
                    Some(n) => self.end += n,
                    None => {
                        self.failed = true;
                        return None;
                    }
                }
            }
        }

        fn line(&mut self, start: usize, end: usize) -> Line {
            if mem::take(&mut self.skipping) {
                Line::TooLong
            } else {
                Line::Text(start, end)
            }
        }

        /// The text of [`Line::Text`]`(start, end)`, until the next call.
        pub(super) fn text(&self, start: usize, end: usize) -> &[u8] {
            &self.buf[start..end]
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::imp::{quota_under, Line, Lines, StackPath};
    use super::BUFFER_BYTES;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    /// A fake `/proc/self/cgroup`, `/proc/self/mountinfo` and
    /// `/sys/fs/cgroup` in a directory of its own, removed on drop.
    struct Fixture {
        dir: PathBuf,
    }

    impl Fixture {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "waitwise-cgroup-quota-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("sys")).unwrap();
            Self { dir }
        }

        /// Writes `text` to the file at `relative`, making its directories.
        fn write(&self, relative: &str, text: impl AsRef<[u8]>) -> &Self {
            let path = self.dir.join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
            self
        }

        fn mkdir(&self, relative: &str) -> &Self {
            std::fs::create_dir_all(self.dir.join(relative)).unwrap();
            self
        }

        fn c_path(&self, relative: &str) -> CString {
            CString::new(self.dir.join(relative).as_os_str().as_bytes()).unwrap()
        }

        /// The quota with `cgroup` as `/proc/self/cgroup`.
        fn quota(&self, cgroup: &str) -> Option<usize> {
            self.write("proc/cgroup", cgroup);
            quota_under(
                &self.c_path("proc/cgroup"),
                &self.dir.join("sys"),
                &self.c_path("proc/mountinfo"),
            )
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    #[test]
    fn v2_quota_set_on_a_parent() {
        let f = Fixture::new("v2-parent");
        f.write("sys/a/b/cgroup.controllers", "cpu memory\n")
            .write("sys/a/b/cpu.max", "max 100000\n")
            .write("sys/a/cpu.max", "250000 100000\n");
        assert_eq!(f.quota("0::/a/b\n"), Some(2));
    }

    #[test]
    fn v2_least_over_levels_and_at_least_one() {
        let f = Fixture::new("v2-least");
        f.write("sys/a/b/cgroup.controllers", "cpu\n")
            .write("sys/a/b/cpu.max", "350000 100000\n")
            .write("sys/a/cpu.max", "800000 100000\n")
            .write("sys/cpu.max", "max 100000\n");
        assert_eq!(f.quota("0::/a/b\n"), Some(3));
        f.write("sys/a/cpu.max", "50000 100000\n");
        assert_eq!(f.quota("0::/a/b\n"), Some(1));
    }

    #[test]
    fn v2_max_everywhere_is_no_quota() {
        let f = Fixture::new("v2-max");
        f.write("sys/a/cgroup.controllers", "cpu\n")
            .write("sys/a/cpu.max", "max 100000\n")
            .write("sys/cpu.max", "max 100000\n");
        assert_eq!(f.quota("0::/a\n"), None);
    }

    #[test]
    fn v2_the_root_cgroup() {
        let f = Fixture::new("v2-root");
        f.write("sys/cgroup.controllers", "cpu\n")
            .write("sys/cpu.max", "400000 100000\n");
        assert_eq!(f.quota("0::/\n"), Some(4));
    }

    #[test]
    fn v2_without_cgroup_controllers_is_no_quota() {
        let f = Fixture::new("v2-no-controllers");
        f.write("sys/a/cpu.max", "200000 100000\n");
        assert_eq!(f.quota("0::/a\n"), None);
    }

    #[test]
    fn v2_a_missing_or_malformed_level_gives_nothing_for_that_level() {
        let f = Fixture::new("v2-malformed");
        f.write("sys/a/b/c/cgroup.controllers", "cpu\n")
            .write("sys/a/cpu.max", "300000 100000\n");
        // c has no cpu.max at all.
        for bad in [
            "abc 100000\n",
            "200000\n",
            "200000 0\n",
            "-200000 100000\n",
            "",
            &"9".repeat(100),
        ] {
            f.write("sys/a/b/cpu.max", bad);
            assert_eq!(f.quota("0::/a/b/c\n"), Some(3), "{bad:?}");
        }
        f.write("sys/a/b/cpu.max", b"\xff\xfe 100000\n");
        assert_eq!(f.quota("0::/a/b/c\n"), Some(3));
        // A directory where the file should be.
        std::fs::remove_file(f.dir.join("sys/a/b/cpu.max")).unwrap();
        f.mkdir("sys/a/b/cpu.max");
        assert_eq!(f.quota("0::/a/b/c\n"), Some(3));
    }

    #[test]
    fn v1_quota_of_minus_one_is_no_quota() {
        let f = Fixture::new("v1-none");
        f.write("sys/cpu,cpuacct/g/cpu.cfs_quota_us", "-1\n")
            .write("sys/cpu,cpuacct/g/cpu.cfs_period_us", "100000\n")
            .write("sys/cpu,cpuacct/cpu.cfs_quota_us", "-1\n")
            .write("sys/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
        assert_eq!(f.quota("3:cpuset:/\n2:cpu,cpuacct:/g\n0::/\n"), None);
    }

    #[test]
    fn v1_quota_at_the_cgroup_and_its_parent() {
        let f = Fixture::new("v1-quota");
        f.write("sys/cpu/g/h/cpu.cfs_quota_us", "300000\n")
            .write("sys/cpu/g/h/cpu.cfs_period_us", "100000\n")
            .write("sys/cpu/cpu.cfs_quota_us", "-1\n")
            .write("sys/cpu/cpu.cfs_period_us", "100000\n");
        assert_eq!(f.quota("2:cpu:/g/h\n"), Some(3));
        f.write("sys/cpu/g/cpu.cfs_quota_us", "150000\n")
            .write("sys/cpu/g/cpu.cfs_period_us", "100000\n");
        assert_eq!(f.quota("2:cpu:/g/h\n"), Some(1));
        // A missing period: nothing from that level.
        std::fs::remove_file(f.dir.join("sys/cpu/g/cpu.cfs_period_us")).unwrap();
        assert_eq!(f.quota("2:cpu:/g/h\n"), Some(3));
        // A malformed quota.
        f.write("sys/cpu/g/h/cpu.cfs_quota_us", "3e5\n");
        assert_eq!(f.quota("2:cpu:/g/h\n"), None);
    }

    #[test]
    fn v1_line_wins_over_the_v2_line() {
        let f = Fixture::new("v1-wins");
        f.write("sys/cgroup.controllers", "cpu\n")
            .write("sys/cpu.max", "100000 100000\n")
            .write("sys/cpu/g/cpu.cfs_quota_us", "200000")
            .write("sys/cpu/g/cpu.cfs_period_us", "100000");
        assert_eq!(f.quota("0::/\n1:cpu:/g\n"), Some(2));
        assert_eq!(f.quota("1:cpu:/g\n0::/\n"), Some(2));
        assert_eq!(f.quota("1:memory:/g\n0::/\n"), Some(1));
    }

    #[test]
    fn v1_mount_found_in_mountinfo_with_its_root_taken_off() {
        let f = Fixture::new("v1-mountinfo");
        let mount = f.dir.join("elsewhere/cpu");
        f.write("elsewhere/cpu/inner/cpu.cfs_quota_us", "200000\n")
            .write("elsewhere/cpu/inner/cpu.cfs_period_us", "100000\n")
            .write("elsewhere/cpu/cpu.cfs_quota_us", "-1\n")
            .write("elsewhere/cpu/cpu.cfs_period_us", "100000\n");
        let long_options = "x".repeat(BUFFER_BYTES + 100);
        let mountinfo = format!(
            "22 1 0:21 / / rw - overlay overlay rw,lowerdir={long_options}\n\
             30 22 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
             31 22 0:28 /other /nowhere rw - cgroup cgroup rw,cpu\n\
             32 22 0:29 /outer {} rw,relatime shared:14 - cgroup cgroup rw,cpu,cpuacct\n",
            mount.display()
        );
        f.write("proc/mountinfo", mountinfo);
        assert_eq!(f.quota("4:cpu,cpuacct:/outer/inner\n"), Some(2));
        // Only a mount whose root does not hold the cgroup.
        f.write(
            "proc/mountinfo",
            format!(
                "31 22 0:28 /other {} rw - cgroup cgroup rw,cpu\n",
                mount.display()
            ),
        );
        assert_eq!(f.quota("4:cpu,cpuacct:/outer/inner\n"), None);
        // No mountinfo at all.
        std::fs::remove_file(f.dir.join("proc/mountinfo")).unwrap();
        assert_eq!(f.quota("4:cpu,cpuacct:/outer/inner\n"), None);
    }

    #[test]
    fn unreadable_or_unnamed_cgroups_are_no_quota() {
        let f = Fixture::new("no-cgroup");
        f.write("sys/cpu/cpu.cfs_quota_us", "100000")
            .write("sys/cpu/cpu.cfs_period_us", "100000");
        assert_eq!(f.quota("1:memory:/\n2:cpuset:/\n"), None);
        assert_eq!(f.quota(""), None);
        assert_eq!(f.quota("garbage\n::\n\n"), None);
        assert_eq!(
            quota_under(
                c"/nonexistent/cgroup",
                Path::new("/sys/fs/cgroup"),
                c"/nonexistent/mountinfo"
            ),
            None
        );
    }

    #[test]
    fn a_path_too_long_for_the_buffers_is_no_quota() {
        let f = Fixture::new("too-long");
        f.write("sys/cgroup.controllers", "cpu\n")
            .write("sys/cpu.max", "100000 100000\n");
        // A line longer than the line buffer is skipped: no cgroup named.
        let long = "a/".repeat(BUFFER_BYTES);
        assert_eq!(f.quota(&format!("0::/{long}\n")), None);
        // A line that fits, whose path under the mount does not.
        let long = "a/".repeat(BUFFER_BYTES / 2 - 8);
        assert_eq!(f.quota(&format!("0::/{long}\n")), None);
        // The short line after a skipped one still counts.
        let long = "a/".repeat(BUFFER_BYTES);
        assert_eq!(f.quota(&format!("1:cpu:/{long}\n0::/\n")), Some(1));
    }

    #[test]
    fn a_stack_path_refuses_what_does_not_fit() {
        let mut path = StackPath::new();
        assert!(path.push_bytes(b"/sys"));
        assert!(path.push_component(b"fs"));
        assert!(!path.push_component(&[b'x'; BUFFER_BYTES]));
        assert!(!path.push_bytes(b"a\0b"));
        assert_eq!(path.c_str(), c"/sys/fs");
        assert!(path.push_bytes(&[b'y'; BUFFER_BYTES - 8]));
        assert!(!path.push_bytes(b"y"));
    }

    #[test]
    fn lines_carry_partial_lines_over_and_skip_long_ones() {
        let f = Fixture::new("lines");
        f.write("text", "ab\ncdefghijkl\nxyz\nmnopqrstuvw");
        let path = f.c_path("text");
        let mut buf = [0u8; 8];
        let mut lines = Lines::open(&path, &mut buf).unwrap();
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line() {
            seen.push(match line {
                Line::Text(s, e) => String::from_utf8(lines.text(s, e).to_vec()).unwrap(),
                Line::TooLong => "<too long>".to_owned(),
            });
        }
        assert!(!lines.failed);
        assert_eq!(seen, ["ab", "<too long>", "xyz", "<too long>"]);
    }
}
