//! What `dwp status` and `dwp next` show of a record plan: the state its journal derives (never
//! the snapshot file's), and the ready set, every task whose prerequisites are completed.

use super::projection::TaskStatus;
use super::{Approval, Derived, SnapshotAgreement};
use crate::plan::record::RecordPlan;
use serde::Serialize;
use serde_json::Value;

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
    pub open_delegations: Vec<Delegation>,
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
    /// Every task not completed whose prerequisites are, in contract order.
    pub ready: Vec<ReadyTask>,
    /// Tasks waiting on prerequisites not completed.
    pub waiting: Vec<WaitingTask>,
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
}

#[derive(Debug, Clone, Serialize)]
pub struct WaitingTask {
    pub id: String,
    pub waits_for: Vec<String>,
}

fn plan_name(plan: &RecordPlan, derived: &Derived) -> String {
    derived
        .projection
        .document
        .get("plan")
        .and_then(Value::as_str)
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

/// The ready set of a record plan.
pub fn ready(plan: &RecordPlan, derived: &Derived, path: String) -> ReadySet {
    let statuses: std::collections::HashMap<&str, TaskStatus> = derived
        .projection
        .tasks
        .iter()
        .map(|t| (t.id_str(), t.status))
        .collect();
    let status_of = |id: &str| statuses.get(id).copied();
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
            ready.push(ReadyTask {
                id: shape.id.clone(),
                title: task.title.clone(),
                status: task.status,
                parallel_safe: shape.parallel_safe,
                open_criteria: task
                    .criteria
                    .iter()
                    .filter(|c| c.satisfied.is_none())
                    .map(|c| c.criterion.clone())
                    .collect(),
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
        ready,
        waiting,
    }
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
