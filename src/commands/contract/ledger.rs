//! The ledger: `ledger/task-N.ledger.jsonl`, one JSON line per recorded edit, and
//! `dwp contract record`, which appends them.
//!
//! An append takes the file's OS lock (`File::lock`, an exclusive flock), drops a torn last
//! line a crashed writer left (it never reported success), writes the whole line in one
//! `O_APPEND` write, fsyncs and unlocks: parallel hooks never interleave or lose a line.
//! Readers ignore a torn last line (no newline, or not a ledger line) with a warning; any
//! other bad line is refused, since a ledger that was edited by hand proves nothing.

use super::format::{Declaration, Entry};
use super::payload::{self, PostToolUse};
use super::{Op, PlanTasks, TaskFiles, paths};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What `record` reads: a hook payload, or the flags of another harness.
#[derive(Debug, Clone)]
pub enum RecordSource {
    Payload(Vec<u8>),
    Manual {
        path: String,
        op: Op,
        tool: String,
        session: Option<String>,
    },
}

#[derive(Debug, Clone)]
pub struct RecordRequest {
    pub task: Option<u64>,
    pub root: Option<PathBuf>,
    pub source: RecordSource,
}

/// What `record` did.
#[derive(Debug, Clone)]
pub enum RecordOutcome {
    Recorded {
        entry: Entry,
        ledger: PathBuf,
        /// Bytes of a torn last line that were dropped before the append.
        repaired: u64,
    },
    /// Nothing to record, and why (not a file-writing tool, no task in progress).
    Skipped(String),
}

/// A file-writing tool use, wherever it came from.
struct Edit {
    tool: String,
    raw_path: String,
    base: PathBuf,
    op: Option<Op>,
    session: Option<String>,
}

/// Record one edit for the task at work: in progress, else blocked (or `--task N`).
pub fn record(target: &Path, request: &RecordRequest) -> Result<RecordOutcome> {
    let edit = match edit_of(&request.source)? {
        Ok(edit) => edit,
        Err(skipped) => return Ok(RecordOutcome::Skipped(skipped)),
    };
    let plan_dir = super::plan_dir(target)?;
    let tasks = PlanTasks::load_quick(&plan_dir)?;
    let Some(task) = tasks.select_at_work(request.task)? else {
        return Ok(RecordOutcome::Skipped(
            "no task is in progress or blocked: nothing recorded".into(),
        ));
    };
    let files = TaskFiles::new(&plan_dir, task);
    let declaration = super::format::load_declaration(&files.expected, &plan_dir, task)?;
    let root = root_for(&plan_dir, request.root.as_deref(), declaration.as_ref())?;
    let place = match request.source {
        RecordSource::Payload(_) => "<stdin>: $.tool_input.file_path",
        RecordSource::Manual { .. } => "--path",
    };
    let path = paths::relative_to_root(&root, &edit.base, &edit.raw_path, place)?;
    let op = edit
        .op
        .unwrap_or_else(|| op_of(&edit.tool, &path, declaration.as_ref()));
    let entry = Entry {
        ts: crate::clock::now_rfc3339(),
        tool: edit.tool,
        path,
        op,
        task_id: task,
        plan: tasks.plan,
        session: edit.session,
    };
    super::ensure_ledger_dir(&plan_dir)?;
    let repaired = append(&plan_dir, &files.ledger, &entry)?;
    Ok(RecordOutcome::Recorded {
        entry,
        ledger: files.ledger,
        repaired,
    })
}

/// The edit a source describes, or why there is nothing to record.
fn edit_of(source: &RecordSource) -> Result<std::result::Result<Edit, String>> {
    let cwd = || std::env::current_dir().map_err(|e| Error::io("getcwd", Path::new("."), e));
    match source {
        RecordSource::Manual {
            path,
            op,
            tool,
            session,
        } => {
            if tool.trim().is_empty() {
                return Err(Error::rejected("--tool", "the tool name is empty")
                    .with_hint("name the tool that made the edit"));
            }
            Ok(Ok(Edit {
                tool: tool.clone(),
                raw_path: path.clone(),
                base: cwd()?,
                op: Some(*op),
                session: session.clone(),
            }))
        }
        RecordSource::Payload(bytes) => match payload::parse_post_tool_use(bytes)? {
            PostToolUse::NotAWrite(tool) => {
                Ok(Err(format!("{tool} writes no file: nothing recorded")))
            }
            PostToolUse::Write(used) => {
                let base = match used.cwd {
                    Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
                    Some(_) => {
                        return Err(Error::rejected("<stdin>: $.cwd", "is not an absolute path")
                            .with_hint(
                                "the harness sends its working folder as an absolute path",
                            ));
                    }
                    None => cwd()?,
                };
                Ok(Ok(Edit {
                    tool: used.tool,
                    raw_path: used.file_path,
                    base,
                    op: None,
                    session: used.session,
                }))
            }
        },
    }
}

