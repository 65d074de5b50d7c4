//! `dwp run` (issue #17): dwp runs the agent's gate itself and records what it observed. Real
//! commands, as small shell scripts written into the test's folder: a passing and a failing
//! one, a test runner that selects nothing, one that sleeps past `--timeout`, one that prints
//! megabytes; the log's hash caught after a one-byte edit; two runs at once; a dwp killed while
//! its command runs.

use crate::common;
use crate::common::{NOW, Plan, Run, dwp, verify_codes};
use dwp::synth::SynthPlan;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A plan of 3 tasks, task 1 completed (an asserted gate), task 2 in progress.
fn plan_at_work(name: &str) -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(name, 3).completed(1));
    let p = plan.dir.to_str().unwrap();
    let started = dwp()
        .args(["update", p, "--task", "2", "--status", "in_progress"])
        .run();
    assert_eq!(started.code, 0, "{started:?}");
    plan
}

/// A script `name` in the plan's parent folder, run as `sh PATH`.
fn script(plan: &Plan, name: &str, body: &str) -> PathBuf {
    let path = plan.root().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    path
}

/// `dwp --json run PLAN EXTRA... -- sh SCRIPT`, in the plan's parent folder.
fn run_script(plan: &Plan, extra: &[&str], script: &Path) -> Run {
    dwp()
        .in_dir(plan.root())
        .arg("--json")
        .arg("run")
        .arg(&plan.dir)
        .args(extra)
        .arg("--")
        .arg("sh")
        .arg(script)
        .run()
}

/// The last gate record of task `id`.
fn last_gate(plan: &Plan, id: usize) -> Value {
    plan.state()["tasks"][id - 1]["gates"]
        .as_array()
        .and_then(|g| g.last().cloned())
        .unwrap_or(Value::Null)
}

#[test]
fn a_passing_command_is_recorded_as_an_observed_passing_gate() {
    let plan = plan_at_work("PLAN_run_passing");
    let gate_sh = script(
        &plan,
        "gate.sh",
        "echo 'test a ... ok'\necho 'test b ... ok' >&2\necho '2 passed, 0 failed'",
    );
    let run = run_script(&plan, &["--task", "2"], &gate_sh);
    assert_eq!(run.code, 0, "{run:?}");
    // The output streamed to stderr as it ran; stdout is the one JSON document.
    assert!(run.stderr.contains("test b ... ok"), "{run:?}");
    let document = run.json();
    assert_eq!(document["command"], "run");
    let log = document["run"]["log"].as_str().unwrap().to_owned();
    assert!(
        log.starts_with("analysis_results/gates/task-2-sh-")
            && log.ends_with(&format!("{}.log", NOW.replace([':', '-'], ""))),
        "{log}"
    );
    let bytes = std::fs::read(plan.dir.join(&log)).unwrap();
    let sha = common::sha256_hex(&bytes);
    let gate = last_gate(&plan, 2);
    assert_eq!(gate["command"], format!("sh {}", gate_sh.display()));
    assert_eq!(gate["passes"], true);
    assert_eq!(gate["exit_code"], 0);
    assert_eq!(gate["last_run"], NOW);
    assert_eq!(
        gate["evidence"],
        format!("2 passed, 0 failed (observed by dwp: exit 0; log={log} sha256={sha})")
    );
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.starts_with("dwp gate log 1\ntask: 2\n"), "{text}");
    assert!(text.contains("ended: exit 0\n"), "{text}");
    assert!(
        text.ends_with("test a ... ok\ntest b ... ok\n2 passed, 0 failed\n"),
        "{text}"
    );
    // The gate backs the completion, and verify holds it against its log.
    let p = plan.dir.to_str().unwrap();
    let complete = dwp()
        .args([
            "update",
            p,
            "--task",
            "2",
            "--status",
            "completed",
            "--tick",
        ])
        .run();
    assert_eq!(complete.code, 0, "{complete:?}");
    let codes = plan.verify_codes(&[]);
    assert!(!codes.contains(&"DWP068".to_owned()), "{codes:?}");
    assert!(!codes.contains(&"DWP060".to_owned()), "{codes:?}");
}

#[test]
fn a_failing_command_is_recorded_with_its_exit_code_and_dwp_exits_with_it() {
    let plan = plan_at_work("PLAN_run_failing");
    let gate_sh = script(&plan, "fail.sh", "echo '1 passed, 1 failed'\nexit 7");
    let run = run_script(&plan, &[], &gate_sh);
    assert_eq!(run.code, 7, "{run:?}");
    assert_eq!(run.json()["exit"], 7);
    assert_eq!(run.json()["ok"], false);
    let gate = last_gate(&plan, 2);
    assert_eq!(gate["passes"], false);
    assert_eq!(gate["exit_code"], 7);
    assert!(
        gate["evidence"]
            .as_str()
            .unwrap()
            .starts_with("1 passed, 1 failed (observed by dwp: exit 7; log="),
        "{gate}"
    );
}

