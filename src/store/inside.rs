//! The one way dwp opens a file of a plan (or of a worktree): every component of the path is
//! resolved beneath the folder that holds it, so neither a symlinked file nor a symlinked
//! sub-folder can lead a read or a write outside.
//!
//! Resolution is the kernel's: `openat2(RESOLVE_BENEATH)` through `cap-std` (which falls back to
//! a component-by-component walk where `openat2` is missing). A symlink that stays inside the
//! folder is followed on reads; an absolute symlink, or one climbing out with `..`, is refused.
//! Writes never go through a symlink as their last component.
//!
//! Every open is non-blocking and checks the file type on the opened descriptor (`fstat`)
//! before reading, so a named pipe in place of a plan file is refused instead of hanging.

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use rustix::fs::{Mode, OFlags};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

/// What stands at a path inside a folder, without following a final symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Missing,
    File,
    Directory,
    Symlink,
    /// A named pipe, socket or device, named.
    Other(&'static str),
}

/// Whether an error is cap-std's refusal of a path that resolves outside the folder.
pub(crate) fn is_escape(e: &io::Error) -> bool {
    // cap-std reports an escape as PermissionDenied without an OS error code; a real EACCES
    // carries errno 13.
    e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_none()
}

/// The part of `path` below `root`, refused when `path` is not lexically inside `root`.
pub(crate) fn relative<'a>(path: &'a Path, root: &Path) -> io::Result<&'a Path> {
    let rel = path.strip_prefix(root).map_err(|_| escape_error())?;
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(escape_error());
    }
    Ok(rel)
}

fn escape_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "a path led outside of the filesystem",
    )
}

pub(crate) fn open_root(root: &Path) -> io::Result<Dir> {
    let root = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    Dir::open_ambient_dir(root, ambient_authority())
}

/// Open `path` (inside `root`) for reading without blocking, following symlinks only while they
/// stay inside `root`.
pub(crate) fn open_read(path: &Path, root: &Path) -> io::Result<File> {
    open_read_in(&open_root(root)?, path, root)
}

/// [`open_read`] through a handle on `root` already open (a reader of many files opens it once).
pub(crate) fn open_read_in(dir: &Dir, path: &Path, root: &Path) -> io::Result<File> {
    let rel = relative(path, root)?;
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32);
    Ok(dir.open_with(rel, &options)?.into_std())
}

/// Read at most `limit` bytes of a regular file; `Err(len)` when it is longer.
pub(crate) fn read_limited(file: &mut File, limit: u64) -> io::Result<Result<Vec<u8>, u64>> {
    let len = file.metadata()?.len();
    read_limited_sized(file, len, limit)
}