/// The declaration's root; `--root` (or the `.dwp/plans` layout) for an undeclared task.
fn root_for(
    plan_dir: &Path,
    root: Option<&Path>,
    declaration: Option<&Declaration>,
) -> Result<PathBuf> {
    let Some(declaration) = declaration else {
        return paths::default_root(plan_dir, root);
    };
    let declared = paths::declared_root(plan_dir, &declaration.root)?;
    if let Some(root) = root
        && paths::canonical_root(root)? != declared
    {
        return Err(Error::rejected(
            "--root",
            format!(
                "{} is not the declared root {}",
                root.display(),
                declared.display()
            ),
        )
        .with_hint("leave --root out: a declared task records against its declared root"));
    }
    Ok(declared)
}

/// A Write makes the file when the declaration saw it absent; every other tool modifies.
fn op_of(tool: &str, path: &str, declaration: Option<&Declaration>) -> Op {
    let absent_when_declared = declaration
        .and_then(|d| d.files_expected.iter().find(|e| e.path == path))
        .is_some_and(|e| !e.before.exists);
    if tool == "Write" && absent_when_declared {
        Op::Create
    } else {
        Op::Modify
    }
}

/// Append one entry as one line, under the file's OS lock, fsynced. Returns how many bytes of
/// a torn last line were dropped first.
pub fn append(plan_dir: &Path, path: &Path, entry: &Entry) -> Result<u64> {
    let mut line = serde_json::to_vec(entry).expect("entries serialize");
    line.push(b'\n');
    let (mut file, _created) = open_append(plan_dir, path)?;
    file.lock().map_err(|e| Error::io("lock", path, e))?;
    let repaired = drop_torn_tail(&file, path)?;
    file.write_all(&line)
        .map_err(|e| Error::io("append", path, e))?;
    file.sync_data().map_err(|e| Error::io("fsync", path, e))?;
    file.unlock().map_err(|e| Error::io("unlock", path, e))?;
    Ok(repaired)
}

fn open_append(plan_dir: &Path, path: &Path) -> Result<(File, bool)> {
    crate::store::open_append(path, plan_dir)
        .map_err(|e| e.with_hint("remove it; dwp creates the ledger on the first record"))
}

/// Under the lock: cut a last line without its newline (a writer killed mid-append).
fn drop_torn_tail(file: &File, path: &Path) -> Result<u64> {
    let len = file
        .metadata()
        .map_err(|e| Error::io("stat", path, e))?
        .len();
    if len == 0 || last_byte(file, len, path)? == b'\n' {
        return Ok(0);
    }
    let keep = complete_prefix(file, len, path)?;
    file.set_len(keep)
        .map_err(|e| Error::io("truncate", path, e))?;
    Ok(len - keep)
}

fn last_byte(file: &File, len: u64, path: &Path) -> Result<u8> {
    let mut byte = [0u8];
    file.read_exact_at(&mut byte, len - 1)
        .map_err(|e| Error::io("read", path, e))?;
    Ok(byte[0])
}

