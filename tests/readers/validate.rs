//! `dwp validate` through the real binary: bad input of every kind, the exit codes, the `--json`
//! document, several targets, and snapshots of the human and JSON output and of `dwp --help`.
//!
//! Malformed inputs are made in temporary folders from a synthetic plan (`dwp::synth`), so each
//! test breaks exactly one thing. Every rejection must name the file and a JSON path
//! (`…/state.json: $.…`), exit 1, leave no panic on stderr, and change no byte on disk.

use crate::common;
use crate::common::{Dwp, Run, edit_state, field_strs, tree_digest, written};
use clap::CommandFactory;
use dwp::synth::SynthPlan;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;

/// An invalid fixture used for the output snapshots: three findings of three kinds.
const SNAPSHOT_FIXTURE: &str =
    "conformance-fixtures/multi-invariants/PLAN_several_invariants_broken";

/// The binary with a fixed clock, the caller's HOME, and a terminal width that does not depend
/// on the caller.
fn dwp() -> Dwp {
    let mut cmd = common::dwp();
    cmd.inherit_home()
        .fixed_width()
        .timeout(Duration::from_secs(60));
    cmd
}

fn validate(targets: &[&Path], json: bool) -> Run {
    let mut cmd = dwp();
    cmd.arg("validate").args(targets);
    if json {
        cmd.arg("--json");
    }
    cmd.run()
}

/// A conformant Full v5 plan of 4 tasks, 2 completed, in a fresh temporary folder.
fn synth_plan(name: &str) -> (TempDir, PathBuf) {
    written(SynthPlan::new(name, 4).completed(2))
}

fn state_text(plan: &Path) -> String {
    fs::read_to_string(plan.join("state.json")).expect("state.json")
}

/// Run `dwp validate PLAN` on a broken plan and check the contract for bad input: exit 1, no
/// panic, no byte changed, and a stdout line `PLAN/state.json: $…` that contains `needle`.
/// Returns that line.
fn assert_rejected(root: &TempDir, plan: &Path, needle: &str) -> String {
    let before = tree_digest(root.path());
    let result = validate(&[plan], false);
    let after = tree_digest(root.path());
    assert!(
        !result.stderr.contains("panicked"),
        "dwp panicked:\n{}",
        result.stderr
    );
    assert_eq!(
        result.code, 1,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        result.stdout, result.stderr
    );
    assert_eq!(before, after, "validate changed bytes on disk");
    let prefix = format!("{}: $", plan.join("state.json").display());
    let line = result
        .stdout
        .lines()
        .find(|line| line.starts_with(&prefix))
        .unwrap_or_else(|| {
            panic!(
                "no line starting with `{prefix}` (file and JSON path) in:\n{}",
                result.stdout
            )
        });
    assert!(
        line.contains(needle),
        "`{line}` does not mention `{needle}`"
    );
    assert!(
        result.stdout.contains("invalid: "),
        "no verdict line in:\n{}",
        result.stdout
    );
    line.to_owned()
}

// ------------------------------------------------------------------ malformed input

#[test]
fn a_byte_order_mark_is_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_bom_state");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(fs::read(plan.join("state.json")).unwrap());
    fs::write(plan.join("state.json"), bytes).unwrap();
    assert_rejected(&root, &plan, "byte order mark");
}

#[test]
fn invalid_utf8_is_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_invalid_utf8");
    let text = state_text(&plan);
    let mut bytes = text.into_bytes();
    let at = bytes.windows(9).position(|w| w == b"Synthetic").unwrap();
    bytes[at + 1] = 0xFF;
    fs::write(plan.join("state.json"), bytes).unwrap();
    assert_rejected(&root, &plan, "invalid UTF-8");
}

#[test]
fn trailing_garbage_is_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_trailing_garbage");
    let text = state_text(&plan) + "garbage\n";
    fs::write(plan.join("state.json"), text).unwrap();
    assert_rejected(&root, &plan, "trailing characters");
}

#[test]
fn a_directory_as_state_json_is_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_state_directory");
    fs::remove_file(plan.join("state.json")).unwrap();
    fs::create_dir(plan.join("state.json")).unwrap();
    assert_rejected(&root, &plan, "directory");
}

