//! `dwp update`: the guarded updater, the only way an agent changes `state.json`.
//!
//! One call is one compare-and-swap under the cooperative lock: lock, read, hash, compare with
//! `--expected-sha256`, validate the input, apply one transition, validate the result, write
//! durably, unlock. Every refusal happens before the write, so a refused call changes no byte.
//!
//! Transition rules (seed 003 "Guarded state updates", issue #3), each enforced in [`apply`]:
//! - the plan must be materialized (`ready`, no promotion) and approved; an absent `approval`
//!   means the README's Approval row, else pending, never approved;
//! - tasks start and complete in order; a `skipped` earlier task counts as done for ordering
//!   (it was removed from scope) but never completes the plan;
//! - completing needs at least one gate and a clean latest record for every command
//!   ([`crate::rules::evidence`]); a task must be started before it completes;
//! - while a blocker is active every other transition waits for `--resolve-blocker`, which only
//!   the blocked task can use, into in_progress or completed; an unrelated blocker is never
//!   replaced;
//! - a completed or skipped task moves only with `--reopen-reason`, recorded in `outcome.notes`;
//!   a completed one also needs an amendment dated today in its task log (`dwp amend`), since
//!   the spec records the amendment in the log first;
//! - `invalidate` (only `dwp amend --invalidate`) prefixes every record of a command with
//!   `invalidated by refine YYYY-MM-DD: ` (once) and returns the task to pending;
//! - skipping needs `--reopen-reason` too: it is a change of scope made through refine;
//! - the transition that completes the whole plan is publication: the result goes to
//!   [`crate::steps::publication::publish_locked`], which checks every artifact and writes the receipt.

use crate::clock;
use crate::error::{Error, Result};
use crate::plan::Loaded;
use crate::plan::model::{
    Approval, Blocker, Checkpoint, Field, Gate, Materialization, Outcome, State, TaskStatus,
};
use crate::rules::evidence;
use crate::store;
use std::path::Path;
use std::time::Duration;

/// What the caller asks for. Built by the CLI from flags; every field maps to one flag.
#[derive(Debug, Clone, Default)]
pub struct UpdateRequest {
    pub task: u64,
    pub status: Option<TaskStatus>,
    pub gates: Vec<Gate>,
    pub block_reason: Option<String>,
    pub block_needs: Option<String>,
    pub resolve_blocker: bool,
    pub reopen_reason: Option<String>,
    pub expected_sha256: Option<String>,
    pub worked: Option<String>,
    pub tried: Vec<String>,
    pub failed: Vec<String>,
    pub notes: Option<String>,
    pub commit: Option<String>,
    pub checkpoint_step: Option<String>,
    pub checkpoint_note: Option<String>,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub wait: Duration,
    pub dry_run: bool,
    /// Commands whose gate records an amendment invalidates (`dwp amend --invalidate`).
    pub invalidate: Vec<String>,
    /// With `status: completed`: tick the task's README box in the same write (`--tick`).
    pub tick: bool,
}

/// Where the reopen rule looks for the amendment dated today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmendmentCheck<'a> {
    /// In the task's log on disk (every real write).
    TaskLog,
    /// `dwp amend`'s dry run, under the lock, of the amendment dated `date` it appends before
    /// its real write (which then reads it from the log).
    Appending(&'a str),
}

/// What an update did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpdateOutcome {
    pub task: u64,
    pub status: TaskStatus,
    pub completed_count: u64,
    pub task_count: u64,
    pub plan_status: crate::plan::model::PlanStatus,
    pub changed: bool,
    pub dry_run: bool,
    pub old_sha256: String,
    pub new_sha256: String,
    /// What happened, in words (also the checkpoint note when no note was given).
    pub transition: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The receipt, when this update completed (published) the plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<String>,
    /// A dry run's new state bytes, for a caller that writes them with other files in one
    /// intent record (`dwp amend`).
    #[serde(skip)]
    pub planned: Option<Vec<u8>>,
    /// After a completion: the task's README box, when it says something the caller must know
    /// (the markdown wins, so a box left unchecked leaves the plan not conformant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<BoxNote>,
}

/// What the README's box of a task just completed says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum BoxNote {
    /// `--tick` ticked it in the same write.
    #[serde(rename = "box ticked")]
    Ticked,
    /// It is still unchecked: the state is ahead of the markdown until it is ticked.
    #[serde(rename = "box unchecked")]
    Unchecked,
}

/// One guarded update with the lock of `state_path` already held by the caller (`dwp amend`
/// writes the task log and the state under one lock): every check of `dwp update` and the same
/// durable write.
pub fn update_under_lock(
    plan_dir: &Path,
    state_path: &Path,
    request: &UpdateRequest,
    amendment: AmendmentCheck,
) -> Result<UpdateOutcome> {
    update_noting(plan_dir, state_path, request, amendment, true)
}

