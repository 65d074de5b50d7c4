//! Record plans (DWP v6/v7) through the real binary: detected by their artifacts and routed to
//! their own rules, judged without a byte written, shown as their journal derives them
//! (docs/record-plans.md). Each rule's own case is a fixture under
//! `conformance-fixtures/record-*`, checked by `tests/conformance/fixtures.rs`.

use crate::common::{Run, copy_plan, dwp, writing_nothing};
use dwp::plan::model::Generation;
use dwp::synth::SynthPlan;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

fn fixture(case: &str) -> PathBuf {
    let folder = crate::common::repo_root()
        .join("conformance-fixtures")
        .join(case);
    fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap_or_else(|| panic!("{case} holds no plan folder"))
}

/// A copy of fixture `case`'s plan folder in `root`.
fn copy_fixture(case: &str, root: &Path) -> PathBuf {
    let source = fixture(case);
    let copy = root.join(source.file_name().unwrap());
    copy_plan(&source, &copy);
    copy
}

fn record_cases() -> Vec<String> {
    let mut cases: Vec<String> =
        fs::read_dir(crate::common::repo_root().join("conformance-fixtures"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("record-"))
            .collect();
    cases.sort();
    cases
}

fn json_of(plan: &Path, command: &str) -> Run {
    dwp().args([command]).arg(plan).arg("--json").run_utf8()
}

#[test]
fn rule_25_verify_status_and_next_never_write_to_a_record_plan() {
    let root = tempfile::tempdir().unwrap();
    for case in record_cases() {
        if case.contains("symlink") {
            continue; // a copy would follow the link; the fixture itself is judged in place
        }
        let plan = copy_fixture(&case, root.path());
        for command in ["verify", "validate", "status", "next"] {
            writing_nothing(&plan, &format!("dwp {command} on {case}"), || {
                json_of(&plan, command)
            });
        }
    }
}

#[test]
fn a_count_of_journal_events_takes_the_number_it_counts() {
    for (case, count) in [
        ("record-valid-v7-fresh", "1 journal event"),
        ("record-valid-v7-in-progress", "journal events"),
    ] {
        let plan = fixture(case);
        for command in ["verify", "status"] {
            let run = dwp().args([command, plan.to_str().unwrap()]).run_utf8();
            let line = run
                .stdout
                .lines()
                .find(|line| line.trim_start().starts_with("record plan v7:"))
                .unwrap_or_else(|| panic!("{case} {command}:\n{}", run.stdout));
            assert!(line.contains(count), "{case} {command}: {line}");
            assert!(
                !line.contains(" 1 journal events"),
                "{case} {command}: {line}"
            );
        }
    }
}

#[test]
fn a_torn_tail_is_reported_and_the_journal_is_left_as_it_is() {
    let root = tempfile::tempdir().unwrap();
    let plan = copy_fixture("record-dwp105-torn-tail", root.path());
    let run = writing_nothing(&plan, "verify of a torn journal", || {
        json_of(&plan, "verify")
    });
    assert_eq!(run.code, 1, "{}", run.stdout);
    let findings = run.payload()["plans"][0]["findings"].clone();
    let torn = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "DWP105")
        .expect("DWP105 reported");
    assert!(
        torn["message"]
            .as_str()
            .unwrap()
            .contains("torn tail at byte")
    );
    assert!(torn["file"].as_str().unwrap().ends_with("journal.ndjson"));
}

/// A repository holding a plan of every generation: v1, v2 and v5 plans (markdown and JSON),
/// and v6 and v7 record plans.
fn repository_of_every_generation() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let plans = root.path().join(".dwp").join("plans");
    fs::create_dir_all(&plans).unwrap();
    fs::create_dir(root.path().join(".git")).unwrap();
    for (name, generation) in [
        ("PLAN_first_generation", Generation::V1),
        ("PLAN_second_generation", Generation::V2),
        ("PLAN_fifth_generation", Generation::V5),
    ] {
        SynthPlan::new(name, 3)
            .generation(generation)
            .write(&plans)
            .expect("synthetic plan");
    }
    copy_fixture("record-valid-v6-completed", &plans);
    copy_fixture("record-valid-v7-completed", &plans);
    let root_path = root.path().to_path_buf();
    (root, root_path)
}

#[test]
fn rules_16_and_17_verify_all_judges_each_plan_by_its_own_generation() {
    let (_keep, root) = repository_of_every_generation();
    let run = dwp()
        .args(["verify", "--all"])
        .arg(&root)
        .arg("--json")
        .run_utf8();
    let plans = run.payload()["plans"].as_array().unwrap().clone();
    assert_eq!(plans.len(), 5, "{}", run.stdout);
    let generation_of = |plan: &Value| plan["record"]["generation"].as_str().map(str::to_owned);
    for plan in &plans {
        let name = plan["plan"].as_str().unwrap();
        let contract = Path::new(name).join("contract.json");
        let expected = contract.exists().then(|| {
            let text = fs::read_to_string(&contract).unwrap();
            if text.contains("plan-contract/v7") {
                "v7"
            } else {
                "v6"
            }
            .to_owned()
        });
        assert_eq!(
            generation_of(plan),
            expected,
            "{name} read as the wrong kind of plan"
        );
        if expected.is_some() {
            assert_eq!(
                plan["verdict"], "CONFORMANT",
                "{name}: {:#}",
                plan["findings"]
            );
        }
    }
    let record_plans = plans.iter().filter(|p| generation_of(p).is_some()).count();
    assert_eq!(
        record_plans, 2,
        "the v6 and the v7 plan are record plans, the others are not"
    );
}

