//! The state invariants beyond the schema (docs/CONFORMANCE.md, DWP020 to DWP035), shared by
//! `validate`, every writer (input and output are checked), `finalize` and `verify`.
//!
//! Each check returns findings rather than stopping at the first, so a reader sees every problem.

use crate::clock::parse_rfc3339;
use crate::findings::{Code, Finding};
use crate::plan::model::{
    LocatorKind, Manifest, Materialization, PlanFormat, PlanStatus, State, TaskStatus,
};
use crate::plan::{Loaded, LoadedPlan};
use std::collections::HashMap;
use std::path::Path;

/// The order tasks run in (the plan-state spec's "Guarded state updates"): a task starts, blocks or completes
/// only once every earlier task is completed or skipped (removed from scope). The first earlier
/// task that is neither, if any. `dwp update` refuses a transition that would break it, and
/// `dwp verify` reports a state that does (DWP036).
pub fn open_before(state: &State, index: usize) -> Option<&crate::plan::model::Task> {
    state.tasks[..index].iter().find(|t| is_open(t))
}

/// A task that holds back the tasks after it: neither completed nor skipped.
pub fn is_open(task: &crate::plan::model::Task) -> bool {
    !matches!(task.status, TaskStatus::Completed | TaskStatus::Skipped)
}

/// Every task out of order (its index and the task), with the open task before it: a task in
/// progress, blocked or completed while an earlier task is open ([`open_before`]), the state
/// DWP036 reports and `dwp next` puts right first. One exception: a task an amendment reopened (`dwp amend
/// --invalidate`: it holds evidence invalidated by refine) is reworked in place, so the tasks
/// after it that were completed before the amendment stay completed; a task started after it
/// still breaks the order.
pub fn out_of_order(
    state: &State,
) -> Vec<(usize, &crate::plan::model::Task, &crate::plan::model::Task)> {
    let tasks = &state.tasks;
    let Some(first_open) = tasks.iter().position(is_open) else {
        return Vec::new();
    };
    let first_not_reworked = tasks.iter().position(|t| is_open(t) && !is_reworked(t));
    tasks
        .iter()
        .enumerate()
        .skip(first_open + 1)
        .filter_map(|(index, task)| match task.status {
            TaskStatus::InProgress | TaskStatus::Blocked => Some((index, task, &tasks[first_open])),
            TaskStatus::Completed => first_not_reworked
                .filter(|&earlier| earlier < index)
                .map(|earlier| (index, task, &tasks[earlier])),
            _ => None,
        })
        .collect()
}

/// A task an amendment reopened: pending or in progress again, holding a gate record whose
/// evidence `dwp amend --invalidate` marked invalidated by refine.
pub fn is_reworked(task: &crate::plan::model::Task) -> bool {
    matches!(task.status, TaskStatus::Pending | TaskStatus::InProgress)
        && task.gates.iter().flatten().any(|g| {
            g.evidence
                .as_deref()
                .is_some_and(crate::rules::evidence::is_invalidated)
        })
}

/// Invariants of a manifest on its own.
pub fn check_manifest(manifest: &Loaded<Manifest>) -> Vec<Finding> {
    let mut findings = Vec::new();
    timestamp(
        &mut findings,
        &manifest.file,
        || "$.created_at".to_owned(),
        &manifest.doc.created_at,
        None,
    );
    findings
}

/// Invariants of a state on its own.
pub fn check_state(state: &Loaded<State>) -> Vec<Finding> {
    check_document(&state.doc, &state.file)
}

