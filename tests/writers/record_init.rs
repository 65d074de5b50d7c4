//! `dwp init PLAN --contract DRAFT --by NAME --note FILE` (issue #33, docs/record-plans.md
//! "Writing a record plan"): a record plan made of its markdown and a contract draft in the
//! order of rule 19 (manifest, stamped contract, approval), each document in the public ledger's
//! bytes, every step resumable, and nothing ever rewritten (rule 20).

use crate::common::{dwp, journal_events, refused, repo_root, writing_nothing};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The fixture whose plan this test makes again: its markdown, and its contract as a draft.
const FIXTURE: &str = "conformance-fixtures/record-valid-v7-fresh/PLAN_021_docs_site_migration";

/// A folder holding the fixture's markdown only (a plan before materialization), a draft of its
/// contract (no `contract_id`) and the approver's note: (the folder, the plan, the draft, the
/// note).
fn unmaterialized() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let source = repo_root().join(FIXTURE);
    let plan = root.path().join("PLAN_021_docs_site_migration");
    std::fs::create_dir(&plan).unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            std::fs::copy(&path, plan.join(path.file_name().unwrap())).unwrap();
        }
    }
    let mut contract: Value =
        serde_json::from_slice(&std::fs::read(source.join("contract.json")).unwrap()).unwrap();
    contract.as_object_mut().unwrap().remove("contract_id");
    let draft = root.path().join("draft.json");
    std::fs::write(&draft, serde_json::to_vec_pretty(&contract).unwrap()).unwrap();
    let note = root.path().join("note.md");
    std::fs::write(&note, "Approved as written.\n").unwrap();
    (root, plan, draft, note)
}

/// `dwp init PLAN --contract DRAFT --by maria.lopez --note NOTE --json`.
fn init(plan: &Path, draft: &Path, note: &Path) -> crate::common::Run {
    init_as(plan, draft, note, &["--json"])
}

fn init_as(plan: &Path, draft: &Path, note: &Path, extra: &[&str]) -> crate::common::Run {
    dwp()
        .args(["init", plan.to_str().unwrap(), "--contract"])
        .arg(draft)
        .args(["--by", "maria.lopez", "--note"])
        .arg(note)
        .args(extra)
        .run_utf8()
}

// Rule 19: manifest, then contract, then approval; the documents in the ledger's own bytes.
#[test]
fn rule_19_init_writes_manifest_contract_and_approval_in_the_ledgers_bytes() {
    let (_root, plan, draft, note) = unmaterialized();
    let run = init(&plan, &draft, &note);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.payload();
    for step in ["manifest", "contract", "approval"] {
        assert_eq!(report[step], "written", "{step}");
    }
    let fixture = repo_root().join(FIXTURE);
    for file in ["manifest.json", "contract.json"] {
        assert_eq!(
            std::fs::read(plan.join(file)).unwrap(),
            std::fs::read(fixture.join(file)).unwrap(),
            "{file} in the public ledger's bytes"
        );
    }
    let events = journal_events(&plan);
    assert_eq!(events.len(), 1, "the approval is the first event");
    assert_eq!(events[0]["type"], "approval");
    assert_eq!(events[0]["contract_id"], report["contract_id"]);
    let verify = dwp().args(["verify", plan.to_str().unwrap()]).run_utf8();
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    assert!(
        verify.stdout.contains("state.json agrees with the journal"),
        "{}",
        verify.stdout
    );
}

// Rule 19: each step idempotent and resumable; a run cut short after any step is completed by
// running it again, and a completed one writes nothing.
#[test]
fn rule_19_an_interrupted_init_is_completed_by_running_it_again() {
    let (_root, plan, draft, note) = unmaterialized();
    assert_eq!(init(&plan, &draft, &note).code, 0);
    let finished: Vec<(String, Vec<u8>)> = ["manifest.json", "contract.json"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(plan.join(f)).unwrap()))
        .collect();
    let done = writing_nothing(&plan, "a completed init run again", || {
        init(&plan, &draft, &note)
    });
    for step in ["manifest", "contract", "approval"] {
        assert_eq!(done.payload()[step], "found", "{step}");
    }
    // Cut short after the manifest, then after the contract.
    for kept in [
        &["manifest.json"][..],
        &["manifest.json", "contract.json"][..],
    ] {
        for file in ["contract.json", "journal.ndjson", "state.json"] {
            if !kept.contains(&file) {
                let _ = std::fs::remove_file(plan.join(file));
            }
        }
        let run = init(&plan, &draft, &note);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.payload()["manifest"], "found");
        assert_eq!(run.payload()["approval"], "written");
        for (file, bytes) in &finished {
            assert_eq!(&std::fs::read(plan.join(file)).unwrap(), bytes, "{file}");
        }
        assert_eq!(journal_events(&plan).len(), 1);
    }
}

// Rule 20: a v1/v2/v5 manifest and a stamped contract are never rewritten, and a folder with no
// markdown is not approvable; each refused before anything is written.
#[test]
fn rule_20_init_never_rewrites_and_never_approves_a_folder_without_markdown() {
    let (_root, plan, draft, note) = unmaterialized();
    let v5 = r#"{"schema": "https://deepworkplan.com/schema/plan-manifest/v5.json"}"#;
    std::fs::write(plan.join("manifest.json"), v5).unwrap();
    refused(&plan, "init", 1, &["never rewritten"], || {
        init_as(&plan, &draft, &note, &[])
    });
    std::fs::remove_file(plan.join("manifest.json")).unwrap();

    std::fs::write(plan.join("contract.json"), r#"{"contract_id": "other"}"#).unwrap();
    refused(
        &plan,
        "init",
        1,
        &["is stamped other", "never rewritten"],
        || init_as(&plan, &draft, &note, &[]),
    );
    std::fs::remove_file(plan.join("contract.json")).unwrap();

    for entry in std::fs::read_dir(&plan).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    std::fs::write(plan.join("notes.txt"), "no markdown here\n").unwrap();
    refused(&plan, "init", 1, &["no markdown", "rule 20"], || {
        init_as(&plan, &draft, &note, &[])
    });
}

#[test]
fn a_draft_that_is_no_valid_contract_of_this_plan_is_refused_before_anything_is_written() {
    let (root, plan, draft, note) = unmaterialized();
    let mut contract: Value = serde_json::from_slice(&std::fs::read(&draft).unwrap()).unwrap();
    contract["plan"] = "PLAN_022_another_plan".into();
    let other = root.path().join("other.json");
    std::fs::write(&other, serde_json::to_vec(&contract).unwrap()).unwrap();
    refused(
        &plan,
        "init",
        1,
        &["names the plan PLAN_022_another_plan"],
        || init_as(&plan, &other, &note, &[]),
    );
    contract["plan"] = "PLAN_021_docs_site_migration".into();
    contract.as_object_mut().unwrap().remove("tasks");
    std::fs::write(&other, serde_json::to_vec(&contract).unwrap()).unwrap();
    let run = refused(&plan, "init", 1, &["is no valid contract"], || {
        init_as(&plan, &other, &note, &[])
    });
    assert!(run.stderr.contains("hint: `dwp validate"), "{}", run.stderr);
}

#[test]
fn a_record_init_needs_the_approver_and_their_note() {
    let (_root, plan, draft, _note) = unmaterialized();
    let path = plan.to_str().unwrap();
    refused(&plan, "init", 2, &["--by NAME and --note FILE"], || {
        dwp()
            .args(["init", path, "--contract"])
            .arg(&draft)
            .run_utf8()
    });
}
