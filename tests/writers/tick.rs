//! `dwp update --status completed --tick` through the real binary: the markdown wins, so the
//! completion puts it first. The box and `Plan Status` change with the state in one locked write;
//! without `--tick` a completion whose box is unchecked succeeds but says so (stderr and JSON),
//! and each way out it names works when run.

use crate::common;
use crate::common::{NOW, Plan, dwp, snapshot};
use dwp::synth::SynthPlan;

const PLAN_NAME: &str = "PLAN_tick_the_box";

/// Five tasks, two completed, task 3 started with a passing gate on record.
fn plan_with_task_3_started() -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(PLAN_NAME, 5).completed(2));
    let run = update(&plan, &["--task", "3", "--status", "in_progress"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    plan
}

/// The task log of task 3 says it is completed (the agent's part of a completion).
fn fill_log_of_task_3(plan: &Plan) {
    let log = std::fs::read_dir(&plan.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|name| name.starts_with("3.") && name.ends_with(".md"))
        .expect("task 3's file");
    plan.edit(&log, |text| {
        text.replace("Status: pending", "Status: completed")
    });
}

fn update(plan: &Plan, args: &[&str]) -> common::Run {
    dwp().at(NOW).arg("update").arg(&plan.dir).args(args).run()
}

fn update_json(plan: &Plan, args: &[&str]) -> common::Run {
    dwp()
        .at(NOW)
        .args(["--json", "update"])
        .arg(&plan.dir)
        .args(args)
        .run()
}

const COMPLETE_3: [&str; 6] = [
    "--task",
    "3",
    "--status",
    "completed",
    "--gate",
    "cargo test|0|13 passed",
];

#[test]
fn tick_checks_the_box_and_recounts_plan_status_with_the_state_and_the_plan_stays_conformant() {
    let plan = plan_with_task_3_started();
    assert_eq!(
        plan.verify_codes(&[]),
        Vec::<String>::new(),
        "conformant before"
    );
    let run = update(&plan, &[&COMPLETE_3[..], &["--tick"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("task 3's box ticked"), "{}", run.stdout);
    assert!(run.stderr.is_empty(), "no warning: {}", run.stderr);
    let readme = plan.read("README.md");
    assert!(readme.contains("- [x] Task 3:"), "{readme}");
    assert!(readme.contains("Plan Status: 3/5"), "{readme}");
    assert_eq!(plan.state()["tasks"][2]["status"], "completed");
    assert!(
        !plan.path(".dwp-intent.json").exists(),
        "the intent record is gone"
    );
    fill_log_of_task_3(&plan);
    assert_eq!(
        plan.verify_codes(&[]),
        Vec::<String>::new(),
        "conformant after"
    );
}

#[test]
fn tick_says_box_ticked_in_the_json_document() {
    let plan = plan_with_task_3_started();
    let run = update_json(&plan, &[&COMPLETE_3[..], &["--tick"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.payload()["markdown"], "box ticked");
}

#[test]
fn completing_with_the_box_unchecked_succeeds_but_says_so_and_both_ways_out_work() {
    let plan = plan_with_task_3_started();
    let run = update_json(&plan, &COMPLETE_3);
    assert_eq!(
        run.code, 0,
        "agents that write state first keep working: {}",
        run.stderr
    );
    assert_eq!(run.payload()["markdown"], "box unchecked");
    assert!(
        run.stderr.contains("README box is unchecked"),
        "{}",
        run.stderr
    );
    assert!(
        plan.verify_codes(&[]).contains(&"DWP040".to_owned()),
        "state ahead until ticked"
    );

    // Way out one, as the warning prints it: tick the box.
    let tick = format!(
        "dwp update {} --task 3 --status completed --tick",
        plan.dir.display()
    );
    assert!(run.stderr.contains(&tick), "{}", run.stderr);
    let ticked = update(&plan, &["--task", "3", "--status", "completed", "--tick"]);
    assert_eq!(ticked.code, 0, "{}", ticked.stderr);
    fill_log_of_task_3(&plan);
    assert_eq!(plan.verify_codes(&[]), Vec::<String>::new());
    assert_eq!(plan.state()["tasks"][2]["status"], "completed");
}

#[test]
fn the_other_way_out_reconcile_write_reopens_the_task_in_state() {
    let plan = plan_with_task_3_started();
    let run = update(&plan, &COMPLETE_3);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let reconcile = format!("dwp reconcile {} --write", plan.dir.display());
    assert!(run.stderr.contains(&reconcile), "{}", run.stderr);
    let reconciled = dwp()
        .at(NOW)
        .arg("reconcile")
        .arg(&plan.dir)
        .arg("--write")
        .run();
    assert_eq!(reconciled.code, 0, "{}", reconciled.stderr);
    assert_ne!(plan.state()["tasks"][2]["status"], "completed");
    assert!(!plan.verify_codes(&[]).contains(&"DWP040".to_owned()));
}

/// Three tasks, ready to publish but for task 3's box and the Plan Status count.
fn last_task_done_but_unticked() -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(PLAN_NAME, 3).ready_to_publish());
    plan.edit("README.md", |text| {
        text.replace("- [x] Task 3:", "- [ ] Task 3:")
            .replace("Plan Status: 3/3", "Plan Status: 2/3")
    });
    plan
}

/// Complete task 3 with `--tick`, which publishes the plan.
fn tick_and_publish(plan: &Plan) {
    let run = update(plan, &[&COMPLETE_3[..], &["--tick"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("plan published · receipt "),
        "{}",
        run.stdout
    );
}

#[test]
fn tick_on_the_last_task_publishes_the_plan() {
    let plan = last_task_done_but_unticked();
    tick_and_publish(&plan);
    let readme = plan.read("README.md");
    assert!(readme.contains("- [x] Task 3:") && readme.contains("Plan Status: 3/3"));
    assert_eq!(plan.state()["status"], "completed");
    assert!(plan.path("analysis_results/FINALIZATION.json").exists());
}

#[test]
fn a_refused_publication_puts_the_tick_back_and_changes_no_byte() {
    let plan = last_task_done_but_unticked();
    // Publication needs a security review without an open critical finding.
    plan.edit("analysis_results/SECURITY_REVIEW.md", |text| {
        format!("{text}\n- Severity: critical — open: secrets in logs\n")
    });
    let before = snapshot(&plan.dir);
    let run = update(&plan, &[&COMPLETE_3[..], &["--tick"]].concat());
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("publication was refused"),
        "{}",
        run.stderr
    );
    // Publication read the ticked box (no box disagreement among its problems), then refused on
    // the security review: the tick was written, and put back.
    assert!(run.stderr.contains("DWP083"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("DWP040") && !run.stderr.contains("DWP041"),
        "{}",
        run.stderr
    );
    assert_eq!(snapshot(&plan.dir), before, "every byte as it was");
}

#[test]
fn tick_refuses_a_box_it_cannot_read_and_changes_no_byte() {
    let plan = plan_with_task_3_started();
    plan.edit("README.md", |text| {
        text.replace("- [ ] Task 3:", "- [~] Task 3:")
    });
    let before = snapshot(&plan.dir);
    let run = update(&plan, &[&COMPLETE_3[..], &["--tick"]].concat());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("`[~]`"), "{}", run.stderr);
    assert!(
        run.stderr.contains("README.md"),
        "names the file: {}",
        run.stderr
    );
    assert_eq!(snapshot(&plan.dir), before);
}

#[test]
fn tick_goes_with_status_completed_only() {
    let plan = plan_with_task_3_started();
    let before = snapshot(&plan.dir);
    let run = update(&plan, &["--task", "3", "--status", "in_progress", "--tick"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--tick goes with --status completed"),
        "{}",
        run.stderr
    );
    let run = update(&plan, &[&COMPLETE_3[..], &["--tick", "--dry-run"]].concat());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(snapshot(&plan.dir), before);
}

#[test]
fn quiet_keeps_the_unchecked_box_warning_on_stderr() {
    let plan = plan_with_task_3_started();
    let run = update(&plan, &[&COMPLETE_3[..], &["--quiet"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains("README box is unchecked"),
        "{}",
        run.stderr
    );
}

/// A README of 64 KiB or more is read for the box note beside the write: the note is the same.
#[test]
fn a_large_readme_gives_the_same_box_note() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_tick_a_large_plan", 1_000).completed(500));
    let readme = std::fs::metadata(plan.dir.join("README.md")).unwrap().len();
    assert!(
        readme >= 64 * 1024,
        "large enough to be read aside: {readme} bytes"
    );
    let start = update(&plan, &["--task", "501", "--status", "in_progress"]);
    assert_eq!(start.code, 0, "{}", start.stderr);
    let complete = [
        "--task",
        "501",
        "--status",
        "completed",
        "--gate",
        "cargo test|0|5 passed",
    ];
    let run = update_json(&plan, &complete);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.payload()["markdown"], "box unchecked");
    assert!(
        run.stderr.contains("README box is unchecked"),
        "{}",
        run.stderr
    );

    // A box ticked by hand before the completion: nothing to say, from the same parse aside.
    let readme = plan.dir.join("README.md");
    common::edit(&readme, "- [ ] Task 501:", "- [x] Task 501:");
    common::edit(&readme, "- [ ] Task 502:", "- [x] Task 502:");
    let start = update(&plan, &["--task", "502", "--status", "in_progress"]);
    assert_eq!(start.code, 0, "{}", start.stderr);
    let complete_502 = complete.map(|arg| if arg == "501" { "502" } else { arg });
    let run = update_json(&plan, &complete_502);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.payload().get("markdown").is_none(), "{}", run.stdout);
    assert!(!run.stderr.contains("README box"), "{}", run.stderr);
}

/// A completion that changes nothing on a published plan does not publish again, so its outcome
/// still says the box is unchecked (the README is parsed for the note even though a completion
/// of the last task usually publishes instead).
#[test]
fn a_repeated_completion_of_the_published_last_task_still_notes_its_box() {
    let plan = last_task_done_but_unticked();
    tick_and_publish(&plan);
    plan.edit("README.md", |text| {
        text.replace("- [x] Task 3:", "- [ ] Task 3:")
    });
    let before = plan.read("state.json");
    let again = update_json(&plan, &COMPLETE_3);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let outcome = &again.payload();
    assert_eq!(outcome["changed"], false, "{outcome}");
    assert_eq!(outcome["markdown"], "box unchecked", "{outcome}");
    assert_eq!(plan.read("state.json"), before);
}

#[test]
fn tick_recounts_every_plan_status_line_that_agreed_so_none_disagrees() {
    let plan = plan_with_task_3_started();
    // A second line, as plans write one in a status table at the end; it agrees (2/5).
    plan.edit("README.md", |text| {
        format!("{text}\n## Status\n\n**Plan Status:** 2 / 5 tasks\n")
    });
    let run = update(&plan, &[&COMPLETE_3[..], &["--tick"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let readme = plan.read("README.md");
    assert!(readme.contains("Plan Status: 3/5"), "{readme}");
    assert!(readme.contains("**Plan Status:** 3 / 5 tasks"), "{readme}");
    fill_log_of_task_3(&plan);
    assert_eq!(plan.verify_codes(&[]), Vec::<String>::new());
}

/// `--tick` writes what the completion knows into the task's Completion & Log, in the same
/// change: `Status: completed`, an empty `Timestamp:` and `Gate record:` filled (it once left
/// `Status: pending`, so verify said DWP065 right after); a Full task's file, a Lite task's
/// README section. The agent's own lines (skills disposition) are left as they are.
#[test]
fn tick_fills_the_task_logs_status_timestamp_and_gate_record_so_the_plan_stays_conformant() {
    for format in [
        dwp::plan::model::PlanFormat::Full,
        dwp::plan::model::PlanFormat::Lite,
    ] {
        let plan = Plan::from_synth(SynthPlan::new(PLAN_NAME, 5).completed(2).format(format));
        let run = update(&plan, &["--task", "3", "--status", "in_progress"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let log_file = match format {
            dwp::plan::model::PlanFormat::Lite => "README.md".to_owned(),
            _ => std::fs::read_dir(&plan.dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .find(|name| name.starts_with("3.") && name.ends_with(".md"))
                .unwrap(),
        };
        // Task 3's log as `dwp new` writes one: every line there, the values empty.
        plan.edit(&log_file, |text| {
            let at = text.find("# Task 3").unwrap();
            let (head, tail) = text.split_at(at);
            let blank = "Status: pending\nTimestamp:\nGate record:\nSkills disposition: none";
            format!("{head}{}", tail.replacen("Status: pending", blank, 1))
        });
        let run = update(&plan, &[&COMPLETE_3[..], &["--tick"]].concat());
        assert_eq!(run.code, 0, "{format:?}: {}", run.stderr);
        assert!(
            run.stdout
                .contains("task 3's Completion & Log: Status, Timestamp and Gate record"),
            "{format:?}: {}",
            run.stdout
        );
        let text = plan.read(&log_file);
        let log = &text[text.find("# Task 3").unwrap()..];
        let log = &log[..log.find("# Task 4").unwrap_or(log.len())];
        assert!(log.contains("Status: completed"), "{format:?}: {log}");
        assert!(
            log.contains(&format!("Timestamp: {NOW}")),
            "{format:?}: {log}"
        );
        assert!(
            log.contains("Gate record: cargo test → 13 passed\n"),
            "{format:?}: {log}"
        );
        assert!(
            log.contains("Skills disposition: none\n"),
            "{format:?}: {log}"
        );
        assert_eq!(
            plan.verify_codes(&[]),
            Vec::<String>::new(),
            "{format:?}: conformant right after the completion"
        );
    }
}
