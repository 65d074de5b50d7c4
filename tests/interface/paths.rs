//! Paths as the user stands: a path under the current directory is printed relative to it, in
//! text and JSON alike, findings and hints included (`dwp verify /repo/.dwp/plans/PLAN_x` run
//! from `/repo` names `.dwp/plans/PLAN_x`); a path elsewhere is printed as given.

use crate::common::{Run, dwp};
use dwp::synth::SynthPlan;
use std::path::{Path, PathBuf};

const PLAN: &str = ".dwp/plans/PLAN_paths_here";

/// A repository holding one plan whose README box of task 2 is ticked while state.json says
/// pending: a desync, so verify and reconcile print findings and hints naming the plan.
fn repository() -> (tempfile::TempDir, PathBuf) {
    let repo = tempfile::tempdir().unwrap();
    let plans = repo.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    let plan = SynthPlan::new("PLAN_paths_here", 3)
        .completed(1)
        .write(&plans)
        .unwrap();
    let readme = plan.join("README.md");
    let text = std::fs::read_to_string(&readme).unwrap();
    assert!(text.contains("- [ ] Task 2:"), "{text}");
    std::fs::write(&readme, text.replacen("- [ ] Task 2:", "- [x] Task 2:", 1)).unwrap();
    (repo, plan)
}

fn run_in(dir: &Path, args: &[&str]) -> Run {
    dwp().in_dir(dir).args(args).run()
}

#[test]
fn a_path_under_the_current_directory_is_printed_relative_to_it() {
    let (repo, plan) = repository();
    let absolute = plan.to_str().unwrap();
    let root = repo.path().to_str().unwrap();
    // Each command, and whether what it prints names the plan's folder.
    for (args, names_it) in [
        (vec!["verify", absolute], true),
        (vec!["--json", "verify", absolute], true),
        (vec!["verify", "--all", root], true),
        (vec!["--json", "verify", "--all"], true),
        (vec!["reconcile", absolute], true),
        (vec!["--json", "reconcile", absolute], false),
        (vec!["lock", "status", absolute], true),
        (vec!["--json", "lock", "status", absolute], true),
        (vec!["validate", absolute], false),
        (vec!["status", absolute], false),
        (vec!["next", absolute], true),
    ] {
        let run = run_in(repo.path(), &args);
        let printed = format!("{}{}", run.stdout, run.stderr);
        assert!(
            !printed.contains(root),
            "{args:?} names {root} from inside it:\n{printed}"
        );
        assert_eq!(printed.contains(PLAN), names_it, "{args:?}:\n{printed}");
    }
    let report = run_in(repo.path(), &["--json", "verify", absolute]).payload();
    let found = &report["plans"][0];
    assert_eq!(found["plan"], PLAN, "{report:#}");
    let findings = found["findings"].as_array().unwrap();
    assert!(!findings.is_empty(), "{report:#}");
    for finding in findings {
        let file = finding["file"].as_str().unwrap();
        assert!(file.starts_with(&format!("{PLAN}/")), "{finding:#}");
    }
    assert!(
        findings
            .iter()
            .any(|f| f["hint"].as_str().unwrap_or_default().contains(PLAN)),
        "a hint names the plan from here: {report:#}"
    );
}

#[test]
fn a_path_elsewhere_is_printed_as_given() {
    let (repo, plan) = repository();
    let elsewhere = tempfile::tempdir().unwrap();
    let absolute = plan.to_str().unwrap();
    let report = run_in(elsewhere.path(), &["--json", "verify", absolute]).payload();
    assert_eq!(report["plans"][0]["plan"], absolute, "{report:#}");
    // Given relative, it stays as given too.
    let given = run_in(repo.path(), &["--json", "verify", PLAN]).payload();
    assert_eq!(given["plans"][0]["plan"], PLAN, "{given:#}");
}

#[test]
fn a_bare_plan_name_at_a_repository_root_is_the_plan_dwp_new_made_under_dwp_plans() {
    let (repo, _) = repository();
    // Each command, and whether what it prints names the plan's folder.
    for (args, names_it) in [
        (vec!["--json", "verify", "PLAN_paths_here"], true),
        (vec!["--json", "next", "PLAN_paths_here"], true),
        (vec!["--json", "status", "PLAN_paths_here"], false),
        (vec!["--json", "validate", "PLAN_paths_here"], true),
    ] {
        let run = run_in(repo.path(), &args);
        let printed = format!("{}{}", run.stdout, run.stderr);
        assert_ne!(run.code, 2, "{args:?} found the plan:\n{printed}");
        assert!(!printed.contains("no such plan"), "{args:?}:\n{printed}");
        assert_eq!(printed.contains(PLAN), names_it, "{args:?}:\n{printed}");
    }
    // A folder of that name here is the one meant.
    let here = repo.path().join("PLAN_paths_here");
    SynthPlan::new("PLAN_paths_here", 2)
        .write(repo.path())
        .unwrap();
    let report = run_in(repo.path(), &["--json", "verify", "PLAN_paths_here"]).payload();
    assert_eq!(report["plans"][0]["plan"], "PLAN_paths_here", "{report:#}");
    std::fs::remove_dir_all(&here).unwrap();
    // A name no plan has stays missing, and outside a repository nothing is looked up.
    let missing = run_in(repo.path(), &["--json", "verify", "PLAN_nowhere_here"]).payload();
    assert_eq!(
        missing["plans"][0]["findings"][0]["code"], "DWP001",
        "{missing:#}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = run_in(elsewhere.path(), &["--json", "verify", "PLAN_paths_here"]).payload();
    assert_eq!(
        outside["plans"][0]["findings"][0]["code"], "DWP001",
        "{outside:#}"
    );
}
