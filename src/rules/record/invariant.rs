//! An invariant's evaluation on a record plan (docs/record-plans.md, "Writing a record plan").
//! The public ledger reads an invariant's latest evaluation from the journal's `observation`
//! events whose statement follows its grammar, `INV-<id>: pass` or `INV-<id>: fail[: reason]`
//! (rule 21), and writes them only through its generic append, as the agent's word. dwp
//! evaluates an invariant as it runs a gate: it runs the check itself, keeps the log under
//! `gates/<INV-id>/` in the gate log's format, and records the observation as `observed`, its
//! verdict the check's exit code (0 passes, anything else fails). `dwp verify` reads that log
//! back ([`super::evidence::log_findings`]), so an observed evaluation cannot claim a pass its
//! log does not show.

use crate::plan::record::Event;
use serde_json::{Map, Value};

/// What an evaluation found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
}

/// The invariant a statement evaluates and its verdict, when it follows the grammar
/// (`INV-x: pass`, `INV-x: fail`, `INV-x: fail: why`); `None` for any other statement.
pub fn evaluated(statement: &str) -> Option<(&str, Verdict)> {
    let (id, rest) = statement.split_once(": ")?;
    if !id.starts_with("INV-") || id.contains(char::is_whitespace) {
        return None;
    }
    match rest {
        "pass" => Some((id, Verdict::Pass)),
        "fail" => Some((id, Verdict::Fail)),
        _ if rest.starts_with("fail:") => Some((id, Verdict::Fail)),
        _ => None,
    }
}

/// An invariant's latest evaluation in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluated {
    pub seq: i64,
    pub verdict: Verdict,
    /// The observation's `trust`, when it has one.
    pub trust: Option<String>,
}

/// Each invariant `contract` declares, in its order, with its latest evaluation in `events`
/// (`None`: never evaluated).
pub fn latest(contract: &Value, events: &[Event]) -> Vec<(String, Option<Evaluated>)> {
    let mut found: Vec<(String, Option<(&Event, Verdict)>)> = declared(contract)
        .into_iter()
        .map(|id| (id, None))
        .collect();
    for event in events.iter().filter(|e| e.kind() == Some("observation")) {
        let Some((id, verdict)) = event.str("statement").and_then(evaluated) else {
            continue;
        };
        if let Some((_, latest)) = found.iter_mut().find(|(declared, _)| declared == id) {
            *latest = Some((event, verdict));
        }
    }
    let evaluated = |(event, verdict): (&Event, Verdict)| Evaluated {
        seq: event.seq(),
        verdict,
        trust: event.str("trust").map(str::to_owned),
    };
    found
        .into_iter()
        .map(|(id, latest)| (id, latest.map(evaluated)))
        .collect()
}

/// The statement of an evaluation of `id` whose check exited `exit_code`.
pub fn statement(id: &str, exit_code: i64) -> String {
    match exit_code {
        0 => format!("{id}: pass"),
        code => format!("{id}: fail: the check exited {code}"),
    }
}

/// The observation's payload: the statement, `observed`, and the log it rests on.
pub fn payload(statement: &str, log: &str) -> Map<String, Value> {
    let mut payload = Map::new();
    payload.insert("statement".into(), statement.into());
    payload.insert("trust".into(), "observed".into());
    payload.insert("evidence_path".into(), log.into());
    payload
}

/// Why an invariant's check is not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The live contract declares no such invariant; those it declares.
    Unknown { declared: Vec<String> },
    /// No approval cites the live contract: nothing is evaluated under a contract nobody
    /// approved (rule 19: the approval opens the plan's work).
    Unapproved,
    /// The program is not one of the contract's command classes; those it declares.
    OutsideClasses {
        program: String,
        declared: Vec<String>,
    },
}

/// Why a check of `program` cannot evaluate invariant `id` under `contract`; `None` when it
/// can. `approved`: an approval cites the live contract.
pub fn refusal(contract: &Value, approved: bool, id: &str, program: &str) -> Option<Refusal> {
    let declared = declared(contract);
    if !declared.iter().any(|d| d == id) {
        return Some(Refusal::Unknown { declared });
    }
    if !approved {
        return Some(Refusal::Unapproved);
    }
    super::gate_run::command_class(contract, program)
        .err()
        .map(|(program, declared)| Refusal::OutsideClasses { program, declared })
}

/// The invariants the contract declares, in its order.
pub fn declared(contract: &Value) -> Vec<String> {
    let invariants = contract.get("invariants").and_then(Value::as_array);
    let ids = invariants.into_iter().flatten();
    ids.filter_map(|i| i.get("id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_grammar_is_the_ledgers_pass_fail_and_fail_with_a_reason() {
        assert_eq!(
            evaluated("INV-read-only: pass"),
            Some(("INV-read-only", Verdict::Pass))
        );
        assert_eq!(evaluated("INV-a: fail"), Some(("INV-a", Verdict::Fail)));
        assert_eq!(
            evaluated("INV-a: fail: two files changed"),
            Some(("INV-a", Verdict::Fail))
        );
        for other in ["INV-a: passed", "INV-a pass", "AC-a: pass", "INV-a: ok", ""] {
            assert_eq!(evaluated(other), None, "{other:?}");
        }
    }

    #[test]
    fn the_statement_dwp_writes_follows_the_grammar_its_verdict_the_exit_code() {
        assert_eq!(
            evaluated(&statement("INV-a", 0)),
            Some(("INV-a", Verdict::Pass))
        );
        for code in [1, 124, -9] {
            assert_eq!(
                evaluated(&statement("INV-a", code)),
                Some(("INV-a", Verdict::Fail))
            );
        }
    }

    fn contract() -> Value {
        json!({"invariants": [{"id": "INV-a", "statement": "a"}],
               "scope": {"allowed_command_classes": ["sh"]}})
    }

    #[test]
    fn only_a_declared_invariant_of_an_approved_contract_is_evaluated_by_a_declared_program() {
        let contract = contract();
        assert_eq!(refusal(&contract, true, "INV-a", "/bin/sh"), None);
        assert_eq!(
            refusal(&contract, true, "INV-b", "sh"),
            Some(Refusal::Unknown {
                declared: vec!["INV-a".into()]
            })
        );
        assert_eq!(
            refusal(&contract, false, "INV-a", "sh"),
            Some(Refusal::Unapproved)
        );
        assert!(matches!(
            refusal(&contract, true, "INV-a", "curl"),
            Some(Refusal::OutsideClasses { .. })
        ));
    }
}
