//! `dwp contract declare / record / check` through the real binary (issue #8, seed 002): one
//! test per rule, named after it. The repository is a temp folder holding the plan at
//! `.dwp/plans/PLAN_cli_contract_rules` (so the root is found from the layout), with task 3 of 5
//! in progress. Hook payloads have the shape Claude Code writes on stdin.
//!
//! Every refusal is checked three ways: the exit code, the one-line message
//! `dwp contract <sub>: WHAT (PLACE)` with its hint, and the bytes on disk (declaration, ledger,
//! state.json) unchanged.

use crate::common;
use crate::common::{Dwp, NOW, Run, copy_plan, dwp, sha256_hex, state_of};
use dwp::synth::SynthPlan;
use serde_json::{Value, json};
use std::fs;
use std::path::PathBuf;
use tempfile::TempDir;

const PLAN_NAME: &str = "PLAN_cli_contract_rules";

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// A repository with a plan whose task 3 is in progress, and two source files.
struct Repo {
    _tmp: TempDir,
    root: PathBuf,
    plan: PathBuf,
}

/// `dwp` at the test clock with no HOME; `stdin` written to its standard input.
fn execute(command: &mut Dwp, stdin: Option<&str>) -> Run {
    if let Some(stdin) = stdin {
        command.stdin(stdin);
    }
    command.run_utf8()
}

impl Repo {
    /// Task 3 completed with an asserted gate (`--gate`): out of progress, its files untouched.
    fn complete_task_3_asserted(&self) {
        let completed = self.run(
            &[
                "update",
                "PLAN",
                "--task",
                "3",
                "--status",
                "completed",
                "--gate",
                "cargo test|0|14 passed",
            ],
            None,
        );
        assert_eq!(completed.code, 0, "{completed:?}");
    }

    fn new() -> Repo {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = fs::canonicalize(tmp.path()).expect("canonical temp dir");
        let plans = root.join(".dwp/plans");
        fs::create_dir_all(&plans).unwrap();
        let plan = SynthPlan::new(PLAN_NAME, 5)
            .completed(2)
            .write(&plans)
            .expect("write plan");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/y.rs"), "fn old_name() {}\n").unwrap();
        fs::write(root.join("src/x.rs"), "// to be deleted\n").unwrap();
        let repo = Repo {
            _tmp: tmp,
            root,
            plan,
        };
        let started = repo.run(
            &["update", "PLAN", "--task", "3", "--status", "in_progress"],
            None,
        );
        assert_eq!(started.code, 0, "{started:?}");
        repo
    }

    /// Run dwp in the repository; `PLAN` in `args` stands for the plan folder.
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Run {
        let plan = self.plan.to_str().unwrap();
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "PLAN" { plan } else { a })
            .collect();
        execute(dwp().in_dir(&self.root).args(&args), stdin)
    }

    fn declare(&self, flags: &[&str]) -> Run {
        let mut args = vec!["contract", "declare", "PLAN", "--task", "3"];
        args.extend_from_slice(flags);
        let run = self.run(&args, None);
        assert_eq!(run.code, 0, "declare {flags:?}: {run:?}");
        run
    }

    fn check(&self) -> Run {
        self.run(&["contract", "check", "PLAN"], None)
    }

    fn stop(&self, stop_hook_active: bool) -> Run {
        self.run(
            &["contract", "check", "--hook", "PLAN"],
            Some(&stop_payload(stop_hook_active)),
        )
    }

    /// A PostToolUse payload for `tool` on `path` (absolute, as Claude Code sends it).
    fn post_tool_use(&self, tool: &str, path: &str) -> String {
        let file = self.root.join(path);
        let input = if tool == "NotebookEdit" {
            json!({"notebook_path": file, "new_source": "x = 1"})
        } else {
            json!({"file_path": file, "old_string": "old_name", "new_string": "new_name"})
        };
        json!({
            "session_id": "0b9e3c1a-session",
            "transcript_path": "/nonexistent/transcript.jsonl",
            "cwd": self.root,
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_response": {"filePath": file, "success": true}
        })
        .to_string()
    }

    fn record(&self, tool: &str, path: &str) -> Run {
        let run = self.run(
            &["contract", "record", "PLAN"],
            Some(&self.post_tool_use(tool, path)),
        );
        assert_eq!(run.code, 0, "record {tool} {path}: {run:?}");
        run
    }

    fn write(&self, path: &str, text: &str) {
        fs::write(self.root.join(path), text).unwrap();
    }

    fn ledger_dir(&self) -> PathBuf {
        self.plan.join("ledger")
    }

    fn expected_path(&self) -> PathBuf {
        self.ledger_dir().join("task-3.expected.json")
    }

    fn ledger_path(&self) -> PathBuf {
        self.ledger_dir().join("task-3.ledger.jsonl")
    }

    fn state(&self) -> Value {
        state_of(&self.plan)
    }

    fn ledger_lines(&self) -> Vec<Value> {
        fs::read_to_string(self.ledger_path())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a ledger line is JSON"))
            .collect()
    }

    /// Replace the temp root with `[ROOT]` for snapshots.
    fn redact(&self, text: &str) -> String {
        text.replace(self.root.to_str().unwrap(), "[ROOT]")
    }
}

fn stop_payload(stop_hook_active: bool) -> String {
    json!({
        "session_id": "0b9e3c1a-session",
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": "/nonexistent",
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": stop_hook_active
    })
    .to_string()
}

/// A refusal: exit 1, `dwp contract <sub>: ... (PLACE)` with `words`, a hint, nothing changed.
fn refused(repo: &Repo, args: &[&str], stdin: Option<&str>, words: &[&str], place: &str) -> Run {
    let command = format!("contract {}", args[1]);
    let run = common::refused(&repo.plan, &command, 1, words, || repo.run(args, stdin));
    run.assert_place(place);
    run.assert_hinted();
    run
}

