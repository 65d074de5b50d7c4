//! `dwp run` on a record plan (DWP v6/v7; issue #33, docs/record-plans.md "Writing a record
//! plan"): dwp runs the gate itself and records one `observed` `gate_run` with its log under
//! `gates/<task>/`, as the public ledger's `gate` does (rule 22: observed evidence only from the
//! gate runner). Everything the ledger refuses is refused before the command runs, writing
//! nothing; dwp exits with the command's own code. The plan's `T-convert-guides` is started,
//! with one failed run of `AC-guides-build` (seq 5); its contract allows `python3` and `mkdocs`.

use crate::common::{dwp, fixture_copy, journal_events, refused, verify_codes};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture_plan() -> (tempfile::TempDir, PathBuf) {
    let (root, name) = fixture_copy("record-valid-v7-in-progress");
    let plan = root.path().join(name);
    (root, plan)
}

fn gate_runs(plan: &Path) -> usize {
    journal_events(plan)
        .iter()
        .filter(|e| e["type"] == "gate_run")
        .count()
}

/// `dwp run PLAN --task TASK --criterion CRITERION [FLAGS] -- COMMAND...`.
fn run_gate(
    plan: &Path,
    task: &str,
    criterion: &str,
    flags: &[&str],
    command: &[&str],
) -> crate::common::Run {
    dwp()
        .arg("run")
        .arg(plan)
        .args(["--task", task, "--criterion", criterion])
        .args(flags)
        .arg("--")
        .args(command)
        .run_utf8()
}

/// The guides' gate with `command`, its output as one JSON document.
fn guides_gate(plan: &Path, command: &[&str]) -> crate::common::Run {
    run_gate(
        plan,
        "T-convert-guides",
        "AC-guides-build",
        &["--json"],
        command,
    )
}

