//! A new folder built whole beside its destination, then renamed into place (`dwp new`): a
//! reader never sees it half-made under its own name. The staging folder is
//! `.{NAME}.dwp-new.{pid}` in the destination's parent; a writer killed before the rename
//! leaves it there, hidden, under a name that is no plan's, and the next [`begin`] for the same
//! destination removes it once its pid no longer runs. The rename never replaces anything
//! (`renameat2(RENAME_NOREPLACE)`): a destination that appeared meanwhile is left as it is.

use crate::error::{Error, Result};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const MARK: &str = ".dwp-new.";

/// The destination's parent folder (`.` for a bare name) and its own name.
fn split(target: &Path) -> Result<(PathBuf, OsString)> {
    let name = target
        .file_name()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Error::Usage(format!("{} names no folder", target.display())))?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((parent, name.to_owned()))
}

fn open_parent(parent: &Path) -> Result<OwnedFd> {
    rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::NOENT | Errno::NOTDIR => Error::rejected(
            parent.display().to_string(),
            "is not a folder: a new plan is made inside an existing folder",
        )
        .with_hint("create the parent folder first, or name the plan inside one that exists"),
        e => Error::io("open folder", parent, e.into()),
    })
}

fn prefix(name: &OsStr) -> Vec<u8> {
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(name.as_bytes());
    prefix.extend_from_slice(MARK.as_bytes());
    prefix
}

/// Whether anything (a file, a folder, a symlink) stands at `target`.
pub fn exists(target: &Path) -> Result<bool> {
    let (parent, name) = split(target)?;
    let fd = open_parent(&parent)?;
    match rustix::fs::statat(&fd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(_) => Ok(true),
        Err(Errno::NOENT) => Ok(false),
        Err(e) => Err(Error::io("stat", target, e.into())),
    }
}

/// Create the staging folder of `target` (after removing the leftovers of writers that are
/// gone) and return its path.
pub fn begin(target: &Path) -> Result<PathBuf> {
    let (parent, name) = split(target)?;
    let fd = open_parent(&parent)?;
    sweep(&fd, &name);
    let mut staging = prefix(&name);
    staging.extend_from_slice(std::process::id().to_string().as_bytes());
    let staging = OsStr::from_bytes(&staging);
    let path = parent.join(staging);
    match rustix::fs::mkdirat(&fd, staging, Mode::from_raw_mode(0o755)) {
        Ok(()) => Ok(path),
        // This pid's own leftover (a pid reused): not a live writer's, since it is this one.
        Err(Errno::EXIST) => {
            remove_tree(&fd, staging);
            rustix::fs::mkdirat(&fd, staging, Mode::from_raw_mode(0o755))
                .map(|()| path.clone())
                .map_err(|e| Error::io("create folder", &path, e.into()))
        }
        Err(e) => Err(Error::io("create folder", &path, e.into())),
    }
}

/// Rename the finished `staging` folder to `target`, never replacing what stands there, and
/// make the rename durable. `Ok(false)`: `target` appeared meanwhile; nothing was moved.
pub fn finish(staging: &Path, target: &Path) -> Result<bool> {
    let (parent, name) = split(target)?;
    let staging_name = staging
        .file_name()
        .ok_or_else(|| Error::Usage(format!("{} names no folder", staging.display())))?;
    let fd = open_parent(&parent)?;
    match rustix::fs::renameat_with(
        &fd,
        staging_name,
        &fd,
        name.as_os_str(),
        RenameFlags::NOREPLACE,
    ) {
        Ok(()) => {
            rustix::fs::fsync(&fd).map_err(|e| Error::io("fsync directory", &parent, e.into()))?;
            Ok(true)
        }
        Err(Errno::EXIST) => Ok(false),
        Err(e) => Err(Error::io("rename", staging, e.into())),
    }
}

/// Remove the staging folder of a write that failed (best effort: what stays is removed by the
/// next [`begin`] for the same destination once this process is gone).
pub fn discard(staging: &Path) {
    let Ok((parent, name)) = split(staging) else {
        return;
    };
    if let Ok(fd) = open_parent(&parent) {
        remove_tree(&fd, &name);
    }
}

/// Remove the staging folders of `name` whose writer's pid no longer runs.
fn sweep(fd: &OwnedFd, name: &OsStr) {
    let prefix = prefix(name);
    let Ok(mut entries) = rustix::fs::Dir::read_from(fd) else {
        return;
    };
    let mut stale = Vec::new();
    while let Some(Ok(entry)) = entries.read() {
        let entry_name = entry.file_name().to_bytes();
        let Some(rest) = entry_name.strip_prefix(prefix.as_slice()) else {
            continue;
        };
        let pid = std::str::from_utf8(rest)
            .ok()
            .and_then(|p| p.parse::<i32>().ok());
        if pid.is_some_and(|pid| !super::procfs::process_exists(pid)) {
            stale.push(OsStr::from_bytes(entry_name).to_owned());
        }
    }
    for entry in stale {
        remove_tree(fd, &entry);
    }
}

/// Remove the folder `name` of the folder `fd` and everything in it, through the folder's own
/// descriptor (symlinks inside are removed, never followed).
fn remove_tree(fd: &OwnedFd, name: &OsStr) {
    let Ok(dir) = rustix::io::dup(fd) else {
        return;
    };
    let dir = cap_std::fs::Dir::from_std_file(std::fs::File::from(dir));
    let _ = dir.remove_dir_all(name);
}
