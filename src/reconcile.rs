//! Reconciliation: the markdown is the source of truth and `state.json` its projection.
//!
//! [`compare`] is the one desync rule, shared by `dwp reconcile`, `dwp status` and `dwp verify`:
//! every disagreement task by task, with its direction. [`regenerate`] derives a new state from
//! the markdown (boxes and task logs), keeping what the markdown does not record (gate records,
//! outcomes, commits of tasks whose status did not change) and inventing no evidence.
//! [`reconcile`] runs the check, or with `write` the regeneration under the lock, durably, with
//! one dated entry appended to PROGRESS.md.

use crate::clock;
use crate::error::{Error, Result};
use crate::findings::{Code, Finding};
use crate::markdown::{self, Marker, PlanStatusValue, Readme, TaskRecord};
use crate::model::{
    Field, Gate, Locator, LocatorKind, PlanFormat, PlanStatus, State, Task, TaskStatus,
};
use crate::plan::{self, Loaded};
use crate::store;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A plan's markdown: the README and every task record it indexes.
#[derive(Debug, Clone)]
pub struct PlanMarkdown {
    pub readme_path: PathBuf,
    pub readme: Readme,
    /// Task records by id: Full task files, or Lite inline sections.
    pub records: BTreeMap<u64, (PathBuf, TaskRecord)>,
    /// Task files the index names that could not be read.
    pub unreadable: Vec<Unreadable>,
    /// The `N.task_*.md` files of the plan folder, sorted (listed once, for every rule that
    /// needs the folder's inventory).
    pub task_files: Vec<String>,
}

/// What every rule and writer hints for an item of the task list dwp cannot read (DWP049).
pub const UNREADABLE_ITEM_HINT: &str = "write it as `- [ ] Task N: Title` (see docs/plan-markdown.md), or move it out of the task list";

/// What every rule hints for an index not 1..N in order (DWP045).
pub const ORDER_HINT: &str = "number the README's task list 1..N in order (the markdown is the source), then `dwp verify` again";

impl PlanMarkdown {
    /// The task file of an index entry: the file its line links, else the folder's one
    /// `N.task_*.md` of its number.
    pub fn task_file(&self, entry: &markdown::IndexEntry) -> Option<String> {
        linked_file(&entry.links)
            .or_else(|| file_numbered(&self.task_files, entry.id))
            .map(str::to_owned)
    }

    /// The title of an index entry: the line's, else its record's heading.
    pub fn title(&self, entry: &markdown::IndexEntry) -> Option<String> {
        entry.title.clone().or_else(|| {
            self.records
                .get(&entry.id)
                .and_then(|(_, r)| r.title.clone())
        })
    }

    /// [`PlanMarkdown::title`], or a refusal: a writer never invents a title.
    pub fn require_title(&self, entry: &markdown::IndexEntry) -> Result<String> {
        self.title(entry).ok_or_else(|| {
            Error::rejected(
                format!("{}:{}", self.readme_path.display(), entry.line),
                format!(
                    "task {} has no title: neither its index line nor its record's heading gives one",
                    entry.id
                ),
            )
            .with_hint(format!("write `Task {}: Title` on its index line", entry.id))
        })
    }

    /// A writer derives nothing from markdown it could not read whole: the first task file
    /// that could not be read stops it.
    pub fn require_readable(&self) -> Result<()> {
        let first = self
            .unreadable
            .iter()
            .find(|u| u.kind != UnreadableKind::Missing);
        match first {
            None => Ok(()),
            Some(u) => Err(Error::rejected(
                u.path.display().to_string(),
                format!(
                    "task {}'s file {}: dwp derives nothing from markdown it cannot read",
                    u.id, u.why
                ),
            )
            .with_hint(
                "make it a readable UTF-8 regular file of the plan folder, then run this again",
            )),
        }
    }

    /// A state is derived only from a task list read whole and numbered 1..N in order.
    pub fn check_index(&self) -> Result<()> {
        let place = self.readme_path.display().to_string();
        if let Some(problem) = self.readme.index_problems.first() {
            return Err(Error::rejected(
                format!("{place}:{}", problem.line),
                format!(
                    "{}: dwp derives no state from a task list it cannot read whole",
                    problem.message
                ),
            )
            .with_hint(UNREADABLE_ITEM_HINT));
        }
        let ids: Vec<u64> = self.readme.index.iter().map(|e| e.id).collect();
        let expected: Vec<u64> = (1..=ids.len() as u64).collect();
        if ids.is_empty() || ids != expected {
            return Err(Error::rejected(
                place,
                format!("the README index lists tasks {ids:?}, not 1..N in order: no state can be derived from it"),
            )
            .with_hint("fix the task list in README.md first; the markdown is the source of truth"));
        }
        Ok(())
    }
}

/// A task file the index names that could not be read.
#[derive(Debug, Clone)]
pub struct Unreadable {
    pub id: u64,
    pub path: PathBuf,
    pub why: String,
    pub kind: UnreadableKind,
}

