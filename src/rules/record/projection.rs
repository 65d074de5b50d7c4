//! The snapshot a record plan's journal projects: what `state.json` must hold, derived from the
//! live contract and every event (archived, then live), exactly as the public ledger derives it
//! (docs/record-plans.md, "The projection"), so that its bytes can be compared with the file's.
//!
//! Values are carried from the records verbatim (a `seq` written `3` stays `3`), and the document
//! is written with Python's `json.dumps(sort_keys=True, indent=2)` rules (`crate::plan::pyjson`).
//! Completion is derived, never declared: a task is completed when every criterion its
//! `gate_intent` names has accepted, passing evidence recorded at or after its latest start and
//! after any approved amendment that invalidated that criterion's evidence.

use crate::plan::json::Field;
use crate::plan::pyjson::{Part, pretty_parts};
use crate::plan::record::value::NULL;
use crate::plan::record::{Event, Json, RecordGeneration, SNAPSHOT_URL};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A task as the journal leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
}

impl TaskStatus {
    pub fn word(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
        }
    }
}

/// One criterion of a task's `gate_intent`, as its evidence stands.
#[derive(Debug, Clone)]
pub struct CriterionState {
    pub criterion: Value,
    /// The gate run that satisfies it: `(via_seq, trust, evidence_path)`.
    pub satisfied: Option<(Value, Value, Value)>,
    /// Gate runs recorded before the window opened (a restart, an amendment).
    pub stale: Vec<Value>,
}

/// One task of the contract, derived.
#[derive(Debug, Clone)]
pub struct TaskState {
    pub id: Value,
    pub title: Value,
    pub status: TaskStatus,
    /// The `seq` of its latest `task_start`.
    pub started: Option<Value>,
    pub criteria: Vec<CriterionState>,
}

impl TaskState {
    pub fn id_str(&self) -> &str {
        self.id.as_str().unwrap_or("")
    }
}

/// The projection of a record plan.
#[derive(Debug)]
pub struct Projection {
    pub tasks: Vec<TaskState>,
    /// The contract's `plan` (its name), as the snapshot holds it.
    pub plan: Value,
    bytes: Vec<u8>,
}

impl Projection {
    /// The bytes `state.json` must hold.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The facts of the plan the projection reads besides its events.
pub struct Inputs<'a> {
    pub contract: &'a Value,
    /// The live contract's id (stamped, or computed when unstamped).
    pub contract_id: &'a Value,
    pub generation: RecordGeneration,
    /// `(file name, first_seq, last_seq)` of each archive, by name.
    pub archives: Vec<(&'a str, u64, u64)>,
}

/// Project the journal.
pub fn project(inputs: &Inputs, events: &[Event]) -> Projection {
    let index = Index::of(events);
    let accepted = accepted_evidence(inputs.contract);
    let tasks: Vec<TaskState> = inputs
        .contract
        .field("tasks")
        .and_then(Value::as_array)
        .map(|tasks| {
            tasks
                .iter()
                .map(|task| task_state(task, &accepted, &index))
                .collect()
        })
        .unwrap_or_default();
    let bytes = snapshot_bytes(inputs, events, &tasks);
    let plan = inputs
        .contract
        .field("plan")
        .cloned()
        .unwrap_or(Value::Null);
    Projection { tasks, plan, bytes }
}

/// The events grouped once, so that each task is derived without a pass over the journal.
struct Index<'e> {
    /// Per task id, its latest `task_start`: `(seq, the seq as written)`.
    starts: HashMap<&'e str, (i64, &'e Json<'e>)>,
    /// Per (task, criterion), the gate runs in journal order.
    gates: HashMap<(&'e str, &'e str), Vec<&'e Event<'e>>>,
    /// Per criterion, evidence recorded before this seq no longer counts.
    invalidated_before: HashMap<String, i64>,
}

