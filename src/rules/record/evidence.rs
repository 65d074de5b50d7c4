//! What the journal and the gate logs let dwp check beyond the public verifier: an observed gate
//! or invariant evaluation whose log is missing or shows another exit code, a gate citing another task's log, a task
//! started before its prerequisites were completed, and delegations left open.

use super::invariant::{self, Verdict};
use crate::findings::Code;
use crate::plan::json::Field;
use crate::plan::record::{Event, Json};
use crate::store::ReadFailure;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// A problem found at one event: the event's index in the journal, the code and the message.
pub type EventFinding = (usize, Code, String);

/// The observed runs whose logs must be read, `(event index, evidence path)`: each observed
/// gate run, and each observed evaluation of an invariant (which only a check dwp ran records).
pub fn observed_gates(events: &[Event]) -> Vec<(usize, String)> {
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.str("trust") == Some("observed"))
        .filter(|(_, e)| match e.kind() {
            Some("gate_run") => true,
            Some("observation") => e.str("statement").and_then(invariant::evaluated).is_some(),
            _ => false,
        })
        .filter_map(|(i, e)| Some((i, e.str("evidence_path")?.to_owned())))
        .collect()
}

/// Judge each observed run against its log as read: the log must be there, inside the plan
/// folder, and end with the public gate runner's `--- exit N ---` line for what the event
/// records (a gate run's exit code; an invariant's pass, exit 0, or fail, any other).
pub fn log_findings(
    events: &[Event],
    gates: &[(usize, String)],
    logs: Vec<Result<Vec<u8>, ReadFailure>>,
) -> Vec<EventFinding> {
    let mut found = Vec::new();
    for ((index, path), log) in gates.iter().zip(logs) {
        let event = &events[*index];
        let evaluation = event.str("statement").and_then(invariant::evaluated);
        let run = match evaluation {
            Some((id, _)) => format!("the evaluation of {id} at seq {}", event.seq()),
            None => format!(
                "the gate run at seq {} ({})",
                event.seq(),
                event.str("task").unwrap_or("?")
            ),
        };
        let bytes = match log {
            Ok(bytes) => bytes,
            Err(failure) => {
                let message = format!("{run}: its log {path} {failure}");
                found.push((*index, Code::GateLogMissing, message));
                continue;
            }
        };
        let Some(shown) = last_exit(&bytes) else {
            found.push((
                *index,
                Code::GateLogExit,
                format!("{run}: its log {path} does not end with the gate runner's `--- exit N ---` line"),
            ));
            continue;
        };
        let disagrees = match evaluation {
            Some((_, Verdict::Pass)) => (shown != 0).then(|| "records a pass".to_owned()),
            Some((_, Verdict::Fail)) => (shown == 0).then(|| "records a failure".to_owned()),
            // An exit code that is no integer is an invalid event already.
            None => match event.value.get("exit_code").and_then(Json::as_i64) {
                Some(recorded) if recorded != shown => {
                    Some(format!("records exit code {recorded}"))
                }
                _ => None,
            },
        };
        if let Some(recorded) = disagrees {
            found.push((
                *index,
                Code::GateLogExit,
                format!("{run} {recorded}, but its log {path} ends with exit {shown}"),
            ));
        }
    }
    found
}

/// The exit code on a gate log's last line, `--- exit N ---`.
fn last_exit(log: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(log.strip_suffix(b"\n")?).ok()?;
    let line = text.rsplit('\n').next()?;
    line.strip_prefix("--- exit ")?
        .strip_suffix(" ---")?
        .parse()
        .ok()
}

