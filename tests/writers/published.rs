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

/// `dwp amend` of task 1 on `plan` with the evidence's authority and the flags `extra` adds
/// (the disposition and what it needs).
fn amend_task_1(plan: &Plan, extra: &[&str]) -> crate::common::Run {
    let mut args = vec![
        "amend",
        "--task",
        "1",
        "--original",
        "export every field",
        "--observed",
        "one field is exported twice",
        "--reason",
        "the export test missed it",
    ];
    args.extend_from_slice(extra);
    plan.dwp(&args)
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
    let run = amend_task_1(
        &plan,
        &[
            "--disposition",
            "deferred requirement",
            "--destination",
            "2",
            "--authority",
            "user",
            "--affected",
            "1,2",
        ],
    );
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

/// A failed gate on the evidence's authority, invalidating the gate's records: task 1 reworked.
const REWORK: [&str; 8] = [
    "--disposition",
    "failed gate",
    "--authority",
    "evidence",
    "--affected",
    "1",
    "--invalidate",
    "cargo test",
];

/// The plan-state spec's amendments reopen work through refine: `dwp amend --invalidate` on a
/// published plan returns the task to pending while the tasks after it stay completed, and the
/// plan is CONFORMANT after every step of the rework `dwp next` prints: start it, run its gate,
/// complete it, which publishes the plan again (its checkpoint at the last task, DWP029).
#[test]
fn an_invalidating_amendment_of_a_published_plan_is_reworked_to_conformant_at_every_step() {
    let plan = published();
    let amended = amend_task_1(&plan, &REWORK);
    assert_eq!(amended.code, 0, "{}", amended.stderr);
    assert_eq!(plan.state()["tasks"][0]["status"], "pending");
    assert_eq!(plan.state()["tasks"][2]["status"], "completed");
    assert_eq!(plan.verify_codes(&[]), Vec::<String>::new(), "after amend");

    let next = plan.dwp(&["next"]);
    assert!(!next.stdout.contains("OUT OF ORDER"), "{}", next.stdout);
    let start = backticked_line(&next.stdout, "dwp update ");
    let started = run_printed(&start, plan.root());
    assert_eq!(started.code, 0, "{start}: {}", started.stderr);
    assert_eq!(
        plan.verify_codes(&[]),
        Vec::<String>::new(),
        "after {start}"
    );

    // The gate again, as `dwp next` prints it, with a `cargo` that passes at once on PATH.
    let (_tools, path) = crate::common::tool_on_path("cargo", "echo '12 passed, 0 failed'");
    let p = plan.dir.to_str().unwrap();
    let ran = crate::common::dwp()
        .env("PATH", &path)
        .args(["run", p, "--task", "1", "--", "cargo", "test"])
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(
        plan.verify_codes(&[]),
        Vec::<String>::new(),
        "after dwp run"
    );

    let complete = plan.dwp(&["update", "--task", "1", "--status", "completed", "--tick"]);
    assert_eq!(complete.code, 0, "{}", complete.stderr);
    assert!(
        complete.stdout.contains("plan published"),
        "{}",
        complete.stdout
    );
    assert!(plan.path("analysis_results/FINALIZATION.json").exists());
    let checkpoint = &plan.state()["checkpoint"];
    assert_eq!(
        (&checkpoint["task"], &checkpoint["step"]),
        (&3.into(), &"done".into())
    );
    assert_eq!(
        plan.verify_codes(&[]),
        Vec::<String>::new(),
        "after re-completion"
    );
}

/// The exception is the amended task's alone: a task started after it still breaks the order
/// (DWP036), as does a completed task after an open task no amendment reopened.
#[test]
fn a_task_started_after_an_amended_task_still_breaks_the_order() {
    let plan = Plan::from_synth(dwp::synth::SynthPlan::new("PLAN_rework_order", 4).completed(2));
    let amended = amend_task_1(&plan, &REWORK);
    assert_eq!(amended.code, 0, "{}", amended.stderr);
    assert_eq!(plan.verify_codes(&[]), Vec::<String>::new());
    let refused = plan.dwp(&["update", "--task", "3", "--status", "in_progress"]);
    assert_ne!(
        refused.code, 0,
        "the updater keeps the order: {}",
        refused.stdout
    );

    let mut state = plan.state();
    state["tasks"][2]["status"] = "in_progress".into();
    state["tasks"][2]["started_at"] = state["updated_at"].clone();
    plan.write("state.json", &serde_json::to_string_pretty(&state).unwrap());
    assert!(plan.verify_codes(&[]).contains(&"DWP036".to_owned()));
}

/// The line of `stdout` that starts (after its indent) with `starting`.
fn backticked_line(stdout: &str, starting: &str) -> String {
    stdout
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with(starting))
        .unwrap_or_else(|| panic!("no `{starting}...` line in:\n{stdout}"))
        .to_owned()
}
