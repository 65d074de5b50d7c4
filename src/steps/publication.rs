//! Publication, a plan's terminal transition (seed 003 "Verified plan publication";
//! docs/DECISIONS.md "Publication"), shared by `dwp finalize` and by `dwp update` of the last
//! task.
//!
//! Under the state lock: build or read the completed candidate, check it against every plan
//! artifact (schema, invariants, identity, the markdown, the task logs, evidence truth, every
//! `dwp verify` rule but the receipt publication itself writes) and list every failure, writing
//! nothing. Then publish in steps, each durable before the next:
//!
//! 1. `.finalizing.json`: the candidate (and its sha256), the artifacts digest, pid, host, time.
//!    While it exists `verify` fails and every other writer refuses. It is written once: how far
//!    a publication got is read from the files themselves (the state's bytes against the
//!    candidate's sha256), never from a progress note that would cost a durable write per step.
//! 2. `state.json` ← the candidate.
//! 3. re-read: the state's bytes are the candidate's (so they validate: the candidate was
//!    checked), and no artifact changed since the checks (else no receipt, the marker stays,
//!    exit 1).
//! 4. `analysis_results/FINALIZATION.json`, the receipt.
//! 5. the marker removed.
//!
//! An interruption anywhere leaves the plan unpublished (before 1), or marked and recoverable:
//! `--recover` re-runs 2-5 only for the candidate whose sha256 the marker recorded. The candidate
//! travels inside the marker, so a default candidate (built from the state with the clock) can be
//! recovered without the caller rebuilding byte-identical JSON.

use crate::error::{Error, Result};
use crate::findings::{Code, Finding, Severity};
use crate::plan::model::{Checkpoint, Field, PlanStatus, State, TaskStatus};
use crate::plan::{self, Loaded, PlanPaths};
use crate::store::{self, lock};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

/// How a finalize call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PublicationVerdict {
    Published,
    Refused,
    Unverified,
}

impl PublicationVerdict {
    /// The weight of this verdict (the exit code follows it).
    pub fn weight(self) -> crate::findings::Verdict {
        use crate::findings::Verdict;
        match self {
            PublicationVerdict::Published => Verdict::Valid,
            PublicationVerdict::Refused => Verdict::Invalid,
            PublicationVerdict::Unverified => Verdict::Unverified,
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
    /// `marked` as dwp writes it now (the marker is written once); markers of dwp 0.x before it
    /// also said `state-published` or `receipt-written`, which recovery reads and ignores.
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
    /// The gate each completed task stands on (its latest record per command), and whether
    /// dwp observed it (`dwp run`) or it was asserted (`dwp update --gate`).
    pub gates: Vec<ReceiptGate>,
}

/// One gate a publication stands on.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiptGate {
    pub task: u64,
    pub command: String,
    /// `observed` (dwp ran it and kept its log) or `asserted` (the agent's word).
    pub evidence: &'static str,
}

/// The gates of `state`'s completed tasks, as the receipt lists them.
fn receipt_gates(state: &State) -> Vec<ReceiptGate> {
    state
        .tasks
        .iter()
        .filter(|t| t.status == crate::plan::model::TaskStatus::Completed)
        .flat_map(|task| {
            crate::rules::evidence::latest_per_command(task.gates())
                .into_iter()
                .map(|gate| ReceiptGate {
                    task: task.id,
                    command: gate.command.clone(),
                    evidence: if crate::rules::observed::is_observed(gate) {
                        "observed"
                    } else {
                        "asserted"
                    },
                })
        })
        .collect()
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

/// What a publication would publish.
pub enum Candidate {
    /// Bytes from outside dwp (`finalize --candidate FILE`, a recovery's marker): typed and
    /// checked like any input.
    Bytes(Vec<u8>),
    /// A state already completed, as the writer loaded it under the lock: its bytes went
    /// through the reader a [`Candidate::Bytes`] goes through, so they are not typed again.
    Loaded(Box<Loaded<State>>),
    /// A state dwp built from one that validated (its generation), with its serialization: the
    /// typed checks run on the state itself instead of on a parse of the bytes.
    Built {
        state: Box<State>,
        bytes: Vec<u8>,
        generation: crate::plan::model::Generation,
    },
}

impl Candidate {
    /// A state dwp built from `from` (which validated), serialized here.
    pub fn built<T>(from: &Loaded<T>, state: State) -> Candidate {
        Candidate::built_in(from.generation, state)
    }

    /// A state dwp built from one of `generation` that validated, serialized here.
    fn built_in(generation: crate::plan::model::Generation, state: State) -> Candidate {
        Candidate::Built {
            bytes: store::json_file_bytes(&state),
            state: Box::new(state),
            generation,
        }
    }

    /// The bytes that would be written as state.json.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Candidate::Bytes(bytes) | Candidate::Built { bytes, .. } => bytes,
            Candidate::Loaded(loaded) => &loaded.bytes,
        }
    }
}

