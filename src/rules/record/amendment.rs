//! A record plan's amendment (rule 24, docs/record-plans.md "Writing a record plan"), as the
//! public ledger's `amend` makes it: the next link of the contract chain a draft becomes, what
//! it changes (the criteria whose evidence it invalidates, the tasks gating them), and the
//! `amendment` event's payload and notes, whose tag names the revision it introduces
//! ([`super::amendment_tag`] reads it back).

use crate::plan::record::as_int;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The public ledger's cut of a note.
const NOTE_CHARS: usize = 500;
/// The public ledger's cut of the criteria an amendment quotes.
const CRITERIA_CHARS: usize = 2000;

/// Give `draft` (a contract without `contract_id`) the chain fields of the next revision after
/// `live` (whose id is `live_id`): revision one above the live one, the live id as its parent.
/// A draft edited from a copy of the live contract carries the live chain fields, which are
/// replaced; a draft naming another revision or parent is refused (the reason returned), since
/// amendments chain from the live revision, never from an older one. Returns the revision.
pub fn next_link(
    draft: &mut Map<String, Value>,
    live: &Value,
    live_id: &str,
) -> Result<i64, String> {
    let live_revision = live.get("revision").cloned().unwrap_or(Value::from(1));
    let revision = as_int(&live_revision)
        .and_then(|n| n.checked_add(1))
        .ok_or("the live contract has no integer revision to amend")?;
    let copied = same(draft.get("revision"), Some(&live_revision))
        && same(
            draft.get("parent_contract_id"),
            live.get("parent_contract_id"),
        );
    if copied {
        draft.remove("revision");
        draft.remove("parent_contract_id");
    }
    draft
        .entry("revision")
        .or_insert_with(|| Value::from(revision));
    draft
        .entry("parent_contract_id")
        .or_insert_with(|| Value::from(live_id));
    let parent = Value::from(live_id);
    if !same(draft.get("revision"), Some(&Value::from(revision)))
        || !same(draft.get("parent_contract_id"), Some(&parent))
    {
        let short: String = live_id.chars().take(12).collect();
        return Err(format!(
            "the draft must be revision {revision} with parent {short} (the live contract): amendments chain from the live revision, never from an older one"
        ));
    }
    Ok(revision)
}

/// Refused (the reason returned) unless `draft` keeps the live contract's plan and generation.
pub fn keeps_plan(draft: &Value, live: &Value) -> Result<(), String> {
    let generation = super::contract::generation(live);
    if super::contract::generation(draft) != generation || draft.get("plan") != live.get("plan") {
        return Err(format!(
            "an amendment keeps the plan and its generation ({})",
            generation.map_or("unknown", |g| g.label())
        ));
    }
    Ok(())
}

/// What an amendment from `live` to `draft` changes, sorted: the criteria whose definition
/// changed or whose gate intent moved (another task or another check), whose earlier evidence
/// no longer counts, and the tasks gating them on either side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revised {
    pub criteria: Vec<String>,
    pub tasks: Vec<String>,
}

/// [`Revised`] of an amendment from `live` to `draft`, computed as the public ledger does.
pub fn revised(live: &Value, draft: &Value) -> Revised {
    let (old, new) = (criteria_by_id(live), criteria_by_id(draft));
    let mut intents: HashMap<&str, [Option<Value>; 2]> = HashMap::new();
    for (side, contract) in [live, draft].into_iter().enumerate() {
        for (criterion, intent) in gate_intents(contract) {
            intents.entry(criterion).or_default()[side] = Some(intent);
        }
    }
    let moved = |id: &str| {
        intents
            .get(id)
            .is_some_and(|[before, after]| !same(before.as_ref(), after.as_ref()))
    };
    let ids: BTreeSet<&str> = old.keys().chain(new.keys()).copied().collect();
    let criteria: Vec<String> = ids
        .into_iter()
        .filter(|id| !same(old.get(id).copied(), new.get(id).copied()) || moved(id))
        .map(str::to_owned)
        .collect();
    let tasks: BTreeSet<String> = criteria
        .iter()
        .filter_map(|id| intents.get(id.as_str()))
        .flatten()
        .flatten()
        .filter_map(|intent| intent[0].as_str().map(str::to_owned))
        .collect();
    Revised {
        criteria,
        tasks: tasks.into_iter().collect(),
    }
}

