//! `dwp finalize`: a plan's terminal transition, publication (seed 003 "Verified plan
//! publication", DESIGN.md §3 "Receipt").
//!
//! Under the state lock: build or read the completed candidate, check it against every plan
//! artifact (schema, invariants, identity, the markdown, the task logs, evidence truth, every
//! `dwp verify` rule but the receipt publication itself writes) and list every failure, writing
//! nothing. Then publish in steps, each durable before the next:
//!
//! 1. `.finalizing.json`: the candidate (and its sha256), the artifacts digest, step, pid, host,
//!    time. While it exists `verify` fails and every other writer refuses.
//! 2. `state.json` ← the candidate.
//! 3. re-read: the state's bytes are the candidate's, it validates, and no artifact changed since
//!    the checks (else no receipt, the marker stays, exit 1).
//! 4. `analysis_results/FINALIZATION.json`, the receipt.
//! 5. the marker removed.
//!
//! An interruption anywhere leaves the plan unpublished (before 1), or marked and recoverable:
//! `--recover` re-runs 2-5 only for the candidate whose sha256 the marker recorded. The candidate
//! travels inside the marker, so a default candidate (built from the state with the clock) can be
//! recovered without the caller rebuilding byte-identical JSON.

use crate::error::{Error, Result};
use crate::findings::{Code, Finding, Severity};
use crate::model::{Checkpoint, Field, PlanStatus, State, TaskStatus};
use crate::plan::{self, Loaded, PlanPaths};
use crate::store::{self, lock};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::plan::FINALIZING_MARKER as MARKER;

/// The receipt schema's `$id`, written as the receipt's `schema`.
pub const RECEIPT_SCHEMA: &str = "urn:dwp:schema:finalization-receipt:v1";

/// What the checks ran, as the receipt names them.
const CHECKS: [&str; 8] = [
    "candidate: state schema and invariants, terminal checkpoint",
    "identity: folder, manifest name, state plan, schema generations",
    "markdown: README boxes and Plan Status against the candidate",
    "task logs: Status not pending, Skills disposition and Documentation decision filled",
    "evidence truth of every gate (shared with dwp update)",
    "dwp verify rules against the candidate",
    "security review without an open critical finding",
    "after the write: state bytes, validation and artifacts digest re-read",
];

/// What the caller asks for.
#[derive(Debug, Clone, Default)]
pub struct FinalizeRequest {
    /// A completed state to publish; default: the current state with its last task completed.
    pub candidate: Option<PathBuf>,
    pub expected_sha256: Option<String>,
    pub recover: bool,
    pub wait: Duration,
}

/// How a finalize call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PublicationVerdict {
    Published,
    Refused,
    Unverified,
}

impl PublicationVerdict {
    pub fn exit(self) -> crate::Exit {
        match self {
            PublicationVerdict::Published => crate::Exit::Ok,
            PublicationVerdict::Refused => crate::Exit::Rejected,
            PublicationVerdict::Unverified => crate::Exit::Unverified,
        }
    }
}

/// What a finalize call did.
#[derive(Debug, Clone, Serialize)]
pub struct Publication {
    pub plan: String,
    pub verdict: PublicationVerdict,
    /// sha256 of the published state (or of the refused candidate).
    pub state_sha256: Option<String>,
    pub receipt: Option<String>,
    /// A `--recover` run: what the marker said.
    pub recovered_from: Option<MarkerSummary>,
    pub findings: Vec<Finding>,
}

impl Publication {
    /// A publication that stopped at its checks: REFUSED, or UNVERIFIED when nothing definite
    /// was found wrong but something could not be checked. Nothing was claimed.
    fn stopped(
        plan_dir: &Path,
        state_sha256: &str,
        findings: Vec<Finding>,
        recovered_from: Option<MarkerSummary>,
    ) -> Publication {
        Publication {
            plan: plan_dir.display().to_string(),
            verdict: verdict_of(&findings),
            state_sha256: Some(state_sha256.to_owned()),
            receipt: None,
            recovered_from,
            findings,
        }
    }
}

/// `.finalizing.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    pub candidate_sha256: String,
    pub artifacts_sha256: String,
    pub step: String,
    pub pid: u32,
    pub host: String,
    pub started_at: String,
    /// The candidate's JSON text, so that recovery needs nothing the caller may have lost.
    pub candidate: String,
}

