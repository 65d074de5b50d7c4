//! Multi-file writes that no kill can leave half done: the intent record.
//!
//! A writer that changes more than one file (`reconcile --write`: state.json, then its record in
//! PROGRESS.md; `amend`, `init`, `migrate`, `lock recover --force`, the contract ladder's
//! escalation) first writes every change it is about to make, in full, to `.dwp-intent.json` in
//! the plan folder (one durable atomic write), then makes the changes, then removes the record.
//! Killed anywhere in between, the record stays, and the next writer to take the plan's lock
//! completes it before doing its own work ([`complete_pending`]): each step is idempotent, so
//! completing a record that was already half (or fully) carried out changes only what is
//! missing. `dwp verify` reports a record that is still there (DWP087).
//!
//! A step never overwrites a change it did not expect: a file replaced since the record was
//! written (by hand, between the kill and the next run) stops the completion with an error
//! that names the file, and nothing more is written.

use super::{ReadFailure, read_artifact, read_text, sha256_hex};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

/// The record's file name, in the plan folder.
pub const INTENT: &str = ".dwp-intent.json";

const SCHEMA: &str = "dwp-intent/1";

/// One change of a multi-file write. Paths are relative to the plan folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Replace the file with `content`, provided it still holds what was read (`before_sha256`;
    /// `None`: the file did not exist).
    Replace {
        path: String,
        before_sha256: Option<String>,
        content: String,
    },
    /// Append `line` (one or more lines) to a text file, unless it ends with it already.
    Append { path: String, line: String },
    /// Create the folder, if it is not there.
    CreateDir { path: String },
    /// Remove the file, provided it still holds what was read (`sha256`).
    Remove { path: String, sha256: String },
    /// Remove the writer lock directory `path`, provided it is still the directory `lock`
    /// names. `dwp lock recover --force` records it (with its PROGRESS.md entry) before it
    /// removes that lock, so a kill between the record and the removal leaves a record that
    /// `dwp lock recover` completes without asking again. A writer completing the record holds
    /// the lock itself, so the recorded one is gone: nothing to do.
    RemoveLock {
        path: String,
        lock: super::lock_dir::Identity,
    },
}

/// The record itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intent {
    pub schema: String,
    /// The command that wrote it, as a person would type it (`dwp reconcile --write`).
    pub command: String,
    pub started_at: String,
    pub pid: u32,
    pub steps: Vec<Step>,
}

/// A multi-file write being assembled; [`Transaction::commit`] records it, then carries it out.
#[derive(Debug)]
pub struct Transaction {
    plan_dir: PathBuf,
    intent: Intent,
}

impl Transaction {
    pub fn new(plan_dir: &Path, command: &str) -> Self {
        Transaction {
            plan_dir: plan_dir.to_path_buf(),
            intent: Intent {
                schema: SCHEMA.to_owned(),
                command: command.to_owned(),
                started_at: crate::clock::now_rfc3339(),
                pid: std::process::id(),
                steps: Vec::new(),
            },
        }
    }

    /// Replace `path` (inside the plan) with `content`; `before_sha256` is the hash of what the
    /// writer read there (`None`: nothing).
    pub fn replace_known(
        &mut self,
        path: &Path,
        before_sha256: Option<&str>,
        content: &[u8],
    ) -> Result<()> {
        let content = std::str::from_utf8(content).map_err(|_| {
            Error::rejected(path.display().to_string(), "dwp writes only UTF-8 text")
        })?;
        self.intent.steps.push(Step::Replace {
            path: self.relative(path)?,
            before_sha256: before_sha256.map(str::to_owned),
            content: content.to_owned(),
        });
        Ok(())
    }

    /// Append `line` to the text file `path` (inside the plan).
    pub fn append(&mut self, path: &Path, line: &str) -> Result<()> {
        self.intent.steps.push(Step::Append {
            path: self.relative(path)?,
            line: line.to_owned(),
        });
        Ok(())
    }

    /// Remove the file `path` (inside the plan), which the writer read as bytes of `sha256`.
    pub fn remove_known(&mut self, path: &Path, sha256: &str) -> Result<()> {
        self.intent.steps.push(Step::Remove {
            path: self.relative(path)?,
            sha256: sha256.to_owned(),
        });
        Ok(())
    }