/// Python's unittest ends with `OK` even when it ran nothing (`Ran 0 tests in 0.000s`): its
/// `Ran N tests` line is the summary, so zero is a run that selected nothing (a failing gate),
/// and a run of tests passes.
#[test]
fn a_unittest_run_of_zero_tests_is_zero_selection_and_a_run_of_tests_passes() {
    let plan = plan_at_work("PLAN_run_unittest");
    let zero = script(
        &plan,
        "unittest0.sh",
        "echo '' >&2\necho '----------------------------------------------------------------------' >&2\necho 'Ran 0 tests in 0.000s' >&2\necho '' >&2\necho 'OK' >&2",
    );
    let run = run_script(&plan, &["--task", "2"], &zero);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.payload()["ran_no_tests"], true, "{}", run.stdout);
    let gate = last_gate(&plan, 2);
    assert_eq!(gate["passes"], false, "{gate}");
    assert!(
        gate["evidence"]
            .as_str()
            .unwrap()
            .starts_with("unittest: ran 0 tests, OK (observed by dwp: exit 0;"),
        "{gate}"
    );
    let three = script(
        &plan,
        "unittest3.sh",
        "echo '...' >&2\necho 'Ran 3 tests in 0.004s' >&2\necho '' >&2\necho 'OK' >&2",
    );
    let run = run_script(&plan, &["--task", "2"], &three);
    assert_eq!(run.code, 0, "{run:?}");
    let gate = last_gate(&plan, 2);
    assert_eq!(gate["passes"], true, "{gate}");
    assert!(
        gate["evidence"]
            .as_str()
            .unwrap()
            .starts_with("unittest: ran 3 tests, OK (observed by dwp"),
        "{gate}"
    );
}

/// The issue's rule: dwp exits with the command's own code, 0 here, but the gate it records
/// fails, stderr says so with a hint, and the JSON document says so too.
#[test]
fn a_run_that_selected_no_test_is_recorded_as_failing_evidence_and_dwp_exits_with_the_commands_own_code()
 {
    let plan = plan_at_work("PLAN_run_zero_selection");
    let pytest = script(
        &plan,
        "pytest.sh",
        "echo 'collected 0 items'\necho '============ no tests ran in 0.01s ============'",
    );
    let run = run_script(&plan, &["--task", "2"], &pytest);
    assert_eq!(run.code, 0, "the command's own exit code: {run:?}");
    let document = run.json();
    assert_eq!(document["exit"], 0);
    assert_eq!(document["run"]["ran_no_tests"], true, "{document:#}");
    assert_eq!(document["run"]["gate"]["passes"], false, "{document:#}");
    run.assert_stderr_says(&[
        "dwp run: warning: `sh ",
        "exited 0 but ran no tests, so the gate is recorded as failing (summary: pytest: no tests ran;",
        "  hint: make the command select the tests",
    ]);
    let gate = last_gate(&plan, 2);
    assert_eq!(gate["passes"], false);
    assert_eq!(gate["exit_code"], 0);
    assert!(
        gate["evidence"]
            .as_str()
            .unwrap()
            .starts_with("pytest: no tests ran (observed by dwp: exit 0;"),
        "{gate}"
    );
    let cargo = script(
        &plan,
        "cargo.sh",
        "echo 'running 0 tests'\necho 'test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out'",
    );
    let cargo_run = run_script(&plan, &[], &cargo);
    assert_eq!(cargo_run.code, 0, "{cargo_run:?}");
    assert_eq!(cargo_run.payload()["ran_no_tests"], true);
    assert_eq!(last_gate(&plan, 2)["passes"], false);
    // `dwp run -- GATE && dwp update ... --status completed` goes on, and the updater refuses
    // the completion with a clear error: the gate of record fails.
    let p = plan.dir.to_str().unwrap();
    let complete = dwp()
        .args(["update", p, "--task", "2", "--status", "completed"])
        .run();
    assert_eq!(complete.code, 1, "{complete:?}");
    complete.assert_stderr_says(&["dwp update:", "passes: false", "hint:"]);
    assert_eq!(plan.state()["tasks"][1]["status"], "in_progress");
    // The hint's step works: the gate, once it selects its tests, run again as the hint says.
    let hint = run
        .stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("hint: "))
        .unwrap();
    let step = hint.split('`').nth(1).unwrap();
    std::fs::write(&pytest, "#!/bin/sh\necho '==== 3 passed in 0.01s ===='\n").unwrap();
    let again = common::run_printed(step, plan.root());
    assert_eq!(again.code, 0, "{step}: {again:?}");
    assert_eq!(last_gate(&plan, 2)["passes"], true);
    assert!(!again.stderr.contains("warning"), "{again:?}");
}

#[test]
fn a_command_past_its_timeout_is_killed_with_its_group_and_recorded_without_an_exit_code() {
    let plan = plan_at_work("PLAN_run_timeout");
    let marker = plan.root().join("child-alive");
    let slow = script(
        &plan,
        "slow.sh",
        &format!(
            "echo started\n(sleep 3; touch {}) &\nsleep 30",
            marker.display()
        ),
    );
    let started = Instant::now();
    let run = run_script(&plan, &["--timeout", "1"], &slow);
    assert_eq!(run.code, 124, "{run:?}");
    assert!(started.elapsed() < Duration::from_secs(15));
    let gate = last_gate(&plan, 2);
    assert_eq!(gate["passes"], false);
    assert!(
        gate.get("exit_code").is_none(),
        "dwp invents no exit code: {gate}"
    );
    assert!(
        gate["evidence"]
            .as_str()
            .unwrap()
            .starts_with("started (observed by dwp: timed out after 1 s; log="),
        "{gate}"
    );
    // The background child went with its group.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !marker.exists(),
        "a child of the timed-out command outlived it"
    );
}

