//! `dwp verify`'s three outputs on two conformance fixtures, as snapshots: human text (findings
//! grouped by plan and file, `file:line`, severity, code, message and a hint), the JSON document,
//! and the SARIF 2.1.0 log, which is also validated against the OASIS SARIF 2.1.0 schema
//! (vendored in `tests/data/`).

use crate::common;
use crate::common::field_strs;
use serde_json::Value;

/// Two fixtures: one broken rule with a JSON-path finding, and several findings across files
/// with an advisory and an unverified check.
const FAILING_GATE: &str =
    "conformance-fixtures/verify-dwp060-failing-latest-gate/PLAN_payment_webhooks";
const SEVERAL: &str = "conformance-fixtures/multi-invariants/PLAN_several_invariants_broken";
const NEWER: &str =
    "conformance-fixtures/verify-dwp052-newer-standard-readme/PLAN_payment_webhooks";
const PENDING: &str = "conformance-fixtures/verify-dwp091-approval-pending/PLAN_payment_webhooks";

fn verify(args: &[&str]) -> (i32, String) {
    let run = common::dwp()
        .inherit_home()
        .in_dir(common::repo_root())
        .arg("verify")
        .args(args)
        .run_utf8();
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    (run.code, run.stdout)
}

#[test]
fn human_output_groups_findings_by_plan_and_file_with_hints() {
    let (code, text) = verify(&[FAILING_GATE, SEVERAL, NEWER, PENDING]);
    assert_eq!(code, 1);
    insta::assert_snapshot!("verify_human", text);
}

#[test]
fn json_output_is_one_document_with_every_finding_field() {
    let (code, text) = verify(&[FAILING_GATE, SEVERAL, "--json"]);
    assert_eq!(code, 1);
    let doc = common::document(&text);
    for finding in doc["verify"]["plans"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["findings"].as_array().unwrap())
    {
        for key in [
            "code", "severity", "file", "line", "task", "message", "hint",
        ] {
            assert!(finding.get(key).is_some(), "{key} missing in {finding}");
        }
    }
    insta::assert_snapshot!("verify_json", json_text(&doc));
}

/// `doc` as pretty JSON, written by serde_json itself: numbers keep their lexeme
/// (docs/DECISIONS.md), which insta's own serializer would show as serde_json's private map.
fn json_text(doc: &Value) -> String {
    serde_json::to_string_pretty(doc).expect("a Value always serializes")
}

