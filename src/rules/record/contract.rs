//! A record plan's contract: its identity (rule 1), the rules its schema cannot say (rules 4, 5,
//! 7, 8) and the revision chain (rule 2), as docs/record-plans.md states them.

use crate::plan::pyjson;
use crate::plan::record::{RecordGeneration, UrlGeneration, as_int, url_generation};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The contract id of `contract`: sha256 of its canonical bytes without `contract_id`.
pub fn computed_id(contract: &Value) -> String {
    pyjson::contract_id(contract)
}

/// The id a contract goes by: its stamp when it has one, else the computed id (the public
/// ledger's `stamped or compute_contract_id(...)`).
pub fn effective_id(contract: &Value) -> Value {
    match contract.get("contract_id") {
        Some(stamp) if is_truthy(stamp) => stamp.clone(),
        _ => Value::String(computed_id(contract)),
    }
}

fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A stamped id that is not the computed one: `(stamped, computed)`.
pub fn stamp_mismatch(contract: &Value) -> Option<(String, String)> {
    let stamped = contract.get("contract_id")?;
    let computed = computed_id(contract);
    (stamped.as_str() != Some(computed.as_str())).then(|| (stamped.to_string(), computed))
}

/// The canonical bytes without the chain fields: what "changed in substance" compares.
fn substance(contract: &Value) -> Vec<u8> {
    let mut body = contract.clone();
    if let Some(map) = body.as_object_mut() {
        for key in ["contract_id", "parent_contract_id", "revision"] {
            map.shift_remove(key);
        }
    }
    pyjson::canonical(&body)
}

const CAPABILITIES: [&str; 9] = [
    "gate_command_exec",
    "fs_write_plan_scope",
    "fs_write_repo_scope",
    "git_operations",
    "network_access",
    "host_adapter_metering",
    "agent_delegation",
    "context_export",
    "model_routing",
];

/// Every rule the live contract breaks that its schema cannot say, one message each.
pub fn rule_breaks(contract: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let list = |value: Option<&Value>| value.and_then(Value::as_array).cloned().unwrap_or_default();
    let criteria = list(contract.get("acceptance").and_then(|a| a.get("criteria")));
    let criterion_ids = unique_ids(&criteria, "acceptance criterion", &mut found);
    unique_ids(&list(contract.get("invariants")), "invariant", &mut found);
    let tasks = list(contract.get("tasks"));
    unique_ids(&tasks, "task", &mut found);
    task_graph(&tasks, &criterion_ids, &mut found);
    permissions(contract.get("permissions"), &mut found);
    limits(contract, &mut found);
    surfaces(contract, &tasks, &mut found);
    closable(&criteria, &tasks, &mut found);
    found
}

fn unique_ids(items: &[Value], what: &str, found: &mut Vec<String>) -> HashSet<String> {
    let mut seen = HashSet::new();
    for id in items
        .iter()
        .filter_map(|i| i.get("id"))
        .filter_map(Value::as_str)
    {
        if !seen.insert(id.to_owned()) {
            found.push(format!(
                "the {what} id {id} is declared twice: ids are unique"
            ));
        }
    }
    seen
}

/// Prerequisites name declared tasks and form no cycle; every `gate_intent` names a declared
/// criterion.
fn task_graph(tasks: &[Value], criteria: &HashSet<String>, found: &mut Vec<String>) {
    let ids: HashSet<&str> = tasks.iter().filter_map(|t| t.get("id")?.as_str()).collect();
    let mut edges: HashMap<&str, Vec<&str>> = HashMap::new();
    for task in tasks {
        let Some(id) = task.get("id").and_then(Value::as_str) else {
            continue;
        };
        let prerequisites = task.get("prerequisites").and_then(Value::as_array);
        for prerequisite in prerequisites
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if ids.contains(prerequisite) {
                edges.entry(id).or_default().push(prerequisite);
            } else {
                found.push(format!(
                    "task {id} lists prerequisite {prerequisite}, which is no task of the contract"
                ));
            }
        }
        let intents = task.get("gate_intent").and_then(Value::as_array);
        for criterion in intents
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("criterion")?.as_str())
        {
            if !criteria.contains(criterion) {
                found.push(format!(
                    "task {id} gates on {criterion}, which is no criterion of the contract"
                ));
            }
        }
    }
    let order: Vec<&str> = tasks.iter().filter_map(|t| t.get("id")?.as_str()).collect();
    if let Some(cycle) = find_cycle(&order, &edges) {
        found.push(format!(
            "the prerequisites form a cycle ({}): the task graph must be a DAG",
            cycle.join(" -> ")
        ));
    }
}

