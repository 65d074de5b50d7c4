//! `dwp status` and `dwp status --all` through the real binary: snapshots of the human and JSON
//! output on the conformance fixtures and on synthetic plans, the size bound of `--json` on a
//! huge plan, no colour codes when stdout is not a terminal or NO_COLOR is set, and the desync
//! line when the README runs ahead of the state.
//!
//! Fixture runs use the repository root as the working directory and relative paths, so the
//! snapshots hold no temporary paths; `--all` runs on a temporary ROOT, redacted to `[ROOT]`.

use crate::common;
use crate::common::{Dwp, NOW, written};
use dwp::synth::SynthPlan;
use std::path::Path;

/// The fixed clock of every call.
const FULL_FIXTURE: &str = "conformance-fixtures/valid-full-v5/PLAN_payment_webhooks";
const BLOCKED_FIXTURE: &str = "conformance-fixtures/valid-blocked-v5/PLAN_sso_login_rollout";

/// `dwp` with the fixed clock, the caller's HOME, no NO_COLOR, and stdout piped (so never a
/// terminal).
fn dwp() -> Dwp {
    let mut cmd = common::dwp();
    cmd.inherit_home().env_remove("NO_COLOR").fixed_width();
    cmd
}

/// Run, require exit 0 and an empty stderr, and return stdout.
fn stdout_of(cmd: &mut Dwp) -> String {
    let output = cmd.output();
    let stdout = String::from_utf8(output.stdout).expect("utf-8 stdout");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stderr.is_empty(), "unexpected stderr:\n{stderr}");
    stdout
}

/// `dwp status [--json] TARGET` from the repository root.
fn status_in_repo(target: &str, json: bool) -> String {
    let mut cmd = dwp();
    cmd.in_dir(common::repo_root()).arg("status");
    if json {
        cmd.arg("--json");
    }
    stdout_of(cmd.arg(target))
}

fn status_of(target: &Path, extra: &[&str]) -> String {
    stdout_of(dwp().arg("status").args(extra).arg(target))
}

/// No ANSI escape anywhere.
fn assert_no_colour(text: &str) {
    assert!(!text.contains('\x1b'), "colour escape in output:\n{text:?}");
}

// ---------------------------------------------------------------------------------------------
// Snapshots
// ---------------------------------------------------------------------------------------------

#[test]
fn snapshot_status_of_a_full_plan_in_progress() {
    let stdout = status_in_repo(FULL_FIXTURE, false);
    assert_no_colour(&stdout);
    insta::assert_snapshot!("status_full_human", stdout);
}

#[test]
fn snapshot_status_json_of_a_full_plan_in_progress() {
    let stdout = status_in_repo(FULL_FIXTURE, true);
    let document = common::document(&stdout);
    assert_eq!(document["dwp"], 2);
    assert_eq!(document["command"], "status");
    insta::assert_snapshot!("status_full_json", stdout);
}

#[test]
fn snapshot_status_of_a_blocked_plan() {
    let stdout = status_in_repo(BLOCKED_FIXTURE, false);
    assert_no_colour(&stdout);
    assert!(stdout.contains("BLOCKED task 3"), "{stdout}");
    insta::assert_snapshot!("status_blocked_human", stdout);
}

#[test]
fn snapshot_status_json_of_a_blocked_plan() {
    let stdout = status_in_repo(BLOCKED_FIXTURE, true);
    let document = common::payload(&common::document(&stdout)).clone();
    assert_eq!(document["status"], "blocked");
    assert_eq!(document["blocker"]["task"], 3);
    insta::assert_snapshot!("status_blocked_json", stdout);
}

/// A ROOT with `.dwp/plans/` holding three synthetic plans: not started, half done, done.
fn three_plan_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    let plans = root.path().join(".dwp").join("plans");
    std::fs::create_dir_all(&plans).expect("plans dir");
    for synth in [
        SynthPlan::new("PLAN_alpha_not_started", 3),
        SynthPlan::new("PLAN_beta_half_done", 6).completed(3),
        SynthPlan::new("PLAN_gamma_done", 4).completed(4),
    ] {
        synth.write(&plans).expect("write synthetic plan");
    }
    root
}

/// Replace the temporary ROOT in `text` with `[ROOT]`.
fn redact_root(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), "[ROOT]")
}