/// Why a task file could not be read, as the rules weigh it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnreadableKind {
    /// Not there: the inventory's finding (DWP054).
    Missing,
    /// The path leads outside the plan folder (DWP055).
    Escapes,
    /// The OS refused the read (permissions...): nothing can be claimed either way.
    Refused,
    /// There, but not a readable UTF-8 regular file within the size limit.
    Invalid,
}

impl UnreadableKind {
    fn of(failure: &store::ReadFailure) -> Self {
        match failure {
            store::ReadFailure::Missing => UnreadableKind::Missing,
            store::ReadFailure::Escapes(_) => UnreadableKind::Escapes,
            failure if failure.is_unverifiable() => UnreadableKind::Refused,
            _ => UnreadableKind::Invalid,
        }
    }
}

/// The task file an index entry links to (Full), if any.
pub fn linked_file(links: &[String]) -> Option<&str> {
    links
        .iter()
        .map(|l| l.split('#').next().unwrap_or(l))
        .find(|l| l.ends_with(".md") && l.contains(".task_"))
}

/// The `N.task_*.md` files in the plan folder, sorted.
fn task_files_in(plan_dir: &Path) -> Vec<String> {
    store::list_dir(plan_dir, plan_dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| {
            n.contains(".task_")
                && n.ends_with(".md")
                && n.starts_with(|c: char| c.is_ascii_digit())
        })
        .collect()
}

/// The one task file of the folder numbered `id`, for an index item that names none.
fn file_numbered(files: &[String], id: u64) -> Option<&str> {
    let prefix = format!("{id}.task_");
    let mut found = files.iter().filter(|f| f.starts_with(&prefix));
    match (found.next(), found.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Read README.md and the task records it indexes (an index item without a link reads the
/// folder's one task file of its number). A README that cannot be read is an error naming it.
pub fn read_markdown(plan_dir: &Path) -> Result<PlanMarkdown> {
    load_markdown(plan_dir)
        .map_err(|failure| failure.into_error("read", &plan_dir.join("README.md")))
}

/// [`read_markdown`], with the README's read failure as it is, for the checker to weigh. Every
/// file is read strictly (UTF-8, a regular file inside the plan); a task file that cannot be
/// read is listed in [`PlanMarkdown::unreadable`], never skipped.
pub fn load_markdown(plan_dir: &Path) -> std::result::Result<PlanMarkdown, store::ReadFailure> {
    let readme_path = plan_dir.join("README.md");
    let text = store::read_text(&readme_path, plan_dir)?;
    let readme = markdown::parse_readme(&text);
    let mut records = BTreeMap::new();
    let mut unreadable = Vec::new();
    for record in &readme.inline_tasks {
        records
            .entry(record.id)
            .or_insert_with(|| (readme_path.clone(), record.clone()));
    }
    let task_files = task_files_in(plan_dir);
    let files = if readme.inline_tasks.is_empty() {
        task_files.as_slice()
    } else {
        &[]
    };
    let folder = store::PlanFolder::open(plan_dir)?;
    for entry in &readme.index {
        if records.contains_key(&entry.id) {
            continue;
        }
        let Some(file) = linked_file(&entry.links).or_else(|| file_numbered(files, entry.id))
        else {
            continue;
        };
        let path = plan_dir.join(file);
        match folder.read_text(&path) {
            // A file with no task heading is still the task's record: one that lacks every
            // section, which is what the section rules then report.
            Ok(text) => {
                let record = markdown::parse_task_file(&text)
                    .unwrap_or_else(|| markdown::TaskRecord::headless(entry.id));
                records.insert(entry.id, (path, record));
            }
            Err(failure) => unreadable.push(Unreadable {
                id: entry.id,
                why: failure.to_string(),
                kind: UnreadableKind::of(&failure),
                path,
            }),
        }
    }
    Ok(PlanMarkdown {
        readme_path,
        readme,
        records,
        unreadable,
        task_files,
    })
}

/// What kind of disagreement, with the direction in which the two sides disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DesyncKind {
    /// state.json says completed, the box is unchecked: the state is stale.
    StateAhead {
        state: TaskStatus,
    },
    /// The box is checked, state.json does not say completed.
    MarkdownAhead {
        state: TaskStatus,
    },
    TitleDrift {
        markdown: String,
        state: String,
    },
    MissingInState,
    MissingInMarkdown,
    /// The index lists tasks out of id order.
    OrderDrift {
        position: usize,
    },
    /// `Plan Status: X/N` disagrees with the boxes.
    PlanStatusCount {
        says: String,
        boxes: String,
    },
    /// `completed_count` disagrees with the checked boxes.
    CompletedCount {
        state: u64,
        boxes: u64,
    },
    /// A marker other than `[ ]`, `[x]`, `[X]`: read as not done.
    OddMarker {
        marker: String,
    },
    /// An item of the task list dwp cannot read as a task: nothing can be derived while it
    /// stands, since the reader may be missing a task.
    UnreadableIndexLine,
}

impl DesyncKind {
    /// The direction in words, as reports print it.
    pub fn direction(&self) -> &'static str {
        match self {
            DesyncKind::StateAhead { .. } => "state ahead",
            DesyncKind::MarkdownAhead { .. } => "markdown ahead",
            DesyncKind::TitleDrift { .. } => "title drift",
            DesyncKind::MissingInState => "missing in state",
            DesyncKind::MissingInMarkdown => "missing in markdown",
            DesyncKind::OrderDrift { .. } => "order drift",
            DesyncKind::PlanStatusCount { .. } => "plan status drift",
            DesyncKind::CompletedCount { .. } => "completed_count drift",
            DesyncKind::OddMarker { .. } => "odd marker",
            DesyncKind::UnreadableIndexLine => "unreadable index line",
        }
    }

    pub fn code(&self) -> Code {
        match self {
            DesyncKind::StateAhead { .. } => Code::StateAhead,
            DesyncKind::MarkdownAhead { .. } => Code::MarkdownAhead,
            DesyncKind::TitleDrift { .. } => Code::TitleDrift,
            DesyncKind::MissingInState => Code::MissingInState,
            DesyncKind::MissingInMarkdown => Code::MissingInMarkdown,
            DesyncKind::OrderDrift { .. } => Code::OrderDrift,
            DesyncKind::PlanStatusCount { .. } => Code::PlanStatusCount,
            DesyncKind::CompletedCount { .. } => Code::CompletedCountDrift,
            DesyncKind::OddMarker { .. } => Code::OddMarker,
            DesyncKind::UnreadableIndexLine => Code::UnreadableIndexLine,
        }
    }
}

/// One disagreement between the markdown and the state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Desync {
    pub task: Option<u64>,
    pub direction: &'static str,
    #[serde(flatten)]
    pub kind: DesyncKind,
    /// README line where the markdown side stands.
    pub line: Option<usize>,
    pub message: String,
}

