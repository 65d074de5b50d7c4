//! A record plan's contract: its identity (rule 1), the rules its schema cannot say (rules 4, 5,
//! 7, 8) and the revision chain (rule 2), as docs/record-plans.md states them.

use crate::plan::json::Field;
use crate::plan::pyjson;
use crate::plan::record::{RecordGeneration, UrlGeneration, as_int, url_generation};
use crate::plan::typed_schema::CAPABILITIES;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The contract id of `contract`: sha256 of its canonical bytes without `contract_id`.
pub fn computed_id(contract: &Value) -> String {
    pyjson::contract_id(contract)
}

/// The id a contract goes by: its stamp when it has one, else the computed id (the public
/// ledger's `stamped or compute_contract_id(...)`).
pub fn effective_id(contract: &Value) -> Value {
    match contract.field("contract_id") {
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
    let stamped = contract.field("contract_id")?;
    let computed = computed_id(contract);
    (stamped.as_str() != Some(computed.as_str())).then(|| (stamped.to_string(), computed))
}

/// The canonical bytes without the chain fields: what "changed in substance" compares (the
/// public ledger's `revision_content_bytes`).
pub fn substance(contract: &Value) -> Vec<u8> {
    match contract {
        Value::Object(map) => {
            let body: serde_json::Map<String, Value> = map
                .iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "contract_id" | "parent_contract_id" | "revision"
                    )
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            pyjson::canonical(&Value::Object(body))
        }
        other => pyjson::canonical(other),
    }
}

