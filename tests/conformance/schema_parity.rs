//! Schema parity: the schemas dwp embeds accept and reject exactly what the public reference
//! schemas accept and reject.
//!
//! The corpus is built from valid base documents (synthetic plans of every generation) and a
//! table of named one-rule mutations (JSON pointer + new value, or removal). Every case carries
//! the verdict it was written to have, so a mutation that misses its target is caught as well as
//! a disagreement. Each case is judged three ways: by the reference schema, by the embedded
//! schema compiled with `dwp::plan::schemas::compile`, and by `dwp::plan::schemas::validate` (the path dwp
//! itself takes). The tests are grouped by the rule their cases exercise.
//!
//! The reference schemas are the public ones, pinned byte for byte in `tests/data/public-schemas/`
//! (tests/data/README.md says where they come from), so every clone checks the same thing.

mod record;

use dwp::plan::model::{DocKind, Generation, PlanFormat};
use dwp::synth::SynthPlan;
use jsonschema::Validator;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Corpus model
// ---------------------------------------------------------------------------------------------

/// The rule a case exercises; each rule has a test of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Rule {
    BaseDocument,
    Enum,
    Pattern,
    MaxLength,
    ArrayBounds,
    Minimum,
    Required,
    ClosedObject,
    OpenObject,
    LocatorKind,
    Nullable,
    SchemaUrl,
    Type,
    FormatAnnotation,
}

const ALL_RULES: [Rule; 14] = [
    Rule::BaseDocument,
    Rule::Enum,
    Rule::Pattern,
    Rule::MaxLength,
    Rule::ArrayBounds,
    Rule::Minimum,
    Rule::Required,
    Rule::ClosedObject,
    Rule::OpenObject,
    Rule::LocatorKind,
    Rule::Nullable,
    Rule::SchemaUrl,
    Rule::Type,
    Rule::FormatAnnotation,
];

/// The verdict a mutation is written to have in one generation line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Accept,
    Reject,
    /// Not applicable to this generation (e.g. a v1 `file` in a v2 document): no case.
    Skip,
}

use Expect::{Accept, Reject, Skip};

/// One edit of a document, addressed by JSON pointer.
#[derive(Debug, Clone)]
enum Op {
    /// Replace the value at the pointer, or add it as a new key / appended array item.
    Set(String, Value),
    /// Remove the key or array item at the pointer; it must exist.
    Remove(String),
}

fn set(pointer: &str, value: impl Into<Value>) -> Op {
    Op::Set(pointer.to_owned(), value.into())
}

fn del(pointer: &str) -> Op {
    Op::Remove(pointer.to_owned())
}

/// A named mutation and its verdict in v1 and in the v2 line (v2 and v5, which is a snapshot).
struct Mutation {
    rule: Rule,
    kind: DocKind,
    name: String,
    v1: Expect,
    v2: Expect,
    ops: Vec<Op>,
}

/// One corpus document.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    rule: Rule,
    kind: DocKind,
    generation: Generation,
    doc: Value,
    valid: bool,
}

/// A builder for a list of mutations of one document kind.
struct Table {
    kind: DocKind,
    rule: Rule,
    list: Vec<Mutation>,
}

impl Table {
    fn new(kind: DocKind) -> Table {
        Table {
            kind,
            rule: Rule::BaseDocument,
            list: Vec::new(),
        }
    }

    fn rule(&mut self, rule: Rule) {
        self.rule = rule;
    }

    /// One mutation per field: remove `{parent}/{field}` (after the `setup` edits), named
    /// `{label}.{field}`.
    fn drops(
        &mut self,
        label: &str,
        parent: &str,
        fields: &[&str],
        v1: Expect,
        v2: Expect,
        setup: &[Op],
    ) {
        for field in fields {
            let mut ops = setup.to_vec();
            ops.push(del(&format!("{parent}/{field}")));
            self.add(&format!("{label}.{field}"), v1, v2, ops);
        }
    }