/// The marker without the candidate, as `--recover` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct MarkerSummary {
    pub candidate_sha256: String,
    pub artifacts_sha256: String,
    pub step: String,
    pub pid: u32,
    pub host: String,
    pub started_at: String,
    pub state_already_published: bool,
}

/// `analysis_results/FINALIZATION.json` as dwp writes it (schema:
/// `schemas/finalization-receipt.schema.json`).
#[derive(Debug, Clone, Serialize)]
pub struct Receipt {
    pub schema: &'static str,
    pub state_sha256: String,
    pub artifacts_sha256: String,
    pub result: &'static str,
    pub finalized_at: String,
    pub tool: Tool,
    pub checks: Vec<&'static str>,
    pub artifacts: Vec<Artifact>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Artifact {
    pub path: String,
    pub sha256: String,
}

/// Where a publication stands; the test-only fault hook stops right after reaching one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Marked,
    StatePublished,
    Reverified,
    ReceiptWritten,
    MarkerRemoved,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::Marked => "marked",
            Step::StatePublished => "state-published",
            Step::Reverified => "reverified",
            Step::ReceiptWritten => "receipt-written",
            Step::MarkerRemoved => "done",
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Test-only: the step after which publication stops as if the process died.
    pub(crate) static STOP_AFTER: std::cell::Cell<Option<Step>> = const { std::cell::Cell::new(None) };
}

/// A publication reached `step`. Compiled to nothing outside unit tests: no flag or variable can
/// interrupt a real publication.
fn reached(step: Step) -> Result<()> {
    #[cfg(test)]
    if STOP_AFTER.with(|s| s.get()) == Some(step) {
        return Err(Error::io(
            "injected stop",
            Path::new(step.name()),
            std::io::Error::other("fault injection"),
        ));
    }
    let _ = step;
    Ok(())
}

/// Run `dwp finalize` (or `--recover`) on the plan at `target`.
pub fn finalize(target: &Path, request: &FinalizeRequest) -> Result<Publication> {
    let (plan_dir, state_path) = crate::plan::resolve_target(target);
    let guard = plan::lock_for_write(&plan_dir, &state_path, request.wait)?;
    let result = if request.recover {
        recover_locked(&plan_dir, &state_path, request)
    } else {
        finalize_locked(&plan_dir, &state_path, request)
    };
    guard.release()?;
    result.map_err(|e| name_recovery(e, &plan_dir))
}

/// An I/O failure (a full disk) after the marker was written leaves a publication to complete,
/// not "nothing claimed": the hint names the command that completes it.
fn name_recovery(error: Error, plan_dir: &Path) -> Error {
    let marked = store::place(&plan_dir.join(MARKER), plan_dir) != store::Place::Missing;
    if marked && matches!(error, Error::Io { .. }) {
        let hint = format!(
            "the publication stopped after its marker was written: once the cause is fixed, `dwp finalize --recover {}` completes it",
            plan_dir.display()
        );
        return error.with_hint(hint);
    }
    error
}

fn finalize_locked(
    plan_dir: &Path,
    state_path: &Path,
    request: &FinalizeRequest,
) -> Result<Publication> {
    crate::plan::refuse_while_finalizing(plan_dir)?;
    let current = plan::load_state_for_write(plan_dir, state_path, false)?;
    if let Some(expected) = &request.expected_sha256
        && *expected != current.sha256
    {
        return Err(Error::SnapshotMoved {
            path: state_path.to_path_buf(),
            expected: expected.clone(),
            actual: current.sha256.clone(),
        });
    }
    let candidate = match &request.candidate {
        Some(path) => read_candidate(path)?,
        None => {
            plan::refuse_clock_behind(&current.doc, &current.file, &crate::clock::now_rfc3339())?;
            default_candidate(&current)
        }
    };
    publish_locked(plan_dir, state_path, candidate, false)
}

