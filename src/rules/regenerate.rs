//! Regeneration: a new state derived from the markdown (boxes and task logs), keeping what the
//! markdown does not record (gate records, outcomes, commits of tasks whose status did not
//! change) and inventing no evidence; it refuses a lossy drop or evidence that would move to
//! another task. Shared by `dwp reconcile --write` and `dwp init`.

use crate::clock;
use crate::error::{Error, Result};
use crate::plan::markdown::{self, TaskRecord};
use crate::plan::model::{
    Field, Gate, Locator, LocatorKind, PlanFormat, PlanStatus, State, Task, TaskStatus,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

use crate::plan::records::{PlanMarkdown, linked_file};
use crate::rules::desync::{markdown_status, same_title};

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
    // The README's Approval row is markdown too: where it records an approval and the state
    // holds one (a v1 state has no such field), the state takes the row's.
    if let Some(approval) = readme.approval()
        && current.approval.is_some()
    {
        next.approval = Some(approval);
    }
    next.status = next.derived_status();
    if next.status == PlanStatus::Completed && current.status != PlanStatus::Completed {
        if !rules.allow_completion {
            return Err(Error::rejected(
                &place,
                "every box is checked: completing the plan is publication, which `dwp finalize` owns",
            )
            .with_hint(format!(
                "publish with `dwp finalize {}` (a refusal lists what it still needs)",
                crate::term::path_word(
                    md.readme_path
                        .parent()
                        .filter(|dir| !dir.as_os_str().is_empty())
                        .unwrap_or(std::path::Path::new("."))
                )
            )));
        }
        let last = next.tasks.last().map_or(0, |t| t.id);
        next.checkpoint = Field::Value(crate::plan::model::Checkpoint {
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