#[test]
fn megabytes_of_output_are_streamed_and_the_log_keeps_the_tail_saying_so() {
    let plan = plan_at_work("PLAN_run_megabytes");
    // 6 MB of lines, then the verdict.
    let loud = script(
        &plan,
        "loud.sh",
        "i=0\nwhile [ $i -lt 6000 ]; do printf '%01000d\\n' $i; i=$((i+1)); done\necho '5 passed, 0 failed'",
    );
    let run = run_script(&plan, &[], &loud);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.len() > 6_000_000, "everything streamed");
    let document = run.json();
    assert_eq!(document["run"]["truncated"], true);
    let total = document["run"]["output_bytes"].as_u64().unwrap();
    assert_eq!(total, 6000 * 1001 + 19);
    let log = std::fs::read(plan.dir.join(document["run"]["log"].as_str().unwrap())).unwrap();
    let bound = dwp::rules::observed::LOG_BOUND;
    assert!(
        log.len() > bound && log.len() < bound + 1024,
        "{}",
        log.len()
    );
    let head = String::from_utf8_lossy(&log[..300]);
    assert!(
        head.contains(&format!(
            "output: {total} bytes, the last {bound} kept (the first {} left out)",
            total - bound as u64
        )),
        "{head}"
    );
    assert!(log.ends_with(b"5 passed, 0 failed\n"));
    assert_eq!(last_gate(&plan, 2)["passes"], true);
}

#[test]
fn a_one_byte_edit_of_an_observed_log_is_a_verify_finding() {
    let plan = plan_at_work("PLAN_run_edited_log");
    let gate_sh = script(&plan, "gate.sh", "echo '3 passed, 0 failed'");
    let run = run_script(&plan, &[], &gate_sh);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!plan.verify_codes(&[]).contains(&"DWP068".to_owned()));
    let log = plan.dir.join(run.payload()["log"].as_str().unwrap());
    let mut bytes = std::fs::read(&log).unwrap();
    let at = bytes.len() - "3 passed, 0 failed\n".len();
    bytes[at] = b'4';
    std::fs::write(&log, &bytes).unwrap();
    let report = dwp().arg("--json").arg("verify").arg(&plan.dir).run();
    assert_eq!(report.code, 1);
    assert!(verify_codes(&report.json()).contains(&"DWP068".to_owned()));
    assert!(
        report.stdout.contains("the log changed after the run"),
        "{}",
        report.stdout
    );
    // The updater refuses to complete on a record its log no longer backs.
    let p = plan.dir.to_str().unwrap();
    let complete = dwp()
        .args(["update", p, "--task", "2", "--status", "completed"])
        .run();
    assert_eq!(complete.code, 1, "{complete:?}");
    complete.assert_stderr_says(&["log changed after the run"]);
}

#[test]
fn a_log_that_disagrees_with_its_record_is_a_verify_finding() {
    // Rewriting the record to say passes while the log shows exit 1 (and rehashing nothing).
    let plan = plan_at_work("PLAN_run_forged_record");
    let fail = script(&plan, "fail.sh", "echo '0 passed, 2 failed'\nexit 1");
    assert_eq!(run_script(&plan, &[], &fail).code, 1);
    plan.edit_state(|state| {
        let gate = &mut state["tasks"][1]["gates"][0];
        gate["passes"] = Value::Bool(true);
        gate["exit_code"] = Value::from(0);
        let evidence = gate["evidence"]
            .as_str()
            .unwrap()
            .replace("exit 1;", "exit 0;");
        gate["evidence"] = Value::String(evidence);
    });
    let report = dwp().arg("--json").arg("verify").arg(&plan.dir).run();
    assert!(verify_codes(&report.json()).contains(&"DWP068".to_owned()));
    assert!(
        report
            .stdout
            .contains("says exit 1, the record exit code 0"),
        "{}",
        report.stdout
    );
}

#[test]
fn two_runs_on_different_tasks_of_one_plan_both_land() {
    // Tasks run in order, so two tasks are at work at once only in a state that allows it: task 2
    // and task 3 both in progress (verify's DWP036, a state the updater still writes to).
    let plan = plan_at_work("PLAN_run_concurrent");
    plan.edit_state(|state| {
        state["tasks"][2]["status"] = Value::from("in_progress");
        state["tasks"][2]["started_at"] = state["tasks"][1]["started_at"].clone();
    });
    let gate_sh = script(&plan, "gate.sh", "sleep 1\necho '1 passed, 0 failed'");
    let spawn = |task: &str| {
        let mut command = dwp()
            .in_dir(plan.root())
            .args(["run", plan.dir.to_str().unwrap(), "--task", task, "--"])
            .args(["sh", gate_sh.to_str().unwrap()])
            .command();
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("2"), spawn("3"));
    for child in [a, b] {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
    }
    for id in [2, 3] {
        let gate = last_gate(&plan, id);
        assert_eq!(gate["passes"], true, "task {id}: {gate}");
        let evidence = gate["evidence"].as_str().unwrap();
        assert!(
            evidence.contains(&format!("log=analysis_results/gates/task-{id}-")),
            "{evidence}"
        );
    }
    assert!(!plan.path("state.json.lock").exists());
    assert!(!plan.verify_codes(&[]).contains(&"DWP068".to_owned()));
}

#[test]
fn a_dwp_killed_while_its_command_runs_leaves_no_lock_and_no_half_written_gate() {
    let plan = plan_at_work("PLAN_run_killed");
    let marker = plan.root().join("running");
    let slow = script(
        &plan,
        "slow.sh",
        &format!("touch {}\nsleep 5\necho '1 passed'", marker.display()),
    );
    let before = std::fs::read(plan.path("state.json")).unwrap();
    let mut child = dwp()
        .in_dir(plan.root())
        .args(["run", plan.dir.to_str().unwrap(), "--", "sh"])
        .arg(&slow)
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Let the orphaned command finish: it must not record anything either.
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(std::fs::read(plan.path("state.json")).unwrap(), before);
    assert!(!plan.path("state.json.lock").exists(), "a lock was left");
    assert!(!plan.path("analysis_results/gates").exists());
    // The next writer goes on without any cleanup.
    let p = plan.dir.to_str().unwrap();
    let next = dwp()
        .args([
            "update",
            p,
            "--task",
            "2",
            "--status",
            "blocked",
            "--block-reason",
            "x",
        ])
        .run();
    assert_eq!(next.code, 0, "{next:?}");
}

