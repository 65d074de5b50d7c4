//! Publication, a plan's terminal transition (the spec's "Verified plan publication";
//! docs/DECISIONS.md "Publication and receipts"), shared by `dwp finalize` and by `dwp update` of
//! the last task: what is checked, and what is written, planned here; carried out by
//! [`crate::steps::commit::publish`].
//!
//! Under the state lock: build or read the completed candidate, check it against every plan
//! artifact as the publishing change leaves them (schema, invariants, identity, the markdown,
//! the task logs, evidence truth, every `dwp verify` rule but the receipt publication itself
//! writes) and list every failure, writing nothing. Then publish in steps, each durable before
//! the next:
//!
//! 1. `.finalizing.json`: the candidate (and its sha256), the artifacts digest, the other edits
//!    of the change (the README box `update --tick` ticks), pid, host, time. While it exists
//!    `verify` fails and every other writer refuses. It is written once: how far a publication
//!    got is read from the files themselves, never from a progress note that would cost a
//!    durable write per step.
//! 2. the other edits, then `state.json` ← the candidate.
//! 3. re-read: the state's bytes are the candidate's (so they validate: the candidate was
//!    checked), and no artifact changed since the checks (else no receipt, the marker stays,
//!    exit 1).
//! 4. `analysis_results/FINALIZATION.json`, the receipt.
//! 5. the marker removed.
//!
//! An interruption anywhere leaves the plan unpublished (before 1), or marked and recoverable:
//! `--recover` re-runs 2-5 only for the candidate whose sha256 the marker recorded. The candidate
//! and the other edits travel inside the marker, so a default candidate (built from the state
//! with the clock) can be recovered without the caller rebuilding byte-identical JSON.

use crate::error::{Error, Result};
use crate::findings::{Code, Finding, Severity};
use crate::plan::model::{Checkpoint, Field, PlanStatus, State, TaskStatus};
use crate::plan::{self, Loaded, LoadedPlan};
use crate::steps::commit::Change;
use crate::store::{self, lock_dir as lock};
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
    pub(crate) fn stopped(
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
    /// The other files the publishing change writes (the README whose box `update --tick`
    /// ticked), written before the state, and again by a recovery.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<MarkerEdit>,
}

