//! The events dwp appends to a record plan's journal (docs/record-plans.md, "Writing a record
//! plan"): the envelope the public ledger writes (`schema` of the live generation, `type`,
//! `seq`, `ts`, `plan`, `contract_id`, `actor`, an optional `note`) around a payload, judged by
//! the same checks every read event meets ([`super::events::check`]) before it is written, and
//! framed as the public ledger frames a line: compact JSON with sorted keys, `ensure_ascii`, and
//! a newline.

use super::events::{self, Expect};
use crate::plan::record::RecordGeneration;
use serde_json::{Map, Value, json};

/// The live contract events are written under.
pub struct Live<'a> {
    pub contract: &'a Value,
    /// Its id: the stamped one, or the computed one when it has none.
    pub id: String,
    pub generation: RecordGeneration,
}

/// One event ready to append: its value and its line.
#[derive(Debug, Clone)]
pub struct Minted {
    pub event: Value,
    pub line: Vec<u8>,
}

/// The actor of what dwp itself writes: a helper, as the public ledger names itself.
pub fn helper() -> Value {
    json!({"kind": "helper", "identity": concat!("dwp/", env!("CARGO_PKG_VERSION"))})
}

/// The event of `kind` at `seq`, written at `ts` by `actor`, carrying `payload`; refused with
/// the first problem the reader's checks find in it.
pub fn mint(
    live: &Live,
    seq: i64,
    ts: &str,
    kind: &str,
    payload: Map<String, Value>,
    actor: Value,
    note: Option<&str>,
) -> Result<Minted, String> {
    let mut event = payload;
    let plan = live.contract.get("plan").cloned().unwrap_or(Value::Null);
    event.insert("schema".into(), live.generation.url("journal-event").into());
    event.insert("type".into(), kind.into());
    event.insert("seq".into(), seq.into());
    event.insert("ts".into(), ts.into());
    event.insert("plan".into(), plan);
    event.insert("contract_id".into(), live.id.clone().into());
    event.insert("actor".into(), actor);
    if let Some(note) = note {
        event.insert("note".into(), note.into());
    }
    let event = Value::Object(event);
    let expect = Expect {
        generation: Some(live.generation),
        plan: live.contract.get("plan").and_then(Value::as_str),
    };
    let problems = events::check(&event, &expect);
    if let Some(problem) = problems
        .invalid
        .first()
        .or(problems.agent_observed.as_ref())
    {
        return Err(format!("a {kind} event {problem}"));
    }
    let mut line = crate::plan::pyjson::canonical(&event);
    line.push(b'\n');
    Ok(Minted { event, line })
}

/// A `journal_repair` event's payload: where the journal was cut or mended, and why.
pub fn repair_payload(byte_offset: u64, cause: &str) -> Map<String, Value> {
    let mut payload = Map::new();
    payload.insert("byte_offset".into(), byte_offset.into());
    payload.insert("cause".into(), cause.into());
    payload
}

/// What the public ledger notes on a repair: a torn tail cut, or a framing newline restored.
pub const TORN_NOTE: &str = "torn tail truncated; the append-only rule binds complete events only";
pub const FRAMING_CAUSE: &str =
    "final event complete, framing newline restored after an interrupted append";
pub const FRAMING_NOTE: &str = "complete events are durable; only the framing byte was missing";

#[cfg(test)]
mod tests {
    use super::*;

    fn contract() -> Value {
        json!({"plan": "PLAN_041_shop_services_split"})
    }

    fn live(contract: &Value) -> Live<'_> {
        Live {
            contract,
            id: "a".repeat(64),
            generation: RecordGeneration::V7,
        }
    }

    #[test]
    fn a_minted_event_is_one_sorted_compact_ascii_line_with_the_live_envelope() {
        let contract = contract();
        let minted = mint(
            &live(&contract),
            7,
            "2026-12-07T08:00:00Z",
            "journal_repair",
            repair_payload(120, "torn: é"),
            helper(),
            Some(TORN_NOTE),
        )
        .unwrap();
        let line = String::from_utf8(minted.line).unwrap();
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        assert!(line.starts_with(r#"{"actor":{"identity":"dwp/"#), "{line}");
        assert!(line.contains(r#""cause":"torn: \u00e9""#), "{line}");
        assert!(
            line.contains(r#""schema":"https://deepworkplan.com/schema/journal-event/v7.json""#)
        );
        assert!(line.contains(r#""seq":7,"#));
    }

    // Rule 11: `observed` never comes from an agent; the writer judges its own events as the
    // reader does, so it cannot write one.
    #[test]
    fn an_event_the_reader_would_refuse_is_never_minted() {
        let contract = contract();
        let mut payload = Map::new();
        payload.insert("statement".into(), "it works".into());
        payload.insert("trust".into(), "observed".into());
        payload.insert("evidence_path".into(), "gates/x.log".into());
        let agent = json!({"kind": "agent", "identity": "caller"});
        let refused = mint(
            &live(&contract),
            1,
            "2026-12-07T08:00:00Z",
            "observation",
            payload,
            agent,
            None,
        );
        assert!(refused.is_err(), "{refused:?}");
        let bad = mint(
            &live(&contract),
            1,
            "2026-12-07T08:00:00Z",
            "journal_repair",
            Map::new(),
            helper(),
            None,
        );
        assert!(bad.unwrap_err().contains("journal_repair"));
    }
}