#[test]
fn snapshot_status_all_of_three_plans() {
    let root = three_plan_root();
    let stdout = status_of(root.path(), &["--all"]);
    assert_no_colour(&stdout);
    let stdout = redact_root(&stdout, root.path());
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    insta::assert_snapshot!("status_all_human", stdout);
}

#[test]
fn snapshot_status_all_json_of_three_plans() {
    let root = three_plan_root();
    let stdout = status_of(root.path(), &["--all", "--json"]);
    let document = common::payload(&common::document(&stdout)).clone();
    assert_eq!(document["plans"].as_array().map(Vec::len), Some(3));
    let stdout = redact_root(&stdout, root.path());
    insta::assert_snapshot!("status_all_json", stdout);
}

#[test]
fn status_all_reports_an_unreadable_plan_and_goes_on() {
    let root = three_plan_root();
    let broken = root
        .path()
        .join(".dwp/plans/PLAN_beta_half_done/state.json");
    std::fs::write(&broken, "{ not json").expect("break state.json");
    let stdout = status_of(root.path(), &["--all"]);
    let stdout = redact_root(&stdout, root.path());
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with("PLAN_alpha_not_started"), "{stdout}");
    assert!(
        lines[1].starts_with("PLAN_beta_half_done") && lines[1].contains("invalid: "),
        "{stdout}"
    );
    assert!(lines[2].starts_with("PLAN_gamma_done"), "{stdout}");
    insta::assert_snapshot!("status_all_one_unreadable", stdout);
}

// ---------------------------------------------------------------------------------------------
// Bounds, colour, desync
// ---------------------------------------------------------------------------------------------

#[test]
fn json_of_a_huge_plan_stays_bounded() {
    let (_root, plan) = written(SynthPlan::new("PLAN_huge_plan", 2_000).completed(10));
    let stdout = status_of(&plan, &["--json"]);
    let document = common::payload(&common::document(&stdout)).clone();
    let open = document["open_tasks"].as_array().expect("open_tasks list");
    assert_eq!(open.len(), 50, "at most 50 open tasks are listed");
    assert_eq!(open[0]["id"], 11, "the first open task comes first");
    assert_eq!(open[49]["id"], 60);
    assert_eq!(document["open_tasks_omitted"], 2_000 - 10 - 50);
    assert_eq!(document["completed"], 10);
    assert_eq!(document["total"], 2_000);
    assert!(
        stdout.len() < 32 * 1024,
        "--json of a 2,000-task plan is {} bytes",
        stdout.len()
    );
    // The human view lists every task; only the JSON is bounded.
    let human = status_of(&plan, &[]);
    assert!(human.contains("2000  pending"), "{}", &human[..500]);
}

#[test]
fn no_colour_when_piped_with_or_without_no_color() {
    let root = tempfile::tempdir().expect("temp dir");
    let plan = SynthPlan::new("PLAN_no_colour", 4)
        .completed(2)
        .write(&root.path().join(".dwp").join("plans"))
        .expect("write synthetic plan");
    // Ahead of the state in the markdown, so the red `desync` word is printed too.
    let readme = plan.join("README.md");
    let text = std::fs::read_to_string(&readme).expect("README");
    std::fs::write(
        &readme,
        text.replace("- [ ] Task 3:", "- [x] Task 3:")
            .replace("Plan Status: 2/4", "Plan Status: 3/4"),
    )
    .expect("edit README");
    for no_color in [None, Some("1")] {
        let run = |extra: &[&str], target: &Path| {
            let mut cmd = dwp();
            if let Some(value) = no_color {
                cmd.env("NO_COLOR", value);
            }
            stdout_of(cmd.arg("status").args(extra).arg(target))
        };
        let human = run(&[], &plan);
        assert!(human.contains("desync"), "{human}");
        assert_no_colour(&human);
        assert_no_colour(&run(&["--json"], &plan));
        assert_no_colour(&run(&["--all"], root.path()));
    }
}

