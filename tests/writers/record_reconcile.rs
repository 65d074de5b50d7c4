//! `dwp reconcile` on a record plan (DWP v6/v7; issue #33, docs/record-plans.md "Writing a record
//! plan"): the state derives from the journal, never the reverse. Without `--write` it compares
//! and writes nothing; with it, the journal's writer mends the live journal as the public ledger
//! does (a torn tail cut at its line start, a lost final newline restored, each recorded by a
//! `journal_repair` event and a PROGRESS.md line) and the projection is written.

use crate::common::{dwp, fixture_plan, journal_events, refused, snapshot, writing_nothing};
use serde_json::Value;
use std::path::Path;

/// The verdict and the snapshot's agreement, as `dwp verify --json` states them.
fn verified(plan: &Path) -> (String, String) {
    let run = dwp()
        .args(["verify", plan.to_str().unwrap(), "--json"])
        .run_utf8();
    let report = &run.payload()["plans"][0];
    (
        report["verdict"].as_str().unwrap().to_owned(),
        report["record"]["snapshot"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
    )
}

#[test]
fn without_write_a_torn_journal_is_named_and_nothing_is_written() {
    let (_root, plan) = fixture_plan("record-dwp105-torn-tail");
    let path = plan.to_str().unwrap();
    let run = writing_nothing(&plan, "dwp reconcile", || {
        dwp().args(["reconcile", path]).run_utf8()
    });
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("a torn tail at byte"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains(&format!("`dwp reconcile {path} --write`"))
    );
    let json = writing_nothing(&plan, "dwp reconcile --json", || {
        dwp().args(["reconcile", path, "--json"]).run_utf8()
    });
    let report = json.payload();
    assert_eq!(report["in_sync"], false);
    assert!(report["to_mend"].as_str().unwrap().contains("torn tail"));
}

// Rule 10 (the journal is append-only; a torn tail is not an event) and the writer's mend:
// the tail is cut at its line start, and the cut is recorded.
#[test]
fn write_cuts_a_torn_tail_at_its_line_start_records_the_repair_and_projects_the_state() {
    let (_root, plan) = fixture_plan("record-dwp105-torn-tail");
    let before = std::fs::read(plan.join("journal.ndjson")).unwrap();
    let cut = before[..before.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let highest = before[..cut]
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice::<Value>(line).unwrap()["seq"]
                .as_i64()
                .unwrap()
        })
        .max()
        .unwrap();
    let run = dwp()
        .args(["reconcile", plan.to_str().unwrap(), "--write", "--json"])
        .run_utf8();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.payload();
    assert_eq!(report["repairs"][0]["byte_offset"], cut);
    assert_eq!(report["repairs"][0]["seq"], highest + 1);
    let after = std::fs::read(plan.join("journal.ndjson")).unwrap();
    assert_eq!(
        after[..cut],
        before[..cut],
        "every complete event is kept, byte for byte"
    );
    let repair = journal_events(&plan).pop().unwrap();
    assert_eq!(repair["type"], "journal_repair");
    assert_eq!(repair["byte_offset"], cut);
    assert_eq!(repair["seq"], highest + 1);
    assert_eq!(repair["actor"]["kind"], "helper");
    // One compact line with sorted keys, as the public ledger frames it.
    let line = &after[cut..];
    assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
    assert!(line.starts_with(b"{\"actor\":{\"identity\":\"dwp/"));
    let progress = std::fs::read_to_string(plan.join("PROGRESS.md")).unwrap();
    assert!(
        progress.contains(&format!("mended at byte {cut}")),
        "{progress}"
    );
    assert_eq!(verified(&plan), ("CONFORMANT".into(), "agrees".into()));
    // Mended once: a second run finds nothing to do.
    let again = dwp()
        .args(["reconcile", plan.to_str().unwrap(), "--write", "--json"])
        .run_utf8();
    assert_eq!(again.payload()["repairs"], serde_json::json!([]));
    assert_eq!(again.payload()["written"], false);
}

#[test]
fn write_restores_a_lost_final_newline_and_keeps_the_complete_event() {
    let (_root, plan) = fixture_plan("record-advisory-dwp106-no-final-newline");
    let before = std::fs::read(plan.join("journal.ndjson")).unwrap();
    assert!(!before.ends_with(b"\n"));
    let run = dwp()
        .args(["reconcile", plan.to_str().unwrap(), "--write"])
        .run_utf8();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("mended:"), "{}", run.stdout);
    let after = std::fs::read(plan.join("journal.ndjson")).unwrap();
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after[before.len()], b'\n');
    let repair = journal_events(&plan).pop().unwrap();
    assert_eq!(repair["byte_offset"], before.len());
    assert!(
        repair["cause"]
            .as_str()
            .unwrap()
            .contains("framing newline restored")
    );
    assert_eq!(verified(&plan), ("CONFORMANT".into(), "agrees".into()));
}