#[test]
fn a_run_for_a_task_not_at_work_is_refused_before_the_command_runs_and_writes_nothing() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_run_refused", 3).completed(1));
    let ran = plan.root().join("ran");
    let gate_sh = script(&plan, "gate.sh", &format!("touch {}", ran.display()));
    let before = common::snapshot(plan.root());
    let p = plan.dir.to_str().unwrap();
    let cases: [(&[&str], i32, &str); 4] = [
        (&["--task", "2"], 1, "task 2 is pending"),
        (&["--task", "1"], 1, "task 1 is completed"),
        (&["--task", "9"], 1, "there is no task 9"),
        (&[], 1, "no task is in progress"),
    ];
    for (extra, code, says) in cases {
        let run = dwp()
            .in_dir(plan.root())
            .arg("run")
            .arg(p)
            .args(extra)
            .args(["--", "sh", gate_sh.to_str().unwrap()])
            .run();
        assert_eq!(run.code, code, "{extra:?}: {run:?}");
        run.assert_stderr_says(&[says]);
        assert!(run.stderr.contains("hint: "), "{run:?}");
        assert!(!ran.exists(), "{extra:?}: the command ran");
    }
    assert_eq!(common::snapshot(plan.root()), before, "nothing written");
    // The hint of a pending task names the step that works from here.
    let refused = dwp()
        .arg("run")
        .arg(p)
        .args(["--task", "2", "--", "true"])
        .run();
    let hint = refused
        .stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("hint: "))
        .unwrap();
    let start = hint.split('`').nth(1).unwrap();
    let args: Vec<&str> = start.split_whitespace().skip(1).collect();
    assert_eq!(dwp().args(&args).run().code, 0, "{start}");
}

#[test]
fn an_unapproved_plan_is_refused_before_the_command_runs() {
    let plan = plan_at_work("PLAN_run_unapproved");
    plan.edit_state(|state| state["approval"] = Value::from("pending"));
    let ran = plan.root().join("ran");
    let gate_sh = script(&plan, "gate.sh", &format!("touch {}", ran.display()));
    let before = common::snapshot(plan.root());
    let run = run_script(&plan, &[], &gate_sh);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.json()["error"]["kind"], "rejected");
    assert!(!ran.exists());
    // The script was written before the snapshot; nothing else changed.
    assert_eq!(common::snapshot(plan.root()), before);
}

#[test]
fn usage_errors_run_nothing() {
    let plan = plan_at_work("PLAN_run_usage");
    let p = plan.dir.to_str().unwrap();
    for args in [
        vec!["run", p],
        vec!["run", p, "--timeout", "0", "--", "true"],
        vec!["run", p, "--pass-env", "A=b", "--", "true"],
        vec!["run", p, "--expected-sha256", "nope", "--", "true"],
    ] {
        let run = dwp().args(&args).run();
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
    }
    assert!(!plan.path("analysis_results/gates").exists());
}

#[test]
fn a_moved_snapshot_is_contention_and_leaves_no_log() {
    let plan = plan_at_work("PLAN_run_snapshot");
    let stale = "0".repeat(64);
    let run = dwp()
        .arg("run")
        .arg(&plan.dir)
        .args(["--expected-sha256", &stale, "--", "true"])
        .run();
    assert_eq!(run.code, 3, "{run:?}");
    assert!(!plan.path("analysis_results/gates").exists());
}

#[test]
fn strict_evidence_makes_asserted_gates_of_completed_tasks_a_finding() {
    let plan = plan_at_work("PLAN_run_strict");
    // Task 1 was completed on an asserted gate.
    assert!(!plan.verify_codes(&[]).contains(&"DWP069".to_owned()));
    assert!(
        plan.verify_codes(&["--strict-evidence"])
            .contains(&"DWP069".to_owned())
    );
    // The plan can ask for it itself.
    common::edit(
        &plan.path("README.md"),
        "| Approval |",
        "| Gate Evidence | observed |\n| Approval |",
    );
    assert!(plan.verify_codes(&[]).contains(&"DWP069".to_owned()));
}

#[test]
fn status_tells_observed_gates_from_asserted_ones() {
    let plan = plan_at_work("PLAN_run_status");
    let gate_sh = script(&plan, "gate.sh", "echo '4 passed, 0 failed'");
    assert_eq!(run_script(&plan, &[], &gate_sh).code, 0);
    let p = plan.dir.to_str().unwrap();
    let asserted = dwp()
        .args(["update", p, "--task", "2", "--status", "in_progress"])
        .args(["--gate", "make lint|0|clean"])
        .run();
    assert_eq!(asserted.code, 0, "{asserted:?}");
    let status = dwp().arg("status").arg(&plan.dir).run();
    assert!(
        status
            .stdout
            .contains("gate.sh pass (observed), make lint pass]"),
        "{}",
        status.stdout
    );
    let json = dwp()
        .args(["--json", "status"])
        .arg(&plan.dir)
        .run()
        .payload();
    let gates = &json["current"]["gates"];
    assert_eq!(gates[0]["observed"], true, "{json:#}");
    assert!(gates[1].get("observed").is_none(), "{json:#}");
}

