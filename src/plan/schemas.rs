//! Every JSON Schema dwp embeds, in one registry ([`ALL`], by name for `dwp schema NAME`): the
//! plan documents, the v6/v7 record-plan documents ([`RecordSchema`]), the receipt, the contract's and the loop's files, and dwp's own `--json`
//! output.
//!
//! The files in `schemas/` accept and reject exactly what the public schemas accept and reject
//! (`tests/conformance/schema_parity.rs` proves it on a corpus). Each validator is compiled on first use and
//! then shared for the life of the process. Formats (`date-time`) are annotations in draft
//! 2020-12, as in the public tooling; [`crate::rules::invariants`] checks RFC 3339 on top.

use crate::plan::json::{Segment, render_path};
use crate::plan::model::{DocKind, Generation};
use jsonschema::Validator;
use jsonschema::paths::LocationSegment;
use serde_json::Value;
use std::sync::OnceLock;

/// One embedded schema: its file name under `schemas/` and its text.
pub struct EmbeddedSchema {
    pub file_name: &'static str,
    pub text: &'static str,
}

macro_rules! embed {
    ($file:literal) => {
        EmbeddedSchema {
            file_name: $file,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/", $file)),
        }
    };
}

const MANIFEST: [EmbeddedSchema; 3] = [
    embed!("plan-manifest-v1.schema.json"),
    embed!("plan-manifest-v2.schema.json"),
    embed!("plan-manifest-v5.schema.json"),
];

const STATE: [EmbeddedSchema; 3] = [
    embed!("plan-state-v1.schema.json"),
    embed!("plan-state-v2.schema.json"),
    embed!("plan-state-v5.schema.json"),
];

/// The record-plan documents, in the order [`RecordSchema`] declares them (its `slot`).
const RECORD: [EmbeddedSchema; 7] = [
    embed!("plan-manifest-v6.schema.json"),
    embed!("plan-manifest-v7.schema.json"),
    embed!("plan-contract-v6.schema.json"),
    embed!("plan-contract-v7.schema.json"),
    embed!("journal-event-v6.schema.json"),
    embed!("journal-event-v7.schema.json"),
    embed!("plan-snapshot-v6.schema.json"),
];

/// `analysis_results/FINALIZATION.json`.
pub const RECEIPT: EmbeddedSchema = embed!("finalization-receipt.schema.json");
/// A task's declared files (`dwp contract declare`).
pub const CONTRACT_EXPECTED: EmbeddedSchema = embed!("contract-expected.schema.json");
/// One line of a task's edit ledger (`dwp contract record`).
pub const CONTRACT_LEDGER_LINE: EmbeddedSchema = embed!("contract-ledger-line.schema.json");
/// `.ak-loop/verify.json`.
pub const LOOP_VERIFY: EmbeddedSchema = embed!("loop/verify.schema.json");
/// `.ak-loop/dod.json`.
pub const LOOP_DOD: EmbeddedSchema = embed!("loop/dod.schema.json");
/// The `dod` section of `loop.config.yaml`.
pub const LOOP_CONFIG_DOD: EmbeddedSchema = embed!("loop/config-dod.schema.json");
/// Every document dwp writes on stdout under `--json`.
pub const OUTPUT: EmbeddedSchema = embed!("output.schema.json");

/// Every embedded schema, in the order `dwp schema` lists them.
pub const ALL: [&EmbeddedSchema; 20] = [
    &MANIFEST[0],
    &MANIFEST[1],
    &MANIFEST[2],
    &STATE[0],
    &STATE[1],
    &STATE[2],
    &RECORD[0],
    &RECORD[1],
    &RECORD[2],
    &RECORD[3],
    &RECORD[4],
    &RECORD[5],
    &RECORD[6],
    &RECEIPT,
    &CONTRACT_EXPECTED,
    &CONTRACT_LEDGER_LINE,
    &LOOP_VERIFY,
    &LOOP_DOD,
    &LOOP_CONFIG_DOD,
    &OUTPUT,
];

