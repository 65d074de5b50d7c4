//! `dwp loop dod`: the harness judges both lists (seeds 001 and 004).
//!
//! The project's list comes from `dod.items` of `loop.config.yaml`: `command` items are proven
//! only by the worker's proof in `dod.json`; `file-changed` and `pattern-absent` are decided here,
//! from the changed files. The issue's list is the frozen contract's outcomes, proven by
//! `dod.json`, or by `verify.json` where `dod.json` is silent (`dod.json` wins where both speak).
//! Every item is `proven`, `missing` (no proof: "prove it") or `failed` (the proof came back red:
//! "fix it"); the two are never conflated, because they send the worker different instructions.

use super::changed::{self, ChangedSource};
use super::config::{Check, DodItem};
use super::issue::{self, Outcome};
use super::proofs::{self, DodFile, Loaded, Proof, ProofStatus};
use super::{List, read_inside};
use crate::error::{Error, Result};
use crate::store::ReadFailure;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct DodRequest {
    pub worktree: PathBuf,
    pub config: PathBuf,
    pub contract: Option<PathBuf>,
    pub changed: Option<ChangedSource>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Proven,
    Missing,
    Failed,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Proven => "proven",
            Verdict::Missing => "missing",
            Verdict::Failed => "failed",
        }
    }

    /// The instruction that goes back to the worker.
    pub fn instruction(self) -> Option<&'static str> {
        match self {
            Verdict::Proven => None,
            Verdict::Missing => Some("prove it"),
            Verdict::Failed => Some("fix it"),
        }
    }
}

/// Who settled an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A proof in `dod.json` or `verify.json`; `observed`: dwp ran it (`"observedBy": "dwp"`).
    File { file: &'static str, observed: bool },
    /// Decided by dwp from the changed files.
    ChangedFiles,
    /// Nothing: the item is missing.
    Nothing,
}

