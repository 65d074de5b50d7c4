//! An agent drives a v7 record plan from its markdown and a contract draft to every task
//! completed, using only dwp (issue #33): `init --contract` (manifest, contract, approval), then
//! the lines `dwp next` prints, run as printed (each task's start, then a gate run per open
//! criterion with the contract's declared check), then the invariant's check and the task's
//! completion confirmed, until no task is left; after each task `verify` finds the plan
//! CONFORMANT with `state.json` agreeing with its journal.

use crate::common::{Run, dwp, repo_root, run_printed};
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
    // The invariant's check, a python3 script too: after each task's gates the agent evaluates
    // it (`dwp run --invariant`) and confirms the completion (rule 21).
    std::fs::create_dir_all(folder.join("scripts")).unwrap();
    std::fs::write(
        folder.join("scripts/check_wiki_untouched.py"),
        "print('the wiki export is untouched')\n",
    )
    .unwrap();
    // Every check a python3 script of the repository (where the gates run), which passes.
    for task in draft["tasks"].as_array_mut().unwrap() {
        for intent in task["gate_intent"].as_array_mut().unwrap() {
            let criterion = intent["criterion"].as_str().unwrap().to_owned();
            let script = format!(
                "scripts/check_{}.py",
                criterion.to_lowercase().replace('-', "_")
            );
            std::fs::create_dir_all(folder.join("scripts")).unwrap();
            std::fs::write(
                folder.join(&script),
                format!("print('{criterion} holds')\n"),
            )
            .unwrap();
            intent["check"] = format!("python3 {script}").into();
        }
    }
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

    // The agent runs what `dwp next` prints, as printed, until nothing is left.
    let mut ran = Vec::new();
    for _ in 0..20 {
        let next = ok(dwp_in(folder, &["next", plan, "--json"]), "next").payload();
        let Some(task) = next["ready"].as_array().unwrap().first().cloned() else {
            break;
        };
        for step in task["steps"].as_array().unwrap() {
            let step = step.as_str().unwrap();
            ok(run_printed(step, folder), step);
            ran.push(step.split(" -- ").next().unwrap().to_owned());
        }
        let steps = task["steps"].as_array().unwrap();
        if !steps
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("dwp run"))
        {
            assert_conformant(folder, plan);
            continue;
        }
        // Its gates ran: evaluate the invariant, then confirm the completion.
        let id = task["id"].as_str().unwrap();
        let check = ["python3", "scripts/check_wiki_untouched.py"];
        let evaluate = [
            &["run", plan, "--invariant", "INV-wiki-read-only", "--"],
            &check[..],
        ];
        ok(dwp_in(folder, &evaluate.concat()), "the invariant's check");
        let complete = ["update", plan, "--task", id, "--status", "completed"];
        ok(dwp_in(folder, &complete), "the completion");
        assert_conformant(folder, plan);
    }
    let completed: Vec<&str> = ran
        .iter()
        .filter(|step| step.starts_with("dwp run"))
        .map(|step| {
            step.split(" --task ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
        })
        .collect();
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
