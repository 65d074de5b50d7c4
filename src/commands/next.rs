//! `dwp next PLAN`: what to do next in a plan, and the exact `dwp` lines that do it. It reads and
//! never writes.
//!
//! The next task is the blocked one while a blocker stands (its `--resolve-blocker` line), else
//! the first task neither completed nor skipped: in progress, the `dwp run PLAN --task N --
//! COMMAND` line of each command its Validation section lists (what records it as observed
//! evidence; a command whose latest record is a passing run dwp observed is not asked again, and
//! one only a shell runs as written is shown to run by hand, never split), then its completion
//! (`--status completed --tick`, which needs a gate record: without a command to run or a
//! record, the words say what to list); pending, its start (`--status in_progress`). Tasks run
//! in order: a state in which a later task is in progress while an earlier one is open (DWP036,
//! a hand edit or a reconcile) is said so, and the lines put each such later task back
//! (`--status pending`) before the first open task's line, never a third task started. A
//! pending approval comes first (`dwp approve PLAN --by NAME`: who approved is only the user's
//! to say, the one word left to fill in); a completed plan needs nothing, or `dwp finalize PLAN`
//! while it has no receipt. A plan without a state layer is read from its markdown (the boxes,
//! then the logs' `Status:` lines) and is materialized first (`dwp init PLAN`). Every line names
//! the plan as the caller did, quoted for a shell where it must be, and runs as printed.

use crate::error::Result;
use crate::plan::LoadedPlan;
use crate::plan::markdown::{TaskRecord, command_argv, validation_list};
use crate::plan::model::{Approval, PlanStatus, TaskStatus};
use crate::plan::records::PlanMarkdown;
use crate::term::shell_word;
use serde::Serialize;
use std::path::Path;

/// Where the statuses `next` judged come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// state.json.
    State,
    /// A plan without a state layer: the README's boxes and the task logs.
    Markdown,
}

/// What comes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// No state layer yet: `dwp init`.
    Materialize,
    /// The user's approval, before any task may change.
    Approve,
    /// Start the next pending task.
    Start,
    /// Complete the task in progress.
    Complete,
    /// Resolve the active blocker.
    ResolveBlocker,
    /// Every task is completed, the plan not yet published: `dwp finalize`.
    Finalize,
    /// Published: nothing left to do.
    Done,
    /// No open task, yet the plan is not completed (a skipped task never completes a plan).
    NothingOpen,
    /// Tasks out of order (DWP036): put the later tasks in progress back, then the first open
    /// task's line.
    RestoreOrder,
}

/// A task started while an earlier one is open (DWP036): tasks run in order.
#[derive(Debug, Clone, Serialize)]
pub struct OutOfOrder {
    pub task: u64,
    pub status: TaskStatus,
    /// The first earlier task neither completed nor skipped.
    pub before: u64,
    pub before_status: TaskStatus,
}

/// The task to work on.
#[derive(Debug, Clone, Serialize)]
pub struct NextTask {
    pub id: u64,
    pub title: String,
    pub status: TaskStatus,
    /// Its record: the task file (Full), or README.md and the anchor (Lite).
    pub record: Option<String>,
    /// The commands its Validation section lists, as written.
    pub validation: Vec<String>,
    /// Items of its Validation section that hold no command.
    pub validation_notes: Vec<String>,
    /// Commands of `validation` that only a shell runs as written (a pipe, a redirection, a
    /// variable): `dwp run` takes argv, so these are the user's to run by hand.
    pub by_hand: Vec<String>,
    /// Commands of `validation` whose latest record is a passing run dwp observed: not asked
    /// for again.
    pub observed: Vec<String>,
    /// Whether it is the plan's last task (its completion publishes the plan).
    pub last: bool,
    /// Whether the task holds any gate record (a completion needs one).
    #[serde(skip)]
    pub recorded: bool,
}

/// The active blocker.
#[derive(Debug, Clone, Serialize)]
pub struct NextBlocker {
    pub task: u64,
    pub reason: String,
    pub since: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
}

