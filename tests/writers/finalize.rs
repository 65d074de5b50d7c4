//! `dwp finalize` through the real binary: Lite and Full publication, the receipt against
//! `sha256sum`, idempotent republication, `--check`, every refusal with the bytes unchanged, and
//! a SIGKILL loop after which a plan is always unpublished, recoverable, or published.

use crate::common;
use crate::common::{Run, copy_plan, read_json, tree_digest, writing_nothing, written};
use dwp::plan::model::PlanFormat;
use dwp::synth::SynthPlan;
use serde_json::Value;
use std::path::{Path, PathBuf};

const RECEIPT: &str = "analysis_results/FINALIZATION.json";

/// `dwp ARGS` at the test clock, with the caller's HOME.
fn dwp_with_home(args: &[&str]) -> Run {
    common::dwp().inherit_home().args(args).run()
}

fn publishable(root: &Path, format: PlanFormat) -> PathBuf {
    common::publishable(root, "PLAN_finalize_cases", 4, format)
}

fn finalize(plan: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["finalize", plan.to_str().unwrap()];
    args.extend(extra);
    dwp_with_home(&args)
}

fn receipt(plan: &Path) -> Value {
    read_json(&plan.join(RECEIPT))
}

fn sha256sum(path: &Path) -> String {
    let output = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum (coreutils) runs");
    String::from_utf8(output.stdout).unwrap()[..64].to_owned()
}

#[test]
fn full_and_lite_plans_publish_with_a_receipt_whose_hashes_are_sha256sum_of_the_files() {
    for format in [PlanFormat::Full, PlanFormat::Lite] {
        let root = tempfile::tempdir().unwrap();
        let plan = publishable(root.path(), format);
        let run = finalize(&plan, &["--json"]);
        assert_eq!(run.code, 0, "{format}: {}{}", run.stdout, run.stderr);
        let doc = common::document(&run.stdout);
        assert_eq!(doc["finalize"]["verdict"], "PUBLISHED");

        let state = plan.join("state.json");
        let published: Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
        assert_eq!(published["status"], "completed");
        assert_eq!(published["checkpoint"]["task"], 4);
        assert_eq!(published["checkpoint"]["step"], "done");

        let receipt = receipt(&plan);
        assert_eq!(receipt["state_sha256"], sha256sum(&state), "{format}");
        assert_eq!(receipt["result"], "verified");
        let artifacts = receipt["artifacts"].as_array().unwrap();
        let paths: Vec<&str> = artifacts
            .iter()
            .map(|a| a["path"].as_str().unwrap())
            .collect();
        for needed in ["README.md", "PROGRESS.md", "PROMPTS.md", "manifest.json"] {
            assert!(paths.contains(&needed), "{format}: {needed} covered");
        }
        assert!(paths.contains(&"analysis_results/SECURITY_REVIEW.md"));
        assert!(!paths.contains(&RECEIPT), "the receipt never covers itself");
        if format == PlanFormat::Full {
            assert!(
                paths.contains(&"4.task_final_review.md"),
                "task files covered"
            );
        }
        for artifact in artifacts {
            let path = plan.join(artifact["path"].as_str().unwrap());
            assert_eq!(artifact["sha256"], sha256sum(&path), "{}", path.display());
        }
        assert!(!plan.join(".finalizing.json").exists());
        assert_eq!(
            dwp_with_home(&["verify", plan.to_str().unwrap()]).code,
            0,
            "{format}: conformant"
        );
        assert_eq!(
            finalize(&plan, &["--check"]).code,
            0,
            "{format}: the receipt holds"
        );
    }
}

#[test]
fn republishing_the_same_candidate_gives_byte_identical_state_and_receipt() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    assert_eq!(finalize(&plan, &[]).code, 0);
    let first = tree_digest(&plan);
    let again = finalize(&plan, &[]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(
        tree_digest(&plan),
        first,
        "state.json and the receipt are byte-identical"
    );
}

#[test]
fn check_catches_one_changed_byte_in_any_covered_artifact() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    assert_eq!(finalize(&plan, &[]).code, 0);
    for name in [
        "2.task_synthetic_2.md",
        "README.md",
        "analysis_results/SECURITY_REVIEW.md",
    ] {
        let path = plan.join(name);
        let original = std::fs::read(&path).unwrap();
        let mut changed = original.clone();
        let last = changed.len() - 2;
        changed[last] ^= 0x01;
        std::fs::write(&path, &changed).unwrap();
        let run = finalize(&plan, &["--check"]);
        assert_eq!(run.code, 1, "{name}: {}", run.stdout);
        assert!(
            run.stdout
                .contains(&format!("{name} changed since publication")),
            "{}",
            run.stdout
        );
        std::fs::write(&path, &original).unwrap();
        assert_eq!(finalize(&plan, &["--check"]).code, 0, "{name} restored");
    }
}

