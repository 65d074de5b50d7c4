//! `dwp contract declare`: write a task's expected files, with a snapshot of each path, to
//! `ledger/task-N.expected.json` (durable atomic write). A second declaration needs
//! `--replace`, which keeps the replaced one's time and sha256 in `replaced`.

use super::format::{self, Declaration, Expected, Replaced, Snapshot};
use super::{Op, PlanTasks, TaskFiles, paths};
use crate::error::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The flags of one declaration, as given.
#[derive(Debug, Clone, Default)]
pub struct DeclareRequest {
    pub task: u64,
    /// `PATH[:SYMBOL,SYMBOL]`
    pub create: Vec<String>,
    /// `PATH[:SYMBOL,SYMBOL]`
    pub modify: Vec<String>,
    /// `PATH`
    pub delete: Vec<String>,
    pub root: Option<PathBuf>,
    pub replace: bool,
}

/// What was declared.
#[derive(Debug, Clone, Serialize)]
pub struct DeclareOutcome {
    pub file: String,
    pub sha256: String,
    pub replaced: bool,
    pub declaration: Declaration,
}

/// Declare the files of one task.
pub fn declare(target: &Path, request: &DeclareRequest) -> Result<DeclareOutcome> {
    if request.create.is_empty() && request.modify.is_empty() && request.delete.is_empty() {
        return Err(Error::Usage(
            "declare at least one --create, --modify or --delete".into(),
        ));
    }
    let plan_dir = super::plan_dir(target)?;
    let tasks = PlanTasks::load(&plan_dir)?;
    tasks.select(Some(request.task))?;
    let files = TaskFiles::new(&plan_dir, request.task);
    let previous = previous(&files, &plan_dir, request)?;
    let root = match (&request.root, &previous) {
        (None, Some((Some(old), _))) => paths::declared_root(&plan_dir, &old.root)?,
        _ => paths::default_root(&plan_dir, request.root.as_deref())?,
    };
    let files_expected = expectations(&root, request)?;
    let now = crate::clock::now_rfc3339();
    let replaced = match &previous {
        None => Vec::new(),
        Some((old, bytes)) => {
            let mut history = old.as_ref().map(|d| d.replaced.clone()).unwrap_or_default();
            history.push(Replaced {
                declared_at: old
                    .as_ref()
                    .map_or_else(|| "unreadable".to_owned(), |d| d.declared_at.clone()),
                replaced_at: now.clone(),
                sha256: crate::store::sha256_hex(bytes),
            });
            history
        }
    };
    let declaration = Declaration {
        schema: format::EXPECTED_SCHEMA_ID.to_owned(),
        plan: tasks.plan.clone(),
        task: request.task,
        root: paths::stored_root(&plan_dir, &root)?,
        declared_at: now,
        ledger_offset: super::ledger::complete_length(&plan_dir, &files.ledger)?,
        files_expected,
        replaced,
    };
    let bytes = crate::store::json_file_bytes(&declaration);
    debug_assert!(
        format::expected_validator().is_valid(&serde_json::to_value(&declaration).unwrap())
    );
    super::ensure_ledger_dir(&plan_dir)?;
    let sha256 = crate::store::sha256_hex(&bytes);
    let mut change = crate::steps::commit::Change::new(&plan_dir, "dwp contract declare");
    change.write_known(&files.expected, None, bytes);
    crate::steps::commit::commit(change)?;
    if previous.is_some() {
        // A new contract starts a new retry ladder.
        super::ladder::reset(&plan_dir, &files.check)?;
    }
    Ok(DeclareOutcome {
        file: files.expected.display().to_string(),
        sha256,
        replaced: previous.is_some(),
        declaration,
    })
}

/// The declaration this one replaces (`None` inside when it no longer reads), or a refusal
/// when there is one and `--replace` was not given.
#[allow(clippy::type_complexity)]
fn previous(
    files: &TaskFiles,
    plan_dir: &Path,
    request: &DeclareRequest,
) -> Result<Option<(Option<Declaration>, Vec<u8>)>> {
    let bytes = match crate::store::read_artifact(&files.expected, plan_dir) {
        Ok(bytes) => bytes,
        Err(crate::store::ReadFailure::Missing) => return Ok(None),
        Err(failure) => return Err(failure.into_error("read", &files.expected)),
    };
    let old = format::load_declaration(&files.expected, plan_dir, request.task);
    if !request.replace {
        let when = match &old {
            Ok(Some(d)) => format!("declared at {}", d.declared_at),
            _ => "one that no longer reads".to_owned(),
        };
        return Err(Error::rejected(
            files.expected.display().to_string(),
            format!("task {} already has a declaration ({when})", request.task),
        )
        .with_hint("pass --replace to replace it (the replaced one is recorded)"));
    }
    Ok(Some((old.ok().flatten(), bytes)))
}