// ---------------------------------------------------------------------------------------------
// The phantom edit (seed 002, "What this kills")
// ---------------------------------------------------------------------------------------------

#[test]
fn phantom_edit_is_blocked_naming_both_paths_then_allowed_once_really_done() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs:new_name", "--delete", "src/x.rs"]);

    // The agent claims it modified Y and deleted X; it touched nothing.
    let blocked = repo.stop(false);
    assert_eq!(blocked.code, 2, "{blocked:?}");
    assert!(blocked.stderr.contains("src/y.rs (modify)"), "{blocked:?}");
    assert!(
        blocked.stderr.contains("src/x.rs (delete): still exists"),
        "{blocked:?}"
    );
    assert!(blocked.stdout.is_empty());

    // Really edit Y (recorded by the PostToolUse hook) and delete X.
    repo.write("src/y.rs", "fn new_name() {}\n");
    repo.record("Edit", "src/y.rs");
    fs::remove_file(repo.root.join("src/x.rs")).unwrap();
    let allowed = repo.stop(true);
    assert_eq!(allowed.code, 0, "{allowed:?}");
    assert!(allowed.stdout.contains("holds"), "{allowed:?}");
}

// ---------------------------------------------------------------------------------------------
// One test per leg removed: the guarantee breaks without it, and the check catches it
// ---------------------------------------------------------------------------------------------

#[test]
fn leg_recording_a_modify_with_no_ledger_entry_fails_even_if_the_file_changed() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs"]);
    repo.write("src/y.rs", "fn changed_outside_the_tools() {}\n");
    let run = repo.check();
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("FAIL  src/y.rs (modify): no recorded edit since the declaration"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("content unchanged"), "{run:?}");
}

#[test]
fn leg_content_a_recorded_edit_that_left_the_bytes_unchanged_fails() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs"]);
    repo.record("Edit", "src/y.rs");
    let run = repo.check();
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("FAIL  src/y.rs (modify): content unchanged since the declaration"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("no recorded edit"), "{run:?}");
}

#[test]
fn leg_symbol_present_only_inside_a_longer_identifier_fails() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs:validate_token"]);
    repo.write(
        "src/y.rs",
        "fn validate_token_v2() {}\nfn prevalidate_token() {}\n",
    );
    repo.record("Edit", "src/y.rs");
    let run = repo.check();
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("required symbol `validate_token` appears only inside a longer name"),
        "{run:?}"
    );

    repo.write("src/y.rs", "fn validate_token() {}\n");
    let run = repo.check();
    assert_eq!(run.code, 0, "the whole word passes: {run:?}");
}

#[test]
fn leg_declaration_every_expectation_is_listed_in_the_report() {
    let repo = Repo::new();
    repo.declare(&[
        "--create",
        "src/new.rs:fresh",
        "--modify",
        "src/y.rs",
        "--delete",
        "src/x.rs",
    ]);
    let run = repo.check();
    assert_eq!(run.code, 1);
    for line in [
        "FAIL  src/new.rs (create): does not exist: it was to be created",
        "FAIL  src/y.rs (modify): no recorded edit since the declaration",
        "FAIL  src/y.rs (modify): content unchanged since the declaration",
        "FAIL  src/x.rs (delete): still exists: it was to be deleted",
    ] {
        assert!(run.stdout.contains(line), "{line:?} missing from {run:?}");
    }
    repo.write("src/new.rs", "pub fn fresh() {}\n");
    repo.record("Write", "src/new.rs");
    let run = repo.check();
    assert!(run.stdout.contains("ok    src/new.rs (create)"), "{run:?}");
    let line = &repo.ledger_lines()[0];
    assert_eq!(
        line["op"], "create",
        "a Write of a file absent at declaration is a create"
    );
}

#[test]
fn create_fails_when_the_file_existed_at_declaration_even_if_the_declaration_is_edited() {
    let repo = Repo::new();
    repo.declare(&["--create", "src/new.rs"]);
    repo.write("src/new.rs", "made\n");
    assert_eq!(repo.check().code, 0);
    // A declaration whose snapshot says the file existed cannot be satisfied by a create.
    let mut declaration: Value =
        serde_json::from_slice(&fs::read(repo.expected_path()).unwrap()).unwrap();
    declaration["filesExpected"][0]["before"] = json!({"exists": true, "sha256": "a".repeat(64)});
    fs::write(
        repo.expected_path(),
        serde_json::to_vec_pretty(&declaration).unwrap(),
    )
    .unwrap();
    let run = repo.check();
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("already existed when the task was declared"),
        "{run:?}"
    );
}

#[test]
fn modify_counts_only_ledger_entries_made_after_the_declaration() {
    let repo = Repo::new();
    // An edit recorded before the task was declared (the root comes from the .dwp layout).
    repo.write("src/y.rs", "fn new_name() {}\n");
    repo.record("Edit", "src/y.rs");
    repo.declare(&["--modify", "src/y.rs"]);
    repo.write("src/y.rs", "fn newer_name() {}\n");
    let run = repo.check();
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("no recorded edit since the declaration"),
        "{run:?}"
    );
    repo.record("MultiEdit", "src/y.rs");
    assert_eq!(repo.check().code, 0);
}

#[test]
fn check_json_is_one_document_with_every_expectation() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs:new_name", "--delete", "src/x.rs"]);
    let run = repo.run(&["--json", "contract", "check", "PLAN"], None);
    assert_eq!(run.code, 1);
    let doc = common::document(&run.stdout);
    assert_eq!(doc["dwp"], 2);
    assert_eq!(doc["command"], "contract check");
    assert_eq!(doc["contract_check"]["passed"], false);
    insta::assert_snapshot!("check_json_failed", repo.redact(&run.stdout));
}

// ---------------------------------------------------------------------------------------------
// The retry ladder
// ---------------------------------------------------------------------------------------------

