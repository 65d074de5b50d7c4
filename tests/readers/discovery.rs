//! A PLAN argument may be left out inside a plan folder, and `--all`'s ROOT inside a repository:
//! dwp finds them from the current directory the way git finds its repository (this folder or
//! the nearest one above). Through the real binary, run from inside the folders.

use crate::common;
use crate::common::dwp_in;
use dwp::synth::SynthPlan;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A repository with two plans under `.dwp/plans/`, and a folder of its own outside them.
fn repository() -> (TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let plans = root.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    for name in ["PLAN_first_plan", "PLAN_second_plan"] {
        SynthPlan::new(name, 3).completed(1).write(&plans).unwrap();
    }
    std::fs::create_dir(root.path().join("src")).unwrap();
    let repo = root.path().to_path_buf();
    (root, repo)
}

fn plan(repo: &Path) -> PathBuf {
    repo.join(".dwp/plans/PLAN_first_plan")
}

#[test]
fn a_command_inside_a_plan_folder_needs_no_plan_argument() {
    let (_root, repo) = repository();
    let plan = plan(&repo);
    let here = dwp_in(&plan, &["status"]);
    let named = dwp_in(&repo, &["status", ".dwp/plans/PLAN_first_plan"]);
    assert_eq!(here.code, 0, "{here:?}");
    assert_eq!(
        here.stdout, named.stdout,
        "the same plan, found from inside it"
    );
    let verify = dwp_in(&plan, &["verify"]);
    assert_eq!(verify.code, 0, "{verify:?}");
    assert!(
        verify.stdout.contains("PLAN_first_plan: CONFORMANT"),
        "{verify:?}"
    );
    assert_eq!(dwp_in(&plan, &["validate"]).code, 0);
}

#[test]
fn a_subfolder_of_a_plan_finds_the_plan_above_it() {
    let (_root, repo) = repository();
    let plan = plan(&repo);
    let inside = plan.join("analysis_results");
    let run = dwp_in(
        &inside,
        &["update", "--task", "2", "--status", "in_progress"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["tasks"][1]["status"], "in_progress");
}

#[test]
fn outside_any_plan_a_missing_plan_argument_is_a_usage_error_naming_the_folder() {
    let (_root, repo) = repository();
    let before = common::tree_digest(&repo);
    let src = repo.join("src");
    for args in [
        vec!["verify"],
        vec!["update", "--task", "2", "--status", "in_progress"],
        vec!["reconcile", "--write"],
    ] {
        let run = dwp_in(&src, &args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.message().contains("no PLAN given"), "{run:?}");
        assert!(
            run.message().contains("src"),
            "names where it looked: {run:?}"
        );
    }
    assert_eq!(common::tree_digest(&repo), before, "nothing written");
}

#[test]
fn all_finds_the_repository_from_any_folder_inside_it() {
    let (_root, repo) = repository();
    for dir in [repo.clone(), repo.join("src"), repo.join(".dwp/plans")] {
        let run = dwp_in(&dir, &["--json", "verify", "--all"]);
        assert_eq!(run.code, 0, "{}: {run:?}", dir.display());
        assert_eq!(run.payload()["plans"].as_array().unwrap().len(), 2);
    }
    let outside = tempfile::tempdir().unwrap();
    let run = dwp_in(outside.path(), &["verify", "--all"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.message().contains("no ROOT given"), "{run:?}");
}

#[test]
fn status_at_a_repository_root_lists_its_plans() {
    let (_root, repo) = repository();
    let listed = dwp_in(&repo, &["status"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    for name in ["PLAN_first_plan", "PLAN_second_plan"] {
        assert!(listed.stdout.contains(name), "{listed:?}");
    }
    assert_eq!(dwp_in(&repo, &["status", "--all"]).stdout, listed.stdout);
    let named = dwp_in(repo.parent().unwrap(), &["status", repo.to_str().unwrap()]);
    assert_eq!(
        named.stdout, listed.stdout,
        "a repository named as PLAN lists too"
    );
    let below = dwp_in(&repo.join("src"), &["status"]);
    assert_eq!(
        below.stdout, listed.stdout,
        "from a folder inside the repository"
    );
}

#[test]
fn status_all_sorts_plans_the_way_people_count_and_an_invalid_plan_takes_one_short_line() {
    let root = tempfile::tempdir().unwrap();
    let plans = root.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    for name in ["PLAN_step_10", "PLAN_step_2", "PLAN_step_1"] {
        SynthPlan::new(name, 2).write(&plans).unwrap();
    }
    std::fs::write(plans.join("PLAN_step_2/state.json"), "{ not json").unwrap();
    let run = dwp_in(root.path(), &["status", "--all"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    for (line, name) in lines
        .iter()
        .zip(["PLAN_step_1", "PLAN_step_2", "PLAN_step_10"])
    {
        assert!(line.starts_with(name), "{line}");
    }
    assert!(lines[1].contains("invalid: "), "{}", lines[1]);
    assert!(
        lines[1].chars().count() <= 150,
        "one short line: {}",
        lines[1]
    );
}

/// A repository of `n` small plans.
fn repository_of(n: usize) -> TempDir {
    let root = tempfile::tempdir().unwrap();
    let plans = root.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    for i in 0..n {
        SynthPlan::new(&format!("PLAN_many_{i}"), 2)
            .write(&plans)
            .unwrap();
    }
    root
}

#[test]
fn verify_all_draws_progress_only_on_a_terminal() {
    let root = repository_of(60);
    let piped = dwp_in(root.path(), &["verify", "--all"]);
    assert_eq!(piped.code, 0, "{piped:?}");
    assert!(
        piped.stderr.is_empty(),
        "nothing drawn in a pipe: {:?}",
        piped.stderr
    );
    assert!(
        piped
            .stdout
            .ends_with("60 plans: 60 conformant, 0 not conformant, 0 unverified\n")
    );
    // On a terminal (a pseudo-terminal from `script`), the bar is drawn on stderr.
    let Ok(script) = which("script") else {
        println!("SKIPPED the terminal half: `script` (util-linux) is not installed");
        return;
    };
    let dwp_bin = assert_cmd::cargo::cargo_bin("dwp");
    let output = std::process::Command::new(script)
        .args([
            "-qec",
            &format!("{} verify --all", dwp_bin.display()),
            "/dev/null",
        ])
        .current_dir(root.path())
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let seen = String::from_utf8_lossy(&output.stdout);
    assert!(seen.contains("plans verified"), "{seen}");
    let quiet = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{} verify --all --quiet", dwp_bin.display()),
            "/dev/null",
        ])
        .current_dir(root.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&quiet.stdout).contains("plans verified"));
}

fn which(program: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(program))
                .find(|path| path.is_file())
        })
        .ok_or(())
}

