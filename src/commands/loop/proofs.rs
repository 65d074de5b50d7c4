//! The two proof files a worker leaves in `.ak-loop/`: `verify.json` (what ran, outcome by
//! outcome) and `dod.json` (the definition-of-done proofs, both lists), and their strict reading.
//!
//! Reading goes bytes → strict JSON (no duplicate keys) → schema → date-times and unique ids →
//! typed. A file that fails any step is *invalid*, reported with the JSON paths of its first
//! mismatches: it looks like evidence, so it is worse than an absent one.

use super::loop_schema::LoopSchema;
use crate::error::{Error, Result};
use crate::plan::schemas::Violation;
use crate::store::ReadFailure;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// A proof's verdict as its writer recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProofStatus {
    Passed,
    Failed,
}

/// One proof: `{id, status, evidence, at?}`, plus what dwp records when it observed the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Proof {
    pub id: String,
    pub status: ProofStatus,
    pub evidence: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The sha256 of `log` as `dwp loop prove` wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_sha256: Option<String>,
    /// How the run ended (`exit 0`, `timed out after 5 s`...: `rules::observed::Ending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// Every byte the command printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_by: Option<String>,
    /// The names (never the values) of the variables dwp passed from its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<String>>,
}

impl Proof {
    /// Whether dwp itself ran the check (as opposed to a proof the worker wrote by hand).
    pub fn observed_by_dwp(&self) -> bool {
        self.observed_by.as_deref() == Some(super::OBSERVED_BY_DWP)
    }
}

/// `.ak-loop/dod.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DodFile {
    #[serde(default)]
    pub project: Vec<Proof>,
    #[serde(default)]
    pub outcomes: Vec<Proof>,
}

/// `.ak-loop/verify.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VerifyFile {
    pub ran_at: String,
    pub command: String,
    pub exit_code: i64,
    pub outcomes: Vec<Proof>,
    /// The `dwp loop prove` command line that wrote the file, paths absolute: what a hint tells
    /// to run again (absent from files other tools or older dwp wrote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prove_command: Option<String>,
}

/// A proof file as found in the worktree.
#[derive(Debug)]
pub enum Loaded<T> {
    Missing,
    /// Present but not a valid document: the first mismatches, with JSON paths.
    Invalid(Vec<Violation>),
    Present(T),
}

/// How many mismatches a report quotes ("the first mismatches").
pub const FIRST_MISMATCHES: usize = 5;

pub fn load_dod(worktree: &Path) -> Result<Loaded<DodFile>> {
    load(worktree, super::DOD_JSON, parse_dod)
}

pub fn load_verify(worktree: &Path) -> Result<Loaded<VerifyFile>> {
    load(worktree, super::VERIFY_JSON, parse_verify)
}

fn load<T>(
    worktree: &Path,
    relative: &str,
    parse: fn(&[u8]) -> Result<T, Vec<Violation>>,
) -> Result<Loaded<T>> {
    match super::read_inside(worktree, relative) {
        Ok(bytes) => Ok(match parse(&bytes) {
            Ok(doc) => Loaded::Present(doc),
            Err(violations) => Loaded::Invalid(violations),
        }),
        Err(ReadFailure::Missing) => Ok(Loaded::Missing),
        Err(ReadFailure::Io(e)) => Err(Error::Unverified {
            message: format!("cannot be read: {e}"),
            place: worktree.join(relative).display().to_string(),
        }),
        Err(other) => Ok(Loaded::Invalid(vec![violation("$", other.to_string())])),
    }
}

fn violation(path: &str, message: impl Into<String>) -> Violation {
    Violation {
        path: path.to_owned(),
        message: message.into(),
    }
}

pub fn parse_dod(bytes: &[u8]) -> Result<DodFile, Vec<Violation>> {
    let value = checked(bytes, LoopSchema::Dod)?;
    let mut problems = Vec::new();
    for list in ["project", "outcomes"] {
        problems.extend(proof_list_problems(&value[list], &format!("$.{list}")));
    }
    typed(value, problems)
}

