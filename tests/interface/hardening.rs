//! The smaller defects of issue #13, each with its test, through the real binary: a writer whose
//! clock is behind the state's own times, `finalize --check` of a plan never published, an
//! amendment that reopens a published plan, and a publication stopped by a full disk.

use crate::common;
use crate::common::{NOW, edit_state, snapshot};
use dwp::plan::model::PlanFormat;
use dwp::synth::SynthPlan;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const RECEIPT: &str = "analysis_results/FINALIZATION.json";

fn in_progress(root: &Path) -> PathBuf {
    SynthPlan::new("PLAN_hardening_cases", 4)
        .completed(2)
        .write(root)
        .unwrap()
}

fn publishable(root: &Path) -> PathBuf {
    common::publishable(root, "PLAN_hardening_cases", 3, PlanFormat::Full)
}

/// `dwp COMMAND PLAN ARGS...` for `args` = `[COMMAND, ARGS...]`, run from the plan's parent.
fn run(plan: &Path, args: &[&str]) -> common::Run {
    common::dwp()
        .in_dir(plan.parent().unwrap())
        .on_plan(plan, args)
        .run()
}

/// Move the state's `updated_at` a day past the test clock, as a writer with a clock ahead did.
fn state_written_tomorrow(plan: &Path) -> String {
    let tomorrow = "2026-06-10T09:00:00Z";
    edit_state(plan, |state| state["updated_at"] = tomorrow.into());
    tomorrow.to_owned()
}

#[test]
fn a_writer_whose_clock_is_behind_the_states_own_times_refuses_naming_both() {
    let cases: [&[&str]; 3] = [
        &["update", "--task", "3", "--status", "in_progress"],
        &["reconcile", "--write"],
        &["finalize"],
    ];
    for args in cases {
        let root = tempfile::tempdir().unwrap();
        let plan = if args[0] == "finalize" {
            publishable(root.path())
        } else {
            in_progress(root.path())
        };
        if args[0] == "reconcile" {
            // Something to write: task 3's title changed in the README.
            common::edit(&plan.join("README.md"), "Task 3: ", "Task 3: Renamed ");
        }
        let tomorrow = state_written_tomorrow(&plan);
        let before = snapshot(&plan);

        let result = run(&plan, args);

        assert_eq!(
            result.code, 1,
            "{args:?}: {}{}",
            result.stdout, result.stderr
        );
        assert!(
            result.stderr.contains(NOW) && result.stderr.contains(&tomorrow),
            "{args:?}: names both times: {}",
            result.stderr
        );
        assert_eq!(snapshot(&plan), before, "{args:?} wrote");
    }
}

#[test]
fn finalize_check_of_a_plan_never_published_says_it_is_not_published() {
    let root = tempfile::tempdir().unwrap();
    let plan = in_progress(root.path());

    let result = run(&plan, &["finalize", "--check"]);

    assert_eq!(result.code, 1);
    assert!(
        result.stderr.contains("the plan is not published"),
        "{}",
        result.stderr
    );
    assert!(
        !result.stderr.contains("changed since publication")
            && !result.stdout.contains("changed since publication"),
        "{}{}",
        result.stdout,
        result.stderr
    );
    let json = run(&plan, &["finalize", "--check", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
}

#[test]
fn an_amendment_that_reopens_a_published_plan_moves_its_receipt_aside() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path());
    assert_eq!(run(&plan, &["finalize"]).code, 0);
    let receipt = std::fs::read(plan.join(RECEIPT)).unwrap();

    let amended = run(
        &plan,
        &[
            "amend",
            "--task",
            "3",
            "--original",
            "the review passes",
            "--observed",
            "the review ran on a stale build",
            "--disposition",
            "failed-gate",
            "--reason",
            "the evidence predates the last change",
            "--authority",
            "evidence",
            "--affected",
            "3",
            "--invalidate",
            "cargo test",
            "--json",
        ],
    );

    assert_eq!(amended.code, 0, "{}{}", amended.stdout, amended.stderr);
    let aside = amended.payload()["superseded_receipt"]
        .as_str()
        .expect("where the receipt went")
        .to_owned();
    assert!(!plan.join(RECEIPT).exists(), "the old receipt stayed");
    assert_eq!(std::fs::read(plan.join(&aside)).unwrap(), receipt);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap();
    assert_ne!(state["status"], "completed");
    // No receipt describes the plan now, and nothing claims it does.
    let check = run(&plan, &["finalize", "--check"]);
    assert!(check.stderr.contains("not published"), "{}", check.stderr);
}

/// `dwp finalize` with the K-th `write(2)` failing with ENOSPC (strace injects it).
fn finalize_on_a_full_disk(plan: &Path, k: usize) -> Option<(i32, String)> {
    let inject = format!("inject=write:error=ENOSPC:when={k}");
    let output = common::dwp()
        .args(["finalize", plan.to_str().unwrap()])
        .wrapped(
            "strace",
            [
                "-f",
                "-qq",
                "-o",
                "/dev/null",
                "-e",
                "trace=write",
                "-e",
                &inject,
            ],
        )
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Some((
        output.status.code()?,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

#[test]
fn a_publication_stopped_by_a_full_disk_after_its_marker_names_recover() {
    if !common::strace_available("the full-disk publication test") {
        return;
    }
    let mut marked = 0;
    for k in 1..=12 {
        let root = tempfile::tempdir().unwrap();
        let plan = publishable(root.path());
        let Some((code, stderr)) = finalize_on_a_full_disk(&plan, k) else {
            continue;
        };
        if code != 4 {
            continue;
        }
        if plan.join(".finalizing.json").exists() {
            marked += 1;
            assert!(
                stderr.contains("dwp finalize --recover"),
                "write {k}: a marker remains but the hint does not name --recover:\n{stderr}"
            );
            let recovered = run(&plan, &["finalize", "--recover"]);
            assert_eq!(
                recovered.code, 0,
                "write {k}: the hint's command: {}",
                recovered.stderr
            );
        } else {
            assert!(
                stderr.contains("nothing was claimed"),
                "write {k}:\n{stderr}"
            );
        }
    }
    assert!(
        marked > 0,
        "no injected ENOSPC stopped a publication after its marker"
    );
}
