//! The state and manifest schemas of v2 and v5, and the manifest and contract schemas of record
//! plans (v6, v7), as typed checks: the common case (a valid document) decided without compiling
//! a schema validator, and for a state without building a tree of JSON values.
//!
//! A process that validates one small plan spends most of its work compiling the two schemas
//! (docs/PERFORMANCE.md, "What is kept, and why"); a 10,000-task state spends it building and
//! freeing a tree of values per task. Here a state's bytes are typed directly into [`State`] and
//! every constraint of the schema that typing does not already impose is checked on the typed
//! value; a manifest (a few hundred bytes, read strictly as a value) is checked key by key.
//!
//! The checks are one-sided by design: [`state`] answers `Some` and [`manifest_fits`] and
//! [`record_fits`] `true` only for a document the schema accepts (the state typed exactly as the
//! schema path types it); anything else (an invalid document, a v1 document, a shape they do not
//! decide) takes the schema path, which reports every violation with its path. So an error here
//! can cost time, never a verdict. `tests/conformance/schema_parity.rs` holds them to the schema
//! on every document of the parity corpus, and the `json` fuzz target the state check on
//! arbitrary bytes.
//!
//! What typing a state alone would let through, and how each is closed:
//! - `null` where the schema wants a value: serde reads `null` into an absent `Option`. Every
//!   `null` of the text must be one of the nullable fields (`promotion`, `checkpoint`,
//!   `blocked`), counted on the typed value against the text;
//! - duplicate keys: serde's derived structs refuse a repeated field, and the model has no
//!   free-form map;
//! - a byte order mark, invalid UTF-8, text after the document: refused as by the strict reader;
//! - patterns, lengths, minimums, required fields the model keeps optional (v1 has no
//!   `locator`), the closed `file` of v1 tasks, the constants of `schema` and `promotion`:
//!   checked below, one function per definition of the schema.

use crate::plan::model::{
    Actor, Blocker, Checkpoint, Field, Gate, Generation, Locator, LocatorKind, Outcome, Promotion,
    State, Task,
};
use crate::plan::schemas::RecordSchema;
use serde_json::Value;

const STATE_V2: &str = "https://deepworkplan.com/schema/plan-state/v2.json";
const STATE_V5: &str = "https://deepworkplan.com/schema/plan-state/v5.json";

/// The generation and typed state of `bytes` when the state schema certainly accepts them.
pub fn state(bytes: &[u8]) -> Option<(Generation, State)> {
    let (generation, state) = typed(bytes)?;
    text_fits(&state, &tokens_in(bytes)?).then_some((generation, state))
}

/// The typing half of [`state`]: `bytes` typed as a v2/v5 [`State`], with nothing checked yet
/// that typing does not impose. Only [`text_fits`] with the [`tokens_in`] the same bytes makes
/// it a verdict.
fn typed(bytes: &[u8]) -> Option<(Generation, State)> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let state: State = serde_json::from_str(text).ok()?;
    let generation = match state.schema.as_str() {
        STATE_V2 => Generation::V2,
        STATE_V5 => Generation::V5,
        _ => return None,
    };
    Some((generation, state))
}

/// Whether a state [`typed`] from some bytes whose [`tokens_in`] are `tokens` is one the
/// schema accepts: the text held only the `null`s and objects the value shows, and the value
/// passes every check of the schema that typing does not impose.
fn text_fits(state: &State, tokens: &Tokens) -> bool {
    *tokens == expected_tokens(state) && document_fits(state)
}

/// Whether the typed `state`, written by dwp (structs as objects, an absent `Option` left out,
/// `null` only for an explicitly null nullable field), is a document the schema of
/// `generation` accepts: a writer's safety net on the state it is about to write.
pub fn state_fits(generation: Generation, state: &State) -> bool {
    let url = match generation {
        Generation::V1 => return false,
        Generation::V2 => STATE_V2,
        Generation::V5 => STATE_V5,
    };
    state.schema == url && document_fits(state)
}

const MANIFEST_V2: &str = "https://deepworkplan.com/schema/plan-manifest/v2.json";
const MANIFEST_V5: &str = "https://deepworkplan.com/schema/plan-manifest/v5.json";