pub fn parse_verify(bytes: &[u8]) -> Result<VerifyFile, Vec<Violation>> {
    let value = checked(bytes, LoopSchema::Verify)?;
    let mut problems = Vec::new();
    if let Some(ran_at) = value["ranAt"].as_str() {
        problems.extend(date_time_problem(ran_at, "$.ranAt"));
    }
    problems.extend(proof_list_problems(&value["outcomes"], "$.outcomes"));
    typed(value, problems)
}

/// Strict JSON, then the schema.
fn checked(bytes: &[u8], schema: LoopSchema) -> Result<Value, Vec<Violation>> {
    let value =
        crate::plan::json::parse_strict(bytes).map_err(|e| vec![violation(&e.path, e.message)])?;
    let mut found = schema.check(&value, "$");
    if found.is_empty() {
        Ok(value)
    } else {
        found.truncate(FIRST_MISMATCHES);
        Err(found)
    }
}

fn typed<T: serde::de::DeserializeOwned>(
    value: Value,
    mut problems: Vec<Violation>,
) -> Result<T, Vec<Violation>> {
    if !problems.is_empty() {
        problems.truncate(FIRST_MISMATCHES);
        return Err(problems);
    }
    serde_json::from_value(value).map_err(|e| vec![violation("$", e.to_string())])
}

/// What the schema cannot say about a list of proofs: RFC 3339 times and one proof per id.
fn proof_list_problems(list: &Value, root: &str) -> Vec<Violation> {
    let mut problems = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, proof) in list.as_array().into_iter().flatten().enumerate() {
        if let Some(at) = proof["at"].as_str() {
            problems.extend(date_time_problem(at, &format!("{root}[{i}].at")));
        }
        let Some(id) = proof["id"].as_str() else {
            continue;
        };
        if let Some(first) = seen.insert(id, i) {
            problems.push(violation(
                &format!("{root}[{i}].id"),
                format!("`{id}` is proven twice (first at {root}[{first}]): a file must not say two things at once"),
            ));
        }
    }
    problems
}

fn date_time_problem(text: &str, path: &str) -> Option<Violation> {
    crate::clock::parse_rfc3339(text)
        .is_none()
        .then(|| violation(path, format!("`{text}` is not an RFC 3339 date-time")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_json_keys_make_a_proof_file_invalid() {
        let bytes = br#"{"project": [{"id": "t", "status": "failed", "status": "passed", "evidence": "x"}]}"#;
        let found = parse_dod(bytes).unwrap_err();
        assert!(found[0].message.contains("duplicate"), "{found:?}");
    }

    #[test]
    fn one_proof_per_id_in_a_list() {
        let bytes = br#"{"project": [
            {"id": "t", "status": "failed", "evidence": "1 failed"},
            {"id": "t", "status": "passed", "evidence": "ok"}]}"#;
        let found = parse_dod(bytes).unwrap_err();
        assert_eq!(found[0].path, "$.project[1].id");
    }

    #[test]
    fn verify_json_ran_at_must_be_rfc3339() {
        let bytes = br#"{"ranAt": "yesterday", "command": "x", "exitCode": 0, "outcomes": []}"#;
        let found = parse_verify(bytes).unwrap_err();
        assert_eq!(found[0].path, "$.ranAt");
    }

    #[test]
    fn the_seed_example_of_verify_json_is_valid() {
        let seed = br#"{
          "ranAt": "2026-09-20T18:04:11.000Z",
          "command": "pnpm test packages/report",
          "exitCode": 0,
          "outcomes": [
            { "id": "o1", "status": "passed", "evidence": "42 passed | 0 failed" }
          ]
        }"#;
        let verify = parse_verify(seed).unwrap();
        assert_eq!(verify.outcomes[0].status, ProofStatus::Passed);
        assert!(!verify.outcomes[0].observed_by_dwp());
    }
}
