//! `dwp next PLAN` through the real binary: one test per rule of issues #15 and #31. The next
//! task is the blocked one, else the first open one; in progress its Validation commands are run
//! through `dwp run` and it is completed, pending it is started; an approval comes first; a
//! completed plan needs nothing or `dwp finalize`; a plan without a state layer is read from its
//! markdown. Every `dwp ...` line it prints is run as printed and does what it says.

use crate::common;
use crate::common::{
    NOW, Plan, dwp, field_strs, fill_task_log, fixture_copy, owned_strs, printed_dwp_lines,
    run_printed, snapshot, state_of,
};
use dwp::synth::SynthPlan;
use std::path::{Path, PathBuf};

/// `dwp next PLAN` run in `dir` with the plan named `plan` there.
fn next_in(dir: &Path, plan: &str) -> common::Run {
    let run = dwp().at(NOW).in_dir(dir).args(["next", plan]).run();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run
}

fn next_json_in(dir: &Path, plan: &str) -> serde_json::Value {
    let run = dwp()
        .at(NOW)
        .in_dir(dir)
        .args(["--json", "next", plan])
        .run();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run.json()
}

fn run_ok(line: &str, dir: &Path) -> common::Run {
    let run = run_printed(line, dir);
    assert_eq!(run.code, 0, "`{line}`: {}{}", run.stdout, run.stderr);
    run
}

/// Task 1 started through the updater (the state the Validation tests begin from).
fn start_task_1(plan: &Plan) {
    dwp()
        .at(NOW)
        .arg("update")
        .arg(&plan.dir)
        .args(["--task", "1", "--status", "in_progress"])
        .assert()
        .success();
}

#[test]
fn the_task_in_progress_is_next_and_each_validation_command_gets_its_dwp_run_line() {
    let (root, plan) = fixture_copy("valid-full-v5");
    let run = next_in(root.path(), &plan);
    assert!(
        run.stdout
            .contains("next: task 3: Add retry queue (in_progress)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("    pnpm run test\n    pnpm run db:migrate -- --dry-run\n")
    );
    // The second `--` is the command's own: `dwp run` passes every word after its first.
    assert_eq!(
        printed_dwp_lines(&run.stdout),
        [
            format!("dwp run {plan} --task 3 -- pnpm run test"),
            format!("dwp run {plan} --task 3 -- pnpm run db:migrate -- --dry-run"),
            format!("dwp update {plan} --task 3 --status completed --tick"),
        ]
    );
}

/// The task's two Validation commands, each a program that runs here and prints a test tally.
const RUNNABLE_VALIDATION: &str =
    "- `sh -c 'echo \"test result: ok. 2 passed; 0 failed\"'`\n- `echo 3 passed -- --dry-run`";

/// `dwp next` asks for observed evidence, never a placeholder (issue #31: `--gate
/// "...|0|EVIDENCE"` pasted as printed stored the word EVIDENCE): one `dwp run` line per
/// Validation command, quoted so it runs as printed, then the completion without `--gate`.
/// Run in order, they record both runs as observed and complete the task, which verify accepts.
#[test]
fn next_prints_the_dwp_run_line_of_each_validation_command_and_a_completion_without_placeholders() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_next_observed", 3));
    plan.edit("1.task_synthetic_1.md", |t| {
        t.replace("- `cargo test`", RUNNABLE_VALIDATION)
    });
    start_task_1(&plan);
    let run = next_in(plan.root(), "PLAN_next_observed");
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(
        lines,
        [
            "dwp run PLAN_next_observed --task 1 -- sh -c 'echo \"test result: ok. 2 passed; 0 failed\"'",
            "dwp run PLAN_next_observed --task 1 -- echo 3 passed -- --dry-run",
            "dwp update PLAN_next_observed --task 1 --status completed --tick",
        ]
    );
    for word in ["EVIDENCE", "COMMAND", "--gate"] {
        assert!(!run.stdout.contains(word), "{word}: {}", run.stdout);
    }
    let json = next_json_in(plan.root(), "PLAN_next_observed");
    assert_eq!(owned_strs(&json["next"]["run"]), lines);
    fill_task_log(&plan.path("1.task_synthetic_1.md"), 1);
    for line in &lines {
        run_ok(line, plan.root());
    }
    let state = plan.state();
    assert_eq!(state["tasks"][0]["status"], "completed");
    let gates = state["tasks"][0]["gates"].as_array().unwrap();
    assert_eq!(gates.len(), 2, "{gates:?}");
    for gate in gates {
        let evidence = gate["evidence"].as_str().unwrap();
        assert!(evidence.contains("(observed by dwp: exit 0;"), "{evidence}");
    }
    assert!(!plan.verify_codes(&[]).contains(&"DWP060".to_owned()));
}

