//! The conformance fixtures, checked through the real binary.
//!
//! Every `conformance-fixtures/<case>/expected.json` names what each command must say about the
//! plan folder beside it (`conformance-fixtures/<case>/PLAN_<name>/`):
//!
//! ```json
//! {"description": "...", "validate": {"exit": 1, "codes": ["DWP020", "DWP020"]},
//!  "reconcile": {"exit": 1, "directions": ["completed_count drift", "markdown ahead"]},
//!  "verify": {"exit": 1, "codes": ["DWP020", "DWP020", "DWP058"]}}
//! ```
//!
//! `codes` is the exact multiset of finding codes, sorted: no code may be missing and none may be
//! extra. `reconcile` (optional) is the exit code of `dwp reconcile PLAN --json` (check mode) and
//! the exact multiset of directions of its `report.desync`, sorted. `verify` (required) is the
//! exit code and the exact codes of `dwp verify PLAN --json`, whose every finding must carry a
//! hint. Keys for later commands are ignored until their command exists. The one test runs every
//! fixture, collects every mismatch, and fails once listing all of them, so a change in `src/`
//! shows its whole effect at once. It also runs `dwp reconcile` (check mode) on every fixture, with or without a `reconcile` key, and
//! proves that none of `dwp validate`, `dwp reconcile` and `dwp verify` changed a byte of any
//! fixture.
//!
//! A `reconcile` expectation may carry `"bug": "..."`: the expectation is the correct behaviour,
//! which dwp does not have yet; such a case is left out of the main test (and named in its
//! output) until the bug is fixed. No fixture carries one today.

use crate::common;
use crate::common::{changed_paths, tree_digest};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The fixture tree, relative to the repository root.
const FIXTURES: &str = "conformance-fixtures";

/// Fewer fixtures than this means the walk silently missed some.
const MIN_FIXTURES: usize = 220;

/// Fewer fixtures with a `reconcile` key than this means the walk silently missed some.
const MIN_RECONCILE_FIXTURES: usize = 30;

/// Every direction `dwp reconcile` reports (`DesyncKind::direction`).
const DIRECTIONS: [&str; 11] = [
    "state ahead",
    "markdown ahead",
    "title drift",
    "missing in state",
    "missing in markdown",
    "order drift",
    "plan status drift",
    "completed_count drift",
    "odd marker",
    "unreadable index line",
    "approval drift",
];

/// What `expected.json` says about `dwp validate`.
#[derive(Debug)]
struct Expected {
    exit: i32,
    codes: Vec<String>,
}

/// What `expected.json` says about `dwp reconcile` (check mode).
#[derive(Debug)]
struct ReconcileExpected {
    exit: i32,
    directions: Vec<String>,
    /// The expectation is the correct behaviour, not dwp's yet: why.
    bug: Option<String>,
}

/// One fixture: its case name, its plan folder (relative to the repository root) and the
/// expectations, or why the fixture itself is malformed.
#[derive(Debug)]
struct Case {
    name: String,
    plan: PathBuf,
    validate: Result<Expected, String>,
    /// `None` when the fixture has no `reconcile` key.
    reconcile: Option<Result<ReconcileExpected, String>>,
    verify: Result<Expected, String>,
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
    codes_expectation(&doc, "validate")
}

/// The `verify` key of `expected.json` (required of every fixture).
fn parse_verify(text: &str) -> Result<Expected, String> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| format!("expected.json is not JSON: {e}"))?;
    codes_expectation(&doc, "verify")
}