impl Desync {
    fn new(task: Option<u64>, line: Option<usize>, kind: DesyncKind, message: String) -> Desync {
        Desync {
            task,
            direction: kind.direction(),
            kind,
            line,
            message,
        }
    }

    /// The same disagreement as a finding of `readme` (for `verify`).
    pub fn finding(&self, readme: &str) -> Finding {
        let mut finding = Finding::error(self.kind.code(), readme, self.message.clone())
            .hint("the markdown wins: `dwp reconcile --write` regenerates state.json from it");
        finding.line = self.line;
        finding.task = self.task;
        match &self.kind {
            DesyncKind::OddMarker { .. } => finding.hint = Some("use `[ ]` or `[x]`".into()),
            DesyncKind::UnreadableIndexLine => finding.hint = Some(UNREADABLE_ITEM_HINT.into()),
            DesyncKind::OrderDrift { .. } => finding.hint = Some(ORDER_HINT.into()),
            DesyncKind::PlanStatusCount { boxes, .. } => {
                finding.hint = Some(format!(
                    "write `Plan Status: {boxes} completed` in the README's task list, then `dwp verify` again"
                ))
            }
            _ => {}
        }
        finding
    }
}

/// Every disagreement between the markdown and `state`, task by task, with its direction.
pub fn compare(md: &PlanMarkdown, state: &State) -> Vec<Desync> {
    compare_with(md, Some(state))
}

/// What the markdown gets wrong on its own, with no state to compare (a markdown-only plan):
/// odd markers, an index not 1..N in order, unreadable index items, the Plan Status line.
pub fn markdown_desync(md: &PlanMarkdown) -> Vec<Desync> {
    compare_with(md, None)
}

fn compare_with(md: &PlanMarkdown, state: Option<&State>) -> Vec<Desync> {
    let readme = &md.readme;
    let mut found: Vec<Desync> = readme
        .index_problems
        .iter()
        .map(|p| {
            Desync::new(
                p.task,
                Some(p.line),
                DesyncKind::UnreadableIndexLine,
                p.message.clone(),
            )
        })
        .collect();
    if readme.index.is_empty() && readme.index_problems.is_empty() {
        found.push(Desync::new(
            None,
            readme.task_list_line,
            DesyncKind::UnreadableIndexLine,
            "the README has no task list dwp can read: no `- [ ] Task N: Title` item".into(),
        ));
    }
    // While the task list cannot be read whole, its counts are not claims dwp can make.
    let whole = readme.index_problems.is_empty();
    for (position, entry) in readme.index.iter().enumerate() {
        if let Marker::Other(marker) = &entry.marker {
            found.push(Desync::new(
                Some(entry.id),
                Some(entry.line),
                DesyncKind::OddMarker {
                    marker: marker.clone(),
                },
                format!(
                    "task {} is marked {marker}: only [ ], [x], [X] are markers; read as not done",
                    entry.id
                ),
            ));
        }
        let expected = position as u64 + 1;
        let out_of_order = position > 0 && readme.index[position - 1].id >= entry.id;
        if out_of_order || (state.is_none() && entry.id != expected) {
            let message = if out_of_order {
                format!(
                    "task {} follows task {} in the README index: the index lists tasks 1..N in order",
                    entry.id,
                    readme.index[position - 1].id
                )
            } else {
                format!(
                    "the README index lists task {} where task {expected} belongs: the index lists tasks 1..N in order",
                    entry.id
                )
            };
            found.push(Desync::new(
                Some(entry.id),
                Some(entry.line),
                DesyncKind::OrderDrift { position },
                message,
            ));
        }
        if let Some(state) = state {
            compare_entry(entry, state, &mut found);
        }
    }
    if let Some(state) = state {
        // A task an unreadable line names is that line's finding, not a missing one.
        let indexed: std::collections::HashSet<u64> = readme
            .index
            .iter()
            .map(|e| e.id)
            .chain(readme.index_problems.iter().filter_map(|p| p.task))
            .collect();
        for task in &state.tasks {
            if !indexed.contains(&task.id) {
                found.push(Desync::new(
                    Some(task.id),
                    readme.index_line.or(readme.task_list_line),
                    DesyncKind::MissingInMarkdown,
                    format!(
                        "task {} is in state.json but not in the README index",
                        task.id
                    ),
                ));
            }
        }
    }
    found.extend(plan_status_desync(readme).filter(|d| {
        whole || !matches!(&d.kind, DesyncKind::PlanStatusCount { says, .. } if says != "nothing")
    }));
    let (boxes_done, _) = readme.box_counts();
    if let Some(state) = state
        && whole
        && state.completed_count != boxes_done
    {
        found.push(Desync::new(
            None,
            readme.plan_status.as_ref().map(|s| s.line),
            DesyncKind::CompletedCount {
                state: state.completed_count,
                boxes: boxes_done,
            },
            format!(
                "completed_count is {} but {boxes_done} boxes are checked",
                state.completed_count
            ),
        ));
    }
    found
}

