//! The snapshot a record plan's journal projects: what `state.json` must hold, derived from the
//! live contract and every event (archived, then live), exactly as the public ledger derives it
//! (docs/record-plans.md, "The projection"), so that its bytes can be compared with the file's.
//!
//! Values are carried from the records verbatim (a `seq` written `3` stays `3`), and the document
//! is written with Python's `json.dumps(sort_keys=True, indent=2)` rules (`crate::plan::pyjson`).
//! Completion is derived, never declared: a task is completed when every criterion its
//! `gate_intent` names has accepted, passing evidence recorded at or after its latest start and
//! after any approved amendment that invalidated that criterion's evidence.

use crate::plan::record::{Event, RecordGeneration, SNAPSHOT_URL};
use serde::Serialize;
use serde_json::{Map, Value, json};
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
    pub document: Value,
}

impl Projection {
    /// The bytes `state.json` must hold.
    pub fn bytes(&self) -> Vec<u8> {
        let mut bytes = crate::plan::pyjson::pretty(&self.document);
        bytes.push(b'\n');
        bytes
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
    let tasks: Vec<TaskState> = inputs
        .contract
        .get("tasks")
        .and_then(Value::as_array)
        .map(|tasks| {
            tasks
                .iter()
                .map(|task| task_state(inputs.contract, task, &index))
                .collect()
        })
        .unwrap_or_default();
    let document = document(inputs, events, &tasks);
    Projection { tasks, document }
}

/// The events grouped once, so that each task is derived without a pass over the journal.
struct Index<'e> {
    /// Per task id, its latest `task_start`: `(seq, the seq as written)`.
    starts: HashMap<&'e str, (i64, &'e Value)>,
    /// Per (task, criterion), the gate runs in journal order.
    gates: HashMap<(&'e str, &'e str), Vec<&'e Event>>,
    /// Per criterion, evidence recorded before this seq no longer counts.
    invalidated_before: HashMap<String, i64>,
}

impl<'e> Index<'e> {
    fn of(events: &'e [Event]) -> Index<'e> {
        let mut starts: HashMap<&str, (i64, &Value)> = HashMap::new();
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

static ZERO: Value = Value::Null;

fn seq_value(event: &Event) -> &Value {
    event.value.get("seq").unwrap_or(&ZERO)
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
            .and_then(Value::as_array);
        for criterion in invalidated.into_iter().flatten().filter_map(Value::as_str) {
            let seq = found.entry(criterion.to_owned()).or_insert(0);
            *seq = (*seq).max(event.seq());
        }
    }
    found
}

/// Whether a recorded exit code is the success the public ledger counts (`== 0`, which a float
/// zero and `false` also satisfy in Python).
pub fn is_success(exit_code: Option<&Value>) -> bool {
    match exit_code {
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::Bool(false)) => true,
        _ => false,
    }
}

fn task_state(contract: &Value, task: &Value, index: &Index) -> TaskState {
    let id = task.get("id").cloned().unwrap_or(Value::Null);
    let start = id.as_str().and_then(|id| index.starts.get(id));
    let accepted = accepted_evidence(contract);
    let intents = task.get("gate_intent").and_then(Value::as_array);
    let criteria: Vec<CriterionState> = intents
        .into_iter()
        .flatten()
        .map(|intent| {
            let criterion = intent.get("criterion").unwrap_or(&Value::Null);
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
        title: task.get("title").cloned().unwrap_or(Value::Null),
        status,
        started: start.map(|(_, seq)| (*seq).clone()),
        criteria,
    }
}

/// Each criterion id's `accepted_evidence` (the last criterion of an id wins, as in a dict).
fn accepted_evidence(contract: &Value) -> HashMap<&str, &[Value]> {
    let criteria = contract
        .get("acceptance")
        .and_then(|a| a.get("criteria"))
        .and_then(Value::as_array);
    criteria
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let id = c.get("id")?.as_str()?;
            let accepted = c.get("accepted_evidence").and_then(Value::as_array);
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
            stale.push(run.value.get("seq").cloned().unwrap_or(Value::Null));
            continue;
        }
        let trust = run.value.get("trust").unwrap_or(&ZERO);
        let accepted = wanted.is_some_and(|w| w.contains(trust));
        if accepted && is_success(run.value.get("exit_code")) && best.is_none_or(|b| seq > b.seq())
        {
            best = Some(run);
        }
    }
    let field = |event: &Event, key: &str| event.value.get(key).cloned().unwrap_or(Value::Null);
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

fn document(inputs: &Inputs, events: &[Event], tasks: &[TaskState]) -> Value {
    let mut positions: BTreeMap<&str, (i64, &Value)> = BTreeMap::new();
    let mut updated_at: Option<&str> = None;
    let mut samples = Map::new();
    let mut checkpoint = &Value::Null;
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
                let key = event.str("limit_id").unwrap_or("null").to_owned();
                let field = |k: &str| event.value.get(k).cloned().unwrap_or(Value::Null);
                samples.insert(
                    key,
                    json!({"value": field("value"), "seq": field("seq"), "trust": field("trust")}),
                );
            }
            "intervention" if event.str("category") == Some("new_authority") => {
                checkpoint = event.value.get("question").unwrap_or(&Value::Null);
            }
            _ => {}
        }
    }
    let contract = inputs.contract;
    let limits = contract
        .get("resource_envelope")
        .and_then(|r| r.get("limits"))
        .cloned()
        .unwrap_or(json!([]));
    let positions: Map<String, Value> = positions
        .into_iter()
        .map(|(kind, (_, seq))| (kind.to_owned(), json!({"seq": seq})))
        .collect();
    let mut document = json!({
        "schema": SNAPSHOT_URL,
        "plan": contract.get("plan").cloned().unwrap_or(Value::Null),
        "contract_id": inputs.contract_id,
        "contract_revision": contract.get("revision").cloned().unwrap_or(json!(1)),
        "generated_by": inputs.generation.ledger_identity(),
        "updated_at": updated_at.unwrap_or(""),
        "tasks": tasks.iter().map(task_document).collect::<Vec<_>>(),
        "positions": positions,
        "resources": {"limits": limits, "latest_samples": samples},
        "checkpoint": checkpoint,
        "blocker": null,
    });
    if !inputs.archives.is_empty() {
        let archives: Vec<Value> = inputs
            .archives
            .iter()
            .map(|(file, first, last)| json!({"file": file, "first_seq": first, "last_seq": last}))
            .collect();
        document["archives"] = Value::Array(archives);
    }
    document
}

fn task_document(task: &TaskState) -> Value {
    let criteria: Vec<Value> = task
        .criteria
        .iter()
        .map(|c| match &c.satisfied {
            Some((via_seq, trust, evidence_path)) => json!({
                "criterion": c.criterion,
                "satisfied": true,
                "via_seq": via_seq,
                "trust": trust,
                "evidence_path": evidence_path,
            }),
            None => json!({
                "criterion": c.criterion,
                "satisfied": false,
                "started_seq": task.started.clone().unwrap_or(Value::Null),
                "stale_seqs": c.stale,
            }),
        })
        .collect();
    json!({
        "id": task.id,
        "title": task.title,
        "status": task.status.word(),
        "started_seq": task.started.clone().unwrap_or(Value::Null),
        "criteria": criteria,
    })
}