/// A file a publication writes besides the state and the receipt: its path relative to the
/// plan folder and its text.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct MarkerEdit {
    pub path: String,
    pub content: String,
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
pub(crate) fn receipt_gates(state: &State) -> Vec<ReceiptGate> {
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
    pub(crate) fn name(self) -> &'static str {
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
pub(crate) fn reached(step: Step) -> Result<()> {
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

/// A publication checked and ready to carry out ([`crate::steps::commit::publish`]).
pub struct Planned {
    pub plan_dir: PathBuf,
    pub state_path: PathBuf,
    /// The candidate, typed: what state.json becomes.
    pub candidate: Loaded<State>,
    pub marker: Marker,
    /// A `--recover` run: what the marker said.
    pub recovered_from: Option<MarkerSummary>,
}

/// What the checks of a publication decided: go ahead, or stop (REFUSED or UNVERIFIED, every
/// problem listed; nothing is written).
pub enum Checked {
    Ready(Box<Planned>),
    Stopped(Box<Publication>),
}

/// Check `candidate` against `plan`, as the publishing change leaves it (`edits`, the other
/// files it writes, already set in `plan`), and plan its publication. The caller holds the
/// lock; `dwp update` of the last task calls this with its result.
pub fn plan_publication(
    plan: &LoadedPlan,
    candidate: Candidate,
    edits: Vec<MarkerEdit>,
) -> Checked {
    let candidate_sha256 = store::sha256_hex(candidate.bytes());
    let (loaded, findings) = crate::profile::time("check candidate", || {
        check_candidate(plan, candidate, false)
    });
    let Some(loaded) = loaded.filter(|_| findings.is_empty()) else {
        return Checked::Stopped(Box::new(Publication::stopped(
            plan.dir(),
            &candidate_sha256,
            findings,
            None,
        )));
    };
    // The digest of the very bytes the checks judged: every file is read once per command.
    let artifacts_sha256 = crate::profile::time("artifacts digest", || {
        crate::rules::receipt::artifacts_digest(plan, &loaded.doc)
    });
    let marker = Marker {
        candidate_sha256,
        artifacts_sha256,
        step: Step::Marked.name().to_owned(),
        pid: std::process::id(),
        host: lock::host_name(),
        started_at: crate::clock::now_rfc3339(),
        candidate: String::from_utf8(loaded.bytes.clone()).expect("candidates are UTF-8 JSON"),
        edits,
    };
    Checked::Ready(Box::new(Planned {
        plan_dir: plan.dir().to_path_buf(),
        state_path: plan.paths.state.clone(),
        candidate: loaded,
        marker,
        recovered_from: None,
    }))
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

/// Every check a candidate must pass, with every failure; the typed candidate when it loaded.
fn check_candidate(
    plan: &LoadedPlan,
    candidate: Candidate,
    recovering: bool,
) -> (Option<Loaded<State>>, Vec<Finding>) {
    let state_path = &plan.paths.state;
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
    let manifest = match plan.manifest() {
        Ok(manifest) => Some(manifest),
        Err(problems) => {
            findings.extend_from_slice(problems);
            None
        }
    };
    findings.extend(crate::rules::invariants::check_identity(
        plan.paths.folder_name().as_deref(),
        manifest,
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
    let spec_version = manifest.map(|m| m.doc.spec_version.as_str());
    let resolved_by_publication = |code: Code| {
        matches!(
            code,
            Code::MissingReceipt | Code::ReceiptMismatch | Code::MalformedReceipt
        ) || (recovering && code == Code::PublicationInProgress)
    };
    let plan_findings =
        crate::rules::conformance::plan_rules(plan, spec_version, Some(&loaded.doc));
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
    crate::rules::conformance::add_fix_hints(&mut findings, plan.dir());
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

/// After the write: the bytes on disk are the candidate's, and no artifact changed since the
/// checks. Bytes equal to the candidate's validate and keep its invariants (the candidate passed
/// both), so they are compared, not checked a second time.
pub(crate) fn reverify(
    after: &LoadedPlan,
    candidate: &Loaded<State>,
    marker: &Marker,
    artifacts_sha256: &str,
) -> Vec<Finding> {
    let paths = &after.paths;
    let file = paths.state.display().to_string();
    let mut findings = Vec::new();
    match after.state_bytes() {
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
            .hint(format!(
                "review the change, then `dwp finalize {} --recover` (it re-checks) or restore the files",
                crate::term::path_word(&paths.dir)
            )),
        );
    }
    findings
}

/// Whether the plan is published: its state completed and its receipt in place. A writer that
/// changes a file the receipt covers moves it aside in the same change ([`supersede_receipt`]).
pub fn is_published(plan: &LoadedPlan, state: &State) -> bool {
    state.status == PlanStatus::Completed
        && plan.place(&plan.dir().join(crate::rules::receipt::RECEIPT)) != store::Place::Missing
}

/// A published plan that a change edits is no longer what its receipt describes: the receipt
/// moves aside in the same change, kept as history (`FINALIZATION.superseded.<time>.json`), and
/// `dwp finalize` writes a new one (the plan still completed, [`republish_hint`]) or does so once
/// it is completed again. Returns where it went (`None`: there was no receipt).
pub fn supersede_receipt(change: &mut Change, plan: &LoadedPlan) -> Result<Option<String>> {
    let receipt = plan.dir().join(crate::rules::receipt::RECEIPT);
    let read = plan.read(&receipt);
    let bytes = match &*read {
        Ok(bytes) => bytes,
        Err(store::ReadFailure::Missing) => return Ok(None),
        Err(failure) => return Err(failure.clone_kind().into_error("read", &receipt)),
    };
    let stamp: String = crate::clock::now_rfc3339()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let aside = format!("analysis_results/FINALIZATION.superseded.{stamp}.json");
    change.write(&plan.dir().join(&aside), None, bytes.clone());
    change.remove(&receipt, bytes);
    Ok(Some(aside))
}

/// The command that publishes a completed plan again once its receipt moved aside.
pub fn republish_hint(plan: &LoadedPlan) -> String {
    format!("dwp finalize {}", crate::term::path_word(plan.dir()))
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

fn read_marker(plan: &LoadedPlan, path: &Path) -> Result<Marker> {
    let read = plan.read(path);
    let bytes = match &*read {
        Ok(bytes) => bytes,
        Err(store::ReadFailure::Missing) => {
            return Err(Error::rejected(
                path.display().to_string(),
                "there is no interrupted publication to recover",
            )
            .with_hint(format!(
                "publish with `dwp finalize {}`",
                crate::term::path_word(path.parent().unwrap_or(Path::new(".")))
            )));
        }
        Err(failure) => return Err(failure.clone_kind().into_error("read", path)),
    };
    let value = crate::plan::json::parse_strict(bytes)
        .map_err(|e| Error::rejected(format!("{}: {}", path.display(), e.path), e.message))?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        Error::rejected(
            format!("{}: $.{}", path.display(), e.path()),
            format!("not a publication marker: {}", e.inner()),
        )
    })
}

/// The receipt: the reference's three keys, then what dwp checked and every artifact it covers.
pub(crate) fn receipt(
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

/// The files a publication covers, read once after the write (from a plan opened afresh): the
/// receipt's artifacts and the reference's digest come from the same bytes.
pub(crate) struct CoveredFiles<'a> {
    plan: &'a LoadedPlan,
    /// The receipt's names ([`covered_names`]).
    covered: Vec<String>,
    /// The digest's names ([`crate::rules::receipt::digest_names`]).
    digested: Vec<String>,
}

impl<'a> CoveredFiles<'a> {
    pub(crate) fn of(plan: &'a LoadedPlan, state: &State) -> Result<CoveredFiles<'a>> {
        Ok(CoveredFiles {
            covered: covered_names(plan, state)?,
            digested: crate::rules::receipt::digest_names(state),
            plan,
        })
    }

    /// `artifacts_sha256` of these bytes.
    pub(crate) fn digest(&self) -> String {
        let read: Vec<_> = self.digested.iter().map(|name| self.read(name)).collect();
        crate::rules::receipt::digest_of(self.digested.iter().zip(read.iter().map(|r| &**r)))
    }

    fn read(&self, name: &str) -> std::rc::Rc<std::result::Result<Vec<u8>, store::ReadFailure>> {
        self.plan.read(&self.plan.dir().join(name))
    }

    /// Each covered file with its sha256, sorted by path; a missing one is left out, one that
    /// cannot be read refuses the receipt.
    pub(crate) fn artifacts(&self) -> Result<Vec<Artifact>> {
        let mut artifacts = Vec::new();
        for name in &self.covered {
            match &*self.read(name) {
                Ok(bytes) => artifacts.push(Artifact {
                    path: name.clone(),
                    sha256: store::sha256_hex(bytes),
                }),
                Err(store::ReadFailure::Missing) => {}
                Err(failure) => {
                    return Err(Error::rejected(
                        self.plan.dir().join(name).display().to_string(),
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
fn covered_names(plan: &LoadedPlan, state: &State) -> Result<Vec<String>> {
    let mut names: Vec<String> = ["README.md", "PROGRESS.md", "PROMPTS.md", "manifest.json"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    names.extend(crate::rules::receipt::task_files(state));
    names.extend(analysis_results(plan)?);
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

/// Every file under `analysis_results/` but the receipt ([`crate::rules::receipt::results_files`]);
/// a folder that is no folder of the plan, or cannot be looked at or listed, refuses the receipt.
fn analysis_results(plan: &LoadedPlan) -> Result<Vec<String>> {
    use crate::rules::receipt::ResultsUnlisted;
    crate::rules::receipt::results_files(plan).map_err(|unlisted| match unlisted {
        ResultsUnlisted::NotAFolder(path) => Error::rejected(
            path.display().to_string(),
            "is not a folder of the plan (a symlink or a special file)",
        ),
        ResultsUnlisted::Unseen(path) => {
            Error::io("stat", &path, std::io::Error::other("cannot be looked at"))
        }
        ResultsUnlisted::Unlisted(path, why) => Error::rejected(path.display().to_string(), why),
    })
}

/// `--recover`: only while the marker exists, only for the candidate it recorded, checked
/// again against `plan` as the marker's other edits leave it.
pub fn plan_recovery(plan: &mut LoadedPlan, offered: Option<(&Path, Vec<u8>)>) -> Result<Checked> {
    let marker_path = plan.dir().join(MARKER);
    let marker = read_marker(plan, &marker_path)?;
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
    let on_disk = match &*plan.read(&plan.paths.state) {
        Ok(bytes) => store::sha256_hex(bytes),
        Err(failure) => {
            return Err(failure.clone_kind().into_error("read", &plan.paths.state));
        }
    };
    let summary = MarkerSummary {
        candidate_sha256: marker.candidate_sha256.clone(),
        artifacts_sha256: marker.artifacts_sha256.clone(),
        step: marker.step.clone(),
        pid: marker.pid,
        host: marker.host.clone(),
        started_at: marker.started_at.clone(),
        state_already_published: on_disk == marker.candidate_sha256,
    };
    for edit in &marker.edits {
        let path = plan.dir().join(&edit.path);
        crate::store::intent::relative_name(plan.dir(), &path)?;
        plan.set_file(&path, edit.content.clone().into_bytes());
    }
    let candidate = Candidate::Bytes(marker.candidate.clone().into_bytes());
    let (checked, findings) = check_candidate(plan, candidate, true);
    let Some(loaded) = checked.filter(|_| findings.is_empty()) else {
        return Ok(Checked::Stopped(Box::new(Publication::stopped(
            plan.dir(),
            &marker.candidate_sha256,
            findings,
            Some(summary),
        ))));
    };
    Ok(Checked::Ready(Box::new(Planned {
        plan_dir: plan.dir().to_path_buf(),
        state_path: plan.paths.state.clone(),
        candidate: loaded,
        marker,
        recovered_from: Some(summary),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::SynthPlan;

    /// A plan of 3 tasks ready to publish, under `root`: its folder and its state loaded.
    fn publishable(root: &Path) -> (PathBuf, Loaded<State>) {
        let plan = SynthPlan::new("PLAN_publication_tests", 3)
            .ready_to_publish()
            .write(root)
            .unwrap();
        let current = plan::load_state_at(&plan.join("state.json"), &plan).unwrap();
        (plan, current)
    }

    /// The marker's digest is what the checks judged: an edit made after a task file was
    /// checked and before the digest must not enter it (the re-read after the write then sees
    /// the edit and no receipt is written).
    #[test]
    fn the_artifacts_digest_is_of_the_bytes_the_checks_read_not_of_a_later_edit() {
        let root = tempfile::tempdir().unwrap();
        let (dir, current) = publishable(root.path());
        let candidate = default_candidate(current, &Default::default());

        let plan = LoadedPlan::open(&dir);
        let (checked, findings) = check_candidate(&plan, candidate, false);
        assert_eq!(findings, Vec::new(), "the synthetic plan is publishable");
        let loaded = checked.expect("the candidate loads");
        let before_edit =
            crate::rules::receipt::artifacts_digest(&LoadedPlan::open(&dir), &loaded.doc);

        let edited = dir.join(
            crate::rules::receipt::task_files(&loaded.doc)
                .nth(1)
                .unwrap(),
        );
        let text = std::fs::read_to_string(&edited).unwrap() + "\nEdited after the checks.\n";
        std::fs::write(&edited, text).unwrap();
        let on_disk = crate::rules::receipt::artifacts_digest(&LoadedPlan::open(&dir), &loaded.doc);
        assert_ne!(
            on_disk, before_edit,
            "the edit changes the digest of the files on disk"
        );
        assert_eq!(
            crate::rules::receipt::artifacts_digest(&plan, &loaded.doc),
            before_edit,
            "the marker's digest is of the checked bytes"
        );
    }

    /// A candidate dwp built is loaded from the state it built (no parse of its bytes), and is
    /// the state those bytes parse to.
    #[test]
    fn a_built_candidate_is_the_state_its_bytes_parse_to() {
        let root = tempfile::tempdir().unwrap();
        let (dir, current) = publishable(root.path());
        let candidate = default_candidate(current, &Default::default());
        assert!(matches!(candidate, Candidate::Built { .. }));
        assert_checked_as_parsed(&dir, candidate);
    }

    /// `candidate` passes the checks, which judge what a parse of its bytes gives.
    fn assert_checked_as_parsed(dir: &Path, candidate: Candidate) {
        let state_path = dir.join("state.json");
        let parsed = plan::state_from_bytes(&state_path, candidate.bytes().to_vec()).unwrap();
        let (checked, findings) = check_candidate(&LoadedPlan::open(dir), candidate, false);
        assert_eq!(findings, Vec::new());
        let loaded = checked.unwrap();
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
        let (dir, current) = publishable(root.path());
        let state_path = dir.join("state.json");
        let completed = default_candidate(current, &Default::default());
        std::fs::write(&state_path, completed.bytes()).unwrap();
        let current = plan::load_state_at(&state_path, &dir).unwrap();
        assert_eq!(current.doc.status, PlanStatus::Completed);
        let candidate = default_candidate(current, &Default::default());
        assert!(matches!(candidate, Candidate::Loaded(_)));
        assert_checked_as_parsed(&dir, candidate);
    }

    /// A built state the typed checks do not accept is judged from its bytes like any input, so
    /// the refusal names the violation and its JSON path.
    #[test]
    fn a_built_candidate_that_breaks_the_schema_is_refused_naming_the_field() {
        let root = tempfile::tempdir().unwrap();
        let (dir, current) = publishable(root.path());
        let mut next = current.doc.clone();
        next.checkpoint = Field::Value(Checkpoint {
            task: 3,
            step: Some("x".repeat(201)),
            at: next.updated_at.clone(),
            note: None,
        });
        let candidate = Candidate::built(&current, next);
        let (checked, findings) = check_candidate(&LoadedPlan::open(&dir), candidate, false);
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
        let (dir, state) = publishable(root.path());
        let names = crate::rules::receipt::digest_names(&state.doc);
        let read = store::read_artifacts(&dir, &names).unwrap();
        let expected = crate::rules::receipt::digest_of(names.iter().zip(read.iter()));
        let plan = LoadedPlan::open(&dir);
        assert!(plan.readme().is_ok(), "the README is read, no task file");
        assert_eq!(
            crate::rules::receipt::artifacts_digest(&plan, &state.doc),
            expected
        );
    }
}
