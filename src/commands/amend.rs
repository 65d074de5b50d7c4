//! `dwp amend`: one durable amendment record (the plan-state spec's "Evidence truth and amendments",
//! docs/CONFORMANCE.md, DWP070) appended to a task's log and mirrored in PROGRESS.md.
//!
//! The block is `### Amendment n — YYYY-MM-DD` and its labelled fields, numbered after the
//! task's last amendment and dated today (the clock): a task whose latest amendment is dated
//! after today is refused, and no earlier block is ever rewritten. Full plans append it to the
//! task file; Lite plans inside the task's `## Task N` section of README.md.
//!
//! `--invalidate CMD` also prefixes every gate record of CMD with `invalidated by refine
//! YYYY-MM-DD: ` and returns the task to pending, through the guarded updater
//! ([`crate::steps::updater::plan_update`], judging the task log with the block appended); a
//! completed task's README box is unchecked and the `Plan Status` count follows, so the
//! markdown (the source of truth) agrees with the state.
//!
//! One change, under the state lock: the markdown (task record, then README box), the
//! PROGRESS.md mirror, state.json, and a published plan's receipt moved aside, in one intent
//! record. Every check runs before the change is committed, so a refusal changes no byte.
//! Running the same `dwp amend` again adds nothing twice: a block identical to the task's
//! latest amendment of today is not appended again, nor its PROGRESS.md line, and evidence
//! already invalidated is never prefixed twice.
//!
//! On a record plan (DWP v6/v7) it amends the live contract instead: a new revision of it,
//! staged, recorded by an `amendment` event and its approval, then made live
//! ([`crate::steps::record_amend`]).

use crate::clock;
use crate::error::{Error, Result};
use crate::plan::LoadedPlan;
use crate::plan::markdown::{self, TaskRecord};
use crate::plan::model::{State, Task, TaskStatus};
use crate::plan::records::{TaskSource, read_task_source};
use crate::steps::commit::{Change, commit_or_preview};
use crate::steps::publication;
use crate::steps::updater::{self, UpdateRequest};
use crate::store;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

pub use crate::steps::record_amend::{RecordAmendReport, RecordAmendRequest, amend_record};

/// The longest free-text field dwp writes into an amendment block.
const MAX_FIELD_CHARS: usize = 2000;

/// What the amendment does to the criterion (the plan-state spec's evidence states that need one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    RevisedCriterion,
    DeferredRequirement,
    UnexecutedScenario,
    FailedGate,
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::RevisedCriterion => "revised criterion",
            Disposition::DeferredRequirement => "deferred requirement",
            Disposition::UnexecutedScenario => "unexecuted scenario",
            Disposition::FailedGate => "failed gate",
        }
    }
}

impl std::str::FromStr for Disposition {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let all = [
            Disposition::RevisedCriterion,
            Disposition::DeferredRequirement,
            Disposition::UnexecutedScenario,
            Disposition::FailedGate,
        ];
        let wanted = text.trim().to_ascii_lowercase().replace(['-', '_'], " ");
        all.into_iter()
            .find(|d| d.as_str() == wanted)
            .ok_or_else(|| {
                format!("`{text}` is not one of: revised criterion, deferred requirement, unexecuted scenario, failed gate")
            })
    }
}

/// Who stands behind the amendment (the plan-state spec: "user, developer, or evidence").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Authority {
    User,
    Developer,
    Evidence,
}

impl Authority {
    pub fn as_str(self) -> &'static str {
        match self {
            Authority::User => "user",
            Authority::Developer => "developer",
            Authority::Evidence => "evidence",
        }
    }
}

impl std::str::FromStr for Authority {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        [Authority::User, Authority::Developer, Authority::Evidence]
            .into_iter()
            .find(|a| a.as_str() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| format!("`{text}` is not one of: user, developer, evidence"))
    }
}

/// What the caller asks for; every field maps to one flag of `dwp amend`.
#[derive(Debug, Clone)]
pub struct AmendRequest {
    pub task: u64,
    pub original: String,
    pub observed: String,
    pub disposition: Disposition,
    pub revised: Option<String>,
    pub reason: String,
    pub authority: Authority,
    /// `--affected IDS`, as given (`2,3` or `2 3`).
    pub affected: String,
    pub destination: Option<u64>,
    pub invalidate: Vec<String>,
    pub preserve: Vec<String>,
    pub expected_sha256: Option<String>,
    pub wait: Duration,
    /// Check everything and show the writes as a diff, writing nothing.
    pub dry_run: bool,
    /// Who writes (`--agent`, `--model`): recorded in `updated_by` when the state changes.
    pub agent: Option<String>,
    pub model: Option<String>,
}

