//! What `dwp status` and `dwp next` show of a record plan: the state its journal derives (never
//! the snapshot file's), and the ready set, every task whose prerequisites are completed.

use super::invariant;
use super::projection::TaskStatus;
use super::{Approval, Derived, SnapshotAgreement};
use crate::plan::record::RecordPlan;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// A record plan's status.
#[derive(Debug, Clone, Serialize)]
pub struct RecordStatus {
    pub plan: String,
    /// Always `journal`: statuses are derived from the journal.
    pub source: &'static str,
    pub generation: &'static str,
    pub title: Option<String>,
    pub status: TaskStatus,
    pub completed: usize,
    pub total: usize,
    pub contract: ContractRef,
    pub approval: Option<Approval>,
    pub snapshot: SnapshotAgreement,
    pub events: usize,
    /// The journal has a torn tail: what is shown is derived from the events before it.
    pub torn: bool,
    pub tasks: Vec<RecordTask>,
    /// The contract's invariants and the latest evaluation of each (rule 21: a task completes
    /// only while each passed at or after its start).
    pub invariants: Vec<InvariantState>,
    pub open_delegations: Vec<Delegation>,
}

/// An invariant of the live contract and its latest evaluation in the journal.
#[derive(Debug, Clone, Serialize)]
pub struct InvariantState {
    pub id: String,
    pub statement: Value,
    /// The latest evaluation, `None` when it was never evaluated.
    pub latest: Option<Evaluation>,
}

/// One evaluation of an invariant: where, its verdict, and how it is known.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub seq: i64,
    pub passed: bool,
    pub trust: Option<String>,
}

/// The live contract.
#[derive(Debug, Clone, Serialize)]
pub struct ContractRef {
    pub file: String,
    pub id: Value,
    pub revision: Value,
}

/// A delegation still open.
#[derive(Debug, Clone, Serialize)]
pub struct Delegation {
    pub id: String,
    pub task: String,
}

/// One task as the journal derives it.
#[derive(Debug, Clone, Serialize)]
pub struct RecordTask {
    pub id: String,
    pub title: Value,
    pub status: TaskStatus,
    pub started_seq: Value,
    pub prerequisites: Vec<String>,
    pub parallel_safe: bool,
    pub criteria: Vec<RecordCriterion>,
}

/// One criterion of a task: satisfied by which gate run and trust, or open (with the runs that
/// no longer count).
#[derive(Debug, Clone, Serialize)]
pub struct RecordCriterion {
    pub criterion: Value,
    pub satisfied: bool,
    pub via_seq: Value,
    pub trust: Value,
    pub evidence_path: Value,
    pub stale_seqs: Vec<Value>,
}

/// What `dwp next` says of a record plan.
#[derive(Debug, Clone, Serialize)]
pub struct ReadySet {
    pub plan: String,
    pub path: String,
    pub source: &'static str,
    pub generation: &'static str,
    pub status: TaskStatus,
    pub completed: usize,
    pub total: usize,
    /// Whether an approval cites the live contract: nothing opens the tasks before one does.
    pub approved: bool,
    pub action: ReadyAction,
    /// The approval that opens the tasks, to run as printed (`NAME` and `FILE` the approver's),
    /// when none cites the live contract.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approve_step: Option<String>,
    /// Every task not completed whose prerequisites are, in contract order.
    pub ready: Vec<ReadyTask>,
    /// Tasks waiting on prerequisites not completed.
    pub waiting: Vec<WaitingTask>,
    /// The contract's invariants a task in progress still needs a pass of (rule 21: a task's
    /// completion is confirmed only once each passed in its attempt), with the latest
    /// evaluation of each.
    pub invariants_to_evaluate: Vec<InvariantState>,
}