impl<'e> Index<'e> {
    fn of(events: &'e [Event<'e>]) -> Index<'e> {
        let mut starts: HashMap<&str, (i64, &Json)> = HashMap::new();
        let mut gates: HashMap<(&str, &str), Vec<&Event>> = HashMap::new();
        for event in events {
            match event.kind() {
                Some("task_start") => {
                    if let Some(task) = event.str("task") {
                        let seq = event.seq();
                        let entry = starts.entry(task).or_insert((seq, seq_value(event)));
                        if seq > entry.0 {
                            *entry = (seq, seq_value(event));
                        }
                    }
                }
                Some("gate_run") => {
                    if let (Some(task), Some(criterion)) =
                        (event.str("task"), event.str("criterion"))
                    {
                        gates.entry((task, criterion)).or_default().push(event);
                    }
                }
                _ => {}
            }
        }
        Index {
            starts,
            gates,
            invalidated_before: invalidated_before(events),
        }
    }
}

fn seq_value<'e>(event: &'e Event<'e>) -> &'e Json<'e> {
    event.value.get("seq").unwrap_or(&NULL)
}

/// An event's field as a JSON value (`null` when missing).
fn field(event: &Event, key: &str) -> Value {
    event.value.get(key).map_or(Value::Null, Json::to_value)
}

/// Per criterion, the highest seq of an amendment that invalidated its evidence. An amendment
/// whose note names the contract revision it introduces counts only once an approval cites that
/// revision: an abandoned amendment invalidates nothing.
pub fn invalidated_before(events: &[Event]) -> HashMap<String, i64> {
    let approved: HashSet<&str> = events
        .iter()
        .filter(|e| e.kind() == Some("approval"))
        .filter_map(|e| e.str("contract_id"))
        .collect();
    let mut found: HashMap<String, i64> = HashMap::new();
    for event in events.iter().filter(|e| e.kind() == Some("amendment")) {
        if let Some(tag) = super::amendment_tag(event)
            && !approved.contains(tag)
        {
            continue;
        }
        let invalidated = event
            .value
            .get("evidence_invalidated")
            .and_then(Json::as_array);
        for criterion in invalidated.into_iter().flatten().filter_map(Json::as_str) {
            let seq = found.entry(criterion.to_owned()).or_insert(0);
            *seq = (*seq).max(event.seq());
        }
    }
    found
}

/// Whether a recorded exit code is the success the public ledger counts (`== 0`, which a float
/// zero and `false` also satisfy in Python).
pub fn is_success(exit_code: Option<&Json>) -> bool {
    match exit_code {
        Some(code @ Json::Number(_)) => code.as_f64() == Some(0.0),
        Some(Json::Bool(false)) => true,
        _ => false,
    }
}

fn task_state(task: &Value, accepted: &HashMap<&str, &[Value]>, index: &Index) -> TaskState {
    let id = task.field("id").cloned().unwrap_or(Value::Null);
    let start = id.as_str().and_then(|id| index.starts.get(id));
    let intents = task.field("gate_intent").and_then(Value::as_array);
    let criteria: Vec<CriterionState> = intents
        .into_iter()
        .flatten()
        .map(|intent| {
            let criterion = intent.field("criterion").unwrap_or(&Value::Null);
            let wanted = criterion.as_str().and_then(|c| accepted.get(c)).copied();
            let runs = match (id.as_str(), criterion.as_str()) {
                (Some(task), Some(c)) => index.gates.get(&(task, c)).map(Vec::as_slice),
                _ => None,
            };
            let floor = criterion
                .as_str()
                .and_then(|c| index.invalidated_before.get(c))
                .copied()
                .unwrap_or(0);
            criterion_state(
                criterion.clone(),
                runs.unwrap_or(&[]),
                start.map(|s| s.0),
                floor,
                wanted,
            )
        })
        .collect();
    let status = match start {
        None => TaskStatus::Pending,
        Some(_) if criteria.iter().all(|c| c.satisfied.is_some()) => TaskStatus::Completed,
        Some(_) => TaskStatus::InProgress,
    };
    TaskState {
        id,
        title: task.field("title").cloned().unwrap_or(Value::Null),
        status,
        started: start.map(|(_, seq)| seq.to_value()),
        criteria,
    }
}

