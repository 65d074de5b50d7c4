//! `dwp contract check`: the declaration against disk and ledger, every failed expectation
//! named with its path, op and what is wrong, so the agent's next step is a direct fix.
//!
//! - create: the file exists, and did not when the task was declared;
//! - modify: it exists, the ledger holds an edit of it since the declaration, and its bytes
//!   differ from the declaration's snapshot;
//! - delete: it is gone, and existed when the task was declared;
//! - every required symbol appears in the file as a whole word (not inside a longer name).

use super::format::{Declaration, Expected};
use super::{Op, PlanTasks, TaskFiles, ledger, paths};
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;

/// Largest file searched for symbols.
const MAX_SEARCHED_BYTES: u64 = 64 * 1024 * 1024;

/// The verdict on one expected file.
#[derive(Debug, Clone, Serialize)]
pub struct ExpectationResult {
    pub path: String,
    pub op: Op,
    pub required: Vec<String>,
    pub ok: bool,
    pub problems: Vec<String>,
}

/// The verdict on a task's contract.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub plan: String,
    pub task: u64,
    pub declaration: String,
    pub declared_at: String,
    pub passed: bool,
    pub ledger_entries: usize,
    pub expectations: Vec<ExpectationResult>,
    pub warnings: Vec<String>,
}

impl CheckReport {
    /// Each failed expectation as `path (op): problem`.
    pub fn failures(&self) -> Vec<String> {
        self.expectations
            .iter()
            .flat_map(|e| {
                e.problems
                    .iter()
                    .map(move |p| format!("{} ({}): {p}", e.path, e.op))
            })
            .collect()
    }
}

/// What a check found to check.
#[derive(Debug, Clone)]
pub enum CheckOutcome {
    /// No task in progress and no `--task`.
    NoTask,
    /// The task declares no files.
    Undeclared {
        task: u64,
        file: String,
    },
    Checked(CheckReport),
}

impl CheckOutcome {
    /// Whether the check passes: nothing in progress passes, an undeclared task passes unless
    /// a declaration is required, a checked one passes when every expected file does.
    pub fn passed(&self, require_declaration: bool) -> bool {
        match self {
            CheckOutcome::NoTask => true,
            CheckOutcome::Undeclared { .. } => !require_declaration,
            CheckOutcome::Checked(report) => report.passed,
        }
    }
}

/// Check the contract of `--task N`, or of the task in progress.
pub fn check(target: &Path, task: Option<u64>) -> Result<(CheckOutcome, PlanTasks)> {
    let plan_dir = super::plan_dir(target)?;
    let tasks = PlanTasks::load(&plan_dir)?;
    let outcome = check_loaded(&plan_dir, &tasks, task)?;
    Ok((outcome, tasks))
}

/// [`check`] once the state is read.
pub fn check_loaded(plan_dir: &Path, tasks: &PlanTasks, task: Option<u64>) -> Result<CheckOutcome> {
    let Some(task) = tasks.select(task)? else {
        return Ok(CheckOutcome::NoTask);
    };
    let files = TaskFiles::new(plan_dir, task);
    let Some(declaration) = super::format::load_declaration(&files.expected, plan_dir, task)?
    else {
        return Ok(CheckOutcome::Undeclared {
            task,
            file: files.expected.display().to_string(),
        });
    };
    if declaration.plan != tasks.plan {
        return Err(Error::rejected(
            format!("{}: $.plan", files.expected.display()),
            format!(
                "declares plan {}, but this plan is {}",
                declaration.plan, tasks.plan
            ),
        )
        .with_hint(super::format::redeclare_hint(
            plan_dir,
            task,
            "for this plan",
        )));
    }
    let read = ledger::read(plan_dir, &files.ledger, declaration.ledger_offset, task)?;
    let root = paths::declared_root(plan_dir, &declaration.root)?;
    Ok(CheckOutcome::Checked(judge(
        &declaration,
        &root,
        &files,
        read,
    )?))
}

fn judge(
    declaration: &Declaration,
    root: &Path,
    files: &TaskFiles,
    read: ledger::LedgerRead,
) -> Result<CheckReport> {
    let touched: HashSet<&str> = read.entries.iter().map(|e| e.path.as_str()).collect();
    let expectations: Vec<ExpectationResult> = declaration
        .files_expected
        .iter()
        .map(|expected| {
            let problems = problems(root, expected, &touched)?;
            Ok(ExpectationResult {
                path: expected.path.clone(),
                op: expected.op,
                required: expected.required.clone(),
                ok: problems.is_empty(),
                problems,
            })
        })
        .collect::<Result<_>>()?;
    Ok(CheckReport {
        plan: declaration.plan.clone(),
        task: declaration.task,
        declaration: files.expected.display().to_string(),
        declared_at: declaration.declared_at.clone(),
        passed: expectations.iter().all(|e| e.ok),
        ledger_entries: read.entries.len(),
        expectations,
        warnings: read.warnings,
    })
}