/// What makes `log` no SARIF 2.1.0 log, checked against the OASIS schema (none when it is one).
fn sarif_errors(log: &Value) -> Vec<String> {
    let mut schema: Value = serde_json::from_slice(
        &std::fs::read(common::repo_root().join("tests/data/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    // The published schema's `language` patterns (run, toolComponent) have a stray `]` that a
    // strict regex engine refuses; the corrected pattern says what was meant. dwp never writes
    // a `language`, so this changes no verdict on its output.
    let fixed = fix_language_patterns(&mut schema);
    assert!(
        fixed >= 2,
        "the erratum is where it was: {fixed} patterns fixed"
    );
    let validator = jsonschema::validator_for(&schema).expect("the SARIF schema compiles");
    validator
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn sarif_output_matches_the_sarif_2_1_0_schema() {
    let (code, text) = verify(&[FAILING_GATE, SEVERAL, NEWER, PENDING, "--format", "sarif"]);
    assert_eq!(code, 1, "the verdict's exit code, whatever the format");
    let log: Value = serde_json::from_str(&text).unwrap();
    let errors = sarif_errors(&log);
    assert!(errors.is_empty(), "not SARIF 2.1.0:\n{}", errors.join("\n"));

    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(
        rules.len(),
        dwp::findings::Code::ALL.len(),
        "one rule per code"
    );
    for result in run["results"].as_array().unwrap() {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            rules[index]["id"], result["ruleId"],
            "ruleIndex names its rule"
        );
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(
            uri.starts_with("conformance-fixtures/"),
            "relative URI: {uri}"
        );
    }
    let levels = field_strs(&run["results"], "level");
    assert!(
        levels.contains(&"warning"),
        "an unverified check is a warning"
    );
    assert!(levels.contains(&"note"), "an advisory is a note");
    insta::assert_snapshot!("verify_sarif", json_text(&log));
}

/// Replace every `"pattern"` equal to the erratum with the corrected pattern; how many.
fn fix_language_patterns(schema: &mut Value) -> usize {
    const ERRATUM: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    match schema {
        Value::Object(map) => {
            let mut fixed = 0;
            if map.get("pattern").and_then(Value::as_str) == Some(ERRATUM) {
                map.insert("pattern".into(), "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$".into());
                fixed += 1;
            }
            fixed + map.values_mut().map(fix_language_patterns).sum::<usize>()
        }
        Value::Array(items) => items.iter_mut().map(fix_language_patterns).sum(),
        _ => 0,
    }
}

#[test]
fn strict_sarif_makes_advisories_errors() {
    let (code, text) = verify(&[PENDING, "--format", "sarif", "--strict"]);
    assert_eq!(code, 1, "--strict: an advisory fails the plan");
    let log: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(log["runs"][0]["results"][0]["level"], "error");
}

#[test]
fn json_and_sarif_together_are_a_usage_error() {
    let output = common::dwp()
        .without_clock()
        .inherit_home()
        .in_dir(common::repo_root())
        .args(["verify", FAILING_GATE, "--json", "--format", "sarif"])
        .output();
    assert_eq!(output.status.code(), Some(2));
    // --json was asked for: stdout is the one JSON document of the error, never a SARIF log.
    let document: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(document["ok"], false, "{document:#}");
    assert_eq!(document["exit"], 2, "{document:#}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("dwp verify: --json and --format sarif"),
        "{stderr}"
    );
}

#[test]
fn json_flag_and_format_json_give_the_same_document() {
    let (_, flag) = verify(&[FAILING_GATE, "--json"]);
    let (_, format) = verify(&[FAILING_GATE, "--format", "json"]);
    assert_eq!(flag, format);
}

/// docs/ci.md's recipe on a repository that has not started a plan: `verify --all .` with
/// SARIF exits 0 and writes a valid log with zero results, the human text says so in one line,
/// and the JSON lists no plans. Nothing is written.
#[test]
fn a_repository_with_no_plans_verifies_conformant_with_an_empty_sarif_log() {
    let repo = tempfile::tempdir().unwrap();
    common::git(repo.path(), &["init", "--quiet"]);
    let before = common::tree_digest(repo.path());
    let at_root = |args: &[&str]| common::dwp().in_dir(repo.path()).args(args).run_utf8();
    let sarif = at_root(&["verify", "--all", ".", "--format", "sarif"]);
    assert_eq!(sarif.code, 0, "{sarif:?}");
    let log: Value = serde_json::from_str(&sarif.stdout).unwrap();
    let errors = sarif_errors(&log);
    assert!(errors.is_empty(), "not SARIF 2.1.0:\n{}", errors.join("\n"));
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    let human = at_root(&["verify", "--all", "."]);
    assert_eq!(human.code, 0, "{human:?}");
    // That there are none, then the summary every `--all` ends with.
    assert_eq!(
        human.stdout, "no plans to verify\n0 plans: 0 conformant, 0 not conformant, 0 unverified\n",
        "{human:?}"
    );
    let json = at_root(&["--json", "verify", "--all"]);
    assert_eq!(json.code, 0, "{json:?}");
    let document = common::document(&json.stdout);
    let plans = document["verify"]["plans"].as_array();
    assert_eq!(plans, Some(&Vec::new()), "{document}");
    assert_eq!(common::tree_digest(repo.path()), before, "nothing written");
}

/// `dwp verify --all` ends its human output with one summary line of all four counts, however
/// many plans it found (one, or none); of one plan named alone there is nothing to sum up.
#[test]
fn verify_all_ends_with_one_summary_line_of_plans_conformant_not_conformant_unverified() {
    let root = tempfile::tempdir().unwrap();
    let plans = root.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    let all = |root: &std::path::Path| {
        let run = common::dwp()
            .without_clock()
            .inherit_home()
            .args(["verify", "--all"])
            .arg(root)
            .run_utf8();
        (run.code, run.stdout)
    };
    let (code, text) = all(root.path());
    assert_eq!(code, 0, "{text}");
    assert!(
        text.ends_with("0 plans: 0 conformant, 0 not conformant, 0 unverified\n"),
        "{text}"
    );
    dwp::synth::SynthPlan::new("PLAN_summed_up", 3)
        .write(&plans)
        .unwrap();
    let (code, text) = all(root.path());
    assert_eq!(code, 0, "{text}");
    assert!(
        text.ends_with(": CONFORMANT\n1 plan: 1 conformant, 0 not conformant, 0 unverified\n"),
        "{text}"
    );
    let (_, alone) = verify(&[FAILING_GATE]);
    assert!(
        !alone.contains(" plan: ") && !alone.contains(" plans: "),
        "{alone}"
    );
}
