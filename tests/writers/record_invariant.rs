//! `dwp run --invariant` on a record plan (issue #33, docs/record-plans.md "Writing a record
//! plan"): dwp runs the invariant's check itself and records its evaluation as one `observed`
//! `observation` (`INV-x: pass` when the check exits 0, `INV-x: fail: ...` otherwise) citing the
//! log it keeps under `gates/<INV-id>/`, so a task of a contract with invariants can be
//! completed with dwp alone (rule 21: a completion waits for each invariant's latest evaluation
//! to pass inside the task's attempt). The plan's `T-inventory` has its criterion satisfied and
//! `INV-wiki-read-only` was never evaluated; its contract allows `python3` and `mkdocs`.

use crate::common::{dwp, fixture_plan, journal_events, refused, verify_codes};
use std::path::Path;

/// `dwp run PLAN --invariant INVARIANT --json -- COMMAND...`.
fn evaluate(plan: &Path, invariant: &str, command: &[&str]) -> crate::common::Run {
    run_check(plan, invariant, &["--json"], command)
}

fn run_check(plan: &Path, invariant: &str, flags: &[&str], command: &[&str]) -> crate::common::Run {
    dwp()
        .arg("run")
        .arg(plan)
        .args(["--invariant", invariant])
        .args(flags)
        .arg("--")
        .args(command)
        .run_utf8()
}

fn complete(plan: &Path, task: &str) -> crate::common::Run {
    dwp()
        .arg("update")
        .arg(plan)
        .args(["--task", task, "--status", "completed"])
        .run_utf8()
}

fn verified(plan: &Path) -> (String, Vec<String>) {
    let run = dwp()
        .args(["verify", plan.to_str().unwrap(), "--json"])
        .run_utf8();
    let verdict = run.payload()["plans"][0]["verdict"]
        .as_str()
        .unwrap()
        .to_owned();
    (verdict, verify_codes(&run.json()))
}

// Rules 21 and 22: the evaluation is observed only because dwp ran the check; once it passed
// in the task's attempt, the completion the journal derives is confirmed.
#[test]
fn rule_21_a_passing_check_records_an_observed_evaluation_that_opens_the_completion() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    complete(&plan, "T-inventory").assert_refusal(
        "update",
        1,
        &["INV-wiki-read-only never evaluated"],
    );
    let next = dwp().args(["next", plan.to_str().unwrap()]).run_utf8();
    assert!(
        next.stdout
            .contains("invariant INV-wiki-read-only: never evaluated")
            && next
                .stdout
                .contains("--invariant INV-wiki-read-only -- <its check>"),
        "{}",
        next.stdout
    );

    let before = journal_events(&plan).len();

    let run = evaluate(
        &plan,
        "INV-wiki-read-only",
        &["python3", "-c", "print('untouched')"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = journal_events(&plan);
    assert_eq!(events.len(), before + 1, "one event, nothing else");
    let event = events.last().unwrap();
    assert_eq!(event["type"], "observation");
    assert_eq!(event["statement"], "INV-wiki-read-only: pass");
    assert_eq!(event["trust"], "observed");
    assert_eq!(event["actor"]["kind"], "helper");
    let log = event["evidence_path"].as_str().unwrap();
    assert!(log.starts_with("gates/INV-wiki-read-only/"), "{log}");
    let text = std::fs::read_to_string(plan.join(log)).unwrap();
    assert!(text.contains("--- stdout ---\nuntouched\n"), "{text}");
    assert!(text.ends_with("--- exit 0 ---\n"), "{text}");
    let report = run.payload();
    assert_eq!(report["event"], "observation");
    assert_eq!(report["invariant"], "INV-wiki-read-only");
    assert_eq!(report["satisfied"], true);
    assert_eq!(report["log"], log);

    let status = dwp()
        .args(["status", plan.to_str().unwrap(), "--json"])
        .run_utf8();
    let invariant = &status.payload()["invariants"][0];
    assert_eq!(invariant["id"], "INV-wiki-read-only");
    assert_eq!(invariant["latest"]["passed"], true);
    assert_eq!(invariant["latest"]["seq"], event["seq"]);

    let next = dwp()
        .args(["next", plan.to_str().unwrap(), "--json"])
        .run_utf8();
    assert_eq!(
        next.payload()["invariants_to_evaluate"],
        serde_json::json!([])
    );

    let done = complete(&plan, "T-inventory");
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert_eq!(
        journal_events(&plan).len(),
        before + 1,
        "a completion appends nothing"
    );
    assert_eq!(verified(&plan), ("CONFORMANT".to_owned(), Vec::new()));

    // A task started after the pass needs a pass of its own: next lists the invariant again.
    let start = dwp()
        .arg("update")
        .arg(&plan)
        .args(["--task", "T-convert-reference", "--status", "in_progress"])
        .run_utf8();
    assert_eq!(start.code, 0, "{}", start.stderr);
    let next = dwp()
        .args(["next", plan.to_str().unwrap(), "--json"])
        .run_utf8();
    let listed = &next.payload()["invariants_to_evaluate"];
    assert_eq!(listed[0]["id"], "INV-wiki-read-only", "{listed}");
    assert_eq!(listed[0]["latest"]["passed"], true);
}

#[test]
fn a_failing_check_is_recorded_as_a_failure_that_keeps_the_task_open() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    let run = evaluate(
        &plan,
        "INV-wiki-read-only",
        &["python3", "-c", "import sys; sys.exit(4)"],
    );
    assert_eq!(
        run.code, 4,
        "dwp exits with the check's code: {}",
        run.stderr
    );
    let event = journal_events(&plan).pop().unwrap();
    assert_eq!(
        event["statement"],
        "INV-wiki-read-only: fail: the check exited 4"
    );
    assert_eq!(run.payload()["satisfied"], false);
    complete(&plan, "T-inventory").assert_refusal("update", 1, &["INV-wiki-read-only failed"]);
    assert_eq!(verified(&plan).0, "CONFORMANT");
}

