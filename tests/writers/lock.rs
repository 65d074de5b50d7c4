//! `dwp lock status` and `dwp lock recover` through the real binary, on the records that can
//! mislead them: a path that is not a plan, a forged owner naming a live pid, an owner whose
//! recorded process start differs from the live process's, and a malformed owner record.
//! (The ordinary lifecycle, free/held/dead/live/other host, is in `tests/writers/update.rs`.)

use crate::common::{Run, dwp_in, written};
use dwp::synth::SynthPlan;
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A five-task plan in its own temporary directory.
fn plan() -> (TempDir, PathBuf) {
    written(SynthPlan::new("PLAN_cli_lock", 5).completed(2))
}

fn lock_dir(plan: &Path) -> PathBuf {
    plan.join("state.json.lock")
}

/// `dwp lock SUB PLAN ARGS...` run from the plan's parent.
fn lock(sub: &str, plan: &Path, args: &[&str]) -> Run {
    let mut all = vec!["lock", sub, plan.to_str().expect("utf-8 path")];
    all.extend(args);
    dwp_in(plan.parent().expect("parent"), &all)
}

/// Lay a lock directory whose `owner.json` holds `owner` (as JSON text).
fn write_owner(plan: &Path, owner: &str) {
    fs::create_dir(lock_dir(plan)).expect("create lock dir");
    fs::write(lock_dir(plan).join("owner.json"), owner).expect("write owner.json");
}

/// A lock whose owner record names this live test process on this host, taken now, with the
/// process start `start_ticks` and the boot `boot_id`: whether dwp believes the record depends
/// on those two alone.
fn write_owner_naming_this_process(plan: &Path, start_ticks: u64, boot_id: &str) {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let owner = json!({
        "pid": std::process::id(),
        "host": dwp::store::lock_dir::host_name(),
        "command": "dwp update PLAN --task 3 --status in_progress",
        "started_at": now,
        "start_ticks": start_ticks,
        "boot_id": boot_id,
    });
    write_owner(plan, &owner.to_string());
}

fn progress(plan: &Path) -> String {
    fs::read_to_string(plan.join("PROGRESS.md")).expect("PROGRESS.md")
}

/// This process's start in clock ticks since boot: field 22 of `/proc/self/stat`, the 20th
/// after the `(comm)` field.
fn own_start_ticks() -> u64 {
    let stat = fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after_comm = &stat[stat.rfind(')').expect("comm") + 1..];
    after_comm
        .split_whitespace()
        .nth(19)
        .expect("starttime")
        .parse()
        .expect("a number")
}

fn boot_id() -> String {
    fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .expect("boot_id")
        .trim()
        .to_owned()
}

// ---------------------------------------------------------------------------------------------
// A path that is not a plan
// ---------------------------------------------------------------------------------------------

/// Exit 2, `dwp lock SUB: ... (PATH)` on stderr, and with `--json` the one JSON document
/// carrying the error (never a document that says the lock is free).
fn assert_not_a_plan(sub: &str, path: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = dwp_in(dir.path(), &["lock", sub, path]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stdout.is_empty(), "nothing claimed on stdout: {run:?}");
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("dwp lock {sub}: ")), "{run:?}");
    assert!(first.contains("not a plan"), "{run:?}");
    assert!(first.ends_with(&format!("({path})")), "{run:?}");

    let run = dwp_in(dir.path(), &["lock", sub, path, "--json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let document = run.json();
    assert_eq!(document["dwp"], 2, "{document:#}");
    assert_eq!(document["command"], format!("lock {sub}"), "{document:#}");
    assert_eq!(document["ok"], false, "{document:#}");
    assert_eq!(document["exit"], 2, "{document:#}");
    let message = document["error"]["message"].as_str().expect("message");
    assert!(message.contains("not a plan"), "{document:#}");
    assert!(document.get("lock_status").is_none(), "no claim either way");
    assert!(!dir.path().join(path).exists(), "nothing created at {path}");
}

#[test]
fn lock_status_of_a_path_that_is_not_a_plan_is_a_usage_error() {
    assert_not_a_plan("status", "nope");
}

#[test]
fn lock_recover_of_a_path_that_is_not_a_plan_is_a_usage_error() {
    assert_not_a_plan("recover", "/does/not/exist");
}

#[test]
fn a_folder_without_plan_files_is_not_a_plan_either() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("empty")).expect("mkdir");
    let run = dwp_in(dir.path(), &["lock", "status", "empty"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("not a plan"), "{run:?}");
}

// ---------------------------------------------------------------------------------------------
// Liveness: a live pid is the owner only if it is the process that wrote the record
// ---------------------------------------------------------------------------------------------

