//! Rule 18 of docs/record-plans.md: a runner that does not run the record-plan loop says so and
//! stops. Every dwp command that writes a plan (or its lock) refuses a record plan (DWP v6/v7)
//! whole, writing nothing, and its hint runs as printed.

use crate::common::{copy_plan, dwp, refused, repo_root};
use std::path::PathBuf;

fn record_plan(root: &std::path::Path) -> PathBuf {
    let case = repo_root().join("conformance-fixtures/record-valid-v7-in-progress");
    let source = std::fs::read_dir(&case)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let plan = root.join(source.file_name().unwrap());
    copy_plan(&source, &plan);
    plan
}

#[test]
fn rule_18_every_writer_refuses_a_record_plan_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let plan = record_plan(root.path());
    let path = plan.to_str().unwrap();
    let writers: [(&str, Vec<&str>); 11] = [
        (
            "update",
            vec!["update", path, "--task", "1", "--status", "in_progress"],
        ),
        ("run", vec!["run", path, "--task", "1", "--", "true"]),
        ("approve", vec!["approve", path, "--by", "Ana"]),
        ("init", vec!["init", path]),
        ("migrate", vec!["migrate", path, "--to", "v5"]),
        ("reconcile", vec!["reconcile", path, "--write"]),
        ("finalize", vec!["finalize", path]),
        ("finalize --check", vec!["finalize", path, "--check"]),
        ("lock status", vec!["lock", "status", path]),
        ("lock recover", vec!["lock", "recover", path]),
        (
            "amend",
            vec![
                "amend",
                path,
                "--task",
                "1",
                "--original",
                "x",
                "--observed",
                "y",
                "--disposition",
                "failed gate",
                "--authority",
                "user",
                "--affected",
                "1",
                "--reason",
                "z",
            ],
        ),
    ];
    for (command, args) in writers {
        let run = refused(
            &plan,
            command,
            1,
            &["a record plan", "does not write it"],
            || dwp().args(&args).run_utf8(),
        );
        assert!(
            run.stderr.contains(&format!("dwp status {path}")),
            "{}",
            run.stderr
        );
    }
}
