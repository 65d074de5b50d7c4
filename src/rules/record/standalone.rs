//! One record-plan document judged on its own, outside its plan (`dwp validate FILE`): a contract
//! (a draft before it is materialized), a manifest, a snapshot or a journal file.

use super::{contract, events};
use crate::findings::{Code, Finding, Severity};
use crate::plan::record::{Journal, RecordGeneration, Segment, UrlGeneration, url_generation};
use crate::plan::schemas::{RecordSchema, validate_record};
use serde_json::Value;

/// Whether `value` declares itself a record-plan document: a contract, a manifest or a snapshot
/// of DWP v6/v7 (or of a later generation of those documents).
pub fn is_record_document(value: &Value) -> bool {
    let schema = value.get("schema");
    schema.and_then(Value::as_str) == Some(crate::plan::record::SNAPSHOT_URL)
        || ["plan-contract", "plan-manifest"].iter().any(|document| {
            matches!(
                url_generation(schema, document),
                UrlGeneration::Known(_) | UrlGeneration::Newer(_)
            )
        })
}

/// One record-plan document judged on its own (`dwp validate FILE`): its schema, and for a
/// contract its id and the rules its schema cannot say (a draft checked before it is
/// materialized). `(summary, findings)`.
pub fn standalone_document(file: &str, value: &Value) -> (String, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut push = |code: Code, message: String, path: Option<String>| {
        let mut finding = Finding::error(code, file, message);
        finding.path = path;
        findings.push(finding);
    };
    let schema = value.get("schema");
    let (kind, record_schema, generation) = if schema.and_then(Value::as_str)
        == Some(crate::plan::record::SNAPSHOT_URL)
    {
        ("snapshot", RecordSchema::Snapshot, None)
    } else {
        let (document, v6, v7) = match url_generation(schema, "plan-contract") {
            UrlGeneration::Unknown => (
                "manifest",
                RecordSchema::ManifestV6,
                RecordSchema::ManifestV7,
            ),
            _ => (
                "contract",
                RecordSchema::ContractV6,
                RecordSchema::ContractV7,
            ),
        };
        match url_generation(schema, &format!("plan-{document}")) {
            UrlGeneration::Known(RecordGeneration::V6) => {
                (document, v6, Some(RecordGeneration::V6))
            }
            UrlGeneration::Known(RecordGeneration::V7) => {
                (document, v7, Some(RecordGeneration::V7))
            }
            _ => {
                let mut finding = Finding::error(
                    Code::NewerSpec,
                    file,
                    format!("uses a plan-{document} generation newer than this dwp knows (v6, v7): no claim is made"),
                )
                .at("$.schema");
                finding.severity = Severity::Unverified;
                return (String::new(), vec![finding]);
            }
        }
    };
    for violation in validate_record(record_schema, value) {
        push(
            Code::SchemaViolation,
            violation.message,
            Some(violation.path),
        );
    }
    if kind == "contract" {
        if let Some((stamped, computed)) = contract::stamp_mismatch(value) {
            push(
                Code::ContractId,
                format!(
                    "is stamped {stamped}, but its canonical bytes hash to {computed} (rule 1)"
                ),
                Some("$.contract_id".into()),
            );
        }
        for message in contract::rule_breaks(value) {
            push(Code::ContractRules, message, None);
        }
    }
    let label = generation.map_or("v6".to_owned(), |g| g.label().to_owned());
    let summary = match kind {
        "contract" => format!(
            "{file}: record-plan contract {label}, id {}",
            contract::computed_id(value)
        ),
        _ => format!("{file}: record-plan {kind} {label}"),
    };
    add_hints(&mut findings);
    (summary, findings)
}

/// A journal file judged on its own (`dwp validate journal.ndjson`): its framing and each event's
/// shape in the generation its events declare. `(summary, findings)`.
pub fn standalone_journal(file: &str, bytes: &[u8]) -> (String, Vec<Finding>) {
    let segments = [Segment::live(bytes.to_vec())];
    let arena = bumpalo::Bump::new();
    let journal = Journal::frame(&segments, &arena, None);
    let generation = journal
        .events
        .first()
        .and_then(|e| events::journal_generation(e.str("schema")));
    let expect = events::Expect {
        generation,
        plan: None,
    };
    let mut findings = super::journal_findings(&journal, &expect, |_| file.to_owned(), false);
    add_hints(&mut findings);
    (
        format!(
            "{file}: record-plan journal, {} events",
            journal.events.len()
        ),
        findings,
    )
}

fn add_hints(findings: &mut [Finding]) {
    for finding in findings.iter_mut() {
        finding.hint = Some(crate::rules::conformance::fix_hint(finding.code).to_owned());
    }
}

/// Everything dwp does with bytes that may be a journal or a record document, none of which may
/// panic whatever the bytes: the journal's framing and checks, the projection and the
/// cross-event rules of its events under `contract` (a contract's text), and the bytes read as one
/// document. The fuzz target `journal` and its replay in `cargo test` call it.
pub fn read_untrusted(data: &[u8], contract: &str) {
    let _ = standalone_journal("journal.ndjson", data);
    let segments = [Segment::live(data.to_vec())];
    let arena = bumpalo::Bump::new();
    let journal = Journal::frame(&segments, &arena, None);
    if let Ok(contract) = serde_json::from_str::<Value>(contract) {
        let id = contract::effective_id(&contract);
        let inputs = super::projection::Inputs {
            contract: &contract,
            contract_id: &id,
            generation: RecordGeneration::V7,
            archives: Vec::new(),
        };
        let _ = super::projection::project(&inputs, &journal.events).bytes();
        let graph = super::evidence::TaskGraph::of(&contract);
        let _ = super::evidence::early_starts(&journal.events, &graph);
        let _ = super::evidence::foreign_evidence(&journal.events);
        let _ = super::evidence::open_delegations(&journal.events);
    }
    if let Ok(value) = crate::plan::json::parse_strict(data) {
        let _ = standalone_document("document.json", &value);
        let _ = contract::rule_breaks(&value);
        let _ = crate::plan::pyjson::pretty(&value);
    }
}
