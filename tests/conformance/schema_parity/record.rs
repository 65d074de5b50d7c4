//! Schema parity for the record-plan documents (v6/v7 manifest, contract, journal event and the
//! snapshot): the schemas dwp embeds (`dwp::plan::schemas::record_embedded`) accept and reject
//! what the public ones, pinned in `tests/data/public-schemas/`, accept and reject.
//!
//! The corpus is written here: a valid base document of every shape (every journal event type
//! of each generation) and named one-constraint mutations of it, each with the verdict it was
//! written to have in v6 and in v7. Each case is judged by the public schema, by the embedded one
//! compiled with `dwp::plan::schemas::compile`, and by `dwp::plan::schemas::validate_record`.
//!
//! The one deliberate difference, journal-event/v7's delegation `result_path` pattern rewritten
//! without lookahead, is held to the public pattern's ECMA-262 meaning on a corpus of paths
//! (`result_path_pattern_without_lookahead_keeps_the_public_language`).

use super::Expect::{self, Accept, Reject, Skip};
use super::{Op, apply, del, read_json, reference_dir, set};
use dwp::plan::schemas::{RecordSchema, compile, record_embedded, validate_record};
use jsonschema::Validator;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gen {
    V6,
    V7,
}

/// Which base document a row mutates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doc {
    Manifest,
    Contract,
    /// A journal event of the given `type`.
    Event(&'static str),
    /// `state.json`: one schema for both generations, so only the v6 column applies.
    Snapshot,
}

const V6_EVENT_TYPES: [&str; 14] = dwp::rules::record::events::V6_TYPES;

const PLAN: &str = "PLAN_record_parity";
const TS: &str = "2026-04-02T09:30:00Z";

fn hex(pair: &str) -> Value {
    Value::String(pair.repeat(32))
}

fn a(n: usize) -> Value {
    Value::String("a".repeat(n))
}

fn schema_of(doc: Doc, generation: Gen) -> RecordSchema {
    match (doc, generation) {
        (Doc::Manifest, Gen::V6) => RecordSchema::ManifestV6,
        (Doc::Manifest, Gen::V7) => RecordSchema::ManifestV7,
        (Doc::Contract, Gen::V6) => RecordSchema::ContractV6,
        (Doc::Contract, Gen::V7) => RecordSchema::ContractV7,
        (Doc::Event(_), Gen::V6) => RecordSchema::EventV6,
        (Doc::Event(_), Gen::V7) => RecordSchema::EventV7,
        (Doc::Snapshot, _) => RecordSchema::Snapshot,
    }
}

/// The `$id` of a record schema, which its documents name in `schema`.
fn url(schema: RecordSchema) -> Value {
    let value: Value = serde_json::from_str(record_embedded(schema).text).expect("JSON");
    value["$id"].clone()
}

fn base(doc: Doc, generation: Gen) -> Value {
    let mut value = match doc {
        Doc::Manifest => json!({
            "plan": PLAN,
            "contract": {"id": hex("3c"), "path": "contract.json"}
        }),
        Doc::Contract => contract(generation),
        Doc::Event(kind) => event(kind),
        Doc::Snapshot => snapshot(),
    };
    value["schema"] = url(schema_of(doc, generation));
    value
}

fn contract(generation: Gen) -> Value {
    let mut contract = json!({
        "spec_version": "6.1.0",
        "plan": PLAN,
        "revision": 2,
        "contract_id": hex("a1"),
        "parent_contract_id": hex("b2"),
        "created_at": TS,
        "title": "Records parity",
        "outcome": {
            "statement": "The importer reads every record kind",
            "success_definition": "the import suite passes on the sample journal",
            "out_of_scope": ["writing records back"]
        },
        "acceptance": {"criteria": [
            {
                "id": "AC-import-reads",
                "statement": "every record kind is read",
                "observable_check": "cargo test import",
                "accepted_evidence": ["observed", "imported"],
                "control": {"kind": "regression", "rationale": "the old reader skips two kinds"}
            },
            {
                "id": "AC-docs",
                "statement": "the reader is documented",
                "observable_check": "the docs page lists every kind",
                "accepted_evidence": ["asserted"]
            }
        ]},
        "invariants": [{"id": "INV-no-network", "statement": "nothing leaves the machine"}],
        "scope": {
            "allowed_paths": ["src/import", "docs"],
            "allowed_command_classes": ["cargo"],
            "forbidden_operations": ["git push"]
        },
        "authorization": {
            "mechanism": "plan_authorship",
            "authority": "the session user",
            "timestamp": TS,
            "boundaries": "the import module and its docs",
            "consent_checkpoints": ["before changing the public format"]
        },
        "permissions": {
            "granted": ["gate_command_exec", "fs_write_repo_scope"],
            "not_granted": ["network_access"]
        },
        "dependencies": [
            {"name": "sample journal", "kind": "pinned_input", "detail": "tests/data/journal"}
        ],
        "resource_envelope": {"limits": [
            {
                "id": "tokens",
                "limit": 200000,
                "unit": "tokens",
                "enforcement": "enforced",
                "metering_source": "host meter",
                "reserve": 20000
            },
            {"id": "wall_minutes", "limit": 90, "unit": "minutes", "enforcement": "advisory"}
        ]},
        "scheduling": {
            "starvation_threshold_events": 12,
            "max_adaptations_per_task": 2,
            "max_retries_per_gate": 1,
            "handoff": {"fresh_context": "after two retries", "cross_host_resume": "never"}
        },
        "tasks": [
            {
                "id": "T-import",
                "title": "Read every record kind",
                "prerequisites": [],
                "touched_surface": ["src/import"],
                "gate_intent": [{"criterion": "AC-import-reads", "check": "cargo test import"}]
            },
            {
                "id": "T-docs",
                "title": "Document the reader",
                "prerequisites": ["T-import"],
                "touched_surface": ["docs"],
                "gate_intent": [{"criterion": "AC-docs", "check": "read the page"}]
            }
        ]
    });
    if generation == Gen::V7 {
        contract["tasks"][0]["parallel_safe"] = json!(true);
    }
    contract
}

/// A journal event of type `kind`, every optional field of its type filled in.
fn event(kind: &str) -> Value {
    let fingerprint = json!({"revision": "4f2a9c1", "dirty": ""});
    let body = match kind {
        "task_start" => json!({"task": "T-import", "fingerprint": fingerprint}),
        "approval" => json!({
            "authority": "the session user",
            "mechanism": "pre_authorization",
            "plan_digest": hex("9d")
        }),
        "gate_run" => json!({
            "command": "cargo test import",
            "cwd": ".",
            "env": {"RUST_LOG": "warn"},
            "timeout_seconds": 600,
            "exit_code": 0,
            "trust": "observed",
            "evidence_path": "logs/gate-8.log",
            "criterion": "AC-import-reads",
            "task": "T-import"
        }),
        "observation" => json!({
            "statement": "the sample journal has a torn last line",
            "trust": "asserted",
            "evidence_path": "logs/tail.txt"
        }),
        "adaptation" => json!({
            "kind": "split",
            "trigger_observation": 5,
            "evidence_artifact": "logs/tail.txt",
            "hypothesis": "the reader needs a repair step first",
            "action": "split the task in two",
            "rationale": "smaller steps",
            "affected_tasks": ["T-import"],
            "affected_criteria": ["AC-import-reads"],
            "authority": "the session user",
            "evidence_invalidated": [],
            "evidence_preserved": ["logs/gate-8.log"],
            "resource_impact": {"declared": 5000, "unit": "tokens"},
            "decision": "authorized",
            "reason": "within the envelope"
        }),
        "amendment" => json!({
            "original_criterion": "every record kind is read",
            "observed_finding": "one kind is obsolete",
            "disposition": "drop the obsolete kind",
            "revised_criterion": "every current record kind is read",
            "reason": "the kind left the format",
            "authority": "the session user",
            "affected_tasks": ["T-import"],
            "evidence_invalidated": ["logs/gate-8.log"],
            "evidence_preserved": []
        }),
        "intervention" => json!({
            "category": "environment_repair",
            "description": "the toolchain was missing",
            "question": "may I install it?",
            "resolution": "installed by the user"
        }),
        "resource_sample" => json!({
            "source": "host meter",
            "limit_id": "tokens",
            "value": 1234.5,
            "unit": "tokens",
            "trust": "imported",
            "evidence_path": "logs/meter.json"
        }),
        "control_pair" => json!({
            "criterion": "AC-import-reads",
            "check_artifacts": ["tests/import.rs"],
            "starting_fingerprint": fingerprint,
            "old_leg": {"available": true, "outcome": "FAIL", "log": "logs/old.log"},
            "new_leg": {"outcome": "PASS", "log": "logs/new.log"},
            "verdict": "discriminating",
            "trust": "observed",
            "evidence_path": "logs/pair.json"
        }),
        "selection" => json!({
            "task": "T-docs",
            "priority_boost": true,
            "aging": {"waiting_since_seq": 3, "threshold": "12 events"}
        }),
        "refusal" => json!({
            "subject": "T-docs",
            "stage": "authorize",
            "reason": "the prerequisite is open",
            "proposal": 6
        }),
        "view_render" => json!({
            "view": "PROGRESS.md",
            "snapshot_digest": hex("e0"),
            "digests": {"PROGRESS.md": hex("e1"), "README.md": hex("e2")}
        }),
        "reconciliation" => json!({
            "trigger": "README.md edited by hand",
            "editor": "the session user",
            "authority": "the session user"
        }),
        "journal_repair" => json!({"byte_offset": 4096, "cause": "torn tail after a crash"}),
        "delegation" => json!({
            "task": "T-docs",
            "delegation_id": "docs-1",
            "transport": "headless",
            "via": "agentkit",
            "kind": "claude",
            "profile": "default",
            "target": "/tmp/docs-wt",
            "worktree": "/tmp/docs-wt",
            "prompt_digest": format!("sha256:{}", "7a".repeat(32)),
            "state": "launched"
        }),
        other => panic!("no base event of type {other}"),
    };
    let mut event = json!({
        "type": kind,
        "seq": 8,
        "ts": TS,
        "plan": PLAN,
        "contract_id": hex("3c"),
        "actor": {"kind": "helper", "identity": "dwp"},
        "note": "written for the parity corpus"
    });
    let fields: &mut Map<String, Value> = event.as_object_mut().expect("object");
    fields.extend(body.as_object().expect("object").clone());
    event
}

