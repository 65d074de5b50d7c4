//! A hint is a promise: each hint below is run from the state it is printed in, through the real
//! binary, and must do what it says. The command a hint names in backticks is taken from the
//! hint itself, so a hint that drifts from what works fails here.

mod common;

use common::{NOW, Plan, Run, dwp, verify_codes};
use dwp::plan::model::Generation;
use dwp::synth::SynthPlan;
use std::time::Duration;

/// The first backticked `dwp ...` command of `hint`, as arguments after `dwp`.
fn hinted_command(hint: &str) -> Vec<String> {
    let start = hint
        .find("`dwp ")
        .unwrap_or_else(|| panic!("no `dwp ...` command in the hint: {hint}"));
    let rest = &hint[start + 5..];
    let end = rest.find('`').expect("closing backtick");
    rest[..end].split_whitespace().map(String::from).collect()
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
    let guard = dwp::store::lock::try_acquire(&plan.path("state.json")).expect("take the lock");
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
    let guard = dwp::store::lock::try_acquire(&plan.path("state.json")).expect("take the lock");
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
    let guard = dwp::store::lock::try_acquire(&plan.path("state.json")).expect("take the lock");
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

#[test]
fn two_tasks_in_progress_are_reported_and_the_hinted_update_restores_the_order() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_hint_order", 5).completed(2));
    let start = |task: &str| {
        let run = dwp()
            .at(NOW)
            .arg("update")
            .arg(&plan.dir)
            .args(["--task", task, "--status", "in_progress"])
            .run();
        assert_eq!(run.code, 0, "{run:?}");
    };
    start("3");
    // By hand, as a reconcile reopening an earlier task leaves it: task 4 started too.
    plan.edit_state(|state| {
        state["tasks"][3]["status"] = "in_progress".into();
        state["tasks"][3]["started_at"] = NOW.into();
    });
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
    let hint = report.json()["plans"][0]["findings"][0]["hint"]
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
