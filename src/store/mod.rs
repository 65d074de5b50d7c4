//! The store: how every dwp command reads, hashes, serializes and durably writes plan files, and
//! how writers exclude each other. No other module touches `state.json` bytes directly.
//!
//! - [`inside`]: every path of a plan resolved beneath the plan folder, for reads and writes;
//! - [`read_artifact`] / [`read_text`]: bounded, non-blocking reads of regular files, markdown
//!   decoded strictly;
//! - [`json_file_bytes`] and [`sha256_hex`]: reproducible bytes and their hash;
//! - [`atomic`]: temp file in the same folder, fsync, rename, fsync the folder;
//! - [`intent`]: multi-file writes recorded first, so the next writer completes a killed one;
//! - [`lock`]: the cooperative `state.json.lock` directory shared with the reference tooling.

pub mod atomic;
pub mod git;
pub mod inside;
pub mod intent;
pub mod journal_file;
pub mod lock_dir;
pub mod private_home;
pub mod procfs;
pub mod staging;

pub use atomic::{WriteOutcome, write_atomic};
pub use inside::{Entry, Place, entry, place};

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Largest plan artifact dwp reads (a 10,000-task state is about 4 MiB).
pub const MAX_ARTIFACT_BYTES: u64 = 64 * 1024 * 1024;

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A finished sha256 as lower-case hex, through the digest's own `LowerHex`: a publication
/// writes one per covered file, and a `write!` per byte took about 0.9 µs a hash where this
/// takes about 0.1 µs.
pub(crate) fn hex(digest: &sha2::digest::Output<Sha256>) -> String {
    format!("{digest:x}")
}

/// The bytes dwp writes a JSON file as: 2-space indent, the model's field order, a trailing newline. The same
/// value always gives the same bytes, so hashes are reproducible.
///
/// ```
/// let bytes = dwp::store::json_file_bytes(&serde_json::json!({"task": 3}));
/// assert_eq!(bytes, b"{\n  \"task\": 3\n}\n");
/// ```
pub fn json_file_bytes<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut bytes = Vec::new();
    serde_json::to_writer_pretty(&mut bytes, value).expect("plan models serialize infallibly");
    bytes.push(b'\n');
    bytes
}

/// Append `line` (plus a newline) to a text file of the folder `root` durably: read, append,
/// atomic replace. Used for the records the spec tells dwp to append to PROGRESS.md.
pub fn append_line(path: &Path, root: &Path, line: &str) -> crate::Result<WriteOutcome> {
    let text = match read_artifact(path, root) {
        Ok(bytes) => bytes,
        Err(ReadFailure::Missing) => Vec::new(),
        Err(failure) => return Err(failure.into_error("read", path)),
    };
    write_atomic(path, root, &with_line(text, line))
}

/// `text` with `line` (one or more lines) appended, in the file's own line endings.
pub(crate) fn with_line(mut text: Vec<u8>, line: &str) -> Vec<u8> {
    let crlf = text.windows(2).any(|w| w == b"\r\n");
    let newline: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.extend_from_slice(newline);
    }
    for (i, part) in line.split('\n').enumerate() {
        if i > 0 {
            text.extend_from_slice(newline);
        }
        text.extend_from_slice(part.trim_end_matches('\r').as_bytes());
    }
    text.extend_from_slice(newline);
    text
}

/// Create the folder `path` inside `root` (its parent must exist) and make the new entry
/// durable; an existing folder is left as it is.
pub fn create_dir(path: &Path, root: &Path) -> crate::Result<()> {
    let fail = |e: io::Error| io_failure("create folder", path, e);
    let (parent, name) = inside::parent_and_name(path).map_err(fail)?;
    let folder = inside::open_folder(parent, root).map_err(fail)?;
    match rustix::fs::mkdirat(&folder.fd, name, rustix::fs::Mode::from_raw_mode(0o755)) {
        Ok(()) => atomic::sync_folder(&folder),
        Err(rustix::io::Errno::EXIST) if entry(path, root).ok() == Some(Entry::Directory) => Ok(()),
        Err(e) => Err(fail(e.into())),
    }
}