/// Everything wrong with one expected file, in words.
fn problems(root: &Path, expected: &Expected, touched: &HashSet<&str>) -> Result<Vec<String>> {
    if paths::relative_to_root(root, root, &expected.path, "").is_err() {
        return Ok(vec![format!(
            "now resolves outside the repository {} (a symlinked folder?)",
            root.display()
        )]);
    }
    let full = root.join(&expected.path);
    let exists = match std::fs::metadata(&full) {
        Ok(meta) if meta.is_file() => true,
        Ok(_) => return Ok(vec!["is not a regular file".into()]),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(Error::io("stat", &full, e)),
    };
    if exists && let Some(problem) = leads_outside(root, &full)? {
        return Ok(vec![problem]);
    }
    let mut found = Vec::new();
    match expected.op {
        Op::Create => {
            if !exists {
                found.push("does not exist: it was to be created".into());
            }
            if expected.before.exists {
                found.push(
                    "already existed when the task was declared: this task did not create it"
                        .into(),
                );
            }
        }
        Op::Modify if !exists => found.push("does not exist: it was to be modified".into()),
        Op::Modify => {
            if !touched.contains(expected.path.as_str()) {
                found.push("no recorded edit since the declaration: the ledger holds no Write or Edit of it (edit it with a recorded tool, or `dwp contract record --path`)".into());
            }
            let now = super::declare::sha256_file(&full)?;
            if expected.before.sha256.as_deref() == Some(now.as_str()) {
                found.push(format!(
                    "content unchanged since the declaration (sha256 {})",
                    &now[..12]
                ));
            }
        }
        Op::Delete => {
            if exists {
                found.push("still exists: it was to be deleted".into());
            }
            if !expected.before.exists {
                found.push("did not exist when the task was declared".into());
            }
        }
    }
    if exists && !expected.required.is_empty() {
        found.extend(missing_symbols(&full, &expected.required)?);
    }
    Ok(found)
}

/// A file that is a symlink to a file outside the repository is none of its files: its bytes
/// (and symbols) are not the repository's, so no expectation is met through it.
fn leads_outside(root: &Path, full: &Path) -> Result<Option<String>> {
    let real = std::fs::canonicalize(full).map_err(|e| Error::io("resolve", full, e))?;
    if real.starts_with(root) {
        return Ok(None);
    }
    Ok(Some(format!(
        "is a symlink to {}, outside the repository {}: a file of the task must be the repository's own",
        real.display(),
        root.display()
    )))
}

fn missing_symbols(path: &Path, required: &[String]) -> Result<Vec<String>> {
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io("stat", path, e))?
        .len();
    if size > MAX_SEARCHED_BYTES {
        return Ok(vec![format!(
            "is {size} bytes, over the {MAX_SEARCHED_BYTES}-byte limit for a symbol search"
        )]);
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io("read", path, e))?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(required
        .iter()
        .filter(|symbol| !contains_word(&text, symbol))
        .map(|symbol| {
            if text.contains(symbol.as_str()) {
                format!("required symbol `{symbol}` appears only inside a longer name, not as a whole word")
            } else {
                format!("required symbol `{symbol}` not found")
            }
        })
        .collect())
}

/// Whether `word` occurs in `text` with no identifier character (letter, digit, `_`) right
/// before or after it: `\b` semantics for identifiers, also at overlapping positions.
pub fn contains_word(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(pos) = text[from..].find(word) {
        let start = from + pos;
        let end = start + word.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return true;
        }
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::contains_word;

    #[test]
    fn symbol_match_is_whole_word_only() {
        assert!(contains_word("fn validate_token() {}", "validate_token"));
        assert!(contains_word("validate_token", "validate_token"));
        assert!(contains_word("x.validate_token(1)", "validate_token"));
        assert!(!contains_word(
            "fn validate_token_v2() {}",
            "validate_token"
        ));
        assert!(!contains_word(
            "fn prevalidate_token() {}",
            "validate_token"
        ));
        assert!(!contains_word("revalidate_tokens", "validate_token"));
        assert!(contains_word(
            "validate_tokens validate_token",
            "validate_token"
        ));
        assert!(
            !contains_word("éfoo", "foo"),
            "a non-ASCII letter is part of a name"
        );
        assert!(contains_word("aab ab", "ab"));
        assert!(!contains_word("anything", ""));
    }
}
