//! Observed evidence is dwp's word, not the agent's: only `dwp run` (and `update --gates-from`)
//! writes the `(observed by dwp: ...)` mark, `update --gate` refuses it, and verify holds every
//! marked record to the log `dwp run` kept: what a hand-written record gets wrong about it, a log
//! deleted or replaced by a symlink, a log no record points at (a killed run), and a log the OS
//! refuses to read.

use crate::common;
use crate::common::{NOW, Plan, Run, dwp, refused, verify_codes};
use dwp::synth::SynthPlan;
use serde_json::Value;

/// A plan of 3 tasks, task 1 completed (an asserted gate), task 2 in progress.
fn plan_at_work(name: &str) -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(name, 3).completed(1));
    let started = plan.dwp(&["update", "--task", "2", "--status", "in_progress"]);
    assert_eq!(started.code, 0, "{started:?}");
    plan
}

/// `dwp --json run PLAN -- sh gate.sh` for task 2, the script printing a passing tally; the
/// log's name relative to the plan.
fn observed_run(plan: &Plan) -> String {
    std::fs::write(plan.root().join("gate.sh"), "echo '3 passed, 0 failed'\n").unwrap();
    let run = dwp()
        .in_dir(plan.root())
        .args(["--json", "run"])
        .arg(&plan.dir)
        .args(["--task", "2", "--", "sh", "gate.sh"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    run.payload()["log"].as_str().unwrap().to_owned()
}

/// `dwp --json verify PLAN`: the run and its report.
fn verify(plan: &Plan) -> (Run, Value) {
    let run = dwp().args(["--json", "verify"]).arg(&plan.dir).run();
    let report = run.payload();
    (run, report)
}

/// The findings of `code` in a verify report.
fn findings<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// A log in dwp's format written by hand at `name` in the plan, and the evidence string that
/// claims dwp observed it.
fn hand_written_log(plan: &Plan, name: &str) -> String {
    let output = "3 passed, 0 failed\n";
    let log = format!(
        "dwp gate log 1\ntask: 2\ncommand: sh gate.sh\nfinished: {NOW}\nended: exit 0\noutput: {} bytes, all kept\n----\n{output}",
        output.len()
    );
    std::fs::create_dir_all(plan.path(name).parent().unwrap()).unwrap();
    std::fs::write(plan.path(name), &log).unwrap();
    format!(
        "3 passed, 0 failed (observed by dwp: exit 0; log={name} sha256={})",
        common::sha256_hex(log.as_bytes())
    )
}

#[test]
fn update_gate_refuses_the_observed_mark_and_names_dwp_run() {
    let plan = plan_at_work("PLAN_observed_update_refuses_mark");
    let evidence = hand_written_log(&plan, "analysis_results/gates/task-2-sh-gate-sh-x.log");
    let p = plan.dir.to_str().unwrap().to_owned();
    for flag in ["--gate", "--gate-json"] {
        let value = if flag == "--gate" {
            format!("sh gate.sh|0|{evidence}")
        } else {
            serde_json::json!({"command": "sh gate.sh", "passes": true, "exit_code": 0, "evidence": evidence})
                .to_string()
        };
        refused(
            &plan.dir,
            "update",
            1,
            &["observed by dwp", "dwp run"],
            || {
                dwp()
                    .args(["update", &p, "--task", "2", "--status", "in_progress"])
                    .args([flag, &value])
                    .run()
            },
        );
    }
    // The same words without the mark are an asserted gate, as before.
    let asserted = plan.dwp(&[
        "update",
        "--task",
        "2",
        "--status",
        "in_progress",
        "--gate",
        "sh gate.sh|0|3 passed, 0 failed",
    ]);
    assert_eq!(asserted.code, 0, "{asserted:?}");
}

#[test]
fn verify_tells_a_hand_written_observed_record_from_the_one_dwp_run_wrote() {
    let plan = plan_at_work("PLAN_observed_forged_record");
    let log = observed_run(&plan);
    assert!(verify_codes(&verify(&plan).1).is_empty());
    let real = plan.state()["tasks"][1]["gates"][0].clone();
    plan.edit_state(|state| {
        // Another run claimed on the real log: dwp run records the time its log says.
        let mut later = real.clone();
        later["last_run"] = "2026-06-09T16:42:11Z".into();
        state["tasks"][1]["gates"]
            .as_array_mut()
            .unwrap()
            .push(later);
        // Task 1's record claims task 2's log.
        state["tasks"][0]["gates"]
            .as_array_mut()
            .unwrap()
            .push(real.clone());
    });
    // A log in dwp's format written by hand where dwp never writes one.
    let evidence = hand_written_log(&plan, "analysis_results/mine.log");
    plan.edit_state(|state| {
        let mut forged = real.clone();
        forged["command"] = "sh gate.sh".into();
        forged["evidence"] = evidence.into();
        state["tasks"][1]["gates"]
            .as_array_mut()
            .unwrap()
            .push(forged);
    });
    // A log in dwp's place whose header miscounts the output it keeps.
    let miscounted = format!(
        "analysis_results/gates/task-2-sh-gate-sh-{}-2.log",
        NOW.replace([':', '-'], "")
    );
    let evidence = hand_written_log(&plan, &miscounted);
    let text = plan
        .read(&miscounted)
        .replace("output: 19 bytes", "output: 18 bytes");
    plan.write(&miscounted, &text);
    let evidence = evidence.replace(
        evidence.rsplit("sha256=").next().unwrap(),
        &format!("{})", common::sha256_hex(text.as_bytes())),
    );
    plan.edit_state(|state| {
        let mut forged = real.clone();
        forged["command"] = "sh gate.sh".into();
        forged["evidence"] = evidence.into();
        state["tasks"][1]["gates"]
            .as_array_mut()
            .unwrap()
            .push(forged);
    });
    let (run, report) = verify(&plan);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let messages: Vec<&str> = findings(&report, "DWP068")
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    let says = |words: &str| messages.iter().any(|m| m.contains(words));
    assert!(says(&format!("finished {NOW}")), "{messages:#?}");
    assert!(
        says(&format!("its log `{log}` is task 2's")),
        "{messages:#?}"
    );
    assert!(
        says("is not where dwp keeps its logs (analysis_results/gates/"),
        "{messages:#?}"
    );
    assert!(
        says("its header says 18 bytes of output, and it keeps 19"),
        "{messages:#?}"
    );
    assert_eq!(messages.len(), 4, "one finding per forgery: {messages:#?}");
}

#[test]
fn an_observed_log_deleted_or_replaced_by_a_symlink_is_not_conformant() {
    let plan = plan_at_work("PLAN_observed_log_gone");
    let log = observed_run(&plan);
    let path = plan.path(&log);
    let original = std::fs::read(&path).unwrap();
    assert!(verify_codes(&verify(&plan).1).is_empty());

    std::fs::remove_file(&path).unwrap();
    let (run, report) = verify(&plan);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let gone = findings(&report, "DWP037");
    assert_eq!(gone.len(), 1, "{report:#}");
    assert!(gone[0]["message"].as_str().unwrap().contains("is missing"));
    assert!(gone[0]["hint"].as_str().unwrap().contains("dwp run"));

    // The same bytes elsewhere, the log a symlink to them: not the file dwp wrote.
    std::fs::write(plan.path("analysis_results/copy.log"), &original).unwrap();
    std::os::unix::fs::symlink("../copy.log", &path).unwrap();
    let (run, report) = verify(&plan);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let replaced = findings(&report, "DWP037");
    assert_eq!(replaced.len(), 1, "{report:#}");
    assert!(
        replaced[0]["message"]
            .as_str()
            .unwrap()
            .contains("is a symlink"),
        "{report:#}"
    );

    // The log where it was, its folder swapped for a link to a copy of it.
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, &original).unwrap();
    let gates = plan.path("analysis_results/gates");
    let copy = plan.path("analysis_results/gates-copy");
    std::fs::rename(&gates, &copy).unwrap();
    std::os::unix::fs::symlink("gates-copy", &gates).unwrap();
    let (run, report) = verify(&plan);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let moved = findings(&report, "DWP037");
    assert_eq!(moved.len(), 1, "{report:#}");
    assert!(
        moved[0]["message"]
            .as_str()
            .unwrap()
            .contains("is reached through the symlink `analysis_results/gates`"),
        "{report:#}"
    );
}

#[test]
fn a_log_no_record_points_at_is_an_advisory_naming_it_and_its_removal() {
    let plan = plan_at_work("PLAN_observed_orphan_log");
    let log = observed_run(&plan);
    // What a dwp run killed between writing its log and recording it leaves.
    let orphan = log.replace(".log", "-2.log");
    std::fs::copy(plan.path(&log), plan.path(&orphan)).unwrap();
    let (run, report) = verify(&plan);
    assert_eq!(run.code, 0, "an advisory: {}", run.stdout);
    let found = findings(&report, "DWP038");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["severity"], "advisory");
    assert!(
        found[0]["file"].as_str().unwrap().ends_with(&orphan),
        "{report:#}"
    );
    let hint = found[0]["hint"].as_str().unwrap();
    assert!(hint.contains("rm "), "{hint}");
    // The step the hint names clears it.
    std::fs::remove_file(plan.path(&orphan)).unwrap();
    assert!(verify_codes(&verify(&plan).1).is_empty());
}

#[test]
fn an_observed_log_the_os_refuses_to_read_is_unverified() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let plan = plan_at_work("PLAN_observed_log_refused");
    let log = observed_run(&plan);
    std::fs::set_permissions(plan.path(&log), std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut command = dwp().args(["--json", "verify"]).arg(&plan.dir).command();
    if rustix::process::geteuid().is_root() {
        // Permissions do not stop root: verify runs as nobody, who may read the rest.
        std::fs::set_permissions(plan.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
        command.uid(65534).gid(65534);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(5), "{stdout}");
    let report = common::payload(&common::document(&stdout)).clone();
    assert_eq!(report["plans"][0]["verdict"], "UNVERIFIED");
    let found = findings(&report, "DWP001");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(found[0]["severity"], "unverified");
    assert!(findings(&report, "DWP068").is_empty(), "{report:#}");
}
