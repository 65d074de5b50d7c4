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
//! - On a record plan (DWP v6/v7), `dwp run PLAN --task T-x --criterion AC-y -- COMMAND` is the
//!   public ledger's `gate` ([`run_record`]): the same run, stdout and stderr kept apart, at the
//!   ledger's gate root, recorded as one `observed` `gate_run` and its log under `gates/<task>/`,
//!   byte for byte as the ledger writes them (`rules::record::gate_run`).

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
            exit: self::exit_code(&ending),
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

/// What `dwp run` asks of a record plan (DWP v6/v7): one gate, or one evaluation of an
/// invariant.
#[derive(Debug, Clone)]
pub struct RecordRunRequest {
    pub subject: RunSubject,
    pub argv: Vec<String>,
    pub timeout: Duration,
    pub pass_env: Vec<String>,
    pub wait: Duration,
}

/// What a record plan's run is evidence for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunSubject {
    /// `criterion` of `task`'s `gate_intent`: the run is recorded as a `gate_run`.
    Gate { task: String, criterion: String },
    /// A plan-scoped invariant (`INV-...`): the run is recorded as an `observation` of its
    /// evaluation, `INV-x: pass` when the check exits 0, `INV-x: fail: ...` otherwise.
    Invariant(String),
}

impl RunSubject {
    /// The folder of `gates/` its logs are kept in: the task's, or the invariant's.
    fn log_owner(&self) -> &str {
        match self {
            RunSubject::Gate { task, .. } => task,
            RunSubject::Invariant(id) => id,
        }
    }
}

/// What one `dwp run` on a record plan observed and recorded: one `observed` event (a
/// `gate_run`, or an `observation` evaluating an invariant) and its log.
#[derive(Debug, Clone, Serialize)]
pub struct RecordRunReport {
    pub plan: String,
    /// The event recorded: `gate_run` or `observation`.
    pub event: &'static str,
    /// The gate's task and criterion (a gate run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criterion: Option<String>,
    /// The invariant evaluated and the statement recorded (an evaluation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invariant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statement: Option<String>,
    /// The command as the event records it (shell words).
    pub command: String,
    /// Where it ran, as the event records it (absolute).
    pub cwd: String,
    pub timeout_seconds: u64,
    /// How it ended: `exit 0`, `timed out after 5 s`, `killed by signal 9`.
    pub ended: String,
    /// The exit code the event records (a gate run's `exit_code`; an evaluation's verdict): the
    /// command's own, -N for signal N, 124 timed out.
    pub exit_code: i64,
    /// The event's seq.
    pub seq: i64,
    /// The log, relative to the plan folder (the event's `evidence_path`), and its sha256.
    pub log: String,
    pub log_sha256: String,
    /// Every byte the command printed on each stream, and whether the log keeps only the tail
    /// of one.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub truncated: bool,
    /// The names of the variables passed from dwp's environment.
    pub env: Vec<String>,
    /// The run satisfies the criterion (it exited 0 and the criterion accepts observed
    /// evidence), or the invariant passed.
    pub satisfied: bool,
    pub contract_id: String,
    /// The mends of the live journal the writer made on opening it.
    pub repairs: Vec<crate::steps::record_writer::Repair>,
    /// The exit code dwp exits with: the command's own; 124 timed out, 128+N killed by signal N.
    #[serde(skip)]
    pub exit: u8,
}