/// Whether the manifest `value` (read strictly: no duplicate key anywhere) is one the v2/v5
/// manifest schema of `generation` accepts: every key known and of its type, the required ones
/// present, the patterns, the length of `title`, `task_count` at least 1.
pub fn manifest_fits(generation: Generation, value: &Value) -> bool {
    let url = match generation {
        Generation::V1 => return false,
        Generation::V2 => MANIFEST_V2,
        Generation::V5 => MANIFEST_V5,
    };
    let Some(fields) = value.as_object() else {
        return false;
    };
    let required = [
        "schema",
        "spec_version",
        "name",
        "archetype",
        "rigor",
        "created_at",
        "task_count",
        "plan_format",
    ];
    required.iter().all(|key| fields.contains_key(*key))
        && fields.iter().all(|(key, value)| match key.as_str() {
            "schema" => value.as_str() == Some(url),
            "spec_version" => value.as_str().is_some_and(is_version),
            "name" => value.as_str().is_some_and(crate::plan::is_plan_name),
            "title" => value.as_str().is_some_and(|title| within(title, 200)),
            "archetype" => one_of(
                value,
                &["individual", "orchestrator-hub", "agent-workspace"],
            ),
            "rigor" => one_of(value, &["micro", "standard", "deep"]),
            "created_at" => value.is_string(),
            "created_by" => value.is_object(),
            "tags" => value
                .as_array()
                .is_some_and(|tags| tags.iter().all(Value::is_string)),
            "task_count" => value.as_u64().is_some_and(|count| count >= 1),
            "plan_format" => one_of(value, &["lite", "full"]),
            "parent_plan" => value.is_string() || value.is_null(),
            _ => false,
        })
}

/// Whether the record-plan schema `schema` certainly accepts `value`: the manifests and the
/// contracts of v6 and v7, checked key by key as [`manifest_fits`] checks a v5 manifest, with the
/// same one-sidedness (a pattern is matched by a stricter hand-written test, a number written
/// with a fraction or an exponent is left to the schema path). Journal events and the snapshot
/// are not decided here (`false`).
pub fn record_fits(schema: RecordSchema, value: &Value) -> bool {
    match schema {
        RecordSchema::ManifestV6 => record_manifest_fits(value, MANIFEST_V6),
        RecordSchema::ManifestV7 => record_manifest_fits(value, MANIFEST_V7),
        RecordSchema::ContractV6 => contract_fits(value, CONTRACT_V6, false),
        RecordSchema::ContractV7 => contract_fits(value, CONTRACT_V7, true),
        RecordSchema::EventV6 | RecordSchema::EventV7 | RecordSchema::Snapshot => false,
    }
}

const MANIFEST_V6: &str = "https://deepworkplan.com/schema/plan-manifest/v6.json";
const MANIFEST_V7: &str = "https://deepworkplan.com/schema/plan-manifest/v7.json";
const CONTRACT_V6: &str = "https://deepworkplan.com/schema/plan-contract/v6.json";
const CONTRACT_V7: &str = "https://deepworkplan.com/schema/plan-contract/v7.json";

/// An object holding every key of `required` and only keys `fits` accepts with their value.
fn object_fits(value: &Value, required: &[&str], fits: impl Fn(&str, &Value) -> bool) -> bool {
    value.as_object().is_some_and(|fields| {
        required
            .iter()
            .all(|key| crate::plan::json::has_key(fields, key))
            && fields.iter().all(|(key, value)| fits(key, value))
    })
}

/// An array (of at least `min` items, all distinct when `unique`) whose every item fits.
fn array_fits(value: &Value, min: usize, unique: bool, fits: impl Fn(&Value) -> bool) -> bool {
    let Some(items) = value.as_array() else {
        return false;
    };
    // Every unique array of these schemas holds strings; any other is left to the schema path.
    let distinct = || {
        let mut seen = std::collections::HashSet::new();
        items
            .iter()
            .all(|item| item.as_str().is_some_and(|text| seen.insert(text)))
    };
    items.len() >= min && items.iter().all(fits) && (!unique || distinct())
}

/// A string of at least one character.
fn filled(value: &Value) -> bool {
    value.as_str().is_some_and(|text| !text.is_empty())
}