fn snapshot() -> Value {
    json!({
        "plan": PLAN,
        "contract_id": hex("3c"),
        "contract_revision": 1,
        "generated_by": "dwp",
        "updated_at": TS,
        "tasks": [
            {
                "id": "T-import",
                "title": "Read every record kind",
                "status": "completed",
                "started_seq": 3,
                "criteria": [{
                    "criterion": "AC-import-reads",
                    "satisfied": true,
                    "via_seq": 8,
                    "trust": "observed",
                    "evidence_path": "logs/gate-8.log"
                }]
            },
            {
                "id": "T-docs",
                "title": null,
                "status": "in_progress",
                "started_seq": 9,
                "criteria": [{
                    "criterion": "AC-docs",
                    "satisfied": false,
                    "started_seq": 9,
                    "stale_seqs": [4]
                }]
            },
            {"id": "T-later", "title": "Later", "status": "pending", "started_seq": null, "criteria": []}
        ],
        "positions": {
            "task_start": {"seq": 9},
            "gate_run": {"seq": 8},
            "approval": {"regenerated": true}
        },
        "resources": {
            "limits": [{"id": "tokens", "limit": 200000}],
            "latest_samples": {"tokens": {"value": 1234.5, "seq": 7, "trust": "imported"}}
        },
        "checkpoint": null,
        "blocker": null,
        "archives": [{"file": "journal-archive-000001-000120.ndjson", "first_seq": 1, "last_seq": 120}]
    })
}

// ---------------------------------------------------------------------------------------------
// Mutation rows
// ---------------------------------------------------------------------------------------------

/// A named mutation of one base document and its verdict in v6 and in v7.
struct Row {
    doc: Doc,
    name: String,
    v6: Expect,
    v7: Expect,
    ops: Vec<Op>,
}

/// Rows `name: v6 verdict / v7 verdict => [ops];` on the base document `doc`.
macro_rules! rows {
    ($list:ident, $doc:expr; $($name:literal: $v6:ident / $v7:ident => [$($op:expr),* $(,)?];)+) => {
        $($list.push(Row {
            doc: $doc,
            name: $name.to_owned(),
            v6: $v6,
            v7: $v7,
            ops: vec![$($op),*],
        });)+
    };
}

/// Rows removing one field each: `label at parent: [fields] => v6 verdict / v7 verdict;` makes
/// the row `label.field` removing `parent/field`, for each field.
macro_rules! drop_rows {
    ($list:ident, $doc:expr; $($label:literal at $parent:literal: [$($field:literal),+] => $v6:ident / $v7:ident;)+) => {
        $($($list.push(Row {
            doc: $doc,
            name: concat!($label, ".", $field).to_owned(),
            v6: $v6,
            v7: $v7,
            ops: vec![del(concat!($parent, "/", $field))],
        });)+)+
    };
}

fn manifest_rows(list: &mut Vec<Row>) {
    let m = Doc::Manifest;
    drop_rows! { list, m;
        "required" at "": ["schema", "plan", "contract"] => Reject / Reject;
        "required.contract" at "/contract": ["id", "path"] => Reject / Reject;
    }
    rows! { list, m;
        "closed.top": Reject / Reject => [set("/title", "x")];
        "closed.contract": Reject / Reject => [set("/contract/revision", 1)];
        "const.path_revision_file": Reject / Reject => [set("/contract/path", "contracts/contract.r2.json")];
        "const.path_absolute": Reject / Reject => [set("/contract/path", "/plan/contract.json")];
        "pattern.plan_mixed_case_and_hyphen": Accept / Accept => [set("/plan", "PLAN_Record-Parity_2")];
        "pattern.plan_empty_slug": Reject / Reject => [set("/plan", "PLAN_")];
        "pattern.plan_lowercase_prefix": Reject / Reject => [set("/plan", "plan_record_parity")];
        "pattern.plan_space": Reject / Reject => [set("/plan", "PLAN_record parity")];
        "pattern.plan_trailing_newline": Reject / Reject => [set("/plan", "PLAN_record_parity\n")];
        "pattern.id_uppercase": Reject / Reject => [set("/contract/id", "3C".repeat(32))];
        "pattern.id_63": Reject / Reject => [set("/contract/id", "a".repeat(63))];
        "pattern.id_prefixed": Reject / Reject => [set("/contract/id", format!("sha256:{}", "3c".repeat(32)))];
        "type.contract_string": Reject / Reject => [set("/contract", "contract.json")];
        "type.document_array": Reject / Reject => [set("", json!([]))];
    }
}