/// Run the gate of `request` for a task of the record plan at `plan_dir`, streaming its output
/// to `sink`, and record what dwp observed as one `gate_run` (the public ledger's `gate`); or
/// run an invariant's check and record its evaluation as one `observation`.
///
/// Everything the ledger would refuse is refused before the command runs, writing nothing; the
/// plan's lock is taken only once it ended (a long gate holds no lock, which the ledger breaks
/// after 900 s). A command that could not be started is recorded nowhere, as the ledger records
/// nothing for a command that never ran.
pub fn run_record(
    plan_dir: &Path,
    request: &RecordRunRequest,
    sink: Box<dyn std::io::Write + Send>,
) -> Result<RecordRunReport> {
    let command = check_record_request(request)?;
    let env = CommandEnv::new(&request.pass_env)?;
    judge_unlocked(plan_dir, request)?;
    let cwd = std::path::absolute(plan_dir)
        .map(|dir| crate::rules::record::gate_run::gate_root(&dir))
        .map_err(|e| Error::io("read", Path::new("."), e))?;
    let ran = crate::steps::process::run_teed_apart(
        &request.argv,
        &cwd,
        &env.vars(),
        request.timeout,
        sink,
        observed::LOG_BOUND,
    )
    .map_err(|e| Error::io("run", Path::new(&request.argv[0]), e))?;
    let ending = gate_log::ending(&ran.ending);
    let Some(exit_code) = crate::rules::record::gate_run::recorded_exit(&ending) else {
        return Err(never_ran(&request.argv[0], &ran.ending));
    };
    let gate = RanGate {
        command,
        cwd,
        ending,
        exit_code,
        ran,
        env: env.names(),
    };
    record_gate(plan_dir, request, &gate)
}

/// A record plan's gate dwp ran, before it is recorded.
struct RanGate {
    /// As its event records it.
    command: String,
    cwd: PathBuf,
    ending: Ending,
    /// As its event records it (`gate_run::recorded_exit`).
    exit_code: i64,
    ran: crate::steps::process::TeedApart,
    env: Vec<String>,
}

/// Record `gate` under the plan's lock: the ledger's refusals judged again (the contract may
/// have been amended while the command ran), then the log written first, a new file nothing
/// refers to yet, and the event citing it after: a kill between the two leaves a log without
/// an event, never an event without its log.
fn record_gate(
    plan_dir: &Path,
    request: &RecordRunRequest,
    gate: &RanGate,
) -> Result<RecordRunReport> {
    use crate::rules::record::{gate_run, invariant};
    let mut writer = crate::steps::record_writer::RecordWriter::open(plan_dir, request.wait)?;
    let (_, derived) = writer.plan();
    let ran = "dwp ran the command, but ";
    if let Some(refused) = refused(plan_dir, writer.contract(), derived, request, ran) {
        writer.finish()?;
        return Err(refused);
    }
    let recorded = gate.exit_code;
    let seq = writer.next_seq();
    let owner = request.subject.log_owner();
    let log = gate_run::log_name(owner, seq, &gate.command);
    let bytes = gate_log_bytes(gate);
    let log_sha256 = crate::store::sha256_hex(&bytes);
    write_log(plan_dir, owner, &log, bytes)?;
    let (event, satisfied) = match &request.subject {
        RunSubject::Gate { task, criterion } => {
            let event = writer.append_gate_run(gate_run::payload(&gate_run::GateRun {
                task,
                criterion,
                command: &gate.command,
                cwd: &gate.cwd,
                timeout_seconds: request.timeout.as_secs(),
                exit_code: recorded,
                evidence_path: &log,
            }))?;
            (
                event,
                gate_run::satisfies(writer.contract(), criterion, recorded),
            )
        }
        RunSubject::Invariant(id) => {
            let statement = invariant::statement(id, recorded);
            let event = writer.append_evaluation(invariant::payload(&statement, &log))?;
            (event, recorded == 0)
        }
    };
    let (stdout, stderr) = (&gate.ran.stdout, &gate.ran.stderr);
    let (task, criterion, invariant) = match &request.subject {
        RunSubject::Gate { task, criterion } => (Some(task), Some(criterion), None),
        RunSubject::Invariant(id) => (None, None, Some(id)),
    };
    let report = RecordRunReport {
        plan: plan_dir.display().to_string(),
        event: if invariant.is_some() {
            "observation"
        } else {
            "gate_run"
        },
        task: task.cloned(),
        criterion: criterion.cloned(),
        invariant: invariant.cloned(),
        statement: event
            .get("statement")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        command: gate.command.clone(),
        cwd: gate.cwd.display().to_string(),
        timeout_seconds: request.timeout.as_secs(),
        ended: gate.ending.to_string(),
        exit_code: recorded,
        seq: event
            .get("seq")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(seq),
        log,
        log_sha256,
        stdout_bytes: stdout.total,
        stderr_bytes: stderr.total,
        truncated: [stdout, stderr]
            .iter()
            .any(|s| s.total > s.tail.len() as u64),
        env: gate.env.clone(),
        satisfied,
        contract_id: writer.contract_id().to_owned(),
        repairs: writer.repairs.clone(),
        exit: exit_code(&gate.ending),
    };
    writer.finish()?;
    Ok(report)
}