/// One index entry against its state task: missing, state ahead, markdown ahead, title drift.
fn compare_entry(entry: &markdown::IndexEntry, state: &State, found: &mut Vec<Desync>) {
    let Some(task) = state.task(entry.id) else {
        found.push(Desync::new(
            Some(entry.id),
            Some(entry.line),
            DesyncKind::MissingInState,
            format!(
                "task {} is in the README index but not in state.json",
                entry.id
            ),
        ));
        return;
    };
    let done = entry.marker.is_done();
    let completed = task.status == TaskStatus::Completed;
    if completed && !done {
        found.push(Desync::new(
            Some(entry.id),
            Some(entry.line),
            DesyncKind::StateAhead { state: task.status },
            format!(
                "state.json says task {} is completed, its box is unchecked (the state is stale)",
                entry.id
            ),
        ));
    } else if done && !completed {
        found.push(Desync::new(
            Some(entry.id),
            Some(entry.line),
            DesyncKind::MarkdownAhead { state: task.status },
            format!(
                "task {}'s box is checked, state.json says {}",
                entry.id, task.status
            ),
        ));
    }
    // A line that gives no title claims none: nothing to compare.
    if let Some(title) = &entry.title
        && !same_title(title, &task.title)
    {
        found.push(Desync::new(
            Some(entry.id),
            Some(entry.line),
            DesyncKind::TitleDrift {
                markdown: title.clone(),
                state: task.title.clone(),
            },
            format!(
                "task {} is titled \"{title}\" in the README, \"{}\" in state.json",
                entry.id, task.title
            ),
        ));
    }
}

/// The README's `Plan Status: X/N` against its boxes: absent, or a different count.
/// `materializing` is not a count; `dwp verify` reports it as a partial materialization.
fn plan_status_desync(readme: &Readme) -> Option<Desync> {
    let (done, total) = readme.box_counts();
    let boxes = format!("{done}/{total}");
    let Some(status) = &readme.plan_status else {
        return Some(Desync::new(
            None,
            readme.task_list_line.or(readme.index_line),
            DesyncKind::PlanStatusCount {
                says: "nothing".into(),
                boxes: boxes.clone(),
            },
            format!("the README has no `Plan Status: X/N` line (the boxes say {boxes})"),
        ));
    };
    let says = match &status.value {
        PlanStatusValue::Count { done: d, total: t } => {
            (*d != done || *t != total).then(|| format!("{d}/{t}"))
        }
        PlanStatusValue::Materializing => None,
        PlanStatusValue::Other(text) => Some(text.clone()),
    }?;
    Some(Desync::new(
        None,
        Some(status.line),
        DesyncKind::PlanStatusCount {
            says: says.clone(),
            boxes: boxes.clone(),
        },
        format!("Plan Status says {says} but the boxes say {boxes}"),
    ))
}

/// Titles agree when they agree after [`markdown::normalize_title`] on both sides.
pub fn same_title(markdown: &str, state: &str) -> bool {
    markdown::normalize_title(markdown) == markdown::normalize_title(state)
}

/// A task's status as the markdown records it. The box decides done or not done, and that is
/// all [`compare`] checks; so that a plan the check calls in sync is never rewritten, a state
/// status that agrees with the box is kept as it is (an in_progress or blocked task whose log
/// still reads `Status: pending` stays in_progress or blocked). Only a task the state calls
/// completed against an unchecked box, or a task the state lacks, takes its log's `Status:`
/// (pending, in_progress, blocked, skipped), else in_progress if it was started, else pending.
fn markdown_status(
    entry: &markdown::IndexEntry,
    record: Option<&TaskRecord>,
    current: Option<&Task>,
) -> TaskStatus {
    if entry.marker.is_done() {
        return TaskStatus::Completed;
    }
    if let Some(status) = current
        .map(|t| t.status)
        .filter(|s| *s != TaskStatus::Completed)
    {
        return status;
    }
    let started = current.is_some_and(|t| t.started_at.is_some());
    logged_open_status(record).unwrap_or(if started {
        TaskStatus::InProgress
    } else {
        TaskStatus::Pending
    })
}