/// What comes next in a record plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadyAction {
    /// Record the approval of the live contract.
    Approve,
    /// Work on the ready tasks.
    Work,
    /// Every task is completed.
    Done,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReadyTask {
    pub id: String,
    pub title: Value,
    pub status: TaskStatus,
    /// v7: several agents may take parallel-safe tasks at once.
    pub parallel_safe: bool,
    /// Its criteria without accepted evidence yet.
    pub open_criteria: Vec<Value>,
    /// The dwp commands that move it on, to run as printed: its start; once started, a gate
    /// run per open criterion (the contract's declared check, where it is one argv); once
    /// every criterion has its evidence, the completion.
    pub steps: Vec<String>,
    /// Once started, its open criteria whose declared check is no one-argv command: no step
    /// runs them as printed (the human text says what to run).
    #[serde(skip)]
    pub unprintable: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WaitingTask {
    pub id: String,
    pub waits_for: Vec<String>,
}

fn plan_name(plan: &RecordPlan, derived: &Derived) -> String {
    derived
        .projection
        .plan
        .as_str()
        .map(str::to_owned)
        .or_else(|| plan.folder_name())
        .unwrap_or_default()
}

/// The plan as a whole: completed when every task is, pending while none has started.
fn plan_status(derived: &Derived) -> TaskStatus {
    let tasks = &derived.projection.tasks;
    if !tasks.is_empty() && tasks.iter().all(|t| t.status == TaskStatus::Completed) {
        TaskStatus::Completed
    } else if tasks.iter().all(|t| t.status == TaskStatus::Pending) {
        TaskStatus::Pending
    } else {
        TaskStatus::InProgress
    }
}

/// Whether a record plan is in progress, as its journal derives it (started, not finished): how
/// a command given no plan counts it among a repository's plans (`crate::plan::pick_plan`).
pub fn in_progress(plan: &RecordPlan) -> bool {
    let judged = super::validate(plan);
    judged
        .derived
        .is_some_and(|derived| plan_status(&derived) == TaskStatus::InProgress)
}

/// The status of a record plan, from what the rules derived.
pub fn status(plan: &RecordPlan, derived: &Derived) -> RecordStatus {
    let tasks = derived
        .projection
        .tasks
        .iter()
        .zip(&derived.graph)
        .map(|(task, shape)| RecordTask {
            id: shape.id.clone(),
            title: task.title.clone(),
            status: task.status,
            started_seq: task.started.clone().unwrap_or(Value::Null),
            prerequisites: shape.prerequisites.clone(),
            parallel_safe: shape.parallel_safe,
            criteria: task
                .criteria
                .iter()
                .map(|c| {
                    let (via_seq, trust, evidence_path) = c.satisfied.clone().unwrap_or_default();
                    RecordCriterion {
                        criterion: c.criterion.clone(),
                        satisfied: c.satisfied.is_some(),
                        via_seq,
                        trust,
                        evidence_path,
                        stale_seqs: c.stale.clone(),
                    }
                })
                .collect(),
        })
        .collect();
    RecordStatus {
        plan: plan_name(plan, derived),
        source: "journal",
        generation: derived.generation.label(),
        title: derived.title.clone(),
        status: plan_status(derived),
        completed: derived.completed(),
        total: derived.projection.tasks.len(),
        contract: ContractRef {
            file: derived.contract_file.clone(),
            id: derived.contract_id.clone(),
            revision: derived.revision.clone(),
        },
        approval: derived.approval.clone(),
        snapshot: derived.snapshot,
        events: derived.events,
        torn: derived.torn,
        tasks,
        invariants: invariants(plan, derived),
        open_delegations: derived
            .open_delegations
            .iter()
            .map(|(id, task)| Delegation {
                id: id.clone(),
                task: task.clone(),
            })
            .collect(),
    }
}

/// The live contract's invariants, each with its latest evaluation in the journal.
fn invariants(plan: &RecordPlan, derived: &Derived) -> Vec<InvariantState> {
    let contract = plan.live_contract().and_then(|doc| doc.value());
    let statements = contract
        .and_then(|c| c.get("invariants"))
        .and_then(Value::as_array);
    let statement_of = |id: &str| {
        let declared = statements.into_iter().flatten();
        let found = declared
            .into_iter()
            .find(|i| i.get("id").and_then(Value::as_str) == Some(id));
        found
            .and_then(|i| i.get("statement"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    derived
        .invariants
        .iter()
        .map(|(id, latest)| InvariantState {
            statement: statement_of(id),
            latest: latest.as_ref().map(|evaluation| Evaluation {
                seq: evaluation.seq,
                passed: evaluation.verdict == invariant::Verdict::Pass,
                trust: evaluation.trust.clone(),
            }),
            id: id.clone(),
        })
        .collect()
}

/// The ready set of a record plan.
pub fn ready(plan: &RecordPlan, derived: &Derived, path: String) -> ReadySet {
    let statuses: std::collections::HashMap<&str, TaskStatus> = derived
        .projection
        .tasks
        .iter()
        .map(|t| (t.id_str(), t.status))
        .collect();
    let status_of = |id: &str| statuses.get(id).copied();
    let checks = declared_checks(plan, derived);
    let word = crate::term::shell_word(&path).into_owned();
    let mut ready = Vec::new();
    let mut waiting = Vec::new();
    for (task, shape) in derived.projection.tasks.iter().zip(&derived.graph) {
        if task.status == TaskStatus::Completed {
            continue;
        }
        let waits_for: Vec<String> = shape
            .prerequisites
            .iter()
            .filter(|p| status_of(p) != Some(TaskStatus::Completed))
            .cloned()
            .collect();
        if waits_for.is_empty() {
            let open_criteria: Vec<Value> = task
                .criteria
                .iter()
                .filter(|c| c.satisfied.is_none())
                .map(|c| c.criterion.clone())
                .collect();
            let steps = task_steps(&word, &shape.id, task.status, &open_criteria, &checks);
            let started = task.status == TaskStatus::InProgress;
            let unprintable = open_criteria
                .iter()
                .filter_map(Value::as_str)
                .filter(|c| started && run_step(&word, &shape.id, c, &checks).is_none())
                .map(str::to_owned)
                .collect();
            ready.push(ReadyTask {
                id: shape.id.clone(),
                title: task.title.clone(),
                status: task.status,
                parallel_safe: shape.parallel_safe,
                open_criteria,
                steps,
                unprintable,
            });
        } else {
            waiting.push(WaitingTask {
                id: shape.id.clone(),
                waits_for,
            });
        }
    }
    let status = plan_status(derived);
    let approved = derived.approval.is_some();
    let action = match (approved, status) {
        (_, TaskStatus::Completed) => ReadyAction::Done,
        (false, _) => ReadyAction::Approve,
        (true, _) => ReadyAction::Work,
    };
    ReadySet {
        plan: plan_name(plan, derived),
        path,
        source: "journal",
        generation: derived.generation.label(),
        status,
        completed: derived.completed(),
        total: derived.projection.tasks.len(),
        approved,
        action,
        approve_step: (action == ReadyAction::Approve)
            .then(|| format!("dwp approve {word} --by NAME --note FILE")),
        ready,
        waiting,
        invariants_to_evaluate: to_evaluate(plan, derived),
    }
}

/// The invariants a task in progress still needs a pass of (rule 21): never evaluated, failed
/// last, or passed last before the latest start of a task in progress.
fn to_evaluate(plan: &RecordPlan, derived: &Derived) -> Vec<InvariantState> {
    let tasks = derived.projection.tasks.iter();
    let in_progress = tasks.filter(|t| t.status == TaskStatus::InProgress);
    let latest_start = in_progress
        .filter_map(|t| t.started.as_ref().and_then(Value::as_i64))
        .max();
    let passed = |e: &Evaluation| e.passed && latest_start.is_none_or(|start| e.seq >= start);
    let mut states = invariants(plan, derived);
    states.retain(|i| !i.latest.as_ref().is_some_and(passed));
    states
}

/// The check each `(task, criterion)` of the live contract's gate intent declares.
fn declared_checks(plan: &RecordPlan, derived: &Derived) -> HashMap<(String, String), String> {
    let docs = plan.first_contract.iter().chain(&plan.chain);
    let contract = docs
        .filter(|doc| doc.name == derived.contract_file)
        .find_map(|doc| doc.value());
    let tasks = contract
        .and_then(|c| c.get("tasks"))
        .and_then(Value::as_array);
    let mut checks = HashMap::new();
    for task in tasks.into_iter().flatten() {
        let id = task.get("id").and_then(Value::as_str).unwrap_or_default();
        let intents = task.get("gate_intent").and_then(Value::as_array);
        for intent in intents.into_iter().flatten() {
            let criterion = intent.get("criterion").and_then(Value::as_str);
            let check = intent.get("check").and_then(Value::as_str);
            if let (Some(criterion), Some(check)) = (criterion, check) {
                checks.insert((id.to_owned(), criterion.to_owned()), check.to_owned());
            }
        }
    }
    checks
}

/// The commands that move a ready task on (see [`ReadyTask::steps`]).
fn task_steps(
    plan: &str,
    task: &str,
    status: TaskStatus,
    open: &[Value],
    checks: &HashMap<(String, String), String>,
) -> Vec<String> {
    if status == TaskStatus::Pending {
        return vec![format!(
            "dwp update {plan} --task {task} --status in_progress"
        )];
    }
    if open.is_empty() {
        return vec![format!(
            "dwp update {plan} --task {task} --status completed"
        )];
    }
    open.iter()
        .filter_map(Value::as_str)
        .filter_map(|criterion| run_step(plan, task, criterion, checks))
        .collect()
}

/// The `dwp run` of a criterion's declared check, when the check is one argv.
fn run_step(
    plan: &str,
    task: &str,
    criterion: &str,
    checks: &HashMap<(String, String), String>,
) -> Option<String> {
    let check = checks.get(&(task.to_owned(), criterion.to_owned()))?;
    let argv = one_argv(check)?;
    Some(format!(
        "dwp run {plan} --task {task} --criterion {criterion} -- {argv}"
    ))
}

/// A declared check as the words of one argv, when it is one: words of plain characters, no
/// shell syntax (a check that needs a shell is not printed as a line to run).
fn one_argv(check: &str) -> Option<&str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c) || c == ' ';
    (!check.trim().is_empty() && check.chars().all(plain)).then_some(check.trim())
}

/// What `dwp verify` adds to a record plan's verdict: the passing facts, said as the public
/// verifier says them.
#[derive(Debug, Clone, Serialize)]
pub struct RecordFacts {
    pub generation: &'static str,
    pub contract: ContractRef,
    pub events: usize,
    /// Whether an approval cites the live contract id.
    pub approved: bool,
    pub snapshot: SnapshotAgreement,
    /// Tasks completed, derived from gate evidence.
    pub completed: usize,
    pub total: usize,
}

/// The facts `verify` shows beside its findings.
pub fn facts(derived: &Derived) -> RecordFacts {
    RecordFacts {
        generation: derived.generation.label(),
        contract: ContractRef {
            file: derived.contract_file.clone(),
            id: derived.contract_id.clone(),
            revision: derived.revision.clone(),
        },
        events: derived.events,
        approved: derived.approval.is_some(),
        snapshot: derived.snapshot,
        completed: derived.completed(),
        total: derived.projection.tasks.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(check: &str) -> HashMap<(String, String), String> {
        let key = ("T-docs".to_owned(), "AC-build".to_owned());
        HashMap::from([(key, check.to_owned())])
    }

    // A hint is a promise: a step is printed only when it runs as printed.
    #[test]
    fn a_started_task_steps_are_its_declared_checks_when_each_is_one_argv() {
        let open = [Value::from("AC-build")];
        let steps = task_steps(
            "P",
            "T-docs",
            TaskStatus::InProgress,
            &open,
            &checks("mkdocs build -f docs/mkdocs.yml"),
        );
        assert_eq!(
            steps,
            ["dwp run P --task T-docs --criterion AC-build -- mkdocs build -f docs/mkdocs.yml"]
        );
        let shell = checks("make docs && ./check.sh | tee out");
        assert!(task_steps("P", "T-docs", TaskStatus::InProgress, &open, &shell).is_empty());
        let pending = task_steps("P", "T-docs", TaskStatus::Pending, &open, &shell);
        assert_eq!(pending, ["dwp update P --task T-docs --status in_progress"]);
        let done = task_steps("P", "T-docs", TaskStatus::InProgress, &[], &shell);
        assert_eq!(done, ["dwp update P --task T-docs --status completed"]);
    }
}