/// Gate runs citing a log another task's gate produced: a log under `gates/<other task>/`, or
/// one another task's gate run already cites.
pub fn foreign_evidence(events: &[Event]) -> Vec<EventFinding> {
    let mut first_citer: HashMap<String, &str> = HashMap::new();
    let mut found = Vec::new();
    for (index, event) in events.iter().enumerate() {
        if event.kind() != Some("gate_run") {
            continue;
        }
        let (Some(task), Some(path)) = (event.str("task"), event.str("evidence_path")) else {
            continue;
        };
        let path = path.trim_start_matches("./").to_owned();
        let owner = path
            .strip_prefix("gates/")
            .and_then(|rest| rest.split_once('/'))
            .map(|(dir, _)| dir);
        if let Some(owner) = owner.filter(|owner| *owner != task) {
            found.push((
                index,
                Code::ForeignEvidence,
                format!("a gate of {task} cites {path}, a log of {owner}'s gates"),
            ));
            continue;
        }
        match first_citer.get(&path) {
            Some(other) if *other != task => found.push((
                index,
                Code::ForeignEvidence,
                format!("a gate of {task} cites {path}, which a gate of {other} cited first"),
            )),
            Some(_) => {}
            None => {
                first_citer.insert(path, task);
            }
        }
    }
    found
}

/// The contract's tasks as the order checks need them.
pub struct TaskGraph<'c> {
    pub prerequisites: HashMap<&'c str, Vec<&'c str>>,
    pub criteria: HashMap<&'c str, Vec<&'c str>>,
    /// Each criterion's accepted trust labels.
    pub accepted: HashMap<&'c str, Vec<&'c Value>>,
}

impl<'c> TaskGraph<'c> {
    pub fn of(contract: &'c Value) -> TaskGraph<'c> {
        let mut graph = TaskGraph {
            prerequisites: HashMap::new(),
            criteria: HashMap::new(),
            accepted: HashMap::new(),
        };
        let strings = |v: Option<&'c Value>| -> Vec<&'c str> {
            v.and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default()
        };
        let tasks = contract.field("tasks").and_then(Value::as_array);
        for task in tasks.into_iter().flatten() {
            let Some(id) = task.field("id").and_then(Value::as_str) else {
                continue;
            };
            graph
                .prerequisites
                .insert(id, strings(task.field("prerequisites")));
            let intents = task.field("gate_intent").and_then(Value::as_array);
            let criteria = intents
                .into_iter()
                .flatten()
                .filter_map(|g| g.field("criterion")?.as_str())
                .collect();
            graph.criteria.insert(id, criteria);
        }
        let criteria = contract
            .field("acceptance")
            .and_then(|a| a.field("criteria"))
            .and_then(Value::as_array);
        for criterion in criteria.into_iter().flatten() {
            if let Some(id) = criterion.field("id").and_then(Value::as_str) {
                let accepted = criterion
                    .field("accepted_evidence")
                    .and_then(Value::as_array);
                graph
                    .accepted
                    .insert(id, accepted.into_iter().flatten().collect());
            }
        }
        graph
    }
}

/// Task starts made while a prerequisite was not completed, completion derived from the events
/// before each start exactly as the projection derives it from all of them.
pub fn early_starts(events: &[Event], graph: &TaskGraph) -> Vec<EventFinding> {
    let mut timeline = Timeline::default();
    let mut found = Vec::new();
    for (index, event) in events.iter().enumerate() {
        if event.kind() == Some("task_start")
            && let Some(task) = event.str("task")
        {
            let waiting: Vec<&str> = graph
                .prerequisites
                .get(task)
                .into_iter()
                .flatten()
                .copied()
                .filter(|p| !timeline.completed(p, graph))
                .collect();
            if !waiting.is_empty() {
                found.push((
                    index,
                    Code::StartedEarly,
                    format!(
                        "{task} started while {} was not completed",
                        waiting.join(", ")
                    ),
                ));
            }
        }
        timeline.record(event, graph);
    }
    found
}

/// The facts of completion as the journal has them so far.
#[derive(Default)]
struct Timeline<'e> {
    starts: HashMap<&'e str, i64>,
    /// Per (task, criterion), the latest accepted passing gate run.
    passed: HashMap<(&'e str, &'e str), i64>,
    invalidated_before: HashMap<&'e str, i64>,
    approved: HashSet<&'e str>,
    /// Amendments waiting for the approval of the revision they introduce.
    pending: HashMap<&'e str, Vec<&'e Event<'e>>>,
}

