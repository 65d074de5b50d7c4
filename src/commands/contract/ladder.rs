//! The Stop hook and its retry ladder (the hook-enforced contract's "Tier 1 / 2 / 3").
//!
//! Consecutive failed Stop checks of a task are counted durably in `ledger/task-N.check.json`.
//! The 1st and 2nd failure block the stop with the exact failed expectations (Tier 1: fix what
//! it says; Tier 2: re-read the task). The 3rd escalates (Tier 3): the task becomes `blocked`
//! through the guarded updater, with the failures as the reason and what it needs, and the stop
//! is allowed with a message saying so. A passing check resets the count. So the loop never
//! spins forever, whatever `stop_hook_active` says.
//!
//! An internal error (malformed payload, unreadable state, a declaration edited into an invalid
//! shape) blocks the stop with its message like a failed check, and climbs the same ladder:
//! letting it through silently would let a phantom edit pass.

use super::check::{CheckOutcome, CheckReport};
use super::{LEDGER_DIR, PlanTasks, TaskFiles};
use crate::error::{Error, Result};
use crate::plan::model::TaskStatus;
use crate::steps::commit::Change;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The consecutive failure that escalates.
pub const ESCALATE_AT: u32 = 3;

/// `schema` of a ladder file.
pub const CHECK_SCHEMA_ID: &str = "urn:dwp:contract-check:v1";

/// `ledger/task-N.check.json` (or `ledger/plan.check.json` when no task could be told).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LadderState {
    pub schema: String,
    pub task: Option<u64>,
    pub consecutive_failures: u32,
    pub last_failure_at: Option<String>,
    pub last_failure: Vec<String>,
    pub escalations: u32,
    pub last_escalated_at: Option<String>,
    /// The sha256 of the declaration a Stop check last saw met (a failure since clears it):
    /// until then a completed task is still checked at every stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met: Option<String>,
}

impl LadderState {
    fn new(task: Option<u64>) -> LadderState {
        LadderState {
            schema: CHECK_SCHEMA_ID.to_owned(),
            task,
            consecutive_failures: 0,
            last_failure_at: None,
            last_failure: Vec::new(),
            escalations: 0,
            last_escalated_at: None,
            met: None,
        }
    }
}

/// Allow the stop (exit 0) or block it (exit 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Block,
}

/// What the Stop hook decided, and why.
#[derive(Debug, Clone, Serialize)]
pub struct HookOutcome {
    pub verdict: Verdict,
    pub task: Option<u64>,
    /// The text for the agent (blocked) or the user (allowed).
    pub message: String,
    /// The consecutive failures counted so far (0 after a pass or an escalation).
    pub consecutive_failures: u32,
    pub escalated: bool,
    pub report: Option<CheckReport>,
    pub warnings: Vec<String>,
}

/// The inputs of one Stop hook run.
#[derive(Debug)]
pub struct HookRequest {
    pub task: Option<u64>,
    pub require_declaration: bool,
    /// The payload as read from stdin, or why it could not be (too large, a failed read): a
    /// verdict like a malformed one, never an empty payload in its place.
    pub payload: Result<Vec<u8>>,
}

/// A failure to count: the lines that say what is wrong, and the report if a check ran.
struct Failure {
    lines: Vec<String>,
    report: Option<CheckReport>,
    error: bool,
}

/// Run the Stop hook: never an `Err`, every error is a verdict.
pub fn stop_hook(target: &Path, request: &HookRequest) -> HookOutcome {
    let parsed = request
        .payload
        .as_ref()
        .map(|bytes| super::payload::parse_stop(bytes));
    let stop: std::result::Result<&super::payload::Stop, &Error> = match &parsed {
        Ok(Ok(stop)) => Ok(stop),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(*e),
    };
    let stop_hook_active = stop.as_ref().is_ok_and(|s| s.stop_hook_active);
    if crate::store::is_absent(target) {
        return plan_gone(target);
    }
    let plan_dir = match super::plan_dir(target) {
        Ok(dir) => dir,
        Err(e) => return uncountable(error_failure(&e), stop_hook_active),
    };
    let tasks = match PlanTasks::load(&plan_dir) {
        Ok(tasks) => tasks,
        Err(e) => return on_failure(&plan_dir, None, error_failure(&e), stop_hook_active),
    };
    let task = match tasks.select(request.task) {
        Ok(task) => task,
        Err(e) => return on_failure(&plan_dir, None, error_failure(&e), stop_hook_active),
    };
    if let Err(e) = &stop {
        return on_failure(&plan_dir, task, error_failure(e), stop_hook_active);
    }
    // A task completed with its contract unmet (its gate asserted, say) is held to it still.
    let mut held = completed_unmet(&plan_dir, &tasks);
    held.extend(task.filter(|task| !held.contains(task)));
    let mut outcome = allow(
        None,
        "no task is in progress: no file contract to check".into(),
    );
    for task in held {
        match judge_task(&plan_dir, &tasks, task, request.require_declaration) {
            Judged::Failed(failure) => {
                return on_failure(&plan_dir, Some(task), failure, stop_hook_active);
            }
            Judged::Allowed(allowed) => outcome = allowed,
        }
    }
    outcome
}

