//! The conformance fixtures, checked through the real binary.
//!
//! Every `conformance-fixtures/<case>/expected.json` names what each command must say about the
//! plan folder beside it (`conformance-fixtures/<case>/PLAN_<name>/`):
//!
//! ```json
//! {"description": "...", "validate": {"exit": 1, "codes": ["DWP020", "DWP020"]}}
//! ```
//!
//! `codes` is the exact multiset of finding codes, sorted: no code may be missing and none may be
//! extra. Only the `validate` key is checked here; keys for later commands are ignored until
//! their command exists. The one test runs every fixture, collects every mismatch, and fails once
//! listing all of them, so a change in `src/` shows its whole effect at once. It also proves that
//! `dwp validate` changed no byte of any fixture.

use assert_cmd::Command;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The fixture tree, relative to the repository root.
const FIXTURES: &str = "conformance-fixtures";

/// The clock every fixture is judged at (the `updated_at` of the example plan).
const TEST_NOW: &str = "2026-06-09T16:42:10Z";

/// Fewer fixtures than this means the walk silently missed some.
const MIN_FIXTURES: usize = 45;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What `expected.json` says about `dwp validate`.
#[derive(Debug)]
struct Expected {
    exit: i32,
    codes: Vec<String>,
}

/// One fixture: its case name, its plan folder (relative to the repository root) and the
/// expectation, or why the fixture itself is malformed.
#[derive(Debug)]
struct Case {
    name: String,
    plan: PathBuf,
    validate: Result<Expected, String>,
}

/// `^PLAN_[a-z0-9]+(_[a-z0-9]+){1,4}$`, the plan name pattern of the schemas.
fn is_plan_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("PLAN_") else {
        return false;
    };
    let words: Vec<&str> = rest.split('_').collect();
    (2..=5).contains(&words.len())
        && words.iter().all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

fn parse_expected(text: &str) -> Result<Expected, String> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| format!("expected.json is not JSON: {e}"))?;
    let description = doc
        .get("description")
        .and_then(Value::as_str)
        .ok_or("expected.json has no string `description`")?;
    if description.trim().is_empty() || description.contains('\n') {
        return Err("`description` must be one non-empty line".into());
    }
    let validate = doc
        .get("validate")
        .and_then(Value::as_object)
        .ok_or("expected.json has no `validate` object")?;
    let exit = validate
        .get("exit")
        .and_then(Value::as_i64)
        .filter(|e| [0, 1, 5].contains(e))
        .ok_or("`validate.exit` must be 0, 1 or 5")?;
    let codes: Vec<String> = validate
        .get("codes")
        .and_then(Value::as_array)
        .ok_or("`validate.codes` must be an array")?
        .iter()
        .map(|c| c.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or("`validate.codes` must hold strings")?;
    if !codes.is_sorted() {
        return Err(format!("`validate.codes` must be sorted: {codes:?}"));
    }
    Ok(Expected {
        exit: exit as i32,
        codes,
    })
}

/// Every fixture under `conformance-fixtures/`, in name order.
fn cases(root: &Path) -> Vec<Case> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root.join(FIXTURES))
        .expect("conformance-fixtures/ is readable")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.join("expected.json").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let plans: Vec<String> = fs::read_dir(&dir)
                .expect("fixture folder is readable")
                .map(|entry| entry.expect("directory entry"))
                .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("PLAN_"))
                .collect();
            let relative = Path::new(FIXTURES).join(&name);
            let (plan, plan_problem) = match plans.as_slice() {
                [plan] if is_plan_name(plan) => (relative.join(plan), None),
                [plan] => (
                    relative.join(plan),
                    Some(format!(
                        "plan folder `{plan}` does not match the plan name pattern"
                    )),
                ),
                _ => (
                    relative.clone(),
                    Some(format!("needs exactly one PLAN_* folder, has {plans:?}")),
                ),
            };
            let validate = match plan_problem {
                Some(problem) => Err(problem),
                None => fs::read_to_string(dir.join("expected.json"))
                    .map_err(|e| format!("expected.json: {e}"))
                    .and_then(|text| parse_expected(&text)),
            };
            Case {
                name,
                plan,
                validate,
            }
        })
        .collect()
}