/// A command whose latest record is a passing run dwp observed is not asked for again; an
/// asserted record (`--gate`) does not count: its line stays.
#[test]
fn a_validation_command_already_passing_under_dwp_run_is_not_asked_to_run_again() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_next_ran", 3));
    plan.edit("1.task_synthetic_1.md", |t| {
        t.replace("- `cargo test`", RUNNABLE_VALIDATION)
    });
    start_task_1(&plan);
    let first = printed_dwp_lines(&next_in(plan.root(), "PLAN_next_ran").stdout);
    run_ok(&first[0], plan.root());
    dwp()
        .at(NOW)
        .arg("update")
        .arg(&plan.dir)
        .args(["--task", "1", "--status", "in_progress"])
        .args(["--gate", "echo 3 passed -- --dry-run|0|3 passed"])
        .assert()
        .success();
    let lines = printed_dwp_lines(&next_in(plan.root(), "PLAN_next_ran").stdout);
    assert_eq!(
        lines,
        [
            "dwp run PLAN_next_ran --task 1 -- echo 3 passed -- --dry-run",
            "dwp update PLAN_next_ran --task 1 --status completed --tick",
        ]
    );
}

#[test]
fn the_first_pending_task_whose_earlier_tasks_are_done_is_next_and_its_line_starts_it() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_next_pending", 5).completed(2));
    let run = next_in(plan.root(), "PLAN_next_pending");
    assert!(
        run.stdout
            .contains("next: task 3: Synthetic task 3 (pending)")
    );
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(
        lines,
        ["dwp update PLAN_next_pending --task 3 --status in_progress"]
    );
    run_ok(&lines[0], plan.root());
    assert_eq!(plan.state()["tasks"][2]["status"], "in_progress");
}

/// Tasks run in order (DWP036): with task 3 pending and tasks 4 and 5 in progress, `next` says
/// so and its lines put 4 and 5 back before starting 3, never a third task in progress; run as
/// printed, they leave a plan verify calls conformant.
#[test]
fn tasks_in_progress_out_of_order_are_put_back_before_the_first_open_task_starts() {
    let (root, plan) = fixture_copy("verify-dwp036-two-in-progress");
    let dir = root.path().join(&plan);
    common::edit_state(&dir, |s| {
        let started = s["tasks"][3]["started_at"].clone();
        s["tasks"][2]["status"] = "pending".into();
        s["tasks"][2].as_object_mut().unwrap().remove("started_at");
        s["tasks"][4]["status"] = "in_progress".into();
        s["tasks"][4]["started_at"] = started;
    });
    let run = next_in(root.path(), &plan);
    assert!(
        run.stdout.contains(
            "OUT OF ORDER (DWP036): task 4 is in_progress while task 3 before it is pending"
        ),
        "{}",
        run.stdout
    );
    let json = next_json_in(root.path(), &plan);
    assert_eq!(json["next"]["action"], "restore_order");
    assert_eq!(
        field_strs(&json["next"]["out_of_order"], "status"),
        ["in_progress"; 2]
    );
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(
        lines,
        [
            format!("dwp update {plan} --task 4 --status pending"),
            format!("dwp update {plan} --task 5 --status pending"),
            format!("dwp update {plan} --task 3 --status in_progress"),
        ]
    );
    for line in &lines {
        run_ok(line, root.path());
    }
    let statuses: Vec<_> = state_of(&dir)["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        statuses,
        [
            "completed",
            "completed",
            "in_progress",
            "pending",
            "pending",
            "pending",
            "pending"
        ]
    );
    let verify = dwp().at(NOW).arg("verify").arg(&dir).run();
    assert_eq!(verify.code, 0, "{}", verify.stdout);
}

#[test]
fn a_skipped_task_counts_as_done_for_the_next_one() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_next_skipped", 4).completed(1));
    // Task 2 removed from scope by the user (the amendment is verify's business, not next's).
    plan.edit_state(|s| {
        s["tasks"][1]["status"] = "skipped".into();
        s["status"] = "in_progress".into();
    });
    let run = next_in(plan.root(), "PLAN_next_skipped");
    assert_eq!(
        printed_dwp_lines(&run.stdout),
        ["dwp update PLAN_next_skipped --task 3 --status in_progress"]
    );
}

