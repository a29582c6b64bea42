//! `waitwise run [--profile] [--policy P] [--out DIR] -- PROG ARGS`: runs
//! an unmodified program under the interposer (`libwaitwise_preload.so`)
//! and, with `--profile`, reports where its threads waited.
//!
//! The program keeps its standard input, output and error, and `waitwise
//! run` exits with its status (a program killed by signal `N` gives
//! `128 + N`, as a shell reports it); a SIGTERM or SIGHUP sent to `waitwise
//! run` is passed on to the program, and a Ctrl-C at the terminal reaches
//! the program alone, so the report is still written. The interposer is put first in
//! `LD_PRELOAD` (ahead of what the environment had there) and found
//! beside this executable, in `../lib` from it, or where `--preload`
//! says ([`find_preload`]).
//!
//! With `--profile`, each process of the program writes its profile into
//! `DIR/raw/` (`WAITWISE_PROFILE=DIR/raw/profile-%p.json`); when the program
//! has exited, [`wait_report`] reads them, names each object's call site
//! ([`call_sites`]), fits its waits and writes the report
//! ([`report_files`]): a table on stderr, `DIR/waits.json`,
//! `DIR/waits.folded` (folded stacks) and `DIR/waits.html`.

mod call_sites;
mod report_files;
mod wait_report;

use anyhow::{bail, Context};
use std::ffi::c_int;
use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use waitwise::env::PolicyChoice;

/// The interposer's file name.
pub const PRELOAD_FILE: &str = "libwaitwise_preload.so";
/// The implementation the interposer loads from beside itself.
pub const IMPLEMENTATION_FILE: &str = "libwaitwise_interposer.so";

/// Options of `waitwise run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Record where the program's threads wait and report it at exit.
    #[arg(long)]
    pub profile: bool,
    /// The interposer's policy (WAITWISE_POLICY): two-phase, spin, block
    /// or randomized.
    #[arg(long, value_parser = parse_policy)]
    pub policy: Option<PolicyChoice>,
    /// Where --profile writes its files.
    #[arg(long, default_value = "waitwise-run")]
    pub out: PathBuf,
    /// The interposer to use (default: libwaitwise_preload.so beside this
    /// executable, or in ../lib from it).
    #[arg(long)]
    pub preload: Option<PathBuf>,
    /// Objects shown in the table (every object goes to the files).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// The program and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<OsString>,
}

/// Parses a policy name as `WAITWISE_POLICY` takes it (clap value parser).
fn parse_policy(s: &str) -> Result<PolicyChoice, String> {
    PolicyChoice::ALL
        .into_iter()
        .find(|p| p.name() == s.trim())
        .ok_or_else(|| {
            let names: Vec<&str> = PolicyChoice::ALL.iter().map(|p| p.name()).collect();
            format!("must be one of {}", names.join(", "))
        })
}

/// Checks the options before anything runs.
///
/// # Errors
/// The interposer cannot be found, or `--out` is not a directory one can
/// make.
pub fn validate(args: &RunArgs) -> anyhow::Result<()> {
    find_preload(args.preload.as_deref())?;
    if args.profile && args.out.exists() && !args.out.is_dir() {
        bail!("--out {} exists and is not a directory", args.out.display());
    }
    Ok(())
}

/// The interposer: `flag` if given, else `libwaitwise_preload.so` beside
/// the running executable or in `../lib` from it.
///
/// # Errors
/// The named file does not exist, or none was found (the message lists
/// where it looked), or the one found has no implementation beside it.
pub fn find_preload(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = flag {
        if !path.is_file() {
            bail!("--preload {}: no such file", path.display());
        }
        return std::path::absolute(path).with_context(|| format!("--preload {}", path.display()));
    }
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let dir = exe.parent().unwrap_or(Path::new("/"));
    let candidates = [
        dir.join(PRELOAD_FILE),
        dir.join("..").join(PRELOAD_FILE),
        dir.join("../lib").join(PRELOAD_FILE),
    ];
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        let implementation = found.with_file_name(IMPLEMENTATION_FILE);
        if !implementation.is_file() {
            bail!(
                "{} has no {IMPLEMENTATION_FILE} beside it, which it loads; copy both \
                 (cargo build --release builds them together)",
                found.display()
            );
        }
        return Ok(found.clone());
    }
    let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    bail!(
        "cannot find the interposer {PRELOAD_FILE} (looked at {}); build it (cargo build --release) or name it with --preload",
        looked.join(", ")
    )
}

/// `LD_PRELOAD` with `preload` first, before what `existing` held.
pub fn preload_list(preload: &Path, existing: Option<OsString>) -> OsString {
    let mut list = preload.as_os_str().to_owned();
    if let Some(rest) = existing.filter(|r| !r.is_empty()) {
        list.push(":");
        list.push(rest);
    }
    list
}

/// Run as root, lets every user write into `dir` (mode 1777, as `/tmp`):
/// a server started as root often goes on as a user of its own (memcached
/// `-u nobody`, Apache's and Varnish's workers), and its processes write
/// their profiles there when they exit. The sticky bit keeps each user's
/// files to that user. Run as anyone else, the program cannot change its
/// user, and `dir` keeps the mode the umask gave it.
fn open_to_programs_that_change_user(dir: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777))
            .with_context(|| format!("cannot open {} to other users", dir.display()))?;
    }
    Ok(())
}