/// Every flag as an expectation with its snapshot, creates then modifies then deletes.
fn expectations(root: &Path, request: &DeclareRequest) -> Result<Vec<Expected>> {
    let mut out: Vec<Expected> = Vec::new();
    let specs = request
        .create
        .iter()
        .map(|s| (Op::Create, s, true))
        .chain(request.modify.iter().map(|s| (Op::Modify, s, true)))
        .chain(request.delete.iter().map(|s| (Op::Delete, s, false)));
    for (op, spec, with_symbols) in specs {
        let flag = format!("--{op}");
        let (raw, required) = if with_symbols {
            split_spec(spec, &flag)?
        } else {
            (spec.as_str(), Vec::new())
        };
        let path = paths::relative_to_root(root, root, raw, &flag)?;
        if out.iter().any(|e| e.path == path) {
            return Err(Error::rejected(flag, format!("`{path}` is declared twice"))
                .with_hint("name each file once, with one op"));
        }
        let before = snapshot(&root.join(&path))?;
        check_op(op, &before, &path, &flag)?;
        out.push(Expected {
            path,
            op,
            required,
            before,
        });
    }
    Ok(out)
}

/// `PATH[:SYMBOL,SYMBOL]`, split at the last `:` (a path holding `:` ends with one: `a:b.rs:`).
fn split_spec<'a>(spec: &'a str, flag: &str) -> Result<(&'a str, Vec<String>)> {
    let Some((path, symbols)) = spec.rsplit_once(':') else {
        return Ok((spec, Vec::new()));
    };
    let mut required = Vec::new();
    for symbol in symbols.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if symbol.chars().any(char::is_whitespace) {
            return Err(Error::rejected(
                flag,
                format!("required symbol `{symbol}` holds whitespace"),
            )
            .with_hint("symbols are separated by commas: PATH:NAME,OTHER_NAME"));
        }
        if !required.iter().any(|s: &String| s == symbol) {
            required.push(symbol.to_owned());
        }
    }
    Ok((path, required))
}

/// The path's state now: absent, or a regular file with its sha256.
pub fn snapshot(path: &Path) -> Result<Snapshot> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Snapshot {
            exists: false,
            sha256: None,
        }),
        Err(e) => Err(Error::io("stat", path, e)),
        Ok(meta) if !meta.is_file() => Err(Error::rejected(
            path.display().to_string(),
            "is not a regular file: a contract names files",
        )
        .with_hint("declare the files inside the folder, one flag each")),
        Ok(_) => Ok(Snapshot {
            exists: true,
            sha256: Some(sha256_file(path)?),
        }),
    }
}

/// A declaration that could never pass is refused now rather than at stop.
fn check_op(op: Op, before: &Snapshot, path: &str, flag: &str) -> Result<()> {
    let problem = match (op, before.exists) {
        (Op::Create, true) => "already exists: a file the task changes is declared with --modify",
        (Op::Modify, false) => "does not exist: a file the task makes is declared with --create",
        (Op::Delete, false) => "does not exist, so there is nothing to delete",
        _ => return Ok(()),
    };
    Err(Error::rejected(flag, format!("`{path}` {problem}"))
        .with_hint("declare each file with the op that will be true at stop: --create, --modify or --delete"))
}

/// sha256 of a file's bytes, read in blocks.
pub fn sha256_file(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = file
            .read(&mut buffer)
            .map_err(|e| Error::io("read", path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(crate::store::hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_split_at_the_last_colon() {
        let (path, symbols) = split_spec("src/a.rs:foo, bar,foo", "--modify").unwrap();
        assert_eq!(path, "src/a.rs");
        assert_eq!(symbols, ["foo", "bar"]);
        assert_eq!(
            split_spec("a:b.rs:", "--modify").unwrap(),
            ("a:b.rs", vec![])
        );
        assert_eq!(
            split_spec("plain.rs", "--modify").unwrap(),
            ("plain.rs", vec![])
        );
    }
}
