//! Only `src/store/` opens files (issue #13): every read and write of a plan file resolves each
//! path component beneath the plan folder there, and nowhere else. This test reads the source
//! (outside `#[cfg(test)] mod tests`) for the standard library's ways of opening a file by path,
//! and fails on any use outside the store that is not one of the few listed below with its
//! reason, so a new one is a decision someone makes, not an accident.

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

#[test]
fn only_the_store_opens_files() {
    let root = &common::repo_root();
    let mut files = Vec::new();
    common::rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if relative.starts_with("src/store/") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // Unit tests build their own fixtures with std::fs.
        let code = text
            .find("#[cfg(test)]\nmod tests")
            .map_or(text.as_str(), |at| &text[..at]);
        for (number, line) in code.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                continue;
            }
            let Some(opener) = OPENERS.iter().find(|o| line.contains(*o)) else {
                continue;
            };
            let allowed = ALLOWED
                .iter()
                .any(|(path, what, _)| *path == relative && line.contains(what));
            if !allowed {
                found.push(format!(
                    "{relative}:{}: {opener} in `{}`",
                    number + 1,
                    trimmed
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "files opened outside src/store/ (go through store::read_artifact, read_text, \
         open_regular, open_append, write_atomic, append_line, create_dir, remove_file, \
         list_dir; or list the use in ALLOWED with its reason):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_allowed_uses_are_still_there() {
    // An entry that no longer matches anything is stale: remove it rather than keep a permit.
    let root = &common::repo_root();
    for (path, what, why) in ALLOWED {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        assert!(text.contains(what), "{path}: `{what}` ({why}) is gone");
    }
}
