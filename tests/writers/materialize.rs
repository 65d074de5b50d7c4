//! `dwp init` and `dwp migrate` through the real binary (seed 003 "Placement": manifest.json is
//! "written exactly once ... and MUST NOT change afterward except for a spec-version migration
//! recorded in PROGRESS.md"; "Schema versioning": v1 files "are never silently rewritten to v2").
//!
//! init: Full and Lite markdown-only plans (a synthetic plan with its JSON removed) materialize
//! into a pair `dwp validate` accepts and `dwp verify` finds conformant. migrate: v1 → v2 and
//! v1 → v5 pairs that validate. Every refusal leaves every byte (and the absence of a file) as
//! it was.

use crate::common;
use crate::common::{NOW, Plan, Run, snapshot};
use dwp::plan::model::{Generation, PlanFormat};
use dwp::synth::SynthPlan;
use serde_json::{Value, json};
use std::fs;
use std::path::Path;

impl Plan {
    /// A synthetic plan of five pending tasks with its JSON files removed.
    fn markdown_only(name: &str, format: PlanFormat) -> Plan {
        let plan = Plan::from_synth(SynthPlan::new(name, 5).format(format));
        fs::remove_file(plan.path("manifest.json")).unwrap();
        fs::remove_file(plan.path("state.json")).unwrap();
        plan
    }

    fn v1(name: &str) -> Plan {
        Plan::from_synth(
            SynthPlan::new(name, 5)
                .completed(2)
                .generation(Generation::V1),
        )
    }