/// [`update_under_lock`] for a caller that ticks the task's box in the same write (`--tick`'s
/// dry run before it): the outcome carries no box note, and the README is not parsed for one.
pub fn update_under_lock_ticking(
    plan_dir: &Path,
    state_path: &Path,
    request: &UpdateRequest,
    amendment: AmendmentCheck,
) -> Result<UpdateOutcome> {
    update_noting(plan_dir, state_path, request, amendment, false)
}

/// The guarded update, with the README's box note (`note`) or without it.
fn update_noting(
    plan_dir: &Path,
    state_path: &Path,
    request: &UpdateRequest,
    amendment: AmendmentCheck,
    note: bool,
) -> Result<UpdateOutcome> {
    check_request(request)?;
    crate::plan::refuse_while_finalizing(plan_dir)?;
    // The input must validate; its invariants are checked with the rest of it below.
    let loaded = crate::steps::writer::load_state_for_write(plan_dir, state_path, false)?;
    let now = clock::now_rfc3339();
    let index = loaded.doc.tasks.iter().position(|t| t.id == request.task);
    let Checked { readme, clock } = check_input(plan_dir, &loaded, request, &now, note)?;
    let (input, mut next) = loaded.into_parts();
    let applying = crate::profile::stage("apply");
    // What the update may change, kept to tell whether it did: the document around the tasks
    // and the one task (apply touches no other; debug builds check that below).
    let before_task = index.map(|index| next.tasks[index].clone());
    let before_shell = next.clone_without_tasks();
    #[cfg(debug_assertions)]
    let untouched = next.tasks.clone();
    let context = Context {
        plan_dir,
        now: &now,
        file: &input.file,
        amendment,
    };
    let transition = apply(&mut next, request, &context)?;
    let index = index.expect("task exists: checked in apply");
    #[cfg(debug_assertions)]
    assert_only_task_changed(&untouched, &next.tasks, index);
    let changed =
        Some(&next.tasks[index]) != before_task.as_ref() || !next.same_shell(&before_shell);
    drop(applying);
    if changed {
        clock?;
        stamp(&mut next, request, &transition, &now);
        if next.derived_status() == crate::plan::model::PlanStatus::Completed {
            // Completing the last task is publication: finalize checks and writes it.
            return publish(plan_dir, state_path, &input, next, request, &transition);
        }
    }
    let task_status = next
        .task(request.task)
        .expect("task exists: checked in apply")
        .status;
    let written = write_update(plan_dir, state_path, request, &input, &next, changed)?;
    // A completion says when its README box is still unchecked, from the README already read.
    let completes =
        request.status == Some(TaskStatus::Completed) && task_status == TaskStatus::Completed;
    let markdown = if completes {
        readme.and_then(|text| box_note(&text, request.task))
    } else {
        None
    };
    let outcome = UpdateOutcome {
        task: request.task,
        status: task_status,
        completed_count: next.completed_count,
        task_count: next.task_count,
        plan_status: next.status,
        changed,
        dry_run: request.dry_run,
        old_sha256: input.sha256.clone(),
        new_sha256: written.sha256,
        transition: transition.describe(request.task),
        diff: written.diff,
        receipt: None,
        planned: written.planned,
        markdown,
    };
    crate::profile::time("free", || drop((input, next)));
    Ok(outcome)
}

/// What [`write_update`] wrote, or with `--dry-run` would write.
struct Written {
    sha256: String,
    diff: Option<String>,
    planned: Option<Vec<u8>>,
}

/// The second half of a guarded update: `next` serialized, checked again by the writer's safety
/// net, and written durably (with `--dry-run`, diffed instead).
fn write_update(
    plan_dir: &Path,
    state_path: &Path,
    request: &UpdateRequest,
    input: &Loaded<()>,
    next: &State,
    changed: bool,
) -> Result<Written> {
    let bytes = if changed {
        crate::profile::time("serialize", || store::json_file_bytes(next))
    } else {
        input.bytes.clone()
    };
    if changed {
        // The input validated in full; an update changes one task and the document around the
        // tasks, so those are what the safety net checks again (with every invariant).
        crate::steps::writer::check_changed_task(input, next, request.task, "the updated state")?;
    }
    let diff = request
        .dry_run
        .then(|| crate::diff::unified_diff(&input.bytes, &bytes, &input.file));
    // The write hashes the bytes it writes (during its fsync); only a dry run hashes here.
    let sha256 = match (changed, request.dry_run) {
        (false, _) => input.sha256.clone(),
        (true, true) => store::sha256_hex(&bytes),
        (true, false) => {
            crate::profile::time("durable write", || {
                store::write_atomic(state_path, plan_dir, &bytes)
            })?
            .sha256
        }
    };
    let planned = (changed && request.dry_run).then_some(bytes);
    Ok(Written {
        sha256,
        diff,
        planned,
    })
}

