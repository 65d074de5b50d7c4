//! A gate run dwp observes for a record plan's task, recorded as the public ledger's gate
//! executor records one (docs/record-plans.md, "Writing a record plan"): dwp runs the command
//! itself, so the `gate_run` it appends is the only `observed` evidence a record plan gets
//! (rule 22). This module holds what the writer needs besides the run:
//!
//! - the refusals the ledger makes before it runs anything ([`refusal`]): the task is in the
//!   live contract, the criterion is one of its `gate_intent`, the task has a `task_start`
//!   (observed evidence exists only inside an attempt), and the program is one of the contract's
//!   `allowed_command_classes`;
//! - where the ledger runs a gate ([`gate_root`]): the folder holding the plan's `.dwp/`, else
//!   the plan's parent, never the caller's current folder;
//! - the log, byte for byte the ledger's: `gates/<task>/<seq:03>-<slug>.log` ([`log_name`])
//!   holding `$ COMMAND`, the stdout and stderr sections and `--- exit N ---` ([`log_bytes`]);
//! - the exit code the event records ([`recorded_exit`]): the command's own, `-N` when signal N
//!   killed it (Python's `returncode`), 124 when it timed out;
//! - the event's payload ([`payload`]).

use super::projection::TaskState;
use crate::rules::observed::Ending;
use serde_json::{Map, Value};
use std::path::{Component, Path, PathBuf};

/// Why the ledger would not run a gate for a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The live contract has no such task; its tasks.
    UnknownTask { known: Vec<String> },
    /// The criterion is not in the task's `gate_intent`; the ones that are.
    Undeclared { declared: Vec<String> },
    /// The task has no `task_start`.
    NotStarted,
    /// The program is not one of the contract's command classes; those it declares.
    OutsideClasses {
        program: String,
        declared: Vec<String>,
    },
}

/// Why a gate of `program` cannot be run for `criterion` of `task` under `contract`, whose
/// tasks the journal derives as `tasks`; `None` when it can. The checks are the ledger's, in its
/// order.
pub fn refusal(
    contract: &Value,
    tasks: &[TaskState],
    task: &str,
    criterion: &str,
    program: &str,
) -> Option<Refusal> {
    let Some(state) = tasks.iter().find(|t| t.id_str() == task) else {
        let known = tasks.iter().map(|t| t.id_str().to_owned()).collect();
        return Some(Refusal::UnknownTask { known });
    };
    let declared = declared_criteria(contract, task);
    if !declared.iter().any(|c| c == criterion) {
        return Some(Refusal::Undeclared { declared });
    }
    if state.started.as_ref().is_none_or(Value::is_null) {
        return Some(Refusal::NotStarted);
    }
    command_class(contract, program)
        .err()
        .map(|(program, declared)| Refusal::OutsideClasses { program, declared })
}

/// Whether `program` is one of the contract's `allowed_command_classes`; if not, its base name
/// and the classes declared. The ledger compares the base name of the command's first word.
pub fn command_class(contract: &Value, program: &str) -> Result<(), (String, Vec<String>)> {
    let classes: Vec<String> = strings(contract.pointer("/scope/allowed_command_classes"));
    let base = Path::new(program)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    if classes.contains(&base) {
        Ok(())
    } else {
        Err((base, classes))
    }
}

