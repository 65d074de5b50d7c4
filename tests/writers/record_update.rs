//! `dwp update` on a record plan (DWP v6/v7; issue #33, docs/record-plans.md "Writing a record
//! plan"): `--status in_progress` appends a `task_start` with the work tree's fingerprint, once,
//! and only under an approval of the live contract (rule 19); `--status completed` appends
//! nothing when the journal derives the completion and records a `refusal` when it does not
//! (rules 21, 23). `state.json` is projected again after every append.

use crate::common::{dwp, fixture_plan, journal_events, refused, writing_nothing};
use std::path::Path;
use std::process::Command;

fn update(plan: &Path, task: &str, status: &str) -> crate::common::Run {
    let path = plan.to_str().unwrap();
    dwp()
        .args(["update", path, "--task", task, "--status", status, "--json"])
        .run_utf8()
}

/// The snapshot agreement `dwp verify --json` reports.
fn snapshot_agreement(plan: &Path) -> String {
    let run = dwp()
        .args(["verify", plan.to_str().unwrap(), "--json"])
        .run_utf8();
    run.payload()["plans"][0]["record"]["snapshot"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_start_appends_one_task_start_with_the_work_trees_fingerprint_and_projects_the_state() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    let before = journal_events(&plan);
    let run = update(&plan, "T-convert-reference", "in_progress");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.payload();
    let after = journal_events(&plan);
    assert_eq!(after.len(), before.len() + 1);
    let start = after.last().unwrap();
    assert_eq!(start["type"], "task_start");
    assert_eq!(start["task"], "T-convert-reference");
    assert_eq!(
        start["actor"],
        serde_json::json!({"kind": "agent", "identity": "caller"})
    );
    // No repository here: the public ledger's fingerprint of a host without git.
    assert_eq!(
        start["fingerprint"],
        serde_json::json!({"revision": "none", "dirty": ""})
    );
    assert_eq!(report["seq"], start["seq"]);
    assert_eq!(report["unchanged"], false);
    assert_eq!(snapshot_agreement(&plan), "agrees");
}

// The public ledger's content key makes a start idempotent: the same task, work tree, actor
// and contract is the same start.
#[test]
fn the_same_start_again_writes_nothing() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    assert_eq!(update(&plan, "T-convert-reference", "in_progress").code, 0);
    let again = writing_nothing(&plan, "a repeated start", || {
        update(&plan, "T-convert-reference", "in_progress")
    });
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.payload()["unchanged"], true);
}

#[test]
fn a_start_in_a_repository_records_head_and_the_dirty_paths() {
    let (root, plan) = fixture_plan("record-valid-v7-in-progress");
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(root.path())
            .output()
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}: {status:?}");
        String::from_utf8(status.stdout).unwrap()
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "plan"]);
    let head = git(&["rev-parse", "HEAD"]).trim().to_owned();
    std::fs::write(root.path().join("notes.txt"), "work in progress\n").unwrap();
    assert_eq!(update(&plan, "T-convert-reference", "in_progress").code, 0);
    let start = journal_events(&plan).pop().unwrap();
    assert_eq!(start["fingerprint"]["revision"], head.as_str());
    assert_eq!(start["fingerprint"]["dirty"], "?? notes.txt");
}

// Rule 19: the approval of the live contract is the only thing that opens a start; a refused
// start is recorded, as the public ledger records it.
#[test]
fn rule_19_a_start_without_an_approval_of_the_live_contract_is_refused_and_recorded() {
    let (_root, plan) = fixture_plan("record-dwp111-approval-cites-draft");
    let before = journal_events(&plan);
    let path = plan.to_str().unwrap();
    let run = dwp()
        .args([
            "update",
            path,
            "--task",
            "T-backoff-schedule",
            "--status",
            "in_progress",
        ])
        .run_utf8();
    run.assert_refusal(
        "update",
        1,
        &["no approval event cites the live contract", "rule 19"],
    );
    let after = journal_events(&plan);
    assert_eq!(after.len(), before.len() + 1, "one refusal, no task_start");
    let refusal = after.last().unwrap();
    assert_eq!(refusal["type"], "refusal");
    assert_eq!(refusal["stage"], "task_start");
    assert_eq!(refusal["actor"]["kind"], "helper");
}

