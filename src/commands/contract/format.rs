//! The contract's file formats: the declaration (`ledger/task-N.expected.json`) and the ledger
//! line, with their JSON Schemas in `schemas/` embedded and compiled once per process.
//!
//! A declaration is read like any plan artifact: strict JSON (no duplicate keys), its schema,
//! then typed, then the rules a schema cannot say (the task it names, plain relative paths, no
//! path twice), so one edited by hand into an invalid shape is refused with file and field.

use super::Op;
use crate::error::{Error, Result};
use crate::plan::schemas::{EmbeddedSchema, compiled, violations};
use jsonschema::Validator;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::OnceLock;

/// `schema` of a declaration.
pub const EXPECTED_SCHEMA_ID: &str = "urn:dwp:contract-expected:v1";

pub const EXPECTED_SCHEMA: EmbeddedSchema = crate::plan::schemas::CONTRACT_EXPECTED;

pub const LEDGER_LINE_SCHEMA: EmbeddedSchema = crate::plan::schemas::CONTRACT_LEDGER_LINE;

/// A path's state when the task was declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub exists: bool,
    pub sha256: Option<String>,
}

/// One expected file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub path: String,
    pub op: Op,
    pub required: Vec<String>,
    pub before: Snapshot,
}

/// An earlier declaration replaced with `--replace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replaced {
    pub declared_at: String,
    pub replaced_at: String,
    pub sha256: String,
}

/// `ledger/task-N.expected.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declaration {
    pub schema: String,
    pub plan: String,
    pub task: u64,
    pub root: String,
    pub declared_at: String,
    pub ledger_offset: u64,
    #[serde(rename = "filesExpected")]
    pub files_expected: Vec<Expected>,
    pub replaced: Vec<Replaced>,
}

/// One line of `ledger/task-N.ledger.jsonl`: one recorded edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub ts: String,
    pub tool: String,
    pub path: String,
    pub op: Op,
    #[serde(rename = "taskId")]
    pub task_id: u64,
    pub plan: String,
    pub session: Option<String>,
}

pub fn expected_validator() -> &'static Validator {
    static CELL: OnceLock<Validator> = OnceLock::new();
    compiled(&CELL, &EXPECTED_SCHEMA)
}

pub fn ledger_line_validator() -> &'static Validator {
    static CELL: OnceLock<Validator> = OnceLock::new();
    compiled(&CELL, &LEDGER_LINE_SCHEMA)
}

/// Read and check a declaration; `Ok(None)` when the task has none.
/// The way to a sound declaration: declaring the task again, its plan and task written in, with
/// the files the user names.
pub fn redeclare_hint(plan_dir: &Path, task: u64, why: &str) -> String {
    format!(
        "declare the task again, {why}: `dwp contract declare {} --task {task} --replace` with its --create, --modify and --delete files",
        crate::term::path_word(plan_dir)
    )
}

pub fn load_declaration(path: &Path, plan_dir: &Path, task: u64) -> Result<Option<Declaration>> {
    let file = path.display().to_string();
    let bytes = match crate::store::read_artifact(path, plan_dir) {
        Ok(bytes) => bytes,
        Err(crate::store::ReadFailure::Missing) => return Ok(None),
        Err(failure) => {
            return Err(Error::rejected(file, failure.to_string())
                .with_hint("the declaration is a regular file inside the plan folder"));
        }
    };
    let hint = redeclare_hint(plan_dir, task, "instead of editing the declaration by hand");
    let value = crate::plan::json::parse_strict(&bytes).map_err(|e| {
        Error::rejected(format!("{file}: {}", e.path), e.message).with_hint(hint.clone())
    })?;
    if let Some(first) = violations(expected_validator(), &value).into_iter().next() {
        return Err(
            Error::rejected(format!("{file}: {}", first.path), first.message)
                .with_hint(hint.clone()),
        );
    }
    let declaration: Declaration = serde_path_to_error::deserialize(&value).map_err(|e| {
        Error::rejected(
            format!("{file}: $.{}", e.path()),
            e.into_inner().to_string(),
        )
        .with_hint(hint.clone())
    })?;
    check_shape(&declaration, task, &file).map_err(|e| e.with_hint(hint.clone()))?;
    Ok(Some(declaration))
}

/// What the schema cannot say: the task it names, plain relative paths, each path once, no
/// symbols on a delete, a snapshot that agrees with itself.
fn check_shape(declaration: &Declaration, task: u64, file: &str) -> Result<()> {
    if declaration.task != task {
        return Err(Error::rejected(
            format!("{file}: $.task"),
            format!(
                "declares task {} in the file of task {task}",
                declaration.task
            ),
        ));
    }
    if !super::paths::is_stored_root(&declaration.root) {
        return Err(Error::rejected(
            format!("{file}: $.root"),
            format!(
                "`{}` is neither relative to the plan folder (`..` steps, then names) nor absolute",
                declaration.root
            ),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, expected) in declaration.files_expected.iter().enumerate() {
        let at = |field: &str| format!("{file}: $.filesExpected[{i}].{field}");
        if !super::paths::is_plain_relative(&expected.path) {
            return Err(Error::rejected(
                at("path"),
                format!(
                    "`{}` is not a plain path relative to the root",
                    expected.path
                ),
            ));
        }
        if !seen.insert(expected.path.as_str()) {
            return Err(Error::rejected(
                at("path"),
                format!("`{}` is declared twice", expected.path),
            ));
        }
        if expected.op == Op::Delete && !expected.required.is_empty() {
            return Err(Error::rejected(
                at("required"),
                "a deleted file cannot hold required symbols",
            ));
        }
        if expected.before.exists != expected.before.sha256.is_some() {
            return Err(Error::rejected(
                at("before"),
                "a snapshot has a sha256 exactly when the file existed",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_contract_schemas_compile() {
        assert!(expected_validator().is_valid(&serde_json::json!({
            "schema": EXPECTED_SCHEMA_ID, "plan": "PLAN_a_b", "task": 1, "root": "/r",
            "declared_at": "2026-06-09T16:42:10Z", "ledger_offset": 0, "replaced": [],
            "filesExpected": [{"path": "a.rs", "op": "modify", "required": [],
                               "before": {"exists": true, "sha256": "0".repeat(64)}}]
        })));
        let entry = Entry {
            ts: "2026-06-09T16:42:10Z".into(),
            tool: "Edit".into(),
            path: "src/a.rs".into(),
            op: Op::Modify,
            task_id: 3,
            plan: "PLAN_a_b".into(),
            session: None,
        };
        assert!(ledger_line_validator().is_valid(&serde_json::to_value(entry).unwrap()));
        assert!(!ledger_line_validator().is_valid(&serde_json::json!({"ts": "x"})));
    }
}
