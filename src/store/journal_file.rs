//! A record plan's live journal (`journal.ndjson`), opened to append under the plan's lock
//! (docs/record-plans.md, "Writing a record plan").
//!
//! The journal is append-only, so what a writer does to it is small: read it once and append
//! whole lines, each made durable before the call returns (the file's data by `fdatasync`, and
//! the folder entry by an fsync of the folder when the append created the file). Which bytes
//! tear, and what a line says, are the plan layer's; a mend replaces the file whole, through
//! `steps::commit`.
//!
//! Every writer of the journal takes the plan's lock, so the file changes only through the
//! holder. One that changed all the same (an editor, or a writer that ignores the lock) is a
//! collision: before each change this checks that the path still names the file it read and
//! that the file still has the size it left it at, and refuses otherwise (the public ledger's
//! check is the size alone), so no line is ever appended after bytes this writer did not see.

use super::lock_dir::LockGuard;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The live journal of one plan, as this writer last left it.
#[derive(Debug)]
pub struct JournalFile {
    path: PathBuf,
    plan_dir: PathBuf,
    /// `None` while the file does not exist: the first append creates it.
    file: Option<File>,
    /// The file's device and inode, and its length as this writer last saw or left it.
    seen: Seen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    dev: u64,
    ino: u64,
    len: u64,
}

impl JournalFile {
    /// Open the journal `path` of the plan `plan_dir` and read it whole; an absent journal reads
    /// as empty. `_lock` is the plan's lock, held while this lives.
    pub fn read_locked(
        path: &Path,
        plan_dir: &Path,
        _lock: &LockGuard,
    ) -> Result<(JournalFile, Vec<u8>)> {
        let mut journal = JournalFile {
            path: path.to_path_buf(),
            plan_dir: plan_dir.to_path_buf(),
            file: None,
            seen: Seen {
                dev: 0,
                ino: 0,
                len: 0,
            },
        };
        let mut bytes = Vec::new();
        match super::open_regular(path, plan_dir) {
            Ok(file) => {
                let mut file = reopen_to_append(file, path, plan_dir)?;
                file.read_to_end(&mut bytes)
                    .map_err(|e| Error::io("read", path, e))?;
                journal.seen = seen_of(&file, path)?;
                journal.file = Some(file);
            }
            Err(super::ReadFailure::Missing) => {}
            Err(failure) => return Err(failure.into_error("read", path)),
        }
        if journal.seen.len != bytes.len() as u64 {
            return Err(collision(path, bytes.len() as u64, journal.seen.len));
        }
        Ok((journal, bytes))
    }

    /// Its length, as this writer last saw or left it.
    pub fn len(&self) -> u64 {
        self.seen.len
    }

    /// Whether it holds no byte (or does not exist yet).
    pub fn is_empty(&self) -> bool {
        self.seen.len == 0
    }

    /// Append `bytes` (whole lines) durably, creating the file when it does not exist.
    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.check_unchanged()?;
        if self.file.is_none() {
            let (file, _) = super::open_append(&self.path, &self.plan_dir)?;
            let seen = seen_of(&file, &self.path)?;
            if seen.len != 0 {
                return Err(collision(&self.path, 0, seen.len));
            }
            self.seen = seen;
            self.file = Some(file);
        }
        let file = self.file.as_mut().expect("opened above");
        let path = &self.path;
        file.write_all(bytes)
            .and_then(|()| file.sync_data())
            .map_err(|e| Error::io("append to", path, e))?;
        self.seen.len += bytes.len() as u64;
        Ok(())
    }

    /// Refuse when the path names another file, or the file's length is not the one this
    /// writer left: someone wrote behind the lock.
    fn check_unchanged(&self) -> Result<()> {
        let path = &self.path;
        let at_path = match std::fs::symlink_metadata(path) {
            Ok(meta) => Some((meta.dev(), meta.ino())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("inspect", path, e)),
        };
        let Some(file) = &self.file else {
            return match at_path {
                None => Ok(()),
                Some(_) => Err(Error::rejected(
                    path.display().to_string(),
                    "was created behind this writer's lock: another writer ignores the plan's lock; nothing was appended",
                )),
            };
        };
        let now = seen_of(file, path)?;
        if at_path != Some((self.seen.dev, self.seen.ino)) {
            return Err(Error::rejected(
                path.display().to_string(),
                "was replaced behind this writer's lock: another writer ignores the plan's lock; nothing was appended",
            ));
        }
        if now.len != self.seen.len {
            return Err(collision(path, self.seen.len, now.len));
        }
        Ok(())
    }
}