/// A task's status in a plan without state: a checked box is completed; an unchecked one is
/// what its log's `Status:` line says (in progress, blocked, skipped), else pending.
pub fn markdown_only_status(
    entry: &markdown::IndexEntry,
    record: Option<&TaskRecord>,
) -> TaskStatus {
    if entry.marker.is_done() {
        return TaskStatus::Completed;
    }
    logged_open_status(record).unwrap_or(TaskStatus::Pending)
}

/// What a task log's `Status:` line records of a task not done (the box alone says done):
/// pending, in progress, blocked, skipped.
fn logged_open_status(record: Option<&TaskRecord>) -> Option<TaskStatus> {
    record
        .and_then(|r| r.log.as_ref())
        .and_then(markdown::TaskLog::status_word)
        .and_then(|word| word.parse::<TaskStatus>().ok())
        .filter(|s| *s != TaskStatus::Completed)
}

/// One change regeneration made, for the report and the PROGRESS.md entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub task: u64,
    pub direction: &'static str,
    pub what: String,
}

/// How a regeneration may change the task inventory.
#[derive(Debug, Clone, Default)]
pub struct Regeneration {
    /// Task ids found in git (`--git`): their commit hashes.
    pub commits: BTreeMap<u64, String>,
    /// Tasks the caller allows to leave state.json although they carry evidence or a
    /// completed status (`--drop-task N`).
    pub drop: BTreeSet<u64>,
    /// Every box checked may complete the plan: only when a plan is first materialized from
    /// markdown that records it done (`dwp init`).
    pub allow_completion: bool,
}

/// Derive the state the markdown records. Keeps gate records, outcomes and commits of tasks
/// whose status did not change; a completed task takes `completed_at` from its log's
/// `Timestamp:` and, where the state has no gate record, one from its log's `Gate record:`.
///
/// Refuses (and derives nothing) where the markdown cannot be read with certainty: an index
/// that is not 1..N, an item of the task list that is not a readable task, a task with no
/// title anywhere; and where the derived state would drop a task that carries evidence
/// (gate records, an outcome, a commit) or a completed status, unless `rules.drop` names it.
pub fn regenerate(
    md: &PlanMarkdown,
    current: &State,
    now: &str,
    rules: &Regeneration,
) -> Result<(State, Vec<Change>)> {
    let readme = &md.readme;
    let place = md.readme_path.display().to_string();
    md.check_index()?;
    let ids: Vec<u64> = readme.index.iter().map(|e| e.id).collect();
    refuse_lossy_drop(md, current, &rules.drop)?;
    refuse_moved_evidence(md, current)?;
    let mut next = current.clone();
    let mut changes = Vec::new();
    let mut tasks = Vec::with_capacity(readme.index.len());
    for entry in &readme.index {
        tasks.push(derive_task(md, entry, current, now, rules, &mut changes)?);
    }
    next.tasks = tasks;
    let indexed: std::collections::HashSet<u64> = ids.iter().copied().collect();
    for task in &current.tasks {
        if !indexed.contains(&task.id) {
            let what = match carried(task) {
                Some(evidence) => format!("removed with --drop-task: it carried {evidence}"),
                None => "removed: the README index no longer lists it".into(),
            };
            changes.push(Change {
                task: task.id,
                direction: "missing in markdown",
                what,
            });
        }
    }
    next.task_count = next.tasks.len() as u64;
    next.completed_count = next.completed_tasks();
    if let Some(blocker) = next.blocked.value()
        && next
            .task(blocker.task)
            .is_none_or(|t| t.status != TaskStatus::Blocked)
    {
        next.blocked = Field::Null;
    }
    if next
        .checkpoint
        .value()
        .is_some_and(|c| next.task(c.task).is_none())
    {
        next.checkpoint = Field::Null;
    }
    next.status = next.derived_status();
    if next.status == PlanStatus::Completed && current.status != PlanStatus::Completed {
        if !rules.allow_completion {
            return Err(Error::rejected(
                &place,
                "every box is checked: completing the plan is publication, which `dwp finalize` owns",
            )
            .with_hint("publish with `dwp finalize PLAN`"));
        }
        let last = next.tasks.last().map_or(0, |t| t.id);
        next.checkpoint = Field::Value(crate::model::Checkpoint {
            task: last,
            step: Some("done".into()),
            at: now.to_owned(),
            note: Some("every box of the README was checked when the plan was materialized".into()),
        });
    }
    if next != *current {
        next.updated_at = now.to_owned();
    }
    Ok((next, changes))
}

