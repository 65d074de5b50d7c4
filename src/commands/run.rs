//! `dwp run [PLAN] --task N -- COMMAND [ARG]...`: dwp runs the agent's gate itself
//! and records what it observed, so the record is no longer the agent's word.
//!
//! - The command is the one on the command line, never one stored in the plan (docs/DECISIONS.md,
//!   "Observed gate evidence"): argv, no shell, at the root of the plan's repository (where a
//!   project's build and tests expect to run; `--cwd` names another folder), with the minimal
//!   environment of `loop prove` (`steps::command_env`) and a process-group timeout, its output
//!   streamed to the caller's sink (the terminal's stderr) as it runs (`steps::process::run_teed`).
//! - Everything the updater would refuse is refused before the command runs (the same update
//!   planned, without the lock), so a long gate is not run for nothing; the task must be
//!   in_progress, or blocked.
//! - Once it ended, under the plan's lock: one change holding the log
//!   (`analysis_results/gates/task-N-<slug>-<time>.log`, bounded, the tail kept) and its gate
//!   record, planned by the guarded updater (compare-and-swap, the evidence rules). A refused
//!   update writes nothing. Nothing is locked while the command runs, so a dwp killed then
//!   leaves no lock and no record.

use crate::error::{Error, Result};
use crate::plan::LoadedPlan;
use crate::plan::model::{Gate, TaskStatus};
use crate::rules::observed::{self, Ending};
use crate::steps::command_env::CommandEnv;
use crate::steps::commit::Change;
use crate::steps::gate_log::{self, ObservedRun};
use crate::steps::updater::{UpdateRequest, check_request as check_update, plan_update};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the caller asks for; every field maps to one flag.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// `--task N`; `None`: the task in progress.
    pub task: Option<u64>,
    pub argv: Vec<String>,
    /// `--cwd DIR`; `None`: the root of the plan's repository ([`working_folder`]).
    pub cwd: Option<PathBuf>,
    pub timeout: Duration,
    pub pass_env: Vec<String>,
    pub expected_sha256: Option<String>,
    pub wait: Duration,
    pub agent: Option<String>,
    pub model: Option<String>,
}

/// What one `dwp run` observed and recorded.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    pub task: u64,
    /// The folder the command ran in.
    pub cwd: PathBuf,
    /// The gate record written, as state.json now holds it.
    pub gate: Gate,
    /// How the command ended: `exit 0`, `timed out after 5 s`, `killed by signal 9`, `not started`.
    pub ended: String,
    pub summary: Option<String>,
    /// The log, relative to the plan folder, and its sha256.
    pub log: String,
    /// The plan folder, for the text output to name the log from where the user stands.
    #[serde(skip)]
    pub plan_dir: PathBuf,
    pub log_sha256: String,
    /// Every byte the command printed, and whether the log keeps only their tail.
    pub output_bytes: u64,
    pub truncated: bool,
    /// The names of the variables passed from dwp's environment.
    pub env: Vec<String>,
    pub old_sha256: String,
    pub new_sha256: String,
    /// The command exited 0 but its output shows it selected or ran no test: the gate is
    /// recorded as failing all the same (dwp still exits 0, the command's own code).
    pub ran_no_tests: bool,
    /// With `ran_no_tests`: the next step, the same gate run again once it selects its tests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The exit code dwp exits with (the envelope's `exit`): the command's own (0 too when it
    /// ran no tests); 124 timed out, 128+N killed by signal N, 127 not started.
    #[serde(skip)]
    pub exit: u8,
}

/// The exit code of a run that timed out (as `timeout(1)` exits).
pub const EXIT_TIMED_OUT: u8 = 124;
/// The exit code of a command that could not be started (as a shell exits).
pub const EXIT_NOT_STARTED: u8 = 127;

