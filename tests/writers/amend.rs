//! `dwp amend` through the real binary (seed 003 "Evidence truth and amendments", the amendment
//! block of docs/DECISIONS.md): numbering, dating, the deferred requirement's destination, invalidation,
//! Lite and Full records, the PROGRESS.md mirror, and every refusal with the bytes of the task
//! file, README.md, PROGRESS.md and state.json unchanged. What `dwp amend` writes must pass
//! `dwp verify`'s amendment rules (DWP070-075) and leave markdown and state in sync.

use crate::common;
use crate::common::{NOW, Plan, Run, field_strs, task_of};
use dwp::plan::model::PlanFormat;
use dwp::synth::SynthPlan;
use serde_json::json;
use std::fs;
use std::path::Path;

const TODAY: &str = "2026-06-09";
const TOMORROW_NOW: &str = "2026-06-10T09:00:00Z";
const PLAN_NAME: &str = "PLAN_cli_amend_rules";
const TASK_2_FILE: &str = "2.task_synthetic_2.md";

impl Plan {
    /// Five tasks, the first two completed; Full unless `format` says otherwise.
    fn amendable(format: PlanFormat) -> Plan {
        Plan::from_synth(SynthPlan::new(PLAN_NAME, 5).completed(2).format(format))
    }

    /// Task 2 with two runs of `cargo test` and one of `cargo clippy`.
    fn with_task_2_gates(self) -> Plan {
        self.edit_state(|s| {
            s["tasks"][1]["gates"] = json!([
                {"command": "cargo test", "passes": false, "exit_code": 1,
                 "last_run": "2026-06-09T14:21:00Z", "evidence": "9 passed, 3 failed"},
                {"command": "cargo clippy", "passes": true, "exit_code": 0,
                 "last_run": "2026-06-09T14:22:00Z", "evidence": "0 warnings"},
                {"command": "cargo test", "passes": true, "exit_code": 0,
                 "last_run": "2026-06-09T14:24:00Z", "evidence": "12 passed, 0 failed"}
            ]);
        });
        self
    }
}

/// `dwp COMMAND PLAN ARGS...` at `now`, with HOME the plan's temporary folder.
fn run_at(now: &str, plan: &Plan, command: &[&str]) -> Run {
    common::dwp()
        .at(now)
        .home(plan.root())
        .on_plan(&plan.dir, command)
        .run_utf8()
}

/// A revised-criterion amendment of task `task`; a flag in `extra` replaces its default.
fn amend_args<'a>(task: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let defaults: [(&str, &str); 8] = [
        ("--original", "synthetic behaviour 2 is covered by a test"),
        ("--observed", "the behaviour needs a network the CI lacks"),
        ("--reason", "the user narrowed the criterion"),
        ("--authority", "user"),
        ("--affected", task),
        ("--disposition", "revised criterion"),
        ("--revised", "synthetic behaviour 2 is covered offline"),
        ("--task", task),
    ];
    let mut args = vec!["amend"];
    let disposition_given = extra.contains(&"--disposition");
    for (flag, value) in defaults {
        let revised_default = flag == "--revised" && disposition_given;
        if !extra.contains(&flag) && !revised_default {
            args.extend([flag, value]);
        }
    }
    args.extend(extra);
    args
}