/// What the checks of an update's input found: the README's text when the caller wants its
/// box note, and whether the clock is behind a time the input records (refused only if the
/// update changes something).
struct Checked {
    readme: Option<String>,
    clock: Result<()>,
}

/// Every check of the input before the change, in the order its refusals take: invariants,
/// the caller's snapshot, the plan's preconditions; and the clock against the input's times.
/// The README's text is kept for the box note when `note` asks for it.
fn check_input(
    plan_dir: &Path,
    loaded: &Loaded<State>,
    request: &UpdateRequest,
    now: &str,
    note: bool,
) -> Result<Checked> {
    crate::steps::writer::refuse_broken_invariants(loaded)?;
    crate::steps::writer::check_snapshot(loaded, request.expected_sha256.as_ref())?;
    let readme = crate::profile::time("README", || check_preconditions(plan_dir, loaded))?;
    let readme = readme.filter(|_| note);
    let clock = crate::steps::writer::refuse_clock_behind(&loaded.doc, &loaded.file, now);
    Ok(Checked { readme, clock })
}

/// Debug builds hold the promise `changed` rests on: an update changes no task but its own.
#[cfg(debug_assertions)]
fn assert_only_task_changed(
    before: &[crate::plan::model::Task],
    after: &[crate::plan::model::Task],
    index: usize,
) {
    assert_eq!(
        before.len(),
        after.len(),
        "an update added or removed a task"
    );
    for (position, (was, is)) in before.iter().zip(after).enumerate() {
        assert!(
            position == index || was == is,
            "an update changed task {} besides {}",
            was.id,
            index + 1
        );
    }
}

/// [`BoxNote::Unchecked`] when the README lists task `id` with its box not ticked; nothing
/// when it is ticked or not listed (verify reports that).
fn box_note(readme: &str, id: u64) -> Option<BoxNote> {
    let parsed = crate::plan::markdown::parse_readme(readme);
    let entry = parsed.index.iter().find(|e| e.id == id)?;
    (!entry.marker.is_done()).then_some(BoxNote::Unchecked)
}

/// Materialized, not promoting, approved (absent approval: the README's row, else pending).
/// The README's text as read (`None`: there is none) once the plan is found materialized and
/// approved.
fn check_preconditions(plan_dir: &Path, loaded: &Loaded<State>) -> Result<Option<String>> {
    let file = &loaded.file;
    // The README is read once, for both questions it may answer.
    let readme = plan_dir.join("README.md");
    let readme_text = read_readme(plan_dir)?;
    require_materialized(loaded, &readme, readme_text.as_deref())?;
    let (approval, source) = match loaded.doc.approval {
        Some(approval) => (approval, format!("{file}: $.approval")),
        None => {
            let from_readme = readme_text
                .as_deref()
                .and_then(crate::plan::markdown::readme_approval);
            let source = format!("{}: Approval row", readme.display());
            (from_readme.unwrap_or(Approval::Pending), source)
        }
    };
    if approval == Approval::Pending {
        return Err(Error::rejected(
            source,
            "the plan is not approved (approval pending): no task may change before approval",
        )
        .with_hint(format!(
            "record the user's approval: `dwp approve {} --by NAME` (state.json and the README's Approval row together)",
            plan_dir.display()
        )));
    }
    Ok(readme_text)
}

/// The plan's README.md as text, `None` when there is none.
pub fn read_readme(plan_dir: &Path) -> Result<Option<String>> {
    let readme = plan_dir.join("README.md");
    match store::read_text(&readme, plan_dir) {
        Ok(text) => Ok(Some(text)),
        Err(store::ReadFailure::Missing) => Ok(None),
        Err(failure) => Err(failure.into_error("read", &readme)),
    }
}

/// A materialized plan: `materialization` ready (or absent, v1), no promotion in progress, and
/// a README (`readme_text`, read from `readme`) that does not say `Plan Status: materializing`.
/// Shared by every writer that changes a plan's execution state (`update`, `approve`).
pub fn require_materialized(
    loaded: &Loaded<State>,
    readme: &Path,
    readme_text: Option<&str>,
) -> Result<()> {
    let state = &loaded.doc;
    let file = &loaded.file;
    if let Some(m) = state.materialization
        && m != Materialization::Ready
    {
        return Err(Error::rejected(
            format!("{file}: $.materialization"),
            format!("the plan is {m}, not ready: tasks change only in a materialized plan"),
        ));
    }
    if state.promotion.value().is_some() {
        return Err(Error::rejected(
            format!("{file}: $.promotion"),
            "a Lite-to-Full promotion is in progress: tasks change only once it is finished",
        ));
    }
    refuse_partial_materialization(readme, readme_text)
}