/// One cycle of the prerequisite graph, as a path that returns to its start.
fn find_cycle<'a>(
    order: &[&'a str],
    edges: &HashMap<&'a str, Vec<&'a str>>,
) -> Option<Vec<&'a str>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    let mut marks: HashMap<&str, Mark> = HashMap::new();
    for &root in order {
        if marks.contains_key(root) {
            continue;
        }
        let mut path = vec![root];
        let mut stack = vec![(root, 0usize)];
        marks.insert(root, Mark::Open);
        while let Some((node, next)) = stack.last_mut() {
            let children = edges.get(node).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(&child) = children.get(*next) {
                *next += 1;
                match marks.get(child) {
                    Some(Mark::Open) => {
                        let at = path.iter().position(|&n| n == child).unwrap_or(0);
                        let mut cycle = path[at..].to_vec();
                        cycle.push(child);
                        return Some(cycle);
                    }
                    Some(Mark::Done) => {}
                    None => {
                        marks.insert(child, Mark::Open);
                        path.push(child);
                        stack.push((child, 0));
                    }
                }
            } else {
                marks.insert(node, Mark::Done);
                stack.pop();
                path.pop();
            }
        }
    }
    None
}

fn permissions(permissions: Option<&Value>, found: &mut Vec<String>) {
    let names = |key: &str| -> Vec<&str> {
        permissions
            .and_then(|p| p.get(key))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let (granted, denied) = (names("granted"), names("not_granted"));
    for (list, key) in [(&granted, "granted"), (&denied, "not_granted")] {
        let mut seen = HashSet::new();
        for name in list.iter() {
            if !CAPABILITIES.contains(name) {
                found.push(format!(
                    "permissions.{key} names {name}, outside the closed capability set"
                ));
            }
            if !seen.insert(name) {
                found.push(format!("permissions.{key} lists {name} twice"));
            }
        }
    }
    let mut both: Vec<&str> = granted
        .iter()
        .filter(|n| denied.contains(n))
        .copied()
        .collect();
    both.sort_unstable();
    both.dedup();
    for name in both {
        found.push(format!(
            "{name} is both granted and not granted: the lists are disjoint"
        ));
    }
}

fn limits(contract: &Value, found: &mut Vec<String>) {
    let limits = contract
        .get("resource_envelope")
        .and_then(|r| r.get("limits"))
        .and_then(Value::as_array);
    let mut seen = HashSet::new();
    for limit in limits.into_iter().flatten() {
        let id = limit.get("id").and_then(Value::as_str).unwrap_or("?");
        if !seen.insert(id) {
            found.push(format!("the limit id {id} is declared twice"));
        }
        let value = limit.get("limit").and_then(super::events::number);
        if value.is_none_or(|v| v < 0.0) {
            found.push(format!("limit {id} is not a number >= 0"));
        }
        let reserve = limit.get("reserve").and_then(super::events::number);
        if let (Some(reserve), Some(value)) = (reserve, value)
            && reserve > value
        {
            found.push(format!(
                "limit {id} reserves {reserve}, more than its limit {value}"
            ));
        }
        let enforced = limit.get("enforcement").and_then(Value::as_str) == Some("enforced");
        let metered = limit
            .get("metering_source")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty());
        if enforced && !metered {
            found.push(format!(
                "limit {id} is enforced but names no metering_source"
            ));
        }
    }
}

/// The public ledger refuses a plan that may touch nothing, and a task declaring no surface.
fn surfaces(contract: &Value, tasks: &[Value], found: &mut Vec<String>) {
    let empty = |v: Option<&Value>| v.and_then(Value::as_array).is_none_or(Vec::is_empty);
    if empty(contract.get("scope").and_then(|s| s.get("allowed_paths"))) {
        found.push("scope.allowed_paths is empty: a plan that may touch nothing cannot run".into());
    }
    for task in tasks {
        if empty(task.get("touched_surface")) {
            let id = task.get("id").and_then(Value::as_str).unwrap_or("?");
            found.push(format!("task {id} declares no touched_surface"));
        }
    }
}

