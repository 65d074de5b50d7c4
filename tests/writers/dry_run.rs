//! `--dry-run` on the multi-file writers (`init`, `migrate`, `amend`): every check runs, the
//! diff of every file the write would touch is printed, and no byte changes. The real run then
//! touches exactly the files the preview named.

use crate::common;
use crate::common::{NOW, Plan, changed_paths, dwp, tree_digest};
use dwp::plan::model::Generation;
use dwp::synth::SynthPlan;
use std::path::Path;

/// The files a unified diff names (`+++ NAME`), sorted.
fn previewed(diff: &str) -> Vec<String> {
    let mut names: Vec<String> = diff
        .lines()
        .filter_map(|l| l.strip_prefix("+++ "))
        .map(|name| name.trim_end_matches(" (after)").to_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Run `args` with `--dry-run`, check nothing changed, then for real; the files the real run
/// changed are the ones the preview named.
fn preview_then_write(dir: &Path, plan: &Path, args: &[&str]) {
    let before = tree_digest(plan);
    let dry = dwp().at(NOW).in_dir(dir).args(args).arg("--dry-run").run();
    assert_eq!(dry.code, 0, "{args:?} --dry-run: {dry:?}");
    assert!(dry.stdout.contains("nothing written"), "{dry:?}");
    assert_eq!(tree_digest(plan), before, "{args:?} --dry-run wrote");
    let named = previewed(&dry.stdout);
    assert!(!named.is_empty(), "{args:?}: no diff in {}", dry.stdout);
    let real = dwp().at(NOW).in_dir(dir).args(args).run();
    assert_eq!(real.code, 0, "{args:?}: {real:?}");
    let after = tree_digest(plan);
    let mut changed: Vec<String> = changed_paths(&before, &after)
        .into_iter()
        .map(|p| p.display().to_string())
        .filter(|p| !p.ends_with('/'))
        .collect();
    changed.sort();
    for file in &changed {
        assert!(
            named.iter().any(|n| n == file),
            "{args:?} changed {file}, which the preview did not name ({named:?})"
        );
    }
}

#[test]
fn init_dry_run_previews_the_materialization_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let plan = root.path().join("PLAN_feature_flag_cleanup");
    common::copy_plan(
        &common::fixture("markdown-only-current-v5/PLAN_feature_flag_cleanup"),
        &plan,
    );
    preview_then_write(root.path(), &plan, &["init", plan.to_str().unwrap()]);
}

#[test]
fn migrate_dry_run_previews_both_files_and_the_record() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_dry_migrate", 3).generation(Generation::V1));
    let dir = plan.root().to_path_buf();
    preview_then_write(
        &dir,
        &plan.dir,
        &["migrate", plan.dir.to_str().unwrap(), "--to", "v5"],
    );
}

#[test]
fn amend_dry_run_previews_the_record_progress_and_state() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_dry_amend", 4).completed(2));
    let dir = plan.root().to_path_buf();
    let p = plan.dir.to_str().unwrap();
    preview_then_write(
        &dir,
        &plan.dir,
        &[
            "amend",
            p,
            "--task",
            "2",
            "--original",
            "behaviour 2 is covered by a test",
            "--observed",
            "it needs a network the CI lacks",
            "--disposition",
            "revised criterion",
            "--revised",
            "behaviour 2 is covered offline",
            "--reason",
            "the user narrowed it",
            "--authority",
            "user",
            "--affected",
            "2",
        ],
    );
}

/// A plan of 4 tasks, 1 completed, whose markdown has moved ahead: task 2's box checked (with
/// its Plan Status count), the state not.
fn markdown_ahead(name: &str) -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(name, 4).completed(1));
    plan.edit("README.md", |text| {
        text.replace("- [ ] Task 2:", "- [x] Task 2:")
            .replace("Plan Status: 1/4", "Plan Status: 2/4")
    });
    plan
}

#[test]
fn reconcile_write_dry_run_previews_the_state_and_progress() {
    let plan = markdown_ahead("PLAN_dry_reconcile");
    let dir = plan.root().to_path_buf();
    preview_then_write(
        &dir,
        &plan.dir,
        &["reconcile", plan.dir.to_str().unwrap(), "--write"],
    );
    let check = dwp()
        .at(NOW)
        .args(["reconcile", "--dry-run"])
        .arg(&plan.dir)
        .run();
    assert_eq!(check.code, 2, "--dry-run goes with --write: {check:?}");
}

#[test]
fn a_desync_report_names_the_reconcile_that_runs_as_printed() {
    let plan = markdown_ahead("PLAN_desync_line");
    let run = dwp().at(NOW).arg("reconcile").arg(&plan.dir).run();
    assert_eq!(run.code, 1, "{run:?}");
    let line = format!("`dwp reconcile {} --write`", plan.dir.display());
    assert!(run.stdout.contains(&line), "{}", run.stdout);
    assert!(run.stdout.contains("· 2 disagreements ("), "{}", run.stdout);
}