/// The criteria of `task`'s `gate_intent`, sorted.
fn declared_criteria(contract: &Value, task: &str) -> Vec<String> {
    let tasks = contract.get("tasks").and_then(Value::as_array);
    let intent = tasks
        .into_iter()
        .flatten()
        .find(|t| t.get("id").and_then(Value::as_str) == Some(task))
        .and_then(|t| t.get("gate_intent"))
        .and_then(Value::as_array);
    let mut declared: Vec<String> = intent
        .into_iter()
        .flatten()
        .filter_map(|i| i.get("criterion").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    declared.sort();
    declared.dedup();
    declared
}

fn strings(value: Option<&Value>) -> Vec<String> {
    let items = value.and_then(Value::as_array).into_iter().flatten();
    items.filter_map(Value::as_str).map(str::to_owned).collect()
}

/// Whether a run of `criterion` that exited `exit_code` satisfies it: it exited 0 and the
/// criterion accepts `observed` evidence. The run is the journal's newest event, inside the
/// task's window and after every invalidation, so nothing else counts against it.
pub fn satisfies(contract: &Value, criterion: &str, exit_code: i64) -> bool {
    let criteria = contract
        .pointer("/acceptance/criteria")
        .and_then(Value::as_array);
    let accepted = criteria
        .into_iter()
        .flatten()
        .find(|c| c.get("id").and_then(Value::as_str) == Some(criterion))
        .map(|c| strings(c.get("accepted_evidence")));
    exit_code == 0 && accepted.is_some_and(|a| a.iter().any(|t| t == "observed"))
}

/// Where the ledger runs a gate of the plan at `plan_dir` (absolute): the folder that holds the
/// plan's `.dwp/` (`ROOT/.dwp/plans/PLAN_x`), else the plan's parent. Lexical, as Python's
/// `os.path.abspath`: `..` and `.` resolved by name, symlinks kept.
pub fn gate_root(plan_dir: &Path) -> PathBuf {
    let plan = lexical(plan_dir);
    let parent = plan.parent().unwrap_or(&plan);
    match parent.parent() {
        Some(dwp) if dwp.file_name().is_some_and(|n| n == ".dwp") => {
            dwp.parent().unwrap_or(dwp).to_path_buf()
        }
        _ => parent.to_path_buf(),
    }
}

/// `path` with `.` dropped and each `..` taking its parent away, by name.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The exit code the event records for a run that ended so, as the ledger's executor records
/// it (`subprocess`'s `returncode`: negative for a signal; 124 for a timeout); `None` for a
/// command that never ran, which the ledger records nothing for.
pub fn recorded_exit(ending: &Ending) -> Option<i64> {
    match ending {
        Ending::Exited(code) => Some(*code),
        Ending::Signalled(signal) => Some(-i64::from(*signal)),
        Ending::TimedOut(_) => Some(124),
        Ending::NotStarted => None,
    }
}

/// The log's name in the ledger's words: the command with each run of characters other than
/// `A-Z a-z 0-9 . _ -` made one `-`, cut to 40 characters, `-` trimmed from both ends (`gate`
/// when nothing is left).
pub fn slug(command: &str) -> String {
    let slug = substitute(command);
    let cut: String = slug.chars().take(40).collect();
    match cut.trim_matches('-') {
        "" => "gate".to_owned(),
        kept => kept.to_owned(),
    }
}

/// `re.sub(r'[^A-Za-z0-9._-]+', '-', command)`.
fn substitute(command: &str) -> String {
    let mut out = String::with_capacity(command.len());
    let mut in_run = false;
    for c in command.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    out
}

/// The log of the run at `seq` of `task`'s gate, relative to the plan folder.
pub fn log_name(task: &str, seq: i64, command: &str) -> String {
    format!("gates/{task}/{seq:03}-{}.log", slug(command))
}

/// One stream of a run's output as kept: its last bytes, and how many it carried.
pub struct Stream<'a> {
    pub tail: &'a [u8],
    pub total: u64,
}

/// The log's bytes, as the ledger writes them:
/// `$ COMMAND\n\n--- stdout ---\nOUT\n--- stderr ---\nERR\n--- exit N ---\n`. The output is
/// text (invalid UTF-8 replaced, as the ledger's log is UTF-8); a stream longer than what was
/// kept opens with a line saying how much is missing; a timeout adds the ledger's `timeout
/// after Ns` to stderr.
pub fn log_bytes(
    command: &str,
    stdout: Stream,
    stderr: Stream,
    ending: &Ending,
    exit_code: i64,
) -> Vec<u8> {
    let out = section(&stdout);
    let mut err = section(&stderr);
    if let Ending::TimedOut(seconds) = ending {
        if !err.is_empty() && !err.ends_with('\n') {
            err.push('\n');
        }
        err.push_str(&format!("timeout after {seconds}s"));
    }
    format!(
        "$ {command}\n\n--- stdout ---\n{out}\n--- stderr ---\n{err}\n--- exit {exit_code} ---\n"
    )
    .into_bytes()
}

fn section(stream: &Stream) -> String {
    let text = String::from_utf8_lossy(stream.tail);
    let missing = stream.total.saturating_sub(stream.tail.len() as u64);
    match missing {
        0 => text.into_owned(),
        _ => format!("[dwp: the first {missing} bytes are not kept]\n{text}"),
    }
}

/// What one observed gate run records.
pub struct GateRun<'a> {
    pub task: &'a str,
    pub criterion: &'a str,
    pub command: &'a str,
    /// Where it ran, absolute.
    pub cwd: &'a Path,
    pub timeout_seconds: u64,
    pub exit_code: i64,
    /// Its log, relative to the plan folder.
    pub evidence_path: &'a str,
}