/// What an amendment did.
#[derive(Debug, Clone, Serialize)]
pub struct AmendOutcome {
    pub plan: String,
    pub task: u64,
    pub number: u64,
    pub date: String,
    pub disposition: Disposition,
    pub authority: Authority,
    /// The file that holds the block (the task file, or README.md for Lite).
    pub record: String,
    /// False when the same block was already the task's latest (a rerun after a crash).
    pub appended: bool,
    pub invalidated: Vec<String>,
    /// The task's status once the amendment is recorded.
    pub status: TaskStatus,
    pub state_changed: bool,
    pub sha256: String,
    /// Where the receipt of a published plan the amendment changed was moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_receipt: Option<String>,
    /// A plan still completed once its receipt moved aside: the command that publishes it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub republish: Option<String>,
    /// `--dry-run`: nothing was written; `diff` is what would have been.
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// Append one amendment to the plan at `target`.
pub fn amend(target: &Path, request: &AmendRequest) -> Result<AmendOutcome> {
    check_input(request)?;
    crate::steps::writer::under_lock(target, request.wait, |plan| amend_under_lock(plan, request))
}

fn amend_under_lock(plan: &mut LoadedPlan, request: &AmendRequest) -> Result<AmendOutcome> {
    crate::plan::refuse_while_finalizing(plan.dir())?;
    let loaded = crate::steps::writer::load_state_for_write(plan, true)?;
    crate::steps::writer::check_snapshot(loaded, request.expected_sha256.as_ref())?;
    let (state, old_sha256) = (loaded.doc.clone(), loaded.sha256.clone());
    let task = check_tasks(&state, request)?.clone();
    let today = today();
    let source = read_task_source(plan, &task)?;
    check_unexecuted_preserve(&task, request)?;
    let (number, replay) = numbering(&source, request, &today)?;
    let block = Block::new(request, number, &today);

    let state_request = invalidation(request, &task, number);
    let reopens = task.status == TaskStatus::Completed && state_request.is_some();
    // The record, the README box, PROGRESS.md and state.json change together: one change, its
    // state part judged with the amendment already appended to the task's log.
    let mut change = Change::new(plan.dir(), "dwp amend");
    markdown_steps(
        &mut change,
        plan,
        &source,
        &block,
        replay,
        reopens.then_some(task.id),
    )?;
    progress_step(&mut change, plan, &state.plan, &task, request, &block)?;
    let planned = match state_request {
        Some(update) => {
            updater::check_request(&update)?;
            let now = clock::now_rfc3339();
            Some(updater::plan_update(plan, &update, &now)?)
        }
        None => None,
    };
    if let Some(planned) = &planned {
        change.extend(planned.change.clone());
    }
    // A published plan the amendment changes is no longer what its receipt describes.
    let superseded = if publication::is_published(plan, &state) {
        publication::supersede_receipt(&mut change, plan)?
    } else {
        None
    };
    let diff = commit_or_preview(change, plan, request.dry_run)?;
    let republish = (superseded.is_some() && !reopens).then(|| publication::republish_hint(plan));
    let (status, state_changed, sha256) = match planned {
        Some(done) => (
            done.outcome.status,
            done.outcome.changed,
            done.outcome.new_sha256,
        ),
        None => (task.status, false, old_sha256),
    };
    Ok(AmendOutcome {
        plan: state.plan.clone(),
        task: task.id,
        number,
        date: today,
        disposition: request.disposition,
        authority: request.authority,
        record: source.path.display().to_string(),
        appended: !replay,
        invalidated: request.invalidate.clone(),
        status,
        state_changed,
        sha256,
        superseded_receipt: superseded,
        republish,
        dry_run: request.dry_run,
        diff,
    })
}

/// Today's date (UTC) by the one clock.
fn today() -> String {
    clock::now().format("%Y-%m-%d").to_string()
}

// ---------------------------------------------------------------------------------------------
// Checks, all before the first write.

fn check_input(request: &AmendRequest) -> Result<()> {
    crate::steps::writer::check_signature(request.agent.as_ref(), request.model.as_ref())?;
    let mut texts = vec![
        ("--original", &request.original),
        ("--observed", &request.observed),
        ("--reason", &request.reason),
    ];
    if let Some(revised) = &request.revised {
        texts.push(("--revised", revised));
    }
    for (flag, text) in texts {
        check_text(flag, text)?;
    }
    for (flag, commands) in [
        ("--invalidate", &request.invalidate),
        ("--preserve", &request.preserve),
    ] {
        for command in commands {
            check_text(flag, command)?;
            if command.contains('`') {
                return Err(Error::rejected(
                    flag,
                    format!("`{command}` holds a backtick: the block quotes commands in backticks"),
                ));
            }
        }
    }
    if let Some(both) = request
        .invalidate
        .iter()
        .find(|c| request.preserve.contains(c))
    {
        return Err(Error::rejected(
            "--preserve",
            format!("`{both}` is both invalidated and preserved"),
        ));
    }
    check_disposition_flags(request)?;
    affected_ids(&request.affected)?;
    Ok(())
}

/// Non-empty, one line (a second line would leave the labelled field), not overlong.
fn check_text(flag: &str, text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(Error::rejected(
            flag,
            "is empty: every amendment field says something",
        ));
    }
    if text.contains(['\n', '\r']) {
        return Err(Error::rejected(
            flag,
            "spans several lines: each field of the amendment block is one line",
        ));
    }
    Error::check_length(flag, text, MAX_FIELD_CHARS)
}