/// Check `candidate` (bytes) against the plan and, when nothing stands in the way, publish it.
/// The caller holds the lock; `dwp update` of the last task calls this with its result.
pub fn publish_locked(
    plan_dir: &Path,
    state_path: &Path,
    candidate: Vec<u8>,
    dry_run: bool,
) -> Result<Publication> {
    let paths = PlanPaths::new(plan_dir);
    let candidate_sha256 = store::sha256_hex(&candidate);
    let (loaded, findings) = check_candidate(&paths, state_path, candidate, false);
    let Some(loaded) = loaded.filter(|_| findings.is_empty()) else {
        return Ok(Publication::stopped(
            plan_dir,
            &candidate_sha256,
            findings,
            None,
        ));
    };
    if dry_run {
        // Every check passed: what a publication would do, with nothing written.
        return Ok(Publication::stopped(
            plan_dir,
            &candidate_sha256,
            Vec::new(),
            None,
        ));
    }
    let marker = Marker {
        candidate_sha256: candidate_sha256.clone(),
        artifacts_sha256: crate::receipt::artifacts_digest(plan_dir, &loaded.doc),
        step: Step::Marked.name().to_owned(),
        pid: std::process::id(),
        host: lock::host_name(),
        started_at: crate::clock::now_rfc3339(),
        candidate: String::from_utf8(loaded.bytes.clone()).expect("candidates are UTF-8 JSON"),
    };
    write_marker(plan_dir, &marker)?;
    reached(Step::Marked)?;
    complete_publication(&paths, state_path, &loaded, marker, None)
}

/// Steps 2-5, shared by a first publication and a recovery.
fn complete_publication(
    paths: &PlanPaths,
    state_path: &Path,
    candidate: &Loaded<State>,
    mut marker: Marker,
    recovered_from: Option<MarkerSummary>,
) -> Result<Publication> {
    store::write_atomic(state_path, &paths.dir, &candidate.bytes)?;
    marker.step = Step::StatePublished.name().to_owned();
    write_marker(&paths.dir, &marker)?;
    reached(Step::StatePublished)?;

    let problems = reverify(paths, state_path, candidate, &marker);
    if !problems.is_empty() {
        return Ok(Publication::stopped(
            &paths.dir,
            &candidate.sha256,
            problems,
            recovered_from,
        ));
    }
    reached(Step::Reverified)?;

    let receipt_path = paths.dir.join(crate::receipt::RECEIPT);
    let receipt = receipt(&paths.dir, &candidate.doc, &candidate.sha256, &marker)?;
    if let Some(parent) = receipt_path.parent() {
        store::create_dir(parent, &paths.dir)?;
    }
    store::write_atomic(&receipt_path, &paths.dir, &store::canonical_bytes(&receipt))?;
    marker.step = Step::ReceiptWritten.name().to_owned();
    write_marker(&paths.dir, &marker)?;
    reached(Step::ReceiptWritten)?;

    store::remove_file(&paths.dir.join(MARKER), &paths.dir)?;
    reached(Step::MarkerRemoved)?;
    Ok(Publication {
        plan: paths.dir.display().to_string(),
        verdict: PublicationVerdict::Published,
        state_sha256: Some(candidate.sha256.clone()),
        receipt: Some(receipt_path.display().to_string()),
        recovered_from,
        findings: Vec::new(),
    })
}

/// `--recover`: only while the marker exists, only for the candidate it recorded.
fn recover_locked(
    plan_dir: &Path,
    state_path: &Path,
    request: &FinalizeRequest,
) -> Result<Publication> {
    let marker_path = plan_dir.join(MARKER);
    let marker = read_marker(&marker_path, plan_dir)?;
    let recorded = store::sha256_hex(marker.candidate.as_bytes());
    if recorded != marker.candidate_sha256 {
        return Err(Error::rejected(
            format!("{}: $.candidate", marker_path.display()),
            "the marker's candidate does not hash to its recorded candidate_sha256: the marker was altered",
        )
        .with_hint("inspect the plan by hand; nothing resumes a publication by assumption"));
    }
    if let Some(path) = &request.candidate {
        let offered = read_candidate(path)?;
        let offered_sha = store::sha256_hex(&offered);
        if offered_sha != marker.candidate_sha256 {
            return Err(Error::rejected(
                path.display().to_string(),
                format!(
                    "this candidate (sha256 {offered_sha}) is not the one the interrupted publication recorded ({}): a different candidate is refused",
                    marker.candidate_sha256
                ),
            )
            .with_hint("recover with the recorded candidate (omit --candidate), then publish anew"));
        }
    }
    let on_disk = store::read_artifact(state_path, plan_dir)
        .map_err(|failure| failure.into_error("read", state_path))?;
    let summary = MarkerSummary {
        candidate_sha256: marker.candidate_sha256.clone(),
        artifacts_sha256: marker.artifacts_sha256.clone(),
        step: marker.step.clone(),
        pid: marker.pid,
        host: marker.host.clone(),
        started_at: marker.started_at.clone(),
        state_already_published: store::sha256_hex(&on_disk) == marker.candidate_sha256,
    };
    let paths = PlanPaths::new(plan_dir);
    let (loaded, findings) = check_candidate(
        &paths,
        state_path,
        marker.candidate.clone().into_bytes(),
        true,
    );
    let Some(loaded) = loaded.filter(|_| findings.is_empty()) else {
        return Ok(Publication::stopped(
            plan_dir,
            &marker.candidate_sha256,
            findings,
            Some(summary),
        ));
    };
    complete_publication(&paths, state_path, &loaded, marker, Some(summary))
}

