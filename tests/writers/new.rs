//! `dwp new PLAN_name --tasks TITLE...` through the real binary: one test per rule of issue #15.
//! The plan it makes is conformant as it stands (Full and Lite, one task and several), named by
//! a plan name, never written over an existing folder, ends with a Final Review, and is carried
//! from approval to publication by following `dwp next`.

use crate::common;
use crate::common::{
    NOW, dwp, fill_task_log, owned_strs, printed_dwp_lines, run_printed, snapshot, state_of,
    verify_codes,
};
use std::path::Path;

fn new_in(dir: &Path, args: &[&str]) -> common::Run {
    dwp().at(NOW).in_dir(dir).arg("new").args(args).run()
}

fn new_ok(dir: &Path, args: &[&str]) -> common::Run {
    let run = new_in(dir, args);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run
}

/// `dwp verify PLAN`: its exit code and finding codes.
fn verify(dir: &Path, plan: &str) -> (i32, Vec<String>) {
    let run = dwp()
        .at(NOW)
        .in_dir(dir)
        .args(["--json", "verify", plan])
        .run();
    (run.code, verify_codes(&run.json()))
}

fn assert_conformant_as_it_stands(format: &str, titles: &[&str]) {
    let root = tempfile::tempdir().unwrap();
    let mut args = vec!["PLAN_fresh_plan", "--format", format, "--tasks"];
    args.extend_from_slice(titles);
    new_ok(root.path(), &args);
    let (code, codes) = verify(root.path(), "PLAN_fresh_plan");
    assert_eq!(code, 0, "{format} {titles:?}: {codes:?}");
    assert_eq!(codes, ["DWP091"], "only the approval-pending advisory");
    let dir = root.path().join("PLAN_fresh_plan");
    for name in [
        "README.md",
        "PROGRESS.md",
        "PROMPTS.md",
        "manifest.json",
        "state.json",
    ] {
        assert!(dir.join(name).is_file(), "{name}");
    }
    assert!(dir.join("analysis_results").is_dir());
    let validate = dwp().at(NOW).arg("validate").arg(&dir).run();
    assert_eq!(validate.code, 0, "{}", validate.stdout);
}

#[test]
fn a_full_plan_of_one_task_is_conformant_as_it_stands() {
    assert_conformant_as_it_stands("full", &["Add the parser"]);
}

#[test]
fn a_full_plan_of_several_tasks_is_conformant_as_it_stands() {
    assert_conformant_as_it_stands(
        "full",
        &["Add the parser", "Wire the CLI", "Write the docs"],
    );
}

#[test]
fn a_lite_plan_of_one_task_is_conformant_as_it_stands() {
    assert_conformant_as_it_stands("lite", &["Add the parser"]);
}

#[test]
fn a_lite_plan_of_several_tasks_is_conformant_as_it_stands() {
    assert_conformant_as_it_stands("lite", &["Add the parser", "Wire the CLI", "Final review"]);
}

