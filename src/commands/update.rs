//! `dwp update`: one guarded update of one task (`crate::steps::updater`), planned against the
//! plan loaded under its lock (taken once the request's flags are checked and the inputs are
//! known to be regular files) and written as one change.
//!
//! The markdown wins, so a completion puts it first: with `--tick` the task's README box is
//! ticked (and `Plan Status: X/N` recounted) in the same change as the state, through one
//! intent record; without it, a completion whose box is still unchecked succeeds but says so
//! (`"markdown": "box unchecked"`), since the plan is not conformant until the box is ticked.

use crate::error::Result;
use crate::rules::record::{mint, transitions};
use crate::steps::gate_log::{self, ObservedRun, WrittenLog};
use crate::steps::record_writer::RecordWriter;
pub use crate::steps::updater::{BoxNote, UpdateOutcome, UpdateRequest};
use crate::steps::updater::{check_request, commit_update, plan_update};
use crate::store;
use std::path::Path;

/// Run one guarded update of the plan at `target`. A `--commit` that is not a hash (`HEAD`, a
/// branch, a tag) is resolved by git in the plan's repository first; one git cannot resolve is
/// refused as it is.
pub fn update(target: &Path, request: &UpdateRequest) -> Result<UpdateOutcome> {
    update_observing(target, request, &[]).map(|(outcome, _)| outcome)
}

/// [`update`], recording besides `request.gates` one observed gate per run of `observed`
/// (`--gates-from`, runs `dwp loop prove` kept): each run's log kept in the plan's
/// `analysis_results/gates/` and its gate appended, in the same change, as `dwp run` records
/// its own. Returns the logs kept, in order (their names and hashes as they would be, on a dry
/// run, which writes none).
pub fn update_observing(
    target: &Path,
    request: &UpdateRequest,
    observed: &[ObservedRun],
) -> Result<(UpdateOutcome, Vec<WrittenLog>)> {
    refuse_observed_mark(target, request)?;
    let resolved = resolve_commit(target, request);
    let request = resolved.as_ref().unwrap_or(request);
    check_request(request)?;
    crate::steps::writer::under_lock(target, request.wait, |plan| {
        let now = crate::clock::now_rfc3339();
        let mut full = request.clone();
        let mut logs = Vec::with_capacity(observed.len());
        let mut kept = crate::steps::commit::Change::new(plan.dir(), "dwp update");
        for run in observed {
            let recorded = gate_log::record(plan, &mut kept, request.task, run);
            full.gates.push(recorded.gate);
            logs.push(recorded.log);
        }
        let mut planned = plan_update(plan, &full, &now)?;
        if request.dry_run {
            return Ok((planned.outcome, logs));
        }
        planned.change.prepend(kept);
        Ok((commit_update(planned)?, logs))
    })
}

/// Only dwp writes the `(observed by dwp: ...)` mark, after running the command itself (`dwp
/// run`, `--gates-from`): a `--gate` or `--gate-json` carrying it is the agent's word dressed
/// as dwp's, refused before anything is locked or written.
fn refuse_observed_mark(target: &Path, request: &UpdateRequest) -> Result<()> {
    let marked = request.gates.iter().find(|gate| {
        gate.evidence
            .as_deref()
            .is_some_and(|e| e.contains(crate::rules::observed::MARK.trim_start()))
    });
    let Some(gate) = marked else {
        return Ok(());
    };
    let (plan_dir, _) = crate::plan::resolve_target(target);
    Err(crate::error::Error::rejected(
        format!("--gate `{}`", gate.command),
        "its evidence carries `(observed by dwp: ...)`, which only dwp writes, after running the command itself",
    )
    .with_hint(format!(
        "let dwp run it and record what it observed: `dwp run {} --task {} -- {}`; or record the result you saw in your own words, without the mark",
        crate::term::shell_word(&plan_dir.display().to_string()),
        request.task,
        gate.command
    )))
}

/// The request with its `commit` resolved to a full hash, when it names a revision, not a hash.
fn resolve_commit(target: &Path, request: &UpdateRequest) -> Option<UpdateRequest> {
    let rev = request.commit.as_deref()?;
    let is_hash = (7..=40).contains(&rev.len())
        && rev.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if is_hash {
        return None;
    }
    let (plan_dir, _) = crate::plan::resolve_target(target);
    let hash = store::git::resolve_commit(&plan_dir, rev)?;
    Some(UpdateRequest {
        commit: Some(hash),
        ..request.clone()
    })
}

/// What `dwp update` asks of a record plan's task: a start, or a completion, which is derived
/// from the journal, never declared (rule 23).
#[derive(Debug, Clone)]
pub struct RecordUpdateRequest {
    pub task: String,
    pub transition: RecordTransition,
    /// Who starts the task (`--agent`; `caller` when not given), as the public ledger names an
    /// agent it does not know.
    pub agent: Option<String>,
    pub wait: std::time::Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordTransition {
    Start,
    Complete,
}

/// What `dwp update` did to a record plan's task.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RecordUpdateReport {
    pub plan: String,
    pub task: String,
    pub transition: RecordTransition,
    /// The `task_start` written or found (a start), none for a completion (nothing is written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    /// A start already recorded with this fingerprint: nothing was written.
    pub unchanged: bool,
    /// The work tree the start recorded: `HEAD` (or `none`) and whether it was dirty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<serde_json::Value>,
    pub contract_id: String,
    /// The mends of the live journal the writer made on opening it.
    pub repairs: Vec<crate::steps::record_writer::Repair>,
}