/// The gate's log, as the ledger writes it.
fn gate_log_bytes(gate: &RanGate) -> Vec<u8> {
    use crate::rules::record::gate_run::{Stream, log_bytes};
    fn stream(kept: &crate::steps::process::Captured) -> Stream<'_> {
        Stream {
            tail: &kept.tail,
            total: kept.total,
        }
    }
    let (stdout, stderr) = (stream(&gate.ran.stdout), stream(&gate.ran.stderr));
    log_bytes(&gate.command, stdout, stderr, &gate.ending, gate.exit_code)
}

/// The command as its event records it, once the request is known to fit one.
fn check_record_request(request: &RecordRunRequest) -> Result<String> {
    if request.argv.is_empty() {
        return Err(Error::Usage(
            "no command to run: give it after `--` (dwp run --task T-... --criterion AC-... -- COMMAND [ARG]...)".into(),
        ));
    }
    if request.timeout.is_zero() {
        return Err(Error::Usage("--timeout must be at least 1 second".into()));
    }
    let command = crate::term::display_argv(&request.argv);
    Error::check_length("the command (a gate_run's `command`)", &command, 500)?;
    Ok(command)
}

/// The ledger's refusals, and a log folder that could not hold the log, judged on the plan as
/// read without the lock: nothing is run for a gate that would not be recorded.
fn judge_unlocked(plan_dir: &Path, request: &RecordRunRequest) -> Result<()> {
    let plan = crate::plan::record::RecordPlan::load(plan_dir);
    let judged = crate::rules::record::validate_to_write(&plan);
    let contract = plan.live_contract().and_then(|doc| doc.value());
    let (Some(derived), Some(contract)) = (judged.derived, contract) else {
        return Err(crate::steps::record_writer::unjudgeable(
            plan_dir,
            &judged.findings,
            "dwp records no gate under a contract it cannot judge, and runs no command",
        ));
    };
    if let Some(refused) = refused(plan_dir, contract, &derived, request, "") {
        return Err(refused);
    }
    let folder = format!("gates/{}", request.subject.log_owner());
    gate_log::check_folders(plan_dir, &["gates", &folder], |path| {
        crate::store::entry(path, plan_dir).ok()
    })
}

/// Why the ledger would not record the run `request` asks for under `contract`, whose journal
/// derives `derived`, in words (`ran` opens them when the command ran already); `None` when it
/// would.
fn refused(
    plan_dir: &Path,
    contract: &serde_json::Value,
    derived: &crate::rules::record::Derived,
    request: &RecordRunRequest,
    ran: &str,
) -> Option<Error> {
    use crate::rules::record::{gate_run, invariant};
    let program = &request.argv[0];
    match &request.subject {
        RunSubject::Gate { task, criterion } => {
            let tasks = &derived.projection.tasks;
            let refusal = gate_run::refusal(contract, tasks, task, criterion, program)?;
            Some(refused_gate(plan_dir, task, criterion, refusal, ran))
        }
        RunSubject::Invariant(id) => {
            let approved = derived.approval.is_some();
            let refusal = invariant::refusal(contract, approved, id, program)?;
            Some(refused_evaluation(plan_dir, id, refusal, ran))
        }
    }
}