fn contract_rows(list: &mut Vec<Row>) {
    let c = Doc::Contract;
    drop_rows! { list, c;
        "required" at "": ["schema", "spec_version", "plan", "revision", "created_at", "outcome", "acceptance", "invariants"] => Reject / Reject;
        "required" at "": ["scope", "authorization", "permissions", "dependencies", "resource_envelope", "tasks"] => Reject / Reject;
        "optional" at "": ["contract_id", "parent_contract_id", "title", "scheduling"] => Accept / Accept;
        "required.outcome" at "/outcome": ["statement", "success_definition", "out_of_scope"] => Reject / Reject;
        "required.criterion" at "/acceptance/criteria/0": ["id", "statement", "observable_check", "accepted_evidence"] => Reject / Reject;
        "optional.criterion" at "/acceptance/criteria/0": ["control"] => Accept / Accept;
        "required.control" at "/acceptance/criteria/0/control": ["kind", "rationale"] => Reject / Reject;
        "required.invariant" at "/invariants/0": ["id", "statement"] => Reject / Reject;
        "required.scope" at "/scope": ["allowed_paths", "allowed_command_classes", "forbidden_operations"] => Reject / Reject;
        "required.authorization" at "/authorization": ["mechanism", "authority", "timestamp", "boundaries", "consent_checkpoints"] => Reject / Reject;
        "required.permissions" at "/permissions": ["granted", "not_granted"] => Reject / Reject;
        "required.dependency" at "/dependencies/0": ["name", "kind", "detail"] => Reject / Reject;
        "required.limit" at "/resource_envelope/limits/0": ["id", "limit", "unit", "enforcement"] => Reject / Reject;
        "optional.limit" at "/resource_envelope/limits/0": ["reserve"] => Accept / Accept;
        "optional.scheduling" at "/scheduling": ["starvation_threshold_events", "max_adaptations_per_task", "max_retries_per_gate", "handoff"] => Accept / Accept;
        "required.task" at "/tasks/1": ["id", "title", "prerequisites", "touched_surface", "gate_intent"] => Reject / Reject;
        "required.gate_intent" at "/tasks/0/gate_intent/0": ["criterion", "check"] => Reject / Reject;
    }

    rows! { list, c;
        "closed.top": Reject / Reject => [set("/approved_by", "x")];
        "closed.outcome": Reject / Reject => [set("/outcome/risk", "x")];
        "closed.criterion": Reject / Reject => [set("/acceptance/criteria/0/weight", 1)];
        "closed.control": Reject / Reject => [set("/acceptance/criteria/0/control/extra", "x")];
        "closed.acceptance": Reject / Reject => [set("/acceptance/extra", json!([]))];
        "closed.invariant": Reject / Reject => [set("/invariants/0/severity", "high")];
        "closed.scope": Reject / Reject => [set("/scope/allowed_hosts", json!([]))];
        "closed.authorization": Reject / Reject => [set("/authorization/expires", TS)];
        "closed.permissions": Reject / Reject => [set("/permissions/maybe", json!([]))];
        "closed.dependency": Reject / Reject => [set("/dependencies/0/version", "1")];
        "closed.envelope": Reject / Reject => [set("/resource_envelope/total", 1)];
        "closed.limit": Reject / Reject => [set("/resource_envelope/limits/1/hard", true)];
        "closed.scheduling": Reject / Reject => [set("/scheduling/priority", 1)];
        "closed.handoff": Reject / Reject => [set("/scheduling/handoff/never", "x")];
        "closed.task": Reject / Reject => [set("/tasks/1/owner", "x")];
        "closed.gate_intent": Reject / Reject => [set("/tasks/0/gate_intent/0/command", "x")];
        // v7 adds exactly one field, tasks[].parallel_safe.
        "parallel_safe.true": Reject / Accept => [set("/tasks/1/parallel_safe", true)];
        "parallel_safe.false": Reject / Accept => [set("/tasks/1/parallel_safe", false)];
        "parallel_safe.string": Reject / Reject => [set("/tasks/1/parallel_safe", "yes")];
        "parallel_safe.absent": Skip / Accept => [del("/tasks/0/parallel_safe")];
        "enum.evidence_unknown": Reject / Reject => [set("/acceptance/criteria/0/accepted_evidence/1", "measured")];
        "enum.every_evidence_class": Accept / Accept => [set("/acceptance/criteria/1/accepted_evidence", json!(["asserted", "imported", "observed"]))];
        "enum.control_discrimination": Accept / Accept => [set("/acceptance/criteria/0/control/kind", "discrimination")];
        "enum.control_exempt": Accept / Accept => [set("/acceptance/criteria/0/control/kind", "exempt")];
        "enum.control_unknown": Reject / Reject => [set("/acceptance/criteria/0/control/kind", "none")];
        "enum.mechanism_pre_authorization": Accept / Accept => [set("/authorization/mechanism", "pre_authorization")];
        "enum.mechanism_unknown": Reject / Reject => [set("/authorization/mechanism", "delegated")];
        "enum.dependency_credential": Accept / Accept => [set("/dependencies/0/kind", "credential")];
        "enum.dependency_unknown": Reject / Reject => [set("/dependencies/0/kind", "service")];
        "enum.enforcement_unknown": Reject / Reject => [set("/resource_envelope/limits/1/enforcement", "soft")];
        "enum.every_capability": Accept / Accept => [set("/permissions/granted", json!([
            "gate_command_exec", "fs_write_plan_scope", "fs_write_repo_scope", "git_operations",
            "network_access", "host_adapter_metering", "agent_delegation", "context_export",
            "model_routing"]))];
        "enum.capability_unknown": Reject / Reject => [set("/permissions/granted/1", "root_access")];
        "enum.not_granted_unknown": Reject / Reject => [set("/permissions/not_granted/0", "internet")];
        "pattern.plan_numbered": Accept / Accept => [set("/plan", "PLAN_042_record_parity")];
        "pattern.plan_five_words": Accept / Accept => [set("/plan", "PLAN_a_b_c_d_e")];
        "pattern.plan_six_words": Reject / Reject => [set("/plan", "PLAN_a_b_c_d_e_f")];
        "pattern.plan_one_word": Reject / Reject => [set("/plan", "PLAN_record")];
        "pattern.plan_uppercase": Reject / Reject => [set("/plan", "PLAN_Record_parity")];
        "pattern.spec_version_two_parts": Reject / Reject => [set("/spec_version", "6.1")];
        "pattern.spec_version_arabic_indic": Reject / Reject => [set("/spec_version", "\u{0666}.1.0")];
        "pattern.contract_id_uppercase": Reject / Reject => [set("/contract_id", "A1".repeat(32))];
        "pattern.parent_id_short": Reject / Reject => [set("/parent_contract_id", "b2".repeat(31))];
        "pattern.criterion_id_digits": Accept / Accept => [set("/acceptance/criteria/1/id", "AC-2")];
        "pattern.criterion_id_empty": Reject / Reject => [set("/acceptance/criteria/1/id", "AC-")];
        "pattern.criterion_id_double_hyphen": Reject / Reject => [set("/acceptance/criteria/1/id", "AC-a--b")];
        "pattern.criterion_id_uppercase": Reject / Reject => [set("/acceptance/criteria/1/id", "AC-Docs")];
        "pattern.invariant_underscore": Reject / Reject => [set("/invariants/0/id", "INV_no_network")];
        "pattern.task_id_lowercase_prefix": Reject / Reject => [set("/tasks/1/id", "t-docs")];
        "pattern.prerequisite_bare": Reject / Reject => [set("/tasks/1/prerequisites/0", "import")];
        "pattern.limit_id_digit_first": Reject / Reject => [set("/resource_envelope/limits/1/id", "1minutes")];
        "pattern.limit_id_uppercase": Reject / Reject => [set("/resource_envelope/limits/1/id", "Minutes")];
        "pattern.gate_intent_task_id": Reject / Reject => [set("/tasks/0/gate_intent/0/criterion", "T-import")];
        "minimum.revision_1": Accept / Accept => [set("/revision", 1)];
        "minimum.revision_0": Reject / Reject => [set("/revision", 0)];
        "minimum.limit_0": Accept / Accept => [set("/resource_envelope/limits/1/limit", 0)];
        "minimum.limit_negative": Reject / Reject => [set("/resource_envelope/limits/1/limit", -1)];
        "minimum.reserve_negative": Reject / Reject => [set("/resource_envelope/limits/0/reserve", -0.5)];
        "minimum.starvation_0": Reject / Reject => [set("/scheduling/starvation_threshold_events", 0)];
        "minimum.adaptations_0": Accept / Accept => [set("/scheduling/max_adaptations_per_task", 0)];
        "minimum.retries_negative": Reject / Reject => [set("/scheduling/max_retries_per_gate", -1)];
        "min_items.criteria": Reject / Reject => [set("/acceptance/criteria", json!([]))];
        "min_items.accepted_evidence": Reject / Reject => [set("/acceptance/criteria/1/accepted_evidence", json!([]))];
        "min_items.command_classes": Reject / Reject => [set("/scope/allowed_command_classes", json!([]))];
        "min_items.forbidden_operations": Reject / Reject => [set("/scope/forbidden_operations", json!([]))];
        "min_items.limits": Reject / Reject => [set("/resource_envelope/limits", json!([]))];
        "min_items.tasks": Reject / Reject => [set("/tasks", json!([]))];
        "min_items.none_on_invariants": Accept / Accept => [set("/invariants", json!([]))];
        "min_items.none_on_dependencies": Accept / Accept => [set("/dependencies", json!([]))];
        "min_items.none_on_out_of_scope": Accept / Accept => [set("/outcome/out_of_scope", json!([]))];
        "min_length.statement": Reject / Reject => [set("/outcome/statement", "")];
        "min_length.task_title": Reject / Reject => [set("/tasks/0/title", "")];
        "min_length.out_of_scope_item": Reject / Reject => [set("/outcome/out_of_scope/0", "")];
        "min_length.handoff": Reject / Reject => [set("/scheduling/handoff/cross_host_resume", "")];
        "max_length.title_200": Accept / Accept => [set("/title", a(200))];
        "max_length.title_201": Reject / Reject => [set("/title", a(201))];
        "unique.accepted_evidence": Reject / Reject => [set("/acceptance/criteria/0/accepted_evidence/1", "observed")];
        "unique.granted": Reject / Reject => [set("/permissions/granted/1", "gate_command_exec")];
        "unique.command_classes": Reject / Reject => [set("/scope/allowed_command_classes/1", "cargo")];
        "unique.prerequisites": Reject / Reject => [set("/tasks/1/prerequisites/1", "T-import")];
        "unique.none_on_forbidden_operations": Accept / Accept => [set("/scope/forbidden_operations/1", "git push")];
        // An enforced limit names its metering source; an advisory one may.
        "enforced.without_metering_source": Reject / Reject => [del("/resource_envelope/limits/0/metering_source")];
        "enforced.advisory_with_metering_source": Accept / Accept => [set("/resource_envelope/limits/1/metering_source", "wall clock")];
        "enforced.second_limit_enforced_without_source": Reject / Reject => [set("/resource_envelope/limits/1/enforcement", "enforced")];
        "type.revision_integral_float": Accept / Accept => [set("/revision", 2.0)];
        "type.revision_string": Reject / Reject => [set("/revision", "2")];
        "type.limit_fraction": Accept / Accept => [set("/resource_envelope/limits/1/limit", 0.5)];
        "type.limit_string": Reject / Reject => [set("/resource_envelope/limits/1/limit", "90")];
        "format.created_at_not_a_date": Accept / Accept => [set("/created_at", "soon")];
    }
}

