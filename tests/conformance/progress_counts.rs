//! The progress count a README records, as dwp reads it (docs/plan-markdown.md, "Plan Status
//! line"): the first `Plan Status:` line, and a further one that says otherwise is reported
//! (DWP077); a legacy plan without one is read from its `Plan Status / Notes` section, in the
//! forms older plans write there, and a legacy plan with no count at all gets an advisory
//! (DWP078).

use crate::common::{NOW, Plan, dwp};
use dwp::synth::SynthPlan;

/// `(code, severity, line)` of every finding of `dwp verify PLAN --json`, and its exit code.
fn findings(plan: &Plan) -> (i32, Vec<(String, String, Option<u64>)>) {
    let run = dwp()
        .at(NOW)
        .args(["--json", "verify"])
        .arg(&plan.dir)
        .run_utf8();
    let report = run.json();
    let found = report["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["severity"].as_str().unwrap().to_owned(),
                f["line"].as_u64(),
            )
        })
        .collect();
    (run.code, found)
}

#[test]
fn two_plan_status_lines_that_disagree_are_reported() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_two_status_lines", 4).completed(1));
    plan.edit("README.md", |text| {
        format!("{text}\n## Notes\n\nPlan Status: 4/4\n")
    });
    let second = plan.read("README.md").lines().count() as u64;
    let (code, found) = findings(&plan);
    assert_eq!(code, 1, "{found:?}");
    assert_eq!(
        found,
        [("DWP077".to_owned(), "error".to_owned(), Some(second))]
    );

    // Two lines that agree say one thing.
    plan.edit("README.md", |text| {
        text.replace("Plan Status: 4/4", "Plan Status: 1 / 4")
    });
    assert_eq!(findings(&plan), (0, Vec::new()));
}
