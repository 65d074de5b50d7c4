//! The one writer of plan folders. A command plans what it will write as a [`Change`] (every
//! file edit, each with the hash of what it replaces) from the plan it loaded under the lock,
//! refusing before anything is written; [`commit`] then carries the change out, and no other
//! code writes a plan file (`tests/safety/layers.rs` holds that to the code).
//!
//! How a change is carried out:
//! - folders first, then new files nothing refers to yet (a gate log): a kill after them leaves
//!   a file no record points at, never a record without its file;
//! - then the edits of existing files: one is replaced durably and atomically on its own
//!   (`store::write_atomic`); several go through an intent record (`store::intent`), so a kill
//!   between them is completed by the next writer;
//! - a rename (a staged file made live under its name) is a change of its own, atomic in one
//!   folder (`store::rename_file`);
//! - a change that edits nothing touches nothing, and a file given the bytes it holds is not
//!   rewritten.
//!
//! Publication, the terminal transition, has its own protocol around its change (the marker a
//! recovery resumes from, the re-read before the receipt): [`publish`].

use crate::error::Result;
use crate::plan::LoadedPlan;
use crate::steps::publication::{self, Publication};
use crate::store::{self, intent};
use std::path::{Path, PathBuf};

/// One file edit of a change. Paths are inside the change's plan folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Replace the file with `bytes` (create it, when `before` is `None`); `before` is the
    /// sha256 of what the planner read there.
    Write {
        path: PathBuf,
        before: Option<String>,
        bytes: Vec<u8>,
    },
    /// Append `line` to a text file (a PROGRESS.md record), unless it already ends with it.
    Append { path: PathBuf, line: String },
    /// A new file under a name nothing else uses, that nothing refers to until the rest of the
    /// change lands (a gate log): written before the other edits, outside any intent record.
    NewFile { path: PathBuf, bytes: Vec<u8> },
    /// Create the folder, if it is not there.
    CreateDir { path: PathBuf },
    /// Remove the file, which the planner read as bytes of this sha256.
    Remove { path: PathBuf, sha256: String },
    /// Rename the file `path` to `to`, a new name in its folder: the one edit of its change
    /// (an intent record cannot complete half of a rename), which makes a staged file live in
    /// one step (an amendment's revision).
    Rename { path: PathBuf, to: PathBuf },
    /// Remove the writer lock directory, which is the one `lock` names: only recorded for the
    /// next writer ([`record_for_next_writer`]) by `dwp lock recover --force`, which removes
    /// it itself.
    RemoveLock {
        path: PathBuf,
        lock: store::lock_dir::Identity,
    },
}

impl Edit {
    pub fn path(&self) -> &Path {
        match self {
            Edit::Write { path, .. }
            | Edit::Append { path, .. }
            | Edit::NewFile { path, .. }
            | Edit::CreateDir { path }
            | Edit::Remove { path, .. }
            | Edit::Rename { path, .. }
            | Edit::RemoveLock { path, .. } => path,
        }
    }

    /// Edits carried out before the others, outside any intent record.
    fn goes_first(&self) -> bool {
        matches!(self, Edit::CreateDir { .. } | Edit::NewFile { .. })
    }
}

/// What a command will write to one plan folder, in order.
#[derive(Debug, Clone)]
pub struct Change {
    dir: PathBuf,
    /// The command as a person would type it (`dwp update --tick`): an intent record names it.
    command: String,
    edits: Vec<Edit>,
}