/// Every rule the live contract breaks that its schema cannot say, one message each.
pub fn rule_breaks<'a>(contract: &'a Value) -> Vec<String> {
    let mut found = Vec::new();
    let list = |value: Option<&'a Value>| -> &'a [Value] {
        value
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    let criteria = list(
        contract
            .field("acceptance")
            .and_then(|a| a.field("criteria")),
    );
    let criterion_ids = unique_ids(criteria, "acceptance criterion", &mut found);
    unique_ids(list(contract.field("invariants")), "invariant", &mut found);
    let tasks = list(contract.field("tasks"));
    unique_ids(tasks, "task", &mut found);
    task_graph(tasks, &criterion_ids, &mut found);
    permissions(contract.field("permissions"), &mut found);
    limits(contract, &mut found);
    surfaces(contract, tasks, &mut found);
    closable(criteria, tasks, &mut found);
    found
}

fn unique_ids(items: &[Value], what: &str, found: &mut Vec<String>) -> HashSet<String> {
    let mut seen = HashSet::new();
    for id in items
        .iter()
        .filter_map(|i| i.field("id"))
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
    let ids: HashSet<&str> = tasks
        .iter()
        .filter_map(|t| t.field("id")?.as_str())
        .collect();
    let mut edges: HashMap<&str, Vec<&str>> = HashMap::new();
    for task in tasks {
        let Some(id) = task.field("id").and_then(Value::as_str) else {
            continue;
        };
        let prerequisites = task.field("prerequisites").and_then(Value::as_array);
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
        let intents = task.field("gate_intent").and_then(Value::as_array);
        for criterion in intents
            .into_iter()
            .flatten()
            .filter_map(|g| g.field("criterion")?.as_str())
        {
            if !criteria.contains(criterion) {
                found.push(format!(
                    "task {id} gates on {criterion}, which is no criterion of the contract"
                ));
            }
        }
    }
    let order: Vec<&str> = tasks
        .iter()
        .filter_map(|t| t.field("id")?.as_str())
        .collect();
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
        .field("resource_envelope")
        .and_then(|r| r.field("limits"))
        .and_then(Value::as_array);
    let mut seen = HashSet::new();
    for limit in limits.into_iter().flatten() {
        let id = limit.field("id").and_then(Value::as_str).unwrap_or("?");
        if !seen.insert(id) {
            found.push(format!("the limit id {id} is declared twice"));
        }
        let value = limit.field("limit").and_then(super::events::number);
        if value.is_none_or(|v| v < 0.0) {
            found.push(format!("limit {id} is not a number >= 0"));
        }
        let reserve = limit.field("reserve").and_then(super::events::number);
        if let (Some(reserve), Some(value)) = (reserve, value)
            && reserve > value
        {
            found.push(format!(
                "limit {id} reserves {reserve}, more than its limit {value}"
            ));
        }
        let enforced = limit.field("enforcement").and_then(Value::as_str) == Some("enforced");
        let metered = limit
            .field("metering_source")
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
    if empty(
        contract
            .field("scope")
            .and_then(|s| s.field("allowed_paths")),
    ) {
        found.push("scope.allowed_paths is empty: a plan that may touch nothing cannot run".into());
    }
    for task in tasks {
        if empty(task.field("touched_surface")) {
            let id = task.field("id").and_then(Value::as_str).unwrap_or("?");
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
        .filter_map(|t| t.field("gate_intent")?.as_array())
        .flatten()
        .filter_map(|g| g.field("criterion")?.as_str())
        .collect();
    for criterion in criteria {
        let Some(id) = criterion.field("id").and_then(Value::as_str) else {
            continue;
        };
        let control = criterion
            .field("control")
            .and_then(|c| c.field("kind"))
            .and_then(Value::as_str);
        if matches!(control, Some("regression" | "discrimination")) || !gated.contains(id) {
            continue;
        }
        let accepted = criterion
            .field("accepted_evidence")
            .and_then(Value::as_array);
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
        match revision.contract.field("revision").and_then(as_int) {
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
        let parent = revision.contract.field("parent_contract_id");
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
        if previous.contract.field("plan") != revision.contract.field("plan") {
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
    match url_generation(contract.field("schema"), "plan-contract") {
        UrlGeneration::Known(generation) => Some(generation),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const V7: &str = "https://deepworkplan.com/schema/plan-contract/v7.json";

    /// A contract that breaks no rule: two tasks, the second after the first, each gated.
    fn sound() -> Value {
        json!({
            "schema": V7,
            "plan": "PLAN_record_rules",
            "revision": 1,
            "acceptance": {"criteria": [
                {"id": "AC-reads", "accepted_evidence": ["observed"]},
                {"id": "AC-docs", "accepted_evidence": ["asserted", "imported"]}
            ]},
            "invariants": [{"id": "INV-append-only"}],
            "tasks": [
                {"id": "T-read", "prerequisites": [], "touched_surface": ["src/"],
                 "gate_intent": [{"criterion": "AC-reads"}]},
                {"id": "T-docs", "prerequisites": ["T-read"], "touched_surface": ["docs/"],
                 "gate_intent": [{"criterion": "AC-docs"}]}
            ],
            "permissions": {"granted": ["gate_command_exec"], "not_granted": ["network_access"]},
            "resource_envelope": {"limits": [
                {"id": "tokens", "limit": 100, "reserve": 10, "enforcement": "enforced",
                 "metering_source": "host meter"},
                {"id": "wall_minutes", "limit": 90, "enforcement": "advisory"}
            ]},
            "scope": {"allowed_paths": ["src/", "docs/"]}
        })
    }

    /// The one rule `change` makes `sound()` break, asserted to mention `words`.
    fn breaks(change: impl FnOnce(&mut Value), words: &str) {
        let mut contract = sound();
        change(&mut contract);
        let found = rule_breaks(&contract);
        assert!(
            found.len() == 1 && found[0].contains(words),
            "expected one break mentioning {words:?}, got {found:?}"
        );
    }

    #[test]
    fn a_sound_contract_breaks_no_rule() {
        assert_eq!(rule_breaks(&sound()), Vec::<String>::new());
    }

    #[test]
    fn acceptance_criterion_ids_are_unique() {
        breaks(
            |c| {
                let criteria = c["acceptance"]["criteria"].as_array_mut().unwrap();
                criteria.push(json!({"id": "AC-reads", "accepted_evidence": ["observed"]}));
            },
            "acceptance criterion id AC-reads is declared twice",
        );
    }

    #[test]
    fn invariant_ids_are_unique() {
        breaks(
            |c| c["invariants"] = json!([{"id": "INV-a"}, {"id": "INV-a"}]),
            "invariant id INV-a is declared twice",
        );
    }

    #[test]
    fn task_ids_are_unique() {
        breaks(
            |c| {
                c["tasks"][1]["id"] = json!("T-read");
                c["tasks"][1]["prerequisites"] = json!([]);
            },
            "task id T-read is declared twice",
        );
    }

    #[test]
    fn a_prerequisite_names_a_declared_task() {
        breaks(
            |c| c["tasks"][1]["prerequisites"] = json!(["T-gone"]),
            "prerequisite T-gone, which is no task",
        );
    }

    #[test]
    fn prerequisites_form_no_cycle() {
        breaks(
            |c| c["tasks"][0]["prerequisites"] = json!(["T-docs"]),
            "form a cycle (T-read -> T-docs -> T-read)",
        );
    }

    #[test]
    fn a_task_depending_on_itself_is_a_cycle() {
        breaks(
            |c| c["tasks"][0]["prerequisites"] = json!(["T-read"]),
            "form a cycle (T-read -> T-read)",
        );
    }

    #[test]
    fn gate_intent_names_a_declared_criterion() {
        breaks(
            |c| c["tasks"][0]["gate_intent"] = json!([{"criterion": "AC-gone"}]),
            "gates on AC-gone, which is no criterion",
        );
    }

    #[test]
    fn capabilities_come_from_the_closed_set() {
        breaks(
            |c| c["permissions"]["granted"] = json!(["gate_command_exec", "root_shell"]),
            "permissions.granted names root_shell, outside the closed capability set",
        );
    }

    #[test]
    fn granted_and_not_granted_are_disjoint() {
        breaks(
            |c| c["permissions"]["not_granted"] = json!(["gate_command_exec"]),
            "gate_command_exec is both granted and not granted",
        );
    }

    #[test]
    fn a_reserve_is_no_more_than_its_limit() {
        breaks(
            |c| c["resource_envelope"]["limits"][0]["reserve"] = json!(100.5),
            "limit tokens reserves 100.5, more than its limit 100",
        );
        let mut equal = sound();
        equal["resource_envelope"]["limits"][0]["reserve"] = json!(100);
        assert!(rule_breaks(&equal).is_empty());
    }

    #[test]
    fn an_enforced_limit_names_its_metering_source() {
        breaks(
            |c| c["resource_envelope"]["limits"][1]["enforcement"] = json!("enforced"),
            "limit wall_minutes is enforced but names no metering_source",
        );
        breaks(
            |c| c["resource_envelope"]["limits"][0]["metering_source"] = json!(""),
            "limit tokens is enforced but names no metering_source",
        );
    }

    #[test]
    fn a_plan_may_touch_something() {
        breaks(
            |c| c["scope"]["allowed_paths"] = json!([]),
            "scope.allowed_paths is empty",
        );
    }

    #[test]
    fn every_task_declares_a_touched_surface() {
        breaks(
            |c| c["tasks"][1]["touched_surface"] = json!([]),
            "task T-docs declares no touched_surface",
        );
    }

    #[test]
    fn a_gated_criterion_accepts_evidence_something_can_mint() {
        breaks(
            |c| c["acceptance"]["criteria"][1]["accepted_evidence"] = json!(["imported"]),
            "criterion AC-docs accepts neither observed nor asserted evidence",
        );
    }

    #[test]
    fn a_criterion_closed_by_a_control_is_exempt_from_closability() {
        for kind in ["regression", "discrimination"] {
            let mut contract = sound();
            let criterion = &mut contract["acceptance"]["criteria"][1];
            criterion["accepted_evidence"] = json!(["imported"]);
            criterion["control"] = json!({"kind": kind});
            assert_eq!(rule_breaks(&contract), Vec::<String>::new(), "{kind}");
        }
    }

    #[test]
    fn a_criterion_no_task_gates_on_is_exempt_from_closability() {
        let mut contract = sound();
        contract["acceptance"]["criteria"][1]["accepted_evidence"] = json!(["imported"]);
        contract["tasks"][1]["gate_intent"] = json!([]);
        assert_eq!(rule_breaks(&contract), Vec::<String>::new());
    }

    /// `sound()` stamped with its own id, as revision 1.
    fn revision_one() -> Value {
        let mut contract = sound();
        contract["contract_id"] = json!(computed_id(&contract));
        contract
    }

    /// The revision after `previous`: cites it, changes its title.
    fn next_revision(previous: &Value) -> Value {
        let mut next = previous.clone();
        let n = previous["revision"].as_i64().unwrap() + 1;
        next["revision"] = json!(n);
        next["parent_contract_id"] = effective_id(previous);
        next["title"] = json!(format!("revision {n}"));
        next["contract_id"] = json!(computed_id(&next));
        next
    }

    fn chain_of(contracts: &[Value]) -> Vec<(String, String)> {
        let names: Vec<String> = (1..=contracts.len())
            .map(|n| format!("contracts/contract.r{n}.json"))
            .collect();
        let chain: Vec<Revision> = contracts
            .iter()
            .zip(&names)
            .map(|(contract, name)| Revision { name, contract })
            .collect();
        chain_breaks(Some(&contracts[0]), &chain)
    }

    /// The one chain break of `contracts`, asserted to mention `words`.
    fn chain_breaks_once(contracts: &[Value], words: &str) {
        let found = chain_of(contracts);
        assert!(
            found.len() == 1 && found[0].1.contains(words),
            "expected one chain break mentioning {words:?}, got {found:?}"
        );
    }

    #[test]
    fn a_sound_chain_has_no_break() {
        let r1 = revision_one();
        let r2 = next_revision(&r1);
        let r3 = next_revision(&r2);
        assert_eq!(chain_of(&[r1, r2, r3]), vec![]);
    }

    #[test]
    fn revisions_are_contiguous() {
        let r1 = revision_one();
        let r2 = next_revision(&r1);
        let mut r3 = next_revision(&r2);
        r3["revision"] = json!(4);
        let found = chain_breaks(
            Some(&r1),
            &[
                Revision {
                    name: "a.json",
                    contract: &r1,
                },
                Revision {
                    name: "c.json",
                    contract: &r3,
                },
            ],
        );
        assert!(
            found
                .iter()
                .any(|(file, m)| file == CHAIN_NAME
                    && m.contains("has no revision 2 below revision 4")),
            "{found:?}"
        );
    }

    const CHAIN_NAME: &str = crate::plan::record::CHAIN;

    #[test]
    fn each_revision_is_written_once() {
        let r1 = revision_one();
        let r2 = next_revision(&r1);
        let mut twin = next_revision(&r1);
        twin["title"] = json!("another revision 2");
        let found = chain_breaks(
            Some(&r1),
            &[
                Revision {
                    name: "r1.json",
                    contract: &r1,
                },
                Revision {
                    name: "r2.json",
                    contract: &r2,
                },
                Revision {
                    name: "r2b.json",
                    contract: &twin,
                },
            ],
        );
        assert!(
            found
                .iter()
                .any(|(file, m)| file == "r2b.json" && m.contains("is revision 2, as r2.json is")),
            "{found:?}"
        );
    }

    #[test]
    fn a_revision_cites_its_parents_id() {
        let r1 = revision_one();
        let mut r2 = next_revision(&r1);
        r2["parent_contract_id"] = json!("0".repeat(64));
        chain_breaks_once(&[r1, r2], "but revision 1 is");
    }

    #[test]
    fn a_revision_changes_substance() {
        let r1 = revision_one();
        let mut r2 = next_revision(&r1);
        r2.as_object_mut().unwrap().shift_remove("title");
        chain_breaks_once(&[r1, r2], "changes nothing of revision 1");
    }

    #[test]
    fn a_revision_keeps_the_plan() {
        let r1 = revision_one();
        let mut r2 = next_revision(&r1);
        r2["plan"] = json!("PLAN_another_plan");
        chain_breaks_once(&[r1, r2], "changes the plan");
    }

    #[test]
    fn a_revision_keeps_the_generation() {
        let r1 = revision_one();
        let mut r2 = next_revision(&r1);
        r2["schema"] = json!("https://deepworkplan.com/schema/plan-contract/v6.json");
        chain_breaks_once(&[r1, r2], "changes the generation");
    }

    #[test]
    fn contract_json_is_the_chains_revision_one() {
        let r1 = revision_one();
        let mut first = r1.clone();
        first["title"] = json!("edited after the copy");
        let found = chain_breaks(
            Some(&first),
            &[Revision {
                name: "r1.json",
                contract: &r1,
            }],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, crate::plan::record::CONTRACT);
        assert!(found[0].1.contains("differs from r1.json"));
    }

    #[test]
    fn revision_one_cites_no_parent() {
        let mut r1 = revision_one();
        r1["parent_contract_id"] = json!("0".repeat(64));
        chain_breaks_once(&[r1], "is revision 1 yet cites a parent");
    }

    #[test]
    fn a_stamp_that_is_not_the_computed_id_is_a_mismatch() {
        let stamped = revision_one();
        assert_eq!(stamp_mismatch(&stamped), None);
        assert_eq!(
            stamp_mismatch(&sound()),
            None,
            "an unstamped contract has no stamp"
        );
        let mut wrong = stamped.clone();
        wrong["contract_id"] = json!("f".repeat(64));
        let (shown, computed) = stamp_mismatch(&wrong).expect("a mismatch");
        assert_eq!(shown, format!("\"{}\"", "f".repeat(64)));
        assert_eq!(computed, computed_id(&stamped));
        let mut not_a_string = stamped;
        not_a_string["contract_id"] = json!(7);
        assert!(stamp_mismatch(&not_a_string).is_some());
    }

    #[test]
    fn the_effective_id_is_the_stamp_else_the_computed_id() {
        let mut contract = sound();
        let computed = computed_id(&contract);
        assert_eq!(effective_id(&contract), json!(computed));
        contract["contract_id"] = json!("e".repeat(64));
        assert_eq!(effective_id(&contract), json!("e".repeat(64)));
        assert_eq!(computed_id(&contract), computed, "the stamp is not hashed");
        for falsy in [json!(""), json!(null), json!(0), json!(false)] {
            contract["contract_id"] = falsy.clone();
            assert_eq!(effective_id(&contract), json!(computed), "{falsy}");
        }
    }
}