#[test]
fn status_shows_the_state_the_journal_derives_never_the_snapshot_file() {
    let root = tempfile::tempdir().unwrap();
    let plan = copy_fixture("record-valid-v7-completed", root.path());
    // state.json says the first task never started; the journal says otherwise.
    let state_path = plan.join("state.json");
    let mut state: Value = serde_json::from_str(&fs::read_to_string(&state_path).unwrap()).unwrap();
    state["tasks"][0]["status"] = "pending".into();
    fs::write(&state_path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    let status = json_of(&plan, "status").payload();
    assert_eq!(status["source"], "journal");
    assert_eq!(status["tasks"][0]["status"], "completed");
    assert_eq!(status["snapshot"], "stale");
    assert_eq!(status["completed"], status["total"]);
    let verify = json_of(&plan, "verify");
    assert_eq!(
        verify.code, 0,
        "a stale snapshot is advisory: {}",
        verify.stdout
    );
    assert!(verify.stdout.contains("DWP113"));
}

/// The v7 DAG fixture cut back to the moment its first task completed and the second started.
fn dag_in_progress(root: &Path) -> PathBuf {
    let plan = copy_fixture("record-valid-v7-dag-parallel", root);
    let journal = plan.join("journal.ndjson");
    let text = fs::read_to_string(&journal).unwrap();
    let mut kept = String::new();
    let mut starts = 0;
    for line in text.lines() {
        let event: Value = serde_json::from_str(line).unwrap();
        if event["type"] == "task_start" {
            starts += 1;
            if starts == 3 {
                break;
            }
        }
        kept.push_str(line);
        kept.push('\n');
    }
    fs::write(&journal, kept).unwrap();
    plan
}

#[test]
fn next_gives_the_ready_set_in_contract_order_with_parallel_safe_tasks_marked() {
    let root = tempfile::tempdir().unwrap();
    let plan = dag_in_progress(root.path());
    let next = json_of(&plan, "next").payload();
    assert_eq!(next["action"], "work");
    let ready: Vec<(String, String, bool)> = next["ready"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_owned(),
                t["status"].as_str().unwrap().to_owned(),
                t["parallel_safe"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ready,
        [
            (
                "T-convert-guides".to_owned(),
                "in_progress".to_owned(),
                true
            ),
            ("T-convert-reference".to_owned(), "pending".to_owned(), true),
        ]
    );
    assert_eq!(next["waiting"][0]["id"], "T-redirect-map");
    let human = dwp().arg("next").arg(&plan).run_utf8();
    assert!(human.stdout.contains("2 parallel-safe"), "{}", human.stdout);
}

#[test]
fn verify_states_what_the_records_show_as_the_public_verifier_does() {
    let root = tempfile::tempdir().unwrap();
    let plan = copy_fixture("record-valid-v7-completed", root.path());
    let run = dwp().arg("verify").arg(&plan).run_utf8();
    assert_eq!(run.code, 0, "{}", run.stdout);
    for line in [
        "CONFORMANT",
        "record plan v7",
        "an approval cites the live contract id",
        "state.json agrees with the journal",
        "tasks completed (derived from gate evidence)",
    ] {
        assert!(
            run.stdout.contains(line),
            "missing {line:?} in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn a_v5_plan_is_never_read_as_a_record_plan_nor_the_reverse() {
    let (_keep, root) = repository_of_every_generation();
    let v5 = root.join(".dwp/plans/PLAN_fifth_generation");
    let report = json_of(&v5, "verify").payload();
    assert!(report["plans"][0].get("record").is_none());
    let status = json_of(&v5, "status").payload();
    assert_ne!(status["source"], "journal");
    let v7 = fixture("record-valid-v7-completed");
    let status = json_of(&v7, "status").payload();
    assert_eq!(status["source"], "journal");
    assert_eq!(status["generation"], "v7");
}

#[test]
fn validate_judges_one_record_document_on_its_own() {
    let codes = |file: PathBuf| {
        let run = dwp().arg("validate").arg(&file).arg("--json").run_utf8();
        let mut codes: Vec<String> = run.payload()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap().to_owned())
            .collect();
        codes.sort();
        (run.code, codes)
    };
    let valid = fixture("record-valid-v7-amended");
    for file in [
        "contracts/contract.r2.json",
        "manifest.json",
        "state.json",
        "journal.ndjson",
    ] {
        assert_eq!(codes(valid.join(file)), (0, vec![]), "{file}");
    }
    // A contract draft is checked before it is materialized: its rules and its stamp.
    let cycle = fixture("record-dwp102-prerequisite-cycle").join("contract.json");
    assert_eq!(codes(cycle), (1, vec!["DWP102".to_owned()]));
    let edited = fixture("record-dwp101-contract-edited-in-place").join("contract.json");
    assert_eq!(codes(edited), (1, vec!["DWP101".to_owned()]));
    let torn = fixture("record-dwp105-torn-tail").join("journal.ndjson");
    assert_eq!(codes(torn), (1, vec!["DWP105".to_owned()]));
}

#[test]
fn status_all_lists_record_plans_beside_the_others_with_their_generation() {
    let (_keep, root) = repository_of_every_generation();
    let run = dwp()
        .args(["status", "--all"])
        .arg(&root)
        .arg("--json")
        .run_utf8();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plans = run.payload()["plans"].as_array().unwrap().clone();
    assert_eq!(plans.len(), 5);
    let mut generations: Vec<String> = plans
        .iter()
        .filter_map(|p| p["generation"].as_str().map(str::to_owned))
        .collect();
    generations.sort();
    assert_eq!(generations, ["v6", "v7"]);
    let human = dwp().args(["status", "--all"]).arg(&root).run_utf8();
    assert_eq!(
        human.stdout.matches("record plan v").count(),
        2,
        "{}",
        human.stdout
    );
}
