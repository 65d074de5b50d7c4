//! Paths in a contract are relative to the repository root, `/`-separated, and never leave it.
//!
//! The root itself is stored relative to the plan folder (`../../..` in the usual
//! `ROOT/.dwp/plans/PLAN_x` layout) and resolved when the declaration is read, so a clone, a moved
//! checkout or a git worktree checks its own files. A declaration written before #13 holds an
//! absolute root; it is still read as it is.
//!
//! A path is resolved lexically (`.` and `..`), then the deepest part of it that exists is
//! canonicalized, so that neither `..` nor a symlinked folder can point outside the root. The
//! file itself need not exist (a `create` before it happens, a `delete` after).

use crate::error::{Error, Result};
use std::path::{Component, Path, PathBuf};

/// The repository root: `--root` if given, else the folder holding `.dwp/plans/PLAN_x`.
pub fn default_root(plan_dir: &Path, root: Option<&Path>) -> Result<PathBuf> {
    let root = match root {
        Some(root) => root.to_path_buf(),
        None => layout_root(plan_dir).ok_or_else(|| {
            Error::rejected(
                plan_dir.display().to_string(),
                "cannot tell the repository root: the plan folder is not in ROOT/.dwp/plans/",
            )
            .with_hint("pass --root DIR")
        })?,
    };
    canonical_root(&root)
}

fn layout_root(plan_dir: &Path) -> Option<PathBuf> {
    let plan = std::fs::canonicalize(plan_dir).ok()?;
    let plans = plan.parent()?;
    let dwp = plans.parent()?;
    (plans.file_name()? == "plans" && dwp.file_name()? == ".dwp")
        .then(|| dwp.parent())?
        .map(Path::to_path_buf)
}

/// The root as an absolute canonical path (every stored path is relative to it).
pub fn canonical_root(root: &Path) -> Result<PathBuf> {
    canonical_root_unhinted(root).map_err(|e| {
        e.with_hint("--root names the repository folder the contract's paths are relative to")
    })
}

fn canonical_root_unhinted(root: &Path) -> Result<PathBuf> {
    let canonical = std::fs::canonicalize(root).map_err(|e| {
        Error::rejected(
            root.display().to_string(),
            format!("the repository root cannot be opened: {e}"),
        )
    })?;
    if !canonical.is_dir() {
        return Err(Error::rejected(
            root.display().to_string(),
            "the repository root is not a folder",
        ));
    }
    if canonical.to_str().is_none() {
        return Err(Error::rejected(
            root.display().to_string(),
            "the repository root is not UTF-8",
        ));
    }
    Ok(canonical)
}

/// The root as a declaration stores it: the way from the plan folder to `root` (both resolved),
/// `..` first, `/`-separated; `.` when they are the same folder.
pub fn stored_root(plan_dir: &Path, root: &Path) -> Result<String> {
    let plan = std::fs::canonicalize(plan_dir).map_err(|e| Error::io("resolve", plan_dir, e))?;
    let shared = plan
        .components()
        .zip(root.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = (shared..plan.components().count()).map(|_| "..".to_owned());
    let downs = root
        .components()
        .skip(shared)
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    let parts: Vec<String> = ups.chain(downs).collect();
    Ok(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

/// The root a declaration names, resolved now: relative to the plan folder, or absolute as
/// written before #13.
pub fn declared_root(plan_dir: &Path, stored: &str) -> Result<PathBuf> {
    if Path::new(stored).is_absolute() {
        return canonical_root(Path::new(stored));
    }
    let plan = std::fs::canonicalize(plan_dir).map_err(|e| Error::io("resolve", plan_dir, e))?;
    canonical_root(&plan.join(stored)).map_err(|e| {
        e.with_hint("the declared root is relative to the plan folder: re-declare with --replace --root DIR")
    })
}

/// A stored root is absolute (before #13), `.`, or `..` steps followed by plain names.
pub fn is_stored_root(root: &str) -> bool {
    if root.starts_with('/') {
        return !root.contains('\0');
    }
    if root == "." {
        return true;
    }
    let parts: Vec<&str> = root.split('/').collect();
    let ups = parts.iter().take_while(|p| **p == "..").count();
    parts[ups..]
        .iter()
        .all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.contains('\0'))
}

/// `raw` (absolute, or relative to `base`) as a path relative to `root`, or why not.
/// `place` names where the path came from in the error.
pub fn relative_to_root(root: &Path, base: &Path, raw: &str, place: &str) -> Result<String> {
    let outside = || {
        Error::rejected(
            place,
            format!("`{raw}` is outside the repository {}", root.display()),
        )
        .with_hint("contract paths are files inside the repository root (--root)")
    };
    if raw.is_empty() || raw.contains('\0') {
        return Err(Error::rejected(
            place,
            "an empty path, or one with a NUL byte",
        ));
    }
    let joined = base.join(raw);
    let lexical = normalize(&joined).ok_or_else(outside)?;
    let real = canonical_prefix(&lexical);
    let relative = real.strip_prefix(root).map_err(|_| outside())?;
    let text = relative.to_str().ok_or_else(|| {
        Error::rejected(place, format!("`{raw}` is not UTF-8"))
            .with_hint("contract paths are stored as UTF-8 JSON strings")
    })?;
    if text.is_empty() {
        return Err(Error::rejected(
            place,
            format!("`{raw}` is the repository root itself, not a file"),
        )
        .with_hint("name a file inside the repository"));
    }
    Ok(text.to_owned())
}

/// A stored relative path must already be in the form [`relative_to_root`] gives.
pub fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// Resolve `.` and `..` without touching the disk; `None` if `..` climbs above `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(part) => out.push(part),
        }
    }
    Some(out)
}