#[test]
fn a_file_added_under_analysis_results_after_publication_is_caught_by_check_and_verify() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    assert_eq!(finalize(&plan, &[]).code, 0);
    let added = "analysis_results/notes/late.md";
    std::fs::create_dir_all(plan.join("analysis_results/notes")).unwrap();
    std::fs::write(plan.join(added), "written after publication\n").unwrap();
    let says_added = |text: &str| text.contains(&format!("{added} was added after publication"));

    let check = finalize(&plan, &["--check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(says_added(&check.stdout), "{}", check.stdout);
    assert!(check.stdout.contains("dwp finalize"), "{}", check.stdout);

    let verify = dwp_with_home(&["--json", "verify", plan.to_str().unwrap()]);
    assert_eq!(verify.code, 1, "{}", verify.stdout);
    let report = verify.payload();
    let finding = report["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| says_added(f["message"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("{report:#}"))
        .clone();
    assert_eq!(finding["code"], "DWP082");
    // The hint's step republishes, and the receipt then covers the file.
    assert!(
        finding["hint"]
            .as_str()
            .unwrap()
            .contains(&format!("dwp finalize {}", plan.display())),
        "{finding:#}"
    );
    assert_eq!(finalize(&plan, &[]).code, 0);
    assert_eq!(finalize(&plan, &["--check"]).code, 0);
}

/// A refusal: the exit code, every needle in the output, and not one byte written.
fn refused(plan: &Path, extra: &[&str], code: i32, needles: &[&str]) -> Run {
    let run = writing_nothing(plan, "a refused finalize", || finalize(plan, extra));
    assert_eq!(run.code, code, "{extra:?}\n{}{}", run.stdout, run.stderr);
    let text = format!("{}{}", run.stdout, run.stderr);
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
    assert!(!plan.join("state.json.lock").exists(), "no lock left");
    run
}

/// `dwp update` starts task 4 with the gate record `gate` (`COMMAND|EXIT_CODE|EVIDENCE`), and
/// nothing else: the markdown is left as it was.
fn start_task_4_with_gate(plan: &Path, gate: &str) {
    let run = dwp_with_home(&[
        "update",
        plan.to_str().unwrap(),
        "--task",
        "4",
        "--status",
        "in_progress",
        "--gate",
        gate,
    ]);
    assert_eq!(run.code, 0);
}

#[test]
fn unauthored_markdown_is_refused_listing_every_failure() {
    let (_root, plan) = written(SynthPlan::new("PLAN_finalize_cases", 4).completed(3));
    // Task 4 in progress, but its box, Plan Status and log still say pending.
    start_task_4_with_gate(&plan, "cargo test|0|14 passed");
    refused(
        &plan,
        &[],
        1,
        &[
            "REFUSED",
            "DWP040",
            "the state is stale",
            "Status: pending",
            "Skills disposition",
        ],
    );
}

#[test]
fn a_failing_last_gate_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    start_task_4_with_gate(&plan, "cargo test|1|2 failed");
    refused(&plan, &[], 1, &["cargo test", "failed"]);
}

#[test]
fn an_open_critical_security_finding_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    std::fs::write(
        plan.join("analysis_results/SECURITY_REVIEW.md"),
        "# Security review\n\n| S1 | critical | open |\n",
    )
    .unwrap();
    refused(&plan, &[], 1, &["open critical"]);
}

#[test]
fn a_candidate_that_does_not_complete_the_plan_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    let candidate = root.path().join("candidate.json");
    std::fs::copy(plan.join("state.json"), &candidate).unwrap();
    let run = refused(
        &plan,
        &["--candidate", candidate.to_str().unwrap()],
        1,
        &["DWP086", "task 4 is in_progress"],
    );
    assert!(run.stdout.contains("not completed") || run.stdout.contains("every task completed"));
}

#[test]
fn a_candidate_that_is_not_json_or_of_another_plan_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    let broken = root.path().join("broken.json");
    std::fs::write(&broken, "{\"schema\": ").unwrap();
    refused(
        &plan,
        &["--candidate", broken.to_str().unwrap()],
        1,
        &["REFUSED"],
    );

    let other_root = tempfile::tempdir().unwrap();
    let other = SynthPlan::new("PLAN_another_plan", 4)
        .completed(4)
        .write(other_root.path())
        .unwrap();
    let foreign = other.join("state.json");
    refused(
        &plan,
        &["--candidate", foreign.to_str().unwrap()],
        1,
        &["PLAN_another_plan"],
    );
}

#[test]
fn a_newer_standard_is_unverified_never_published() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    let readme = plan.join("README.md");
    let text = std::fs::read_to_string(&readme)
        .unwrap()
        .replace("DWP spec 5.0.0", "DWP spec 6.0.0");
    std::fs::write(&readme, text).unwrap();
    refused(&plan, &[], 5, &["UNVERIFIED", "newer than this dwp knows"]);
}

#[test]
fn a_missing_artifact_is_unverified_never_published() {
    for missing in ["PROGRESS.md", "3.task_synthetic_3.md"] {
        let root = tempfile::tempdir().unwrap();
        let plan = publishable(root.path(), PlanFormat::Full);
        std::fs::remove_file(plan.join(missing)).unwrap();
        let run = refused(&plan, &[], 5, &["UNVERIFIED", missing]);
        assert!(
            !run.stdout.contains("PUBLISHED"),
            "{missing}: {}",
            run.stdout
        );
    }
}

