//! `dwp update` and `dwp lock` through the real binary: one test per transition rule of the
//! guarded updater (seed 003 "Guarded state updates", "Gate records", "Checkpoint and blocked
//! state"; the rules listed in `src/steps/updater.rs`).
//!
//! Every refusal is checked three ways: the exit code, the key words of the one-line message
//! `dwp update: WHAT (PLACE)` (PLACE names the file and JSON path, or the flag), and that the
//! bytes of state.json are unchanged with no `state.json.lock` left behind. Every success is
//! checked against the state on disk: the printed line
//! `task N → STATUS · C/T completed · plan STATUS · sha256 HEX` must describe the bytes written.

use crate::common;
use crate::common::{NOW, Plan, Run, sha256_hex, task_of};
use dwp::synth::SynthPlan;
use serde_json::{Value, json};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A later instant, for a second transition that must get its own timestamp.
const LATER: &str = "2026-06-09T17:05:00Z";
const PLAN_NAME: &str = "PLAN_cli_update_rules";

// ---------------------------------------------------------------------------------------------
// Fixtures and assertions
// ---------------------------------------------------------------------------------------------

impl Plan {
    /// A Full v5 plan of `tasks` tasks, the first `completed` completed with a passing gate.
    fn new(tasks: usize, completed: usize) -> Plan {
        Plan::from_synth(SynthPlan::new(PLAN_NAME, tasks).completed(completed))
    }

    /// Five tasks, two completed, task 3 started (through the binary).
    fn with_task_3_started() -> Plan {
        let plan = Plan::new(5, 2);
        applied(&plan, &START_3);
        plan
    }

    /// Five tasks, two completed, task 3 started then blocked (through the binary).
    fn with_task_3_blocked() -> Plan {
        let plan = Plan::with_task_3_started();
        applied(
            &plan,
            &transition(
                "3",
                "blocked",
                &[
                    "--block-reason",
                    "staging database unreachable",
                    "--block-needs",
                    "VPN credentials from the user",
                ],
            ),
        );
        plan
    }

    fn state_path(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join("state.json.lock")
    }

    /// Names in the plan folder that belong to the lock: `state.json.lock` and anything a
    /// writer builds or moves beside it (`state.json.lock.*`).
    fn lock_leftovers(&self) -> Vec<String> {
        fs::read_dir(&self.dir)
            .expect("read plan folder")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("state.json.lock"))
            .collect()
    }

    fn assert_no_lock_left(&self, after: &str) {
        let left = self.lock_leftovers();
        assert!(left.is_empty(), "{after} left {left:?} in the plan folder");
    }

    fn bytes(&self) -> Vec<u8> {
        fs::read(self.state_path()).expect("read state.json")
    }

    fn sha256(&self) -> String {
        sha256_hex(&self.bytes())
    }
}

/// `dwp` at the clock `now`, with the caller's HOME.
fn dwp_at(now: &str) -> common::Dwp {
    let mut command = common::dwp();
    command.at(now).inherit_home();
    command
}

/// `dwp update PLAN ARGS...` at the clock `now`.
fn update_at(now: &str, plan: &Plan, args: &[&str]) -> Run {
    dwp_at(now)
        .arg("update")
        .arg(&plan.dir)
        .args(args)
        .run_utf8()
}

fn update(plan: &Plan, args: &[&str]) -> Run {
    update_at(NOW, plan, args)
}

/// `dwp lock SUBCOMMAND PLAN ARGS...`.
fn lock_cmd(subcommand: &str, plan: &Plan, args: &[&str]) -> Run {
    dwp_at(NOW)
        .arg("lock")
        .arg(subcommand)
        .arg(&plan.dir)
        .args(args)
        .run_utf8()
}

/// `dwp amend PLAN --task N ...` at `now`: the amendment the reopen rule asks for, recorded
/// in the task's log first (a revised criterion, no evidence invalidated).
fn record_amendment_at(now: &str, plan: &Plan, task: &str) {
    let mut command = dwp_at(now);
    command.arg("amend").arg(&plan.dir).args([
        "--task",
        task,
        "--original",
        "synthetic behaviour is covered by a test",
        "--observed",
        "the test cannot reach the network",
        "--disposition",
        "revised criterion",
        "--revised",
        "synthetic behaviour is covered offline",
        "--reason",
        "acceptance criterion amended by refine",
        "--authority",
        "user",
        "--affected",
        task,
    ]);
    let run = command.run_utf8();
    assert_eq!(run.code, 0, "dwp amend failed:\n{}", run.stderr);
}

fn record_amendment(plan: &Plan, task: &str) {
    record_amendment_at(NOW, plan, task);
}

fn assert_words(text: &str, words: &[&str]) {
    for word in words {
        assert!(text.contains(word), "expected {word:?} in:\n{text}");
    }
}

/// A refused update: exit `code`, a `dwp update: ... (place)` message holding `words`, the bytes
/// of state.json unchanged and no lock directory left behind.
fn refused(plan: &Plan, args: &[&str], code: i32, words: &[&str]) -> Run {
    refused_at(NOW, plan, args, code, words)
}

fn refused_at(now: &str, plan: &Plan, args: &[&str], code: i32, words: &[&str]) -> Run {
    common::refused(&plan.dir, "update", code, words, || {
        update_at(now, plan, args)
    })
}

/// A successful update that wrote: exit 0, the printed line describes the new bytes on disk.
/// Returns the parsed new state.
fn applied(plan: &Plan, args: &[&str]) -> Value {
    applied_at(NOW, plan, args)
}

fn applied_at(now: &str, plan: &Plan, args: &[&str]) -> Value {
    let before = plan.bytes();
    let run = update_at(now, plan, args);
    assert_eq!(
        run.code, 0,
        "dwp update {args:?} should succeed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let after = plan.bytes();
    assert!(after != before, "dwp update {args:?} should have written");
    plan.assert_no_lock_left("a successful update");
    let state: Value = serde_json::from_slice(&after).expect("state.json is JSON");
    assert_eq!(
        run.stdout.trim_end(),
        summary_line(&state, task_arg(args), &sha256_hex(&after)),
        "the printed line must describe the bytes on disk"
    );
    state
}

/// The `--task` argument of an update.
fn task_arg(args: &[&str]) -> u64 {
    let at = args.iter().position(|a| *a == "--task").expect("--task");
    args[at + 1].parse().expect("numeric --task")
}

/// `task N → STATUS · C/T completed · plan STATUS · sha256 HEX`, from the state itself.
fn summary_line(state: &Value, task: u64, sha: &str) -> String {
    format!(
        "task {task} → {} · {}/{} completed · plan {} · sha256 {sha}",
        task_of(state, task)["status"]
            .as_str()
            .expect("task status"),
        state["completed_count"],
        state["task_count"],
        state["status"].as_str().expect("plan status"),
    )
}

fn gate_json(value: Value) -> String {
    value.to_string()
}

/// `--task TASK --status STATUS` then `extra`: the arguments of one transition, so a test
/// reads as the transition it asks for.
fn transition<'a>(task: &'a str, status: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    ["--task", task, "--status", status]
        .iter()
        .chain(extra)
        .copied()
        .collect()
}

/// Start task 3: the transition most tests make or ask for.
const START_3: [&str; 4] = ["--task", "3", "--status", "in_progress"];

/// Task 3 to `in_progress` with `extra` (a gate record, a checkpoint, an expected sha256).
fn start_3_with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    transition("3", "in_progress", extra)
}

/// Starting task 3 is refused with exit 1, `words` in the message and the message naming
/// `place`: how each precondition a plan must meet before any task moves is checked.
fn start_of_3_refused(plan: &Plan, words: &[&str], place: &str) {
    let run = refused(plan, &START_3, 1, words);
    run.assert_place(place);
}

/// Completing task 3 with the one gate record `gate` (`COMMAND|EXIT_CODE|EVIDENCE`) is refused
/// with exit 1 and `words`: how each rule on gate evidence is checked.
fn completion_with_gate_refused(plan: &Plan, gate: &str, words: &[&str]) -> Run {
    refused(plan, &complete_3_with(&["--gate", gate]), 1, words)
}

