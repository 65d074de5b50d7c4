//! One output contract: under `--json` every command writes one JSON document on stdout, success
//! and failure alike, and every document matches `schemas/output.schema.json` (`dwp schema
//! output`): the envelope `dwp`, `command`, `ok`, `exit` (ok exactly when exit is 0, and exit
//! the process's own code), then the command's payload under its key, or an `error` with its
//! kind, message, place and hint.

use crate::common;
use crate::common::{NOW, Plan, dwp};
use dwp::synth::SynthPlan;
use serde_json::Value;

fn validator() -> &'static jsonschema::Validator {
    common::output_validator()
}

/// Run `dwp --json ARGS` in `dir` and check its one document against the schema and the exit.
fn check(validator: &jsonschema::Validator, dir: &std::path::Path, args: &[&str]) -> Value {
    let run = dwp().at(NOW).in_dir(dir).arg("--json").args(args).run();
    let document: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document ({e}): {run:?}"));
    let problems: Vec<String> = validator
        .iter_errors(&document)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{args:?}: {problems:#?}\n{document:#}");
    assert_eq!(
        document["exit"], run.code,
        "{args:?}: the exit it states is the exit"
    );
    assert_eq!(document["ok"], run.code == 0, "{args:?}");
    document
}

#[test]
fn every_command_speaks_the_one_envelope_on_success_and_failure() {
    let validator = validator();
    let plan = Plan::from_synth(SynthPlan::new("PLAN_json_contract", 4).completed(2));
    let dir = plan.root().to_path_buf();
    let p = plan.dir.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["validate", p],
        vec!["verify", p],
        vec!["status", p],
        vec!["reconcile", p],
        vec!["lock", "status", p],
        vec!["lock", "recover", p],
        vec!["run", p, "--task", "3", "--", "true"],
        vec!["update", p, "--task", "3", "--status", "in_progress"],
        vec!["run", p, "--task", "3", "--", "echo", "1 passed"],
        vec!["run", p, "--task", "3", "--", "sh", "-c", "exit 9"],
        vec!["update", p, "--task", "4", "--status", "completed"],
        vec!["update", p, "--task", "3", "--status", "bogus"],
        vec!["update", p, "--task", "3"],
        vec!["migrate", p, "--to", "v5"],
        vec!["finalize", p, "--check"],
        vec!["finalize", p],
        vec!["approve", p, "--by", "ann"],
        vec!["schema"],
        vec!["schema", "output"],
        vec!["schema", "nope"],
        vec!["next", p],
        vec!["new", "PLAN_made_by_new_here", "--tasks", "One thing"],
        vec!["new", "not_a_plan_name", "--tasks", "One thing"],
        vec!["contract", "check", p],
        vec!["frobnicate"],
        vec!["verify", "/nonexistent/PLAN_nowhere_at_all"],
    ];
    // A markdown-only plan for init, a repository for --all, a contract for loop freeze.
    let markdown_only = dir.join("PLAN_feature_flag_cleanup");
    common::copy_plan(
        &common::fixture("markdown-only-current-v5/PLAN_feature_flag_cleanup"),
        &markdown_only,
    );
    let repo = tempfile::tempdir().unwrap();
    let plans = repo.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    SynthPlan::new("PLAN_in_repo", 2).write(&plans).unwrap();
    let contract = dir.join("contract.json");
    std::fs::write(
        &contract,
        r#"{"outcomes": [{"id": "one", "description": "it works"}]}"#,
    )
    .unwrap();
    let published = common::publishable(
        &dir,
        "PLAN_json_published",
        3,
        dwp::plan::model::PlanFormat::Lite,
    );
    let (m, r, c, f) = (
        markdown_only.to_str().unwrap(),
        repo.path().to_str().unwrap(),
        contract.to_str().unwrap(),
        published.to_str().unwrap(),
    );
    let more: Vec<Vec<&str>> = vec![
        vec!["init", m],
        vec!["init", m],
        vec!["status", "--all", r],
        vec!["verify", "--all", r],
        vec!["completions", "bash"],
        vec!["man", "update"],
        vec!["loop", "freeze", c],
        vec!["loop", "artifacts", r],
        vec!["loop", "artifacts", "--no-worktree"],
        vec!["finalize", f],
        vec!["finalize", f, "--check"],
        vec!["finalize", f, "--recover"],
        vec!["lock", "recover", f],
        vec!["contract", "record", p],
        vec![
            "contract",
            "declare",
            p,
            "--task",
            "3",
            "--create",
            "src/new.rs",
        ],
        [&["amend", p][..], &common::AMEND_TASK_2].concat(),
        vec!["amend", p, "--task", "9"],
    ];
    let cases: Vec<Vec<&str>> = cases.into_iter().chain(more).collect();
    let mut exits = std::collections::BTreeSet::new();
    for args in &cases {
        let document = check(validator, &dir, args);
        exits.insert(document["exit"].as_u64().unwrap());
        if let Some(error) = document.get("error") {
            assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
        }
    }
    assert!(
        exits.contains(&0) && exits.contains(&1) && exits.contains(&2),
        "the cases cover success, refusal and usage: {exits:?}"
    );
}