// Rule 22: an observed evaluation rests on its log; one whose log shows another verdict is a
// finding of dwp verify, as an observed gate's is.
#[test]
fn rule_22_an_evaluation_claiming_a_pass_its_log_does_not_show_is_found() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    let run = evaluate(
        &plan,
        "INV-wiki-read-only",
        &["python3", "-c", "import sys; sys.exit(1)"],
    );
    assert_eq!(run.code, 1);
    let journal = plan.join("journal.ndjson");
    let text = std::fs::read_to_string(&journal).unwrap();
    let forged = text.replace(
        "INV-wiki-read-only: fail: the check exited 1",
        "INV-wiki-read-only: pass",
    );
    assert_ne!(text, forged);
    std::fs::write(&journal, forged).unwrap();
    let (verdict, codes) = verified(&plan);
    assert_eq!(verdict, "NOT_CONFORMANT");
    assert!(codes.contains(&"DWP115".to_owned()), "{codes:?}");
}

#[test]
fn an_undeclared_invariant_or_program_is_refused_before_the_check_runs() {
    let (root, plan) = fixture_plan("record-valid-v7-in-progress");
    let marks = ["python3", "-c", "open('ran', 'w')"];
    refused(
        &plan,
        "run",
        1,
        &["declares no invariant INV-nope", "INV-wiki-read-only"],
        || run_check(&plan, "INV-nope", &[], &marks),
    );
    refused(
        &plan,
        "run",
        1,
        &["`sh` is outside the contract's allowed_command_classes"],
        || run_check(&plan, "INV-wiki-read-only", &[], &["sh", "-c", "touch ran"]),
    );
    assert!(!root.path().join("ran").exists(), "a refused check ran");
}

// Rule 19: the approval opens the plan's work; nothing is evaluated under a contract nobody
// approved.
#[test]
fn rule_19_no_invariant_is_evaluated_under_an_unapproved_contract() {
    let (root, plan) = fixture_plan("record-dwp111-approval-cites-draft");
    let run = refused(
        &plan,
        "run",
        1,
        &["no approval cites the live contract"],
        || run_check(&plan, "INV-no-double-charge", &[], &["pytest", "--version"]),
    );
    assert!(run.stderr.contains("hint: `dwp status"), "{}", run.stderr);
    assert!(!root.path().join("ran").exists());
}

#[test]
fn an_invariant_with_a_task_or_on_a_v5_plan_is_a_usage_error() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    let path = plan.to_str().unwrap();
    refused(&plan, "run", 2, &["--task"], || {
        dwp()
            .args(["run", path, "--invariant", "INV-wiki-read-only"])
            .args(["--task", "T-inventory", "--", "python3", "-c", "1"])
            .run_utf8()
    });
}