/// Each criterion id's `accepted_evidence` (the last criterion of an id wins, as in a dict).
fn accepted_evidence(contract: &Value) -> HashMap<&str, &[Value]> {
    let criteria = contract
        .field("acceptance")
        .and_then(|a| a.field("criteria"))
        .and_then(Value::as_array);
    criteria
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let id = c.field("id")?.as_str()?;
            let accepted = c.field("accepted_evidence").and_then(Value::as_array);
            Some((id, accepted.map(Vec::as_slice).unwrap_or(&[])))
        })
        .collect()
}

fn criterion_state(
    criterion: Value,
    runs: &[&Event],
    start: Option<i64>,
    invalidated_before: i64,
    wanted: Option<&[Value]>,
) -> CriterionState {
    let mut best: Option<&Event> = None;
    let mut stale = Vec::new();
    for run in runs {
        let seq = run.seq();
        if start.is_none_or(|start| seq < start) || seq < invalidated_before {
            stale.push(field(run, "seq"));
            continue;
        }
        let trust = run.value.get("trust").unwrap_or(&NULL);
        let accepted = wanted.is_some_and(|w| w.iter().any(|kind| trust == kind));
        if accepted && is_success(run.value.get("exit_code")) && best.is_none_or(|b| seq > b.seq())
        {
            best = Some(run);
        }
    }
    CriterionState {
        satisfied: best.map(|e| {
            (
                field(e, "seq"),
                field(e, "trust"),
                field(e, "evidence_path"),
            )
        }),
        criterion,
        stale,
    }
}

/// The snapshot's bytes: `json.dumps(state, sort_keys=True, indent=2) + "\n"`.
fn snapshot_bytes(inputs: &Inputs, events: &[Event], tasks: &[TaskState]) -> Vec<u8> {
    let mut positions: BTreeMap<&str, (i64, &Json)> = BTreeMap::new();
    let mut updated_at: Option<&str> = None;
    // Per limit, its latest sample (a later one replaces an earlier, as in a dict).
    let mut samples: BTreeMap<&str, &Event> = BTreeMap::new();
    let mut checkpoint = &NULL;
    for event in events {
        let kind = event.kind().unwrap_or("");
        if kind == "view_render" {
            continue;
        }
        if let Some(ts) = event.str("ts") {
            updated_at = Some(updated_at.map_or(ts, |top| top.max(ts)));
        }
        let seq = event.seq();
        if !kind.is_empty() && seq > positions.get(kind).map_or(0, |p| p.0) {
            positions.insert(kind, (seq, seq_value(event)));
        }
        match kind {
            "resource_sample" => {
                samples.insert(event.str("limit_id").unwrap_or("null"), event);
            }
            "intervention" if event.str("category") == Some("new_authority") => {
                checkpoint = event.value.get("question").unwrap_or(&NULL);
            }
            _ => {}
        }
    }
    let contract = inputs.contract;
    let from_contract = |key: &str| contract.get(key).map_or(Part::Null, Part::Value);
    let limits = contract
        .field("resource_envelope")
        .and_then(|r| r.field("limits"));
    let samples = samples.into_iter().map(|(limit, event)| {
        let sample = ["value", "seq", "trust"].map(|key| (key, record(event, key)));
        (limit, Part::Fields(sample.into()))
    });
    let positions = positions
        .into_iter()
        .map(|(kind, (_, seq))| (kind, Part::Fields(vec![("seq", Part::Record(seq))])));
    let mut document = vec![
        ("schema", Part::Text(SNAPSHOT_URL)),
        ("plan", from_contract("plan")),
        ("contract_id", Part::Value(inputs.contract_id)),
        (
            "contract_revision",
            contract
                .field("revision")
                .map_or(Part::Unsigned(1), Part::Value),
        ),
        (
            "generated_by",
            Part::Text(inputs.generation.ledger_identity()),
        ),
        ("updated_at", Part::Text(updated_at.unwrap_or(""))),
        ("checkpoint", Part::Record(checkpoint)),
        ("blocker", Part::Null),
        (
            "tasks",
            Part::List(tasks.iter().map(task_document).collect()),
        ),
        ("positions", Part::Fields(positions.collect())),
        (
            "resources",
            Part::Fields(vec![
                ("limits", limits.map_or(Part::List(Vec::new()), Part::Value)),
                ("latest_samples", Part::Fields(samples.collect())),
            ]),
        ),
    ];
    if !inputs.archives.is_empty() {
        let archives = inputs.archives.iter().map(|(file, first, last)| {
            let archive = [
                ("file", Part::Text(file)),
                ("first_seq", Part::Unsigned(*first)),
                ("last_seq", Part::Unsigned(*last)),
            ];
            Part::Fields(archive.into())
        });
        document.push(("archives", Part::List(archives.collect())));
    }
    let mut bytes = pretty_parts(&Part::Fields(document));
    bytes.push(b'\n');
    bytes
}