/// An integer written as one (no fraction, no exponent) of at least `min`.
fn integer_from(value: &Value, min: u64) -> bool {
    value.as_u64().is_some_and(|n| n >= min)
}

/// A finite number of at least 0 written without an exponent.
fn non_negative(value: &Value) -> bool {
    value.as_number().is_some_and(|n| {
        !n.as_str().contains(['e', 'E']) && n.as_f64().is_some_and(|n| n.is_finite() && n >= 0.0)
    })
}

/// `^[0-9a-f]{64}$`, a sha256 in lowercase hex (a contract id, a digest).
pub fn is_hex64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(is_hex)
}

/// `^PREFIX[a-z0-9]+(-[a-z0-9]+)*$` (the `T-`, `AC-` and `INV-` ids).
fn dashed_id(value: &Value, prefix: &str) -> bool {
    let rest = value.as_str().and_then(|id| id.strip_prefix(prefix));
    rest.is_some_and(|rest| {
        rest.split('-')
            .all(|word| !word.is_empty() && word.bytes().all(is_lower_alnum))
    })
}

fn record_manifest_fits(value: &Value, url: &str) -> bool {
    let plan_name = |name: &str| {
        name.strip_prefix("PLAN_").is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
    };
    let contract = |value: &Value| {
        object_fits(value, &["id", "path"], |key, value| match key {
            "id" => value.as_str().is_some_and(is_hex64),
            "path" => value.as_str() == Some("contract.json"),
            _ => false,
        })
    };
    object_fits(
        value,
        &["schema", "plan", "contract"],
        |key, value| match key {
            "schema" => value.as_str() == Some(url),
            "plan" => value.as_str().is_some_and(plan_name),
            "contract" => contract(value),
            _ => false,
        },
    )
}

fn contract_fits(value: &Value, url: &str, v7: bool) -> bool {
    let required = [
        "schema",
        "spec_version",
        "plan",
        "revision",
        "created_at",
        "outcome",
        "acceptance",
        "invariants",
        "scope",
        "authorization",
        "permissions",
        "dependencies",
        "resource_envelope",
        "tasks",
    ];
    let strings = |value: &Value, min: usize, unique: bool| array_fits(value, min, unique, filled);
    object_fits(value, &required, |key, value| match key {
        "schema" => value.as_str() == Some(url),
        "spec_version" => value.as_str().is_some_and(is_version),
        // The contract's pattern also allows a numeric prefix word; a name using it is left to
        // the schema path.
        "plan" => value.as_str().is_some_and(crate::plan::is_plan_name),
        "revision" => integer_from(value, 1),
        "contract_id" | "parent_contract_id" => value.as_str().is_some_and(is_hex64),
        "created_at" => value.is_string(),
        "title" => value.as_str().is_some_and(|title| within(title, 200)),
        "outcome" => object_fits(
            value,
            &["statement", "success_definition", "out_of_scope"],
            |key, value| match key {
                "statement" | "success_definition" => filled(value),
                "out_of_scope" => strings(value, 0, false),
                _ => false,
            },
        ),
        "acceptance" => object_fits(value, &["criteria"], |key, value| {
            key == "criteria" && array_fits(value, 1, false, criterion_fits)
        }),
        "invariants" => array_fits(value, 0, false, |invariant| {
            object_fits(invariant, &["id", "statement"], |key, value| match key {
                "id" => dashed_id(value, "INV-"),
                "statement" => filled(value),
                _ => false,
            })
        }),
        "scope" => object_fits(
            value,
            &[
                "allowed_paths",
                "allowed_command_classes",
                "forbidden_operations",
            ],
            |key, value| match key {
                "allowed_paths" => strings(value, 0, false),
                "allowed_command_classes" => strings(value, 1, true),
                "forbidden_operations" => strings(value, 1, false),
                _ => false,
            },
        ),
        "authorization" => authorization_fits(value),
        "permissions" => object_fits(value, &["granted", "not_granted"], |key, value| {
            matches!(key, "granted" | "not_granted")
                && array_fits(value, 0, true, |c| one_of(c, &CAPABILITIES))
        }),
        "dependencies" => array_fits(value, 0, false, |dependency| {
            object_fits(
                dependency,
                &["name", "kind", "detail"],
                |key, value| match key {
                    "name" | "detail" => filled(value),
                    "kind" => one_of(value, &["external_system", "credential", "pinned_input"]),
                    _ => false,
                },
            )
        }),
        "resource_envelope" => object_fits(value, &["limits"], |key, value| {
            key == "limits" && array_fits(value, 1, false, limit_fits)
        }),
        "scheduling" => scheduling_fits(value),
        "tasks" => array_fits(value, 1, false, |task| contract_task_fits(task, v7)),
        _ => false,
    })
}