/// The verdict and the snapshot's agreement, as `dwp verify --json` states them.
fn verified(plan: &Path) -> (String, String, Vec<String>) {
    let run = dwp()
        .args(["verify", plan.to_str().unwrap(), "--json"])
        .run_utf8();
    let document = run.json();
    let report = &run.payload()["plans"][0];
    (
        report["verdict"].as_str().unwrap().to_owned(),
        report["record"]["snapshot"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
        verify_codes(&document),
    )
}

/// The criterion's state as `dwp status --json` derives it.
fn criterion_state(plan: &Path, task: &str, criterion: &str) -> Value {
    let run = dwp()
        .args(["status", plan.to_str().unwrap(), "--json"])
        .run_utf8();
    let status = run.payload();
    let task = status["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == task)
        .unwrap()
        .clone();
    task["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["criterion"] == criterion)
        .unwrap()
        .clone()
}

#[test]
fn a_passing_run_records_one_observed_gate_run_whose_log_satisfies_the_criterion() {
    let (root, plan) = fixture_plan();
    let before = journal_events(&plan);
    let run = guides_gate(&plan, &["python3", "-c", "print('built')"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let after = journal_events(&plan);
    assert_eq!(after.len(), before.len() + 1, "one event, nothing else");
    let event = after.last().unwrap();
    assert_eq!(event["type"], "gate_run");
    assert_eq!(event["seq"], 6);
    assert_eq!(event["trust"], "observed");
    assert_eq!(event["task"], "T-convert-guides");
    assert_eq!(event["criterion"], "AC-guides-build");
    assert_eq!(event["exit_code"], 0);
    assert_eq!(event["timeout_seconds"], 600);
    assert_eq!(event["command"], "python3 -c 'print('\\''built'\\'')'");
    assert_eq!(event["actor"]["kind"], "helper");
    assert!(
        event["actor"]["identity"]
            .as_str()
            .unwrap()
            .starts_with("dwp/")
    );
    // The public ledger's gate root: a plan outside any `.dwp/` runs in its parent folder.
    assert_eq!(event["cwd"], root.path().to_str().unwrap());
    let log = event["evidence_path"].as_str().unwrap();
    assert_eq!(log, "gates/T-convert-guides/006-python3--c-print-built.log");
    let text = std::fs::read_to_string(plan.join(log)).unwrap();
    assert!(text.ends_with("--- exit 0 ---\n"), "{text}");
    assert!(
        text.contains("--- stdout ---\nbuilt\n\n--- stderr ---\n"),
        "{text}"
    );

    let report = run.payload();
    assert_eq!(report["seq"], 6);
    assert_eq!(report["log"], log);
    assert_eq!(report["satisfied"], true);
    assert_eq!(run.json()["exit"], 0);

    let (verdict, snapshot, codes) = verified(&plan);
    assert_eq!(
        (verdict.as_str(), snapshot.as_str()),
        ("CONFORMANT", "agrees")
    );
    assert!(codes.is_empty(), "{codes:?}");
    let state = criterion_state(&plan, "T-convert-guides", "AC-guides-build");
    assert_eq!(state["satisfied"], true, "{state}");
    assert_eq!(state["via_seq"], 6);
    assert_eq!(state["trust"], "observed");
}

#[test]
fn a_failing_command_is_recorded_with_its_exit_code_and_dwp_exits_with_it() {
    let (_root, plan) = fixture_plan();
    let run = guides_gate(&plan, &["python3", "-c", "import sys; sys.exit(3)"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let report = run.payload();
    assert_eq!(report["exit_code"], 3);
    assert_eq!(report["satisfied"], false);
    let event = journal_events(&plan).pop().unwrap();
    assert_eq!(event["exit_code"], 3);
    let log = std::fs::read_to_string(plan.join(event["evidence_path"].as_str().unwrap())).unwrap();
    assert!(log.ends_with("--- exit 3 ---\n"), "{log}");
    let (verdict, _, codes) = verified(&plan);
    assert_eq!(verdict, "CONFORMANT", "{codes:?}");
    let state = criterion_state(&plan, "T-convert-guides", "AC-guides-build");
    assert_eq!(state["satisfied"], false);
}

/// What the public ledger's `run_gate` writes for `command`, run as it runs a string command
/// (through the shell, in `cwd`): its log and its slug, computed by its own Python lines.
const LEDGER_GATE: &str = r#"
import json, re, subprocess, sys
command, cwd = sys.argv[1], sys.argv[2]
proc = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True)
log = ('$ %s\n\n--- stdout ---\n%s\n--- stderr ---\n%s\n'
       '--- exit %d ---\n' % (command, proc.stdout, proc.stderr, proc.returncode))
slug = re.sub(r'[^A-Za-z0-9._-]+', '-', command)[:40].strip('-')
print(json.dumps({'log': log, 'slug': slug or 'gate'}))
"#;

#[test]
fn the_log_and_its_name_are_the_public_ledgers_byte_for_byte() {
    let (root, plan) = fixture_plan();
    let script = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)";
    let run = guides_gate(&plan, &["python3", "-c", script]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let event = journal_events(&plan).pop().unwrap();
    let command = event["command"].as_str().unwrap();
    let log = event["evidence_path"].as_str().unwrap();
    let written = std::fs::read_to_string(plan.join(log)).unwrap();
    assert_eq!(
        written,
        format!("$ {command}\n\n--- stdout ---\nout\n\n--- stderr ---\nerr\n\n--- exit 3 ---\n")
    );
    // The recorded command, run by the ledger's own lines, writes the same bytes.
    let ledger = Command::new("python3")
        .args(["-c", LEDGER_GATE, command])
        .arg(root.path())
        .output()
        .expect("python3 is required for this test (it stands in for the ledger)");
    assert!(ledger.status.success(), "{ledger:?}");
    let ledger: Value = serde_json::from_slice(&ledger.stdout).unwrap();
    assert_eq!(written, ledger["log"].as_str().unwrap());
    assert_eq!(
        log,
        format!(
            "gates/T-convert-guides/006-{}.log",
            ledger["slug"].as_str().unwrap()
        )
    );
}

#[test]
fn a_timeout_and_a_signal_are_recorded_as_the_ledger_records_them() {
    let (_root, plan) = fixture_plan();
    let slow = run_gate(
        &plan,
        "T-convert-guides",
        "AC-guides-build",
        &["--json", "--timeout", "1"],
        &["python3", "-c", "import time; time.sleep(30)"],
    );
    assert_eq!(slow.code, 124, "{}", slow.stderr);
    let event = journal_events(&plan).pop().unwrap();
    assert_eq!(event["exit_code"], 124);
    assert_eq!(event["timeout_seconds"], 1);
    let log = std::fs::read_to_string(plan.join(event["evidence_path"].as_str().unwrap())).unwrap();
    assert!(
        log.ends_with("--- stderr ---\ntimeout after 1s\n--- exit 124 ---\n"),
        "{log}"
    );

    let killed = guides_gate(
        &plan,
        &[
            "python3",
            "-c",
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
        ],
    );
    assert_eq!(killed.code, 128 + 9, "{}", killed.stderr);
    let event = journal_events(&plan).pop().unwrap();
    // Python's returncode for a process killed by signal 9.
    assert_eq!(event["exit_code"], -9);
    let log = std::fs::read_to_string(plan.join(event["evidence_path"].as_str().unwrap())).unwrap();
    assert!(log.ends_with("--- exit -9 ---\n"), "{log}");
    let (verdict, _, codes) = verified(&plan);
    assert_eq!(verdict, "CONFORMANT", "{codes:?}");
}

#[test]
fn the_text_output_names_the_verdict_the_event_and_the_log() {
    let (_root, plan) = fixture_plan();
    let run = run_gate(
        &plan,
        "T-convert-guides",
        "AC-guides-build",
        &[],
        &["python3", "-c", "print('built')"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("T-convert-guides · AC-guides-build · gate `python3"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("passes (exit 0) · observed by dwp · gate_run at seq 6"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("AC-guides-build: satisfied by this run"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("gates/T-convert-guides/006-python3--c-print-built.log"),
        "{}",
        run.stdout
    );
    // The command's output goes to stderr as it comes.
    assert!(run.stderr.contains("built"), "{}", run.stderr);
}

/// A command that leaves `ran` in the folder it runs in (the plan's parent): a refusal must
/// leave no such file.
const LEAVES_A_MARK: [&str; 3] = ["python3", "-c", "open('ran', 'w').close()"];

#[test]
fn what_the_ledger_refuses_is_refused_before_the_command_runs_and_nothing_is_written() {
    let (root, plan) = fixture_plan();
    let cases: [(&str, &str, &[&str], &[&str]); 4] = [
        (
            "T-missing",
            "AC-guides-build",
            &LEAVES_A_MARK,
            &["has no task T-missing", "T-convert-guides"],
        ),
        (
            "T-convert-guides",
            "AC-inventory-complete",
            &LEAVES_A_MARK,
            &["AC-inventory-complete is not declared", "AC-guides-build"],
        ),
        (
            "T-convert-reference",
            "AC-reference-build",
            &LEAVES_A_MARK,
            &[
                "T-convert-reference has no task_start",
                "--status in_progress",
            ],
        ),
        (
            "T-convert-guides",
            "AC-guides-build",
            &["sh", "-c", "touch ran"],
            &[
                "`sh` is outside the contract's allowed_command_classes",
                "python3, mkdocs",
            ],
        ),
    ];
    for (task, criterion, command, words) in cases {
        refused(&plan, "run", 1, words, || {
            run_gate(&plan, task, criterion, &[], command)
        });
        assert!(
            !root.path().join("ran").exists(),
            "{task} {criterion}: the command ran"
        );
    }
}

#[test]
fn a_gate_without_its_criterion_or_with_a_v5_flag_is_a_usage_error() {
    let (root, plan) = fixture_plan();
    let path = plan.to_str().unwrap();
    let cases: [&[&str]; 5] = [
        &["run", path, "--task", "T-convert-guides", "--"],
        &["run", path, "--criterion", "AC-guides-build", "--"],
        &[
            "run",
            path,
            "--task",
            "2",
            "--criterion",
            "AC-guides-build",
            "--",
        ],
        &[
            "run",
            path,
            "--task",
            "T-convert-guides",
            "--criterion",
            "AC-guides-build",
            "--cwd",
            "/",
            "--",
        ],
        &[
            "run",
            path,
            "--task",
            "T-convert-guides",
            "--criterion",
            "AC-guides-build",
            "--agent",
            "Ada",
            "--",
        ],
    ];
    for args in cases {
        refused(&plan, "run", 2, &["record plan"], || {
            dwp().args(args).args(LEAVES_A_MARK).run_utf8()
        });
        assert!(
            !root.path().join("ran").exists(),
            "{args:?}: the command ran"
        );
    }
    let missing = dwp()
        .args(["run", path, "--task", "T-convert-guides", "--"])
        .args(LEAVES_A_MARK)
        .run_utf8();
    missing.assert_stderr_says(&["--criterion AC-...", "not acceptance evidence"]);
}

/// A hint is a promise: the refusal of a gate without its criterion names `dwp next PLAN`, and
/// the `dwp run` line that prints, run as printed, records the gate (a stand-in `mkdocs`, the
/// program the contract's check names, on `PATH`).
#[test]
fn a_gate_without_its_criterion_names_next_whose_line_records_the_gate() {
    let (root, plan) = fixture_plan();
    let path = plan.to_str().unwrap();
    let bin = root.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("mkdocs"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        bin.join("mkdocs"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let search = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let missing = dwp()
        .args(["run", path, "--task", "T-convert-guides", "--", "mkdocs"])
        .run_utf8();
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    let named = crate::common::hints::commands_in(&missing.stderr);
    let next = format!("dwp next {path}");
    assert_eq!(named.first(), Some(&next), "{}", missing.stderr);
    let words = crate::common::hints::as_run(&named[0]);
    let shown = dwp().args(&words[1..]).run_utf8();
    let line = shown
        .stdout
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("dwp run ") && line.contains("--criterion"))
        .unwrap_or_else(|| panic!("no gate line in:\n{}", shown.stdout));
    let before = gate_runs(&plan);
    let words = crate::common::examples::split_like_a_shell(line);
    let ran = dwp().args(&words[1..]).env("PATH", &search).run_utf8();
    assert_eq!(ran.code, 0, "{line}\n{}", ran.stderr);
    assert_eq!(gate_runs(&plan), before + 1);
    let state = criterion_state(&plan, "T-convert-guides", "AC-guides-build");
    assert_eq!(state["satisfied"], true, "{state}");
}

#[test]
fn a_criterion_or_an_invariant_on_a_numbered_plan_is_a_usage_error() {
    let (root, name) = fixture_copy("valid-full-v5");
    let plan = root.path().join(name);
    refused(
        &plan,
        "run",
        2,
        &["--criterion names a record plan's"],
        || {
            dwp()
                .arg("run")
                .arg(&plan)
                .args(["--task", "1", "--criterion", "AC-x", "--", "true"])
                .run_utf8()
        },
    );
    refused(
        &plan,
        "run",
        2,
        &["--invariant names a record plan's invariant"],
        || {
            dwp()
                .arg("run")
                .arg(&plan)
                .args(["--invariant", "INV-x", "--", "true"])
                .run_utf8()
        },
    );
}

#[test]
fn a_program_that_cannot_start_is_refused_and_nothing_is_recorded() {
    let (_root, plan) = fixture_plan();
    // Its base name is an allowed class: the refusal is the start's.
    refused(
        &plan,
        "run",
        1,
        &["could not be started", "never ran"],
        || {
            run_gate(
                &plan,
                "T-convert-guides",
                "AC-guides-build",
                &[],
                &["/nonexistent/python3", "-c", "pass"],
            )
        },
    );
}

#[test]
fn a_log_folder_that_is_a_symlink_is_refused_before_the_command_runs() {
    let (root, plan) = fixture_plan();
    let folder = plan.join("gates/T-convert-guides");
    let elsewhere = root.path().join("elsewhere");
    std::fs::rename(&folder, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &folder).unwrap();
    refused(
        &plan,
        "run",
        1,
        &["is a symlink", "the command is not run"],
        || {
            run_gate(
                &plan,
                "T-convert-guides",
                "AC-guides-build",
                &[],
                &LEAVES_A_MARK,
            )
        },
    );
    assert!(!root.path().join("ran").exists());
}

// A long gate holds no lock: the plan's `.ledger.lock` is taken once the command ended, and the
// ledger's refusals are judged again under it (the journal may have moved meanwhile).
#[test]
fn the_lock_is_taken_after_the_run_and_the_refusals_judged_again_under_it() {
    let (_root, plan) = fixture_plan();
    let name = plan.file_name().unwrap().to_str().unwrap().to_owned();
    let unlocked =
        format!("import os, sys; sys.exit(1 if os.path.exists('{name}/.ledger.lock') else 0)");
    let run = guides_gate(&plan, &["python3", "-c", &unlocked]);
    assert_eq!(
        run.code, 0,
        "the lock was held while the command ran: {}",
        run.stderr
    );

    // The command itself takes the task's start away (the journal cut back to its first three
    // events, T-convert-guides not yet started): under the lock, the gate is refused.
    let cut = format!(
        "p = '{name}/journal.ndjson'; lines = open(p).readlines(); open(p, 'w').writelines(lines[:3])"
    );
    let refused = run_gate(
        &plan,
        "T-convert-guides",
        "AC-guides-build",
        &[],
        &["python3", "-c", &cut],
    );
    refused.assert_refusal("run", 1, &["dwp ran the command, but", "has no task_start"]);
    assert_eq!(journal_events(&plan).len(), 3, "nothing appended");
    assert!(!plan.join(".ledger.lock").exists());
}

// Rule 22: observed evidence only from the gate runner. Every other verb that writes a record
// plan's journal appends no gate_run (dwp update's --gate is refused there: tests/writers/
// record_update.rs); dwp run appends one, as dwp's own helper, with its log.
#[test]
fn rule_22_only_dwp_run_appends_an_observed_gate_run() {
    let (_root, plan) = fixture_plan();
    let path = plan.to_str().unwrap();
    let before = gate_runs(&plan);
    let others: [&[&str]; 3] = [
        &[
            "update",
            path,
            "--task",
            "T-convert-reference",
            "--status",
            "in_progress",
        ],
        &[
            "update",
            path,
            "--task",
            "T-convert-guides",
            "--status",
            "completed",
        ],
        &["reconcile", path, "--write"],
    ];
    for args in others {
        dwp().args(args).run_utf8();
    }
    assert_eq!(gate_runs(&plan), before, "a gate_run from another verb");
    let raw = dwp()
        .args(["update", path, "--task", "T-convert-guides", "--status", "completed"])
        .args(["--gate-json", r#"{"command":"python3 x","passes":true,"exit_code":0,"last_run":"2026-01-01T00:00:00Z","evidence":"ok"}"#])
        .run_utf8();
    assert_eq!(raw.code, 2, "{}", raw.stderr);
    assert_eq!(gate_runs(&plan), before);

    let run = run_gate(
        &plan,
        "T-convert-reference",
        "AC-reference-build",
        &["--json"],
        &["python3", "-c", "pass"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(gate_runs(&plan), before + 1);
    let event = journal_events(&plan).pop().unwrap();
    assert_eq!(event["trust"], "observed");
    assert_eq!(event["actor"]["kind"], "helper");
    assert!(
        plan.join(event["evidence_path"].as_str().unwrap())
            .is_file()
    );
    let (verdict, _, codes) = verified(&plan);
    assert_eq!(verdict, "CONFORMANT", "{codes:?}");
}

// Rule 22 at the writer itself: its generic append refuses a gate_run whoever asks (the public
// ledger's raw `append` refuses one too), and its one way in refuses a gate_run whose log is not
// a file of the plan yet. Nothing is written either way.
#[test]
fn rule_22_the_journal_writer_takes_a_gate_run_only_with_its_log_written_first() {
    use dwp::steps::record_writer::RecordWriter;
    let (_root, plan) = fixture_plan();
    let before = std::fs::read(plan.join("journal.ndjson")).unwrap();
    let payload = |log: &str| {
        let event = serde_json::json!({
            "command": "python3 -c pass", "cwd": "/", "timeout_seconds": 600, "exit_code": 0,
            "task": "T-convert-guides", "criterion": "AC-guides-build", "trust": "observed",
            "evidence_path": log,
        });
        event.as_object().unwrap().clone()
    };
    let mut writer = RecordWriter::open(&plan, std::time::Duration::ZERO).unwrap();
    let helper = dwp::rules::record::mint::helper();
    let raw = writer.append(
        "gate_run",
        payload("gates/T-convert-guides/006-x.log"),
        helper,
        None,
    );
    assert!(raw.unwrap_err().to_string().contains("only by dwp run"));
    let unwritten = writer.append_gate_run(payload("gates/T-convert-guides/006-x.log"));
    assert!(
        unwritten
            .unwrap_err()
            .to_string()
            .contains("must cite its log")
    );
    writer.finish().unwrap();
    assert_eq!(std::fs::read(plan.join("journal.ndjson")).unwrap(), before);
}
