//! The `WAITWISE_*` variables under the interposer, read by waitwise's one
//! environment parser (`waitwise::env`): a rejected value prints exactly
//! one line on stderr and the program runs on with the default;
//! `WAITWISE_PROFILE=1` writes `waitwise-profile-<pid>.json` in the working
//! directory.

mod common;

use common::{compile, make_fifo, preloaded, read_profile, run_ok, run_within, scratch_dir};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// One bad value per variable that has a range (`WAITWISE_PROFILE` takes
/// any value).
const BAD: [(&str, &str); 4] = [
    ("WAITWISE_POLICY", "fastest"),
    ("WAITWISE_ALPHA", "-3"),
    ("WAITWISE_BLOCK_NS", "lots"),
    ("WAITWISE_DISABLE", "foo"),
];

/// Runs `cmd` (already under the interposer) with every [`BAD`] value and
/// checks its stderr: exactly one line per variable, naming it and the
/// value, saying the default is used, and nothing else.
fn warns_once_per_bad_variable(what: &str, cmd: &mut Command) {
    let out = run_ok(cmd.envs(BAD));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (var, value) in BAD {
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(var)).collect();
        assert_eq!(lines.len(), 1, "{what}: one line for {var}:\n{stderr}");
        assert!(
            lines[0].starts_with(&format!("waitwise: {var}={value:?} rejected")),
            "{what}:\n{stderr}"
        );
        assert!(lines[0].contains("using the default"), "{what}:\n{stderr}");
    }
    assert_eq!(stderr.lines().count(), BAD.len(), "{what}:\n{stderr}");
}

#[test]
fn bad_values_warn_once_in_a_c_program_and_it_runs_on() {
    warns_once_per_bad_variable(
        "cond producer-consumer",
        preloaded(compile("cond")).arg("producer-consumer"),
    );
    warns_once_per_bad_variable("barrier", preloaded(compile("barrier")).args(["4", "200"]));
}

