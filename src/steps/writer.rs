//! What every writer shares before and around its write: the lock taken once the inputs are
//! known to be regular files (and a pending intent record completed), the state loaded for a
//! change with its invariants, the clock checked against the state's own times, and the safety
//! net the bytes about to be written pass (schema and invariants) or nothing is written.

use crate::findings::{Code, Finding, Severity};
use crate::plan::model::State;
use crate::plan::{FINALIZING_MARKER, Loaded, LoadedPlan, refusal, state_from_bytes};
use crate::store::ReadFailure;
use serde_json::Value;
use std::path::Path;

/// The plan files every writer may read once it holds the lock.
const WRITER_INPUTS: [&str; 6] = [
    "state.json",
    "manifest.json",
    "README.md",
    "PROGRESS.md",
    FINALIZING_MARKER,
    crate::store::intent::INTENT,
];

/// Take the plan's lock for a writer, once its inputs are known to be regular files (a named
/// pipe in place of one would block the writer in `open()` while it holds the lock), and
/// complete the multi-file write a killed writer left recorded (`store::intent`).
pub fn lock_for_write(
    plan_dir: &Path,
    state_path: &Path,
    wait: std::time::Duration,
) -> crate::Result<crate::store::lock_dir::LockGuard> {
    let _stage = crate::profile::stage("lock");
    crate::store::require_regular_files(plan_dir, &WRITER_INPUTS)?;
    let guard = crate::store::lock_dir::acquire(state_path, wait)?;
    // A multi-file write killed half way is completed before anything else is read.
    crate::store::intent::complete_pending(plan_dir)?;
    Ok(guard)
}

/// Run `write` as the plan at `target`'s writer: the target resolved to its folder and state
/// file, the lock taken (waiting up to `wait`), the plan opened under it (every file read at
/// most once from here on), and the lock released once `write` returns.
pub fn under_lock<T>(
    target: &Path,
    wait: std::time::Duration,
    write: impl FnOnce(&mut LoadedPlan) -> crate::Result<T>,
) -> crate::Result<T> {
    let (plan_dir, state_path) = crate::plan::resolve_target(target);
    let guard = lock_for_write(&plan_dir, &state_path, wait)?;
    let mut plan = LoadedPlan::open_with_state(&plan_dir, &state_path);
    let outcome = write(&mut plan)?;
    drop(plan);
    crate::profile::time("unlock", || guard.release())?;
    Ok(outcome)
}

/// `--agent` and `--model` fit `updated_by` (the schema's limit: 100 characters each).
pub fn check_signature(agent: Option<&String>, model: Option<&String>) -> crate::Result<()> {
    for (flag, value) in [("--agent", agent), ("--model", model)] {
        if let Some(value) = value {
            crate::Error::check_length(flag, value, 100)?;
        }
    }
    Ok(())
}

/// The compare-and-swap every writer offers: the state read must be the one the caller saw
/// (`--expected-sha256`), or nothing is written.
pub fn check_snapshot(loaded: &Loaded<State>, expected: Option<&String>) -> crate::Result<()> {
    match expected {
        Some(expected) if *expected != loaded.sha256 => Err(crate::Error::SnapshotMoved {
            path: loaded.path.clone(),
            expected: expected.clone(),
            actual: loaded.sha256.clone(),
        }),
        _ => Ok(()),
    }
}

/// How much later than the clock a recorded time may be (one write may straddle a second).
const SAME_WRITE_SECONDS: i64 = 1;

/// A writer stamps the time it writes; a clock earlier than a time the state already records
/// would put the state's times out of order (verify's DWP067). Refused, naming both times.
pub fn refuse_clock_behind(state: &State, file: &str, now: &str) -> crate::Result<()> {
    use crate::clock::parse_rfc3339;
    let _stage = crate::profile::stage("clock check");
    let Some(clock) = parse_rfc3339(now) else {
        return Ok(());
    };
    let latest = clock + chrono::Duration::seconds(SAME_WRITE_SECONDS);
    let newest = state
        .timestamps()
        .filter_map(|t| parse_rfc3339(t.text).map(|time| (time, t)))
        .max_by_key(|(time, _)| *time);
    match newest {
        Some((time, stamp)) if time > latest => Err(crate::Error::rejected(
            format!("{file}: {}", stamp.path()),
            format!(
                "the clock reads {now}, earlier than `{}` recorded here: a write now would put the state's times out of order",
                stamp.text
            ),
        )
        .with_hint("set this machine's clock right (the state was written by a clock ahead of it), then run the command again")),
        _ => Ok(()),
    }
}