/// Run the command of `request` for a task of the plan at `target`, streaming its output to
/// `sink`, and record what dwp observed as one gate record.
pub fn run(
    target: &Path,
    request: &RunRequest,
    sink: Box<dyn std::io::Write + Send>,
) -> Result<RunOutcome> {
    let command = check_request(request)?;
    let env = CommandEnv::new(&request.pass_env)?;
    let mut unlocked = LoadedPlan::of_target(target);
    let task = task_to_run(&unlocked, request.task, &command)?;
    // Whatever the updater would refuse (approval, materialization, a blocker, the snapshot),
    // refused now rather than after a long run: the same update planned, placeholder evidence.
    let rehearsal = gate_request(request, task, placeholder_gate(&command), true);
    check_update(&rehearsal)?;
    plan_update(&mut unlocked, &rehearsal, &crate::clock::now_rfc3339())?;
    gate_log::check_log_folder(&unlocked)?;
    let cwd = working_folder(request.cwd.as_deref(), unlocked.dir())?;
    drop(unlocked);
    let teed = crate::steps::process::run_teed(
        &request.argv,
        &cwd,
        &env.vars(),
        request.timeout,
        sink,
        observed::LOG_BOUND,
    )
    .map_err(|e| Error::io("run", Path::new(&request.argv[0]), e))?;
    let finished = crate::clock::now_rfc3339();
    let ending = gate_log::ending(&teed.ending);
    let observed_run = ObservedRun {
        argv: request.argv.clone(),
        finished,
        ending: ending.clone(),
        total: teed.total,
        output: teed.tail,
    };
    crate::steps::writer::under_lock(target, request.wait, |plan| {
        // The task may have moved while the command ran.
        require_runnable(
            &crate::steps::writer::load_state_for_write(plan, true)?.doc,
            task,
            plan.dir(),
        )?;
        let mut log_change = Change::new(plan.dir(), "dwp run");
        let recorded = gate_log::record(plan, &mut log_change, task, &observed_run);
        let gate = recorded.gate.clone();
        let log = recorded.log.clone();
        let update = gate_request(request, task, gate.clone(), false);
        check_update(&update)?;
        // The log and its record land together, or (refused) neither does.
        let mut planned = plan_update(plan, &update, &crate::clock::now_rfc3339())?;
        planned.change.prepend(log_change);
        let updated = crate::steps::updater::commit_update(planned)?;
        let plan_dir = plan.dir();
        let summary = recorded.observation.summary.clone();
        let ran_no_tests = recorded.observation.ran_no_tests();
        Ok(RunOutcome {
            task,
            cwd,
            gate,
            ended: ending.to_string(),
            summary,
            log: log.name,
            plan_dir: plan_dir.to_path_buf(),
            log_sha256: log.sha256,
            output_bytes: teed.total,
            truncated: observed_run.total > observed_run.output.len() as u64,
            env: env.names(),
            old_sha256: updated.old_sha256,
            new_sha256: updated.new_sha256,
            ran_no_tests,
            hint: ran_no_tests.then(|| {
                format!(
                    "make the command select the tests it is meant to run (a filter or a path that matches none selects nothing), then run the gate again: `dwp run {} --task {task} -- {command}`",
                    crate::term::path_word(plan_dir)
                )
            }),
            exit: exit_code(&ending),
        })
    })
}

/// Where the command runs: `--cwd` (a folder, or a usage error before anything runs), else the
/// root of the plan's repository, else (a plan in no repository) the current folder.
fn working_folder(cwd: Option<&Path>, plan_dir: &Path) -> Result<PathBuf> {
    if let Some(dir) = cwd {
        if !dir.is_dir() {
            return Err(Error::Usage(format!(
                "--cwd `{}` is not a folder: the gate would have nowhere to run",
                dir.display()
            ))
            .with_hint(
                "name an existing folder, or leave --cwd out to run at the plan's repository root",
            ));
        }
        return Ok(dir.to_path_buf());
    }
    match crate::plan::repository_of(plan_dir) {
        Some(root) => Ok(root),
        None => std::env::current_dir().map_err(|e| Error::io("read", Path::new("."), e)),
    }
}

/// The command as its gate records it, once the request is known to fit a gate record.
fn check_request(request: &RunRequest) -> Result<String> {
    if request.argv.is_empty() {
        return Err(Error::Usage(
            "no command to run: give it after `--` (dwp run --task N -- COMMAND [ARG]...)".into(),
        ));
    }
    if request.timeout.is_zero() {
        return Err(Error::Usage("--timeout must be at least 1 second".into()));
    }
    crate::steps::writer::check_signature(request.agent.as_ref(), request.model.as_ref())?;
    let command = crate::term::display_argv(&request.argv);
    Error::check_length("the command (a gate's `command`)", &command, 500)?;
    Ok(command)
}

