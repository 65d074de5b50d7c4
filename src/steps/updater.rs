//! The guarded update of one task, planned: [`plan_update`] judges a request against the plan
//! loaded under the lock and returns the change it makes (state.json, and with `--tick` the
//! README box) and what it did, or refuses; [`commit_update`] writes it. `dwp update`, `dwp
//! run`, `dwp amend` and the contract ladder all change a task's state through it.
//!
//! One call is one compare-and-swap under the cooperative lock: lock, read, hash, compare with
//! `--expected-sha256`, validate the input, apply one transition, validate the result, write
//! durably, unlock. Every refusal happens before the write, so a refused call changes no byte.
//!
//! Transition rules (the spec's "Guarded state updates"), each enforced in [`apply`]:
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
//!   a completed one also needs an amendment dated today in its task log (`dwp amend`, which
//!   plans the log with its amendment appended), since the spec records the amendment first;
//! - `invalidate` (only `dwp amend --invalidate`) prefixes every record of a command with
//!   `invalidated by refine YYYY-MM-DD: ` (once) and returns the task to pending;
//! - skipping needs `--reopen-reason` too: it is a change of scope made through refine;
//! - the transition that completes the whole plan is publication: the result is checked against
//!   every artifact by [`crate::steps::publication`] and written with its receipt.

use crate::error::{Error, Result};
use crate::plan::model::{
    Approval, Blocker, Checkpoint, Field, Gate, Materialization, Outcome, State, TaskStatus,
};
use crate::plan::{Loaded, LoadedPlan};
use crate::rules::evidence;
use crate::steps::commit::{self, Change};
use crate::steps::publication::{self, Candidate, PublicationVerdict};
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
    /// After a completion: the task's README box, when it says something the caller must know
    /// (the markdown wins, so a box left unchecked leaves the plan not conformant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<BoxNote>,
    /// With `--tick`: the file whose Completion & Log the completion filled (its `Status:`,
    /// an empty `Timestamp:` and `Gate record:`), when it changed one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_filled: Option<String>,
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

/// A guarded update planned: what it writes, and what it did (or, dry, would do).
pub struct Planned {
    /// The files it writes: state.json, and with `--tick` the README (first).
    pub change: Change,
    pub outcome: UpdateOutcome,
    /// Completing the last task publishes the plan: the publication that writes the state
    /// (and the README box) with its receipt, instead of `change`'s plain writes.
    pub publication: Option<Box<publication::Planned>>,
}

/// Plan one guarded update of `plan` (loaded under the plan's lock, as the change being
/// planned leaves it) at the time `now`, or refuse; nothing is written. `request` passed
/// [`check_request`].
pub fn plan_update(plan: &mut LoadedPlan, request: &UpdateRequest, now: &str) -> Result<Planned> {
    let tick = match request.tick {
        true => Some(tick_markdown(plan, request, now)?),
        false => None,
    };
    // From here on the plan is only read: the change's edits are set in it.
    let plan: &LoadedPlan = plan;
    crate::plan::refuse_while_finalizing(plan.dir())?;
    // The input must validate; its invariants are checked with the rest of it below.
    let loaded = crate::steps::writer::load_state_for_write(plan, false)?;
    let index = loaded.doc.tasks.iter().position(|t| t.id == request.task);
    let clock = check_input(plan, loaded, request, now)?;
    let mut next = loaded.doc.clone();
    let applying = crate::profile::stage("apply");
    // What the update may change, kept to tell whether it did: the document around the tasks
    // and the one task (apply touches no other; debug builds check that below).
    let before_task = index.map(|index| next.tasks[index].clone());
    let before_shell = next.clone_without_tasks();
    #[cfg(debug_assertions)]
    let untouched = next.tasks.clone();
    let transition = apply(&mut next, request, plan, now, &loaded.file)?;
    let index = index.expect("task exists: checked in apply");
    #[cfg(debug_assertions)]
    assert_only_task_changed(&untouched, &next.tasks, index);
    let changed =
        Some(&next.tasks[index]) != before_task.as_ref() || !next.same_shell(&before_shell);
    drop(applying);
    if changed {
        clock?;
        stamp(&mut next, request, &transition, now);
        if next.derived_status() == crate::plan::model::PlanStatus::Completed {
            // Completing the last task is publication: finalize's checks, then its writes.
            return plan_publishing(plan, loaded, next, request, &transition, tick);
        }
    }
    let task_status = next
        .task(request.task)
        .expect("task exists: checked in apply")
        .status;
    let bytes = if changed {
        let bytes = crate::profile::time("serialize", || store::json_file_bytes(&next));
        // The input validated in full; an update changes one task and the document around the
        // tasks, so those are what the safety net checks again (with every invariant).
        crate::steps::writer::check_changed_task(loaded, &next, request.task, "the updated state")?;
        Some(bytes)
    } else {
        None
    };
    let command = if request.tick {
        "dwp update --tick"
    } else {
        "dwp update"
    };
    let mut change = Change::new(plan.dir(), command);
    let log_filled = match &tick {
        Some(Tick::Ticked { log_filled, .. }) => log_filled.clone(),
        _ => None,
    };
    let markdown = match &tick {
        Some(Tick::Ticked {
            edits, box_ticked, ..
        }) => {
            for edit in edits {
                change.write(
                    &edit.path,
                    Some(edit.before.as_bytes()),
                    edit.after.clone().into_bytes(),
                );
            }
            box_ticked.then_some(BoxNote::Ticked)
        }
        // A completion says when its README box is still unchecked.
        _ if request.status == Some(TaskStatus::Completed)
            && task_status == TaskStatus::Completed
            && tick.is_none() =>
        {
            plan.readme()
                .ok()
                .and_then(|readme| box_note(readme, request.task))
        }
        _ => None,
    };
    let diff = request.dry_run.then(|| {
        let after = bytes.as_deref().unwrap_or(&loaded.bytes);
        crate::diff::unified_diff(&loaded.bytes, after, &loaded.file)
    });
    let new_sha256 = match &bytes {
        Some(bytes) => store::sha256_hex(bytes),
        None => loaded.sha256.clone(),
    };
    if let Some(bytes) = bytes {
        change.write_known(&plan.paths.state, Some(loaded.sha256.clone()), bytes);
    }
    let outcome = UpdateOutcome {
        task: request.task,
        status: task_status,
        completed_count: next.completed_count,
        task_count: next.task_count,
        plan_status: next.status,
        changed,
        dry_run: request.dry_run,
        old_sha256: loaded.sha256.clone(),
        new_sha256,
        transition: transition.describe(request.task),
        diff,
        receipt: None,
        markdown,
        log_filled,
    };
    Ok(Planned {
        change,
        outcome,
        publication: None,
    })
}