/// A PLAN argument that names nothing at all is one clear problem, not a list of every file a
/// plan holds (the folder's marker and intent files were once reported as present): verify and
/// validate report one DWP001 finding, and every command that works on one plan refuses it as a
/// usage error, creating nothing.
#[test]
fn a_plan_argument_that_names_nothing_is_one_problem_and_nothing_is_created() {
    let (_root, repo) = repository();
    let missing = repo.join(".dwp/plans/PLAN_not_there");
    let name = missing.to_str().unwrap();
    let verify = dwp_in(&repo, &["--json", "verify", name]);
    assert_eq!(verify.code, 1, "{}", verify.stderr);
    let findings = &verify.payload()["plans"][0]["findings"];
    assert_eq!(findings.as_array().unwrap().len(), 1, "{findings:#}");
    assert_eq!(findings[0]["code"], "DWP001");
    assert_eq!(findings[0]["message"], "no such plan folder or file");
    let validate = dwp_in(&repo, &["validate", name]);
    assert_eq!(validate.code, 1, "{}", validate.stdout);
    assert!(
        validate.stdout.contains("no such plan folder or file"),
        "{}",
        validate.stdout
    );
    for args in [
        &["update", name, "--task", "1", "--status", "in_progress"][..],
        &["status", name],
        &["next", name],
        &["finalize", name],
        &["reconcile", name],
        &["run", name, "--task", "1", "--", "true"],
    ] {
        let run = dwp_in(&repo, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        let first = run.stderr.lines().next().unwrap_or_default();
        // Named from where the command runs, the repository root.
        assert!(
            first.contains("not a plan: nothing exists at this path")
                && first.ends_with("(.dwp/plans/PLAN_not_there)"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!missing.exists(), "{args:?} created the plan folder");
    }
}

/// A plan folder nested inside a plan folder (as agents make a sub-plan for one task, with a
/// README of headings and no task index) is named by `--all`, judged as a plan of its own,
/// never skipped in silence.
#[test]
fn all_names_and_judges_a_plan_nested_inside_a_plan_folder() {
    let (_root, repo) = repository();
    let nested = plan(&repo).join("PLAN_task2_cli_tests");
    std::fs::create_dir(&nested).unwrap();
    std::fs::write(
        nested.join("README.md"),
        "# CLI tests for task 2\n\n## Tasks\n\n### Task 1: parser tests\n- **Tests:** ~10\n",
    )
    .unwrap();
    let verify = dwp_in(&repo, &["--json", "verify", "--all"]);
    let plans = verify.payload()["plans"].as_array().unwrap().clone();
    let names: Vec<&str> = plans.iter().map(|p| p["plan"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names[1].ends_with("PLAN_first_plan/PLAN_task2_cli_tests"),
        "the nested plan follows its parent: {names:?}"
    );
    assert_ne!(plans[1]["verdict"], "CONFORMANT", "{:?}", plans[1]);
    assert_ne!(
        verify.code, 0,
        "a nested plan with no task index fails --all: {verify:?}"
    );
    let status = dwp_in(&repo, &["status", "--all"]);
    assert_eq!(status.code, 0, "{status:?}");
    let lines: Vec<&str> = status.stdout.lines().collect();
    assert!(
        lines[1].starts_with("PLAN_first_plan/PLAN_task2_cli_tests"),
        "{}",
        status.stdout
    );
}

/// A repository root (`git init`) whose `.dwp/plans/` holds one plan per `(name, completed)` of
/// three tasks: 0 completed is pending, 1 or 2 in progress, 3 completed.
fn repository_with(plans: &[(&str, usize)]) -> TempDir {
    let root = tempfile::tempdir().unwrap();
    common::git(root.path(), &["init", "--quiet"]);
    let home = root.path().join(".dwp/plans");
    std::fs::create_dir_all(&home).unwrap();
    for (name, completed) in plans {
        SynthPlan::new(name, 3)
            .completed(*completed)
            .write(&home)
            .unwrap();
    }
    root
}

fn task_status(plan: &Path, task: usize) -> String {
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap();
    state["tasks"][task - 1]["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn at_a_repository_root_a_command_without_plan_takes_the_one_plan_in_progress() {
    let repo = repository_with(&[
        ("PLAN_done_plan", 3),
        ("PLAN_open_plan", 1),
        ("PLAN_fresh_plan", 0),
    ]);
    let root = repo.path();
    let verify = dwp_in(root, &["verify"]);
    assert_eq!(verify.code, 0, "{verify:?}");
    assert!(
        verify
            .stdout
            .starts_with(".dwp/plans/PLAN_open_plan: CONFORMANT"),
        "{verify:?}"
    );
    let next = dwp_in(root, &["next"]);
    assert_eq!(next.code, 0, "{next:?}");
    assert!(next.stdout.starts_with("PLAN_open_plan"), "{next:?}");
    assert_eq!(
        next.stderr,
        "dwp next: no PLAN given: taking .dwp/plans/PLAN_open_plan, the only plan in progress under .dwp/plans/\n",
        "says which plan it took"
    );
    let update = dwp_in(root, &["update", "--task", "2", "--status", "in_progress"]);
    assert_eq!(update.code, 0, "{update:?}");
    assert_eq!(
        task_status(&root.join(".dwp/plans/PLAN_open_plan"), 2),
        "in_progress"
    );
    // A writer asks which plan it writes once, and says so once.
    assert_eq!(
        update.stderr.matches("no PLAN given").count(),
        1,
        "{update:?}"
    );
    let run = dwp_in(root, &["run", "--task", "2", "--", "true"]);
    assert_eq!(run.code, 0, "{run:?}");
    let logs = root.join(".dwp/plans/PLAN_open_plan/analysis_results/gates");
    assert!(
        logs.is_dir(),
        "the run was recorded in the plan in progress: {run:?}"
    );
    let status = dwp_in(root, &["status"]);
    for name in ["PLAN_done_plan", "PLAN_fresh_plan", "PLAN_open_plan"] {
        assert!(
            status.stdout.contains(name),
            "status lists every plan: {status:?}"
        );
    }
}

#[test]
fn at_a_repository_root_a_command_without_plan_takes_the_only_plan() {
    let repo = repository_with(&[("PLAN_only_plan", 0)]);
    let next = dwp_in(repo.path(), &["next"]);
    assert_eq!(next.code, 0, "{next:?}");
    assert!(next.stdout.starts_with("PLAN_only_plan"), "{next:?}");
    assert!(
        next.stderr
            .contains("taking .dwp/plans/PLAN_only_plan, the only plan under"),
        "{next:?}"
    );
    let verify = dwp_in(repo.path(), &["verify"]);
    assert_eq!(verify.code, 0, "{verify:?}");
    assert!(verify.stdout.contains("PLAN_only_plan"), "{verify:?}");
}

#[test]
fn at_a_repository_root_without_one_plan_in_progress_the_error_lists_each_plan_as_an_argument() {
    for plans in [
        vec![("PLAN_first_plan", 1), ("PLAN_second_plan", 2)],
        vec![("PLAN_first_plan", 0), ("PLAN_second_plan", 3)],
    ] {
        let repo = repository_with(&plans);
        let before = common::tree_digest(repo.path());
        for args in [
            vec!["next"],
            vec!["verify"],
            vec!["update", "--task", "2", "--status", "in_progress"],
            vec!["run", "--task", "2", "--", "true"],
        ] {
            let refused = dwp_in(repo.path(), &args);
            assert_eq!(refused.code, 2, "{args:?}: {refused:?}");
            let message = refused.message();
            let (_, listed) = message
                .split_once("name one of ")
                .unwrap_or_else(|| panic!("{args:?} lists the candidates: {refused:?}"));
            let listed: Vec<&str> = listed.trim_end().split(", ").collect();
            assert_eq!(
                listed,
                [".dwp/plans/PLAN_first_plan", ".dwp/plans/PLAN_second_plan"],
                "{refused:?}"
            );
            for plan in listed {
                let named = dwp_in(repo.path(), &["status", plan]);
                assert_eq!(named.code, 0, "{plan} works as PLAN: {named:?}");
            }
        }
        assert_eq!(common::tree_digest(repo.path()), before, "nothing written");
    }
}

#[test]
fn status_at_a_repository_root_with_no_plans_says_so_in_one_line() {
    let repo = repository_with(&[]);
    std::fs::remove_dir_all(repo.path().join(".dwp")).unwrap();
    let status = dwp_in(repo.path(), &["status"]);
    assert_eq!(status.code, 0, "{status:?}");
    assert_eq!(status.stdout, "no plans under .dwp/plans/\n", "{status:?}");
    let json = dwp_in(repo.path(), &["--json", "status"]);
    assert_eq!(json.code, 0, "{json:?}");
    assert!(json.stdout.contains("\"plans\": []"), "{json:?}");
}

/// A record plan counts as in progress by what its journal derives, never by a v5 status it
/// does not have: beside a v5 plan that is done, the record plan at work is the one taken, and
/// beside one that is also at work, neither.
#[test]
fn at_a_repository_root_a_record_plan_in_progress_is_taken_by_its_journal() {
    let fixtures = common::repo_root().join("conformance-fixtures");
    let record = |repo: &TempDir, fixture: &str| {
        let from = fixtures.join(fixture).join("PLAN_021_docs_site_migration");
        common::copy_plan(
            &from,
            &repo.path().join(".dwp/plans/PLAN_021_docs_site_migration"),
        );
    };
    let repo = repository_with(&[("PLAN_done_plan", 3)]);
    record(&repo, "record-valid-v7-in-progress");
    let next = dwp_in(repo.path(), &["next"]);
    assert_eq!(next.code, 0, "{next:?}");
    assert!(
        next.stdout.starts_with("PLAN_021_docs_site_migration"),
        "{next:?}"
    );
    assert_eq!(
        next.stderr,
        "dwp next: no PLAN given: taking .dwp/plans/PLAN_021_docs_site_migration, the only plan in progress under .dwp/plans/\n"
    );
    let repo = repository_with(&[("PLAN_open_plan", 1)]);
    record(&repo, "record-valid-v7-completed");
    let next = dwp_in(repo.path(), &["next"]);
    assert_eq!(next.code, 0, "{next:?}");
    assert!(next.stdout.starts_with("PLAN_open_plan"), "{next:?}");
    let repo = repository_with(&[("PLAN_open_plan", 1)]);
    record(&repo, "record-valid-v7-in-progress");
    let refused = dwp_in(repo.path(), &["next"]);
    assert_eq!(refused.code, 2, "two plans at work: {refused:?}");
}
