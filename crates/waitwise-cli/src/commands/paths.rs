//! Checks of output paths, made before a command runs anything: an
//! experiment can take minutes, and its results must not be lost to a path
//! that was never writable.
//!
//! Both checks create a small probe file where the output would go and
//! remove it at once, which asks the file system itself (permissions,
//! read-only mounts, quotas on inodes) rather than guessing from mode bits.
//! They create no directory: the command creates the directories it writes
//! to when it has results.

use anyhow::{bail, Context};
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

/// Checks that `path` can be written as a file: an existing file must open
/// for writing (it is not changed), a new one must be creatable in an
/// existing directory. `option` names the path in messages (`--export-csv`).
///
/// # Errors
/// `path` is a directory, its directory does not exist or is not one, or the
/// file system refuses to write there.
pub fn check_writable_file(option: &str, path: &Path) -> anyhow::Result<()> {
    let shown = path.display();
    if path.is_dir() {
        bail!("{option} {shown}: is a directory; give a file name");
    }
    if path.exists() {
        OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("{option} {shown}: cannot write this file"))?;
        return Ok(());
    }
    let dir = parent_dir(path);
    if !dir.is_dir() {
        let why = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        bail!("{option} {shown}: {} {why}", dir.display());
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("{option} {shown}: cannot create this file"))?;
    fs::remove_file(path)
        .with_context(|| format!("{option} {shown}: cannot remove the probe file"))?;
    Ok(())
}

/// Checks that `path` is, or can be created as, a directory that files can
/// be written to: an existing `path` must be a writable directory; else its
/// nearest existing ancestor must be a writable directory.
///
/// # Errors
/// `path` or an ancestor is a file, or the file system refuses to create
/// files in the directory where `path` is or would be created.
pub fn check_writable_dir(option: &str, path: &Path) -> anyhow::Result<()> {
    let shown = path.display();
    let mut existing = path.to_path_buf();
    while !existing.exists() {
        existing = parent_dir(&existing);
    }
    if !existing.is_dir() {
        bail!(
            "{option} {shown}: {} is not a directory",
            existing.display()
        );
    }
    let probe = existing.join(format!(".waitwise-write-check-{}", std::process::id()));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .with_context(|| {
            format!(
                "{option} {shown}: cannot create files in {}",
                existing.display()
            )
        })?;
    fs::remove_file(&probe)
        .with_context(|| format!("{option} {shown}: cannot remove {}", probe.display()))?;
    Ok(())
}

/// The directory `path` is in: its parent, or `.` for a bare name.
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        Some(_) => PathBuf::from("."),
        None => PathBuf::from("/"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("waitwise-paths-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn files() {
        let dir = scratch("files");
        let new = dir.join("out.csv");
        check_writable_file("--export-csv", &new).unwrap();
        assert!(!new.exists(), "the probe file is removed");
        fs::write(&new, "keep").unwrap();
        check_writable_file("--export-csv", &new).unwrap();
        assert_eq!(fs::read_to_string(&new).unwrap(), "keep");
        let err = check_writable_file("--export-csv", &dir).unwrap_err();
        assert!(format!("{err:#}").contains("is a directory"), "{err:#}");
        let err = check_writable_file("--export-csv", &dir.join("no/such/out.csv")).unwrap_err();
        assert!(format!("{err:#}").contains("does not exist"), "{err:#}");
        let err = check_writable_file("--export-csv", &new.join("x.csv")).unwrap_err();
        assert!(format!("{err:#}").contains("is not a directory"), "{err:#}");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn directories() {
        let dir = scratch("dirs");
        check_writable_dir("--out", &dir).unwrap();
        let nested = dir.join("a/b/report");
        check_writable_dir("--out", &nested).unwrap();
        assert!(!dir.join("a").exists(), "no directory is created");
        let file = dir.join("file");
        fs::write(&file, "").unwrap();
        let err = check_writable_dir("--out", &file.join("report")).unwrap_err();
        assert!(format!("{err:#}").contains("is not a directory"), "{err:#}");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "probe removed");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn bare_names_are_in_the_current_directory() {
        assert_eq!(parent_dir(Path::new("out.csv")), PathBuf::from("."));
        assert_eq!(parent_dir(Path::new("/")), PathBuf::from("/"));
    }
}
