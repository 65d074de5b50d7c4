//! A hint is a promise: each hint below is run from the state it is printed in, through the real
//! binary, and must do what it says. The command a hint names in backticks is taken from the
//! hint itself, so a hint that drifts from what works fails here.

use crate::common;
use crate::common::{NOW, Plan, Run, dwp, verify_codes};
use dwp::plan::model::Generation;
use dwp::synth::SynthPlan;
use std::time::Duration;

/// The first backticked `dwp ...` command of `hint`, as arguments after `dwp`.
fn hinted_command(hint: &str) -> Vec<String> {
    every_hinted_command(hint)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no `dwp ...` command in the hint: {hint}"))
}

/// Every backticked `dwp ...` command of `hint`, as arguments after `dwp`, the user's own
/// words (TEXT, NAME, SECONDS) filled in as a user would (`common::hints::as_run`).
fn every_hinted_command(hint: &str) -> Vec<Vec<String>> {
    common::hints::commands_in(hint)
        .iter()
        .map(|command| common::hints::as_run(command)[1..].to_vec())
        .collect()
}

/// The `hint:` line printed on stderr.
fn hint_line(run: &Run) -> &str {
    run.stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("hint: "))
        .unwrap_or_else(|| panic!("no hint: {run:?}"))
}

fn run_hint(hint: &str) -> Run {
    dwp().at(NOW).args(hinted_command(hint)).run()
}

#[test]
fn the_hint_scan_takes_the_first_backticked_dwp_command() {
    assert_eq!(
        hinted_command("let it finish (`dwp lock status /p` shows it), or `dwp x`"),
        ["lock", "status", "/p"]
    );
}

#[test]
fn a_writer_held_off_by_a_lock_is_told_to_retry_with_wait_and_that_works() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_wait", 5).completed(2));
    let guard = dwp::store::lock_dir::try_acquire(&plan.path("state.json")).expect("take the lock");
    let start = [
        "update",
        plan.dir.to_str().unwrap(),
        "--task",
        "3",
        "--status",
        "in_progress",
    ];
    let held = dwp().at(NOW).args(start).run();
    assert_eq!(held.code, 3, "{held:?}");
    let hint = hint_line(&held).to_owned();
    assert!(hint.starts_with("retry with --wait SECONDS"), "{hint}");
    // The retry the hint names: the same command with --wait, while the holder finishes.
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(guard);
    });
    let retried = dwp().at(NOW).args(start).args(["--wait", "10"]).run();
    release.join().unwrap();
    assert_eq!(retried.code, 0, "{retried:?}");
    assert_eq!(plan.state()["tasks"][2]["status"], "in_progress");
}

#[test]
fn a_command_without_wait_is_never_told_to_use_it() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_no_wait", 3).generation(Generation::V1));
    let guard = dwp::store::lock_dir::try_acquire(&plan.path("state.json")).expect("take the lock");
    let migrate = ["migrate", plan.dir.to_str().unwrap(), "--to", "v5"];
    let held = dwp().at(NOW).args(migrate).run();
    assert_eq!(held.code, 3, "{held:?}");
    let hint = hint_line(&held);
    assert!(!hint.contains("--wait"), "migrate has no --wait: {hint}");
    assert!(hint.starts_with("retry once it is released"), "{hint}");
    drop(guard);
    let retried = dwp().at(NOW).args(migrate).run();
    assert_eq!(retried.code, 0, "{retried:?}");
}

#[test]
fn lock_recover_of_a_live_owner_hints_waiting_and_the_hinted_status_works() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_recover", 3));
    let guard = dwp::store::lock_dir::try_acquire(&plan.path("state.json")).expect("take the lock");
    let refused = dwp().args(["lock", "recover"]).arg(&plan.dir).run();
    assert_eq!(refused.code, 3, "{refused:?}");
    let hint = hint_line(&refused);
    assert!(!hint.contains("--wait"), "recover has no --wait: {hint}");
    assert!(hint.contains("never takes a live writer's lock"), "{hint}");
    let status = run_hint(hint);
    assert_eq!(status.code, 0, "{status:?}");
    assert!(status.stdout.starts_with("held: "), "{status:?}");
    drop(guard);
}