/// Refuse unless dwp may create and remove entries in the folder `path` inside `root` (an
/// `access(2)` check as dwp's effective user, so nothing is written to find out).
pub fn check_writable_folder(path: &Path, root: &Path) -> crate::Result<()> {
    use rustix::fs::{Access, AtFlags};
    let fail = |e: io::Error| io_failure("write in", path, e);
    let folder = inside::open_folder(path, root).map_err(fail)?;
    rustix::fs::accessat(
        &folder.fd,
        ".",
        Access::WRITE_OK | Access::EXEC_OK,
        AtFlags::EACCESS,
    )
    .map_err(|e| fail(e.into()))
}

/// Remove the file `path` inside `root` durably; `Ok(false)` when there was none.
pub fn remove_file(path: &Path, root: &Path) -> crate::Result<bool> {
    let fail = |e: io::Error| io_failure("remove", path, e);
    let (parent, name) = inside::parent_and_name(path).map_err(fail)?;
    let folder = inside::open_folder(parent, root).map_err(fail)?;
    match rustix::fs::unlinkat(&folder.fd, name, rustix::fs::AtFlags::empty()) {
        Ok(()) => atomic::sync_folder(&folder).map(|()| true),
        Err(rustix::io::Errno::NOENT) => Ok(false),
        Err(e) => Err(fail(e.into())),
    }
}

/// Rename the file `from` to `to`, a name of the same folder inside `root`, atomically, and
/// make the new entry durable (the folder fsynced). Refused when something stands at `to`: a
/// rename here never replaces a file (the writer checked under its lock that nothing does).
pub fn rename_file(from: &Path, to: &Path, root: &Path) -> crate::Result<()> {
    let fail = |e: io::Error| io_failure("rename", from, e);
    let (parent, old_name) = inside::parent_and_name(from).map_err(fail)?;
    let (new_parent, new_name) = inside::parent_and_name(to).map_err(fail)?;
    if parent != new_parent {
        return Err(crate::Error::rejected(
            to.display().to_string(),
            format!(
                "is not in the folder of {}: a rename stays in its folder",
                from.display()
            ),
        ));
    }
    let folder = inside::open_folder(parent, root).map_err(fail)?;
    match rustix::fs::statat(&folder.fd, new_name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Err(rustix::io::Errno::NOENT) => {}
        Ok(_) => {
            return Err(crate::Error::rejected(
                to.display().to_string(),
                "already stands: a rename never replaces a file",
            ));
        }
        Err(e) => return Err(fail(e.into())),
    }
    rustix::fs::renameat(&folder.fd, old_name, &folder.fd, new_name).map_err(|e| fail(e.into()))?;
    atomic::sync_folder(&folder)
}

/// The names in the folder `path` inside `root`, sorted (`.` and `..` left out).
pub fn list_dir(path: &Path, root: &Path) -> crate::Result<Vec<String>> {
    Ok(list_entries(path, root)?
        .into_iter()
        .map(|(name, _)| name)
        .collect())
}

/// [`list_dir`] with what each name is (a symlink reported, not followed), from the one listing:
/// the folder's own entry types, and a `stat` relative to its descriptor only where the file
/// system does not give one.
pub fn list_entries(path: &Path, root: &Path) -> crate::Result<Vec<(String, Entry)>> {
    use rustix::fs::{AtFlags, FileType};
    let fail = |e: io::Error| io_failure("list", path, e);
    let folder = inside::open_folder(path, root).map_err(fail)?;
    let mut entries = rustix::fs::Dir::read_from(&folder.fd).map_err(|e| fail(e.into()))?;
    let mut listed = Vec::new();
    while let Some(entry) = entries.read() {
        let entry = entry.map_err(|e| fail(e.into()))?;
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => rustix::fs::statat(&folder.fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .map(|stat| FileType::from_raw_mode(stat.st_mode))
                .unwrap_or(FileType::Unknown),
            known => known,
        };
        let kind = match kind {
            FileType::RegularFile => Entry::File,
            FileType::Directory => Entry::Directory,
            FileType::Symlink => Entry::Symlink,
            FileType::Fifo => Entry::Other("named pipe"),
            FileType::Socket => Entry::Other("socket"),
            FileType::BlockDevice | FileType::CharacterDevice => Entry::Other("device"),
            FileType::Unknown => Entry::Other("special file"),
        };
        // A name that is not UTF-8 is no plan file; it is listed lossily so it is seen.
        listed.push((name.to_string_lossy().into_owned(), kind));
    }
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(listed)
}

