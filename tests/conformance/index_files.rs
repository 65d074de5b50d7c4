//! `dwp verify` and `dwp init` judge a markdown-only plan's index by one rule
//! (`plan::records::misnumbered_file`): a Full task's file carries its task's number, so an
//! index line linking another task's file (an index that skips an id) is refused by init and
//! reported by verify (DWP054), never CONFORMANT to one and refused by the other.

use crate::common::{NOW, Plan, dwp, writing_nothing};
use dwp::synth::SynthPlan;

/// A three-task markdown-only plan whose task 2 was deleted without renumbering: the index
/// reads `Task 1`, then `Task 2: Final Review` linking `3.task_final_review.md`; files 1 and 3.
fn plan_skipping_task_2() -> Plan {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_index_skips_two", 3));
    std::fs::remove_file(plan.path("manifest.json")).unwrap();
    std::fs::remove_file(plan.path("state.json")).unwrap();
    std::fs::remove_file(plan.path("2.task_synthetic_2.md")).unwrap();
    plan.edit("README.md", |text| {
        let text: String = text
            .lines()
            .filter(|line| !line.contains("Task 2:"))
            .map(|line| format!("{line}\n"))
            .collect();
        text.replace("- [ ] Task 3:", "- [ ] Task 2:")
            .replace("Plan Status: 0/3", "Plan Status: 0/2")
    });
    plan
}

#[test]
fn an_index_line_linking_another_tasks_file_is_refused_by_init_and_reported_by_verify() {
    let plan = plan_skipping_task_2();
    let init = writing_nothing(&plan.dir, "a refused init", || {
        dwp().at(NOW).arg("init").arg(&plan.dir).run_utf8()
    });
    assert_eq!(init.code, 1, "{}{}", init.stdout, init.stderr);
    init.assert_stderr_says(&["task 2's line links `3.task_final_review.md`", "task 3"]);

    let run = dwp()
        .at(NOW)
        .args(["--json", "verify"])
        .arg(&plan.dir)
        .run_utf8();
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report = run.payload();
    let findings = report["plans"][0]["findings"].as_array().unwrap();
    let misnumbered: Vec<_> = findings
        .iter()
        .filter(|f| f["code"] == "DWP054" && f["task"] == 2)
        .collect();
    assert_eq!(misnumbered.len(), 1, "{findings:#?}");
    let message = misnumbered[0]["message"].as_str().unwrap();
    assert!(
        init.stderr.contains(message),
        "verify says what init says:\n{message}\n{}",
        init.stderr
    );
    assert_eq!(misnumbered[0]["severity"], "error");
}