    /// Rewrite the JSON document `name` by hand, pretty-printed without a final newline.
    fn edit_json(&self, name: &str, edit: impl FnOnce(&mut Value)) {
        let mut value = self.json(name);
        edit(&mut value);
        fs::write(self.path(name), serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    }
}

/// `dwp COMMAND PLAN ARGS...` with HOME the plan's temporary folder and a user name and an API
/// key in the environment (which nothing may write down).
fn dwp_with_secrets(plan: &Plan, args: &[&str]) -> Run {
    common::dwp()
        .home(plan.root())
        .env("USER", "secret-user")
        .env("ANTHROPIC_API_KEY", "sk-secret")
        .on_plan(&plan.dir, args)
        .run_utf8()
}

fn succeeded(plan: &Plan, args: &[&str]) -> Run {
    let run = dwp_with_secrets(plan, args);
    assert_eq!(run.code, 0, "dwp {args:?}\n{}\n{}", run.stdout, run.stderr);
    assert!(!plan.path("state.json.lock").exists());
    run
}

/// Exit `code`, a `dwp init: ...` or `dwp migrate: ...` message holding `words`, and every byte
/// (and the absence of a file) as it was.
fn refused(plan: &Plan, args: &[&str], code: i32, words: &[&str]) {
    common::refused(&plan.dir, args[0], code, words, || {
        dwp_with_secrets(plan, args)
    });
}

fn assert_validates_and_verifies(plan: &Plan) {
    let run = dwp_with_secrets(plan, &["validate"]);
    assert_eq!(run.code, 0, "validate:\n{}\n{}", run.stdout, run.stderr);
    let run = dwp_with_secrets(plan, &["verify", "--json"]);
    assert_eq!(run.code, 0, "verify:\n{}\n{}", run.stdout, run.stderr);
}

// ---------------------------------------------------------------------------------------------
// init
// ---------------------------------------------------------------------------------------------

#[test]
fn init_materializes_a_full_markdown_only_plan() {
    let plan = Plan::markdown_only("PLAN_init_full", PlanFormat::Full);
    let run = succeeded(
        &plan,
        &["init", "--agent", "claude-code", "--model", "fable-5"],
    );
    assert!(
        run.stdout.contains("PLAN_init_full materialized"),
        "{}",
        run.stdout
    );
    assert_validates_and_verifies(&plan);
    let manifest = plan.json("manifest.json");
    assert_eq!(
        manifest["schema"],
        "https://deepworkplan.com/schema/plan-manifest/v5.json"
    );
    assert_eq!(manifest["spec_version"], "5.0.0");
    assert_eq!(manifest["name"], "PLAN_init_full");
    assert_eq!(manifest["title"], "Synthetic plan of 5 tasks");
    assert_eq!(manifest["plan_format"], "full");
    assert_eq!(manifest["rigor"], "standard");
    assert_eq!(manifest["archetype"], "individual");
    assert_eq!(manifest["created_at"], NOW);
    assert_eq!(manifest["task_count"], 5);
    let state = plan.json("state.json");
    assert_eq!(state["format"], "full");
    assert_eq!(state["materialization"], "ready");
    assert_eq!(state["approval"], "approved");
    assert_eq!(state["status"], "pending");
    for (i, task) in state["tasks"].as_array().unwrap().iter().enumerate() {
        assert_eq!(task["status"], "pending");
        assert_eq!(task["locator"]["kind"], "file");
        assert_eq!(task["gates"], json!([]));
        assert_eq!(task["id"], i + 1);
    }
    assert_eq!(
        state["tasks"][0]["locator"]["value"],
        "1.task_synthetic_1.md"
    );
    assert_eq!(state["tasks"][4]["title"], "Final review");
    let progress = fs::read_to_string(plan.path("PROGRESS.md")).unwrap();
    assert!(
        progress.contains("materialized by `dwp init`"),
        "{progress}"
    );
}

#[test]
fn init_materializes_a_lite_markdown_only_plan() {
    let plan = Plan::markdown_only("PLAN_init_lite", PlanFormat::Lite);
    succeeded(&plan, &["init"]);
    assert_validates_and_verifies(&plan);
    assert_eq!(plan.json("manifest.json")["plan_format"], "lite");
    let state = plan.json("state.json");
    assert_eq!(state["format"], "lite");
    assert_eq!(
        state["tasks"][2]["locator"],
        json!({"kind": "inline", "value": "#task-3"})
    );
}

#[test]
fn init_writes_the_manifest_once() {
    let plan = Plan::markdown_only("PLAN_init_once", PlanFormat::Full);
    succeeded(&plan, &["init"]);
    refused(&plan, &["init"], 1, &["manifest.json", "already exists"]);
    // A state without a manifest (an interrupted init) is never overwritten either.
    fs::remove_file(plan.path("manifest.json")).unwrap();
    refused(&plan, &["init"], 1, &["state.json", "already exists"]);
}

#[test]
fn init_created_by_comes_only_from_the_flags() {
    let plan = Plan::markdown_only("PLAN_init_creator", PlanFormat::Full);
    succeeded(&plan, &["init", "--agent", "claude-code"]);
    assert_eq!(
        plan.json("manifest.json")["created_by"],
        json!({"agent": "claude-code"})
    );
    let text = fs::read_to_string(plan.path("manifest.json")).unwrap()
        + &fs::read_to_string(plan.path("state.json")).unwrap();
    assert!(
        !text.contains("secret"),
        "nothing from the environment:\n{text}"
    );

    let plan = Plan::markdown_only("PLAN_init_anonymous", PlanFormat::Full);
    succeeded(&plan, &["init"]);
    assert!(plan.json("manifest.json").get("created_by").is_none());
    assert!(plan.json("state.json").get("updated_by").is_none());
}

#[test]
fn init_takes_approval_archetype_and_rigor_from_the_readme() {
    let plan = Plan::markdown_only("PLAN_init_variables", PlanFormat::Full);
    plan.edit("README.md", |t| {
        t.replace("| Approval | approved |\n", "").replace(
            "| Rigor | standard |",
            "| Rigor | deep |\n| Archetype | agent-workspace |",
        )
    });
    succeeded(&plan, &["init"]);
    let manifest = plan.json("manifest.json");
    assert_eq!(manifest["rigor"], "deep");
    assert_eq!(manifest["archetype"], "agent-workspace");
    assert_eq!(
        plan.json("state.json")["approval"],
        "pending",
        "no Approval row: pending"
    );
}

#[test]
fn init_refuses_a_plan_variable_it_cannot_read() {
    let plan = Plan::markdown_only("PLAN_init_bad_rigor", PlanFormat::Full);
    plan.edit("README.md", |t| {
        t.replace("| Rigor | standard |", "| Rigor | extreme |")
    });
    refused(
        &plan,
        &["init"],
        1,
        &["Rigor row says `extreme`", "README.md:"],
    );
    assert!(!plan.path("manifest.json").exists());
}

#[test]
fn init_refuses_a_standard_newer_than_dwp() {
    let plan = Plan::markdown_only("PLAN_init_newer", PlanFormat::Full);
    plan.edit("README.md", |t| {
        t.replace("DWP spec 5.0.0", "DWP spec 6.1.0")
    });
    refused(&plan, &["init"], 1, &["6.1.0", "newer than this tool"]);
    assert!(!plan.path("manifest.json").exists());
    assert!(!plan.path("state.json").exists());
}

#[test]
fn init_refuses_a_plan_without_a_declared_standard() {
    let plan = Plan::markdown_only("PLAN_init_no_standard", PlanFormat::Full);
    plan.edit("README.md", |t| {
        t.replace("**Standard:** DWP spec 5.0.0\n", "")
    });
    refused(&plan, &["init"], 1, &["declares no standard"]);
}

#[test]
fn init_refuses_a_folder_name_that_is_not_a_plan_name() {
    for name in ["PLAN_Upper_case", "PLAN_single", "plan_no_prefix"] {
        let plan = Plan::markdown_only(name, PlanFormat::Full);
        refused(&plan, &["init"], 1, &[name, "not a plan name"]);
    }
}

#[test]
fn init_refuses_a_full_index_line_without_its_task_file() {
    let plan = Plan::markdown_only("PLAN_init_missing_file", PlanFormat::Full);
    fs::remove_file(plan.path("3.task_synthetic_3.md")).unwrap();
    refused(
        &plan,
        &["init"],
        1,
        &["3.task_synthetic_3.md", "not a file"],
    );
}

#[test]
fn init_json_is_one_document() {
    let plan = Plan::markdown_only("PLAN_init_json", PlanFormat::Lite);
    let run = succeeded(&plan, &["init", "--json"]);
    let document = common::document(&run.stdout);
    assert_eq!(document["dwp"], 2);
    assert_eq!(document["command"], "init");
    assert_eq!(document["init"]["task_count"], 5);
}

// ---------------------------------------------------------------------------------------------
// migrate
// ---------------------------------------------------------------------------------------------

#[test]
fn migrate_converts_a_v1_pair_to_v2_and_to_v5() {
    for to in ["v2", "v5"] {
        let plan = Plan::v1("PLAN_migrate_pair");
        let manifest_before = plan.json("manifest.json");
        succeeded(&plan, &["migrate", "--to", to]);
        let run = dwp_with_secrets(&plan, &["validate"]);
        assert_eq!(run.code, 0, "{to}: {}\n{}", run.stdout, run.stderr);
        let manifest = plan.json("manifest.json");
        assert_eq!(
            manifest["schema"],
            format!("https://deepworkplan.com/schema/plan-manifest/{to}.json")
        );
        assert_eq!(manifest["plan_format"], "full");
        assert_eq!(manifest["created_at"], manifest_before["created_at"]);
        assert_eq!(manifest["spec_version"], manifest_before["spec_version"]);
        let state = plan.json("state.json");
        assert_eq!(
            state["schema"],
            format!("https://deepworkplan.com/schema/plan-state/{to}.json")
        );
        assert_eq!(state["format"], "full");
        assert_eq!(state["materialization"], "ready");
        assert_eq!(
            state["approval"], "approved",
            "from the README's Approval row"
        );
        assert_eq!(state["promotion"], Value::Null);
        let task = &state["tasks"][0];
        assert!(task.get("file").is_none());
        assert_eq!(
            task["locator"],
            json!({"kind": "file", "value": "1.task_synthetic_1.md"})
        );
        assert_eq!(task["status"], "completed");
        assert_eq!(state["tasks"][3]["gates"], json!([]));
        let progress = fs::read_to_string(plan.path("PROGRESS.md")).unwrap();
        assert!(
            progress.contains(&format!(
                "`dwp migrate --to {to}`: manifest.json and state.json v1 → {to}"
            )),
            "{progress}"
        );
    }
}

#[test]
fn migrate_leaves_approval_absent_when_the_readme_records_none() {
    let plan = Plan::v1("PLAN_migrate_no_approval");
    plan.edit("README.md", |t| t.replace("| Approval | approved |\n", ""));
    succeeded(&plan, &["migrate", "--to", "v5"]);
    assert!(plan.json("state.json").get("approval").is_none());
    assert_eq!(dwp_with_secrets(&plan, &["validate"]).code, 0);
}

#[test]
fn migrate_finishes_a_migration_interrupted_between_its_writes() {
    let plan = Plan::v1("PLAN_migrate_resume");
    let v1_manifest = fs::read(plan.path("manifest.json")).unwrap();
    succeeded(&plan, &["migrate", "--to", "v5"]);
    let v5_state = fs::read(plan.path("state.json")).unwrap();
    // As if the crash came after the state and before the manifest.
    fs::write(plan.path("manifest.json"), &v1_manifest).unwrap();
    succeeded(&plan, &["migrate", "--to", "v5"]);
    assert_eq!(fs::read(plan.path("state.json")).unwrap(), v5_state);
    assert_eq!(plan.json("manifest.json")["plan_format"], "full");
    assert_eq!(dwp_with_secrets(&plan, &["validate"]).code, 0);
}

#[test]
fn migrate_refuses_what_is_not_a_v1_plan() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_migrate_v5", 3));
    refused(
        &plan,
        &["migrate", "--to", "v2"],
        1,
        &["is v5", "only a v1 plan migrates"],
    );
    let plan = Plan::from_synth(SynthPlan::new("PLAN_migrate_v2", 3).generation(Generation::V2));
    refused(&plan, &["migrate", "--to", "v5"], 1, &["is v2"]);
}