/// A digest of every entry under `dir`, keyed by path: a file's bytes, a symlink's target (never
/// followed), or a directory marker. Any change of content, type or name changes the map.
fn tree_digest(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in fs::read_dir(dir).expect("readable fixture folder") {
            let path = entry.expect("directory entry").path();
            let meta = fs::symlink_metadata(&path).expect("stat");
            let digest = if meta.file_type().is_symlink() {
                format!(
                    "symlink -> {}",
                    fs::read_link(&path).expect("readlink").display()
                )
            } else if meta.is_dir() {
                walk(&path, out);
                "directory".to_owned()
            } else {
                let bytes = fs::read(&path).expect("readable fixture file");
                format!("{:x}", Sha256::digest(&bytes))
            };
            out.insert(path, digest);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

/// Run `dwp validate PLAN --json` and compare with the expectation; `None` when they agree.
fn check(root: &Path, case: &Case, expected: &Expected) -> Option<String> {
    let output = Command::cargo_bin("dwp")
        .expect("the dwp binary is built")
        .current_dir(root)
        .env("DWP_TEST_NOW", TEST_NOW)
        .arg("validate")
        .arg(&case.plan)
        .arg("--json")
        .output()
        .expect("dwp runs");
    let exit = output.status.code();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let doc: Value = match serde_json::from_slice(&output.stdout) {
        Ok(doc) => doc,
        Err(e) => {
            return Some(format!(
                "stdout is not one JSON document ({e}); exit {exit:?}\n  stdout: {stdout}\n  stderr: {stderr}"
            ));
        }
    };
    let findings = doc["findings"].as_array().cloned().unwrap_or_default();
    let mut codes: Vec<String> = findings
        .iter()
        .map(|f| f["code"].as_str().unwrap_or("<no code>").to_owned())
        .collect();
    codes.sort();
    let mut problems = Vec::new();
    if exit != Some(expected.exit) {
        problems.push(format!("exit {exit:?}, expected {}", expected.exit));
    }
    if codes != expected.codes {
        problems.push(format!("codes {codes:?}, expected {:?}", expected.codes));
    }
    if doc["command"] != "validate" || doc["dwp"] != 1 {
        problems.push(format!(
            "not a `validate` document of format 1: dwp={}, command={}",
            doc["dwp"], doc["command"]
        ));
    }
    if stderr.contains("panicked") {
        problems.push(format!("panicked: {stderr}"));
    }
    if problems.is_empty() {
        return None;
    }
    let mut report = problems.join("; ");
    for finding in &findings {
        let _ = write!(
            report,
            "\n    {} {} {} {}: {}",
            finding["code"].as_str().unwrap_or("?"),
            finding["severity"].as_str().unwrap_or("?"),
            finding["file"].as_str().unwrap_or("?"),
            finding["path"].as_str().unwrap_or(""),
            finding["message"].as_str().unwrap_or("?"),
        );
    }
    Some(report)
}

#[test]
fn every_conformance_fixture_gives_exactly_its_expected_findings() {
    let root = repo_root();
    let before = tree_digest(&root.join(FIXTURES));
    let cases = cases(&root);
    assert!(
        cases.len() >= MIN_FIXTURES,
        "only {} fixtures found under {FIXTURES}/ (at least {MIN_FIXTURES} expected)",
        cases.len()
    );

    let mut mismatches = Vec::new();
    for case in &cases {
        let problem = match &case.validate {
            Ok(expected) => check(&root, case, expected),
            Err(malformed) => Some(format!("malformed fixture: {malformed}")),
        };
        if let Some(problem) = problem {
            mismatches.push(format!(
                "{} ({}): {problem}",
                case.name,
                case.plan.display()
            ));
        }
    }

    let after = tree_digest(&root.join(FIXTURES));
    let changed: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .map(|path| path.display().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(
        changed.is_empty(),
        "`dwp validate` changed the fixture tree:\n  {}",
        changed.join("\n  ")
    );
    assert!(
        mismatches.is_empty(),
        "{} of {} conformance fixtures do not give their expected findings:\n\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n\n")
    );
}