/// Start or complete the task `request.task` of the record plan at `plan_dir`. A start without
/// an approval of the live contract, and a completion the journal does not derive, are
/// refused, each after its `refusal` event is recorded (as the public ledger records them).
pub fn update_record(plan_dir: &Path, request: &RecordUpdateRequest) -> Result<RecordUpdateReport> {
    let mut writer = RecordWriter::open(plan_dir, request.wait)?;
    let (_, derived) = writer.plan();
    let Some(task) = derived
        .projection
        .tasks
        .iter()
        .find(|t| t.id_str() == request.task)
    else {
        return Err(unknown_task(plan_dir, &request.task, derived));
    };
    let task = task.clone();
    let mut report = RecordUpdateReport {
        plan: plan_dir.display().to_string(),
        task: request.task.clone(),
        transition: request.transition,
        seq: None,
        unchanged: false,
        fingerprint: None,
        contract_id: writer.contract_id().to_owned(),
        repairs: writer.repairs.clone(),
    };
    let refused = match request.transition {
        RecordTransition::Start => start(&mut writer, plan_dir, request, &mut report)?,
        RecordTransition::Complete => completion_refused(&writer, &task),
    };
    if let Some((refusal, error)) = refused {
        // Refused, as the public ledger refuses: the refusal is recorded, then reported.
        writer.append("refusal", refusal, mint::helper(), None)?;
        writer.finish()?;
        return Err(error);
    }
    writer.finish()?;
    Ok(report)
}

/// A refusal to record, and the error that reports it.
type Refused = Option<(serde_json::Map<String, serde_json::Value>, crate::Error)>;

/// Start the task: refused without an approval of the live contract or before its
/// prerequisites complete; else one `task_start`, unless the same start is there.
fn start(
    writer: &mut RecordWriter,
    plan_dir: &Path,
    request: &RecordUpdateRequest,
    report: &mut RecordUpdateReport,
) -> Result<Refused> {
    let (plan, derived) = writer.plan();
    let live_id = writer.contract_id().to_owned();
    let arena = bumpalo::Bump::new();
    let journal = plan.journal(&arena);
    if !transitions::approved(&journal.events, &live_id) {
        let error = unapproved(plan_dir, &request.task, &live_id);
        return Ok(Some((transitions::unapproved_start(&live_id), error)));
    }
    let tasks = &derived.projection.tasks;
    if let Some(refusal) = transitions::early_start(&request.task, &derived.graph, tasks) {
        let error = refused_start(plan_dir, &request.task, &refusal_reason(&refusal));
        return Ok(Some((refusal, error)));
    }
    let (revision, dirty) = store::git::start_fingerprint(plan_dir);
    let payload = transitions::start_payload(&request.task, &revision, &dirty);
    let actor = serde_json::json!({
        "kind": "agent",
        "identity": request.agent.as_deref().unwrap_or("caller"),
    });
    report.fingerprint = payload.get("fingerprint").cloned();
    report.seq = transitions::same_event(&journal.events, "task_start", &payload, &actor, &live_id);
    report.unchanged = report.seq.is_some();
    drop(journal);
    if report.seq.is_none() {
        let event = writer.append("task_start", payload, actor, None)?;
        report.seq = event.get("seq").and_then(serde_json::Value::as_i64);
    }
    Ok(None)
}

/// The completion the journal does not derive, as the public ledger's `complete` refuses it.
fn completion_refused(
    writer: &RecordWriter,
    task: &crate::rules::record::projection::TaskState,
) -> Refused {
    let (_, derived) = writer.plan();
    let refusal = transitions::completion_refused(derived, task)?;
    let plan_dir = &writer.plan_dir;
    let error = incomplete(plan_dir, task.id_str(), &refusal_reason(&refusal));
    Some((refusal, error))
}

fn refusal_reason(refusal: &serde_json::Map<String, serde_json::Value>) -> String {
    let reason = refusal.get("reason").and_then(serde_json::Value::as_str);
    reason.unwrap_or_default().to_owned()
}

fn refused_start(plan_dir: &Path, task: &str, reason: &str) -> crate::Error {
    crate::Error::rejected(
        plan_dir.display().to_string(),
        format!("{task} cannot start: {reason}; the refusal is recorded in the journal"),
    )
    .with_hint(format!(
        "`dwp next {}` lists the tasks ready now",
        crate::term::path_word(plan_dir)
    ))
}

fn unknown_task(
    plan_dir: &Path,
    task: &str,
    derived: &crate::rules::record::Derived,
) -> crate::Error {
    let known: Vec<&str> = derived
        .projection
        .tasks
        .iter()
        .map(|t| t.id_str())
        .collect();
    crate::Error::rejected(
        plan_dir.display().to_string(),
        format!(
            "the live contract has no task {task} (its tasks: {}); nothing was written",
            known.join(", ")
        ),
    )
    .with_hint(format!(
        "`dwp next {}` lists the tasks ready now",
        crate::term::path_word(plan_dir)
    ))
}

fn unapproved(plan_dir: &Path, task: &str, live_id: &str) -> crate::Error {
    let short: String = live_id.chars().take(12).collect();
    crate::Error::rejected(
        plan_dir.display().to_string(),
        format!("{task} cannot start: no approval event cites the live contract {short} (rule 19); the refusal is recorded in the journal"),
    )
    .with_hint(format!(
        "`dwp status {}` shows the approval the plan has",
        crate::term::path_word(plan_dir)
    ))
}

fn incomplete(plan_dir: &Path, task: &str, reason: &str) -> crate::Error {
    crate::Error::rejected(
        plan_dir.display().to_string(),
        format!("{task} is not complete: {reason} (completion is derived from the journal, rule 23); the refusal is recorded in the journal"),
    )
    .with_hint(format!(
        "`dwp status {}` shows each criterion's evidence and each invariant's latest evaluation",
        crate::term::path_word(plan_dir)
    ))
}