/// Task 3 started by dwp, then task 4 by hand, as a reconcile reopening an earlier task leaves
/// a plan: two tasks in progress (DWP036).
fn start_tasks_3_and_4(plan: &Plan) {
    let run = dwp()
        .at(NOW)
        .arg("update")
        .arg(&plan.dir)
        .args(["--task", "3", "--status", "in_progress"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    plan.edit_state(|state| {
        state["tasks"][3]["status"] = "in_progress".into();
        state["tasks"][3]["started_at"] = NOW.into();
    });
}

#[test]
fn two_tasks_in_progress_are_reported_and_the_hinted_update_restores_the_order() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_order", 5).completed(2));
    start_tasks_3_and_4(&plan);
    let report = dwp()
        .at(NOW)
        .args(["--json", "verify"])
        .arg(&plan.dir)
        .run();
    assert_eq!(
        verify_codes(&report.json()),
        ["DWP036"],
        "{}",
        report.stdout
    );
    let hint = report.payload()["plans"][0]["findings"][0]["hint"]
        .as_str()
        .unwrap()
        .to_owned();
    let fixed = run_hint(&hint);
    assert_eq!(fixed.code, 0, "{fixed:?}");
    let report = dwp()
        .at(NOW)
        .args(["--json", "verify"])
        .arg(&plan.dir)
        .run();
    assert_eq!(verify_codes(&report.json()), Vec::<String>::new());
}

/// Every verify hint on every fixture is checked where every run of the binary is
/// (`tests/common/hints.rs`: each `dwp ...` command parses, no placeholder dwp could fill);
/// this walk gives that check every fixture's findings, and fails if it found too few.
#[test]
fn every_command_a_verify_hint_names_on_the_fixtures_is_one_dwp_accepts() {
    let mut checked = 0;
    for plan in common::fixture_plans() {
        let report = dwp().at(NOW).args(["--json", "verify"]).arg(&plan).run();
        // Said here too, so the walk holds whatever `Run` does.
        common::hints::check(&report.stdout, &report.stderr);
        for finding in report.payload()["plans"][0]["findings"].as_array().unwrap() {
            let hint = finding["hint"].as_str().unwrap_or_default();
            checked += common::hints::commands_in(hint).len();
        }
    }
    assert!(
        checked > 100,
        "only {checked} hinted commands: the scan found too few"
    );
}

/// The hint of the first finding of `code` that `dwp verify --json` reports on `plan`.
fn verify_hint(plan: &Plan, code: &str) -> String {
    let report = dwp()
        .at(NOW)
        .args(["--json", "verify"])
        .arg(&plan.dir)
        .run();
    let json = report.payload();
    let finding = json["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code}: {json:#}"))
        .clone();
    finding["hint"].as_str().unwrap().to_owned()
}

#[test]
fn state_ahead_hints_the_tick_and_running_it_brings_the_plan_in_line() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_state_ahead", 5).completed(2));
    for status in ["in_progress", "completed"] {
        let run = dwp()
            .at(NOW)
            .arg("update")
            .arg(&plan.dir)
            .args([
                "--task",
                "3",
                "--status",
                status,
                "--gate",
                "cargo test|0|9 passed",
            ])
            .run();
        assert_eq!(run.code, 0, "{run:?}");
    }
    let hint = verify_hint(&plan, "DWP040");
    assert!(
        hint.contains("--tick") && hint.contains("reopens it in state"),
        "{hint}"
    );
    let ticked = run_hint(&hint);
    assert_eq!(ticked.code, 0, "{ticked:?}");
    let codes = verify_codes(
        &dwp()
            .at(NOW)
            .args(["--json", "verify"])
            .arg(&plan.dir)
            .run()
            .json(),
    );
    assert!(
        !codes.iter().any(|c| c == "DWP040" || c == "DWP047"),
        "{codes:?}"
    );
}

#[test]
fn every_box_checked_hints_finalize_and_running_it_publishes() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_all_checked", 3).ready_to_publish());
    let hint = verify_hint(&plan, "DWP041");
    assert!(
        hint.contains("`dwp finalize "),
        "not reconcile, which refuses: {hint}"
    );
    let reconcile = dwp()
        .at(NOW)
        .arg("reconcile")
        .arg(&plan.dir)
        .arg("--write")
        .run();
    assert_eq!(
        reconcile.code, 1,
        "reconcile leaves publication to finalize: {reconcile:?}"
    );
    let published = run_hint(hint_line(&reconcile));
    assert_eq!(published.code, 0, "{published:?}");
    assert!(published.stdout.contains("PUBLISHED"), "{published:?}");
    assert_eq!(plan.state()["status"], "completed");
    assert_eq!(
        run_hint(&hint).code,
        0,
        "the verify hint's finalize, run again: no change"
    );
}