#[test]
fn migrating_to_the_generation_a_plan_already_has_is_no_change() {
    for (name, generation, to) in [
        ("PLAN_migrate_again_v5", Generation::V5, "v5"),
        ("PLAN_migrate_again_v2", Generation::V2, "v2"),
    ] {
        let plan = Plan::from_synth(SynthPlan::new(name, 3).generation(generation));
        let before = snapshot(&plan.dir);
        let run = succeeded(&plan, &["migrate", "--to", to]);
        assert!(
            run.stdout.contains(&format!("is already {to} (no change)")),
            "{}",
            run.stdout
        );
        assert_eq!(snapshot(&plan.dir), before, "a replay writes nothing");
    }
    // A v1 plan migrated, then the same migration again.
    let plan = Plan::from_synth(SynthPlan::new("PLAN_migrate_twice", 3).generation(Generation::V1));
    succeeded(&plan, &["migrate", "--to", "v5"]);
    let before = snapshot(&plan.dir);
    let again = succeeded(&plan, &["migrate", "--to", "v5"]);
    assert!(again.stdout.contains("(no change)"), "{}", again.stdout);
    assert_eq!(snapshot(&plan.dir), before);
}

#[test]
fn migrate_refuses_a_target_other_than_v2_or_v5() {
    let plan = Plan::v1("PLAN_migrate_target");
    for to in ["v1", "v3", "v6", "5"] {
        refused(&plan, &["migrate", "--to", to], 2, &["v2 or v5"]);
    }
}