/// The current state with its last task completed: what `dwp update` of the last task produces.
/// A state that is already completed (a republication) is its own candidate.
fn default_candidate(current: &Loaded<State>) -> Vec<u8> {
    if current.doc.status == PlanStatus::Completed {
        return current.bytes.clone();
    }
    let mut next = current.doc.clone();
    let now = crate::clock::now_rfc3339();
    if let Some(last) = next.tasks.last_mut()
        && last.status == TaskStatus::InProgress
    {
        last.status = TaskStatus::Completed;
        last.completed_at = Some(now.clone());
    }
    terminal_stamp(&mut next, &now);
    store::canonical_bytes(&next)
}

/// Counts, derived status, `updated_at` and the terminal checkpoint of a completed candidate.
pub fn terminal_stamp(state: &mut State, now: &str) {
    state.completed_count = state.completed_tasks();
    state.status = state.derived_status();
    state.updated_at = now.to_owned();
    if let Some(last) = state.tasks.last() {
        state.checkpoint = Field::Value(Checkpoint {
            task: last.id,
            step: Some("done".to_owned()),
            at: now.to_owned(),
            note: Some("plan published".to_owned()),
        });
    }
}

/// A candidate file: a bounded read of a regular file (a symlink may not lead out of its folder).
fn read_candidate(path: &Path) -> Result<Vec<u8>> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    store::read_artifact(path, dir.unwrap_or(Path::new("."))).map_err(|failure| {
        Error::rejected(
            path.display().to_string(),
            format!("the candidate cannot be read: {failure}"),
        )
    })
}

/// Every check a candidate must pass, with every failure; the typed candidate when it loaded.
fn check_candidate(
    paths: &PlanPaths,
    state_path: &Path,
    bytes: Vec<u8>,
    recovering: bool,
) -> (Option<Loaded<State>>, Vec<Finding>) {
    // Findings name the state file the candidate is published as.
    let loaded = match plan::state_from_bytes(state_path, bytes) {
        Ok(loaded) => loaded,
        Err(findings) => return (None, findings),
    };
    let mut findings = crate::invariants::check_state(&loaded);
    let manifest = match plan::load_manifest(paths) {
        Ok(manifest) => Some(manifest),
        Err(problems) => {
            findings.extend(problems);
            None
        }
    };
    findings.extend(crate::invariants::check_identity(
        paths.folder_name().as_deref(),
        manifest.as_ref(),
        Some(&loaded),
    ));
    for (index, task) in loaded.doc.tasks.iter().enumerate() {
        if task.status != TaskStatus::Completed {
            findings.push(
                Finding::error(
                    Code::NotComplete,
                    &loaded.file,
                    format!(
                        "task {} is {}: a published plan has every task completed",
                        task.id, task.status
                    ),
                )
                .at(format!("$.tasks[{index}].status"))
                .task(task.id),
            );
        }
    }
    let spec_version = manifest.as_ref().map(|m| m.doc.spec_version.as_str());
    let resolved_by_publication = |code: Code| {
        matches!(
            code,
            Code::MissingReceipt | Code::ReceiptMismatch | Code::MalformedReceipt
        ) || (recovering && code == Code::PublicationInProgress)
    };
    findings.extend(
        crate::verify::plan_rules(paths, spec_version, Some(&loaded.doc))
            .into_iter()
            .filter(|f| !resolved_by_publication(f.code))
            // Publication is strict: an advisory (approval pending) refuses it too.
            .map(|f| match f.severity {
                Severity::Advisory => f.severity(Severity::Error),
                _ => f,
            }),
    );
    for finding in &mut findings {
        if is_missing_artifact(finding) {
            finding.severity = Severity::Unverified;
        }
    }
    crate::verify::add_fix_hints(&mut findings);
    (Some(loaded), findings)
}