impl EmbeddedSchema {
    /// The name `dwp schema` takes: the file's path under `schemas/` without `.schema.json`.
    pub fn name(&self) -> &'static str {
        self.file_name
            .strip_suffix(".schema.json")
            .unwrap_or(self.file_name)
    }
}

/// The embedded schema called `name` ([`EmbeddedSchema::name`]).
pub fn named(name: &str) -> Option<&'static EmbeddedSchema> {
    ALL.into_iter().find(|schema| schema.name() == name)
}

fn slot(generation: Generation) -> usize {
    match generation {
        Generation::V1 => 0,
        Generation::V2 => 1,
        Generation::V5 => 2,
    }
}

/// The embedded schema for a document kind and generation.
pub fn embedded(kind: DocKind, generation: Generation) -> &'static EmbeddedSchema {
    match kind {
        DocKind::Manifest => &MANIFEST[slot(generation)],
        DocKind::State => &STATE[slot(generation)],
    }
}

/// The record-plan documents, by generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordSchema {
    /// `manifest.json` of a v6 plan (`plan-manifest/v6`).
    ManifestV6,
    /// `manifest.json` of a v7 plan (`plan-manifest/v7`).
    ManifestV7,
    /// `contract.json` and `contracts/contract.rN.json` of a v6 plan (`plan-contract/v6`).
    ContractV6,
    /// The v7 contract: v6 plus `tasks[].parallel_safe` (`plan-contract/v7`).
    ContractV7,
    /// One line of a v6 plan's `journal.ndjson` (`journal-event/v6`).
    EventV6,
    /// One line of a v7 journal: the v6 events plus `delegation` (`journal-event/v7`).
    EventV7,
    /// `state.json` of a v6 or v7 plan, the projection of contract and journal (`plan-snapshot/v6`).
    Snapshot,
}

impl RecordSchema {
    pub const ALL: [RecordSchema; 7] = [
        RecordSchema::ManifestV6,
        RecordSchema::ManifestV7,
        RecordSchema::ContractV6,
        RecordSchema::ContractV7,
        RecordSchema::EventV6,
        RecordSchema::EventV7,
        RecordSchema::Snapshot,
    ];

    fn slot(self) -> usize {
        self as usize
    }
}

/// The embedded schema of a record-plan document.
pub fn record_embedded(schema: RecordSchema) -> &'static EmbeddedSchema {
    &RECORD[schema.slot()]
}

/// A schema violation: where in the instance, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON path in `$.a.b[0]` form.
    pub path: String,
    pub message: String,
}

/// Compile a schema document (draft 2020-12). Used for the embedded schemas and by tests that
/// compare them with the public reference copies.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::draft202012::new(schema).map_err(|e| e.to_string())
}