#[test]
fn ladder_third_consecutive_failure_blocks_the_task_and_allows_the_stop() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs", "--delete", "src/x.rs"]);

    let first = repo.stop(false);
    assert_eq!(first.code, 2, "{first:?}");
    assert!(first.stderr.contains("failure 1 of 3"), "{first:?}");
    assert!(first.stderr.contains("Tier 1"), "{first:?}");
    // stop_hook_active: the agent continued because of the block; the ladder still counts.
    let second = repo.stop(true);
    assert_eq!(second.code, 2, "{second:?}");
    assert!(second.stderr.contains("failure 2 of 3"), "{second:?}");
    assert!(second.stderr.contains("Tier 2"), "{second:?}");
    assert_eq!(repo.state()["tasks"][2]["status"], "in_progress");

    let third = repo.stop(true);
    assert_eq!(
        third.code, 0,
        "the third failure allows the stop: {third:?}"
    );
    assert!(third.stdout.contains("task 3 is now BLOCKED"), "{third:?}");
    let state = repo.state();
    assert_eq!(state["tasks"][2]["status"], "blocked");
    assert_eq!(state["status"], "blocked");
    let reason = state["blocked"]["reason"].as_str().unwrap();
    assert!(reason.contains("src/y.rs (modify)"), "{reason}");
    assert!(
        reason.contains("src/x.rs (delete): still exists"),
        "{reason}"
    );
    assert!(
        state["blocked"]["needs"]
            .as_str()
            .unwrap()
            .contains("correction task")
    );
    assert_eq!(state["blocked"]["task"], 3);

    // The next stop is allowed (the task is blocked), not a fourth block: no endless loop.
    let fourth = repo.stop(true);
    assert_eq!(fourth.code, 0, "{fourth:?}");
    let status = repo.run(&["status", "PLAN"], None);
    assert!(status.stdout.contains("BLOCKED task 3"), "{status:?}");
    assert!(
        status.stdout.contains("src/x.rs (delete): still exists"),
        "{status:?}"
    );
    let verify = repo.run(&["verify", "PLAN"], None);
    assert_eq!(
        verify.code, 0,
        "a blocked plan is still conformant: {verify:?}"
    );
}

#[test]
fn ladder_escalation_is_shown_by_dwp_verify() {
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    for active in [false, true, true] {
        repo.stop(active);
    }
    assert_eq!(repo.state()["tasks"][2]["status"], "blocked");
    let verify = repo.run(&["verify", "PLAN"], None);
    assert!(verify.stdout.contains("DWP092"), "{verify:?}");
    assert!(
        verify.stdout.contains("src/x.rs (delete): still exists"),
        "{verify:?}"
    );
}

#[test]
fn ladder_a_passing_check_resets_the_count() {
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    assert_eq!(repo.stop(false).code, 2);
    assert_eq!(repo.stop(true).code, 2);
    fs::remove_file(repo.root.join("src/x.rs")).unwrap();
    assert_eq!(repo.stop(true).code, 0);
    // The count is back at 0; the file keeps the declaration seen met.
    let ladder: Value =
        serde_json::from_slice(&fs::read(repo.ledger_dir().join("task-3.check.json")).unwrap())
            .unwrap();
    assert_eq!(ladder["consecutive_failures"], 0, "{ladder}");
    assert_eq!(
        ladder["met"],
        sha256_hex(&fs::read(repo.expected_path()).unwrap())
    );
    fs::write(repo.root.join("src/x.rs"), "back\n").unwrap();
    let again = repo.stop(false);
    assert_eq!(again.code, 2, "{again:?}");
    assert!(again.stderr.contains("failure 1 of 3"), "{again:?}");
    assert_eq!(repo.state()["tasks"][2]["status"], "in_progress");
}

#[test]
fn ladder_the_count_is_durable_per_task_in_the_plan_folder() {
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    repo.stop(false);
    let count: Value =
        serde_json::from_slice(&fs::read(repo.ledger_dir().join("task-3.check.json")).unwrap())
            .unwrap();
    assert_eq!(count["consecutive_failures"], 1);
    assert_eq!(count["task"], 3);
    assert_eq!(
        count["last_failure"][0],
        "src/x.rs (delete): still exists: it was to be deleted"
    );
}

#[test]
fn ladder_an_internal_error_blocks_the_stop_and_climbs_the_same_ladder() {
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    let bad = repo.run(&["contract", "check", "--hook", "PLAN"], Some("{not json"));
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("malformed hook payload"), "{bad:?}");
    assert!(bad.stderr.contains("could not be checked"), "{bad:?}");
    fs::write(repo.expected_path(), "{\"schema\": 1}\n").unwrap();
    let invalid = repo.stop(true);
    assert_eq!(invalid.code, 2, "{invalid:?}");
    assert!(
        invalid.stderr.contains("task-3.expected.json: $"),
        "{invalid:?}"
    );
    let third = repo.stop(true);
    assert_eq!(third.code, 0, "the ladder ends the loop: {third:?}");
    assert_eq!(repo.state()["tasks"][2]["status"], "blocked");
}

