//! `dwp status`: the facts a person (or an agent, with `--json`) wants about a plan at a glance:
//! title and status, progress, the current task and its checkpoint, an active blocker, each
//! task's status with its latest gate results, and whether the markdown and the state agree.
//! It reads and never writes. Rendering (colour, layout) lives in the CLI.

use crate::error::Result;
use crate::plan::model::{PlanStatus, State, TaskStatus};
use crate::plan::record::RecordPlan;
use crate::plan::{self, Loaded};
use crate::rules::desync::Desync;
use crate::rules::evidence::latest_per_command;
use crate::rules::record::view::RecordStatus;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The latest record of one gate command.
#[derive(Debug, Clone, Serialize)]
pub struct GateSummary {
    pub command: String,
    pub passes: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Invalidated by refine: history, never passing evidence.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub invalidated: bool,
    /// dwp ran it and kept its log (`dwp run`); a record without it was asserted.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub observed: bool,
}

/// The writer lock, when one is held.
#[derive(Debug, Clone, Serialize)]
pub struct LockSummary {
    /// Who holds it, as `dwp lock status` says.
    pub holder: String,
    /// Its owner is provably gone: `dwp lock recover` may remove it.
    pub gone: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskSummary {
    pub id: u64,
    pub title: String,
    pub status: TaskStatus,
    pub gates: Vec<GateSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckpointSummary {
    pub task: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    pub at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BlockerSummary {
    pub task: u64,
    pub reason: String,
    pub since: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
}

/// Where a summary's statuses come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// state.json.
    State,
    /// A plan without a state layer: the README's boxes and the task logs.
    Markdown,
}

/// Everything `dwp status` shows about one plan.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub plan: String,
    pub source: Source,
    pub title: Option<String>,
    pub status: PlanStatus,
    pub completed: u64,
    pub total: u64,
    /// The task being worked on: the checkpoint's, else the first task not completed.
    pub current: Option<TaskSummary>,
    pub checkpoint: Option<CheckpointSummary>,
    pub blocker: Option<BlockerSummary>,
    pub tasks: Vec<TaskSummary>,
    /// Disagreements between the markdown and the state (`None`: the markdown could not be read).
    pub desync: Option<Vec<Desync>>,
    /// The writer lock, when one is held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<LockSummary>,
    /// Why a state.json that is not DWP's was left aside (the plan is shown from its markdown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored_state: Option<String>,
    /// The plan folder, for the commands a reader is shown.
    #[serde(skip)]
    pub dir: PathBuf,
}

/// Work remains on a task that is neither completed nor skipped.
pub fn is_open(status: TaskStatus) -> bool {
    !matches!(status, TaskStatus::Completed | TaskStatus::Skipped)
}

fn task_summary(task: &crate::plan::model::Task) -> TaskSummary {
    TaskSummary {
        id: task.id,
        title: task.title.clone(),
        status: task.status,
        gates: latest_per_command(task.gates())
            .into_iter()
            .map(|g| GateSummary {
                command: g.command.clone(),
                passes: g.passes,
                exit_code: g.exit_code,
                invalidated: g
                    .evidence
                    .as_deref()
                    .is_some_and(crate::rules::evidence::is_invalidated),
                observed: crate::rules::observed::is_observed(g),
            })
            .collect(),
    }
}

/// Summarize the plan at `target` (its folder or its state.json); a plan folder without a state
/// layer is summarized from its markdown.
pub fn summarize(target: &Path) -> Result<Summary> {
    let (plan_dir, state_path) = crate::plan::resolve_target(target);
    if plan::is_markdown_only(target) {
        return summarize_markdown(&plan_dir);
    }
    let plan = crate::plan::LoadedPlan::open_with_state(&plan_dir, &state_path);
    let loaded: &Loaded<State> = match crate::steps::writer::load_state_for_write(&plan, false) {
        Ok(loaded) => loaded,
        // Not DWP's state at all: the plan is shown as one without a state layer, saying why.
        Err(error) => match foreign_state(&plan) {
            Some(why) => {
                let mut summary = summarize_markdown(&plan_dir)?;
                summary.ignored_state = Some(why);
                return Ok(summary);
            }
            None => return Err(error),
        },
    };
    let state = &loaded.doc;
    let markdown = plan.markdown().ok();
    // The task being worked on: none once the plan is completed; else the checkpoint's task while
    // it is open, else the first task neither completed nor skipped (skipped is out of scope).
    let open = |t: &&crate::plan::model::Task| is_open(t.status);
    let current = (state.status != PlanStatus::Completed)
        .then(|| {
            state
                .checkpoint
                .value()
                .and_then(|c| state.task(c.task))
                .filter(open)
                .or_else(|| state.tasks.iter().find(open))
        })
        .flatten()
        .map(task_summary);
    Ok(Summary {
        plan: state.plan.clone(),
        source: Source::State,
        title: markdown.as_ref().and_then(|m| m.readme.title.clone()),
        status: state.status,
        completed: state.completed_count,
        total: state.task_count,
        current,
        checkpoint: state.checkpoint.value().map(|c| CheckpointSummary {
            task: c.task,
            step: c.step.clone(),
            at: c.at.clone(),
            note: c.note.clone(),
        }),
        blocker: state.blocked.value().map(|b| BlockerSummary {
            task: b.task,
            reason: b.reason.clone(),
            since: b.since.clone(),
            needs: b.needs.clone(),
        }),
        tasks: state.tasks.iter().map(task_summary).collect(),
        desync: markdown.map(|m| crate::rules::desync::compare(m, state)),
        lock: crate::store::lock_dir::inspect(&state_path)
            .ok()
            .flatten()
            .map(|info| LockSummary {
                holder: info.describe(),
                gone: info.liveness.is_gone(),
            }),
        ignored_state: None,
        dir: plan_dir,
    })
}

/// Why the plan's state.json is not a DWP state layer at all (a JSON document that names no DWP
/// plan-state schema, such as a state file another tool invented), or `None`: it is DWP's, valid
/// or not, and a problem with it is an error of its own.
fn foreign_state(plan: &crate::plan::LoadedPlan) -> Option<String> {
    use crate::plan::model::SchemaId;
    let read = plan.read(&plan.paths.state);
    let bytes = read.as_ref().as_ref().ok()?;
    let document = crate::plan::json::parse_strict(bytes).ok()?;
    let why = match document.get("schema") {
        None => "it names no `schema`".to_owned(),
        Some(serde_json::Value::String(url)) if SchemaId::parse(url) == SchemaId::Unknown => {
            format!("its `schema` `{url}` is not a DWP plan state")
        }
        Some(serde_json::Value::String(_)) => return None,
        Some(other) => format!("its `schema` is {other}, not a DWP plan-state URL"),
    };
    Some(format!(
        "state.json is not a DWP state layer ({why}): shown from the markdown; `dwp verify` judges the file"
    ))
}

/// A plan without state.json, from its markdown: each task's status is its box (checked:
/// completed) or, unchecked, its log's `Status:` line; the current task is the first open one.
fn summarize_markdown(plan_dir: &Path) -> Result<Summary> {
    let md = crate::plan::records::read_markdown(plan_dir)?;
    let tasks: Vec<TaskSummary> = md
        .readme
        .index
        .iter()
        .map(|entry| TaskSummary {
            id: entry.id,
            title: md.title(entry).unwrap_or_default(),
            status: crate::rules::desync::markdown_only_status(
                entry,
                md.records.get(&entry.id).map(|(_, r)| r),
            ),
            gates: Vec::new(),
        })
        .collect();
    let completed = tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Completed)
        .count() as u64;
    let total = tasks.len() as u64;
    let status = if tasks.iter().any(|t| t.status == TaskStatus::Blocked) {
        PlanStatus::Blocked
    } else if total > 0 && completed == total {
        PlanStatus::Completed
    } else if tasks.iter().any(|t| t.status != TaskStatus::Pending) {
        PlanStatus::InProgress
    } else {
        PlanStatus::Pending
    };
    let current = (status != PlanStatus::Completed)
        .then(|| tasks.iter().find(|t| is_open(t.status)).cloned())
        .flatten();
    let plan = std::fs::canonicalize(plan_dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| plan_dir.display().to_string());
    Ok(Summary {
        plan,
        source: Source::Markdown,
        title: md.readme.title.clone(),
        status,
        completed,
        total,
        current,
        checkpoint: None,
        blocker: None,
        tasks,
        desync: Some(crate::rules::desync::markdown_desync(&md)),
        lock: None,
        ignored_state: None,
        dir: plan_dir.to_path_buf(),
    })
}

