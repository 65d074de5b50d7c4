//! `dwp verify` through the real binary: one test per rule of this first step (issue #5 is in
//! progress), each on a synthetic plan broken in exactly one way, plus the verdicts, the exit
//! codes, `--all` and the promise that verify writes nothing.

use crate::common;
use crate::common::{copy_plan, edit_state, field_strs, snapshot, verify_codes as codes, written};
use dwp::synth::SynthPlan;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn plan(root: &Path, name: &str) -> PathBuf {
    SynthPlan::new(name, 4).completed(2).write(root).unwrap()
}

/// `dwp verify ARGS --json` at the test clock, with the caller's HOME.
fn verify(args: &[&str]) -> (i32, Value) {
    let run = common::dwp()
        .inherit_home()
        .arg("verify")
        .args(args)
        .arg("--json")
        .run();
    (run.code, run.payload())
}

fn edit(path: &Path, change: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, change(text)).unwrap();
}

/// Exit code and sorted codes for a plan broken by `breaking`.
fn verdict_of(breaking: impl FnOnce(&Path)) -> (i32, Vec<String>, Value) {
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), "PLAN_verify_rule");
    breaking(&plan);
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    let found = codes(&report);
    (code, found, report)
}

/// The verdict on a plan whose task at `task_index` has `evidence` in its first gate record:
/// how each rule on what evidence may say is checked.
fn verdict_with_evidence(task_index: usize, evidence: &str) -> (i32, Vec<String>, Value) {
    verdict_of(|p| {
        edit_state(p, |s| {
            s["tasks"][task_index]["gates"][0]["evidence"] = evidence.into()
        })
    })
}

#[test]
fn a_clean_plan_is_conformant_and_verify_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), "PLAN_verify_clean");
    let before = snapshot(&plan);
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["verdict"], "CONFORMANT");
    assert!(codes(&report).is_empty());
    assert_eq!(before, snapshot(&plan), "verify changed a file");
}

#[test]
fn structure_findings_of_validate_make_a_plan_not_conformant() {
    let (code, found, _) = verdict_of(|p| edit_state(p, |s| s["completed_count"] = 3.into()));
    assert_eq!(code, 1);
    // completed_count breaks an invariant and disagrees with the boxes.
    assert_eq!(found, ["DWP022", "DWP047"]);
}

#[test]
fn a_missing_plan_file_is_reported() {
    let (code, found, _) = verdict_of(|p| std::fs::remove_file(p.join("PROMPTS.md")).unwrap());
    assert_eq!((code, found), (1, vec!["DWP050".to_owned()]));
}

#[test]
fn a_missing_goal_is_reported_with_its_rule() {
    let (code, found, _) =
        verdict_of(|p| edit(&p.join("README.md"), |t| t.replace("## Goal", "## Aim")));
    assert_eq!((code, found), (1, vec!["DWP053".to_owned()]));
}

#[test]
fn a_newer_standard_is_unverified_never_conformant() {
    let (code, found, report) = verdict_of(|p| {
        edit(&p.join("README.md"), |t| {
            t.replace("DWP spec 5.0.0", "DWP spec 6.1.0")
        })
    });
    assert_eq!((code, found), (5, vec!["DWP052".to_owned()]));
    assert_eq!(report["verdict"], "UNVERIFIED");
}