#[test]
fn a_blocked_plan_shows_the_blocker_and_its_resolve_blocker_line_resolves_it() {
    let (root, plan) = fixture_copy("valid-blocked-v5");
    let run = next_in(root.path(), &plan);
    assert!(
        run.stdout
            .contains("BLOCKED: task 3 since 2026-06-09T14:52:00Z: the staging identity provider"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("needs: an allow-list entry"));
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(
        lines,
        [format!(
            "dwp update {plan} --task 3 --resolve-blocker --status in_progress"
        )]
    );
    run_ok(&lines[0], root.path());
    let state = state_of(&root.path().join(&plan));
    assert_eq!(state["blocked"], serde_json::Value::Null);
    assert_eq!(state["tasks"][2]["status"], "in_progress");
}

#[test]
fn a_completed_plan_not_yet_published_names_dwp_finalize_which_publishes_it() {
    let (root, plan) = fixture_copy("valid-completed-v5");
    let run = next_in(root.path(), &plan);
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(lines, [format!("dwp finalize {plan}")]);
    run_ok(&lines[0], root.path());
    assert!(
        root.path()
            .join(&plan)
            .join("analysis_results/FINALIZATION.json")
            .is_file()
    );
    // Published: it says so, names nothing, and exits 0.
    let run = next_in(root.path(), &plan);
    assert!(
        run.stdout
            .contains("completed and published: nothing left to do")
    );
    assert!(printed_dwp_lines(&run.stdout).is_empty(), "{}", run.stdout);
    assert_eq!(next_json_in(root.path(), &plan)["next"]["action"], "done");
}

#[test]
fn a_pending_approval_names_dwp_approve_first_and_both_lines_run() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_next_approval", 3));
    plan.edit("README.md", |t| {
        t.replace("| Approval | approved |", "| Approval | pending |")
    });
    plan.edit_state(|s| s["approval"] = "pending".into());
    let run = next_in(plan.root(), "PLAN_next_approval");
    assert!(run.stdout.contains("not approved"), "{}", run.stdout);
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(
        lines,
        [
            "dwp approve PLAN_next_approval --by NAME",
            "dwp update PLAN_next_approval --task 1 --status in_progress"
        ]
    );
    for line in &lines {
        run_ok(line, plan.root());
    }
    assert_eq!(plan.state()["approval"], "approved");
    assert_eq!(plan.state()["tasks"][0]["status"], "in_progress");
}

/// Nothing to run, so nothing to record: no `COMMAND` to fill in. The words say what works
/// (list the command in the record), and no line is printed that would be refused.
#[test]
fn validation_that_lists_no_command_says_none_listed_and_prints_no_placeholder() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_next_no_commands", 3));
    plan.edit("1.task_synthetic_1.md", |t| {
        t.replace("- `cargo test`", "- open the page and check the banner")
    });
    start_task_1(&plan);
    let run = next_in(plan.root(), "PLAN_next_no_commands");
    assert!(
        run.stdout.contains("  validation: none listed\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("  to check: open the page and check the banner\n")
    );
    assert!(
        run.stdout.contains("list the command that checks it"),
        "{}",
        run.stdout
    );
    assert!(printed_dwp_lines(&run.stdout).is_empty(), "{}", run.stdout);
    assert!(!run.stdout.contains("COMMAND"), "{}", run.stdout);
    let json = next_json_in(plan.root(), "PLAN_next_no_commands");
    assert_eq!(json["next"]["task"]["validation"], serde_json::json!([]));
    assert_eq!(json["next"]["run"], serde_json::json!([]));
}

/// `dwp run` takes argv and uses no shell: a pipe is shown as a command to run by hand, never
/// split into words that would run something else; the commands that are words get their line.
#[test]
fn a_validation_command_that_needs_a_shell_is_shown_to_run_by_hand_never_split() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_next_pipe", 3));
    plan.edit("1.task_synthetic_1.md", |t| {
        t.replace(
            "- `cargo test`",
            "```sh\ncargo test 2>&1 | tail -1\necho 3 passed\n```",
        )
    });
    start_task_1(&plan);
    let run = next_in(plan.root(), "PLAN_next_pipe");
    assert!(
        run.stdout.contains(
            "  by hand (a shell line, which dwp run does not split): cargo test 2>&1 | tail -1\n"
        ),
        "{}",
        run.stdout
    );
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(
        lines,
        [
            "dwp run PLAN_next_pipe --task 1 -- echo 3 passed",
            "dwp update PLAN_next_pipe --task 1 --status completed --tick",
        ]
    );
    let json = next_json_in(plan.root(), "PLAN_next_pipe");
    assert_eq!(
        json["next"]["task"]["by_hand"],
        serde_json::json!(["cargo test 2>&1 | tail -1"])
    );
    fill_task_log(&plan.path("1.task_synthetic_1.md"), 1);
    for line in &lines {
        run_ok(line, plan.root());
    }
    assert_eq!(plan.state()["tasks"][0]["status"], "completed");
}