/// `{"exit": 0|1|5, "codes": [sorted DWP codes]}` under `key`.
fn codes_expectation(doc: &Value, key: &str) -> Result<Expected, String> {
    let object = doc
        .get(key)
        .and_then(Value::as_object)
        .ok_or(format!("expected.json has no `{key}` object"))?;
    if let Some(unknown) = object
        .keys()
        .find(|k| !["exit", "codes"].contains(&k.as_str()))
    {
        return Err(format!("`{key}` has an unknown key `{unknown}`"));
    }
    let exit = object
        .get("exit")
        .and_then(Value::as_i64)
        .filter(|e| [0, 1, 5].contains(e))
        .ok_or(format!("`{key}.exit` must be 0, 1 or 5"))?;
    let codes: Vec<String> = object
        .get("codes")
        .and_then(Value::as_array)
        .ok_or(format!("`{key}.codes` must be an array"))?
        .iter()
        .map(|c| c.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or(format!("`{key}.codes` must hold strings"))?;
    if !codes.is_sorted() {
        return Err(format!("`{key}.codes` must be sorted: {codes:?}"));
    }
    Ok(Expected {
        exit: exit as i32,
        codes,
    })
}

/// The `reconcile` key of `expected.json`, if there is one.
fn parse_reconcile(text: &str) -> Option<Result<ReconcileExpected, String>> {
    let doc: Value = match serde_json::from_str(text) {
        Ok(doc) => doc,
        Err(e) => return Some(Err(format!("expected.json is not JSON: {e}"))),
    };
    let reconcile = doc.get("reconcile")?;
    Some(reconcile_expectation(reconcile))
}

fn reconcile_expectation(reconcile: &Value) -> Result<ReconcileExpected, String> {
    let reconcile = reconcile
        .as_object()
        .ok_or("`reconcile` must be an object")?;
    if let Some(key) = reconcile
        .keys()
        .find(|k| !["exit", "directions", "bug"].contains(&k.as_str()))
    {
        return Err(format!("`reconcile` has an unknown key `{key}`"));
    }
    let exit = reconcile
        .get("exit")
        .and_then(Value::as_i64)
        .filter(|e| [0, 1].contains(e))
        .ok_or("`reconcile.exit` must be 0 (in sync) or 1 (desync)")?;
    let directions: Vec<String> = reconcile
        .get("directions")
        .and_then(Value::as_array)
        .ok_or("`reconcile.directions` must be an array")?
        .iter()
        .map(|d| d.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or("`reconcile.directions` must hold strings")?;
    if let Some(unknown) = directions
        .iter()
        .find(|d| !DIRECTIONS.contains(&d.as_str()))
    {
        return Err(format!(
            "`reconcile.directions` holds `{unknown}`, not one of {DIRECTIONS:?}"
        ));
    }
    if !directions.is_sorted() {
        return Err(format!(
            "`reconcile.directions` must be sorted: {directions:?}"
        ));
    }
    if (exit == 0) != directions.is_empty() {
        return Err("`reconcile.exit` is 0 exactly when `directions` is empty".into());
    }
    let bug = match reconcile.get("bug") {
        None => None,
        Some(Value::String(why)) if !why.trim().is_empty() => Some(why.clone()),
        Some(_) => return Err("`reconcile.bug` must be a non-empty string".into()),
    };
    Ok(ReconcileExpected {
        exit: exit as i32,
        directions,
        bug,
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
                [plan] if dwp::plan::is_plan_name(plan) => (relative.join(plan), None),
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
            let text = fs::read_to_string(dir.join("expected.json"))
                .map_err(|e| format!("expected.json: {e}"));
            let validate = match &plan_problem {
                Some(problem) => Err(problem.clone()),
                None => text.clone().and_then(|text| parse_expected(&text)),
            };
            let verify = match &plan_problem {
                Some(problem) => Err(problem.clone()),
                None => text.clone().and_then(|text| parse_verify(&text)),
            };
            let reconcile = text.ok().and_then(|text| parse_reconcile(&text));
            Case {
                name,
                plan,
                validate,
                reconcile,
                verify,
            }
        })
        .collect()
}

/// Run `dwp COMMAND PLAN --json` (`validate` or `verify`) and compare the exit code and the
/// codes with the expectation; `None` when they agree.
fn check(root: &Path, case: &Case, command: &str, expected: &Expected) -> Option<String> {
    let output = common::dwp()
        .inherit_home()
        .in_dir(root)
        .arg(command)
        .arg(&case.plan)
        .arg("--json")
        .output();
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
    // validate: {findings}; verify: {plans: [{findings}]}, each under its command's key.
    common::assert_output_schema(&doc);
    let payload = common::payload(&doc);
    let findings: Vec<Value> = match payload.get("plans").and_then(Value::as_array) {
        Some(plans) => plans
            .iter()
            .flat_map(|p| p["findings"].as_array().cloned().unwrap_or_default())
            .collect(),
        None => payload["findings"].as_array().cloned().unwrap_or_default(),
    };
    let mut codes: Vec<String> = findings
        .iter()
        .map(|f| f["code"].as_str().unwrap_or("<no code>").to_owned())
        .collect();
    codes.sort();
    let mut problems = Vec::new();
    if exit != Some(expected.exit) {
        problems.push(format!(
            "{command} exit {exit:?}, expected {}",
            expected.exit
        ));
    }
    if codes != expected.codes {
        problems.push(format!(
            "{command} codes {codes:?}, expected {:?}",
            expected.codes
        ));
    }
    if doc["command"] != command || doc["dwp"] != 2 {
        problems.push(format!(
            "not a `{command}` document of format 2: dwp={}, command={}",
            doc["dwp"], doc["command"]
        ));
    }
    if command == "verify" {
        let word = match exit {
            Some(0) => "CONFORMANT",
            Some(1) => "NOT_CONFORMANT",
            _ => "UNVERIFIED",
        };
        if payload["verdict"] != word {
            problems.push(format!("verdict {} with exit {exit:?}", payload["verdict"]));
        }
        if let Some(bare) = findings.iter().find(|f| !f["hint"].is_string()) {
            problems.push(format!("a finding without a hint: {bare}"));
        }
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

/// What `dwp reconcile PLAN --json` (check mode) said.
struct ReconcileRun {
    exit: Option<i32>,
    stdout: String,
    stderr: String,
    doc: Option<Value>,
}

fn run_reconcile(root: &Path, case: &Case) -> ReconcileRun {
    let output = common::dwp()
        .inherit_home()
        .in_dir(root)
        .arg("reconcile")
        .arg(&case.plan)
        .arg("--json")
        .output();
    ReconcileRun {
        exit: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        doc: serde_json::from_slice(&output.stdout).ok(),
    }
}

/// Compare a reconcile run with the expectation; `None` when they agree.
fn check_reconcile(run: &ReconcileRun, expected: &ReconcileExpected) -> Option<String> {
    let (exit, stdout, stderr) = (run.exit, &run.stdout, &run.stderr);
    let Some(doc) = &run.doc else {
        return Some(format!(
            "reconcile: stdout is not one JSON document; exit {exit:?}\n  stdout: {stdout}\n  stderr: {stderr}"
        ));
    };
    common::assert_output_schema(doc);
    let report = &doc["reconcile"];
    let desync = report["desync"].as_array().cloned().unwrap_or_default();
    let mut directions: Vec<String> = desync
        .iter()
        .map(|d| {
            d["direction"]
                .as_str()
                .unwrap_or("<no direction>")
                .to_owned()
        })
        .collect();
    directions.sort();
    let mut problems = Vec::new();
    if exit != Some(expected.exit) {
        problems.push(format!(
            "reconcile exit {exit:?}, expected {}",
            expected.exit
        ));
    }
    if directions != expected.directions {
        problems.push(format!(
            "reconcile directions {directions:?}, expected {:?}",
            expected.directions
        ));
    }
    if doc["command"] != "reconcile" || doc["dwp"] != 2 {
        problems.push(format!(
            "not a `reconcile` document of format 2: dwp={}, command={}",
            doc["dwp"], doc["command"]
        ));
    }
    if doc["ok"] != Value::Bool(exit == Some(0)) {
        problems.push(format!("`ok` is {} with exit {exit:?}", doc["ok"]));
    }
    if report["in_sync"] != Value::Bool(desync.is_empty()) {
        problems.push(format!(
            "`in_sync` is {} with {} disagreement(s)",
            report["in_sync"],
            desync.len()
        ));
    }
    if report["written"] != Value::Bool(false) {
        problems.push(format!("check mode says written: {}", report["written"]));
    }
    if stderr.contains("panicked") {
        problems.push(format!("panicked: {stderr}"));
    }
    if problems.is_empty() {
        return None;
    }
    let mut text = problems.join("; ");
    for d in &desync {
        let _ = write!(
            text,
            "\n    {} task {} line {}: {}",
            d["direction"].as_str().unwrap_or("?"),
            d["task"],
            d["line"],
            d["message"].as_str().unwrap_or("?"),
        );
    }
    Some(text)
}

/// Run `problem_of` on every case, collecting mismatches named by case; then prove `command`
/// changed no byte of the fixture tree since `before`, and return the tree's digest.
fn each_case(
    root: &Path,
    cases: &[Case],
    command: &str,
    before: &BTreeMap<PathBuf, String>,
    mismatches: &mut Vec<String>,
    problem_of: impl Fn(&Case) -> Option<String>,
) -> BTreeMap<PathBuf, String> {
    for case in cases {
        if let Some(problem) = problem_of(case) {
            mismatches.push(format!(
                "{} ({}): {problem}",
                case.name,
                case.plan.display()
            ));
        }
    }
    let after = tree_digest(&root.join(FIXTURES));
    let changed: Vec<String> = changed_paths(before, &after)
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        changed.is_empty(),
        "`dwp {command}` changed the fixture tree:\n  {}",
        changed.join("\n  ")
    );
    after
}

#[test]
fn every_conformance_fixture_gives_exactly_its_expected_findings() {
    let root = common::repo_root();
    // The `markdown-only-*` fixtures expect DWP093 as the advisory it is in a git work tree.
    assert!(
        root.ancestors().any(|d| d.join(".git").exists()),
        "the conformance fixtures are judged inside a git work tree: run the tests from a git clone"
    );
    let before = tree_digest(&root.join(FIXTURES));
    let cases = cases(&root);
    assert!(
        cases.len() >= MIN_FIXTURES,
        "only {} fixtures found under {FIXTURES}/ (at least {MIN_FIXTURES} expected)",
        cases.len()
    );

    let mut mismatches = Vec::new();
    let after = each_case(
        &root,
        &cases,
        "validate",
        &before,
        &mut mismatches,
        |case| match &case.validate {
            Ok(expected) => check(&root, case, "validate", expected),
            Err(malformed) => Some(format!("malformed fixture: {malformed}")),
        },
    );

    // `dwp reconcile` in check mode, on every fixture: a `reconcile` key is compared exactly;
    // without one, the command must still not panic (nor change a byte).
    let with_reconcile = cases
        .iter()
        .filter(|c| c.reconcile.as_ref().is_some_and(|r| r.is_ok()))
        .count();
    assert!(
        with_reconcile >= MIN_RECONCILE_FIXTURES,
        "only {with_reconcile} fixtures with a `reconcile` key (at least {MIN_RECONCILE_FIXTURES} expected)"
    );
    let after = each_case(
        &root,
        &cases,
        "reconcile",
        &after,
        &mut mismatches,
        |case| match &case.reconcile {
            Some(Err(malformed)) => Some(format!("malformed fixture: {malformed}")),
            Some(Ok(expected)) if expected.bug.is_none() => {
                check_reconcile(&run_reconcile(&root, case), expected)
            }
            _ => {
                let run = run_reconcile(&root, case);
                run.stderr
                    .contains("panicked")
                    .then(|| format!("reconcile panicked: {}", run.stderr))
            }
        },
    );

    // `dwp verify`, on every fixture: every fixture carries a `verify` key.
    each_case(
        &root,
        &cases,
        "verify",
        &after,
        &mut mismatches,
        |case| match &case.verify {
            Ok(expected) => check(&root, case, "verify", expected),
            Err(malformed) => Some(format!("malformed fixture: {malformed}")),
        },
    );
    assert!(
        mismatches.is_empty(),
        "{} of {} conformance fixtures do not give their expected findings:\n\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n\n")
    );
}
