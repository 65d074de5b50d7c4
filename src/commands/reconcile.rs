//! `dwp reconcile`: the markdown is the source of truth and `state.json` its projection.
//!
//! [`reconcile`] runs the desync check (`crate::rules::desync`), or with `write` the regeneration
//! (`crate::rules::regenerate`) under the lock, durably, with one dated entry appended to PROGRESS.md,
//! both in one intent record.

use crate::clock;
use crate::error::{Error, Result};
use crate::plan::model::State;
use crate::plan::{Loaded, LoadedPlan};
use crate::steps::commit::{Change as Edits, commit_or_preview};
use crate::store;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use crate::plan::records::PlanMarkdown;
use crate::rules::desync::{Desync, compare};
use crate::rules::regenerate::{Change, Regeneration, regenerate};

/// Commit hashes of commits whose message names `Task N of PLAN_name`, newest first wins.
pub fn git_commits(plan_dir: &Path, plan_name: &str) -> Result<BTreeMap<u64, String>> {
    // The plan's repository may carry configuration that runs programs (signature checks, a
    // pager): git runs defanged, as for every repository dwp reads.
    let output = crate::store::git::Git::open(plan_dir)
        .and_then(|git| git.output(["log", "--no-show-signature", "--format=%h %s"]))
        .map_err(|e| Error::io("run git log", plan_dir, e))?;
    if !output.status.success() {
        return Err(Error::rejected(
            plan_dir.display().to_string(),
            format!(
                "--git: `git log` failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        ));
    }
    let mut commits = BTreeMap::new();
    let needle = format!(" of {plan_name}");
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some((hash, subject)) = line.split_once(' ') else {
            continue;
        };
        let mut rest = subject;
        while let Some(at) = rest.find("Task ") {
            let after = &rest[at + 5..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let named = after[digits..]
                .strip_prefix(needle.as_str())
                .is_some_and(|rest| {
                    !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                });
            if digits > 0
                && named
                && let Ok(id) = after[..digits].parse::<u64>()
            {
                commits.entry(id).or_insert_with(|| hash.to_owned());
            }
            rest = after;
        }
    }
    Ok(commits)
}

/// What `dwp reconcile` asks for.
#[derive(Debug, Clone, Default)]
pub struct ReconcileRequest {
    pub write: bool,
    pub diff: bool,
    /// With `write`: every check, then the diff of every file the write would touch; nothing
    /// written.
    pub dry_run: bool,
    pub git: bool,
    pub expected_sha256: Option<String>,
    pub wait: Duration,
    /// `--drop-task N`: tasks allowed to leave state.json with their evidence.
    pub drop: BTreeSet<u64>,
    /// Who writes (`--agent`, `--model`): recorded in `updated_by` when state.json changes.
    pub agent: Option<String>,
    pub model: Option<String>,
}

/// What `dwp reconcile` found and did.
#[derive(Debug, Clone, Serialize)]
pub struct ReconcileReport {
    pub plan: String,
    pub in_sync: bool,
    pub desync: Vec<Desync>,
    /// What still disagrees after regeneration: the markdown's own problems (a stale
    /// `Plan Status` line, an odd marker), which only an edit of README.md fixes.
    pub remaining: Vec<Desync>,
    pub changes: Vec<Change>,
    pub written: bool,
    /// `--write --dry-run`: nothing was written; `diff` shows what would have been.
    pub dry_run: bool,
    pub old_sha256: String,
    /// sha256 of state.json on disk after the command (the old one unless it wrote).
    pub new_sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Where the receipt of a published plan whose state changed was moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_receipt: Option<String>,
    /// The plan still completed once its receipt moved aside: the command that publishes it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub republish: Option<String>,
    /// README path, for findings and messages.
    #[serde(skip)]
    pub readme: String,
}

/// Check (and with `write`, regenerate) the plan at `target`.
pub fn reconcile(target: &Path, request: &ReconcileRequest) -> Result<ReconcileReport> {
    crate::steps::writer::check_signature(request.agent.as_ref(), request.model.as_ref())?;
    if request.write {
        crate::steps::writer::under_lock(target, request.wait, |plan| {
            crate::plan::refuse_while_finalizing(plan.dir())?;
            reconcile_plan(plan, request)
        })
    } else {
        reconcile_plan(&LoadedPlan::of_target(target), request)
    }
}

/// [`reconcile`] of the plan as loaded (under its lock, to write).
fn reconcile_plan(plan: &LoadedPlan, request: &ReconcileRequest) -> Result<ReconcileReport> {
    let (plan_dir, state_path) = (plan.dir(), &plan.paths.state);
    // Invariant findings are what regeneration repairs; the schema must hold.
    let loaded: &Loaded<State> = crate::steps::writer::load_state_for_write(plan, false)?;
    if let Some(expected) = &request.expected_sha256
        && *expected != loaded.sha256
    {
        return Err(Error::SnapshotMoved {
            path: state_path.clone(),
            expected: expected.clone(),
            actual: loaded.sha256.clone(),
        });
    }
    let md = plan.markdown().map_err(|failure| {
        failure
            .clone_kind()
            .into_error("read", &plan_dir.join("README.md"))
    })?;
    md.require_readable()?;
    check_drops(md, &loaded.doc, &request.drop, state_path)?;
    let desync = compare(md, &loaded.doc);
    let now = clock::now_rfc3339();
    let rules = Regeneration {
        commits: if request.git {
            git_commits(plan_dir, &loaded.doc.plan)?
        } else {
            BTreeMap::new()
        },
        drop: request.drop.clone(),
        allow_completion: false,
    };
    // The check reports every disagreement even where no state can be derived (an index with a
    // gap, every box checked): only --write and --diff need the regenerated state.
    let regenerated = if request.write || request.diff {
        match regenerate(md, &loaded.doc, &now, &rules) {
            Ok(result) => Some(result),
            Err(e) if request.write => return Err(e),
            Err(_) => None,
        }
    } else {
        None
    };
    let (mut next, changes) = regenerated.unwrap_or_else(|| (loaded.doc.clone(), Vec::new()));
    if next != loaded.doc {
        next.sign(request.agent.as_ref(), request.model.as_ref());
    }
    let bytes = if next == loaded.doc {
        loaded.bytes.clone()
    } else {
        store::json_file_bytes(&next)
    };
    let mut diff = request
        .diff
        .then(|| crate::diff::unified_diff(&loaded.bytes, &bytes, &loaded.file))
        .filter(|d| !d.is_empty());
    let mut written = false;
    let (mut superseded, mut republish) = (None, None);
    if request.write && bytes != loaded.bytes {
        crate::steps::writer::refuse_clock_behind(&loaded.doc, &loaded.file, &now)?;
        crate::steps::writer::check_before_write(state_path, &bytes, "the regenerated state")?;
        // Two files, one intent record: a kill between them leaves the record, and the next
        // writer completes it, so the reconciliation is never without its PROGRESS.md entry.
        let mut write = Edits::new(plan_dir, "dwp reconcile --write");
        write.write_known(state_path, Some(loaded.sha256.clone()), bytes.clone());
        write.append(
            &plan_dir.join("PROGRESS.md"),
            &progress_entry(&now, &changes, &desync),
        );
        // A published plan whose state changes is no longer what its receipt describes.
        if crate::steps::publication::is_published(plan, &loaded.doc) {
            superseded = crate::steps::publication::supersede_receipt(&mut write, plan)?;
            republish = (superseded.is_some()
                && next.status == crate::plan::model::PlanStatus::Completed)
                .then(|| crate::steps::publication::republish_hint(plan));
        }
        match commit_or_preview(write, plan, request.dry_run)? {
            Some(preview) => diff = Some(preview),
            None => written = true,
        }
    }
    let remaining = if request.write {
        compare(md, &next)
    } else {
        Vec::new()
    };
    let on_disk = if written { &bytes } else { &loaded.bytes };
    Ok(ReconcileReport {
        plan: loaded.doc.plan.clone(),
        in_sync: desync.is_empty(),
        desync,
        remaining,
        changes: if bytes != loaded.bytes {
            changes
        } else {
            Vec::new()
        },
        written,
        dry_run: request.dry_run,
        old_sha256: loaded.sha256.clone(),
        new_sha256: store::sha256_hex(on_disk),
        diff,
        superseded_receipt: superseded,
        republish,
        readme: md.readme_path.display().to_string(),
    })
}

/// `--drop-task N` names a task of state.json that the README index no longer lists.
fn check_drops(
    md: &PlanMarkdown,
    state: &State,
    drop: &BTreeSet<u64>,
    state_path: &Path,
) -> Result<()> {
    for &id in drop {
        if state.task(id).is_none() {
            return Err(Error::Usage(format!(
                "--drop-task {id}: {} has no task {id}",
                state_path.display()
            )));
        }
        if md.readme.index.iter().any(|e| e.id == id) {
            return Err(Error::Usage(format!(
                "--drop-task {id}: task {id} is still in the README index, so it stays in state.json"
            )));
        }
    }
    Ok(())
}

/// One dated entry in PROGRESS.md listing what was reconciled and in which direction.
fn progress_entry(now: &str, changes: &[Change], desync: &[Desync]) -> String {
    let mut entry = format!(
        "\n### Reconciliation — {now}\n\nstate.json regenerated from the markdown (the markdown wins):\n"
    );
    for change in changes {
        entry.push_str(&format!(
            "- task {}: {} — {}\n",
            change.task, change.direction, change.what
        ));
    }
    for d in desync.iter().filter(|d| d.task.is_none()) {
        entry.push_str(&format!("- {}: {}\n", d.direction, d.message));
    }
    entry.trim_end().to_owned()
}

/// What `dwp reconcile` found and did on a record plan (DWP v6/v7), whose `state.json` is the
/// journal's projection: regenerated from the journal, never the reverse.
#[derive(Debug, Clone, Serialize)]
pub struct RecordReconcileReport {
    pub plan: String,
    /// `state.json` holds the projection of the journal (after the command).
    pub in_sync: bool,
    pub written: bool,
    /// The mends of the live journal the writer made on opening it (`--write` only).
    pub repairs: Vec<crate::steps::record_writer::Repair>,
    /// What the live journal needs mended before its projection is final (without `--write`):
    /// a torn tail, or a final event without its newline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_mend: Option<String>,
    /// sha256 of state.json before the command (empty: there was none).
    pub old_sha256: String,
    /// sha256 of state.json on disk after the command.
    pub new_sha256: String,
}

/// [`reconcile`] of a record plan: compare `state.json` with the journal's projection, and with
/// `write`, mend the journal as its writer does and write the projection.
pub fn reconcile_record(
    plan_dir: &Path,
    request: &ReconcileRequest,
) -> Result<RecordReconcileReport> {
    refuse_markdown_flags(plan_dir, request)?;
    if !request.write {
        let plan = crate::plan::record::RecordPlan::load(plan_dir);
        let (snapshot, derived) = snapshot_and_derived(&plan)?;
        check_expected(plan_dir, request, &snapshot)?;
        let sha = snapshot
            .as_deref()
            .map(store::sha256_hex)
            .unwrap_or_default();
        let to_mend = live_journal_to_mend(&derived.end);
        let projected = derived.projection.bytes();
        return Ok(RecordReconcileReport {
            plan: plan_dir.display().to_string(),
            in_sync: to_mend.is_none() && snapshot.as_deref() == Some(projected),
            written: false,
            repairs: Vec::new(),
            to_mend,
            old_sha256: sha.clone(),
            new_sha256: sha,
        });
    }
    let writer =
        crate::steps::record_writer::RecordWriter::open_checked(plan_dir, request.wait, |plan| {
            check_expected(plan_dir, request, &snapshot_of(plan)?)
        })?;
    let repairs = writer.repairs.clone();
    let projected = writer.finish()?;
    Ok(RecordReconcileReport {
        plan: plan_dir.display().to_string(),
        in_sync: true,
        written: projected.written,
        repairs,
        to_mend: None,
        old_sha256: projected.old_sha256,
        new_sha256: projected.new_sha256,
    })
}

/// What the live journal's writer would mend on opening it (archived history is never mended).
fn live_journal_to_mend(end: &crate::rules::record::JournalEnd) -> Option<String> {
    match &end.live_tear {
        Some((offset, cause)) => Some(format!("a torn tail at byte {offset} ({cause})")),
        None => end
            .unframed
            .then(|| "a final event without its newline".to_owned()),
    }
}

/// The flags that judge a plan's markdown index against its state mean nothing where the
/// state derives from a journal.
fn refuse_markdown_flags(plan_dir: &Path, request: &ReconcileRequest) -> Result<()> {
    let flag = [
        (request.git, "--git"),
        (!request.drop.is_empty(), "--drop-task"),
        (request.dry_run, "--dry-run"),
        (request.diff, "--diff"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag));
    match flag {
        Some(flag) => Err(Error::Usage(format!(
            "{flag} reconciles a plan's markdown index with its state; {} is a record plan, whose state.json is derived from its journal (`dwp reconcile --write` regenerates it)",
            plan_dir.display()
        ))),
        None => Ok(()),
    }
}

/// `state.json`'s bytes (`None`: absent) and what the journal derives, judged as the writer
/// that `--write` opens judges it (the markdown is not read: nothing here digests it).
fn snapshot_and_derived(
    plan: &crate::plan::record::RecordPlan,
) -> Result<(Option<Vec<u8>>, crate::rules::record::Derived)> {
    let snapshot = snapshot_of(plan)?;
    let judged = crate::rules::record::validate_to_write(plan);
    let Some(derived) = judged.derived else {
        return Err(Error::rejected(
            plan.dir.display().to_string(),
            "its live contract cannot be read, so nothing derives its state",
        )
        .with_hint(format!(
            "`dwp validate {}` lists every problem of the plan's records",
            crate::term::path_word(&plan.dir)
        )));
    };
    Ok((snapshot, derived))
}

/// `state.json`'s bytes (`None`: absent).
fn snapshot_of(plan: &crate::plan::record::RecordPlan) -> Result<Option<Vec<u8>>> {
    match &plan.snapshot {
        None => Ok(None),
        Some(Ok(bytes)) => Ok(Some(bytes.clone())),
        Some(Err(failure)) => {
            let path = plan.dir.join(crate::plan::record::SNAPSHOT);
            Err(failure.clone_kind().into_error("read", &path))
        }
    }
}

/// `--expected-sha256`: the state.json the caller saw, or nothing is written.
fn check_expected(
    plan_dir: &Path,
    request: &ReconcileRequest,
    snapshot: &Option<Vec<u8>>,
) -> Result<()> {
    let actual = snapshot
        .as_deref()
        .map(store::sha256_hex)
        .unwrap_or_default();
    match &request.expected_sha256 {
        Some(expected) if *expected != actual => Err(Error::SnapshotMoved {
            path: plan_dir.join(crate::plan::record::SNAPSHOT),
            expected: expected.clone(),
            actual,
        }),
        _ => Ok(()),
    }
}