/// A plan artifact that is missing or cannot be read: publication cannot check what is not
/// there, so it makes no claim (UNVERIFIED), never a completion.
fn is_missing_artifact(finding: &Finding) -> bool {
    match finding.code {
        Code::Unreadable | Code::MissingPlanFile => true,
        Code::TaskFileInventory => finding.message.ends_with("does not exist"),
        _ => false,
    }
}

/// After the write: the bytes on disk are the candidate's, they validate, and no artifact
/// changed since the checks.
fn reverify(
    paths: &PlanPaths,
    state_path: &Path,
    candidate: &Loaded<State>,
    marker: &Marker,
) -> Vec<Finding> {
    let file = state_path.display().to_string();
    let mut findings = Vec::new();
    match plan::load_state_at(state_path, &paths.dir) {
        Err(problems) => findings.extend(problems),
        Ok(on_disk) if on_disk.sha256 != candidate.sha256 => findings.push(Finding::error(
            Code::ReceiptMismatch,
            &file,
            "state.json changed during publication: its bytes are not the candidate's",
        )),
        Ok(on_disk) => findings.extend(crate::invariants::check_state(&on_disk)),
    }
    if crate::receipt::artifacts_digest(&paths.dir, &candidate.doc) != marker.artifacts_sha256 {
        findings.push(
            Finding::error(
                Code::ReceiptMismatch,
                paths.dir.display().to_string(),
                "the plan's artifacts changed during publication: no receipt is written and the marker stays",
            )
            .hint("review the change, then `dwp finalize --recover` (it re-checks) or restore the files"),
        );
    }
    findings
}

fn verdict_of(findings: &[Finding]) -> PublicationVerdict {
    if findings.iter().any(|f| f.severity == Severity::Error) {
        PublicationVerdict::Refused
    } else if findings.is_empty() {
        PublicationVerdict::Published
    } else {
        PublicationVerdict::Unverified
    }
}

fn write_marker(plan_dir: &Path, marker: &Marker) -> Result<()> {
    store::write_atomic(
        &plan_dir.join(MARKER),
        plan_dir,
        &store::canonical_bytes(marker),
    )
    .map(|_| ())
}

fn read_marker(path: &Path, plan_dir: &Path) -> Result<Marker> {
    let bytes = match store::read_artifact(path, plan_dir) {
        Ok(bytes) => bytes,
        Err(store::ReadFailure::Missing) => {
            return Err(Error::rejected(
                path.display().to_string(),
                "there is no interrupted publication to recover",
            )
            .with_hint("publish with `dwp finalize PLAN`"));
        }
        Err(failure) => return Err(failure.into_error("read", path)),
    };
    let value = crate::json::parse_strict(&bytes)
        .map_err(|e| Error::rejected(format!("{}: {}", path.display(), e.path), e.message))?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        Error::rejected(
            format!("{}: $.{}", path.display(), e.path()),
            format!("not a publication marker: {}", e.inner()),
        )
    })
}

/// The receipt: the reference's three keys, then what dwp checked and every artifact it covers.
fn receipt(plan_dir: &Path, state: &State, state_sha256: &str, marker: &Marker) -> Result<Receipt> {
    Ok(Receipt {
        schema: RECEIPT_SCHEMA,
        state_sha256: state_sha256.to_owned(),
        artifacts_sha256: marker.artifacts_sha256.clone(),
        result: "verified",
        finalized_at: crate::clock::now_rfc3339(),
        tool: Tool {
            name: "dwp",
            version: env!("CARGO_PKG_VERSION"),
        },
        checks: CHECKS.to_vec(),
        artifacts: covered_artifacts(plan_dir, state)?,
    })
}