#[test]
fn a_run_that_checked_nothing_is_told_so_and_a_run_that_did_completes_the_task() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_zero_tests", 5).completed(2));
    let update = |args: &[&str]| {
        dwp()
            .at(NOW)
            .arg("update")
            .arg(&plan.dir)
            .args(["--task", "3"])
            .args(args)
            .run()
    };
    assert_eq!(update(&["--status", "in_progress"]).code, 0);
    let complete = |evidence: &str| {
        let gate = format!("cargo test|0|{evidence}");
        update(&["--status", "completed", "--gate", &gate])
    };
    let refused = complete("running 0 tests");
    assert_eq!(refused.code, 1, "{refused:?}");
    let hint = hint_line(&refused);
    assert!(
        hint.contains("checked nothing"),
        "not `re-run the failing check`: {hint}"
    );
    assert!(!hint.contains("failing"), "{hint}");
    let done = complete("running 12 tests; 12 passed");
    assert_eq!(done.code, 0, "{done:?}");
}

#[test]
fn every_hinted_command_runs_on_a_copy_of_its_fixture() {
    let mut ran = 0;
    let mut wrong = Vec::new();
    let mut outcomes = std::collections::BTreeMap::new();
    for original in common::fixture_plans() {
        let case = original.parent().unwrap();
        let copy = tempfile::tempdir().unwrap();
        let plan = copy.path().join(original.file_name().unwrap());
        common::copy_plan(&original, &plan);
        let report = dwp().at(NOW).args(["--json", "verify"]).arg(&plan).run();
        let findings = report.payload()["plans"][0]["findings"].clone();
        for finding in findings.as_array().unwrap() {
            let hint = finding["hint"].as_str().unwrap_or_default();
            for command in every_hinted_command(hint) {
                let run = dwp().at(NOW).args(&command).run();
                ran += 1;
                *outcomes.entry(run.code).or_insert(0) += 1;
                if run.code == 2 || run.code < 0 {
                    wrong.push(format!(
                        "{} {}: `dwp {}` exits {}: {}",
                        case.file_name().unwrap().to_string_lossy(),
                        finding["code"],
                        command.join(" "),
                        run.code,
                        run.message()
                    ));
                }
            }
        }
    }
    println!("{ran} hinted commands run; exit codes: {outcomes:?}");
    assert!(ran > 100, "only {ran} hinted commands ran");
    assert!(
        wrong.is_empty(),
        "{} hinted commands misused:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The backticked `dwp ...` command of `hint`, as its text.
fn hinted_line(hint: &str) -> &str {
    let start = hint.find("`dwp ").expect("a `dwp ...` command") + 1;
    let end = start + hint[start..].find('`').expect("closing backtick");
    &hint[start..end]
}

/// A hint names the plan folder as one shell word (issue 14: `PLAN_a${IFS}b` was shown as
/// `PLAN_ab`, and a folder with a space split in two), so its command runs as printed: through
/// `sh -c`, by the shell a user pastes it into.
#[test]
fn a_hint_names_a_plan_folder_with_a_space_or_a_dollar_so_it_runs_as_printed() {
    for name in ["PLAN_a b", "PLAN_a${IFS}b", "PLAN_it's $HOME"] {
        // The plan's name (held to `PLAN_[a-z0-9_]`) is not its folder's: a folder is anything.
        let mut plan = Plan::from_synth(SynthPlan::new("PLAN_quoted_folder", 5).completed(2));
        let folder = plan.dir.with_file_name(name);
        std::fs::rename(&plan.dir, &folder).unwrap();
        plan.dir = folder;
        start_tasks_3_and_4(&plan);
        // The hint that `PLAN` stands in for (substituted), and one formatted with the folder.
        let order = verify_hint(&plan, "DWP036");
        let parent = plan.dir.parent().unwrap();
        let fixed = common::run_printed(hinted_line(&order), parent);
        assert_eq!(fixed.code, 0, "{name}: {order}\n{fixed:?}");
        let report = dwp()
            .at(NOW)
            .args(["--json", "verify"])
            .arg(&plan.dir)
            .run();
        // Put in order; what is left is the folder's name, which no plan name can match (DWP030, manifest and state).
        assert_eq!(
            verify_codes(&report.json()),
            ["DWP030"; 2],
            "{name}: {}",
            report.stdout
        );

        // A hint formatted with the folder itself: the lock of a dead writer, recovered.
        let dead = dwp::store::lock_dir::try_acquire(&plan.path("state.json")).unwrap();
        std::mem::forget(dead);
        let owner = plan.path("state.json.lock/owner.json");
        let mut record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&owner).unwrap()).unwrap();
        record["pid"] = 999_999_999u64.into();
        std::fs::write(&owner, record.to_string()).unwrap();
        let status = dwp().at(NOW).arg("status").arg(&plan.dir).run();
        let line = status
            .stdout
            .lines()
            .find(|l| l.contains("dwp lock recover"));
        let line = line.unwrap_or_else(|| panic!("{name}: {status:?}"));
        let recover = common::run_printed(hinted_line(line), parent);
        assert_eq!(recover.code, 0, "{name}: {line}\n{recover:?}");
        assert!(
            !plan.path("state.json.lock").exists(),
            "{name}: {recover:?}"
        );
    }
}