#[test]
fn migrate_refuses_a_plan_newer_than_dwp() {
    let plan = Plan::v1("PLAN_migrate_newer");
    plan.edit_json("manifest.json", |m| {
        m["schema"] = json!("https://deepworkplan.com/schema/plan-manifest/v6.json");
    });
    refused(
        &plan,
        &["migrate", "--to", "v5"],
        1,
        &["newer than this tool"],
    );

    let plan = Plan::v1("PLAN_migrate_newer_standard");
    plan.edit("README.md", |t| {
        t.replace("DWP spec 2.2.0", "DWP spec 7.0.0")
    });
    refused(
        &plan,
        &["migrate", "--to", "v5"],
        1,
        &["7.0.0", "newer than this tool"],
    );
}

#[test]
fn migrate_refuses_invalid_input() {
    let plan = Plan::v1("PLAN_migrate_invalid");
    plan.edit_json("state.json", |s| s["completed_count"] = json!(4));
    refused(&plan, &["migrate", "--to", "v5"], 1, &["invariant"]);

    let plan = Plan::v1("PLAN_migrate_not_json");
    fs::write(plan.path("manifest.json"), "{").unwrap();
    refused(&plan, &["migrate", "--to", "v2"], 1, &["manifest"]);

    let plan = Plan::v1("PLAN_migrate_finalizing");
    fs::write(plan.path(".finalizing.json"), "{}").unwrap();
    refused(
        &plan,
        &["migrate", "--to", "v5"],
        1,
        &["publication is in progress"],
    );
}