/// A task's contract judged at a stop: a failure to count, or the stop allowed for this task.
enum Judged {
    Failed(Failure),
    Allowed(HookOutcome),
}

/// Judge the contract of `task` (a pass is recorded as met).
fn judge_task(plan_dir: &Path, tasks: &PlanTasks, task: u64, require_declaration: bool) -> Judged {
    if tasks.status(task) == Some(TaskStatus::Blocked) {
        return Judged::Allowed(allow(
            Some(task),
            format!("task {task} is blocked: its contract waits for the blocker to be resolved"),
        ));
    }
    match super::check::check_loaded(plan_dir, tasks, Some(task)) {
        Err(e) => Judged::Failed(error_failure(&e)),
        Ok(CheckOutcome::NoTask) => Judged::Allowed(allow(None, "no task to check".into())),
        Ok(CheckOutcome::Undeclared { task, file }) if require_declaration => {
            Judged::Failed(Failure {
                lines: vec![format!(
                    "task {task} declares no files ({file} is missing): declare them with `dwp contract declare`"
                )],
                report: None,
                error: false,
            })
        }
        Ok(CheckOutcome::Undeclared { task, .. }) => Judged::Allowed(allow(
            Some(task),
            format!("task {task} declares no files: nothing to check"),
        )),
        Ok(CheckOutcome::Checked(report)) if report.passed => {
            Judged::Allowed(passed(plan_dir, report))
        }
        Ok(CheckOutcome::Checked(report)) => Judged::Failed(Failure {
            lines: report.failures(),
            report: Some(report),
            error: false,
        }),
    }
}

/// The completed tasks a Stop check has not seen met: those with a declaration, or with a
/// ladder file (a stop checked them in progress), whose ladder does not hold the sha256 of
/// their declaration as it is now (a declaration deleted since is never met).
fn completed_unmet(plan_dir: &Path, tasks: &PlanTasks) -> Vec<u64> {
    // No ledger folder, no contract: a plan of 10,000 tasks is not looked through for nothing.
    let ledger = plan_dir.join(LEDGER_DIR);
    if crate::store::place(&ledger, plan_dir) == crate::store::Place::Missing {
        return Vec::new();
    }
    tasks
        .tasks
        .iter()
        .filter(|(_, status)| *status == TaskStatus::Completed)
        .map(|(task, _)| *task)
        .filter(|task| {
            let files = TaskFiles::new(plan_dir, *task);
            let declaration = crate::store::read_artifact(&files.expected, plan_dir).ok();
            let ladder = crate::store::read_artifact(&files.check, plan_dir).ok();
            if declaration.is_none() && ladder.is_none() {
                return false;
            }
            let met = ladder
                .and_then(|bytes| serde_json::from_slice::<LadderState>(&bytes).ok())
                .and_then(|state| state.met);
            met.is_none() || met != declaration.map(|bytes| crate::store::sha256_hex(&bytes))
        })
        .collect()
}

fn error_failure(error: &Error) -> Failure {
    let mut line = error.to_string();
    if let Some(hint) = error.hint() {
        line.push_str(&format!(" (hint: {hint})"));
    }
    Failure {
        lines: vec![line],
        report: None,
        error: true,
    }
}

/// The hook names a plan that no longer exists (renamed, archived, removed after it was
/// published): there is no contract to check, and blocking every stop of every turn for it
/// would hold the agent to a plan that is gone. The stop is allowed with a warning that says
/// so and what to fix.
fn plan_gone(target: &Path) -> HookOutcome {
    let mut outcome = allow(
        None,
        "the plan this hook names does not exist: no file contract was checked".into(),
    );
    outcome.warnings.push(format!(
        "nothing exists at {}: the plan was moved or removed; point the Stop hook's command at the plan in progress, or remove the hook",
        crate::term::path_word(target)
    ));
    outcome
}

fn allow(task: Option<u64>, message: String) -> HookOutcome {
    HookOutcome {
        verdict: Verdict::Allow,
        task,
        message,
        consecutive_failures: 0,
        escalated: false,
        report: None,
        warnings: Vec::new(),
    }
}