#[test]
fn bad_values_warn_once_in_true_when_it_reports_and_go_unread_when_it_does_not() {
    // `true` imports no pthread function: only an output it is asked for
    // has the interposer load and read its settings.
    let profile = scratch_dir().join(format!("bad-values-true-{}.json", std::process::id()));
    warns_once_per_bad_variable("true", preloaded("true").env("WAITWISE_PROFILE", &profile));
    let _ = std::fs::remove_file(&profile);
    let out = run_ok(preloaded("true").envs(BAD));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `python3` itself, not a wrapper such as pyenv's shim: every process of
/// a wrapper would load the interposer and print its own lines.
#[test]
fn bad_values_warn_once_in_python() {
    let out = common::native("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output();
    let python = match out {
        Ok(out) if out.status.success() => {
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string())
        }
        _ => {
            eprintln!("SKIP: python3 is not installed (not found on PATH)");
            return;
        }
    };
    warns_once_per_bad_variable("python3 -c pass", preloaded(&python).args(["-c", "pass"]));
}

/// `WAITWISE_PROFILE=1` means on, as in the library: the profile goes to
/// `waitwise-profile-<pid>.json` in the working directory, and no file
/// named `1` appears.
#[test]
fn profile_one_writes_the_default_file_in_the_working_directory() {
    let dir = scratch_dir().join(format!("profile-one-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let child = preloaded(compile("barrier"))
        .args(["2", "1000"])
        .env("WAITWISE_PROFILE", "1")
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let want = format!("waitwise-profile-{pid}.json");
    assert_eq!(
        files,
        std::slice::from_ref(&want),
        "files in the working directory"
    );
    let objects = read_profile(&dir.join(&want));
    assert!(
        objects.iter().any(|o| o["kind"] == "barrier"),
        "{objects:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `WAITWISE_PROFILE=0` and empty are off, as in the library: no file.
#[test]
fn profile_zero_or_empty_writes_nothing() {
    for value in ["0", ""] {
        let dir = scratch_dir().join(format!("profile-zero-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let out = run_ok(
            preloaded(compile("barrier"))
                .args(["2", "100"])
                .env("WAITWISE_PROFILE", value)
                .current_dir(&dir),
        );
        assert!(out.stderr.is_empty(), "{value:?}");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "WAITWISE_PROFILE={value:?} wrote a file"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Processes that share a `WAITWISE_PROFILE` path without `%p`: one that
/// recorded no wait (a wrapper, here `true`) leaves the profile of one
/// that did, and the file is replaced whole (no temporary file stays);
/// with no file yet, it writes its empty profile.
#[test]
fn a_process_without_waits_leaves_a_shared_profile_alone() {
    let dir = scratch_dir().join(format!("profile-shared-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("shared.json");
    run_ok(
        preloaded(compile("barrier"))
            .args(["2", "1000"])
            .env("WAITWISE_PROFILE", &path),
    );
    assert!(read_profile(&path).iter().any(|o| o["kind"] == "barrier"));
    run_ok(preloaded("true").env("WAITWISE_PROFILE", &path));
    let objects = read_profile(&path);
    assert!(
        objects.iter().any(|o| o["kind"] == "barrier"),
        "overwritten: {objects:?}"
    );
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["shared.json"], "files beside the profile");
    // With no file yet, one that recorded no wait still writes one.
    std::fs::remove_file(&path).unwrap();
    run_ok(preloaded("true").env("WAITWISE_PROFILE", &path));
    assert_eq!(read_profile(&path).len(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A FIFO at the saved machine profile's path (where a preloaded process
/// that may wait reads its starting `B`, at load) is not a profile: a
/// preloaded program ignores it with one line on stderr and runs, instead
/// of blocking in the open for a writer that never comes. `true`, which
/// imports no pthread function, does not look.
#[test]
fn a_fifo_at_the_machine_profile_path_is_ignored() {
    let cache = scratch_dir().join(format!("machine-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let dir = cache.join("waitwise");
    std::fs::create_dir_all(&dir).unwrap();
    let key = waitwise_platform::machine::MachineId::current().key();
    let fifo = dir.join(format!("machine-{key}.txt"));
    make_fifo(&fifo);
    let barrier = compile("barrier");
    for (what, mut cmd) in [
        ("true", preloaded("true")),
        ("barrier 2 100", {
            let mut c = preloaded(&barrier);
            c.args(["2", "100"]);
            c
        }),
    ] {
        let out = run_within(cmd.env("XDG_CACHE_HOME", &cache), Duration::from_secs(10));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what}: {}\n{stderr}", out.status);
        let lines: Vec<&str> = stderr.lines().collect();
        if what == "true" {
            assert!(lines.is_empty(), "{what}:\n{stderr}");
            continue;
        }
        assert!(
            lines.len() == 1
                && lines.iter().all(|l| l.starts_with("waitwise: ")
                    && l.contains(&*fifo.to_string_lossy())
                    && l.contains("not a regular file")),
            "{what}: expected the one line about the FIFO:\n{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&cache);
}

/// The profile written through `WAITWISE_PROFILE=LINK`, where LINK is a
/// symlink: the file it points to gets the profile (created if missing),
/// and LINK stays a symlink.
#[test]
fn profile_through_a_symlink_lands_in_its_target() {
    let dir = scratch_dir().join(format!("profile-symlink-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("link.json");
    let target = dir.join("target.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();
    // Missing target first (a dangling link), then one to replace.
    for round in ["missing target", "existing target"] {
        run_ok(
            preloaded(compile("barrier"))
                .args(["2", "1000"])
                .env("WAITWISE_PROFILE", &link),
        );
        let meta = std::fs::symlink_metadata(&link).unwrap();
        assert!(meta.file_type().is_symlink(), "{round}: link replaced");
        assert!(
            read_profile(&target).iter().any(|o| o["kind"] == "barrier"),
            "{round}"
        );
    }
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["link.json", "target.json"],
        "files beside the profile"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `WAITWISE_PROFILE=FIFO`: the profile goes into the FIFO, to the reader
/// that has it open, and the FIFO stays a FIFO; with no reader the program
/// exits anyway, saying in one line that the profile was not written.
#[test]
fn profile_to_a_fifo_goes_to_its_reader() {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let dir = scratch_dir().join(format!("profile-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("profile.fifo");
    make_fifo(&fifo);
    // Opened before the program runs, without blocking for a writer; the
    // profile (a few KiB) fits in the pipe, and is read after the exit.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let out = run_within(
        preloaded(compile("barrier"))
            .args(["2", "1000"])
            .env("WAITWISE_PROFILE", &fifo),
        Duration::from_secs(10),
    );
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut text = Vec::new();
    reader.read_to_end(&mut text).unwrap();
    drop(reader);
    let copy = dir.join("read.json");
    std::fs::write(&copy, &text).unwrap();
    assert!(read_profile(&copy).iter().any(|o| o["kind"] == "barrier"));
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(
        meta.file_type().is_fifo(),
        "the FIFO was replaced: {meta:?}"
    );
    // No reader now.
    let out = run_within(
        preloaded(compile("barrier"))
            .args(["2", "1000"])
            .env("WAITWISE_PROFILE", &fifo),
        Duration::from_secs(10),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("waitwise: cannot write the profile to") && stderr.contains("no reader"),
        "{stderr}"
    );
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(
        meta.file_type().is_fifo(),
        "the FIFO was replaced: {meta:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `WAITWISE_PROFILE=/dev/null` must leave `/dev/null` a device (a root
/// process could replace it). Checked on a null device node of the test's
/// own (same device numbers), never on `/dev/null` itself; skipped where
/// the test may not make device nodes (not root, or no `CAP_MKNOD`).
#[test]
fn profile_to_a_character_device_leaves_it_a_device() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch_dir().join(format!("profile-device-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let null = dir.join("null");
    let c = std::ffi::CString::new(null.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if rc != 0 {
        eprintln!(
            "skipped: cannot make a device node here ({}); needs root with CAP_MKNOD",
            std::io::Error::last_os_error()
        );
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let out = run_within(
        preloaded(compile("barrier"))
            .args(["2", "1000"])
            .env("WAITWISE_PROFILE", &null),
        Duration::from_secs(10),
    );
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta = std::fs::symlink_metadata(&null).unwrap();
    assert!(
        meta.file_type().is_char_device(),
        "the device node was replaced: {meta:?}"
    );
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["null"], "files beside the device node");
    let _ = std::fs::remove_dir_all(&dir);
}