#[test]
fn a_symlink_leaving_the_plan_folder_is_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_symlink_outside");
    // A valid state, but outside the plan folder.
    fs::rename(plan.join("state.json"), root.path().join("outside.json")).unwrap();
    std::os::unix::fs::symlink("../outside.json", plan.join("state.json")).unwrap();
    assert_rejected(&root, &plan, "symlink");
}

#[test]
fn duplicate_json_keys_are_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_duplicate_keys");
    let text = state_text(&plan);
    let anchor = "\"title\": \"Synthetic task 3\",\n      \"status\": \"pending\",\n";
    assert!(text.contains(anchor));
    let text = text.replacen(
        anchor,
        &format!("{anchor}      \"status\": \"completed\",\n"),
        1,
    );
    fs::write(plan.join("state.json"), text).unwrap();
    let line = assert_rejected(&root, &plan, "duplicate key `status`");
    assert!(line.contains(": $.tasks[2]"), "{line}");
}

#[test]
fn an_unknown_field_is_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_unknown_field");
    edit_state(&plan, |s| {
        s["tasks"][0]["assignee"] = "alice".into();
    });
    let line = assert_rejected(&root, &plan, "assignee");
    assert!(line.contains(": $.tasks[0]: "), "{line}");
}

#[test]
fn a_wrong_type_is_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_wrong_type");
    edit_state(&plan, |s| {
        s["task_count"] = "4".into();
    });
    let line = assert_rejected(&root, &plan, "integer");
    assert!(line.contains(": $.task_count: "), "{line}");
}

#[test]
fn an_oversized_string_is_rejected() {
    let (root, plan) = synth_plan("PLAN_cli_oversized_string");
    edit_state(&plan, |s| {
        s["tasks"][0]["gates"][0]["evidence"] = "x".repeat(5_000).into();
    });
    let line = assert_rejected(&root, &plan, "longer than 500");
    assert!(line.contains(": $.tasks[0].gates[0].evidence: "), "{line}");
}

/// A finding quotes what it rejects, but never a whole oversized value: one clear message is
/// not a 100 KB line.
#[test]
fn an_oversized_string_is_not_echoed_in_full() {
    let (root, plan) = synth_plan("PLAN_cli_huge_string");
    edit_state(&plan, |s| {
        s["tasks"][0]["gates"][0]["evidence"] = "x".repeat(100_000).into();
    });
    let line = assert_rejected(&root, &plan, "$.tasks[0].gates[0].evidence");
    assert!(
        line.len() < 1_000,
        "the finding line is {} bytes long: it echoes the whole oversized value",
        line.len()
    );
}

#[test]
fn a_file_over_the_size_limit_is_rejected_without_reading_it() {
    let (_root, plan) = synth_plan("PLAN_cli_huge_file");
    let file = fs::OpenOptions::new()
        .write(true)
        .open(plan.join("state.json"))
        .unwrap();
    // Sparse: 65 MiB on paper, almost nothing on disk.
    file.set_len(dwp::store::MAX_ARTIFACT_BYTES + 1024 * 1024)
        .unwrap();
    drop(file);
    let result = validate(&[&plan], false);
    assert_eq!(result.code, 1, "{}", result.stdout);
    assert!(result.stdout.contains("state.json"), "{}", result.stdout);
    assert!(result.stdout.contains("limit"), "{}", result.stdout);
    assert!(!result.stderr.contains("panicked"), "{}", result.stderr);
}