// dwp verify reports a start before the prerequisites completed (DWP116): dwp's writer never
// makes one.
#[test]
fn a_start_before_the_prerequisites_are_completed_is_refused_and_recorded() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    let before = journal_events(&plan);
    let path = plan.to_str().unwrap();
    let run = dwp()
        .args([
            "update",
            path,
            "--task",
            "T-redirect-map",
            "--status",
            "in_progress",
        ])
        .run_utf8();
    run.assert_refusal(
        "update",
        1,
        &["prerequisite(s) not completed", "T-convert-guides"],
    );
    let after = journal_events(&plan);
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(after.last().unwrap()["type"], "refusal");
    assert!(
        !after
            .iter()
            .any(|e| e["type"] == "task_start" && e["task"] == "T-redirect-map")
    );
}

// Rule 23: completion is derived, never declared. A completion the journal derives writes
// nothing; one it does not is refused with the public ledger's reason, recorded.
#[test]
fn rule_23_completion_is_derived_never_declared() {
    let (_root, done) = fixture_plan("record-valid-v6-completed");
    let run = writing_nothing(&done, "a derived completion", || {
        update(&done, "T-backoff-schedule", "completed")
    });
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.payload()["transition"], "complete");

    let (_root, open) = fixture_plan("record-valid-v7-in-progress");
    let before = journal_events(&open).len();
    let path = open.to_str().unwrap();
    let run = dwp()
        .args([
            "update",
            path,
            "--task",
            "T-convert-guides",
            "--status",
            "completed",
        ])
        .run_utf8();
    run.assert_refusal("update", 1, &["is not complete", "rule 23"]);
    let after = journal_events(&open);
    assert_eq!(after.len(), before + 1);
    let refusal = after.last().unwrap();
    assert_eq!(refusal["type"], "refusal");
    assert_eq!(refusal["stage"], "gate");
    assert_eq!(refusal["subject"], "T-convert-guides");
}

// Rule 21: every declared invariant's latest evaluation must pass at or after the task's start.
#[test]
fn rule_21_a_completion_waits_for_every_invariant_to_pass_in_the_attempt() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    let path = plan.to_str().unwrap();
    let run = dwp()
        .args([
            "update",
            path,
            "--task",
            "T-inventory",
            "--status",
            "completed",
        ])
        .run_utf8();
    run.assert_refusal("update", 1, &["INV-wiki-read-only never evaluated"]);
}

/// Append to `plan`'s journal an event of `kind` with `fields`, in the envelope of its first
/// event (actor, contract, plan, schema), numbered after its last.
fn append_event(plan: &Path, kind: &str, fields: serde_json::Value) {
    let events = journal_events(plan);
    let first = &events[0];
    let mut event = serde_json::json!({
        "actor": {"identity": "claude-code", "kind": "agent"},
        "contract_id": first["contract_id"],
        "plan": first["plan"],
        "schema": first["schema"],
        "seq": events.len() + 1,
        "ts": "2026-06-02T09:00:00Z",
        "type": kind,
    });
    for (key, value) in fields.as_object().unwrap() {
        event[key] = value.clone();
    }
    let mut line = serde_json::to_string(&event).unwrap();
    line.push('\n');
    let path = plan.join("journal.ndjson");
    let mut journal = std::fs::read_to_string(&path).unwrap();
    journal.push_str(&line);
    std::fs::write(path, journal).unwrap();
}

/// The fixture's one invariant evaluated as passing (asserted), now.
fn pass_the_invariant(plan: &Path) {
    let pass = serde_json::json!({"statement": "INV-wiki-read-only: pass", "trust": "asserted"});
    append_event(plan, "observation", pass);
}

/// `dwp update --status completed` of `task`: refused, recorded, and the reason given.
fn refused_completion(plan: &Path, task: &str) -> String {
    let before = journal_events(plan).len();
    let run = dwp()
        .args(["update", plan.to_str().unwrap(), "--task", task])
        .args(["--status", "completed"])
        .run_utf8();
    run.assert_refusal("update", 1, &["is not complete", "rule 23"]);
    let after = journal_events(plan);
    assert_eq!(after.len(), before + 1, "the refusal is recorded");
    let refusal = after.last().unwrap();
    assert_eq!(
        (&refusal["type"], &refusal["stage"], &refusal["subject"]),
        (&"refusal".into(), &"gate".into(), &task.into())
    );
    refusal["reason"].as_str().unwrap().to_owned()
}