/// README, PROGRESS, PROMPTS, the manifest, every task file, every analysis_results file but the
/// receipt, and every gate log named by `log=`, each with its sha256, sorted by path.
pub fn covered_artifacts(plan_dir: &Path, state: &State) -> Result<Vec<Artifact>> {
    let mut names: Vec<String> = ["README.md", "PROGRESS.md", "PROMPTS.md", "manifest.json"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    names.extend(crate::receipt::task_files(state));
    names.extend(analysis_results(plan_dir)?);
    for task in &state.tasks {
        for gate in task.gates() {
            let evidence = gate.evidence.as_deref().unwrap_or("");
            names.extend(crate::evidence::log_pointers(evidence).map(str::to_owned));
        }
    }
    names.sort();
    names.dedup();
    let mut artifacts = Vec::new();
    for name in names {
        let path = plan_dir.join(&name);
        let bytes = match store::read_artifact(&path, plan_dir) {
            Ok(bytes) => bytes,
            Err(store::ReadFailure::Missing) => continue,
            Err(failure) => {
                return Err(Error::rejected(
                    path.display().to_string(),
                    failure.to_string(),
                ));
            }
        };
        artifacts.push(Artifact {
            path: name,
            sha256: store::sha256_hex(&bytes),
        });
    }
    Ok(artifacts)
}

/// Every regular file under `analysis_results/` (relative to the plan), except the receipt and
/// the temp files of an interrupted write (a killed publication leaves them).
fn analysis_results(plan_dir: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    let mut folders = vec![PathBuf::from("analysis_results")];
    while let Some(folder) = folders.pop() {
        let folder_path = plan_dir.join(&folder);
        match store::entry(&folder_path, plan_dir) {
            Ok(store::Entry::Missing) => continue,
            Ok(store::Entry::Directory) => {}
            Ok(_) => {
                return Err(Error::rejected(
                    folder_path.display().to_string(),
                    "is not a folder of the plan (a symlink or a special file)",
                ));
            }
            Err(e) => return Err(Error::io("stat", &folder_path, e)),
        }
        for name in store::list_dir(&folder_path, plan_dir)? {
            let relative = folder.join(&name);
            let kind = store::entry(&plan_dir.join(&relative), plan_dir)
                .map_err(|e| Error::io("stat", &plan_dir.join(&relative), e))?;
            if kind == store::Entry::Directory {
                folders.push(relative);
            } else if kind != store::Entry::Missing {
                // Files and anything else: a symlink or a pipe is refused when it is read.
                let relative = relative.to_string_lossy().into_owned();
                if relative != crate::receipt::RECEIPT && !store::atomic::is_temp_name(&name) {
                    found.push(relative);
                }
            }
        }
    }
    Ok(found)
}

/// `dwp finalize --check`: the receipt's hashes against the files on disk.
pub fn check(target: &Path) -> Result<Vec<Finding>> {
    let (plan_dir, state_path) = crate::plan::resolve_target(target);
    let paths = PlanPaths::new(&plan_dir);
    let state = plan::load_state_for_write(&plan_dir, &state_path, false)?;
    let receipt = plan_dir.join(crate::receipt::RECEIPT);
    if store::place(&receipt, &plan_dir) == store::Place::Missing {
        // Nothing was published, so nothing "changed since publication".
        let hint = if state.doc.status == PlanStatus::Completed {
            format!("publish it with `dwp finalize {}`", plan_dir.display())
        } else {
            format!(
                "there is nothing to check until it is published: complete its tasks, then `dwp finalize {}`",
                plan_dir.display()
            )
        };
        return Err(Error::rejected(
            receipt.display().to_string(),
            "the plan is not published: there is no receipt to check",
        )
        .with_hint(hint));
    }
    let mut findings = crate::verify::receipt_findings(&paths, &state.doc);
    crate::verify::add_fix_hints(&mut findings);
    Ok(findings)
}

#[cfg(test)]
mod tests {
    //! Fault injection at each step of publication: after an injected stop, `verify` fails and
    //! every other writer refuses; `--recover` completes with the recorded candidate and refuses
    //! another one.

    use super::*;
    use crate::synth::SynthPlan;
    use crate::verify::{VerifyVerdict, verify_plan};

    fn plan(root: &Path) -> PathBuf {
        SynthPlan::new("PLAN_fault_injection", 3)
            .ready_to_publish()
            .write(root)
            .unwrap()
    }

    fn publish(plan: &Path, stop_after: Option<Step>) -> Result<Publication> {
        STOP_AFTER.with(|s| s.set(stop_after));
        let result = finalize(plan, &FinalizeRequest::default());
        STOP_AFTER.with(|s| s.set(None));
        result
    }

    fn recover(plan: &Path, candidate: Option<PathBuf>) -> Result<Publication> {
        let request = FinalizeRequest {
            candidate,
            recover: true,
            ..FinalizeRequest::default()
        };
        finalize(plan, &request)
    }

    #[test]
    fn an_interrupted_publication_blocks_everything_but_recovery_with_the_same_candidate() {
        for step in [
            Step::Marked,
            Step::StatePublished,
            Step::Reverified,
            Step::ReceiptWritten,
        ] {
            let root = tempfile::tempdir().unwrap();
            let plan = plan(root.path());
            let stopped = publish(&plan, Some(step));
            assert!(stopped.is_err(), "{step:?}: the injected stop");
            assert!(plan.join(MARKER).exists(), "{step:?}: the marker stays");

            let report = verify_plan(&plan, false);
            assert_eq!(report.verdict, VerifyVerdict::NotConformant, "{step:?}");
            assert!(
                report
                    .findings
                    .iter()
                    .any(|f| f.code == Code::PublicationInProgress),
                "{step:?}: verify names the marker"
            );
            let other_writer = crate::update::update(
                &plan,
                &crate::update::UpdateRequest {
                    task: 3,
                    notes: Some("more notes".into()),
                    ..Default::default()
                },
            );
            let in_progress = |result: Result<String>| {
                result
                    .unwrap_err()
                    .to_string()
                    .contains("a publication is in progress")
            };
            assert!(
                in_progress(other_writer.map(|o| o.transition)),
                "{step:?}: other writers refuse because of the marker"
            );
            assert!(
                in_progress(publish(&plan, None).map(|p| p.plan)),
                "{step:?}: a new publication refuses while the marker exists"
            );

            // Another candidate: the current state with a different note.
            let mut other: State =
                serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap();
            other.updated_at = "2026-06-09T14:44:00Z".into();
            let other_path = root.path().join("other-candidate.json");
            std::fs::write(&other_path, store::canonical_bytes(&other)).unwrap();
            assert!(
                recover(&plan, Some(other_path)).is_err(),
                "{step:?}: another candidate is refused"
            );
            assert!(plan.join(MARKER).exists());

            let recovered = recover(&plan, None).expect("recovery");
            assert_eq!(recovered.verdict, PublicationVerdict::Published, "{step:?}");
            let summary = recovered.recovered_from.expect("what the marker said");
            assert_eq!(
                summary.state_already_published,
                step != Step::Marked,
                "{step:?}"
            );
            assert!(!plan.join(MARKER).exists());
            assert_eq!(
                verify_plan(&plan, false).verdict,
                VerifyVerdict::Conformant,
                "{step:?}: {:?}",
                verify_plan(&plan, false).findings
            );
        }
    }

    #[test]
    fn a_stop_after_the_marker_is_removed_leaves_a_published_plan() {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path());
        assert!(publish(&plan, Some(Step::MarkerRemoved)).is_err());
        assert!(!plan.join(MARKER).exists());
        assert_eq!(verify_plan(&plan, false).verdict, VerifyVerdict::Conformant);
        assert!(recover(&plan, None).is_err(), "nothing to recover");
    }

    #[test]
    fn recovery_refuses_a_marker_whose_candidate_was_altered() {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path());
        assert!(publish(&plan, Some(Step::Marked)).is_err());
        let path = plan.join(MARKER);
        let mut marker: Marker = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        marker.candidate = marker
            .candidate
            .replace("plan published", "plan published!");
        std::fs::write(&path, store::canonical_bytes(&marker)).unwrap();
        let error = recover(&plan, None).unwrap_err();
        assert!(error.to_string().contains("altered"), "{error}");
    }

    #[test]
    fn artifacts_changed_during_publication_leave_no_receipt_and_keep_the_marker() {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path());
        assert!(publish(&plan, Some(Step::StatePublished)).is_err());
        let readme = plan.join("README.md");
        let text = std::fs::read_to_string(&readme).unwrap() + "\nEdited mid-publication.\n";
        std::fs::write(&readme, text).unwrap();
        let publication = recover(&plan, None).unwrap();
        assert_eq!(publication.verdict, PublicationVerdict::Refused);
        assert!(!plan.join(crate::receipt::RECEIPT).exists());
        assert!(plan.join(MARKER).exists());
    }
}