impl Change {
    pub fn new(dir: &Path, command: &str) -> Change {
        Change {
            dir: dir.to_path_buf(),
            command: command.to_owned(),
            edits: Vec::new(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn edits(&self) -> &[Edit] {
        &self.edits
    }

    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Replace `path` with `bytes`; `before` is what the planner read there (`None`: nothing).
    pub fn write(&mut self, path: &Path, before: Option<&[u8]>, bytes: Vec<u8>) {
        let before = before.map(store::sha256_hex);
        self.write_known(path, before, bytes);
    }

    /// [`Change::write`] when the planner knows only the sha256 of what it read.
    pub fn write_known(&mut self, path: &Path, before: Option<String>, bytes: Vec<u8>) {
        self.edits.push(Edit::Write {
            path: path.to_path_buf(),
            before,
            bytes,
        });
    }

    /// Append `line` to the text file `path`.
    pub fn append(&mut self, path: &Path, line: &str) {
        self.edits.push(Edit::Append {
            path: path.to_path_buf(),
            line: line.to_owned(),
        });
    }

    /// A new file under a name nothing else uses (see [`Edit::NewFile`]).
    pub fn new_file(&mut self, path: &Path, bytes: Vec<u8>) {
        self.edits.push(Edit::NewFile {
            path: path.to_path_buf(),
            bytes,
        });
    }

    pub fn create_dir(&mut self, path: &Path) {
        self.edits.push(Edit::CreateDir {
            path: path.to_path_buf(),
        });
    }

    /// Remove `path`, which the planner read as `bytes`.
    pub fn remove(&mut self, path: &Path, bytes: &[u8]) {
        self.edits.push(Edit::Remove {
            path: path.to_path_buf(),
            sha256: store::sha256_hex(bytes),
        });
    }

    /// Rename the file `path` to `to`, a new name in its folder (see [`Edit::Rename`]).
    pub fn rename(&mut self, path: &Path, to: &Path) {
        self.edits.push(Edit::Rename {
            path: path.to_path_buf(),
            to: to.to_path_buf(),
        });
    }

    /// Remove the writer lock directory `path`, which is the directory `lock` names.
    pub fn remove_lock(&mut self, path: &Path, lock: &store::lock_dir::Identity) {
        self.edits.push(Edit::RemoveLock {
            path: path.to_path_buf(),
            lock: lock.clone(),
        });
    }

    /// `other`'s edits after this change's (it keeps its own command).
    pub fn extend(&mut self, other: Change) {
        self.edits.extend(other.edits);
    }

    /// `first`'s edits before this change's (it keeps its own command).
    pub fn prepend(&mut self, first: Change) {
        let mut edits = first.edits;
        edits.append(&mut self.edits);
        self.edits = edits;
    }

    /// What the change would write, as a unified diff per file named relative to the plan
    /// folder (a writer's `--dry-run`), each file's current bytes as `plan` read them.
    pub fn preview(&self, plan: &LoadedPlan) -> Result<String> {
        let mut out = String::new();
        for edit in &self.edits {
            let relative = self.relative(edit.path())?;
            let current = || match plan.current_bytes(edit.path()) {
                Ok(bytes) => Ok(bytes.unwrap_or_default()),
                Err(failure) => Err(failure.into_error("read", edit.path())),
            };
            let (before, after) = match edit {
                Edit::Write { bytes, .. } | Edit::NewFile { bytes, .. } => {
                    (current()?, bytes.clone())
                }
                Edit::Append { line, .. } => {
                    let before = current()?;
                    (before.clone(), store::with_line(before, line))
                }
                Edit::Remove { .. } => (current()?, Vec::new()),
                Edit::CreateDir { .. } => {
                    out.push_str(&format!("+ folder {relative}/\n"));
                    continue;
                }
                Edit::RemoveLock { .. } => {
                    out.push_str(&format!("- lock {relative}/\n"));
                    continue;
                }
                Edit::Rename { to, .. } => {
                    out.push_str(&format!("renamed {relative} to {}\n", self.relative(to)?));
                    continue;
                }
            };
            out.push_str(&crate::diff::unified_diff(&before, &after, &relative));
        }
        Ok(out)
    }

    /// `path` relative to the plan folder, as intent records and previews name it.
    fn relative(&self, path: &Path) -> Result<String> {
        intent::relative_name(&self.dir, path)
    }
}

/// Carry out `change` (see the module's documentation); nothing when it edits nothing.
pub fn commit(change: Change) -> Result<()> {
    if change.is_empty() {
        return Ok(());
    }
    crate::profile::time("durable write", || carry_out(change))
}

fn carry_out(change: Change) -> Result<()> {
    let Change {
        dir,
        command,
        edits,
    } = change;
    let (first, rest): (Vec<Edit>, Vec<Edit>) = edits.into_iter().partition(Edit::goes_first);
    for edit in &first {
        carry_out_alone(&dir, edit)?;
    }
    match rest.as_slice() {
        [] => Ok(()),
        [one] => carry_out_alone(&dir, one),
        several => {
            let mut record = intent::Transaction::new(&dir, &command);
            for edit in several {
                add_to_record(&mut record, edit)?;
            }
            record.commit().map(|_| ())
        }
    }
}

/// `commit`, or with `dry_run` the change's preview (nothing written).
pub fn commit_or_preview(
    change: Change,
    plan: &LoadedPlan,
    dry_run: bool,
) -> Result<Option<String>> {
    if dry_run {
        return change.preview(plan).map(Some);
    }
    commit(change).map(|()| None)
}

/// Record `change` durably without carrying it out: the next writer to take the plan's lock
/// does (`dwp lock recover --force` records its PROGRESS.md entry while the dead owner's lock
/// still keeps every writer out, then takes the lock itself).
pub fn record_for_next_writer(change: Change) -> Result<()> {
    let mut record = intent::Transaction::new(&change.dir, &change.command);
    for edit in &change.edits {
        add_to_record(&mut record, edit)?;
    }
    record.record()
}

fn carry_out_alone(dir: &Path, edit: &Edit) -> Result<()> {
    match edit {
        Edit::Write { path, bytes, .. } | Edit::NewFile { path, bytes } => {
            store::write_atomic(path, dir, bytes).map(|_| ())
        }
        Edit::Append { path, line } => intent::append_unless_there(dir, path, line).map(|_| ()),
        Edit::CreateDir { path } => store::create_dir(path, dir),
        Edit::Remove { path, .. } => store::remove_file(path, dir).map(|_| ()),
        Edit::Rename { path, to } => store::rename_file(path, to, dir),
        // A lock is removed by `dwp lock recover`, never by a change: one carried out finds
        // the recorded lock gone, or stops.
        Edit::RemoveLock { path, lock } => {
            match store::lock_dir::identity_at(path)?.as_ref() == Some(lock) {
                false => Ok(()),
                true => Err(crate::Error::rejected(
                    path.display().to_string(),
                    "a change cannot remove a writer lock",
                )),
            }
        }
    }
}

fn add_to_record(record: &mut intent::Transaction, edit: &Edit) -> Result<()> {
    match edit {
        Edit::Write {
            path,
            before,
            bytes,
        } => record.replace_known(path, before.as_deref(), bytes),
        Edit::NewFile { path, bytes } => record.replace_known(path, None, bytes),
        Edit::Append { path, line } => record.append(path, line),
        Edit::CreateDir { path } => record.create_dir(path),
        Edit::Remove { path, sha256 } => record.remove_known(path, sha256),
        Edit::RemoveLock { path, lock } => record.remove_lock(path, lock),
        Edit::Rename { path, .. } => Err(crate::Error::rejected(
            path.display().to_string(),
            "a rename is a change of its own: an intent record cannot complete half of one",
        )),
    }
}

/// Carry out a publication that passed its checks ([`publication::plan_publication`], or a
/// recovery's [`publication::plan_recovery`]): the marker (a recovery's is there already), the
/// other edits and the state, the re-read of every covered file, the receipt, the marker
/// removed (`steps::publication` describes each step). Stopped at the re-read (an artifact
/// changed during the publication), it writes no receipt and leaves the marker.
pub fn publish(planned: publication::Planned) -> Result<Publication> {
    use publication::{Step, reached};
    let publication::Planned {
        plan_dir,
        state_path,
        candidate,
        marker,
        recovered_from,
    } = planned;
    if recovered_from.is_none() {
        let _stage = crate::profile::stage("write marker");
        let bytes = store::json_file_bytes(&marker);
        store::write_atomic(&plan_dir.join(publication::MARKER), &plan_dir, &bytes)?;
        drop(_stage);
        reached(Step::Marked)?;
    }
    for edit in &marker.edits {
        let path = plan_dir.join(&edit.path);
        intent::relative_name(&plan_dir, &path)?;
        store::write_atomic(&path, &plan_dir, edit.content.as_bytes())?;
    }
    crate::profile::time("write state", || {
        store::write_atomic(&state_path, &plan_dir, &candidate.bytes)
    })?;
    reached(Step::StatePublished)?;

    // Every covered file read once after the write, afresh: its digest is re-checked against
    // the marker's, and the receipt lists the hashes of these same bytes.
    let after = LoadedPlan::open_with_state(&plan_dir, &state_path);
    let files = crate::profile::time("read artifacts", || {
        publication::CoveredFiles::of(&after, &candidate.doc)
    })?;
    let problems = crate::profile::time("re-verify", || {
        publication::reverify(&after, &candidate, &marker, &files.digest())
    });
    if !problems.is_empty() {
        return Ok(Publication::stopped(
            &plan_dir,
            &candidate.sha256,
            problems,
            recovered_from,
        ));
    }
    reached(Step::Reverified)?;

    let receipt_path = plan_dir.join(crate::rules::receipt::RECEIPT);
    let _receipt = crate::profile::stage("receipt");
    let receipt = publication::receipt(
        &candidate.sha256,
        &marker,
        files.artifacts()?,
        publication::receipt_gates(&candidate.doc),
    );
    if let Some(parent) = receipt_path.parent() {
        store::create_dir(parent, &plan_dir)?;
    }
    store::write_atomic(&receipt_path, &plan_dir, &store::json_file_bytes(&receipt))?;
    drop(_receipt);
    reached(Step::ReceiptWritten)?;

    store::remove_file(&plan_dir.join(publication::MARKER), &plan_dir)?;
    reached(Step::MarkerRemoved)?;
    Ok(Publication {
        plan: plan_dir.display().to_string(),
        verdict: publication::PublicationVerdict::Published,
        state_sha256: Some(candidate.sha256.clone()),
        receipt: Some(receipt_path.display().to_string()),
        recovered_from,
        findings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("state.json"), "old\n").unwrap();
        std::fs::write(dir.path().join("PROGRESS.md"), "# Progress\n").unwrap();
        dir
    }

    /// A change of a new folder, a new file and two edits lands whole, and leaves no record.
    #[test]
    fn a_change_lands_whole_and_leaves_no_record() {
        let dir = folder();
        let path = |name: &str| dir.path().join(name);
        let mut change = Change::new(dir.path(), "dwp test");
        change.create_dir(&path("gates"));
        change.new_file(&path("gates/run.log"), vec![0xff, b'\n']);
        change.write(&path("state.json"), Some(b"old\n"), b"new\n".to_vec());
        change.append(&path("PROGRESS.md"), "- ran");
        commit(change).unwrap();
        assert_eq!(std::fs::read(path("gates/run.log")).unwrap(), [0xff, b'\n']);
        assert_eq!(
            std::fs::read_to_string(path("state.json")).unwrap(),
            "new\n"
        );
        assert_eq!(
            std::fs::read_to_string(path("PROGRESS.md")).unwrap(),
            "# Progress\n- ran\n"
        );
        assert!(!path(intent::INTENT).exists());
    }

    /// A preview shows each edit as a diff from the file's bytes as the plan read them, and
    /// writes nothing.
    #[test]
    fn a_preview_diffs_each_edit_and_writes_nothing() {
        let dir = folder();
        let plan = LoadedPlan::open(dir.path());
        let mut change = Change::new(dir.path(), "dwp test");
        change.write(
            &dir.path().join("state.json"),
            Some(b"old\n"),
            b"new\n".to_vec(),
        );
        change.create_dir(&dir.path().join("gates"));
        let preview = commit_or_preview(change, &plan, true).unwrap().unwrap();
        assert!(
            preview.contains("-old") && preview.contains("+new"),
            "{preview}"
        );
        assert!(preview.contains("+ folder gates/"), "{preview}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("state.json")).unwrap(),
            "old\n"
        );
        assert!(!dir.path().join("gates").exists());
    }

    /// An edit outside the plan folder is refused, not written.
    #[test]
    fn an_edit_outside_the_plan_folder_is_refused() {
        let dir = folder();
        let outside = tempfile::tempdir().unwrap();
        let mut change = Change::new(dir.path(), "dwp test");
        change.write(
            &dir.path().join("state.json"),
            Some(b"old\n"),
            b"new\n".to_vec(),
        );
        change.write(&outside.path().join("x"), None, b"x\n".to_vec());
        assert!(commit(change).is_err());
        assert!(!outside.path().join("x").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("state.json")).unwrap(),
            "old\n"
        );
    }
}