/// The validator of an embedded schema, compiled once per process in `cell`. An embedded schema
/// that is not JSON or does not compile is a build defect: a test compiles every one.
pub fn compiled(cell: &'static OnceLock<Validator>, schema: &EmbeddedSchema) -> &'static Validator {
    cell.get_or_init(|| {
        let _stage = crate::profile::stage("compile schema");
        let value: Value = serde_json::from_str(schema.text)
            .unwrap_or_else(|e| panic!("embedded {} is not JSON: {e}", schema.file_name));
        compile(&value)
            .unwrap_or_else(|e| panic!("embedded {} does not compile: {e}", schema.file_name))
    })
}

fn validator(kind: DocKind, generation: Generation) -> &'static Validator {
    static MANIFEST_VALIDATORS: [OnceLock<Validator>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    static STATE_VALIDATORS: [OnceLock<Validator>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let cell = match kind {
        DocKind::Manifest => &MANIFEST_VALIDATORS[slot(generation)],
        DocKind::State => &STATE_VALIDATORS[slot(generation)],
    };
    compiled(cell, embedded(kind, generation))
}

/// The state schema split in two, so that a state can be checked one task at a time: the
/// document with any `tasks` items accepted, and the task definition on its own. The state
/// schemas constrain tasks only through `tasks.items: {$ref: #/$defs/task}`, so a document
/// passes the whole schema exactly when it passes the first and every task passes the second
/// (`tests` below and `tests/conformance/schema_parity.rs` hold both to the whole schema's verdicts).
struct SplitState {
    shell: Validator,
    task: Validator,
}

fn split_state(generation: Generation) -> &'static SplitState {
    static SPLIT: [OnceLock<SplitState>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    SPLIT[slot(generation)].get_or_init(|| {
        let _stage = crate::profile::stage("compile schema");
        let schema = embedded(DocKind::State, generation);
        let whole: Value = serde_json::from_str(schema.text).expect("embedded schema is JSON");
        let mut shell = whole.clone();
        shell["properties"]["tasks"]["items"] = Value::Bool(true);
        let task = serde_json::json!({
            "$schema": whole["$schema"],
            "$defs": whole["$defs"],
            "$ref": "#/$defs/task",
        });
        SplitState {
            shell: compile(&shell).expect("the shell schema compiles"),
            task: compile(&task).expect("the task schema compiles"),
        }
    })
}

/// Violations of the state schema by a document whose `tasks` are checked apart.
pub fn validate_state_shell(generation: Generation, instance: &Value) -> Vec<Violation> {
    violations(&split_state(generation).shell, instance)
}

/// Violations of the task definition by task `index`, with paths from the document root.
pub fn validate_task(generation: Generation, task: &Value, index: usize) -> Vec<Violation> {
    let mut found = violations(&split_state(generation).task, task);
    for violation in &mut found {
        let rest = violation.path.strip_prefix('$').unwrap_or(&violation.path);
        violation.path = format!("$.tasks[{index}]{rest}");
    }
    found
}

/// Every violation of a record-plan document's embedded schema, paths in `$.a[0]` form (each
/// schema compiled once per process, like the others).
pub fn validate_record(schema: RecordSchema, instance: &Value) -> Vec<Violation> {
    // A valid manifest or contract is decided without compiling a validator.
    if crate::plan::typed_schema::record_fits(schema, instance) {
        return Vec::new();
    }
    static VALIDATORS: [OnceLock<Validator>; 7] = [const { OnceLock::new() }; 7];
    violations(
        compiled(&VALIDATORS[schema.slot()], record_embedded(schema)),
        instance,
    )
}

/// Every violation of the embedded schema, in the validator's order.
pub fn validate(kind: DocKind, generation: Generation, instance: &Value) -> Vec<Violation> {
    violations(validator(kind, generation), instance)
}

/// Every violation of `validator` by `instance`, with paths in `$.a[0]` form.
pub fn violations(validator: &Validator, instance: &Value) -> Vec<Violation> {
    // The common case is a valid document: a yes/no check is much cheaper than collecting errors.
    if validator.is_valid(instance) {
        return Vec::new();
    }
    validator
        .iter_errors(instance)
        .map(|error| Violation {
            path: render_path(&location_segments(error.instance_path())),
            message: shorten(&error.to_string()),
        })
        .collect()
}

/// Messages quote the offending value; a 100,000-character string must not become a
/// 100,000-character finding. Keeps the head and the tail (which says what is wrong).
fn shorten(message: &str) -> String {
    const HEAD: usize = 160;
    const TAIL: usize = 120;
    let count = message.chars().count();
    if count <= HEAD + TAIL + 40 {
        return message.to_owned();
    }
    let head: String = message.chars().take(HEAD).collect();
    let tail: String = message.chars().skip(count - TAIL).collect();
    format!(
        "{head}… ({} characters elided) …{tail}",
        count - HEAD - TAIL
    )
}

fn location_segments(location: &jsonschema::paths::Location) -> Vec<Segment> {
    location
        .iter()
        .map(|segment| match segment {
            LocationSegment::Property(key) => Segment::Key(key.to_string()),
            LocationSegment::Index(i) => Segment::Index(i),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_holds_exactly_the_embedded_schemas_byte_for_byte() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let mut on_disk = Vec::new();
        for entry in std::fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path();
            let names: Vec<std::path::PathBuf> = if path.is_dir() {
                std::fs::read_dir(&path)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .collect()
            } else {
                vec![path]
            };
            for file in names {
                let relative = file
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                on_disk.push(relative);
            }
        }
        on_disk.sort();
        let mut embedded: Vec<&str> = ALL.iter().map(|s| s.file_name).collect();
        embedded.sort();
        assert_eq!(
            on_disk, embedded,
            "every file of schemas/ is embedded, and only those"
        );
        for schema in ALL {
            let file = std::fs::read_to_string(root.join(schema.file_name)).unwrap();
            assert_eq!(file, schema.text, "{}", schema.file_name);
            let value: Value = serde_json::from_str(schema.text).unwrap();
            compile(&value)
                .unwrap_or_else(|e| panic!("{} does not compile: {e}", schema.file_name));
        }
        assert_eq!(
            named("output").map(|s| s.file_name),
            Some("output.schema.json")
        );
        assert_eq!(
            named("loop/dod").map(|s| s.file_name),
            Some("loop/dod.schema.json")
        );
        assert!(named("nope").is_none());
    }

    #[test]
    fn every_embedded_schema_compiles_and_names_its_own_url() {
        for generation in Generation::ALL {
            for kind in [DocKind::Manifest, DocKind::State] {
                let schema: Value = serde_json::from_str(embedded(kind, generation).text).unwrap();
                assert_eq!(schema["$id"], generation.url(kind));
                assert!(compile(&schema).is_ok());
            }
        }
    }

    #[test]
    fn the_split_state_schema_gives_the_whole_schemas_verdicts() {
        use crate::synth::SynthPlan;
        for generation in Generation::ALL {
            let state = serde_json::to_value(
                SynthPlan::new("PLAN_split_check", 3)
                    .completed(1)
                    .generation(generation)
                    .state(),
            )
            .unwrap();
            let mutations: [(&str, Value); 7] = [
                ("/tasks/0/status", Value::from("done")),
                ("/tasks/1/title", Value::from(7)),
                ("/tasks/2/extra", Value::from(true)),
                ("/tasks/0/commit", Value::from("XYZ")),
                ("/tasks", Value::Array(Vec::new())),
                ("/tasks", Value::from("none")),
                ("/status", Value::from("stuck")),
            ];
            let split_verdict = |doc: &Value| {
                let mut shell = doc.clone();
                let tasks = match doc["tasks"].as_array() {
                    Some(tasks) => {
                        shell["tasks"] = Value::Array(vec![Value::Null; tasks.len()]);
                        tasks.clone()
                    }
                    None => Vec::new(),
                };
                validate_state_shell(generation, &shell).is_empty()
                    && tasks
                        .iter()
                        .enumerate()
                        .all(|(i, t)| validate_task(generation, t, i).is_empty())
            };
            assert!(split_verdict(&state));
            for (pointer, replacement) in mutations {
                let mut doc = state.clone();
                match doc.pointer_mut(pointer) {
                    Some(slot) => *slot = replacement,
                    None => {
                        let (parent, key) = pointer.rsplit_once('/').unwrap();
                        doc.pointer_mut(parent).unwrap()[key] = replacement;
                    }
                }
                let whole = validate(DocKind::State, generation, &doc).is_empty();
                assert_eq!(split_verdict(&doc), whole, "{generation:?} {pointer}");
            }
        }
    }

    /// The `$id` each record-plan schema must carry.
    fn record_url(schema: RecordSchema) -> &'static str {
        match schema {
            RecordSchema::ManifestV6 => "https://deepworkplan.com/schema/plan-manifest/v6.json",
            RecordSchema::ManifestV7 => "https://deepworkplan.com/schema/plan-manifest/v7.json",
            RecordSchema::ContractV6 => "https://deepworkplan.com/schema/plan-contract/v6.json",
            RecordSchema::ContractV7 => "https://deepworkplan.com/schema/plan-contract/v7.json",
            RecordSchema::EventV6 => "https://deepworkplan.com/schema/journal-event/v6.json",
            RecordSchema::EventV7 => "https://deepworkplan.com/schema/journal-event/v7.json",
            RecordSchema::Snapshot => "https://deepworkplan.com/schema/plan-snapshot/v6.json",
        }
    }

    #[test]
    fn every_record_schema_is_listed_and_names_its_own_url() {
        for schema in RecordSchema::ALL {
            let embedded = record_embedded(schema);
            assert!(
                ALL.iter().any(|s| s.file_name == embedded.file_name),
                "{schema:?}"
            );
            assert_eq!(
                named(embedded.name()).map(|s| s.file_name),
                Some(embedded.file_name)
            );
            let value: Value = serde_json::from_str(embedded.text).unwrap();
            assert_eq!(value["$id"], record_url(schema), "{schema:?}");
        }
    }

    #[test]
    fn validate_record_accepts_a_valid_manifest_and_names_the_path_of_a_violation() {
        let manifest = |id: &str| {
            serde_json::json!({
                "schema": record_url(RecordSchema::ManifestV7),
                "plan": "PLAN_record_unit",
                "contract": {"id": id, "path": "contract.json"}
            })
        };
        let valid = manifest(&"0f".repeat(32));
        assert_eq!(
            validate_record(RecordSchema::ManifestV7, &valid),
            Vec::new()
        );
        let found = validate_record(RecordSchema::ManifestV7, &manifest("0F"));
        assert_eq!(
            found.iter().map(|v| v.path.as_str()).collect::<Vec<_>>(),
            ["$.contract.id"]
        );
        // The other generation's URL is a violation of the `schema` const.
        let found = validate_record(RecordSchema::ManifestV6, &valid);
        assert!(found.iter().any(|v| v.path == "$.schema"), "{found:?}");
    }

    #[test]
    fn validate_record_names_the_path_inside_a_journal_event() {
        let event = serde_json::json!({
            "schema": record_url(RecordSchema::EventV7),
            "type": "delegation", "seq": 4, "ts": "2026-03-01T10:00:00Z",
            "plan": "PLAN_record_unit", "contract_id": "0f".repeat(32),
            "actor": {"kind": "helper", "identity": "dwp"},
            "task": "T-one", "delegation_id": "d1", "transport": "headless", "via": "agentkit",
            "state": "completed", "result_path": "results/out.md"
        });
        assert_eq!(validate_record(RecordSchema::EventV7, &event), Vec::new());
        let mut escaping = event.clone();
        escaping["result_path"] = "results/../../out.md".into();
        let found = validate_record(RecordSchema::EventV7, &escaping);
        assert!(!found.is_empty());
        assert!(found.iter().all(|v| v.path.starts_with('$')), "{found:?}");
        // A v7-only event type under the v6 schema.
        assert!(!validate_record(RecordSchema::EventV6, &event).is_empty());
    }

    #[test]
    fn long_messages_keep_head_and_tail() {
        let long = format!("\"{}\" is longer than 500 characters", "x".repeat(10_000));
        let short = shorten(&long);
        assert!(short.len() < 400, "{}", short.len());
        assert!(short.ends_with("is longer than 500 characters"));
        assert_eq!(shorten("short"), "short");
    }

    #[test]
    fn violations_carry_json_paths() {
        let state = serde_json::json!({
            "schema": Generation::V2.url(DocKind::State),
            "plan": "PLAN_a_b", "updated_at": "2026-01-01T00:00:00Z", "status": "pending",
            "completed_count": 0, "task_count": 1, "format": "lite", "materialization": "ready",
            "tasks": [{"id": 1, "locator": {"kind": "inline", "value": "1.task_x.md"},
                       "title": "t", "status": "pending", "gates": []}]
        });
        let found = validate(DocKind::State, Generation::V2, &state);
        assert!(
            found.iter().any(|v| v.path == "$.tasks[0].locator.value"),
            "{found:?}"
        );
    }
}