/// Length of the file up to and including its last newline, reading backwards in blocks.
fn complete_prefix(file: &File, len: u64, path: &Path) -> Result<u64> {
    const BLOCK: u64 = 4096;
    let mut end = len;
    let mut buffer = vec![0u8; BLOCK as usize];
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let chunk = &mut buffer[..(end - start) as usize];
        file.read_exact_at(chunk, start)
            .map_err(|e| Error::io("read", path, e))?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// The ledger's length without a torn last line (0 when absent): a declaration's offset.
pub fn complete_length(plan_dir: &Path, path: &Path) -> Result<u64> {
    let file = match crate::store::open_regular(path, plan_dir) {
        Ok(file) => file,
        Err(crate::store::ReadFailure::Missing) => return Ok(0),
        Err(failure) => return Err(failure.into_error("open", path)),
    };
    let len = file
        .metadata()
        .map_err(|e| Error::io("stat", path, e))?
        .len();
    if len == 0 || last_byte(&file, len, path)? == b'\n' {
        return Ok(len);
    }
    complete_prefix(&file, len, path)
}

/// The entries of a ledger from byte `offset` on, and warnings (a torn last line).
#[derive(Debug, Clone, Default)]
pub struct LedgerRead {
    pub entries: Vec<Entry>,
    pub warnings: Vec<String>,
}

/// Read a ledger from `offset` (a declaration's `ledger_offset`) for task `task`.
pub fn read(plan_dir: &Path, path: &Path, offset: u64, task: u64) -> Result<LedgerRead> {
    let file = path.display().to_string();
    let bytes = match crate::store::read_artifact(path, plan_dir) {
        Ok(bytes) => bytes,
        Err(crate::store::ReadFailure::Missing) if offset == 0 => {
            return Ok(LedgerRead::default());
        }
        Err(failure) => return Err(failure.into_error("read", path)),
    };
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    if start > bytes.len() || (start > 0 && bytes[start - 1] != b'\n') {
        return Err(Error::rejected(
            file,
            format!("the ledger no longer holds the {offset} bytes it held at declaration: it was cut or rewritten"),
        )
        .with_hint("a ledger is append-only; re-declare the task with --replace to start a new one"));
    }
    let first_line = bytes[..start].iter().filter(|&&b| b == b'\n').count() + 1;
    parse_lines(&bytes[start..], first_line, task, &file)
}

fn parse_lines(bytes: &[u8], first_line: usize, task: u64, file: &str) -> Result<LedgerRead> {
    let mut out = LedgerRead::default();
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    // split leaves an empty last piece after a final newline; a non-empty one is torn.
    let torn = lines.pop().filter(|rest| !rest.is_empty());
    let complete = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        let number = first_line + i;
        match parse_line(line, task) {
            Ok(entry) => out.entries.push(entry),
            Err(_) if i + 1 == complete && torn.is_none() => out.warnings.push(format!(
                "{file}: line {number}: the last line is not a ledger line (a torn append?): ignored"
            )),
            Err(message) => {
                return Err(Error::rejected(format!("{file}: line {number}"), message)
                    .with_hint("a ledger is append-only and written by dwp alone; re-declare the task with --replace to start a new one"));
            }
        }
    }
    if torn.is_some() {
        out.warnings.push(format!(
            "{file}: line {}: the last line has no newline (an append cut short): ignored",
            first_line + complete
        ));
    }
    Ok(out)
}

fn parse_line(line: &[u8], task: u64) -> std::result::Result<Entry, String> {
    let entry: Entry =
        serde_json::from_slice(line).map_err(|e| format!("not a ledger line: {e}"))?;
    if entry.task_id != task {
        return Err(format!(
            "records task {} in the ledger of task {task}",
            entry.task_id
        ));
    }
    if !paths::is_plain_relative(&entry.path) {
        return Err(format!(
            "`{}` is not a path relative to the root",
            entry.path
        ));
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn entry(path: &str) -> Entry {
        Entry {
            ts: "2026-06-09T16:42:10Z".into(),
            tool: "Edit".into(),
            path: path.into(),
            op: Op::Modify,
            task_id: 2,
            plan: "PLAN_a_b".into(),
            session: None,
        }
    }

    #[test]
    fn a_torn_last_line_is_ignored_by_readers_and_dropped_by_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task-2.ledger.jsonl");
        append(dir.path(), &path, &entry("a.rs")).unwrap();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"ts":"2026-06-09T16:4"#).unwrap();
        let read_torn = read(dir.path(), &path, 0, 2).unwrap();
        assert_eq!(read_torn.entries, [entry("a.rs")]);
        assert!(
            read_torn.warnings[0].contains("line 2"),
            "{:?}",
            read_torn.warnings
        );
        assert_eq!(append(dir.path(), &path, &entry("b.rs")).unwrap(), 22);
        let read_after = read(dir.path(), &path, 0, 2).unwrap();
        assert_eq!(read_after.entries, [entry("a.rs"), entry("b.rs")]);
        assert!(read_after.warnings.is_empty());
    }

    #[test]
    fn a_bad_line_before_the_last_is_refused_with_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task-2.ledger.jsonl");
        append(dir.path(), &path, &entry("a.rs")).unwrap();
        std::fs::write(
            &path,
            [
                std::fs::read(&path).unwrap(),
                b"garbage\n".to_vec(),
                std::fs::read(&path).unwrap(),
            ]
            .concat(),
        )
        .unwrap();
        let error = read(dir.path(), &path, 0, 2).unwrap_err().to_string();
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn only_lines_after_the_declaration_offset_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task-2.ledger.jsonl");
        append(dir.path(), &path, &entry("before.rs")).unwrap();
        let offset = complete_length(dir.path(), &path).unwrap();
        append(dir.path(), &path, &entry("after.rs")).unwrap();
        assert_eq!(
            read(dir.path(), &path, offset, 2).unwrap().entries,
            [entry("after.rs")]
        );
        assert!(
            read(dir.path(), &path, offset + 3, 2).is_err(),
            "an offset inside a line"
        );
    }
}