/// [`check_state`] of a typed state not (yet) loaded from bytes: a writer's result before it is
/// written, named `file` in the findings.
pub fn check_document(doc: &State, file: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    let error = |code, path: &str, message: String| Finding::error(code, file, message).at(path);

    if doc.tasks.len() as u64 != doc.task_count {
        findings.push(error(
            Code::TaskCount,
            "$.task_count",
            format!(
                "is {} but there are {} task entries",
                doc.task_count,
                doc.tasks.len()
            ),
        ));
    }
    for (index, task) in doc.tasks.iter().enumerate() {
        let expected = index as u64 + 1;
        if task.id != expected {
            findings.push(
                error(
                    Code::TaskIds,
                    &format!("$.tasks[{index}].id"),
                    format!("is {} but entry {expected} must have id {expected} (ids are 1..N in order)", task.id),
                )
                .task(task.id),
            );
        }
    }
    let completed = doc.completed_tasks();
    if doc.completed_count != completed {
        findings.push(error(
            Code::CompletedCount,
            "$.completed_count",
            format!(
                "is {} but {completed} tasks are completed",
                doc.completed_count
            ),
        ));
    }
    for (index, task) in doc.tasks.iter().enumerate() {
        if task.status == TaskStatus::Completed && task.completed_at.is_none() {
            findings.push(
                error(
                    Code::CompletedWithoutTime,
                    &format!("$.tasks[{index}]"),
                    format!("task {} is completed but has no completed_at", task.id),
                )
                .task(task.id),
            );
        }
    }
    check_promotion(&mut findings, doc, file);
    check_locators(&mut findings, doc, file);
    check_status(&mut findings, doc, file);
    check_timestamps(&mut findings, doc, file);
    findings
}

/// `promotion` is an object exactly while `materialization` is `promoting` (003 "Format,
/// materialization, approval, and promotion"). v1 has neither field.
fn check_promotion(findings: &mut Vec<Finding>, doc: &State, file: &str) {
    let Some(materialization) = doc.materialization else {
        return;
    };
    let promoting = materialization == Materialization::Promoting;
    let has_promotion = doc.promotion.value().is_some();
    if promoting != has_promotion {
        let message = if promoting {
            "materialization is promoting but there is no promotion record".to_owned()
        } else {
            format!("a promotion record is present but materialization is {materialization}")
        };
        findings.push(Finding::error(Code::PromotionState, file, message).at("$.promotion"));
    }
}

fn check_locators(findings: &mut Vec<Finding>, doc: &State, file: &str) {
    // Locators that each agree with their task's id, the ids being 1..N, cannot repeat: distinct
    // ids are written as distinct numbers. The set of locators seen is kept only otherwise (a
    // 10,000-task state: 10,000 hashed strings, each time a writer checks its input and output).
    let ids_in_order = (1..).zip(&doc.tasks).all(|(id, task)| task.id == id);
    let may_repeat = !ids_in_order
        || doc.tasks.iter().any(|task| {
            task.locator_value()
                .is_some_and(|value| !locator_agrees(value, task.id))
        });
    let mut seen: HashMap<&str, u64> = HashMap::new();
    // During a promotion, tasks move from inline to file: either kind is legitimate.
    let promoting = doc.materialization == Some(Materialization::Promoting);
    for (index, task) in doc.tasks.iter().enumerate() {
        let field = if task.locator.is_some() {
            "locator.value"
        } else {
            "file"
        };
        let path = || format!("$.tasks[{index}].{field}");
        let Some(value) = task.locator_value() else {
            continue;
        };
        if let Some(first) = may_repeat.then(|| seen.insert(value, task.id)).flatten() {
            findings.push(
                Finding::error(
                    Code::DuplicateLocator,
                    file,
                    format!("`{value}` also locates task {first}"),
                )
                .at(path())
                .task(task.id),
            );
        }
        if !locator_agrees(value, task.id) {
            findings.push(
                Finding::error(
                    Code::LocatorId,
                    file,
                    format!(
                        "`{value}` does not locate task {id} (expected `#task-{id}` or `{id}.task_<slug>.md`)",
                        id = task.id
                    ),
                )
                .at(path())
                .task(task.id),
            );
        }
        if let (Some(locator), Some(format), false) = (&task.locator, doc.format, promoting) {
            let expected = match format {
                PlanFormat::Lite => LocatorKind::Inline,
                PlanFormat::Full => LocatorKind::File,
            };
            if locator.kind != expected {
                findings.push(
                    Finding::error(
                        Code::LocatorFormat,
                        file,
                        format!(
                            "is {} but a {format} plan locates tasks {}",
                            locator.kind,
                            if expected == LocatorKind::Inline {
                                "inline (`#task-N`)"
                            } else {
                                "by file"
                            }
                        ),
                    )
                    .at(format!("$.tasks[{index}].locator.kind"))
                    .task(task.id),
                );
            }
        }
    }
}