/// An event's field as a part of the snapshot (`null` when missing).
fn record<'e>(event: &'e Event<'e>, key: &str) -> Part<'e> {
    event.value.get(key).map_or(Part::Null, Part::Record)
}

fn task_document(task: &TaskState) -> Part<'_> {
    let started = task.started.as_ref().map_or(Part::Null, Part::Value);
    let criteria = task.criteria.iter().map(|c| {
        let fields = match &c.satisfied {
            Some((via_seq, trust, evidence_path)) => vec![
                ("criterion", Part::Value(&c.criterion)),
                ("satisfied", Part::Bool(true)),
                ("via_seq", Part::Value(via_seq)),
                ("trust", Part::Value(trust)),
                ("evidence_path", Part::Value(evidence_path)),
            ],
            None => vec![
                ("criterion", Part::Value(&c.criterion)),
                ("satisfied", Part::Bool(false)),
                (
                    "started_seq",
                    task.started.as_ref().map_or(Part::Null, Part::Value),
                ),
                (
                    "stale_seqs",
                    Part::List(c.stale.iter().map(Part::Value).collect()),
                ),
            ],
        };
        Part::Fields(fields)
    });
    Part::Fields(vec![
        ("id", Part::Value(&task.id)),
        ("title", Part::Value(&task.title)),
        ("status", Part::Text(task.status.word())),
        ("started_seq", started),
        ("criteria", Part::List(criteria.collect())),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The snapshot the projection writes, read back.
    fn document(projection: &Projection) -> Value {
        serde_json::from_slice(projection.bytes()).expect("the snapshot is JSON")
    }

    const APPROVED: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

    fn events(bodies: Vec<Value>) -> Vec<Event<'static>> {
        Event::journal_of(bodies)
    }

    fn start(seq: i64, task: &str) -> Value {
        json!({"type": "task_start", "seq": seq, "task": task, "ts": ts(seq)})
    }

    fn gate(seq: i64, task: &str, criterion: &str, exit_code: Value) -> Value {
        json!({"type": "gate_run", "seq": seq, "task": task, "criterion": criterion,
               "exit_code": exit_code, "trust": "observed",
               "evidence_path": format!("gates/{task}/{seq}.log"), "ts": ts(seq)})
    }

    fn ts(seq: i64) -> String {
        format!("2026-04-02T09:{seq:02}:00Z")
    }

    /// Two tasks: T-read gated on AC-reads (observed), T-docs on nothing.
    fn contract() -> Value {
        json!({
            "plan": "PLAN_record_projection",
            "revision": 2,
            "acceptance": {"criteria": [{"id": "AC-reads", "accepted_evidence": ["observed"]}]},
            "tasks": [
                {"id": "T-read", "title": "Read", "gate_intent": [{"criterion": "AC-reads"}]},
                {"id": "T-docs", "title": "Docs", "gate_intent": []}
            ],
            "resource_envelope": {"limits": [{"id": "tokens", "limit": 10}]}
        })
    }

    fn project_with(
        contract: &Value,
        archives: Vec<(&str, u64, u64)>,
        events: &[Event],
    ) -> Projection {
        let id = json!("c".repeat(64));
        let inputs = Inputs {
            contract,
            contract_id: &id,
            generation: RecordGeneration::V7,
            archives,
        };
        project(&inputs, events)
    }

    fn projected(bodies: Vec<Value>) -> Projection {
        project_with(&contract(), Vec::new(), &events(bodies))
    }

    fn read_task(projection: &Projection) -> &TaskState {
        &projection.tasks[0]
    }

    #[test]
    fn the_latest_task_start_opens_the_window_and_earlier_runs_are_stale() {
        let p = projected(vec![
            start(1, "T-read"),
            gate(2, "T-read", "AC-reads", json!(0)),
            start(3, "T-read"),
        ]);
        let task = read_task(&p);
        assert_eq!(task.status, TaskStatus::InProgress);
        assert_eq!(task.started, Some(json!(3)));
        assert_eq!(task.criteria[0].stale, vec![json!(2)]);
        assert_eq!(
            document(&p)["tasks"][0]["criteria"][0]["stale_seqs"],
            json!([2])
        );
    }

    #[test]
    fn a_passing_accepted_gate_in_the_window_completes_the_task() {
        let p = projected(vec![
            start(1, "T-read"),
            gate(2, "T-read", "AC-reads", json!(0)),
        ]);
        let task = read_task(&p);
        assert_eq!(task.status, TaskStatus::Completed);
        assert_eq!(
            document(&p)["tasks"][0]["criteria"][0],
            json!({"criterion": "AC-reads", "satisfied": true, "via_seq": 2,
                   "trust": "observed", "evidence_path": "gates/T-read/2.log"})
        );
    }

    fn amendment(seq: i64, note: &str) -> Value {
        json!({"type": "amendment", "seq": seq, "note": note,
               "evidence_invalidated": ["AC-reads"], "ts": ts(seq)})
    }

    fn tagged_note() -> String {
        format!("amendment to revision 2 contract {APPROVED}")
    }

    #[test]
    fn a_tagged_amendment_invalidates_only_once_an_approval_cites_its_revision() {
        let before = vec![
            start(1, "T-read"),
            gate(2, "T-read", "AC-reads", json!(0)),
            amendment(3, &tagged_note()),
        ];
        assert_eq!(
            read_task(&projected(before.clone())).status,
            TaskStatus::Completed
        );
        let mut approved = before;
        approved.push(json!({"type": "approval", "seq": 4, "contract_id": APPROVED}));
        let p = projected(approved);
        assert_eq!(read_task(&p).status, TaskStatus::InProgress);
        assert_eq!(read_task(&p).criteria[0].stale, vec![json!(2)]);
    }

    #[test]
    fn an_untagged_amendment_invalidates_at_once() {
        let p = projected(vec![
            start(1, "T-read"),
            gate(2, "T-read", "AC-reads", json!(0)),
            amendment(3, "the criterion changed"),
        ]);
        assert_eq!(read_task(&p).status, TaskStatus::InProgress);
        let p = projected(vec![
            start(1, "T-read"),
            amendment(2, "the criterion changed"),
            gate(3, "T-read", "AC-reads", json!(0)),
        ]);
        assert_eq!(
            read_task(&p).status,
            TaskStatus::Completed,
            "a later run counts"
        );
    }

    #[test]
    fn a_task_with_no_gate_intent_completes_when_started() {
        let p = projected(vec![]);
        assert_eq!(p.tasks[1].status, TaskStatus::Pending);
        let p = projected(vec![start(1, "T-docs")]);
        assert_eq!(p.tasks[1].status, TaskStatus::Completed);
    }

    #[test]
    fn evidence_of_a_trust_the_criterion_does_not_accept_does_not_satisfy() {
        let mut asserted = gate(2, "T-read", "AC-reads", json!(0));
        asserted["trust"] = json!("asserted");
        let p = projected(vec![start(1, "T-read"), asserted]);
        assert_eq!(read_task(&p).status, TaskStatus::InProgress);
    }

    #[test]
    fn an_exit_code_equal_to_zero_in_python_satisfies() {
        for code in [json!(0), json!(0.0), json!(false), json!(-0.0)] {
            let p = projected(vec![
                start(1, "T-read"),
                gate(2, "T-read", "AC-reads", code.clone()),
            ]);
            assert_eq!(read_task(&p).status, TaskStatus::Completed, "{code}");
        }
        for code in [json!(1), json!(true), json!("0"), json!(null)] {
            let p = projected(vec![
                start(1, "T-read"),
                gate(2, "T-read", "AC-reads", code.clone()),
            ]);
            assert_eq!(read_task(&p).status, TaskStatus::InProgress, "{code}");
        }
    }

    #[test]
    fn updated_at_is_the_string_maximum_and_ignores_view_renders() {
        let late_render = json!({"type": "view_render", "seq": 4, "ts": "2099-01-01T00:00:00Z"});
        let mut earlier = start(3, "T-docs");
        earlier["ts"] = json!("2026-04-01T00:00:00Z");
        let p = projected(vec![
            start(1, "T-read"),
            start(2, "T-read"),
            earlier,
            late_render,
        ]);
        assert_eq!(document(&p)["updated_at"], json!(ts(2)));
        assert_eq!(document(&projected(vec![]))["updated_at"], json!(""));
    }

    #[test]
    fn positions_hold_each_types_highest_seq_and_skip_view_renders() {
        let p = projected(vec![
            start(1, "T-read"),
            json!({"type": "view_render", "seq": 2}),
            start(3, "T-docs"),
            gate(4, "T-read", "AC-reads", json!(1)),
        ]);
        assert_eq!(
            document(&p)["positions"],
            json!({"gate_run": {"seq": 4}, "task_start": {"seq": 3}})
        );
    }

    #[test]
    fn latest_samples_are_keyed_by_limit_id_and_a_missing_one_as_null() {
        let sample = |seq: i64, limit: Option<&str>, value: f64| {
            let mut body = json!({"type": "resource_sample", "seq": seq, "value": value,
                                  "trust": "imported"});
            if let Some(limit) = limit {
                body["limit_id"] = json!(limit);
            }
            body
        };
        let p = projected(vec![
            sample(1, Some("tokens"), 1.0),
            sample(2, None, 5.0),
            sample(3, Some("tokens"), 2.5),
        ]);
        assert_eq!(
            document(&p)["resources"]["latest_samples"],
            json!({"tokens": {"value": 2.5, "seq": 3, "trust": "imported"},
                   "null": {"value": 5.0, "seq": 2, "trust": "imported"}})
        );
        assert_eq!(
            document(&p)["resources"]["limits"],
            json!([{"id": "tokens", "limit": 10}])
        );
    }

    #[test]
    fn the_checkpoint_is_the_latest_new_authority_question() {
        let ask = |seq: i64, category: &str, question: &str| {
            json!({"type": "intervention", "seq": seq, "category": category,
                   "question": question})
        };
        let p = projected(vec![
            ask(1, "new_authority", "may I add a dependency?"),
            ask(2, "new_authority", "may I widen the scope?"),
            ask(3, "environment_repair", "may I install the toolchain?"),
        ]);
        assert_eq!(document(&p)["checkpoint"], json!("may I widen the scope?"));
        assert_eq!(document(&projected(vec![]))["checkpoint"], Value::Null);
    }

    #[test]
    fn archives_are_listed_only_when_present() {
        assert!(document(&projected(vec![])).field("archives").is_none());
        let p = project_with(
            &contract(),
            vec![("journal-archive-000001-000040.ndjson", 1, 40)],
            &[],
        );
        assert_eq!(
            document(&p)["archives"],
            json!([{"file": "journal-archive-000001-000040.ndjson", "first_seq": 1, "last_seq": 40}])
        );
    }

    #[test]
    fn the_snapshot_bytes_end_with_one_newline() {
        let bytes = projected(vec![start(1, "T-read")]).bytes().to_vec();
        assert!(bytes.ends_with(b"}\n"));
        assert!(!bytes.ends_with(b"\n\n"));
    }
}