/// A README that says `Plan Status: materializing` is a partial materialization: never
/// executed (seed 003: materializing is "the plan folder is being written"). The README is parsed
/// only when the word is in it, so an ordinary update pays one substring search.
fn refuse_partial_materialization(readme: &Path, text: Option<&str>) -> Result<()> {
    let Some(text) = text.filter(|t| t.contains("aterializing")) else {
        return Ok(());
    };
    let status = crate::plan::markdown::parse_readme(text).plan_status;
    match status {
        Some(status) if status.value == crate::plan::markdown::PlanStatusValue::Materializing => {
            Err(Error::rejected(
                format!("{}:{}", readme.display(), status.line),
                "the README says `Plan Status: materializing`: a partial materialization is never executed",
            )
            .with_hint("complete the materialization (every task file, then `Plan Status: 0/N`), or discard it"))
        }
        _ => Ok(()),
    }
}

/// The transition an update made, for the checkpoint note and the output line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Transition {
    Started,
    Completed,
    Blocked(String),
    Resolved(TaskStatus),
    Reopened(TaskStatus, String),
    Skipped(String),
    Unstarted,
    /// Status unchanged: gates, outcome, commit or checkpoint recorded.
    Recorded {
        gates: usize,
    },
}

impl Transition {
    fn describe(&self, task: u64) -> String {
        match self {
            Transition::Started => format!("task {task} started"),
            Transition::Completed => format!("task {task} completed"),
            Transition::Blocked(reason) => format!("task {task} blocked: {reason}"),
            Transition::Resolved(to) => {
                format!("blocker of task {task} resolved; task {task} {to}")
            }
            Transition::Reopened(to, reason) => format!("task {task} reopened ({to}): {reason}"),
            Transition::Skipped(reason) => format!("task {task} skipped: {reason}"),
            Transition::Unstarted => format!("task {task} back to pending"),
            Transition::Recorded { gates: 0 } => format!("task {task} record updated"),
            Transition::Recorded { gates } => {
                let plural = if *gates == 1 { "" } else { "s" };
                format!("task {task}: {gates} gate record{plural} added")
            }
        }
    }

    fn step(&self) -> &'static str {
        match self {
            Transition::Started => "started",
            Transition::Completed => "done",
            Transition::Blocked(_) => "blocked",
            Transition::Resolved(_) => "resumed",
            Transition::Reopened(..) => "reopened",
            Transition::Skipped(_) => "skipped",
            Transition::Unstarted => "unstarted",
            Transition::Recorded { .. } => "recorded",
        }
    }
}

/// What [`apply`] reads besides the state and the request.
struct Context<'a> {
    plan_dir: &'a Path,
    now: &'a str,
    file: &'a str,
    amendment: AmendmentCheck<'a>,
}