/// The state a writer is about to change: readable, strict JSON, schema-valid, typed, and,
/// with `invariants`, free of invariant findings. A read the OS refuses is an I/O failure.
pub fn load_state_for_write(plan: &LoadedPlan, invariants: bool) -> crate::Result<&Loaded<State>> {
    let (plan_dir, state_path) = (plan.dir(), &plan.paths.state);
    if plan.has_no_state_layer()
        && plan.place(&plan_dir.join("README.md")) == crate::store::Place::File
    {
        return Err(crate::Error::rejected(
            state_path.display().to_string(),
            "the plan has no state layer (no state.json, no manifest.json): there is no state to change",
        )
        .with_hint(format!(
            "materialize it from the markdown with `dwp init {}`",
            crate::term::path_word(plan_dir)
        )));
    }
    let loaded = plan.state().map_err(|findings| {
        let unreadable = findings
            .first()
            .is_some_and(|f| f.severity == Severity::Unverified);
        match &*plan.read(state_path) {
            Err(failure @ ReadFailure::Io(_)) if unreadable => {
                failure.clone_kind().into_error("read", state_path)
            }
            _ => refusal(findings.to_vec(), "the input state does not validate"),
        }
    })?;
    if invariants {
        refuse_broken_invariants(loaded)?;
    }
    Ok(loaded)
}

/// A writer's input must be free of invariant findings: refused, listing them, when it is not.
pub fn refuse_broken_invariants(loaded: &Loaded<State>) -> crate::Result<()> {
    let _stage = crate::profile::stage("invariants");
    let problems = crate::rules::invariants::check_state(loaded);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(refusal(problems, "the input state breaks an invariant"))
    }
}

/// The safety net of every writer: the bytes about to be written must validate like any input
/// (schema and invariants), or nothing is written. `what` names them in the refusal.
pub fn check_before_write(state_path: &Path, bytes: &[u8], what: &str) -> crate::Result<()> {
    let loaded = state_from_bytes(state_path, bytes.to_vec())
        .map_err(|f| refusal(f, &format!("{what} would not validate")))?;
    let problems = crate::rules::invariants::check_state(&loaded);
    if !problems.is_empty() {
        return Err(refusal(
            problems,
            &format!("{what} would break an invariant"),
        ));
    }
    Ok(())
}

/// The safety net of a writer that changed one task of a state that validated on input: the
/// typed schema checks on the whole result (`plan::typed_schema::state_fits`), or where they do
/// not accept it the changed task against the task definition and the document around the tasks
/// against the state schema (the other tasks are the input's), which report the violation; then
/// every invariant of the result. The result is never serialized and parsed back for this.
pub fn check_changed_task<T>(
    before: &Loaded<T>,
    next: &State,
    task: u64,
    what: &str,
) -> crate::Result<()> {
    let _stage = crate::profile::stage("re-check changed task");
    let file = &before.file;
    if !crate::plan::typed_schema::state_fits(before.generation, next) {
        check_changed_task_by_schema(before, next, task, what)?;
    }
    let problems = crate::rules::invariants::check_document(next, file);
    if !problems.is_empty() {
        return Err(refusal(
            problems,
            &format!("{what} would break an invariant"),
        ));
    }
    Ok(())
}

/// The schema half of [`check_changed_task`] for a result the typed checks do not accept (a v1
/// state, or a violation, which this reports with its path).
fn check_changed_task_by_schema<T>(
    before: &Loaded<T>,
    next: &State,
    task: u64,
    what: &str,
) -> crate::Result<()> {
    let file = &before.file;
    let as_findings = |violations: Vec<crate::plan::schemas::Violation>| -> Vec<Finding> {
        violations
            .into_iter()
            .map(|v| Finding::error(Code::SchemaViolation, file, v.message).at(v.path))
            .collect()
    };
    let refused = |findings: Vec<Finding>| refusal(findings, &format!("{what} would not validate"));
    let to_value = |value: Result<Value, serde_json::Error>| {
        value.map_err(|e| crate::Error::rejected(file.as_str(), e.to_string()))
    };
    let mut shell = to_value(serde_json::to_value(next.clone_without_tasks()))?;
    shell["tasks"] = Value::Array(vec![Value::Null; next.tasks.len()]);
    let mut findings = as_findings(crate::plan::schemas::validate_state_shell(
        before.generation,
        &shell,
    ));
    if let Some(index) = next.tasks.iter().position(|t| t.id == task) {
        let value = to_value(serde_json::to_value(&next.tasks[index]))?;
        findings.extend(as_findings(crate::plan::schemas::validate_task(
            before.generation,
            &value,
            index,
        )));
    }
    if findings.is_empty() {
        Ok(())
    } else {
        Err(refused(findings))
    }
}