#[test]
fn the_schema_rejects_a_document_that_breaks_the_envelope() {
    let validator = validator();
    let lock = |payload: Value| {
        serde_json::json!({"dwp": 2, "command": "lock status", "ok": true, "exit": 0,
            "lock_status": payload})
    };
    let free = serde_json::json!({"lock": "PLAN_x/state.json.lock", "held": false, "holder": null});
    assert!(validator.is_valid(&lock(free.clone())));
    let mut unknown_field = free.clone();
    unknown_field["holder_pid"] = serde_json::json!(7);
    let mut missing_field = free.clone();
    missing_field.as_object_mut().unwrap().remove("held");
    let mut wrong_type = free.clone();
    wrong_type["held"] = serde_json::json!("no");
    for bad in [
        serde_json::json!({"dwp": 2, "command": "lock status", "ok": true, "exit": 1, "lock_status": free}),
        serde_json::json!({"dwp": 2, "command": "lock status", "ok": false, "exit": 0, "lock_status": free}),
        serde_json::json!({"dwp": 2, "command": "lock status", "ok": true, "exit": 0}),
        serde_json::json!({"dwp": 2, "command": "lock status", "ok": false, "exit": 1,
            "error": {"kind": "rejected", "message": "m"}}),
        serde_json::json!({"dwp": 1, "command": "lock status", "ok": true, "exit": 0, "lock_status": free}),
        // The payload at the top level, as format 1 had it, or under another command's key.
        serde_json::json!({"dwp": 2, "command": "lock status", "ok": true, "exit": 0,
            "lock": "PLAN_x/state.json.lock", "held": false, "holder": null}),
        serde_json::json!({"dwp": 2, "command": "lock status", "ok": true, "exit": 0, "status": free}),
        serde_json::json!({"dwp": 2, "command": "lock status", "ok": true, "exit": 0,
            "lock_status": free, "extra": 1}),
        lock(unknown_field),
        lock(missing_field),
        lock(wrong_type),
    ] {
        assert!(!validator.is_valid(&bad), "{bad}");
    }
}

#[test]
fn every_payload_sits_under_its_command_words_joined_by_underscores() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_payload_key", 2));
    let p = plan.dir.to_str().unwrap();
    for (args, key) in [
        (vec!["verify", p], "verify"),
        (vec!["status", p], "status"),
        (vec!["validate", p], "validate"),
        (vec!["lock", "status", p], "lock_status"),
        (vec!["reconcile", p], "reconcile"),
        (vec!["next", p], "next"),
    ] {
        let run = dwp().arg("--json").args(&args).run();
        let document = run.json();
        let keys: Vec<&str> = document
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["dwp", "command", "ok", "exit", key], "{args:?}");
        assert_eq!(document["dwp"], 2);
    }
}

#[test]
fn dwp_schema_prints_every_embedded_schema_as_embedded() {
    let names = dwp().arg("schema").run();
    assert_eq!(names.code, 0);
    let listed: Vec<&str> = names.stdout.lines().collect();
    assert_eq!(listed.len(), dwp::plan::schemas::ALL.len());
    for schema in dwp::plan::schemas::ALL {
        let run = dwp().args(["schema", schema.name()]).run();
        assert_eq!(run.code, 0, "{}", schema.name());
        assert_eq!(
            run.stdout,
            schema.text,
            "{} is printed byte for byte",
            schema.name()
        );
        assert!(listed.contains(&schema.name()));
    }
}