/// The `gate_run` event's payload (the envelope is `mint`'s): what the ledger's executor
/// records, `trust: observed` and the log as its evidence.
pub fn payload(run: &GateRun) -> Map<String, Value> {
    let mut payload = Map::new();
    payload.insert("command".into(), run.command.into());
    payload.insert("cwd".into(), run.cwd.to_string_lossy().into_owned().into());
    payload.insert("timeout_seconds".into(), run.timeout_seconds.into());
    payload.insert("exit_code".into(), run.exit_code.into());
    payload.insert("task".into(), run.task.into());
    payload.insert("criterion".into(), run.criterion.into());
    payload.insert("trust".into(), "observed".into());
    payload.insert("evidence_path".into(), run.evidence_path.into());
    payload
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_slug_is_the_ledgers() {
        assert_eq!(
            slug("mkdocs build --strict -f docs/site/mkdocs.yml"),
            "mkdocs-build---strict--f-docs-site-mkdoc"
        );
        assert_eq!(
            slug("python3 scripts/docs/check_inventory.py"),
            "python3-scripts-docs-check_inventory.py"
        );
        assert_eq!(slug("sh -c 'echo out; exit 3'"), "sh--c-echo-out-exit-3");
        assert_eq!(slug("  ;; "), "gate");
        assert_eq!(slug("é"), "gate");
        assert_eq!(
            log_name("T-a", 7, "cargo test"),
            "gates/T-a/007-cargo-test.log"
        );
        assert_eq!(log_name("T-a", 1234, "x"), "gates/T-a/1234-x.log");
    }

    #[test]
    fn the_log_is_the_ledgers_byte_for_byte() {
        let log = log_bytes(
            "sh -c 'echo out; echo err >&2; exit 3'",
            Stream {
                tail: b"out\n",
                total: 4,
            },
            Stream {
                tail: b"err\n",
                total: 4,
            },
            &Ending::Exited(3),
            3,
        );
        assert_eq!(
            String::from_utf8(log).unwrap(),
            "$ sh -c 'echo out; echo err >&2; exit 3'\n\n--- stdout ---\nout\n\n--- stderr ---\nerr\n\n--- exit 3 ---\n"
        );
        let timed_out = log_bytes(
            "sleep 9",
            Stream {
                tail: b"",
                total: 0,
            },
            Stream {
                tail: b"",
                total: 0,
            },
            &Ending::TimedOut(2),
            124,
        );
        assert!(
            String::from_utf8(timed_out)
                .unwrap()
                .ends_with("--- stderr ---\ntimeout after 2s\n--- exit 124 ---\n")
        );
        let cut = log_bytes(
            "x",
            Stream {
                tail: b"end\n",
                total: 10,
            },
            Stream {
                tail: b"",
                total: 0,
            },
            &Ending::Exited(0),
            0,
        );
        assert!(
            String::from_utf8(cut)
                .unwrap()
                .contains("[dwp: the first 6 bytes are not kept]\nend\n")
        );
    }

    #[test]
    fn a_signal_is_recorded_as_pythons_returncode() {
        assert_eq!(recorded_exit(&Ending::Exited(3)), Some(3));
        assert_eq!(recorded_exit(&Ending::Signalled(9)), Some(-9));
        assert_eq!(recorded_exit(&Ending::TimedOut(5)), Some(124));
        assert_eq!(recorded_exit(&Ending::NotStarted), None);
    }

    #[test]
    fn the_gate_runs_where_the_ledger_runs_it() {
        assert_eq!(
            gate_root(Path::new("/repo/.dwp/plans/PLAN_a")),
            Path::new("/repo")
        );
        assert_eq!(gate_root(Path::new("/tmp/x/PLAN_a")), Path::new("/tmp/x"));
        assert_eq!(
            gate_root(Path::new("/repo/./sub/../.dwp/plans/PLAN_a/.")),
            Path::new("/repo")
        );
    }

    fn task(id: &str, started: Option<i64>) -> TaskState {
        TaskState {
            id: json!(id),
            title: Value::Null,
            status: super::super::projection::TaskStatus::InProgress,
            started: started.map(Value::from),
            criteria: Vec::new(),
        }
    }

    #[test]
    fn the_ledgers_refusals_come_in_its_order() {
        let contract = json!({
            "scope": {"allowed_command_classes": ["cargo", "python3"]},
            "tasks": [{"id": "T-a", "gate_intent": [{"criterion": "AC-b", "check": "x"}]},
                      {"id": "T-c", "gate_intent": []}],
            "acceptance": {"criteria": [{"id": "AC-b", "accepted_evidence": ["observed"]}]},
        });
        let tasks = [task("T-a", Some(4)), task("T-c", None)];
        let judge = |t: &str, c: &str, p: &str| refusal(&contract, &tasks, t, c, p);
        assert_eq!(judge("T-a", "AC-b", "/usr/bin/cargo"), None);
        assert!(matches!(
            judge("T-x", "AC-b", "cargo"),
            Some(Refusal::UnknownTask { .. })
        ));
        assert_eq!(
            judge("T-a", "AC-z", "cargo"),
            Some(Refusal::Undeclared {
                declared: vec!["AC-b".into()]
            })
        );
        assert_eq!(
            judge("T-c", "AC-b", "cargo"),
            Some(Refusal::Undeclared { declared: vec![] })
        );
        let unstarted = [task("T-a", None)];
        assert_eq!(
            refusal(&contract, &unstarted, "T-a", "AC-b", "cargo"),
            Some(Refusal::NotStarted)
        );
        assert!(matches!(
            judge("T-a", "AC-b", "sh"),
            Some(Refusal::OutsideClasses { .. })
        ));
        assert!(satisfies(&contract, "AC-b", 0));
        assert!(!satisfies(&contract, "AC-b", 1));
        assert!(!satisfies(&contract, "AC-z", 0));
    }
}
