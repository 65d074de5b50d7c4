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
    let report = run.payload();
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

/// The progress lines older plans keep in their `Plan Status / Notes` section, each with the
/// count as `DONE/TOTAL` placeholders (docs/plan-markdown.md, "Plan Status line").
const NOTES_SHAPES: [&str; 4] = [
    "- Current status: In progress (Task 2)\n- Completed: DONE/TOTAL\n",
    "- **Tasks completed:** DONE / TOTAL\n",
    "- Created: 2026-03-02\n- Status: In progress — DONE/TOTAL tasks completed\n",
    "### Current Status\n\n- **Phase:** Execution\n- **Completion:** DONE/TOTAL tasks (25%)\n\n\
     ### Important Notes\n\n- the old endpoint stays until the switch\n",
];

/// A markdown-only plan of four tasks, one checked, without a `Plan Status:` line, whose README
/// ends with a `## 7. Plan Status / Notes` section holding `notes`; legacy unless `standard`. It
/// lies in a git work tree, where the missing state layer is an advisory (DWP093).
fn plan_with_notes(name: &str, notes: &str, standard: Option<&str>) -> Plan {
    let plan = Plan::from_synth(SynthPlan::new(name, 4).completed(1));
    std::fs::remove_file(plan.path("manifest.json")).unwrap();
    std::fs::remove_file(plan.path("state.json")).unwrap();
    std::fs::create_dir(plan.root().join(".git")).unwrap();
    plan.edit("README.md", |text| {
        let kept: String = text
            .lines()
            .filter(|line| !line.starts_with("Plan Status:"))
            .map(|line| match line.starts_with("**Standard:**") {
                true => standard.map_or(String::new(), |s| format!("**Standard:** DWP spec {s}\n")),
                false => format!("{line}\n"),
            })
            .collect();
        format!("{kept}\n## 7. Plan Status / Notes\n\n{notes}")
    });
    plan
}

fn codes_of(found: &[(String, String, Option<u64>)], code: &str) -> Vec<(String, Option<u64>)> {
    found
        .iter()
        .filter(|(c, ..)| c == code)
        .map(|(_, severity, line)| (severity.clone(), *line))
        .collect()
}

#[test]
fn a_legacy_plan_reads_its_count_from_the_plan_status_notes_section() {
    for (n, shape) in NOTES_SHAPES.iter().enumerate() {
        let right = shape.replace("DONE", "1").replace("TOTAL", "4");
        let plan = plan_with_notes(&format!("PLAN_notes_shape_{n}"), &right, None);
        let (code, found) = findings(&plan);
        assert_eq!(code, 0, "shape {n}: {found:?}");
        assert!(
            codes_of(&found, "DWP046").is_empty(),
            "shape {n}: {found:?}"
        );
        assert!(
            codes_of(&found, "DWP078").is_empty(),
            "shape {n}: {found:?}"
        );

        // A wrong count stays an error, at its line.
        let wrong = shape.replace("DONE", "3").replace("TOTAL", "4");
        plan.edit("README.md", |text| text.replace(&right, &wrong));
        let line = plan
            .read("README.md")
            .lines()
            .position(|l| l.contains("3/4") || l.contains("3 / 4"))
            .map(|at| at as u64 + 1);
        let (code, found) = findings(&plan);
        assert_eq!(code, 1, "shape {n}: {found:?}");
        assert_eq!(
            codes_of(&found, "DWP046"),
            [("error".to_owned(), line)],
            "shape {n}: {found:?}"
        );
    }
}

#[test]
fn a_legacy_plan_with_no_progress_count_gets_an_advisory() {
    let plan = plan_with_notes(
        "PLAN_notes_no_count",
        "- Current status: In progress\n",
        None,
    );
    let (code, found) = findings(&plan);
    assert_eq!(code, 0, "{found:?}");
    assert!(codes_of(&found, "DWP046").is_empty(), "{found:?}");
    assert_eq!(codes_of(&found, "DWP078").len(), 1, "{found:?}");
    assert_eq!(codes_of(&found, "DWP078")[0].0, "advisory");

    // A current plan still needs its `Plan Status:` line: the notes section does not stand in.
    let right = NOTES_SHAPES[0].replace("DONE", "1").replace("TOTAL", "4");
    let current = plan_with_notes("PLAN_notes_current", &right, Some("5.0.0"));
    let (code, found) = findings(&current);
    assert_eq!(code, 1, "{found:?}");
    assert_eq!(codes_of(&found, "DWP046").len(), 1, "{found:?}");
    assert!(codes_of(&found, "DWP078").is_empty(), "{found:?}");
}
