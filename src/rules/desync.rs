//! The one desync rule (the markdown is the source of truth, `state.json` its projection):
//! [`compare`] lists every disagreement task by task with its direction, for `dwp reconcile`,
//! `dwp status` and `dwp verify`; [`markdown_desync`] judges a plan without a state.

use crate::findings::{Code, Finding};
use crate::plan::markdown::{self, Marker, PlanStatusValue, Readme, TaskRecord};
use crate::plan::model::{Approval, State, Task, TaskStatus};
use serde::Serialize;

use crate::plan::records::{PlanMarkdown, UNREADABLE_ITEM_HINT};
use crate::rules::conformance::Era;

/// What every rule hints for an index not 1..N in order (DWP045).
pub const ORDER_HINT: &str = "number the README's task list 1..N in order (the markdown is the source), then `dwp verify PLAN` again";

/// State ahead of the markdown: the box decides which way, and the person or agent knows.
pub const STATE_AHEAD_HINT: &str = "tick the box if the task is done: `dwp update PLAN --task N --status completed --tick`; otherwise `dwp reconcile PLAN --write` reopens it in state";

/// Every box checked while the state is not completed: completing the plan is publication.
pub const ALL_CHECKED_HINT: &str = "every box is checked, and completing the plan is publication: `dwp finalize PLAN` publishes it (a refusal lists what it still needs)";

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
    /// The README's Approval row records another approval than state.json's `approval`.
    ApprovalDrift {
        markdown: Approval,
        state: Approval,
    },
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
            DesyncKind::ApprovalDrift { .. } => "approval drift",
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
            DesyncKind::ApprovalDrift { .. } => Code::ApprovalDrift,
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
            .hint("the markdown wins: `dwp reconcile PLAN --write` regenerates state.json from it");
        finding.line = self.line;
        finding.task = self.task;
        match &self.kind {
            DesyncKind::OddMarker { .. } => finding.hint = Some("use `[ ]` or `[x]`".into()),
            DesyncKind::StateAhead { .. } => finding.hint = Some(STATE_AHEAD_HINT.into()),
            DesyncKind::MissingInMarkdown => {
                finding.hint = Some(
                    "put the task back in the README's task list, or let it go with `dwp reconcile PLAN --write --drop-task N`"
                        .into(),
                )
            }
            DesyncKind::UnreadableIndexLine => finding.hint = Some(UNREADABLE_ITEM_HINT.into()),
            DesyncKind::OrderDrift { .. } => finding.hint = Some(ORDER_HINT.into()),
            DesyncKind::PlanStatusCount { boxes, .. } => {
                finding.hint = Some(format!(
                    "write `Plan Status: {boxes} completed` in the README's task list, then `dwp verify PLAN` again"
                ))
            }
            _ => {}
        }
        finding
    }
}

/// Every disagreement between the markdown and `state`, task by task, with its direction; the
/// plan's era is its README's Standard line's, else its state's ([`compare_in`]).
pub fn compare(md: &PlanMarkdown, state: &State) -> Vec<Desync> {
    compare_in(md, state, Era::of(Some(state), declared(md)))
}

/// [`compare`] for a plan of `era` (verify's, which also falls back on the manifest's
/// `spec_version`): a legacy plan's progress count may be in its Plan Status / Notes section.
pub fn compare_in(md: &PlanMarkdown, state: &State, era: Era) -> Vec<Desync> {
    compare_with(md, Some(state), era)
}

/// What the markdown gets wrong on its own, with no state to compare (a markdown-only plan):
/// odd markers, an index not 1..N in order, unreadable index items, the Plan Status line.
pub fn markdown_desync(md: &PlanMarkdown) -> Vec<Desync> {
    markdown_desync_in(md, Era::of(None, declared(md)))
}

/// [`markdown_desync`] for a plan of `era`.
pub fn markdown_desync_in(md: &PlanMarkdown, era: Era) -> Vec<Desync> {
    compare_with(md, None, era)
}

/// The standard the README's Standard line declares.
fn declared(md: &PlanMarkdown) -> Option<&str> {
    md.readme.standard.as_ref().map(|s| s.version.as_str())
}

fn compare_with(md: &PlanMarkdown, state: Option<&State>, era: Era) -> Vec<Desync> {
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
    if let Some(state) = state {
        found.extend(approval_desync(readme, state));
    }
    found.extend(plan_status_desync(readme, era).filter(|d| {
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
                "completed_count is {} but {} {} checked",
                state.completed_count,
                crate::term::count(boxes_done, "box", "boxes"),
                if boxes_done == 1 { "is" } else { "are" }
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

/// The README's Approval row against state.json's `approval`, when both record one: the
/// row is markdown, and the markdown wins. A README without a row (or with a value that is no
/// approval) leaves the state's as it is, and an absent `approval` is the row's already.
fn approval_desync(readme: &Readme, state: &State) -> Option<Desync> {
    let row = readme.variable("Approval")?;
    let markdown = readme.approval()?;
    let recorded = state.approval?;
    (markdown != recorded).then(|| {
        Desync::new(
            None,
            Some(row.line),
            DesyncKind::ApprovalDrift {
                markdown,
                state: recorded,
            },
            format!(
                "the README's Approval row (line {}) records {markdown}{}, state.json's `approval` is {recorded}",
                row.line,
                if row.value.trim().eq_ignore_ascii_case(markdown.as_str()) {
                    String::new()
                } else {
                    format!(" (`{}`)", row.value)
                }
            ),
        )
    })
}

/// The README's `Plan Status: X/N` against its boxes: absent, or a different count. A legacy
/// plan without the line is judged on its Plan Status / Notes section's count; without either,
/// verify gives it an advisory (DWP078), which is no desync. `materializing` is not a count;
/// `dwp verify` reports it as a partial materialization.
fn plan_status_desync(readme: &Readme, era: Era) -> Option<Desync> {
    let (done, total) = readme.box_counts();
    let boxes = format!("{done}/{total}");
    let notes = readme
        .notes_count
        .as_ref()
        .filter(|_| era == Era::Legacy && readme.plan_status.is_none());
    let Some(status) = readme.plan_status.as_ref().or(notes) else {
        if era == Era::Legacy {
            return None;
        }
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
    let what = if notes.is_some() {
        "the Plan Status / Notes section"
    } else {
        "Plan Status"
    };
    Some(Desync::new(
        None,
        Some(status.line),
        DesyncKind::PlanStatusCount {
            says: says.clone(),
            boxes: boxes.clone(),
        },
        format!("{what} says {says} but the boxes say {boxes}"),
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
pub(crate) fn markdown_status(
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