    /// Remove the writer lock directory `path` (inside the plan), which is the directory `lock`.
    pub fn remove_lock(&mut self, path: &Path, lock: &super::lock_dir::Identity) -> Result<()> {
        self.intent.steps.push(Step::RemoveLock {
            path: self.relative(path)?,
            lock: lock.clone(),
        });
        Ok(())
    }

    /// Create the folder `path` (inside the plan).
    pub fn create_dir(&mut self, path: &Path) -> Result<()> {
        self.intent.steps.push(Step::CreateDir {
            path: self.relative(path)?,
        });
        Ok(())
    }

    fn relative(&self, path: &Path) -> Result<String> {
        relative_name(&self.plan_dir, path)
    }

    /// Record the steps durably without carrying them out: the next writer to take the lock
    /// does (`dwp lock recover --force` records its PROGRESS.md entry while the dead owner's
    /// lock still keeps every writer out, then takes the lock itself).
    pub fn record(self) -> Result<()> {
        if self.intent.steps.is_empty() {
            return Ok(());
        }
        let record = self.plan_dir.join(INTENT);
        super::write_atomic(
            &record,
            &self.plan_dir,
            &super::json_file_bytes(&self.intent),
        )
        .map(|_| ())
    }

    /// Record the steps durably, carry them out in order, then remove the record. A step with
    /// nothing to do (a write that changes no byte) is skipped; an empty transaction writes
    /// nothing at all. Returns whether each step changed its file.
    pub fn commit(self) -> Result<Vec<bool>> {
        if self.intent.steps.is_empty() {
            return Ok(Vec::new());
        }
        let record = self.plan_dir.join(INTENT);
        super::write_atomic(
            &record,
            &self.plan_dir,
            &super::json_file_bytes(&self.intent),
        )?;
        // The writer read every file under the lock it still holds: its steps are carried out
        // as recorded, without reading them again (a completion by the next writer checks).
        let mut changed = Vec::with_capacity(self.intent.steps.len());
        for step in &self.intent.steps {
            changed.push(carry_out_fresh(&self.plan_dir, step)?);
        }
        super::remove_file(&record, &self.plan_dir)?;
        Ok(changed)
    }
}

/// `path` named relative to the plan folder `plan_dir`, as a record names it; refused unless it
/// is a plain path inside the folder.
pub fn relative_name(plan_dir: &Path, path: &Path) -> Result<String> {
    let rel = path
        .strip_prefix(plan_dir)
        .ok()
        .filter(|rel| is_plain_relative(rel))
        .and_then(|rel| rel.to_str())
        .ok_or_else(|| {
            Error::rejected(
                path.display().to_string(),
                "is not a file of the plan folder",
            )
        })?;
    Ok(rel.to_owned())
}