/// The evidence a task carries that a write must not lose: a completed status, gate records,
/// an outcome, a commit (`None`: nothing).
fn carried(task: &Task) -> Option<String> {
    let mut parts = Vec::new();
    if task.status == TaskStatus::Completed {
        parts.push("a completed status".to_owned());
    }
    match task.gates().len() {
        0 => {}
        1 => parts.push("1 gate record".into()),
        n => parts.push(format!("{n} gate records")),
    }
    if task.outcome.is_some() {
        parts.push("an outcome".into());
    }
    if let Some(commit) = &task.commit {
        parts.push(format!("commit {commit}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A task of the state that the README index does not list leaves state.json on a write; when
/// it carries evidence, that is refused unless the caller names it (the reader may have missed
/// a line it does not understand, and evidence is never dropped by accident).
fn refuse_lossy_drop(md: &PlanMarkdown, current: &State, allowed: &BTreeSet<u64>) -> Result<()> {
    let indexed: std::collections::HashSet<u64> = md.readme.index.iter().map(|e| e.id).collect();
    let at_risk: Vec<(u64, String)> = current
        .tasks
        .iter()
        .filter(|t| !indexed.contains(&t.id) && !allowed.contains(&t.id))
        .filter_map(|t| Some((t.id, carried(t)?)))
        .collect();
    let Some((first, evidence)) = at_risk.first() else {
        return Ok(());
    };
    let others = match at_risk.len() {
        1 => String::new(),
        n => format!(
            " (and {} more: tasks {})",
            n - 1,
            at_risk[1..]
                .iter()
                .map(|(id, _)| id.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(Error::rejected(
        md.readme_path.display().to_string(),
        format!("task {first} is in state.json with {evidence} but not in the README index{others}: a write would drop it"),
    )
    .with_hint(format!(
        "restore task {first}'s line in the README's task list, or drop it deliberately with `--drop-task {first}` (recorded in PROGRESS.md)"
    )))
}

/// A Full task carrying evidence whose index line now links another task file: the tasks were
/// renumbered, and a write would hand one task's evidence to another.
fn refuse_moved_evidence(md: &PlanMarkdown, current: &State) -> Result<()> {
    for entry in &md.readme.index {
        let Some(task) = current.task(entry.id) else {
            continue;
        };
        let (Some(linked), Some(locator)) = (linked_file(&entry.links), task.locator_value())
        else {
            continue;
        };
        if linked == locator || locator.starts_with('#') {
            continue;
        }
        if let Some(evidence) = carried(task) {
            return Err(Error::rejected(
                format!("{}:{}", md.readme_path.display(), entry.line),
                format!("task {} is `{locator}` in state.json, with {evidence}, but its index line links `{linked}`: a write would give its evidence to another task", entry.id),
            )
            .with_hint(format!("if the tasks were renumbered, give task {} its number back in the README; if its file was renamed, link `{locator}` again", entry.id)));
        }
    }
    Ok(())
}

/// The state task for one index entry: the existing one brought in line with the markdown, or
/// a new one.
fn derive_task(
    md: &PlanMarkdown,
    entry: &markdown::IndexEntry,
    current: &State,
    now: &str,
    rules: &Regeneration,
    changes: &mut Vec<Change>,
) -> Result<Task> {
    let record = md.records.get(&entry.id).map(|(_, r)| r);
    let existing = current.task(entry.id);
    let status = markdown_status(entry, record, existing);
    let mut task = match existing {
        Some(task) => task.clone(),
        None => {
            changes.push(Change {
                task: entry.id,
                direction: "missing in state",
                what: "added from the README index".into(),
            });
            new_task(md, entry, current)?
        }
    };
    if let Some(title) = &entry.title
        && !same_title(title, &task.title)
    {
        changes.push(Change {
            task: entry.id,
            direction: "title drift",
            what: format!("title \"{}\" → \"{title}\"", task.title),
        });
        task.title = title.clone();
    }
    if task.status != status {
        let direction = if status == TaskStatus::Completed {
            "markdown ahead"
        } else if task.status == TaskStatus::Completed {
            "state ahead"
        } else {
            "status drift"
        };
        changes.push(Change {
            task: entry.id,
            direction,
            what: format!("{} → {status}", task.status),
        });
        apply_status(&mut task, status, record, now, changes);
    }
    if task.status == TaskStatus::Completed
        && task.commit.is_none()
        && let Some(commit) = rules.commits.get(&entry.id)
    {
        task.commit = Some(commit.clone());
        changes.push(Change {
            task: entry.id,
            direction: "markdown ahead",
            what: format!("commit {commit} from git"),
        });
    }
    Ok(task)
}

/// A task the state lacks: its locator from the index (Full: the linked task file, or the
/// folder's one file of its number; Lite: `#task-N`), its title from the index line, else from
/// its record's heading (`# Task N: Title`).
fn new_task(md: &PlanMarkdown, entry: &markdown::IndexEntry, current: &State) -> Result<Task> {
    let lite = current.format == Some(PlanFormat::Lite);
    let value = match (lite, md.task_file(entry)) {
        (false, Some(file)) => file,
        _ => format!("#task-{}", entry.id),
    };
    let kind = if value.starts_with('#') {
        LocatorKind::Inline
    } else {
        LocatorKind::File
    };
    let title = md.require_title(entry)?;
    let v1 = current.format.is_none();
    Ok(Task {
        id: entry.id,
        file: v1.then(|| value.clone()),
        locator: (!v1).then_some(Locator { kind, value }),
        title,
        status: TaskStatus::Pending,
        started_at: None,
        completed_at: None,
        commit: None,
        gates: (!v1).then(Vec::new),
        outcome: None,
    })
}

fn apply_status(
    task: &mut Task,
    status: TaskStatus,
    record: Option<&TaskRecord>,
    now: &str,
    changes: &mut Vec<Change>,
) {
    let log = record.and_then(|r| r.log.as_ref());
    let logged_time = log
        .and_then(|l| l.timestamp.as_ref())
        .and_then(|t| log_timestamp(&t.value));
    task.status = status;
    if status == TaskStatus::Completed {
        let completed_at = logged_time.clone().unwrap_or_else(|| {
            changes.push(Change {
                task: task.id,
                direction: "markdown ahead",
                what: "the log records no Timestamp: completed_at is the reconciliation time"
                    .into(),
            });
            now.to_owned()
        });
        task.completed_at = Some(completed_at.clone());
        if task.gates().is_empty() {
            match log.and_then(|l| l.gate_record.as_ref()).and_then(|g| gate_from_log(&g.value, &completed_at)) {
                Some(gate) => {
                    changes.push(Change {
                        task: task.id,
                        direction: "markdown ahead",
                        what: format!("gate `{}` from the log's Gate record", gate.command),
                    });
                    task.gates.get_or_insert_with(Vec::new).push(gate);
                }
                None => changes.push(Change {
                    task: task.id,
                    direction: "markdown ahead",
                    what: "completed without evidence: the markdown records no gate (dwp verify will report it)".into(),
                }),
            }
        }
    } else {
        task.completed_at = None;
        if status == TaskStatus::InProgress
            && let Some(started) = logged_time
        {
            task.started_at.get_or_insert(started);
        }
    }
}

/// A log's `Timestamp:` as an RFC 3339 date-time: as written, or, written to the minute
/// (`2026-07-10T20:59+08:00`, as agents often do), with `:00` seconds added; the offset is
/// kept. Anything else records no time.
pub fn log_timestamp(value: &str) -> Option<String> {
    let value = value.trim().trim_matches('`');
    if clock::parse_rfc3339(value).is_some() {
        return Some(value.to_owned());
    }
    let (minutes, zone) = value.split_at_checked(16)?;
    let with_seconds = format!("{minutes}:00{zone}");
    clock::parse_rfc3339(&with_seconds).map(|_| with_seconds)
}

/// `Gate record: COMMAND → EVIDENCE` (or `->`), or the updater's `COMMAND|EXIT|EVIDENCE`.
/// Only what the log says is taken: the arrow form records no exit code (so `verify` will ask
/// for one), and evidence that counts failures (`3 failed`) is a failing record.
pub fn gate_from_log(text: &str, last_run: &str) -> Option<Gate> {
    let text = text.trim().trim_matches('`');
    if text.is_empty() {
        return None;
    }
    let mut pipes = text.splitn(3, '|');
    if let (Some(command), Some(exit), Some(evidence)) = (pipes.next(), pipes.next(), pipes.next())
        && let Ok(exit_code) = exit.trim().parse::<i64>()
    {
        return Some(Gate {
            command: command.trim().trim_matches('`').to_owned(),
            passes: exit_code == 0,
            exit_code: Some(exit_code),
            last_run: last_run.to_owned(),
            evidence: Some(evidence.trim().to_owned()),
        });
    }
    let (command, evidence) = text.split_once('→').or_else(|| text.split_once("->"))?;
    let (command, evidence) = (command.trim().trim_matches('`'), evidence.trim());
    (!command.is_empty() && !evidence.is_empty()).then(|| Gate {
        command: command.to_owned(),
        passes: !counts_failures(evidence),
        exit_code: None,
        last_run: last_run.to_owned(),
        evidence: Some(evidence.to_owned()),
    })
}

/// `3 failed`, `1 error`: a non-zero count of failures.
fn counts_failures(evidence: &str) -> bool {
    let lower = evidence.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|pair| {
        let count = pair[0].trim_matches(|c: char| !c.is_ascii_digit());
        let failing = [
            "failed", "failures", "failure", "errors", "error", "failing",
        ]
        .iter()
        .any(|w| pair[1].starts_with(w));
        failing
            && !count.is_empty()
            && count.bytes().any(|b| b != b'0')
            && pair[0].bytes().all(|b| b.is_ascii_digit())
    })
}

/// Commit hashes of commits whose message names `Task N of PLAN_name`, newest first wins.
pub fn git_commits(plan_dir: &Path, plan_name: &str) -> Result<BTreeMap<u64, String>> {
    // The plan's repository may carry configuration that runs programs (signature checks, a
    // pager): git runs defanged, as for every repository dwp reads.
    let output = crate::git::Git::open(plan_dir)
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
    pub git: bool,
    pub expected_sha256: Option<String>,
    pub wait: Duration,
    /// `--drop-task N`: tasks allowed to leave state.json with their evidence.
    pub drop: BTreeSet<u64>,
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
    pub old_sha256: String,
    /// sha256 of state.json on disk after the command (the old one unless it wrote).
    pub new_sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// README path, for findings and messages.
    #[serde(skip)]
    pub readme: String,
}

/// Check (and with `write`, regenerate) the plan at `target`.
pub fn reconcile(target: &Path, request: &ReconcileRequest) -> Result<ReconcileReport> {
    let (plan_dir, state_path) = crate::plan::resolve_target(target);
    let guard = if request.write {
        Some(crate::plan::lock_for_write(
            &plan_dir,
            &state_path,
            request.wait,
        )?)
    } else {
        None
    };
    if request.write {
        crate::plan::refuse_while_finalizing(&plan_dir)?;
    }
    // Invariant findings are what regeneration repairs; the schema must hold.
    let loaded: Loaded<State> = plan::load_state_for_write(&plan_dir, &state_path, false)?;
    if let Some(expected) = &request.expected_sha256
        && *expected != loaded.sha256
    {
        return Err(Error::SnapshotMoved {
            path: state_path.clone(),
            expected: expected.clone(),
            actual: loaded.sha256.clone(),
        });
    }
    let md = read_markdown(&plan_dir)?;
    md.require_readable()?;
    check_drops(&md, &loaded.doc, &request.drop, &state_path)?;
    let desync = compare(&md, &loaded.doc);
    let now = clock::now_rfc3339();
    let rules = Regeneration {
        commits: if request.git {
            git_commits(&plan_dir, &loaded.doc.plan)?
        } else {
            BTreeMap::new()
        },
        drop: request.drop.clone(),
        allow_completion: false,
    };
    // The check reports every disagreement even where no state can be derived (an index with a
    // gap, every box checked): only --write and --diff need the regenerated state.
    let regenerated = if request.write || request.diff {
        match regenerate(&md, &loaded.doc, &now, &rules) {
            Ok(result) => Some(result),
            Err(e) if request.write => return Err(e),
            Err(_) => None,
        }
    } else {
        None
    };
    let (next, changes) = regenerated.unwrap_or_else(|| (loaded.doc.clone(), Vec::new()));
    let bytes = if next == loaded.doc {
        loaded.bytes.clone()
    } else {
        store::canonical_bytes(&next)
    };
    let diff = request
        .diff
        .then(|| crate::update::unified_diff(&loaded.bytes, &bytes, &loaded.file))
        .filter(|d| !d.is_empty());
    let mut written = false;
    if request.write && bytes != loaded.bytes {
        plan::refuse_clock_behind(&loaded.doc, &loaded.file, &now)?;
        plan::check_before_write(&state_path, &bytes, "the regenerated state")?;
        // Two files, one intent record: a kill between them leaves the record, and the next
        // writer completes it, so the reconciliation is never without its PROGRESS.md entry.
        let mut write = store::intent::Transaction::new(&plan_dir, "dwp reconcile --write");
        write.replace(&state_path, Some(&loaded.bytes), &bytes)?;
        write.append(
            &plan_dir.join("PROGRESS.md"),
            &progress_entry(&now, &changes, &desync),
        )?;
        write.commit()?;
        written = true;
    }
    if let Some(guard) = guard {
        guard.release()?;
    }
    let remaining = if request.write {
        compare(&md, &next)
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
        old_sha256: loaded.sha256.clone(),
        new_sha256: store::sha256_hex(on_disk),
        diff,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_records_in_a_log_become_gates_without_inventing_failure_or_success() {
        let gate =
            gate_from_log("cargo test → 12 passed, 0 failed", "2026-06-09T15:00:00Z").unwrap();
        // The arrow form records no exit code: none is invented.
        assert_eq!(
            (gate.command.as_str(), gate.passes, gate.exit_code),
            ("cargo test", true, None)
        );
        let failing = gate_from_log("cargo test → 9 passed, 3 failed", "t").unwrap();
        assert!(!failing.passes);
        let piped = gate_from_log("pnpm test|1|3 failed", "2026-06-09T15:00:00Z").unwrap();
        assert_eq!((piped.passes, piped.exit_code), (false, Some(1)));
        assert!(gate_from_log("", "t").is_none());
        assert!(gate_from_log("ran the tests", "t").is_none());
    }

    #[test]
    fn log_timestamps_to_the_second_or_to_the_minute() {
        assert_eq!(
            log_timestamp("2026-06-09T15:00:00Z").as_deref(),
            Some("2026-06-09T15:00:00Z")
        );
        assert_eq!(
            log_timestamp("`2026-07-10T20:59+08:00`").as_deref(),
            Some("2026-07-10T20:59:00+08:00")
        );
        assert_eq!(
            log_timestamp("2026-07-10T20:59Z").as_deref(),
            Some("2026-07-10T20:59:00Z")
        );
        for unreadable in [
            "2026-07-10",
            "yesterday",
            "",
            "2026-07-10 20:59",
            "2026-07-10T2é:59Z",
        ] {
            assert_eq!(log_timestamp(unreadable), None, "{unreadable}");
        }
    }

    #[test]
    fn linked_files_are_task_files_only() {
        assert_eq!(linked_file(&["#task-1".into()]), None);
        assert_eq!(
            linked_file(&["docs/x.md".into(), "2.task_a.md".into()]),
            Some("2.task_a.md")
        );
    }
}