/// Refuse before any blocking step (and before the lock is taken) when one of `names` in
/// `plan_dir` exists but is not a regular file: a named pipe would block its reader forever.
pub fn require_regular_files(plan_dir: &Path, names: &[&str]) -> crate::Result<()> {
    let folder = PlanFolder::open(plan_dir).map_err(|f| f.into_error("open", plan_dir))?;
    for name in names {
        let path = plan_dir.join(name);
        // A non-blocking open, then fstat: a symlink is judged by what it leads to.
        match regular(inside::open_read_in(&folder.dir, &path, plan_dir), &path) {
            Ok(_) | Err(ReadFailure::Missing) => {}
            Err(failure) => return Err(failure.into_error("open", &path)),
        }
    }
    Ok(())
}

fn io_failure(action: &'static str, path: &Path, e: io::Error) -> crate::Error {
    if inside::is_escape(&e) {
        ReadFailure::Escapes(escaped_target(path)).into_error(action, path)
    } else {
        crate::Error::io(action, path, e)
    }
}

/// Why an artifact could not be read.
#[derive(Debug)]
pub enum ReadFailure {
    Missing,
    /// Present but a directory, socket, device...
    NotRegular(&'static str),
    /// A path through a symlink whose target is outside the plan folder.
    Escapes(PathBuf),
    /// A symlink where the plan's JSON state must be a regular file.
    Symlink,
    TooLarge(u64),
    /// Markdown that is not UTF-8: the first bad byte is on this line (1-based).
    NotUtf8 {
        line: usize,
    },
    Io(io::Error),
}

impl ReadFailure {
    /// The same failure again (an OS error keeps its code), for a reader that keeps the first.
    pub fn clone_kind(&self) -> ReadFailure {
        match self {
            ReadFailure::Missing => ReadFailure::Missing,
            ReadFailure::NotRegular(kind) => ReadFailure::NotRegular(kind),
            ReadFailure::Escapes(target) => ReadFailure::Escapes(target.clone()),
            ReadFailure::Symlink => ReadFailure::Symlink,
            ReadFailure::TooLarge(size) => ReadFailure::TooLarge(*size),
            ReadFailure::NotUtf8 { line } => ReadFailure::NotUtf8 { line: *line },
            ReadFailure::Io(e) => ReadFailure::Io(match e.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(e.kind(), e.to_string()),
            }),
        }
    }

    /// Permission problems and other OS errors mean "could not check", not "invalid".
    pub fn is_unverifiable(&self) -> bool {
        matches!(self, ReadFailure::Io(_))
    }

    /// The error a writer reports for this failure: OS errors stay I/O errors (exit 4), the
    /// rest are refusals of the input (exit 1), naming the path.
    pub fn into_error(self, action: &'static str, path: &Path) -> crate::Error {
        match self {
            ReadFailure::Io(e) => crate::Error::io(action, path, e),
            ReadFailure::Missing => {
                crate::Error::io(action, path, io::Error::from(io::ErrorKind::NotFound))
            }
            ReadFailure::NotUtf8 { line } => crate::Error::rejected(
                format!("{}:{line}", path.display()),
                ReadFailure::NotUtf8 { line }.to_string(),
            )
            .with_hint("save the file as UTF-8; dwp reads markdown as strictly as JSON"),
            other => crate::Error::rejected(path.display().to_string(), other.to_string()),
        }
    }
}

impl fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadFailure::Missing => f.write_str("file not found"),
            ReadFailure::NotRegular(kind) => write!(f, "is a {kind}, not a regular file"),
            ReadFailure::Escapes(target) => write!(
                f,
                "leads outside the plan folder (through a symlink, to {})",
                target.display()
            ),
            ReadFailure::Symlink => f.write_str(
                "is a symlink; manifest.json and state.json must be regular files in the plan folder",
            ),
            ReadFailure::TooLarge(size) => write!(
                f,
                "is {size} bytes, over the {MAX_ARTIFACT_BYTES}-byte limit for a plan artifact"
            ),
            ReadFailure::NotUtf8 { line } => {
                write!(f, "is not valid UTF-8 (the first invalid byte is on line {line})")
            }
            ReadFailure::Io(e) => write!(f, "cannot be read: {e}"),
        }
    }
}