/// Task 2, completed, back to `status` with the reason the reopen rule asks an amendment for.
fn reopen_2_into(status: &str) -> Vec<&str> {
    transition(
        "2",
        status,
        &["--reopen-reason", "criterion amended by refine"],
    )
}

/// Task 2 skipped, as refine does when the user takes it out of scope.
fn skip_task_2(plan: &Plan) -> Value {
    applied(
        plan,
        &transition(
            "2",
            "skipped",
            &[
                "--reopen-reason",
                "user removed task 2 from scope via refine",
            ],
        ),
    )
}

/// The state without its `approval` field, so the README's Approval row decides.
fn remove_approval(plan: &Plan) {
    plan.edit_state(|s| {
        s.as_object_mut().expect("object").remove("approval");
    });
}

// ---------------------------------------------------------------------------------------------
// The input state must validate; the plan must be materialized and approved
// ---------------------------------------------------------------------------------------------

#[test]
fn a_schema_invalid_input_state_is_refused() {
    let plan = Plan::new(5, 2);
    plan.edit_state(|s| s["tasks"][2]["status"] = json!("done"));
    start_of_3_refused(
        &plan,
        &["the input state does not validate", "\"done\""],
        "state.json: $.tasks[2].status",
    );
}

#[test]
fn an_input_state_breaking_an_invariant_is_refused() {
    let plan = Plan::new(5, 2);
    plan.edit_state(|s| s["completed_count"] = json!(4));
    start_of_3_refused(
        &plan,
        &["breaks an invariant"],
        "state.json: $.completed_count",
    );
}

#[test]
fn a_plan_still_materializing_is_refused() {
    let plan = Plan::new(5, 2);
    plan.edit_state(|s| s["materialization"] = json!("materializing"));
    start_of_3_refused(
        &plan,
        &["materializing", "not ready"],
        "state.json: $.materialization",
    );
}

#[test]
fn a_readme_that_says_plan_status_materializing_is_never_executed() {
    // Seed 003: materializing is "the plan folder is being written" (issue #12: never execute it).
    let plan = Plan::new(5, 2);
    let readme = plan.dir.join("README.md");
    let text = std::fs::read_to_string(&readme).unwrap();
    std::fs::write(
        &readme,
        text.replace("Plan Status: 2/5", "Plan Status: materializing"),
    )
    .unwrap();
    let run = refused(
        &plan,
        &["--task", "3", "--status", "in_progress"],
        1,
        &[
            "Plan Status: materializing",
            "never executed",
            "hint: complete the materialization",
        ],
    );
    assert!(run.stderr.contains("README.md:"), "{}", run.stderr);
}

#[test]
fn a_plan_with_a_promotion_in_progress_is_refused() {
    // The promotion as the spec describes it: materialization promoting, promotion recorded.
    let plan = Plan::new(5, 2);
    plan.edit_state(|s| {
        s["materialization"] = json!("promoting");
        s["promotion"] = json!({"from": "lite", "to": "full", "phase": "intent"});
    });
    start_of_3_refused(&plan, &["promoting"], "state.json: $.materialization");

    // A promotion object while materialization says ready breaks an invariant (DWP033): the
    // input state does not validate, so nothing moves either.
    let plan = Plan::new(5, 2);
    plan.edit_state(|s| {
        s["promotion"] = json!({"from": "lite", "to": "full", "phase": "tasks_written"});
    });
    start_of_3_refused(
        &plan,
        &["breaks an invariant", "promotion record is present"],
        "state.json: $.promotion",
    );
}

#[test]
fn a_plan_with_approval_pending_is_refused() {
    let plan = Plan::new(5, 2);
    plan.edit_state(|s| s["approval"] = json!("pending"));
    start_of_3_refused(
        &plan,
        &["not approved", "pending"],
        "state.json: $.approval",
    );
}

#[test]
fn absent_approval_takes_the_readme_approval_row() {
    let plan = Plan::new(5, 2);
    remove_approval(&plan);
    assert!(
        fs::read_to_string(plan.dir.join("README.md"))
            .expect("README")
            .contains("| Approval | approved |")
    );
    let state = applied(&plan, &["--task", "3", "--status", "in_progress"]);
    assert_eq!(task_of(&state, 3)["status"], "in_progress");
    assert!(
        state.get("approval").is_none(),
        "the updater must not invent an approval field"
    );
}

#[test]
fn absent_approval_without_a_readme_row_is_pending_never_approved() {
    let plan = Plan::new(5, 2);
    remove_approval(&plan);
    plan.edit("README.md", |text| {
        text.replace("| Approval | approved |\n", "")
    });
    start_of_3_refused(&plan, &["not approved"], "README.md: Approval row");
}

#[test]
fn absent_approval_with_a_pending_readme_row_is_refused() {
    let plan = Plan::new(5, 2);
    remove_approval(&plan);
    plan.edit("README.md", |text| {
        text.replace("| Approval | approved |", "| Approval | pending |")
    });
    start_of_3_refused(
        &plan,
        &["not approved", "pending"],
        "README.md: Approval row",
    );
}

// ---------------------------------------------------------------------------------------------
// Sequential execution
// ---------------------------------------------------------------------------------------------

#[test]
fn tasks_start_and_complete_in_order() {
    // Starting task 3 while task 2 is pending.
    let plan = Plan::new(5, 1);
    start_of_3_refused(
        &plan,
        &["task 3", "before task 2", "pending", "in order"],
        "--task",
    );

    // Completing task 3 while task 2 is still in progress (a hand-made state: both started).
    let plan = Plan::new(5, 1);
    plan.edit_state(|s| {
        s["status"] = json!("in_progress");
        for index in [1, 2] {
            s["tasks"][index]["status"] = json!("in_progress");
            s["tasks"][index]["started_at"] = json!("2026-06-09T15:00:00Z");
        }
    });
    let run = completion_with_gate_refused(
        &plan,
        "cargo test|0|13 passed, 0 failed",
        &["before task 2", "in_progress", "in order"],
    );
    run.assert_place("--task");
}

#[test]
fn a_task_is_started_before_it_completes() {
    let plan = Plan::new(5, 2);
    let run = completion_with_gate_refused(
        &plan,
        "cargo test|0|13 passed",
        &[
            "task 3 has not started",
            "dwp update --task 3 --status in_progress",
        ],
    );
    run.assert_place("state.json: $.tasks[2].status");
}

#[test]
fn an_unknown_task_is_refused() {
    let plan = Plan::new(5, 2);
    for task in ["0", "6"] {
        let run = refused(
            &plan,
            &["--task", task, "--status", "in_progress"],
            1,
            &[&format!("there is no task {task}"), "1..5"],
        );
        run.assert_place("--task");
    }
}

#[test]

fn blocking_a_task_out_of_order_is_refused() {
    // Sequential execution: a task that may not start may not block the plan either. Today the
    // block is accepted, after which `--resolve-blocker` is refused by the ordering rule and
    // every other task waits for the blocker: no sequence of updates can move the plan again,
    // and the hint names a command that fails.
    let plan = Plan::with_task_3_started();
    let run = refused(
        &plan,
        &transition(
            "5",
            "blocked",
            &["--block-reason", "needs production credentials"],
        ),
        1,
        &["task 5", "task 3"],
    );
    run.assert_place("--task");
}

#[test]
fn a_skipped_earlier_task_counts_as_done_for_ordering() {
    let plan = Plan::new(5, 1);
    let state = skip_task_2(&plan);
    assert_eq!(task_of(&state, 2)["status"], "skipped");
    let state = applied(&plan, &START_3);
    assert_eq!(task_of(&state, 3)["status"], "in_progress");
    assert_eq!(task_of(&state, 3)["started_at"], NOW);
}

