//! The hook-enforced file contract: files declared up front, edits recorded by a
//! ledger, and the declaration checked against disk and ledger at stop.
//!
//! Three legs, each load-bearing:
//! - [`declare`]: `ledger/task-N.expected.json`, the task's `filesExpected` with a snapshot of
//!   each path (existed or not, sha256) and the ledger offset at declaration time;
//! - [`ledger`]: `ledger/task-N.ledger.jsonl`, one line per recorded Write/Edit, appended under
//!   an OS file lock and fsynced; readers ignore a torn last line with a warning;
//! - [`check`]: every expectation against disk and ledger; [`ladder`] turns repeated failures
//!   of the Stop hook into a `blocked` task through the guarded updater.
//!
//! Everything lives in the plan folder's `ledger/` subfolder, which no other plan file uses.

pub mod check;
pub mod declare;
pub mod format;
pub mod ladder;
pub mod ledger;
pub mod paths;
pub mod payload;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The subfolder of a plan that holds every contract file.
pub const LEDGER_DIR: &str = "ledger";

/// What a task does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Create,
    Modify,
    Delete,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Modify => "modify",
            Op::Delete => "delete",
        }
    }
}

impl std::str::FromStr for Op {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Op, String> {
        match text {
            "create" => Ok(Op::Create),
            "modify" => Ok(Op::Modify),
            "delete" => Ok(Op::Delete),
            other => Err(format!("`{other}` is not an op: create, modify or delete")),
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The contract files of one task, by path.
#[derive(Debug, Clone)]
pub struct TaskFiles {
    pub dir: PathBuf,
    pub expected: PathBuf,
    pub ledger: PathBuf,
    pub check: PathBuf,
}

impl TaskFiles {
    pub fn new(plan_dir: &Path, task: u64) -> TaskFiles {
        let dir = plan_dir.join(LEDGER_DIR);
        TaskFiles {
            expected: dir.join(format!("task-{task}.expected.json")),
            ledger: dir.join(format!("task-{task}.ledger.jsonl")),
            check: dir.join(format!("task-{task}.check.json")),
            dir,
        }
    }
}

/// The plan folder a target names: the folder itself, or the folder of its `state.json`.
pub fn plan_dir(target: &Path) -> Result<PathBuf> {
    let (dir, state) = crate::plan::resolve_target(target);
    if !state.is_file() {
        return Err(Error::rejected(
            state.display().to_string(),
            "not a plan folder: state.json not found",
        )
        .with_hint("pass the plan folder (.dwp/plans/PLAN_name) or its state.json"));
    }
    Ok(dir)
}

/// Create `ledger/` if needed, durably (the plan folder is fsynced so the new entry survives).
pub(crate) fn ensure_ledger_dir(plan_dir: &Path) -> Result<PathBuf> {
    let dir = plan_dir.join(LEDGER_DIR);
    match crate::store::entry(&dir, plan_dir) {
        Ok(crate::store::Entry::Directory) => Ok(dir),
        Ok(crate::store::Entry::Missing) => {
            let mut change = crate::steps::commit::Change::new(plan_dir, "dwp contract");
            change.create_dir(&dir);
            crate::steps::commit::commit(change)?;
            Ok(dir)
        }
        Ok(_) => Err(
            Error::rejected(dir.display().to_string(), "exists and is not a folder").with_hint(
                "move it away: dwp keeps the contract files in the plan's ledger/ folder",
            ),
        ),
        Err(e) => Err(Error::io("stat", &dir, e)),
    }
}

/// What the contract needs of a plan's state: its name and each task's status.
#[derive(Debug, Clone)]
pub struct PlanTasks {
    pub plan: String,
    pub state_file: String,
    pub tasks: Vec<(u64, crate::plan::model::TaskStatus)>,
}

#[derive(Deserialize)]
struct MiniState {
    plan: String,
    tasks: Vec<MiniTask>,
}

#[derive(Deserialize)]
struct MiniTask {
    #[serde(deserialize_with = "crate::plan::model::int::u64")]
    id: u64,
    status: crate::plan::model::TaskStatus,
}

impl PlanTasks {
    /// The state read in full (schema and typing): for `declare` and `check`, whose verdicts
    /// must rest on a state that validates.
    pub fn load(plan_dir: &Path) -> Result<PlanTasks> {
        let paths = crate::plan::PlanPaths::new(plan_dir);
        let loaded = crate::plan::load_state(&paths)
            .map_err(|f| crate::plan::refusal(f, "the plan's state does not validate"))?;
        Ok(PlanTasks {
            plan: loaded.doc.plan.clone(),
            state_file: loaded.file.clone(),
            tasks: loaded.doc.tasks.iter().map(|t| (t.id, t.status)).collect(),
        })
    }

    /// Only the plan name and task statuses, without the schema: `record` runs after every
    /// edit and must stay fast on a 10,000-task plan (`dwp validate` judges the state).
    pub fn load_quick(plan_dir: &Path) -> Result<PlanTasks> {
        let path = plan_dir.join("state.json");
        let file = path.display().to_string();
        let bytes = crate::store::read_artifact(&path, plan_dir).map_err(|f| {
            Error::rejected(file.as_str(), format!("state.json {f}"))
                .with_hint("`dwp validate` lists every problem")
        })?;
        let mini: MiniState = serde_json::from_slice(&bytes).map_err(|e| {
            Error::rejected(
                format!("{file}: $"),
                format!("not a plan state (plan, tasks[].id, tasks[].status): {e}"),
            )
            .with_hint("`dwp validate` lists every problem")
        })?;
        Ok(PlanTasks {
            plan: mini.plan,
            state_file: file,
            tasks: mini.tasks.into_iter().map(|t| (t.id, t.status)).collect(),
        })
    }

    pub fn status(&self, task: u64) -> Option<crate::plan::model::TaskStatus> {
        self.tasks
            .iter()
            .find(|(id, _)| *id == task)
            .map(|(_, s)| *s)
    }

    /// The task an edit belongs to: [`PlanTasks::select`]'s, else the one blocked task. A blocked
    /// task is still the task at work: the fix its blocker asks for is an edit of its contract,
    /// and an edit not recorded then would fail the contract once the task resumes.
    pub fn select_at_work(&self, requested: Option<u64>) -> Result<Option<u64>> {
        if let Some(task) = self.select(requested)? {
            return Ok(Some(task));
        }
        Ok(
            match self.with_status(crate::plan::model::TaskStatus::Blocked)[..] {
                [one] => Some(one),
                _ => None,
            },
        )
    }

    /// The ids of the tasks whose status is `status`, in order.
    fn with_status(&self, status: crate::plan::model::TaskStatus) -> Vec<u64> {
        self.tasks
            .iter()
            .filter(|(_, s)| *s == status)
            .map(|(id, _)| *id)
            .collect()
    }

    /// `--task N` if given (it must exist), else the one task in progress, else none.
    pub fn select(&self, requested: Option<u64>) -> Result<Option<u64>> {
        if let Some(id) = requested {
            if self.status(id).is_none() {
                return Err(Error::rejected(
                    "--task",
                    format!(
                        "there is no task {id}; the plan has tasks 1..{}",
                        self.tasks.len()
                    ),
                )
                .with_hint("pass the id of a task of this plan"));
            }
            return Ok(Some(id));
        }
        let running = self.with_status(crate::plan::model::TaskStatus::InProgress);
        match running.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => Err(Error::rejected(
                format!("{}: $.tasks", self.state_file),
                format!("tasks {many:?} are all in progress: which one is meant?"),
            )
            .with_hint("pass --task N")),
        }
    }
}