/// Apply the request to `state` (a copy), or refuse. Changes nothing derived: see [`stamp`].
fn apply(state: &mut State, request: &UpdateRequest, context: &Context) -> Result<Transition> {
    let Context {
        plan_dir,
        now,
        file,
        ..
    } = *context;
    let id = request.task;
    let Some(index) = state.tasks.iter().position(|t| t.id == id) else {
        return Err(Error::rejected(
            "--task",
            format!(
                "there is no task {id}; the plan has tasks 1..{}",
                state.tasks.len()
            ),
        ));
    };
    let place = |field: &str| format!("{file}: $.tasks[{index}].{field}");
    let current = state.tasks[index].status;
    let wanted = request.status.unwrap_or(current);

    check_blocker(state, request, current, wanted, file)?;
    invalidate_gates(state, index, &request.invalidate, now)?;
    let added = record_gates(state, index, &request.gates);
    record_outcome(state, index, request);

    let transition = match (current, wanted) {
        (_, TaskStatus::Blocked) if current != TaskStatus::Blocked => {
            refuse_if_closed(current, id, &place("status"))?;
            // Only the task whose turn it is can block: a later task blocked while an earlier
            // one is open could never be resolved (resolving re-checks the order).
            require_earlier_done(state, index)?;
            let reason = request.block_reason.clone().unwrap_or_default();
            if reason.trim().is_empty() {
                return Err(Error::rejected(
                    "--block-reason",
                    "blocking a task needs a non-empty reason",
                )
                .with_hint("say why the plan stopped and, with --block-needs, what it needs"));
            }
            state.tasks[index].status = TaskStatus::Blocked;
            state.blocked = Field::Value(Blocker {
                task: id,
                reason: reason.clone(),
                since: now.to_owned(),
                needs: request.block_needs.clone(),
            });
            Transition::Blocked(reason)
        }
        (TaskStatus::Blocked, TaskStatus::Blocked) => Transition::Recorded { gates: added },
        (TaskStatus::Blocked, to) => {
            // check_blocker let this through only with --resolve-blocker into in_progress/completed.
            state.blocked = Field::Null;
            if to == TaskStatus::Completed {
                complete(state, index, plan_dir, now, &place("gates"))?;
            } else {
                require_earlier_done(state, index)?;
                state.tasks[index].status = to;
            }
            Transition::Resolved(to)
        }
        (TaskStatus::Completed | TaskStatus::Skipped, to) if to != current => {
            let reason = reopen_reason(request, id, current)?;
            if current == TaskStatus::Completed {
                require_amendment_today(plan_dir, &state.tasks[index], context.amendment, now)?;
            }
            if to == TaskStatus::Completed {
                return Err(Error::rejected(
                    place("status"),
                    format!("task {id} is skipped: reopen it to in_progress before completing it"),
                ));
            }
            let task = &mut state.tasks[index];
            task.status = to;
            task.completed_at = None;
            let verb = if to == TaskStatus::Skipped {
                "skipped"
            } else {
                "reopened"
            };
            append_note(
                task.outcome.get_or_insert_with(Outcome::default),
                &format!("{verb} {now}: {reason}"),
            );
            if to == TaskStatus::Skipped {
                Transition::Skipped(reason)
            } else {
                Transition::Reopened(to, reason)
            }
        }
        (_, TaskStatus::Skipped) if current != TaskStatus::Skipped => {
            let reason = request.reopen_reason.clone().filter(|r| !r.trim().is_empty()).ok_or_else(|| {
                Error::rejected(
                    "--reopen-reason",
                    format!("skipping task {id} removes it from scope: only the user may, through refine"),
                )
                .with_hint("record the refine intent with --reopen-reason (and the amendment in the task log)")
            })?;
            let task = &mut state.tasks[index];
            task.status = TaskStatus::Skipped;
            append_note(
                task.outcome.get_or_insert_with(Outcome::default),
                &format!("skipped {now}: {reason}"),
            );
            Transition::Skipped(reason)
        }
        (TaskStatus::Pending, TaskStatus::InProgress) => {
            require_earlier_done(state, index)?;
            let task = &mut state.tasks[index];
            task.status = TaskStatus::InProgress;
            task.started_at.get_or_insert_with(|| now.to_owned());
            Transition::Started
        }
        (TaskStatus::Pending, TaskStatus::Completed) => {
            return Err(Error::rejected(
                place("status"),
                format!("task {id} has not started: a task is started before it completes"),
            )
            .with_hint(format!("dwp update --task {id} --status in_progress")));
        }
        (TaskStatus::InProgress, TaskStatus::Completed) => {
            complete(state, index, plan_dir, now, &place("gates"))?;
            Transition::Completed
        }
        (TaskStatus::Completed, TaskStatus::Completed) => {
            // A replay, or more records on a completed task: the evidence must still hold.
            check_evidence(state, index, plan_dir, &place("gates"))?;
            Transition::Recorded { gates: added }
        }
        (TaskStatus::InProgress, TaskStatus::Pending) => {
            state.tasks[index].status = TaskStatus::Pending;
            Transition::Unstarted
        }
        _ => Transition::Recorded { gates: added },
    };
    if request.reopen_reason.is_some()
        && !matches!(
            transition,
            Transition::Reopened(..) | Transition::Skipped(_)
        )
    {
        return Err(Error::rejected(
            "--reopen-reason",
            format!(
                "task {id} is {current}: --reopen-reason moves a completed or skipped task, or skips one"
            ),
        ));
    }
    if let Some(commit) = &request.commit {
        state.tasks[index].commit = Some(commit.clone());
    }
    record_checkpoint_flags(state, request, now);
    Ok(transition)
}

/// While a blocker is active every other transition waits for `--resolve-blocker`, which only
/// the blocked task may use, into in_progress or completed.
fn check_blocker(
    state: &State,
    request: &UpdateRequest,
    current: TaskStatus,
    wanted: TaskStatus,
    file: &str,
) -> Result<()> {
    let id = request.task;
    let active = state.blocked.value();
    if request.resolve_blocker {
        if let Some(blocker) = active.filter(|b| b.task != id) {
            return Err(Error::rejected(
                format!("{file}: $.blocked"),
                format!(
                    "the active blocker is task {}'s: --resolve-blocker resolves only the current task's blocker, never another task's",
                    blocker.task
                ),
            ));
        }
        if current != TaskStatus::Blocked {
            return Err(Error::rejected(
                "--resolve-blocker",
                format!("task {id} is {current}, not blocked: there is no blocker to resolve"),
            ));
        }
        if !matches!(wanted, TaskStatus::InProgress | TaskStatus::Completed) {
            return Err(Error::rejected(
                "--resolve-blocker",
                "a resolved blocker leads to in_progress or completed",
            ));
        }
        return Ok(());
    }
    if let Some(blocker) = active {
        let replay = blocker.task == id
            && wanted == TaskStatus::Blocked
            && request
                .block_reason
                .as_deref()
                .is_none_or(|r| r == blocker.reason)
            && request
                .block_needs
                .as_deref()
                .is_none_or(|n| Some(n) == blocker.needs.as_deref());
        if !replay {
            let what = if blocker.task == id && wanted == TaskStatus::Blocked {
                "its blocker is never replaced".to_owned()
            } else {
                "every other transition waits".to_owned()
            };
            return Err(Error::rejected(
                format!("{file}: $.blocked"),
                format!(
                    "task {} is blocked since {}: {}; {what}",
                    blocker.task, blocker.since, blocker.reason
                ),
            )
            .with_hint(format!(
                "dwp update --task {} --status in_progress --resolve-blocker",
                blocker.task
            )));
        }
    } else if current == TaskStatus::Blocked && wanted != TaskStatus::Blocked {
        return Err(Error::rejected(
            format!("{file}: $.tasks"),
            format!("task {id} is blocked: resolve it with --resolve-blocker"),
        ));
    }
    Ok(())
}