#[test]
fn no_other_command_migrates_a_v1_plan_silently() {
    let plan = Plan::v1("PLAN_never_silently");
    let manifest = fs::read(plan.path("manifest.json")).unwrap();
    let v1_state = "https://deepworkplan.com/schema/plan-state/v1.json";
    succeeded(&plan, &["update", "--task", "3", "--status", "in_progress"]);
    assert_eq!(plan.json("state.json")["schema"], v1_state);
    succeeded(&plan, &["reconcile", "--write"]);
    succeeded(
        &plan,
        &[
            "amend",
            "--task",
            "3",
            "--original",
            "a",
            "--observed",
            "b",
            "--disposition",
            "failed gate",
            "--reason",
            "c",
            "--authority",
            "developer",
            "--affected",
            "3",
        ],
    );
    succeeded(
        &plan,
        &[
            "update",
            "--task",
            "3",
            "--status",
            "completed",
            "--gate",
            "cargo test|0|9 passed",
        ],
    );
    let state = plan.json("state.json");
    assert_eq!(state["schema"], v1_state);
    assert!(state["tasks"][0].get("locator").is_none());
    assert!(state.get("format").is_none());
    assert_eq!(fs::read(plan.path("manifest.json")).unwrap(), manifest);
    // dwp init never touches an existing pair either.
    refused(&plan, &["init"], 1, &["already exists"]);
    assert!(Path::new(&plan.path("manifest.json")).exists());
}

// ---------------------------------------------------------------------------------------------
// init on plans as they are written (issue #12)
// ---------------------------------------------------------------------------------------------

/// A markdown-only plan of five tasks whose first `completed` boxes are checked (their logs
/// record a timestamp and a gate record).
fn markdown_only_done(name: &str, completed: usize) -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(name, 5).completed(completed));
    fs::remove_file(plan.path("manifest.json")).unwrap();
    fs::remove_file(plan.path("state.json")).unwrap();
    plan
}