#[test]
fn desync_is_a_finding_with_its_direction() {
    let (code, found, report) = verdict_of(|p| {
        edit(&p.join("README.md"), |t| {
            t.replace("- [ ] Task 3:", "- [x] Task 3:")
        })
    });
    assert_eq!(code, 1);
    assert!(found.contains(&"DWP041".to_owned()), "{found:?}");
    let finding = report["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "DWP041")
        .unwrap()
        .clone();
    assert_eq!(finding["task"], 3);
    assert!(finding["line"].is_u64());
}

#[test]
fn a_completed_task_with_a_failing_latest_gate_is_reported() {
    let (code, found, _) = verdict_of(|p| {
        edit_state(p, |s| {
            let gates = s["tasks"][0]["gates"].as_array_mut().unwrap();
            let mut retry = gates[0].clone();
            retry["passes"] = false.into();
            retry["exit_code"] = 1.into();
            retry["evidence"] = "2 failed".into();
            gates.push(retry);
        })
    });
    assert_eq!((code, found), (1, vec!["DWP060".to_owned()]));
}

#[test]
fn evidence_invalidated_by_refine_never_backs_a_completion() {
    let (code, found, _) = verdict_with_evidence(1, "invalidated by refine 2026-06-10: 12 passed");
    assert_eq!((code, found), (1, vec!["DWP061".to_owned()]));
}

#[test]
fn a_passing_record_that_admits_it_never_ran_is_a_contradiction() {
    let (_, found, _) = verdict_with_evidence(0, "load scenario never entered");
    assert_eq!(found, ["DWP062"]);
    // An honest tally is not.
    let (code, found, _) = verdict_with_evidence(0, "12 passed, 0 not run");
    assert_eq!((code, found), (0, Vec::<String>::new()));
}

#[test]
fn zero_selection_evidence_proves_nothing() {
    let (_, found, _) = verdict_with_evidence(0, "collected 0 items");
    assert_eq!(found, ["DWP063"]);
}

/// `executed=0/0`, `executed=0`, `ran = 0`, `no test ran`: counts of a run that selected
/// nothing, as the public reference reads them; `ran=12, failed=0` is an honest run.
#[test]
fn zero_selection_counts_are_read_as_the_reference_reads_them() {
    for evidence in ["executed=0/0", "executed=0", "ran = 0", "no test ran"] {
        let (code, found, _) = verdict_with_evidence(0, evidence);
        assert_eq!((code, found), (1, vec!["DWP063".to_owned()]), "{evidence}");
    }
    let (code, found, _) = verdict_with_evidence(0, "ran=12, failed=0");
    assert_eq!((code, found), (0, Vec::<String>::new()));
}

#[test]
fn a_log_pointer_must_stay_inside_the_plan_and_exist() {
    let (_, found, _) = verdict_with_evidence(0, "12 passed log=../outside.log");
    assert_eq!(found, ["DWP064"]);
}

#[test]
fn a_completed_task_whose_log_still_reads_pending_is_reported() {
    let (_, found, report) = verdict_of(|p| {
        edit(&p.join("1.task_synthetic_1.md"), |t| {
            t.replace("Status: completed", "**Status:** pending")
        })
    });
    assert_eq!(found, ["DWP065"], "{report:#}");
}

#[test]
fn a_completed_task_without_gates_is_reported() {
    let (_, found, _) =
        verdict_of(|p| edit_state(p, |s| s["tasks"][1]["gates"] = Value::Array(vec![])));
    assert_eq!(found, ["DWP066"]);
}

#[test]
fn an_interrupted_publication_is_not_conformant() {
    let (code, found, _) =
        verdict_of(|p| std::fs::write(p.join(".finalizing.json"), "{}").unwrap());
    assert_eq!((code, found), (1, vec!["DWP080".to_owned()]));
}

#[test]
fn advisories_fail_only_under_strict() {
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), "PLAN_verify_advisory");
    edit_state(&plan, |s| s["approval"] = "pending".into());
    // The README's Approval row says so too: a row saying approved would be approval drift.
    edit(&plan.join("README.md"), |t| {
        t.replace("| Approval | approved |", "| Approval | pending |")
    });
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!((code, codes(&report)), (0, vec!["DWP091".to_owned()]));
    let (code, _) = verify(&[plan.to_str().unwrap(), "--strict"]);
    assert_eq!(code, 1);
}

#[test]
fn a_lock_held_by_a_dead_writer_is_an_advisory() {
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), "PLAN_verify_dead_lock");
    let lock = plan.join("state.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let owner = serde_json::json!({"pid": 999_999_999u32, "host": dwp::store::lock_dir::host_name(),
        "command": "dwp update", "started_at": "2026-06-09T16:00:00Z"});
    std::fs::write(lock.join("owner.json"), owner.to_string()).unwrap();
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!((code, codes(&report)), (0, vec!["DWP090".to_owned()]));
}