/// Where a path that escapes its folder leads, for the message (best effort).
fn escaped_target(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Read a plan artifact: a regular file inside `plan_dir` (every component of the path,
/// symlinks included, resolved beneath it), at most [`MAX_ARTIFACT_BYTES`] long. Never blocks:
/// the file type is checked on the opened descriptor.
pub fn read_artifact(path: &Path, plan_dir: &Path) -> Result<Vec<u8>, ReadFailure> {
    let opened = inside::open_read(path, plan_dir);
    read_opened(opened, path)
}

/// Whether `dir` is inside a git work tree: it or an ancestor holds `.git` (a folder, or the
/// file a linked worktree or submodule has).
pub fn in_git_work_tree(dir: &Path) -> bool {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors().any(|d| d.join(".git").exists())
}

/// Whether `path` leads to a folder, through symlinks too.
pub fn is_folder(path: &Path) -> bool {
    path.is_dir()
}

/// Whether nothing at all stands at `path` (not even a dangling symlink): a plan argument that
/// names no folder and no file is told apart from a plan whose files are missing or unreadable.
pub fn is_absent(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// From this many files on, [`read_each`] reads on every core: a plan of 1,000 tasks has 1,000
/// task files; below this, starting threads costs more than it saves (and `verify --all`
/// already gives each core its own plans).
pub const READ_IN_PARALLEL_FROM: usize = 256;

/// The fewest items a file reader takes at a time: few enough that a reader slowed down
/// (another process on its core, a cold part of the folder) leaves the rest to the others,
/// enough that handing work out is rare.
const READ_BATCH: usize = 64;

/// `read` of each item, in order; from [`READ_IN_PARALLEL_FROM`] items on, on every core
/// (rayon's pool, which hands out work as cores free up, [`READ_BATCH`] items at the least).
pub fn read_each<T: Sync, R: Send>(items: &[T], read: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    if items.len() < READ_IN_PARALLEL_FROM {
        return items.iter().map(read).collect();
    }
    items
        .par_iter()
        .with_min_len(READ_BATCH)
        .map(read)
        .collect()
}

/// [`read_artifact`] of each of `names` (paths relative to `plan_dir`), in order, through one
/// handle on the folder, on every core from 256 files on (a publication of 1,000 tasks reads
/// every task file to hash it).
pub fn read_artifacts(
    plan_dir: &Path,
    names: &[String],
) -> Result<Vec<Result<Vec<u8>, ReadFailure>>, ReadFailure> {
    let folder = PlanFolder::open(plan_dir)?;
    Ok(read_each(names, |name| folder.read(&plan_dir.join(name))))
}

/// A plan folder held open, for a reader of many of its files (the task files of a Full plan):
/// the same reads as [`read_artifact`] and [`read_text`], without reopening the folder each time.
pub struct PlanFolder {
    root: PathBuf,
    dir: cap_std::fs::Dir,
}

impl PlanFolder {
    pub fn open(root: &Path) -> Result<PlanFolder, ReadFailure> {
        let dir = inside::open_root(root).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => ReadFailure::Missing,
            _ => ReadFailure::Io(e),
        })?;
        Ok(PlanFolder {
            root: root.to_path_buf(),
            dir,
        })
    }

    /// [`place`] of `path` inside this folder.
    pub fn place(&self, path: &Path) -> Place {
        inside::place_in(&self.dir, path, &self.root)
    }

    pub fn read_text(&self, path: &Path) -> Result<String, ReadFailure> {
        decode_text(self.read(path)?)
    }

    /// [`read_artifact`] through this folder.
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, ReadFailure> {
        read_opened(inside::open_read_in(&self.dir, path, &self.root), path)
    }
}

fn read_opened(opened: io::Result<std::fs::File>, path: &Path) -> Result<Vec<u8>, ReadFailure> {
    let (mut file, len) = regular_sized(opened, path)?;
    match inside::read_limited_sized(&mut file, len, MAX_ARTIFACT_BYTES) {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(len)) => Err(ReadFailure::TooLarge(len)),
        Err(e) => Err(ReadFailure::Io(e)),
    }
}

/// [`regular_sized`] without the size.
fn regular(opened: io::Result<std::fs::File>, path: &Path) -> Result<std::fs::File, ReadFailure> {
    regular_sized(opened, path).map(|(file, _)| file)
}

