//! Hostile files in a plan folder, through the real binary (issue #13): a read or a write never
//! leaves the plan, `verify` never claims what it could not read, markdown is read as strictly as
//! JSON, and a named pipe never blocks a command (nor strands the lock).

use crate::common;
use crate::common::{Run, snapshot};
use dwp::plan::model::PlanFormat;
use dwp::synth::SynthPlan;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A command that blocks on a named pipe fails the test instead of hanging it.
const NO_HANG: Duration = Duration::from_secs(20);

fn plan(root: &Path, tasks: usize, done: usize) -> PathBuf {
    SynthPlan::new("PLAN_hostile_files", tasks)
        .completed(done)
        .write(root)
        .unwrap()
}

fn publishable(root: &Path) -> PathBuf {
    common::publishable(root, "PLAN_hostile_publish", 3, PlanFormat::Full)
}

/// `dwp ARGS` with a deadline: a command blocked in `open()` is killed and reported.
fn dwp_bounded(dir: &Path, args: &[&str]) -> Run {
    let output = common::dwp()
        .in_dir(dir)
        .args(args)
        .timeout(NO_HANG)
        .output();
    assert!(
        output.status.code().is_some(),
        "dwp {args:?} was killed after {NO_HANG:?}: it blocked"
    );
    Run::lossy(&output)
}

/// A finding of a verify report: (code, severity, file, message).
type Finding = (String, String, String, String);

/// `dwp verify --format json PLAN`, which must exit `code` (`case` names the case in a
/// failure); the report and its findings.
fn verify_exits(
    dir: &Path,
    plan: &Path,
    code: i32,
    case: &str,
) -> (serde_json::Value, Vec<Finding>) {
    let run = dwp_bounded(dir, &["verify", "--format", "json", plan.to_str().unwrap()]);
    let report = run.payload();
    assert_eq!(run.code, code, "{case}: {}", run.stdout);
    let found = findings(&report);
    (report, found)
}

/// `found` holds a finding of `code` and `severity` naming `file` and saying `says`.
fn assert_reports(found: &[Finding], finding: (&str, &str), file: &str, says: &str, case: &str) {
    assert!(reports(found, finding, file, says), "{case}: {found:?}");
}

/// `dwp COMMAND PLAN ARGS...` (bounded) for `command` = `[COMMAND, ARGS...]`.
fn run_on_plan(dir: &Path, command: &[&str], plan: &Path) -> Run {
    let mut args = vec![command[0], plan.to_str().unwrap()];
    args.extend(&command[1..]);
    dwp_bounded(dir, &args)
}

/// The findings of the one plan of a verify report, as (code, severity, file, message).
fn findings(report: &serde_json::Value) -> Vec<Finding> {
    report["plans"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let text = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            (
                text("code"),
                text("severity"),
                text("file"),
                text("message"),
            )
        })
        .collect()
}

/// Whether a finding of `code` and `severity` names a file containing `file` and says `says`.
fn reports(found: &[Finding], (code, severity): (&str, &str), file: &str, says: &str) -> bool {
    found
        .iter()
        .any(|(c, s, f, m)| c == code && s == severity && f.contains(file) && m.contains(says))
}

/// Move the plan's `name` outside and leave a symlink to it in its place.
fn symlink_outside(plan: &Path, name: &str, outside: &Path) {
    std::fs::rename(plan.join(name), outside.join(name)).unwrap();
    symlink(outside.join(name), plan.join(name)).unwrap();
}

fn task_file(plan: &Path, id: u64) -> PathBuf {
    std::fs::read_dir(plan)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{id}.task_")))
        })
        .expect("the task file")
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("mkfifo");
}

// ---- 1. Writes and reads never leave the plan ----

#[test]
fn finalize_never_writes_the_receipt_through_a_symlinked_analysis_results() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let plan = publishable(root.path());
    let results = plan.join("analysis_results");
    for entry in std::fs::read_dir(&results).unwrap().flatten() {
        std::fs::rename(entry.path(), outside.path().join(entry.file_name())).unwrap();
    }
    std::fs::remove_dir(&results).unwrap();
    symlink(outside.path(), &results).unwrap();
    let (plan_before, outside_before) = (snapshot(&plan), snapshot(outside.path()));

    let run = dwp_bounded(root.path(), &["finalize", plan.to_str().unwrap()]);

    assert_ne!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("outside the plan folder"), "{said}");
    assert_eq!(
        snapshot(outside.path()),
        outside_before,
        "a file was written outside the plan"
    );
    assert_eq!(
        snapshot(&plan),
        plan_before,
        "the refusal wrote into the plan"
    );
}