/// Check `candidate` against the plan and, when nothing stands in the way, publish it. The
/// caller holds the lock; `dwp update` of the last task calls this with its result.
pub fn publish_locked(
    plan_dir: &Path,
    state_path: &Path,
    candidate: Candidate,
    dry_run: bool,
) -> Result<Publication> {
    let paths = PlanPaths::new(plan_dir);
    let candidate_sha256 = store::sha256_hex(candidate.bytes());
    // Read before the checks: an edit after this read shows in the re-read after the write.
    let fixed = read_fixed_names(plan_dir);
    let (checked, findings) = crate::profile::time("check candidate", || {
        check_candidate(&paths, state_path, candidate, false)
    });
    let Some(Checked { loaded, task_texts }) = checked.filter(|_| findings.is_empty()) else {
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
        artifacts_sha256: crate::profile::time("artifacts digest", || {
            checked_digest(plan_dir, &loaded.doc, fixed, task_texts)
        }),
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
    marker: Marker,
    recovered_from: Option<MarkerSummary>,
) -> Result<Publication> {
    crate::profile::time("write state", || {
        store::write_atomic(state_path, &paths.dir, &candidate.bytes)
    })?;
    reached(Step::StatePublished)?;

    // Every covered file read once after the write: its digest is re-checked against the
    // marker's, and the receipt lists the hashes of these same bytes.
    let files = crate::profile::time("read artifacts", || {
        CoveredFiles::read(&paths.dir, &candidate.doc)
    })?;
    let problems = crate::profile::time("re-verify", || {
        reverify(paths, state_path, candidate, &marker, &files.digest())
    });
    if !problems.is_empty() {
        return Ok(Publication::stopped(
            &paths.dir,
            &candidate.sha256,
            problems,
            recovered_from,
        ));
    }
    reached(Step::Reverified)?;

    let receipt_path = paths.dir.join(crate::rules::receipt::RECEIPT);
    let _receipt = crate::profile::stage("receipt");
    let receipt = receipt(
        &candidate.sha256,
        &marker,
        files.artifacts()?,
        receipt_gates(&candidate.doc),
    );
    if let Some(parent) = receipt_path.parent() {
        store::create_dir(parent, &paths.dir)?;
    }
    store::write_atomic(&receipt_path, &paths.dir, &store::json_file_bytes(&receipt))?;
    drop(_receipt);
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

/// The current state with its last task completed: what `dwp update` of the last task produces.
/// A state that is already completed (a republication) is its own candidate.
pub fn default_candidate(current: Loaded<State>, signer: &crate::plan::model::Actor) -> Candidate {
    if current.doc.status == PlanStatus::Completed {
        return Candidate::Loaded(Box::new(current));
    }
    let generation = current.generation;
    let mut next = current.doc;
    let now = crate::clock::now_rfc3339();
    if let Some(last) = next.tasks.last_mut()
        && last.status == TaskStatus::InProgress
    {
        last.status = TaskStatus::Completed;
        last.completed_at = Some(now.clone());
    }
    terminal_stamp(&mut next, &now);
    next.sign(signer.agent.as_ref(), signer.model.as_ref());
    Candidate::built_in(generation, next)
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

/// A candidate that loaded, and the text of each task file its checks read.
struct Checked {
    loaded: Loaded<State>,
    task_texts: Vec<(PathBuf, String)>,
}

/// [`crate::rules::receipt::FIXED_NAMES`] as they are now.
fn read_fixed_names(plan_dir: &Path) -> Vec<std::result::Result<Vec<u8>, store::ReadFailure>> {
    crate::rules::receipt::read_or_absent(
        plan_dir,
        &crate::rules::receipt::FIXED_NAMES.map(str::to_owned),
    )
}

/// `artifacts_sha256` of the bytes the checks judged: the fixed names as read just before the
/// checks, each task file as the markdown rules read it, and a task file no rule read (a
/// locator the index does not link) read now. Read again after this, a file edited since the
/// checks changes the digest; read again before, an edit between the checks and the digest
/// would have been published unchecked.
fn checked_digest(
    plan_dir: &Path,
    state: &State,
    fixed: Vec<std::result::Result<Vec<u8>, store::ReadFailure>>,
    task_texts: Vec<(PathBuf, String)>,
) -> String {
    use std::collections::HashMap;
    let mut read: HashMap<String, std::result::Result<Vec<u8>, store::ReadFailure>> =
        crate::rules::receipt::FIXED_NAMES
            .iter()
            .map(|name| (*name).to_owned())
            .zip(fixed)
            .collect();
    let mut checked: HashMap<PathBuf, String> = task_texts.into_iter().collect();
    let names = crate::rules::receipt::digest_names(state);
    let mut unread = Vec::new();
    for name in &names {
        if read.contains_key(name) {
            continue;
        }
        match checked.remove(&plan_dir.join(name)) {
            Some(text) => {
                read.insert(name.clone(), Ok(text.into_bytes()));
            }
            None => unread.push(name.clone()),
        }
    }
    let later = crate::rules::receipt::read_or_absent(plan_dir, &unread);
    read.extend(unread.into_iter().zip(later));
    crate::rules::receipt::digest_of(names.iter().map(|name| (name, &read[name])))
}

/// Every check a candidate must pass, with every failure; the typed candidate when it loaded.
fn check_candidate(
    paths: &PlanPaths,
    state_path: &Path,
    candidate: Candidate,
    recovering: bool,
) -> (Option<Checked>, Vec<Finding>) {
    // Findings name the state file the candidate is published as.
    let built = match candidate {
        Candidate::Bytes(bytes) => Err(bytes),
        Candidate::Loaded(loaded) => Ok(*loaded),
        Candidate::Built {
            state,
            bytes,
            generation,
        } => plan::built_state(state_path, bytes, generation, *state),
    };
    let loaded = match built.or_else(|bytes| plan::state_from_bytes(state_path, bytes)) {
        Ok(loaded) => loaded,
        Err(findings) => return (None, findings),
    };
    let mut findings = crate::rules::invariants::check_state(&loaded);
    let manifest = match plan::load_manifest(paths) {
        Ok(manifest) => Some(manifest),
        Err(problems) => {
            findings.extend(problems);
            None
        }
    };
    findings.extend(crate::rules::invariants::check_identity(
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
    let (plan_findings, markdown) =
        crate::rules::conformance::plan_rules_read(paths, spec_version, Some(&loaded.doc));
    findings.extend(
        plan_findings
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
    crate::rules::conformance::add_fix_hints(&mut findings, &paths.dir);
    let task_texts = markdown.map(|md| md.task_texts).unwrap_or_default();
    (Some(Checked { loaded, task_texts }), findings)
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

/// After the write: the bytes on disk are the candidate's, and no artifact changed since the
/// checks. Bytes equal to the candidate's validate and keep its invariants (the candidate passed
/// both), so they are compared, not checked a second time.
fn reverify(
    paths: &PlanPaths,
    state_path: &Path,
    candidate: &Loaded<State>,
    marker: &Marker,
    artifacts_sha256: &str,
) -> Vec<Finding> {
    let file = state_path.display().to_string();
    let mut findings = Vec::new();
    match plan::read_state_bytes(state_path, &paths.dir) {
        Err(problems) => findings.extend(problems),
        Ok(on_disk) if store::sha256_hex(&on_disk) != candidate.sha256 => {
            findings.push(Finding::error(
                Code::ReceiptMismatch,
                &file,
                "state.json changed during publication: its bytes are not the candidate's",
            ))
        }
        Ok(_) => {}
    }
    if artifacts_sha256 != marker.artifacts_sha256 {
        findings.push(
            Finding::error(
                Code::ReceiptMismatch,
                paths.dir.display().to_string(),
                "the plan's artifacts changed during publication: no receipt is written and the marker stays",
            )
            .hint("review the change, then `dwp finalize PLAN --recover` (it re-checks) or restore the files"),
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
    let _stage = crate::profile::stage("write marker");
    store::write_atomic(
        &plan_dir.join(MARKER),
        plan_dir,
        &store::json_file_bytes(marker),
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
    let value = crate::plan::json::parse_strict(&bytes)
        .map_err(|e| Error::rejected(format!("{}: {}", path.display(), e.path), e.message))?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        Error::rejected(
            format!("{}: $.{}", path.display(), e.path()),
            format!("not a publication marker: {}", e.inner()),
        )
    })
}

/// The receipt: the reference's three keys, then what dwp checked and every artifact it covers.
fn receipt(
    state_sha256: &str,
    marker: &Marker,
    artifacts: Vec<Artifact>,
    gates: Vec<ReceiptGate>,
) -> Receipt {
    Receipt {
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
        artifacts,
        gates,
    }
}

/// The files a publication covers, read once: the receipt's artifacts and the reference's digest
/// come from the same bytes.
struct CoveredFiles {
    plan_dir: std::path::PathBuf,
    /// The receipt's names ([`covered_names`]).
    covered: Vec<String>,
    /// The digest's names ([`crate::rules::receipt::digest_names`]).
    digested: Vec<String>,
    read: std::collections::HashMap<String, std::result::Result<Vec<u8>, store::ReadFailure>>,
}

impl CoveredFiles {
    fn read(plan_dir: &Path, state: &State) -> Result<CoveredFiles> {
        let covered = covered_names(plan_dir, state)?;
        let digested = crate::rules::receipt::digest_names(state);
        let mut names: Vec<String> = covered.iter().chain(&digested).cloned().collect();
        names.sort();
        names.dedup();
        let bytes = store::read_artifacts(plan_dir, &names)
            .map_err(|failure| failure.into_error("read", plan_dir))?;
        Ok(CoveredFiles {
            plan_dir: plan_dir.to_path_buf(),
            covered,
            digested,
            read: names.into_iter().zip(bytes).collect(),
        })
    }

    /// `artifacts_sha256` of these bytes.
    fn digest(&self) -> String {
        crate::rules::receipt::digest_of(self.digested.iter().map(|name| (name, &self.read[name])))
    }

    /// Each covered file with its sha256, sorted by path; a missing one is left out, one that
    /// cannot be read refuses the receipt.
    fn artifacts(&self) -> Result<Vec<Artifact>> {
        let mut artifacts = Vec::new();
        for name in &self.covered {
            match &self.read[name] {
                Ok(bytes) => artifacts.push(Artifact {
                    path: name.clone(),
                    sha256: store::sha256_hex(bytes),
                }),
                Err(store::ReadFailure::Missing) => {}
                Err(failure) => {
                    return Err(Error::rejected(
                        self.plan_dir.join(name).display().to_string(),
                        failure.to_string(),
                    ));
                }
            }
        }
        Ok(artifacts)
    }
}

/// README, PROGRESS, PROMPTS, the manifest, every task file, every analysis_results file but the
/// receipt, and every gate log named by `log=`, sorted.
fn covered_names(plan_dir: &Path, state: &State) -> Result<Vec<String>> {
    let mut names: Vec<String> = ["README.md", "PROGRESS.md", "PROMPTS.md", "manifest.json"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    names.extend(crate::rules::receipt::task_files(state));
    names.extend(analysis_results(plan_dir)?);
    for task in &state.tasks {
        for gate in task.gates() {
            let evidence = gate.evidence.as_deref().unwrap_or("");
            names.extend(crate::rules::evidence::log_pointers(evidence).map(str::to_owned));
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
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
        for (name, kind) in store::list_entries(&folder_path, plan_dir)? {
            let relative = folder.join(&name);
            if kind == store::Entry::Directory {
                folders.push(relative);
            } else {
                // Files and anything else: a symlink or a pipe is refused when it is read.
                let relative = relative.to_string_lossy().into_owned();
                if relative != crate::rules::receipt::RECEIPT && !store::atomic::is_temp_name(&name)
                {
                    found.push(relative);
                }
            }
        }
    }
    Ok(found)
}

/// `--recover`: only while the marker exists, only for the candidate it recorded.
pub fn recover_locked(
    plan_dir: &Path,
    state_path: &Path,
    offered: Option<(&Path, Vec<u8>)>,
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
    if let Some((path, offered)) = offered {
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
    let (checked, findings) = check_candidate(
        &paths,
        state_path,
        Candidate::Bytes(marker.candidate.clone().into_bytes()),
        true,
    );
    let Some(Checked { loaded, .. }) = checked.filter(|_| findings.is_empty()) else {
        return Ok(Publication::stopped(
            plan_dir,
            &marker.candidate_sha256,
            findings,
            Some(summary),
        ));
    };
    complete_publication(&paths, state_path, &loaded, marker, Some(summary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::SynthPlan;

    /// A plan of 3 tasks ready to publish, under `root`: its folder, its state.json, and that
    /// state loaded.
    fn publishable(root: &Path) -> (PathBuf, PathBuf, Loaded<State>) {
        let plan = SynthPlan::new("PLAN_publication_tests", 3)
            .ready_to_publish()
            .write(root)
            .unwrap();
        let state_path = plan.join("state.json");
        let current = plan::load_state_at(&state_path, &plan).unwrap();
        (plan, state_path, current)
    }

    /// The marker's digest is what the checks judged: an edit made after a task file was
    /// checked and before the digest must not enter it (the re-read after the write then sees
    /// the edit and no receipt is written).
    #[test]
    fn the_artifacts_digest_is_of_the_bytes_the_checks_read_not_of_a_later_edit() {
        let root = tempfile::tempdir().unwrap();
        let (plan, state_path, current) = publishable(root.path());
        let candidate = default_candidate(current, &Default::default());

        let fixed = read_fixed_names(&plan);
        let (checked, findings) =
            check_candidate(&PlanPaths::new(&plan), &state_path, candidate, false);
        assert_eq!(findings, Vec::new(), "the synthetic plan is publishable");
        let Checked { loaded, task_texts } = checked.expect("the candidate loads");
        assert_eq!(task_texts.len(), 3, "every task file read is kept");
        let as_checked = crate::rules::receipt::artifacts_digest(&plan, &loaded.doc);

        let edited = plan.join(
            crate::rules::receipt::task_files(&loaded.doc)
                .nth(1)
                .unwrap(),
        );
        let text = std::fs::read_to_string(&edited).unwrap() + "\nEdited after the checks.\n";
        std::fs::write(&edited, text).unwrap();
        let now = crate::rules::receipt::artifacts_digest(&plan, &loaded.doc);
        assert_ne!(
            now, as_checked,
            "the edit changes the digest of the files on disk"
        );

        assert_eq!(
            checked_digest(&plan, &loaded.doc, fixed, task_texts),
            as_checked,
            "the marker's digest is of the checked bytes"
        );
    }

    /// A candidate dwp built is loaded from the state it built (no parse of its bytes), and is
    /// the state those bytes parse to.
    #[test]
    fn a_built_candidate_is_the_state_its_bytes_parse_to() {
        let root = tempfile::tempdir().unwrap();
        let (plan, state_path, current) = publishable(root.path());
        let candidate = default_candidate(current, &Default::default());
        assert!(matches!(candidate, Candidate::Built { .. }));
        assert_checked_as_parsed(&plan, &state_path, candidate);
    }

    /// `candidate` passes the checks, which judge what a parse of its bytes gives.
    fn assert_checked_as_parsed(plan: &Path, state_path: &Path, candidate: Candidate) {
        let parsed = plan::state_from_bytes(state_path, candidate.bytes().to_vec()).unwrap();
        let (checked, findings) =
            check_candidate(&PlanPaths::new(plan), state_path, candidate, false);
        assert_eq!(findings, Vec::new());
        let loaded = checked.unwrap().loaded;
        assert_eq!(loaded.doc, parsed.doc);
        assert_eq!(loaded.sha256, parsed.sha256);
        assert_eq!(loaded.bytes, parsed.bytes);
        assert_eq!(loaded.file, parsed.file);
    }

    /// A state already completed is its own candidate as the writer loaded it: the checks
    /// judge the typed state and bytes a parse of the file gives, without typing them again.
    #[test]
    fn a_completed_state_is_its_own_candidate_as_loaded() {
        let root = tempfile::tempdir().unwrap();
        let (plan, state_path, current) = publishable(root.path());
        let completed = default_candidate(current, &Default::default());
        std::fs::write(&state_path, completed.bytes()).unwrap();
        let current = plan::load_state_at(&state_path, &plan).unwrap();
        assert_eq!(current.doc.status, PlanStatus::Completed);
        let candidate = default_candidate(current, &Default::default());
        assert!(matches!(candidate, Candidate::Loaded(_)));
        assert_checked_as_parsed(&plan, &state_path, candidate);
    }

    /// A built state the typed checks do not accept is judged from its bytes like any input, so
    /// the refusal names the violation and its JSON path.
    #[test]
    fn a_built_candidate_that_breaks_the_schema_is_refused_naming_the_field() {
        let root = tempfile::tempdir().unwrap();
        let (plan, state_path, current) = publishable(root.path());
        let mut next = current.doc.clone();
        next.checkpoint = Field::Value(Checkpoint {
            task: 3,
            step: Some("x".repeat(201)),
            at: next.updated_at.clone(),
            note: None,
        });
        let candidate = Candidate::built(&current, next);
        let (checked, findings) =
            check_candidate(&PlanPaths::new(&plan), &state_path, candidate, false);
        assert!(checked.is_none(), "not loaded: {findings:?}");
        assert!(
            findings.iter().any(
                |f| f.code == Code::SchemaViolation && f.render().contains("$.checkpoint.step")
            ),
            "{findings:?}"
        );
    }

    /// A task file the markdown rules did not read (the state locates a file the index does not
    /// link) is still in the digest, read from disk.
    #[test]
    fn a_task_file_no_rule_read_is_digested_from_disk() {
        let root = tempfile::tempdir().unwrap();
        let (plan, _, state) = publishable(root.path());
        let expected = crate::rules::receipt::artifacts_digest(&plan, &state.doc);
        let got = checked_digest(&plan, &state.doc, read_fixed_names(&plan), Vec::new());
        assert_eq!(got, expected);
    }
}