#[test]
fn a_marker_refuses_a_new_publication_and_recovery_needs_one() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    refused(
        &plan,
        &["--recover"],
        1,
        &["no interrupted publication to recover"],
    );
    std::fs::write(plan.join(".finalizing.json"), "{}\n").unwrap();
    refused(
        &plan,
        &[],
        1,
        &["a publication is in progress", "--recover"],
    );
    refused(&plan, &["--recover"], 1, &["not a publication marker"]);
}

#[test]
fn a_moved_snapshot_is_contention() {
    let root = tempfile::tempdir().unwrap();
    let plan = publishable(root.path(), PlanFormat::Full);
    refused(
        &plan,
        &["--expected-sha256", &"0".repeat(64)],
        3,
        &["snapshot moved"],
    );
}

#[test]
fn sigkill_at_random_instants_leaves_a_plan_unpublished_recoverable_or_published() {
    let template_root = tempfile::tempdir().unwrap();
    let template = publishable(template_root.path(), PlanFormat::Full);
    let original_state = std::fs::read(template.join("state.json")).unwrap();
    // Kill instants spread over the whole run: measure one undisturbed publication first.
    let probe_root = tempfile::tempdir().unwrap();
    let probe = probe_root.path().join("PLAN_finalize_cases");
    copy_plan(&template, &probe);
    let started = std::time::Instant::now();
    assert_eq!(finalize(&probe, &[]).code, 0);
    let span = (started.elapsed().as_micros() as u64 * 5 / 4).max(1_000);
    let (mut unpublished, mut marked, mut published) = (0, 0, 0);
    for round in 0..120 {
        let root = tempfile::tempdir().unwrap();
        let plan = root.path().join("PLAN_finalize_cases");
        copy_plan(&template, &plan);
        let mut child = common::dwp()
            .inherit_home()
            .args(["finalize", plan.to_str().unwrap()])
            .command()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(fastrand::u64(0..span)));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let p = plan.to_str().unwrap();
        if plan.join("state.json.lock").exists() {
            // A killed writer's lock: inspected, then removed because its owner is gone.
            let run = dwp_with_home(&["lock", "recover", p]);
            assert_eq!(run.code, 0, "round {round}: {}", run.stderr);
        }
        let has_marker = plan.join(".finalizing.json").exists();
        let has_receipt = plan.join(RECEIPT).exists();
        if has_marker {
            marked += 1;
            assert_ne!(
                dwp_with_home(&["verify", p]).code,
                0,
                "round {round}: marked is not conformant"
            );
            let run = dwp_with_home(&["finalize", p, "--recover"]);
            assert_eq!(
                run.code, 0,
                "round {round}: recovery: {}{}",
                run.stdout, run.stderr
            );
        } else if has_receipt {
            published += 1;
        } else {
            unpublished += 1;
            assert_eq!(
                std::fs::read(plan.join("state.json")).unwrap(),
                original_state,
                "round {round}: no marker, no receipt: the state is untouched"
            );
            assert_eq!(
                dwp_with_home(&["finalize", p]).code,
                0,
                "round {round}: publishes afterwards"
            );
        }
        let verify = dwp_with_home(&["verify", p]);
        assert_eq!(verify.code, 0, "round {round}: {}", verify.stdout);
        assert_eq!(finalize(&plan, &["--check"]).code, 0, "round {round}");
    }
    println!(
        "120 kills: {unpublished} unpublished, {marked} marked and recovered, {published} published"
    );
    assert_eq!(unpublished + marked + published, 120);
}

/// The receipt tells the gates dwp observed (`dwp run`) from the asserted ones, gate by gate.
#[test]
fn the_receipt_lists_an_observed_and_an_asserted_gate_of_the_last_task() {
    let (root, plan) = written(SynthPlan::new("PLAN_finalize_gates", 3).ready_to_publish());
    let asserted = common::dwp()
        .args(["--json", "status"])
        .arg(&plan)
        .run()
        .payload()["current"]["gates"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let run = common::dwp()
        .in_dir(root.path())
        .arg("run")
        .arg(&plan)
        .args(["--task", "3", "--", "echo", "5 passed, 0 failed"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let published = finalize(&plan, &["--json"]);
    assert_eq!(published.code, 0, "{published:?}");
    let receipt = receipt(&plan);
    let gates: Vec<&Value> = receipt["gates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["task"] == 3)
        .collect();
    assert_eq!(
        gates,
        [
            &serde_json::json!({"task": 3, "command": asserted, "evidence": "asserted"}),
            &serde_json::json!({"task": 3, "command": "echo '5 passed, 0 failed'", "evidence": "observed"}),
        ],
        "{receipt:#}"
    );
    // The earlier tasks stand on asserted gates, and the receipt says so.
    assert!(
        receipt["gates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["task"] != 3)
            .all(|g| g["evidence"] == "asserted"),
        "{receipt:#}"
    );
}