/// A criterion some task gates on must accept evidence something can mint: observed (a gate)
/// or asserted (a sign-off); imported comes only from a migration (rule 8). A criterion closed
/// by a regression or discrimination control is exempt.
fn closable(criteria: &[Value], tasks: &[Value], found: &mut Vec<String>) {
    let gated: HashSet<&str> = tasks
        .iter()
        .filter_map(|t| t.get("gate_intent")?.as_array())
        .flatten()
        .filter_map(|g| g.get("criterion")?.as_str())
        .collect();
    for criterion in criteria {
        let Some(id) = criterion.get("id").and_then(Value::as_str) else {
            continue;
        };
        let control = criterion
            .get("control")
            .and_then(|c| c.get("kind"))
            .and_then(Value::as_str);
        if matches!(control, Some("regression" | "discrimination")) || !gated.contains(id) {
            continue;
        }
        let accepted = criterion.get("accepted_evidence").and_then(Value::as_array);
        let closable = accepted
            .into_iter()
            .flatten()
            .any(|t| matches!(t.as_str(), Some("observed" | "asserted")));
        if !closable {
            found.push(format!(
                "criterion {id} accepts neither observed nor asserted evidence: nothing can close it"
            ));
        }
    }
}

/// One revision of the chain.
pub struct Revision<'a> {
    pub name: &'a str,
    pub contract: &'a Value,
}

/// Every break of the revision chain `chain` (the `contracts/*.json` files), with `first`
/// (`contract.json`) when present: revisions 1..N each once, each above 1 citing its parent's
/// id and changing its substance, one plan and one generation throughout, and `contract.json`
/// the chain's revision 1.
pub fn chain_breaks(first: Option<&Value>, chain: &[Revision]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut by_revision: HashMap<i64, &Revision> = HashMap::new();
    for revision in chain {
        match revision.contract.get("revision").and_then(as_int) {
            Some(n) if n >= 1 => {
                if let Some(other) = by_revision.insert(n, revision) {
                    found.push((
                        revision.name.to_owned(),
                        format!(
                            "is revision {n}, as {} is: each revision is written once",
                            other.name
                        ),
                    ));
                }
            }
            _ => found.push((
                revision.name.to_owned(),
                "has no integer revision >= 1".into(),
            )),
        }
    }
    let top = by_revision.keys().copied().max().unwrap_or(0);
    for n in 1..=top {
        let Some(revision) = by_revision.get(&n) else {
            found.push((
                crate::plan::record::CHAIN.to_owned(),
                format!("has no revision {n} below revision {top}: revisions are contiguous"),
            ));
            continue;
        };
        let parent = revision.contract.get("parent_contract_id");
        if n == 1 {
            if parent.is_some() {
                found.push((
                    revision.name.to_owned(),
                    "is revision 1 yet cites a parent".into(),
                ));
            }
            continue;
        }
        let Some(previous) = by_revision.get(&(n - 1)) else {
            continue;
        };
        let parent_id = effective_id(previous.contract);
        if parent != Some(&parent_id) {
            found.push((
                revision.name.to_owned(),
                format!(
                    "cites parent {}, but revision {} is {parent_id}",
                    parent.map_or("(none)".into(), Value::to_string),
                    n - 1
                ),
            ));
        }
        if substance(previous.contract) == substance(revision.contract) {
            found.push((
                revision.name.to_owned(),
                format!("changes nothing of revision {} but its chain fields: a revision changes substance", n - 1),
            ));
        }
        if previous.contract.get("plan") != revision.contract.get("plan") {
            found.push((
                revision.name.to_owned(),
                "changes the plan: an amendment keeps it".into(),
            ));
        }
        if generation(previous.contract) != generation(revision.contract) {
            found.push((
                revision.name.to_owned(),
                "changes the generation: a plan keeps its generation for life".into(),
            ));
        }
    }
    if let (Some(first), Some(r1)) = (first, by_revision.get(&1))
        && computed_id(first) != computed_id(r1.contract)
    {
        found.push((
            crate::plan::record::CONTRACT.to_owned(),
            format!(
                "differs from {}, the chain's revision 1 it was copied to",
                r1.name
            ),
        ));
    }
    found
}

/// A contract's generation, when its URL names one.
pub fn generation(contract: &Value) -> Option<RecordGeneration> {
    match url_generation(contract.get("schema"), "plan-contract") {
        UrlGeneration::Known(generation) => Some(generation),
        _ => None,
    }
}