fn event_rows(list: &mut Vec<Row>) {
    let gate = Doc::Event("gate_run");
    drop_rows! { list, gate;
        "required.envelope" at "": ["schema", "type", "seq", "ts", "plan", "contract_id", "actor"] => Reject / Reject;
        "optional.envelope" at "": ["note"] => Accept / Accept;
        "required.actor" at "/actor": ["kind", "identity"] => Reject / Reject;
        "required.gate_run" at "": ["command", "cwd", "timeout_seconds", "exit_code", "trust", "task", "criterion"] => Reject / Reject;
        "optional.gate_run" at "": ["env", "evidence_path"] => Accept / Accept;
    }
    rows! { list, gate;
        "closed.top": Reject / Reject => [set("/host", "ci")];
        // Another type's field is unevaluated on this one.
        "closed.foreign_field": Reject / Reject => [set("/statement", "x")];
        "closed.actor": Reject / Reject => [set("/actor/model", "x")];
        "enum.type_unknown": Reject / Reject => [set("/type", "gate")];
        // The type decides the shape: a gate run's body under another type is refused.
        "enum.type_of_another_shape": Reject / Reject => [set("/type", "observation")];
        "enum.actor_human": Accept / Accept => [set("/actor/kind", "human")];
        "enum.actor_unknown": Reject / Reject => [set("/actor/kind", "bot")];
        "enum.trust_unknown": Reject / Reject => [set("/trust", "verified")];
        "minimum.seq_1": Accept / Accept => [set("/seq", 1)];
        "minimum.seq_0": Reject / Reject => [set("/seq", 0)];
        "minimum.timeout_fraction": Accept / Accept => [set("/timeout_seconds", 0.5)];
        "minimum.timeout_0_exclusive": Reject / Reject => [set("/timeout_seconds", 0)];
        "type.seq_string": Reject / Reject => [set("/seq", "8")];
        "type.exit_code_negative": Accept / Accept => [set("/exit_code", -9)];
        "type.exit_code_fraction": Reject / Reject => [set("/exit_code", 0.5)];
        "type.env_value_number": Reject / Reject => [set("/env/RUST_LOG", 1)];
        "pattern.plan_numbered": Accept / Accept => [set("/plan", "PLAN_007_record_parity")];
        "pattern.plan_hyphen": Reject / Reject => [set("/plan", "PLAN_record-parity")];
        "pattern.contract_id_uppercase": Reject / Reject => [set("/contract_id", "3C".repeat(32))];
        "pattern.criterion": Reject / Reject => [set("/criterion", "AC_import")];
        "pattern.task": Reject / Reject => [set("/task", "T-Import")];
        "max_length.identity_100": Accept / Accept => [set("/actor/identity", a(100))];
        "max_length.identity_101": Reject / Reject => [set("/actor/identity", a(101))];
        "max_length.note_500": Accept / Accept => [set("/note", a(500))];
        "max_length.note_501": Reject / Reject => [set("/note", a(501))];
        "max_length.command_501": Reject / Reject => [set("/command", a(501))];
        "min_length.identity": Reject / Reject => [set("/actor/identity", "")];
        // Said in the description, not enforced by the schema: an observed run without a log.
        "description_only.observed_without_evidence_path": Accept / Accept => [del("/evidence_path")];
        "format.ts_not_a_date": Accept / Accept => [set("/ts", "tomorrow")];
    }

    let start = Doc::Event("task_start");
    drop_rows! { list, start;
        "required.task_start" at "": ["task"] => Reject / Reject;
        "optional.task_start" at "": ["fingerprint"] => Accept / Accept;
        "required.fingerprint" at "/fingerprint": ["revision", "dirty"] => Reject / Reject;
    }
    rows! { list, start;
        "closed.fingerprint": Reject / Reject => [set("/fingerprint/branch", "main")];
        "fingerprint.dirty_none": Accept / Accept => [set("/fingerprint/dirty", "none")];
        "fingerprint.empty_revision": Reject / Reject => [set("/fingerprint/revision", "")];
    }

    let approval = Doc::Event("approval");
    drop_rows! { list, approval;
        "required.approval" at "": ["authority", "mechanism", "plan_digest"] => Reject / Reject;
    }
    rows! { list, approval;
        "enum.mechanism_unknown": Reject / Reject => [set("/mechanism", "migration")];
        "pattern.plan_digest_prefixed": Reject / Reject => [set("/plan_digest", format!("sha256:{}", "9d".repeat(32)))];
    }

    let observation = Doc::Event("observation");
    drop_rows! { list, observation;
        "required.observation" at "": ["statement", "trust"] => Reject / Reject;
    }
    rows! { list, observation;
        "closed.observation_exit_code": Reject / Reject => [set("/exit_code", 0)];
    }

    let adaptation = Doc::Event("adaptation");
    drop_rows! { list, adaptation;
        "required.adaptation" at "": ["kind", "trigger_observation", "evidence_artifact", "hypothesis", "action", "rationale", "affected_tasks", "affected_criteria", "authority", "evidence_invalidated", "evidence_preserved", "decision"] => Reject / Reject;
        "optional.adaptation" at "": ["resource_impact", "reason"] => Accept / Accept;
    }
    rows! { list, adaptation;
        "enum.kind_retry": Accept / Accept => [set("/kind", "retry")];
        "enum.kind_unknown": Reject / Reject => [set("/kind", "abandon")];
        "enum.decision_refused": Accept / Accept => [set("/decision", "refused")];
        "enum.decision_unknown": Reject / Reject => [set("/decision", "pending")];
        // The description requires a reason on a refusal; the schema does not.
        "description_only.refused_without_reason": Accept / Accept => [set("/decision", "refused"), del("/reason")];
        "minimum.trigger_0": Reject / Reject => [set("/trigger_observation", 0)];
        "minimum.impact_negative": Reject / Reject => [set("/resource_impact/declared", -1)];
        "closed.resource_impact": Reject / Reject => [set("/resource_impact/measured", 1)];
        "closed.criterion_content": Reject / Reject => [set("/revised_criterion", "x")];
        "pattern.affected_task": Reject / Reject => [set("/affected_tasks/0", "import")];
    }

    let amendment = Doc::Event("amendment");
    drop_rows! { list, amendment;
        "required.amendment" at "": ["original_criterion", "observed_finding", "disposition", "revised_criterion", "reason", "authority", "affected_tasks", "evidence_invalidated", "evidence_preserved"] => Reject / Reject;
    }

    let intervention = Doc::Event("intervention");
    drop_rows! { list, intervention;
        "required.intervention" at "": ["category", "description", "question"] => Reject / Reject;
        "optional.intervention" at "": ["resolution"] => Accept / Accept;
    }
    rows! { list, intervention;
        "enum.category_unknown": Reject / Reject => [set("/category", "other")];
    }

    let sample = Doc::Event("resource_sample");
    drop_rows! { list, sample;
        "required.resource_sample" at "": ["source", "value", "unit", "trust"] => Reject / Reject;
        "optional.resource_sample" at "": ["limit_id", "evidence_path"] => Accept / Accept;
    }
    rows! { list, sample;
        "minimum.value_0": Accept / Accept => [set("/value", 0)];
        "minimum.value_negative": Reject / Reject => [set("/value", -1)];
        "pattern.limit_id_hyphen": Reject / Reject => [set("/limit_id", "wall-minutes")];
    }

    let pair = Doc::Event("control_pair");
    drop_rows! { list, pair;
        "required.control_pair" at "": ["criterion", "check_artifacts", "starting_fingerprint", "old_leg", "new_leg", "verdict", "trust"] => Reject / Reject;
        "required.new_leg" at "/new_leg": ["outcome", "log"] => Reject / Reject;
        "required.old_leg" at "/old_leg": ["available"] => Reject / Reject;
    }
    rows! { list, pair;
        // old_leg carries an outcome exactly when it was available.
        "old_leg.available_without_outcome": Reject / Reject => [del("/old_leg/outcome")];
        "old_leg.unavailable_without_outcome": Accept / Accept => [
            set("/old_leg", json!({"available": false})), set("/verdict", "control_unavailable")];
        "old_leg.unavailable_with_outcome": Reject / Reject => [set("/old_leg/available", false)];
        "old_leg.available_string": Reject / Reject => [set("/old_leg/available", "yes")];
        "old_leg.outcome_lowercase": Reject / Reject => [set("/old_leg/outcome", "fail")];
        "closed.old_leg": Reject / Reject => [set("/old_leg/reason", "dirty")];
        "closed.new_leg": Reject / Reject => [set("/new_leg/seconds", 3)];
        "closed.starting_fingerprint": Reject / Reject => [set("/starting_fingerprint/x", "y")];
        "min_items.check_artifacts": Reject / Reject => [set("/check_artifacts", json!([]))];
        "enum.verdict_non_discriminating": Accept / Accept => [set("/verdict", "non_discriminating")];
        "enum.verdict_unknown": Reject / Reject => [set("/verdict", "inconclusive")];
    }

    let selection = Doc::Event("selection");
    drop_rows! { list, selection;
        "required.selection" at "": ["task", "priority_boost"] => Reject / Reject;
        "required.aging" at "/aging": ["waiting_since_seq", "threshold"] => Reject / Reject;
    }
    rows! { list, selection;
        "type.priority_boost_string": Reject / Reject => [set("/priority_boost", "true")];
        "minimum.waiting_since_0": Reject / Reject => [set("/aging/waiting_since_seq", 0)];
        "closed.aging": Reject / Reject => [set("/aging/events", 4)];
    }

    let refusal = Doc::Event("refusal");
    drop_rows! { list, refusal;
        "required.refusal" at "": ["subject", "stage", "reason"] => Reject / Reject;
        "optional.refusal" at "": ["proposal"] => Accept / Accept;
    }
    rows! { list, refusal;
        "enum.stage_gate": Accept / Accept => [set("/stage", "gate")];
        "enum.stage_unknown": Reject / Reject => [set("/stage", "finalize")];
        "minimum.proposal_0": Reject / Reject => [set("/proposal", 0)];
    }

    let render = Doc::Event("view_render");
    drop_rows! { list, render;
        "required.view_render" at "": ["view", "snapshot_digest"] => Reject / Reject;
        "optional.view_render" at "": ["digests"] => Accept / Accept;
    }
    rows! { list, render;
        "pattern.snapshot_digest_uppercase": Reject / Reject => [set("/snapshot_digest", "E0".repeat(32))];
        "pattern.digests_value": Reject / Reject => [set("/digests/README.md", "changed")];
    }

    let reconciliation = Doc::Event("reconciliation");
    drop_rows! { list, reconciliation;
        "required.reconciliation" at "": ["trigger", "editor", "authority"] => Reject / Reject;
    }

    let repair = Doc::Event("journal_repair");
    drop_rows! { list, repair;
        "required.journal_repair" at "": ["byte_offset", "cause"] => Reject / Reject;
    }
    rows! { list, repair;
        "minimum.byte_offset_0": Accept / Accept => [set("/byte_offset", 0)];
        "minimum.byte_offset_negative": Reject / Reject => [set("/byte_offset", -1)];
    }

    // The v7-only delegation event (its v6 verdict is the `generation` case of the base corpus).
    let delegation = Doc::Event("delegation");
    drop_rows! { list, delegation;
        "required.delegation" at "": ["task", "delegation_id", "transport", "via", "state"] => Skip / Reject;
    }
    for row in list
        .iter_mut()
        .filter(|r| r.name.starts_with("required.delegation."))
    {
        row.v7 = Reject;
    }
    rows! { list, delegation;
        // A launch records the prompt by digest; later transitions need not repeat it.
        "launch.without_prompt_digest": Skip / Reject => [del("/prompt_digest")];
        "launch.completed_without_prompt_digest": Skip / Accept => [set("/state", "completed"), del("/prompt_digest")];
        "launch.cancelled_without_prompt_digest": Skip / Accept => [set("/state", "cancelled"), del("/prompt_digest")];
        // A result exists only once the delegate completed or failed.
        "result_path.completed": Skip / Accept => [set("/state", "completed"), set("/result_path", "results/docs.md"),
            set("/result_digest", format!("sha256:{}", "5b".repeat(32)))];
        "result_path.failed": Skip / Accept => [set("/state", "failed"), set("/result_path", "results/docs.log")];
        "result_path.launched": Skip / Reject => [set("/result_path", "results/docs.md")];
        "result_path.cancelled": Skip / Reject => [set("/state", "cancelled"), set("/result_path", "results/docs.md")];
        "result_path.absolute": Skip / Reject => [set("/state", "completed"), set("/result_path", "/results/docs.md")];
        "result_path.parent": Skip / Reject => [set("/state", "completed"), set("/result_path", "../docs.md")];
        "result_path.inner_parent": Skip / Reject => [set("/state", "completed"), set("/result_path", "results/../../docs.md")];
        "result_path.trailing_parent": Skip / Reject => [set("/state", "completed"), set("/result_path", "results/..")];
        "result_path.dotted_names": Skip / Accept => [set("/state", "completed"), set("/result_path", "results/..docs../.hidden/...")];
        "result_path.empty": Skip / Reject => [set("/state", "completed"), set("/result_path", "")];
        "result_path.newline": Skip / Reject => [set("/state", "completed"), set("/result_path", "results/a\nb.md")];
        "result_digest.bare_hex": Skip / Reject => [set("/result_digest", "5b".repeat(32))];
        "prompt_digest.bare_hex": Skip / Reject => [set("/prompt_digest", "7a".repeat(32))];
        "prompt_digest.uppercase": Skip / Reject => [set("/prompt_digest", format!("sha256:{}", "7A".repeat(32)))];
        "enum.transport_interactive": Skip / Accept => [set("/transport", "interactive"), set("/target", "mac:2")];
        "enum.transport_unknown": Skip / Reject => [set("/transport", "remote")];
        "enum.state_unknown": Skip / Reject => [set("/state", "running")];
        "pattern.delegation_id_64": Skip / Accept => [set("/delegation_id", a(64))];
        "pattern.delegation_id_65": Skip / Reject => [set("/delegation_id", a(65))];
        "pattern.delegation_id_dot_first": Skip / Reject => [set("/delegation_id", ".docs")];
        "pattern.via_uppercase": Skip / Reject => [set("/via", "Agentkit")];
        "pattern.via_digit_first": Skip / Reject => [set("/via", "2kit")];
        "nullable.worktree_null": Skip / Accept => [set("/worktree", Value::Null)];
        "nullable.worktree_empty": Skip / Reject => [set("/worktree", "")];
        "max_length.worktree_301": Skip / Reject => [set("/worktree", a(301))];
        "max_length.kind_201": Skip / Reject => [set("/kind", a(201))];
        "optional.delegation_drops_all": Skip / Accept => [del("/kind"), del("/profile"), del("/target"), del("/worktree")];
        // A delegation is not evidence: it carries no trust label.
        "closed.trust": Skip / Reject => [set("/trust", "asserted")];
    }
}