#[test]
fn the_default_task_is_the_one_in_progress() {
    let plan = plan_at_work("PLAN_run_default_task");
    let run = dwp()
        .in_dir(&plan.dir)
        .args(["--json", "run", "--", "echo", "7 passed"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.payload()["task"], 2);
    assert_eq!(last_gate(&plan, 2)["command"], "echo '7 passed'");
}

/// A gate may be run for a blocked task (a re-run while it waits): the gate is recorded, the
/// task stays blocked and its blocker active; only `--resolve-blocker` resolves it.
#[test]
fn a_run_on_a_blocked_task_records_the_gate_and_resolves_nothing() {
    let plan = plan_at_work("PLAN_run_blocked");
    let p = plan.dir.to_str().unwrap();
    let blocked = dwp()
        .args(["update", p, "--task", "2", "--status", "blocked"])
        .args(["--block-reason", "the staging database is down"])
        .args(["--block-needs", "ops to restore staging"])
        .run();
    assert_eq!(blocked.code, 0, "{blocked:?}");
    let blocker = plan.state()["blocked"].clone();
    assert_eq!(blocker["task"], 2, "{blocker}");
    let gate_sh = script(&plan, "gate.sh", "echo '6 passed, 0 failed'");
    let run = run_script(&plan, &["--task", "2"], &gate_sh);
    assert_eq!(run.code, 0, "{run:?}");
    let state = plan.state();
    assert_eq!(state["tasks"][1]["status"], "blocked");
    assert_eq!(state["blocked"], blocker, "the blocker is untouched");
    assert_eq!(state["status"], "blocked");
    let gate = last_gate(&plan, 2);
    assert_eq!(gate["passes"], true);
    assert!(
        gate["evidence"]
            .as_str()
            .unwrap()
            .contains("(observed by dwp: exit 0; log="),
        "{gate}"
    );
    // Resolving is its own step, which the recorded gate then backs.
    let resolved = dwp()
        .args(["update", p, "--task", "2", "--status", "in_progress"])
        .arg("--resolve-blocker")
        .run();
    assert_eq!(resolved.code, 0, "{resolved:?}");
    assert!(plan.state()["blocked"].is_null(), "{}", plan.state());
    assert_eq!(plan.state()["tasks"][1]["status"], "in_progress");
}

/// The huge-page setting is inherited across exec: the command dwp runs must get the one dwp
/// inherited (dwp once turned huge pages off for itself, docs/PERFORMANCE.md "What was removed";
/// nothing of dwp's own may leak into a gate's environment).
#[test]
fn the_command_gets_the_huge_page_setting_dwp_inherited() {
    let own = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let Some(inherited) = own.lines().find(|l| l.starts_with("THP_enabled:")) else {
        return; // a kernel that does not report the setting: nothing to compare
    };
    let plan = plan_at_work("PLAN_run_huge_pages");
    let gate_sh = script(
        &plan,
        "gate.sh",
        "grep THP_enabled /proc/self/status\necho '1 passed, 0 failed'",
    );
    let run = run_script(&plan, &["--task", "2"], &gate_sh);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.lines().any(|line| line == inherited),
        "the command saw another setting than `{inherited}`: {}",
        run.stderr
    );
}

/// The command a gate records is the one its log's header names, for any argv: a multi-line
/// `sh -c` script (a newline, a tab, a carriage return in one argument) is recorded as one line
/// that says those characters, the log reads back to the same command, and completion takes it.
#[test]
fn a_multi_line_script_is_recorded_as_the_command_its_log_names() {
    let plan = plan_at_work("PLAN_run_multi_line");
    let script = "echo building\n\tcd . &&\r\necho '2 passed, 0 failed'";
    let run = dwp()
        .in_dir(plan.root())
        .arg("--json")
        .arg("run")
        .arg(&plan.dir)
        .args(["--", "sh", "-c", script])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let gate = last_gate(&plan, 2);
    assert_eq!(gate["passes"], true, "{gate:#}");
    let command = gate["command"].as_str().unwrap();
    let log =
        std::fs::read_to_string(plan.dir.join(run.payload()["log"].as_str().unwrap())).unwrap();
    assert!(log.contains(&format!("\ncommand: {command}\n")), "{log}");
    assert!(!plan.verify_codes(&[]).contains(&"DWP068".to_owned()));
    let p = plan.dir.to_str().unwrap();
    let complete = dwp()
        .args(["update", p, "--task", "2", "--status", "completed"])
        .run();
    assert_eq!(complete.code, 0, "{complete:?}");
    // One line, each character said as the shell's $'...' quoting says it.
    assert_eq!(
        command,
        r"sh -c $'echo building\n\tcd . &&\r\necho \'2 passed, 0 failed\''"
    );
}

/// `chown -R` of a test's folder to `uid` (a test run as root drops to that user to meet a
/// permission it would otherwise bypass).
fn chown_tree(dir: &Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            chown_tree(&entry.path(), uid);
        } else {
            std::os::unix::fs::lchown(entry.path(), Some(uid), Some(uid)).unwrap();
        }
    }
}

/// The unprivileged user a test run as root acts as.
const NOBODY: u32 = 65534;

