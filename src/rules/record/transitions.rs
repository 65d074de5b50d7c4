//! What a record plan's task may do next, judged from its contract and journal (docs/record-
//! plans.md, "Writing a record plan"): a start needs an approval citing the live contract
//! (rule 19) and is the same start when nothing changed since the last one; a completion is
//! derived, never declared (rule 23), and is refused while a delegation of the task is open, an
//! invariant's latest evaluation is missing, stale or failed (rule 21), or a criterion lacks
//! accepted evidence inside the task's window. The reasons are the public ledger's words.

use super::Derived;
use super::events::ENVELOPE;
use super::invariant::{self, Verdict};
use super::projection::TaskState;
use crate::plan::record::{Event, Json};
use serde_json::{Map, Value, json};

/// Whether an approval event cites the live contract id.
pub fn approved(events: &[Event], live_id: &str) -> bool {
    events
        .iter()
        .any(|e| e.kind() == Some("approval") && e.str("contract_id") == Some(live_id))
}

/// The refusal a start without an approval records.
pub fn unapproved_start(live_id: &str) -> Map<String, Value> {
    let short: String = live_id.chars().take(12).collect();
    refusal(
        "task_start",
        "task_start",
        format!("no approval event cites the live contract_id {short}"),
    )
}

/// The refusal of a start before the task's prerequisites are completed (`None`: they are).
/// The public ledger does not check this; `dwp verify` reports such a start (DWP116), so dwp's
/// writer never makes one.
pub fn early_start(
    task: &str,
    graph: &[super::TaskShape],
    tasks: &[TaskState],
) -> Option<Map<String, Value>> {
    let shape = graph.iter().find(|shape| shape.id == task)?;
    let open: Vec<&str> = shape
        .prerequisites
        .iter()
        .filter(|p| {
            let state = tasks.iter().find(|t| t.id_str() == p.as_str());
            state.is_none_or(|t| t.status != super::projection::TaskStatus::Completed)
        })
        .map(String::as_str)
        .collect();
    (!open.is_empty()).then(|| {
        refusal(
            task,
            "task_start",
            format!("prerequisite(s) not completed: {}", open.join(", ")),
        )
    })
}

/// An `approval`'s payload: who approved, how, and the digest of the markdown approved.
pub fn approval_payload(authority: &str, mechanism: &str, digest: &str) -> Map<String, Value> {
    let mut payload = Map::new();
    payload.insert("authority".into(), authority.into());
    payload.insert("mechanism".into(), mechanism.into());
    payload.insert("plan_digest".into(), digest.into());
    payload
}

/// The public ledger's human-authority marker for a note: its path, as given, and the first 16
/// hex digits of its sha256.
pub fn human_marker(note: &str, sha256: &str) -> String {
    let short: String = sha256.chars().take(16).collect();
    format!("human authority marker: note {note} sha256:{short}")
}

/// A `task_start`'s payload: the task, and the work tree it starts from.
pub fn start_payload(task: &str, revision: &str, dirty: &str) -> Map<String, Value> {
    let mut payload = Map::new();
    payload.insert("task".into(), task.into());
    payload.insert(
        "fingerprint".into(),
        json!({"revision": revision, "dirty": dirty}),
    );
    payload
}

/// The seq of an earlier event that is this one (same type, same payload, same actor, same
/// contract): a start and an approval are idempotent, as the public ledger's content key makes
/// them.
pub fn same_event(
    events: &[Event],
    kind: &str,
    payload: &Map<String, Value>,
    actor: &Value,
    live_id: &str,
) -> Option<i64> {
    let identity = actor.get("identity").and_then(Value::as_str);
    events
        .iter()
        .filter(|e| e.kind() == Some(kind) && e.str("contract_id") == Some(live_id))
        .filter(|e| {
            let prior = e.value.get("actor").and_then(|a| a.get("identity"));
            prior.and_then(Json::as_str) == identity
        })
        .filter(|e| {
            let Some(object) = e.value.as_object() else {
                return false;
            };
            let body = object.keys().filter(|k| !ENVELOPE.contains(k)).count();
            body == payload.len()
                && payload
                    .iter()
                    .all(|(k, v)| e.value.get(k).is_some_and(|mine| mine == v))
        })
        .map(Event::seq)
        .next_back()
}

/// Why `task` cannot be completed now (the refusal to record), or `None` when its completion is
/// derived: no open delegation of it, every invariant's latest evaluation a pass at or after
/// its start, and every criterion of its gate intent satisfied inside its window; all read from
/// what the plan's judgement `derived`.
pub fn completion_refused(derived: &Derived, task: &TaskState) -> Option<Map<String, Value>> {
    let id = task.id_str();
    let mut open: Vec<&str> = derived
        .open_delegations
        .iter()
        .filter(|(_, of)| of == id)
        .map(|(delegation, _)| delegation.as_str())
        .collect();
    open.sort_unstable();
    if !open.is_empty() {
        let reason = format!(
            "delegation(s) still open: {} — collect or cancel them first",
            open.join(", ")
        );
        return Some(refusal(id, "gate", reason));
    }
    let start = task.started.as_ref().and_then(Value::as_i64);
    let unverified = invariant_findings(&derived.invariants, start);
    if !unverified.is_empty() {
        let reason = format!(
            "invariant(s) not verified for this attempt: {}",
            unverified.join("; ")
        );
        return Some(refusal(id, "gate", reason));
    }
    let missing: Vec<&str> = task
        .criteria
        .iter()
        .filter(|c| c.satisfied.is_none())
        .filter_map(|c| c.criterion.as_str())
        .collect();
    if !missing.is_empty() {
        let reason = format!(
            "criteria without in-window accepted evidence: {}",
            missing.join(", ")
        );
        return Some(refusal(id, "gate", reason));
    }
    None
}

/// Each declared invariant whose latest evaluation (an observation `INV-x: pass`, `INV-x: fail`
/// or `INV-x: fail: why`) is missing, earlier than `start`, or a failure.
fn invariant_findings(
    invariants: &[(String, Option<invariant::Evaluated>)],
    start: Option<i64>,
) -> Vec<String> {
    let mut findings = Vec::new();
    for (id, latest) in invariants {
        match latest {
            None => findings.push(format!("{id} never evaluated")),
            Some(evaluation) if start.is_some_and(|start| evaluation.seq < start) => {
                findings.push(format!(
                    "{id} last evaluated at seq {}, before the task start {}",
                    evaluation.seq,
                    start.unwrap_or_default()
                ));
            }
            Some(evaluation) if evaluation.verdict == Verdict::Fail => {
                findings.push(format!("{id} failed (seq {})", evaluation.seq));
            }
            Some(_) => {}
        }
    }
    findings
}

fn refusal(subject: &str, stage: &str, reason: String) -> Map<String, Value> {
    let mut payload = Map::new();
    payload.insert("subject".into(), subject.into());
    payload.insert("stage".into(), stage.into());
    payload.insert("reason".into(), reason.into());
    payload
}
