//! The store: how every dwp command reads, hashes, serializes and durably writes plan files, and
//! how writers exclude each other. No other module touches `state.json` bytes directly.
//!
//! - [`read_artifact`]: bounded reads that refuse directories and symlinks leaving the plan;
//! - [`canonical_bytes`] and [`sha256_hex`]: reproducible bytes and their hash;
//! - [`atomic`]: temp file in the same folder, fsync, rename, fsync the folder;
//! - [`lock`]: the cooperative `state.json.lock` directory shared with the reference tooling.

pub mod atomic;
pub mod lock;

pub use atomic::{WriteOutcome, write_atomic};

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Largest plan artifact dwp reads (a 10,000-task state is about 4 MiB).
pub const MAX_ARTIFACT_BYTES: u64 = 64 * 1024 * 1024;

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// Canonical JSON bytes: 2-space indent, the model's field order, a trailing newline. The same
/// value always gives the same bytes, so hashes are reproducible.
///
/// ```
/// let bytes = dwp::store::canonical_bytes(&serde_json::json!({"task": 3}));
/// assert_eq!(bytes, b"{\n  \"task\": 3\n}\n");
/// ```
pub fn canonical_bytes<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("plan models serialize infallibly");
    bytes.push(b'\n');
    bytes
}

/// Append `line` (plus a newline) to a text file durably: read, append, atomic replace. Used for
/// the records the spec tells dwp to append to PROGRESS.md.
pub fn append_line(path: &Path, line: &str) -> crate::Result<WriteOutcome> {
    let mut text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(crate::Error::io("read", path, e)),
    };
    // Keep the file's own line endings.
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
    write_atomic(path, &text)
}

/// Create the folder `path` (its parent must exist) and make the new entry durable; an
/// existing folder is left as it is.
pub fn create_dir(path: &Path) -> crate::Result<()> {
    match std::fs::create_dir(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => return Ok(()),
        Err(e) => return Err(crate::Error::io("create folder", path, e)),
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    atomic::sync_dir(parent)
}

/// Why an artifact could not be read.
#[derive(Debug)]
pub enum ReadFailure {
    Missing,
    /// Present but a directory, socket, device...
    NotRegular(&'static str),
    /// A symlink whose target is outside the plan folder.
    Escapes(PathBuf),
    /// A symlink where the plan's JSON state must be a regular file.
    Symlink,
    TooLarge(u64),
    Io(io::Error),
}

impl ReadFailure {
    /// Permission problems and other OS errors mean "could not check", not "invalid".
    pub fn is_unverifiable(&self) -> bool {
        matches!(self, ReadFailure::Io(_))
    }
}

impl fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadFailure::Missing => f.write_str("file not found"),
            ReadFailure::NotRegular(kind) => write!(f, "is a {kind}, not a regular file"),
            ReadFailure::Escapes(target) => write!(
                f,
                "is a symlink to {}, outside the plan folder",
                target.display()
            ),
            ReadFailure::Symlink => f.write_str(
                "is a symlink; manifest.json and state.json must be regular files in the plan folder",
            ),
            ReadFailure::TooLarge(size) => write!(
                f,
                "is {size} bytes, over the {MAX_ARTIFACT_BYTES}-byte limit for a plan artifact"
            ),
            ReadFailure::Io(e) => write!(f, "cannot be read: {e}"),
        }
    }
}

fn file_kind(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "directory"
    } else if file_type.is_fifo() {
        "named pipe"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_block_device() || file_type.is_char_device() {
        "device"
    } else {
        "special file"
    }
}

/// Read a plan artifact: a regular file (or a symlink resolving to one inside `plan_dir`), at
/// most [`MAX_ARTIFACT_BYTES`] long.
pub fn read_artifact(path: &Path, plan_dir: &Path) -> Result<Vec<u8>, ReadFailure> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadFailure::Missing),
        Err(e) => return Err(ReadFailure::Io(e)),
    };
    let meta = if link.file_type().is_symlink() {
        let target = std::fs::canonicalize(path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => ReadFailure::Missing,
            _ => ReadFailure::Io(e),
        })?;
        let root = std::fs::canonicalize(plan_dir).map_err(ReadFailure::Io)?;
        if !target.starts_with(&root) {
            return Err(ReadFailure::Escapes(target));
        }
        std::fs::metadata(&target).map_err(ReadFailure::Io)?
    } else {
        link
    };
    // Checked before opening: opening a named pipe would block until a writer appears.
    if !meta.file_type().is_file() {
        return Err(ReadFailure::NotRegular(file_kind(meta.file_type())));
    }
    let mut file = std::fs::File::open(path).map_err(ReadFailure::Io)?;
    let meta = file.metadata().map_err(ReadFailure::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadFailure::NotRegular(file_kind(meta.file_type())));
    }
    if meta.len() > MAX_ARTIFACT_BYTES {
        return Err(ReadFailure::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.by_ref()
        .take(MAX_ARTIFACT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadFailure::Io)?;
    if bytes.len() as u64 > MAX_ARTIFACT_BYTES {
        return Err(ReadFailure::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn canonical_bytes_use_two_spaces_and_end_with_a_newline() {
        let bytes = canonical_bytes(&serde_json::json!({"a": [1]}));
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