/// Whatever keeps dwp from keeping the log (`analysis_results/` a symlink out of the plan, a
/// file where `analysis_results/gates/` belongs, a folder dwp may not write in) is found before
/// the command runs: refused, the command not run, nothing written.
#[test]
fn a_log_folder_dwp_cannot_write_is_refused_before_the_command_runs() {
    use std::os::unix::fs::PermissionsExt;
    let as_root = rustix::process::geteuid().is_root();
    let cases = ["symlink", "file", "read-only"];
    for case in cases {
        let plan = plan_at_work(&format!("PLAN_run_log_{}", case.replace('-', "_")));
        let ran = plan.root().join("ran");
        let gate_sh = script(
            &plan,
            "gate.sh",
            &format!("touch {}\necho '1 passed, 0 failed'", ran.display()),
        );
        let results = plan.path("analysis_results");
        let (code, says) = match case {
            "symlink" => {
                let outside = plan.root().join("elsewhere");
                std::fs::create_dir(&outside).unwrap();
                std::fs::remove_dir_all(&results).unwrap();
                std::os::unix::fs::symlink(&outside, &results).unwrap();
                (1, "symlink")
            }
            "file" => {
                std::fs::create_dir_all(&results).unwrap();
                std::fs::write(results.join("gates"), "not a folder").unwrap();
                (1, "not a folder")
            }
            _ => {
                std::fs::create_dir_all(results.join("gates")).unwrap();
                let read_only = std::fs::Permissions::from_mode(0o555);
                std::fs::set_permissions(results.join("gates"), read_only).unwrap();
                if as_root {
                    chown_tree(plan.root(), NOBODY);
                }
                (4, "Permission denied")
            }
        };
        let before = common::snapshot(plan.root());
        let mut command = dwp()
            .in_dir(plan.root())
            .arg("run")
            .arg(&plan.dir)
            .args(["--", "sh"])
            .arg(&gate_sh)
            .command();
        if as_root && case == "read-only" {
            std::os::unix::process::CommandExt::uid(&mut command, NOBODY);
            std::os::unix::process::CommandExt::gid(&mut command, NOBODY);
        }
        let run = Run::lossy(&command.output().unwrap());
        assert_eq!(run.code, code, "{case}: {run:?}");
        run.assert_stderr_says(&["analysis_results", says, "hint: "]);
        assert!(!ran.exists(), "{case}: the command ran");
        assert_eq!(common::snapshot(plan.root()), before, "{case}: written");
    }
}

/// A `dwp run` refused for want of a place to write (here a plan folder dwp may not write in,
/// where the state and the intent record go, under an `analysis_results/` it may) leaves no
/// empty `analysis_results/gates/` behind: nothing is created before the refusal.
#[test]
fn a_refused_run_leaves_no_empty_gates_folder() {
    use std::os::unix::fs::PermissionsExt;
    let as_root = rustix::process::geteuid().is_root();
    let plan = plan_at_work("PLAN_run_no_gates_left");
    let ran = plan.root().join("ran");
    let gate_sh = script(
        &plan,
        "gate.sh",
        &format!("touch {}\necho '1 passed, 0 failed'", ran.display()),
    );
    let results = plan.path("analysis_results");
    std::fs::create_dir_all(&results).unwrap();
    let _ = std::fs::remove_dir_all(results.join("gates"));
    if as_root {
        chown_tree(plan.root(), NOBODY);
    }
    std::fs::set_permissions(&plan.dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = common::snapshot(plan.root());
    let mut command = dwp()
        .in_dir(plan.root())
        .arg("run")
        .arg(&plan.dir)
        .args(["--", "sh"])
        .arg(&gate_sh)
        .command();
    if as_root {
        std::os::unix::process::CommandExt::uid(&mut command, NOBODY);
        std::os::unix::process::CommandExt::gid(&mut command, NOBODY);
    }
    let run = Run::lossy(&command.output().unwrap());
    std::fs::set_permissions(&plan.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(run.code, 4, "{run:?}");
    run.assert_stderr_says(&["Permission denied", "hint: "]);
    assert!(!ran.exists(), "the command ran");
    assert!(
        !results.join("gates").exists(),
        "an empty gates folder was left"
    );
    assert_eq!(common::snapshot(plan.root()), before, "written");
}

/// The command's private `HOME` is its user's alone (0700, not the temp folder's 0755), gone
/// when the run ends, and a home a killed dwp left behind (its pid no longer running) is
/// removed by the next run; a live one's is left.
#[test]
fn the_private_home_is_0700_and_a_killed_runs_home_is_swept() {
    let plan = plan_at_work("PLAN_run_private_home");
    let temp = plan.root().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    // Past the largest pid Linux hands out (2^22): never running.
    let stale = temp.join("dwp-home-4194305-abc123");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join(".netrc"), "machine x password y\n").unwrap();
    let live = temp.join(format!("dwp-home-{}-def456", std::process::id()));
    std::fs::create_dir(&live).unwrap();
    let seen = plan.root().join("seen");
    let gate_sh = script(
        &plan,
        "gate.sh",
        &format!(
            "stat -c %a \"$HOME\" > {seen}\necho \"$HOME\" >> {seen}\necho '1 passed, 0 failed'",
            seen = seen.display()
        ),
    );
    let run = dwp()
        .in_dir(plan.root())
        .env("TMPDIR", &temp)
        .arg("run")
        .arg(&plan.dir)
        .args(["--", "sh"])
        .arg(&gate_sh)
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let seen = std::fs::read_to_string(&seen).unwrap();
    let (mode, home) = seen.trim().split_once('\n').unwrap();
    assert_eq!(mode, "700", "{seen}");
    assert!(home.starts_with(temp.to_str().unwrap()), "{seen}");
    assert!(!Path::new(home).exists(), "the run's home is removed");
    assert!(!stale.exists(), "a dead run's home is swept");
    assert!(live.exists(), "a running dwp's home is left");
}

/// Whether process `pid` is running (a zombie waiting to be reaped is not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(')')
            .unwrap()
            .1
            .trim_start()
            .starts_with('Z')
    })
}