/// An open (non-blocking, beneath the plan) judged: the failure it was, or the file and its size
/// when `fstat` says it is a regular file. The one place an open's outcome becomes a
/// [`ReadFailure`].
fn regular_sized(
    opened: io::Result<std::fs::File>,
    path: &Path,
) -> Result<(std::fs::File, u64), ReadFailure> {
    let file = opened.map_err(|e| match e.kind() {
        _ if inside::is_escape(&e) => ReadFailure::Escapes(escaped_target(path)),
        io::ErrorKind::NotFound => ReadFailure::Missing,
        _ => ReadFailure::Io(e),
    })?;
    let meta = file.metadata().map_err(ReadFailure::Io)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(ReadFailure::NotRegular(file_kind(kind)));
    }
    Ok((file, meta.len()))
}

/// A file the caller names on the command line (a candidate state, a note, a contract draft),
/// wherever it is: read as [`read_artifact`] reads one, beneath its own folder (so a symlink may
/// not lead out of it), the path made absolute first so a bare name is read where it stands.
pub fn read_given(path: &Path) -> Result<Vec<u8>, ReadFailure> {
    let absolute = std::path::absolute(path).map_err(ReadFailure::Io)?;
    let dir = absolute.parent().unwrap_or(Path::new("/"));
    read_artifact(&absolute, dir)
}

/// Open a regular file inside `plan_dir` to read it as a stream (a ledger), as
/// [`read_artifact`] opens it: every component beneath the plan, never blocking.
pub fn open_regular(path: &Path, plan_dir: &Path) -> Result<std::fs::File, ReadFailure> {
    regular(inside::open_read(path, plan_dir), path)
}

/// Open the regular file `path` inside `root` to append (and read), creating it with mode 0644
/// when absent; whether it was created (the caller fsyncs the folder then). Never through a
/// symlink, never blocking.
pub fn open_append(path: &Path, root: &Path) -> crate::Result<(std::fs::File, bool)> {
    use rustix::fs::{Mode, OFlags};
    let fail = |e: io::Error| io_failure("open", path, e);
    let (parent, name) = inside::parent_and_name(path).map_err(fail)?;
    let folder = inside::open_folder(parent, root).map_err(fail)?;
    let flags =
        OFlags::RDWR | OFlags::APPEND | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let mode = Mode::from_raw_mode(0o644);
    let open = || rustix::fs::openat(&folder.fd, name, flags, mode);
    let create = || {
        rustix::fs::openat(
            &folder.fd,
            name,
            flags | OFlags::CREATE | OFlags::EXCL,
            mode,
        )
    };
    let (fd, created) = match open() {
        Ok(fd) => (fd, false),
        // Absent: create it, unless another writer did so between the two calls (then open
        // what it created; its first append and ours are serialized by the file's lock).
        Err(rustix::io::Errno::NOENT) => match create() {
            Ok(fd) => (fd, true),
            Err(rustix::io::Errno::EXIST) => (open().map_err(|e| fail(e.into()))?, false),
            Err(e) => return Err(io_failure("create", path, e.into())),
        },
        Err(rustix::io::Errno::LOOP) => {
            return Err(crate::Error::rejected(
                path.display().to_string(),
                "is a symlink; dwp does not write through symlinks",
            ));
        }
        Err(e) => return Err(fail(e.into())),
    };
    let file = std::fs::File::from(fd);
    let kind = file.metadata().map_err(fail)?.file_type();
    if !kind.is_file() {
        return Err(ReadFailure::NotRegular(file_kind(kind)).into_error("open", path));
    }
    if created {
        atomic::sync_folder(&folder)?;
    }
    Ok((file, created))
}

/// Read a markdown artifact as [`read_artifact`] does, and decode it strictly: invalid UTF-8 is
/// a failure naming the line, never replacement characters that a writer would copy on.
pub fn read_text(path: &Path, plan_dir: &Path) -> Result<String, ReadFailure> {
    decode_text(read_artifact(path, plan_dir)?)
}

/// Bytes read from a markdown artifact as strict UTF-8 text (a failure names the line).
pub fn decode_text(bytes: Vec<u8>) -> Result<String, ReadFailure> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..valid]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        ReadFailure::NotUtf8 { line }
    })
}

