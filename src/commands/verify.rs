//! `dwp verify`: the conformance verdict on one plan or every plan of a workspace: structure
//! (`crate::commands::validate`), then every rule of `crate::rules::conformance`, each finding placed at
//! `file:line` and given its fixing hint.

use crate::findings::{Finding, Verdict};
use crate::plan::LoadedPlan;
use crate::plan::model::DocKind;
use crate::rules::conformance::{add_fix_hints, plan_rules};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The verdict on one plan, or on all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VerifyVerdict {
    Conformant,
    NotConformant,
    Unverified,
}

impl VerifyVerdict {
    pub fn word(self) -> &'static str {
        match self {
            VerifyVerdict::Conformant => "CONFORMANT",
            VerifyVerdict::NotConformant => "NOT CONFORMANT",
            VerifyVerdict::Unverified => "UNVERIFIED",
        }
    }

    /// The weight of this verdict among the others (the exit code follows it).
    pub fn weight(self) -> Verdict {
        match self {
            VerifyVerdict::Conformant => Verdict::Valid,
            VerifyVerdict::NotConformant => Verdict::Invalid,
            VerifyVerdict::Unverified => Verdict::Unverified,
        }
    }

    /// Errors (and, with `strict`, advisories) make a plan not conformant; anything that could
    /// not be checked makes it unverified; never conformant by default.
    pub fn of(findings: &[Finding], strict: bool) -> VerifyVerdict {
        VerifyVerdict::from(Verdict::weigh(findings, strict))
    }

    /// The overall verdict of several plans: the worst one.
    pub fn worst(verdicts: impl Iterator<Item = VerifyVerdict>) -> VerifyVerdict {
        VerifyVerdict::from(Verdict::worst(verdicts.map(VerifyVerdict::weight)))
    }
}

impl From<Verdict> for VerifyVerdict {
    fn from(verdict: Verdict) -> VerifyVerdict {
        match verdict {
            Verdict::Invalid => VerifyVerdict::NotConformant,
            Verdict::Unverified => VerifyVerdict::Unverified,
            Verdict::Valid => VerifyVerdict::Conformant,
        }
    }
}

/// What `verify` found in one plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanReport {
    pub plan: String,
    pub verdict: VerifyVerdict,
    pub findings: Vec<Finding>,
    /// A record plan's passing facts (docs/record-plans.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<crate::rules::record::view::RecordFacts>,
}

/// Verify one plan folder.
pub fn verify_plan(dir: &Path, strict: bool) -> PlanReport {
    verify_plan_with(dir, Strictness::advisories(strict))
}

/// How strictly plans are judged: `--strict` (advisories fail) and `--strict-evidence` (a
/// completed task's gate asserted, not observed by dwp, is a finding, DWP069).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Strictness {
    pub advisories: bool,
    pub evidence: bool,
}

impl Strictness {
    pub fn advisories(strict: bool) -> Strictness {
        Strictness {
            advisories: strict,
            evidence: false,
        }
    }
}

/// Verify one plan folder, as strictly as asked.
pub fn verify_plan_with(dir: &Path, strictness: Strictness) -> PlanReport {
    let strict = strictness.advisories;
    if crate::store::is_absent(dir) {
        // One finding, not one per file a plan holds: nothing of it exists.
        let findings = vec![crate::rules::conformance::no_such_plan(dir)];
        return PlanReport {
            plan: dir.display().to_string(),
            verdict: VerifyVerdict::of(&findings, strict),
            findings,
            record: None,
        };
    }
    if crate::plan::record::is_record_plan(dir) {
        return verify_record(dir, strict);
    }
    let plan = LoadedPlan::open(dir);
    let validation = crate::profile::time("validate", || {
        crate::rules::invariants::validate_plan(&plan)
    });
    // A plan without a state layer has nothing for validate to judge: the markdown rules and
    // DWP093 say what there is to say.
    let mut findings = if plan.has_no_state_layer() {
        Vec::new()
    } else {
        validation.findings
    };
    let state = validation.state.map(|loaded| &loaded.doc);
    let manifest_version = validation.manifest.map(|m| m.doc.spec_version.as_str());
    findings.extend(crate::profile::time("plan rules", || {
        plan_rules(&plan, manifest_version, state)
    }));
    // The plan's own Gate Evidence variable already asked for DWP069; the flag asks it of all.
    if let Some(state) = state.filter(|_| strictness.evidence)
        && !findings
            .iter()
            .any(|f| f.code == crate::findings::Code::AssertedGate)
    {
        findings.extend(crate::rules::conformance::asserted_gates(
            &plan.paths,
            state,
        ));
    }
    let _stage = crate::profile::stage("hints and lines");
    crate::rules::conformance::defer_to_interrupted_write(&plan, &mut findings);
    add_fix_hints(&mut findings, plan.dir());
    place_json_findings(&plan, &mut findings);
    // Grouped by file, in line order; within a line, in rule order (the sort is stable).
    findings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    PlanReport {
        plan: dir.display().to_string(),
        verdict: VerifyVerdict::of(&findings, strict),
        findings,
        record: None,
    }
}