/// A grandchild that left the command's process group and session (`setsid`) does not outlive
/// the timeout: dwp adopts it as the subreaper and kills it with the rest.
#[test]
fn a_setsid_grandchild_does_not_outlive_the_timeout() {
    let plan = plan_at_work("PLAN_run_setsid");
    let pid_file = plan.root().join("grandchild.pid");
    let gate_sh = script(
        &plan,
        "gate.sh",
        &format!(
            "setsid sh -c 'echo $$ > {pid}; exec sleep 300' </dev/null >/dev/null 2>&1 &\nsleep 300",
            pid = pid_file.display()
        ),
    );
    let run = dwp()
        .in_dir(plan.root())
        .arg("run")
        .arg(&plan.dir)
        .args(["--timeout", "1", "--", "sh"])
        .arg(&gate_sh)
        .timeout(std::time::Duration::from_secs(60))
        .run();
    assert_eq!(run.code, 124, "{run:?}");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let pid = pid.trim();
    let survived = alive(pid);
    if survived {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
    }
    assert!(
        !survived,
        "the setsid grandchild {pid} outlived the timeout"
    );
}

/// A repository (`.git`) holding a plan at `.dwp/plans/NAME`, 3 tasks, task 2 in progress: the
/// repository's folder, and the plan folder.
fn plan_in_repository(name: &str) -> (tempfile::TempDir, PathBuf) {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let plans = repo.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    let dir = SynthPlan::new(name, 3).completed(1).write(&plans).unwrap();
    let started = dwp()
        .arg("update")
        .arg(&dir)
        .args(["--task", "2", "--status", "in_progress"])
        .run();
    assert_eq!(started.code, 0, "{started:?}");
    (repo, dir)
}

/// The last log of task 2, as text.
fn last_log(dir: &Path, document: &Value) -> String {
    let log = document["run"]["log"].as_str().unwrap();
    std::fs::read_to_string(dir.join(log)).unwrap()
}