fn file_kind(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        return "directory";
    }
    inside::special_name(
        file_type.is_fifo(),
        file_type.is_socket(),
        file_type.is_block_device() || file_type.is_char_device(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Findings keep their order: the files read on several cores come back in the order asked.
    #[test]
    fn reading_on_every_core_returns_the_results_in_the_items_order() {
        let items: Vec<usize> = (0..READ_IN_PARALLEL_FROM * 4 + 7).collect();
        let read = |item: &usize| {
            // Uneven work, so that the readers finish their batches out of order.
            if item.is_multiple_of(97) {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            item * 3
        };
        let expected: Vec<usize> = items.iter().map(read).collect();
        assert_eq!(read_each(&items, read), expected);
        assert_eq!(read_each(&items[..10], read), expected[..10]);
    }

    /// A rename moves the file under its new name in the same folder, and never replaces one.
    #[test]
    fn a_rename_stays_in_its_folder_and_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("contracts")).unwrap();
        let from = root.join("contracts/.c.pending");
        std::fs::write(&from, "staged\n").unwrap();
        let to = root.join("contracts/c.json");
        rename_file(&from, &to, root).unwrap();
        assert_eq!(std::fs::read_to_string(&to).unwrap(), "staged\n");
        assert!(!from.exists());

        std::fs::write(&from, "other\n").unwrap();
        assert!(rename_file(&from, &to, root).is_err());
        assert!(rename_file(&from, &root.join("c.json"), root).is_err());
        assert_eq!(std::fs::read_to_string(&to).unwrap(), "staged\n");
        assert!(from.exists());
    }

    /// Receipts and records hold sha256 as 64 lower-case hex digits (FIPS 180-2 test vectors).
    #[test]
    fn sha256_is_written_as_64_lower_case_hex_digits() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// Writers racing to append to a file that does not exist yet: each either creates it or
    /// opens the one another created, and exactly one says it created it (a writer that lost
    /// the race to create was refused with "File exists" before).
    #[test]
    fn writers_racing_to_create_an_append_file_all_open_it() {
        const WRITERS: usize = 8;
        for round in 0..40 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(format!("ledger-{round}.jsonl"));
            let start = std::sync::Barrier::new(WRITERS);
            let created: Vec<bool> = std::thread::scope(|scope| {
                let writers: Vec<_> = (0..WRITERS)
                    .map(|_| {
                        scope.spawn(|| {
                            start.wait();
                            open_append(&path, dir.path()).unwrap().1
                        })
                    })
                    .collect();
                writers.into_iter().map(|w| w.join().unwrap()).collect()
            });
            assert_eq!(created.iter().filter(|&&c| c).count(), 1, "round {round}");
        }
    }

    #[test]
    fn sha256_matches_the_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn json_file_bytes_use_two_spaces_and_end_with_a_newline() {
        let bytes = json_file_bytes(&serde_json::json!({"a": [1]}));
        assert_eq!(bytes, b"{\n  \"a\": [\n    1\n  ]\n}\n");
    }

    #[test]
    fn reading_refuses_directories_and_symlinks_leaving_the_plan() {
        let outside = tempfile::tempdir().unwrap();
        let plan = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.json"), "{}").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.json"),
            plan.path().join("state.json"),
        )
        .unwrap();
        std::fs::create_dir(plan.path().join("manifest.json")).unwrap();
        std::fs::write(plan.path().join("real.json"), "{}").unwrap();
        std::os::unix::fs::symlink("real.json", plan.path().join("inside.json")).unwrap();

        let escapes = read_artifact(&plan.path().join("state.json"), plan.path());
        assert!(
            matches!(escapes, Err(ReadFailure::Escapes(_))),
            "{escapes:?}"
        );
        let dir = read_artifact(&plan.path().join("manifest.json"), plan.path());
        assert!(
            matches!(dir, Err(ReadFailure::NotRegular("directory"))),
            "{dir:?}"
        );
        let missing = read_artifact(&plan.path().join("nope.json"), plan.path());
        assert!(matches!(missing, Err(ReadFailure::Missing)));
        assert_eq!(
            read_artifact(&plan.path().join("inside.json"), plan.path()).unwrap(),
            b"{}"
        );
    }
}