/// A pass resets the ladder and records the declaration as met; a ladder that cannot be
/// written is a warning, not a block.
fn passed(plan_dir: &Path, report: CheckReport) -> HookOutcome {
    let task = report.task;
    let mut outcome = allow(
        Some(task),
        format!(
            "the file contract of task {task} holds: {} expected files verified",
            report.expectations.len()
        ),
    );
    outcome.warnings = report.warnings.clone();
    let files = TaskFiles::new(plan_dir, task);
    let mut state = LadderState::new(Some(task));
    state.met = crate::store::read_artifact(&files.expected, plan_dir)
        .ok()
        .map(|bytes| crate::store::sha256_hex(&bytes));
    if let Err(e) = write_state(plan_dir, &files.check, &state) {
        outcome
            .warnings
            .push(format!("the retry count could not be reset: {e}"));
    }
    outcome.report = Some(report);
    outcome
}

/// The ladder file of a task, or of the plan when no task could be told.
fn ladder_path(plan_dir: &Path, task: Option<u64>) -> PathBuf {
    match task {
        Some(task) => TaskFiles::new(plan_dir, task).check,
        None => plan_dir.join(LEDGER_DIR).join("plan.check.json"),
    }
}

/// Forget the count (a pass, or a new declaration).
pub fn reset(plan_dir: &Path, path: &Path) -> Result<()> {
    let bytes = match crate::store::read_artifact(path, plan_dir) {
        Ok(bytes) => bytes,
        Err(crate::store::ReadFailure::Missing) => return Ok(()),
        Err(failure) => return Err(failure.into_error("read", path)),
    };
    let mut change = Change::new(plan_dir, "dwp contract");
    change.remove(path, &bytes);
    crate::steps::commit::commit(change)
}

/// Read a ladder file; a missing one is a fresh ladder, a malformed one is replaced (it is
/// dwp's own count: starting it again can only delay an escalation, never skip a check).
pub fn read_state(
    plan_dir: &Path,
    path: &Path,
    task: Option<u64>,
    warnings: &mut Vec<String>,
) -> LadderState {
    let Ok(bytes) = crate::store::read_artifact(path, plan_dir) else {
        return LadderState::new(task);
    };
    match serde_json::from_slice::<LadderState>(&bytes) {
        Ok(state) if state.schema == CHECK_SCHEMA_ID && state.task == task => state,
        _ => {
            warnings.push(format!(
                "{}: not a retry count dwp wrote: started again",
                path.display()
            ));
            LadderState::new(task)
        }
    }
}

fn write_state(plan_dir: &Path, path: &Path, state: &LadderState) -> Result<()> {
    super::ensure_ledger_dir(plan_dir)?;
    let mut change = Change::new(plan_dir, "dwp contract check");
    change.write_known(path, None, crate::store::json_file_bytes(state));
    crate::steps::commit::commit(change)
}

/// Count one failure, then block (Tier 1, 2) or escalate and allow (Tier 3).
fn on_failure(
    plan_dir: &Path,
    task: Option<u64>,
    failure: Failure,
    stop_hook_active: bool,
) -> HookOutcome {
    let path = ladder_path(plan_dir, task);
    let mut warnings = Vec::new();
    let mut state = read_state(plan_dir, &path, task, &mut warnings);
    state.consecutive_failures += 1;
    state.met = None;
    state.last_failure_at = Some(crate::clock::now_rfc3339());
    state.last_failure = failure.lines.clone();
    if let Err(e) = write_state(plan_dir, &path, &state) {
        warnings.push(format!("the retry count could not be written: {e}"));
        let mut outcome = uncountable(failure, stop_hook_active);
        outcome.warnings.extend(warnings);
        return outcome;
    }
    let count = state.consecutive_failures;
    let mut outcome = HookOutcome {
        verdict: Verdict::Block,
        task,
        message: String::new(),
        consecutive_failures: count,
        escalated: false,
        report: failure.report.clone(),
        warnings,
    };
    if count < ESCALATE_AT {
        outcome.message = block_message(task, &failure, count);
        return outcome;
    }
    tier3(plan_dir, &path, state, &failure, outcome)
}

/// Tier 3: mark the task blocked (or say why it could not be) and allow the stop.
fn tier3(
    plan_dir: &Path,
    path: &Path,
    mut state: LadderState,
    failure: &Failure,
    mut outcome: HookOutcome,
) -> HookOutcome {
    let count = state.consecutive_failures;
    let lines = bullet(&failure.lines);
    outcome.verdict = Verdict::Allow;
    let Some(task) = state.task else {
        outcome.message = format!(
            "dwp contract check could not run {count} times in a row; the stop is allowed so the loop ends, but NO file contract was verified:\n{lines}"
        );
        return outcome;
    };
    // A task whose blocker is resolved later gets a fresh ladder.
    let previous = state.clone();
    state.consecutive_failures = 0;
    state.escalations += 1;
    state.last_escalated_at = state.last_failure_at.clone();
    if let Err(e) = escalate(plan_dir, path, task, failure, count, (&previous, &state)) {
        outcome.message = format!(
            "the file contract of task {task} failed {count} consecutive checks, and marking the task blocked failed too ({e}); the stop is allowed so the loop ends, but the contract is NOT met:\n{lines}"
        );
        return outcome;
    }
    outcome.consecutive_failures = 0;
    outcome.escalated = true;
    outcome.message = format!(
        "the file contract of task {task} failed {count} consecutive checks: task {task} is now BLOCKED (see `dwp status`); the stop is allowed and the orchestrator owns the fix:\n{lines}"
    );
    outcome
}