/// An update whose publication is refused names `dwp finalize` on the plan itself (it said
/// `dwp finalize PLAN --json`, a placeholder in an error no one fills in), and that command lists
/// the problem.
#[test]
fn a_refused_publication_hints_finalize_on_the_plan_and_it_lists_the_problem() {
    let plan = Plan::publishable(
        "PLAN_refused_publication",
        3,
        dwp::plan::model::PlanFormat::Full,
    );
    std::fs::remove_file(plan.path("analysis_results/SECURITY_REVIEW.md")).unwrap();
    let refused = dwp()
        .at(NOW)
        .arg("update")
        .arg(&plan.dir)
        .args(["--task", "3", "--status", "completed"])
        .run();
    assert_eq!(refused.code, 1, "{refused:?}");
    let hint = hint_line(&refused).to_owned();
    let listed = common::run_printed(hinted_line(&hint), plan.dir.parent().unwrap());
    assert_eq!(listed.code, 1, "{hint}\n{listed:?}");
    assert!(listed.stdout.contains("DWP083"), "{hint}\n{listed:?}");
}

/// The backticked text of `hint` that starts with `start`.
fn backticked<'a>(hint: &'a str, start: &str) -> &'a str {
    hint.split('`')
        .skip(1)
        .step_by(2)
        .find(|span| span.starts_with(start))
        .unwrap_or_else(|| panic!("no `{start}...` in the hint: {hint}"))
}

/// DWP050 on a plan without a state layer: `dwp init PLAN` creates the missing PROGRESS.md,
/// PROMPTS.md and analysis_results/ (it said "restore the file from the plan's history").
#[test]
fn a_missing_plan_file_of_a_plan_without_state_hints_dwp_init_which_creates_it() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_init_files", 3));
    for file in ["state.json", "manifest.json", "PROGRESS.md", "PROMPTS.md"] {
        std::fs::remove_file(plan.path(file)).unwrap();
    }
    std::fs::remove_dir_all(plan.path("analysis_results")).unwrap();
    let hint = verify_hint(&plan, "DWP050");
    assert!(!hint.contains("history"), "{hint}");
    let created = common::run_printed(hinted_line(&hint), plan.root());
    assert_eq!(created.code, 0, "{hint}\n{created:?}");
    let codes = plan.verify_codes(&[]);
    assert!(!codes.contains(&"DWP050".to_owned()), "{codes:?}");
}