/// Canonicalize the deepest existing ancestor of `path` (symlinks resolved) and append the rest.
/// The last component is kept as named, so a file that is itself a symlink keeps its name.
fn canonical_prefix(path: &Path) -> PathBuf {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return path.to_path_buf();
    };
    let mut rest = vec![name.to_os_string()];
    let mut cursor = parent.to_path_buf();
    loop {
        if let Ok(real) = std::fs::canonicalize(&cursor) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (cursor.parent(), cursor.file_name()) {
            (Some(up), Some(part)) => {
                rest.push(part.to_os_string());
                cursor = up.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_escaping_the_root_are_refused() {
        let repo = tempfile::tempdir().unwrap();
        let root = canonical_root(repo.path()).unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        let ok = relative_to_root(&root, &root, "src/./new/../a.rs", "--modify").unwrap();
        assert_eq!(ok, "src/a.rs");
        let abs = root.join("src/b.rs");
        let ok = relative_to_root(&root, Path::new("/"), abs.to_str().unwrap(), "x").unwrap();
        assert_eq!(ok, "src/b.rs");
        for bad in ["../x", "src/../../x", "/etc/passwd", "", "."] {
            assert!(relative_to_root(&root, &root, bad, "x").is_err(), "{bad}");
        }
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        assert!(relative_to_root(&root, &root, "link/secret.rs", "x").is_err());
    }

    #[test]
    fn the_root_is_stored_relative_to_the_plan_folder_and_resolves_back() {
        let repo = tempfile::tempdir().unwrap();
        let root = canonical_root(repo.path()).unwrap();
        let plan = root.join(".dwp/plans/PLAN_a");
        std::fs::create_dir_all(&plan).unwrap();
        assert_eq!(stored_root(&plan, &root).unwrap(), "../../..");
        assert_eq!(declared_root(&plan, "../../..").unwrap(), root);
        assert_eq!(stored_root(&root, &root).unwrap(), ".");
        let sibling = root.join("elsewhere");
        std::fs::create_dir(&sibling).unwrap();
        let stored = stored_root(&plan, &sibling).unwrap();
        assert_eq!(stored, "../../../elsewhere");
        assert_eq!(declared_root(&plan, &stored).unwrap(), sibling);
    }

    #[test]
    fn a_stored_root_is_absolute_or_climbs_then_descends() {
        for good in ["/r", ".", "..", "../../..", "../x/y"] {
            assert!(is_stored_root(good), "{good}");
        }
        for bad in ["", "x/../y", "../", "./x", "a//b", "../x/.."] {
            assert!(!is_stored_root(bad), "{bad}");
        }
    }

    #[test]
    fn stored_paths_must_be_plain_relative() {
        assert!(is_plain_relative("src/a.rs"));
        for bad in ["", "/a", "a//b", "a/./b", "../a", "a/.."] {
            assert!(!is_plain_relative(bad), "{bad}");
        }
    }
}