impl<'e> Timeline<'e> {
    fn completed(&self, task: &str, graph: &TaskGraph) -> bool {
        let Some(&start) = self.starts.get(task) else {
            return false;
        };
        graph
            .criteria
            .get(task)
            .into_iter()
            .flatten()
            .all(|criterion| {
                let floor = start.max(self.invalidated_before.get(criterion).copied().unwrap_or(0));
                self.passed
                    .get(&(task, criterion))
                    .is_some_and(|&seq| seq >= floor)
            })
    }

    fn record(&mut self, event: &'e Event<'e>, graph: &TaskGraph) {
        let seq = event.seq();
        match event.kind() {
            Some("task_start") => {
                if let Some(task) = event.str("task") {
                    let start = self.starts.entry(task).or_insert(seq);
                    *start = (*start).max(seq);
                }
            }
            Some("gate_run") => {
                let (Some(task), Some(criterion)) = (event.str("task"), event.str("criterion"))
                else {
                    return;
                };
                let trust = event
                    .value
                    .get("trust")
                    .unwrap_or(&crate::plan::record::value::NULL);
                let accepted = graph
                    .accepted
                    .get(criterion)
                    .is_some_and(|a| a.iter().any(|kind| trust == *kind));
                if accepted && super::projection::is_success(event.value.get("exit_code")) {
                    let passed = self.passed.entry((task, criterion)).or_insert(seq);
                    *passed = (*passed).max(seq);
                }
            }
            Some("approval") => {
                if let Some(id) = event.str("contract_id") {
                    self.approved.insert(id);
                    for amendment in self.pending.remove(id).unwrap_or_default() {
                        self.invalidate(amendment);
                    }
                }
            }
            Some("amendment") => match super::amendment_tag(event) {
                Some(tag) if !self.approved.contains(tag) => {
                    self.pending.entry(tag).or_default().push(event)
                }
                _ => self.invalidate(event),
            },
            _ => {}
        }
    }

    fn invalidate(&mut self, amendment: &'e Event<'e>) {
        let criteria = amendment
            .value
            .get("evidence_invalidated")
            .and_then(Json::as_array);
        for criterion in criteria.into_iter().flatten().filter_map(Json::as_str) {
            let floor = self.invalidated_before.entry(criterion).or_insert(0);
            *floor = (*floor).max(amendment.seq());
        }
    }
}