/// The status of a record plan (DWP v6/v7): derived from its contract and journal, never read
/// from its `state.json` (docs/record-plans.md).
pub fn summarize_record(dir: &Path) -> Result<RecordStatus> {
    let plan = RecordPlan::load(dir);
    let judged = crate::rules::record::validate(&plan);
    match judged.derived {
        Some(derived) => Ok(crate::rules::record::view::status(&plan, &derived)),
        None => Err(crate::plan::refusal(
            blocking(judged.findings),
            "the record plan's live contract cannot be read",
        )),
    }
}

/// The findings that stop a derivation, first.
fn blocking(mut findings: Vec<crate::findings::Finding>) -> Vec<crate::findings::Finding> {
    findings.retain(|f| f.severity != crate::findings::Severity::Advisory);
    findings
}

/// A plan of `dwp status --all`, either kind.
pub enum LineSummary {
    Plan(Summary),
    Record(RecordStatus),
}

/// One line of `dwp status --all`: a plan folder and its summary, or why it could not be read.
pub struct PlanLine {
    pub dir: PathBuf,
    /// The folder under `.dwp/plans/`: `PLAN_outer/PLAN_inner` for a plan nested in another.
    pub name: String,
    pub summary: Result<LineSummary>,
}

/// Summaries of every plan under `root`.
pub fn summarize_all(root: &Path) -> Result<Vec<PlanLine>> {
    let plans = root.join(".dwp").join("plans");
    Ok(crate::plan::plan_dirs(root)?
        .into_iter()
        .map(|dir| PlanLine {
            summary: if crate::plan::record::is_record_plan(&dir) {
                summarize_record(&dir).map(LineSummary::Record)
            } else {
                summarize(&dir).map(LineSummary::Plan)
            },
            name: dir
                .strip_prefix(&plans)
                .unwrap_or(&dir)
                .display()
                .to_string(),
            dir,
        })
        .collect())
}