/// A contract's acceptance criteria by id (of two with one id, the last, as a dict keeps it).
fn criteria_by_id(contract: &Value) -> BTreeMap<&str, &Value> {
    let criteria = contract.pointer("/acceptance/criteria");
    list(criteria)
        .iter()
        .filter_map(|c| Some((c.get("id")?.as_str()?, c)))
        .collect()
}

/// Each gate intent of a contract's tasks in order: its criterion and `[task id, check]`.
fn gate_intents(contract: &Value) -> Vec<(&str, Value)> {
    let mut found = Vec::new();
    for task in list(contract.get("tasks")) {
        let id = task.get("id").cloned().unwrap_or(Value::Null);
        for intent in list(task.get("gate_intent")) {
            let check = intent.get("check").cloned().unwrap_or(Value::Null);
            if let Some(criterion) = intent.get("criterion").and_then(Value::as_str) {
                found.push((criterion, Value::Array(vec![id.clone(), check])));
            }
        }
    }
    found
}

fn list(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The tag an amendment's note carries: the revision it introduces and that revision's id.
pub fn tag(revision: i64, id: &str) -> String {
    format!("amendment to revision {revision} contract {id}")
}

/// The `amendment` event's note: its tag and the human-authority marker.
pub fn note(revision: i64, id: &str, marker: &str) -> String {
    cut(&format!("{} | {marker}", tag(revision, id)), NOTE_CHARS)
}

/// The note of the approval of the amended revision.
pub fn approval_note(revision: i64, reason: &str, marker: &str) -> String {
    cut(
        &format!("approves revision {revision} ({reason}) | {marker}"),
        NOTE_CHARS,
    )
}

/// The `amendment` event's payload: the changed criteria as they were and as they are revised
/// (`AC-x: <observable_check>`), the reason (also the observed finding), `authority`, and
/// the evidence the change invalidates; none is preserved.
pub fn payload(
    live: &Value,
    draft: &Value,
    revised: &Revised,
    reason: &str,
    authority: &str,
) -> Map<String, Value> {
    let ids = |items: &[String]| Value::from(items.to_vec());
    let mut payload = Map::new();
    payload.insert(
        "original_criterion".into(),
        criteria_text(live, &revised.criteria, "absent").into(),
    );
    payload.insert(
        "revised_criterion".into(),
        criteria_text(draft, &revised.criteria, "removed").into(),
    );
    payload.insert("observed_finding".into(), reason.into());
    payload.insert("reason".into(), reason.into());
    payload.insert("disposition".into(), "revised".into());
    payload.insert("authority".into(), authority.into());
    payload.insert("affected_tasks".into(), ids(&revised.tasks));
    payload.insert("evidence_invalidated".into(), ids(&revised.criteria));
    payload.insert("evidence_preserved".into(), Value::Array(Vec::new()));
    payload
}

/// `AC-x: <observable_check>` of each of `ids` in `contract` (`missing` where it has none),
/// joined by `; ` and cut as the public ledger cuts it.
fn criteria_text(contract: &Value, ids: &[String], missing: &str) -> String {
    let by_id = criteria_by_id(contract);
    let text = ids
        .iter()
        .map(|id| {
            let check = by_id
                .get(id.as_str())
                .and_then(|c| c.get("observable_check"));
            let shown = match check {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => missing.to_owned(),
            };
            format!("{id}: {shown}")
        })
        .collect::<Vec<_>>()
        .join("; ");
    match cut(&text, CRITERIA_CHARS) {
        empty if empty.is_empty() => "no criterion changed".into(),
        text => text,
    }
}

/// The first `chars` characters of `text` (Python's `text[:chars]`).
fn cut(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

/// Python's `==` of two optional JSON values, as the public ledger compares a contract's
/// parts: numbers by value (`1 == 1.0`, `True == 1`), containers member by member, whatever the
/// order of an object's keys.
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => equal(a, b),
        (None, None) => true,
        _ => false,
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

/// A number, or a bool as the number Python takes it for.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LIVE_ID: &str = "83a9476f2138f89942244eca00b04e5087940a203de3c368f45ec3401db8eee2";

    fn live() -> Value {
        json!({
            "schema": "https://deepworkplan.com/schema/plan-contract/v7.json",
            "plan": "PLAN_x",
            "revision": 1,
            "acceptance": {"criteria": [
                {"id": "AC-a", "observable_check": "a passes"},
                {"id": "AC-b", "observable_check": "b passes"},
            ]},
            "tasks": [
                {"id": "T-a", "gate_intent": [{"criterion": "AC-a", "check": "make a"}]},
                {"id": "T-b", "gate_intent": [{"criterion": "AC-b", "check": "make b"}]},
            ],
        })
    }

    fn draft_of(contract: &Value) -> Map<String, Value> {
        contract.as_object().unwrap().clone()
    }

    /// A draft copied from the live contract gets the next link; its own chain fields give way.
    #[test]
    fn a_copied_draft_becomes_the_next_revision_of_the_live_contract() {
        let mut draft = draft_of(&live());
        assert_eq!(next_link(&mut draft, &live(), LIVE_ID), Ok(2));
        assert_eq!(draft["revision"], 2);
        assert_eq!(draft["parent_contract_id"], LIVE_ID);
    }

    /// A draft naming another revision, or another parent, is refused.
    #[test]
    fn a_draft_naming_another_link_is_refused() {
        for (key, value) in [
            ("revision", json!(3)),
            ("parent_contract_id", json!("f".repeat(64))),
        ] {
            let mut draft = draft_of(&live());
            draft.insert(key.into(), value);
            if key == "parent_contract_id" {
                draft.insert("revision".into(), json!(2));
            }
            let refused = next_link(&mut draft, &live(), LIVE_ID).unwrap_err();
            assert!(
                refused.contains("revision 2 with parent 83a9476f2138"),
                "{refused}"
            );
        }
    }

    /// A changed check invalidates its criterion and names the task gating it; a moved gate
    /// intent counts as a change, an untouched criterion does not.
    #[test]
    fn a_changed_check_or_a_moved_intent_invalidates_its_criterion() {
        let mut draft = live();
        draft["acceptance"]["criteria"][0]["observable_check"] = json!("a passes twice");
        let found = revised(&live(), &draft);
        assert_eq!(found.criteria, ["AC-a"]);
        assert_eq!(found.tasks, ["T-a"]);

        let mut moved = live();
        moved["tasks"][1]["gate_intent"][0]["check"] = json!("make b --strict");
        assert_eq!(revised(&live(), &moved).criteria, ["AC-b"]);
        assert!(revised(&live(), &live()).criteria.is_empty());
    }

    /// The payload quotes each changed criterion before and after; with none, it says so.
    #[test]
    fn the_payload_quotes_the_changed_criteria() {
        let mut draft = live();
        draft["acceptance"]["criteria"][0]["observable_check"] = json!("a passes twice");
        let found = revised(&live(), &draft);
        let payload = payload(&live(), &draft, &found, "why", "ana");
        assert_eq!(payload["original_criterion"], "AC-a: a passes");
        assert_eq!(payload["revised_criterion"], "AC-a: a passes twice");
        assert_eq!(payload["evidence_invalidated"], json!(["AC-a"]));
        let none = Revised {
            criteria: Vec::new(),
            tasks: Vec::new(),
        };
        let payload = super::payload(&live(), &draft, &none, "why", "ana");
        assert_eq!(payload["original_criterion"], "no criterion changed");
    }

    /// Numbers compare as Python compares them.
    #[test]
    fn numbers_compare_by_value() {
        assert!(equal(&json!({"a": [1, true]}), &json!({"a": [1.0, 1]})));
        assert!(!equal(&json!(1), &json!("1")));
    }

    /// The notes are cut to 500 characters, as the public ledger cuts them.
    #[test]
    fn the_notes_are_cut_to_500_characters() {
        let marker = "m".repeat(600);
        assert_eq!(note(2, LIVE_ID, &marker).chars().count(), 500);
        assert!(approval_note(2, "why", "m").starts_with("approves revision 2 (why) | m"));
    }
}