#[test]
fn ladder_no_task_in_progress_allows_the_stop_without_counting() {
    let repo = Repo::new();
    let run = repo.run(
        &["update", "PLAN", "--task", "3", "--status", "pending"],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let stop = repo.stop(false);
    assert_eq!(stop.code, 0, "{stop:?}");
    assert!(stop.stdout.contains("no task is in progress"));
    assert!(!repo.ledger_dir().exists(), "nothing written");
}

#[test]
fn require_declaration_makes_an_undeclared_task_fail() {
    let repo = Repo::new();
    assert_eq!(
        repo.check().code,
        0,
        "without the flag an undeclared task passes"
    );
    let run = repo.run(
        &["contract", "check", "--require-declaration", "PLAN"],
        None,
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("declares no files"), "{run:?}");
    let hook = repo.run(
        &[
            "contract",
            "check",
            "--hook",
            "--require-declaration",
            "PLAN",
        ],
        Some(&stop_payload(false)),
    );
    assert_eq!(hook.code, 2, "{hook:?}");
}

// ---------------------------------------------------------------------------------------------
// Declare
// ---------------------------------------------------------------------------------------------

#[test]
fn declare_writes_the_snapshot_and_refuses_a_second_declaration_without_replace() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs:a,b", "--create", "src/new.rs"]);
    let first: Value = serde_json::from_slice(&fs::read(repo.expected_path()).unwrap()).unwrap();
    insta::assert_snapshot!(
        "declaration",
        repo.redact(&serde_json::to_string_pretty(&first).unwrap())
    );

    refused(
        &repo,
        &[
            "contract", "declare", "PLAN", "--task", "3", "--delete", "src/x.rs",
        ],
        None,
        &["task 3 already has a declaration", "--replace"],
        "task-3.expected.json",
    );
    let first_bytes = fs::read(repo.expected_path()).unwrap();
    repo.declare(&["--replace", "--delete", "src/x.rs"]);
    let second: Value = serde_json::from_slice(&fs::read(repo.expected_path()).unwrap()).unwrap();
    assert_eq!(second["filesExpected"].as_array().unwrap().len(), 1);
    assert_eq!(second["replaced"][0]["declared_at"], NOW);
    assert_eq!(second["replaced"][0]["sha256"], sha256_hex(&first_bytes));
}

#[test]
fn declare_refuses_paths_escaping_the_root() {
    let repo = Repo::new();
    for (flag, path) in [
        ("--modify", "../outside.rs"),
        ("--create", "/etc/new"),
        ("--delete", "src/../../x"),
    ] {
        refused(
            &repo,
            &["contract", "declare", "PLAN", "--task", "3", flag, path],
            None,
            &["is outside the repository"],
            flag,
        );
    }
    assert!(!repo.expected_path().exists());
}

#[test]
fn declare_refuses_an_op_that_could_never_pass() {
    let repo = Repo::new();
    for (flag, path, words) in [
        (
            "--modify",
            "src/missing.rs",
            "does not exist: a file the task makes is declared with --create",
        ),
        ("--create", "src/y.rs", "already exists"),
        ("--delete", "src/missing.rs", "nothing to delete"),
    ] {
        refused(
            &repo,
            &["contract", "declare", "PLAN", "--task", "3", flag, path],
            None,
            &[words],
            flag,
        );
    }
    refused(
        &repo,
        &[
            "contract", "declare", "PLAN", "--task", "9", "--modify", "src/y.rs",
        ],
        None,
        &["there is no task 9"],
        "--task",
    );
}

// ---------------------------------------------------------------------------------------------
// Record: hook payloads end to end, bad input
// ---------------------------------------------------------------------------------------------

#[test]
fn record_appends_one_line_per_file_writing_tool_from_real_payload_shapes() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs", "--create", "nb.ipynb"]);
    for (tool, path) in [
        ("Write", "nb.ipynb"),
        ("Edit", "src/y.rs"),
        ("MultiEdit", "src/y.rs"),
        ("NotebookEdit", "nb.ipynb"),
    ] {
        let run = repo.record(tool, path);
        assert!(run.stdout.starts_with("recorded task 3: "), "{run:?}");
    }
    let skipped = repo.record("Read", "src/y.rs");
    assert!(
        skipped.stdout.contains("Read writes no file"),
        "{skipped:?}"
    );
    let mcp = repo.record("mcp__github__get_issue", "src/y.rs");
    assert!(mcp.stdout.contains("writes no file"), "{mcp:?}");
    let lines = repo.ledger_lines();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[1],
        json!({"ts": NOW, "tool": "Edit", "path": "src/y.rs", "op": "modify", "taskId": 3,
               "plan": PLAN_NAME, "session": "0b9e3c1a-session"})
    );
    assert_eq!(lines[0]["op"], "create");
    assert_eq!(lines[3]["tool"], "NotebookEdit");
    let schema: Value =
        serde_json::from_str(dwp::commands::contract::format::LEDGER_LINE_SCHEMA.text).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    for line in &lines {
        assert!(validator.is_valid(line), "{line}");
    }
}

#[test]
fn record_resolves_a_relative_file_path_against_the_payload_cwd() {
    let repo = Repo::new();
    let payload = json!({"hook_event_name": "PostToolUse", "tool_name": "Edit",
        "cwd": repo.root.join("src"), "session_id": "s", "tool_input": {"file_path": "./y.rs"}});
    let run = repo.run(&["contract", "record", "PLAN"], Some(&payload.to_string()));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.ledger_lines()[0]["path"], "src/y.rs");
}