/// The closed set of capabilities a contract grants or withholds.
pub const CAPABILITIES: [&str; 9] = [
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

fn criterion_fits(criterion: &Value) -> bool {
    let required = ["id", "statement", "observable_check", "accepted_evidence"];
    object_fits(criterion, &required, |key, value| match key {
        "id" => dashed_id(value, "AC-"),
        "statement" | "observable_check" => filled(value),
        "accepted_evidence" => array_fits(value, 1, true, |kind| {
            one_of(kind, &["observed", "imported", "asserted"])
        }),
        "control" => object_fits(value, &["kind", "rationale"], |key, value| match key {
            "kind" => one_of(value, &["regression", "discrimination", "exempt"]),
            "rationale" => filled(value),
            _ => false,
        }),
        _ => false,
    })
}

fn authorization_fits(value: &Value) -> bool {
    let required = [
        "mechanism",
        "authority",
        "timestamp",
        "boundaries",
        "consent_checkpoints",
    ];
    object_fits(value, &required, |key, value| match key {
        "mechanism" => one_of(value, &["plan_authorship", "pre_authorization"]),
        "authority" | "boundaries" => filled(value),
        "timestamp" => value.is_string(),
        "consent_checkpoints" => array_fits(value, 0, false, filled),
        _ => false,
    })
}

/// A resource limit; an enforced one names its metering source.
fn limit_fits(limit: &Value) -> bool {
    let fields = object_fits(
        limit,
        &["id", "limit", "unit", "enforcement"],
        |key, value| match key {
            "id" => value.as_str().is_some_and(|id| {
                id.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
                    && id.bytes().all(|b| is_lower_alnum(b) || b == b'_')
            }),
            "limit" | "reserve" => non_negative(value),
            "unit" | "metering_source" => filled(value),
            "enforcement" => one_of(value, &["enforced", "advisory"]),
            _ => false,
        },
    );
    let metered = limit.get("enforcement").and_then(Value::as_str) != Some("enforced")
        || limit.get("metering_source").is_some();
    fields && metered
}

fn scheduling_fits(value: &Value) -> bool {
    object_fits(value, &[], |key, value| match key {
        "starvation_threshold_events" => integer_from(value, 1),
        "max_adaptations_per_task" | "max_retries_per_gate" => integer_from(value, 0),
        "handoff" => object_fits(value, &[], |key, value| {
            matches!(key, "fresh_context" | "cross_host_resume") && filled(value)
        }),
        _ => false,
    })
}

fn contract_task_fits(task: &Value, v7: bool) -> bool {
    let required = [
        "id",
        "title",
        "prerequisites",
        "touched_surface",
        "gate_intent",
    ];
    object_fits(task, &required, |key, value| match key {
        "id" => dashed_id(value, "T-"),
        "title" => filled(value),
        "prerequisites" => array_fits(value, 0, true, |id| dashed_id(id, "T-")),
        "touched_surface" => array_fits(value, 0, false, filled),
        "gate_intent" => array_fits(value, 0, false, |intent| {
            object_fits(intent, &["criterion", "check"], |key, value| match key {
                "criterion" => dashed_id(value, "AC-"),
                "check" => filled(value),
                _ => false,
            })
        }),
        "parallel_safe" => v7 && value.is_boolean(),
        _ => false,
    })
}

fn one_of(value: &Value, allowed: &[&str]) -> bool {
    value.as_str().is_some_and(|text| allowed.contains(&text))
}

/// `^\d+\.\d+\.\d+$` with ASCII digits (were `\d` wider, this is only stricter).
fn is_version(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

/// What the typed value cannot show of the text: its `null` literals and its objects, counted
/// outside strings; `None` when a number has a fraction or an exponent (`3.0` is the integer 3
/// to the schema and to typing alike, but a canonical state never holds one, so it is left to
/// the schema path rather than argued here).
#[derive(Debug, PartialEq, Eq)]
struct Tokens {
    nulls: usize,
    objects: usize,
}

/// Outside a string, the letter `n` begins `null` and nothing else (`true`, `false`, numbers and
/// punctuation have none), `{` begins an object, `.` is a fraction and `e` after a digit an
/// exponent.
fn tokens_in(bytes: &[u8]) -> Option<Tokens> {
    let mut tokens = Tokens {
        nulls: 0,
        objects: 0,
    };
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => at = string_end(bytes, at + 1),
            b'n' => tokens.nulls += 1,
            b'{' => tokens.objects += 1,
            b'.' => return None,
            b'e' | b'E' if at > 0 && bytes[at - 1].is_ascii_digit() => return None,
            _ => {}
        }
        at += 1;
    }
    Some(tokens)
}