/// Whether a locator names task `id`: `#task-{id}`, or a file `{id}.task_<slug>.md`.
fn locator_agrees(value: &str, id: u64) -> bool {
    match value.strip_prefix("#task-") {
        Some(number) => after_id(number, id) == Some(""),
        None => after_id(value, id).is_some_and(|rest| rest.starts_with(".task_")),
    }
}

/// What follows `text`'s leading decimal number when that number is written exactly as `id`
/// is (no sign, no leading zero); `None` otherwise.
fn after_id(text: &str, id: u64) -> Option<&str> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, rest) = text.split_at(digits);
    let canonical = number == "0" || !number.starts_with('0');
    (canonical && number.parse::<u64>().ok() == Some(id)).then_some(rest)
}

fn check_status(findings: &mut Vec<Finding>, doc: &State, file: &str) {
    let derived = doc.derived_status();
    if doc.status != derived {
        findings.push(
            Finding::error(
                Code::StatusNotDerived,
                file,
                format!(
                    "is {} but the tasks and blocker make it {derived}",
                    doc.status
                ),
            )
            .at("$.status"),
        );
    }
    if let Some(blocker) = doc.blocked.value() {
        let task_status = doc.task(blocker.task).map(|t| t.status);
        if task_status != Some(TaskStatus::Blocked) {
            let what = match task_status {
                Some(status) => format!("task {} is {status}", blocker.task),
                None => format!("there is no task {}", blocker.task),
            };
            findings.push(
                Finding::error(
                    Code::BlockerTask,
                    file,
                    format!(
                        "names task {} but {what}; an active blocker names a blocked task",
                        blocker.task
                    ),
                )
                .at("$.blocked.task")
                .task(blocker.task),
            );
        }
    }
    if let Some(checkpoint) = doc.checkpoint.value()
        && doc.task(checkpoint.task).is_none()
    {
        findings.push(
            Finding::error(
                Code::CheckpointTask,
                file,
                format!("names task {} which does not exist", checkpoint.task),
            )
            .at("$.checkpoint.task"),
        );
    }
    if doc.status == PlanStatus::Completed {
        let last = doc.tasks.last().map_or(0, |t| t.id);
        let terminal = doc
            .checkpoint
            .value()
            .is_some_and(|c| c.task == last && c.step.as_deref() == Some("done"));
        if !terminal {
            findings.push(
                Finding::error(
                    Code::TerminalCheckpoint,
                    file,
                    format!("a completed plan's checkpoint must be {{\"task\": {last}, \"step\": \"done\"}}"),
                )
                .at("$.checkpoint")
                .hint("publish the plan with `dwp finalize PLAN`"),
            );
        }
    }
}

fn check_timestamps(findings: &mut Vec<Finding>, doc: &State, file: &str) {
    let fixed = |path: &'static str| move || path.to_owned();
    timestamp(findings, file, fixed("$.updated_at"), &doc.updated_at, None);
    if let Some(checkpoint) = doc.checkpoint.value() {
        timestamp(
            findings,
            file,
            fixed("$.checkpoint.at"),
            &checkpoint.at,
            None,
        );
    }
    if let Some(blocker) = doc.blocked.value() {
        let since = fixed("$.blocked.since");
        timestamp(findings, file, since, &blocker.since, Some(blocker.task));
    }
    for (index, task) in doc.tasks.iter().enumerate() {
        let at = |field: &'static str| move || format!("$.tasks[{index}].{field}");
        if let Some(t) = &task.started_at {
            timestamp(findings, file, at("started_at"), t, Some(task.id));
        }
        if let Some(t) = &task.completed_at {
            timestamp(findings, file, at("completed_at"), t, Some(task.id));
        }
        for (g, gate) in task.gates().iter().enumerate() {
            let path = || format!("$.tasks[{index}].gates[{g}].last_run");
            timestamp(findings, file, path, &gate.last_run, Some(task.id));
        }
    }
}