fn snapshot_rows(list: &mut Vec<Row>) {
    let s = Doc::Snapshot;
    drop_rows! { list, s;
        "required" at "": ["schema", "plan", "contract_id", "contract_revision", "generated_by", "updated_at", "tasks", "positions", "resources", "checkpoint", "blocker"] => Reject / Skip;
        "optional" at "": ["archives"] => Accept / Skip;
        "required.task" at "/tasks/0": ["id", "title", "status", "started_seq", "criteria"] => Reject / Skip;
        "required.satisfied" at "/tasks/0/criteria/0": ["criterion", "satisfied", "via_seq", "trust"] => Reject / Skip;
        "optional.satisfied" at "/tasks/0/criteria/0": ["evidence_path"] => Accept / Skip;
        "required.open" at "/tasks/1/criteria/0": ["criterion", "satisfied"] => Reject / Skip;
        "optional.open" at "/tasks/1/criteria/0": ["started_seq", "stale_seqs"] => Accept / Skip;
        "required.resources" at "/resources": ["limits", "latest_samples"] => Reject / Skip;
        "required.sample" at "/resources/latest_samples/tokens": ["value", "seq"] => Reject / Skip;
        "optional.sample" at "/resources/latest_samples/tokens": ["trust"] => Accept / Skip;
        "required.archive" at "/archives/0": ["file", "first_seq", "last_seq"] => Reject / Skip;
    }
    rows! { list, s;
        "closed.top": Reject / Skip => [set("/status", "pending")];
        "closed.task": Reject / Skip => [set("/tasks/0/gates", json!([]))];
        "closed.satisfied": Reject / Skip => [set("/tasks/0/criteria/0/stale_seqs", json!([2]))];
        "closed.open_with_via_seq": Reject / Skip => [set("/tasks/1/criteria/0/via_seq", 9)];
        "closed.position": Reject / Skip => [set("/positions/gate_run/ts", TS)];
        "closed.sample": Reject / Skip => [set("/resources/latest_samples/tokens/unit", "tokens")];
        "closed.archive": Reject / Skip => [set("/archives/0/bytes", 10)];
        "closed.resources": Reject / Skip => [set("/resources/envelope", json!({}))];
        "open.positions_any_key": Accept / Skip => [set("/positions/delegation", json!({"seq": 2}))];
        "open.samples_any_key": Accept / Skip => [set("/resources/latest_samples/wall", json!({"value": "90m", "seq": 3}))];
        "open.limits_any_items": Accept / Skip => [set("/resources/limits", json!(["anything", 3, null]))];
        "enum.status_blocked": Reject / Skip => [set("/tasks/2/status", "blocked")];
        "enum.status_skipped": Reject / Skip => [set("/tasks/2/status", "skipped")];
        "enum.trust_unknown": Reject / Skip => [set("/tasks/0/criteria/0/trust", "verified")];
        "enum.sample_trust_unknown": Reject / Skip => [set("/resources/latest_samples/tokens/trust", "metered")];
        // A criterion is either satisfied (with its evidence) or open: `satisfied` decides which.
        "const.open_marked_satisfied": Reject / Skip => [set("/tasks/1/criteria/0/satisfied", true)];
        "const.satisfied_marked_open": Reject / Skip => [set("/tasks/0/criteria/0/satisfied", false)];
        "const.satisfied_string": Reject / Skip => [set("/tasks/1/criteria/0/satisfied", "false")];
        "const.regenerated_false": Reject / Skip => [set("/positions/approval/regenerated", false)];
        "position.seq_and_regenerated": Accept / Skip => [set("/positions/approval/seq", 2)];
        "position.empty": Reject / Skip => [set("/positions/approval", json!({}))];
        "minimum.contract_revision_0": Reject / Skip => [set("/contract_revision", 0)];
        "minimum.started_seq_0": Reject / Skip => [set("/tasks/0/started_seq", 0)];
        "minimum.via_seq_0": Reject / Skip => [set("/tasks/0/criteria/0/via_seq", 0)];
        "minimum.stale_seq_0": Reject / Skip => [set("/tasks/1/criteria/0/stale_seqs/0", 0)];
        "minimum.open_started_seq_0": Reject / Skip => [set("/tasks/1/criteria/0/started_seq", 0)];
        "minimum.position_seq_0": Reject / Skip => [set("/positions/gate_run/seq", 0)];
        "minimum.sample_seq_0": Reject / Skip => [set("/resources/latest_samples/tokens/seq", 0)];
        "minimum.archive_first_seq_0": Reject / Skip => [set("/archives/0/first_seq", 0)];
        "nullable.open_started_seq": Accept / Skip => [set("/tasks/1/criteria/0/started_seq", Value::Null)];
        "pattern.plan_mixed_case": Accept / Skip => [set("/plan", "PLAN_Record-Parity")];
        "pattern.plan_empty_slug": Reject / Skip => [set("/plan", "PLAN_")];
        "pattern.contract_id_uppercase": Reject / Skip => [set("/contract_id", "3C".repeat(32))];
        "pattern.task_id": Reject / Skip => [set("/tasks/0/id", "T-Import")];
        "pattern.criterion": Reject / Skip => [set("/tasks/0/criteria/0/criterion", "AC_import")];
        "pattern.archive_short_numbers": Reject / Skip => [set("/archives/0/file", "journal-archive-1-120.ndjson")];
        "pattern.archive_suffix": Reject / Skip => [set("/archives/0/file", "journal-archive-000001-000120.ndjson.gz")];
        "type.checkpoint_string": Accept / Skip => [set("/checkpoint", "which importer wins?")];
        "type.checkpoint_number": Reject / Skip => [set("/checkpoint", 3)];
        "type.blocker_string": Accept / Skip => [set("/blocker", "waiting on a review")];
        "type.blocker_false": Reject / Skip => [set("/blocker", false)];
        "type.title_number": Reject / Skip => [set("/tasks/0/title", 5)];
        "type.sample_value_any": Accept / Skip => [set("/resources/latest_samples/tokens/value", "1.2k")];
        "type.updated_at_empty": Accept / Skip => [set("/updated_at", "")];
        "min_length.generated_by": Reject / Skip => [set("/generated_by", "")];
    }
}

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