/// Delegations whose latest state is still `launched`: `(event index of that state, id, task)`.
pub fn open_delegations(events: &[Event]) -> Vec<(usize, String, String)> {
    let mut latest: HashMap<&str, usize> = HashMap::new();
    let mut order = Vec::new();
    for (index, event) in events.iter().enumerate() {
        if event.kind() == Some("delegation")
            && let Some(id) = event.str("delegation_id")
            && latest.insert(id, index).is_none()
        {
            order.push(id);
        }
    }
    order
        .into_iter()
        .filter_map(|id| {
            let event = &events[latest[id]];
            (event.str("state") == Some("launched")).then(|| {
                (
                    latest[id],
                    id.to_owned(),
                    event.str("task").unwrap_or("?").to_owned(),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const REVISION_2: &str = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";

    fn events(bodies: Vec<Value>) -> Vec<Event<'static>> {
        Event::journal_of(bodies)
    }

    fn start(seq: i64, task: &str) -> Value {
        json!({"type": "task_start", "seq": seq, "task": task})
    }

    fn gate(seq: i64, task: &str, criterion: &str, path: &str) -> Value {
        json!({"type": "gate_run", "seq": seq, "task": task, "criterion": criterion,
               "exit_code": 0, "trust": "observed", "evidence_path": path})
    }

    /// T-docs waits for T-read, which is gated on AC-reads.
    fn contract() -> Value {
        json!({
            "acceptance": {"criteria": [{"id": "AC-reads", "accepted_evidence": ["observed"]}]},
            "tasks": [
                {"id": "T-read", "gate_intent": [{"criterion": "AC-reads"}]},
                {"id": "T-docs", "prerequisites": ["T-read"], "gate_intent": []}
            ]
        })
    }

    fn early(bodies: Vec<Value>) -> Vec<(usize, Code)> {
        let contract = contract();
        early_starts(&events(bodies), &TaskGraph::of(&contract))
            .into_iter()
            .map(|(index, code, _)| (index, code))
            .collect()
    }

    #[test]
    fn a_task_started_before_its_prerequisite_completed_started_early() {
        let found = early(vec![start(1, "T-read"), start(2, "T-docs")]);
        assert_eq!(found, vec![(1, Code::StartedEarly)]);
        assert_eq!(
            early(vec![start(1, "T-docs")]),
            vec![(0, Code::StartedEarly)]
        );
    }

    #[test]
    fn a_task_started_after_its_prerequisite_completed_is_in_order() {
        let found = early(vec![
            start(1, "T-read"),
            gate(2, "T-read", "AC-reads", "gates/T-read/2.log"),
            start(3, "T-docs"),
        ]);
        assert_eq!(found, vec![]);
    }

    #[test]
    fn a_restarted_prerequisite_is_open_again() {
        let found = early(vec![
            start(1, "T-read"),
            gate(2, "T-read", "AC-reads", "gates/T-read/2.log"),
            start(3, "T-read"),
            start(4, "T-docs"),
        ]);
        assert_eq!(found, vec![(3, Code::StartedEarly)]);
    }

    fn tagged_amendment(seq: i64) -> Value {
        json!({"type": "amendment", "seq": seq, "evidence_invalidated": ["AC-reads"],
               "note": format!("amendment to revision 2 contract {REVISION_2}")})
    }

    #[test]
    fn an_amendment_reopens_a_prerequisite_only_once_approved_by_then() {
        let completed = vec![
            start(1, "T-read"),
            gate(2, "T-read", "AC-reads", "gates/T-read/2.log"),
            tagged_amendment(3),
        ];
        let mut unapproved = completed.clone();
        unapproved.push(start(4, "T-docs"));
        assert_eq!(early(unapproved), vec![]);

        let mut approved_before = completed.clone();
        approved_before.push(json!({"type": "approval", "seq": 4, "contract_id": REVISION_2}));
        approved_before.push(start(5, "T-docs"));
        assert_eq!(early(approved_before), vec![(4, Code::StartedEarly)]);

        let mut approved_after = completed;
        approved_after.push(start(4, "T-docs"));
        approved_after.push(json!({"type": "approval", "seq": 5, "contract_id": REVISION_2}));
        assert_eq!(
            early(approved_after),
            vec![],
            "judged as the journal stood then"
        );
    }

    fn foreign(bodies: Vec<Value>) -> Vec<(usize, String)> {
        foreign_evidence(&events(bodies))
            .into_iter()
            .map(|(index, code, message)| {
                assert_eq!(code, Code::ForeignEvidence);
                (index, message)
            })
            .collect()
    }

    #[test]
    fn a_gate_citing_another_tasks_gate_folder_is_foreign_evidence() {
        let found = foreign(vec![gate(1, "T-docs", "AC-reads", "./gates/T-read/1.log")]);
        assert_eq!(found.len(), 1);
        assert!(found[0].1.contains("a log of T-read's gates"), "{found:?}");
        assert_eq!(
            foreign(vec![gate(1, "T-read", "AC-reads", "gates/T-read/1.log")]),
            vec![]
        );
    }

    #[test]
    fn a_log_cited_by_two_tasks_is_foreign_to_the_second() {
        let found = foreign(vec![
            gate(1, "T-read", "AC-reads", "logs/shared.log"),
            gate(2, "T-read", "AC-reads", "logs/shared.log"),
            gate(3, "T-docs", "AC-reads", "./logs/shared.log"),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 2);
        assert!(found[0].1.contains("which a gate of T-read cited first"));
    }

    fn logged(exit_code: Value, log: Result<&[u8], ()>) -> Vec<Code> {
        let mut run = gate(1, "T-read", "AC-reads", "gates/T-read/1.log");
        run["exit_code"] = exit_code;
        let events = events(vec![run]);
        let gates = observed_gates(&events);
        assert_eq!(gates, vec![(0, "gates/T-read/1.log".to_owned())]);
        let log = log.map(<[u8]>::to_vec).map_err(|()| ReadFailure::Missing);
        log_findings(&events, &gates, vec![log])
            .into_iter()
            .map(|(_, code, _)| code)
            .collect()
    }

    #[test]
    fn an_observed_gate_log_ends_with_the_recorded_exit_code() {
        assert_eq!(logged(json!(0), Ok(b"ok\n--- exit 0 ---\n")), vec![]);
        assert_eq!(logged(json!(2), Ok(b"--- exit 2 ---\n")), vec![]);
        assert_eq!(
            logged(json!(0), Ok(b"--- exit 1 ---\n")),
            vec![Code::GateLogExit]
        );
    }

    #[test]
    fn an_observed_gate_log_without_its_exit_line_is_refused() {
        assert_eq!(logged(json!(0), Ok(b"ok\n")), vec![Code::GateLogExit]);
        assert_eq!(
            logged(json!(0), Ok(b"--- exit 0 ---")),
            vec![Code::GateLogExit],
            "the exit line ends the log with its newline"
        );
        assert_eq!(
            logged(json!(0), Ok(b"--- exit 0 ---\nmore\n")),
            vec![Code::GateLogExit]
        );
    }

    #[test]
    fn an_observed_gate_whose_log_is_missing_is_refused() {
        assert_eq!(logged(json!(0), Err(())), vec![Code::GateLogMissing]);
    }

    fn evaluation(statement: &str, trust: &str) -> Value {
        json!({"type": "observation", "seq": 4, "statement": statement, "trust": trust,
               "evidence_path": "gates/INV-a/004-check.log"})
    }

    fn evaluation_logged(statement: &str, log: &[u8]) -> Vec<Code> {
        let events = events(vec![evaluation(statement, "observed")]);
        let gates = observed_gates(&events);
        assert_eq!(gates, vec![(0, "gates/INV-a/004-check.log".to_owned())]);
        log_findings(&events, &gates, vec![Ok(log.to_vec())])
            .into_iter()
            .map(|(_, code, _)| code)
            .collect()
    }

    // Rule 21 with rule 22: an observed invariant evaluation rests on the log of the check dwp
    // ran, so its verdict is the log's exit line.
    #[test]
    fn an_observed_invariant_evaluation_shows_its_verdict_in_its_log() {
        let pass = "INV-a: pass";
        let fail = "INV-a: fail: the check exited 1";
        assert_eq!(evaluation_logged(pass, b"--- exit 0 ---\n"), vec![]);
        assert_eq!(evaluation_logged(fail, b"--- exit 1 ---\n"), vec![]);
        assert_eq!(
            evaluation_logged(pass, b"--- exit 1 ---\n"),
            vec![Code::GateLogExit]
        );
        assert_eq!(
            evaluation_logged(fail, b"--- exit 0 ---\n"),
            vec![Code::GateLogExit]
        );
        assert_eq!(evaluation_logged(pass, b"ok\n"), vec![Code::GateLogExit]);
    }

    #[test]
    fn an_asserted_evaluation_or_another_observation_has_no_log_read() {
        let asserted = evaluation("INV-a: pass", "asserted");
        let other = evaluation("the build is green", "observed");
        assert_eq!(observed_gates(&events(vec![asserted, other])), vec![]);
    }

    #[test]
    fn only_observed_gate_runs_have_their_logs_read() {
        let mut asserted = gate(1, "T-read", "AC-reads", "gates/T-read/1.log");
        asserted["trust"] = json!("asserted");
        assert_eq!(observed_gates(&events(vec![asserted])), vec![]);
    }

    fn delegation(seq: i64, id: &str, state: &str) -> Value {
        json!({"type": "delegation", "seq": seq, "task": "T-docs", "delegation_id": id,
               "state": state})
    }

    #[test]
    fn a_delegation_left_launched_is_open_and_a_collected_one_closed() {
        let open = open_delegations(&events(vec![
            delegation(1, "docs-1", "launched"),
            delegation(2, "docs-2", "launched"),
            delegation(3, "docs-1", "completed"),
        ]));
        assert_eq!(open, vec![(1, "docs-2".to_owned(), "T-docs".to_owned())]);
    }
}