/// Everything `dwp next` says about one plan.
#[derive(Debug, Clone, Serialize)]
pub struct NextOutcome {
    pub plan: String,
    /// The plan as the caller named it (every line of `run` names it so, quoted for a shell
    /// where it must be).
    pub path: String,
    pub source: Source,
    pub status: PlanStatus,
    pub completed: u64,
    pub total: u64,
    pub approval: Approval,
    pub action: Action,
    pub task: Option<NextTask>,
    pub blocker: Option<NextBlocker>,
    /// Tasks started while an earlier task is open (DWP036), in plan order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub out_of_order: Vec<OutOfOrder>,
    /// Whether the plan carries its publication receipt (`analysis_results/FINALIZATION.json`).
    pub published: bool,
    /// The `dwp` lines to run, in order.
    pub run: Vec<String>,
}

/// What `next` needs of one task, from either source.
struct View {
    id: u64,
    title: String,
    status: TaskStatus,
}

/// The ready set of a record plan (DWP v6/v7): every task whose prerequisites are completed,
/// derived from the journal (docs/record-plans.md).
pub fn ready_set(dir: &Path) -> Result<crate::rules::record::view::ReadySet> {
    let plan = crate::plan::record::RecordPlan::load(dir);
    let mut judged = crate::rules::record::validate(&plan);
    match judged.derived.take() {
        Some(derived) => Ok(crate::rules::record::view::ready(
            &plan,
            &derived,
            dir.display().to_string(),
        )),
        None => {
            judged
                .findings
                .retain(|f| f.severity != crate::findings::Severity::Advisory);
            Err(crate::plan::refusal(
                judged.findings,
                "the record plan's live contract cannot be read",
            ))
        }
    }
}

/// What to do next in the plan at `target` (its folder, or its state.json).
pub fn next(target: &Path) -> Result<NextOutcome> {
    let (plan_dir, state_path) = crate::plan::resolve_target(target);
    let path = target.display().to_string();
    if crate::plan::is_markdown_only(target) {
        return from_markdown(&plan_dir, path);
    }
    let plan = LoadedPlan::open_with_state(&plan_dir, &state_path);
    let loaded = crate::steps::writer::load_state_for_write(&plan, false)?;
    let state = &loaded.doc;
    let readme = crate::steps::updater::read_readme(&plan)?;
    let approval = state.approval.unwrap_or_else(|| {
        readme
            .and_then(|_| plan.readme().ok()?.approval())
            .unwrap_or(Approval::Pending)
    });
    let receipt = plan_dir.join("analysis_results").join("FINALIZATION.json");
    let published = plan.place(&receipt) == crate::store::Place::File;
    let views: Vec<View> = state
        .tasks
        .iter()
        .map(|t| View {
            id: t.id,
            title: t.title.clone(),
            status: t.status,
        })
        .collect();
    let mut outcome = NextOutcome {
        plan: state.plan.clone(),
        path,
        source: Source::State,
        status: state.status,
        completed: state.completed_count,
        total: state.task_count,
        approval,
        action: Action::Done,
        task: None,
        blocker: None,
        out_of_order: out_of_order(state),
        published,
        run: Vec::new(),
    };
    let blocked = state.blocked.value().map(|b| b.task).or_else(|| {
        views
            .iter()
            .find(|v| v.status == TaskStatus::Blocked)
            .map(|v| v.id)
    });
    let chosen = match blocked {
        Some(id) => views.iter().find(|v| v.id == id),
        None => views.iter().find(|v| is_open(v.status)),
    };
    outcome.blocker = state.blocked.value().map(|b| NextBlocker {
        task: b.task,
        reason: b.reason.clone(),
        since: b.since.clone(),
        needs: b.needs.clone(),
    });
    let Some(view) = chosen else {
        decide_without_task(&mut outcome);
        return Ok(outcome);
    };
    let record = state
        .task(view.id)
        .and_then(|task| crate::plan::records::read_task_source(&plan, task).ok())
        .map(|source| (source.path, source.record));
    let locator = state
        .task(view.id)
        .and_then(|t| t.locator_value().map(str::to_owned));
    let mut task = next_task(view, &plan_dir, locator, record.as_ref(), views.len());
    if let Some(recorded) = state.task(view.id) {
        task.observed = observed_passes(&task.validation, recorded.gates(), &plan);
        task.recorded = !recorded.gates().is_empty();
    }
    decide_with_task(&mut outcome, task);
    Ok(outcome)
}