struct Case {
    name: String,
    schema: RecordSchema,
    doc: Value,
    valid: bool,
}

fn case(name: String, schema: RecordSchema, doc: Value, valid: bool) -> Case {
    Case {
        name: format!("{schema:?}/{name}"),
        schema,
        doc,
        valid,
    }
}

fn label(doc: Doc) -> String {
    match doc {
        Doc::Manifest => "manifest".to_owned(),
        Doc::Contract => "contract".to_owned(),
        Doc::Event(kind) => kind.to_owned(),
        Doc::Snapshot => "snapshot".to_owned(),
    }
}

fn every_base(generation: Gen) -> Vec<Doc> {
    let mut docs = vec![Doc::Manifest, Doc::Contract];
    docs.extend(V6_EVENT_TYPES.map(Doc::Event));
    if generation == Gen::V7 {
        docs.push(Doc::Event("delegation"));
    } else {
        docs.push(Doc::Snapshot);
    }
    docs
}

fn corpus() -> &'static [Case] {
    static CORPUS: OnceLock<Vec<Case>> = OnceLock::new();
    CORPUS.get_or_init(build_corpus)
}

fn build_corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    for generation in [Gen::V6, Gen::V7] {
        for doc in every_base(generation) {
            let schema = schema_of(doc, generation);
            cases.push(case(
                format!("{}/base", label(doc)),
                schema,
                base(doc, generation),
                true,
            ));
        }
    }
    cases.extend(generation_cases());

    let mut rows = Vec::new();
    manifest_rows(&mut rows);
    contract_rows(&mut rows);
    event_rows(&mut rows);
    snapshot_rows(&mut rows);
    for row in rows {
        for (generation, expect) in [(Gen::V6, row.v6), (Gen::V7, row.v7)] {
            if expect == Skip {
                continue;
            }
            let schema = schema_of(row.doc, generation);
            let name = format!("{}/{}", label(row.doc), row.name);
            let original = base(row.doc, generation);
            let mut doc = original.clone();
            for op in &row.ops {
                apply(&mut doc, op, &name);
            }
            assert_ne!(
                doc, original,
                "{name}: the mutation leaves the base unchanged"
            );
            cases.push(case(name, schema, doc, expect == Accept));
        }
    }
    cases
}