#[test]
fn a_forged_owner_naming_a_live_pid_with_a_future_start_is_removable_with_force() {
    let (_root, plan) = plan();
    // pid 1 always runs; a start in the future was never written by a real writer.
    let owner = json!({
        "pid": 1,
        "host": dwp::store::lock_dir::host_name(),
        "command": "dwp update PLAN --task 3 --status in_progress",
        "started_at": "2099-01-01T00:00:00Z",
    });
    write_owner(&plan, &owner.to_string());

    let status = lock("status", &plan, &[]);
    assert_eq!(status.code, 0, "{status:?}");
    assert!(status.stdout.contains("pid 1"), "{status:?}");
    assert!(
        !status.stdout.contains(", alive)"),
        "a forged record is not shown as a live owner: {status:?}"
    );
    let json = lock("status", &plan, &["--json"]).payload();
    assert_eq!(json["holder"]["liveness"], "unproven", "{json:#}");

    // Not provably gone either: without --force it stays.
    let refused = lock("recover", &plan, &[]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("--force"), "{refused:?}");
    assert!(lock_dir(&plan).join("owner.json").is_file(), "kept");

    let before = progress(&plan);
    let forced = lock(
        "recover",
        &plan,
        &["--force", "--reason", "forged owner record"],
    );
    assert_eq!(forced.code, 0, "{forced:?}");
    assert!(forced.stdout.contains("removed"), "{forced:?}");
    assert!(!lock_dir(&plan).exists(), "the forged lock is gone");
    let after = progress(&plan);
    assert!(after.starts_with(&before), "appended, not rewritten");
    let added = &after[before.len()..];
    assert_eq!(added.lines().count(), 1, "one line: {added}");
    assert!(added.contains("forged owner record"), "{added}");
    assert!(added.contains("--force"), "{added}");
}

#[test]
fn a_live_pid_whose_start_differs_from_the_record_is_a_reused_pid() {
    let (_root, plan) = plan();
    // This test process runs, but it is not the process that started at these ticks.
    write_owner_naming_this_process(&plan, own_start_ticks() + 1, &boot_id());
    let json = lock("status", &plan, &["--json"]).payload();
    assert_eq!(json["holder"]["liveness"], "pid_reused", "{json:#}");
    let run = lock("recover", &plan, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("pid now belongs to"), "{run:?}");
    assert!(!lock_dir(&plan).exists());
}

#[test]
fn an_owner_recorded_in_another_boot_is_gone() {
    let (_root, plan) = plan();
    write_owner_naming_this_process(
        &plan,
        own_start_ticks(),
        "00000000-0000-0000-0000-000000000000",
    );
    let run = lock("recover", &plan, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!lock_dir(&plan).exists());
}

#[test]
fn a_lock_dwp_itself_holds_is_never_removed_even_forced() {
    let (_root, plan) = plan();
    // A genuine owner: this process takes the lock through dwp, which records its start.
    let guard = dwp::store::lock_dir::try_acquire(&plan.join("state.json")).expect("take the lock");
    let owner: serde_json::Value =
        serde_json::from_slice(&fs::read(lock_dir(&plan).join("owner.json")).unwrap()).unwrap();
    assert!(owner["start_ticks"].is_u64(), "{owner:#}");
    let before = progress(&plan);
    let run = lock("recover", &plan, &["--force", "--reason", "impatient"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("alive"), "{run:?}");
    assert!(lock_dir(&plan).join("owner.json").is_file(), "kept");
    assert_eq!(progress(&plan), before, "nothing recorded");
    let json = lock("status", &plan, &["--json"]).payload();
    assert_eq!(json["holder"]["liveness"], "alive", "{json:#}");
    drop(guard);
}

// ---------------------------------------------------------------------------------------------
// A malformed owner record
// ---------------------------------------------------------------------------------------------

#[test]
fn a_malformed_owner_record_is_shown_as_malformed() {
    let (_root, plan) = plan();
    write_owner(&plan, "{\"pid\": \"not a number\"");
    let run = lock("status", &plan, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("held: "), "{run:?}");
    assert!(first.contains("malformed owner record"), "{run:?}");
    assert!(
        !run.stdout.contains("no owner record"),
        "a record that is there is not absent: {run:?}"
    );

    let json = lock("status", &plan, &["--json"]).payload();
    assert_eq!(json["holder"]["record"], "malformed", "{json:#}");
    assert!(json["holder"]["owner"].is_null(), "{json:#}");
    let problem = json["holder"]["owner_problem"].as_str().expect("problem");
    assert!(problem.contains("malformed"), "{json:#}");

    // An update blocked by it says the same.
    let update = dwp_in(
        plan.parent().unwrap(),
        &[
            "update",
            plan.to_str().unwrap(),
            "--task",
            "3",
            "--status",
            "in_progress",
        ],
    );
    assert_eq!(update.code, 3, "{update:?}");
    assert!(
        update.stderr.contains("malformed owner record"),
        "{update:?}"
    );
}