/// A finding when `text` is not an RFC 3339 date-time; `path` is spelled only then (a large
/// state has thousands of valid ones).
fn timestamp(
    findings: &mut Vec<Finding>,
    file: &str,
    path: impl FnOnce() -> String,
    text: &str,
    task: Option<u64>,
) {
    if parse_rfc3339(text).is_none() {
        let mut finding = Finding::error(
            Code::Timestamp,
            file,
            format!("`{text}` is not an RFC 3339 date-time (e.g. 2026-06-09T14:00:00Z)"),
        )
        .at(path());
        finding.task = task;
        findings.push(finding);
    }
}

/// Invariants between a plan's folder, manifest and state. `folder` is the plan folder's name.
pub fn check_identity(
    folder: Option<&str>,
    manifest: Option<&Loaded<Manifest>>,
    state: Option<&Loaded<State>>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let identity = |file: &str, path: &str, message: String| {
        Finding::error(Code::PlanIdentity, file, message).at(path)
    };
    if let (Some(folder), Some(m)) = (folder, manifest)
        && m.doc.name != folder
    {
        findings.push(identity(
            &m.file,
            "$.name",
            format!("is `{}` but the plan folder is `{folder}`", m.doc.name),
        ));
    }
    if let (Some(folder), Some(s)) = (folder, state)
        && s.doc.plan != folder
    {
        findings.push(identity(
            &s.file,
            "$.plan",
            format!("is `{}` but the plan folder is `{folder}`", s.doc.plan),
        ));
    }
    if let (Some(m), Some(s)) = (manifest, state)
        && m.doc.plan_format == Some(PlanFormat::Full)
        && s.doc.format == Some(PlanFormat::Lite)
    {
        findings.push(
            Finding::error(
                Code::FormatDemoted,
                &s.file,
                "is lite but the manifest was created full: a plan promotes lite to full, never back",
            )
            .at("$.format"),
        );
    }
    if let (Some(m), Some(s)) = (manifest, state) {
        if m.doc.name != s.doc.plan && folder.is_none() {
            findings.push(identity(
                &s.file,
                "$.plan",
                format!(
                    "is `{}` but the manifest names `{}`",
                    s.doc.plan, m.doc.name
                ),
            ));
        }
        if m.generation != s.generation {
            findings.push(
                Finding::error(
                    Code::GenerationPair,
                    &s.file,
                    format!(
                        "is a v{} state but the manifest is v{}; a v{} state pairs with a v{} manifest",
                        s.generation.number(),
                        m.generation.number(),
                        s.generation.number(),
                        s.generation.number()
                    ),
                )
                .at("$.schema")
                .hint("restore the document that changed from the plan's history (a v1 pair converts with `dwp migrate PLAN --to v5`)"),
            );
        }
    }
    findings
}

/// A validated plan folder: its findings, and the documents that loaded, so a caller that goes
/// on to check more (`verify`) judges the same ones.
pub struct PlanValidation<'a> {
    pub summary: String,
    pub findings: Vec<Finding>,
    pub manifest: Option<&'a Loaded<Manifest>>,
    pub state: Option<&'a Loaded<State>>,
}