#[test]
fn skipped_tasks_never_make_the_plan_completed() {
    // Task 2 skipped, then the last open task completes: every task is completed or skipped,
    // and the plan is still in progress (only completed work completes a plan).
    let plan = Plan::new(3, 1);
    skip_task_2(&plan);
    applied(&plan, &START_3);
    let state = applied(
        &plan,
        &complete_3_with(&["--gate", "cargo test|0|13 passed, 0 failed"]),
    );
    assert_eq!(task_of(&state, 3)["status"], "completed");
    assert_eq!(state["completed_count"], 2);
    assert_eq!(state["status"], "in_progress");

    // Skipping the last open task of an otherwise completed plan does not complete it either.
    let plan = Plan::new(3, 2);
    let state = applied(
        &plan,
        &transition(
            "3",
            "skipped",
            &[
                "--reopen-reason",
                "user dropped the final review via refine",
            ],
        ),
    );
    assert_eq!(state["completed_count"], 2);
    assert_eq!(state["status"], "in_progress");
}

// ---------------------------------------------------------------------------------------------
// Completion evidence
// ---------------------------------------------------------------------------------------------

const COMPLETE_3: [&str; 4] = ["--task", "3", "--status", "completed"];

fn complete_3_with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    COMPLETE_3.iter().chain(extra).copied().collect()
}

#[test]
fn completing_requires_at_least_one_gate() {
    let plan = Plan::with_task_3_started();
    let run = refused(
        &plan,
        &COMPLETE_3,
        1,
        &["task 3 cannot complete without gate evidence", "dwp next "],
    );
    run.assert_place("state.json: $.tasks[2].gates");
    // The hint runs as printed and names the `dwp run` line of the task's Validation command.
    let next = crate::common::run_printed(&crate::common::hint_command(&run), plan.root());
    assert_eq!(next.code, 0, "{next:?}");
    assert!(next.stdout.contains("dwp run "), "{}", next.stdout);
}

#[test]
fn completing_with_a_failing_latest_gate_is_refused() {
    // Failing run given in the same call.
    let plan = Plan::with_task_3_started();
    let run = completion_with_gate_refused(
        &plan,
        "cargo test|1|3 failed, 10 passed",
        &["gate `cargo test`", "failed"],
    );
    run.assert_place("state.json: $.tasks[2].gates");

    // Failing run recorded earlier, completion attempted without a new run.
    applied(
        &plan,
        &start_3_with(&["--gate", "cargo test|101|3 failed, 10 passed"]),
    );
    refused(&plan, &COMPLETE_3, 1, &["gate `cargo test`", "failed"]);
}

#[test]
fn a_passing_gate_without_an_exit_code_is_refused() {
    let plan = Plan::with_task_3_started();
    let gate = gate_json(json!({"command": "cargo test", "passes": true, "evidence": "13 passed"}));
    refused(
        &plan,
        &complete_3_with(&["--gate-json", &gate]),
        1,
        &["gate `cargo test`", "no exit code"],
    );
}

#[test]
fn a_gate_with_an_empty_command_or_evidence_is_refused() {
    let plan = Plan::with_task_3_started();
    completion_with_gate_refused(
        &plan,
        "cargo test|0|",
        &["gate `cargo test`", "no evidence"],
    );
    let gate = gate_json(json!({"command": "", "passes": true, "exit_code": 0, "evidence": "ok"}));
    refused(
        &plan,
        &complete_3_with(&["--gate-json", &gate]),
        1,
        &["empty command"],
    );
}

#[test]
fn evidence_admitting_the_check_never_ran_is_refused() {
    let plan = Plan::with_task_3_started();
    completion_with_gate_refused(
        &plan,
        "e2e suite|0|scenario never entered",
        &["gate `e2e suite`", "never ran", "never entered"],
    );
}

#[test]
fn zero_selection_evidence_is_refused() {
    let plan = Plan::with_task_3_started();
    for evidence in [
        "ran=0 failed=0",
        "collected 0 items",
        "no tests ran in 0.01s",
    ] {
        let spec = format!("pytest -k webhook|0|{evidence}");
        completion_with_gate_refused(
            &plan,
            &spec,
            &["gate `pytest -k webhook`", "selected nothing"],
        );
    }
}

/// The counts the public reference updater refuses as a run that selected nothing (its own test
/// uses `executed=0/0`) are refused here too; an honest `0 failed` still completes.
#[test]
fn zero_selection_counts_are_refused_as_the_reference_refuses_them() {
    let plan = Plan::with_task_3_started();
    for evidence in ["executed=0/0", "executed=0", "ran = 0", "no test ran"] {
        let spec = format!("cargo test|0|{evidence}");
        completion_with_gate_refused(&plan, &spec, &["gate `cargo test`", "selected nothing"]);
    }
    let state = applied(
        &plan,
        &complete_3_with(&["--gate", "cargo test|0|ran=13 failed=0"]),
    );
    assert_eq!(task_of(&state, 3)["status"], "completed");
}

#[test]
fn evidence_invalidated_by_refine_is_refused() {
    let plan = Plan::with_task_3_started();
    refused(
        &plan,
        &complete_3_with(&[
            "--gate",
            "cargo test|0|invalidated by refine 2026-06-09: 13 passed against the old criterion",
        ]),
        1,
        &["gate `cargo test`", "invalidated by refine"],
    );
}

#[test]

fn evidence_naming_a_numbered_step_that_never_ran_is_refused() {
    // The tally exemption is for counts ("12 passed, 0 not run"); "scenario 2" is a name, and
    // the record still admits the check never ran (seed 003 lists "never entered" and "cannot
    // be measured" as such admissions).
    let plan = Plan::with_task_3_started();
    for evidence in [
        "scenario 2 never entered",
        "p99 of step 4 cannot be measured",
    ] {
        let spec = format!("e2e suite|0|{evidence}");
        completion_with_gate_refused(&plan, &spec, &["gate `e2e suite`", "never ran"]);
    }
}

#[test]
fn a_log_pointer_outside_the_plan_or_missing_is_refused() {
    let plan = Plan::with_task_3_started();
    // Even when the file exists, a pointer outside the plan folder is not evidence.
    fs::write(plan.dir.parent().expect("parent").join("x.log"), "ok\n").expect("write x.log");
    completion_with_gate_refused(
        &plan,
        "cargo test|0|13 passed log=../x.log",
        &["`../x.log`", "outside the plan folder"],
    );
    refused(
        &plan,
        &complete_3_with(&[
            "--gate",
            "cargo test|0|13 passed log=analysis_results/missing.log",
        ]),
        1,
        &["`analysis_results/missing.log`", "does not exist"],
    );
}

#[test]
fn a_log_pointer_to_an_existing_file_inside_the_plan_is_accepted() {
    let plan = Plan::with_task_3_started();
    fs::write(
        plan.dir.join("analysis_results/test.log"),
        "13 passed, 0 failed\n",
    )
    .expect("write log");
    let state = applied(
        &plan,
        &complete_3_with(&[
            "--gate",
            "cargo test|0|13 passed log=analysis_results/test.log",
        ]),
    );
    let task = task_of(&state, 3);
    assert_eq!(task["status"], "completed");
    assert_eq!(
        task["gates"][0]["evidence"],
        "13 passed log=analysis_results/test.log"
    );
}

#[test]
fn an_honest_tally_of_zero_not_run_is_accepted() {
    let plan = Plan::with_task_3_started();
    let state = applied(
        &plan,
        &complete_3_with(&["--gate", "cargo test|0|12 passed, 0 not run"]),
    );
    let task = task_of(&state, 3);
    assert_eq!(task["status"], "completed");
    assert_eq!(
        task["gates"],
        json!([{
            "command": "cargo test",
            "passes": true,
            "exit_code": 0,
            "last_run": NOW,
            "evidence": "12 passed, 0 not run"
        }])
    );
}

// ---------------------------------------------------------------------------------------------
// Retries and replays
// ---------------------------------------------------------------------------------------------