#[test]
fn verify_reports_plan_files_reached_through_symlinks_leaving_the_plan() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), 3, 1);
    symlink_outside(&plan, "PROGRESS.md", outside.path());

    let (_, found) = verify_exits(root.path(), &plan, 1, "");
    assert_reports(
        &found,
        ("DWP001", "error"),
        "PROGRESS.md",
        "outside the plan folder",
        "",
    );
}

// ---- 2. verify never claims what it could not read: README.md ----

#[test]
fn verify_a_readme_symlinked_outside_the_plan_is_an_error_never_conformant() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), 3, 1);
    symlink_outside(&plan, "README.md", outside.path());

    let (report, found) = verify_exits(root.path(), &plan, 1, "");
    assert_eq!(report["plans"][0]["verdict"], "NOT_CONFORMANT");
    assert_reports(&found, ("DWP001", "error"), "README.md", "", "");
}

#[test]
fn verify_an_oversized_readme_is_an_error_never_conformant() {
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), 3, 1);
    let readme = std::fs::OpenOptions::new()
        .append(true)
        .open(plan.join("README.md"))
        .unwrap();
    // Sparse: no 64 MiB are written.
    readme.set_len(dwp::store::MAX_ARTIFACT_BYTES + 1).unwrap();

    let (_, found) = verify_exits(root.path(), &plan, 1, "");
    assert_reports(&found, ("DWP001", "error"), "", "over the", "");
}

#[test]
fn verify_a_readme_the_os_refuses_to_read_is_unverified() {
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), 3, 1);
    let readme = plan.join("README.md");
    if rustix::process::geteuid().is_root() {
        // Permissions do not stop root: a symlink loop is the OS refusing the read here.
        std::fs::remove_file(&readme).unwrap();
        symlink("README.loop", &readme).unwrap();
        symlink("README.md", plan.join("README.loop")).unwrap();
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&readme, std::fs::Permissions::from_mode(0o000)).unwrap();
    }

    let (report, found) = verify_exits(root.path(), &plan, 5, "");
    assert_eq!(report["plans"][0]["verdict"], "UNVERIFIED");
    assert_reports(&found, ("DWP001", "unverified"), "", "", "");
    assert!(
        !found.iter().any(|(code, ..)| code == "DWP050"),
        "a README that is there is not missing: {found:?}"
    );
}

// ---- 3. task files that are garbage, folders or pipes ----

#[test]
fn verify_a_garbage_task_file_lacks_its_sections() {
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), 3, 1);
    std::fs::write(task_file(&plan, 2), "lorem ipsum\n\x0c%%%\n").unwrap();

    let (_, found) = verify_exits(root.path(), &plan, 1, "");
    assert!(
        found
            .iter()
            .any(|(code, _, file, _)| code == "DWP057" && file.contains("2.task_")),
        "{found:?}"
    );
}

#[test]
fn verify_a_task_file_that_is_a_folder_or_a_pipe_is_an_error_and_never_blocks() {
    for kind in ["folder", "named pipe"] {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path(), 3, 1);
        let file = task_file(&plan, 2);
        std::fs::remove_file(&file).unwrap();
        if kind == "folder" {
            std::fs::create_dir(&file).unwrap();
        } else {
            mkfifo(&file);
        }

        let (_, found) = verify_exits(root.path(), &plan, 1, kind);
        assert_reports(
            &found,
            ("DWP001", "error"),
            "2.task_",
            "not a regular file",
            kind,
        );
    }
}

// ---- 4. Invalid UTF-8 ----

/// A byte that is never UTF-8, spliced into the task heading's title.
fn corrupt(path: &Path, after: &str) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes
        .windows(after.len())
        .position(|w| w == after.as_bytes())
        .unwrap_or_else(|| panic!("{} lacks {after:?}", path.display()))
        + after.len();
    bytes.insert(at, 0xff);
    std::fs::write(path, bytes).unwrap();
}