#[test]
fn record_without_a_payload_takes_path_op_and_tool() {
    let repo = Repo::new();
    let run = repo.run(
        &[
            "--json",
            "contract",
            "record",
            "PLAN",
            "--path",
            "src/x.rs",
            "--op",
            "delete",
            "--tool",
            "apply_patch",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let doc = common::document(&run.stdout);
    assert_eq!(doc["command"], "contract record");
    let doc = &doc["contract_record"];
    assert_eq!(doc["entry"]["op"], "delete");
    assert_eq!(doc["entry"]["tool"], "apply_patch");
    assert_eq!(doc["entry"]["session"], Value::Null);
    assert_eq!(repo.ledger_lines().len(), 1);
}

#[test]
fn record_refuses_bad_payloads_and_appends_nothing() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs"]);
    repo.record("Edit", "src/y.rs");
    let cases: [(String, &[&str], &str); 5] = [
        ("{\"tool_name\": \"Edit\",".into(), &["malformed hook payload"], "<stdin>: $"),
        ("[1, 2]".into(), &["not a JSON object"], "<stdin>: $"),
        (repo.post_tool_use("Frobnicate", "src/y.rs"), &["unknown tool `Frobnicate`"], "<stdin>: $.tool_name"),
        (json!({"tool_name": "Edit", "tool_input": {}}).to_string(), &["is missing"], "<stdin>: $.tool_input.file_path"),
        (
            json!({"tool_name": "Edit", "cwd": repo.root, "tool_input": {"file_path": "/etc/passwd"}}).to_string(),
            &["`/etc/passwd` is outside the repository"],
            "<stdin>: $.tool_input.file_path",
        ),
    ];
    for (payload, words, place) in cases {
        refused(
            &repo,
            &["contract", "record", "PLAN"],
            Some(&payload),
            words,
            place,
        );
    }
    refused(
        &repo,
        &[
            "contract", "record", "PLAN", "--path", "../../x", "--op", "modify", "--tool", "T",
        ],
        None,
        &["outside the repository"],
        "--path",
    );
    assert_eq!(repo.ledger_lines().len(), 1, "only the good record");
}

#[test]
fn record_with_no_task_in_progress_records_nothing() {
    let repo = Repo::new();
    repo.run(
        &["update", "PLAN", "--task", "3", "--status", "pending"],
        None,
    );
    let run = repo.record("Edit", "src/y.rs");
    assert!(run.stdout.contains("no task is in progress"), "{run:?}");
    assert!(!repo.ledger_path().exists());
}

#[test]
fn a_declaration_edited_into_an_invalid_shape_is_refused_by_record_and_check() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs"]);
    let mut declaration: Value =
        serde_json::from_slice(&fs::read(repo.expected_path()).unwrap()).unwrap();
    declaration["filesExpected"][0]["op"] = json!("rename");
    fs::write(
        repo.expected_path(),
        serde_json::to_vec_pretty(&declaration).unwrap(),
    )
    .unwrap();
    let place = "task-3.expected.json: $.filesExpected[0].op";
    refused(
        &repo,
        &["contract", "record", "PLAN"],
        Some(&repo.post_tool_use("Edit", "src/y.rs")),
        &["rename"],
        place,
    );
    refused(
        &repo,
        &["contract", "check", "PLAN"],
        None,
        &["rename", "--replace"],
        place,
    );

    declaration["filesExpected"][0]["op"] = json!("modify");
    declaration["filesExpected"][0]["path"] = json!("src/../../etc/passwd");
    fs::write(
        repo.expected_path(),
        serde_json::to_vec_pretty(&declaration).unwrap(),
    )
    .unwrap();
    refused(
        &repo,
        &["contract", "check", "PLAN"],
        None,
        &["not a plain path"],
        "task-3.expected.json: $.filesExpected[0].path",
    );
}

#[test]
fn a_torn_last_ledger_line_is_ignored_with_a_warning_and_dropped_by_the_next_append() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs"]);
    repo.write("src/y.rs", "fn new_name() {}\n");
    repo.record("Edit", "src/y.rs");
    let mut bytes = fs::read(repo.ledger_path()).unwrap();
    bytes.extend_from_slice(b"{\"ts\":\"2026-06-09T16:4");
    fs::write(repo.ledger_path(), &bytes).unwrap();
    let run = repo.check();
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("warning") && run.stderr.contains("line 2"),
        "{run:?}"
    );
    let next = repo.record("Edit", "src/y.rs");
    assert!(next.stderr.contains("dropped a torn last line"), "{next:?}");
    assert_eq!(repo.ledger_lines().len(), 2);
}

#[test]
fn contract_files_do_not_disturb_dwp_verify() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs"]);
    repo.record("Edit", "src/y.rs");
    repo.stop(false);
    let verify = repo.run(&["verify", "PLAN"], None);
    assert_eq!(verify.code, 0, "{verify:?}");
}

// ---------------------------------------------------------------------------------------------
// Concurrency: 8 processes × 500 appends to one ledger
// ---------------------------------------------------------------------------------------------