#[test]
fn a_stale_snapshot_is_regenerated_from_the_journal_with_no_journal_write() {
    let (_root, plan) = fixture_plan("record-advisory-dwp113-stale-snapshot");
    let journal = std::fs::read(plan.join("journal.ndjson")).unwrap();
    let stale = dwp().args(["reconcile", plan.to_str().unwrap()]).run_utf8();
    assert_eq!(stale.code, 1);
    assert!(stale.stdout.contains("stale:"), "{}", stale.stdout);
    let run = dwp()
        .args(["reconcile", plan.to_str().unwrap(), "--write"])
        .run_utf8();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("state.json regenerated from the journal")
    );
    assert_eq!(std::fs::read(plan.join("journal.ndjson")).unwrap(), journal);
    assert_eq!(verified(&plan), ("CONFORMANT".into(), "agrees".into()));
    assert!(!plan.join(".ledger.lock").exists(), "the lock is released");
}

// Seq continues above archived segments (issue #33): a mend of a live journal that holds no
// complete event is numbered above the archive's top.
#[test]
fn a_repair_is_numbered_above_the_archived_segments() {
    let (_root, plan) = fixture_plan("record-valid-v6-archived");
    std::fs::write(plan.join("journal.ndjson"), b"{\"seq\": 9, \"ty").unwrap();
    let run = dwp()
        .args(["reconcile", plan.to_str().unwrap(), "--write", "--json"])
        .run_utf8();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = journal_events(&plan);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["seq"], 5, "the archive holds seq 1 to 4");
    assert_eq!(lines[0]["byte_offset"], 0);
}

#[test]
fn a_torn_archive_is_never_repaired_and_nothing_is_written() {
    let (_root, plan) = fixture_plan("record-valid-v6-archived");
    let archive = plan.join("journal-archive-000001-000004.ndjson");
    let mut bytes = std::fs::read(&archive).unwrap();
    bytes.extend_from_slice(b"{\"torn\":");
    std::fs::write(&archive, bytes).unwrap();
    let run = refused(
        &plan,
        "reconcile",
        1,
        &["archived history is never repaired"],
        || {
            dwp()
                .args(["reconcile", plan.to_str().unwrap(), "--write"])
                .run_utf8()
        },
    );
    assert!(run.stderr.contains("journal-archive-000001-000004.ndjson"));
}

#[test]
fn a_changed_snapshot_refuses_the_write_before_any_mend() {
    let (_root, plan) = fixture_plan("record-dwp105-torn-tail");
    let wrong = "0".repeat(64);
    refused(
        &plan,
        "reconcile",
        3,
        &["the snapshot moved", "state.json"],
        || {
            dwp()
                .args(["reconcile", plan.to_str().unwrap(), "--write"])
                .args(["--expected-sha256", &wrong])
                .run_utf8()
        },
    );
}

#[test]
fn the_markdown_index_flags_are_refused_on_a_record_plan() {
    let (_root, plan) = fixture_plan("record-valid-v7-in-progress");
    for flag in ["--git", "--dry-run", "--diff"] {
        let before = snapshot(&plan);
        let run = dwp()
            .args(["reconcile", plan.to_str().unwrap(), "--write", flag])
            .run_utf8();
        assert_eq!(run.code, 2, "{flag}: {}", run.stderr);
        assert!(run.stderr.contains("record plan"), "{}", run.stderr);
        assert_eq!(snapshot(&plan), before);
    }
}

#[test]
fn a_plan_whose_contract_cannot_be_judged_is_never_written() {
    let (_root, plan) = fixture_plan("record-dwp002-contract-duplicate-key");
    let run = refused(&plan, "reconcile", 1, &["cannot judge"], || {
        dwp()
            .args(["reconcile", plan.to_str().unwrap(), "--write"])
            .run_utf8()
    });
    // The hint is the problem's own (restore the file), naming the command that lists the rest.
    assert!(
        run.stderr
            .contains("hint: restore the file from the plan's history; `dwp validate "),
        "{}",
        run.stderr
    );
}