/// `--revised` goes with a revised criterion; `--destination` with (and only with) a deferred
/// requirement.
fn check_disposition_flags(request: &AmendRequest) -> Result<()> {
    let disposition = request.disposition;
    if disposition == Disposition::RevisedCriterion && request.revised.is_none() {
        return Err(Error::rejected(
            "--revised",
            "a revised criterion needs the revised criterion's text",
        )
        .with_hint("pass --revised TEXT"));
    }
    match (disposition, request.destination) {
        (Disposition::DeferredRequirement, None) => Err(Error::rejected(
            "--destination",
            "a deferred requirement moves to a named destination task",
        )
        .with_hint("pass --destination N, the task that takes the requirement over")),
        (Disposition::DeferredRequirement, Some(_)) | (_, None) => Ok(()),
        (other, Some(_)) => Err(Error::Usage(format!(
            "--destination goes with --disposition \"deferred requirement\", not \"{}\"",
            other.as_str()
        ))),
    }
}

/// `--affected 2,3` (commas and/or spaces): task ids, at least one.
pub fn affected_ids(text: &str) -> Result<Vec<u64>> {
    let ids: Vec<u64> = text
        .split([',', ' '])
        .filter(|part| !part.trim().is_empty())
        .map(|part| {
            part.trim()
                .parse::<u64>()
                .ok()
                .filter(|id| *id > 0)
                .ok_or_else(|| {
                    Error::Usage(format!("--affected `{text}`: `{part}` is not a task id"))
                })
        })
        .collect::<Result<_>>()?;
    if ids.is_empty() {
        return Err(Error::Usage(format!(
            "--affected `{text}` names no task (give ids: --affected 2,3)"
        )));
    }
    Ok(ids)
}

/// The task, the affected tasks and the destination exist; the destination is another task.
fn check_tasks<'a>(state: &'a State, request: &AmendRequest) -> Result<&'a Task> {
    let exists = |flag: &str, id: u64| {
        state.task(id).ok_or_else(|| {
            Error::rejected(
                flag,
                format!(
                    "there is no task {id}; the plan has tasks 1..{}",
                    state.tasks.len()
                ),
            )
        })
    };
    let task = exists("--task", request.task)?;
    for id in affected_ids(&request.affected)? {
        exists("--affected", id)?;
    }
    if let Some(destination) = request.destination {
        exists("--destination", destination)?;
        if destination == request.task {
            return Err(Error::rejected(
                "--destination",
                format!(
                    "task {destination} is the task itself: a deferred requirement moves to another task"
                ),
            ));
        }
    }
    Ok(task)
}

/// The number after the task's last amendment, refusing a last amendment dated after today
/// (appending today's would backdate it) or not dated as a date at all.
fn next_number(source: &TaskSource, today: &str) -> Result<u64> {
    let amendments = &source.record.amendments;
    let Some(last) = amendments.last() else {
        return Ok(1);
    };
    let place = format!("{}:{}", source.path.display(), last.line);
    let label = last.number.map_or("the last amendment".to_owned(), |n| {
        format!("amendment {n}")
    });
    let Ok(date) = chrono::NaiveDate::parse_from_str(&last.date, "%Y-%m-%d") else {
        return Err(Error::rejected(
            place,
            format!("{label} of task {} is dated `{}`, not YYYY-MM-DD: an amendment cannot be dated after it", source.record.id, last.date),
        )
        .with_hint("earlier amendments are never rewritten by dwp: fix the date by hand, with the reviewer's agreement"));
    };
    if date.format("%Y-%m-%d").to_string().as_str() > today {
        return Err(Error::rejected(
            place,
            format!(
                "{label} of task {} is dated {date}, after today ({today}): a new amendment would be backdated",
                source.record.id
            ),
        )
        .with_hint("check the clock: amendments are appended in date order, never backdated"));
    }
    Ok(last.number.unwrap_or(amendments.len() as u64) + 1)
}

