//! The machine profile: a block cost `B` that `waitwise probe --save`
//! measured on this machine, kept in a per-user cache file so that a
//! program's waits start from it instead of a guess. The library only
//! reads it (once per process, microseconds); nothing but the tool writes
//! it.
//!
//! **Where.** `$XDG_CACHE_HOME/waitwise/machine-KEY.txt`, or
//! `$HOME/.cache/waitwise/machine-KEY.txt`, where `KEY` names the machine
//! ([`MachineId::key`]: CPU model, kernel release, hypervisor), so a home
//! directory shared between machines keeps one file for each and a kernel
//! upgrade starts afresh.
//!
//! **Format.** Lines of `name=value`; `#` starts a comment:
//!
//! ```text
//! # waitwise machine profile, written by `waitwise probe --save`
//! cpu_model=AMD EPYC
//! kernel=6.1.0-27-cloud-amd64
//! hypervisor=KVMKVMKVM
//! block_ns=2890
//! ```
//!
//! A file whose machine fields differ from this machine's, or whose
//! `block_ns` is missing or outside `1..=1_000_000_000`, is ignored.

use crate::env::MAX_BLOCK_NS;
use std::path::PathBuf;
use waitwise_platform::machine::MachineId;
use waitwise_platform::{c_env, file};

/// The profile file for `machine`, or `None` when neither
/// `XDG_CACHE_HOME` nor `HOME` is set.
pub fn path_for(machine: &MachineId) -> Option<PathBuf> {
    Some(cache_dir()?.join(format!("machine-{}.txt", machine.key())))
}

/// `$XDG_CACHE_HOME/waitwise`, else `$HOME/.cache/waitwise`.
fn cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(cache) => PathBuf::from(cache),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("waitwise"))
}

/// Whether [`cache_dir`] is a directory, asked without allocating (the
/// C library's `getenv` and one `stat` of a path put together on the
/// stack). Under the interposer this runs before `main` in every process,
/// most of which never had a profile saved; allocating there would set up
/// the C library's heap in programs that may never use it. A path too long
/// for that is left to [`cache_dir`] (answered `true`).
fn cache_dir_exists() -> bool {
    fn non_empty(v: Option<&[u8]>) -> Option<&[u8]> {
        v.filter(|v| !v.is_empty())
    }
    let found = c_env::with_var(c"XDG_CACHE_HOME", |cache| {
        non_empty(cache).map(|cache| file::is_directory(&[cache, b"/waitwise"]))
    });
    let found = match found {
        Some(found) => found,
        None => c_env::with_var(c"HOME", |home| {
            non_empty(home).map(|home| file::is_directory(&[home, b"/.cache/waitwise"]))
        })
        .unwrap_or(Some(false)),
    };
    found.unwrap_or(true)
}

/// The file's text for `machine` with `block_ns`.
pub fn render(machine: &MachineId, block_ns: u64) -> String {
    format!(
        "# waitwise machine profile, written by `waitwise probe --save`\n\
         cpu_model={}\nkernel={}\nhypervisor={}\nblock_ns={block_ns}\n",
        machine.cpu_model, machine.kernel, machine.hypervisor
    )
}

/// `block_ns` from a profile's text, if the text is for `machine`.
pub fn parse(text: &str, machine: &MachineId) -> Option<u64> {
    let mut block_ns = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line.split_once('=')?;
        let value = value.trim();
        let matches = match name.trim() {
            "cpu_model" => value == machine.cpu_model,
            "kernel" => value == machine.kernel,
            "hypervisor" => value == machine.hypervisor,
            "block_ns" => {
                block_ns = value.parse::<u64>().ok();
                true
            }
            _ => true,
        };
        if !matches {
            return None;
        }
    }
    block_ns.filter(|ns| (1..=MAX_BLOCK_NS).contains(ns))
}

/// This machine's saved `B` and the file it came from, if there is one.
/// Where no profile was ever saved (no `waitwise` cache directory) this
/// costs one `stat`, and no CPUID instruction.
///
/// Only a regular file is read: anything else at the path (a FIFO, a
/// device) is ignored with one line on stderr, and it is opened without
/// blocking, so a FIFO with no writer cannot stop the process (which may
/// be before `main`, under the interposer).
pub fn load() -> Option<(u64, PathBuf)> {
    if !cache_dir_exists() {
        return None;
    }
    let machine = MachineId::current();
    let path = path_for(&machine)?;
    let text = match waitwise_platform::file::read_regular(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            eprintln!("waitwise: machine profile {} ignored: {e}", path.display());
            return None;
        }
        Err(_) => return None,
    };
    parse(&text, &machine).map(|ns| (ns, path))
}

/// Writes this machine's profile with `block_ns` (for `waitwise probe
/// --save`); returns the file written.
pub fn save(block_ns: u64) -> std::io::Result<PathBuf> {
    let machine = MachineId::current();
    let path = path_for(&machine).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "neither XDG_CACHE_HOME nor HOME is set",
        )
    })?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Write then rename, so a reader never sees half a file.
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, render(&machine, block_ns))?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here() -> MachineId {
        MachineId {
            cpu_model: "AMD EPYC".into(),
            kernel: "6.1.0".into(),
            hypervisor: "KVMKVMKVM".into(),
        }
    }

    #[test]
    fn a_rendered_profile_parses_back() {
        assert_eq!(parse(&render(&here(), 2890), &here()), Some(2890));
    }

    #[test]
    fn another_machines_profile_is_ignored() {
        let text = render(&here(), 2890);
        let other = MachineId {
            kernel: "6.2.0".into(),
            ..here()
        };
        assert_eq!(parse(&text, &other), None);
    }

    #[test]
    fn bad_values_are_ignored() {
        for bad in ["0", "1000000001", "abc", ""] {
            let text = render(&here(), 1).replace("block_ns=1", &format!("block_ns={bad}"));
            assert_eq!(parse(&text, &here()), None, "{bad:?}");
        }
        assert_eq!(parse("garbage\n", &here()), None);
        assert_eq!(parse("# only a comment\n", &here()), None);
    }

    #[test]
    fn the_path_names_the_machine() {
        let p = path_for(&here());
        if let Some(p) = p {
            assert!(p.ends_with(format!("waitwise/machine-{}.txt", here().key())));
        }
    }
}