#[test]
fn the_readme_has_the_newest_standard_goal_context_variables_and_the_index() {
    let root = tempfile::tempdir().unwrap();
    new_ok(
        root.path(),
        &[
            "PLAN_fresh_plan",
            "--tasks",
            "Add the parser",
            "--goal",
            "Parse the config file.",
            "--context",
            "Config is hand-parsed today.",
        ],
    );
    let readme = std::fs::read_to_string(root.path().join("PLAN_fresh_plan/README.md")).unwrap();
    for part in [
        "**Standard:** DWP spec 5.0.0",
        "## Goal\n\nParse the config file.",
        "## Context\n\nConfig is hand-parsed today.",
        "| Plan Format | full |",
        "| Approval | pending |",
        "Plan Status: 0/2",
        "- [ ] Task 1: Add the parser — [1.task_add_the_parser.md](1.task_add_the_parser.md)",
        "- [ ] Task 2: Final review — [2.task_final_review.md](2.task_final_review.md)",
    ] {
        assert!(readme.contains(part), "{part:?} in:\n{readme}");
    }
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.path().join("PLAN_fresh_plan/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["spec_version"], "5.0.0");
    assert_eq!(manifest["name"], "PLAN_fresh_plan");
}

#[test]
fn a_final_review_is_appended_unless_the_last_title_is_one() {
    let root = tempfile::tempdir().unwrap();
    let run = new_ok(root.path(), &["PLAN_with_review", "--tasks", "One", "Two"]);
    assert!(
        run.stdout.contains("the Final Review appended"),
        "{}",
        run.stdout
    );
    let titles = |plan: &str| -> Vec<String> {
        state_of(&root.path().join(plan))["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(titles("PLAN_with_review"), ["One", "Two", "Final review"]);
    new_ok(
        root.path(),
        &[
            "PLAN_own_review",
            "--tasks",
            "One",
            "Final review of the release",
        ],
    );
    assert_eq!(
        titles("PLAN_own_review"),
        ["One", "Final review of the release"]
    );
}

#[test]
fn a_final_review_before_the_last_task_is_refused_and_nothing_is_made() {
    let root = tempfile::tempdir().unwrap();
    let run = new_in(
        root.path(),
        &["PLAN_bad_review", "--tasks", "Final review", "One"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    run.assert_stderr_says(&["dwp new: ", "Final Review but not the last task"]);
    assert!(snapshot(root.path()).is_empty());
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}

#[test]
fn a_name_that_is_not_a_plan_name_is_a_usage_error_naming_the_pattern() {
    let root = tempfile::tempdir().unwrap();
    for name in [
        "PLAN_Bad_name",
        "plan_lower_case",
        "PLAN_one",
        "PLAN_a_b_c_d_e_f",
    ] {
        let run = new_in(root.path(), &[name, "--tasks", "One"]);
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        run.assert_stderr_says(&["dwp new: ", "^PLAN_[a-z0-9]+(_[a-z0-9]+){1,4}$"]);
    }
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}

#[test]
fn an_existing_folder_is_refused_and_its_bytes_are_unchanged() {
    let root = tempfile::tempdir().unwrap();
    new_ok(root.path(), &["PLAN_taken_name", "--tasks", "One"]);
    let before = snapshot(root.path());
    let run = new_in(
        root.path(),
        &["PLAN_taken_name", "--format", "lite", "--tasks", "Other"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    run.assert_stderr_says(&["dwp new: ", "already exists", "(PLAN_taken_name)", "hint: "]);
    assert_eq!(snapshot(root.path()), before);
    // An empty folder, or a file, of that name is never written into either.
    std::fs::create_dir(root.path().join("PLAN_empty_folder")).unwrap();
    std::fs::write(root.path().join("PLAN_a_file"), "x").unwrap();
    let before = snapshot(root.path());
    for name in ["PLAN_empty_folder", "PLAN_a_file"] {
        assert_eq!(new_in(root.path(), &[name, "--tasks", "One"]).code, 1);
    }
    assert_eq!(snapshot(root.path()), before);
    assert!(
        std::fs::read_dir(root.path().join("PLAN_empty_folder"))
            .unwrap()
            .next()
            .is_none()
    );
}

#[test]
fn a_killed_run_leaves_a_hidden_staging_folder_that_the_next_dwp_new_removes() {
    let root = tempfile::tempdir().unwrap();
    // What a run killed before its rename leaves: its staging folder, under a pid that is gone.
    let leftover = root.path().join(".PLAN_after_crash.dwp-new.999999999");
    std::fs::create_dir_all(leftover.join("analysis_results")).unwrap();
    std::fs::write(leftover.join("README.md"), "# half made\n").unwrap();
    let (code, _) = verify(root.path(), ".PLAN_after_crash.dwp-new.999999999");
    assert_ne!(code, 0, "a half-made folder is never conformant");
    new_ok(root.path(), &["PLAN_after_crash", "--tasks", "One"]);
    assert!(!leftover.exists(), "the leftover is removed");
    let names: Vec<String> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["PLAN_after_crash"]);
}

#[test]
fn the_json_document_names_the_plan_its_tasks_and_the_next_lines() {
    let root = tempfile::tempdir().unwrap();
    let run = dwp()
        .at(NOW)
        .in_dir(root.path())
        .args([
            "--json",
            "new",
            "PLAN_json_plan",
            "--format",
            "lite",
            "--tasks",
            "One",
        ])
        .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    assert_eq!(
        (json["dwp"].as_u64(), json["command"].as_str()),
        (Some(2), Some("new"))
    );
    assert_eq!(json["ok"], true);
    let new = &json["new"];
    assert_eq!(new["plan"], "PLAN_json_plan");
    assert_eq!(new["format"], "lite");
    assert_eq!(new["standard"], "5.0.0");
    assert_eq!(new["approval"], "pending");
    assert_eq!(new["final_review_added"], true);
    assert_eq!(new["tasks"][1]["record"], "README.md#task-2");
    assert_eq!(
        new["run"],
        serde_json::json!([
            "dwp approve PLAN_json_plan --by NAME",
            "dwp next PLAN_json_plan"
        ])
    );
    let bytes = std::fs::read(root.path().join("PLAN_json_plan/state.json")).unwrap();
    assert_eq!(new["state_sha256"], common::sha256_hex(&bytes));
}

/// new → each task's Validation listed → approve → (next, then the lines it prints: `dwp run`
/// of each Validation command, the completion) until the plan is published, the task logs and
/// the security review filled as the agent does; `dwp verify` says CONFORMANT after each line.
fn follow_next_to_publication(format: &str, titles: &[&str]) {
    let root = tempfile::tempdir().unwrap();
    let plan = "PLAN_end_to_end";
    let dir = root.path().join(plan);
    let mut args = vec![plan, "--format", format, "--tasks"];
    args.extend_from_slice(titles);
    let made = new_ok(root.path(), &args);
    let mut lines = printed_dwp_lines(&made.stdout);
    assert_eq!(lines.len(), 2, "{}", made.stdout);
    assert_eq!(lines.remove(1), format!("dwp next {plan}"));
    // The author writes what the skeleton asks for before approval (dwp approve refuses a
    // placeholder), the command that proves each task included.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).unwrap();
            let listed = text
                .replace(
                    "- to be listed before approval: each command that proves this task, in backticks (`dwp next` reads them)",
                    "- `echo 1 passed`",
                )
                .replace(" before approval: ", " by the author: ");
            std::fs::write(&path, listed).unwrap();
        }
    }
    for line in &lines {
        assert_eq!(run_printed(line, root.path()).code, 0, "{line}");
    }
    let tasks = titles.len() + usize::from(!titles.last().unwrap().contains("review"));
    for _ in 0..2 * tasks {
        let next = dwp()
            .at(NOW)
            .in_dir(root.path())
            .args(["--json", "next", plan])
            .run();
        let next = next.payload().clone();
        let run = owned_strs(&next["run"]);
        if next["action"] == "complete" {
            let id = next["task"]["id"].as_u64().unwrap();
            let record = next["task"]["record"].as_str().unwrap();
            let file = record.split('#').next().unwrap();
            fill_task_log(&root.path().join(file), id);
            if next["task"]["last"] == true {
                std::fs::write(
                    dir.join("analysis_results/SECURITY_REVIEW.md"),
                    "# Security review\n\nNo open critical findings.\n",
                )
                .unwrap();
            }
        }
        assert!(!run.is_empty(), "{next:#}");
        for line in &run {
            let done = run_printed(line, root.path());
            assert_eq!(done.code, 0, "`{line}`: {}{}", done.stdout, done.stderr);
            assert_eq!(verify(root.path(), plan).0, 0, "conformant after `{line}`");
        }
    }
    let last = dwp().at(NOW).in_dir(root.path()).args(["next", plan]).run();
    assert!(
        last.stdout.contains("completed and published"),
        "{}",
        last.stdout
    );
    assert_eq!(state_of(&dir)["status"], "completed");
    assert!(dir.join("analysis_results/FINALIZATION.json").is_file());
    assert_eq!(verify(root.path(), plan), (0, Vec::new()));
}

#[test]
fn a_full_plan_made_by_new_is_carried_to_publication_by_following_next() {
    follow_next_to_publication("full", &["Add the parser", "Wire the CLI"]);
}

#[test]
fn a_lite_plan_made_by_new_is_carried_to_publication_by_following_next() {
    follow_next_to_publication("lite", &["Only task"]);
}

/// At a repository root (it holds `.git`) a bare plan name is made under `.dwp/plans/` (made
/// too), where `verify --all` and `status` look; `./NAME` and a path with folders are made where
/// they name; a refused name makes no `.dwp/` at all.
#[test]
fn at_a_repository_root_a_bare_plan_name_is_made_under_dwp_plans() {
    let repo = tempfile::tempdir().unwrap();
    common::git(repo.path(), &["init", "--quiet"]);
    let refused = new_in(repo.path(), &["PLAN_name", "--tasks", "One"]);
    assert_eq!(refused.code, 2, "an invalid name: {refused:?}");
    assert!(!repo.path().join(".dwp").exists(), "nothing written");
    let made = new_ok(
        repo.path(),
        &["PLAN_first_try", "--tasks", "Add the parser"],
    );
    let home = repo.path().join(".dwp/plans/PLAN_first_try");
    assert!(home.join("state.json").is_file(), "{made:?}");
    assert!(!repo.path().join("PLAN_first_try").exists());
    assert!(
        made.stdout.starts_with(".dwp/plans/PLAN_first_try created"),
        "names where: {made:?}"
    );
    let json = dwp()
        .at(NOW)
        .in_dir(repo.path())
        .args(["--json", "new", "PLAN_second_try", "--tasks", "One"])
        .run();
    assert_eq!(json.code, 0, "{json:?}");
    assert!(
        json.stdout.contains("\".dwp/plans/PLAN_second_try\""),
        "{json:?}"
    );
    let all = dwp()
        .at(NOW)
        .in_dir(repo.path())
        .args(["--json", "verify", "--all"])
        .run();
    assert_eq!(all.code, 0, "{all:?}");
    let status = dwp().in_dir(repo.path()).arg("status").run();
    for name in ["PLAN_first_try", "PLAN_second_try"] {
        assert!(all.stdout.contains(name), "verify --all sees it: {all:?}");
        assert!(status.stdout.contains(name), "status sees it: {status:?}");
    }
    std::fs::create_dir_all(repo.path().join("some/dir")).unwrap();
    for (given, made) in [
        ("./PLAN_right_here", "PLAN_right_here"),
        ("some/dir/PLAN_further_down", "some/dir/PLAN_further_down"),
    ] {
        let run = new_ok(repo.path(), &[given, "--tasks", "One"]);
        assert!(
            repo.path().join(made).join("state.json").is_file(),
            "{run:?}"
        );
        assert!(
            run.stdout.starts_with(&format!("{given} created")),
            "{run:?}"
        );
    }
}

/// `dwp approve` refuses a plan that still holds a placeholder `dwp new` wrote for its author
/// (what a user approves must be written), naming each place and changing nothing; written, it
/// approves.
#[test]
fn approve_refuses_a_plan_that_still_holds_its_placeholders_naming_each() {
    let root = tempfile::tempdir().unwrap();
    new_ok(
        root.path(),
        &["PLAN_unwritten_plan", "--tasks", "Parse input"],
    );
    let dir = root.path().join("PLAN_unwritten_plan");
    let approve = || {
        dwp()
            .at(NOW)
            .arg("approve")
            .arg(&dir)
            .args(["--by", "Ada"])
            .run()
    };
    let refused = common::writing_nothing(&dir, "a refused approval", approve);
    assert_eq!(refused.code, 1, "{refused:?}");
    refused.assert_stderr_says(&[
        "placeholders written for its author",
        "README.md:",
        "1.task_parse_input.md:",
    ]);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).unwrap();
            let written = text.replace(" before approval: ", " by the author: ");
            std::fs::write(&path, written).unwrap();
        }
    }
    let approved = approve();
    assert_eq!(approved.code, 0, "{approved:?}");
}