fn is_plain_relative(path: &Path) -> bool {
    !path.as_os_str().is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// What [`complete_pending`] found and did.
#[derive(Debug, Clone)]
pub struct Completed {
    pub command: String,
    pub started_at: String,
    /// The steps that still had to be carried out.
    pub steps_done: usize,
}

/// Complete an interrupted multi-file write, if its record is there. Every writer calls this
/// once it holds the plan's lock, before it reads anything.
pub fn complete_pending(plan_dir: &Path) -> Result<Option<Completed>> {
    let Some(intent) = pending(plan_dir)? else {
        return Ok(None);
    };
    let changed = carry_out(plan_dir, &intent)?;
    super::remove_file(&plan_dir.join(INTENT), plan_dir)?;
    Ok(Some(Completed {
        command: intent.command,
        started_at: intent.started_at,
        steps_done: changed.into_iter().filter(|c| *c).count(),
    }))
}

/// The record of an interrupted multi-file write, if there is one.
pub fn pending(plan_dir: &Path) -> Result<Option<Intent>> {
    let path = plan_dir.join(INTENT);
    let bytes = match read_artifact(&path, plan_dir) {
        Ok(bytes) => bytes,
        Err(ReadFailure::Missing) => return Ok(None),
        Err(failure) => return Err(failure.into_error("read", &path)),
    };
    let intent: Intent = serde_json::from_slice(&bytes)
        .ok()
        .filter(|i: &Intent| i.schema == SCHEMA)
        .filter(|i| {
            i.steps
                .iter()
                .all(|s| is_plain_relative(Path::new(step_path(s))))
        })
        .ok_or_else(|| {
            Error::rejected(
                path.display().to_string(),
                "is not a record of an interrupted write that dwp can complete",
            )
            .with_hint(abandon_hint(&path))
        })?;
    Ok(Some(intent))
}

fn step_path(step: &Step) -> &str {
    match step {
        Step::Replace { path, .. }
        | Step::Append { path, .. }
        | Step::CreateDir { path }
        | Step::Remove { path, .. }
        | Step::RemoveLock { path, .. } => path,
    }
}

/// The lock an interrupted `dwp lock recover --force` recorded removing, if `intent` holds one.
pub fn recorded_lock_removal(intent: &Intent) -> Option<&super::lock_dir::Identity> {
    intent.steps.iter().find_map(|step| match step {
        Step::RemoveLock { lock, .. } => Some(lock),
        _ => None,
    })
}

/// A file changed since the record was written: completing the record would overwrite it.
fn changed_since(plan_dir: &Path, intent: &Intent, path: &Path) -> Error {
    Error::rejected(
        path.display().to_string(),
        format!(
            "changed since the interrupted `{}` of {} recorded what it would write here: completing it would overwrite that change",
            intent.command, intent.started_at
        ),
    )
    .with_hint(abandon_hint(&plan_dir.join(INTENT)))
}

fn abandon_hint(record: &Path) -> String {
    format!(
        "read it, then remove it to abandon that write (`rm {}`) and run the command again",
        crate::term::path_word(record)
    )
}

/// Carry out each step that still has work to do; whether each changed its file.
fn carry_out(plan_dir: &Path, intent: &Intent) -> Result<Vec<bool>> {
    let mut changed = Vec::with_capacity(intent.steps.len());
    for step in &intent.steps {
        changed.push(carry_out_step(plan_dir, intent, step)?);
    }
    Ok(changed)
}

fn carry_out_step(plan_dir: &Path, intent: &Intent, step: &Step) -> Result<bool> {
    let path = plan_dir.join(step_path(step));
    match step {
        Step::Replace {
            before_sha256,
            content,
            ..
        } => {
            let now = match read_artifact(&path, plan_dir) {
                Ok(bytes) => Some(sha256_hex(&bytes)),
                Err(ReadFailure::Missing) => None,
                Err(failure) => return Err(failure.into_error("read", &path)),
            };
            if now.as_deref() == Some(sha256_hex(content.as_bytes()).as_str()) {
                return Ok(false);
            }
            if now != *before_sha256 {
                return Err(changed_since(plan_dir, intent, &path));
            }
            super::write_atomic(&path, plan_dir, content.as_bytes()).map(|w| w.changed)
        }
        Step::Append { line, .. } => append_unless_there(plan_dir, &path, line),
        Step::Remove { sha256, .. } => {
            let now = match read_artifact(&path, plan_dir) {
                Ok(bytes) => sha256_hex(&bytes),
                Err(ReadFailure::Missing) => return Ok(false),
                Err(failure) => return Err(failure.into_error("read", &path)),
            };
            if now != *sha256 {
                return Err(changed_since(plan_dir, intent, &path));
            }
            super::remove_file(&path, plan_dir)
        }
        Step::CreateDir { .. } => {
            let there = super::entry(&path, plan_dir).map_err(|e| Error::io("stat", &path, e))?
                == super::Entry::Directory;
            if there {
                return Ok(false);
            }
            super::create_dir(&path, plan_dir).map(|()| true)
        }
        Step::RemoveLock { lock, .. } => lock_removed(plan_dir, intent, &path, lock),
    }
}

/// A recorded lock removal, as a writer completing the record finds it: done, since the writer
/// holds the lock itself, unless the recorded lock still stands (which only `dwp lock recover`
/// removes).
fn lock_removed(
    plan_dir: &Path,
    intent: &Intent,
    path: &Path,
    lock: &super::lock_dir::Identity,
) -> Result<bool> {
    if super::lock_dir::identity_at(path)?.as_ref() != Some(lock) {
        return Ok(false);
    }
    Err(Error::rejected(
        path.display().to_string(),
        format!(
            "the interrupted `{}` of {} recorded removing this lock, which still stands",
            intent.command, intent.started_at
        ),
    )
    .with_hint(format!(
        "complete that removal: `dwp lock recover {}`",
        crate::term::path_word(plan_dir)
    )))
}

/// A step of a record its own writer just made, carried out as recorded.
fn carry_out_fresh(plan_dir: &Path, step: &Step) -> Result<bool> {
    let path = plan_dir.join(step_path(step));
    match step {
        Step::Replace { content, .. } => {
            super::write_atomic(&path, plan_dir, content.as_bytes()).map(|w| w.changed)
        }
        Step::Append { line, .. } => append_unless_there(plan_dir, &path, line),
        Step::Remove { .. } => super::remove_file(&path, plan_dir),
        Step::CreateDir { .. } => super::create_dir(&path, plan_dir).map(|()| true),
        // Only ever recorded for the next writer, which finds it done.
        Step::RemoveLock { .. } => Ok(false),
    }
}

/// Append `line` to the text file `path`, unless it ends with it already (one read).
pub(crate) fn append_unless_there(plan_dir: &Path, path: &Path, line: &str) -> Result<bool> {
    let text = match read_text(path, plan_dir) {
        Ok(text) => text,
        Err(ReadFailure::Missing) => String::new(),
        Err(failure) => return Err(failure.into_error("read", path)),
    };
    if ends_with_lines(&text, line) {
        return Ok(false);
    }
    let bytes = super::with_line(text.into_bytes(), line);
    super::write_atomic(path, plan_dir, &bytes).map(|w| w.changed)
}

/// Whether `text` already ends with `line` (as [`super::append_line`] writes it: any line
/// endings, trailing blank lines ignored).
fn ends_with_lines(text: &str, line: &str) -> bool {
    let text = text.replace("\r\n", "\n");
    let line = line.replace("\r\n", "\n");
    text.trim_end_matches('\n')
        .ends_with(line.trim_end_matches('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("state.json"), "old\n").unwrap();
        std::fs::write(dir.path().join("PROGRESS.md"), "# Progress\n").unwrap();
        dir
    }

    fn transaction(dir: &Path) -> Transaction {
        let mut t = Transaction::new(dir, "dwp test");
        t.replace_known(
            &dir.join("state.json"),
            Some(&sha256_hex(b"old\n")),
            b"new\n",
        )
        .unwrap();
        t.append(&dir.join("PROGRESS.md"), "- reconciled").unwrap();
        t
    }

    #[test]
    fn a_commit_carries_out_every_step_and_leaves_no_record() {
        let dir = plan();
        transaction(dir.path()).commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("state.json")).unwrap(),
            "new\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("PROGRESS.md")).unwrap(),
            "# Progress\n- reconciled\n"
        );
        assert!(!dir.path().join(INTENT).exists());
    }

    #[test]
    fn a_record_left_at_any_point_is_completed_once_and_only_once() {
        // The record, then none, one or both steps carried out: completing gives one result.
        for carried in 0..=2 {
            let dir = plan();
            let t = transaction(dir.path());
            let intent = t.intent.clone();
            t.record().unwrap();
            for step in intent.steps.iter().take(carried) {
                carry_out_step(dir.path(), &intent, step).unwrap();
            }
            let done = complete_pending(dir.path()).unwrap().expect("a record");
            assert_eq!(done.steps_done, 2 - carried);
            assert_eq!(
                std::fs::read_to_string(dir.path().join("state.json")).unwrap(),
                "new\n"
            );
            assert_eq!(
                std::fs::read_to_string(dir.path().join("PROGRESS.md")).unwrap(),
                "# Progress\n- reconciled\n",
                "after {carried} steps"
            );
            assert!(complete_pending(dir.path()).unwrap().is_none());
        }
    }

    #[test]
    fn completion_never_overwrites_a_change_made_since_the_record() {
        let dir = plan();
        transaction(dir.path()).record().unwrap();
        std::fs::write(dir.path().join("state.json"), "edited by hand\n").unwrap();
        let err = complete_pending(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("changed since the interrupted `dwp test`"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("state.json")).unwrap(),
            "edited by hand\n"
        );
        assert!(
            dir.path().join(INTENT).exists(),
            "the record stays for a person to read"
        );
    }

    #[test]
    fn a_record_naming_a_path_outside_the_plan_is_refused() {
        let dir = plan();
        let forged = r#"{"schema":"dwp-intent/1","command":"x","started_at":"t","pid":1,
            "steps":[{"op":"append","path":"../outside.md","line":"x"}]}"#;
        std::fs::write(dir.path().join(INTENT), forged).unwrap();
        assert!(complete_pending(dir.path()).is_err());
        assert!(!dir.path().parent().unwrap().join("outside.md").exists());
    }
}