/// [`read_limited`] of a file whose size `len` the caller's own `fstat` of it just gave: one
/// `statx` fewer per file, where a verify of 1,000 tasks reads 1,000 files. The bytes read are
/// still limited, so a file that grew since is refused as [`read_limited`] refuses it.
pub(crate) fn read_limited_sized(
    file: &mut File,
    len: u64,
    limit: u64,
) -> io::Result<Result<Vec<u8>, u64>> {
    if len > limit {
        return Ok(Err(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.by_ref().take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Ok(Err(bytes.len() as u64));
    }
    Ok(Ok(bytes))
}

/// What stands at `path` inside `root` (a final symlink is reported, not followed).
pub fn entry(path: &Path, root: &Path) -> io::Result<Entry> {
    let rel = relative(path, root)?;
    let dir = open_root(root)?;
    if rel.as_os_str().is_empty() {
        return Ok(Entry::Directory);
    }
    match dir.symlink_metadata(rel) {
        Ok(meta) => {
            let kind = meta.file_type();
            Ok(if kind.is_symlink() {
                Entry::Symlink
            } else if kind.is_file() {
                Entry::File
            } else if kind.is_dir() {
                Entry::Directory
            } else {
                Entry::Other(special_kind(&meta))
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Entry::Missing),
        Err(e) => Err(e),
    }
}

fn special_kind(meta: &cap_std::fs::Metadata) -> &'static str {
    use cap_std::fs::FileTypeExt;
    let kind = meta.file_type();
    special_name(
        kind.is_fifo(),
        kind.is_socket(),
        kind.is_block_device() || kind.is_char_device(),
    )
}

/// The name of a file that is neither a regular file, a folder nor a symlink.
pub(crate) fn special_name(fifo: bool, socket: bool, device: bool) -> &'static str {
    match (fifo, socket, device) {
        (true, _, _) => "named pipe",
        (_, true, _) => "socket",
        (_, _, true) => "device",
        _ => "special file",
    }
}

/// Where a path of a plan leads, symlinks followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Nothing there (or a symlink to nothing).
    Missing,
    /// A regular file inside the folder.
    File,
    /// Something else inside the folder (a folder, a pipe...), or something a stat could not
    /// tell: a read reports what is wrong.
    Other,
    /// The path, or a symlink on it, leads outside the folder.
    Outside,
}

/// Where `path` leads from `root`. An error other than an escape or an absence counts as
/// [`Place::Other`]: something is there, and reading it reports what is wrong. Nothing is
/// inside a `root` that does not exist.
pub fn place(path: &Path, root: &Path) -> Place {
    match open_root(root) {
        Ok(dir) => place_in(&dir, path, root),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Place::Missing,
        Err(_) => Place::Other,
    }
}

/// [`place`] through a handle on `root` already open.
pub(crate) fn place_in(dir: &Dir, path: &Path, root: &Path) -> Place {
    let Ok(rel) = relative(path, root) else {
        return Place::Outside;
    };
    let target = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    match dir.metadata(target) {
        Ok(meta) if meta.is_file() => Place::File,
        Ok(_) => Place::Other,
        Err(e) if is_escape(&e) => Place::Outside,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Place::Missing,
        Err(_) => Place::Other,
    }
}

/// A folder inside `root`, opened as a real descriptor (for `*at` calls, listing and fsync).
pub(crate) struct Folder {
    pub(crate) fd: OwnedFd,
    /// Its path as dwp names it in messages.
    pub(crate) path: PathBuf,
}

/// Open the folder `path` inside `root`; every component resolved beneath `root`.
pub(crate) fn open_folder(path: &Path, root: &Path) -> io::Result<Folder> {
    let rel = relative(path, root)?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = if rel.as_os_str().is_empty() {
        // The plan folder itself (the folder of state.json): one open, nothing to resolve.
        let root = if root.as_os_str().is_empty() {
            Path::new(".")
        } else {
            root
        };
        rustix::fs::open(root, flags, Mode::empty())?
    } else {
        // cap-std holds folders as O_PATH handles, which cannot be listed or fsynced: reopen.
        let beneath = open_root(root)?.open_dir(rel)?;
        rustix::fs::openat(&beneath, ".", flags, Mode::empty())?
    };
    Ok(Folder {
        fd,
        path: path.to_path_buf(),
    })
}

/// Split `path` into its folder and its file name.
pub(crate) fn parent_and_name(path: &Path) -> io::Result<(&Path, &std::ffi::OsStr)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let parent = path.parent().unwrap_or(Path::new(""));
    Ok((parent, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Nothing is inside a folder that does not exist: a lookup there is `Missing`, never "something
    /// is there" (verify once reported an interrupted write and publication in a missing plan).
    #[test]
    fn nothing_is_inside_a_folder_that_does_not_exist() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("PLAN_gone");
        assert_eq!(place(&gone.join(".finalizing.json"), &gone), Place::Missing);
        assert_eq!(place(&gone.join("state.json"), &gone), Place::Missing);
    }

    #[test]
    fn every_component_is_resolved_beneath_the_folder() {
        let outside = tempfile::tempdir().unwrap();
        let plan = tempfile::tempdir().unwrap();
        let root = plan.path();
        std::fs::write(outside.path().join("x.md"), "out").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/y.md"), "in").unwrap();
        symlink(outside.path(), root.join("out")).unwrap();
        symlink("sub", root.join("alias")).unwrap();
        symlink("../", root.join("sub/up")).unwrap();

        assert!(is_escape(
            &open_read(&root.join("out/x.md"), root).unwrap_err()
        ));
        assert!(is_escape(
            &open_read(&root.join("sub/up/../x.md"), root).unwrap_err()
        ));
        assert!(is_escape(
            &open_read(&root.join("../x.md"), root).unwrap_err()
        ));
        assert!(is_escape(
            &open_folder(&root.join("out"), root).err().unwrap()
        ));
        let mut inside = open_read(&root.join("alias/y.md"), root).unwrap();
        assert_eq!(read_limited(&mut inside, 10).unwrap().unwrap(), b"in");
        assert_eq!(entry(&root.join("alias"), root).unwrap(), Entry::Symlink);
        assert_eq!(entry(&root.join("none"), root).unwrap(), Entry::Missing);
        assert_eq!(place(&root.join("out/x.md"), root), Place::Outside);
        assert_eq!(place(&root.join("out"), root), Place::Outside);
        assert_eq!(place(&root.join("alias/y.md"), root), Place::File);
        assert_eq!(place(&root.join("alias"), root), Place::Other);
        assert_eq!(place(&root.join("sub/none"), root), Place::Missing);
    }
}
