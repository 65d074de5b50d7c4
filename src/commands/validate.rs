//! `dwp validate`: schema and state invariants of a plan folder or of one JSON artifact.
//!
//! Reports every problem it can reach, not only the first: all schema violations of each file,
//! and, once a file matches its schema, every invariant it breaks. A file that does not match
//! its schema is not checked further (its fields cannot be trusted to exist).

use crate::findings::{Code, Finding, Verdict};
use crate::plan::model::{DocKind, Manifest};
use crate::plan::{LoadedPlan, declared_kind, load, read_bytes, state_from_bytes};
use crate::rules::invariants::{self, collect, validate_plan};
use std::path::Path;

/// The outcome of validating one target.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The target as the user named it.
    pub target: String,
    /// What was found valid, e.g. `PLAN_x: manifest v2, state v2, 7 tasks`.
    pub summary: String,
    pub findings: Vec<Finding>,
}

impl Validation {
    pub fn verdict(&self) -> Verdict {
        Verdict::of(&self.findings)
    }
}

/// Validate a plan folder, or a single `manifest.json` / `state.json`, or one record-plan
/// document (a contract, a manifest, a snapshot or a journal of DWP v6/v7).
pub fn validate(target: &Path) -> Validation {
    let name = target.display().to_string();
    let (summary, mut findings) = if target.is_dir() {
        validate_folder(target)
    } else if !crate::store::is_absent(target) {
        validate_file(target)
    } else {
        (
            String::new(),
            vec![crate::rules::conformance::no_such_plan(target)],
        )
    };
    let (plan_dir, _) = crate::plan::resolve_target(target);
    crate::rules::conformance::name_the_plan(&mut findings, &plan_dir);
    Validation {
        target: name,
        summary,
        findings,
    }
}

fn validate_folder(dir: &Path) -> (String, Vec<Finding>) {
    if crate::plan::record::is_record_plan(dir) {
        return validate_record(dir);
    }
    let plan = LoadedPlan::open(dir);
    let mut validation = validate_plan(&plan);
    crate::rules::conformance::defer_to_interrupted_write(&plan, &mut validation.findings);
    (validation.summary, validation.findings)
}

/// A record plan (DWP v6/v7): its manifest, contract chain and journal, each judged on its own.
fn validate_record(dir: &Path) -> (String, Vec<Finding>) {
    let plan = crate::plan::record::RecordPlan::load(dir);
    let judged = crate::rules::record::validate(&plan);
    let name = plan.folder_name().unwrap_or_default();
    let summary = match &judged.derived {
        Some(derived) => format!(
            "{name}: record plan {}, contract revision {}, {} events, {} tasks",
            derived.generation.label(),
            derived.revision,
            derived.events,
            derived.projection.tasks.len()
        ),
        None => format!("{name}: record plan"),
    };
    (summary, judged.findings)
}

fn validate_file(path: &Path) -> (String, Vec<Finding>) {
    let plan_dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let by_name = [DocKind::Manifest, DocKind::State]
        .into_iter()
        .find(|k| k.file_name() == file_name);
    // The document's own `schema` says what it is; the file name decides only when it is silent.
    let bytes = match read_bytes(path, plan_dir) {
        Ok(bytes) => bytes,
        Err(findings) => return (String::new(), findings),
    };
    let shown = path.display().to_string();
    if file_name.ends_with(".ndjson") {
        return crate::rules::record::standalone_journal(&shown, &bytes);
    }
    // A shell read (tasks left raw) is enough to learn the kind.
    let declared = match crate::plan::json::parse_strict_shell(&bytes) {
        Ok(shell) if crate::rules::record::is_record_document(&shell.value) => {
            let value = crate::plan::json::parse_strict(&bytes).unwrap_or(shell.value);
            return crate::rules::record::standalone_document(&shown, &value);
        }
        Ok(shell) => declared_kind(&shell.value),
        Err(e) => {
            let finding = Finding::error(Code::NotJson, path.display().to_string(), e.message);
            return (String::new(), vec![finding.at(e.path)]);
        }
    };
    let mut findings = Vec::new();
    let summary = match declared.or(by_name) {
        Some(DocKind::Manifest) => collect(
            &mut findings,
            load::<Manifest>(path, plan_dir, DocKind::Manifest)
                .as_ref()
                .map_err(Vec::as_slice),
            invariants::check_manifest,
        )
        .map(|m| format!("{}: manifest v{}", path.display(), m.generation.number())),
        Some(DocKind::State) => collect(
            &mut findings,
            state_from_bytes(path, bytes)
                .as_ref()
                .map_err(Vec::as_slice),
            invariants::check_state,
        )
        .map(|s| {
            format!(
                "{}: state v{}, {} tasks",
                path.display(),
                s.generation.number(),
                s.doc.tasks.len()
            )
        }),
        None => {
            findings.push(
                Finding::error(
                    Code::UnknownSchema,
                    path.display().to_string(),
                    "is neither a plan manifest nor a plan state: no known `schema` and not named manifest.json or state.json",
                )
                .at("$.schema"),
            );
            None
        }
    };
    (summary.unwrap_or_default(), findings)
}