    fn add(&mut self, name: &str, v1: Expect, v2: Expect, ops: Vec<Op>) {
        self.list.push(Mutation {
            rule: self.rule,
            kind: self.kind,
            name: name.to_owned(),
            v1,
            v2,
            ops,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Base documents
// ---------------------------------------------------------------------------------------------

const PLAN: &str = "PLAN_schema_parity";

fn synth(generation: Generation, format: PlanFormat) -> SynthPlan {
    // Two tasks, the first completed: a task with gates, outcome and commit, a pending task,
    // a checkpoint object, and (v2/v5) a null promotion and an approval.
    SynthPlan::new(PLAN, 2)
        .completed(1)
        .format(format)
        .generation(generation)
}

fn base_manifest(generation: Generation) -> Value {
    serde_json::to_value(synth(generation, PlanFormat::Full).manifest()).expect("manifest")
}

fn base_state(generation: Generation, format: PlanFormat) -> Value {
    let mut state =
        serde_json::to_value(synth(generation, format).state()).expect("state serializes");
    // Fill every optional outcome field so that its limits can be mutated in place.
    let outcome = state
        .pointer_mut("/tasks/0/outcome")
        .and_then(Value::as_object_mut)
        .expect("the completed synthetic task has an outcome");
    outcome.insert("tried".into(), json!(["a first approach"]));
    outcome.insert("failed".into(), json!(["a first approach: too slow"]));
    outcome.insert("notes".into(), json!("see the bench"));
    state
}

fn base(kind: DocKind, generation: Generation) -> Value {
    match kind {
        DocKind::Manifest => base_manifest(generation),
        DocKind::State => base_state(generation, PlanFormat::Full),
    }
}

fn a(n: usize) -> Value {
    Value::String("a".repeat(n))
}

fn repeat(text: &str, n: usize) -> Value {
    Value::String(text.repeat(n))
}

fn strings(count: usize) -> Value {
    Value::Array((0..count).map(|i| json!(format!("tag{i}"))).collect())
}

fn blocker() -> Value {
    json!({
        "task": 2,
        "reason": "waiting on a review",
        "since": "2026-06-09T15:00:00Z",
        "needs": "a reviewer"
    })
}

fn promotion(phase: &str) -> Value {
    json!({"from": "lite", "to": "full", "phase": phase})
}

// ---------------------------------------------------------------------------------------------
// Mutation tables
// ---------------------------------------------------------------------------------------------

/// Rows of a mutation table: `name: v1 verdict / v2-and-v5 verdict => [ops];`, all under `rule`.
/// (A macro so that each row stays one readable line.)
macro_rules! cases {
    ($table:ident, $rule:expr; $($name:literal: $v1:ident / $v2:ident => [$($op:expr),+ $(,)?];)+) => {
        $table.rule($rule);
        $($table.add($name, $v1, $v2, vec![$($op),+]);)+
    };
}

/// Rows of required/optional field removals, all under [`Rule::Required`]:
/// `label at parent [after [setup ops]]: [fields] => v1 verdict / v2-and-v5 verdict;`
/// makes one case `label.field` per field, removing `parent/field`.
macro_rules! drops {
    ($table:ident; $($label:literal at $parent:literal $(after [$($setup:expr),+])?:
        [$($field:literal),+] => $v1:ident / $v2:ident;)+) => {
        $table.rule(Rule::Required);
        $($table.drops($label, $parent, &[$($field),+], $v1, $v2, &[$($($setup),+)?]);)+
    };
}

fn manifest_mutations() -> Vec<Mutation> {
    let mut t = Table::new(DocKind::Manifest);

    cases! { t, Rule::Enum;
        "archetype.orchestrator-hub": Accept / Accept => [set("/archetype", "orchestrator-hub")];
        "archetype.agent-workspace": Accept / Accept => [set("/archetype", "agent-workspace")];
        "archetype.capitalized": Reject / Reject => [set("/archetype", "Individual")];
        "archetype.unknown": Reject / Reject => [set("/archetype", "solo")];
        "archetype.null": Reject / Reject => [set("/archetype", Value::Null)];
        "rigor.micro": Accept / Accept => [set("/rigor", "micro")];
        "rigor.deep": Accept / Accept => [set("/rigor", "deep")];
        "rigor.unknown": Reject / Reject => [set("/rigor", "extreme")];
        // v1 has no plan_format at all: its closed object refuses the key.
        "plan_format.lite": Reject / Accept => [set("/plan_format", "lite")];
        "plan_format.unknown": Reject / Reject => [set("/plan_format", "mini")];
        "plan_format.uppercase": Reject / Reject => [set("/plan_format", "FULL")];
    }

    cases! { t, Rule::Pattern;
        "name.two_words": Accept / Accept => [set("/name", "PLAN_a_b")];
        "name.five_words": Accept / Accept => [set("/name", "PLAN_a_b_c_d_e")];
        "name.digits": Accept / Accept => [set("/name", "PLAN_v2_1")];
        "name.six_words": Reject / Reject => [set("/name", "PLAN_a_b_c_d_e_f")];
        "name.one_word": Reject / Reject => [set("/name", "PLAN_single")];
        "name.uppercase": Reject / Reject => [set("/name", "PLAN_Schema_parity")];
        "name.lowercase_prefix": Reject / Reject => [set("/name", "plan_schema_parity")];
        "name.hyphen": Reject / Reject => [set("/name", "PLAN_schema-parity")];
        "name.double_underscore": Reject / Reject => [set("/name", "PLAN_schema__parity")];
        "name.non_ascii_letter": Reject / Reject => [set("/name", "PLAN_sch\u{e9}ma_parity")];
        "name.unicode_digit": Reject / Reject => [set("/name", "PLAN_v\u{0662}_x")];
        "name.trailing_newline": Reject / Reject => [set("/name", "PLAN_schema_parity\n")];
        "spec_version.multi_digit": Accept / Accept => [set("/spec_version", "10.20.30")];
        "spec_version.two_parts": Reject / Reject => [set("/spec_version", "5.0")];
        "spec_version.prerelease": Reject / Reject => [set("/spec_version", "5.0.0-rc1")];
        "spec_version.v_prefix": Reject / Reject => [set("/spec_version", "v5.0.0")];
        "spec_version.leading_space": Reject / Reject => [set("/spec_version", " 5.0.0")];
        "spec_version.trailing_newline": Reject / Reject => [set("/spec_version", "5.0.0\n")];
        // `\d` is ASCII in ECMA-262 (what JSON Schema patterns are): Arabic-Indic and
        // full-width digits are not digits.
        "spec_version.arabic_indic_digits": Reject / Reject => [set("/spec_version", "\u{0661}.\u{0662}.\u{0663}")];
        "spec_version.fullwidth_digits": Reject / Reject => [set("/spec_version", "\u{ff15}.\u{ff10}.\u{ff10}")];
    }

    cases! { t, Rule::MaxLength;
        "title.200": Accept / Accept => [set("/title", a(200))];
        "title.201": Reject / Reject => [set("/title", a(201))];
        // maxLength counts code points, not bytes nor UTF-16 units.
        "title.200_two_byte_chars": Accept / Accept => [set("/title", repeat("\u{e9}", 200))];
        "title.200_astral_chars": Accept / Accept => [set("/title", repeat("\u{1f600}", 200))];
        "title.201_astral_chars": Reject / Reject => [set("/title", repeat("\u{1f600}", 201))];
        // v2 dropped the limits of tags and created_by.
        "tags.item_50": Accept / Accept => [set("/tags/0", a(50))];
        "tags.item_51": Reject / Accept => [set("/tags/0", a(51))];
        "created_by.agent_100": Accept / Accept => [set("/created_by/agent", a(100))];
        "created_by.agent_101": Reject / Accept => [set("/created_by/agent", a(101))];
        "created_by.model_100": Accept / Accept => [set("/created_by/model", a(100))];
        "created_by.model_101": Reject / Accept => [set("/created_by/model", a(101))];
    }

    cases! { t, Rule::ArrayBounds;
        "tags.empty": Accept / Accept => [set("/tags", json!([]))];
        "tags.20_items": Accept / Accept => [set("/tags", strings(20))];
        "tags.21_items": Reject / Accept => [set("/tags", strings(21))];
    }

    cases! { t, Rule::Minimum;
        "task_count.1": Accept / Accept => [set("/task_count", 1)];
        "task_count.0": Reject / Reject => [set("/task_count", 0)];
        "task_count.negative": Reject / Reject => [set("/task_count", -1)];
    }

    cases! { t, Rule::Type;
        "task_count.integral_float": Accept / Accept => [set("/task_count", 2.0)];
        "task_count.fraction": Reject / Reject => [set("/task_count", 2.5)];
        "task_count.string": Reject / Reject => [set("/task_count", "2")];
        "task_count.boolean": Reject / Reject => [set("/task_count", true)];
        "task_count.null": Reject / Reject => [set("/task_count", Value::Null)];
        "title.number": Reject / Reject => [set("/title", 42)];
        "tags.string": Reject / Reject => [set("/tags", "synthetic")];
        "tags.number_item": Reject / Reject => [set("/tags/0", 1)];
        "spec_version.number": Reject / Reject => [set("/spec_version", 5)];
        "created_at.number": Reject / Reject => [set("/created_at", 0)];
        "created_by.string": Reject / Reject => [set("/created_by", "dwp")];
        "parent_plan.string": Accept / Accept => [set("/parent_plan", "repo:PLAN_hub_plan")];
        "parent_plan.number": Reject / Reject => [set("/parent_plan", 5)];
        "parent_plan.boolean": Reject / Reject => [set("/parent_plan", false)];
        "document.array": Reject / Reject => [set("", json!([]))];
    }

    cases! { t, Rule::FormatAnnotation;
        "created_at.not_a_date": Accept / Accept => [set("/created_at", "yesterday")];
    }

    drops! { t;
        "drop" at "": ["schema", "spec_version", "name", "archetype", "rigor"] => Reject / Reject;
        "drop" at "": ["created_at", "task_count"] => Reject / Reject;
        "drop" at "": ["plan_format"] => Skip / Reject;
        "drop_optional" at "": ["title", "created_by", "tags", "parent_plan"] => Accept / Accept;
    }

    cases! { t, Rule::ClosedObject;
        "unknown_key.top": Reject / Reject => [set("/extra", true)];
        "unknown_key.top_case_variant": Reject / Reject => [set("/Name", PLAN)];
        "unknown_key.created_by": Reject / Accept => [set("/created_by/version", "1.0")];
    }

    cases! { t, Rule::OpenObject;
        "created_by.empty": Accept / Accept => [set("/created_by", json!({}))];
        "created_by.agent_number": Reject / Accept => [set("/created_by/agent", 5)];
        "created_by.nested": Reject / Accept => [set("/created_by", json!({"tool": {"name": "dwp", "version": 1}}))];
    }

    t.list
}

fn state_mutations() -> Vec<Mutation> {
    let mut t = Table::new(DocKind::State);

    cases! { t, Rule::Enum;
        "status.pending": Accept / Accept => [set("/status", "pending")];
        "status.completed": Accept / Accept => [set("/status", "completed")];
        "status.blocked": Accept / Accept => [set("/status", "blocked")];
        // `skipped` is a task status, not a plan status.
        "status.skipped": Reject / Reject => [set("/status", "skipped")];
        "status.unknown": Reject / Reject => [set("/status", "done")];
        "task.status.in_progress": Accept / Accept => [set("/tasks/1/status", "in_progress")];
        "task.status.completed": Accept / Accept => [set("/tasks/1/status", "completed")];
        "task.status.blocked": Accept / Accept => [set("/tasks/1/status", "blocked")];
        "task.status.skipped": Accept / Accept => [set("/tasks/1/status", "skipped")];
        "task.status.unknown": Reject / Reject => [set("/tasks/1/status", "cancelled")];
        "task.status.capitalized": Reject / Reject => [set("/tasks/1/status", "Pending")];
        // v1 has none of format, materialization, approval, promotion: its closed object
        // refuses the keys whatever their value.
        "format.lite": Reject / Accept => [set("/format", "lite")];
        "format.unknown": Reject / Reject => [set("/format", "mini")];
        "materialization.materializing": Reject / Accept => [set("/materialization", "materializing")];
        "materialization.promoting": Reject / Accept => [set("/materialization", "promoting")];
        "materialization.unknown": Reject / Reject => [set("/materialization", "done")];
        "approval.pending": Reject / Accept => [set("/approval", "pending")];
        "approval.pre_approved": Reject / Accept => [set("/approval", "pre_approved")];
        "approval.unknown": Reject / Reject => [set("/approval", "rejected")];
        "promotion.phase.intent": Reject / Accept => [set("/promotion", promotion("intent"))];
        "promotion.phase.tasks_written": Reject / Accept => [set("/promotion", promotion("tasks_written"))];
        "promotion.phase.switched": Reject / Accept => [set("/promotion", promotion("switched"))];
        "promotion.phase.unknown": Reject / Reject => [set("/promotion", promotion("done"))];
        "promotion.from.full": Skip / Reject => [set("/promotion", promotion("intent")), set("/promotion/from", "full")];
        "promotion.to.lite": Skip / Reject => [set("/promotion", promotion("intent")), set("/promotion/to", "lite")];
        "locator.kind.inline": Skip / Accept => [set("/tasks/0/locator", json!({"kind": "inline", "value": "#task-1"}))];
        "locator.kind.unknown": Skip / Reject => [set("/tasks/0/locator/kind", "anchor")];
    }

    cases! { t, Rule::Pattern;
        "plan.two_words": Accept / Accept => [set("/plan", "PLAN_a_b")];
        "plan.five_words": Accept / Accept => [set("/plan", "PLAN_a_b_c_d_e")];
        "plan.six_words": Reject / Reject => [set("/plan", "PLAN_a_b_c_d_e_f")];
        "plan.one_word": Reject / Reject => [set("/plan", "PLAN_x")];
        "plan.uppercase": Reject / Reject => [set("/plan", "PLAN_Schema_parity")];
        "plan.unicode_digit": Reject / Reject => [set("/plan", "PLAN_v\u{0662}_x")];
        // v1 `file`: `^\d+\.task_[a-z0-9_]+\.md$`, so 0 and leading zeros pass.
        "file.zero_id": Accept / Skip => [set("/tasks/0/file", "0.task_x.md")];
        "file.leading_zero": Accept / Skip => [set("/tasks/0/file", "01.task_x.md")];
        "file.multi_word": Accept / Skip => [set("/tasks/0/file", "12.task_a_b_3.md")];
        "file.arabic_indic_digit": Reject / Skip => [set("/tasks/0/file", "\u{0661}.task_x.md")];
        "file.uppercase": Reject / Skip => [set("/tasks/0/file", "1.task_X.md")];
        "file.wrong_extension": Reject / Skip => [set("/tasks/0/file", "1.task_x.txt")];
        "file.no_number": Reject / Skip => [set("/tasks/0/file", "task_x.md")];
        "file.empty_slug": Reject / Skip => [set("/tasks/0/file", "1.task_.md")];
        "file.subdirectory": Reject / Skip => [set("/tasks/0/file", "../1.task_x.md")];
        // v2 locator values: `[1-9][0-9]*`, so neither 0 nor leading zeros.
        "locator.file.multi_digit": Skip / Accept => [set("/tasks/0/locator/value", "12.task_a_b_3.md")];
        "locator.file.zero_id": Skip / Reject => [set("/tasks/0/locator/value", "0.task_x.md")];
        "locator.file.leading_zero": Skip / Reject => [set("/tasks/0/locator/value", "01.task_x.md")];
        "locator.file.arabic_indic_digit": Skip / Reject => [set("/tasks/0/locator/value", "\u{0661}.task_x.md")];
        "locator.file.trailing_newline": Skip / Reject => [set("/tasks/0/locator/value", "1.task_synthetic_1.md\n")];
        "locator.file.subdirectory": Skip / Reject => [set("/tasks/0/locator/value", "tasks/1.task_x.md")];
        "locator.inline.multi_digit": Skip / Accept => [set("/tasks/0/locator", json!({"kind": "inline", "value": "#task-12"}))];
        "locator.inline.zero": Skip / Reject => [set("/tasks/0/locator", json!({"kind": "inline", "value": "#task-0"}))];
        "locator.inline.leading_zero": Skip / Reject => [set("/tasks/0/locator", json!({"kind": "inline", "value": "#task-01"}))];
        "locator.inline.capitalized": Skip / Reject => [set("/tasks/0/locator", json!({"kind": "inline", "value": "#Task-1"}))];
        "locator.inline.no_hash": Skip / Reject => [set("/tasks/0/locator", json!({"kind": "inline", "value": "task-1"}))];
        "locator.inline.arabic_indic_digit": Skip / Reject => [set("/tasks/0/locator", json!({"kind": "inline", "value": "#task-\u{0661}"}))];
        "commit.7_hex": Accept / Accept => [set("/tasks/0/commit", "abcdef0")];
        "commit.40_hex": Accept / Accept => [set("/tasks/0/commit", "0123456789abcdef0123456789abcdef01234567")];
        "commit.6_hex": Reject / Reject => [set("/tasks/0/commit", "abcdef")];
        "commit.41_hex": Reject / Reject => [set("/tasks/0/commit", "0123456789abcdef0123456789abcdef012345678")];
        "commit.uppercase": Reject / Reject => [set("/tasks/0/commit", "ABCDEF0")];
        "commit.non_hex": Reject / Reject => [set("/tasks/0/commit", "g123456")];
    }

    cases! { t, Rule::LocatorKind;
        "locator.inline_kind_with_file_value": Skip / Reject => [set("/tasks/0/locator/kind", "inline")];
        "locator.file_kind_with_inline_value": Skip / Reject => [set("/tasks/0/locator/value", "#task-1")];
        "locator.inline_kind_with_inline_value": Skip / Accept => [set("/tasks/0/locator", json!({"kind": "inline", "value": "#task-1"}))];
        "locator.mixed_kinds_across_tasks": Skip / Accept => [set("/tasks/1/locator", json!({"kind": "inline", "value": "#task-2"}))];
    }

    cases! { t, Rule::MaxLength;
        "updated_by.agent_100": Accept / Accept => [set("/updated_by/agent", a(100))];
        "updated_by.agent_101": Reject / Reject => [set("/updated_by/agent", a(101))];
        "updated_by.model_100": Accept / Accept => [set("/updated_by/model", a(100))];
        "updated_by.model_101": Reject / Reject => [set("/updated_by/model", a(101))];
        // The task title lost its limit in v2.
        "task.title_200": Accept / Accept => [set("/tasks/0/title", a(200))];
        "task.title_201": Reject / Accept => [set("/tasks/0/title", a(201))];
        "gate.command_500": Accept / Accept => [set("/tasks/0/gates/0/command", a(500))];
        "gate.command_501": Reject / Reject => [set("/tasks/0/gates/0/command", a(501))];
        "gate.evidence_500": Accept / Accept => [set("/tasks/0/gates/0/evidence", a(500))];
        "gate.evidence_501": Reject / Reject => [set("/tasks/0/gates/0/evidence", a(501))];
        "gate.evidence_500_astral": Accept / Accept => [set("/tasks/0/gates/0/evidence", repeat("\u{1f600}", 500))];
        "checkpoint.step_200": Accept / Accept => [set("/checkpoint/step", a(200))];
        "checkpoint.step_201": Reject / Reject => [set("/checkpoint/step", a(201))];
        "checkpoint.note_500": Accept / Accept => [set("/checkpoint/note", a(500))];
        "checkpoint.note_501": Reject / Reject => [set("/checkpoint/note", a(501))];
        "blocked.reason_1000": Accept / Accept => [set("/blocked", blocker()), set("/blocked/reason", a(1000))];
        "blocked.reason_1001": Reject / Reject => [set("/blocked", blocker()), set("/blocked/reason", a(1001))];
        "blocked.needs_500": Accept / Accept => [set("/blocked", blocker()), set("/blocked/needs", a(500))];
        "blocked.needs_501": Reject / Reject => [set("/blocked", blocker()), set("/blocked/needs", a(501))];
        "outcome.tried_item_300": Accept / Accept => [set("/tasks/0/outcome/tried/0", a(300))];
        "outcome.tried_item_301": Reject / Reject => [set("/tasks/0/outcome/tried/0", a(301))];
        "outcome.failed_item_300": Accept / Accept => [set("/tasks/0/outcome/failed/0", a(300))];
        "outcome.failed_item_301": Reject / Reject => [set("/tasks/0/outcome/failed/0", a(301))];
        "outcome.second_failed_item_301": Reject / Reject => [set("/tasks/0/outcome/failed/1", a(301))];
        "outcome.worked_500": Accept / Accept => [set("/tasks/0/outcome/worked", a(500))];
        "outcome.worked_501": Reject / Reject => [set("/tasks/0/outcome/worked", a(501))];
        "outcome.notes_1000": Accept / Accept => [set("/tasks/0/outcome/notes", a(1000))];
        "outcome.notes_1001": Reject / Reject => [set("/tasks/0/outcome/notes", a(1001))];
    }

    cases! { t, Rule::ArrayBounds;
        "tasks.empty": Reject / Reject => [set("/tasks", json!([]))];
        "gates.empty": Accept / Accept => [set("/tasks/0/gates", json!([]))];
        "outcome.tried_empty": Accept / Accept => [set("/tasks/0/outcome/tried", json!([]))];
    }

    cases! { t, Rule::Minimum;
        "completed_count.0": Accept / Accept => [set("/completed_count", 0)];
        "completed_count.negative": Reject / Reject => [set("/completed_count", -1)];
        "task_count.1": Accept / Accept => [set("/task_count", 1)];
        "task_count.0": Reject / Reject => [set("/task_count", 0)];
        "task.id.0": Reject / Reject => [set("/tasks/0/id", 0)];
        "task.id.negative": Reject / Reject => [set("/tasks/0/id", -1)];
        "checkpoint.task.2": Accept / Accept => [set("/checkpoint/task", 2)];
        "checkpoint.task.0": Reject / Reject => [set("/checkpoint/task", 0)];
        "blocked.task.1": Accept / Accept => [set("/blocked", blocker()), set("/blocked/task", 1)];
        "blocked.task.0": Reject / Reject => [set("/blocked", blocker()), set("/blocked/task", 0)];
        // exit_code has no minimum.
        "gate.exit_code.negative": Accept / Accept => [set("/tasks/0/gates/0/exit_code", -1)];
    }

    cases! { t, Rule::Type;
        "task.id.integral_float": Accept / Accept => [set("/tasks/0/id", 1.0)];
        "task.id.fraction": Reject / Reject => [set("/tasks/0/id", 1.5)];
        "task.id.string": Reject / Reject => [set("/tasks/0/id", "1")];
        "task.id.boolean": Reject / Reject => [set("/tasks/0/id", true)];
        "completed_count.integral_float": Accept / Accept => [set("/completed_count", 1.0)];
        "completed_count.string": Reject / Reject => [set("/completed_count", "1")];
        "task_count.boolean": Reject / Reject => [set("/task_count", false)];
        "checkpoint.task.integral_float": Accept / Accept => [set("/checkpoint/task", 2.0)];
        "checkpoint.task.string": Reject / Reject => [set("/checkpoint/task", "1")];
        "gate.exit_code.integral_float": Accept / Accept => [set("/tasks/0/gates/0/exit_code", 0.0)];
        "gate.exit_code.fraction": Reject / Reject => [set("/tasks/0/gates/0/exit_code", 0.5)];
        "gate.exit_code.string": Reject / Reject => [set("/tasks/0/gates/0/exit_code", "0")];
        "gate.exit_code.boolean": Reject / Reject => [set("/tasks/0/gates/0/exit_code", false)];
        "gate.exit_code.null": Reject / Reject => [set("/tasks/0/gates/0/exit_code", Value::Null)];
        // JSON Schema integers are unbounded; the typed model holds 64 bits (see UNREPRESENTABLE).
        "gate.exit_code.beyond_i64": Accept / Accept => [set("/tasks/0/gates/0/exit_code", 1e19)];
        "completed_count.beyond_u64": Accept / Accept => [set("/completed_count", 1e20)];
        "gate.passes.false": Accept / Accept => [set("/tasks/0/gates/0/passes", false)];
        "gate.passes.string": Reject / Reject => [set("/tasks/0/gates/0/passes", "true")];
        "gate.passes.number": Reject / Reject => [set("/tasks/0/gates/0/passes", 1)];
        "gate.passes.null": Reject / Reject => [set("/tasks/0/gates/0/passes", Value::Null)];
        "task.title.number": Reject / Reject => [set("/tasks/0/title", 1)];
        "tasks.object": Reject / Reject => [set("/tasks", json!({"1": {}}))];
        "gates.object": Reject / Reject => [set("/tasks/0/gates", json!({}))];
        "gates.null": Reject / Reject => [set("/tasks/0/gates", Value::Null)];
        "outcome.null": Reject / Reject => [set("/tasks/0/outcome", Value::Null)];
        "outcome.tried_string": Reject / Reject => [set("/tasks/0/outcome/tried", "everything")];
        "outcome.tried_number_item": Reject / Reject => [set("/tasks/0/outcome/tried/0", 3)];
        "updated_by.null": Reject / Reject => [set("/updated_by", Value::Null)];
        "updated_at.number": Reject / Reject => [set("/updated_at", 0)];
        "locator.string": Skip / Reject => [set("/tasks/0/locator", "1.task_synthetic_1.md")];
        "document.string": Reject / Reject => [set("", "state")];
    }

    cases! { t, Rule::FormatAnnotation;
        "updated_at.not_a_date": Accept / Accept => [set("/updated_at", "yesterday")];
        "gate.last_run.not_a_date": Accept / Accept => [set("/tasks/0/gates/0/last_run", "2026-13-45")];
        "checkpoint.at.empty": Accept / Accept => [set("/checkpoint/at", "")];
    }

    cases! { t, Rule::Nullable;
        "checkpoint.null": Accept / Accept => [set("/checkpoint", Value::Null)];
        "checkpoint.string": Reject / Reject => [set("/checkpoint", "task 1")];
        "checkpoint.array": Reject / Reject => [set("/checkpoint", json!([]))];
        "blocked.object": Accept / Accept => [set("/blocked", blocker())];
        "blocked.string": Reject / Reject => [set("/blocked", "none")];
        "blocked.false": Reject / Reject => [set("/blocked", false)];
        "promotion.object": Reject / Accept => [set("/promotion", promotion("intent"))];
        // v1 has no promotion: even null is an unknown key there.
        "promotion.null": Reject / Skip => [set("/promotion", Value::Null)];
        "promotion.string": Skip / Reject => [set("/promotion", "none")];
    }

    drops! { t;
        "drop" at "": ["schema", "plan", "updated_at", "status"] => Reject / Reject;
        "drop" at "": ["completed_count", "task_count", "tasks"] => Reject / Reject;
        "drop" at "": ["format", "materialization"] => Skip / Reject;
        "drop.task" at "/tasks/0": ["id", "title", "status"] => Reject / Reject;
        "drop.task" at "/tasks/0": ["file"] => Reject / Skip;
        "drop.task" at "/tasks/0": ["locator"] => Skip / Reject;
        // gates became required in v2.
        "drop.task" at "/tasks/0": ["gates"] => Accept / Reject;
        "drop.locator" at "/tasks/0/locator": ["kind", "value"] => Skip / Reject;
        "drop.gate" at "/tasks/0/gates/0": ["command", "passes", "last_run"] => Reject / Reject;
        "drop.checkpoint" at "/checkpoint": ["task", "at"] => Reject / Reject;
        "drop.blocked" at "/blocked" after [set("/blocked", blocker())]:
            ["task", "reason", "since"] => Reject / Reject;
        "drop.promotion" at "/promotion" after [set("/promotion", promotion("intent"))]:
            ["from", "to", "phase"] => Skip / Reject;
        "drop_optional" at "": ["updated_by", "checkpoint", "blocked"] => Accept / Accept;
        "drop_optional" at "": ["approval", "promotion"] => Skip / Accept;
        "drop_optional.task" at "/tasks/0": ["started_at", "completed_at", "commit", "outcome"] => Accept / Accept;
        "drop_optional.gate" at "/tasks/0/gates/0": ["exit_code", "evidence"] => Accept / Accept;
        "drop_optional.checkpoint" at "/checkpoint": ["step", "note"] => Accept / Accept;
        "drop_optional.blocked" at "/blocked" after [set("/blocked", blocker())]: ["needs"] => Accept / Accept;
        "drop_optional.updated_by" at "/updated_by": ["agent", "model"] => Accept / Accept;
        "drop_optional.outcome" at "/tasks/0/outcome": ["tried", "failed", "worked", "notes"] => Accept / Accept;
    }

    cases! { t, Rule::ClosedObject;
        "unknown_key.top": Reject / Reject => [set("/extra", true)];
        "unknown_key.task": Reject / Reject => [set("/tasks/0/extra", true)];
        "unknown_key.second_task": Reject / Reject => [set("/tasks/1/notes", "x")];
        "unknown_key.gate": Reject / Reject => [set("/tasks/0/gates/0/duration_ms", 12)];
        "unknown_key.outcome": Reject / Reject => [set("/tasks/0/outcome/extra", "x")];
        "unknown_key.checkpoint": Reject / Reject => [set("/checkpoint/extra", "x")];
        "unknown_key.blocked": Reject / Reject => [set("/blocked", blocker()), set("/blocked/extra", "x")];
        "unknown_key.promotion": Skip / Reject => [set("/promotion", promotion("intent")), set("/promotion/extra", "x")];
        "unknown_key.locator": Skip / Reject => [set("/tasks/0/locator/extra", "x")];
        "unknown_key.updated_by": Reject / Reject => [set("/updated_by/host", "ci")];
        // Each generation refuses the other's way of naming the task file.
        "unknown_key.v2_locator_in_v1_task": Reject / Skip => [set("/tasks/0/locator", json!({"kind": "file", "value": "1.task_synthetic_1.md"}))];
        "unknown_key.v1_file_in_v2_task": Skip / Reject => [set("/tasks/0/file", "1.task_synthetic_1.md")];
    }

    t.list
}

// ---------------------------------------------------------------------------------------------
// Corpus construction
// ---------------------------------------------------------------------------------------------

fn case_name(kind: DocKind, generation: Generation, name: &str) -> String {
    format!("{}-v{}/{name}", kind.slug(), generation.number())
}

fn apply(doc: &mut Value, op: &Op, case: &str) {
    let (pointer, new_value) = match op {
        Op::Set(pointer, value) => (pointer.as_str(), Some(value.clone())),
        Op::Remove(pointer) => (pointer.as_str(), None),
    };
    if pointer.is_empty() {
        *doc = new_value.unwrap_or_else(|| panic!("{case}: cannot remove the document root"));
        return;
    }
    let (parent, last) = pointer
        .rsplit_once('/')
        .unwrap_or_else(|| panic!("{case}: `{pointer}` is not a JSON pointer"));
    let last = last.replace("~1", "/").replace("~0", "~");
    let target = doc
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("{case}: `{parent}` does not exist in the base document"));
    match (target, new_value) {
        (Value::Object(map), Some(value)) => {
            map.insert(last, value);
        }
        (Value::Object(map), None) => {
            map.remove(&last)
                .unwrap_or_else(|| panic!("{case}: `{pointer}` to remove does not exist"));
        }
        (Value::Array(items), value) => {
            let index: usize = last
                .parse()
                .unwrap_or_else(|_| panic!("{case}: `{last}` is not an array index"));
            match value {
                Some(value) if index < items.len() => items[index] = value,
                Some(value) if index == items.len() => items.push(value),
                None if index < items.len() => {
                    items.remove(index);
                }
                _ => panic!("{case}: index {index} of `{parent}` is out of range"),
            }
        }
        (other, _) => panic!("{case}: `{parent}` is {other}, neither object nor array"),
    }
}

/// The corpus, built once and shared by the tests.
fn corpus() -> &'static [Case] {
    static CORPUS: OnceLock<Vec<Case>> = OnceLock::new();
    CORPUS.get_or_init(build_corpus)
}

/// The whole corpus: valid base documents, the mutation tables applied to every generation they
/// apply to, and the `schema` URL cases, which depend on the generation.
fn build_corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    for generation in Generation::ALL {
        for kind in [DocKind::Manifest, DocKind::State] {
            cases.push(Case {
                name: case_name(kind, generation, "base"),
                rule: Rule::BaseDocument,
                kind,
                generation,
                doc: base(kind, generation),
                valid: true,
            });
        }
        if generation.has_locators() {
            cases.push(Case {
                name: case_name(DocKind::State, generation, "base_lite"),
                rule: Rule::BaseDocument,
                kind: DocKind::State,
                generation,
                doc: base_state(generation, PlanFormat::Lite),
                valid: true,
            });
        }
    }

    for mutation in manifest_mutations().into_iter().chain(state_mutations()) {
        for generation in Generation::ALL {
            let expect = match generation {
                Generation::V1 => mutation.v1,
                Generation::V2 | Generation::V5 => mutation.v2,
            };
            if expect == Skip {
                continue;
            }
            let name = case_name(mutation.kind, generation, &mutation.name);
            let original = base(mutation.kind, generation);
            let mut doc = original.clone();
            for op in &mutation.ops {
                apply(&mut doc, op, &name);
            }
            assert_ne!(
                doc, original,
                "{name}: the mutation leaves the base unchanged"
            );
            cases.push(Case {
                name,
                rule: mutation.rule,
                kind: mutation.kind,
                generation,
                doc,
                valid: expect == Accept,
            });
        }
    }

    for generation in Generation::ALL {
        for kind in [DocKind::Manifest, DocKind::State] {
            let other_kind = match kind {
                DocKind::Manifest => DocKind::State,
                DocKind::State => DocKind::Manifest,
            };
            let own = generation.url(kind);
            let mut urls = vec![
                (
                    format!("schema.{}_url", other_kind.slug()),
                    json!(generation.url(other_kind)),
                ),
                ("schema.trailing_slash".to_owned(), json!(format!("{own}/"))),
                (
                    "schema.http".to_owned(),
                    json!(own.replacen("https://", "http://", 1)),
                ),
                ("schema.uppercase".to_owned(), json!(own.to_uppercase())),
                ("schema.number".to_owned(), json!(generation.number())),
                ("schema.null".to_owned(), Value::Null),
            ];
            for other in Generation::ALL.into_iter().filter(|&g| g != generation) {
                urls.push((
                    format!("schema.v{}_url", other.number()),
                    json!(other.url(kind)),
                ));
            }
            for (name, url) in urls {
                let mut doc = base(kind, generation);
                doc["schema"] = url;
                cases.push(Case {
                    name: case_name(kind, generation, &name),
                    rule: Rule::SchemaUrl,
                    kind,
                    generation,
                    doc,
                    valid: false,
                });
            }
        }
    }
    cases
}

// ---------------------------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------------------------

/// The public schemas the parity is held to, pinned in the repository.
fn reference_dir() -> PathBuf {
    crate::common::repo_root().join("tests/data/public-schemas")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

struct Judges {
    reference: HashMap<(DocKind, Generation), Validator>,
    ours: HashMap<(DocKind, Generation), Validator>,
}

impl Judges {
    fn new(reference_dir: &Path) -> Judges {
        let mut reference = HashMap::new();
        let mut ours = HashMap::new();
        for generation in Generation::ALL {
            for kind in [DocKind::Manifest, DocKind::State] {
                let embedded = dwp::plan::schemas::embedded(kind, generation);
                let reference_schema = read_json(&reference_dir.join(embedded.file_name));
                let our_schema: Value = serde_json::from_str(embedded.text)
                    .unwrap_or_else(|e| panic!("embedded {} is not JSON: {e}", embedded.file_name));
                let compile = |schema: &Value, whose: &str| {
                    dwp::plan::schemas::compile(schema).unwrap_or_else(|e| {
                        panic!("{whose} {} does not compile: {e}", embedded.file_name)
                    })
                };
                reference.insert((kind, generation), compile(&reference_schema, "reference"));
                ours.insert((kind, generation), compile(&our_schema, "our"));
            }
        }
        Judges { reference, ours }
    }

    /// Every way `case` fails: its intended verdict, parity with the reference, and dwp's own
    /// validation path.
    fn failures(&self, case: &Case) -> Vec<String> {
        let key = (case.kind, case.generation);
        let verdict = |valid: bool| if valid { "valid" } else { "invalid" };
        let first_error = |validator: &Validator| match validator.iter_errors(&case.doc).next() {
            None => "no error".to_owned(),
            Some(e) => {
                let message: String = e.to_string().chars().take(120).collect();
                format!("{message} at {}", e.instance_path())
            }
        };
        let reference = self.reference[&key].is_valid(&case.doc);
        let ours = self.ours[&key].is_valid(&case.doc);
        let dwp = dwp::plan::schemas::validate(case.kind, case.generation, &case.doc).is_empty();
        let mut failures = Vec::new();
        if reference != case.valid {
            failures.push(format!(
                "{}: written to be {}, but the reference schema finds it {} ({})",
                case.name,
                verdict(case.valid),
                verdict(reference),
                first_error(&self.reference[&key])
            ));
        }
        if ours != reference {
            failures.push(format!(
                "{}: the reference schema finds it {}, our schema finds it {} ({})",
                case.name,
                verdict(reference),
                verdict(ours),
                first_error(&self.ours[&key])
            ));
        }
        if dwp != ours {
            failures.push(format!(
                "{}: our compiled schema finds it {}, dwp::plan::schemas::validate finds it {}",
                case.name,
                verdict(ours),
                verdict(dwp)
            ));
        }
        if case.kind == DocKind::State {
            let split = split_verdict(case.generation, &case.doc);
            if split != ours {
                failures.push(format!(
                    "{}: the whole schema finds it {}, the task-by-task check (the writer's safety net) {}",
                    case.name,
                    verdict(ours),
                    verdict(split)
                ));
            }
        }
        failures
    }
}

/// The verdict of the writer's safety net for a state the typed checks leave to the schema, which
/// checks the document with its tasks apart and then each task on its own (`dwp::plan::schemas::validate_state_shell` / `validate_task`).
fn split_verdict(generation: Generation, doc: &Value) -> bool {
    let Some(tasks) = doc.get("tasks").and_then(Value::as_array) else {
        return dwp::plan::schemas::validate(DocKind::State, generation, doc).is_empty();
    };
    let mut shell = doc.clone();
    shell["tasks"] = Value::Array(vec![Value::Null; tasks.len()]);
    dwp::plan::schemas::validate_state_shell(generation, &shell).is_empty()
        && tasks
            .iter()
            .enumerate()
            .all(|(i, task)| dwp::plan::schemas::validate_task(generation, task, i).is_empty())
}

/// Judge every case of `rule` and fail with the name of each case that went wrong.
fn check_rule(rule: Rule) {
    let dir = reference_dir();
    let cases: Vec<&Case> = corpus().iter().filter(|c| c.rule == rule).collect();
    assert!(!cases.is_empty(), "the corpus has no {rule:?} case");
    static JUDGES: OnceLock<Judges> = OnceLock::new();
    let judges = JUDGES.get_or_init(|| Judges::new(&dir));
    let failures: Vec<String> = cases.iter().flat_map(|c| judges.failures(c)).collect();
    assert!(
        failures.is_empty(),
        "{} failure(s) among the {} {rule:?} cases:\n  {}",
        failures.len(),
        cases.len(),
        failures.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn corpus_has_at_least_60_documents_of_both_verdicts_in_every_generation() {
    let corpus = corpus();
    assert!(corpus.len() >= 60, "only {} corpus documents", corpus.len());
    let mut names = HashSet::new();
    for case in corpus {
        assert!(
            names.insert(&case.name),
            "duplicate case name {}",
            case.name
        );
    }
    for generation in Generation::ALL {
        for kind in [DocKind::Manifest, DocKind::State] {
            for valid in [true, false] {
                assert!(
                    corpus
                        .iter()
                        .any(|c| c.kind == kind && c.generation == generation && c.valid == valid),
                    "no {} {} document for {} v{}",
                    if valid { "valid" } else { "invalid" },
                    kind.slug(),
                    kind.slug(),
                    generation.number()
                );
            }
        }
    }
    for rule in ALL_RULES {
        assert!(
            corpus.iter().any(|c| c.rule == rule),
            "no case for {rule:?}"
        );
    }
}

#[test]
fn embedded_schemas_parse_to_the_files_in_the_schemas_dir() {
    let dir = crate::common::repo_root().join("schemas");
    let mut embedded_names = HashSet::new();
    for generation in Generation::ALL {
        for kind in [DocKind::Manifest, DocKind::State] {
            let embedded = dwp::plan::schemas::embedded(kind, generation);
            let parsed: Value = serde_json::from_str(embedded.text)
                .unwrap_or_else(|e| panic!("embedded {} is not JSON: {e}", embedded.file_name));
            assert_eq!(
                parsed,
                read_json(&dir.join(embedded.file_name)),
                "the embedded {} differs from schemas/{}",
                embedded.file_name,
                embedded.file_name
            );
            assert_eq!(
                parsed["$id"],
                json!(generation.url(kind)),
                "{} names another $id",
                embedded.file_name
            );
            embedded_names.insert(embedded.file_name.to_owned());
        }
    }
    // The publication receipt's schema is embedded by `dwp::rules::receipt`.
    let receipt: Value =
        serde_json::from_str(dwp::rules::receipt::SCHEMA).expect("receipt schema is JSON");
    assert_eq!(
        receipt,
        read_json(&dir.join("finalization-receipt.schema.json")),
        "the embedded receipt schema differs from schemas/finalization-receipt.schema.json"
    );
    embedded_names.insert("finalization-receipt.schema.json".to_owned());
    // The file contract's schemas are embedded by `dwp::commands::contract::format` (issue #8).
    for embedded in [
        dwp::commands::contract::format::EXPECTED_SCHEMA,
        dwp::commands::contract::format::LEDGER_LINE_SCHEMA,
        dwp::plan::schemas::OUTPUT,
    ] {
        let value: Value = serde_json::from_str(embedded.text).expect("contract schema is JSON");
        assert_eq!(
            value,
            read_json(&dir.join(embedded.file_name)),
            "the embedded {} differs from the file in schemas/",
            embedded.file_name
        );
        embedded_names.insert(embedded.file_name.to_owned());
    }
    // The record-plan schemas (v6/v7), whose parity `record` proves.
    for schema in dwp::plan::schemas::RecordSchema::ALL {
        let embedded = dwp::plan::schemas::record_embedded(schema);
        let value: Value = serde_json::from_str(embedded.text).expect("record schema is JSON");
        assert_eq!(
            value,
            read_json(&dir.join(embedded.file_name)),
            "the embedded {} differs from the file in schemas/",
            embedded.file_name
        );
        embedded_names.insert(embedded.file_name.to_owned());
    }
    let on_disk: HashSet<String> = std::fs::read_dir(&dir)
        .expect("schemas/ is readable")
        .map(|entry| {
            entry
                .expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".schema.json"))
        .collect();
    assert_eq!(
        on_disk, embedded_names,
        "schemas/ holds a schema the binary does not embed"
    );
}

/// Schema-valid corpus cases the typed model cannot hold: JSON Schema integers are unbounded,
/// dwp's are 64-bit, and `plan::load` reports these as `unrepresentable` rather than guessing.
const UNREPRESENTABLE: [&str; 2] = ["gate.exit_code.beyond_i64", "completed_count.beyond_u64"];

#[test]
fn every_schema_valid_document_fits_the_typed_model_within_64_bits() {
    let mut refused = Vec::new();
    for case in corpus().iter().filter(|c| c.valid) {
        assert!(
            dwp::plan::schemas::validate(case.kind, case.generation, &case.doc).is_empty(),
            "{}: written to be valid, but dwp::plan::schemas::validate refuses it",
            case.name
        );
        let typed = match case.kind {
            DocKind::Manifest => {
                serde_json::from_value::<dwp::plan::model::Manifest>(case.doc.clone()).map(drop)
            }
            DocKind::State => {
                serde_json::from_value::<dwp::plan::model::State>(case.doc.clone()).map(drop)
            }
        };
        let expected_refusal = UNREPRESENTABLE
            .iter()
            .any(|n| case.name.ends_with(&format!("/{n}")));
        match typed {
            Ok(()) => assert!(
                !expected_refusal,
                "{}: a value beyond 64 bits was accepted by the typed model",
                case.name
            ),
            Err(e) if expected_refusal => refused.push(e.to_string()),
            Err(e) => panic!(
                "{}: schema-valid but the typed model refuses it: {e}",
                case.name
            ),
        }
    }
    // Each beyond-64-bit case in each generation.
    assert_eq!(
        refused.len(),
        UNREPRESENTABLE.len() * Generation::ALL.len(),
        "{refused:?}"
    );
}

/// `dwp::plan::typed_schema` only ever says "valid" (anything else takes the schema path): on
/// every state of the corpus, pretty and compact, a document it accepts is one the schema path
/// accepts, typed to the same state; and it accepts every valid v2/v5 base document, so valid
/// states really take the fast path.
#[test]
fn the_typed_schema_check_accepts_only_what_the_schema_accepts() {
    let path = Path::new("state.json");
    let mut accepted = 0;
    for case in corpus().iter().filter(|c| c.kind == DocKind::State) {
        let texts = [
            serde_json::to_vec_pretty(&case.doc).unwrap(),
            serde_json::to_vec(&case.doc).unwrap(),
        ];
        for bytes in texts {
            let by_schema = dwp::plan::state_from_bytes_by_schema(path, bytes.clone());
            match dwp::plan::typed_schema::state(&bytes) {
                Some((generation, state)) => {
                    let loaded = by_schema.unwrap_or_else(|findings| {
                        panic!(
                            "{}: the typed check accepts what the schema path refuses: {findings:?}",
                            case.name
                        )
                    });
                    // A `schema` URL case may turn one generation's document into another's.
                    assert!(
                        case.valid || generation != case.generation,
                        "{}: written to be invalid",
                        case.name
                    );
                    assert_eq!(loaded.generation, generation, "{}", case.name);
                    assert_eq!(loaded.doc, state, "{}: typed differently", case.name);
                    accepted += 1;
                }
                None => assert!(
                    !(case.rule == Rule::BaseDocument && case.generation != Generation::V1),
                    "{}: a valid base state does not take the typed path",
                    case.name
                ),
            }
        }
    }
    assert!(
        accepted >= 20,
        "only {accepted} documents took the typed path"
    );
}

/// The manifest half of `dwp::plan::typed_schema`: on every manifest of the corpus, a document
/// it says fits is one the schema accepts, and every valid v2/v5 base manifest fits.
#[test]
fn the_typed_manifest_check_accepts_only_what_the_schema_accepts() {
    let mut fitted = 0;
    for case in corpus().iter().filter(|c| c.kind == DocKind::Manifest) {
        for generation in Generation::ALL {
            if !dwp::plan::typed_schema::manifest_fits(generation, &case.doc) {
                assert!(
                    !(case.rule == Rule::BaseDocument
                        && case.generation == generation
                        && generation != Generation::V1),
                    "{}: a valid base manifest does not take the typed path",
                    case.name
                );
                continue;
            }
            let violations = dwp::plan::schemas::validate(DocKind::Manifest, generation, &case.doc);
            assert!(
                violations.is_empty(),
                "{}: the typed check accepts it as v{}, the schema does not: {violations:?}",
                case.name,
                generation.number()
            );
            fitted += 1;
        }
    }
    assert!(fitted >= 10, "only {fitted} manifests took the typed path");
}

#[test]
fn valid_base_documents_are_accepted_by_both() {
    check_rule(Rule::BaseDocument);
}

#[test]
fn enums_accept_every_listed_value_and_nothing_else() {
    check_rule(Rule::Enum);
}

#[test]
fn patterns_are_anchored_and_take_only_ascii_digits() {
    check_rule(Rule::Pattern);
}

#[test]
fn max_lengths_count_code_points_and_allow_exactly_the_limit() {
    check_rule(Rule::MaxLength);
}

#[test]
fn array_bounds_cap_v1_tags_at_20_and_need_one_task() {
    check_rule(Rule::ArrayBounds);
}

#[test]
fn integer_minimums_hold_at_the_bound_and_reject_below_it() {
    check_rule(Rule::Minimum);
}

#[test]
fn dropping_a_required_field_is_rejected_and_an_optional_one_is_not() {
    check_rule(Rule::Required);
}

#[test]
fn closed_objects_reject_unknown_keys() {
    check_rule(Rule::ClosedObject);
}

#[test]
fn v2_created_by_is_an_open_object_and_v1_created_by_is_not() {
    check_rule(Rule::OpenObject);
}

#[test]
fn locator_kind_decides_the_value_pattern() {
    check_rule(Rule::LocatorKind);
}

#[test]
fn checkpoint_blocked_and_promotion_take_null_or_an_object_only() {
    check_rule(Rule::Nullable);
}

#[test]
fn schema_url_must_name_the_exact_kind_and_generation() {
    check_rule(Rule::SchemaUrl);
}

#[test]
fn types_are_strict_and_integral_floats_count_as_integers() {
    check_rule(Rule::Type);
}

#[test]
fn date_time_format_is_an_annotation_not_an_assertion() {
    check_rule(Rule::FormatAnnotation);
}
