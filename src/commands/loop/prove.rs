//! `dwp loop prove`: the worker's side. Runs the `command` items of the project's list and the
//! `check` of every contract outcome that has one, and records what dwp observed: the argv, the
//! exit code, `at`, a one-line evidence summary from the output's tail, and the full output under
//! `.ak-loop/logs/`. Each proof is marked `"observedBy": "dwp"`.
//!
//! Commands get a minimal environment, not dwp's (see [`crate::steps::command_env`]); each proof
//! records the names of the variables passed.
//!
//! Everything that can be refused is checked before the first command runs (configuration,
//! contract, `--item` ids, `--pass-env` names, the existing proof files), so bad input writes
//! nothing. Proofs of items
//! not run this time are kept: `--item` re-proves one item without losing the others.

use super::config::{Check, LoopConfig};
use super::proofs::{self, DodFile, Loaded, Proof, ProofStatus, VerifyFile};
use super::{List, issue};
use crate::error::{Error, Result};
use crate::steps::command_env::CommandEnv;
use crate::steps::process::{self, Ending};
use crate::store::WriteOutcome;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct ProveRequest {
    pub worktree: PathBuf,
    pub config: PathBuf,
    pub contract: Option<PathBuf>,
    /// Only these ids (empty: every runnable item).
    pub items: Vec<String>,
    pub timeout: Duration,
    /// `--pass-env NAME`: variables of dwp's environment passed besides the default set.
    pub pass_env: Vec<String>,
}

impl ProveRequest {
    /// The command line that runs this proof again from any folder (paths made absolute; the
    /// items are left out, so a hint can name the one to prove).
    pub fn command_line(&self) -> String {
        let absolute = |path: &Path| {
            std::path::absolute(path)
                .unwrap_or_else(|_| path.to_path_buf())
                .display()
                .to_string()
        };
        let mut argv = vec![
            "dwp".to_owned(),
            "loop".to_owned(),
            "prove".to_owned(),
            absolute(&self.worktree),
            "--config".to_owned(),
            absolute(&self.config),
        ];
        if let Some(contract) = &self.contract {
            argv.extend(["--contract".to_owned(), absolute(contract)]);
        }
        argv.extend([
            "--timeout".to_owned(),
            self.timeout.as_secs_f64().to_string(),
        ]);
        for name in &self.pass_env {
            argv.extend(["--pass-env".to_owned(), name.clone()]);
        }
        crate::term::display_argv(&argv)
    }
}