/// A named pipe is not a regular file: refused at once, never opened and waited on.
#[test]
fn a_named_pipe_as_state_json_is_rejected_without_hanging() {
    let (root, plan) = synth_plan("PLAN_cli_state_fifo");
    fs::remove_file(plan.join("state.json")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(plan.join("state.json"))
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let mut cmd = dwp();
    cmd.arg("validate")
        .arg(&plan)
        .timeout(Duration::from_secs(10));
    let output = cmd.output();
    assert_eq!(
        output.status.code(),
        Some(1),
        "dwp did not answer within 10 s (killed: it waits on the pipe), or answered wrongly:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("named pipe"), "{stdout}");
    drop(root);
}

// ------------------------------------------------------------------ targets and exit codes

#[test]
fn a_nonexistent_path_exits_1_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("PLAN_does_not_exist");
    let result = validate(&[&missing], false);
    assert_eq!(result.code, 1);
    assert!(
        result.stdout.contains(&format!(
            "{}: no such plan folder or file",
            missing.display()
        )),
        "{}",
        result.stdout
    );
}

#[test]
fn no_arguments_is_a_usage_error() {
    let bare = dwp().run();
    assert_eq!(bare.code, 2, "dwp alone: {}", bare.stderr);
    // Outside any plan folder: a PLAN left out finds none (run from a fresh empty folder).
    let nowhere = tempfile::tempdir().unwrap();
    let result = dwp().in_dir(nowhere.path()).arg("validate").run();
    assert_eq!(result.code, 2);
    assert!(result.stdout.is_empty(), "{}", result.stdout);
    assert!(result.stderr.contains("no PLAN given"), "{}", result.stderr);
}

#[test]
fn a_newer_schema_generation_is_unverified() {
    let (_root, plan) = synth_plan("PLAN_cli_newer_generation");
    edit_state(&plan, |s| {
        s["schema"] = "https://deepworkplan.com/schema/plan-state/v6.json".into();
    });
    let result = validate(&[&plan], false);
    assert_eq!(result.code, 5, "{}", result.stdout);
    assert!(result.stdout.contains("UNVERIFIED"), "{}", result.stdout);
    let json = validate(&[&plan], true);
    let doc = common::document(&json.stdout);
    assert_eq!(doc["validate"]["verdict"], "unverified");
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["validate"]["findings"][0]["code"], "DWP004");
    assert_eq!(doc["validate"]["findings"][0]["severity"], "unverified");
}

#[test]
fn a_single_state_file_can_be_validated() {
    let (_root, plan) = synth_plan("PLAN_cli_single_file");
    let result = validate(&[&plan.join("state.json")], false);
    assert_eq!(result.code, 0, "{}", result.stdout);
    assert!(result.stdout.starts_with("valid: "), "{}", result.stdout);
}

#[test]
fn the_json_document_has_the_documented_shape() {
    let (_root, good) = synth_plan("PLAN_cli_json_valid");
    let result = validate(&[&good], true);
    assert_eq!(result.code, 0);
    let doc = common::document(&result.stdout);
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["dwp", "command", "ok", "exit", "validate"]);
    assert_eq!(doc["validate"]["targets"][0]["verdict"], "valid");
    assert_eq!(doc["dwp"], 2);
    assert_eq!(doc["command"], "validate");
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["validate"]["verdict"], "valid");
    assert_eq!(doc["validate"]["findings"], Value::Array(Vec::new()));

    let (_root, bad) = synth_plan("PLAN_cli_json_invalid");
    edit_state(&bad, |s| {
        s["completed_count"] = 3.into();
        s["tasks"][2]["commit"] = "HEAD".into();
    });
    let result = validate(&[&bad], true);
    assert_eq!(result.code, 1);
    let doc = common::document(&result.stdout);
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["validate"]["verdict"], "invalid");
    let findings = doc["validate"]["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for finding in findings {
        let code = finding["code"].as_str().unwrap();
        assert!(
            code.len() == 6
                && code.starts_with("DWP")
                && code[3..].bytes().all(|b| b.is_ascii_digit()),
            "{finding}"
        );
        assert_eq!(finding["severity"], "error");
        assert_eq!(
            finding["file"].as_str().unwrap(),
            bad.join("state.json").display().to_string()
        );
        assert!(
            finding["path"].as_str().unwrap().starts_with('$'),
            "{finding}"
        );
        assert!(
            !finding["message"].as_str().unwrap().is_empty(),
            "{finding}"
        );
    }
}

