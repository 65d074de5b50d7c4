//! `dwp approve` on a record plan (DWP v6/v7; issue #33, docs/record-plans.md "Writing a record
//! plan"): an `approval` event citing the live contract, by a human, with the digest of the
//! plan's markdown and the marker of the note they wrote (rules 12, 19, 20).

use crate::common::{dwp, fixture_plan, journal_events, refused, writing_nothing};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The human's note, beside the plan.
fn note(plan: &Path) -> PathBuf {
    let note = plan.parent().unwrap().join("approval-note.md");
    std::fs::write(&note, "I approve this plan as written.\n").unwrap();
    note
}

fn approve(plan: &Path, note: &Path, extra: &[&str]) -> crate::common::Run {
    dwp()
        .args(["approve", plan.to_str().unwrap(), "--by", "ana.ruiz"])
        .args(["--note", note.to_str().unwrap(), "--json"])
        .args(extra)
        .run_utf8()
}

/// The sha256 of the plan's top-level markdown, sorted by name and concatenated.
fn markdown_digest(plan: &Path) -> String {
    let mut names: Vec<PathBuf> = std::fs::read_dir(plan)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
        .collect();
    names.sort();
    let mut hasher = Sha256::new();
    for name in names {
        hasher.update(std::fs::read(name).unwrap());
    }
    format!("{:x}", hasher.finalize())
}

// Rules 19 and 12: the approval cites the live contract, carries the markdown's digest, and is
// a human's, with the marker of their note; it opens the plan's tasks.
#[test]
fn rule_19_an_approval_cites_the_live_contract_with_the_markdowns_digest_and_opens_the_tasks() {
    let (_root, plan) = fixture_plan("record-dwp111-approval-cites-draft");
    let note = note(&plan);
    let run = approve(&plan, &note, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.payload();
    let approval = journal_events(&plan).pop().unwrap();
    assert_eq!(approval["type"], "approval");
    assert_eq!(approval["contract_id"], report["contract_id"]);
    assert_eq!(approval["plan_digest"], markdown_digest(&plan).as_str());
    assert_eq!(approval["mechanism"], "plan_authorship");
    assert_eq!(approval["authority"], "ana.ruiz");
    assert_eq!(
        approval["actor"],
        serde_json::json!({"kind": "human", "identity": "ana.ruiz"})
    );
    let note_sha = format!("{:x}", Sha256::digest(std::fs::read(&note).unwrap()));
    assert_eq!(
        approval["note"],
        format!(
            "human authority marker: note {} sha256:{}",
            note.display(),
            &note_sha[..16]
        )
        .as_str()
    );
    let verify = dwp().args(["verify", plan.to_str().unwrap()]).run_utf8();
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    let start = dwp()
        .args([
            "update",
            plan.to_str().unwrap(),
            "--task",
            "T-backoff-schedule",
        ])
        .args(["--status", "in_progress"])
        .run_utf8();
    assert_eq!(start.code, 0, "{}", start.stderr);
}

#[test]
fn the_same_approval_again_writes_nothing_and_a_changed_markdown_is_approved_anew() {
    let (_root, plan) = fixture_plan("record-dwp111-approval-cites-draft");
    let note = note(&plan);
    assert_eq!(approve(&plan, &note, &[]).code, 0);
    let again = writing_nothing(&plan, "the same approval", || approve(&plan, &note, &[]));
    assert_eq!(again.payload()["unchanged"], true);
    let readme = plan.join("README.md");
    let mut text = std::fs::read_to_string(&readme).unwrap();
    text.push_str("\nOne more sentence the authority read.\n");
    std::fs::write(&readme, text).unwrap();
    let anew = approve(&plan, &note, &["--pre-approved"]);
    assert_eq!(anew.payload()["unchanged"], false);
    let approval = journal_events(&plan).pop().unwrap();
    assert_eq!(approval["plan_digest"], markdown_digest(&plan).as_str());
    assert_eq!(approval["mechanism"], "pre_authorization");
}

// Rule 12: a human record carries a marker; without the note there is no approval.
#[test]
fn rule_12_an_approval_without_the_humans_note_is_refused_and_nothing_is_written() {
    let (_root, plan) = fixture_plan("record-dwp111-approval-cites-draft");
    let path = plan.to_str().unwrap();
    refused(&plan, "approve", 2, &["--note FILE"], || {
        dwp().args(["approve", path, "--by", "ana"]).run_utf8()
    });
    let missing = plan.parent().unwrap().join("no-such-note.md");
    refused(&plan, "approve", 1, &["cannot be read"], || {
        dwp()
            .args(["approve", path, "--by", "ana", "--note"])
            .arg(&missing)
            .run_utf8()
    });
}

// Rule 20: no markdown, no approval.
#[test]
fn rule_20_a_plan_without_markdown_cannot_be_approved() {
    let (_root, plan) = fixture_plan("record-dwp111-approval-cites-draft");
    for entry in std::fs::read_dir(&plan).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let note = note(&plan);
    let path = plan.to_str().unwrap();
    refused(&plan, "approve", 1, &["no markdown", "rule 20"], || {
        dwp()
            .args(["approve", path, "--by", "ana", "--note"])
            .arg(&note)
            .run_utf8()
    });
}

// Rule 20: what is approved is written; markdown still holding a placeholder `dwp new` writes
// (`To be written before approval: ...`) is refused, naming the file and line.
#[test]
fn rule_20_markdown_still_holding_a_placeholder_cannot_be_approved() {
    let (_root, plan) = fixture_plan("record-dwp111-approval-cites-draft");
    let readme = plan.join("README.md");
    let text = std::fs::read_to_string(&readme).unwrap();
    let lines = text.lines().count();
    let placeholder = "To be written before approval: the rollback plan.";
    std::fs::write(&readme, format!("{text}{placeholder}\n")).unwrap();
    let note = note(&plan);
    let path = plan.to_str().unwrap();
    let line = format!("line {} still holds a placeholder", lines + 1);
    refused(&plan, "approve", 1, &["README.md", &line], || {
        dwp()
            .args(["approve", path, "--by", "ana", "--note"])
            .arg(&note)
            .run_utf8()
    });
}

#[test]
fn the_flags_of_a_v5_approval_are_refused_on_a_record_plan_and_the_note_on_a_v5_plan() {
    let (_root, plan) = fixture_plan("record-dwp111-approval-cites-draft");
    let note = note(&plan);
    let path = plan.to_str().unwrap();
    refused(&plan, "approve", 2, &["--dry-run"], || {
        dwp()
            .args(["approve", path, "--by", "ana", "--dry-run", "--note"])
            .arg(&note)
            .run_utf8()
    });
    let (_root, v5) = fixture_plan("valid-full-v5");
    let v5_path = v5.to_str().unwrap();
    refused(&v5, "approve", 2, &["--note"], || {
        dwp()
            .args(["approve", v5_path, "--by", "ana", "--note"])
            .arg(&note)
            .run_utf8()
    });
}