/// The block's number, and whether the task's latest amendment already is this very block
/// (a rerun after a crash, which appends nothing).
fn numbering(source: &TaskSource, request: &AmendRequest, today: &str) -> Result<(u64, bool)> {
    let next = next_number(source, today)?;
    let replay = next > 1 && Block::new(request, next - 1, today).is_latest_of(&source.record);
    Ok(if replay {
        (next - 1, true)
    } else {
        (next, false)
    })
}

/// An unexecuted scenario contributes no passing evidence: preserving a passing record of the
/// command would contradict the amendment (`dwp verify` DWP075).
fn check_unexecuted_preserve(task: &Task, request: &AmendRequest) -> Result<()> {
    if request.disposition != Disposition::UnexecutedScenario {
        return Ok(());
    }
    let passing = crate::rules::evidence::standing_passes(task.gates())
        .find(|g| request.preserve.contains(&g.command));
    match passing {
        Some(gate) => Err(Error::rejected(
            "--preserve",
            format!(
                "`{}` passes, but an unexecuted scenario is no passing evidence",
                gate.command
            ),
        )
        .with_hint(format!("--invalidate \"{}\" instead", gate.command))),
        None => Ok(()),
    }
}

/// The guarded update `--invalidate` makes: the records prefixed, the task back to pending.
fn invalidation(request: &AmendRequest, task: &Task, number: u64) -> Option<UpdateRequest> {
    if request.invalidate.is_empty() {
        return None;
    }
    let closed = matches!(task.status, TaskStatus::Completed | TaskStatus::Skipped);
    let commands = quote_list(&request.invalidate);
    Some(UpdateRequest {
        task: task.id,
        status: Some(TaskStatus::Pending),
        agent: request.agent.clone(),
        model: request.model.clone(),
        reopen_reason: closed.then(|| {
            crate::steps::updater::truncate(&format!("amendment {number}: {}", request.reason), 400)
        }),
        checkpoint_note: Some(crate::steps::updater::truncate(
            &format!(
                "amendment {number} invalidated {commands}: task {} back to pending",
                task.id
            ),
            500,
        )),
        invalidate: request.invalidate.clone(),
        ..UpdateRequest::default()
    })
}