/// The exit status a shell reports for `status`: the code, or `128 + N`
/// for a program killed by signal `N`.
pub fn shell_status(status: std::process::ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

/// Runs the program, writes the report if asked, and exits with the
/// program's status.
///
/// # Errors
/// The program cannot be started, or the report cannot be written.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let preload = find_preload(args.preload.as_deref())?;
    let raw_dir = args.out.join("raw");
    let mut child = std::process::Command::new(&args.command[0]);
    child.args(&args.command[1..]);
    child.env(
        "LD_PRELOAD",
        preload_list(&preload, std::env::var_os("LD_PRELOAD")),
    );
    if let Some(policy) = args.policy {
        child.env("WAITWISE_POLICY", policy.name());
    }
    if args.profile {
        if raw_dir.exists() {
            std::fs::remove_dir_all(&raw_dir)
                .with_context(|| format!("cannot empty {}", raw_dir.display()))?;
        }
        std::fs::create_dir_all(&raw_dir)
            .with_context(|| format!("cannot create {}", raw_dir.display()))?;
        open_to_programs_that_change_user(&raw_dir)?;
        let raw_dir = std::path::absolute(&raw_dir)?;
        child.env("WAITWISE_PROFILE", raw_dir.join("profile-%p.json"));
    }
    // Held from before the spawn until the handlers are in place, so that
    // a signal sent as soon as the program runs is passed on, not lost; the
    // program itself starts with this process's mask as it was.
    let blocked = BlockedSignals::now();
    let mask = blocked.previous;
    // SAFETY: the closure runs in the child between fork and exec, where it
    // only calls pthread_sigmask (async-signal-safe) on a copied mask.
    unsafe {
        child.pre_exec(move || {
            libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
            Ok(())
        });
    }
    let mut child = child
        .spawn()
        .with_context(|| format!("cannot run {}", args.command[0].to_string_lossy()))?;
    let _passing_on = SignalsPassedOn::to(child.id());
    drop(blocked);
    let status = child.wait().context("cannot wait for the program")?;
    let code = shell_status(status);
    if args.profile {
        let report = wait_report::WaitReport::read(&raw_dir)?;
        eprint!("{}", report_files::table_text(&report, args.top)?);
        report_files::write_all(&report, &args.out)?;
        eprintln!(
            "waitwise: report in {} (waits.json, waits.folded, waits.html)",
            args.out.display()
        );
    }
    std::process::exit(code)
}

/// The signals [`SignalsPassedOn`] handles, blocked while it lives.
struct BlockedSignals {
    previous: libc::sigset_t,
}

impl BlockedSignals {
    fn now() -> Self {
        // SAFETY: sigset_t is plain data, initialized by sigemptyset before
        // use; pthread_sigmask writes the previous mask into `previous`.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaddset(&mut set, sig);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous);
            Self { previous }
        }
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask `now` replaced; a signal that arrived
        // meanwhile is delivered now, to the handlers then in place.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut()) };
    }
}

/// The program's process id while [`SignalsPassedOn`] lives; 0 otherwise.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// While it lives, this process outlives its program to report and pass on
/// its status: SIGINT and SIGQUIT are ignored (a Ctrl-C or Ctrl-\\ at the
/// terminal reaches the program in the same process group), and SIGTERM
/// and SIGHUP are passed on to the program (`kill`, `timeout` and a closed
/// terminal signal this process only).
struct SignalsPassedOn {
    previous: [(c_int, libc::sighandler_t); 4],
}

/// Passes `signal` on to the program (async-signal-safe: one atomic load
/// and `kill`).
extern "C" fn pass_on(signal: c_int) {
    // Relaxed: the id was stored before the handler was installed.
    let pid = CHILD.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(pid, signal) };
    }
}

impl SignalsPassedOn {
    fn to(child: u32) -> Self {
        // Relaxed: read by the handler installed below, in this thread.
        CHILD.store(child as i32, Ordering::Relaxed);
        let handler = pass_on as extern "C" fn(c_int) as libc::sighandler_t;
        let dispositions = [
            (libc::SIGINT, libc::SIG_IGN),
            (libc::SIGQUIT, libc::SIG_IGN),
            (libc::SIGTERM, handler),
            (libc::SIGHUP, handler),
        ];
        // SAFETY: `signal` with SIG_IGN or an async-signal-safe handler; the
        // previous dispositions are restored by Drop.
        let previous = dispositions.map(|(sig, how)| (sig, unsafe { libc::signal(sig, how) }));
        Self { previous }
    }
}

impl Drop for SignalsPassedOn {
    fn drop(&mut self) {
        for (sig, how) in self.previous {
            // SAFETY: restores the disposition `to` replaced.
            unsafe { libc::signal(sig, how) };
        }
        // Relaxed: the handlers are gone.
        CHILD.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interposer_goes_first_in_ld_preload() {
        let p = Path::new("/x/libwaitwise_preload.so");
        assert_eq!(preload_list(p, None), "/x/libwaitwise_preload.so");
        assert_eq!(
            preload_list(p, Some("".into())),
            "/x/libwaitwise_preload.so"
        );
        assert_eq!(
            preload_list(p, Some("libtsan.so.2".into())),
            "/x/libwaitwise_preload.so:libtsan.so.2"
        );
    }

    #[test]
    fn a_policy_is_named_as_waitwise_policy_takes_it() {
        assert_eq!(parse_policy("spin"), Ok(PolicyChoice::Spin));
        assert!(parse_policy("fast").unwrap_err().contains("two-phase"));
    }

    #[test]
    fn a_missing_preload_is_a_clear_error() {
        let e = find_preload(Some(Path::new("/nonexistent/x.so"))).unwrap_err();
        assert!(e.to_string().contains("no such file"), "{e}");
    }
}