/// The index of the quote closing the string whose first byte is at `from` (most of a state's
/// bytes are inside strings: they are skipped a word at a time).
fn string_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(offset) = memchr::memchr2(b'"', b'\\', bytes.get(from..).unwrap_or_default()) {
        from += offset;
        match bytes[from] {
            b'\\' => from += 2,
            _ => return from,
        }
    }
    bytes.len()
}

/// The tokens a state read from objects alone holds. serde reads a struct from an array too
/// (field by field) and `null` into an absent `Option`; the schema allows neither, except the
/// three nullable fields. A struct read from an array leaves one `{` fewer than this count.
fn expected_tokens(state: &State) -> Tokens {
    let nulls = [
        matches!(state.promotion, Field::Null),
        matches!(state.checkpoint, Field::Null),
        matches!(state.blocked, Field::Null),
    ]
    .into_iter()
    .filter(|&null| null)
    .count();
    let document = 1
        + usize::from(state.updated_by.is_some())
        + usize::from(state.promotion.value().is_some())
        + usize::from(state.checkpoint.value().is_some())
        + usize::from(state.blocked.value().is_some());
    let tasks: usize = state
        .tasks
        .iter()
        .map(|task| {
            1 + usize::from(task.locator.is_some())
                + task.gates().len()
                + usize::from(task.outcome.is_some())
        })
        .sum();
    Tokens {
        nulls,
        objects: document + tasks,
    }
}

/// The document: `plan`'s pattern, the required fields the model keeps optional, the minimums,
/// and each nested definition.
fn document_fits(state: &State) -> bool {
    crate::plan::is_plan_name(&state.plan)
        && state.format.is_some()
        && state.materialization.is_some()
        && state.task_count >= 1
        && !state.tasks.is_empty()
        && state.updated_by.as_ref().is_none_or(actor_fits)
        && field_fits(&state.promotion, promotion_fits)
        && field_fits(&state.checkpoint, checkpoint_fits)
        && field_fits(&state.blocked, blocker_fits)
        && state.tasks.iter().all(task_fits)
}

fn field_fits<T>(field: &Field<T>, fits: impl Fn(&T) -> bool) -> bool {
    field.value().is_none_or(fits)
}

fn is_lower_alnum(byte: u8) -> bool {
    byte.is_ascii_lowercase() || byte.is_ascii_digit()
}

/// `maxLength` counts characters (code points), not bytes.
fn within(text: &str, max_chars: usize) -> bool {
    text.len() <= max_chars || text.chars().count() <= max_chars
}

fn optional_within(text: &Option<String>, max_chars: usize) -> bool {
    text.as_deref().is_none_or(|text| within(text, max_chars))
}

fn actor_fits(actor: &Actor) -> bool {
    optional_within(&actor.agent, 100) && optional_within(&actor.model, 100)
}

fn promotion_fits(promotion: &Promotion) -> bool {
    promotion.from == "lite" && promotion.to == "full"
}