/// Prefix every record of each command with `invalidated by refine YYYY-MM-DD: ` (never twice):
/// the records keep their place as history. A command without records is refused.
fn invalidate_gates(state: &mut State, index: usize, commands: &[String], now: &str) -> Result<()> {
    let task = &mut state.tasks[index];
    let date = now.get(..10).unwrap_or(now);
    for command in commands {
        let records: Vec<&mut Gate> = task
            .gates
            .iter_mut()
            .flatten()
            .filter(|g| g.command == *command)
            .collect();
        if records.is_empty() {
            return Err(Error::rejected(
                "--invalidate",
                format!(
                    "task {} has no gate record of `{command}` to invalidate",
                    task.id
                ),
            )
            .with_hint("name a command exactly as its gate records do (see state.json)"));
        }
        for gate in records {
            let evidence = gate.evidence.as_deref().unwrap_or("");
            if !evidence::is_invalidated(evidence) {
                let prefixed = format!("{} {date}: {evidence}", evidence::INVALIDATED_PREFIX);
                gate.evidence = Some(prefixed.trim_end().to_owned());
            }
        }
    }
    Ok(())
}

/// The spec records the amendment in the task log before a completed task is reopened: its
/// log must hold an amendment dated today (the clock's date).
fn require_amendment_today(
    plan_dir: &Path,
    task: &crate::plan::model::Task,
    check: AmendmentCheck,
    now: &str,
) -> Result<()> {
    let today = now.get(..10).unwrap_or(now);
    if check == AmendmentCheck::Appending(today) {
        return Ok(());
    }
    let (path, record) = crate::plan::records::read_task_record(plan_dir, task)?;
    if record.amendments.iter().any(|a| a.date == today) {
        return Ok(());
    }
    Err(Error::rejected(
        path.display().to_string(),
        format!(
            "task {} is completed and its log holds no amendment dated {today}: record the amendment first (dwp amend)",
            task.id
        ),
    )
    .with_hint(format!(
        "dwp amend PLAN --task {} --original ... --observed ... --disposition ... --reason ... --authority ... --affected {}",
        task.id, task.id
    )))
}

fn refuse_if_closed(current: TaskStatus, id: u64, place: &str) -> Result<()> {
    if matches!(current, TaskStatus::Completed | TaskStatus::Skipped) {
        return Err(Error::rejected(
            place,
            format!("task {id} is {current}: reopen it (--reopen-reason) before blocking it"),
        ));
    }
    Ok(())
}

fn reopen_reason(request: &UpdateRequest, id: u64, current: TaskStatus) -> Result<String> {
    request
        .reopen_reason
        .clone()
        .filter(|r| !r.trim().is_empty())
        .ok_or_else(|| {
            Error::rejected(
                "--reopen-reason",
                format!("task {id} is {current}: it changes status only with --reopen-reason"),
            )
            .with_hint("record the amendment in the task log first, then pass --reopen-reason")
        })
}

/// Tasks run in order: every earlier task is completed (or skipped: removed from scope).
fn require_earlier_done(state: &State, index: usize) -> Result<()> {
    if let Some(open) = crate::rules::invariants::open_before(state, index) {
        return Err(Error::rejected(
            "--task",
            format!(
                "task {} cannot start or complete before task {} (which is {}): tasks run in order",
                state.tasks[index].id, open.id, open.status
            ),
        ));
    }
    Ok(())
}

fn complete(
    state: &mut State,
    index: usize,
    plan_dir: &Path,
    now: &str,
    place: &str,
) -> Result<()> {
    require_earlier_done(state, index)?;
    check_evidence(state, index, plan_dir, place)?;
    let task = &mut state.tasks[index];
    task.status = TaskStatus::Completed;
    task.completed_at = Some(now.to_owned());
    Ok(())
}

/// At least one gate, and every command's latest record clean ([`evidence::completion_problems`]).
fn check_evidence(state: &State, index: usize, plan_dir: &Path, place: &str) -> Result<()> {
    let task = &state.tasks[index];
    if task.gates().is_empty() {
        return Err(Error::rejected(
            place,
            format!("task {} cannot complete without gate evidence", task.id),
        )
        .with_hint(
            "attach the validation run: --gate \"COMMAND|EXIT_CODE|EVIDENCE\" or --gate-json",
        ));
    }
    let problems = evidence::completion_problems(task.gates(), plan_dir);
    if !problems.is_empty() {
        let list = problems
            .iter()
            .map(|(command, problem)| format!("gate `{command}` {}", problem.describe()))
            .collect::<Vec<_>>()
            .join("; ");
        let mut remedies: Vec<&str> = problems.iter().map(|(_, p)| p.remedy()).collect();
        remedies.dedup();
        return Err(
            Error::rejected(place, format!("task {} cannot complete: {list}", task.id))
                .with_hint(remedies.join("; ")),
        );
    }
    Ok(())
}