#[test]
fn all_verifies_every_plan_under_root_and_gives_the_worst_verdict() {
    let root = tempfile::tempdir().unwrap();
    let plans = root.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    plan(&plans, "PLAN_alpha_clean");
    let broken = plan(&plans, "PLAN_beta_broken");
    std::fs::remove_file(broken.join("PROGRESS.md")).unwrap();
    let (code, report) = verify(&["--all", root.path().to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(report["verdict"], "NOT_CONFORMANT");
    let verdicts = field_strs(&report["plans"], "verdict");
    assert_eq!(verdicts, ["CONFORMANT", "NOT_CONFORMANT"]);
}

#[test]
fn timestamps_out_of_order_are_reported() {
    let (_, found, _) = verdict_of(|p| {
        edit_state(p, |s| {
            s["tasks"][0]["completed_at"] = "2026-06-09T14:01:00Z".into()
        })
    });
    assert_eq!(found, ["DWP067"], "completed before started");
    let (_, found, _) = verdict_of(|p| {
        edit_state(p, |s| {
            s["tasks"][1]["gates"][0]["last_run"] = "2026-06-09T15:30:00Z".into()
        })
    });
    assert_eq!(found, ["DWP067"], "after updated_at");
    let (_, found, _) = verdict_of(|p| {
        edit_state(p, |s| {
            s["updated_at"] = "2026-06-09T18:00:00Z".into();
        })
    });
    assert_eq!(found, ["DWP067"], "in the future of DWP_TEST_NOW");
}

#[test]
fn a_completed_plan_needs_a_security_review_without_an_open_critical_finding() {
    let (_root, plan) = written(SynthPlan::new("PLAN_verify_security", 3).completed(3));
    let review = plan.join("analysis_results/SECURITY_REVIEW.md");
    write_reference_receipt(&plan);
    let (_, report) = verify(&[plan.to_str().unwrap()]);
    assert!(!codes(&report).contains(&"DWP083".to_owned()), "{report:#}");
    std::fs::write(&review, "# Security review\n\n| id | severity | status |\n|---|---|---|\n| S1 | critical | open |\n").unwrap();
    let (_, report) = verify(&[plan.to_str().unwrap()]);
    let finding = report["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "DWP083")
        .unwrap_or_else(|| panic!("{report:#}"))
        .clone();
    assert_eq!(finding["line"], 5);
    std::fs::remove_file(&review).unwrap();
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(codes(&report).contains(&"DWP083".to_owned()));
}

/// A receipt in the public reference's three-key form, computed here independently of dwp:
/// sha256 of state.json, and sha256 over the sorted artifact names, each fed as the name, a NUL
/// byte, then the file's bytes or `<absent>` (docs/DECISIONS.md, "Publication").
fn write_reference_receipt(plan: &Path) {
    use sha2::{Digest, Sha256};
    let hex = |bytes: &[u8]| {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let state: Value =
        serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap();
    let mut names: Vec<String> = [
        "README.md",
        "PROGRESS.md",
        "PROMPTS.md",
        "manifest.json",
        "analysis_results/SECURITY_REVIEW.md",
        "analysis_results/SKILLS_CANDIDATES.md",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for task in state["tasks"].as_array().unwrap() {
        if let Some(file) = task["locator"]["value"]
            .as_str()
            .filter(|v| !v.starts_with('#'))
        {
            names.push(file.to_owned());
        }
    }
    names.sort();
    let mut hasher = Sha256::new();
    for name in &names {
        hasher.update(name.as_bytes());
        hasher.update([0u8]);
        match std::fs::read(plan.join(name)) {
            Ok(bytes) => hasher.update(&bytes),
            Err(_) => hasher.update(b"<absent>"),
        }
    }
    let artifacts: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let receipt = serde_json::json!({
        "state_sha256": hex(&std::fs::read(plan.join("state.json")).unwrap()),
        "artifacts_sha256": artifacts,
        "result": "verified",
    });
    std::fs::write(
        plan.join("analysis_results/FINALIZATION.json"),
        receipt.to_string(),
    )
    .unwrap();
}

#[test]
fn a_completed_plan_is_checked_against_its_receipt() {
    let (_root, plan) = written(SynthPlan::new("PLAN_verify_receipt", 3).completed(3));
    let path = plan.to_str().unwrap();
    // No receipt: the public reference never checks this.
    let (code, report) = verify(&[path]);
    assert_eq!((code, codes(&report)), (1, vec!["DWP081".to_owned()]));
    // A receipt of the reference's form, computed independently, is accepted.
    write_reference_receipt(&plan);
    let (code, report) = verify(&[path]);
    assert_eq!(
        (code, codes(&report)),
        (0, Vec::<String>::new()),
        "{report:#}"
    );
    // One changed byte in a covered artifact is caught.
    edit(&plan.join("PROGRESS.md"), |t| t + " ");
    let (code, report) = verify(&[path]);
    assert_eq!((code, codes(&report)), (1, vec!["DWP082".to_owned()]));
    // A receipt that is not one.
    std::fs::write(
        plan.join("analysis_results/FINALIZATION.json"),
        r#"{"result": "trust me"}"#,
    )
    .unwrap();
    let (code, report) = verify(&[path]);
    assert_eq!(code, 1);
    assert!(codes(&report).iter().all(|c| c == "DWP084"), "{report:#}");
}

#[test]
fn full_task_files_must_match_the_state_inventory_and_the_links() {
    let (_, found, _) =
        verdict_of(|p| std::fs::remove_file(p.join("3.task_synthetic_3.md")).unwrap());
    assert_eq!(found, ["DWP054"], "a located task file is missing");
    let (_, found, _) =
        verdict_of(|p| std::fs::write(p.join("9.task_stray.md"), "# Task 9: stray\n").unwrap());
    assert_eq!(found, ["DWP054"], "a task file the state does not list");
    let (_, found, _) = verdict_of(|p| {
        edit(&p.join("README.md"), |t| {
            t.replace(
                "[2.task_synthetic_2.md](2.task_synthetic_2.md)",
                "[2.task_other.md](2.task_other.md)",
            )
        })
    });
    assert!(found.contains(&"DWP054".to_owned()), "{found:?}");
}

#[test]
fn a_task_file_symlinked_out_of_the_plan_is_reported() {
    let (_, found, _) = verdict_of(|p| {
        let outside = p.parent().unwrap().join("elsewhere.md");
        std::fs::rename(p.join("3.task_synthetic_3.md"), &outside).unwrap();
        std::os::unix::fs::symlink(&outside, p.join("3.task_synthetic_3.md")).unwrap();
    });
    assert_eq!(found, ["DWP055"]);
}

#[test]
fn lite_anchors_must_match_their_sections() {
    let (_root, plan) = written(
        SynthPlan::new("PLAN_verify_lite", 3)
            .format(dwp::plan::model::PlanFormat::Lite)
            .completed(1),
    );
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(
        (code, codes(&report)),
        (0, Vec::<String>::new()),
        "{report:#}"
    );
    edit(&plan.join("README.md"), |t| {
        t.replace("{#task-2}", "{#task-two}")
    });
    let (_, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(codes(&report), ["DWP056"]);
}

/// A complete amendment block for task 3's log, numbered `n` and dated `date`.
fn amendment(n: u32, date: &str, disposition: &str, authority: &str) -> String {
    format!(
        "\n### Amendment {n} — {date}\n\nOriginal criterion: synthetic behaviour 3 is covered by a test\n\
         Observed: the test harness cannot reach the device\nDisposition: {disposition}\n\
         Revised criterion: covered by a simulated device\nReason: no device in CI\n\
         Authority: {authority}\nAffected tasks: 3\nEvidence invalidated: none\nEvidence preserved: cargo test\n"
    )
}

fn with_amendments(blocks: &[String]) -> (i32, Vec<String>, Value) {
    verdict_of(|p| {
        let file = p.join("3.task_synthetic_3.md");
        edit(&file, |t| t + &blocks.concat());
    })
}

#[test]
fn a_complete_amendment_is_accepted() {
    let (code, found, report) =
        with_amendments(&[amendment(1, "2026-06-09", "revised criterion", "user")]);
    assert_eq!((code, found), (0, Vec::<String>::new()), "{report:#}");
}

#[test]
fn an_amendment_lacking_a_field_is_reported() {
    let block = amendment(1, "2026-06-09", "revised criterion", "user")
        .replace("Reason: no device in CI\n", "");
    let (_, found, _) = with_amendments(&[block]);
    assert_eq!(found, ["DWP070"]);
}

#[test]
fn an_amendment_authority_is_user_developer_or_evidence() {
    let (_, found, _) =
        with_amendments(&[amendment(1, "2026-06-09", "revised criterion", "the agent")]);
    assert_eq!(found, ["DWP071"]);
}

#[test]
fn amendments_are_numbered_in_order_and_never_backdated() {
    let (_, found, _) = with_amendments(&[
        amendment(1, "2026-06-09", "revised criterion", "user"),
        amendment(3, "2026-06-10", "revised criterion", "user"),
    ]);
    assert_eq!(found, ["DWP072"], "numbering");
    let (_, found, _) = with_amendments(&[
        amendment(1, "2026-06-09", "revised criterion", "user"),
        amendment(2, "2026-06-08", "revised criterion", "user"),
    ]);
    assert_eq!(found, ["DWP072"], "backdated");
}

#[test]
fn a_deferred_requirement_names_an_existing_destination() {
    let (code, found, _) = with_amendments(&[amendment(
        1,
        "2026-06-09",
        "deferred requirement to task 4",
        "user",
    )]);
    assert_eq!((code, found), (0, Vec::<String>::new()));
    let (_, found, _) = with_amendments(&[amendment(
        1,
        "2026-06-09",
        "deferred requirement to task 9",
        "user",
    )]);
    assert_eq!(found, ["DWP073"]);
}

#[test]
fn a_skipped_task_needs_the_users_amendment() {
    let skip = |authority: &'static str| {
        verdict_of(move |p| {
            edit_state(p, |s| {
                s["tasks"][2]["status"] = "skipped".into();
                s["status"] = "in_progress".into();
            });
            let file = p.join("3.task_synthetic_3.md");
            edit(&file, |t| {
                t + &amendment(1, "2026-06-09", "removed from scope", authority)
            });
        })
    };
    let (_, found, report) = skip("developer");
    assert_eq!(found, ["DWP074"], "{report:#}");
    let (code, found, report) = skip("user");
    assert_eq!((code, found), (0, Vec::<String>::new()), "{report:#}");
}

#[test]
fn a_task_record_needs_its_sections_and_a_status_line() {
    let (_, found, _) = verdict_of(|p| {
        edit(&p.join("2.task_synthetic_2.md"), |t| {
            t.replace("### Acceptance Criteria", "### Notes")
        })
    });
    assert_eq!(found, ["DWP057"], "a missing section");
    let (_, found, _) = verdict_of(|p| {
        edit(&p.join("2.task_synthetic_2.md"), |t| {
            t.replace("Make synthetic behaviour 2 work.", "")
        })
    });
    assert_eq!(found, ["DWP057"], "an empty section");
    let (_, found, _) = verdict_of(|p| {
        edit(&p.join("2.task_synthetic_2.md"), |t| {
            t.replace("Status: completed", "Progress: done")
        })
    });
    assert_eq!(
        found,
        ["DWP057"],
        "a completed task's log without a Status line"
    );
    // A task still pending needs no log yet (the reference asks a log only of a started task).
    let (code, found, _) = verdict_of(|p| {
        edit(&p.join("3.task_synthetic_3.md"), |t| {
            t.replace("Status: pending", "Progress: none")
        })
    });
    assert_eq!(
        (code, found),
        (0, Vec::<String>::new()),
        "a pending task's log"
    );
}

/// state.json without its `approval` field: the README's Approval row decides.
fn remove_approval_field(plan: &Path) {
    edit_state(plan, |s| {
        s.as_object_mut().unwrap().remove("approval");
    });
}

/// The README without its `| Approval | approved |` row.
fn remove_approval_row(plan: &Path) {
    edit(&plan.join("README.md"), |t| {
        t.replace("| Approval | approved |\n", "")
    });
}

#[test]
fn an_absent_approval_is_the_readme_row_never_approved_by_default() {
    // The README's Approval row says approved: no advisory.
    let (code, found, _) = verdict_of(remove_approval_field);
    assert_eq!((code, found), (0, Vec::<String>::new()));
    // No row either: pending, never approved.
    let (_, found, _) = verdict_of(|p| {
        remove_approval_field(p);
        remove_approval_row(p);
    });
    assert_eq!(found, ["DWP091"]);
}

#[test]
fn all_needs_a_repository_root_and_says_when_there_are_none() {
    let root = tempfile::tempdir().unwrap();
    let output = common::dwp()
        .without_clock()
        .inherit_home()
        .args(["verify", "--all", root.path().to_str().unwrap()])
        .output();
    assert_eq!(
        output.status.code(),
        Some(2),
        "a folder holding neither .git nor .dwp/plans is a usage error"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is no repository root"), "{stderr}");

    std::fs::create_dir_all(root.path().join(".dwp/plans")).unwrap();
    let output = common::dwp()
        .without_clock()
        .inherit_home()
        .args(["verify", "--all", root.path().to_str().unwrap()])
        .output();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "no plans to verify\n0 plans: 0 conformant, 0 not conformant, 0 unverified\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Plans as they exist (issue #12)
// ---------------------------------------------------------------------------------------------

/// A clean synthetic plan (4 tasks, 2 completed) with its state layer removed.
fn markdown_only(root: &Path, name: &str) -> PathBuf {
    let plan = plan(root, name);
    std::fs::remove_file(plan.join("state.json")).unwrap();
    std::fs::remove_file(plan.join("manifest.json")).unwrap();
    plan
}

#[test]
fn a_plan_without_a_state_layer_is_judged_on_its_markdown_outside_git_an_error() {
    // Seed 003: the state layer is REQUIRED in a workspace without git.
    let root = tempfile::tempdir().unwrap();
    let plan = markdown_only(root.path(), "PLAN_markdown_only_nogit");
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(
        (code, codes(&report)),
        (1, vec!["DWP093".to_owned()]),
        "{report:#}"
    );
    let finding = &report["plans"][0]["findings"][0];
    assert_eq!(finding["severity"], "error");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("REQUIRED outside a git work tree")
    );
    // Its hint is the step, `dwp init PLAN` with this plan's path: run it as written.
    let hint = finding["hint"].as_str().unwrap();
    let command = hint.split('`').nth(1).expect("the hint quotes a command");
    assert_eq!(command, format!("dwp init {}", plan.display()));
    let words: Vec<&str> = command.split(' ').collect();
    let init = common::dwp().inherit_home().args(&words[1..]).output();
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(
        code, 1,
        "the boxes' gates have no exit code yet: {report:#}"
    );
    assert!(!codes(&report).contains(&"DWP093".to_owned()));
}

#[test]
fn a_lock_held_by_a_dead_writer_is_an_advisory_on_a_plan_without_a_state_layer_too() {
    // A `dwp init` killed while it held the lock leaves it on a markdown-only plan.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join(".git")).unwrap();
    let plan = markdown_only(root.path(), "PLAN_markdown_only_dead_lock");
    let lock = plan.join("state.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let owner = serde_json::json!({"pid": 999_999_999u32, "host": dwp::store::lock_dir::host_name(),
        "command": "dwp init", "started_at": "2026-06-09T16:00:00Z"});
    std::fs::write(lock.join("owner.json"), owner.to_string()).unwrap();
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(
        (code, codes(&report)),
        (0, vec!["DWP090".to_owned(), "DWP093".to_owned()]),
        "{report:#}"
    );
}

#[test]
fn a_plan_without_a_state_layer_in_a_git_work_tree_gets_an_advisory() {
    // Seed 003: for interactive execution in a git repository the layer is OPTIONAL.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join(".git")).unwrap();
    let plans = root.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    let plan = markdown_only(&plans, "PLAN_markdown_only_git");
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(
        (code, codes(&report)),
        (0, vec!["DWP093".to_owned()]),
        "{report:#}"
    );
    assert_eq!(report["plans"][0]["findings"][0]["severity"], "advisory");
    let (code, _) = verify(&[plan.to_str().unwrap(), "--strict"]);
    assert_eq!(code, 1, "--strict counts the advisory");
}

#[test]
fn a_markdown_only_plan_is_checked_by_every_markdown_rule() {
    let root = tempfile::tempdir().unwrap();
    let plan = markdown_only(root.path(), "PLAN_markdown_only_rules");
    // A checked task whose log still reads pending; a Plan Status that disagrees; a task file
    // the index does not name; an index gap.
    edit(&plan.join("1.task_synthetic_1.md"), |t| {
        t.replace("Status: completed", "Status: pending.")
    });
    edit(&plan.join("README.md"), |t| {
        t.replace("Plan Status: 2/4", "Plan Status: 3/4")
    });
    std::fs::write(plan.join("9.task_stray.md"), "# Task 9: Stray\n").unwrap();
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(
        codes(&report),
        ["DWP046", "DWP054", "DWP065", "DWP093"],
        "{report:#}"
    );
    edit(&plan.join("README.md"), |t| {
        t.replace("] Task 3: ", "] Task 5: ")
    });
    let (_, report) = verify(&[plan.to_str().unwrap()]);
    assert!(codes(&report).contains(&"DWP045".to_owned()), "{report:#}");
}

#[test]
fn a_state_written_the_way_the_reference_updater_writes_it_is_conformant() {
    // The public reference updater reads the clock for `updated_at`, then again for each gate's
    // `last_run` and last for `checkpoint.at`: microseconds apart, with `+00:00` offsets.
    let (code, found, report) = verdict_of(|p| {
        edit_state(p, |s| {
            s["updated_at"] = "2026-06-09T14:25:07.614679+00:00".into();
            s["tasks"][1]["completed_at"] = "2026-06-09T14:25:07.614679+00:00".into();
            s["tasks"][1]["gates"][0]["last_run"] = "2026-06-09T14:25:07.614702+00:00".into();
            s["checkpoint"]["at"] = "2026-06-09T14:25:07.614713+00:00".into();
        })
    });
    assert_eq!((code, found), (0, Vec::<String>::new()), "{report:#}");
    // A write that straddles a second: still the same write.
    let (code, found, _) = verdict_of(|p| {
        edit_state(p, |s| {
            s["updated_at"] = "2026-06-09T14:25:07.999990+00:00".into();
            s["tasks"][1]["completed_at"] = "2026-06-09T14:25:07.999990+00:00".into();
            s["checkpoint"]["at"] = "2026-06-09T14:25:08.000004+00:00".into();
        })
    });
    assert_eq!((code, found), (0, Vec::<String>::new()));
    // Two seconds later is another write: DWP067.
    let (_, found, _) = verdict_of(|p| {
        edit_state(p, |s| {
            s["updated_at"] = "2026-06-09T14:25:07Z".into();
            s["tasks"][1]["completed_at"] = "2026-06-09T14:25:07Z".into();
            s["checkpoint"]["at"] = "2026-06-09T14:25:09Z".into();
        })
    });
    assert_eq!(found, ["DWP067"]);
}

#[test]
fn a_declared_standard_outside_the_dwp_series_is_a_finding() {
    for version in ["1.2.0", "3.1.0"] {
        let (code, found, _) = verdict_of(|p| {
            edit(&p.join("README.md"), |t| {
                t.replace("DWP spec 5.0.0", &format!("DWP spec {version}"))
            })
        });
        assert_eq!((code, found), (1, vec!["DWP059".to_owned()]), "{version}");
    }
    for version in ["2.2.0", "4.0.1"] {
        let (code, found, _) = verdict_of(|p| {
            edit(&p.join("README.md"), |t| {
                t.replace("DWP spec 5.0.0", &format!("DWP spec {version}"))
            })
        });
        assert_eq!(
            (code, found),
            (0, Vec::<String>::new()),
            "{version} is a historical standard"
        );
    }
}

#[test]
fn plan_status_materializing_is_a_partial_materialization() {
    let (code, found, report) = verdict_of(|p| {
        edit(&p.join("README.md"), |t| {
            t.replace("Plan Status: 2/4", "Plan Status: materializing")
        })
    });
    assert_eq!((code, found), (1, vec!["DWP051".to_owned()]), "{report:#}");
}

#[test]
fn a_completed_task_whose_log_still_reads_pending_in_any_form() {
    for line in [
        "Status: pending.",
        "**Status:** Pending",
        "- **Status:** PENDING;",
        "Status: `pending`",
    ] {
        let (code, found, _) = verdict_of(|p| {
            edit(&p.join("2.task_synthetic_2.md"), |t| {
                t.replace("Status: completed", line)
            })
        });
        assert_eq!((code, found), (1, vec!["DWP065".to_owned()]), "{line}");
    }
}

#[test]
fn a_missing_analysis_results_folder_is_an_error_outside_git_and_an_advisory_inside() {
    // Placement (003) lists analysis_results/; git keeps no empty folder, so a clone of a plan
    // whose folder was still empty lacks it through no fault of the plan.
    let (code, found, report) =
        verdict_of(|p| std::fs::remove_dir_all(p.join("analysis_results")).unwrap());
    assert_eq!((code, found), (1, vec!["DWP050".to_owned()]), "{report:#}");
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join(".git")).unwrap();
    let dir = plan(root.path(), "PLAN_results_in_git");
    std::fs::remove_dir_all(dir.join("analysis_results")).unwrap();
    let (code, report) = verify(&[dir.to_str().unwrap()]);
    assert_eq!((code, codes(&report)), (0, vec!["DWP050".to_owned()]));
    let finding = &report["plans"][0]["findings"][0];
    assert_eq!(finding["severity"], "advisory");
    assert!(finding["hint"].as_str().unwrap().contains(".gitkeep"));
}

#[test]
fn a_task_file_that_is_not_a_regular_file_is_reported_not_skipped() {
    // Its sections, log and Final Review parts could not be read: never silently conformant.
    let (code, found, report) = verdict_of(|p| {
        let file = p.join("3.task_synthetic_3.md");
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
    });
    assert_eq!((code, found), (1, vec!["DWP001".to_owned()]), "{report:#}");
    let message = report["plans"][0]["findings"][0]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains("is a directory, not a regular file"),
        "{message}"
    );
}

#[test]
fn a_markdown_only_plan_whose_linked_task_file_is_gone_is_reported() {
    let root = tempfile::tempdir().unwrap();
    let plan = markdown_only(root.path(), "PLAN_markdown_only_missing_file");
    std::fs::remove_file(plan.join("3.task_synthetic_3.md")).unwrap();
    let (code, report) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(codes(&report), ["DWP054", "DWP093"], "{report:#}");
}

#[test]
fn a_plan_materialized_from_legacy_markdown_is_still_judged_by_its_standard() {
    // init gives a 2.2.0 plan a v5 state; the plan is judged by the standard it was written
    // under, so what was an advisory before init stays one after.
    let root = tempfile::tempdir().unwrap();
    let plan = markdown_only(root.path(), "PLAN_legacy_then_init");
    edit(&plan.join("README.md"), |t| {
        t.replace("DWP spec 5.0.0", "DWP spec 2.2.0")
    });
    edit(&plan.join("2.task_synthetic_2.md"), |t| {
        t.replace("### Touched Surface\n\n- `src/synthetic_2.rs`\n\n", "")
    });
    let (_, before) = verify(&[plan.to_str().unwrap()]);
    let severities = |report: &Value| -> Vec<(String, String)> {
        report["plans"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "DWP057")
            .map(|f| {
                (
                    f["code"].as_str().unwrap().to_owned(),
                    f["severity"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        severities(&before),
        [("DWP057".to_owned(), "advisory".to_owned())]
    );
    let init = common::dwp().inherit_home().arg("init").arg(&plan).output();
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let (_, after) = verify(&[plan.to_str().unwrap()]);
    assert_eq!(severities(&after), severities(&before), "{after:#}");
}

#[test]
fn a_completed_task_without_gates_is_an_error_for_a_current_plan_and_an_advisory_for_a_legacy_one()
{
    let without_gates = |p: &Path, standard: &str| {
        edit_state(p, |s| s["tasks"][0]["gates"] = serde_json::json!([]));
        edit(&p.join("README.md"), |t| {
            t.replace("DWP spec 5.0.0", &format!("DWP spec {standard}"))
        });
    };
    let (code, found, report) = verdict_of(|p| without_gates(p, "5.0.0"));
    assert_eq!((code, found), (1, vec!["DWP066".to_owned()]), "{report:#}");
    let (code, found, report) = verdict_of(|p| without_gates(p, "2.2.0"));
    assert_eq!((code, found), (0, vec!["DWP066".to_owned()]), "{report:#}");
    assert_eq!(report["plans"][0]["findings"][0]["severity"], "advisory");
}

#[test]
fn approval_is_not_asked_of_a_v1_state_nor_of_a_completed_plan() {
    // A v1 state has no approval field; without a README row it would read as pending.
    let (_root, v1) = written(
        SynthPlan::new("PLAN_approval_v1", 4)
            .completed(2)
            .generation(dwp::plan::model::Generation::V1),
    );
    remove_approval_row(&v1);
    let (code, report) = verify(&[v1.to_str().unwrap()]);
    assert_eq!(
        (code, codes(&report)),
        (0, Vec::<String>::new()),
        "{report:#}"
    );
    // The same row removed from a v5 plan still in progress is the advisory.
    let (_, found, _) = verdict_of(|p| {
        remove_approval_field(p);
        remove_approval_row(p);
    });
    assert_eq!(found, ["DWP091"]);
    // A completed plan with approval pending: no work is left to approve.
    let fixture = common::fixture("verify-published-dwp-receipt/PLAN_audit_log_export");
    let root = tempfile::tempdir().unwrap();
    let copy = root.path().join("PLAN_audit_log_export");
    copy_plan(&fixture, &copy);
    let (code, before) = verify(&[copy.to_str().unwrap()]);
    assert_eq!(
        (code, codes(&before)),
        (0, Vec::<String>::new()),
        "{before:#}"
    );
    edit_state(&copy, |s| s["approval"] = serde_json::json!("pending"));
    let (_, after) = verify(&[copy.to_str().unwrap()]);
    assert!(!codes(&after).contains(&"DWP091".to_owned()), "{after:#}");
}