/// DWP050 on a plan with a state layer, which `dwp init` refuses: the hint is the command that
/// creates the missing file or folder, and run as printed it clears the finding.
#[test]
fn a_missing_plan_file_of_a_plan_with_state_hints_the_command_that_creates_it() {
    for (missing, start) in [
        ("PROGRESS.md", "printf"),
        ("PROMPTS.md", "printf"),
        ("analysis_results", "mkdir"),
    ] {
        let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_create_file", 3));
        let path = plan.path(missing);
        match path.is_dir() {
            true => std::fs::remove_dir_all(&path).unwrap(),
            false => std::fs::remove_file(&path).unwrap(),
        }
        let hint = verify_hint(&plan, "DWP050");
        assert!(!hint.contains("history"), "{missing}: {hint}");
        let created = common::run_printed(backticked(&hint, start), plan.root());
        assert_eq!(created.code, 0, "{missing}: {hint}\n{created:?}");
        assert_eq!(
            plan.verify_codes(&[]),
            Vec::<String>::new(),
            "{missing}: {hint}"
        );
    }
}

/// Task 1 of a new synthetic plan started, its Validation `echo 3 passed` run through dwp, and
/// the log dwp kept edited afterwards (DWP068).
fn edited_gate_log(name: &str) -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(name, 3));
    plan.edit("1.task_synthetic_1.md", |t| {
        t.replace("- `cargo test`", "- `echo 3 passed`")
    });
    let dir = plan.dir.to_str().unwrap().to_owned();
    for args in [
        vec!["update", &dir, "--task", "1", "--status", "in_progress"],
        vec!["run", &dir, "--task", "1", "--", "echo", "3", "passed"],
    ] {
        let run = dwp().at(NOW).args(args).run();
        assert_eq!(run.code, 0, "{run:?}");
    }
    let gates = plan.path("analysis_results/gates");
    let log = std::fs::read_dir(gates)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(b"12 passed\n");
    std::fs::write(&log, bytes).unwrap();
    plan
}

/// DWP068 on a task at work names `dwp run` with the gate's own command (it said `-- COMMAND`),
/// and run as printed it records a new observed run.
#[test]
fn an_edited_gate_log_of_a_task_at_work_hints_dwp_run_of_its_own_command() {
    let plan = edited_gate_log("PLAN_hint_log_at_work");
    let hint = verify_hint(&plan, "DWP068");
    assert!(!hint.contains("COMMAND"), "{hint}");
    let line = hinted_line(&hint);
    assert!(
        line.starts_with("dwp run ") && line.ends_with(" --task 1 -- echo 3 passed"),
        "{hint}"
    );
    let ran = common::run_printed(line, plan.root());
    assert_eq!(ran.code, 0, "{hint}\n{ran:?}");
    assert_eq!(
        plan.state()["tasks"][0]["gates"].as_array().unwrap().len(),
        2
    );
}

/// DWP068 on a completed task: `dwp run` refuses a completed task, so the hint names none; it
/// names what clears the finding, the log's bytes restored.
#[test]
fn an_edited_gate_log_of_a_completed_task_hints_no_dwp_run_which_it_refuses() {
    let plan = edited_gate_log("PLAN_hint_log_done");
    // The log is edited after the completion here: complete first on a clean log.
    let gates = plan.path("analysis_results/gates");
    let log = std::fs::read_dir(gates)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let edited = std::fs::read(&log).unwrap();
    std::fs::write(&log, &edited[..edited.len() - b"12 passed\n".len()]).unwrap();
    common::fill_task_log(&plan.path("1.task_synthetic_1.md"), 1);
    let done = dwp()
        .at(NOW)
        .arg("update")
        .arg(&plan.dir)
        .args(["--task", "1", "--status", "completed", "--tick"])
        .run();
    assert_eq!(done.code, 0, "{done:?}");
    std::fs::write(&log, &edited).unwrap();
    let hint = verify_hint(&plan, "DWP068");
    assert!(!hint.contains("`dwp run"), "{hint}");
    assert!(!hint.contains("COMMAND"), "{hint}");
    assert!(hint.contains("restore its bytes"), "{hint}");
}

/// `dwp run` in a plan whose tasks are all done: its hint named `dwp update PLAN --task 1
/// --status in_progress`, refused on a completed task; it names a step that runs.
#[test]
fn dwp_run_in_a_finished_plan_hints_a_step_that_runs() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_run_finished", 3).completed(3));
    let refused = dwp()
        .at(NOW)
        .arg("run")
        .arg(&plan.dir)
        .args(["--", "echo", "hi"])
        .run();
    assert_ne!(refused.code, 0, "{refused:?}");
    let hint = hint_line(&refused).to_owned();
    let hinted = common::run_printed(hinted_line(&hint), plan.root());
    assert_eq!(hinted.code, 0, "{hint}\n{hinted:?}");
}

