//! An agent drives a v7 record plan from its markdown and a contract draft to every task
//! completed, using only dwp (issue #33): `init --contract` (manifest, contract, approval), then
//! for each task `next` names, `update --status in_progress`, one `run` per criterion of its
//! gate intent, and `update --status completed`; at each step `verify` finds the plan
//! CONFORMANT with `state.json` agreeing with its journal.

use crate::common::{Run, dwp, repo_root};
use serde_json::Value;
use std::path::Path;

const FIXTURE: &str = "conformance-fixtures/record-valid-v7-fresh/PLAN_021_docs_site_migration";

fn dwp_in(folder: &Path, args: &[&str]) -> Run {
    dwp().in_dir(folder).args(args).run_utf8()
}

fn ok(run: Run, what: &str) -> Run {
    assert_eq!(run.code, 0, "{what}:\n{}{}", run.stdout, run.stderr);
    run
}

fn assert_conformant(folder: &Path, plan: &str) {
    let run = ok(dwp_in(folder, &["verify", plan]), "verify");
    assert!(run.stdout.contains(": CONFORMANT"), "{}", run.stdout);
    assert!(
        run.stdout.contains("state.json agrees with the journal"),
        "{}",
        run.stdout
    );
}

#[test]
fn an_agent_drives_a_v7_plan_from_its_draft_to_every_task_completed_with_dwp_alone() {
    let root = tempfile::tempdir().unwrap();
    let folder = root.path();
    let plan = "PLAN_021_docs_site_migration";
    std::fs::create_dir(folder.join(plan)).unwrap();
    for entry in std::fs::read_dir(repo_root().join(FIXTURE)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            std::fs::copy(&path, folder.join(plan).join(path.file_name().unwrap())).unwrap();
        }
    }
    let contract = std::fs::read(repo_root().join(FIXTURE).join("contract.json")).unwrap();
    let mut draft: Value = serde_json::from_slice(&contract).unwrap();
    draft.as_object_mut().unwrap().remove("contract_id");
    // No invariant: evaluating one is an observation, which dwp does not write.
    draft["invariants"] = Value::Array(Vec::new());
    std::fs::write(folder.join("draft.json"), draft.to_string()).unwrap();
    std::fs::write(folder.join("note.md"), "Approved as written.\n").unwrap();

    let init = [
        "init",
        plan,
        "--contract",
        "draft.json",
        "--by",
        "maria.lopez",
    ];
    ok(
        dwp_in(folder, &[&init[..], &["--note", "note.md"]].concat()),
        "init",
    );
    assert_conformant(folder, plan);

    let mut completed = Vec::new();
    for _ in 0..10 {
        let next = ok(dwp_in(folder, &["next", plan, "--json"]), "next").payload();
        let Some(task) = next["ready"].as_array().unwrap().first().cloned() else {
            break;
        };
        let id = task["id"].as_str().unwrap().to_owned();
        let start = ["update", plan, "--task", &id, "--status", "in_progress"];
        ok(dwp_in(folder, &start), "start");
        for criterion in task["open_criteria"].as_array().unwrap() {
            let criterion = criterion.as_str().unwrap();
            let check = format!("print('{criterion} holds')");
            let gate = ["run", plan, "--task", &id, "--criterion", criterion, "--"];
            ok(
                dwp_in(folder, &[&gate[..], &["python3", "-c", &check]].concat()),
                "run",
            );
        }
        let complete = ["update", plan, "--task", &id, "--status", "completed"];
        ok(dwp_in(folder, &complete), "complete");
        assert_conformant(folder, plan);
        completed.push(id);
    }
    assert_eq!(
        completed,
        [
            "T-inventory",
            "T-convert-guides",
            "T-convert-reference",
            "T-redirect-map"
        ]
    );
    let status = ok(dwp_in(folder, &["status", plan, "--json"]), "status").payload();
    assert_eq!(
        (status["completed"].as_u64(), status["total"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(status["status"], "completed");
}