/// Append each new gate unless it repeats the latest record of its command (ignoring
/// `last_run`), so a replayed call is idempotent. Returns how many were appended.
fn record_gates(state: &mut State, index: usize, gates: &[Gate]) -> usize {
    if gates.is_empty() {
        return 0; // a v1 task without `gates` keeps it absent
    }
    let list = state.tasks[index].gates.get_or_insert_with(Vec::new);
    let mut added = 0;
    for gate in gates {
        let repeats = list
            .iter()
            .rev()
            .find(|g| g.command == gate.command)
            .is_some_and(|latest| {
                latest.passes == gate.passes
                    && latest.exit_code == gate.exit_code
                    && latest.evidence == gate.evidence
            });
        if !repeats {
            list.push(gate.clone());
            added += 1;
        }
    }
    added
}

fn record_outcome(state: &mut State, index: usize, request: &UpdateRequest) {
    let touches = request.worked.is_some()
        || request.notes.is_some()
        || !request.tried.is_empty()
        || !request.failed.is_empty();
    if !touches {
        return;
    }
    let outcome = state.tasks[index]
        .outcome
        .get_or_insert_with(Outcome::default);
    if let Some(worked) = &request.worked {
        outcome.worked = Some(worked.clone());
    }
    if let Some(notes) = &request.notes {
        outcome.notes = Some(notes.clone());
    }
    for (flag_values, list) in [
        (&request.tried, &mut outcome.tried),
        (&request.failed, &mut outcome.failed),
    ] {
        for value in flag_values {
            let list = list.get_or_insert_with(Vec::new);
            if !list.contains(value) {
                list.push(value.clone());
            }
        }
    }
}

fn append_note(outcome: &mut Outcome, line: &str) {
    outcome.notes = Some(match outcome.notes.take() {
        Some(notes) if !notes.is_empty() => format!("{notes}; {line}"),
        _ => line.to_owned(),
    });
}

/// Explicit `--checkpoint-step` / `--checkpoint-note`: a change only if they say something new.
fn record_checkpoint_flags(state: &mut State, request: &UpdateRequest, now: &str) {
    if request.checkpoint_step.is_none() && request.checkpoint_note.is_none() {
        return;
    }
    let current = state.checkpoint.value();
    let same = current.is_some_and(|c| {
        c.task == request.task
            && request
                .checkpoint_step
                .as_ref()
                .is_none_or(|s| Some(s) == c.step.as_ref())
            && request
                .checkpoint_note
                .as_ref()
                .is_none_or(|n| Some(n) == c.note.as_ref())
    });
    if !same {
        state.checkpoint = Field::Value(Checkpoint {
            task: request.task,
            step: request
                .checkpoint_step
                .clone()
                .or_else(|| current.and_then(|c| c.step.clone())),
            at: now.to_owned(),
            note: request.checkpoint_note.clone(),
        });
    }
}

/// Recompute what is derived once something changed: counts, status, who and when, and a
/// checkpoint whose note says what actually happened.
fn stamp(state: &mut State, request: &UpdateRequest, transition: &Transition, now: &str) {
    state.completed_count = state.completed_tasks();
    state.status = state.derived_status();
    state.updated_at = now.to_owned();
    state.sign(request.agent.as_ref(), request.model.as_ref());
    let note = request
        .checkpoint_note
        .clone()
        .unwrap_or_else(|| truncate(&transition.describe(request.task), 500));
    // Without a status change the resume point inside the task stays where it was.
    let kept_step = match transition {
        Transition::Recorded { .. } => state
            .checkpoint
            .value()
            .filter(|c| c.task == request.task)
            .and_then(|c| c.step.clone()),
        _ => None,
    };
    let step = request
        .checkpoint_step
        .clone()
        .or(kept_step)
        .unwrap_or_else(|| transition.step().to_owned());
    state.checkpoint = Field::Value(Checkpoint {
        task: request.task,
        step: Some(step),
        at: now.to_owned(),
        note: Some(note),
    });
}

/// `text` cut to `max_chars` characters (the last one an ellipsis) to fit a schema limit.
pub fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars - 1).collect();
    out.push('…');
    out
}