#[test]
fn a_box_checked_ahead_of_the_state_shows_the_desync_line() {
    let (_root, plan) = written(SynthPlan::new("PLAN_box_ahead", 5).completed(2));
    let in_sync = status_of(&plan, &[]);
    assert!(
        in_sync.ends_with("\nmarkdown and state agree\n"),
        "{in_sync}"
    );
    let readme = plan.join("README.md");
    let text = std::fs::read_to_string(&readme).expect("README");
    let ahead = text.replace("- [ ] Task 3:", "- [x] Task 3:");
    assert_ne!(ahead, text, "the edit applies");
    std::fs::write(&readme, ahead).expect("edit README");

    let stdout = status_of(&plan, &[]);
    let last = stdout.lines().last().expect("a last line");
    assert!(
        last.starts_with("desync: ") && last.ends_with(" (dwp reconcile)"),
        "{stdout}"
    );
    assert!(!stdout.contains("markdown and state agree"), "{stdout}");
    // The state is unchanged: status reads and never writes.
    assert!(stdout.contains("[########............] 2/5"), "{stdout}");
    let state = std::fs::read_to_string(plan.join("state.json")).expect("state");
    assert_eq!(
        state.as_bytes(),
        &dwp::store::json_file_bytes(&SynthPlan::new("PLAN_box_ahead", 5).completed(2).state())[..]
    );
    insta::assert_snapshot!("status_desync_human", stdout);

    let json = status_of(&plan, &["--json"]);
    let document = common::payload(&common::document(&json)).clone();
    let count = document["desync"]["count"].as_u64().expect("desync count");
    assert!(count >= 1, "{json}");
    let first = &document["desync"]["first"];
    assert!(
        first
            .as_array()
            .is_some_and(|d| d.iter().any(|d| d["task"] == 3)),
        "{json}"
    );
}

/// Run `dwp status TARGET` on a pseudo-terminal through util-linux `script`, so stdout *is* a
/// terminal; `None` when `script` is not available.
fn status_on_a_terminal(target: &Path, no_color: Option<&str>) -> Option<String> {
    let probe = std::process::Command::new("script")
        .arg("--version")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: util-linux `script` is not installed");
        return None;
    }
    let command = format!(
        "'{}' status '{}'",
        env!("CARGO_BIN_EXE_dwp"),
        target.display()
    );
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &command, "/dev/null"])
        .env("DWP_TEST_NOW", NOW)
        .env_remove("NO_COLOR");
    if let Some(value) = no_color {
        cmd.env("NO_COLOR", value);
    }
    let output = cmd.output().expect("run script");
    assert!(output.status.success(), "{output:?}");
    Some(String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n"))
}

#[test]
fn no_colour_with_no_color_set_even_on_a_terminal() {
    let plan = common::repo_root().join(FULL_FIXTURE);
    let Some(coloured) = status_on_a_terminal(&plan, None) else {
        return;
    };
    // On a terminal without NO_COLOR there is colour, so the check below can fail.
    assert!(coloured.contains("\x1b["), "{coloured:?}");
    let plain = status_on_a_terminal(&plan, Some("1")).expect("script ran once already");
    assert_no_colour(&plain);
    assert_eq!(plain, status_in_repo(FULL_FIXTURE, false));
}

