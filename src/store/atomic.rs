//! Durable atomic replacement of one file.
//!
//! The sequence (docs/ARCHITECTURE.md, "How data flows"): a temp file in the target's own folder with the target's
//! mode, write, fsync the temp file, rename it over the target, fsync the folder. A crash at any
//! instant leaves the old bytes or the new bytes; a write that changes no byte touches nothing.
//! Temp files are named `.{target}.dwp-tmp.{pid}.{random}` so that a later write can remove the
//! leftovers of a killed writer, and only those: a temp file whose pid is still alive is never
//! touched, so this is safe without holding the lock.
//!
//! Every step goes through a descriptor of the target's folder, opened with each component of
//! its path resolved beneath the plan folder (`store::inside`): the check that the target is no
//! symlink, the temp file, the rename and the fsync cannot be redirected between them.

use super::inside;
use crate::error::{Error, Result};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Mode of a file dwp creates (an existing file keeps its own).
const NEW_FILE_MODE: u32 = 0o644;

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// False when the file already held exactly these bytes (and was not touched).
    pub changed: bool,
    /// sha256 of the bytes now on disk.
    pub sha256: String,
}

fn temp_prefix(file_name: &str) -> String {
    format!(".{file_name}.dwp-tmp.")
}

/// Whether `name` is a temp file of [`write_atomic`] (a writer's, or a killed writer's leftover):
/// never a plan artifact.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(".dwp-tmp.")
}

/// Replace `path` (inside the folder `root`) with `bytes` durably and atomically. Every component
/// of the path is resolved beneath `root`; the file itself is never written through a symlink.
pub fn write_atomic(path: &Path, root: &Path, bytes: &[u8]) -> Result<WriteOutcome> {
    let (parent, name) = inside::parent_and_name(path).map_err(|e| write_error(path, e))?;
    let file_name = name
        .to_str()
        .ok_or_else(|| Error::rejected(path.display().to_string(), "not a UTF-8 file name"))?;
    let folder = inside::open_folder(parent, root).map_err(|e| write_error(path, e))?;

    let mode = match rustix::fs::statat(&folder.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => {
            let kind = FileType::from_raw_mode(stat.st_mode);
            if kind == FileType::Symlink {
                return Err(Error::rejected(
                    path.display().to_string(),
                    "is a symlink; dwp does not write through symlinks",
                )
                .with_hint("replace the link with the file it points to"));
            }
            if kind != FileType::RegularFile {
                return Err(Error::rejected(
                    path.display().to_string(),
                    "exists and is not a regular file",
                ));
            }
            if stat.st_size as u64 == bytes.len() as u64 && holds(&folder, name, bytes, path)? {
                return Ok(WriteOutcome {
                    changed: false,
                    sha256: super::sha256_hex(bytes),
                });
            }
            stat.st_mode & 0o7777
        }
        Err(Errno::NOENT) => NEW_FILE_MODE,
        Err(e) => return Err(Error::io("stat", path, e.into())),
    };

    replace(&folder, file_name, path, bytes, mode)?;
    sweep_in(&folder, file_name);
    Ok(WriteOutcome {
        changed: true,
        sha256: super::sha256_hex(bytes),
    })
}

/// A write refused because its path leads outside `root`, or failed opening its folder.
fn write_error(path: &Path, e: io::Error) -> Error {
    if inside::is_escape(&e) {
        Error::rejected(
            path.display().to_string(),
            "leads outside the plan folder through a symlink; dwp writes only inside it",
        )
        .with_hint("replace the symlinked folder with a real folder of the plan")
    } else {
        Error::io("open folder of", path, e)
    }
}

/// Whether the regular file `name` of `folder` holds exactly `bytes`.
fn holds(folder: &inside::Folder, name: &OsStr, bytes: &[u8], path: &Path) -> Result<bool> {
    let fd = rustix::fs::openat(
        &folder.fd,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io("read", path, e.into()))?;
    let mut file = File::from(fd);
    match inside::read_limited(&mut file, bytes.len() as u64) {
        Ok(Ok(on_disk)) => Ok(on_disk == bytes),
        Ok(Err(_)) => Ok(false),
        Err(e) => Err(Error::io("read", path, e)),
    }
}

/// Temp file in `folder` with `mode`, write, fsync, rename over `file_name`, fsync `folder`.
fn replace(
    folder: &inside::Folder,
    file_name: &str,
    path: &Path,
    bytes: &[u8],
    mode: u32,
) -> Result<()> {
    let temp_name = format!(
        "{}{}.{:016x}",
        temp_prefix(file_name),
        std::process::id(),
        fastrand::u64(..)
    );
    let temp_path = folder.path.join(&temp_name);
    let fd = rustix::fs::openat(
        &folder.fd,
        temp_name.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .map_err(|e| Error::io("create temp file", &temp_path, e.into()))?;
    let written = (|| {
        // The umask applies at creation: set the mode the target had, exactly.
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))
            .map_err(|e| Error::io("chmod", &temp_path, e.into()))?;
        let mut file = File::from(fd);
        crate::profile::time("write temp", || file.write_all(bytes))
            .map_err(|e| Error::io("write", &temp_path, e))?;
        crate::profile::time("fsync temp", || file.sync_all())
            .map_err(|e| Error::io("fsync", &temp_path, e))?;
        crate::profile::time("rename", || {
            rustix::fs::renameat(&folder.fd, temp_name.as_str(), &folder.fd, file_name)
        })
        .map_err(|e| Error::io("rename", path, e.into()))
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&folder.fd, temp_name.as_str(), AtFlags::empty());
    }
    written?;
    sync_folder(folder)
}

