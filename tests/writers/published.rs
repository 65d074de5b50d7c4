//! Writers on a published plan (its state completed, its receipt in place): a writer either
//! leaves the plan consistent or refuses with nothing written. A change to a file the receipt
//! covers moves the receipt aside in the same change, so no stale receipt is left for verify to
//! reject (DWP082), and the printed `dwp finalize` publishes the plan again.

use crate::common::{Plan, refused, run_printed};
use dwp::plan::model::PlanFormat;

/// A plan of 3 tasks published by `dwp finalize`: CONFORMANT, its receipt in place.
fn published() -> Plan {
    let plan = Plan::publishable("PLAN_published_plan", 3, PlanFormat::Full);
    let run = plan.dwp(&["finalize"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(plan.verify_codes(&[]), Vec::<String>::new());
    plan
}

/// The line of `stdout` that names the command to run, between backticks.
fn backticked(stdout: &str, starting: &str) -> String {
    stdout
        .split('`')
        .find(|part| part.starts_with(starting))
        .unwrap_or_else(|| panic!("no `{starting}...` in:\n{stdout}"))
        .to_owned()
}

#[test]
fn an_amendment_of_a_published_plan_moves_its_receipt_aside_and_the_hint_republishes_it() {
    let plan = published();
    let run = plan.dwp(&[
        "amend",
        "--task",
        "1",
        "--original",
        "export every field",
        "--observed",
        "one field moves to task 2",
        "--disposition",
        "deferred requirement",
        "--destination",
        "2",
        "--reason",
        "scope",
        "--authority",
        "user",
        "--affected",
        "1,2",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!plan.path("analysis_results/FINALIZATION.json").exists());
    // No receipt claims files it no longer describes: the plan is completed and unpublished.
    assert_eq!(plan.verify_codes(&[]), ["DWP081"]);
    let republish = backticked(&run.stdout, "dwp finalize ");
    let again = run_printed(&republish, plan.root());
    assert_eq!(again.code, 0, "{republish}: {}", again.stderr);
    assert_eq!(plan.verify_codes(&[]), Vec::<String>::new());
}

#[test]
fn approving_a_published_plan_is_refused_with_nothing_written_and_a_hint_that_runs() {
    let plan = published();
    let run = refused(&plan.dir, "approve", 1, &["the plan is published"], || {
        plan.dwp(&["approve", "--by", "Zed", "--pre-approved"])
    });
    let hint = backticked(&run.stderr, "dwp status ");
    assert_eq!(run_printed(&hint, plan.root()).code, 0, "{hint}");
    // The same approval again changes nothing, published or not.
    let same = plan.dwp(&["approve", "--by", "Ann"]);
    assert_eq!(same.code, 0, "{}", same.stderr);
}

#[test]
fn reconcile_write_on_a_published_plan_moves_the_receipt_aside_with_the_state_it_changes() {
    let plan = published();
    plan.edit("README.md", |text| {
        text.replacen("- [x] Task 2", "- [ ] Task 2", 1)
    });
    let run = plan.dwp(&["reconcile", "--write"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("the receipt moved to"),
        "{}",
        run.stdout
    );
    assert!(!plan.path("analysis_results/FINALIZATION.json").exists());
    let codes = plan.verify_codes(&[]);
    assert!(
        !codes.iter().any(|c| c == "DWP082"),
        "no stale receipt after reconcile --write: {codes:?}"
    );
}