fn amended(now: &str, plan: &Plan, args: &[&str]) -> Run {
    let run = run_at(now, plan, args);
    assert_eq!(
        run.code, 0,
        "dwp {args:?} should succeed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(!plan.path("state.json.lock").exists());
    run
}

/// Exit `code`, a `dwp amend: ...` message holding `words`, and no byte changed.
fn refused(now: &str, plan: &Plan, args: &[&str], code: i32, words: &[&str]) {
    common::refused(&plan.dir, "amend", code, words, || run_at(now, plan, args));
}

/// No amendment finding (DWP070-075) and no desync (DWP040-048).
fn assert_amendments_pass_verify(plan: &Plan) {
    let codes = plan.verify_codes(&[]);
    let bad: Vec<&String> = codes
        .iter()
        .filter(|c| c.starts_with("DWP07") || c.starts_with("DWP04"))
        .collect();
    assert!(bad.is_empty(), "verify reports {bad:?} (all: {codes:?})");
}

fn headings(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("### Amendment"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Numbering and dating
// ---------------------------------------------------------------------------------------------

#[test]
fn amendments_are_numbered_after_the_last_and_dated_today() {
    let plan = Plan::amendable(PlanFormat::Full);
    amended(NOW, &plan, &amend_args("2", &[]));
    let first = plan.read(TASK_2_FILE);
    amended(
        TOMORROW_NOW,
        &plan,
        &amend_args(
            "2",
            &["--disposition", "failed gate", "--reason", "flaky again"],
        ),
    );
    let text = plan.read(TASK_2_FILE);
    assert!(
        text.starts_with(&first),
        "an earlier amendment is never rewritten"
    );
    assert_eq!(
        headings(&text),
        [
            format!("### Amendment 1 — {TODAY}"),
            "### Amendment 2 — 2026-06-10".to_owned()
        ]
    );
    for field in [
        "- Original criterion: synthetic behaviour 2 is covered by a test",
        "- Observed: the behaviour needs a network the CI lacks",
        "- Disposition: revised criterion",
        "- Revised criterion: synthetic behaviour 2 is covered offline",
        "- Reason: the user narrowed the criterion",
        "- Authority: user",
        "- Affected tasks: 2",
        "- Evidence invalidated: none",
        "- Evidence preserved: none",
    ] {
        assert!(text.contains(field), "missing {field:?} in:\n{text}");
    }
    assert_amendments_pass_verify(&plan);
}

#[test]
fn amendment_numbering_continues_after_a_hand_written_one() {
    let plan = Plan::amendable(PlanFormat::Full);
    let mut text = plan.read(TASK_2_FILE);
    text.push_str(
        "\n### Amendment 1 — 2026-06-01\n\n- Original criterion: a\n- Observed: b\n\
         - Disposition: failed gate\n- Reason: c\n- Authority: developer\n- Affected tasks: 2\n\
         - Evidence invalidated: none\n- Evidence preserved: none\n",
    );
    fs::write(plan.path(TASK_2_FILE), &text).unwrap();
    amended(NOW, &plan, &amend_args("2", &[]));
    let after = plan.read(TASK_2_FILE);
    assert!(after.starts_with(&text));
    assert_eq!(headings(&after)[1], format!("### Amendment 2 — {TODAY}"));
    assert_amendments_pass_verify(&plan);
}

/// Task 2 amended tomorrow, then again (for `reason`) with the clock a day earlier: refused,
/// since appending would backdate, with `words` in the message.
fn backdated_amendment_refused(plan: &Plan, reason: &str, words: &[&str]) {
    amended(TOMORROW_NOW, plan, &amend_args("2", &[]));
    refused(NOW, plan, &amend_args("2", &["--reason", reason]), 1, words);
}

#[test]
fn an_amendment_is_never_backdated_behind_a_later_dated_one() {
    let plan = Plan::amendable(PlanFormat::Full);
    backdated_amendment_refused(
        &plan,
        "another change",
        &[
            "dated 2026-06-10, after today (2026-06-09)",
            "backdated",
            TASK_2_FILE,
        ],
    );
}

#[test]
fn the_same_amendment_run_twice_is_recorded_once() {
    // A rerun (after a crash between the markdown and the state) appends nothing twice.
    let plan = Plan::amendable(PlanFormat::Full);
    amended(NOW, &plan, &amend_args("2", &[]));
    let (task, progress) = (plan.read(TASK_2_FILE), plan.read("PROGRESS.md"));
    let run = amended(NOW, &plan, &amend_args("2", &[]));
    assert!(run.stdout.contains("not appended again"), "{}", run.stdout);
    assert_eq!(plan.read(TASK_2_FILE), task);
    assert_eq!(plan.read("PROGRESS.md"), progress);
}

// ---------------------------------------------------------------------------------------------
// Dispositions
// ---------------------------------------------------------------------------------------------

#[test]
fn a_revised_criterion_needs_the_revised_text() {
    let plan = Plan::amendable(PlanFormat::Full);
    let args = amend_args("2", &["--disposition", "revised criterion"]);
    refused(NOW, &plan, &args, 1, &["--revised"]);
}

#[test]
fn a_deferred_requirement_names_an_existing_other_destination_task() {
    let plan = Plan::amendable(PlanFormat::Full);
    let deferred = |destination: Option<&'static str>| {
        let mut extra = vec!["--disposition", "deferred requirement"];
        if let Some(d) = destination {
            extra.extend(["--destination", d]);
        }
        amend_args("2", &extra)
    };
    refused(
        NOW,
        &plan,
        &deferred(None),
        1,
        &["--destination", "destination task"],
    );
    refused(
        NOW,
        &plan,
        &deferred(Some("9")),
        1,
        &["no task 9", "(--destination)"],
    );
    refused(
        NOW,
        &plan,
        &deferred(Some("2")),
        1,
        &["task itself", "(--destination)"],
    );
    // A destination with another disposition is a usage error.
    refused(
        NOW,
        &plan,
        &amend_args("2", &["--destination", "3"]),
        2,
        &["deferred requirement"],
    );
    amended(NOW, &plan, &deferred(Some("4")));
    let text = plan.read(TASK_2_FILE);
    assert!(
        text.contains("- Disposition: deferred requirement\n- Destination: Task 4\n"),
        "{text}"
    );
    assert_amendments_pass_verify(&plan);
}

#[test]
fn an_unexecuted_scenario_cannot_preserve_passing_evidence() {
    let plan = Plan::amendable(PlanFormat::Full);
    // The amendment of an unexecuted scenario that `--preserve`s or `--invalidate`s the gate.
    let unexecuted = |keeping: &'static str| {
        amend_args(
            "2",
            &[
                "--disposition",
                "unexecuted scenario",
                keeping,
                "cargo test",
            ],
        )
    };
    refused(
        NOW,
        &plan,
        &unexecuted("--preserve"),
        1,
        &["unexecuted scenario is no passing evidence", "(--preserve)"],
    );
    // Invalidating it instead is what the spec asks; verify (DWP075) agrees.
    amended(NOW, &plan, &unexecuted("--invalidate"));
    assert_amendments_pass_verify(&plan);
}

// ---------------------------------------------------------------------------------------------
// Invalidation
// ---------------------------------------------------------------------------------------------

#[test]
fn invalidation_prefixes_every_record_of_the_command_once_and_returns_the_task_to_pending() {
    let plan = Plan::amendable(PlanFormat::Full).with_task_2_gates();
    let run = amended(
        NOW,
        &plan,
        &amend_args(
            "2",
            &["--invalidate", "cargo test", "--preserve", "cargo clippy"],
        ),
    );
    assert!(run.stdout.contains("task 2 → pending"), "{}", run.stdout);
    let state = plan.state();
    let task = task_of(&state, 2);
    let evidence = field_strs(&task["gates"], "evidence");
    assert_eq!(
        evidence,
        [
            "invalidated by refine 2026-06-09: 9 passed, 3 failed",
            "0 warnings",
            "invalidated by refine 2026-06-09: 12 passed, 0 failed"
        ],
        "every record of the command keeps its place, prefixed; the other command untouched"
    );
    assert_eq!(task["status"], "pending");
    assert!(task.get("completed_at").is_none(), "{task:#}");
    assert_eq!(state["completed_count"], 1);
    assert_eq!(state["status"], "in_progress");
    assert_eq!(state["checkpoint"]["task"], 2);
    assert!(
        state["checkpoint"]["note"]
            .as_str()
            .unwrap()
            .contains("amendment 1 invalidated `cargo test`"),
        "{:#}",
        state["checkpoint"]
    );
    // The markdown follows: the box unchecked and the Plan Status count.
    let readme = plan.read("README.md");
    assert!(
        readme.contains("- [ ] Task 2: Synthetic task 2"),
        "{readme}"
    );
    assert!(readme.contains("Plan Status: 1/5"), "{readme}");
    let text = plan.read(TASK_2_FILE);
    assert!(
        text.contains("- Evidence invalidated: `cargo test`"),
        "{text}"
    );
    assert!(
        text.contains("- Evidence preserved: `cargo clippy`"),
        "{text}"
    );
    assert_amendments_pass_verify(&plan);

    // A second amendment invalidating the same command never prefixes twice.
    amended(
        NOW,
        &plan,
        &amend_args("2", &["--invalidate", "cargo test", "--reason", "again"]),
    );
    let state = plan.state();
    let gates = task_of(&state, 2)["gates"].as_array().unwrap().clone();
    assert_eq!(
        gates[0]["evidence"],
        "invalidated by refine 2026-06-09: 9 passed, 3 failed"
    );
    assert_eq!(headings(&plan.read(TASK_2_FILE)).len(), 2);
}

#[test]
fn invalidating_a_command_without_records_is_refused() {
    let plan = Plan::amendable(PlanFormat::Full);
    refused(
        NOW,
        &plan,
        &amend_args("2", &["--invalidate", "pnpm test"]),
        1,
        &["no gate record of `pnpm test`", "(--invalidate)"],
    );
}

#[test]
fn invalidation_obeys_the_guarded_updater_while_a_publication_is_in_progress() {
    let plan = Plan::amendable(PlanFormat::Full);
    fs::write(plan.path(".finalizing.json"), "{}").unwrap();
    refused(
        NOW,
        &plan,
        &amend_args("2", &[]),
        1,
        &["publication is in progress"],
    );
}

// ---------------------------------------------------------------------------------------------
// Lite
// ---------------------------------------------------------------------------------------------

#[test]
fn a_lite_amendment_goes_inside_the_task_section_of_the_readme() {
    let plan = Plan::amendable(PlanFormat::Lite);
    amended(
        NOW,
        &plan,
        &amend_args("2", &["--invalidate", "cargo test"]),
    );
    let readme = plan.read("README.md");
    let block = readme.find("### Amendment 1 — 2026-06-09").expect("block");
    let section_2 = readme.find("## Task 2:").expect("task 2 section");
    let section_3 = readme.find("## Task 3:").expect("task 3 section");
    assert!(section_2 < block && block < section_3, "{readme}");
    assert!(
        readme.contains("- [ ] Task 2: Synthetic task 2"),
        "{readme}"
    );
    assert!(readme.contains("Plan Status: 1/5"));
    assert_eq!(task_of(&plan.state(), 2)["status"], "pending");
    assert_amendments_pass_verify(&plan);
}

// ---------------------------------------------------------------------------------------------
// PROGRESS.md and output
// ---------------------------------------------------------------------------------------------

#[test]
fn every_amendment_is_mirrored_in_progress_md() {
    let plan = Plan::amendable(PlanFormat::Full);
    amended(NOW, &plan, &amend_args("2", &[]));
    let progress = plan.read("PROGRESS.md");
    let line = progress.lines().last().unwrap();
    assert_eq!(
        line,
        format!(
            "- {TODAY}: amendment 1 of task 2 in {PLAN_NAME} (Synthetic task 2): revised criterion, authority user; reason: the user narrowed the criterion"
        )
    );
}

#[test]
fn amend_json_is_one_document() {
    let plan = Plan::amendable(PlanFormat::Full);
    let mut args = amend_args("2", &[]);
    args.push("--json");
    let run = amended(NOW, &plan, &args);
    let document = common::document(&run.stdout);
    assert_eq!(document["dwp"], 2);
    assert_eq!(document["command"], "amend");
    assert_eq!(document["amend"]["number"], 1);
    assert_eq!(document["amend"]["date"], TODAY);
    assert_eq!(document["amend"]["disposition"], "revised_criterion");
    assert_eq!(document["amend"]["authority"], "user");
}

// ---------------------------------------------------------------------------------------------
// Refusals: nothing written
// ---------------------------------------------------------------------------------------------

#[test]
fn every_refused_amendment_changes_no_byte() {
    let plan = Plan::amendable(PlanFormat::Full);
    let zeros = "0".repeat(64);
    let cases: Vec<(Vec<&str>, i32, &[&str])> = vec![
        (amend_args("9", &[]), 1, &["no task 9", "(--task)"]),
        (
            amend_args("2", &["--affected", "2,7"]),
            1,
            &["no task 7", "(--affected)"],
        ),
        (
            amend_args("2", &["--affected", "two"]),
            2,
            &["not a task id"],
        ),
        (
            amend_args("2", &["--authority", "manager"]),
            2,
            &["user, developer, evidence"],
        ),
        (
            amend_args("2", &["--disposition", "waived"]),
            2,
            &["revised criterion"],
        ),
        (
            amend_args("2", &["--original", " "]),
            1,
            &["is empty", "(--original)"],
        ),
        (
            amend_args("2", &["--observed", "one\ntwo"]),
            1,
            &["several lines", "(--observed)"],
        ),
        (
            amend_args(
                "2",
                &["--invalidate", "cargo test", "--preserve", "cargo test"],
            ),
            1,
            &["both invalidated and preserved"],
        ),
        (
            amend_args("2", &["--expected-sha256", &zeros]),
            3,
            &["snapshot moved"],
        ),
        (
            amend_args("2", &["--expected-sha256", "abc"]),
            2,
            &["64 lower-case hex"],
        ),
    ];
    for (args, code, words) in cases {
        refused(NOW, &plan, &args, code, words);
    }
}

#[test]
fn an_invalid_state_is_refused_before_any_markdown_is_written() {
    let plan = Plan::amendable(PlanFormat::Full);
    plan.edit_state(|s| s["completed_count"] = json!(4));
    refused(NOW, &plan, &amend_args("2", &[]), 1, &["invariant"]);
}

#[test]
fn a_plan_folder_without_the_task_record_is_refused() {
    let plan = Plan::amendable(PlanFormat::Full);
    fs::remove_file(plan.path(TASK_2_FILE)).unwrap();
    refused(NOW, &plan, &amend_args("2", &[]), 1, &[TASK_2_FILE]);
    assert!(!Path::new(&plan.path(TASK_2_FILE)).exists());
}

#[test]
fn invalidation_returns_an_in_progress_task_to_pending() {
    let plan = Plan::amendable(PlanFormat::Full);
    let run = run_at(
        NOW,
        &plan,
        &["update", "--task", "3", "--status", "in_progress"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    plan.edit_state(|s| {
        s["tasks"][2]["gates"] = json!([{"command": "cargo test", "passes": true, "exit_code": 0,
            "last_run": NOW, "evidence": "3 passed, 0 failed"}]);
    });
    amended(
        NOW,
        &plan,
        &amend_args(
            "3",
            &["--disposition", "failed gate", "--invalidate", "cargo test"],
        ),
    );
    let state = plan.state();
    let task = task_of(&state, 3);
    assert_eq!(task["status"], "pending");
    assert_eq!(
        task["gates"][0]["evidence"],
        "invalidated by refine 2026-06-09: 3 passed, 0 failed"
    );
    assert!(
        plan.read("3.task_synthetic_3.md")
            .contains("### Amendment 1 — 2026-06-09")
    );
}

#[test]
fn lite_refusals_change_no_byte_of_the_readme() {
    let plan = Plan::amendable(PlanFormat::Lite);
    backdated_amendment_refused(&plan, "a day earlier", &["after today", "README.md"]);
    refused(
        TOMORROW_NOW,
        &plan,
        &amend_args("2", &["--invalidate", "pnpm test"]),
        1,
        &["no gate record of `pnpm test`"],
    );
}

#[test]
fn a_lite_readme_whose_task_list_is_indented_as_code_is_not_written_into() {
    // dwp reads an index indented four spaces (docs/plan-markdown.md) but never writes into
    // markdown it had to reinterpret: the amendment is refused and nothing changes.
    let plan = Plan::amendable(PlanFormat::Lite);
    let readme = plan.read("README.md");
    let indented: String = readme
        .lines()
        .map(|l| {
            if l.starts_with("- [") {
                format!("    {l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(plan.path("README.md"), indented).unwrap();
    refused(
        NOW,
        &plan,
        &amend_args("2", &[]),
        1,
        &[
            "indented four spaces",
            "renders as code",
            "hint: make the task's",
        ],
    );
}