/// Validate a plan folder: both documents, their invariants and the plan's identity.
pub fn validate_plan(plan: &LoadedPlan) -> PlanValidation<'_> {
    let paths = &plan.paths;
    let mut findings = Vec::new();
    let missing = |path: &Path| plan.place(path) == crate::store::Place::Missing;
    if missing(&paths.manifest) && missing(&paths.state) {
        let finding = Finding::error(
            Code::Unreadable,
            paths.dir.display().to_string(),
            "holds neither manifest.json nor state.json: not a materialized plan folder",
        )
        .hint("materialize the plan with `dwp init PLAN`");
        return PlanValidation {
            summary: String::new(),
            findings: vec![finding],
            manifest: None,
            state: None,
        };
    }
    let manifest = collect(&mut findings, plan.manifest(), check_manifest);
    let state = collect(&mut findings, plan.state(), check_state);
    let folder = paths.folder_name();
    findings.extend(check_identity(folder.as_deref(), manifest, state));
    let mut parts = Vec::new();
    if let Some(m) = &manifest {
        parts.push(format!("manifest v{}", m.generation.number()));
    }
    if let Some(s) = &state {
        parts.push(format!(
            "state v{}, {} tasks, {}/{} completed, {}",
            s.generation.number(),
            s.doc.tasks.len(),
            s.doc.completed_count,
            s.doc.task_count,
            s.doc.status
        ));
    }
    let name = folder.unwrap_or_else(|| paths.dir.display().to_string());
    PlanValidation {
        summary: format!("{name}: {}", parts.join("; ")),
        findings,
        manifest,
        state,
    }
}

/// Keep a loaded document after adding its invariant findings, or keep its load findings.
pub fn collect<'a, T>(
    findings: &mut Vec<Finding>,
    loaded: Result<&'a Loaded<T>, &[Finding]>,
    check: fn(&Loaded<T>) -> Vec<Finding>,
) -> Option<&'a Loaded<T>> {
    match loaded {
        Ok(doc) => {
            findings.extend(check(doc));
            Some(doc)
        }
        Err(found) => {
            findings.extend_from_slice(found);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{after_id, check_document};
    use crate::findings::Code;

    fn codes_of(state: &crate::plan::model::State) -> Vec<Code> {
        check_document(state, "state.json")
            .into_iter()
            .map(|f| f.code)
            .collect()
    }

    /// DWP023, a locator naming two tasks, in both shapes a repeat can take: a locator that does
    /// not agree with its own task reusing another's, and two tasks with one id whose locators
    /// both agree with it (the set of locators seen may be skipped only when neither can be).
    #[test]
    fn a_repeated_locator_is_found_whether_or_not_it_agrees_with_its_id() {
        let plan = crate::synth::SynthPlan::new("PLAN_invariants_test", 4);
        let clean = plan.state();
        assert!(codes_of(&clean).is_empty(), "{:?}", codes_of(&clean));

        let mut reused = clean.clone();
        let second = reused.tasks[1].locator.clone();
        reused.tasks[2].locator = second;
        let codes = codes_of(&reused);
        assert!(codes.contains(&Code::DuplicateLocator), "{codes:?}");

        let mut same_id = clean.clone();
        same_id.tasks[2] = same_id.tasks[1].clone();
        let codes = codes_of(&same_id);
        assert!(codes.contains(&Code::TaskIds), "{codes:?}");
        assert!(codes.contains(&Code::DuplicateLocator), "{codes:?}");
    }

    /// A locator agrees with its task only when it spells the id exactly as the id is written
    /// (DWP024: a locator names its own task): no leading zero, no sign, no other number.
    #[test]
    fn a_locator_number_is_the_id_spelled_exactly() {
        assert_eq!(after_id("7", 7), Some(""));
        assert_eq!(after_id("7.task_x.md", 7), Some(".task_x.md"));
        assert_eq!(after_id("12", 12), Some(""));
        for (text, id) in [
            ("07", 7),
            ("+7", 7),
            ("70", 7),
            ("", 7),
            ("x7", 7),
            ("7", 8),
        ] {
            assert_eq!(after_id(text, id), None, "{text:?} for {id}");
        }
    }
}
