//! Loop contracts: the `.ak-loop/` phase artifacts a worker leaves in its worktree
//! and the two-list definition of done a harness judges (seeds 000, 001 and 004).
//!
//! - [`artifacts`]: `dwp loop artifacts`: present, missing or invalid, file by file;
//! - [`config`]: the `dod` section of `loop.config.yaml` (the project's list);
//! - [`contract`]: the issue's list, and `dwp loop freeze` (sha256 over canonical JSON);
//! - [`proofs`]: the `verify.json` and `dod.json` formats and their strict reading;
//! - [`changed`]: the changed files, from git or a list, kept inside the worktree;
//! - [`dod`]: `dwp loop dod`: proven, missing ("prove it") or failed ("fix it"), item by item;
//! - [`prove`]: `dwp loop prove`: the worker runs the command items (argv, no shell, with a
//!   timeout, with the minimal environment of `steps::command_env`, through `steps::process`) and
//!   records what dwp observed;
//! - [`gates`]: `verify.json` outcomes as plan gate records (`dwp update --gates-from`).

pub mod artifacts;
pub mod changed;
pub mod config;
pub mod dod;
pub mod gates;
pub mod issue;
pub mod loop_schema;
pub mod proofs;
pub mod prove;

use crate::error::{Error, Result};
use crate::store::ReadFailure;
use std::path::{Component, Path, PathBuf};

/// The folder of the phase artifacts, at the worktree root.
pub const LOOP_DIR: &str = ".ak-loop";
/// Where `dwp loop prove` keeps the full output of every command it ran.
pub const LOGS_DIR: &str = ".ak-loop/logs";
pub const PLAN_MD: &str = ".ak-loop/plan.md";
pub const VERIFY_JSON: &str = ".ak-loop/verify.json";
pub const DOD_JSON: &str = ".ak-loop/dod.json";
/// The mark of a proof dwp observed itself, as opposed to one the worker wrote by hand.
pub const OBSERVED_BY_DWP: &str = "dwp";

/// The two lists of the definition of done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum List {
    /// `dod.items` in `loop.config.yaml`: the same for every issue.
    Project,
    /// The frozen contract's outcomes: true only of this issue.
    Issue,
}

impl List {
    pub fn name(self) -> &'static str {
        match self {
            List::Project => "project",
            List::Issue => "issue",
        }
    }

    /// The key of this list in `dod.json`.
    pub fn dod_key(self) -> &'static str {
        match self {
            List::Project => "project",
            List::Issue => "outcomes",
        }
    }
}

/// A worktree-relative path is safe when it is relative and never climbs out (`..`).
pub fn is_inside_relative(path: &str) -> bool {
    let path = Path::new(path);
    !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Read `relative` inside `worktree`: every symlink on the way must resolve inside it (a read
/// must not leave the worktree a harness pointed dwp at), bounded like every artifact read.
pub fn read_inside(worktree: &Path, relative: &str) -> Result<Vec<u8>, ReadFailure> {
    let path = worktree.join(relative);
    let root = std::fs::canonicalize(worktree).map_err(ReadFailure::Io)?;
    match std::fs::canonicalize(&path) {
        Ok(resolved) if !resolved.starts_with(&root) => return Err(ReadFailure::Escapes(resolved)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadFailure::Missing),
        Err(e) => return Err(ReadFailure::Io(e)),
    }
    crate::store::read_artifact(&path, worktree)
}

/// The worktree as given, refused unless it is a directory.
pub fn worktree_dir(worktree: &Path) -> Result<PathBuf> {
    match std::fs::metadata(worktree) {
        Ok(meta) if meta.is_dir() => Ok(worktree.to_path_buf()),
        Ok(_) => Err(Error::rejected(
            worktree.display().to_string(),
            "the worktree is not a directory",
        )
        .with_hint("pass the worker's worktree root folder")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::rejected(
            worktree.display().to_string(),
            "the worktree does not exist",
        )
        .with_hint("pass the worker's worktree root, or --no-worktree when there is none")),
        Err(e) => Err(Error::io("stat", worktree, e)),
    }
}

/// A refusal naming a file and a field: `(<file>: <field>)` in the one-line error.
pub(crate) fn rejected_at(file: &Path, field: &str, message: impl Into<String>) -> Error {
    Error::rejected(format!("{}: {field}", file.display()), message)
}

/// Read a small input file dwp is told about (config, contract, list), bounded, never a
/// directory or a device.
pub(crate) fn read_input(path: &Path) -> Result<Vec<u8>> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // The input is named on the command line, so a symlink may point anywhere: resolve it first.
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let root = resolved.parent().map(Path::to_path_buf).unwrap_or(dir);
    crate::store::read_artifact(&resolved, &root).map_err(|failure| match failure {
        ReadFailure::Io(e) => Error::io("read", path, e),
        ReadFailure::Missing => Error::rejected(path.display().to_string(), "file not found")
            .with_hint("check the path given on the command line"),
        other => Error::rejected(path.display().to_string(), other.to_string())
            .with_hint("pass a regular file"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_escaping_the_worktree_are_not_inside() {
        assert!(is_inside_relative("src/main.rs"));
        assert!(is_inside_relative("./README.md"));
        for escaping in ["../x", "/etc/passwd", "a/../../x", "a/..", ""] {
            assert!(!is_inside_relative(escaping), "{escaping}");
        }
    }

    #[test]
    fn reads_through_a_symlinked_folder_leaving_the_worktree_are_refused() {
        let outside = tempfile::tempdir().unwrap();
        let worktree = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), worktree.path().join("link")).unwrap();
        let read = read_inside(worktree.path(), "link/secret.txt");
        assert!(matches!(read, Err(ReadFailure::Escapes(_))), "{read:?}");
        assert!(matches!(
            read_inside(worktree.path(), "nope.txt"),
            Err(ReadFailure::Missing)
        ));
    }
}