fn checkpoint_fits(checkpoint: &Checkpoint) -> bool {
    checkpoint.task >= 1
        && optional_within(&checkpoint.step, 200)
        && optional_within(&checkpoint.note, 500)
}

fn blocker_fits(blocker: &Blocker) -> bool {
    blocker.task >= 1 && within(&blocker.reason, 1000) && optional_within(&blocker.needs, 500)
}

/// A task of v2/v5: `locator` and `gates` required, no `file` (v1's field), `commit`'s pattern.
fn task_fits(task: &Task) -> bool {
    task.id >= 1
        && task.file.is_none()
        && task.locator.as_ref().is_some_and(locator_fits)
        && task
            .commit
            .as_deref()
            .is_none_or(|commit| (7..=40).contains(&commit.len()) && commit.bytes().all(is_hex))
        && task
            .gates
            .as_ref()
            .is_some_and(|gates| gates.iter().all(gate_fits))
        && task.outcome.as_ref().is_none_or(outcome_fits)
}

fn is_hex(byte: u8) -> bool {
    byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)
}

/// An inline locator is `#task-N`; a file locator `N.task_slug.md` (N without leading zero).
fn locator_fits(locator: &Locator) -> bool {
    match locator.kind {
        LocatorKind::Inline => locator
            .value
            .strip_prefix("#task-")
            .is_some_and(is_positive_number),
        LocatorKind::File => file_name_fits(&locator.value),
    }
}

/// `^[1-9][0-9]*\.task_[a-z0-9_]+\.md$`.
fn file_name_fits(name: &str) -> bool {
    let Some((number, rest)) = name.split_once('.') else {
        return false;
    };
    let slug = rest
        .strip_prefix("task_")
        .and_then(|rest| rest.strip_suffix(".md"));
    is_positive_number(number)
        && slug.is_some_and(|slug| {
            !slug.is_empty() && slug.bytes().all(|b| is_lower_alnum(b) || b == b'_')
        })
}

/// `[1-9][0-9]*`.
fn is_positive_number(text: &str) -> bool {
    text.bytes()
        .next()
        .is_some_and(|b| (b'1'..=b'9').contains(&b))
        && text.bytes().all(|b| b.is_ascii_digit())
}

fn gate_fits(gate: &Gate) -> bool {
    within(&gate.command, 500) && optional_within(&gate.evidence, 500)
}

