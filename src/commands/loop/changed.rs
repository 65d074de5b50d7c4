//! The changed files `file-changed` and `pattern-absent` are decided from: `git diff` against a
//! revision, or a list. Every path stays inside the worktree.
//!
//! From git: the files that differ between the merge base of REV and HEAD and the working tree
//! (`git diff --name-only --relative --merge-base REV`): what the pull request shows, plus
//! anything the worker changed and has not committed yet, relative to the worktree (which may be
//! a folder of a larger repository). Content is read from the working tree. Untracked files
//! are not counted (`git diff` does not list them), and neither is a submodule whose own
//! worktree is dirty (`--ignore-submodules=dirty`: judging it would run git inside it).
//!
//! The worktree is the worker's, its git configuration included: git runs through
//! [`crate::store::git::Git`], which runs no program the repository names.

use crate::error::{Error, Result};
use crate::store::git::Git;
use std::path::Path;

/// Where the changed files come from.
#[derive(Debug, Clone)]
pub enum ChangedSource {
    /// `--changed-from REV`.
    Git(String),
    /// `--changed-files FILE`: one worktree-relative path per line.
    List(std::path::PathBuf),
}

impl ChangedSource {
    pub fn describe(&self) -> String {
        match self {
            ChangedSource::Git(rev) => format!("git diff --merge-base {rev}"),
            ChangedSource::List(path) => format!(
                "listed in {}",
                path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into_owned()
                )
            ),
        }
    }
}

/// The changed files, worktree-relative, sorted and unique.
pub fn changed_files(worktree: &Path, source: &ChangedSource) -> Result<Vec<String>> {
    let mut files = match source {
        ChangedSource::Git(rev) => from_git(worktree, rev)?,
        ChangedSource::List(path) => from_list(path)?,
    };
    files.sort();
    files.dedup();
    Ok(files)
}

fn from_list(path: &Path) -> Result<Vec<String>> {
    let bytes = super::read_input(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        super::rejected_at(path, "line 1", format!("not UTF-8: {e}"))
            .with_hint("the list is UTF-8 text, one worktree-relative path per line")
    })?;
    let mut files = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let relative = line.strip_prefix("./").unwrap_or(line);
        if !super::is_inside_relative(relative) {
            return Err(super::rejected_at(
                path,
                &format!("line {}", n + 1),
                format!("`{line}` escapes the worktree"),
            )
            .with_hint("list paths relative to the worktree root, one per line, without `..` or a leading `/`"));
        }
        files.push(relative.to_owned());
    }
    Ok(files)
}

fn from_git(worktree: &Path, rev: &str) -> Result<Vec<String>> {
    let place = format!("{}: --changed-from", worktree.display());
    if rev.is_empty() || rev.starts_with('-') {
        return Err(Error::rejected(place, format!("`{rev}` is not a revision"))
            .with_hint("pass the pull request's base (a branch, tag or commit)"));
    }
    let git = Git::open(worktree).map_err(cannot_run)?;
    let verify = git.verify_commit(rev).map_err(cannot_run)?;
    if !verify.status.success() {
        return Err(Error::rejected(
            place,
            format!("`{rev}` is not a commit of the repository at the worktree"),
        )
        .with_hint(
            "pass the pull request's base (a branch, tag or commit), or --changed-files FILE",
        ));
    }
    let diff = git
        .output([
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--relative",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=dirty",
            "--merge-base",
            rev,
            "--",
        ])
        .map_err(cannot_run)?;
    if !diff.status.success() {
        return Err(Error::Unverified {
            message: format!(
                "git diff failed: {}",
                String::from_utf8_lossy(&diff.stderr).trim()
            ),
            place,
        });
    }
    diff.stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| {
            String::from_utf8(name.to_vec()).map_err(|_| {
                Error::rejected(
                    place.clone(),
                    format!(
                        "a changed path is not UTF-8: {}",
                        String::from_utf8_lossy(name)
                    ),
                )
                .with_hint("dwp matches globs and reads files by UTF-8 paths; rename the file")
            })
        })
        .collect()
}

fn cannot_run(e: std::io::Error) -> Error {
    Error::Unverified {
        message: format!("cannot run git: {e}"),
        place: "--changed-from".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_entry_escaping_the_worktree_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("changed.txt");
        std::fs::write(&list, "src/a.rs\n./b.md\n\n../../etc/passwd\n").unwrap();
        let error = changed_files(dir.path(), &ChangedSource::List(list)).unwrap_err();
        assert!(error.to_string().contains("changed.txt: line 4"), "{error}");
    }

    #[test]
    fn a_list_is_sorted_unique_and_relative() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("changed.txt");
        std::fs::write(&list, "src/b.rs\r\n./src/a.rs\nsrc/b.rs\n").unwrap();
        let files = changed_files(dir.path(), &ChangedSource::List(list)).unwrap();
        assert_eq!(files, ["src/a.rs", "src/b.rs"]);
    }
}