/// Completing the last open task publishes the plan: that is `dwp finalize`'s transition.
/// Hand a state that completes the plan to `dwp finalize` (we hold the lock); a refused
/// publication refuses the update, listing every problem.
fn publish(
    plan_dir: &Path,
    state_path: &Path,
    loaded: &Loaded<()>,
    next: State,
    request: &UpdateRequest,
    transition: &Transition,
) -> Result<UpdateOutcome> {
    let (completed_count, task_count, plan_status) =
        (next.completed_count, next.task_count, next.status);
    let candidate = crate::steps::publication::Candidate::built(loaded, next);
    let diff = request
        .dry_run
        .then(|| crate::diff::unified_diff(&loaded.bytes, candidate.bytes(), &loaded.file));
    let publication = crate::steps::publication::publish_locked(
        plan_dir,
        state_path,
        candidate,
        request.dry_run,
    )?;
    if publication.verdict != crate::steps::publication::PublicationVerdict::Published {
        let problems: Vec<String> = publication
            .findings
            .iter()
            .map(|f| format!("{} {}", f.code, f.render()))
            .collect();
        return Err(Error::rejected(
            plan_dir.display().to_string(),
            format!(
                "completing task {} publishes the plan, and publication was refused ({} problem{}): {}",
                request.task,
                problems.len(),
                if problems.len() == 1 { "" } else { "s" },
                problems.join("; ")
            ),
        )
        .with_hint("fix each problem, then retry; `dwp finalize PLAN --json` lists them one by one"));
    }
    Ok(UpdateOutcome {
        task: request.task,
        status: TaskStatus::Completed,
        completed_count,
        task_count,
        plan_status,
        changed: true,
        dry_run: request.dry_run,
        old_sha256: loaded.sha256.clone(),
        new_sha256: publication.state_sha256.clone().unwrap_or_default(),
        transition: format!("{}; plan published", transition.describe(request.task)),
        diff,
        receipt: publication.receipt.clone(),
        planned: None,
        markdown: None,
    })
}

/// Field limits of the schema and the shape of each flag, checked before anything is read.
pub fn check_request(request: &UpdateRequest) -> Result<()> {
    crate::steps::writer::check_signature(request.agent.as_ref(), request.model.as_ref())?;
    let limits: [(&str, Option<&String>, usize); 7] = [
        ("--block-reason", request.block_reason.as_ref(), 1000),
        ("--block-needs", request.block_needs.as_ref(), 500),
        ("--reopen-reason", request.reopen_reason.as_ref(), 400),
        ("--worked", request.worked.as_ref(), 500),
        ("--notes", request.notes.as_ref(), 1000),
        ("--checkpoint-step", request.checkpoint_step.as_ref(), 200),
        ("--checkpoint-note", request.checkpoint_note.as_ref(), 500),
    ];
    for (flag, value, max) in limits {
        if let Some(value) = value {
            Error::check_length(flag, value, max)?;
        }
    }
    for (flag, values) in [("--tried", &request.tried), ("--failed", &request.failed)] {
        for value in values {
            Error::check_length(flag, value, 300)?;
        }
    }
    for command in &request.invalidate {
        Error::check_length("--invalidate", command, 500)?;
    }
    for gate in &request.gates {
        Error::check_length("--gate command", &gate.command, 500)?;
        if let Some(evidence) = &gate.evidence {
            Error::check_length("--gate evidence", evidence, 500)?;
        }
        if gate.passes && gate.exit_code.is_some_and(|c| c != 0) {
            return Err(Error::rejected(
                "--gate-json",
                format!(
                    "gate `{}` says passes: true with exit code {}: a record that contradicts itself",
                    gate.command,
                    gate.exit_code.unwrap_or_default()
                ),
            ));
        }
    }
    if let Some(commit) = &request.commit {
        let ok = (7..=40).contains(&commit.len())
            && commit
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !ok {
            return Err(Error::Usage(format!(
                "--commit `{commit}` is not a short or full lower-case hex commit hash (7-40 characters), nor a revision git resolves in the plan's repository"
            )));
        }
    }
    if let Some(expected) = &request.expected_sha256
        && (expected.len() != 64
            || !expected
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
    {
        return Err(Error::Usage(format!(
            "--expected-sha256 `{expected}` is not 64 lower-case hex digits"
        )));
    }
    if request.tick && request.status != Some(TaskStatus::Completed) {
        return Err(Error::Usage(
            "--tick goes with --status completed: it ticks the box of the task it completes".into(),
        ));
    }
    if request.tick && request.dry_run {
        return Err(Error::Usage(
            "--tick writes the README with the state; drop --dry-run, or --tick to preview the state change".into(),
        ));
    }
    let blocking = request.status == Some(TaskStatus::Blocked);
    if !blocking && (request.block_reason.is_some() || request.block_needs.is_some()) {
        return Err(Error::Usage(
            "--block-reason and --block-needs go with --status blocked".into(),
        ));
    }
    if blocking && request.resolve_blocker {
        return Err(Error::Usage(
            "--resolve-blocker goes with --status in_progress or completed".into(),
        ));
    }
    Ok(())
}