#[test]
fn a_plan_without_a_state_layer_is_read_from_its_boxes_and_names_dwp_init_first() {
    let (root, plan) = fixture_copy("markdown-only-current-v5");
    let run = next_in(root.path(), &plan);
    assert!(run.stdout.contains("no state layer"), "{}", run.stdout);
    assert!(
        run.stdout.contains("next: task 3:"),
        "the first unchecked box: {}",
        run.stdout
    );
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(
        lines,
        [format!("dwp init {plan}"), format!("dwp next {plan}")]
    );
    for line in &lines {
        run_ok(line, root.path());
    }
    assert!(root.path().join(&plan).join("state.json").is_file());
    assert_eq!(next_json_in(root.path(), &plan)["next"]["source"], "state");
}

#[test]
fn every_line_names_the_plan_as_given_quoted_where_a_shell_needs_it() {
    let root = tempfile::tempdir().unwrap();
    let parent = root.path().join("my plans");
    std::fs::create_dir(&parent).unwrap();
    SynthPlan::new("PLAN_next_quoted", 3)
        .write(&parent)
        .unwrap();
    let given = "my plans/PLAN_next_quoted/";
    let run = next_in(root.path(), given);
    let lines = printed_dwp_lines(&run.stdout);
    assert_eq!(
        lines,
        ["dwp update \"my plans/PLAN_next_quoted/\" --task 1 --status in_progress"]
    );
    run_ok(&lines[0], root.path());
    let state = state_of(&parent.join("PLAN_next_quoted"));
    assert_eq!(state["tasks"][0]["status"], "in_progress");
}

#[test]
fn the_json_document_carries_the_task_its_validation_and_the_lines() {
    let (root, plan) = fixture_copy("valid-full-v5");
    let json = next_json_in(root.path(), &plan);
    assert_eq!(json["dwp"], 2);
    assert_eq!(json["command"], "next");
    assert_eq!(json["ok"], true);
    let next = &json["next"];
    assert_eq!(next["plan"], plan);
    assert_eq!(next["path"], plan);
    assert_eq!(next["source"], "state");
    assert_eq!(next["status"], "in_progress");
    assert_eq!(
        (next["completed"].as_u64(), next["total"].as_u64()),
        (Some(2), Some(7))
    );
    assert_eq!(next["approval"], "approved");
    assert_eq!(next["action"], "complete");
    assert_eq!(next["task"]["id"], 3);
    assert_eq!(next["task"]["title"], "Add retry queue");
    assert_eq!(
        next["task"]["record"],
        format!("{plan}/3.task_retry_queue.md")
    );
    assert_eq!(
        next["task"]["validation"],
        serde_json::json!(["pnpm run test", "pnpm run db:migrate -- --dry-run"])
    );
    assert_eq!(next["task"]["last"], false);
    // The human lines and the document's are the same lines.
    let human = next_in(root.path(), &plan);
    let run = owned_strs(&next["run"]);
    assert_eq!(printed_dwp_lines(&human.stdout), run);
}

#[test]
fn next_writes_nothing() {
    let (root, plan) = fixture_copy("valid-full-v5");
    let before = snapshot(root.path());
    next_in(root.path(), &plan);
    next_json_in(root.path(), &plan);
    assert_eq!(snapshot(root.path()), before);
}

#[test]
fn a_folder_that_is_no_plan_is_refused_with_the_error_shape() {
    let root = tempfile::tempdir().unwrap();
    let missing: PathBuf = root.path().join("PLAN_not_here");
    let run = dwp().at(NOW).arg("next").arg(&missing).run();
    // A path where nothing exists is a usage error (exit 2), as for `dwp lock`.
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.message().starts_with("dwp next: not a plan: "),
        "{}",
        run.stderr
    );
}