/// A plan without a state layer: its tasks as the markdown records them; materialized first.
fn from_markdown(plan_dir: &Path, path: String) -> Result<NextOutcome> {
    let md = crate::plan::records::read_markdown(plan_dir)?;
    let views: Vec<View> = md
        .readme
        .index
        .iter()
        .map(|entry| View {
            id: entry.id,
            title: md.title(entry).unwrap_or_default(),
            status: crate::rules::desync::markdown_only_status(
                entry,
                md.records.get(&entry.id).map(|(_, r)| r),
            ),
        })
        .collect();
    let completed = views
        .iter()
        .filter(|v| v.status == TaskStatus::Completed)
        .count() as u64;
    let total = views.len() as u64;
    let status = if views.iter().any(|v| v.status == TaskStatus::Blocked) {
        PlanStatus::Blocked
    } else if total > 0 && completed == total {
        PlanStatus::Completed
    } else if views.iter().any(|v| v.status != TaskStatus::Pending) {
        PlanStatus::InProgress
    } else {
        PlanStatus::Pending
    };
    let chosen = views.iter().find(|v| is_open(v.status));
    let task = chosen.map(|view| {
        let entry = md.readme.index.iter().find(|e| e.id == view.id);
        let locator = entry.and_then(|e| markdown_locator(&md, e));
        let record = md
            .records
            .get(&view.id)
            .map(|(p, r)| (p.clone(), r.clone()));
        next_task(view, plan_dir, locator, record.as_ref(), views.len())
    });
    let plan = crate::plan::PlanPaths::new(plan_dir)
        .folder_name()
        .unwrap_or_else(|| plan_dir.display().to_string());
    let word = shell_word(&path);
    let mut run = vec![format!("dwp init {word}")];
    if status == PlanStatus::Completed {
        run.push(format!("dwp finalize {word}"));
    } else {
        run.push(format!("dwp next {word}"));
    }
    Ok(NextOutcome {
        plan,
        path,
        source: Source::Markdown,
        status,
        completed,
        total,
        approval: md.readme.approval().unwrap_or(Approval::Pending),
        action: Action::Materialize,
        task,
        blocker: None,
        out_of_order: Vec::new(),
        published: false,
        run,
    })
}

/// The locator of a task in a markdown-only plan: its file (Full), else `#task-N` when the
/// README holds its record (Lite).
fn markdown_locator(
    md: &PlanMarkdown,
    entry: &crate::plan::markdown::IndexEntry,
) -> Option<String> {
    if md.readme.inline_tasks.iter().any(|r| r.id == entry.id) {
        return Some(format!("#task-{}", entry.id));
    }
    md.task_file(entry)
}

/// Every task out of order ([`crate::rules::invariants::out_of_order`], DWP036).
fn out_of_order(state: &crate::plan::model::State) -> Vec<OutOfOrder> {
    crate::rules::invariants::out_of_order(state)
        .into_iter()
        .map(|(_, task, open)| OutOfOrder {
            task: task.id,
            status: task.status,
            before: open.id,
            before_status: open.status,
        })
        .collect()
}

fn is_open(status: TaskStatus) -> bool {
    !matches!(status, TaskStatus::Completed | TaskStatus::Skipped)
}