/// No place to count: block once, allow when already continuing from a block.
fn uncountable(failure: Failure, stop_hook_active: bool) -> HookOutcome {
    let (verdict, tail) = if stop_hook_active {
        (
            Verdict::Allow,
            "the count cannot be kept and the agent already continued after a block: the stop is allowed so the loop ends, but NO file contract was verified",
        )
    } else {
        (Verdict::Block, "the stop is blocked until this is fixed")
    };
    HookOutcome {
        verdict,
        task: None,
        message: format!(
            "dwp contract check could not run ({tail}):\n{}",
            bullet(&failure.lines)
        ),
        consecutive_failures: 0,
        escalated: false,
        report: failure.report,
        warnings: Vec::new(),
    }
}

fn bullet(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("  - {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn block_message(task: Option<u64>, failure: &Failure, count: u32) -> String {
    let whose = task.map_or_else(|| "the plan".to_owned(), |t| format!("task {t}"));
    let what = if failure.error {
        format!("the file contract of {whose} could not be checked")
    } else {
        format!("the file contract of {whose} is not met")
    };
    let tier = if count == 1 {
        "Tier 1: fix exactly what is listed, then stop again."
    } else {
        "Tier 2: the direct fix did not hold; re-read the task description and apply a corrected approach."
    };
    format!(
        "{what} (failure {count} of {ESCALATE_AT}; the {ESCALATE_AT}rd marks the task blocked):\n{}\n{tier}",
        bullet(&failure.lines)
    )
}

/// Tier 3: the task becomes blocked through the guarded updater. Its two writes, the task blocked in state.json and the ladder reset (the escalation's
/// record), in one intent record under the plan's lock: a kill between them is completed by the
/// next writer, so a task is never blocked without its escalation counted, nor counted twice.
fn escalate(
    plan_dir: &Path,
    ladder: &Path,
    task: u64,
    failure: &Failure,
    count: u32,
    (before, after): (&LadderState, &LadderState),
) -> Result<()> {
    let request = crate::steps::updater::UpdateRequest {
        task,
        status: Some(TaskStatus::Blocked),
        block_reason: Some(block_reason(&failure.lines, count)),
        block_needs: Some(format!(
            "a correction task: make the declared file changes (or declare them again with `dwp contract declare {plan} --task {task} --replace` and the files), then `dwp update {plan} --task {task} --resolve-blocker --status in_progress`",
            plan = crate::term::path_word(plan_dir)
        )),
        checkpoint_note: Some(format!(
            "file contract failed {count} consecutive Stop checks"
        )),
        wait: std::time::Duration::from_secs(5),
        ..Default::default()
    };
    crate::steps::updater::check_request(&request)?;
    crate::steps::writer::under_lock(plan_dir, request.wait, |plan| {
        let now = crate::clock::now_rfc3339();
        let planned = crate::steps::updater::plan_update(plan, &request, &now)?;
        let mut change = Change::new(plan.dir(), "dwp contract check --hook");
        change.extend(planned.change);
        change.write(
            ladder,
            Some(&crate::store::json_file_bytes(before)),
            crate::store::json_file_bytes(after),
        );
        crate::steps::commit::commit(change)
    })
}

/// The failed expectations as one reason, within the state schema's 1,000 characters.
fn block_reason(lines: &[String], count: u32) -> String {
    const MAX: usize = 1000;
    let mut reason = format!("file contract failed {count} consecutive checks: ");
    for (i, line) in lines.iter().enumerate() {
        let sep = if i == 0 { "" } else { "; " };
        let more = format!("; and {} more", lines.len() - i);
        if reason.chars().count() + sep.len() + line.chars().count() + more.len() > MAX {
            reason.push_str(&more);
            return reason;
        }
        reason.push_str(sep);
        reason.push_str(line);
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_block_reason_fits_the_state_schema() {
        let lines: Vec<String> = (0..200)
            .map(|i| format!("src/file_{i}.rs (modify): content unchanged since the declaration"))
            .collect();
        let reason = block_reason(&lines, 3);
        assert!(reason.chars().count() <= 1000, "{}", reason.len());
        assert!(reason.ends_with("more"), "{reason}");
        assert!(reason.contains("src/file_0.rs"));
    }
}
