//! Who touches files, held to the code (docs/ARCHITECTURE.md, "How data flows"), by reading the
//! source outside `#[cfg(test)] mod tests`:
//!
//! - only `src/store/` opens files: every read and write of a plan file resolves each path
//!   component beneath the plan folder there, and nowhere else;
//! - rules read a plan only through the loaded plan (`plan::LoadedPlan`), never through the
//!   store, so each file is read once per command;
//! - only `steps::commit` calls the store's writers, so every write of a plan folder is a planned
//!   change.
//!
//! Each fails on any use that is not one of the few listed with its reason, so a new one is a
//! decision someone makes, not an accident.

use crate::common;

/// Uses outside the store that open no plan file, each with why.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "src/commands/contract/check.rs",
        "std::fs::read(path)",
        "repository files a file contract names (root-relative, resolved by contract::paths)",
    ),
    (
        "src/commands/contract/declare.rs",
        "std::fs::File::open(path)",
        "repository files a declaration snapshots (root-relative, resolved by contract::paths)",
    ),
    (
        "src/synth.rs",
        "std::fs::",
        "the synthetic plan generator of tests and benchmarks: it writes a new folder of its own",
    ),
];

/// The standard library's ways to open a file or folder by path.
const OPENERS: &[&str] = &[
    "std::fs::read(",
    "std::fs::read_to_string(",
    "std::fs::write(",
    "std::fs::read_dir(",
    "std::fs::remove_file(",
    "std::fs::remove_dir",
    "std::fs::rename(",
    "std::fs::create_dir",
    "std::fs::copy(",
    "std::fs::File::open(",
    "std::fs::File::create(",
    "File::open(",
    "File::create(",
    "OpenOptions::new(",
    "fs::read(",
    "fs::write(",
    "fs::read_to_string(",
    "fs::read_dir(",
    "fs::remove_file(",
    "fs::rename(",
    "fs::create_dir",
];

/// Each line of code (not a comment, not a unit test) of the source files under `src/` whose
/// path starts with `under`: (file relative to the repository, line number, line).
fn code_lines(under: &str) -> Vec<(String, usize, String)> {
    let root = &common::repo_root();
    let mut files = Vec::new();
    common::rust_files(&root.join("src"), &mut files);
    let mut lines = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if !relative.starts_with(under) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // Unit tests build their own fixtures with std::fs.
        let code = text
            .find("#[cfg(test)]\nmod tests")
            .map_or(text.as_str(), |at| &text[..at]);
        for (number, line) in code.lines().enumerate() {
            if !line.trim_start().starts_with("//") {
                lines.push((relative.clone(), number + 1, line.to_owned()));
            }
        }
    }
    lines
}

/// The lines of `lines` that use one of `uses`, unless `allowed` lists the file and the use.
fn uses_outside(
    lines: &[(String, usize, String)],
    uses: &[&str],
    allowed: &[(&str, &str, &str)],
) -> Vec<String> {
    let mut found = Vec::new();
    for (file, number, line) in lines {
        let Some(used) = uses.iter().find(|u| line.contains(*u)) else {
            continue;
        };
        let permitted = allowed
            .iter()
            .any(|(path, what, _)| path == file && line.contains(what));
        if !permitted {
            found.push(format!("{file}:{number}: {used} in `{}`", line.trim()));
        }
    }
    found
}

#[test]
fn only_the_store_opens_files() {
    let outside_store: Vec<_> = code_lines("src/")
        .into_iter()
        .filter(|(file, _, _)| !file.starts_with("src/store/"))
        .collect();
    let found = uses_outside(&outside_store, OPENERS, ALLOWED);
    assert!(
        found.is_empty(),
        "files opened outside src/store/ (go through store::read_artifact, read_text, \
         open_regular, open_append, write_atomic, append_line, create_dir, remove_file, \
         list_dir; or list the use in ALLOWED with its reason):\n{}",
        found.join("\n")
    );
}

/// The store's ways to read a file or look at the disk, and the standard library's.
const READERS: &[&str] = &[
    "store::read_artifact",
    "store::read_artifacts",
    "store::read_text",
    "store::place(",
    "store::entry(",
    "store::list_dir",
    "store::list_entries",
    "store::open_regular",
    "PlanFolder::open",
    "intent::pending",
    "lock_dir::inspect",
    "store::is_folder",
    "store::in_git_work_tree",
    "std::fs::",
    ".exists()",
    ".is_dir()",
    ".is_file()",
];

/// The store's writers: who calls them writes a file.
const WRITERS: &[&str] = &[
    "write_atomic(",
    "append_line(",
    "store::create_dir(",
    "store::remove_file(",
    "store::rename_file(",
    "open_append(",
    "Transaction::new(",
];

/// Writes outside `steps::commit`, each with why it is not a plan folder's planned change.
const WRITES_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "src/commands/contract/ledger.rs",
        "open_append(",
        "the file contract's ledger: append-only, one line at a time under its own flock",
    ),
    (
        "src/commands/loop/prove.rs",
        "write_atomic(",
        "the loop's proofs and logs, in the worker's worktree (`.ak-loop/`), not a plan folder",
    ),
    (
        "src/commands/loop/prove.rs",
        "store::create_dir(",
        "the worktree's `.ak-loop/` folder",
    ),
    (
        "src/commands/new.rs",
        "store::create_dir(",
        "`.dwp/plans/` at a repository root, the folder `dwp new` renames a plan into, not a plan",
    ),
    (
        "src/commands/loop/issue.rs",
        "write_atomic(",
        "`dwp loop freeze` stamps the issue's list, a file the orchestrator names, not a plan's",
    ),
];

#[test]
fn rules_read_plans_only_through_the_loaded_plan() {
    let found = uses_outside(&code_lines("src/rules/"), READERS, &[]);
    assert!(
        found.is_empty(),
        "a rule reads a file itself (read it through plan::LoadedPlan: read, read_text, place, \
         entry, list, markdown...):\n{}",
        found.join("\n")
    );
}

#[test]
fn only_commit_writes_plan_files() {
    let outside: Vec<_> = code_lines("src/")
        .into_iter()
        .filter(|(file, _, _)| !file.starts_with("src/store/") && file != "src/steps/commit.rs")
        .collect();
    let found = uses_outside(&outside, WRITERS, WRITES_ALLOWED);
    assert!(
        found.is_empty(),
        "a plan file written outside steps::commit (plan a steps::commit::Change and commit it; \
         or list the use in WRITES_ALLOWED with its reason):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_allowed_uses_are_still_there() {
    // An entry that no longer matches anything is stale: remove it rather than keep a permit.
    let root = &common::repo_root();
    for (path, what, why) in ALLOWED.iter().chain(WRITES_ALLOWED) {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        assert!(text.contains(what), "{path}: `{what}` ({why}) is gone");
    }
}