/// Write what [`plan_update`] planned: its change, or its publication (refused, naming every
/// problem, when the re-read after the state's write finds an artifact changed meanwhile).
pub fn commit_update(planned: Planned) -> Result<UpdateOutcome> {
    let Planned {
        change,
        mut outcome,
        publication,
    } = planned;
    let plan_dir = change.dir().to_path_buf();
    commit::commit(change)?;
    if let Some(publishing) = publication {
        let published = commit::publish(*publishing)?;
        if published.verdict != PublicationVerdict::Published {
            return Err(publication_refused(outcome.task, &published, &plan_dir));
        }
        outcome.receipt = published.receipt;
    }
    Ok(outcome)
}

/// What `--tick` does to the markdown: nothing (the box ticked and the log filled already), or
/// these edits: the README (its box, and a Lite task's log) and a Full task's file (its log).
enum Tick {
    AlreadyTicked,
    Ticked {
        edits: Vec<MarkdownEdit>,
        box_ticked: bool,
        /// The file whose log was filled.
        log_filled: Option<String>,
    },
}

/// One markdown file as `--tick` leaves it.
struct MarkdownEdit {
    path: std::path::PathBuf,
    before: String,
    after: String,
}

/// `--tick`: task `request.task`'s README box ticked, then its Completion & Log filled as the
/// completion leaves it ([`fill_log`]), each set in `plan` as the change leaves it.
fn tick_markdown(plan: &mut LoadedPlan, request: &UpdateRequest, now: &str) -> Result<Tick> {
    let id = request.task;
    let gate_record = completion_gate_record(plan, request);
    let readme_path = plan.dir().join("README.md");
    let readme_before = plan
        .readme_text()
        .map_err(|failure| failure.clone_kind().into_error("read", &readme_path))?
        .to_owned();
    let box_ticked = matches!(tick_box(plan, id)?, BoxTicked::Ticked);
    let mut edits = Vec::new();
    let log = plan
        .markdown()
        .ok()
        .and_then(|md| md.records.get(&id))
        .and_then(|(path, record)| Some((path.clone(), record.log.clone()?)));
    let mut readme_after = plan.readme_text().expect("read above").to_owned();
    let mut log_filled = None;
    if let Some((path, log)) = log {
        let text = match path == readme_path {
            true => readme_after.clone(),
            false => plan
                .read_text(&path)
                .map_err(|failure| failure.clone_kind().into_error("read", &path))?,
        };
        let filled = crate::plan::markdown::fill_log(&text, &log, now, gate_record.as_deref());
        if filled != text {
            log_filled = Some(path.display().to_string());
            plan.set_file(&path, filled.clone().into_bytes());
            match path == readme_path {
                true => readme_after = filled,
                false => edits.push(MarkdownEdit {
                    path,
                    before: text,
                    after: filled,
                }),
            }
        }
    }
    if readme_after != readme_before {
        edits.insert(
            0,
            MarkdownEdit {
                path: readme_path,
                before: readme_before,
                after: readme_after,
            },
        );
    }
    Ok(match edits.is_empty() {
        true => Tick::AlreadyTicked,
        false => Tick::Ticked {
            edits,
            box_ticked,
            log_filled,
        },
    })
}