/// `--task`, or the task in progress; refused unless it is in_progress or blocked. `command` (as
/// its gate records it, shell words) is repeated in a hint that names the task.
fn task_to_run(plan: &LoadedPlan, task: Option<u64>, command: &str) -> Result<u64> {
    let plan_dir = plan.dir();
    let state = &crate::steps::writer::load_state_for_write(plan, true)?.doc;
    let plan = crate::term::path_word(plan_dir);
    let id = match task {
        Some(id) => id,
        None => {
            let open: Vec<u64> = state
                .tasks
                .iter()
                .filter(|t| t.status == TaskStatus::InProgress)
                .map(|t| t.id)
                .collect();
            match open.as_slice() {
                [id] => *id,
                [] => {
                    let refusal = Error::rejected(
                        "--task",
                        "no task is in progress: name the task the gate is for",
                    );
                    let open = state
                        .tasks
                        .iter()
                        .find(|t| crate::rules::invariants::is_open(t));
                    // A finished plan has no task to start: a start line there is refused.
                    return Err(match open {
                        Some(next) if next.status == TaskStatus::Pending => refusal.with_hint(format!(
                            "start the next task first: `dwp update {plan} --task {} --status in_progress`",
                            next.id
                        )),
                        _ => refusal.with_hint(format!(
                            "no task is waiting to be started: `dwp next {plan}` says what remains"
                        )),
                    });
                }
                several => {
                    return Err(Error::rejected(
                        "--task",
                        format!(
                            "tasks {} are in progress: name the one the gate is for",
                            several
                                .iter()
                                .map(u64::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                    .with_hint(format!(
                        "`dwp run {plan} --task {} -- {command}`",
                        several[0]
                    )));
                }
            }
        }
    };
    require_runnable(state, id, plan_dir)?;
    Ok(id)
}

/// A gate is observed for a task at work: in_progress, or blocked (a re-run that resolves
/// nothing by itself).
fn require_runnable(state: &crate::plan::model::State, id: u64, plan_dir: &Path) -> Result<()> {
    let plan = crate::term::path_word(plan_dir);
    let Some(task) = state.task(id) else {
        return Err(Error::rejected(
            "--task",
            format!(
                "there is no task {id}; the plan has tasks 1..{}",
                state.tasks.len()
            ),
        )
        .with_hint(format!("`dwp next {plan}` names the task at work")));
    };
    match task.status {
        TaskStatus::InProgress | TaskStatus::Blocked => Ok(()),
        TaskStatus::Pending => Err(Error::rejected(
            "--task",
            format!("task {id} is pending: a gate is run for a task at work"),
        )
        .with_hint(format!(
            "start it first: `dwp update {plan} --task {id} --status in_progress`"
        ))),
        status => Err(Error::rejected(
            "--task",
            format!(
                "task {id} is {status}: a gate is run for a task at work (in_progress or blocked)"
            ),
        )
        .with_hint(format!(
            "`dwp next {plan}` names the task at work; a {status} task is reopened only through an amendment on the user's word (dwp amend with --invalidate), then run again"
        ))),
    }
}

fn placeholder_gate(command: &str) -> Gate {
    Gate {
        command: command.to_owned(),
        passes: false,
        exit_code: None,
        last_run: crate::clock::now_rfc3339(),
        evidence: Some("dwp run: not run yet".into()),
    }
}

/// The updater's request that records `gate` on `task` and changes nothing else.
fn gate_request(request: &RunRequest, task: u64, gate: Gate, dry_run: bool) -> UpdateRequest {
    UpdateRequest {
        task,
        gates: vec![gate],
        expected_sha256: request.expected_sha256.clone(),
        agent: request.agent.clone(),
        model: request.model.clone(),
        dry_run,
        ..UpdateRequest::default()
    }
}

/// The command's own exit code (the rule: `dwp run -- GATE && ...` composes), also for
/// a run that exited 0 but ran no tests: that gate is recorded as failing, and the updater
/// refuses a completion on it; the codes of a run that has no own code follow `timeout(1)`
/// and the shell.
fn exit_code(ending: &Ending) -> u8 {
    match ending {
        Ending::Exited(code) => u8::try_from(*code).unwrap_or(1),
        Ending::TimedOut(_) => EXIT_TIMED_OUT,
        Ending::Signalled(signal) => u8::try_from(128 + *signal).unwrap_or(1),
        Ending::NotStarted => EXIT_NOT_STARTED,
    }
}

/// The plan argument of the outcome's follow-up lines.
pub fn plan_of(target: &Path) -> PathBuf {
    crate::plan::resolve_target(target).0
}