// Rule 21: the latest evaluation counts, and only inside the task's attempt: one from before
// the task's latest start, or a failure, refuses the completion.
#[test]
fn rule_21_an_invariant_evaluated_before_the_start_or_failed_last_refuses_the_completion() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    pass_the_invariant(&plan);
    let restart = serde_json::json!({
        "task": "T-inventory",
        "fingerprint": {"revision": "none", "dirty": ""},
    });
    append_event(&plan, "task_start", restart);
    assert_eq!(
        refused_completion(&plan, "T-inventory"),
        "invariant(s) not verified for this attempt: INV-wiki-read-only last evaluated at seq 6, before the task start 7"
    );

    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    pass_the_invariant(&plan);
    let fail = serde_json::json!({"statement": "INV-wiki-read-only: fail: a page was edited", "trust": "asserted"});
    append_event(&plan, "observation", fail);
    assert_eq!(
        refused_completion(&plan, "T-inventory"),
        "invariant(s) not verified for this attempt: INV-wiki-read-only failed (seq 7)"
    );
}

// Rule 23: every criterion of the task's gate intent needs accepted evidence inside its
// window; a failed gate is none.
#[test]
fn rule_23_a_criterion_without_in_window_evidence_refuses_the_completion() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    pass_the_invariant(&plan);
    assert_eq!(
        refused_completion(&plan, "T-convert-guides"),
        "criteria without in-window accepted evidence: AC-guides-build"
    );
    // With every invariant passed in the attempt and its gate passed, the same plan derives
    // T-inventory's completion: nothing is written.
    let run = writing_nothing(&plan, "a derived completion", || {
        update(&plan, "T-inventory", "completed")
    });
    assert_eq!(run.code, 0, "{}", run.stderr);
}

// The public ledger's `complete` refuses a task while a delegation of it is still launched.
#[test]
fn an_open_delegation_of_the_task_refuses_the_completion() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    pass_the_invariant(&plan);
    let launched = serde_json::json!({
        "delegation_id": "d-inventory-1",
        "kind": "claude",
        "prompt_digest": format!("sha256:{}", "0".repeat(64)),
        "state": "launched",
        "target": "/srv/repos/shop/.worktrees/inventory",
        "task": "T-inventory",
        "transport": "headless",
        "via": "agentkit",
        "worktree": ".worktrees/inventory",
    });
    append_event(&plan, "delegation", launched);
    assert_eq!(
        refused_completion(&plan, "T-inventory"),
        "delegation(s) still open: d-inventory-1 — collect or cancel them first"
    );
}

#[test]
fn an_unknown_task_is_refused_and_nothing_is_written() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    let path = plan.to_str().unwrap();
    refused(
        &plan,
        "update",
        1,
        &["has no task T-missing", "T-inventory"],
        || {
            dwp()
                .args([
                    "update",
                    path,
                    "--task",
                    "T-missing",
                    "--status",
                    "in_progress",
                ])
                .run_utf8()
        },
    );
}

#[test]
fn what_only_a_v5_state_records_is_refused_on_a_record_plan() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    let path = plan.to_str().unwrap();
    let cases: [&[&str]; 4] = [
        &["--task", "T-inventory", "--status", "blocked"],
        &["--task", "T-inventory", "--status", "completed", "--tick"],
        &[
            "--task",
            "T-inventory",
            "--status",
            "completed",
            "--gate",
            "x",
        ],
        &["--task", "2", "--status", "in_progress"],
    ];
    for args in cases {
        refused(&plan, "update", 2, &["record plan"], || {
            dwp().arg("update").arg(path).args(args).run_utf8()
        });
    }
}

#[test]
fn a_record_task_id_on_a_numbered_plan_is_refused() {
    let (_root, plan) = fixture_plan("valid-full-v5");
    let path = plan.to_str().unwrap();
    refused(&plan, "update", 2, &["names a record plan's task"], || {
        dwp()
            .args([
                "update",
                path,
                "--task",
                "T-setup",
                "--status",
                "in_progress",
            ])
            .run_utf8()
    });
}