/// The `Gate record:` a completion writes: the passing gates it brings, else the task's latest
/// passing record of each command, as `COMMAND → SUMMARY` (the summary without dwp's
/// observation mark, which the state keeps), joined by `; `. `None`: no passing gate.
fn completion_gate_record(plan: &LoadedPlan, request: &UpdateRequest) -> Option<String> {
    let recorded;
    let gates: &[Gate] = match request.gates.is_empty() {
        false => &request.gates,
        true => {
            recorded = plan
                .state()
                .ok()?
                .doc
                .task(request.task)?
                .gates
                .clone()
                .unwrap_or_default();
            &recorded
        }
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut records: Vec<String> = gates
        .iter()
        .rev()
        .filter(|gate| seen.insert(gate.command.clone()))
        .filter(|gate| gate.passes)
        .map(|gate| {
            let evidence = gate.evidence.as_deref().unwrap_or("passed");
            let summary = crate::rules::observed::mark(evidence).map_or(evidence, |m| m.summary);
            format!("{} → {}", gate.command, summary.trim())
        })
        .collect();
    records.reverse();
    (!records.is_empty()).then(|| records.join("; "))
}

/// What ticking the box did.
enum BoxTicked {
    Already,
    Ticked,
}

/// The README with task `id`'s box ticked (and `Plan Status` recounted), set in `plan` as the
/// change leaves it; refused when the README cannot be read or has no box for the task.
fn tick_box(plan: &mut LoadedPlan, id: u64) -> Result<BoxTicked> {
    let readme_path = plan.dir().join("README.md");
    let text = plan
        .readme_text()
        .map_err(|failure| failure.clone_kind().into_error("read", &readme_path))?
        .to_owned();
    let parsed = plan.readme().expect("the README was read");
    let ticked =
        crate::plan::markdown::boxes::set_box_in(&text, parsed, id, true).map_err(|why| {
            Error::rejected(readme_path.display().to_string(), format!("--tick: {why}")).with_hint(
                "tick the box by hand (`- [x] Task N`), then run the same update without --tick",
            )
        })?;
    if ticked == text {
        return Ok(BoxTicked::Already);
    }
    plan.set_file(&readme_path, ticked.into_bytes());
    Ok(BoxTicked::Ticked)
}

/// Every check of the input before the change, in the order its refusals take: invariants,
/// the caller's snapshot, the plan's preconditions. Returns whether the clock is behind a time
/// the input records (refused only if the update changes something).
fn check_input(
    plan: &LoadedPlan,
    loaded: &Loaded<State>,
    request: &UpdateRequest,
    now: &str,
) -> Result<Result<()>> {
    crate::steps::writer::refuse_broken_invariants(loaded)?;
    crate::steps::writer::check_snapshot(loaded, request.expected_sha256.as_ref())?;
    crate::profile::time("README", || check_preconditions(plan, loaded))?;
    Ok(crate::steps::writer::refuse_clock_behind(
        &loaded.doc,
        &loaded.file,
        now,
    ))
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
fn box_note(readme: &crate::plan::markdown::Readme, id: u64) -> Option<BoxNote> {
    let entry = readme.index.iter().find(|e| e.id == id)?;
    (!entry.marker.is_done()).then_some(BoxNote::Unchecked)
}

/// Materialized, not promoting, approved (absent approval: the README's row, else pending).
fn check_preconditions(plan: &LoadedPlan, loaded: &Loaded<State>) -> Result<()> {
    let file = &loaded.file;
    let readme = plan.dir().join("README.md");
    let readme_text = read_readme(plan)?;
    require_materialized(loaded, &readme, readme_text)?;
    let (approval, source) = match loaded.doc.approval {
        Some(approval) => (approval, format!("{file}: $.approval")),
        None => {
            let from_readme = readme_text.and_then(|_| plan.readme().ok()?.approval());
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
            crate::term::path_word(plan.dir())
        )));
    }
    Ok(())
}