/// The generations do not mix: a document naming the other generation's URL (or another kind's)
/// is refused, and so is the v7-only delegation event under the v6 URL.
fn generation_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut delegation_as_v6 = base(Doc::Event("delegation"), Gen::V7);
    delegation_as_v6["schema"] = url(RecordSchema::EventV6);
    cases.push(case(
        "delegation/under_v6_url".to_owned(),
        RecordSchema::EventV6,
        delegation_as_v6,
        false,
    ));
    for (generation, other) in [(Gen::V6, Gen::V7), (Gen::V7, Gen::V6)] {
        for doc in [Doc::Manifest, Doc::Contract, Doc::Event("task_start")] {
            let schema = schema_of(doc, generation);
            let mut named_other = base(doc, generation);
            named_other["schema"] = url(schema_of(doc, other));
            cases.push(case(
                format!("{}/schema.other_generation", label(doc)),
                schema,
                named_other,
                false,
            ));
            let mut trailing = base(doc, generation);
            trailing["schema"] = json!(format!("{}/", url(schema).as_str().unwrap()));
            cases.push(case(
                format!("{}/schema.trailing_slash", label(doc)),
                schema,
                trailing,
                false,
            ));
        }
        let mut snapshot_named_state = base(Doc::Snapshot, generation);
        snapshot_named_state["schema"] =
            json!("https://deepworkplan.com/schema/plan-state/v5.json");
        if generation == Gen::V6 {
            cases.push(case(
                "snapshot/schema.plan_state_url".to_owned(),
                RecordSchema::Snapshot,
                snapshot_named_state,
                false,
            ));
        }
    }
    let mut manifest_as_contract = base(Doc::Manifest, Gen::V6);
    manifest_as_contract["schema"] = url(RecordSchema::ContractV6);
    cases.push(case(
        "manifest/schema.contract_url".to_owned(),
        RecordSchema::ManifestV6,
        manifest_as_contract,
        false,
    ));
    cases
}

// ---------------------------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------------------------

struct Judges {
    public: HashMap<String, Validator>,
    ours: HashMap<String, Validator>,
}

fn key(schema: RecordSchema) -> String {
    format!("{schema:?}")
}

fn public_schema(schema: RecordSchema) -> Value {
    read_json(&reference_dir().join(record_embedded(schema).file_name))
}

fn judges() -> &'static Judges {
    static JUDGES: OnceLock<Judges> = OnceLock::new();
    JUDGES.get_or_init(|| {
        let mut public = HashMap::new();
        let mut ours = HashMap::new();
        for schema in RecordSchema::ALL {
            let embedded: Value =
                serde_json::from_str(record_embedded(schema).text).expect("embedded JSON");
            let compiled = |value: &Value, whose: &str| {
                compile(value)
                    .unwrap_or_else(|e| panic!("{whose} {schema:?} does not compile: {e}"))
            };
            public.insert(key(schema), compiled(&public_schema(schema), "public"));
            ours.insert(key(schema), compiled(&embedded, "embedded"));
        }
        Judges { public, ours }
    })
}

fn failures(case: &Case) -> Vec<String> {
    let judges = judges();
    let verdict = |valid: bool| if valid { "valid" } else { "invalid" };
    let first_error = |validator: &Validator| match validator.iter_errors(&case.doc).next() {
        None => "no error".to_owned(),
        Some(e) => format!(
            "{} at {}",
            e.to_string().chars().take(120).collect::<String>(),
            e.instance_path()
        ),
    };
    let public = &judges.public[&key(case.schema)];
    let ours = &judges.ours[&key(case.schema)];
    let by_public = public.is_valid(&case.doc);
    let by_ours = ours.is_valid(&case.doc);
    let by_dwp = validate_record(case.schema, &case.doc).is_empty();
    let mut found = Vec::new();
    if by_public != case.valid {
        found.push(format!(
            "{}: written to be {}, the public schema finds it {} ({})",
            case.name,
            verdict(case.valid),
            verdict(by_public),
            first_error(public)
        ));
    }
    if by_ours != by_public {
        found.push(format!(
            "{}: the public schema finds it {}, ours {} ({})",
            case.name,
            verdict(by_public),
            verdict(by_ours),
            first_error(ours)
        ));
    }
    if by_dwp != by_ours {
        found.push(format!(
            "{}: our compiled schema finds it {}, validate_record {}",
            case.name,
            verdict(by_ours),
            verdict(by_dwp)
        ));
    }
    found
}