/// Verify a record plan (DWP v6/v7): its documents, then what its records say together
/// (`crate::rules::record`). Nothing is written (rule 25).
fn verify_record(dir: &Path, strict: bool) -> PlanReport {
    let plan = crate::profile::time("load records", || {
        crate::plan::record::RecordPlan::load(dir)
    });
    let judged = crate::profile::time("record rules", || crate::rules::record::verify(&plan));
    let mut findings = judged.findings;
    findings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    let record = judged
        .derived
        .as_ref()
        .map(crate::rules::record::view::facts);
    let size = plan.size();
    crate::dispose::dispose(judged.derived, size);
    crate::dispose::dispose(plan, size);
    PlanReport {
        plan: dir.display().to_string(),
        verdict: VerifyVerdict::of(&findings, strict),
        findings,
        record,
    }
}

/// Give findings on a JSON path in the plan's manifest or state the line where that value
/// starts, so every finding reads `file:line`: from the bytes the plan was judged on.
fn place_json_findings(plan: &LoadedPlan, findings: &mut [Finding]) {
    for kind in [DocKind::Manifest, DocKind::State] {
        let name = plan.paths.artifact(kind).display().to_string();
        let wanted: Vec<String> = findings
            .iter()
            .filter(|f| f.file == name && f.line.is_none())
            .filter_map(|f| f.path.clone())
            .collect();
        if wanted.is_empty() {
            continue;
        }
        // A document that could not be read as JSON (a symlink inside the plan) may still be
        // read as a file, for its lines.
        let read;
        let bytes = match plan.json_bytes(kind) {
            Some(bytes) => bytes,
            None => {
                read = plan.read(plan.paths.artifact(kind));
                match &*read {
                    Ok(bytes) => bytes.as_slice(),
                    Err(_) => continue,
                }
            }
        };
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
        let lines = crate::plan::json::lines_of(text, &wanted);
        for finding in findings.iter_mut().filter(|f| f.file == name) {
            if let Some(line) = finding.path.as_ref().and_then(|p| lines.get(p)) {
                finding.line = finding.line.or(Some(*line));
            }
        }
    }
}

/// Every `ROOT/.dwp/plans/PLAN_*` and the plan folders nested in them, verified on every core.
pub fn verify_all(
    root: &Path,
    strict: Strictness,
    done: &Progress,
) -> crate::Result<Vec<PlanReport>> {
    let dirs = crate::plan::plan_dirs(root)?;
    Ok(verify_many(&dirs, strict, done))
}

/// Told once per plan verified, from any thread, so a caller can show progress; told the
/// number of plans first.
pub trait ProgressSink: Sync {
    fn start(&self, plans: usize);
    fn plan_done(&self);
}

pub type Progress = dyn ProgressSink;

/// No progress shown.
pub struct Silent;

impl ProgressSink for Silent {
    fn start(&self, _plans: usize) {}
    fn plan_done(&self) {}
}

/// Verify several plans on every core, a few at a time, reported in the given order.
pub fn verify_many(dirs: &[PathBuf], strict: Strictness, done: &Progress) -> Vec<PlanReport> {
    done.start(dirs.len());
    use rayon::prelude::*;
    dirs.par_iter()
        .with_min_len(PLANS_AT_A_TIME)
        .map(|dir| {
            let report = verify_plan_with(dir, strict);
            done.plan_done();
            report
        })
        .collect()
}

/// Plans a `verify --all` worker takes at the least: a plan of 20 tasks takes about a millisecond,
/// so no worker is left with much more than the others at the end.
const PLANS_AT_A_TIME: usize = 4;