/// One check dwp runs.
#[derive(Debug, Clone)]
struct Task {
    list: List,
    id: String,
    argv: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Proved {
    pub list: List,
    pub proof: Proof,
}

#[derive(Debug, Clone)]
pub struct ProveReport {
    pub proved: Vec<Proved>,
    /// The names of the variables passed from dwp's environment (also in every proof).
    pub env: Vec<String>,
    pub dod: WriteOutcome,
    pub verify: WriteOutcome,
}

impl ProveReport {
    pub fn all_passed(&self) -> bool {
        self.proved
            .iter()
            .all(|p| p.proof.status == ProofStatus::Passed)
    }
}

pub fn prove(request: &ProveRequest) -> Result<ProveReport> {
    let worktree = super::worktree_dir(&request.worktree)?;
    let config = super::config::load(&request.config)?;
    let contract = match &request.contract {
        Some(path) => Some(issue::load_checked(path, false)?),
        None => None,
    };
    let tasks = select(&config, contract.as_ref(), &request.items)?;
    let env = CommandEnv::new(&request.pass_env)?;
    let (mut dod, mut verify) = existing_proofs(&worktree)?;
    prepare_dirs(&worktree)?;
    let mut proved = Vec::with_capacity(tasks.len());
    for task in &tasks {
        let proof = observe(&worktree, task, &env, request.timeout)?;
        match task.list {
            List::Project => upsert(&mut dod.project, proof.clone()),
            List::Issue => {
                upsert(&mut dod.outcomes, proof.clone());
                upsert(&mut verify, proof.clone());
            }
        }
        proved.push(Proved {
            list: task.list,
            proof,
        });
    }
    let verify = VerifyFile {
        ran_at: crate::clock::now_rfc3339(),
        command: "dwp loop prove".into(),
        exit_code: i64::from(verify.iter().any(|p| p.status == ProofStatus::Failed)),
        outcomes: verify,
        prove_command: Some(request.command_line()),
    };
    let dod = crate::store::write_atomic(
        &worktree.join(super::DOD_JSON),
        &worktree,
        &crate::store::json_file_bytes(&dod),
    )?;
    let verify = crate::store::write_atomic(
        &worktree.join(super::VERIFY_JSON),
        &worktree,
        &crate::store::json_file_bytes(&verify),
    )?;
    Ok(ProveReport {
        proved,
        env: env.names(),
        dod,
        verify,
    })
}

/// The runnable checks, in list order, narrowed to `--item` ids (each of which must name one).
fn select(
    config: &LoopConfig,
    contract: Option<&issue::IssueList>,
    only: &[String],
) -> Result<Vec<Task>> {
    let mut tasks = Vec::new();
    for item in &config.items {
        if let Check::Command(argv) = &item.check {
            tasks.push(Task {
                list: List::Project,
                id: item.id.clone(),
                argv: argv.clone(),
            });
        }
    }
    for outcome in contract.map(|c| c.outcomes.as_slice()).unwrap_or_default() {
        if let Some(argv) = &outcome.check {
            tasks.push(Task {
                list: List::Issue,
                id: outcome.id.clone(),
                argv: argv.clone(),
            });
        }
    }
    for id in only {
        if !tasks.iter().any(|t| t.id == *id) {
            return Err(not_runnable(config, contract, id));
        }
    }
    if !only.is_empty() {
        tasks.retain(|t| only.contains(&t.id));
    }
    Ok(tasks)
}

fn not_runnable(config: &LoopConfig, contract: Option<&issue::IssueList>, id: &str) -> Error {
    let place = format!("--item {id}");
    if let Some(item) = config.items.iter().find(|i| i.id == id) {
        let kind = item.kind().name();
        return Error::rejected(place, format!("item `{id}` is a {kind} item, not a command"))
            .with_hint("file-changed and pattern-absent items are decided by `dwp loop dod` from the changed files");
    }
    if contract.is_some_and(|c| c.outcomes.iter().any(|o| o.id == id)) {
        return Error::rejected(place, format!("outcome `{id}` has no check to run")).with_hint(
            "prove it in .ak-loop/dod.json (outcomes) with the evidence of how it was checked",
        );
    }
    Error::rejected(
        place,
        format!("no command item or contract check has id `{id}`"),
    )
    .with_hint("ids come from dod.items in the configuration and the contract's outcomes")
}

/// The proof files already there, which prove keeps and updates; an invalid one is refused
/// rather than overwritten (it may be the worker's hand-written evidence).
fn existing_proofs(worktree: &Path) -> Result<(DodFile, Vec<Proof>)> {
    let dod = match proofs::load_dod(worktree)? {
        Loaded::Missing => DodFile::default(),
        Loaded::Present(dod) => dod,
        Loaded::Invalid(found) => return Err(invalid_existing(worktree, super::DOD_JSON, &found)),
    };
    let verify = match proofs::load_verify(worktree)? {
        Loaded::Missing => Vec::new(),
        Loaded::Present(verify) => verify.outcomes,
        Loaded::Invalid(found) => {
            return Err(invalid_existing(worktree, super::VERIFY_JSON, &found));
        }
    };
    Ok((dod, verify))
}

fn invalid_existing(
    worktree: &Path,
    relative: &str,
    found: &[crate::plan::schemas::Violation],
) -> Error {
    let first = &found[0];
    super::rejected_at(
        &worktree.join(relative),
        &first.path,
        format!("present but does not match the schema: {}", first.message),
    )
    .with_hint(
        "dwp does not overwrite a proof file it cannot read: fix it or remove it, then prove again",
    )
}

/// `.ak-loop/logs/`, created durably, and never through a symlink leaving the worktree.
fn prepare_dirs(worktree: &Path) -> Result<()> {
    for relative in [super::LOOP_DIR, super::LOGS_DIR] {
        let dir = worktree.join(relative);
        match crate::store::entry(&dir, worktree) {
            Ok(crate::store::Entry::Directory) => continue,
            Ok(crate::store::Entry::Missing) => crate::store::create_dir(&dir, worktree)?,
            Ok(_) => {
                return Err(Error::rejected(
                    dir.display().to_string(),
                    "is not a directory (a symlink or a file)",
                )
                .with_hint("the phase artifacts live in a real .ak-loop/ folder of the worktree"));
            }
            Err(e) => return Err(Error::io("stat", &dir, e)),
        }
    }
    Ok(())
}

/// Run one check and turn what happened into a proof, its full output saved as a log.
fn observe(worktree: &Path, task: &Task, env: &CommandEnv, timeout: Duration) -> Result<Proof> {
    let logs = worktree.join(super::LOGS_DIR);
    let result = process::run(&task.argv, worktree, &env.vars(), timeout, &logs)
        .map_err(|e| Error::io("run", &logs, e))?;
    let log = format!("{}/{}-{}.log", super::LOGS_DIR, task.list.name(), task.id);
    let mut bytes = result.output.clone();
    if let Ending::NotStarted(reason) = &result.ending {
        bytes.extend_from_slice(
            format!("dwp: could not start `{}`: {reason}\n", task.argv[0]).as_bytes(),
        );
    }
    let written = crate::store::write_atomic(&worktree.join(&log), worktree, &bytes)?;
    // What `dwp update --gates-from` needs to keep this run in a plan as `dwp run` would: the
    // log's hash (checked before the copy), the ending, and every byte printed.
    let printed = result.total + (bytes.len() - result.output.len()) as u64;
    let ran_no_test = ran_no_test(&result);
    Ok(Proof {
        id: task.id.clone(),
        status: if result.passed() && !ran_no_test {
            ProofStatus::Passed
        } else {
            ProofStatus::Failed
        },
        evidence: evidence(task, &result, &log, ran_no_test),
        at: Some(crate::clock::now_rfc3339()),
        command: Some(task.argv.clone()),
        exit_code: result.exit_code(),
        log: Some(log),
        log_sha256: Some(written.sha256),
        ended: Some(crate::steps::gate_log::ending(&result.ending).to_string()),
        output_bytes: Some(printed),
        observed_by: Some(super::OBSERVED_BY_DWP.into()),
        env: Some(env.names()),
    })
}

/// The command exited 0, but its output shows a run that selected or ran no test: judged by the
/// one evidence reader `dwp run`, the updater and `dwp verify` use
/// ([`crate::rules::observed::passes`]), so a proof and the gate `update --gates-from` copies
/// from it never disagree.
fn ran_no_test(result: &process::RunResult) -> bool {
    let ending = crate::steps::gate_log::ending(&result.ending);
    let summary = crate::rules::observed::summary(&result.output);
    result.passed() && !crate::rules::observed::passes(&ending, summary.as_deref())
}

fn evidence(task: &Task, result: &process::RunResult, log: &str, ran_no_test: bool) -> String {
    let last = process::last_line(&result.output);
    let head = match &result.ending {
        Ending::Exited(0) if ran_no_test => "exit 0 but no test ran".to_owned(),
        Ending::Exited(code) => format!("exit {code}"),
        Ending::Signalled(signal) => format!("killed by signal {signal}"),
        Ending::TimedOut(after) => format!("timed out after {}s", after.as_secs_f64()),
        Ending::NotStarted(reason) => {
            return format!("could not start `{}`: {reason}", task.argv[0]);
        }
    };
    match last {
        Some(line) => format!("{head}: {line} (output: {log})"),
        None => format!("{head}, no output (output: {log})"),
    }
}

/// Replace the proof with the same id in place, or append it.
fn upsert(list: &mut Vec<Proof>, proof: Proof) {
    match list.iter_mut().find(|p| p.id == proof.id) {
        Some(slot) => *slot = proof,
        None => list.push(proof),
    }
}