/// Corrupt task 2's title in `file`: `README.md` (its index line) or `task` (its task file).
/// The path corrupted.
fn corrupt_title_of_task_2(plan: &Path, file: &str) -> PathBuf {
    let path = if file == "task" {
        task_file(plan, 2)
    } else {
        plan.join(file)
    };
    corrupt(&path, "Task 2: ");
    path
}

#[test]
fn verify_invalid_utf8_in_markdown_is_an_error_naming_file_and_line() {
    for file in ["README.md", "task"] {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path(), 3, 1);
        let path = corrupt_title_of_task_2(&plan, file);
        let text = std::fs::read(&path).unwrap();
        let line = 1 + text[..text.iter().position(|&b| b == 0xff).unwrap()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();

        let (_, found) = verify_exits(root.path(), &plan, 1, file);
        // Named from where dwp runs, the folder holding the plan.
        let from_here = path.strip_prefix(root.path()).unwrap();
        assert_reports(
            &found,
            ("DWP001", "error"),
            from_here.to_str().unwrap(),
            &format!("not valid UTF-8 (the first invalid byte is on line {line})"),
            file,
        );
    }
}

#[test]
fn writers_refuse_invalid_utf8_markdown_and_change_no_byte() {
    let cases: [(&str, &[&str]); 3] = [
        ("README.md", &["reconcile", "--write"]),
        ("task", &["reconcile", "--write"]),
        (
            "README.md",
            &["update", "--task", "2", "--status", "in_progress"],
        ),
    ];
    for (file, command) in cases {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path(), 3, 1);
        let path = corrupt_title_of_task_2(&plan, file);
        let before = snapshot(&plan);
        let run = run_on_plan(root.path(), command, &plan);

        assert_eq!(run.code, 1, "{file} {command:?}: {}", run.stderr);
        let from_here = path.strip_prefix(root.path()).unwrap();
        assert!(
            run.stderr.contains("not valid UTF-8")
                && run.stderr.contains(from_here.to_str().unwrap()),
            "{file} {command:?}: {}",
            run.stderr
        );
        assert_eq!(snapshot(&plan), before, "{file} {command:?} changed a byte");
    }
}

#[test]
fn init_refuses_invalid_utf8_markdown_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), 3, 0);
    std::fs::remove_file(plan.join("state.json")).unwrap();
    std::fs::remove_file(plan.join("manifest.json")).unwrap();
    corrupt(&task_file(&plan, 1), "Task 1: ");
    let before = snapshot(&plan);

    let run = dwp_bounded(root.path(), &["init", plan.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("not valid UTF-8"), "{}", run.stderr);
    assert_eq!(snapshot(&plan), before);
}

// ---- 5. No hang, no stranded lock ----

#[test]
fn a_named_pipe_in_place_of_a_plan_file_is_refused_without_blocking_or_a_stranded_lock() {
    let commands: [&[&str]; 5] = [
        &["update", "--task", "2", "--status", "in_progress"],
        &["reconcile", "--write"],
        &["finalize"],
        &["status"],
        &[
            "amend",
            "--task",
            "1",
            "--original",
            "o",
            "--observed",
            "b",
            "--disposition",
            "revised-criterion",
            "--revised",
            "r2",
            "--reason",
            "r",
            "--authority",
            "user",
            "--affected",
            "1",
        ],
    ];
    for name in ["state.json", "PROGRESS.md", "README.md"] {
        for command in commands {
            let root = tempfile::tempdir().unwrap();
            let plan = plan(root.path(), 3, 1);
            mkfifo(&plan.join(name));
            let run = run_on_plan(root.path(), command, &plan);

            if name != "state.json" && command[0] == "status" {
                // status reads neither PROGRESS.md nor (for a plan with state) needs the
                // README whole; it must still not block.
                continue;
            }
            assert_eq!(
                run.code, 1,
                "{name} {command:?}: {}{}",
                run.stdout, run.stderr
            );
            assert!(
                run.stderr.contains("is a named pipe, not a regular file"),
                "{name} {command:?}: {}",
                run.stderr
            );
            assert!(
                !plan.join("state.json.lock").exists(),
                "{name} {command:?} left the lock behind"
            );
        }
    }
}