/// fsync an opened folder, so that a rename or creation in it survives a crash.
pub(crate) fn sync_folder(folder: &inside::Folder) -> Result<()> {
    let _stage = crate::profile::stage("fsync folder");
    rustix::fs::fsync(&folder.fd).map_err(|e| Error::io("fsync directory", &folder.path, e.into()))
}

/// [`sweep_leftovers`] in a folder opened beneath its plan.
fn sweep_in(folder: &inside::Folder, file_name: &str) {
    let _stage = crate::profile::stage("sweep leftovers");
    sweep_fd(&folder.fd, file_name);
}

/// Remove what killed writers of `file_name` left in `dir`: temp files
/// (`.{name}.dwp-tmp.{pid}.*`) and lock directories set aside while taking, releasing or
/// recovering the lock (`{name}.lock.{staging,released,recovering}.{pid}.*`). Only leftovers of
/// pids that no longer run are removed, so this is safe without the lock. One listing of the
/// folder, through raw directory entries (no allocation per entry: a Full plan folder holds a
/// file per task). Best effort: what cannot be removed now is removed by a later write.
pub fn sweep_leftovers(dir: &Path, file_name: &str) {
    use rustix::fs::OFlags;
    if let Ok(fd) = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        sweep_fd(&fd, file_name);
    }
}

fn sweep_fd(fd: &OwnedFd, file_name: &str) {
    let temp = temp_prefix(file_name);
    let asides = super::lock_dir::STAGES.map(|stage| format!("{file_name}.lock.{stage}."));
    let Ok(mut entries) = rustix::fs::Dir::read_from(fd) else {
        return;
    };
    let mut stale = Vec::new();
    while let Some(Ok(entry)) = entries.read() {
        let name = entry.file_name().to_bytes();
        let (rest, is_dir) = match name.strip_prefix(temp.as_bytes()) {
            Some(rest) => (rest, false),
            None => match asides.iter().find_map(|p| name.strip_prefix(p.as_bytes())) {
                Some(rest) => (rest, true),
                None => continue,
            },
        };
        let pid = rest
            .split(|&b| b == b'.')
            .next()
            .and_then(|p| std::str::from_utf8(p).ok())
            .and_then(|p| p.parse::<i32>().ok());
        if pid.is_some_and(|pid| !super::procfs::process_exists(pid)) {
            stale.push((OsStr::from_bytes(name).to_owned(), is_dir));
        }
    }
    if stale.is_empty() {
        return;
    }
    // Removal goes through the folder's own descriptor: never a path that could be redirected.
    let Ok(dir) = rustix::io::dup(fd) else {
        return;
    };
    let dir = cap_std::fs::Dir::from_std_file(File::from(dir));
    for (name, is_dir) in stale {
        let _ = if is_dir {
            dir.remove_dir_all(&name)
        } else {
            dir.remove_file(&name)
        };
    }
}

/// Paths of temp files of `file_name` present in `dir` (for tests and `verify`).
pub fn leftover_temps(dir: &Path, file_name: &str) -> Vec<std::path::PathBuf> {
    let prefix = temp_prefix(file_name);
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .map(|e| e.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::Permissions;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn write_replaces_bytes_and_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        fs::write(&target, b"old").unwrap();
        fs::set_permissions(&target, Permissions::from_mode(0o640)).unwrap();
        let outcome = write_atomic(&target, dir.path(), b"new bytes").unwrap();
        assert!(outcome.changed);
        assert_eq!(fs::read(&target).unwrap(), b"new bytes");
        let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        assert!(leftover_temps(dir.path(), "state.json").is_empty());
    }

    #[test]
    fn a_write_that_changes_no_byte_does_not_touch_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        fs::write(&target, b"same").unwrap();
        let before = fs::metadata(&target).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let outcome = write_atomic(&target, dir.path(), b"same").unwrap();
        assert!(!outcome.changed);
        let after = fs::metadata(&target).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(before.ino(), after.ino(), "the file was replaced");
        assert_eq!(before.modified().unwrap(), after.modified().unwrap());
    }

    #[test]
    fn writing_through_a_symlink_is_refused_and_nothing_changes() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        fs::write(&real, b"real").unwrap();
        let link = dir.path().join("state.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = write_atomic(&link, dir.path(), b"new").unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        assert_eq!(fs::read(&real).unwrap(), b"real");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn leftovers_of_dead_writers_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join(".state.json.dwp-tmp.999999999.abc");
        let live = dir
            .path()
            .join(format!(".state.json.dwp-tmp.{}.xyz", std::process::id()));
        fs::write(&dead, b"x").unwrap();
        fs::write(&live, b"y").unwrap();
        write_atomic(&dir.path().join("state.json"), dir.path(), b"z").unwrap();
        assert!(!dead.exists());
        assert!(live.exists());
    }

    #[test]
    fn a_write_through_a_symlinked_folder_is_refused_and_nothing_is_written_outside() {
        let outside = tempfile::tempdir().unwrap();
        let plan = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), plan.path().join("analysis_results")).unwrap();
        let target = plan.path().join("analysis_results/FINALIZATION.json");
        let err = write_atomic(&target, plan.path(), b"{}").unwrap_err();
        assert!(err.to_string().contains("outside the plan folder"), "{err}");
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