#[test]
fn several_targets_are_judged_together() {
    let (_a, valid) = synth_plan("PLAN_cli_several_valid");
    let (_b, invalid) = synth_plan("PLAN_cli_several_invalid");
    edit_state(&invalid, |s| {
        s["status"] = "pending".into();
    });
    let (_c, newer) = synth_plan("PLAN_cli_several_newer");
    edit_state(&newer, |s| {
        s["schema"] = "https://deepworkplan.com/schema/plan-state/v6.json".into();
    });

    let result = validate(&[&valid, &invalid], false);
    assert_eq!(result.code, 1, "an invalid target fails the run");
    assert!(
        result.stdout.contains("valid: PLAN_cli_several_valid"),
        "{}",
        result.stdout
    );
    assert!(
        result
            .stdout
            .contains(&format!("invalid: {}", invalid.display())),
        "{}",
        result.stdout
    );

    let result = validate(&[&valid, &newer], false);
    assert_eq!(result.code, 5, "unverified without an error");
    let result = validate(&[&newer, &invalid, &valid], false);
    assert_eq!(result.code, 1, "an error outweighs unverified");

    let result = validate(&[&invalid, &newer], true);
    let doc = common::document(&result.stdout);
    assert_eq!(doc["validate"]["verdict"], "invalid");
    let files = field_strs(&doc["validate"]["findings"], "file");
    assert!(
        files.iter().any(|f| f.contains("PLAN_cli_several_invalid")),
        "{files:?}"
    );
    assert!(
        files.iter().any(|f| f.contains("PLAN_cli_several_newer")),
        "{files:?}"
    );
}

// ------------------------------------------------------------------ snapshots

#[test]
fn snapshot_human_output_of_an_invalid_plan() {
    let result = dwp()
        .in_dir(common::repo_root())
        .args(["validate", SNAPSHOT_FIXTURE])
        .run();
    assert_eq!(result.code, 1);
    insta::assert_snapshot!("validate_invalid_human", result.stdout);
}

#[test]
fn snapshot_json_output_of_an_invalid_plan() {
    let result = dwp()
        .in_dir(common::repo_root())
        .args(["validate", SNAPSHOT_FIXTURE, "--json"])
        .run();
    assert_eq!(result.code, 1);
    insta::assert_snapshot!("validate_invalid_json", result.stdout);
}

#[test]
fn snapshot_help_lists_every_command_and_the_exit_codes() {
    let result = dwp().arg("--help").run();
    assert_eq!(result.code, 0);
    for command in dwp::cli::Cli::command().get_subcommands() {
        let listed = format!("  {} ", command.get_name());
        assert!(
            result.stdout.contains(&listed),
            "`dwp --help` does not list `{}`:\n{}",
            command.get_name(),
            result.stdout
        );
    }
    for code in 0..=5 {
        assert!(
            result.stdout.contains(&format!("\n  {code}  ")),
            "exit code {code} missing from:\n{}",
            result.stdout
        );
    }
    insta::assert_snapshot!("help", result.stdout);
}

/// A state of 1 MiB or more is typed on one thread while its text is scanned on another
/// (`plan::state_from_bytes`): what typing alone lets through (a `null` serde reads as an absent
/// value) is still refused there, as it is in a small state.
#[test]
fn a_large_state_with_a_null_typing_alone_accepts_is_rejected() {
    let (root, plan) = written(SynthPlan::new("PLAN_large_null_evidence", 3_000).completed(1_500));
    edit_state(&plan, |state| {
        state["tasks"][1_000]["gates"][0]["evidence"] = Value::Null;
    });
    let size = fs::metadata(plan.join("state.json")).unwrap().len();
    assert!(size >= 1024 * 1024, "typed beside its scan: {size} bytes");
    assert_rejected(&root, &plan, "$.tasks[1000].gates[0].evidence");
}

/// While an interrupted write's record is pending the files disagree by design, so every hint
/// `verify` and `validate` print names the record's completion, never a step that would
/// refuse (a second `dwp init` on a plan whose state.json the record is about to write).
#[test]
fn while_an_intent_record_is_pending_every_hint_names_its_completion() {
    let (root, name) = common::fixture_copy("verify-dwp087-interrupted-write");
    // A killed init: the record written, state.json not yet.
    fs::remove_file(root.path().join(&name).join("state.json")).unwrap();
    for reader in ["verify", "validate"] {
        let run = common::dwp_in(root.path(), &[reader, &name]);
        let output = format!("{}{}", run.stdout, run.stderr);
        let hints: Vec<&str> = output
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("hint: "))
            .collect();
        assert!(!hints.is_empty(), "{reader} printed no hint:\n{output}");
        for hint in hints {
            assert!(
                hint.contains("`dwp reconcile --write "),
                "{reader}: a hint that does not complete the pending record: {hint}\n{output}"
            );
        }
    }
}