#[test]
fn a_gate_runs_at_the_plans_repository_root_even_from_inside_the_plan_folder() {
    let (repo, dir) = plan_in_repository("PLAN_run_at_root");
    let run = dwp()
        .in_dir(&dir)
        .args(["--json", "run", "--task", "2", "--", "sh", "-c"])
        .arg("pwd; echo '1 passed, 0 failed'")
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let root = repo.path().canonicalize().unwrap();
    let document = run.json();
    assert!(
        last_log(&dir, &document).contains(&format!("\n{}\n", root.display())),
        "{}",
        last_log(&dir, &document)
    );
    assert_eq!(
        Path::new(document["run"]["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        root
    );
}

#[test]
fn cwd_names_the_folder_a_gate_runs_in_and_a_missing_one_is_refused_before_it_runs() {
    let (repo, dir) = plan_in_repository("PLAN_run_cwd");
    let sub = repo.path().join("crates/core");
    std::fs::create_dir_all(&sub).unwrap();
    let run = dwp()
        .args(["--json", "run"])
        .arg(&dir)
        .args(["--task", "2", "--cwd"])
        .arg(&sub)
        .args(["--", "sh", "-c", "pwd; echo '1 passed, 0 failed'"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let sub = sub.canonicalize().unwrap();
    assert!(last_log(&dir, &run.json()).contains(&format!("\n{}\n", sub.display())));

    let missing = repo.path().join("no-such-folder");
    let refused = common::writing_nothing(&dir, "run --cwd MISSING", || {
        dwp()
            .arg("run")
            .arg(&dir)
            .args(["--task", "2", "--cwd"])
            .arg(&missing)
            .args(["--", "sh", "-c", "touch ran"])
            .run()
    });
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("--cwd"), "{refused:?}");
    assert!(refused.stderr.contains("hint:"), "{refused:?}");
    assert!(!repo.path().join("ran").exists());
}

/// Toolchain managers keep their tools under the real `HOME`; the command's `HOME` is private,
/// so dwp passes where they are: the manager's variable when set, else its default folder
/// under the real `HOME` when that exists (and nothing for one that does not).
#[test]
fn toolchain_homes_are_passed_so_a_private_home_does_not_hide_the_toolchain() {
    let plan = plan_at_work("PLAN_run_toolchains");
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".rustup")).unwrap();
    std::fs::create_dir(home.path().join(".pyenv")).unwrap();
    let gate_sh = script(
        &plan,
        "gate.sh",
        "echo \"home=$HOME\"; echo \"rustup=$RUSTUP_HOME\"; echo \"cargo=${CARGO_HOME-unset}\"\n\
         echo \"pyenv=$PYENV_ROOT\"; echo \"nvm=$NVM_DIR\"; echo \"toolchain=$RUSTUP_TOOLCHAIN\"\n\
         echo '1 passed, 0 failed'",
    );
    let run = dwp()
        .in_dir(plan.root())
        .home(home.path())
        .env_remove("RUSTUP_HOME")
        .env_remove("CARGO_HOME")
        .env_remove("PYENV_ROOT")
        .env("NVM_DIR", "/opt/nvm")
        .env("RUSTUP_TOOLCHAIN", "stable")
        .args(["--json", "run"])
        .arg(&plan.dir)
        .args(["--task", "2", "--", "sh"])
        .arg(&gate_sh)
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let out = &run.stderr;
    let home = home.path().display();
    assert!(
        !out.contains(&format!("home={home}\n")),
        "HOME stays private: {out}"
    );
    assert!(out.contains(&format!("rustup={home}/.rustup\n")), "{out}");
    assert!(
        out.contains("cargo=unset\n"),
        "no ~/.cargo, nothing passed: {out}"
    );
    assert!(out.contains(&format!("pyenv={home}/.pyenv\n")), "{out}");
    assert!(out.contains("nvm=/opt/nvm\n"), "{out}");
    assert!(out.contains("toolchain=stable\n"), "{out}");
    let names = run.json()["run"]["env"].clone();
    for name in ["RUSTUP_HOME", "PYENV_ROOT", "NVM_DIR", "RUSTUP_TOOLCHAIN"] {
        assert!(
            names.as_array().unwrap().iter().any(|n| n == name),
            "{names}"
        );
    }
}

/// The README's example, `dwp run -- cargo ...`, works under the private `HOME`: rustup's proxy
/// finds its toolchain.
#[test]
fn cargo_runs_under_dwp_run_with_the_callers_toolchain() {
    if std::process::Command::new("cargo")
        .arg("--version")
        .output()
        .is_err()
    {
        return; // no cargo on PATH: nothing to find
    }
    let plan = plan_at_work("PLAN_run_cargo");
    let run = dwp()
        .in_dir(plan.root())
        .inherit_home()
        .args(["--json", "run"])
        .arg(&plan.dir)
        .args(["--task", "2", "--", "cargo", "--version"])
        .run();
    assert_eq!(run.json()["run"]["ended"], "exit 0", "{run:?}");
    assert!(run.stderr.contains("cargo "), "{run:?}");
}

/// A completion refused on a failing observed gate hints the `dwp run` line of that gate, and
/// it runs as printed: once the check passes, the same line records the passing run and the
/// completion goes through.
#[test]
fn a_completion_refused_on_a_failing_run_hints_the_same_dwp_run_which_records_the_fix() {
    let plan = plan_at_work("PLAN_run_rerun_hint");
    let gate_sh = script(&plan, "gate.sh", "echo '0 passed, 1 failed'\nexit 1");
    let failed = run_script(&plan, &["--task", "2"], &gate_sh);
    assert_eq!(failed.code, 1, "{failed:?}");
    let refused = plan.dwp(&["update", "--task", "2", "--status", "completed", "--tick"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    let line = common::hint_command(&refused);
    assert!(line.starts_with("dwp run "), "{line}");
    std::fs::write(&gate_sh, "#!/bin/sh\necho '1 passed, 0 failed'\n").unwrap();
    let rerun = common::run_printed(&line, plan.root());
    assert_eq!(rerun.code, 0, "{line}: {rerun:?}");
    let done = plan.dwp(&["update", "--task", "2", "--status", "completed", "--tick"]);
    assert_eq!(done.code, 0, "{done:?}");
}

/// The rule of DWP068 and DWP037 is per record, and their hint a promise: after an edited log,
/// the new run the hint names supersedes the record, which stays reported as history (an
/// advisory: `--strict` still fails) while the latest run backs the task.
#[test]
fn a_new_run_after_an_edited_log_leaves_the_old_record_as_history_not_an_error() {
    let plan = plan_at_work("PLAN_run_superseded_log");
    let gate_sh = script(&plan, "gate.sh", "echo '1 passed, 0 failed'");
    let run = run_script(&plan, &["--task", "2"], &gate_sh);
    assert_eq!(run.code, 0, "{run:?}");
    let log = plan.path(run.json()["run"]["log"].as_str().unwrap());
    std::fs::write(&log, b"edited\n").unwrap();
    let report = dwp().args(["--json", "verify"]).arg(&plan.dir).run();
    let finding = report.json()["verify"]["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "DWP068")
        .cloned()
        .unwrap_or_else(|| panic!("{report:?}"));
    assert_eq!(finding["severity"], "error");
    let hint = finding["hint"].as_str().unwrap();
    let line = hint
        .split('`')
        .find(|span| span.starts_with("dwp run "))
        .unwrap_or_else(|| panic!("{hint}"));
    let rerun = common::run_printed(line, plan.root());
    assert_eq!(rerun.code, 0, "{line}: {rerun:?}");
    let after = dwp().args(["--json", "verify"]).arg(&plan.dir).run();
    assert_eq!(after.code, 0, "{after:?}");
    let findings = after.json()["verify"]["plans"][0]["findings"].clone();
    let old = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "DWP068")
        .unwrap_or_else(|| panic!("the edited log is still reported: {findings:#}"));
    assert_eq!(old["severity"], "advisory");
    let strict = dwp().args(["verify", "--strict"]).arg(&plan.dir).run();
    assert_eq!(strict.code, 1, "{strict:?}");
}

/// The text names the log and the folder the gate ran in from where the user stands: from the
/// repository root and from inside the plan folder alike, the printed log path opens.
#[test]
fn the_printed_log_path_opens_from_where_the_user_stands() {
    let (repo, dir) = plan_in_repository("PLAN_run_log_path");
    for here in [repo.path().to_path_buf(), dir.clone()] {
        let run = dwp()
            .in_dir(&here)
            .args([
                "run",
                "--task",
                "2",
                "--",
                "sh",
                "-c",
                "echo '1 passed, 0 failed'",
            ])
            .run();
        assert_eq!(run.code, 0, "{run:?}");
        let log = run
            .stdout
            .lines()
            .find_map(|l| l.trim_start().strip_prefix("log: "))
            .and_then(|rest| rest.split(" (").next())
            .unwrap_or_else(|| panic!("{run:?}"));
        assert!(Path::new(log).is_relative(), "{log}");
        assert!(here.join(log).is_file(), "{log} from {}", here.display());
    }
}