impl Source {
    pub fn describe(self) -> Option<String> {
        match self {
            Source::File {
                file,
                observed: true,
            } => Some(format!("{file}, observed by dwp")),
            Source::File {
                file,
                observed: false,
            } => Some(format!("{file}, written by the worker")),
            Source::ChangedFiles => Some("decided by dwp from the changed files".into()),
            Source::Nothing => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Row {
    pub list: List,
    pub id: String,
    pub item: String,
    /// `command`, `file-changed`, `pattern-absent`, or `outcome`.
    pub kind: &'static str,
    pub verdict: Verdict,
    pub evidence: String,
    pub source: Source,
}

#[derive(Debug, Clone)]
pub struct DodReport {
    pub rows: Vec<Row>,
    /// The frozen contract: its path and digest.
    pub contract: Option<(PathBuf, String)>,
    /// Where the changed files came from, and how many there were.
    pub changed: Option<(String, usize)>,
}

impl DodReport {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == verdict).count()
    }

    /// Done only when every item of both lists is proven.
    pub fn done(&self) -> bool {
        self.rows.iter().all(|r| r.verdict == Verdict::Proven)
    }
}

/// Proofs as found: an absent file proves nothing; an invalid one is refused (worse than absent).
struct Proofs {
    dod: DodFile,
    verify: Vec<Proof>,
}

pub fn judge(request: &DodRequest) -> Result<DodReport> {
    let worktree = super::worktree_dir(&request.worktree)?;
    let config = super::config::load(&request.config)?;
    let contract = match &request.contract {
        Some(path) => Some(issue::load_checked(path, true)?),
        None => None,
    };
    let proofs = read_proofs(&worktree)?;
    let changed = match &request.changed {
        Some(source) => Some(changed::changed_files(&worktree, source)?),
        None => None,
    };
    let mut rows = Vec::new();
    for item in &config.items {
        rows.push(project_row(&worktree, item, &proofs, changed.as_deref())?);
    }
    for outcome in contract.iter().flat_map(|c| &c.outcomes) {
        rows.push(issue_row(outcome, &proofs));
    }
    Ok(DodReport {
        rows,
        contract: contract.map(|c| (c.path, c.actual)),
        changed: request
            .changed
            .as_ref()
            .zip(changed.as_ref())
            .map(|(source, files)| (source.describe(), files.len())),
    })
}

fn read_proofs(worktree: &Path) -> Result<Proofs> {
    let dod = match proofs::load_dod(worktree)? {
        Loaded::Missing => DodFile::default(),
        Loaded::Present(dod) => dod,
        Loaded::Invalid(found) => return Err(invalid(worktree, super::DOD_JSON, &found)),
    };
    let verify = match proofs::load_verify(worktree)? {
        Loaded::Missing => Vec::new(),
        Loaded::Present(verify) => verify.outcomes,
        Loaded::Invalid(found) => return Err(invalid(worktree, super::VERIFY_JSON, &found)),
    };
    Ok(Proofs { dod, verify })
}

fn invalid(worktree: &Path, relative: &str, found: &[crate::plan::schemas::Violation]) -> Error {
    let first = &found[0];
    super::rejected_at(
        &worktree.join(relative),
        &first.path,
        format!(
            "present but does not match the schema, which is worse than absent: {}",
            first.message
        ),
    )
    .with_hint("a proof file that does not parse looks like evidence and is none: fix it (`dwp loop artifacts` lists the mismatches)")
}

fn row(list: List, id: &str, item: &str, kind: &'static str) -> Row {
    Row {
        list,
        id: id.to_owned(),
        item: item.to_owned(),
        kind,
        verdict: Verdict::Missing,
        evidence: String::new(),
        source: Source::Nothing,
    }
}

fn project_row(
    worktree: &Path,
    item: &DodItem,
    proofs: &Proofs,
    changed: Option<&[String]>,
) -> Result<Row> {
    let base = row(
        List::Project,
        &item.id,
        &item.description,
        item.kind().name(),
    );
    match (&item.check, changed) {
        (Check::Command(argv), _) => {
            let proof = proofs.dod.project.iter().find(|p| p.id == item.id);
            Ok(from_proof(
                base,
                proof.map(|p| (p, super::DOD_JSON)),
                Some(argv),
                "no proof in .ak-loop/dod.json (project)",
            ))
        }
        (_, None) => Ok(Row {
            evidence:
                "no changed files to decide from (pass --changed-from REV or --changed-files FILE)"
                    .into(),
            ..base
        }),
        (Check::FileChanged { glob, matcher }, Some(files)) => {
            let touched: Vec<&String> = files
                .iter()
                .filter(|f| matcher.is_match(f.as_str()))
                .collect();
            let (verdict, evidence) = match touched.as_slice() {
                [] => (
                    Verdict::Failed,
                    format!(
                        "no changed file matches `{glob}` ({})",
                        plural(files.len(), "changed file")
                    ),
                ),
                [one] => (Verdict::Proven, format!("`{one}` changed")),
                [first, rest @ ..] => (
                    Verdict::Proven,
                    format!("`{first}` and {} more changed", rest.len()),
                ),
            };
            Ok(Row {
                verdict,
                evidence,
                source: Source::ChangedFiles,
                ..base
            })
        }
        (
            Check::PatternAbsent {
                pattern,
                regex,
                paths,
            },
            Some(files),
        ) => {
            let scanned: Vec<&String> = files
                .iter()
                .filter(|f| paths.as_ref().is_none_or(|set| set.is_match(f.as_str())))
                .collect();
            let (verdict, evidence) = match first_match(worktree, regex, &scanned)? {
                Some((file, line)) => (
                    Verdict::Failed,
                    format!("`{file}` line {line} matches `{pattern}`"),
                ),
                None => (
                    Verdict::Proven,
                    format!(
                        "`{pattern}` absent from {}",
                        plural(scanned.len(), "changed file")
                    ),
                ),
            };
            Ok(Row {
                verdict,
                evidence,
                source: Source::ChangedFiles,
                ..base
            })
        }
    }
}

/// The first changed file (with its 1-based line) whose content matches. A deleted file holds
/// nothing; a changed path that resolves outside the worktree is refused, never read.
fn first_match(
    worktree: &Path,
    regex: &regex::bytes::Regex,
    files: &[&String],
) -> Result<Option<(String, usize)>> {
    for file in files {
        let bytes = match read_inside(worktree, file) {
            Ok(bytes) => bytes,
            Err(ReadFailure::Missing | ReadFailure::NotRegular(_)) => continue,
            Err(ReadFailure::Escapes(target)) => {
                return Err(Error::rejected(
                    format!("changed file: {file}"),
                    format!("resolves to {}, outside the worktree", target.display()),
                )
                .with_hint(
                    "dwp never reads outside the worktree: a changed symlink must stay inside it",
                ));
            }
            Err(failure) => {
                return Err(Error::Unverified {
                    message: format!("cannot scan a changed file: {failure}"),
                    place: worktree.join(file.as_str()).display().to_string(),
                });
            }
        };
        if let Some(found) = regex.find(&bytes) {
            let line = 1 + bytes[..found.start()]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            return Ok(Some(((*file).clone(), line)));
        }
    }
    Ok(None)
}

fn issue_row(outcome: &Outcome, proofs: &Proofs) -> Row {
    let base = row(List::Issue, &outcome.id, &outcome.description, "outcome");
    // dod.json is the more specific statement; verify.json counts where it is silent.
    let proof = proofs
        .dod
        .outcomes
        .iter()
        .find(|p| p.id == outcome.id)
        .map(|p| (p, super::DOD_JSON))
        .or_else(|| {
            proofs
                .verify
                .iter()
                .find(|p| p.id == outcome.id)
                .map(|p| (p, super::VERIFY_JSON))
        });
    from_proof(
        base,
        proof,
        outcome.check.as_ref(),
        "no proof in .ak-loop/dod.json or .ak-loop/verify.json",
    )
}

/// A recorded proof settles the item unless it ran another argv than the item's (the item
/// changed since, so the proof is of something else: it is missing, not failed).
fn from_proof(
    base: Row,
    proof: Option<(&Proof, &str)>,
    argv: Option<&Vec<String>>,
    none: &str,
) -> Row {
    let Some((proof, file)) = proof else {
        return Row {
            evidence: none.into(),
            ..base
        };
    };
    let file = file.strip_prefix(".ak-loop/").unwrap_or(file);
    let file: &'static str = if file == "dod.json" {
        "dod.json"
    } else {
        "verify.json"
    };
    let source = Source::File {
        file,
        observed: proof.observed_by_dwp(),
    };
    if let (Some(argv), Some(ran)) = (argv, &proof.command)
        && argv != ran
    {
        return Row {
            evidence: format!(
                "the proof ran `{}`, the item runs `{}`",
                ran.join(" "),
                argv.join(" ")
            ),
            source,
            ..base
        };
    }
    let verdict = match proof.status {
        ProofStatus::Passed => Verdict::Proven,
        ProofStatus::Failed => Verdict::Failed,
    };
    Row {
        verdict,
        evidence: proof.evidence.clone(),
        source,
        ..base
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