/// The journal opened read-only by [`super::open_regular`], opened again by its path to append:
/// through the same checks (inside the plan, never a symlink), and then the same file.
fn reopen_to_append(read_only: File, path: &Path, plan_dir: &Path) -> Result<File> {
    let (file, created) = super::open_append(path, plan_dir)?;
    let (before, after) = (
        read_only
            .metadata()
            .map_err(|e| Error::io("inspect", path, e))?,
        file.metadata().map_err(|e| Error::io("inspect", path, e))?,
    );
    if created || (before.dev(), before.ino()) != (after.dev(), after.ino()) {
        return Err(Error::rejected(
            path.display().to_string(),
            "was replaced while it was opened: another writer ignores the plan's lock; nothing was appended",
        ));
    }
    Ok(file)
}

fn seen_of(file: &File, path: &Path) -> Result<Seen> {
    let meta = file.metadata().map_err(|e| Error::io("inspect", path, e))?;
    Ok(Seen {
        dev: meta.dev(),
        ino: meta.ino(),
        len: meta.len(),
    })
}

fn collision(path: &Path, expected: u64, found: u64) -> Error {
    Error::rejected(
        path.display().to_string(),
        format!(
            "changed size behind this writer's lock (expected {expected} bytes, found {found}): another writer ignores the plan's lock; nothing was appended"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> (tempfile::TempDir, PathBuf, LockGuard) {
        let root = tempfile::tempdir().unwrap();
        let plan = root.path().join("PLAN_x_y");
        std::fs::create_dir(&plan).unwrap();
        let lock = super::super::lock_dir::try_acquire(&plan.join(".ledger")).unwrap();
        (root, plan, lock)
    }

    #[test]
    fn the_first_append_creates_the_journal_and_each_append_lands_whole() {
        let (_root, plan, lock) = plan();
        let path = plan.join("journal.ndjson");
        let (mut journal, bytes) = JournalFile::read_locked(&path, &plan, &lock).unwrap();
        assert!(bytes.is_empty() && journal.is_empty() && !path.exists());
        journal.append(b"{\"seq\":1}\n").unwrap();
        journal.append(b"{\"seq\":2}\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"seq\":1}\n{\"seq\":2}\n");
        assert_eq!(journal.len(), 20);
    }

    // The collision check (issue #33): an append never follows bytes this writer did not see.
    #[test]
    fn an_append_after_bytes_written_behind_the_lock_is_refused_and_writes_nothing() {
        let (_root, plan, lock) = plan();
        let path = plan.join("journal.ndjson");
        std::fs::write(&path, b"{\"seq\":1}\n").unwrap();
        let (mut journal, _) = JournalFile::read_locked(&path, &plan, &lock).unwrap();
        let mut behind = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        behind.write_all(b"{\"seq\":2}\n").unwrap();
        let refused = journal.append(b"{\"seq\":2}\n").unwrap_err().to_string();
        assert!(refused.contains("changed size behind"), "{refused}");
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"seq\":1}\n{\"seq\":2}\n");
    }

    #[test]
    fn an_append_to_a_journal_replaced_behind_the_lock_is_refused() {
        let (_root, plan, lock) = plan();
        let path = plan.join("journal.ndjson");
        std::fs::write(&path, b"{\"seq\":1}\n").unwrap();
        let (mut journal, _) = JournalFile::read_locked(&path, &plan, &lock).unwrap();
        let other = plan.join("other.ndjson");
        std::fs::write(&other, b"{\"seq\":1}\n").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let refused = journal.append(b"{\"seq\":2}\n").unwrap_err().to_string();
        assert!(refused.contains("replaced"), "{refused}");
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"seq\":1}\n");
    }

    #[test]
    fn a_journal_created_behind_the_lock_is_never_appended_to() {
        let (_root, plan, lock) = plan();
        let path = plan.join("journal.ndjson");
        let (mut journal, _) = JournalFile::read_locked(&path, &plan, &lock).unwrap();
        std::fs::write(&path, b"{\"seq\":1}\n").unwrap();
        let refused = journal.append(b"{\"seq\":1}\n").unwrap_err().to_string();
        assert!(refused.contains("created behind"), "{refused}");
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"seq\":1}\n");
    }
}