#[test]
fn a_retry_supersedes_only_its_own_command() {
    let record = |plan: &Plan, spec: &str| applied(plan, &start_3_with(&["--gate", spec]));
    // fail test, pass lint, pass test: the failing test run is superseded by its own retry.
    let plan = Plan::with_task_3_started();
    record(&plan, "test|1|2 failed, 11 passed");
    record(&plan, "lint|0|clean");
    record(&plan, "test|0|13 passed");
    let state = applied(&plan, &COMPLETE_3);
    let task = task_of(&state, 3);
    assert_eq!(task["status"], "completed");
    let commands: Vec<_> = task["gates"]
        .as_array()
        .expect("gates")
        .iter()
        .map(|g| {
            (
                g["command"].as_str().unwrap(),
                g["passes"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        commands,
        [("test", false), ("lint", true), ("test", true)],
        "history is kept, in order"
    );

    // pass test, pass lint, fail lint: the later failing lint is not masked by the passing test.
    let plan = Plan::with_task_3_started();
    record(&plan, "test|0|13 passed");
    record(&plan, "lint|0|clean");
    record(&plan, "lint|2|3 warnings");
    let run = refused(&plan, &COMPLETE_3, 1, &["gate `lint`", "failed"]);
    assert!(
        !run.stderr.contains("gate `test`"),
        "only lint is wrong:\n{}",
        run.stderr
    );
}

#[test]
fn replaying_an_identical_call_changes_nothing() {
    let plan = Plan::with_task_3_started();
    let args = complete_3_with(&["--gate", "cargo test|0|13 passed, 0 failed"]);
    applied(&plan, &args);
    let before = plan.bytes();
    let meta_before = fs::metadata(plan.state_path()).expect("metadata");
    // The replay happens later: last_run differs, the record is otherwise identical.
    let run = update_at(LATER, &plan, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.trim_end().ends_with(" (no change)"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.trim_end(),
        format!(
            "{} (no change)",
            summary_line(&plan.state(), 3, &sha256_hex(&before))
        )
    );
    assert!(
        plan.bytes() == before,
        "a replay must not rewrite state.json"
    );
    let meta_after = fs::metadata(plan.state_path()).expect("metadata");
    assert_eq!(meta_before.ino(), meta_after.ino(), "not even replaced");
    assert_eq!(
        meta_before.modified().expect("mtime"),
        meta_after.modified().expect("mtime")
    );
    assert_eq!(
        task_of(&plan.state(), 3)["gates"].as_array().unwrap().len(),
        1
    );
    plan.assert_no_lock_left("a replay");

    // The same holds for a replayed start.
    let plan = Plan::with_task_3_started();
    let before = plan.bytes();
    let run = update_at(LATER, &plan, &START_3);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("(no change)"), "{}", run.stdout);
    assert!(plan.bytes() == before);
}

// ---------------------------------------------------------------------------------------------
// Gate flags
// ---------------------------------------------------------------------------------------------

#[test]
fn gate_spec_splits_on_the_first_two_pipes() {
    let plan = Plan::with_task_3_started();
    let state = applied(
        &plan,
        &start_3_with(&[
            "--gate",
            "cargo test|0|13 passed | 0 failed | grep -c ok = 4",
            "--gate",
            "cargo clippy|1|2 warnings",
        ]),
    );
    assert_eq!(
        task_of(&state, 3)["gates"],
        json!([
            {
                "command": "cargo test",
                "passes": true,
                "exit_code": 0,
                "last_run": NOW,
                "evidence": "13 passed | 0 failed | grep -c ok = 4"
            },
            {
                "command": "cargo clippy",
                "passes": false,
                "exit_code": 1,
                "last_run": NOW,
                "evidence": "2 warnings"
            }
        ])
    );
}

#[test]
fn gate_json_records_a_command_with_pipes() {
    let plan = Plan::with_task_3_started();
    let gate = gate_json(json!({
        "command": "cargo test 2>&1 | tail -1",
        "passes": true,
        "exit_code": 0,
        "last_run": "2026-06-09T16:40:00Z",
        "evidence": "13 passed"
    }));
    let state = applied(&plan, &complete_3_with(&["--gate-json", &gate]));
    let task = task_of(&state, 3);
    assert_eq!(task["status"], "completed");
    assert_eq!(task["gates"][0]["command"], "cargo test 2>&1 | tail -1");
    assert_eq!(task["gates"][0]["last_run"], "2026-06-09T16:40:00Z");
}

#[test]
fn gate_json_refuses_unknown_and_duplicate_keys() {
    let plan = Plan::with_task_3_started();
    let unknown = r#"{"command":"cargo test","passes":true,"exit_code":0,"evidence":"13 passed","output":"..."}"#;
    let run = refused(
        &plan,
        &complete_3_with(&["--gate-json", unknown]),
        1,
        &["--gate-json", "output"],
    );
    assert_words(run.message(), &["unknown field `output`"]);
    run.assert_place("--gate-json: $.output");
    let duplicate = r#"{"command":"cargo test","passes":false,"passes":true,"exit_code":0,"evidence":"13 passed"}"#;
    let run = refused(
        &plan,
        &complete_3_with(&["--gate-json", duplicate]),
        1,
        &["--gate-json", "passes"],
    );
    assert_words(run.message(), &["duplicate key `passes`"]);
    run.assert_place("--gate-json: $");
}

#[test]
fn a_malformed_gate_spec_is_a_usage_error() {
    let plan = Plan::with_task_3_started();
    refused(
        &plan,
        &complete_3_with(&["--gate", "cargo test passed"]),
        2,
        &["--gate", "COMMAND|EXIT_CODE|EVIDENCE"],
    );
    refused(
        &plan,
        &complete_3_with(&["--gate", "cargo test|zero|13 passed"]),
        2,
        &["--gate", "`zero` is not an integer"],
    );
}

// ---------------------------------------------------------------------------------------------
// Timestamps and reopening
// ---------------------------------------------------------------------------------------------

#[test]
fn started_at_is_set_on_start_and_completed_at_on_completion() {
    let plan = Plan::new(5, 2);
    let state = applied_at(NOW, &plan, &START_3);
    let task = task_of(&state, 3);
    assert_eq!(task["started_at"], NOW);
    assert!(task.get("completed_at").is_none());

    // A later gate record leaves started_at alone.
    let state = applied_at(
        "2026-06-09T16:50:00Z",
        &plan,
        &start_3_with(&["--gate", "cargo test|0|13 passed"]),
    );
    let task = task_of(&state, 3);
    assert_eq!(task["started_at"], NOW);
    assert!(task.get("completed_at").is_none());

    let state = applied_at(LATER, &plan, &COMPLETE_3);
    let task = task_of(&state, 3);
    assert_eq!(task["started_at"], NOW, "completion never moves started_at");
    assert_eq!(task["completed_at"], LATER);
}

#[test]
fn a_reopened_task_loses_completed_at_and_records_the_reason() {
    let plan = Plan::new(5, 2);
    let original = task_of(&plan.state(), 2)["completed_at"].clone();
    assert!(original.is_string());
    record_amendment(&plan, "2");
    let state = applied(
        &plan,
        &transition(
            "2",
            "in_progress",
            &["--reopen-reason", "acceptance criterion amended by refine"],
        ),
    );
    let task = task_of(&state, 2);
    assert_eq!(task["status"], "in_progress");
    assert!(task.get("completed_at").is_none(), "{task:#}");
    assert_eq!(
        task["outcome"]["notes"],
        format!("reopened {NOW}: acceptance criterion amended by refine")
    );
    assert_eq!(state["completed_count"], 1);

    let state = applied_at(
        LATER,
        &plan,
        &transition(
            "2",
            "completed",
            &[
                "--gate",
                "cargo test|0|14 passed against the amended criterion",
            ],
        ),
    );
    let task = task_of(&state, 2);
    assert_eq!(task["status"], "completed");
    assert_eq!(task["completed_at"], LATER, "a fresh completed_at");
    assert_ne!(task["completed_at"], original);
    assert_eq!(state["completed_count"], 2);
}

// ---------------------------------------------------------------------------------------------
// Blocker lifecycle
// ---------------------------------------------------------------------------------------------

#[test]
fn blocking_needs_a_non_blank_reason() {
    let plan = Plan::with_task_3_started();
    let run = refused(
        &plan,
        &["--task", "3", "--status", "blocked"],
        1,
        &["non-empty reason"],
    );
    run.assert_place("--block-reason");
    let run = refused(
        &plan,
        &transition("3", "blocked", &["--block-reason", "   "]),
        1,
        &["non-empty reason"],
    );
    run.assert_place("--block-reason");
}

#[test]
fn blocking_records_the_blocker_and_blocks_the_plan() {
    let plan = Plan::with_task_3_blocked();
    let state = plan.state();
    assert_eq!(
        state["blocked"],
        json!({
            "task": 3,
            "reason": "staging database unreachable",
            "since": NOW,
            "needs": "VPN credentials from the user"
        })
    );
    assert_eq!(state["status"], "blocked");
    assert_eq!(task_of(&state, 3)["status"], "blocked");
    assert_eq!(state["checkpoint"]["task"], 3);
    assert_eq!(state["checkpoint"]["step"], "blocked");
    assert_eq!(
        state["checkpoint"]["note"],
        "task 3 blocked: staging database unreachable"
    );
}

#[test]
fn an_active_blocker_holds_every_other_task() {
    let plan = Plan::with_task_3_blocked();
    let run = refused(
        &plan,
        &["--task", "4", "--status", "in_progress"],
        1,
        &[
            "task 3 is blocked",
            "every other transition waits",
            "--resolve-blocker",
        ],
    );
    run.assert_place("state.json: $.blocked");
    assert_words(&run.stderr, &["dwp update --task 3"]);
    // A record on a completed task waits too.
    refused(
        &plan,
        &transition("2", "completed", &["--gate", "cargo clippy|0|clean"]),
        1,
        &["task 3 is blocked", "--resolve-blocker"],
    );
    // So does the blocked task itself, without --resolve-blocker.
    refused(
        &plan,
        &START_3,
        1,
        &["task 3 is blocked", "--resolve-blocker"],
    );
}

#[test]
fn a_blocker_is_never_replaced() {
    let plan = Plan::with_task_3_blocked();
    let run = refused(
        &plan,
        &transition("4", "blocked", &["--block-reason", "another stop"]),
        1,
        &["task 3 is blocked"],
    );
    run.assert_place("state.json: $.blocked");
    let run = refused(
        &plan,
        &transition("3", "blocked", &["--block-reason", "a different story"]),
        1,
        &["never replaced"],
    );
    run.assert_place("state.json: $.blocked");
    assert_eq!(
        plan.state()["blocked"]["reason"],
        "staging database unreachable"
    );
}

#[test]
fn resolve_blocker_never_resolves_another_tasks_blocker() {
    let plan = Plan::with_task_3_blocked();
    let run = refused(
        &plan,
        &transition("4", "in_progress", &["--resolve-blocker"]),
        1,
        &["task 3's", "never another task's"],
    );
    run.assert_place("state.json: $.blocked");
}

#[test]
fn resolve_blocker_into_pending_is_refused() {
    let plan = Plan::with_task_3_blocked();
    let run = refused(
        &plan,
        &["--task", "3", "--status", "pending", "--resolve-blocker"],
        1,
        &["in_progress or completed"],
    );
    run.assert_place("--resolve-blocker");
}

#[test]
fn resolve_blocker_into_in_progress_clears_the_blocker() {
    let plan = Plan::with_task_3_blocked();
    let state = applied(&plan, &start_3_with(&["--resolve-blocker"]));
    assert_eq!(state["blocked"], Value::Null);
    assert_eq!(state["status"], "in_progress");
    assert_eq!(task_of(&state, 3)["status"], "in_progress");
    assert_eq!(state["checkpoint"]["step"], "resumed");
    assert_eq!(
        state["checkpoint"]["note"],
        "blocker of task 3 resolved; task 3 in_progress"
    );
}

#[test]
fn resolve_blocker_into_completed_needs_passing_gates() {
    let plan = Plan::with_task_3_blocked();
    refused(
        &plan,
        &["--task", "3", "--status", "completed", "--resolve-blocker"],
        1,
        &["without gate evidence"],
    );
    let state = applied(
        &plan,
        &complete_3_with(&["--resolve-blocker", "--gate", "cargo test|0|13 passed"]),
    );
    assert_eq!(state["blocked"], Value::Null);
    assert_eq!(state["status"], "in_progress");
    assert_eq!(state["completed_count"], 3);
    let task = task_of(&state, 3);
    assert_eq!(task["status"], "completed");
    assert_eq!(task["completed_at"], NOW);
}

// ---------------------------------------------------------------------------------------------
// Closed tasks and reopen reasons
// ---------------------------------------------------------------------------------------------

#[test]
fn a_completed_task_moves_only_with_a_reopen_reason() {
    let plan = Plan::new(5, 2);
    for status in ["in_progress", "pending"] {
        let run = refused(
            &plan,
            &["--task", "2", "--status", status],
            1,
            &["task 2 is completed", "--reopen-reason"],
        );
        run.assert_place("--reopen-reason");
    }
    // A blank reason is no reason.
    refused(
        &plan,
        &transition("2", "in_progress", &["--reopen-reason", " "]),
        1,
        &["--reopen-reason"],
    );
}

/// Reopening task 2 into `status` is refused until today's amendment of task 2 is recorded,
/// then applied.
fn reopen_of_2_waits_for_its_amendment(plan: &Plan, status: &str) {
    let reopen = reopen_2_into(status);
    refused(
        plan,
        &reopen,
        1,
        &["record the amendment first (dwp amend)"],
    );
    record_amendment(plan, "2");
    let state = applied(plan, &reopen);
    assert_eq!(task_of(&state, 2)["status"], status);
}

#[test]
fn reopen_rule_a_completed_task_reopens_only_after_an_amendment_dated_today() {
    let plan = Plan::new(5, 2);
    let reopen = reopen_2_into("in_progress");
    let run = refused(
        &plan,
        &reopen,
        1,
        &[
            "record the amendment first (dwp amend)",
            "task 2 is completed",
        ],
    );
    run.assert_place("2.task_synthetic_2.md");
    // An amendment of another day does not count: the log must hold today's.
    record_amendment_at("2026-06-08T09:00:00Z", &plan, "2");
    refused(
        &plan,
        &reopen,
        1,
        &[
            "no amendment dated 2026-06-09",
            "record the amendment first (dwp amend)",
        ],
    );
    // Another task's amendment of today does not count either.
    record_amendment(&plan, "1");
    reopen_of_2_waits_for_its_amendment(&plan, "in_progress");
}

#[test]
fn reopen_rule_a_lite_task_finds_its_amendment_in_the_readme_section() {
    let plan = Plan::from_synth(
        SynthPlan::new(PLAN_NAME, 5)
            .completed(2)
            .format(dwp::plan::model::PlanFormat::Lite),
    );
    reopen_of_2_waits_for_its_amendment(&plan, "pending");
}

#[test]
fn skipping_needs_a_reopen_reason() {
    let plan = Plan::new(5, 2);
    let run = refused(
        &plan,
        &["--task", "3", "--status", "skipped"],
        1,
        &["skipping task 3", "refine"],
    );
    run.assert_place("--reopen-reason");
    let state = applied(
        &plan,
        &transition(
            "3",
            "skipped",
            &["--reopen-reason", "user removed it via refine"],
        ),
    );
    let task = task_of(&state, 3);
    assert_eq!(task["status"], "skipped");
    assert_eq!(
        task["outcome"]["notes"],
        format!("skipped {NOW}: user removed it via refine")
    );
    // A skipped task, too, moves again only with a reason.
    refused(
        &plan,
        &["--task", "3", "--status", "in_progress"],
        1,
        &["task 3 is skipped", "--reopen-reason"],
    );
}

#[test]
fn a_reopen_reason_on_a_pending_task_is_refused() {
    let plan = Plan::new(5, 2);
    let run = refused(
        &plan,
        &start_3_with(&["--reopen-reason", "nothing to reopen"]),
        1,
        &["task 3 is pending"],
    );
    run.assert_place("--reopen-reason");
}

// ---------------------------------------------------------------------------------------------
// Derived fields and checkpoint
// ---------------------------------------------------------------------------------------------

#[test]
fn derived_fields_follow_the_real_transition() {
    let plan = Plan::new(5, 2);
    let state = applied(
        &plan,
        &start_3_with(&[
            "--gate",
            "cargo test|0|13 passed",
            "--agent",
            "codex-cli",
            "--model",
            "gpt-test",
        ]),
    );
    assert_eq!(state["completed_count"], 2);
    assert_eq!(state["status"], "in_progress");
    assert_eq!(state["updated_at"], NOW);
    assert_eq!(
        state["updated_by"],
        json!({"agent": "codex-cli", "model": "gpt-test"})
    );
    assert_eq!(
        state["checkpoint"],
        json!({"task": 3, "step": "started", "at": NOW, "note": "task 3 started"})
    );
    assert!(
        !state["checkpoint"]["note"]
            .as_str()
            .unwrap()
            .contains("completed"),
        "a start with a passing gate is still only a start"
    );

    let state = applied_at(LATER, &plan, &["--task", "3", "--status", "completed"]);
    assert_eq!(state["completed_count"], 3);
    assert_eq!(state["status"], "in_progress");
    assert_eq!(state["updated_at"], LATER);
    assert_eq!(
        state["checkpoint"],
        json!({"task": 3, "step": "done", "at": LATER, "note": "task 3 completed"})
    );
}

#[test]
fn checkpoint_flags_override_the_derived_checkpoint() {
    let plan = Plan::new(5, 2);
    let state = applied(
        &plan,
        &start_3_with(&[
            "--checkpoint-step",
            "instructions:4",
            "--checkpoint-note",
            "queue table migrated; worker loop not yet wired",
        ]),
    );
    assert_eq!(
        state["checkpoint"],
        json!({
            "task": 3,
            "step": "instructions:4",
            "at": NOW,
            "note": "queue table migrated; worker loop not yet wired"
        })
    );
    // A checkpoint alone, later in the same task, is recorded too.
    let state = applied_at(
        LATER,
        &plan,
        &start_3_with(&["--checkpoint-step", "instructions:5"]),
    );
    assert_eq!(state["checkpoint"]["step"], "instructions:5");
    assert_eq!(state["checkpoint"]["at"], LATER);
    assert_eq!(task_of(&state, 3)["started_at"], NOW);
}

#[test]

fn a_checkpoint_note_alone_keeps_the_step_locator() {
    // The checkpoint is the finest-grained resume point (seed 003); a note about the same step
    // must not erase where to resume. (record_checkpoint_flags keeps the step; stamp then
    // overwrites it with the transition's step.)
    let plan = Plan::new(5, 2);
    applied(
        &plan,
        &start_3_with(&[
            "--checkpoint-step",
            "instructions:4",
            "--checkpoint-note",
            "queue table migrated",
        ]),
    );
    let state = applied_at(
        LATER,
        &plan,
        &start_3_with(&["--checkpoint-note", "worker loop wired, not yet tested"]),
    );
    assert_eq!(
        state["checkpoint"],
        json!({
            "task": 3,
            "step": "instructions:4",
            "at": LATER,
            "note": "worker loop wired, not yet tested"
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Field limits
// ---------------------------------------------------------------------------------------------

#[test]
fn field_limits_are_checked_before_anything_is_written() {
    let plan = Plan::with_task_3_started();
    let long = |n: usize| "x".repeat(n);
    let (reason, note, tried, agent) = (long(1001), long(501), long(301), long(101));
    let evidence = format!("cargo test|0|{}", long(501));
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec!["--status", "blocked", "--block-reason", &reason],
            "--block-reason",
            "at most 1000",
        ),
        (
            vec!["--status", "in_progress", "--checkpoint-note", &note],
            "--checkpoint-note",
            "at most 500",
        ),
        (
            vec!["--status", "in_progress", "--tried", &tried],
            "--tried",
            "at most 300",
        ),
        (
            vec!["--status", "in_progress", "--agent", &agent],
            "--agent",
            "at most 100",
        ),
        (
            vec!["--status", "in_progress", "--gate", &evidence],
            "--gate evidence",
            "at most 500",
        ),
    ];
    for (extra, flag, words) in cases {
        let mut args = vec!["--task", "3"];
        args.extend(extra);
        let run = refused(&plan, &args, 1, &[words]);
        run.assert_place(flag);
    }
}

#[test]
fn a_bad_commit_is_a_usage_error_like_a_bad_expected_sha256() {
    let plan = Plan::with_task_3_started();
    for (flag, value, words) in [
        (
            "--commit",
            "XYZ",
            "not a short or full lower-case hex commit hash",
        ),
        (
            "--expected-sha256",
            "XYZ",
            "is not 64 lower-case hex digits",
        ),
    ] {
        let args = ["--task", "3", "--status", "in_progress", flag, value];
        let run = refused(&plan, &args, 2, &[flag, words]);
        assert!(
            run.stderr.contains("hint: `dwp update --help`"),
            "{}",
            run.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Publication belongs to finalize
// ---------------------------------------------------------------------------------------------

#[test]
fn completing_the_last_task_is_publication_refused_while_the_markdown_is_not_authored() {
    // 003 "Verified plan publication": the README index and task logs MUST be authored before
    // the terminal transition; dwp update hands the completed state to dwp finalize, which
    // lists every problem and writes nothing.
    let plan = Plan::new(3, 2);
    applied(&plan, &START_3);
    let before = plan.sha256();
    let run = completion_with_gate_refused(
        &plan,
        "cargo test|0|13 passed",
        &[
            "publishes the plan",
            "publication was refused",
            "DWP040",
            "DWP065",
        ],
    );
    run.assert_place(plan.dir.to_str().unwrap());
    assert_eq!(
        plan.sha256(),
        before,
        "a refused publication writes nothing"
    );
    assert!(!plan.dir.join("analysis_results/FINALIZATION.json").exists());
    assert!(!plan.dir.join(".finalizing.json").exists());
}

#[test]
fn completing_the_last_task_of_an_authored_plan_publishes_it_with_a_receipt() {
    let plan = Plan::from_synth(SynthPlan::new(PLAN_NAME, 3).ready_to_publish());
    let run = update_at(
        NOW,
        &plan,
        &complete_3_with(&["--gate", "cargo test|0|13 passed"]),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("plan published · receipt "),
        "{}",
        run.stdout
    );
    plan.assert_no_lock_left("a publication");
    let state = plan.state();
    assert_eq!(state["status"], "completed");
    assert_eq!(state["checkpoint"]["step"], "done");
    let receipt: Value = serde_json::from_slice(
        &std::fs::read(plan.dir.join("analysis_results/FINALIZATION.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(receipt["state_sha256"], plan.sha256());
    assert!(!plan.dir.join(".finalizing.json").exists());
}

// ---------------------------------------------------------------------------------------------
// Compare-and-swap and the lock
// ---------------------------------------------------------------------------------------------

#[test]
fn expected_sha256_equal_to_the_current_bytes_is_allowed() {
    let plan = Plan::new(5, 2);
    let current = plan.sha256();
    let state = applied(&plan, &start_3_with(&["--expected-sha256", &current]));
    assert_eq!(task_of(&state, 3)["status"], "in_progress");
}

#[test]
fn expected_sha256_of_a_moved_snapshot_is_contention() {
    let plan = Plan::new(5, 2);
    let current = plan.sha256();
    let stale = "0".repeat(64);
    refused(
        &plan,
        &start_3_with(&["--expected-sha256", &stale]),
        3,
        &["snapshot moved", &stale, &current],
    );
}

#[test]
fn a_malformed_expected_sha256_is_a_usage_error() {
    let plan = Plan::new(5, 2);
    let upper = plan.sha256().to_uppercase();
    for bad in ["xyz", "abc123", upper.as_str()] {
        refused(
            &plan,
            &start_3_with(&["--expected-sha256", bad]),
            2,
            &["--expected-sha256", "64 lower-case hex digits"],
        );
    }
}

#[test]
fn a_held_lock_is_contention_and_is_never_removed() {
    let plan = Plan::new(5, 2);
    // What the reference tooling leaves: a bare directory, no owner record.
    fs::create_dir(plan.lock_path()).expect("create lock dir");
    let before = plan.bytes();
    for wait in [None, Some("0.3")] {
        let mut args = START_3.to_vec();
        if let Some(wait) = wait {
            args.extend(["--wait", wait]);
        }
        let started = Instant::now();
        let run = update(&plan, &args);
        let elapsed = started.elapsed();
        assert_eq!(run.code, 3, "{args:?}: {}", run.stderr);
        if wait.is_some() {
            assert!(
                elapsed >= Duration::from_millis(300),
                "--wait 0.3 gave up after {elapsed:?}"
            );
        }
        assert!(run.message().starts_with("dwp update: "), "{}", run.stderr);
        assert_words(
            run.message(),
            &["state.json.lock is held", "no owner record"],
        );
        assert!(plan.bytes() == before, "nothing written under a held lock");
        assert!(
            plan.lock_path().is_dir(),
            "dwp never removes a lock it does not own"
        );
        assert!(
            fs::read_dir(plan.lock_path())
                .expect("read lock")
                .next()
                .is_none(),
            "dwp left something inside a lock it does not own"
        );
        assert_eq!(
            plan.lock_leftovers(),
            ["state.json.lock"],
            "only the other writer's lock remains"
        );
    }
}

#[test]
fn waiting_acquires_the_lock_once_its_holder_releases_it() {
    let plan = Plan::new(5, 2);
    fs::create_dir(plan.lock_path()).expect("create lock dir");
    let mut child = dwp_at(NOW)
        .arg("update")
        .arg(&plan.dir)
        .args(start_3_with(&["--wait", "20"]))
        .command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn dwp");
    std::thread::sleep(Duration::from_millis(400));
    assert!(
        child.try_wait().expect("poll").is_none(),
        "dwp should still be waiting for the held lock"
    );
    // The other writer (the reference tooling) releases its lock.
    fs::remove_dir(plan.lock_path()).expect("release lock");
    let output = child.wait_with_output().expect("wait for dwp");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let state = plan.state();
    assert_eq!(task_of(&state, 3)["status"], "in_progress");
    assert_eq!(
        String::from_utf8(output.stdout).expect("utf-8").trim_end(),
        summary_line(&state, 3, &plan.sha256())
    );
    plan.assert_no_lock_left("a waiting update");
}

// ---------------------------------------------------------------------------------------------
// Output modes
// ---------------------------------------------------------------------------------------------

#[test]
fn dry_run_prints_a_unified_diff_and_writes_nothing() {
    let plan = Plan::new(5, 2);
    let before = plan.bytes();
    let args = START_3;
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let run = update(&plan, &dry);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(plan.bytes() == before, "--dry-run wrote state.json");
    plan.assert_no_lock_left("a dry run");
    assert_words(
        &run.stdout,
        &[
            "--- ",
            "+++ ",
            "@@ ",
            "(on disk)",
            "(after)",
            "(dry run: nothing written)",
        ],
    );
    let added: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with('+')).collect();
    let removed: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with('-')).collect();
    assert!(
        added.iter().any(|l| l.contains("\"in_progress\"")),
        "{}",
        run.stdout
    );
    assert!(
        removed.iter().any(|l| l.contains("\"pending\"")),
        "{}",
        run.stdout
    );
    let summary = run.stdout.lines().last().expect("summary line").to_owned();

    // The real update at the same instant writes exactly what the dry run announced.
    let state = applied(&plan, &args);
    let written = plan.sha256();
    assert_eq!(
        summary,
        format!(
            "{} (dry run: nothing written)",
            summary_line(&state, 3, &written)
        )
    );
}

#[test]
fn json_output_is_one_document_with_old_and_new_sha256() {
    let plan = Plan::new(5, 2);
    let old = plan.sha256();
    let run = update(&plan, &["--json", "--task", "3", "--status", "in_progress"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let new = plan.sha256();
    let document = common::document(&run.stdout);
    assert_eq!(document["command"], "update");
    assert_eq!(document["ok"], true);
    let outcome = &document["update"];
    assert_eq!(outcome["old_sha256"], old);
    assert_eq!(outcome["new_sha256"], new);
    assert_eq!(outcome["changed"], true);
    assert_eq!(outcome["task"], 3);
    assert_eq!(outcome["status"], "in_progress");
    assert_eq!(outcome["plan_status"], "in_progress");

    // A replay: nothing changed, old and new are the same bytes.
    let run = update(&plan, &["--json", "--task", "3", "--status", "in_progress"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let document = common::document(&run.stdout);
    assert_eq!(document["update"]["changed"], false);
    assert_eq!(document["update"]["old_sha256"], new);
    assert_eq!(document["update"]["new_sha256"], new);
    assert_eq!(plan.sha256(), new);
}

// ---------------------------------------------------------------------------------------------
// Publication in progress
// ---------------------------------------------------------------------------------------------

#[test]
fn a_finalizing_marker_refuses_every_update() {
    let plan = Plan::with_task_3_started();
    fs::write(plan.dir.join(".finalizing.json"), "{}\n").expect("write marker");
    let attempts = [
        start_3_with(&["--gate", "cargo test|0|13 passed"]),
        transition("3", "blocked", &["--block-reason", "waiting"]),
        START_3.to_vec(),
        transition("1", "completed", &[]),
    ];
    // The hint names the plan, so it runs as printed.
    let recover = format!("dwp finalize {} --recover", plan.dir.display());
    for args in attempts {
        let run = refused(&plan, &args, 1, &["publication is in progress", &recover]);
        run.assert_place(".finalizing.json");
    }
}

// ---------------------------------------------------------------------------------------------
// v1 plans
// ---------------------------------------------------------------------------------------------

#[test]
fn a_v1_plan_can_be_started_and_completed() {
    let plan = Plan::from_synth(
        SynthPlan::new(PLAN_NAME, 5)
            .completed(1)
            .generation(dwp::plan::model::Generation::V1),
    );
    let state = plan.state();
    assert!(
        task_of(&state, 2).get("gates").is_none(),
        "v1 tasks may lack gates"
    );
    assert!(state.get("approval").is_none());
    let schema = state["schema"].clone();

    let state = applied(&plan, &["--task", "2", "--status", "in_progress"]);
    assert_eq!(task_of(&state, 2)["status"], "in_progress");
    assert_eq!(state["schema"], schema, "never silently migrated to v2");
    let state = applied(
        &plan,
        &transition(
            "2",
            "completed",
            &["--gate", "cargo test|0|12 passed, 0 failed"],
        ),
    );
    let task = task_of(&state, 2);
    assert_eq!(task["status"], "completed");
    assert_eq!(task["completed_at"], NOW);
    assert_eq!(task["gates"][0]["evidence"], "12 passed, 0 failed");
    assert_eq!(state["completed_count"], 2);
    assert_eq!(state["schema"], schema);
    assert!(state.get("approval").is_none());
    assert!(state.get("materialization").is_none());
}

#[test]
fn a_no_op_update_on_a_v1_plan_writes_nothing() {
    // Task 4 is pending and asked to stay pending: nothing to record. Today dwp adds
    // `"gates": []` to task 4, bumps updated_at and moves the checkpoint from task 2's `done`
    // to `task 4 record updated`, a record of an update that did not happen.
    let plan = Plan::from_synth(
        SynthPlan::new(PLAN_NAME, 5)
            .completed(2)
            .generation(dwp::plan::model::Generation::V1),
    );
    let before = plan.bytes();
    let run = update(&plan, &["--task", "4", "--status", "pending"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(plan.bytes() == before, "a no-op rewrote the v1 state.json");
    assert!(
        run.stdout.trim_end().ends_with(" (no change)"),
        "{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// dwp lock status / dwp lock recover
// ---------------------------------------------------------------------------------------------

fn write_owner(plan: &Plan, pid: u32, host: &str, started_at: &str) {
    fs::create_dir(plan.lock_path()).expect("create lock dir");
    let owner = json!({
        "pid": pid,
        "host": host,
        "command": "dwp update PLAN --task 3 --status in_progress",
        "started_at": started_at,
    });
    fs::write(
        plan.lock_path().join("owner.json"),
        serde_json::to_vec_pretty(&owner).expect("owner"),
    )
    .expect("write owner.json");
}

/// A lock owned by this test process, alive on this host, taken just now.
fn write_live_owner(plan: &Plan) {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    write_owner(
        plan,
        std::process::id(),
        &dwp::store::lock_dir::host_name(),
        &now,
    );
}

#[test]
fn lock_status_reports_free_and_held() {
    let plan = Plan::new(5, 2);
    let run = lock_cmd("status", &plan, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("free"), "{}", run.stdout);

    fs::create_dir(plan.lock_path()).expect("create lock dir");
    let run = lock_cmd("status", &plan, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("held"), "{}", run.stdout);
    assert_words(&run.stdout, &["state.json.lock", "no owner record"]);
    assert!(plan.lock_path().is_dir(), "status never removes the lock");
}

#[test]
fn lock_recover_refuses_a_bare_lock_without_older_than() {
    let plan = Plan::new(5, 2);
    fs::create_dir(plan.lock_path()).expect("create lock dir");
    let run = lock_cmd("recover", &plan, &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.message().starts_with("dwp lock recover: "),
        "{}",
        run.stderr
    );
    assert_words(&run.stderr, &["no owner record", "--older-than"]);
    assert!(plan.lock_path().is_dir(), "the lock is kept");
}

#[test]
fn lock_recover_removes_a_bare_lock_with_older_than_zero() {
    let plan = Plan::new(5, 2);
    fs::create_dir(plan.lock_path()).expect("create lock dir");
    let run = lock_cmd("recover", &plan, &["--older-than", "0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_words(&run.stdout, &["inspected", "no owner record", "removed"]);
    plan.assert_no_lock_left("recovery");
    // And the plan is writable again.
    applied(&plan, &START_3);
}

#[test]
fn lock_recover_removes_a_dead_owner_on_this_host() {
    let plan = Plan::new(5, 2);
    let host = dwp::store::lock_dir::host_name();
    write_owner(&plan, 999_999_999, &host, "2026-01-01T00:00:00Z");
    let status = lock_cmd("status", &plan, &[]);
    assert_words(&status.stdout, &["held", "999999999", "process gone"]);
    let run = lock_cmd("recover", &plan, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_words(
        &run.stdout,
        &[
            "inspected",
            "pid 999999999",
            &host,
            "removed",
            "owner process is gone",
        ],
    );
    plan.assert_no_lock_left("recovery");
}

#[test]
fn lock_recover_keeps_a_live_owner() {
    let plan = Plan::new(5, 2);
    write_live_owner(&plan);
    let run = lock_cmd("recover", &plan, &["--older-than", "0"]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert_words(
        &run.stderr,
        &["is held", &format!("pid {}", std::process::id()), "alive"],
    );
    assert!(plan.lock_path().join("owner.json").is_file(), "kept");
    // dwp update waits for it like for any other writer.
    let before = plan.bytes();
    let update_run = update(&plan, &START_3);
    assert_eq!(update_run.code, 3, "{}", update_run.stderr);
    assert!(plan.bytes() == before);
    assert!(plan.lock_path().join("owner.json").is_file());
}

#[test]

fn lock_recover_force_never_removes_a_live_writers_lock() {
    // --force stands for the caller's confirmation that no writer remains (seed 003: a stale
    // lock requires confirming no writer remains active). On this host dwp can check, and here
    // it finds the owner alive: removing the lock would let two writers in at once.
    let plan = Plan::new(5, 2);
    write_live_owner(&plan);
    let progress_before = fs::read(plan.dir.join("PROGRESS.md")).expect("PROGRESS.md");
    let run = lock_cmd("recover", &plan, &["--force", "--reason", "impatient"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert_words(&run.stderr, &["alive"]);
    assert!(plan.lock_path().join("owner.json").is_file(), "kept");
    assert_eq!(
        fs::read(plan.dir.join("PROGRESS.md")).expect("PROGRESS.md"),
        progress_before
    );
}

#[test]
fn lock_recover_needs_force_for_another_hosts_owner() {
    let plan = Plan::new(5, 2);
    let elsewhere = format!("{}-elsewhere", dwp::store::lock_dir::host_name());
    write_owner(&plan, 4242, &elsewhere, "2026-06-09T16:00:00Z");
    let run = lock_cmd("recover", &plan, &["--older-than", "0"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_words(&run.stderr, &["another host", "--force"]);
    assert!(plan.lock_path().join("owner.json").is_file(), "kept");

    let progress_before = fs::read_to_string(plan.dir.join("PROGRESS.md")).expect("PROGRESS.md");
    let run = lock_cmd("recover", &plan, &["--force", "--reason", "moved hosts"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_words(&run.stdout, &["inspected", &elsewhere, "removed"]);
    plan.assert_no_lock_left("forced recovery");
    let progress = fs::read_to_string(plan.dir.join("PROGRESS.md")).expect("PROGRESS.md");
    assert!(
        progress.starts_with(&progress_before),
        "appended, not rewritten"
    );
    let added = &progress[progress_before.len()..];
    assert_eq!(added.lines().count(), 1, "one line:\n{added}");
    assert_words(added, &["moved hosts", "--force", &elsewhere]);
}

#[test]
fn the_updated_state_is_checked_before_it_is_written() {
    // The safety net: a change that would break the schema is refused, even when every flag
    // was within its own limit. Here the reopen reason appended to outcome.notes would take
    // the notes past the schema's 1,000 characters.
    let plan = Plan::new(5, 2);
    record_amendment(&plan, "2");
    plan.edit_state(|s| {
        s["tasks"][1]["outcome"]["notes"] = json!("n".repeat(990));
    });
    let run = refused(
        &plan,
        &reopen_2_into("in_progress"),
        1,
        &["the updated state would not validate", "1000"],
    );
    run.assert_place("state.json: $.tasks[1].outcome.notes");
}

#[test]
fn commit_head_is_resolved_by_git_in_the_plans_repository() {
    let plan = Plan::with_task_3_started();
    let repo = plan.dir.parent().unwrap();
    common::git(repo, &["init", "-q", "-b", "main"]);
    common::git(repo, &["add", "-A"]);
    common::git(repo, &["commit", "-q", "-m", "Task 3 of the plan"]);
    let head = common::git(repo, &["rev-parse", "HEAD"]);
    applied(
        &plan,
        &transition("3", "in_progress", &["--commit", "HEAD"]),
    );
    assert_eq!(plan.state()["tasks"][2]["commit"], head.as_str());
    // A revision git cannot resolve stays a usage error, naming both ways.
    let before = plan.sha256();
    let run = refused(
        &plan,
        &transition("3", "in_progress", &["--commit", "no-such-branch"]),
        2,
        &["nor a revision git resolves"],
    );
    assert!(
        run.stderr.contains("--commit `no-such-branch`"),
        "{}",
        run.stderr
    );
    assert_eq!(plan.sha256(), before);
}

/// A state of more than 1 MiB: through every kind of transition the bytes on disk are exactly
/// dwp's serialization of the state they hold.
#[test]
fn a_large_states_write_is_the_whole_states_serialization() {
    let plan = Plan::new(3_000, 1_500);
    assert!(plan.bytes().len() > 1 << 20, "a state of more than 1 MiB");
    let steps: [Vec<&str>; 4] = [
        transition("1501", "in_progress", &["--checkpoint-step", "tests"]),
        transition("1501", "blocked", &["--block-reason", "the runner is down"]),
        transition(
            "1501",
            "completed",
            &["--resolve-blocker", "--gate", "cargo test|0|9 passed"],
        ),
        transition(
            "1502",
            "in_progress",
            &["--notes", "a note \"quoted\" and ünïcode"],
        ),
    ];
    for args in steps {
        applied(&plan, &args);
        let bytes = plan.bytes();
        let state: dwp::plan::model::State = serde_json::from_slice(&bytes).unwrap();
        assert!(
            dwp::store::json_file_bytes(&state) == bytes,
            "after `{}` the bytes are not the state's own serialization",
            args.join(" ")
        );
    }
}