fn outcome_fits(outcome: &Outcome) -> bool {
    let items_fit = |items: &Option<Vec<String>>| {
        items
            .as_ref()
            .is_none_or(|items| items.iter().all(|item| within(item, 300)))
    };
    items_fit(&outcome.tried)
        && items_fit(&outcome.failed)
        && optional_within(&outcome.worked, 500)
        && optional_within(&outcome.notes, 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_counted_outside_strings_only() {
        let tokens = |nulls, objects| Some(Tokens { nulls, objects });
        let text = r#"{"a": null, "b": "null { \" null", "c": [null, {}]}"#;
        assert_eq!(tokens_in(text.as_bytes()), tokens(2, 2));
        let text = r#"{"a": "ends with a backslash \\", "b": null, "t": true}"#;
        assert_eq!(tokens_in(text.as_bytes()), tokens(1, 1));
        assert_eq!(tokens_in(br#"{"a": 3.0}"#), None);
        assert_eq!(tokens_in(br#"{"a": 3e0}"#), None);
        assert_eq!(tokens_in(br#"{"a": "3.0e1", "b": false}"#), tokens(0, 1));
        // A string left open runs to the end; an escape as the last byte too.
        assert_eq!(tokens_in(br#"{"a": "open"#), tokens(0, 1));
        assert_eq!(tokens_in(br#"{"a": "\"#), tokens(0, 1));
    }

    #[test]
    /// `plan` and `name` use `plan::is_plan_name`, held here to the schema's pattern
    /// `^PLAN_[a-z0-9]+(_[a-z0-9]+){1,4}$`.
    fn the_plan_name_pattern_takes_two_to_five_words() {
        for good in ["PLAN_a_b", "PLAN_a1_b2_c3_d4_e5", "PLAN_bench_t10"] {
            assert!(crate::plan::is_plan_name(good), "{good}");
        }
        for bad in [
            "PLAN_a",
            "PLAN_a_b_c_d_e_f",
            "PLAN_a__b",
            "PLAN_A_b",
            "PLAN_a_b_",
            "plan_a_b",
            "PLAN_a_b\n",
            "PLAN_a-b_c",
        ] {
            assert!(!crate::plan::is_plan_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn file_locators_follow_the_pattern() {
        for good in ["1.task_a.md", "10.task_set_up_ci.md", "3.task_9.md"] {
            assert!(file_name_fits(good), "{good}");
        }
        for bad in [
            "01.task_a.md",
            "1.task_.md",
            "1.task_A.md",
            "1.task_a.md.md",
            "1.task_a.mdx",
            "1.Task_a.md",
            "x.task_a.md",
            "1task_a.md",
        ] {
            assert!(!file_name_fits(bad), "{bad}");
        }
    }

    /// A valid canonical v5 state of 6 tasks with a blocker-free, gated history.
    fn canonical() -> String {
        let state = crate::synth::SynthPlan::new("PLAN_typed_check", 6)
            .completed(3)
            .state();
        String::from_utf8(crate::store::json_file_bytes(&state)).unwrap()
    }

    #[test]
    fn a_canonical_state_is_accepted_and_fits_as_written() {
        let text = canonical();
        let (generation, state) = super::state(text.as_bytes()).expect("accepted");
        assert_eq!(generation, Generation::V5);
        assert!(state_fits(generation, &state));
        assert_eq!(crate::store::json_file_bytes(&state), text.as_bytes());
    }

    /// What typing alone lets through and the schema refuses, each edit of the canonical text.
    #[test]
    fn what_typing_alone_would_accept_is_left_to_the_schema() {
        let text = canonical();
        let gate_start = text.find("\"gates\": [\n        {").expect("a gate") + 19;
        let gate_end = gate_start + text[gate_start..].find('}').unwrap() + 1;
        let evidence_start = text.find("\"evidence\": \"").unwrap() + 12;
        let evidence_end = evidence_start + 1 + text[evidence_start + 1..].find('"').unwrap() + 1;
        let edits: Vec<(&str, String)> = vec![
            (
                "a null where the schema wants a string",
                format!("{}null{}", &text[..evidence_start], &text[evidence_end..]),
            ),
            ("a null updated_by", {
                let start = text.find("\"updated_by\": {").unwrap() + 14;
                let end = start + text[start..].find('}').unwrap() + 1;
                format!("{}null{}", &text[..start], &text[end..])
            }),
            (
                "a struct written as an array",
                format!(
                    "{}[\"cargo test\", true, 0, \"2026-06-09T16:42:10Z\", \"1 passed\"]{}",
                    &text[..gate_start - 1],
                    &text[gate_end..]
                ),
            ),
            ("a float id", text.replacen("\"id\": 1,", "\"id\": 1.0,", 1)),
            (
                "a duplicate key",
                text.replacen("\"passes\": true", "\"passes\": false, \"passes\": true", 1),
            ),
            ("a byte order mark", format!("\u{feff}{text}")),
            ("text after the document", format!("{text}{{}}")),
            (
                "a v1 file field",
                text.replacen("\"id\": 1,", "\"id\": 1, \"file\": \"1.task_a.md\",", 1),
            ),
            ("no tasks", {
                let start = text.find("\"tasks\": [").unwrap() + 10;
                let end = text.rfind(']').unwrap();
                format!("{}{}", &text[..start], &text[end..])
            }),
        ];
        for (what, edited) in &edits {
            assert_ne!(edited, &text, "{what}: the edit changed nothing");
            assert!(state(edited.as_bytes()).is_none(), "{what} was accepted");
        }
        // The first four pass serde's typing: only the checks here stop them.
        for (what, edited) in &edits[..4] {
            assert!(
                serde_json::from_str::<State>(edited).is_ok(),
                "{what}: typing alone refuses it, so this edit tests nothing of the checks"
            );
        }
    }

    #[test]
    fn max_length_counts_characters_not_bytes() {
        assert!(within(&"é".repeat(100), 100));
        assert!(!within(&"é".repeat(101), 100));
    }
}