/// `dwp run --task N` on a completed task: the hint's first command ran `dwp amend PLAN --task N
/// ...`, a placeholder; it names a step that runs as printed.
#[test]
fn dwp_run_on_a_completed_task_hints_a_step_that_runs() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_run_done_task", 3).completed(1));
    let refused = dwp()
        .at(NOW)
        .arg("run")
        .arg(&plan.dir)
        .args(["--task", "1", "--", "echo", "hi"])
        .run();
    assert_ne!(refused.code, 0, "{refused:?}");
    let hint = hint_line(&refused).to_owned();
    assert!(!hint.contains("..."), "{hint}");
    let hinted = common::run_printed(hinted_line(&hint), plan.root());
    assert_eq!(hinted.code, 0, "{hint}\n{hinted:?}");
}

/// `dwp run` without `--task` while two tasks are in progress: the hint is the same run with the
/// first task named (it said `-- COMMAND`), and it runs as printed.
#[test]
fn dwp_run_with_two_tasks_in_progress_hints_the_same_command_with_its_task() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_run_which", 5).completed(2));
    start_tasks_3_and_4(&plan);
    let refused = dwp()
        .at(NOW)
        .arg("run")
        .arg(&plan.dir)
        .args(["--", "echo", "3 passed"])
        .run();
    assert_ne!(refused.code, 0, "{refused:?}");
    let hint = hint_line(&refused).to_owned();
    assert!(!hint.contains("COMMAND"), "{hint}");
    let line = hinted_line(&hint);
    assert!(line.ends_with("--task 3 -- echo '3 passed'"), "{hint}");
    let ran = common::run_printed(line, plan.root());
    assert_eq!(ran.code, 0, "{hint}\n{ran:?}");
}

/// DWP038: a log no record names hints its removal, with no `-- COMMAND` placeholder to fill in
/// (a `dwp run` it named would record the run under another log name than a whole run's); the
/// `rm` it names, run as printed, clears the finding.
#[test]
fn an_orphan_gate_log_hints_its_removal_which_clears_it_and_no_placeholder() {
    let plan = edited_gate_log("PLAN_hint_orphan_log");
    // The record goes, the log stays: what a run stopped before its record leaves.
    plan.edit_state(|state| state["tasks"][0]["gates"] = serde_json::json!([]));
    let hint = verify_hint(&plan, "DWP038");
    assert!(!hint.contains("COMMAND"), "{hint}");
    let removed = common::run_printed(backticked(&hint, "rm "), plan.root());
    assert_eq!(removed.code, 0, "{hint}\n{removed:?}");
    assert!(!plan.verify_codes(&[]).contains(&"DWP038".to_owned()));
}

/// DWP060's hint, a completed task whose latest gate fails, is the spec's rework, run as printed
/// (the user's own words filled in): the amendment, the reopening update, then the run
/// `dwp next` prints and the completion; the finding is gone and no placeholder was stored.
#[test]
fn a_failing_gate_of_a_completed_task_hints_the_rework_and_it_runs_to_a_passing_completion() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_rework", 4).completed(2));
    let mut state = plan.state();
    let mut failing = state["tasks"][1]["gates"][0].clone();
    failing["passes"] = false.into();
    failing["exit_code"] = 1.into();
    failing["evidence"] = "3 passed, 1 failed".into();
    state["tasks"][1]["gates"]
        .as_array_mut()
        .unwrap()
        .push(failing);
    plan.write("state.json", &serde_json::to_string_pretty(&state).unwrap());
    let hint = verify_hint(&plan, "DWP060");
    for command in every_hinted_command(&hint) {
        let run = dwp().at(NOW).args(&command).run();
        assert_eq!(run.code, 0, "`dwp {}`: {run:?}", command.join(" "));
    }
    assert_eq!(plan.state()["tasks"][1]["status"], "in_progress");
    let (_tools, path) = common::tool_on_path("cargo", "echo '4 passed, 0 failed'");
    let p = plan.dir.to_str().unwrap();
    let ran = dwp()
        .at(NOW)
        .env("PATH", &path)
        .args(["run", p, "--task", "2", "--", "cargo", "test"])
        .run();
    assert_eq!(ran.code, 0, "{ran:?}");
    let done = plan.dwp(&["update", "--task", "2", "--status", "completed", "--tick"]);
    assert_eq!(done.code, 0, "{done:?}");
    let codes = plan.verify_codes(&[]);
    assert!(!codes.contains(&"DWP060".to_owned()), "{codes:?}");
    assert!(
        !plan.read("state.json").contains("TEXT"),
        "a placeholder was stored"
    );
}

