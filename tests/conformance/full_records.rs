//! Which record of a task dwp judges: a Full task's record is its task file
//! (docs/plan-markdown.md, "Lite records"), even when README.md still holds an inline
//! `## Task N … {#task-N}` section of it, the leftover of a Lite-to-Full promotion. The section
//! is never judged in the file's place, and it is reported (DWP076, an advisory). A task whose
//! index line links no file is a Full task when the plan says it is Full (its Plan Format).

use crate::common::{NOW, Plan, dwp, publishable, writing_nothing};
use dwp::plan::model::PlanFormat;
use dwp::synth::SynthPlan;

/// Task `id`'s Full task file rewritten as the Lite section a promotion left in the README:
/// its heading at level 2 with the anchor, every heading below it one level down.
fn as_inline_section(task_file: &str, id: u64) -> String {
    let (heading, rest) = task_file.split_once('\n').expect("a heading line");
    let heading = heading.trim_start_matches("# ");
    let body: String = rest
        .lines()
        .map(|line| match line.starts_with('#') {
            true => format!("#{line}\n"),
            false => format!("{line}\n"),
        })
        .collect();
    format!("\n## {heading} {{#task-{id}}}\n{body}")
}

/// Append task `id`'s record, taken from its task file as it is now, to README.md as an inline
/// section.
fn leave_inline_section(plan: &std::path::Path, file: &str, id: u64) {
    let record = std::fs::read_to_string(plan.join(file)).unwrap();
    let mut readme = std::fs::read_to_string(plan.join("README.md")).unwrap();
    readme.push_str(&as_inline_section(&record, id));
    std::fs::write(plan.join("README.md"), readme).unwrap();
}

fn verify_findings(plan: &std::path::Path) -> (i32, Vec<(String, String, String)>) {
    let run = dwp()
        .at(NOW)
        .args(["--json", "verify"])
        .arg(plan)
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
                f["file"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (run.code, found)
}

#[test]
fn a_full_task_is_judged_on_its_task_file_not_on_an_inline_section_of_the_readme() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_full_leftover", 3).completed(1));
    leave_inline_section(&plan.dir, "2.task_synthetic_2.md", 2);
    let (code, found) = verify_findings(&plan.dir);
    assert_eq!(
        code, 0,
        "a complete task file, the section aside: {found:?}"
    );
    let codes: Vec<_> = found
        .iter()
        .map(|(c, s, _)| (c.as_str(), s.as_str()))
        .collect();
    assert_eq!(codes, [("DWP076", "advisory")]);

    // The task file emptied: the file is the record, so its missing sections are reported.
    plan.write("2.task_synthetic_2.md", "");
    let (code, found) = verify_findings(&plan.dir);
    assert_eq!(code, 1, "{found:?}");
    assert!(
        found
            .iter()
            .any(|(c, _, file)| c == "DWP057" && file.ends_with("2.task_synthetic_2.md")),
        "{found:?}"
    );
    assert!(found.iter().any(|(c, ..)| c == "DWP076"), "{found:?}");
}

#[test]
fn completing_the_last_full_task_is_refused_when_its_task_file_still_reads_pending() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(
        root.path(),
        "PLAN_full_publish_leftover",
        4,
        PlanFormat::Full,
    );
    // The README's leftover section says completed; the task file, the record, says pending.
    leave_inline_section(&plan, "4.task_final_review.md", 4);
    let file = plan.join("4.task_final_review.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("Status: completed", "Status: pending")).unwrap();

    let run = writing_nothing(&plan, "a refused publication", || {
        dwp()
            .at(NOW)
            .arg("update")
            .arg(&plan)
            .args(["--task", "4", "--status", "completed"])
            .run_utf8()
    });
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    run.assert_stderr_says(&["DWP065", "4.task_final_review.md"]);
    assert!(!plan.join("analysis_results/FINALIZATION.json").exists());
}

#[test]
fn a_full_task_whose_index_line_links_no_file_is_judged_on_its_numbered_file() {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_full_unlinked_leftover", 3).completed(1));
    leave_inline_section(&plan.dir, "2.task_synthetic_2.md", 2);
    // `- [ ] Task 2: Title` alone: the plan's Plan Format says full, so the file is the record.
    plan.edit("README.md", |text| {
        text.lines()
            .map(|line| match line.starts_with("- [ ] Task 2:") {
                true => format!("{}\n", line.split(" — ").next().unwrap()),
                false => format!("{line}\n"),
            })
            .collect()
    });
    let readme = plan.read("README.md");
    assert!(!readme.contains("](2.task_synthetic_2.md)"), "{readme}");
    plan.write("2.task_synthetic_2.md", "");
    let (code, found) = verify_findings(&plan.dir);
    assert_eq!(code, 1, "{found:?}");
    assert!(
        found
            .iter()
            .any(|(c, _, file)| c == "DWP057" && file.ends_with("2.task_synthetic_2.md")),
        "{found:?}"
    );
    assert!(found.iter().any(|(c, ..)| c == "DWP076"), "{found:?}");
}