fn next_task(
    view: &View,
    plan_dir: &Path,
    locator: Option<String>,
    record: Option<&(std::path::PathBuf, TaskRecord)>,
    count: usize,
) -> NextTask {
    let list = record
        .and_then(|(_, r)| r.section("Validation"))
        .map(|s| validation_list(&s.body))
        .unwrap_or_default();
    let record = locator.map(|l| match l.strip_prefix('#') {
        Some(anchor) => format!("{}#{anchor}", plan_dir.join("README.md").display()),
        None => plan_dir.join(l).display().to_string(),
    });
    let by_hand = list
        .commands
        .iter()
        .filter(|c| command_argv(c).is_none())
        .cloned()
        .collect();
    NextTask {
        id: view.id,
        title: view.title.clone(),
        status: view.status,
        record,
        validation: list.commands,
        validation_notes: list.notes,
        by_hand,
        observed: Vec::new(),
        last: view.id as usize == count,
        recorded: false,
    }
}

/// The listed commands whose latest gate record is a passing run dwp observed and its log
/// still backs (the gate's command is the argv as `dwp run` records it).
fn observed_passes(
    validation: &[String],
    gates: &[crate::plan::model::Gate],
    plan: &LoadedPlan,
) -> Vec<String> {
    let latest = crate::rules::evidence::latest_per_command(gates);
    validation
        .iter()
        .filter(|command| {
            let Some(argv) = command_argv(command) else {
                return false;
            };
            let recorded = crate::term::display_argv(&argv);
            latest.iter().any(|gate| {
                gate.command == recorded
                    && crate::rules::observed::is_observed(gate)
                    && crate::rules::evidence::gate_problems(gate, plan).is_empty()
            })
        })
        .cloned()
        .collect()
}

/// No open task: done, publication still to do, or nothing open in a plan not completed.
fn decide_without_task(outcome: &mut NextOutcome) {
    let path = shell_word(&outcome.path).into_owned();
    if outcome.status == PlanStatus::Completed {
        if outcome.published {
            outcome.action = Action::Done;
        } else {
            outcome.action = Action::Finalize;
            outcome.run.push(format!("dwp finalize {path}"));
        }
    } else {
        outcome.action = Action::NothingOpen;
    }
}

/// The task's line, after the approval's when the plan is not approved yet.
fn decide_with_task(outcome: &mut NextOutcome, task: NextTask) {
    let path = shell_word(&outcome.path).into_owned();
    let (action, line) = match task.status {
        TaskStatus::Blocked => (
            Action::ResolveBlocker,
            format!(
                "dwp update {path} --task {} --resolve-blocker --status in_progress",
                task.id
            ),
        ),
        TaskStatus::InProgress => (Action::Complete, String::new()),
        _ => (
            Action::Start,
            format!("dwp update {path} --task {} --status in_progress", task.id),
        ),
    };
    outcome.action = action;
    // A later task in progress goes back first (an in_progress → pending move is always
    // allowed), so the first open task's line never leaves two tasks in progress.
    let put_back: Vec<String> = match action {
        Action::ResolveBlocker => Vec::new(),
        _ => outcome
            .out_of_order
            .iter()
            .filter(|o| o.status == TaskStatus::InProgress && o.task != task.id)
            .map(|o| format!("dwp update {path} --task {} --status pending", o.task))
            .collect(),
    };
    if !put_back.is_empty() {
        outcome.action = Action::RestoreOrder;
    }
    if outcome.approval == Approval::Pending {
        outcome.action = Action::Approve;
        outcome.run.push(format!("dwp approve {path} --by NAME"));
    }
    outcome.run.extend(put_back);
    match action {
        Action::Complete => outcome.run.extend(completion_lines(&path, &task)),
        _ => outcome.run.push(line),
    }
    outcome.task = Some(task);
}

/// `dwp run PLAN --task N -- COMMAND` for each listed command dwp can run as argv and has not
/// yet seen pass, then `dwp update PLAN --task N --status completed --tick`: the completion
/// only when the task will hold a gate record, which it needs.
fn completion_lines(path: &str, task: &NextTask) -> Vec<String> {
    let mut lines: Vec<String> = task
        .validation
        .iter()
        .filter(|command| !task.observed.contains(command))
        .filter_map(|command| crate::rules::observed::run_line(path, task.id, command))
        .collect();
    if !lines.is_empty() || task.recorded || !task.observed.is_empty() {
        lines.push(format!(
            "dwp update {path} --task {} --status completed --tick",
            task.id
        ));
    }
    lines
}
