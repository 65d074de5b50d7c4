//! The issue's list: the contract the orchestrator froze before dispatch (the definition of done), and
//! `dwp loop freeze`.
//!
//! A contract is `{outcomes: [{id, description, check?}], digest?}`; `check` is the argv that
//! proves the outcome (`dwp loop prove` runs it). Freezing adds `digest`: the sha256 of the
//! canonical JSON of `outcomes` (keys sorted at every level, no whitespace), so reformatting the
//! file or reordering keys keeps the stamp while any change to an outcome breaks it. A frozen
//! contract whose outcomes no longer match the stamp is refused: editing the issue mid-flight
//! must not move the bar.

use crate::error::{Error, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// What a contract looks like, for hints.
const SHAPE: &str =
    "a contract is {\"outcomes\": [{\"id\", \"description\", \"check\"?: [argv]}], \"digest\"?}";

/// One outcome of the issue's list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    pub id: String,
    pub description: String,
    #[serde(default)]
    pub check: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIssueList {
    outcomes: Vec<Outcome>,
    #[serde(default)]
    digest: Option<String>,
}

/// A contract as read, with the digest its outcomes hash to now.
#[derive(Debug, Clone)]
pub struct IssueList {
    pub path: PathBuf,
    pub outcomes: Vec<Outcome>,
    /// The stamp written at freezing, if any.
    pub digest: Option<String>,
    /// sha256 of the canonical JSON of the outcomes as they are now.
    pub actual: String,
    document: Value,
}

impl IssueList {
    pub fn is_frozen(&self) -> bool {
        self.digest.is_some()
    }
}

/// Canonical JSON: object keys sorted at every level, no insignificant whitespace.
pub fn canonical_json(value: &Value) -> Vec<u8> {
    serde_json::to_vec(&sorted(value)).expect("a JSON value serializes")
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::with_capacity(map.len());
            for key in keys {
                out.insert(key.clone(), sorted(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Read and check a contract (strict JSON, closed shape, safe unique ids, argv checks).
pub fn load(path: &Path) -> Result<IssueList> {
    let bytes = super::read_input(path)?;
    let document = crate::plan::json::parse_strict(&bytes)
        .map_err(|e| super::rejected_at(path, &e.path, e.message).with_hint(SHAPE))?;
    let raw: RawIssueList = serde_path_to_error::deserialize(&document).map_err(|e| {
        super::rejected_at(path, &format!("$.{}", e.path()), e.into_inner().to_string())
            .with_hint(SHAPE)
    })?;
    check_outcomes(path, &raw.outcomes)?;
    if let Some(digest) = &raw.digest
        && !is_sha256_hex(digest)
    {
        return Err(super::rejected_at(
            path,
            "$.digest",
            format!("`{digest}` is not 64 lower-case hex digits"),
        )
        .with_hint("the digest is written by `dwp loop freeze`, never by hand"));
    }
    Ok(IssueList {
        path: path.to_path_buf(),
        actual: crate::store::sha256_hex(&canonical_json(&document["outcomes"])),
        outcomes: raw.outcomes,
        digest: raw.digest,
        document,
    })
}

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn check_outcomes(path: &Path, outcomes: &[Outcome]) -> Result<()> {
    for (i, outcome) in outcomes.iter().enumerate() {
        if !valid_id(&outcome.id) {
            return Err(super::rejected_at(
                path,
                &format!("$.outcomes[{i}].id"),
                format!(
                    "`{}` is not an id (letters, digits, `.`, `_`, `-`; at most 64)",
                    outcome.id
                ),
            )
            .with_hint("ids name log files, so they are letters, digits, `.`, `_` and `-`"));
        }
        if let Some(first) = outcomes[..i].iter().position(|o| o.id == outcome.id) {
            return Err(super::rejected_at(
                path,
                &format!("$.outcomes[{i}].id"),
                format!(
                    "outcome `{}` is declared twice (first at $.outcomes[{first}])",
                    outcome.id
                ),
            )
            .with_hint("every outcome has its own id: proofs are matched by id"));
        }
        if outcome
            .check
            .as_ref()
            .is_some_and(|argv| argv.first().is_none_or(String::is_empty))
        {
            return Err(super::rejected_at(
                path,
                &format!("$.outcomes[{i}].check"),
                "an empty argv proves nothing",
            )
            .with_hint("`check` is an argv such as [\"cargo\", \"test\"], or absent"));
        }
    }
    Ok(())
}

/// The id rule of every list (the schemas' `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`): ids name log
/// files, so they can never name a path.
pub fn valid_id(id: &str) -> bool {
    let mut bytes = id.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && id.len() <= 64
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Load a contract that must not have moved since it was frozen. `require_frozen`: the harness
/// judges only against a frozen bar; the worker may run an unfrozen contract's checks.
pub fn load_checked(path: &Path, require_frozen: bool) -> Result<IssueList> {
    let contract = load(path)?;
    match &contract.digest {
        None if require_frozen => Err(super::rejected_at(path, "$.digest", "the contract is not frozen")
            .with_hint(format!("freeze it at dispatch: `dwp loop freeze {}`", crate::term::path_word(path)))),
        Some(digest) if *digest != contract.actual => Err(super::rejected_at(
            path,
            "$.outcomes",
            format!(
                "the contract changed after dispatch: its outcomes hash to {}, the frozen stamp is {digest}",
                contract.actual
            ),
        )
        .with_hint("the bar is frozen at dispatch: restore the contract as dispatched, or dispatch again with a new contract")),
        _ => Ok(contract),
    }
}

/// What `dwp loop freeze` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frozen {
    pub path: PathBuf,
    pub digest: String,
    /// False when the contract was already frozen with this digest.
    pub changed: bool,
    pub outcomes: usize,
}

/// Stamp the contract's digest into it (durable atomic replace). A contract frozen before is
/// left alone when it still matches its stamp and refused when it does not: re-freezing an
/// edited contract would be exactly the moved bar the stamp exists to catch.
pub fn freeze(path: &Path) -> Result<Frozen> {
    let contract = load_checked(path, false)?;
    let frozen = |changed| Frozen {
        path: path.to_path_buf(),
        digest: contract.actual.clone(),
        changed,
        outcomes: contract.outcomes.len(),
    };
    if contract.is_frozen() {
        return Ok(frozen(false));
    }
    let mut document = contract.document.clone();
    if let Value::Object(map) = &mut document {
        map.insert("digest".into(), Value::String(contract.actual.clone()));
    } else {
        return Err(
            Error::rejected(path.display().to_string(), "is not a JSON object").with_hint(SHAPE),
        );
    }
    // The contract is the file the caller names: only its own folder is trusted.
    let folder = path.parent().unwrap_or(Path::new(""));
    crate::store::write_atomic(path, folder, &crate::store::json_file_bytes(&document))?;
    Ok(frozen(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_ignores_key_order_and_whitespace() {
        let a: Value =
            serde_json::from_str(r#"{"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": null}}"#)
                .unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": 2})),
            br#"{"a":2,"b":1}"#
        );
        assert_ne!(
            canonical_json(&json!([1, 2])),
            canonical_json(&json!([2, 1]))
        );
    }

    #[test]
    fn ids_never_name_a_path() {
        assert!(valid_id("o1") && valid_id("tests.unit_2-a"));
        for bad in ["", "../x", "a/b", ".hidden", "-x", &"x".repeat(65)] {
            assert!(!valid_id(bad), "{bad}");
        }
    }
}