/// The plan's README.md as text, `None` when there is none.
pub fn read_readme(plan: &LoadedPlan) -> Result<Option<&str>> {
    match plan.readme_text() {
        Ok(text) => Ok(Some(text)),
        Err(store::ReadFailure::Missing) => Ok(None),
        Err(failure) => Err(failure
            .clone_kind()
            .into_error("read", &plan.dir().join("README.md"))),
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
/// executed (the plan-state spec: materializing is "the plan folder is being written"). The README is parsed
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

/// Apply the request to `state` (a copy of `plan`'s, named `file` in refusals) at `now`, or
/// refuse. Changes nothing derived: see [`stamp`].
fn apply(
    state: &mut State,
    request: &UpdateRequest,
    plan: &LoadedPlan,
    now: &str,
    file: &str,
) -> Result<Transition> {
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
                complete(state, index, plan, now, &place("gates"))?;
            } else {
                require_earlier_done(state, index)?;
                state.tasks[index].status = to;
            }
            Transition::Resolved(to)
        }
        (TaskStatus::Completed | TaskStatus::Skipped, to) if to != current => {
            let reason = reopen_reason(request, id, current, plan.dir())?;
            if current == TaskStatus::Completed {
                require_amendment_today(plan, &state.tasks[index], now)?;
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
                .with_hint(format!(
                    "with the user's word as the reason (TEXT): `dwp update {} --task {id} --status skipped --reopen-reason TEXT`",
                    crate::term::path_word(plan.dir())
                ))
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
            complete(state, index, plan, now, &place("gates"))?;
            Transition::Completed
        }
        (TaskStatus::Completed, TaskStatus::Completed) => {
            // A replay, or more records on a completed task: the evidence must still hold.
            check_evidence(state, index, plan, &place("gates"))?;
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
    plan: &LoadedPlan,
    task: &crate::plan::model::Task,
    now: &str,
) -> Result<()> {
    let today = now.get(..10).unwrap_or(now);
    let source = crate::plan::records::read_task_source(plan, task)?;
    let (path, record) = (source.path, source.record);
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
        "record it in your words (TEXT), with the disposition and authority that fit: `dwp amend {} --task {id} --original TEXT --observed TEXT --disposition failed-gate --reason TEXT --authority user --affected {id}`, then this update again",
        crate::term::path_word(plan.dir()),
        id = task.id
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

/// The reason a completed or skipped task moves, which it needs; the hint is the way there: a
/// completed task's amendment first (TEXT: the user's own words), then this move with a reason.
fn reopen_reason(
    request: &UpdateRequest,
    id: u64,
    current: TaskStatus,
    plan_dir: &Path,
) -> Result<String> {
    let plan = crate::term::path_word(plan_dir);
    let to = request.status.unwrap_or(TaskStatus::InProgress);
    let moved = format!("`dwp update {plan} --task {id} --status {to} --reopen-reason TEXT`");
    let hint = match current {
        TaskStatus::Completed => format!(
            "a completed task reopens through an amendment: `dwp amend {plan} --task {id} --original TEXT --observed TEXT --disposition failed-gate --reason TEXT --authority user --affected {id}`, then {moved}"
        ),
        _ => format!("with the user's word as the reason (TEXT): {moved}"),
    };
    request
        .reopen_reason
        .clone()
        .filter(|r| !r.trim().is_empty())
        .ok_or_else(|| {
            Error::rejected(
                "--reopen-reason",
                format!("task {id} is {current}: it changes status only with --reopen-reason"),
            )
            .with_hint(hint)
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
    plan: &LoadedPlan,
    now: &str,
    place: &str,
) -> Result<()> {
    require_earlier_done(state, index)?;
    check_evidence(state, index, plan, place)?;
    let task = &mut state.tasks[index];
    task.status = TaskStatus::Completed;
    task.completed_at = Some(now.to_owned());
    Ok(())
}

/// At least one gate, and every command's latest record clean ([`evidence::completion_problems`]).
fn check_evidence(state: &State, index: usize, plan: &LoadedPlan, place: &str) -> Result<()> {
    let task = &state.tasks[index];
    if task.gates().is_empty() {
        return Err(Error::rejected(
            place,
            format!("task {} cannot complete without gate evidence", task.id),
        )
        .with_hint(format!(
            "record a run of its validation first: `dwp next {}` prints the `dwp run` line of each Validation command",
            crate::term::path_word(plan.dir())
        )));
    }
    let problems = evidence::completion_problems(task.gates(), plan);
    if !problems.is_empty() {
        let list = problems
            .iter()
            .map(|(command, problem)| format!("gate `{command}` {}", problem.describe()))
            .collect::<Vec<_>>()
            .join("; ");
        let mut remedies: Vec<String> = problems
            .iter()
            .map(|(_, p)| p.remedy().to_owned())
            .collect();
        remedies.dedup();
        remedies.push(rerun_step(task, &problems, plan.dir()));
        return Err(
            Error::rejected(place, format!("task {} cannot complete: {list}", task.id))
                .with_hint(remedies.join("; ")),
        );
    }
    Ok(())
}

/// The step that records the run again: the `dwp run` line of each failing command
/// ([`crate::rules::observed::run_line`]), else, for a command only a shell runs, `dwp next`,
/// which prints the line of each Validation command.
fn rerun_step(
    task: &crate::plan::model::Task,
    problems: &[(String, evidence::GateProblem)],
    plan_dir: &Path,
) -> String {
    let plan = crate::term::path_word(plan_dir);
    let lines: Option<Vec<String>> = problems
        .iter()
        .map(|(command, _)| {
            crate::rules::observed::run_line(&plan, task.id, command).map(|l| format!("`{l}`"))
        })
        .collect();
    match lines {
        Some(lines) => format!("then {}", lines.join(", ")),
        None => format!("`dwp next {plan}` prints the `dwp run` line of each Validation command"),
    }
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
    // A completed plan rests at its last task (DWP029), whichever completion closed it: an
    // amended task re-completed after the tasks after it closes the plan too.
    let task = match state.status {
        crate::plan::model::PlanStatus::Completed => {
            state.tasks.last().map_or(request.task, |t| t.id)
        }
        _ => request.task,
    };
    state.checkpoint = Field::Value(Checkpoint {
        task,
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
/// The state that completes the plan is checked as finalize checks it, against `plan` as the
/// update leaves it (its README box ticked, with `--tick`), and published with its receipt;
/// a refused publication refuses the update, listing every problem.
fn plan_publishing(
    plan: &LoadedPlan,
    loaded: &Loaded<State>,
    next: State,
    request: &UpdateRequest,
    transition: &Transition,
    tick: Option<Tick>,
) -> Result<Planned> {
    let (completed_count, task_count, plan_status) =
        (next.completed_count, next.task_count, next.status);
    let candidate = Candidate::built(loaded, next);
    let diff = request
        .dry_run
        .then(|| crate::diff::unified_diff(&loaded.bytes, candidate.bytes(), &loaded.file));
    let new_sha256 = store::sha256_hex(candidate.bytes());
    let log_filled = match &tick {
        Some(Tick::Ticked { log_filled, .. }) => log_filled.clone(),
        _ => None,
    };
    let (edits, markdown) = match tick {
        Some(Tick::Ticked {
            edits, box_ticked, ..
        }) => (
            edits
                .into_iter()
                .map(|edit| publication::MarkerEdit {
                    path: edit
                        .path
                        .strip_prefix(plan.dir())
                        .unwrap_or(&edit.path)
                        .to_string_lossy()
                        .into_owned(),
                    content: edit.after,
                })
                .collect(),
            box_ticked.then_some(BoxNote::Ticked),
        ),
        _ => (Vec::new(), None),
    };
    let planned = match publication::plan_publication(plan, candidate, edits) {
        publication::Checked::Ready(planned) => planned,
        publication::Checked::Stopped(stopped) => {
            return Err(publication_refused(request.task, &stopped, plan.dir()));
        }
    };
    let outcome = UpdateOutcome {
        task: request.task,
        status: TaskStatus::Completed,
        completed_count,
        task_count,
        plan_status,
        changed: true,
        dry_run: request.dry_run,
        old_sha256: loaded.sha256.clone(),
        new_sha256,
        transition: format!("{}; plan published", transition.describe(request.task)),
        diff,
        receipt: None,
        markdown,
        log_filled,
    };
    Ok(Planned {
        change: Change::new(plan.dir(), "dwp update"),
        outcome,
        publication: Some(planned),
    })
}

/// The refusal of an update whose publication stopped, listing every problem.
fn publication_refused(
    task: u64,
    publication: &publication::Publication,
    plan_dir: &Path,
) -> Error {
    let problems: Vec<String> = publication
        .findings
        .iter()
        .map(|f| format!("{} {}", f.code, f.render()))
        .collect();
    Error::rejected(
        publication.plan.clone(),
        format!(
            "completing task {task} publishes the plan, and publication was refused ({} problem{}): {}",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            problems.join("; ")
        ),
    )
    .with_hint(format!(
        "fix each problem, then retry; `dwp finalize {} --json` lists them one by one",
        crate::term::path_word(plan_dir)
    ))
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