fn quote_list(commands: &[String]) -> String {
    if commands.is_empty() {
        return "none".to_owned();
    }
    commands
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// The block and the writes.

/// One amendment block: its heading and its labelled fields in the spec's order.
struct Block {
    number: u64,
    date: String,
    fields: Vec<(&'static str, String)>,
}

impl Block {
    fn new(request: &AmendRequest, number: u64, date: &str) -> Block {
        let mut fields = vec![
            ("Original criterion", request.original.trim().to_owned()),
            ("Observed", request.observed.trim().to_owned()),
            ("Disposition", request.disposition.as_str().to_owned()),
        ];
        if let Some(revised) = &request.revised {
            fields.push(("Revised criterion", revised.trim().to_owned()));
        }
        if let Some(destination) = request.destination {
            fields.push(("Destination", format!("Task {destination}")));
        }
        let affected = affected_ids(&request.affected).unwrap_or_default();
        fields.extend([
            ("Reason", request.reason.trim().to_owned()),
            ("Authority", request.authority.as_str().to_owned()),
            (
                "Affected tasks",
                affected
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ("Evidence invalidated", quote_list(&request.invalidate)),
            ("Evidence preserved", quote_list(&request.preserve)),
        ]);
        Block {
            number,
            date: date.to_owned(),
            fields,
        }
    }

    fn heading(&self) -> String {
        format!("### Amendment {} — {}", self.number, self.date)
    }

    fn text(&self) -> String {
        let mut text = format!("{}\n\n", self.heading());
        for (label, value) in &self.fields {
            text.push_str(&format!("- {label}: {value}\n"));
        }
        text
    }

    /// The record's latest amendment has this block's number, date and fields.
    fn is_latest_of(&self, record: &TaskRecord) -> bool {
        let Some(last) = record.amendments.last() else {
            return false;
        };
        last.number == Some(self.number)
            && last.date == self.date
            && last.fields.len() == self.fields.len()
            && self
                .fields
                .iter()
                .all(|(label, value)| last.field(label).is_some_and(|f| f.value == *value))
    }
}

/// The markdown writes: the block into the task's record (unless a rerun), and, when the task
/// leaves completed, its README box unchecked with the Plan Status count following.
fn markdown_steps(
    change: &mut Change,
    plan: &mut LoadedPlan,
    source: &TaskSource,
    block: &Block,
    replay: bool,
    uncheck: Option<u64>,
) -> Result<()> {
    let readme_path = plan.dir().join("README.md");
    let mut record_text = source.text.clone();
    if source.inline
        && let Some(id) = uncheck
    {
        record_text = uncheck_box(&record_text, id);
    }
    if !replay {
        record_text = append_block(&record_text, block, source)?;
    }
    if record_text != source.text {
        let bytes = record_text.into_bytes();
        change.write(&source.path, Some(source.text.as_bytes()), bytes.clone());
        plan.set_file(&source.path, bytes);
    }
    if !source.inline
        && let Some(id) = uncheck
    {
        let readme = plan
            .readme_text()
            .map_err(|failure| failure.clone_kind().into_error("read", &readme_path))?
            .to_owned();
        let edited = uncheck_box(&readme, id);
        if edited != readme {
            let bytes = edited.into_bytes();
            change.write(&readme_path, Some(readme.as_bytes()), bytes.clone());
            plan.set_file(&readme_path, bytes);
        }
    }
    Ok(())
}

/// The text with the block appended at the end of the task's record (Full: the file; Lite:
/// the task's section, before the next `## ` heading), in the file's own line endings.
fn append_block(text: &str, block: &Block, source: &TaskSource) -> Result<String> {
    let end = if source.inline {
        markdown::inline_task_span(text, source.record.id)
            .map(|span| span.end)
            .map_err(|why| {
                Error::rejected(source.path.display().to_string(), why).with_hint(
                    "make the task's `## Task N` section plain markdown (docs/plan-markdown.md), then run the same `dwp amend` again",
                )
            })?
    } else {
        text.len()
    };
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let before = text[..end].trim_end_matches(['\n', '\r']);
    let after = &text[end..];
    let mut out = String::with_capacity(text.len() + 1024);
    out.push_str(before);
    out.push_str(newline);
    out.push_str(newline);
    out.push_str(&block.text().replace('\n', newline));
    if !after.is_empty() {
        out.push_str(newline);
        out.push_str(after);
    }
    Ok(out)
}

/// Task `id`'s README box unchecked, and `Plan Status: X/N` recounted from the boxes; a box
/// dwp cannot read is left as it is (the amendment is still recorded).
fn uncheck_box(readme: &str, id: u64) -> String {
    markdown::boxes::set_box(readme, id, false).unwrap_or_else(|_| readme.to_owned())
}

/// The PROGRESS.md mirror: one line naming plan, task, number, date, disposition and
/// authority; not written twice for the same amendment.
fn progress_step(
    change: &mut Change,
    plan: &LoadedPlan,
    plan_name: &str,
    task: &Task,
    request: &AmendRequest,
    block: &Block,
) -> Result<()> {
    let path = plan.dir().join("PROGRESS.md");
    let key = format!(
        "- {}: amendment {} of task {} in {plan_name}",
        block.date, block.number, task.id
    );
    let existing = match plan.read_text(&path) {
        Ok(text) => text,
        Err(store::ReadFailure::Missing) => String::new(),
        Err(failure) => return Err(failure.into_error("read", &path)),
    };
    if existing.lines().any(|line| line.starts_with(&key)) {
        return Ok(());
    }
    let mut line = format!(
        "{key} ({}): {}, authority {}; reason: {}",
        task.title,
        request.disposition.as_str(),
        request.authority.as_str(),
        request.reason.trim()
    );
    if let Some(destination) = request.destination {
        line.push_str(&format!("; moved to task {destination}"));
    }
    if !request.invalidate.is_empty() {
        line.push_str(&format!(
            "; evidence invalidated: {} (task {} back to pending)",
            quote_list(&request.invalidate),
            task.id
        ));
    }
    change.append(&path, &line);
    Ok(())
}