/// Every hint site in the source, read as text: no hint offers a `dwp ...` command holding a
/// placeholder for evidence or a gate (`EVIDENCE`, `COMMAND|`) or `...`, and outside the rules
/// and the plan model (whose findings get their plan written in, `rules::conformance::name_the_plan`) none names
/// `PLAN`: the value is dwp's to write, or the command is not offered.
#[test]
fn no_hint_site_offers_a_command_with_a_placeholder_dwp_could_fill() {
    let mut wrong = Vec::new();
    let mut sites = 0;
    let mut files = Vec::new();
    common::rust_files(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(&file)
            .display()
            .to_string();
        let lines: Vec<&str> = text.lines().collect();
        for (number, line) in lines.iter().enumerate() {
            if !(line.contains(".hint(")
                || line.contains("with_hint(")
                || line.contains("_HINT: &str"))
            {
                continue;
            }
            sites += 1;
            // The call's text: this line and the few that carry its string.
            let call = lines[number..(number + 4).min(lines.len())].join("\n");
            for span in call
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|s| s.starts_with("dwp "))
            {
                let placeholder = ["EVIDENCE", "COMMAND|", "..."]
                    .iter()
                    .find(|p| span.contains(*p));
                let named_later = rel.starts_with("src/rules/") || rel.starts_with("src/plan/");
                let plan_word = !named_later && span.split_whitespace().any(|w| w == "PLAN");
                if placeholder.is_some() || plan_word {
                    wrong.push(format!("{rel}:{}: `{span}`", number + 1));
                }
            }
        }
    }
    assert!(
        sites > 50,
        "only {sites} hint sites found: the scan is broken"
    );
    assert!(
        wrong.is_empty(),
        "hints with placeholders:\n{}",
        wrong.join("\n")
    );
}

/// Moving a completed task without a reason hints the amendment, then the same move with one;
/// both run as printed (the user's words filled in) and the task is in progress again.
#[test]
fn reopening_a_completed_task_hints_the_amendment_and_the_move_and_both_run() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_reopen", 3).completed(2));
    let refused = plan.dwp(&["update", "--task", "2", "--status", "in_progress"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    let commands = every_hinted_command(hint_line(&refused));
    assert_eq!(commands.len(), 2, "{refused:?}");
    for command in commands {
        let run = dwp().at(NOW).args(&command).run();
        assert_eq!(run.code, 0, "`dwp {}`: {run:?}", command.join(" "));
    }
    assert_eq!(plan.state()["tasks"][1]["status"], "in_progress");
}

/// The check every run of the binary goes through (`tests/common/hints.rs`) accepts a hint
/// that runs as printed, the user's words aside, and refuses a placeholder for a value dwp
/// knows or for evidence, in a `hint:` line or a JSON `hint`.
#[test]
fn the_check_of_every_printed_hint_accepts_what_runs_and_refuses_placeholders() {
    let ok = "  hint: record it: `dwp update /p --task 2 --status skipped --reopen-reason TEXT`";
    common::hints::check("", ok);
    for wrong in [
        "hint: `dwp update /p --task 2 --status completed --gate \"cargo test|0|EVIDENCE\"`",
        "hint: `dwp finalize PLAN --json`",
        "hint: `dwp update /p --task N --status pending`",
        "hint: `dwp verify /p --no-such-flag`",
    ] {
        let refused = std::panic::catch_unwind(|| common::hints::check("", wrong));
        assert!(refused.is_err(), "accepted: {wrong}");
    }
    let json = r#"{"dwp":2,"error":{"hint":"`dwp lock recover PLAN`"}}"#;
    assert!(std::panic::catch_unwind(|| common::hints::check(json, "")).is_err());
}