/// A plan without a state layer is shown from its markdown (issue #12): the boxes, and for an
/// unchecked task its log's `Status:` line.
#[test]
fn snapshot_status_of_a_plan_without_a_state_layer() {
    let (_root, dir) = written(SynthPlan::new("PLAN_status_markdown_only", 4).completed(1));
    std::fs::remove_file(dir.join("state.json")).unwrap();
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    let log = dir.join("2.task_synthetic_2.md");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(
        &log,
        text.replace("Status: pending", "**Status:** in progress"),
    )
    .unwrap();
    let human = status_of(&dir, &[]);
    assert_no_colour(&human);
    insta::assert_snapshot!("status_markdown_only_human", human);
    let json = common::payload(&common::document(&status_of(&dir, &["--json"]))).clone();
    assert_eq!(json["source"], "markdown");
    assert_eq!(json["status"], "in_progress");
    assert_eq!(
        (json["completed"].as_u64(), json["total"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(json["current"]["id"], 2);
    assert_eq!(json["current"]["status"], "in_progress");
    assert_eq!(json["desync"]["count"], 0);
}

#[test]
fn status_shows_a_held_lock_and_marks_invalidated_evidence() {
    let root = tempfile::tempdir().unwrap();
    let plan = dwp::synth::SynthPlan::new("PLAN_status_lock_shown", 4)
        .completed(2)
        .write(root.path())
        .unwrap();
    // Task 2's passing record, invalidated by refine (as `dwp amend --invalidate` writes it).
    let state_path = plan.join("state.json");
    let mut state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    let evidence = state["tasks"][1]["gates"][0]["evidence"]
        .as_str()
        .unwrap()
        .to_owned();
    state["tasks"][1]["gates"][0]["evidence"] =
        format!("invalidated by refine 2026-06-09: {evidence}").into();
    std::fs::write(&state_path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    let guard = dwp::store::lock_dir::try_acquire(&state_path).expect("take the lock");
    let run = common::dwp().arg("status").arg(&plan).run();
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("lock: held by pid "), "{}", run.stdout);
    // Task 2's gate, shown as what it is now: invalidated, not passing.
    let task_2 = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("2  "))
        .expect("task 2's line");
    assert!(task_2.contains("cargo test invalidated]"), "{task_2}");
    assert!(!task_2.contains("pass"), "{task_2}");
    let json = common::dwp()
        .args(["--json", "status"])
        .arg(&plan)
        .run()
        .payload();
    assert!(
        json["lock"]["holder"].as_str().unwrap().contains("alive"),
        "{json:#}"
    );
    assert_eq!(json["lock"]["gone"], false);
    drop(guard);
    let free = common::dwp().arg("status").arg(&plan).run();
    assert!(!free.stdout.contains("lock:"), "{}", free.stdout);
}

#[test]
fn snapshot_status_with_colour_always() {
    // The same report as `status_blocked_human`, painted: escape codes shown as `<ESC>`.
    let stdout = stdout_of(dwp().in_dir(common::repo_root()).args([
        "status",
        "--color",
        "always",
        BLOCKED_FIXTURE,
    ]));
    assert!(stdout.contains('\u{1b}'), "{stdout}");
    let plain: String = stdout
        .replace('\u{1b}', "")
        .split('[')
        .enumerate()
        .map(|(i, part)| match i {
            0 => part.to_owned(),
            _ => match part.split_once('m') {
                Some((code, rest)) if code.bytes().all(|b| b.is_ascii_digit() || b == b';') => {
                    rest.to_owned()
                }
                _ => format!("[{part}"),
            },
        })
        .collect();
    assert_eq!(
        plain,
        status_in_repo(BLOCKED_FIXTURE, false),
        "colour adds only escapes"
    );
    insta::assert_snapshot!("status_blocked_colour", stdout.replace('\u{1b}', "<ESC>"));
}

/// A state.json that is not DWP's at all (an agent invented `{"tasks": {...}, "phases": ...}`)
/// does not hide the plan: status shows it from the markdown and says why the file was left
/// aside, while `dwp verify` still judges the file and fails.
#[test]
fn status_of_a_plan_with_a_foreign_state_json_shows_the_markdown_and_says_why() {
    let (_root, dir) = written(SynthPlan::new("PLAN_status_foreign_state", 3).completed(1));
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    let invented = r#"{"tasks": {"1": {"status": "done"}, "2": {"status": "doing"}}, "phases": {"build": "ok"}}"#;
    std::fs::write(dir.join("state.json"), invented).unwrap();
    let human = status_of(&dir, &[]);
    assert!(
        human.contains("state.json is not a DWP state layer (it names no `schema`)"),
        "{human}"
    );
    assert!(human.contains("1/3"), "the markdown's count: {human}");
    let json = common::payload(&common::document(&status_of(&dir, &["--json"]))).clone();
    assert_eq!(json["source"], "markdown");
    assert_eq!(json["completed"], 1);
    assert!(
        json["ignored_state"]
            .as_str()
            .unwrap()
            .contains("names no `schema`")
    );
    let verify = dwp().arg("verify").arg(&dir).output();
    assert_ne!(
        verify.status.code(),
        Some(0),
        "verify still judges the file"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("state.json")).unwrap(),
        invented
    );
}

/// A state.json naming a schema that is not a DWP plan state is left aside the same way.
#[test]
fn status_of_a_plan_whose_state_names_another_schema_says_so() {
    let (_root, dir) = written(SynthPlan::new("PLAN_status_other_schema", 2));
    std::fs::write(
        dir.join("state.json"),
        r#"{"schema": "https://example.com/build-state.json", "steps": []}"#,
    )
    .unwrap();
    let json = common::payload(&common::document(&status_of(&dir, &["--json"]))).clone();
    assert_eq!(json["source"], "markdown");
    assert!(
        json["ignored_state"]
            .as_str()
            .unwrap()
            .contains("`https://example.com/build-state.json` is not a DWP plan state"),
        "{json}"
    );
}
