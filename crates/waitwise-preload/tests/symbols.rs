//! Symbol audit: every function glibc exports for the objects
//! the interposer replaces is either defined by `libwaitwise_preload.so`
//! or listed, with a reason, in `forwarded.txt` (the crate's root). A
//! function neither defined nor listed is one a program can call and reach
//! glibc's implementation with an interposer-initialized object: the
//! cause of CPython aborting in `sem_clockwait`.
//!
//! The families are glibc's dynamic symbols matching
//! `^(__)?pthread_(mutex|cond|barrier|spin|rwlock)` (attribute functions
//! and the `__pthread_*` compatibility names included), `^sem_`, and C11's
//! `^mtx_` and `^cnd_`: glibc implements those by calling its internal
//! `__pthread_mutex_*`/`__pthread_cond_*` entry points, which no preloaded
//! object sees, so the interposer must define the C11 functions
//! themselves.

mod common;

use common::{compile, preload_so, preloaded, run_ok};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether glibc symbol `name` belongs to the audited families.
fn audited(name: &str) -> bool {
    let bare = name.strip_prefix("__").unwrap_or(name);
    ["mutex", "cond", "barrier", "spin", "rwlock"]
        .iter()
        .any(|family| bare.starts_with(&format!("pthread_{family}")))
        || ["sem_", "mtx_", "cnd_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// The defined dynamic symbols of `object`, without version suffixes
/// (`nm -D` prints `pthread_cond_wait@@GLIBC_2.3.2`).
fn defined_symbols(object: &Path) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(object)
        .output()
        .expect("run `nm` (binutils)");
    assert!(
        out.status.success(),
        "nm -D {}: {}",
        object.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().last())
        .map(|sym| sym.split('@').next().unwrap_or(sym).to_string())
        .collect()
}

/// The C library programs are linked with: the compiler's `libc.so.6`,
/// or else the one `ldd` shows the interposer loading.
fn libc_so() -> PathBuf {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if let Ok(out) = Command::new(&cc).arg("-print-file-name=libc.so.6").output() {
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if path.is_absolute() && path.exists() {
            return path;
        }
    }
    let out = Command::new("ldd")
        .arg(preload_so())
        .output()
        .expect("run `ldd`");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|line| {
            let (name, rest) = line.trim().split_once(" => ")?;
            let path = rest.split_whitespace().next()?;
            (name == "libc.so.6").then(|| PathBuf::from(path))
        })
        .expect("libc.so.6 not found with `cc -print-file-name` nor `ldd`")
}

/// `forwarded.txt`: symbol -> justification.
fn forward_list() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("forwarded.txt");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut list = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (sym, why) = line
            .split_once('\t')
            .or_else(|| line.split_once(" # "))
            .unwrap_or((line, ""));
        let (sym, why) = (sym.trim(), why.trim());
        assert!(
            !why.is_empty(),
            "forwarded.txt:{}: `{sym}` has no justification (symbol, a tab or ` # `, why)",
            i + 1
        );
        assert!(
            list.insert(sym.to_string(), why.to_string()).is_none(),
            "forwarded.txt:{}: `{sym}` listed twice",
            i + 1
        );
    }
    list
}

#[test]
fn every_glibc_sync_function_is_interposed_or_deliberately_forwarded() {
    let libc = libc_so();
    let glibc: BTreeSet<String> = defined_symbols(&libc)
        .into_iter()
        .filter(|s| audited(s))
        .collect();
    assert!(
        glibc.contains("pthread_mutex_lock") && glibc.contains("sem_wait"),
        "no pthread/sem symbols read from {}: {glibc:?}",
        libc.display()
    );
    let ours = defined_symbols(&preload_so());
    let forwarded = forward_list();

    let missing: Vec<&String> = glibc
        .iter()
        .filter(|s| !ours.contains(*s) && !forwarded.contains_key(*s))
        .collect();
    let not_in_glibc: Vec<&String> = forwarded.keys().filter(|s| !glibc.contains(*s)).collect();
    let defined_anyway: Vec<&String> = forwarded.keys().filter(|s| ours.contains(*s)).collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!(
            "{} glibc function(s) neither defined by the interposer nor in forwarded.txt \
             (a call reaches glibc with an interposer object): {missing:?}",
            missing.len()
        ));
    }
    if !not_in_glibc.is_empty() {
        problems.push(format!(
            "forwarded.txt lists symbol(s) {} does not export (stale or misspelt): \
             {not_in_glibc:?}",
            libc.display()
        ));
    }
    if !defined_anyway.is_empty() {
        problems.push(format!(
            "forwarded.txt lists symbol(s) the interposer defines (stale): {defined_anyway:?}"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn forwarded_functions_work_with_interposed_objects() {
    // The list's justifications, checked: attribute objects set through
    // glibc take effect in the interposer's *_init, the robust / priority
    // ceiling functions give glibc's EINVAL on native mutexes, and named
    // semaphores work through every sem_* function.
    let out = run_ok(&mut preloaded(compile("forwarded")));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "forwarded: ok");
    let out = run_ok(Command::new(compile("forwarded")).env_remove("LD_PRELOAD"));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "forwarded: ok");
}

#[test]
fn the_shim_and_the_implementation_define_the_same_functions() {
    // The shim binds each of its entry points to the implementation's
    // function of the same name (`entry_points.rs`), and falls back to the
    // C library altogether when one is missing: the two lists must agree.
    let shim = preload_so();
    let implementation = shim.with_file_name("libwaitwise_interposer.so");
    let interposed = |object: &Path| -> BTreeSet<String> {
        defined_symbols(object)
            .into_iter()
            .filter(|s| audited(s))
            .collect()
    };
    let (in_shim, in_implementation) = (interposed(&shim), interposed(&implementation));
    assert!(in_shim.contains("pthread_mutex_lock"), "{in_shim:?}");
    assert_eq!(
        in_shim,
        in_implementation,
        "{} and {} define different pthread functions",
        shim.display(),
        implementation.display()
    );
    // Nothing else is exported from the shim but its marker.
    let others: Vec<String> = defined_symbols(&shim)
        .into_iter()
        .filter(|s| !audited(s))
        .collect();
    assert_eq!(others, ["waitwise_preload_shim"]);
}