fn check(schemas: &[RecordSchema]) {
    let cases: Vec<&Case> = corpus()
        .iter()
        .filter(|c| schemas.contains(&c.schema))
        .collect();
    assert!(!cases.is_empty());
    let found: Vec<String> = cases.iter().flat_map(|c| failures(c)).collect();
    assert!(
        found.is_empty(),
        "{} failure(s) among {} cases:\n  {}",
        found.len(),
        cases.len(),
        found.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn record_corpus_has_ten_documents_of_each_schema_of_both_verdicts_and_every_event_type() {
    let corpus = corpus();
    let mut names = std::collections::HashSet::new();
    for case in corpus {
        assert!(
            names.insert(&case.name),
            "duplicate case name {}",
            case.name
        );
    }
    for schema in RecordSchema::ALL {
        let of_schema: Vec<&Case> = corpus.iter().filter(|c| c.schema == schema).collect();
        assert!(
            of_schema.len() >= 10,
            "{schema:?}: {} documents",
            of_schema.len()
        );
        for valid in [true, false] {
            assert!(
                of_schema.iter().any(|c| c.valid == valid),
                "{schema:?}: none valid={valid}"
            );
        }
    }
    for (schema, types) in [
        (RecordSchema::EventV6, V6_EVENT_TYPES.to_vec()),
        (
            RecordSchema::EventV7,
            [&V6_EVENT_TYPES[..], &["delegation"]].concat(),
        ),
    ] {
        for kind in types {
            assert!(
                corpus
                    .iter()
                    .any(|c| c.schema == schema && c.valid && c.doc["type"] == kind),
                "{schema:?}: no valid {kind} event"
            );
        }
    }
}

#[test]
fn record_manifests_accept_and_reject_what_the_public_ones_do() {
    check(&[RecordSchema::ManifestV6, RecordSchema::ManifestV7]);
}

#[test]
fn record_contracts_accept_and_reject_what_the_public_ones_do() {
    check(&[RecordSchema::ContractV6, RecordSchema::ContractV7]);
}

#[test]
fn journal_events_accept_and_reject_what_the_public_ones_do() {
    check(&[RecordSchema::EventV6, RecordSchema::EventV7]);
}

#[test]
fn the_snapshot_accepts_and_rejects_what_the_public_one_does() {
    check(&[RecordSchema::Snapshot]);
}

/// The embedded record schemas are the public ones, but for journal-event/v7's `result_path`
/// pattern (and the `$comment` beside it saying why).
#[test]
fn record_schemas_equal_the_public_ones_but_for_the_result_path_pattern() {
    for schema in RecordSchema::ALL {
        let mut ours: Value = serde_json::from_str(record_embedded(schema).text).expect("JSON");
        let public = public_schema(schema);
        if schema == RecordSchema::EventV7 {
            let result_path = ours
                .pointer_mut("/$defs/delegation/properties/result_path")
                .and_then(Value::as_object_mut)
                .expect("the delegation event has a result_path");
            result_path
                .remove("$comment")
                .expect("the rewrite says why");
            result_path["pattern"] =
                public["$defs"]["delegation"]["properties"]["result_path"]["pattern"].clone();
        }
        assert_eq!(ours, public, "{schema:?} differs from its public copy");
    }
}

/// What the public pattern `^(?!/)(?!.*(^|/)\.\.(/|$)).+$` means in ECMA-262 (non-multiline,
/// where `.` matches no line terminator): not empty, no line terminator, no leading `/`, and no
/// `/`-separated segment that is `..`.
fn ecma_result_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
        && !path.starts_with('/')
        && !path.split('/').any(|segment| segment == "..")
}

/// The rewritten pattern has the public pattern's language, proved on every string of up to six
/// characters over `a . / \n \r` and on hand-picked ones. The validator runs the public,
/// lookahead, form untranslated, so `.` there matches `\r`, U+2028 and U+2029, which ECMA-262's
/// does not: on paths holding none of those it must give the same verdicts as well.
#[test]
fn result_path_pattern_without_lookahead_keeps_the_public_language() {
    let pattern_of = |schema: &Value| {
        schema["$defs"]["delegation"]["properties"]["result_path"]["pattern"].clone()
    };
    let our_schema: Value =
        serde_json::from_str(record_embedded(RecordSchema::EventV7).text).expect("JSON");
    let our_pattern = pattern_of(&our_schema);
    let text = our_pattern.as_str().expect("a string");
    assert!(
        !["(?=", "(?!", "(?<"].iter().any(|look| text.contains(look)),
        "{text} has a lookaround"
    );
    let string_with = |pattern: Value| {
        compile(&json!({"type": "string", "pattern": pattern})).expect("the pattern compiles")
    };
    let ours = string_with(our_pattern);
    let public = string_with(pattern_of(&public_schema(RecordSchema::EventV7)));

    let alphabet = ['a', '.', '/', '\n', '\r'];
    let mut paths: Vec<String> = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..6 {
        frontier = frontier
            .iter()
            .flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}")))
            .collect();
        paths.extend(frontier.iter().cloned());
    }
    for picked in [
        "results/out.md",
        "a/./b",
        "a//b",
        "a/",
        "./..",
        "...",
        "..a/b..",
        "a/../b",
        "a\\..\\b",
        " /..",
        "a\t/..",
        "r\u{e9}sultat/\u{1f600}.md",
        "a\u{2028}b",
        "a\u{2029}b",
        "\u{2028}/..",
        "a\u{85}b",
    ] {
        paths.push(picked.to_owned());
    }
    paths.push(format!("{}end", "seg/".repeat(20_000)));
    paths.push(format!("{}../end", "seg/".repeat(20_000)));

    let mut disagreements = Vec::new();
    for path in &paths {
        let meaning = ecma_result_path(path);
        let value = json!(path);
        if ours.is_valid(&value) != meaning {
            disagreements.push(format!("{path:?}: ours {}, ECMA-262 {meaning}", !meaning));
        }
        let untranslated_differs = path.contains(['\r', '\u{2028}', '\u{2029}']);
        if !untranslated_differs && public.is_valid(&value) != meaning {
            disagreements.push(format!("{path:?}: public {}, ECMA-262 {meaning}", !meaning));
        }
    }
    assert!(paths.len() > 19_000, "{} paths", paths.len());
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// The pinned copies are the files tests/data/README.md describes: its byte count and digest
/// prefix for each.
#[test]
fn pinned_public_record_schemas_match_their_readme_rows() {
    let root = crate::common::repo_root();
    let readme = std::fs::read_to_string(root.join("tests/data/README.md")).expect("README");
    for schema in RecordSchema::ALL {
        let name = record_embedded(schema).file_name;
        let bytes = std::fs::read(reference_dir().join(name)).expect("pinned copy");
        let digest = crate::common::sha256_hex(&bytes);
        let row = format!("| `{name}` | {} | `{}…` |", bytes.len(), &digest[..16]);
        assert!(readme.contains(&row), "tests/data/README.md lacks {row}");
    }
}

// ---------------------------------------------------------------------------------------------
// The typed event checks against the public journal-event schemas
// ---------------------------------------------------------------------------------------------

/// The corpus's journal events with the generation their URL names.
fn journal_event_cases() -> Vec<(&'static Case, dwp::plan::record::RecordGeneration)> {
    use dwp::plan::record::RecordGeneration;
    corpus()
        .iter()
        .filter_map(|case| match case.schema {
            RecordSchema::EventV6 => Some((case, RecordGeneration::V6)),
            RecordSchema::EventV7 => Some((case, RecordGeneration::V7)),
            _ => None,
        })
        .collect()
}

/// `dwp::rules::record::events::check`'s verdict on a case, judged as an event of the
/// generation its URL names, under no particular plan.
fn typed_problems(
    case: &Case,
    generation: dwp::plan::record::RecordGeneration,
) -> dwp::rules::record::events::EventProblems {
    use dwp::rules::record::events::{Expect, check};
    let expect = Expect {
        generation: Some(generation),
        plan: None,
    };
    check(&case.doc, &expect)
}

/// Whether some string anywhere in `value` (a key's value, an array's item) is blank.
fn has_blank_string(value: &Value) -> bool {
    match value {
        Value::String(s) => s.trim().is_empty(),
        Value::Array(items) => items.iter().any(has_blank_string),
        Value::Object(map) => map.values().any(has_blank_string),
        _ => false,
    }
}

/// Schema-valid events the typed checks refuse on purpose (what the public ledger's validator
/// adds to the schema): the case, and words of its one refusal that name the rule it holds.
const STRICTER_THAN_THE_SCHEMA: [(&str, &str); 7] = [
    // observed and imported evidence cite a pointer (rule 11)
    (
        "gate_run/description_only.observed_without_evidence_path",
        "`evidence_path` is required",
    ),
    (
        "gate_run/optional.gate_run.evidence_path",
        "`evidence_path` is required",
    ),
    (
        "resource_sample/optional.resource_sample.evidence_path",
        "`evidence_path` is required",
    ),
    // a refused adaptation says why
    (
        "adaptation/description_only.refused_without_reason",
        "`reason`",
    ),
    // observed evidence only from an actor that executes (rule 11, DWP108)
    ("gate_run/enum.actor_human", "claims observed"),
    // the control-pair verdict arithmetic is binding (rule 14)
    (
        "control_pair/enum.verdict_non_discriminating",
        "contradicts the legs",
    ),
    // `ts` is an RFC 3339 timestamp, which the schema only annotates
    ("gate_run/format.ts_not_a_date", "`ts`"),
];

#[test]
fn typed_event_checks_reject_every_event_the_public_journal_schema_rejects() {
    let judges = judges();
    let mut cases = 0;
    let mut missed = Vec::new();
    for (case, generation) in journal_event_cases() {
        if judges.public[&key(case.schema)].is_valid(&case.doc) {
            continue;
        }
        cases += 1;
        if typed_problems(case, generation).invalid.is_empty() {
            missed.push(case.name.clone());
        }
    }
    assert!(cases > 100, "only {cases} rejected events in the corpus");
    assert!(
        missed.is_empty(),
        "{} event(s) the public schema rejects pass the typed checks:\n  {}",
        missed.len(),
        missed.join("\n  ")
    );
}

#[test]
fn typed_event_checks_accept_every_schema_valid_event_without_blank_strings() {
    let judges = judges();
    let mut cases = 0;
    let mut refused = Vec::new();
    for (case, generation) in journal_event_cases() {
        if !judges.public[&key(case.schema)].is_valid(&case.doc) || has_blank_string(&case.doc) {
            continue;
        }
        cases += 1;
        let problems = typed_problems(case, generation);
        let said: Vec<&String> = problems
            .invalid
            .iter()
            .chain(&problems.agent_observed)
            .collect();
        let deliberate = STRICTER_THAN_THE_SCHEMA
            .iter()
            .find(|(name, _)| case.name.ends_with(&format!("/{name}")));
        let as_expected = match deliberate {
            None => said.is_empty(),
            Some((_, words)) => said.len() == 1 && said[0].contains(words),
        };
        if !as_expected {
            refused.push(format!("{}: {said:?}", case.name));
        }
    }
    assert!(cases > 50, "only {cases} schema-valid events in the corpus");
    assert!(
        refused.is_empty(),
        "{} schema-valid event(s) judged otherwise than expected:\n  {}",
        refused.len(),
        refused.join("\n  ")
    );
}

/// The typed check of a record manifest or contract (`dwp::plan::typed_schema::record_fits`)
/// accepts only what the embedded schema accepts, and decides every valid base document itself
/// (the common case then compiles no validator).
#[test]
fn the_typed_record_check_accepts_only_what_the_schema_accepts() {
    use dwp::plan::typed_schema::record_fits;
    let decided = [
        RecordSchema::ManifestV6,
        RecordSchema::ManifestV7,
        RecordSchema::ContractV6,
        RecordSchema::ContractV7,
    ];
    let mut fitted = 0;
    for case in corpus().iter().filter(|c| decided.contains(&c.schema)) {
        if record_fits(case.schema, &case.doc) {
            assert!(
                judges().ours[&key(case.schema)].is_valid(&case.doc),
                "{}: the typed check accepts it, the schema does not",
                case.name
            );
            fitted += 1;
        }
    }
    assert!(fitted >= 20, "only {fitted} documents took the typed path");
    for (doc, schema) in [
        (Doc::Manifest, Gen::V6),
        (Doc::Manifest, Gen::V7),
        (Doc::Contract, Gen::V6),
        (Doc::Contract, Gen::V7),
    ]
    .map(|(doc, generation)| (base(doc, generation), schema_of(doc, generation)))
    {
        assert!(
            record_fits(schema, &doc),
            "the base {schema:?} takes the typed path"
        );
    }
    // The other record documents are always left to the schema.
    let event = base(Doc::Event("approval"), Gen::V7);
    assert!(!record_fits(RecordSchema::EventV7, &event));
}
