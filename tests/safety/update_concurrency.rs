//! `dwp update` under contention and under SIGKILL: no lost update, no torn file, and every lock
//! a killed writer leaves behind is judged dead and recovered.

use crate::common;
use dwp::synth::SynthPlan;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `dwp` at the test clock with the caller's HOME, to spawn.
fn dwp() -> Command {
    common::dwp().inherit_home().command()
}

/// `dwp update PLAN --task 1 --status in_progress`, to which a caller adds a gate record.
fn update_task_1(plan: &Path) -> Command {
    let mut command = dwp();
    command.args([
        "update",
        plan.to_str().unwrap(),
        "--task",
        "1",
        "--status",
        "in_progress",
    ]);
    command
}

/// A plan whose task 1 is in progress, ready to take gate records.
fn plan_with_task_in_progress(root: &Path, tasks: usize) -> PathBuf {
    let plan = SynthPlan::new("PLAN_concurrency_test", tasks)
        .write(root)
        .expect("write plan");
    let status = update_task_1(&plan).status().unwrap();
    assert!(status.success());
    plan
}

fn gate_commands(plan: &Path) -> Vec<String> {
    let state: Value =
        serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap();
    state["tasks"][0]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["command"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn eight_concurrent_writers_lose_no_update() {
    let root = tempfile::tempdir().unwrap();
    let plan = plan_with_task_in_progress(root.path(), 10);
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let plan = plan.clone();
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                for record in 0..25 {
                    let gate = format!("check-w{writer}-r{record}|0|{record} passed, 0 failed");
                    let output = dwp()
                        .args(["update", plan.to_str().unwrap(), "--task", "1"])
                        .args(["--status", "in_progress", "--gate", &gate, "--wait", "30"])
                        .output()
                        .unwrap();
                    if !output.status.success() {
                        failures.push(String::from_utf8_lossy(&output.stderr).into_owned());
                    }
                }
                failures
            })
        })
        .collect();
    let failures: Vec<String> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert!(failures.is_empty(), "writers failed: {failures:#?}");

    let mut commands = gate_commands(&plan);
    assert_eq!(commands.len(), 200, "every one of the 200 records is there");
    commands.sort();
    commands.dedup();
    assert_eq!(commands.len(), 200, "each record exactly once");
    let validate = dwp()
        .args(["validate", plan.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        validate.status.success(),
        "{}",
        String::from_utf8_lossy(&validate.stdout)
    );
    assert!(!plan.join("state.json.lock").exists());
}

/// The bytes an update produces, computed on a copy of the plan so the real one can be killed,
/// and how long the uninterrupted run took (to spread the kills over a whole run).
fn expected_after(plan: &Path, scratch: &Path, args: &[String]) -> (Vec<u8>, Duration) {
    let copy = scratch.join(plan.file_name().unwrap());
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(plan).unwrap().flatten() {
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
    }
    let started = std::time::Instant::now();
    let status = dwp()
        .arg("update")
        .arg(&copy)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let took = started.elapsed();
    assert!(status.success());
    (std::fs::read(copy.join("state.json")).unwrap(), took)
}

#[test]
fn sigkilled_updates_leave_old_or_new_bytes_and_recoverable_locks() {
    let root = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let plan = plan_with_task_in_progress(root.path(), 50);
    let state = plan.join("state.json");
    let (mut kept_old, mut got_new, mut locks_recovered) = (0, 0, 0);
    for round in 0..300 {
        let old = std::fs::read(&state).unwrap();
        let args: Vec<String> = [
            "--task",
            "1",
            "--status",
            "in_progress",
            "--gate",
            &format!("crash-round-{round}|0|{round} passed, 0 failed"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (new, took) = expected_after(&plan, scratch.path(), &args);
        let mut child = dwp()
            .arg("update")
            .arg(&plan)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let window = took.as_micros() as u64 * 11 / 10;
        std::thread::sleep(Duration::from_micros(fastrand::u64(0..window.max(1))));
        let _ = child.kill();
        child.wait().unwrap();

        let now = std::fs::read(&state).unwrap();
        if now == old {
            kept_old += 1;
        } else if now == new {
            got_new += 1;
        } else {
            panic!("round {round}: state.json is neither the old nor the new bytes");
        }
        if plan.join("state.json.lock").exists() {
            let status = dwp()
                .args(["lock", "status", plan.to_str().unwrap(), "--json"])
                .output()
                .unwrap();
            let report =
                common::payload(&common::document(&String::from_utf8_lossy(&status.stdout)))
                    .clone();
            // The lock appears with its owner record (RENAME_NOREPLACE), so it is always judged.
            assert_eq!(report["held"], true);
            assert_eq!(
                report["holder"]["liveness"], "dead",
                "round {round}: a killed writer's lock is judged dead: {report}"
            );
            let recover = dwp()
                .args(["lock", "recover", plan.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(
                recover.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&recover.stderr)
            );
            assert!(!plan.join("state.json.lock").exists());
            locks_recovered += 1;
        }
    }
    eprintln!(
        "300 SIGKILLs: {kept_old} kept the old bytes, {got_new} had the new bytes, \
         {locks_recovered} locks recovered"
    );
    assert!(
        kept_old > 0 && got_new > 0,
        "kills must land on both sides of the rename"
    );
    let validate = dwp()
        .args(["validate", plan.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(validate.status.success());
    // One more successful update sweeps what the last killed writer may have left.
    let last = update_task_1(&plan)
        .args(["--gate", "after-the-storm|0|1 passed"])
        .output()
        .unwrap();
    assert!(last.status.success());
    let strays: Vec<_> = std::fs::read_dir(&plan)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".lock.") || n.contains(".dwp-tmp.") || n.ends_with(".lock"))
        .collect();
    assert!(
        strays.is_empty(),
        "left behind after the next successful write: {strays:?}"
    );
}
