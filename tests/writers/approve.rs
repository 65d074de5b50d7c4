//! `dwp approve` through the real binary (issue #15): the approval recorded in state.json, the
//! README's Approval row and PROGRESS.md together; the update it unblocks; replay, the
//! compare-and-swap and every refusal with no byte changed; and `dwp reconcile` taking the
//! README's Approval row as markdown that wins.

use crate::common;
use crate::common::{NOW, Plan, Run, tree_digest};
use dwp::synth::SynthPlan;
use serde_json::json;

const PLAN_NAME: &str = "PLAN_cli_approve_rules";

/// Five tasks, the first two completed, awaiting approval: state.json says `pending` and so does
/// the README's Approval row (`| Approval | pending |`).
fn pending_plan() -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(PLAN_NAME, 5).completed(2));
    plan.edit_state(|s| s["approval"] = json!("pending"));
    plan.edit("README.md", |t| {
        assert!(t.contains("| Approval | approved |\n"), "{t}");
        t.replace("| Approval | approved |\n", "| Approval | pending |\n")
    });
    plan
}

fn succeeds(plan: &Plan, args: &[&str]) -> Run {
    let run = plan.dwp(args);
    assert_eq!(
        run.code, 0,
        "dwp {args:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(!plan.path("state.json.lock").exists());
    run
}

/// Exit `code`, a `dwp approve: WHAT (WHERE)` message and hint holding `words`, and no entry of
/// the plan folder changed.
fn refused(plan: &Plan, args: &[&str], code: i32, words: &[&str]) -> Run {
    let run = common::refused(&plan.dir, args[0], code, words, || plan.dwp(args));
    if code != 2 {
        run.assert_hinted();
    }
    run
}

fn approval_row(plan: &Plan) -> String {
    plan.read("README.md")
        .lines()
        .find(|l| l.contains("Approval"))
        .unwrap_or_default()
        .to_owned()
}

fn start_task_3() -> [&'static str; 5] {
    ["update", "--task", "3", "--status", "in_progress"]
}

#[test]
fn approval_sets_state_the_readme_row_and_a_progress_line_and_unblocks_the_update() {
    let plan = pending_plan();
    let refused_update = plan.dwp(&start_task_3());
    assert_eq!(refused_update.code, 1, "{}", refused_update.stderr);
    let updated_at = plan.state()["updated_at"].clone();

    let run = succeeds(&plan, &["approve", "--by", "Ann Lee"]);

    assert!(
        run.stdout.contains("approval pending → approved"),
        "{}",
        run.stdout
    );
    let state = plan.state();
    assert_eq!(state["approval"], "approved");
    assert_eq!(state["updated_at"], NOW);
    assert_ne!(state["updated_at"], updated_at);
    assert_eq!(
        approval_row(&plan),
        "| Approval | approved (Ann Lee, 2026-06-09) |"
    );
    let progress = plan.read("PROGRESS.md");
    let line = progress.lines().last().unwrap();
    assert!(
        line.starts_with(&format!("- {NOW}: {PLAN_NAME} approved by Ann Lee")),
        "{line}"
    );
    assert!(line.contains("approval pending → approved"), "{line}");
    // What was refused before the approval now goes through.
    succeeds(&plan, &start_task_3());
    assert_eq!(plan.state()["tasks"][2]["status"], "in_progress");
    // Markdown and state agree.
    succeeds(&plan, &["reconcile"]);
}

#[test]
fn pre_approved_records_pre_approved_in_state_and_readme() {
    let plan = pending_plan();
    succeeds(&plan, &["approve", "--by", "ann", "--pre-approved"]);
    assert_eq!(plan.state()["approval"], "pre_approved");
    assert_eq!(
        approval_row(&plan),
        "| Approval | pre-approved (ann, 2026-06-09) |"
    );
    succeeds(&plan, &["reconcile"]);
    succeeds(&plan, &start_task_3());
}

#[test]
fn the_readme_row_keeps_its_shape_emphasis_and_capital() {
    let plan = pending_plan();
    plan.edit("README.md", |t| {
        t.replace(
            "| Approval | pending |",
            "| **Approval** | Pending | asked on 2026-06-08 |",
        )
    });
    succeeds(&plan, &["approve", "--by", "ann"]);
    assert_eq!(
        approval_row(&plan),
        "| **Approval** | Approved (ann, 2026-06-09) | asked on 2026-06-08 |"
    );

    let plan = pending_plan();
    plan.edit("README.md", |t| {
        t.replace("| Approval | pending |\n", "").replace(
            "## Plan Variables",
            "**Approval:** pending\n\n## Plan Variables",
        )
    });
    succeeds(&plan, &["approve", "--by", "ann"]);
    assert_eq!(
        approval_row(&plan),
        "**Approval:** approved (ann, 2026-06-09)"
    );
    succeeds(&plan, &["reconcile"]);
}

#[test]
fn replaying_the_same_approval_is_no_change_and_writes_nothing() {
    let plan = pending_plan();
    succeeds(&plan, &["approve", "--by", "ann"]);
    let before = tree_digest(&plan.dir);
    let run = succeeds(&plan, &["approve", "--by", "ann"]);
    assert!(run.stdout.contains("(no change)"), "{}", run.stdout);
    let run = succeeds(&plan, &["approve", "--by", "someone else"]);
    assert!(run.stdout.contains("(no change)"), "{}", run.stdout);
    assert_eq!(tree_digest(&plan.dir), before, "a replay wrote");
}

#[test]
fn a_moved_snapshot_refuses_with_every_byte_unchanged() {
    let plan = pending_plan();
    let stale = "0".repeat(64);
    refused(
        &plan,
        &["approve", "--by", "ann", "--expected-sha256", &stale],
        3,
        &["the snapshot moved", &stale],
    );
    // The current hash is the one that passes.
    let current = common::sha256_hex(&std::fs::read(plan.path("state.json")).unwrap());
    succeeds(
        &plan,
        &["approve", "--by", "ann", "--expected-sha256", &current],
    );
}

#[test]
fn a_readme_without_an_approval_row_or_a_plan_variables_table_is_refused_unchanged() {
    let plan = pending_plan();
    plan.edit("README.md", |t| {
        let start = t.find("## Plan Variables").unwrap();
        let end = t.find("## Tasks").unwrap();
        format!("{}{}", &t[..start], &t[end..])
    });
    refused(
        &plan,
        &["approve", "--by", "ann"],
        1,
        &[
            "no Approval row and no Plan Variables table",
            "| Approval | pending |",
        ],
    );
}

#[test]
fn a_readme_without_an_approval_row_gets_one_in_its_plan_variables_table() {
    let plan = pending_plan();
    plan.edit("README.md", |t| t.replace("| Approval | pending |\n", ""));
    let run = succeeds(&plan, &["approve", "--by", "ann", "--json"]);
    assert_eq!(run.payload()["readme_edit"], "inserted");
    let readme = plan.read("README.md");
    assert!(
        readme.contains(
            "| Rigor | standard |\n| Approval | approved (ann, 2026-06-09) |\n\n## Tasks"
        ),
        "{readme}"
    );
    assert_eq!(plan.state()["approval"], "approved");
    succeeds(&plan, &["reconcile"]);
}

#[test]
fn an_approval_row_dwp_cannot_read_is_not_rewritten() {
    let plan = pending_plan();
    plan.edit("README.md", |t| {
        t.replace("| Approval | pending |", "| Approval | ask Bob |")
    });
    refused(&plan, &["approve", "--by", "ann"], 1, &["`ask Bob`"]);
}

#[test]
fn the_name_is_required_one_line_and_bounded() {
    let plan = pending_plan();
    let run = refused(&plan, &["approve"], 2, &["--by"]);
    assert!(run.stderr.contains("required"), "{}", run.stderr);
    refused(
        &plan,
        &["approve", "--by", "ann\nlee"],
        1,
        &["--by", "one line"],
    );
    refused(&plan, &["approve", "--by", "  "], 1, &["--by", "empty"]);
    refused(&plan, &["approve", "--by", "a|b"], 1, &["--by", "`|`"]);
    let long = "n".repeat(101);
    refused(
        &plan,
        &["approve", "--by", &long],
        1,
        &["--by", "at most 100"],
    );
}

#[test]
fn a_plan_not_materialized_or_invalid_or_publishing_is_refused() {
    let plan = pending_plan();
    plan.edit_state(|s| s["materialization"] = json!("materializing"));
    refused(&plan, &["approve", "--by", "ann"], 1, &["not ready"]);

    let plan = pending_plan();
    plan.edit("README.md", |t| {
        t.replace("Plan Status: 2/5", "Plan Status: materializing")
    });
    refused(
        &plan,
        &["approve", "--by", "ann"],
        1,
        &["partial materialization"],
    );

    let plan = pending_plan();
    plan.edit_state(|s| s["completed_count"] = json!(4));
    refused(&plan, &["approve", "--by", "ann"], 1, &["invariant"]);

    let plan = pending_plan();
    plan.write(".finalizing.json", "{}");
    let run = plan.dwp(&["approve", "--by", "ann"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert_eq!(plan.state()["approval"], "pending");
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let plan = pending_plan();
    let before = tree_digest(&plan.dir);
    let run = succeeds(&plan, &["approve", "--by", "ann", "--dry-run"]);
    assert!(
        run.stdout.contains("+  \"approval\": \"approved\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("+| Approval | approved (ann, 2026-06-09) |"),
        "{}",
        run.stdout
    );
    assert_eq!(tree_digest(&plan.dir), before);
}

#[test]
fn approve_json_is_one_document_and_so_is_its_refusal() {
    let plan = pending_plan();
    let run = succeeds(&plan, &["approve", "--by", "ann", "--json"]);
    let doc = run.json();
    assert_eq!(doc["dwp"], 2);
    assert_eq!(doc["command"], "approve");
    assert_eq!(doc["ok"], true);
    let approval = &doc["approve"];
    assert_eq!(approval["approval"], "approved");
    assert_eq!(approval["previous"], "pending");
    assert_eq!(approval["by"], "ann");
    assert_eq!(approval["at"], NOW);
    assert_eq!(approval["readme_edit"], "updated");
    assert_eq!(approval["changed"], true);
    assert_eq!(
        approval["new_sha256"],
        common::sha256_hex(&std::fs::read(plan.path("state.json")).unwrap())
    );

    let stale = "0".repeat(64);
    let run = plan.dwp(&[
        "approve",
        "--by",
        "ann",
        "--expected-sha256",
        &stale,
        "--json",
    ]);
    assert_eq!(run.code, 3);
    let doc = run.json();
    assert_eq!(
        (doc["command"].clone(), doc["ok"].clone()),
        (json!("approve"), json!(false))
    );
    assert_eq!(doc["exit"], 3);
}

#[test]
fn reconcile_reports_a_readme_approval_row_disagreeing_with_state_and_write_takes_the_readme() {
    // The case: the README row says approved, state.json still pending.
    let plan = pending_plan();
    plan.edit("README.md", |t| {
        t.replace("| Approval | pending |", "| Approval | approved |")
    });
    let run = plan.dwp(&["reconcile", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let report = run.payload().clone();
    let desync = report["desync"].as_array().unwrap();
    assert_eq!(desync.len(), 1, "{report:#}");
    assert_eq!(desync[0]["direction"], "approval drift");
    assert_eq!(desync[0]["markdown"], "approved");
    assert_eq!(desync[0]["state"], "pending");
    let message = desync[0]["message"].as_str().unwrap();
    assert!(
        message.contains("approved") && message.contains("pending"),
        "{message}"
    );
    assert!(desync[0]["line"].as_u64().is_some(), "{report:#}");

    let verify = plan.dwp(&["verify", "--json"]);
    assert_eq!(
        common::verify_codes(&verify.json()),
        ["DWP039", "DWP091"],
        "{}",
        verify.stdout
    );

    succeeds(&plan, &["reconcile", "--write"]);
    assert_eq!(plan.state()["approval"], "approved");
    let progress = plan.read("PROGRESS.md");
    assert!(progress.contains("- approval drift: "), "{progress}");
    let run = succeeds(&plan, &["reconcile"]);
    assert!(run.stdout.starts_with("in sync"), "{}", run.stdout);
    succeeds(&plan, &start_task_3());
}

#[test]
fn a_readme_without_an_approval_row_leaves_the_state_approval_as_it_is() {
    let plan = pending_plan();
    plan.edit("README.md", |t| t.replace("| Approval | pending |\n", ""));
    plan.edit_state(|s| s["approval"] = json!("approved"));
    let run = succeeds(&plan, &["reconcile"]);
    assert!(run.stdout.starts_with("in sync"), "{}", run.stdout);
}

#[test]
fn the_pending_update_hint_is_a_command_that_lets_the_update_through() {
    let plan = pending_plan();
    let run = plan.dwp(&start_task_3());
    assert_eq!(run.code, 1, "{}", run.stderr);
    let hint = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("  hint: "))
        .expect("a hint");
    let command = hint.split('`').nth(1).expect("a command in backticks");
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| {
            if w == "NAME" {
                "ann".to_owned()
            } else {
                w.to_owned()
            }
        })
        .collect();
    assert_eq!(words[..2], ["dwp", "approve"], "{hint}");
    assert_eq!(words[2], plan.dir.display().to_string(), "{hint}");

    let approve = common::dwp().args(&words[1..]).run_utf8();
    assert_eq!(approve.code, 0, "{}", approve.stderr);

    succeeds(&plan, &start_task_3());
}

#[test]
fn the_approval_pending_advisory_hints_dwp_approve() {
    let plan = pending_plan();
    let report = plan.dwp(&["verify", "--json"]).payload();
    let finding = &report["plans"][0]["findings"][0];
    assert_eq!(finding["code"], "DWP091", "{report:#}");
    let hint = finding["hint"].as_str().unwrap();
    let command = hint.split('`').nth(1).expect("a command in backticks");
    // The plan's own path is written in, so the hint runs as printed (NAME is the user's).
    let expected = format!("dwp approve {} --by NAME", plan.dir.display());
    assert_eq!(command, expected, "{hint}");
    let args: Vec<String> = command
        .split_whitespace()
        .skip(1)
        .map(|word| {
            if word == "NAME" {
                "ann".to_owned()
            } else {
                word.to_owned()
            }
        })
        .collect();
    assert_eq!(common::dwp().args(&args).run_utf8().code, 0);
    let after = plan.dwp(&["verify", "--json"]).json();
    assert!(common::verify_codes(&after).is_empty(), "{after:#}");
}

#[test]
fn a_v1_state_has_no_approval_field_and_is_refused() {
    let plan = Plan::from_synth(
        SynthPlan::new(PLAN_NAME, 3)
            .generation(dwp::plan::model::Generation::V1)
            .completed(1),
    );
    refused(
        &plan,
        &["approve", "--by", "ann"],
        1,
        &["v1", "dwp migrate"],
    );
}
