//! Durable atomic replacement of one file.
//!
//! The sequence (DESIGN.md §4 "Writes"): a temp file in the target's own folder with the target's
//! mode, write, fsync the temp file, rename it over the target, fsync the folder. A crash at any
//! instant leaves the old bytes or the new bytes; a write that changes no byte touches nothing.
//! Temp files are named `.{target}.dwp-tmp.{pid}.{random}` so that a later write can remove the
//! leftovers of a killed writer, and only those: a temp file whose pid is still alive is never
//! touched, so this is safe without holding the lock.

use crate::error::{Error, Result};
use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
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

/// Replace `path` with `bytes` durably and atomically. Refuses to write through a symlink.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<WriteOutcome> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::rejected(path.display().to_string(), "not a file path"))?;

    let mode = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(Error::rejected(
                path.display().to_string(),
                "is a symlink; dwp does not write through symlinks",
            )
            .with_hint("replace the link with the file it points to"));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(Error::rejected(
                path.display().to_string(),
                "exists and is not a regular file",
            ));
        }
        Ok(meta) => {
            if meta.len() == bytes.len() as u64
                && fs::read(path).map_err(|e| Error::io("read", path, e))? == bytes
            {
                return Ok(WriteOutcome {
                    changed: false,
                    sha256: super::sha256_hex(bytes),
                });
            }
            meta.permissions().mode() & 0o7777
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => NEW_FILE_MODE,
        Err(e) => return Err(Error::io("stat", path, e)),
    };

    // Hashing the new bytes and sweeping a killed writer's leftovers are CPU work that does not
    // depend on the write: for a large file they run on another core while this one waits on
    // fsync (a 4 MiB state: ~2 ms of hashing, ~1 ms of listing a 10,000-file plan folder).
    if bytes.len() < PARALLEL_ABOVE {
        replace(path, dir, file_name, bytes, mode)?;
        sweep_leftovers(dir, file_name);
        return Ok(WriteOutcome {
            changed: true,
            sha256: super::sha256_hex(bytes),
        });
    }
    std::thread::scope(|scope| {
        let side = scope.spawn(|| {
            sweep_leftovers(dir, file_name);
            super::sha256_hex(bytes)
        });
        let replaced = replace(path, dir, file_name, bytes, mode);
        let sha256 = side.join().unwrap_or_else(|_| super::sha256_hex(bytes));
        replaced.map(|()| WriteOutcome {
            changed: true,
            sha256,
        })
    })
}

/// Files at least this large hash and sweep on a second thread during the write.
const PARALLEL_ABOVE: usize = 256 * 1024;

/// Temp file in `dir` with `mode`, write, fsync, rename over `path`, fsync `dir`.
fn replace(path: &Path, dir: &Path, file_name: &str, bytes: &[u8], mode: u32) -> Result<()> {
    let prefix = format!("{}{}.", temp_prefix(file_name), std::process::id());
    let mut temp = tempfile::Builder::new()
        .prefix(&prefix)
        .rand_bytes(8)
        .tempfile_in(dir)
        .map_err(|e| Error::io("create temp file", dir, e))?;
    let temp_path = temp.path().to_path_buf();
    temp.as_file()
        .set_permissions(Permissions::from_mode(mode))
        .map_err(|e| Error::io("chmod", &temp_path, e))?;
    temp.write_all(bytes)
        .map_err(|e| Error::io("write", &temp_path, e))?;
    temp.as_file()
        .sync_all()
        .map_err(|e| Error::io("fsync", &temp_path, e))?;
    temp.persist(path)
        .map_err(|e| Error::io("rename", path, e.error))?;
    sync_dir(dir)
}

/// fsync a directory, so that a rename or creation in it survives a crash.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("fsync directory", dir, e))
}

/// Remove what killed writers of `file_name` left in `dir`: temp files
/// (`.{name}.dwp-tmp.{pid}.*`) and lock directories set aside while taking, releasing or
/// recovering the lock (`{name}.lock.{staging,released,recovering}.{pid}.*`). Only leftovers of
/// pids that no longer run are removed, so this is safe without the lock. One listing of the
/// folder, through raw directory entries (no allocation per entry: a Full plan folder holds a
/// file per task). Best effort: what cannot be removed now is removed by a later write.
pub fn sweep_leftovers(dir: &Path, file_name: &str) {
    use rustix::fs::{Dir, Mode, OFlags};
    let temp = temp_prefix(file_name);
    let asides = super::lock::STAGES.map(|stage| format!("{file_name}.lock.{stage}."));
    let Ok(fd) = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let Ok(mut entries) = Dir::read_from(&fd) else {
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
        if pid.is_some_and(|pid| !super::lock::process_exists(pid)) {
            stale.push((dir.join(std::ffi::OsStr::from_bytes(name)), is_dir));
        }
    }
    for (path, is_dir) in stale {
        let _ = if is_dir {
            fs::remove_dir_all(path)
        } else {
            fs::remove_file(path)
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

    #[test]
    fn write_replaces_bytes_and_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        fs::write(&target, b"old").unwrap();
        fs::set_permissions(&target, Permissions::from_mode(0o640)).unwrap();
        let outcome = write_atomic(&target, b"new bytes").unwrap();
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
        let outcome = write_atomic(&target, b"same").unwrap();
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
        let err = write_atomic(&link, b"new").unwrap_err();
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
        write_atomic(&dir.path().join("state.json"), b"z").unwrap();
        assert!(!dead.exists());
        assert!(live.exists());
    }
}