#[test]
fn concurrent_appends_from_8_processes_give_4000_well_formed_lines() {
    const PROCESSES: usize = 8;
    const EACH: usize = 500;
    let repo = Repo::new();
    let binary = assert_cmd::cargo::cargo_bin("dwp");
    let script = format!(
        "i=0; while [ $i -lt {EACH} ]; do \"$DWP\" contract record \"$PLAN\" --path src/p$P_$i.rs --op modify --tool Edit >/dev/null || exit 1; i=$((i+1)); done"
    )
    .replace("$P_", "${P}_");
    let children: Vec<_> = (0..PROCESSES)
        .map(|p| {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(&script)
                .current_dir(&repo.root)
                .env("DWP", &binary)
                .env("PLAN", &repo.plan)
                .env("P", p.to_string())
                .env("DWP_TEST_NOW", NOW)
                .env_remove("HOME")
                .spawn()
                .expect("spawn a writer")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer failed");
    }
    let text = fs::read_to_string(repo.ledger_path()).unwrap();
    assert!(text.ends_with('\n'));
    let mut seen = std::collections::HashSet::new();
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert_eq!(entry["taskId"], 3);
        assert!(
            seen.insert(entry["path"].as_str().unwrap().to_owned()),
            "duplicate {line}"
        );
    }
    assert_eq!(text.lines().count(), PROCESSES * EACH);
    for p in 0..PROCESSES {
        for i in 0..EACH {
            assert!(seen.contains(&format!("src/p{p}_{i}.rs")), "lost p{p}_{i}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// More ladder and record rules
// ---------------------------------------------------------------------------------------------

#[test]
fn ladder_a_new_declaration_starts_a_new_ladder() {
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    assert_eq!(repo.stop(false).code, 2);
    assert_eq!(repo.stop(true).code, 2);
    repo.declare(&["--replace", "--modify", "src/y.rs"]);
    let after = repo.stop(true);
    assert_eq!(after.code, 2, "{after:?}");
    assert!(after.stderr.contains("failure 1 of 3"), "{after:?}");
}

#[test]
fn ladder_allows_the_third_stop_even_when_the_task_cannot_be_marked_blocked() {
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    // The updater refuses every change to an unapproved plan.
    let mut state = repo.state();
    state["approval"] = json!("pending");
    fs::write(
        repo.plan.join("state.json"),
        serde_json::to_vec_pretty(&state).unwrap(),
    )
    .unwrap();
    assert_eq!(repo.stop(false).code, 2);
    assert_eq!(repo.stop(true).code, 2);
    let third = repo.stop(true);
    assert_eq!(third.code, 0, "the loop ends: {third:?}");
    assert!(
        third.stdout.contains("marking the task blocked failed too"),
        "{third:?}"
    );
    assert!(third.stdout.contains("NOT met"), "{third:?}");
    assert_eq!(repo.state()["tasks"][2]["status"], "in_progress");
}

#[test]
fn ladder_with_nowhere_to_count_blocks_once_then_allows_when_stop_hook_active() {
    let repo = Repo::new();
    // A folder that is there but holds no plan: a misconfiguration to fix, blocked once.
    let not_a_plan = repo.root.join(".dwp/plans/PLAN_not_a_plan");
    fs::create_dir_all(&not_a_plan).unwrap();
    let args = ["contract", "check", "--hook", not_a_plan.to_str().unwrap()];
    let first = repo.run(&args, Some(&stop_payload(false)));
    assert_eq!(first.code, 2, "{first:?}");
    assert!(first.stderr.contains("state.json not found"), "{first:?}");
    let again = repo.run(&args, Some(&stop_payload(true)));
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again.stdout.contains("NO file contract was verified"),
        "{again:?}"
    );
}

/// A Stop hook whose plan no longer exists (moved, archived, removed once published) lets the
/// stop through with a one-line warning naming the path: blocking the first stop of every turn
/// for a plan that is gone holds the agent to nothing it can fix in its task.
#[test]
fn a_stop_hook_naming_a_plan_that_no_longer_exists_warns_and_allows_the_stop() {
    let repo = Repo::new();
    let missing = repo.root.join(".dwp/plans/PLAN_gone_away");
    let args = ["contract", "check", "--hook", missing.to_str().unwrap()];
    let stop = repo.run(&args, Some(&stop_payload(false)));
    assert_eq!(stop.code, 0, "{stop:?}");
    let warning: Vec<&str> = stop
        .stderr
        .lines()
        .filter(|l| l.contains("PLAN_gone_away"))
        .collect();
    assert_eq!(warning.len(), 1, "{stop:?}");
    assert!(warning[0].contains("nothing exists at"), "{stop:?}");
    assert!(!missing.exists(), "nothing is made for a plan that is gone");
}

#[test]
fn record_for_an_explicit_task_and_root_must_agree_with_the_declaration() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs"]);
    let run = repo.run(
        &[
            "contract", "record", "PLAN", "--task", "3", "--path", "src/y.rs", "--op", "modify",
            "--tool", "Edit",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.ledger_lines()[0]["taskId"], 3);
    let elsewhere = tempfile::tempdir().unwrap();
    refused(
        &repo,
        &[
            "contract",
            "record",
            "PLAN",
            "--root",
            elsewhere.path().to_str().unwrap(),
            "--path",
            "src/y.rs",
            "--op",
            "modify",
            "--tool",
            "Edit",
        ],
        None,
        &["is not the declared root"],
        "--root",
    );
    refused(
        &repo,
        &[
            "contract", "record", "PLAN", "--task", "9", "--path", "src/y.rs", "--op", "modify",
            "--tool", "Edit",
        ],
        None,
        &["there is no task 9"],
        "--task",
    );
}

#[test]
fn hook_json_reports_the_verdict_and_the_count() {
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    let run = repo.run(
        &["--json", "contract", "check", "--hook", "PLAN"],
        Some(&stop_payload(false)),
    );
    assert_eq!(run.code, 2, "{run:?}");
    let doc = common::document(&run.stdout);
    assert_eq!(doc["command"], "contract check");
    let doc = &doc["contract_check"];
    assert_eq!(doc["verdict"], "block");
    assert_eq!(doc["consecutive_failures"], 1);
    assert_eq!(
        doc["report"]["expectations"][0]["problems"][0],
        "still exists: it was to be deleted"
    );
    assert!(
        run.stderr.contains("src/x.rs (delete)"),
        "the reason is on stderr too: {run:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Hardening (#13): a closed pipe, and a declaration that moves with its repository
// ---------------------------------------------------------------------------------------------

/// `dwp ARGS` in the repository with stdout a pipe whose reader is already gone (`| head -1`
/// after `head` exited): deterministic, the first write fails with EPIPE.
fn run_into_closed_pipe(repo: &Repo, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let plan = repo.plan.to_str().unwrap();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "PLAN" { plan } else { a })
        .collect();
    dwp()
        .in_dir(&repo.root)
        .args(&args)
        .command()
        .stdout(writer)
        .output()
        .expect("run dwp")
}

#[test]
fn contract_check_into_a_closed_pipe_is_quiet_and_exits_as_if_written() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs:new_name", "--delete", "src/x.rs"]);
    for args in [
        &["contract", "check", "PLAN"][..],
        &["--json", "contract", "check", "PLAN"][..],
        &[
            "contract",
            "declare",
            "PLAN",
            "--task",
            "3",
            "--replace",
            "--delete",
            "src/x.rs",
        ][..],
    ] {
        let written = repo.run(args, None);
        let closed = run_into_closed_pipe(&repo, args);
        assert_eq!(
            closed.status.code(),
            Some(written.code),
            "{args:?}: the exit code of a written run ({written:?})"
        );
        assert_eq!(
            String::from_utf8_lossy(&closed.stderr),
            written.stderr,
            "{args:?}: a closed pipe adds nothing to stderr"
        );
    }
}

#[test]
fn a_declaration_checks_the_files_of_the_checkout_it_is_read_in() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs:new_name"]);
    let declaration: Value =
        serde_json::from_slice(&fs::read(repo.expected_path()).unwrap()).unwrap();
    assert_eq!(
        declaration["root"], "../../..",
        "the root is stored relative to the plan folder"
    );
    // A copy of the repository (a clone, a worktree, a moved checkout) with its own edit.
    let copy = tempfile::tempdir().unwrap();
    let copy_root = fs::canonicalize(copy.path()).unwrap().join("moved");
    copy_plan(&repo.root, &copy_root);
    let copy_plan = copy_root.join(".dwp/plans").join(PLAN_NAME);
    fs::write(copy_root.join("src/y.rs"), "fn new_name() {}\n").unwrap();
    let run = execute(
        dwp()
            .in_dir(&copy_root)
            .args(["contract", "record", copy_plan.to_str().unwrap()])
            .args(["--path", "src/y.rs", "--op", "modify", "--tool", "Edit"]),
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let run = execute(
        dwp().args(["contract", "check", copy_plan.to_str().unwrap()]),
        None,
    );
    assert_eq!(run.code, 0, "the copy's own src/y.rs is checked: {run:?}");
    // The original, unedited, still fails on its own files.
    assert_eq!(repo.check().code, 1);
    // Once the original is gone, the copy still checks.
    drop(repo);
    let run = execute(
        dwp().args(["contract", "check", copy_plan.to_str().unwrap()]),
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn a_declaration_with_an_absolute_root_written_before_13_still_reads() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs:new_name"]);
    let mut declaration: Value =
        serde_json::from_slice(&fs::read(repo.expected_path()).unwrap()).unwrap();
    declaration["root"] = json!(repo.root.to_str().unwrap());
    fs::write(repo.expected_path(), declaration.to_string()).unwrap();
    repo.write("src/y.rs", "fn new_name() {}\n");
    repo.record("Edit", "src/y.rs");
    let run = repo.check();
    assert_eq!(run.code, 0, "{run:?}");
}

/// The escalation's two writes (the task blocked, the ladder reset) in one intent record: the
/// third failing Stop check, killed with SIGKILL on entry to each rename it makes, then the next
/// writer: the task is blocked exactly when the escalation is counted, never one without the other.
#[test]
fn ladder_escalation_killed_at_any_rename_is_completed_whole_by_the_next_writer() {
    if !common::strace_available("the escalation's kill-at-every-rename test") {
        return;
    }
    let renames = ["rename", "renameat", "renameat2"];
    let mut blocked_whole = 0;
    for (call, ordinal) in renames.iter().flat_map(|c| (1..=4).map(move |k| (*c, k))) {
        let repo = Repo::new();
        repo.declare(&["--delete", "src/x.rs"]);
        repo.stop(false);
        repo.stop(true);
        let inject = format!("inject={call}:signal=KILL:when={ordinal}");
        let mut strace = dwp()
            .args(["contract", "check", "--hook", repo.plan.to_str().unwrap()])
            .in_dir(&repo.root)
            .wrapped("strace", ["-f", "-qq", "-o", "/dev/null", "-e", &inject]);
        strace
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = strace.spawn().unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            let _ = stdin.write_all(stop_payload(true).as_bytes());
        }
        child.wait().unwrap();
        // The next writer: the dead writer's lock removed, then any write.
        if repo.plan.join("state.json.lock").exists() {
            let recovered = repo.run(&["lock", "recover", "PLAN"], None);
            assert_eq!(recovered.code, 0, "{call} {ordinal}: {recovered:?}");
        }
        repo.run(&["reconcile", "PLAN", "--write"], None);
        let blocked = repo.state()["tasks"][2]["status"] == "blocked";
        let ladder: Value = fs::read(repo.ledger_dir().join("task-3.check.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        let counted = ladder["escalations"] == 1 && ladder["consecutive_failures"] == 0;
        assert_eq!(
            blocked, counted,
            "{call} #{ordinal}: blocked {blocked} but escalation counted {counted}: {ladder}"
        );
        assert!(!repo.plan.join(".dwp-intent.json").exists());
        blocked_whole += usize::from(blocked);
    }
    assert!(blocked_whole > 0, "no run reached the escalation");
}

/// A payload over the 64 MiB dwp reads is called too large, with the limit and where it came
/// from (`<stdin>`), never "EOF while parsing" of an empty payload: the Stop hook blocks with
/// that reason, `record` refuses it and appends nothing.
#[test]
fn a_hook_payload_over_64_mib_is_refused_as_too_large() {
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    // A JSON object padded with whitespace: one byte over the limit, read whole by dwp.
    let huge = format!("{{{}}}", " ".repeat(64 * 1024 * 1024 - 1));
    let stop = repo.run(&["contract", "check", "--hook", "PLAN"], Some(&huge));
    assert_eq!(stop.code, 2, "the stop is blocked: {stop:?}");
    for said in ["too large", "64 MiB", "<stdin>", "hint: "] {
        assert!(stop.stderr.contains(said), "{said:?} in {stop:?}");
    }
    assert!(!stop.stderr.contains("EOF"), "{stop:?}");
    let record = refused(
        &repo,
        &["contract", "record", "PLAN"],
        Some(&huge),
        &["too large", "64 MiB"],
        "<stdin>",
    );
    assert!(!record.stderr.contains("EOF"), "{record:?}");
    assert!(!repo.ledger_path().exists(), "nothing appended");
}

/// The Stop hook's command exactly as docs/hooks.md configures it (Claude Code runs it with
/// `sh -c`, `$CLAUDE_PROJECT_DIR` set), with this repository's plan in place of the example's.
fn documented_stop(repo: &Repo) -> Run {
    let docs = include_str!("../../docs/hooks.md");
    let settings = docs
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("docs/hooks.md holds the settings");
    let settings: Value = serde_json::from_str(settings).expect("the settings are JSON");
    let command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .expect("a Stop hook command")
        .replace("PLAN_auth_tokens", PLAN_NAME);
    let binary = assert_cmd::cargo::cargo_bin("dwp");
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let payload = json!({
        "session_id": "0b9e3c1a-session",
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": repo.root,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "Done: the task is complete."
    })
    .to_string();
    let mut sh = std::process::Command::new("sh");
    sh.args(["-c", &command])
        .current_dir(&repo.root)
        .env("PATH", path)
        .env("CLAUDE_PROJECT_DIR", &repo.root)
        .env("DWP_TEST_NOW", NOW)
        .env_remove("HOME")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = sh.spawn().unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    Run::lossy(&child.wait_with_output().unwrap())
}

/// The Stop hook configured as docs/hooks.md says holds an unmet contract in each way an agent
/// could slip past it: completing the task (an asserted gate takes it out of progress),
/// deleting its declaration, and meeting a `--create` with a symlink to a file outside the
/// repository. Each stop is blocked (exit 2) with the reason.
#[test]
fn the_documented_stop_hook_holds_an_unmet_contract_three_ways() {
    // 1. Completed with an asserted gate, the file never created.
    let repo = Repo::new();
    repo.declare(&["--create", "src/new.rs:Thing"]);
    repo.complete_task_3_asserted();
    let stop = documented_stop(&repo);
    assert_eq!(stop.code, 2, "completed, unmet: {stop:?}");
    assert!(stop.stderr.contains("src/new.rs (create)"), "{stop:?}");
    // Once the file is made, the stop is allowed, and the contract is not asked again.
    repo.write("src/new.rs", "pub struct Thing;\n");
    let met = documented_stop(&repo);
    assert_eq!(met.code, 0, "{met:?}");
    fs::remove_file(repo.root.join("src/new.rs")).unwrap();
    assert_eq!(
        documented_stop(&repo).code,
        0,
        "a contract seen met is not judged again"
    );

    // 2. The declaration deleted.
    let repo = Repo::new();
    repo.declare(&["--delete", "src/x.rs"]);
    fs::remove_file(repo.expected_path()).unwrap();
    let stop = documented_stop(&repo);
    assert_eq!(stop.code, 2, "declaration deleted: {stop:?}");
    assert!(stop.stderr.contains("declares no files"), "{stop:?}");

    // 3. A `--create` met by a symlink to a file outside the repository.
    let repo = Repo::new();
    repo.declare(&["--create", "src/new.rs:Thing"]);
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("new.rs");
    fs::write(&elsewhere, "pub struct Thing;\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.root.join("src/new.rs")).unwrap();
    let stop = documented_stop(&repo);
    assert_eq!(stop.code, 2, "symlinked out: {stop:?}");
    assert!(stop.stderr.contains("outside the repository"), "{stop:?}");
}

/// A completed task whose contract the Stop hook let through on the third failure (the updater
/// will not block a completed task) is a `dwp verify` error, DWP097, until a stop sees it met.
#[test]
fn a_completed_task_the_hook_let_through_unmet_is_a_verify_finding() {
    let repo = Repo::new();
    repo.declare(&["--create", "src/new.rs:Thing"]);
    repo.complete_task_3_asserted();
    assert_eq!(repo.stop(false).code, 2);
    assert_eq!(repo.stop(true).code, 2);
    let third = repo.stop(true);
    assert_eq!(third.code, 0, "the ladder ends the loop: {third:?}");
    assert!(third.stdout.contains("NOT met"), "{third:?}");
    let verify = repo.run(&["verify", "PLAN"], None);
    assert!(verify.stdout.contains("DWP097"), "{verify:?}");
    repo.write("src/new.rs", "pub struct Thing;\n");
    assert_eq!(repo.stop(false).code, 0);
    let verify = repo.run(&["verify", "PLAN"], None);
    assert!(!verify.stdout.contains("DWP097"), "{verify:?}");
}

/// A completed task's Stop-check ladder that cannot be parsed is said so, never taken as met
/// (the DWP097 rule once skipped it in silence: "never claim what you could not check").
#[test]
fn a_completed_tasks_ladder_that_is_not_json_is_reported_not_taken_as_met() {
    let repo = Repo::new();
    repo.declare(&["--create", "src/new.rs:Thing"]);
    repo.complete_task_3_asserted();
    assert_eq!(repo.stop(false).code, 2);
    std::fs::write(
        repo.plan.join("ledger/task-3.check.json"),
        "{\"consecutive_failures\": 1,",
    )
    .unwrap();
    let verify = repo.run(&["--json", "verify", "PLAN"], None);
    let report = verify.payload();
    let found: Vec<_> = report["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"].as_str().unwrap().ends_with("task-3.check.json"))
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(found, ["DWP002"], "{}", verify.stdout);
    assert_eq!(verify.code, 1, "{verify:?}");
}

/// An edit made while the task is blocked (the fix its blocker asks for) is recorded against
/// that task: it once recorded nothing ("no task is in progress"), so the contract failed on
/// the fix once the task resumed.
#[test]
fn an_edit_while_the_task_is_blocked_is_recorded_against_it() {
    let repo = Repo::new();
    repo.declare(&["--modify", "src/y.rs", "--delete", "src/x.rs"]);
    for active in [false, true, true] {
        repo.stop(active);
    }
    assert_eq!(repo.state()["tasks"][2]["status"], "blocked");
    let before = repo.ledger_lines().len();
    let recorded = repo.record("Edit", "src/y.rs");
    assert!(
        !recorded.stdout.contains("nothing recorded"),
        "{recorded:?}"
    );
    let lines = repo.ledger_lines();
    assert_eq!(lines.len(), before + 1, "{recorded:?}");
    assert_eq!(lines.last().unwrap()["path"], "src/y.rs");
}