#[test]
fn init_records_the_checked_boxes_as_they_are() {
    let plan = markdown_only_done("PLAN_init_checked", 2);
    let run = succeeded(&plan, &["init"]);
    assert!(
        run.stdout.contains("5 tasks (2 completed"),
        "{}",
        run.stdout
    );
    let state = plan.json("state.json");
    assert_eq!(state["status"], "in_progress");
    assert_eq!(state["completed_count"], 2);
    let first = &state["tasks"][0];
    assert_eq!(first["status"], "completed");
    // The log's Timestamp and Gate record; the arrow form records no exit code: none invented.
    assert_eq!(first["completed_at"], "2026-06-09T14:15:00Z");
    assert_eq!(first["gates"][0]["command"], "cargo test");
    assert_eq!(first["gates"][0]["evidence"], "11 passed, 0 failed");
    assert_eq!(first["gates"][0]["exit_code"], Value::Null);
    assert_eq!(state["tasks"][2]["status"], "pending");
    // The markdown and the state agree at once: no reconcile step.
    let run = dwp_with_secrets(&plan, &["reconcile", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(dwp_with_secrets(&plan, &["validate"]).code, 0);
}

#[test]
fn init_of_a_fully_checked_plan_materializes_it_completed_and_its_hint_runs() {
    let plan = markdown_only_done("PLAN_init_all_checked", 5);
    let run = succeeded(&plan, &["init"]);
    let state = plan.json("state.json");
    assert_eq!(state["status"], "completed");
    assert_eq!(state["checkpoint"]["task"], 5);
    assert_eq!(state["checkpoint"]["step"], "done");
    assert_eq!(dwp_with_secrets(&plan, &["validate"]).code, 0);
    // The hint names `dwp verify DIR`: it runs and lists what publication still needs.
    let hint = run
        .stdout
        .lines()
        .find(|l| l.contains("every box is checked"))
        .unwrap();
    let dir = plan.dir.display().to_string();
    assert!(hint.contains(&format!("`dwp verify {dir}`")), "{hint}");
    let verify = dwp_with_secrets(&plan, &["verify", "--json"]);
    assert_eq!(verify.code, 1, "{}", verify.stdout);
    assert!(
        verify.stdout.contains("DWP081"),
        "a receipt is what publication adds"
    );
}

#[test]
fn init_takes_the_standard_from_the_flag_when_the_readme_has_none_and_says_so() {
    let plan = Plan::markdown_only("PLAN_init_flag_standard", PlanFormat::Full);
    plan.edit("README.md", |t| {
        t.replace("**Standard:** DWP spec 5.0.0\n", "")
    });
    refused(
        &plan,
        &["init"],
        1,
        &["declares no standard", "--standard X.Y.Z"],
    );
    let run = succeeded(&plan, &["init", "--standard", "2.4.0"]);
    assert!(
        run.stdout
            .contains("DWP spec 2.4.0 (assumed from --standard"),
        "{}",
        run.stdout
    );
    assert_eq!(plan.json("manifest.json")["spec_version"], "2.4.0");
    let progress = fs::read_to_string(plan.path("PROGRESS.md")).unwrap();
    assert!(
        progress.contains("DWP spec 2.4.0 from --standard"),
        "{progress}"
    );
}

#[test]
fn init_refuses_a_standard_flag_that_disagrees_with_the_readme() {
    let plan = Plan::markdown_only("PLAN_init_flag_disagrees", PlanFormat::Full);
    refused(
        &plan,
        &["init", "--standard", "2.4.0"],
        2,
        &["5.0.0", "--standard 2.4.0"],
    );
    assert!(!plan.path("state.json").exists());
}

#[test]
fn init_refuses_a_standard_outside_the_dwp_series() {
    let plan = Plan::markdown_only("PLAN_init_not_a_standard", PlanFormat::Full);
    plan.edit("README.md", |t| {
        t.replace("DWP spec 5.0.0", "DWP spec 3.1.0")
    });
    refused(&plan, &["init"], 1, &["3.1.0", "not a DWP standard"]);
    plan.edit("README.md", |t| {
        t.replace("**Standard:** DWP spec 3.1.0\n", "")
    });
    refused(
        &plan,
        &["init", "--standard", "1.2.0"],
        1,
        &["1.2.0", "not a DWP standard"],
    );
}

#[test]
fn init_creates_the_plan_files_a_markdown_only_plan_lacks_and_says_so() {
    let plan = Plan::markdown_only("PLAN_init_creates_files", PlanFormat::Full);
    fs::remove_file(plan.path("PROMPTS.md")).unwrap();
    fs::remove_file(plan.path("PROGRESS.md")).unwrap();
    fs::remove_dir_all(plan.path("analysis_results")).unwrap();
    let run = succeeded(&plan, &["init"]);
    assert!(
        run.stdout
            .contains("created (absent before): PROMPTS.md, PROGRESS.md, analysis_results/"),
        "{}",
        run.stdout
    );
    assert!(plan.path("analysis_results").is_dir());
    assert!(
        fs::read_to_string(plan.path("PROMPTS.md"))
            .unwrap()
            .starts_with("# Prompts")
    );
    let progress = fs::read_to_string(plan.path("PROGRESS.md")).unwrap();
    assert!(
        progress.starts_with("# Progress\n") && progress.contains("materialized by `dwp init`")
    );
    assert_validates_and_verifies(&plan);
}

#[test]
fn init_refuses_a_task_file_the_index_does_not_name() {
    let plan = Plan::markdown_only("PLAN_init_unindexed_file", PlanFormat::Full);
    fs::write(plan.path("6.task_forgotten.md"), "# Task 6: Forgotten\n").unwrap();
    refused(
        &plan,
        &["init"],
        1,
        &["6.task_forgotten.md", "does not name"],
    );
}

#[test]
fn init_refuses_a_task_list_it_cannot_read_whole() {
    let plan = Plan::markdown_only("PLAN_init_unreadable_line", PlanFormat::Full);
    plan.edit("README.md", |t| {
        t.replace("- [ ] Task 2:", "- [ ] Update the changelog\n- [ ] Task 2:")
    });
    refused(
        &plan,
        &["init"],
        1,
        &["Update the changelog", "names no task number", "README.md:"],
    );
}

#[test]
fn init_refuses_a_task_without_a_title_anywhere() {
    let plan = Plan::markdown_only("PLAN_init_no_title", PlanFormat::Full);
    plan.edit("README.md", |t| {
        t.replace("Task 2: Synthetic task 2 —", "Task 2 —")
    });
    let file = plan.path("2.task_synthetic_2.md");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(
        &file,
        text.replace("# Task 2: Synthetic task 2", "# Task 2"),
    )
    .unwrap();
    refused(
        &plan,
        &["init"],
        1,
        &["task 2 has no title", "Task 2: Title"],
    );
}

#[test]
fn init_refuses_task_files_outside_the_plan_folder_itself() {
    let plan = Plan::markdown_only("PLAN_init_subfolder", PlanFormat::Full);
    fs::create_dir(plan.path("tasks")).unwrap();
    fs::rename(
        plan.path("1.task_synthetic_1.md"),
        plan.path("tasks/1.task_synthetic_1.md"),
    )
    .unwrap();
    plan.edit("README.md", |t| {
        t.replace("(1.task_synthetic_1.md)", "(tasks/1.task_synthetic_1.md)")
    });
    refused(
        &plan,
        &["init"],
        1,
        &["tasks/1.task_synthetic_1.md", "plan folder itself"],
    );
}

#[test]
fn init_takes_the_title_without_its_label_and_log_times_written_to_the_minute() {
    let plan = markdown_only_done("PLAN_init_title_times", 3);
    plan.edit("README.md", |t| {
        t.replace(
            "# Synthetic plan of 5 tasks",
            "# Plan: Synthetic plan of 5 tasks",
        )
    });
    let first = plan.path("1.task_synthetic_1.md");
    let text = fs::read_to_string(&first).unwrap();
    fs::write(
        &first,
        text.replace(
            "Timestamp: 2026-06-09T14:15:00Z",
            "Timestamp: 2026-06-09T16:15+02:00",
        ),
    )
    .unwrap();
    let second = plan.path("2.task_synthetic_2.md");
    let text = fs::read_to_string(&second).unwrap();
    fs::write(
        &second,
        text.replace("Timestamp: 2026-06-09T14:25:00Z", "Timestamp: yesterday"),
    )
    .unwrap();
    let run = succeeded(&plan, &["init"]);
    assert_eq!(
        plan.json("manifest.json")["title"],
        "Synthetic plan of 5 tasks"
    );
    let state = plan.json("state.json");
    assert_eq!(
        state["tasks"][0]["completed_at"],
        "2026-06-09T16:15:00+02:00"
    );
    // No readable time: the time of init, and the output says so.
    assert_eq!(state["tasks"][1]["completed_at"], NOW);
    assert!(
        run.stdout.contains("completed at the time of `dwp init` (the log has no readable `Timestamp:` line): task 2"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_writer_on_a_plan_without_state_points_to_init_and_the_hint_runs() {
    let plan = Plan::markdown_only("PLAN_writer_without_state", PlanFormat::Full);
    for args in [
        vec!["reconcile", "--write"],
        vec!["update", "--task", "1", "--status", "in_progress"],
    ] {
        let before = snapshot(&plan.dir);
        let run = dwp_with_secrets(&plan, &args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("has no state layer"), "{}", run.stderr);
        assert!(snapshot(&plan.dir) == before, "{args:?} wrote");
        // The hint names `dwp init DIR`: run it as written, once.
        let hint = run.stderr.lines().find(|l| l.contains("hint:")).unwrap();
        let command = hint.split('`').nth(1).unwrap();
        assert_eq!(command, format!("dwp init {}", plan.dir.display()));
    }
    let words: Vec<String> = vec!["init".into(), plan.dir.display().to_string()];
    let output = common::dwp().inherit_home().args(&words).output();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        dwp_with_secrets(&plan, &["reconcile"]).code,
        0,
        "in sync once materialized"
    );
}