/// Write the log `name` (relative to the plan folder) as a new file, with the folders it needs.
fn write_log(plan_dir: &Path, task: &str, name: &str, bytes: Vec<u8>) -> Result<()> {
    let mut change = Change::new(plan_dir, "dwp run");
    change.create_dir(&plan_dir.join("gates"));
    change.create_dir(&plan_dir.join("gates").join(task));
    change.new_file(&plan_dir.join(name), bytes);
    crate::steps::commit::commit(change)
}

/// A gate's refusal, in the ledger's words.
fn refused_gate(
    plan_dir: &Path,
    task: &str,
    criterion: &str,
    refusal: crate::rules::record::gate_run::Refusal,
    ran: &str,
) -> Error {
    use crate::rules::record::gate_run::Refusal;
    let plan = crate::term::path_word(plan_dir);
    let nothing = "nothing was recorded";
    let (message, hint) = match refusal {
        Refusal::UnknownTask { known } => (
            format!(
                "{ran}the live contract has no task {task} (its tasks: {}); {nothing}",
                known.join(", ")
            ),
            format!("`dwp status {plan}` lists the tasks and their criteria"),
        ),
        Refusal::Undeclared { declared } => (
            format!(
                "{ran}criterion {} is not declared in {task}'s gate_intent ({}): the linkage cannot be chosen after the run; {nothing}",
                criterion,
                listed(&declared)
            ),
            format!("`dwp status {plan}` lists each task's criteria"),
        ),
        Refusal::NotStarted => (
            format!(
                "{ran}{task} has no task_start: observed evidence is recorded only inside a task's attempt; {nothing}"
            ),
            format!("start it first: `dwp update {plan} --task {task} --status in_progress`"),
        ),
        Refusal::OutsideClasses { program, declared } => {
            outside_classes(ran, &program, &declared, "gate")
        }
    };
    Error::rejected(format!("--task {task}"), message).with_hint(hint)
}

/// An invariant evaluation's refusal, in the same words.
fn refused_evaluation(
    plan_dir: &Path,
    id: &str,
    refusal: crate::rules::record::invariant::Refusal,
    ran: &str,
) -> Error {
    use crate::rules::record::invariant::Refusal;
    let plan = crate::term::path_word(plan_dir);
    let nothing = "nothing was recorded";
    let (message, hint) = match refusal {
        Refusal::Unknown { declared } => (
            format!(
                "{ran}the live contract declares no invariant {id} (its invariants: {}); {nothing}",
                listed(&declared)
            ),
            format!(
                "`dwp status {plan}` lists the live contract's invariants; another one is added by an amendment"
            ),
        ),
        Refusal::Unapproved => (
            format!(
                "{ran}no approval cites the live contract: nothing is evaluated under a contract nobody approved (rule 19); {nothing}"
            ),
            format!("`dwp status {plan}` shows the approval the plan has"),
        ),
        Refusal::OutsideClasses { program, declared } => {
            outside_classes(ran, &program, &declared, "check")
        }
    };
    Error::rejected(format!("--invariant {id}"), message).with_hint(hint)
}

/// `ids` joined for a message, `none` when there are none.
fn listed(ids: &[String]) -> String {
    match ids.is_empty() {
        true => "none".to_owned(),
        false => ids.join(", "),
    }
}

/// A program outside the contract's command classes: the message and hint, for a `gate` or a
/// `check`.
fn outside_classes(ran: &str, program: &str, declared: &[String], run: &str) -> (String, String) {
    (
        format!(
            "{ran}`{program}` is outside the contract's allowed_command_classes ({}); nothing was recorded",
            declared.join(", ")
        ),
        format!(
            "run the {run} with a program the contract declares; another one needs an amendment of the contract"
        ),
    )
}

/// The command could not be started: the ledger records nothing for a command that never ran.
fn never_ran(program: &str, ending: &crate::steps::process::Ending) -> Error {
    let why = match ending {
        crate::steps::process::Ending::NotStarted(why) => why.as_str(),
        _ => "it did not start",
    };
    Error::rejected(
        program.to_owned(),
        format!("the command could not be started ({why}): no event is recorded for a command that never ran"),
    )
    .with_hint("name a program on PATH, or give its path")
}
